//! Discovery: finding skill directories under the configured root and loading their guides.
//!
//! The walk (SPEC.md `discovery.*`): the root's children are at depth 1 and directories down to
//! depth 8 are examined; a directory holding an entry named `SKILL.md` is a *skill directory* and
//! is not descended into; other directories are. Symlinks below the root are never followed. Skill
//! directories that share a name are all dropped. Every skill directory is then loaded as legacy
//! (`skill.yml` + `SKILL.md`) or portable (frontmatter), or skipped with a reason. All file access
//! goes through [`crate::safe_fs`] ([`safe_fs::access`]); the limits are [`crate::rules`]'.
//!
//! A tool (layer 2): it uses the primitives `safe_fs`, `yaml`, `frontmatter`, `legacy` and
//! `rules`.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::Serialize;

use crate::frontmatter;
use crate::legacy;
use crate::rules::{rules, SPEC};
use crate::safe_fs::{self, DirError, EntryKind, LeafError, Use};
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

/// A skill directory found by the walk, already loaded or rejected.
struct Candidate {
    components: Vec<Vec<u8>>,
    outcome: Result<Guide, (SkipReason, String)>,
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
    let mut skipped = Vec::new();
    let mut names_present = std::collections::BTreeSet::new();
    let mut found = Found {
        candidates: &mut candidates,
        skipped: &mut skipped,
        names: &mut names_present,
    };
    walk(root, &mut Vec::new(), &mut found);
    let names_present = (steps.names_present)(names_present, &candidates);

    let mut by_name: BTreeMap<Vec<u8>, Vec<Candidate>> = BTreeMap::new();
    for c in candidates {
        let name = c.components.last().cloned().unwrap_or_default();
        by_name.entry(name).or_default().push(c);
    }
    let mut loaded = Vec::new();
    for (name, group) in by_name {
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
            Ok(mut guide) => {
                if !keep_frontmatter {
                    guide.frontmatter = None;
                }
                loaded.push(guide)
            }
            Err((reason, detail)) => skipped.push(Skip {
                path: join_display(&c.components),
                reason,
                detail,
            }),
        }
    }
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
    skipped: &'a mut Vec<Skip>,
    /// Every entry name met (SPEC.md `trust.levels`, shadowing).
    names: &'a mut std::collections::BTreeSet<Vec<u8>>,
}

fn walk(dir: BorrowedFd<'_>, path: &mut Vec<Vec<u8>>, found: &mut Found<'_>) {
    let Found {
        candidates,
        skipped,
        names,
    } = found;
    let access = safe_fs::access(Use::Scan);
    let max_depth = rules().discovery.max_depth;
    let entries = match (access.list_dir)(dir) {
        Ok(entries) => entries,
        Err(e) => {
            skipped.push(Skip {
                path: join_display(path),
                reason: SkipReason::Unreadable,
                detail: format!("cannot list directory: {e}"),
            });
            return;
        }
    };
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
            EntryKind::Directory => {
                let name = OsStr::from_bytes(path.last().map(Vec::as_slice).unwrap_or_default());
                match (access.open_dir)(dir, name) {
                    Ok(sub) => match safe_fs::entry_kind(sub.as_fd(), OsStr::new("SKILL.md")) {
                        Ok(Some(_)) => candidates.push(Candidate {
                            components: path.clone(),
                            outcome: load_skill(sub.as_fd(), path),
                        }),
                        Ok(None) => walk(
                            sub.as_fd(),
                            path,
                            &mut Found {
                                candidates,
                                skipped,
                                names,
                            },
                        ),
                        Err(e) => skipped.push(Skip {
                            path: here,
                            reason: SkipReason::Unreadable,
                            detail: e.to_string(),
                        }),
                    },
                    // Replaced by a symlink (or removed) since it was listed.
                    Err(DirError::Symlink | DirError::NotFound | DirError::NotDirectory) => skipped
                        .push(Skip {
                            path: here,
                            reason: SkipReason::Symlink,
                            detail: "no longer a directory when opened without following links"
                                .into(),
                        }),
                    Err(DirError::Unreadable(e)) => skipped.push(Skip {
                        path: here,
                        reason: SkipReason::Unreadable,
                        detail: e,
                    }),
                }
            }
            EntryKind::Regular | EntryKind::Special => {}
        }
        path.pop();
    }
}

/// Reads one of the two guide files of a skill directory.
fn read_guide_file(dir: BorrowedFd<'_>, file: GuideFile) -> Result<String, (SkipReason, String)> {
    let (file, access) = match file {
        GuideFile::SkillMd => ("SKILL.md", safe_fs::access(Use::SkillMd)),
        GuideFile::SkillYml => ("skill.yml", safe_fs::access(Use::SkillYml)),
    };
    // spec: discovery.size
    let cap = rules().discovery.max_guide_bytes;
    let read = access.read_file(dir, OsStr::new(file), cap);
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

fn load_skill(dir: BorrowedFd<'_>, components: &[Vec<u8>]) -> Result<Guide, (SkipReason, String)> {
    let last = components.last().map(Vec::as_slice).unwrap_or_default();
    let id = (steps().valid_id)(last).ok_or_else(|| {
        (
            SkipReason::BadName,
            "a skill id must be UTF-8 without control characters or backticks".to_owned(),
        )
    })?;
    let skill_md = read_guide_file(dir, GuideFile::SkillMd)?;
    let has_yml = safe_fs::entry_kind(dir, OsStr::new("skill.yml"))
        .map_err(|e| (SkipReason::Unreadable, e.to_string()))?
        .is_some();
    let mut frontmatter_text = None;
    // spec: discovery.legacy (with skill.yml: legacy, the body the whole SKILL.md)
    let (format, name, description, body) = if has_yml {
        let yml = read_guide_file(dir, GuideFile::SkillYml)?;
        let (name, description) = legacy_metadata(&yml);
        (
            GuideFormat::Legacy,
            name.unwrap_or_else(|| id.clone()),
            description.unwrap_or_default(),
            frontmatter::strip_bom(&skill_md).trim().to_owned(),
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
        (
            GuideFormat::Portable,
            name,
            description,
            split.body.to_owned(),
        )
    };
    Ok(Guide {
        id,
        path: join_display(components),
        format,
        name,
        description,
        body,
        components: components.to_vec(),
        frontmatter: frontmatter_text,
    })
}

/// Name and description of a legacy skill.yml: strict YAML when it parses to a mapping, else the
/// line-based parser. A value that is missing, empty or not a string counts as absent.
fn legacy_metadata(text: &str) -> (Option<String>, Option<String>) {
    let text = frontmatter::strip_bom(text);
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
