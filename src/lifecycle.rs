//! Clause `skills.lifecycle` (SPEC.md, "Profile `selection` and `trust`"): the model-facing
//! `skill_list`, `skill_install` and `skill_remove` tools, the strict reading of a registry
//! archive (POSIX ustar, regular files and directories only, every entry below `<name>/`), and
//! the file system work of installing and removing, always relative to directory descriptors
//! and never through a link.
//!
//! An archive is read and checked whole before anything is written: a refused archive writes
//! nothing. An accepted one is extracted into a fresh directory inside the installed directory,
//! must load there as a skill, and is then renamed into place (never over an existing entry).
//!
//! A profile module (layer 3): it uses `trust`, `selection`, `discovery`, `safe_fs` and `tools`.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use serde_json::{Map, Value};

use crate::discovery::{self, GuideFormat};
use crate::safe_fs::{self, EntryKind, LeafError};
use crate::selection;
use crate::tools::{ErrorCode, ToolError, ToolResult};
use crate::trust::{DirRole, ProfileScan, Trust};

/// The profile's lifecycle tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LifecycleTool {
    List,
    Install,
    Remove,
}

impl LifecycleTool {
    pub const ALL: [LifecycleTool; 3] = [
        LifecycleTool::List,
        LifecycleTool::Install,
        LifecycleTool::Remove,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleTool::List => "skill_list",
            LifecycleTool::Install => "skill_install",
            LifecycleTool::Remove => "skill_remove",
        }
    }

    pub fn parse(name: &str) -> Option<LifecycleTool> {
        LifecycleTool::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// The largest registry archive that is read, in bytes (10 MiB).
pub const MAX_ARCHIVE_BYTES: u64 = 10 * 1024 * 1024;
/// Directories inside a skill that `skill_remove` descends into, at most.
const MAX_REMOVE_DEPTH: usize = 512;

fn err(code: ErrorCode, message: impl Into<String>) -> ToolError {
    ToolError::new(code, message)
}

/// `skill_list`: every loaded skill with its trust level and status, sorted by name.
pub fn list(scan: &ProfileScan, active: &[String], args: &Value) -> ToolResult {
    if !args.as_object().is_some_and(Map::is_empty) {
        return Err(err(
            ErrorCode::InvalidArgs,
            "skill_list takes no arguments: pass {}",
        ));
    }
    let skills: Vec<Value> = scan
        .skills
        .iter()
        .map(|s| {
            let status = if active.contains(&s.guide.id) {
                "active"
            } else if s.gated {
                "gated"
            } else {
                "available"
            };
            serde_json::json!({"name": s.guide.id, "trust": s.trust.as_str(), "status": status})
        })
        .collect();
    let mut out = Map::new();
    out.insert("skills".into(), Value::Array(skills));
    Ok(out)
}

/// The `name` argument of `skill_install` and `skill_remove`: exactly `{"name": string}`.
fn name_arg<'a>(tool: &str, args: &'a Value) -> Result<&'a str, ToolError> {
    match args.as_object() {
        Some(m) if m.len() == 1 => m.get("name").and_then(Value::as_str).ok_or(()),
        _ => Err(()),
    }
    .map_err(|()| {
        err(
            ErrorCode::InvalidArgs,
            format!("{tool} takes exactly {{\"name\": string}}"),
        )
    })
}

/// Whether `name` can name an installed skill: `[A-Za-z0-9][A-Za-z0-9._-]{0,63}` (no `/`, no
/// leading dot, so never `.` or `..`).
pub fn valid_install_name(name: &str) -> bool {
    let b = name.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// One checked entry of an archive, below `<name>/` (the path's segments after `<name>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveEntry {
    Dir(Vec<String>),
    File(Vec<String>, Vec<u8>),
}

fn cstr(field: &[u8]) -> &[u8] {
    match field.iter().position(|b| *b == 0) {
        Some(i) => &field[..i],
        None => field,
    }
}

/// An octal number field: digits, then NUL or space terminators (leading spaces allowed).
fn octal(field: &[u8]) -> Option<u64> {
    let text = cstr(field);
    let text: Vec<u8> = text
        .iter()
        .copied()
        .skip_while(|b| *b == b' ')
        .take_while(|b| *b != b' ')
        .collect();
    if text.is_empty() || !text.iter().all(|b| (b'0'..=b'7').contains(b)) {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(&text).ok()?, 8).ok()
}

/// Whether an entry of the type flag `flag` is a directory (else a regular file), or why it is
/// refused: only regular files and directories are accepted (SPEC.md `skills.lifecycle`).
fn regular_or_dir(flag: u8, shown: &str) -> Result<bool, String> {
    match flag {
        b'0' | 0 => Ok(false),
        b'5' => Ok(true),
        b'1' => Err(format!("`{shown}` is a hard link")),
        b'2' => Err(format!("`{shown}` is a symlink")),
        other => Err(format!(
            "`{shown}` is not a regular file or a directory (type `{}`)",
            other.escape_ascii()
        )),
    }
}

/// Reads and checks a whole archive for the skill `name` (SPEC.md `skills.lifecycle`). Any
/// refusal is the reason the archive is `invalid_archive`.
pub fn read_archive(bytes: &[u8], name: &str) -> Result<Vec<ArchiveEntry>, String> {
    let mut entries = Vec::new();
    let mut kinds: BTreeMap<Vec<String>, bool> = BTreeMap::new(); // path -> is a directory
    let mut at = 0usize;
    loop {
        let header = bytes
            .get(at..at + 512)
            .ok_or("the archive ends without its end-of-archive block")?;
        if header.iter().all(|b| *b == 0) {
            break;
        }
        let stored = octal(&header[148..156]).ok_or("a header checksum is not a number")?;
        let computed: u64 = header
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    u64::from(*b)
                }
            })
            .sum();
        if stored != computed {
            return Err(format!("the header at byte {at} has a wrong checksum"));
        }
        if &header[257..263] != b"ustar\0" || &header[263..265] != b"00" {
            return Err(format!(
                "the header at byte {at} is not POSIX ustar (GNU, pax and v7 headers are refused)"
            ));
        }
        let (prefix, short) = (cstr(&header[345..500]), cstr(&header[0..100]));
        let mut raw = Vec::with_capacity(prefix.len() + 1 + short.len());
        if !prefix.is_empty() {
            raw.extend_from_slice(prefix);
            raw.push(b'/');
        }
        raw.extend_from_slice(short);
        let shown = String::from_utf8_lossy(&raw).into_owned();
        if header[124] & 0x80 != 0 {
            return Err(format!("`{shown}`: a base-256 size"));
        }
        let size =
            octal(&header[124..136]).ok_or(format!("`{shown}`: the size is not a number"))?;
        let is_dir = (steps().entry_is_dir)(header[156], &shown)?;
        if is_dir && size != 0 {
            return Err(format!("the directory `{shown}` has a size"));
        }
        let segments = entry_path(&raw, name, is_dir).map_err(|why| format!("`{shown}`: {why}"))?;
        let data_start = at + 512;
        let data_end = usize::try_from(size)
            .ok()
            .and_then(|s| data_start.checked_add(s))
            .filter(|end| *end <= bytes.len())
            .ok_or(format!("`{shown}` is cut off"))?;
        if kinds.insert(segments.clone(), is_dir).is_some() {
            return Err(format!("`{shown}` occurs twice"));
        }
        if !segments.is_empty() {
            entries.push(if is_dir {
                ArchiveEntry::Dir(segments)
            } else {
                ArchiveEntry::File(segments, bytes[data_start..data_end].to_vec())
            });
        }
        at = data_end.div_ceil(512) * 512;
    }
    for path in kinds.keys() {
        for n in 1..path.len() {
            if kinds.get(&path[..n]) == Some(&false) {
                return Err(format!("`{name}/{}` lies below a file", path.join("/")));
            }
        }
    }
    if kinds.get(&["SKILL.md".to_owned()][..]) != Some(&false) {
        return Err(format!("no regular file `{name}/SKILL.md`"));
    }
    Ok(entries)
}

/// The segments below `<name>/` of an entry's path, or why it is refused: not UTF-8, a control
/// character or a backslash, absolute, an empty, `.` or `..` segment, outside `<name>/`.
fn entry_path(raw: &[u8], name: &str, is_dir: bool) -> Result<Vec<String>, &'static str> {
    let text = std::str::from_utf8(raw).map_err(|_| "the name is not UTF-8")?;
    if text.chars().any(|c| c.is_control() || c == '\\') {
        return Err("the name holds a control character or a backslash");
    }
    if text.starts_with('/') {
        return Err("an absolute name");
    }
    let text = match text.strip_suffix('/') {
        Some(t) if is_dir => t,
        Some(_) => return Err("a file name ends with `/`"),
        None => text,
    };
    let segments: Vec<&str> = text.split('/').collect();
    if segments
        .iter()
        .any(|s| s.is_empty() || *s == "." || *s == "..")
    {
        return Err("an empty, `.` or `..` segment");
    }
    if segments[0] != name {
        return Err("outside the skill's own directory");
    }
    if segments.len() == 1 && !is_dir {
        return Err("the skill's directory is a file");
    }
    Ok(segments[1..].iter().map(|s| s.to_string()).collect())
}

fn io_err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Creates the directory `name` in `dir` (it must not exist) and opens it.
fn make_dir(dir: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, String> {
    rfs::mkdirat(dir, name, Mode::from_raw_mode(0o755)).map_err(io_err)?;
    safe_fs::open_subdir(dir, OsStr::new(name)).map_err(|e| format!("{e:?}"))
}

/// Opens the directory `name` of `dir`, making it when it is missing; never through a link.
fn enter(dir: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, String> {
    match safe_fs::open_subdir(dir, OsStr::new(name)) {
        Ok(fd) => Ok(fd),
        Err(safe_fs::DirError::NotFound) => make_dir(dir, name),
        Err(e) => Err(format!("`{name}`: {e:?}")),
    }
}

/// Writes `entries` below the fresh directory `top` (which is empty).
fn extract(top: BorrowedFd<'_>, entries: &[ArchiveEntry]) -> Result<(), String> {
    for entry in entries {
        let (path, data) = match entry {
            ArchiveEntry::Dir(p) => (p, None),
            ArchiveEntry::File(p, d) => (p, Some(d)),
        };
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let mut dir = rustix::io::fcntl_dupfd_cloexec(top, 0).map_err(io_err)?;
        for p in parents {
            dir = enter(dir.as_fd(), p)?;
        }
        match data {
            None => drop(enter(dir.as_fd(), last)?),
            Some(bytes) => {
                let flags = OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::EXCL
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC;
                let fd = rfs::openat(&dir, last.as_str(), flags, Mode::from_raw_mode(0o644))
                    .map_err(io_err)?;
                std::fs::File::from(fd).write_all(bytes).map_err(io_err)?;
            }
        }
    }
    Ok(())
}

/// Removes the entry `name` of `dir`: a directory with everything in it (links inside removed
/// themselves, never followed), anything else unlinked.
pub fn remove_entry(dir: BorrowedFd<'_>, name: &OsStr, depth: usize) -> Result<(), String> {
    match safe_fs::entry_kind(dir, name).map_err(io_err)? {
        None => Ok(()),
        Some(EntryKind::Directory) => {
            if depth > MAX_REMOVE_DEPTH {
                return Err(format!("more than {MAX_REMOVE_DEPTH} nested directories"));
            }
            let sub = safe_fs::open_subdir(dir, name).map_err(|e| format!("{e:?}"))?;
            for (child, _) in safe_fs::list_dir(sub.as_fd()).map_err(io_err)? {
                remove_entry(sub.as_fd(), OsStr::from_bytes(&child), depth + 1)?;
            }
            rfs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(io_err)
        }
        Some(_) => rfs::unlinkat(dir, name, AtFlags::empty()).map_err(io_err),
    }
}

/// A fresh, empty directory inside `dir` for one install (`.skillspec-install-<pid>-<n>`).
fn fresh_dir(dir: BorrowedFd<'_>) -> Result<(String, OwnedFd), String> {
    for n in 0..1000u32 {
        let name = format!(".skillspec-install-{}-{n}", std::process::id());
        match make_dir(dir, &name) {
            Ok(fd) => return Ok((name, fd)),
            Err(_)
                if safe_fs::entry_kind(dir, OsStr::new(&name))
                    .ok()
                    .flatten()
                    .is_some() => {}
            Err(e) => return Err(e),
        }
    }
    Err("no fresh directory name for the install".into())
}

/// `skill_install`: checks, in order, the arguments (`invalid_args`), that no entry of that name
/// is present in any directory's scan and nothing of that name is in the installed directory
/// (`exists`), that the
/// archive `<registry>/<name>.tar` is there (`not_found`), and the archive (`invalid_archive`);
/// then extracts it, checks that it loads as a skill, and moves it into place.
pub fn install(
    installed: Option<&Path>,
    registry: Option<&Path>,
    scan: &ProfileScan,
    args: &Value,
) -> ToolResult {
    let name = name_arg("skill_install", args)?;
    if !valid_install_name(name) {
        return Err(err(
            ErrorCode::InvalidArgs,
            "a skill name is 1 to 64 of A-Z, a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit",
        ));
    }
    let in_installed = installed
        .and_then(|dir| safe_fs::open_root(dir).ok())
        .and_then(|fd| safe_fs::entry_kind(fd.as_fd(), OsStr::new(name)).ok())
        .flatten()
        .is_some();
    // spec: skills.lifecycle (an entry of the name anywhere would shadow it)
    // spec: trust.levels (a name present at any trust level shadows what would be installed)
    if in_installed || scan.present.contains(name.as_bytes()) {
        return Err(err(
            ErrorCode::Exists,
            format!("a skill named `{name}` is already present"),
        ));
    }
    let (Some(installed), Some(registry)) = (installed, registry) else {
        return Err(err(
            ErrorCode::NotFound,
            "no installed directory or no registry is configured",
        ));
    };
    let archive = format!("{name}.tar");
    let registry_fd = safe_fs::open_root(registry).map_err(|e| {
        err(
            ErrorCode::NotFound,
            format!("the registry cannot be opened: {e}"),
        )
    })?;
    let bytes =
        match safe_fs::read_regular(registry_fd.as_fd(), OsStr::new(&archive), MAX_ARCHIVE_BYTES) {
            Ok(b) => b,
            Err(LeafError::TooLarge) => {
                return Err(err(
                    ErrorCode::InvalidArchive,
                    format!("`{archive}` is larger than {MAX_ARCHIVE_BYTES} bytes"),
                ))
            }
            Err(why) => {
                return Err(err(
                    ErrorCode::NotFound,
                    format!("no regular file `{archive}` in the registry ({why:?})"),
                ))
            }
        };
    let entries = read_archive(&bytes, name)
        .map_err(|why| err(ErrorCode::InvalidArchive, format!("`{archive}`: {why}")))?;
    // Only now, with an archive that is acceptable as a whole, is anything written.
    let inst_fd = open_or_make(installed).map_err(|e| {
        err(
            ErrorCode::NotFound,
            format!("the installed directory cannot be opened: {e}"),
        )
    })?;
    let (temp, temp_fd) = fresh_dir(inst_fd.as_fd())
        .map_err(|e| err(ErrorCode::InvalidArchive, format!("cannot extract: {e}")))?;
    let outcome = (|| -> Result<(), ToolError> {
        let top = make_dir(temp_fd.as_fd(), name)
            .and_then(|top| extract(top.as_fd(), &entries))
            .map_err(|e| err(ErrorCode::InvalidArchive, format!("cannot extract: {e}")));
        top?;
        loads_as(temp_fd.as_fd(), name).map_err(|why| {
            err(
                ErrorCode::InvalidArchive,
                format!("`{archive}` holds no loadable skill: {why}"),
            )
        })?;
        rfs::renameat_with(&temp_fd, name, &inst_fd, name, RenameFlags::NOREPLACE).map_err(|e| {
            match e {
                Errno::EXIST => err(
                    ErrorCode::Exists,
                    format!("`{name}` appeared in the installed directory"),
                ),
                other => err(
                    ErrorCode::InvalidArchive,
                    format!("cannot move into place: {other}"),
                ),
            }
        })
    })();
    let cleaned = remove_entry(inst_fd.as_fd(), OsStr::new(&temp), 0);
    outcome?;
    cleaned.map_err(|e| err(ErrorCode::InvalidArchive, format!("cannot clean up: {e}")))?;
    let mut out = Map::new();
    out.insert("name".into(), Value::from(name));
    out.insert("trust".into(), Value::from(Trust::Installed.as_str()));
    Ok(out)
}

/// Opens the installed directory, making it (and its parents) when it does not exist yet.
fn open_or_make(dir: &Path) -> std::io::Result<OwnedFd> {
    match safe_fs::open_root(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)?;
            safe_fs::open_root(dir)
        }
        other => other,
    }
}

/// Whether the directory `dir` holds exactly the skill `name`, loading under the profile's
/// rules (the core discovery rules, then the profile's fields).
fn loads_as(dir: BorrowedFd<'_>, name: &str) -> Result<(), String> {
    let found = discovery::discover_in_keeping_frontmatter(dir);
    if let Some(skip) = found.skipped.first() {
        return Err(format!(
            "`{}` is skipped ({})",
            skip.path,
            skip.reason.as_str()
        ));
    }
    match found.loaded.as_slice() {
        [g] if g.id == name => match (g.format, &g.frontmatter) {
            (GuideFormat::Portable, Some(text)) => selection::read_fields(text).map(drop),
            _ => Ok(()),
        },
        _ => Err(format!("not exactly one skill `{name}`")),
    }
}

/// `skill_remove`: removes an Installed skill's directory (`not_found` when no loaded skill has
/// that name, `not_removable` for a Trusted one).
pub fn remove(installed: Option<&Path>, scan: &ProfileScan, args: &Value) -> ToolResult {
    let name = name_arg("skill_remove", args)?;
    let skill = scan
        .skill(name)
        .ok_or_else(|| err(ErrorCode::NotFound, format!("no skill named `{name}`")))?;
    if skill.role != DirRole::Installed {
        return Err(err(
            ErrorCode::NotRemovable,
            format!("`{name}` is a Trusted skill; only Installed skills can be removed"),
        ));
    }
    let Some((last, parents)) = skill.guide.components.split_last() else {
        return Err(err(ErrorCode::NotFound, format!("no skill named `{name}`")));
    };
    let removed = installed
        .ok_or_else(|| "no installed directory".to_owned())
        .and_then(|dir| safe_fs::open_root(dir).map_err(io_err))
        .and_then(|root| {
            safe_fs::open_dir_chain(root.as_fd(), parents).map_err(|e| format!("{e:?}"))
        })
        .and_then(|parent| remove_entry(parent.as_fd(), OsStr::from_bytes(last), 0));
    removed.map_err(|e| {
        err(
            ErrorCode::NotRemovable,
            format!("`{name}` could not be removed: {e}"),
        )
    })?;
    let mut out = Map::new();
    out.insert("name".into(), Value::from(name));
    Ok(out)
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// What an archive entry's type flag makes of it.
    entry_is_dir: fn(u8, &str) -> Result<bool, String>,
}

const STEPS: Steps = Steps {
    entry_is_dir: regular_or_dir,
};

steps_in_force!();

/// The defect of this module (see `crate::mutants`).
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::ArchiveLinkAccepted) => &LINKS_ACCEPTED,
            _ => &STEPS,
        }
    }

    /// `archive-link-accepted`: a symlink entry is extracted as a file.
    const LINKS_ACCEPTED: Steps = Steps {
        entry_is_dir: |flag, shown| match flag {
            b'2' => Ok(false),
            other => regular_or_dir(other, shown),
        },
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ustar header for `path` of `kind` with `size` (the test side of the format).
    fn header(path: &str, kind: u8, size: usize) -> Vec<u8> {
        let mut h = vec![0u8; 512];
        h[..path.len()].copy_from_slice(path.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        h
    }

    fn archive(entries: &[(&str, u8, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (path, kind, data) in entries {
            out.extend(header(path, *kind, data.len()));
            out.extend_from_slice(data);
            out.resize(out.len().div_ceil(512) * 512, 0);
        }
        out.extend([0u8; 1024]);
        out
    }

    const SKILL: &[u8] = b"---\nname: demo\ndescription: d\n---\nBody\n";

    #[test]
    fn a_good_archive_is_read() {
        let a = archive(&[
            ("demo/", b'5', b""),
            ("demo/SKILL.md", b'0', SKILL),
            ("demo/references/a.md", b'0', b"x"),
        ]);
        let got = read_archive(&a, "demo").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[1],
            ArchiveEntry::File(vec!["references".into(), "a.md".into()], b"x".to_vec())
        );
    }

    #[test]
    fn hostile_entries_are_refused() {
        for (path, kind) in [
            ("demo/../x", b'0'),
            ("../x", b'0'),
            ("/tmp/x", b'0'),
            ("demo/./x", b'0'),
            ("demo//x", b'0'),
            ("other/x", b'0'),
            ("demo/link", b'2'),
            ("demo/hard", b'1'),
            ("demo/fifo", b'6'),
            ("demo/pax", b'x'),
            ("demo/a\\b", b'0'),
            ("demo/a\nb", b'0'),
            ("demo/SKILL.md", b'0'),
            ("demo", b'0'),
        ] {
            let a = archive(&[("demo/SKILL.md", b'0', SKILL), (path, kind, b"")]);
            assert!(read_archive(&a, "demo").is_err(), "{path:?} {kind}");
        }
        let mut a = archive(&[("demo/SKILL.md", b'0', SKILL)]);
        a[0] ^= 1;
        assert!(read_archive(&a, "demo").unwrap_err().contains("checksum"));
        let a = archive(&[("demo/SKILL.md", b'0', SKILL)]);
        assert!(read_archive(&a[..600], "demo").is_err());
        let a = archive(&[("demo/x", b'0', b"x"), ("demo/x/y", b'0', b"y")]);
        assert!(read_archive(&a, "demo").is_err());
        let a = archive(&[("demo/README.md", b'0', b"x")]);
        assert!(read_archive(&a, "demo").unwrap_err().contains("SKILL.md"));
    }

    #[test]
    fn install_names() {
        for good in ["demo", "a", "A1.b_c-d", &"x".repeat(64)] {
            assert!(valid_install_name(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "-x",
            "a/b",
            "a b",
            &"x".repeat(65),
            "é",
        ] {
            assert!(!valid_install_name(bad), "{bad}");
        }
    }
}
