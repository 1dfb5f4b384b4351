//! Reading a SKILL.md for dialect `agentskills`: the file itself out of a skill directory's
//! listing (`agentskills.skill.skill-md`: exactly `SKILL.md`, a regular file, under the guide
//! cap), its frontmatter (`agentskills.skill.frontmatter`, `agentskills.parse.delimiters`: the
//! crate's splitter and YAML reader, a mapping) with the colon fallback of lenient clients
//! (`agentskills.parse.colon-fallback`), and the helpers of the problems: the line of a key,
//! values as text, the problems' constructors. The rules on the fields are `validate`'s.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::rc::Rc;

use saphyr_parser::{Event, Parser};

use super::{steps, Problem};
use crate::frontmatter::FrontmatterError;
use crate::rules::rules;
use crate::safe_fs::{self, Entries, EntryKind, LeafError, Use};
use crate::yaml::{self, Tree, Value, YamlError};

pub(super) const SKILL_MD_CLAUSE: &str = "agentskills.skill.skill-md";
pub(super) const FRONTMATTER_CLAUSE: &str = "agentskills.skill.frontmatter";
pub(super) const COLON_FALLBACK: &str = "agentskills.parse.colon-fallback";
/// A rendered value is cut after this many bytes (an aliased list can repeat a long one).
const MAX_RENDERED: usize = 64 * 1024;

/// The entry of a listing that is the skill file.
// spec: agentskills.files.any (only this entry is looked at: no other file or directory matters)
pub(super) fn skill_md_entry(entries: &Entries) -> Option<&(Vec<u8>, EntryKind)> {
    let is_skill_md = steps().is_skill_md;
    entries.iter().find(|(n, _)| is_skill_md(n))
}

/// Whether a directory entry is the skill file: named exactly `SKILL.md`, byte for byte.
// spec: agentskills.skill.skill-md
pub(super) fn is_skill_md(name: &[u8]) -> bool {
    name == b"SKILL.md"
}

/// Reads the skill file of `dir`, whose listing is `entries`, under the guide cap: only what the
/// listing shows as a regular file is opened (never a link, a FIFO, a device).
// spec: agentskills.skill.skill-md
pub(super) fn read_skill_md(dir: BorrowedFd<'_>, entries: &Entries) -> Result<Vec<u8>, Problem> {
    let Some((name, kind)) = skill_md_entry(entries) else {
        let hint = match entries
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(b"SKILL.md"))
        {
            Some((n, _)) => format!(
                "rename {} to `SKILL.md`",
                shown(&String::from_utf8_lossy(n))
            ),
            None => "add a file named exactly `SKILL.md`: YAML frontmatter, then the instructions"
                .to_owned(),
        };
        return Err(skill_md_problem(
            "the directory holds no file named exactly `SKILL.md`".into(),
            hint,
        ));
    };
    let cap = rules().discovery.max_guide_bytes;
    let read = safe_fs::access(Use::SkillMd).read_listed(dir, OsStr::from_bytes(name), *kind, cap);
    read.map_err(|e| match e {
        LeafError::Symlink => skill_md_problem(
            "`SKILL.md` is a symlink, which is never followed".into(),
            "replace the link by the file itself",
        ),
        LeafError::NotRegular => skill_md_problem(
            "`SKILL.md` is not a regular file".into(),
            "make `SKILL.md` a regular file",
        ),
        LeafError::TooLarge => skill_md_problem(
            format!("`SKILL.md` is larger than {cap} bytes"),
            format!("shorten `SKILL.md` to at most {cap} bytes, moving detail to other files"),
        ),
        LeafError::NotFound => skill_md_problem(
            "`SKILL.md` vanished while it was read".into(),
            "keep the skill directory unchanged while it is read",
        ),
        LeafError::Unreadable(m) => skill_md_problem(
            format!("`SKILL.md` cannot be read: {m}"),
            "make `SKILL.md` readable",
        ),
    })
}

/// A frontmatter that parsed to a mapping.
pub(super) struct Read<'t> {
    pub root: Rc<Tree>,
    /// The frontmatter as written (lines for the problems).
    pub frontmatter: &'t str,
    /// The text that parsed: the frontmatter, or its colon-fallback rewrite.
    pub parsed: Cow<'t, str>,
    pub body: &'t str,
}

/// Splits and parses the frontmatter, recording why when it cannot be read.
// spec: agentskills.skill.frontmatter
pub(super) fn read_frontmatter<'t>(
    bytes: &'t [u8],
    fallback: bool,
    problems: &mut Vec<Problem>,
) -> Option<Read<'t>> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let at = e.valid_up_to();
            let message = format!("`SKILL.md` is not valid UTF-8 (byte {at})");
            problems.push(frontmatter_problem(message, "save `SKILL.md` as UTF-8"));
            return None;
        }
    };
    // spec: agentskills.parse.delimiters (a line of `---`, CRLF and a byte order mark allowed)
    let split = match (steps().split)(text) {
        Ok(split) => split,
        Err(FrontmatterError::Missing) => {
            problems.push(frontmatter_problem(
                "`SKILL.md` does not start with a `---` line".into(),
                "start `SKILL.md` with a `---` line, the YAML frontmatter, then a `---` line",
            ));
            return None;
        }
        Err(FrontmatterError::Unterminated) => {
            problems.push(frontmatter_problem(
                "the frontmatter has no closing `---` line".into(),
                "end the frontmatter with a line `---`",
            ));
            return None;
        }
    };
    let fm = split.frontmatter;
    let (doc, parsed) = match yaml::parse_tree(fm) {
        Ok(doc) => (doc, Cow::Borrowed(fm)),
        Err(e) => {
            let rewritten = colon_fallback(fm);
            // spec: agentskills.parse.colon-fallback (lenient only, one retry)
            let retried = rewritten
                .as_ref()
                .filter(|_| fallback)
                .and_then(|r| yaml::parse_tree(r).ok().map(|doc| (doc, r.clone())));
            let Some((doc, parsed)) = retried else {
                problems.push(yaml_problem(&e, rewritten.is_some()));
                return None;
            };
            problems.push(Problem {
                clause: COLON_FALLBACK,
                ..yaml_problem(&e, true)
            });
            (doc, Cow::Owned(parsed))
        }
    };
    match doc.tree {
        Some(root) if matches!(*root, Tree::Mapping(_)) => Some(Read {
            root,
            frontmatter: fm,
            parsed,
            body: split.body,
        }),
        _ => {
            problems.push(frontmatter_problem(
                "the frontmatter is not a mapping of keys to values".into(),
                "write the frontmatter as `key: value` lines (at least `name:` and `description:`)",
            ));
            None
        }
    }
}

/// How many keys the top-level `metadata` mapping has, counted on the parser's events; `None`
/// when it is not written there as a mapping, or the events cannot be read.
pub(super) fn metadata_keys(text: &str) -> Option<usize> {
    // Each open collection: whether it is a mapping, and whether a key comes next in it.
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut metadata_value_next = false;
    let mut inside = false;
    let mut keys = 0;
    for item in Parser::new_from_str(text) {
        let (event, _) = item.ok()?;
        let at_key = stack.last().is_some_and(|&(mapping, key)| mapping && key);
        if matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(_)
                | Event::MappingStart(..)
                | Event::SequenceStart(..)
        ) {
            keys += usize::from(inside && stack.len() == 2 && at_key);
            if stack.len() == 1 && !at_key && std::mem::take(&mut metadata_value_next) {
                inside = matches!(event, Event::MappingStart(..));
            }
        }
        match event {
            Event::MappingStart(..) => stack.push((true, true)),
            Event::SequenceStart(..) => stack.push((false, false)),
            Event::MappingEnd | Event::SequenceEnd => {
                if inside && stack.len() == 2 {
                    return Some(keys);
                }
                stack.pop();
                completed(&mut stack);
            }
            Event::Scalar(ref s, ..) => {
                if stack.len() == 1 && at_key {
                    metadata_value_next = s == "metadata";
                }
                completed(&mut stack);
            }
            Event::Alias(_) => completed(&mut stack),
            _ => {}
        }
    }
    None
}

/// A node of the innermost open collection is complete: in a mapping, a key and a value alternate.
fn completed(stack: &mut [(bool, bool)]) {
    if let Some((true, key)) = stack.last_mut() {
        *key = !*key;
    }
}

/// The frontmatter rewritten by the colon fallback, when it changes anything: every top-level
/// line `key: value` (key of `A-Za-z0-9_-`) whose value holds `: ` and does not open a quoted,
/// block, flow, anchored, aliased, tagged or comment text becomes `key: 'value'` (`'` doubled).
pub(super) fn colon_fallback(frontmatter: &str) -> Option<String> {
    let mut out = String::with_capacity(frontmatter.len() + 16);
    let mut changed = false;
    for line in frontmatter.split_inclusive('\n') {
        let content = line.trim_end_matches('\n').trim_end_matches('\r');
        let Some((key, value)) = content.split_once(':') else {
            out.push_str(line);
            continue;
        };
        let plain = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            && value.starts_with(' ');
        let value = value.trim_matches([' ', '\t']);
        let wrap = plain
            && value.contains(": ")
            && !value.starts_with(['\'', '"', '|', '>', '[', '{', '&', '*', '!', '#']);
        if wrap {
            out.push_str(&format!("{key}: '{}'", value.replace('\'', "''")));
            out.push_str(&line[content.len()..]);
            changed = true;
        } else {
            out.push_str(line);
        }
    }
    changed.then_some(out)
}

/// The 1-based line of SKILL.md that holds the top-level key `key` (written at column 0, bare or
/// quoted, then `:`); the frontmatter's opening line when none does.
pub(super) fn key_line(frontmatter: &str, key: &str) -> usize {
    let starts = |line: &str| {
        let rest = line
            .strip_prefix(key)
            .or_else(|| line.strip_prefix('"')?.strip_prefix(key)?.strip_prefix('"'))
            .or_else(|| {
                line.strip_prefix('\'')?
                    .strip_prefix(key)?
                    .strip_prefix('\'')
            });
        rest.is_some_and(|r| r.trim_start_matches([' ', '\t']).starts_with(':'))
    };
    // Line 1 is the opening `---` (a byte order mark adds no line).
    frontmatter
        .split('\n')
        .position(starts)
        .map_or(1, |i| i + 2)
}

/// A value as text: a scalar as it reads, a collection as JSON-like text (cut when very long).
pub(super) fn text_of(t: &Tree) -> String {
    match t {
        Tree::Scalar { text, .. } => text.clone(),
        _ => {
            let mut out = String::new();
            json_like(t, &mut out);
            out
        }
    }
}

fn json_like(t: &Tree, out: &mut String) {
    if out.len() > MAX_RENDERED {
        return out.push('…');
    }
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    match t {
        Tree::Scalar {
            value: Value::Str(s),
            ..
        } => out.push_str(&quoted(s)),
        Tree::Scalar {
            value: Value::Null, ..
        } => out.push_str("null"),
        Tree::Scalar { text, .. } => out.push_str(text),
        Tree::Sequence(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "" } else { ", " });
                json_like(item, out);
            }
            out.push(']');
        }
        Tree::Mapping(pairs) => {
            out.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                out.push_str(if i == 0 { "" } else { ", " });
                out.push_str(&quoted(k));
                out.push_str(": ");
                json_like(v, out);
            }
            out.push('}');
        }
    }
}

/// A value for a message: in backticks, control characters escaped, cut after 80 characters.
pub(super) fn shown(s: &str) -> String {
    let mut out = String::from("`");
    for (i, c) in s.chars().enumerate() {
        if i == 80 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('`');
    out
}

fn frontmatter_problem(message: String, hint: &str) -> Problem {
    must(FRONTMATTER_CLAUSE, 1, message, hint)
}

pub(super) fn skill_md_problem(message: String, hint: impl Into<String>) -> Problem {
    Problem {
        clause: SKILL_MD_CLAUSE,
        must: true,
        line: None,
        message,
        hint: hint.into(),
    }
}

/// The frontmatter's YAML does not parse (`colon`: a line has an unquoted `: ` in a value).
fn yaml_problem(e: &YamlError, colon: bool) -> Problem {
    let what = match e {
        YamlError::Syntax { message, .. } => message.clone(),
        YamlError::DuplicateKey { key, .. } => format!("the key {} appears twice", shown(key)),
        other => other.kind().replace('_', " "),
    };
    let hint = match e {
        _ if colon => "quote a value that contains `: `, e.g. description: \"Use when: ...\"",
        YamlError::DuplicateKey { .. } => "keep one of the duplicate keys",
        _ => "fix the YAML syntax of the frontmatter",
    };
    let line = e.line() + 1;
    let message = format!("the frontmatter is not valid YAML (line {line} of SKILL.md): {what}");
    frontmatter_problem(message, hint)
}

pub(super) fn must(
    clause: &'static str,
    line: usize,
    message: impl Into<String>,
    hint: &str,
) -> Problem {
    Problem {
        clause,
        must: true,
        line: Some(line),
        message: message.into(),
        hint: hint.to_owned(),
    }
}
