//! The skill format of dialect `agentskills` (SPEC.md "The skill format (S)"): one `SKILL.md`,
//! read from a skill directory ([`validate_dir`]) or given as bytes ([`validate_text`]), checked
//! against every rule, each broken rule one [`Problem`] (every one that applies, not only the
//! first).
//!
//! Reading the file and its frontmatter is `read`'s (`agentskills.skill.*`,
//! `agentskills.parse.delimiters`, `agentskills.parse.colon-fallback`); the rules on what it
//! holds are here: every `agentskills.name.*` and `agentskills.description.*` rule,
//! `agentskills.license.text`, `agentskills.compatibility.length`,
//! `agentskills.metadata.string-map`, `agentskills.allowed-tools.string`, and
//! `agentskills.fields.unknown` and `agentskills.body.free` (nothing checked).

use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::read::{
    key_line, metadata_keys, must, read_frontmatter, read_skill_md, shown, skill_md_problem,
    text_of, Read,
};
use super::{steps, Problem, Properties, Validation};
use crate::safe_fs::{self, Use};
use crate::yaml::{Tree, Value};

pub(super) const NAME_REQUIRED: &str = "agentskills.name.required";
pub(super) const DESCRIPTION_REQUIRED: &str = "agentskills.description.required";
const METADATA: &str = "agentskills.metadata.string-map";

/// Validates SKILL.md bytes as the skill file of a directory named `dir_name`.
pub fn validate_text(dir_name: &[u8], text: &[u8]) -> Validation {
    check(dir_name, text, false).validation
}

/// Validates the skill directory `dir`. The directory itself is opened through a link if `dir`
/// is one; nothing inside it is followed, and only a `SKILL.md` its listing shows as a regular
/// file is opened. The directory's name is the last component of `dir` as given.
pub fn validate_dir(dir: &Path) -> Validation {
    let only = |p: Problem| Validation {
        problems: vec![p],
        properties: None,
    };
    let fd = match safe_fs::open_root(dir) {
        Ok(fd) => fd,
        Err(e) => {
            return only(skill_md_problem(
                format!("cannot open the directory {}: {e}", dir.display()),
                "give the path of a skill directory",
            ))
        }
    };
    let name = match dir.file_name() {
        Some(n) => n.as_bytes().to_vec(),
        None => safe_fs::real_path_of(&fd)
            .and_then(|p| p.file_name().map(|n| n.as_bytes().to_vec()))
            .unwrap_or_default(),
    };
    let entries = match (safe_fs::access(Use::Scan).list_dir)(fd.as_fd()) {
        Ok(entries) => entries,
        Err(e) => {
            return only(skill_md_problem(
                format!("cannot list the directory: {e}"),
                "make the directory readable",
            ))
        }
    };
    match read_skill_md(fd.as_fd(), &entries) {
        Ok(bytes) => validate_text(&name, &bytes),
        Err(p) => only(p),
    }
}

/// What [`check`] read of one SKILL.md: the verdict, and the body (empty when unread).
pub(super) struct Checked {
    pub validation: Validation,
    pub body: String,
}

/// Checks SKILL.md bytes for a directory named `dir_name`. With `fallback` (lenient discovery),
/// a frontmatter that is not YAML is read again with the colon fallback
/// (`read::colon_fallback`); when that parses, the skill's problem is the fallback's
/// (`agentskills.parse.colon-fallback`) instead of the frontmatter's.
pub(super) fn check(dir_name: &[u8], bytes: &[u8], fallback: bool) -> Checked {
    let mut problems = Vec::new();
    let Some(read) = read_frontmatter(bytes, fallback, &mut problems) else {
        return Checked {
            validation: Validation {
                problems,
                properties: None,
            },
            body: String::new(),
        };
    };
    let properties = fields(&read, dir_name, &mut problems);
    // spec: agentskills.body.free (no rule reads the body)
    // spec: agentskills.fields.unknown (other keys are neither checked nor refused)
    Checked {
        validation: Validation {
            problems,
            properties: Some(properties),
        },
        body: read.body.to_owned(),
    }
}

/// Reads the fields the standard defines and checks each.
fn fields(read: &Read<'_>, dir_name: &[u8], problems: &mut Vec<Problem>) -> Properties {
    let root = &read.root;
    let line = |key: &str| key_line(read.frontmatter, key);
    let get = |key: &str| root.get(key);
    check_name(get("name"), dir_name, line("name"), problems);
    check_description(
        get("description"),
        line("description"),
        comment_hint(read.frontmatter, "description"),
        problems,
    );
    check_optional(read, problems);
    let mut metadata = std::collections::BTreeMap::new();
    if let Some(Tree::Mapping(pairs)) = get("metadata") {
        for (k, v) in pairs {
            metadata.insert(k.clone(), text_of(v));
        }
    }
    Properties {
        name: get("name").map(text_of),
        description: get("description").map(text_of),
        license: get("license").map(text_of),
        compatibility: get("compatibility").map(text_of),
        allowed_tools: get("allowed-tools").map(text_of),
        metadata,
    }
}

/// The rules of `name`: every one that applies is reported.
// spec: agentskills.name.required
fn check_name(value: Option<&Tree>, dir_name: &[u8], line: usize, out: &mut Vec<Problem>) {
    let name = match value.map(|t| (t, string(t))) {
        None => {
            let hint = "add a line `name: ` followed by the directory's name";
            return out.push(must(
                NAME_REQUIRED,
                1,
                "the frontmatter has no `name`",
                hint,
            ));
        }
        Some((t, None)) => {
            let message = format!("`name` is not a string: {}", shown(&text_of(t)));
            let hint = "quote the name, or use the directory's name";
            return out.push(must(NAME_REQUIRED, line, message, hint));
        }
        Some((_, Some(name))) => name,
    };
    let steps = steps();
    let length = name.chars().count();
    // spec: agentskills.name.length
    if !(steps.name_length)(length) {
        let message = format!("the name {} is {length} characters long", shown(name));
        let hint = "use a name of 1 to 64 characters";
        out.push(must("agentskills.name.length", line, message, hint));
    }
    // spec: agentskills.name.charset
    let mut bad: Vec<char> = name.chars().filter(|c| !(steps.name_char)(*c)).collect();
    bad.dedup();
    if !bad.is_empty() {
        let bad: String = bad.into_iter().collect();
        let message = format!(
            "the name {} holds characters other than a-z, 0-9 and `-`: {}",
            shown(name),
            shown(&bad)
        );
        let hint = "use only lowercase ASCII letters, digits and hyphens";
        out.push(must("agentskills.name.charset", line, message, hint));
    }
    // spec: agentskills.name.hyphen-edges
    if (steps.hyphen_edge)(name) {
        let message = format!("the name {} starts or ends with `-`", shown(name));
        let hint = "remove the leading or trailing hyphen";
        out.push(must("agentskills.name.hyphen-edges", line, message, hint));
    }
    // spec: agentskills.name.no-double-hyphen
    if (steps.double_hyphen)(name) {
        let message = format!("the name {} holds `--`", shown(name));
        let hint = "replace `--` by a single hyphen";
        out.push(must(
            "agentskills.name.no-double-hyphen",
            line,
            message,
            hint,
        ));
    }
    // spec: agentskills.name.matches-directory
    if !(steps.matches_directory)(name.as_bytes(), dir_name) {
        let message = format!(
            "the name {} differs from the directory's name {}",
            shown(name),
            shown(&String::from_utf8_lossy(dir_name))
        );
        let hint = "rename the directory or the name so that they match";
        out.push(must(
            "agentskills.name.matches-directory",
            line,
            message,
            hint,
        ));
    }
}

/// The fix for a `key:` whose value starts with `#` (`description: #1 tool`): YAML reads `#`
/// after a space as a comment, so the key holds nothing (null).
fn comment_hint(frontmatter: &str, key: &str) -> Option<String> {
    frontmatter.split('\n').find_map(|line| {
        let value = line.strip_prefix(key)?.strip_prefix(':')?;
        let value = value.trim_start_matches([' ', '\t']).trim_end();
        value.starts_with('#').then(|| {
            format!(
                "`#` after `{key}:` starts a YAML comment, so `{key}` is empty; quote the whole value: {key}: \"{}\"",
                value.replace('\\', "\\\\").replace('"', "\\\"")
            )
        })
    })
}

/// The rules of `description`.
// spec: agentskills.description.required
fn check_description(
    value: Option<&Tree>,
    line: usize,
    comment: Option<String>,
    out: &mut Vec<Problem>,
) {
    let hint = "add a `description:` saying what the skill does and when to use it";
    let steps = steps();
    match value.map(|t| (t, string(t))) {
        None => out.push(must(DESCRIPTION_REQUIRED, 1, "no `description`", hint)),
        Some((t, None)) => {
            let message = format!("`description` is not a string: {}", shown(&text_of(t)));
            let hint = comment.as_deref().unwrap_or(hint);
            out.push(must(DESCRIPTION_REQUIRED, line, message, hint));
        }
        Some((_, Some(d))) if (steps.blank_description)(d) => {
            let message = format!("the description {} is empty", shown(d));
            out.push(must(DESCRIPTION_REQUIRED, line, message, hint));
        }
        // spec: agentskills.description.length
        Some((_, Some(d))) if !(steps.description_length)(d.chars().count()) => {
            let message = format!("the description is {} characters long", d.chars().count());
            let hint = "shorten the description to 1024 characters";
            out.push(must("agentskills.description.length", line, message, hint));
        }
        Some(_) => {}
    }
}

/// The rules of the optional fields, each only when present.
fn check_optional(read: &Read<'_>, out: &mut Vec<Problem>) {
    let steps = steps();
    let root = &read.root;
    let line = |key: &str| key_line(read.frontmatter, key);
    // spec: agentskills.license.text
    if let Some(t) = root.get("license").filter(|t| string(t).is_none()) {
        out.push(Problem {
            must: false,
            ..must(
                "agentskills.license.text",
                line("license"),
                format!("`license` is not a string: {}", shown(&text_of(t))),
                "give the license as a name or the path of a bundled license file",
            )
        });
    }
    // spec: agentskills.compatibility.length
    if let Some(t) = root.get("compatibility") {
        let length = string(t).map(|s| s.chars().count());
        if !length.is_some_and(steps.compatibility_length) {
            let message = match length {
                Some(n) => format!("`compatibility` is {n} characters long"),
                None => format!("`compatibility` is not a string: {}", shown(&text_of(t))),
            };
            let hint = "give compatibility as a string of 1 to 500 characters, or remove it";
            out.push(must(
                "agentskills.compatibility.length",
                line("compatibility"),
                message,
                hint,
            ));
        }
    }
    // spec: agentskills.metadata.string-map
    if let Some(t) = root.get("metadata") {
        check_metadata(t, &read.parsed, line("metadata"), out);
    }
    // spec: agentskills.allowed-tools.string
    if let Some(t) = root
        .get("allowed-tools")
        .filter(|t| !(steps.allowed_tools)(t))
    {
        let message = format!("`allowed-tools` is not a string: {}", shown(&text_of(t)));
        let hint = "write the tools as one space-separated string: allowed-tools: Read Bash";
        out.push(must(
            "agentskills.allowed-tools.string",
            line("allowed-tools"),
            message,
            hint,
        ));
    }
}

/// `metadata`: a mapping of string keys to string values.
fn check_metadata(t: &Tree, parsed: &str, line: usize, out: &mut Vec<Problem>) {
    let Tree::Mapping(pairs) = t else {
        let message = format!("`metadata` is not a mapping: {}", shown(&text_of(t)));
        let hint = "write metadata as a mapping of string keys to string values";
        return out.push(must(METADATA, line, message, hint));
    };
    for (key, value) in pairs.iter().filter(|(_, v)| !(steps().metadata_value)(v)) {
        let text = text_of(value);
        let message = format!("metadata {} is not a string: {}", shown(key), shown(&text));
        let hint = match &**value {
            Tree::Scalar { .. } => format!("quote the value: {key}: \"{text}\""),
            _ => "give each metadata value as one string".to_owned(),
        };
        out.push(must(METADATA, line, message, &hint));
    }
    // The reader's tree keeps only the pairs whose key is a string: a key it left out is not.
    if metadata_keys(parsed).is_some_and(|keys| keys > pairs.len()) {
        let message = "`metadata` has a key that is not a string";
        out.push(must(METADATA, line, message, "quote every metadata key"));
    }
}

/// The value when it is a string (by the core schema).
fn string(t: &Tree) -> Option<&str> {
    match t {
        Tree::Scalar {
            value: Value::Str(s),
            ..
        } => Some(s),
        _ => None,
    }
}

/// Whether a value is a string.
pub(super) fn is_string(t: &Tree) -> bool {
    string(t).is_some()
}

pub(super) fn name_char(c: char) -> bool {
    matches!(c, 'a'..='z' | '0'..='9' | '-')
}

pub(super) fn name_length(chars: usize) -> bool {
    (1..=64).contains(&chars)
}

pub(super) fn hyphen_edge(name: &str) -> bool {
    name.starts_with('-') || name.ends_with('-')
}

pub(super) fn double_hyphen(name: &str) -> bool {
    name.contains("--")
}

/// Byte for byte: no case folding, no normalization.
pub(super) fn matches_directory(name: &[u8], dir_name: &[u8]) -> bool {
    name == dir_name
}

pub(super) fn description_length(chars: usize) -> bool {
    chars <= 1024
}

pub(super) fn compatibility_length(chars: usize) -> bool {
    (1..=500).contains(&chars)
}
