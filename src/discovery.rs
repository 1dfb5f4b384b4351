//! Discovery: finding skill directories under the configured root and loading their guides.
//!
//! The walk (SPEC.md `discovery.*`): the root's children are at depth 1 and directories down to
//! depth 8 are examined; a directory holding an entry named `SKILL.md` is a *skill directory* and
//! is not descended into; other directories are. Symlinks below the root are never followed. Skill
//! directories that share a name are all dropped. Every skill directory is then loaded as legacy
//! (`skill.yml` + `SKILL.md`) or portable (frontmatter), or skipped with a reason. All file access
//! goes through [`crate::safe_fs`] ([`safe_fs::access`]); the limits are [`crate::rules`]'.
//!
//! Each directory is listed once: its listing says whether it holds `SKILL.md` and, for a skill
//! directory, what kind of entry `SKILL.md` and `skill.yml` are, so a guide file that is not a
//! regular file is skipped by its listed kind without ever being opened
//! ([`safe_fs::open_listed`]). A guide file is read straight into the buffer kept, and the body
//! stays in that buffer (a range of it, not a copy).
//!
//! A tool (layer 2): it uses the primitives `safe_fs`, `yaml`, `frontmatter`, `legacy` and
//! `rules`.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::Serialize;

use crate::frontmatter;
use crate::legacy;
use crate::rules::{rules, SPEC};
use crate::safe_fs::{self, DirError, Entries, EntryKind, LeafError, Use};
use crate::yaml::{self, Value};

/// Directories deeper than this many levels below the root are not examined.
pub const MAX_DEPTH: usize = SPEC.discovery.max_depth;
/// The largest SKILL.md or skill.yml that loads, in bytes (inclusive).
pub const MAX_GUIDE_BYTES: u64 = SPEC.discovery.max_guide_bytes;

/// Which of the two skill formats a guide was loaded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GuideFormat {
    Portable,
    Legacy,
}

/// One loaded skill guide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Guide {
    /// The skill id: the directory's name.
    pub id: String,
    /// The directory's path relative to the root, `/`-separated.
    pub path: String,
    pub format: GuideFormat,
    pub name: String,
    pub description: String,
    pub body: String,
    /// The path components from the root to the skill directory, as raw bytes.
    #[serde(skip)]
    pub components: Vec<Vec<u8>>,
    /// The frontmatter text of a portable guide, kept only by
    /// [`discover_in_keeping_frontmatter`] (the `selection` and `trust` profile reads fields
    /// from it).
    #[serde(skip)]
    pub frontmatter: Option<String>,
}

/// Why a directory (or a symlink where a directory could be) was not loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Another skill directory has the same name.
    Duplicate,
    /// A symlinked directory, or a skill directory whose SKILL.md or skill.yml is a symlink.
    Symlink,
    /// A directory deeper than [`MAX_DEPTH`].
    TooDeep,
    /// SKILL.md or skill.yml is larger than [`MAX_GUIDE_BYTES`].
    TooLarge,
    /// SKILL.md or skill.yml is not a regular file (directory, FIFO, socket, device).
    NotRegular,
    /// SKILL.md or skill.yml is not valid UTF-8.
    NotUtf8,
    /// The directory name is not valid UTF-8 or holds control characters, so it cannot be an id.
    BadName,
    /// Missing, unterminated or unparsable frontmatter.
    Malformed,
    /// Frontmatter without a non-empty string `name` and `description`.
    Incomplete,
    /// A file or directory that could not be opened or read.
    Unreadable,
    /// (Profile `trust`) A skill whose name is present in an earlier skill directory.
    Shadowed,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Duplicate => "duplicate",
            SkipReason::Symlink => "symlink",
            SkipReason::TooDeep => "too_deep",
            SkipReason::TooLarge => "too_large",
            SkipReason::NotRegular => "not_regular",
            SkipReason::NotUtf8 => "not_utf8",
            SkipReason::BadName => "bad_name",
            SkipReason::Malformed => "malformed",
            SkipReason::Incomplete => "incomplete",
            SkipReason::Unreadable => "unreadable",
            SkipReason::Shadowed => "shadowed",
        }
    }
}

/// A path the scan did not load, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skip {
    /// Relative to the root, `/`-separated; bytes that are not UTF-8 are shown as `\xHH`.
    pub path: String,
    pub reason: SkipReason,
    /// A human-readable explanation (not part of any contract).
    pub detail: String,
}

/// The result of one scan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Discovery {
    /// Loaded guides, sorted by the bytes of their ids.
    pub loaded: Vec<Guide>,
    /// Everything skipped, sorted by path.
    pub skipped: Vec<Skip>,
    /// The name of every entry the scan met, wherever it looked: skill directories (loaded or
    /// skipped), directories it descended into or found too deep, symlinks, files and other
    /// entries (not what is inside a skill directory). For the `trust` profile, where any entry
    /// of a name in an earlier directory shadows that name in later ones.
    #[serde(skip)]
    pub names_present: std::collections::BTreeSet<Vec<u8>>,
}

impl Discovery {
    pub fn guide(&self, id: &str) -> Option<&Guide> {
        self.loaded.iter().find(|g| g.id == id)
    }
}

/// The root could not be opened as a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for RootError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot open skills root {}: {}", self.path, self.message)
    }
}

/// Renders path bytes for reports: UTF-8 as is, other bytes as `\xHH`.
pub fn display_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

fn join_display(components: &[Vec<u8>]) -> String {
    components
        .iter()
        .map(|c| display_bytes(c))
        .collect::<Vec<_>>()
        .join("/")
}

/// A skill directory found by the walk, already loaded or rejected. The guide is boxed so that
/// the candidates, moved and sorted, stay small; its `components` are the candidate's, moved
/// into it once it is kept.
struct Candidate {
    components: Vec<Vec<u8>>,
    /// The guide loaded (its place in the walk's guides), or why it was not.
    outcome: Result<usize, (SkipReason, String)>,
}

impl Candidate {
    /// The skill directory's name: its last path component.
    fn name(&self) -> &[u8] {
        self.components
            .last()
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// Opens `root` (following a symlink at the root itself only) and scans it.
pub fn discover(root: &Path) -> Result<Discovery, RootError> {
    let root_fd = safe_fs::open_root(root).map_err(|e| RootError {
        path: root.display().to_string(),
        message: e.to_string(),
    })?;
    Ok(discover_in(root_fd.as_fd()))
}

/// Scans the already opened root directory and loads every skill guide below it.
pub fn discover_in(root: BorrowedFd<'_>) -> Discovery {
    scan(root, false)
}

/// [`discover_in`], keeping each portable guide's frontmatter text ([`Guide::frontmatter`]).
pub fn discover_in_keeping_frontmatter(root: BorrowedFd<'_>) -> Discovery {
    scan(root, true)
}

fn scan(root: BorrowedFd<'_>, keep_frontmatter: bool) -> Discovery {
    let steps = steps();
    let mut candidates = Vec::new();
    let mut guides = Vec::new();
    let mut skipped = Vec::new();
    let mut names_present = std::collections::BTreeSet::new();
    let mut found = Found {
        candidates: &mut candidates,
        guides: &mut guides,
        skipped: &mut skipped,
        names: &mut names_present,
    };
    walk(root, &mut Vec::new(), &mut found);
    let names_present = (steps.names_present)(names_present, &candidates);

    // The skill directories of each name together, each name's in the order of the walk (a
    // stable sort, in place: no table of names is built beside them).
    candidates.sort_by(|a, b| a.name().cmp(b.name()));
    // The guides loaded stay where the walk put them: those of a dropped name are removed in
    // place below, so no second vector of guides is built beside the first.
    let mut kept = vec![false; guides.len()];
    let mut rest = candidates.into_iter().peekable();
    while let Some(first) = rest.next() {
        let mut group = vec![first];
        while let Some(next) = rest.next_if(|c| c.name() == group[0].name()) {
            group.push(next);
        }
        let name = group[0].name().to_vec();
        let c = match (steps.one_per_name)(group) {
            Ok(c) => c,
            Err(group) => {
                // One line per directory, naming how many share the id (not all of them: n
                // records listing n paths each would cost O(n²) for a tree built to exploit it).
                let count = group.len();
                let id = display_bytes(&name);
                for c in &group {
                    skipped.push(Skip {
                        path: join_display(&c.components),
                        reason: SkipReason::Duplicate,
                        detail: format!("skill id `{id}` is shared by {count} skill directories"),
                    });
                }
                continue;
            }
        };
        match c.outcome {
            Ok(at) => {
                kept[at] = true;
                guides[at].components = c.components;
            }
            Err((reason, detail)) => skipped.push(Skip {
                path: join_display(&c.components),
                reason,
                detail,
            }),
        }
    }
    let mut kept = kept.into_iter();
    guides.retain_mut(|guide| {
        if !keep_frontmatter {
            guide.frontmatter = None;
        }
        kept.next().unwrap_or(false)
    });
    let mut loaded = guides;
    (steps.sort)(&mut loaded);
    skipped.sort_by(|a, b| a.path.cmp(&b.path).then(a.reason.cmp(&b.reason)));
    Discovery {
        loaded,
        skipped,
        names_present,
    }
}

/// Entry names, as bytes.
type Names = std::collections::BTreeSet<Vec<u8>>;

/// The names that are present for profile `trust`'s shadowing: every entry the walk met,
/// whatever it was (not only the skill directories among them).
fn names_met(met: Names, _skill_dirs: &[Candidate]) -> Names {
    met
}

/// The skill directory of a name, or all of them when more than one share it (they are all
/// dropped).
// spec: discovery.duplicate
fn one_per_name(group: Vec<Candidate>) -> Result<Candidate, Vec<Candidate>> {
    <[Candidate; 1]>::try_from(group).map(|[c]| c)
}

/// Sorts the loaded guides by the bytes of their ids.
// spec: discovery.order
fn sort_by_bytes(loaded: &mut [Guide]) {
    loaded.sort_by(|a: &Guide, b: &Guide| a.id.as_bytes().cmp(b.id.as_bytes()));
}

/// What a walk collects.
struct Found<'a> {
    candidates: &'a mut Vec<Candidate>,
    /// The guides loaded, in the order of the walk (a candidate names its own).
    guides: &'a mut Vec<Guide>,
    skipped: &'a mut Vec<Skip>,
    /// Every entry name met (SPEC.md `trust.levels`, shadowing).
    names: &'a mut std::collections::BTreeSet<Vec<u8>>,
}

/// Walks the root: lists it and examines its entries ([`walk_listed`]).
fn walk(dir: BorrowedFd<'_>, path: &mut Vec<Vec<u8>>, found: &mut Found<'_>) {
    match (safe_fs::access(Use::Scan).list_dir)(dir) {
        Ok(entries) => walk_listed(dir, entries, path, found),
        Err(e) => found.skipped.push(unlistable(path, e)),
    }
}

/// The skip of a directory that cannot be listed.
fn unlistable(path: &[Vec<u8>], e: std::io::Error) -> Skip {
    Skip {
        path: join_display(path),
        reason: SkipReason::Unreadable,
        detail: format!("cannot list directory: {e}"),
    }
}

/// Examines the listed entries of the directory `dir` (at `path`): symlinks and directories too
/// deep are skipped, the other directories entered ([`enter`]).
fn walk_listed(
    dir: BorrowedFd<'_>,
    entries: Entries,
    path: &mut Vec<Vec<u8>>,
    found: &mut Found<'_>,
) {
    let Found {
        candidates,
        guides,
        skipped,
        names,
    } = found;
    let max_depth = rules().discovery.max_depth;
    let depth = path.len() + 1;
    for (name, kind) in entries {
        names.insert(name.clone());
        path.push(name);
        let here = join_display(path);
        match kind {
            // spec: discovery.symlink.dir (a symlink below the root is never followed)
            EntryKind::Symlink => skipped.push(Skip {
                path: here,
                reason: SkipReason::Symlink,
                detail: "symlinks below the root are never followed".into(),
            }),
            // spec: discovery.depth
            EntryKind::Directory if depth > max_depth => skipped.push(Skip {
                path: here,
                reason: SkipReason::TooDeep,
                detail: format!("deeper than {max_depth} levels below the root"),
            }),
            EntryKind::Directory => enter(
                dir,
                path,
                here,
                &mut Found {
                    candidates,
                    guides,
                    skipped,
                    names,
                },
            ),
            EntryKind::Regular | EntryKind::Special => {}
        }
        path.pop();
    }
}

/// Enters the directory at `path` (listed in `dir`) and lists it, once: a skill directory when
/// the listing holds an entry named `SKILL.md` (loaded from the same listing, [`load_skill`]),
/// else walked ([`walk_listed`]).
fn enter(dir: BorrowedFd<'_>, path: &mut Vec<Vec<u8>>, here: String, found: &mut Found<'_>) {
    let access = safe_fs::access(Use::Scan);
    let name = OsStr::from_bytes(path.last().map(Vec::as_slice).unwrap_or_default());
    let sub = match (access.open_dir)(dir, name) {
        Ok(sub) => sub,
        // Replaced by a symlink (or removed) since it was listed.
        Err(DirError::Symlink | DirError::NotFound | DirError::NotDirectory) => {
            return found.skipped.push(Skip {
                path: here,
                reason: SkipReason::Symlink,
                detail: "no longer a directory when opened without following links".into(),
            })
        }
        Err(DirError::Unreadable(e)) => {
            return found.skipped.push(Skip {
                path: here,
                reason: SkipReason::Unreadable,
                detail: e,
            })
        }
    };
    let entries = match (access.list_dir)(sub.as_fd()) {
        Ok(entries) => entries,
        Err(e) => return found.skipped.push(unlistable(path, e)),
    };
    if let Some(md_kind) = listed(&entries, GuideFile::SkillMd) {
        let yml_kind = listed(&entries, GuideFile::SkillYml);
        drop(entries);
        let outcome = load_skill(sub.as_fd(), path, md_kind, yml_kind).map(|guide| {
            found.guides.push(guide);
            found.guides.len() - 1
        });
        found.candidates.push(Candidate {
            outcome,
            components: path.clone(),
        });
    } else {
        walk_listed(sub.as_fd(), entries, path, found);
    }
}

/// The kind of the guide file `file` in a skill directory's listing; `None` when it has no
/// entry of that name.
fn listed(entries: &Entries, file: GuideFile) -> Option<EntryKind> {
    let name = file.name().as_bytes();
    entries
        .binary_search_by(|(n, _)| n.as_slice().cmp(name))
        .ok()
        .map(|i| entries[i].1)
}

/// Reads one of the two guide files of a skill directory, of the kind its listing gave.
fn read_guide_file(
    dir: BorrowedFd<'_>,
    file: GuideFile,
    kind: EntryKind,
) -> Result<String, (SkipReason, String)> {
    let access = match file {
        GuideFile::SkillMd => safe_fs::access(Use::SkillMd),
        GuideFile::SkillYml => safe_fs::access(Use::SkillYml),
    };
    let file = file.name();
    // spec: discovery.size
    let cap = rules().discovery.max_guide_bytes;
    let read = access.read_listed(dir, OsStr::new(file), kind, cap);
    let bytes = read.map_err(|e| match e {
        LeafError::NotFound => (
            SkipReason::Unreadable,
            format!("{file} vanished during the scan"),
        ),
        // spec: discovery.symlink.skill-md (never opened)
        // spec: discovery.symlink.skill-yml (never opened)
        LeafError::Symlink => (
            SkipReason::Symlink,
            format!("{file} is a symlink and is never read"),
        ),
        LeafError::NotRegular => (
            SkipReason::NotRegular,
            format!("{file} is not a regular file"),
        ),
        LeafError::TooLarge => (
            SkipReason::TooLarge,
            format!("{file} is larger than {cap} bytes"),
        ),
        LeafError::Unreadable(msg) => (SkipReason::Unreadable, format!("{file}: {msg}")),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        (
            SkipReason::NotUtf8,
            format!(
                "{file} is not valid UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// One of the two guide files of a skill directory.
#[derive(Clone, Copy)]
enum GuideFile {
    SkillMd,
    SkillYml,
}

impl GuideFile {
    fn name(self) -> &'static str {
        match self {
            GuideFile::SkillMd => "SKILL.md",
            GuideFile::SkillYml => "skill.yml",
        }
    }
}

/// Where `part` lies in `text` (its start and length), to keep it without copying it
/// ([`keep`]); when it is not a slice of `text`, a copy of it.
type Part = Result<(usize, usize), String>;

fn part_of(text: &str, part: &str) -> Part {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize);
    match start {
        Some(start) if text.get(start..start.saturating_add(part.len())).is_some() => {
            Ok((start, part.len()))
        }
        _ => Err(part.to_owned()),
    }
}

/// The [`Part`] of `text`, kept in `text`'s own buffer: no copy is allocated.
fn keep(mut text: String, part: Part) -> String {
    match part {
        Ok((start, len)) => {
            text.truncate(start + len);
            text.drain(..start);
            text
        }
        Err(copy) => copy,
    }
}

/// Whether `id` can name a skill: valid UTF-8 without control characters or backticks (the
/// prompt writes ids in backticks; one inside would end the code span).
// spec: discovery.id
fn valid_id(bytes: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(bytes).ok()?;
    if s.chars().any(|c| c.is_control() || c == '`') {
        return None;
    }
    Some(s.to_owned())
}

/// Loads the skill directory `dir`, whose listing gave `SKILL.md` the kind `md_kind` and
/// `skill.yml` the kind `yml_kind` (`None`: no entry of that name).
fn load_skill(
    dir: BorrowedFd<'_>,
    components: &[Vec<u8>],
    md_kind: EntryKind,
    yml_kind: Option<EntryKind>,
) -> Result<Guide, (SkipReason, String)> {
    let last = components.last().map(Vec::as_slice).unwrap_or_default();
    let id = (steps().valid_id)(last).ok_or_else(|| {
        (
            SkipReason::BadName,
            "a skill id must be UTF-8 without control characters or backticks".to_owned(),
        )
    })?;
    let skill_md = read_guide_file(dir, GuideFile::SkillMd, md_kind)?;
    let mut frontmatter_text = None;
    // spec: discovery.legacy (with skill.yml: legacy, the body the whole SKILL.md)
    let (format, name, description, body) = if let Some(yml_kind) = yml_kind {
        let yml = read_guide_file(dir, GuideFile::SkillYml, yml_kind)?;
        let (name, description) = legacy_metadata(&yml);
        let body = part_of(&skill_md, frontmatter::strip_bom(&skill_md).trim());
        (
            GuideFormat::Legacy,
            name.unwrap_or_else(|| id.clone()),
            description.unwrap_or_default(),
            keep(skill_md, body),
        )
    } else {
        // spec: discovery.portable (a frontmatter block whose top level is a mapping)
        // spec: discovery.malformed (what the splitter or the YAML reader refuses skips the skill)
        let split =
            frontmatter::split(&skill_md).map_err(|e| (SkipReason::Malformed, e.to_string()))?;
        // spec: discovery.portable.extra-keys (the whole text is read under the reader's limits)
        let doc = yaml::parse(split.frontmatter)
            .map_err(|e| (SkipReason::Malformed, format!("frontmatter: {e}")))?;
        if !matches!(doc.root, Value::Mapping | Value::Null) {
            return Err((SkipReason::Malformed, "frontmatter is not a mapping".into()));
        }
        // spec: discovery.portable.non-string (non-blank strings of the core schema only)
        let field = |key: &str| -> Result<String, (SkipReason, String)> {
            match doc.get(key) {
                Some(Value::Str(s)) if !frontmatter::is_blank(s) => Ok(s.clone()),
                Some(Value::Str(_)) => Err((SkipReason::Incomplete, format!("`{key}` is empty"))),
                Some(other) => Err((
                    SkipReason::Incomplete,
                    format!("`{key}` is not a string ({other:?})"),
                )),
                None => Err((SkipReason::Incomplete, format!("`{key}` is missing"))),
            }
        };
        // spec: discovery.no-permissions (only `name` and `description` are read: no key grants)
        let name = field("name")?;
        let description = field("description")?;
        frontmatter_text = Some(split.frontmatter.to_owned());
        let body = part_of(&skill_md, split.body);
        drop(doc);
        (
            GuideFormat::Portable,
            name,
            description,
            keep(skill_md, body),
        )
    };
    Ok(Guide {
        id,
        path: join_display(components),
        format,
        name,
        description,
        body,
        // The candidate's own, moved in by `scan` when the guide is kept.
        components: Vec::new(),
        frontmatter: frontmatter_text,
    })
}

/// Name and description of a legacy skill.yml: strict YAML when it parses to a mapping, else the
/// line-based parser. A value that is missing, empty or not a string counts as absent.
fn legacy_metadata(text: &str) -> (Option<String>, Option<String>) {
    let text = frontmatter::strip_bom(text);
    // spec: discovery.legacy.yaml (plain `key: value` lines, read as the strict reader would)
    if let Some(metadata) = legacy::plain_metadata(text) {
        return metadata;
    }
    let non_empty = |s: Option<String>| s.filter(|s| !frontmatter::is_blank(s));
    match yaml::parse(text) {
        // spec: discovery.legacy.yaml
        Ok(doc) if doc.root == Value::Mapping => (
            non_empty(doc.get("name").and_then(Value::as_str).map(str::to_owned)),
            non_empty(
                doc.get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            ),
        ),
        // spec: discovery.legacy.fallback (not strict YAML, or not a mapping)
        _ => {
            let pairs = legacy::parse_lines(text);
            let get = |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.clone())
            };
            (non_empty(get("name")), non_empty(get("description")))
        }
    }
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// The names present for shadowing, from those the walk met and the skill directories.
    names_present: fn(Names, &[Candidate]) -> Names,
    /// The skill directory loaded for a name, or the ones dropped.
    one_per_name: fn(Vec<Candidate>) -> Result<Candidate, Vec<Candidate>>,
    /// The order of the loaded guides.
    sort: fn(&mut [Guide]),
    /// Whether a directory name can be a skill id.
    valid_id: fn(&[u8]) -> Option<String>,
}

const STEPS: Steps = Steps {
    names_present: names_met,
    one_per_name,
    sort: sort_by_bytes,
    valid_id,
};

steps_in_force!();

/// The defects of this module (see `crate::mutants`); the symlink ones are `safe_fs`'s.
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::TrustShadowingSkillDirsOnly) => &SKILL_DIRS_SHADOW,
            Some(Mutant::DiscoveryDuplicateKeepsFirst) => &FIRST_DUPLICATE_KEPT,
            Some(Mutant::DiscoveryOrderCaseInsensitive) => &CASE_INSENSITIVE_ORDER,
            Some(Mutant::DiscoveryIdControlAllowed) => &ANY_UTF8_ID,
            _ => &STEPS,
        }
    }

    const SKILL_DIRS_SHADOW: Steps = Steps {
        names_present: skill_dir_names,
        ..STEPS
    };
    const FIRST_DUPLICATE_KEPT: Steps = Steps {
        one_per_name: keep_first,
        ..STEPS
    };
    const CASE_INSENSITIVE_ORDER: Steps = Steps {
        sort: sort_case_insensitively,
        ..STEPS
    };
    const ANY_UTF8_ID: Steps = Steps {
        valid_id: any_utf8_id,
        ..STEPS
    };

    /// `trust-shadowing-skill-dirs-only`: only the names of skill directories are present.
    fn skill_dir_names(_met: Names, skill_dirs: &[Candidate]) -> Names {
        skill_dirs
            .iter()
            .filter_map(|c| c.components.last().cloned())
            .collect()
    }

    /// `discovery-duplicate-keeps-first`: the first by path is kept.
    fn keep_first(mut group: Vec<Candidate>) -> Result<Candidate, Vec<Candidate>> {
        group.truncate(1);
        one_per_name(group)
    }

    /// `discovery-order-case-insensitive`.
    fn sort_case_insensitively(loaded: &mut [Guide]) {
        sort_by_bytes(loaded);
        loaded.sort_by_key(|g| g.id.to_lowercase());
    }

    /// `discovery-id-control-allowed`.
    fn any_utf8_id(bytes: &[u8]) -> Option<String> {
        std::str::from_utf8(bytes).ok().map(str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{FileType, Mode, CWD};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    #[test]
    fn a_part_is_kept_in_place_and_anything_else_copied() {
        let text = "\u{feff}  body \n".to_owned();
        let part = part_of(&text, frontmatter::strip_bom(&text).trim());
        assert_eq!(part, Ok((5, 4)));
        assert_eq!(keep(text.clone(), part), "body");
        let other = "elsewhere";
        assert_eq!(part_of(&text, other), Err("elsewhere".to_owned()));
        assert_eq!(keep(text.clone(), part_of(&text, other)), "elsewhere");
        assert_eq!(keep(text.clone(), part_of(&text, &text[text.len()..])), "");
    }

    /// A thread blocked in a blocking `open(O_WRONLY)` of `fifo`: the kernel releases it as soon
    /// as anything opens the FIFO for reading (even non-blocking, even if it closes it at once),
    /// so while it stays blocked, nobody opened the FIFO. Returns once the thread is seen blocked
    /// in the open (`wait_for_partner` in its `wchan`; where `wchan` is not shown, after 300 ms).
    fn blocked_writer(fifo: std::path::PathBuf, tag: &str) -> mpsc::Receiver<bool> {
        let (tx, rx) = mpsc::channel();
        let name = format!("w-{tag}");
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                let opened = std::fs::OpenOptions::new().write(true).open(&fifo);
                let _ = tx.send(opened.is_ok());
            })
            .unwrap();
        let start = Instant::now();
        loop {
            let mut blocked = false;
            let mut shown = false;
            for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
                let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
                if comm.trim_end() == name.as_str() {
                    let wchan =
                        std::fs::read_to_string(task.path().join("wchan")).unwrap_or_default();
                    shown = wchan != "0" && !wchan.is_empty();
                    blocked = wchan.contains("wait_for_partner") || wchan.contains("fifo");
                }
            }
            let waited = start.elapsed();
            if blocked || (!shown && waited > Duration::from_millis(300)) {
                return rx;
            }
            assert!(waited < Duration::from_secs(10), "the writer never blocked");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn mkfifo(path: &Path) {
        rustix::fs::mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
    }

    /// SPEC.md's discovery rule: a SKILL.md or skill.yml that is a FIFO, or a link to a FIFO or
    /// a device, is skipped without ever being opened. Each FIFO has a writer blocked in its
    /// open before the scan ([`blocked_writer`]); the scan must finish, give each skill its
    /// reason, and leave every writer blocked; right after it, a non-blocking open for writing
    /// still fails with `ENXIO` (no reader holds the FIFO).
    #[test]
    fn a_fifo_or_a_device_link_named_skill_md_or_skill_yml_is_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            "fifo-md", "fifo-yml", "link-md", "dev-md", "dev-yml", "plain",
        ] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        let guide = "---\nname: n\ndescription: d\n---\nbody\n";
        mkfifo(&root.join("fifo-md/SKILL.md"));
        std::fs::write(root.join("fifo-yml/SKILL.md"), guide).unwrap();
        mkfifo(&root.join("fifo-yml/skill.yml"));
        std::os::unix::fs::symlink("../fifo-md/SKILL.md", root.join("link-md/SKILL.md")).unwrap();
        std::os::unix::fs::symlink("/dev/null", root.join("dev-md/SKILL.md")).unwrap();
        std::fs::write(root.join("dev-yml/SKILL.md"), guide).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("dev-yml/skill.yml")).unwrap();
        std::fs::write(root.join("plain/SKILL.md"), guide).unwrap();
        let fifos = [
            root.join("fifo-md/SKILL.md"),
            root.join("fifo-yml/skill.yml"),
        ];
        let writers: Vec<_> = fifos
            .iter()
            .enumerate()
            .map(|(i, f)| blocked_writer(f.clone(), &i.to_string()))
            .collect();

        let (tx, rx) = mpsc::channel();
        let scanned = root.to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(discover(&scanned));
        });
        let found = rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
        for w in &writers {
            assert!(
                w.recv_timeout(Duration::from_millis(200)).is_err(),
                "a FIFO's blocked writer was released: the scan opened the FIFO"
            );
        }
        for f in &fifos {
            let nonblocking = rfs_open_write_nonblocking(f);
            assert_eq!(
                nonblocking,
                Err(rustix::io::Errno::NXIO),
                "{f:?} has a reader"
            );
        }
        let reasons: Vec<_> = found
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                ("dev-md", SkipReason::Symlink),
                ("dev-yml", SkipReason::Symlink),
                ("fifo-md", SkipReason::NotRegular),
                ("fifo-yml", SkipReason::NotRegular),
                ("link-md", SkipReason::Symlink),
            ]
        );
        let ids: Vec<_> = found.loaded.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["plain"]);
        assert_eq!(found.loaded[0].body, "body");
        assert_eq!(found.loaded[0].components, [b"plain".to_vec()]);

        // Release the writers so that their threads end.
        for (f, w) in fifos.iter().zip(&writers) {
            let _reader = std::fs::File::open(f).unwrap();
            assert_eq!(w.recv_timeout(Duration::from_secs(5)), Ok(true));
        }
    }

    fn rfs_open_write_nonblocking(path: &Path) -> Result<(), rustix::io::Errno> {
        use rustix::fs::OFlags;
        rustix::fs::open(
            path,
            OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(drop)
    }
}
