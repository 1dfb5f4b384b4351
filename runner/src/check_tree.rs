//! `skillspec check-tree ROOT` and `skillspec allowlist ROOT`: the reference on an operator's real
//! skills root. What loads, each loaded skill's helpers with the SHA-256 its approval would
//! match, everything skipped with its reason and detail (and a fix hint for the common YAML
//! mistakes), duplicate skill ids with all their copies (and whether the copies are
//! byte-identical), a summary per reason, and warnings that change nothing in what loads: files
//! of a loaded skill that are hard links (their bytes have another name, possibly outside the
//! skill, that someone else may be able to change).
//!
//! Nothing here decides a rule: what loads is the reference's discovery
//! ([`skillspec_reference::discovery::discover_in`], SPEC.md `discovery.*`), and whether a helper could run
//! and what its hash is comes from the reference's own `skill_run_script` path checks and read
//! ([`run_script::helper_sha256`], SPEC.md `run.path`, `run.approval`). This module only finds the
//! candidates under `scripts/` and presents the results. A symlink to something other than a
//! directory (`AGENTS.md -> CLAUDE.md`) is a skip of the reference's but not a skill anyone
//! meant; the report leaves it out (it is never followed either way, `discovery.symlink.dir`).
//!
//! Every name from the tree is printed through [`one_line`]: a directory named with a line break
//! cannot forge a line.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::reports::one_line;
use skillspec_reference::discovery::discover_in;
use skillspec_reference::discovery::display_bytes;
use skillspec_reference::run_script::helper_sha256;
use skillspec_reference::safe_fs::{self, EntryKind};
use skillspec_reference::skill_path::{self, PathRule, PathScope};
use skillspec_reference::trading;
use skillspec_reference::{Discovery, Guide, GuideFormat, Skip, SkipReason};

/// How deep and how many entries the hard-link scan of one skill looks at.
const SCAN_DEPTH: usize = 8;
const SCAN_ENTRIES: usize = 10_000;
/// How deep below `scripts/` and how many entries the helper listing of one skill looks at.
const HELPER_DEPTH: usize = 16;
const HELPER_ENTRIES: usize = 10_000;
/// The most bytes read to compare one copy of a duplicate skill with the others.
const COMPARE_BYTES: u64 = 64 * 1024 * 1024;

/// A regular file of a loaded skill with more than one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HardLink {
    /// Relative to the root.
    pub path: String,
    pub links: u64,
}

/// The hard-linked regular files below each loaded skill directory (never following symlinks).
pub fn hard_links(root: &Path, discovery: &Discovery) -> Vec<HardLink> {
    let mut out = Vec::new();
    for g in &discovery.loaded {
        let mut seen = 0usize;
        scan(root, &PathBuf::from(&g.path), 0, &mut seen, &mut out);
    }
    out
}

fn scan(root: &Path, rel: &Path, depth: usize, seen: &mut usize, out: &mut Vec<HardLink>) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        *seen += 1;
        if *seen > SCAN_ENTRIES {
            return;
        }
        let child = rel.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(root.join(&child)) else {
            continue;
        };
        if meta.is_file() && meta.nlink() > 1 {
            out.push(HardLink {
                path: child.display().to_string(),
                links: meta.nlink(),
            });
        } else if meta.is_dir() && depth < SCAN_DEPTH {
            scan(root, &child, depth + 1, seen, out);
        }
    }
}

/// How deep and how many directories [`unreached`] looks at.
pub const UNREACHED_DEPTH: usize = 12;
pub const UNREACHED_DIRS: usize = 20_000;

/// The skill files (`names`, e.g. `SKILL.md`) below `base` that the scan never judged
/// (`judged(path)` is false): skills nested inside another skill, or deeper than the scan goes.
/// A bounded walk ([`UNREACHED_DEPTH`], [`UNREACHED_DIRS`]) that never follows a link and does
/// not enter `skip_dirs`; the paths relative to `base`, sorted, and whether the walk stopped at
/// its bound.
pub fn unreached(
    base: &Path,
    names: &[&str],
    skip_dirs: &[&str],
    judged: &dyn Fn(&Path) -> bool,
) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut stack = vec![(base.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = stack.pop() {
        seen += 1;
        if seen > UNREACHED_DIRS {
            out.sort();
            return (out, true);
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<(std::ffi::OsString, std::fs::FileType)> = entries
            .flatten()
            .filter_map(|e| e.file_type().ok().map(|t| (e.file_name(), t)))
            .collect();
        found.sort_by(|a, b| b.0.cmp(&a.0));
        for (name, kind) in found {
            let path = dir.join(&name);
            let is_skill_file = names.iter().any(|n| name == *n);
            if kind.is_file() && is_skill_file && depth > 0 && !judged(&path) {
                out.push(
                    path.strip_prefix(base)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .into_owned(),
                );
            } else if kind.is_dir()
                && depth < UNREACHED_DEPTH
                && !skip_dirs.iter().any(|s| name == *s)
            {
                stack.push((path, depth + 1));
            }
        }
    }
    out.sort();
    (out, false)
}

/// One candidate helper of a loaded skill: a file under `scripts/` whose name ends in `.py`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Helper {
    /// The `script` argument that names it (`scripts/...`).
    pub script: String,
    /// The SHA-256 approval would match, or why `skill_run_script` would refuse it before
    /// approval (the reference's own message).
    pub sha256: Result<String, String>,
    /// When its file name holds a token of the trading blocklist: it is refused
    /// (`blocked_tool`) unless `allow_trading` is set, approved or not (SPEC.md `run.trading`).
    pub trading_blocked: Option<String>,
}

/// The helpers of `guide` that `skill_run_script` would consider, sorted by path, and whether the
/// listing stopped at its limits. Directories are entered without following symlinks; whether a
/// file could run and its hash are the reference's [`helper_sha256`].
pub fn helpers(root: &OwnedFd, guide: &Guide) -> (Vec<Helper>, bool) {
    let mut out = Vec::new();
    let mut seen = 0usize;
    let Ok(skill_dir) = safe_fs::open_dir_chain(root.as_fd(), &guide.components) else {
        return (out, false);
    };
    match safe_fs::entry_kind(skill_dir.as_fd(), "scripts".as_ref()) {
        Ok(Some(EntryKind::Directory)) => {}
        Ok(Some(EntryKind::Symlink)) => {
            out.push(Helper {
                script: "scripts/".into(),
                sha256: Err("`scripts` is a symlink, so none of its helpers can run".into()),
                trading_blocked: None,
            });
            return (out, false);
        }
        _ => return (out, false),
    }
    let Ok(scripts) = safe_fs::open_subdir(skill_dir.as_fd(), "scripts".as_ref()) else {
        return (out, false);
    };
    let mut walk = HelperWalk {
        root,
        guide,
        seen: &mut seen,
        out: &mut out,
        truncated: false,
    };
    walk.dir(scripts.as_fd(), "scripts", 0);
    let truncated = walk.truncated;
    (out, truncated)
}

struct HelperWalk<'a> {
    root: &'a OwnedFd,
    guide: &'a Guide,
    seen: &'a mut usize,
    out: &'a mut Vec<Helper>,
    truncated: bool,
}

impl HelperWalk<'_> {
    fn dir(&mut self, dir: BorrowedFd<'_>, rel: &str, depth: usize) {
        let Ok(entries) = safe_fs::list_dir(dir) else {
            return;
        };
        for (name, kind) in entries {
            *self.seen += 1;
            if *self.seen > HELPER_ENTRIES {
                self.truncated = true;
                return;
            }
            let Ok(text) = std::str::from_utf8(&name) else {
                if name.ends_with(b".py") {
                    self.out.push(Helper {
                        script: format!("{rel}/{}", display_bytes(&name)),
                        sha256: Err("the name is not UTF-8, so no call can name it".into()),
                        trading_blocked: None,
                    });
                }
                continue;
            };
            let script = format!("{rel}/{text}");
            match kind {
                EntryKind::Directory if depth < HELPER_DEPTH => {
                    if let Ok(sub) = safe_fs::open_subdir(dir, std::ffi::OsStr::new(text)) {
                        self.dir(sub.as_fd(), &script, depth + 1);
                    }
                }
                EntryKind::Directory => self.truncated = true,
                _ => {
                    // Files that are not helpers by their name (README.md, data.json) are no
                    // concern of approval; every other refusal is the reference's to word.
                    if skill_path::validate(&script, PathScope::Script) == Err(PathRule::Extension)
                    {
                        continue;
                    }
                    let sha256 = helper_sha256(self.root, self.guide, &script)
                        .map_err(|e| format!("{}: {}", e.code.as_str(), e.message));
                    let trading_blocked =
                        trading::check_helper_name(text).map(|hit| hit.to_string());
                    self.out.push(Helper {
                        script,
                        sha256,
                        trading_blocked,
                    });
                }
            }
        }
    }
}

/// A skill id that more than one skill directory has: no copy loads (`discovery.duplicate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    pub id: String,
    /// Every copy, sorted.
    pub paths: Vec<String>,
    /// The sets (of two or more) of copies with the same files and bytes.
    pub identical: Vec<Vec<String>>,
}

/// The duplicate groups among `skipped`, by id (the last path component).
fn duplicates(root: &Path, skipped: &[&Skip]) -> Vec<Duplicate> {
    let mut by_id: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in skipped.iter().filter(|s| s.reason == SkipReason::Duplicate) {
        let id = s.path.rsplit('/').next().unwrap_or(&s.path);
        by_id.entry(id).or_default().push(&s.path);
    }
    by_id
        .into_iter()
        .map(|(id, mut paths)| {
            paths.sort_unstable();
            let mut by_digest: BTreeMap<[u8; 32], Vec<String>> = BTreeMap::new();
            for p in &paths {
                if let Some(d) = tree_digest(&root.join(p)) {
                    by_digest.entry(d).or_default().push((*p).to_owned());
                }
            }
            let mut identical: Vec<Vec<String>> =
                by_digest.into_values().filter(|s| s.len() > 1).collect();
            identical.sort();
            Duplicate {
                id: id.to_owned(),
                paths: paths.into_iter().map(str::to_owned).collect(),
                identical,
            }
        })
        .collect()
}

/// A digest of a directory's names, kinds and bytes (symlinks by their target text, never
/// followed); `None` when it cannot be read whole within the limits.
fn tree_digest(dir: &Path) -> Option<[u8; 32]> {
    let mut hasher = Sha256::new();
    let mut budget = (SCAN_ENTRIES, COMPARE_BYTES);
    digest_dir(dir, 0, &mut hasher, &mut budget)?;
    Some(hasher.finalize().into())
}

fn digest_dir(
    dir: &Path,
    depth: usize,
    hasher: &mut Sha256,
    budget: &mut (usize, u64),
) -> Option<()> {
    use std::io::Read as _;
    use std::os::unix::ffi::OsStrExt;
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .ok()?;
    names.sort();
    for name in names {
        budget.0 = budget.0.checked_sub(1)?;
        let path = dir.join(&name);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let bytes = name.as_bytes();
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).ok()?;
            hasher.update(b"l");
            hasher.update(target.as_os_str().as_bytes());
            hasher.update(b"\0");
        } else if meta.is_dir() {
            if depth >= SCAN_DEPTH {
                return None;
            }
            hasher.update(b"d");
            digest_dir(&path, depth + 1, hasher, budget)?;
            hasher.update(b"\0");
        } else if meta.is_file() {
            budget.1 = budget.1.checked_sub(meta.len())?;
            // Opened without following a link and non-blocking, and checked again once open:
            // an entry swapped for a FIFO since it was looked at cannot hang the report.
            use std::os::unix::fs::OpenOptionsExt;
            let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
            let file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(flags.bits() as i32)
                .open(&path)
                .ok()?;
            if !file.metadata().ok()?.is_file() {
                return None;
            }
            let mut bytes = Vec::new();
            file.take(meta.len().saturating_add(1))
                .read_to_end(&mut bytes)
                .ok()?;
            hasher.update(b"f");
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        } else {
            // A FIFO, socket or device is never opened; only its presence counts.
            hasher.update(b"s");
        }
    }
    Some(())
}

/// Whether a skip is one of a directory that could have been a skill: anything but a symlink to
/// a file (or to nothing), which nobody meant as a skill.
fn could_be_skill(root: &Path, s: &Skip) -> bool {
    if s.reason != SkipReason::Symlink {
        return true;
    }
    let path = root.join(&s.path);
    match std::fs::symlink_metadata(&path) {
        // The skip is of the link itself: keep it only when it leads to a directory (stat only,
        // nothing is opened).
        Ok(meta) if meta.file_type().is_symlink() => {
            std::fs::metadata(&path).is_ok_and(|m| m.is_dir())
        }
        // A skill directory whose SKILL.md or skill.yml is a symlink.
        _ => true,
    }
}

/// What an operator can do about a YAML error, when the line it names shows a common mistake:
/// an unquoted value holding `: `, a value starting with `*` or `&`, a tab in the indentation.
pub fn yaml_hint(detail: &str, frontmatter: &str) -> Option<String> {
    let line = line_of(detail)?;
    let lines: Vec<&str> = frontmatter.lines().collect();
    // The reader names the line it stopped on; the mistake is on it or on the line before.
    [line, line.saturating_sub(1)]
        .into_iter()
        .filter(|n| *n >= 1)
        .find_map(|n| lines.get(n - 1).and_then(|l| hint_for_line(l)))
}

/// What an operator can do about a field read as null because its value starts with `#`
/// (`description: #1 tool`: YAML reads `#` after a space as a comment), with its SKILL.md line.
fn null_hint(detail: &str, frontmatter: &str) -> Option<Hint> {
    if !detail.ends_with("is not a string (Null)") {
        return None;
    }
    let key = detail.strip_prefix('`')?.split('`').next()?;
    frontmatter.lines().enumerate().find_map(|(i, line)| {
        let value = line.strip_prefix(key)?.strip_prefix(':')?;
        let value = value.trim_start_matches([' ', '\t']);
        (value.starts_with('#') && value.len() < line.len()).then(|| Hint {
            text: format!(
                "`#` after `{key}:` starts a YAML comment, so `{key}` is empty; quote the whole value: {key}: \"{}\"",
                value.trim_end().replace('\\', "\\\\").replace('"', "\\\"")
            ),
            // The frontmatter's first line is SKILL.md's second.
            line: Some(i + 2),
        })
    })
}

/// Where the symlink a skip is about points, as written (never followed): the skill directory
/// itself, or its SKILL.md or skill.yml.
fn link_target(root: &Path, path: &str) -> Option<String> {
    let dir = root.join(path);
    [dir.clone(), dir.join("SKILL.md"), dir.join("skill.yml")]
        .iter()
        .find_map(|p| std::fs::read_link(p).ok())
        .map(|t| t.to_string_lossy().into_owned())
}

/// The 1-based line a reader error names (`... at line N ...`).
fn line_of(detail: &str) -> Option<usize> {
    let rest = &detail[detail.find("at line ")? + "at line ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn hint_for_line(line: &str) -> Option<String> {
    let indent = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
    if indent.contains('\t') {
        return Some("a tab in the indentation: YAML indents with spaces only".into());
    }
    let content = line.trim_start().trim_start_matches("- ");
    let (key, value) = content.split_once(':')?;
    if key.is_empty() || key.contains([' ', '"', '\'', '#']) {
        return None;
    }
    let value = value.strip_prefix([' ', '\t'])?.trim();
    let first = value.chars().next()?;
    if matches!(first, '"' | '\'' | '|' | '>' | '[' | '{') {
        return None;
    }
    let key = key.trim();
    if first == '*' || first == '&' {
        return Some(format!(
            "the value of `{key}` starts with `{first}`, which YAML reads as an {}; quote the whole value: {key}: \"{}\"",
            if first == '*' { "alias" } else { "anchor" },
            value.replace('\\', "\\\\").replace('"', "\\\"")
        ));
    }
    if value.contains(": ") || value.ends_with(':') {
        return Some(format!(
            "the value of `{key}` holds `: `, which YAML reads as another key; quote the whole value: {key}: \"{}\"",
            value.replace('\\', "\\\\").replace('"', "\\\"")
        ));
    }
    if value.contains('\t') {
        return Some(format!(
            "the value of `{key}` holds a tab; quote the whole value or remove the tab"
        ));
    }
    None
}

/// The frontmatter of the SKILL.md of the skipped directory `path`, read as the reference reads
/// it (descriptor-relative, no symlink followed, under its size cap).
fn frontmatter_of(root: &OwnedFd, path: &str) -> Option<String> {
    use skillspec_reference::discovery::MAX_GUIDE_BYTES;
    use skillspec_reference::frontmatter;
    let components: Vec<&str> = path.split('/').collect();
    let dir = safe_fs::open_dir_chain(root.as_fd(), &components).ok()?;
    let bytes = safe_fs::read_regular(dir.as_fd(), "SKILL.md".as_ref(), MAX_GUIDE_BYTES).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let split = frontmatter::split(&text).ok()?;
    Some(split.frontmatter.to_owned())
}

/// One skip as the report shows it.
struct Skipped<'a> {
    skip: &'a Skip,
    hint: Option<Hint>,
    /// For a symlink skip, where the link points (its target as written, never followed).
    target: Option<String>,
}

/// What an operator can do about a skip, and the line of SKILL.md it is about.
#[derive(Clone)]
struct Hint {
    text: String,
    line: Option<usize>,
}

impl Skipped<'_> {
    /// The line of SKILL.md a frontmatter error names (the reader counts from the line after
    /// the opening `---`), or the line a hint is about.
    fn skill_md_line(&self) -> Option<usize> {
        if let Some(line) = self.hint.as_ref().and_then(|h| h.line) {
            return Some(line);
        }
        self.frontmatter_line()
    }

    fn frontmatter_line(&self) -> Option<usize> {
        if self.skip.reason != SkipReason::Malformed
            || !self.skip.detail.starts_with("frontmatter: ")
        {
            return None;
        }
        line_of(&self.skip.detail).map(|n| n + 1)
    }

    /// The skip's detail as the report prints it: a frontmatter error's line counted in SKILL.md
    /// (`at SKILL.md line 3`), as the hint counts it, not from the frontmatter's first line.
    fn detail(&self) -> String {
        match (self.frontmatter_line(), line_of(&self.skip.detail)) {
            (Some(own), Some(n)) => self.skip.detail.replacen(
                &format!("at line {n}"),
                &format!("at SKILL.md line {own}"),
                1,
            ),
            _ => self.skip.detail.clone(),
        }
    }
}

/// Everything `check-tree` reports about one root.
pub struct Examined {
    pub discovery: Discovery,
    skipped: Vec<usize>,
    hints: BTreeMap<usize, Hint>,
    targets: BTreeMap<usize, String>,
    /// Skill files inside a loaded skill or deeper than the scan goes: never examined
    /// ([`unreached`]), and whether that walk stopped at its bound.
    pub not_examined: (Vec<String>, bool),
    pub duplicates: Vec<Duplicate>,
    /// The helpers of each loaded skill (in the order of `discovery.loaded`), and whether the
    /// listing stopped at its limits.
    pub helpers: Vec<(Vec<Helper>, bool)>,
    pub hard_links: Vec<HardLink>,
    /// Symlinks to files (or to nothing) the reference skipped and the report leaves out.
    pub file_symlinks: usize,
}

impl Examined {
    fn skipped(&self) -> Vec<Skipped<'_>> {
        self.skipped
            .iter()
            .map(|i| Skipped {
                skip: &self.discovery.skipped[*i],
                hint: self.hints.get(i).cloned(),
                target: self.targets.get(i).cloned(),
            })
            .collect()
    }
}

/// Opens `root` as the reference does and examines it; an error when the root cannot be opened.
pub fn examine(root: &Path) -> Result<(OwnedFd, Examined), String> {
    let root_fd = safe_fs::open_root(root)
        .map_err(|e| format!("cannot open skills root {}: {e}", root.display()))?;
    let discovery = discover_in(root_fd.as_fd());
    let mut skipped = Vec::new();
    let mut hints = BTreeMap::new();
    let mut targets = BTreeMap::new();
    let mut file_symlinks = 0usize;
    for (i, s) in discovery.skipped.iter().enumerate() {
        if !could_be_skill(root, s) {
            file_symlinks += 1;
            continue;
        }
        if s.reason == SkipReason::Malformed && s.detail.contains("at line ") {
            if let Some(h) =
                frontmatter_of(&root_fd, &s.path).and_then(|f| yaml_hint(&s.detail, &f))
            {
                hints.insert(
                    i,
                    Hint {
                        text: h,
                        line: None,
                    },
                );
            }
        }
        if s.reason == SkipReason::Incomplete {
            if let Some(h) =
                frontmatter_of(&root_fd, &s.path).and_then(|f| null_hint(&s.detail, &f))
            {
                hints.insert(i, h);
            }
        }
        if s.reason == SkipReason::Symlink {
            if let Some(t) = link_target(root, &s.path) {
                targets.insert(i, t);
            }
        }
        skipped.push(i);
    }
    let judged: std::collections::BTreeSet<PathBuf> = (discovery.loaded.iter().map(|g| &g.path))
        .chain(discovery.skipped.iter().map(|s| &s.path))
        .map(|p| root.join(p))
        .collect();
    let not_examined = unreached(root, &["SKILL.md", "skill.yml"], &[], &|file| {
        file.parent().is_some_and(|d| judged.contains(d))
    });
    let kept: Vec<&Skip> = skipped.iter().map(|i| &discovery.skipped[*i]).collect();
    let duplicates = duplicates(root, &kept);
    let helpers = discovery
        .loaded
        .iter()
        .map(|g| self::helpers(&root_fd, g))
        .collect();
    let hard_links = hard_links(root, &discovery);
    let examined = Examined {
        discovery,
        skipped,
        hints,
        targets,
        not_examined,
        duplicates,
        helpers,
        hard_links,
        file_symlinks,
    };
    Ok((root_fd, examined))
}

/// How many skips of each reason, in the reference's order of reasons.
fn per_reason(skipped: &[Skipped<'_>]) -> BTreeMap<SkipReason, usize> {
    let mut out = BTreeMap::new();
    for s in skipped {
        *out.entry(s.skip.reason).or_insert(0) += 1;
    }
    out
}

/// What a reason means, in an operator's words.
fn reason_words(reason: SkipReason) -> &'static str {
    match reason {
        SkipReason::Duplicate => "another skill directory has the same name: no copy loads",
        SkipReason::Symlink => {
            "a symlinked directory, or SKILL.md/skill.yml is a symlink (never followed)"
        }
        SkipReason::TooDeep => "more than 8 directory levels below the root",
        SkipReason::TooLarge => "SKILL.md or skill.yml is larger than the limit",
        SkipReason::NotRegular => "SKILL.md or skill.yml is not a regular file",
        SkipReason::NotUtf8 => "SKILL.md or skill.yml is not UTF-8",
        SkipReason::BadName => "the directory name cannot be a skill id",
        SkipReason::Malformed => "no frontmatter, or YAML the reader refuses",
        SkipReason::Incomplete => "`name` or `description` is missing, empty or not text",
        SkipReason::Unreadable => "cannot be opened or read",
        SkipReason::Shadowed => "shadowed by a skill of the same name",
    }
}

fn format_word(format: GuideFormat) -> &'static str {
    match format {
        GuideFormat::Legacy => "legacy",
        GuideFormat::Portable => "portable",
    }
}

/// The text (or JSON) `check-tree` prints; an error when the root cannot be opened.
pub fn render(root: &Path, as_json: bool) -> Result<String, String> {
    let (_root_fd, x) = examine(root)?;
    Ok(if as_json {
        format!("{}\n", to_json(&x))
    } else {
        to_text(root, &x)
    })
}

fn helper_json(h: &Helper) -> Value {
    let mut v = match &h.sha256 {
        Ok(sha) => json!({"script": h.script, "sha256": sha}),
        Err(why) => json!({"script": h.script, "refused": why}),
    };
    if let Some(hit) = &h.trading_blocked {
        v["trading_blocked"] = json!(hit);
    }
    v
}

fn to_json(x: &Examined) -> Value {
    let d = &x.discovery;
    let skipped = x.skipped();
    let summary: serde_json::Map<String, Value> = per_reason(&skipped)
        .into_iter()
        .map(|(r, n)| (r.as_str().to_owned(), json!(n)))
        .collect();
    let mut warnings: Vec<Value> = x
        .hard_links
        .iter()
        .map(|l| json!({"path": l.path, "warning": "hard_link", "links": l.links}))
        .collect();
    for (g, (_, truncated)) in d.loaded.iter().zip(&x.helpers) {
        if *truncated {
            warnings.push(json!({"path": g.path, "warning": "helpers_not_all_listed"}));
        }
    }
    if x.not_examined.1 {
        warnings.push(json!({"path": "", "warning": "not_examined_walk_truncated"}));
    }
    json!({
        "loaded": d.loaded.iter().zip(&x.helpers).map(|(g, (helpers, _))| json!({
            "id": g.id, "path": g.path, "format": g.format, "name": g.name, "description": g.description,
            "helpers": helpers.iter().map(helper_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "skipped": skipped.iter().map(|s| {
            let mut v = json!({"path": s.skip.path, "reason": s.skip.reason.as_str(), "detail": s.detail()});
            if let Some(t) = &s.target {
                v["target"] = json!(t);
            }
            if s.skip.reason == SkipReason::Duplicate {
                // The group in `duplicates` with every copy.
                v["duplicate_id"] = json!(s.skip.path.rsplit('/').next().unwrap_or(&s.skip.path));
            }
            if let Some(line) = s.skill_md_line() {
                v["skill_md_line"] = json!(line);
            }
            if let Some(h) = &s.hint {
                v["hint"] = json!(h.text);
            }
            v
        }).collect::<Vec<_>>(),
        "duplicates": x.duplicates.iter().map(|g| json!({
            "id": g.id, "paths": g.paths,
            "identical": g.identical.len() == 1 && g.identical[0].len() == g.paths.len(),
            "identical_copies": g.identical,
        })).collect::<Vec<_>>(),
        "not_examined": x.not_examined.0,
        "summary": {"loaded": d.loaded.len(), "skipped": skipped.len(), "by_reason": summary,
                    "file_symlinks_ignored": x.file_symlinks, "not_examined": x.not_examined.0.len()},
        "warnings": warnings,
    })
}

/// The skipped skill directories: path, reason, detail (a symlink with its target), and the fix
/// hint with its SKILL.md line.
fn skipped_text(out: &mut String, skipped: &[Skipped<'_>]) {
    if !skipped.is_empty() {
        let n = skipped.len();
        let plural = if n == 1 { "y" } else { "ies" };
        let _ = writeln!(out, "skipped {n} skill director{plural} (not loaded):");
        let _ = writeln!(out, "  {:<40} {:<12} DETAIL", "PATH", "REASON");
        for s in skipped {
            let target = s
                .target
                .as_ref()
                .map(|t| format!(" (it points to {})", one_line(t)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<40} {:<12} {}{target}",
                one_line(&s.skip.path),
                s.skip.reason.as_str(),
                one_line(&s.detail())
            );
            if let Some(h) = &s.hint {
                let at = s
                    .skill_md_line()
                    .map(|n| format!(" (SKILL.md line {n})"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  {:<40} {:<12} fix{at}: {}",
                    "",
                    "",
                    one_line(&h.text)
                );
            }
        }
    }
}

/// The skill files no scan examined (inside a skill directory, or too deep).
fn not_examined_text(out: &mut String, x: &Examined) {
    let (nested, cut) = &x.not_examined;
    if !nested.is_empty() {
        let _ = writeln!(
            out,
            "not examined: {} skill file(s) inside a loaded or skipped skill directory, or deeper than the scan goes (a skill's own directory is never scanned for more skills, and nothing below {} levels is examined: SPEC.md discovery.depth):",
            nested.len(),
            skillspec_reference::discovery::MAX_DEPTH
        );
        for p in nested {
            let _ = writeln!(out, "  {}", one_line(p));
        }
    }
    if *cut {
        let _ = writeln!(
            out,
            "  (the walk for them stopped after {UNREACHED_DIRS} directories)"
        );
    }
}

fn to_text(root: &Path, x: &Examined) -> String {
    let d = &x.discovery;
    let skipped = x.skipped();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "loaded {} skill(s) from {}:",
        d.loaded.len(),
        one_line(&root.display().to_string())
    );
    if !d.loaded.is_empty() {
        let _ = writeln!(out, "  {:<24} {:<9} {:<24} PATH", "SKILL", "FORMAT", "NAME");
    }
    for (g, (helpers, truncated)) in d.loaded.iter().zip(&x.helpers) {
        let _ = writeln!(
            out,
            "  {:<24} {:<9} {:<24} {}",
            one_line(&g.id),
            format_word(g.format),
            one_line(&g.name),
            one_line(&g.path)
        );
        for h in helpers {
            match &h.sha256 {
                Ok(sha) => {
                    let _ = writeln!(out, "      helper {}  sha256 {sha}", one_line(&h.script));
                    if let Some(hit) = &h.trading_blocked {
                        let _ = writeln!(
                            out,
                            "        (its name is on the trading blocklist, {}: it runs only with allow_trading)",
                            one_line(hit)
                        );
                    }
                }
                Err(why) => {
                    let _ = writeln!(
                        out,
                        "      helper {}  cannot run: {}",
                        one_line(&h.script),
                        one_line(why)
                    );
                }
            }
        }
        if *truncated {
            let _ = writeln!(
                out,
                "      (more files under scripts/ than listed: {HELPER_ENTRIES} entries, {HELPER_DEPTH} levels)"
            );
        }
    }
    skipped_text(&mut out, &skipped);
    not_examined_text(&mut out, x);
    if !x.duplicates.is_empty() {
        let _ = writeln!(
            out,
            "duplicate skill ids ({}): no copy loads; keep one copy of each and rename or remove the others:",
            x.duplicates.len()
        );
        for g in &x.duplicates {
            let all_same = g.identical.len() == 1 && g.identical[0].len() == g.paths.len();
            let same = if all_same {
                "all byte-identical".to_owned()
            } else if g.identical.is_empty() {
                "they differ".to_owned()
            } else {
                let sets: Vec<String> = (g.identical.iter())
                    .map(|s| {
                        s.iter()
                            .map(|p| one_line(p))
                            .collect::<Vec<_>>()
                            .join(" = ")
                    })
                    .collect();
                format!("identical: {}", sets.join("; "))
            };
            let _ = writeln!(
                out,
                "  {}: {} copies, {same}",
                one_line(&g.id),
                g.paths.len()
            );
            for p in &g.paths {
                let _ = writeln!(out, "    {}", one_line(p));
            }
        }
    }
    let counts = per_reason(&skipped);
    let by_reason: Vec<String> = counts
        .iter()
        .map(|(r, n)| format!("{n} {}", r.as_str()))
        .collect();
    let _ = writeln!(
        out,
        "summary: {} loaded, {} skipped{}",
        d.loaded.len(),
        skipped.len(),
        if by_reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", by_reason.join(", "))
        }
    );
    for r in counts.keys() {
        let _ = writeln!(out, "  {:<12} {}", r.as_str(), reason_words(*r));
    }
    if x.file_symlinks > 0 {
        let _ = writeln!(
            out,
            "  ({} symlink(s) to files or to nothing are not skills and are not listed)",
            x.file_symlinks
        );
    }
    if !x.hard_links.is_empty() {
        let _ = writeln!(
            out,
            "warnings: {} file(s) of loaded skills are hard links (the same bytes have another name, maybe outside the skill, and change with it):",
            x.hard_links.len()
        );
        for l in &x.hard_links {
            let _ = writeln!(out, "  {:<40} {} links", one_line(&l.path), l.links);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_for_the_common_yaml_mistakes() {
        let fm = "name: a\ndescription: Use when: the user asks\n";
        let h = yaml_hint("frontmatter: YAML syntax error at line 2: x", fm).unwrap();
        assert!(h.contains("quote the whole value"), "{h}");
        assert!(
            h.contains("description: \"Use when: the user asks\""),
            "{h}"
        );
        let fm = "name: a\ndescription: **bold** text\n";
        let h = yaml_hint("alias to an unknown anchor at line 2", fm).unwrap();
        assert!(h.contains("alias"), "{h}");
        let fm = "name: a\ndescription: &x text\n";
        assert!(yaml_hint("at line 2", fm).unwrap().contains("anchor"));
        let fm = "name: a\nmetadata:\n\tkey: v\n";
        assert!(yaml_hint("at line 3", fm).unwrap().contains("tab"));
        assert_eq!(yaml_hint("at line 1", "name: \"a: b\"\n"), None);
        assert_eq!(yaml_hint("no line", "name: a: b\n"), None);
        assert_eq!(yaml_hint("at line 9", "name: a: b\n"), None);
    }
}
