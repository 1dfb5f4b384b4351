//! Fixture trees: the `tree` of a case (and the entries of `write` steps), parsed from YAML and
//! built in a case's temporary root.
//!
//! Paths are `/`-separated and relative to the case root; `\xHH` in a path is the raw byte HH
//! (for names that are not UTF-8) and `\\` is one backslash. Nothing is ever created outside the
//! case root: absolute paths and `..` segments are refused when the case is loaded.

use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Deserialize;
use serde_json::{Map, Value};

/// What one entry of a tree is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file with these bytes (`text` or `base64`).
    File(Vec<u8>),
    /// A regular file of `size` bytes, each `fill` (written, so it occupies disk).
    Sized { size: u64, fill: u8 },
    /// A sparse file of `size` bytes (holes read as zero bytes; nothing is written).
    Sparse { size: u64 },
    /// An empty directory.
    Dir,
    /// A symbolic link with this target (any bytes: dangling, absolute and looping are fine).
    Symlink(Vec<u8>),
    /// A named pipe.
    Fifo,
    /// A Unix domain socket (bound, then the listener is closed; the socket file stays).
    Socket,
    /// A copy of this file from the fixtures directory.
    Copy(String),
    /// A hard link to this other tree path.
    Hardlink(Vec<u8>),
    /// A chain of `levels` nested directories, each called `name`.
    Deep { levels: u32, name: String },
}

/// One entry: a path, what it is, and optionally its permission bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: Vec<u8>,
    pub kind: EntryKind,
    pub mode: Option<u32>,
    /// For `write` steps: create a new file and rename it over the old one (a new inode)
    /// instead of rewriting the existing file in place.
    pub replace: bool,
}

/// A fixture tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    pub entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    base64: Option<String>,
    #[serde(default)]
    size: Option<u64>,
    #[serde(default)]
    fill: Option<String>,
    #[serde(default)]
    sparse: Option<bool>,
    #[serde(default)]
    dir: Option<bool>,
    #[serde(default)]
    symlink: Option<String>,
    #[serde(default)]
    fifo: Option<bool>,
    #[serde(default)]
    socket: Option<bool>,
    #[serde(default)]
    copy: Option<String>,
    #[serde(default)]
    hardlink: Option<String>,
    #[serde(default)]
    deep: Option<RawDeep>,
    #[serde(default)]
    mode: Option<Value>,
    #[serde(default)]
    replace: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeep {
    levels: u32,
    name: String,
}

/// Decodes a tree path: `\xHH` is a raw byte, `\\` a backslash; must be relative without `..`.
pub fn parse_raw_path(text: &str) -> Result<Vec<u8>, String> {
    let bytes = unescape(text)?;
    if bytes.is_empty() || bytes.starts_with(b"/") {
        return Err(format!("path `{text}` must be relative and non-empty"));
    }
    if bytes
        .split(|b| *b == b'/')
        .any(|seg| seg.is_empty() || seg == b"." || seg == b"..")
    {
        return Err(format!(
            "path `{text}` must not have empty, `.` or `..` segments"
        ));
    }
    Ok(bytes)
}

/// Decodes `\xHH` and `\\` escapes.
pub fn unescape(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            match bytes.get(i + 1) {
                Some(b'\\') => {
                    out.push(b'\\');
                    i += 2;
                }
                Some(b'x') => {
                    let hex = text
                        .get(i + 2..i + 4)
                        .ok_or_else(|| format!("`{text}`: `\\x` needs two hex digits"))?;
                    let b = u8::from_str_radix(hex, 16)
                        .map_err(|_| format!("`{text}`: `\\x{hex}` is not hex"))?;
                    out.push(b);
                    i += 4;
                }
                _ => return Err(format!("`{text}`: a backslash starts `\\xHH` or `\\\\`")),
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn parse_mode(v: &Value) -> Result<u32, String> {
    let mode = match v {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => u32::from_str_radix(s.trim_start_matches("0o"), 8).ok(),
        _ => None,
    };
    mode.filter(|m| *m <= 0o7777)
        .ok_or_else(|| format!("`mode` must be permission bits such as 0o644 or \"0644\", got {v}"))
}

impl Tree {
    /// Parses a YAML mapping of path → entry.
    pub fn from_yaml(map: &Map<String, Value>) -> Result<Tree, String> {
        let mut entries = Vec::new();
        for (key, value) in map {
            let path = parse_raw_path(key)?;
            let entry = match value {
                Value::String(text) => Entry {
                    path,
                    kind: EntryKind::File(text.clone().into_bytes()),
                    mode: None,
                    replace: false,
                },
                Value::Object(_) => {
                    let raw: RawEntry = serde_json::from_value(value.clone())
                        .map_err(|e| format!("entry `{key}`: {e}"))?;
                    entry_from_raw(path, raw).map_err(|e| format!("entry `{key}`: {e}"))?
                }
                other => {
                    return Err(format!(
                        "entry `{key}` must be text or a mapping, got {other}"
                    ))
                }
            };
            entries.push(entry);
        }
        Ok(Tree { entries })
    }
}

/// The byte of a `fill` (default `a`).
fn parse_fill(fill: Option<&str>) -> Result<u8, String> {
    match fill {
        None => Ok(b'a'),
        Some(f) if f.len() == 1 => Ok(f.as_bytes()[0]),
        Some(f) => Err(format!("`fill` must be one ASCII character, got `{f}`")),
    }
}

fn entry_from_raw(path: Vec<u8>, mut raw: RawEntry) -> Result<Entry, String> {
    let mut kinds: Vec<EntryKind> = Vec::new();
    if let Some(t) = raw.text.take() {
        match raw.size {
            // `text` with `size`: the text, then `fill` up to exactly `size` bytes (a valid
            // file of an exact size, such as frontmatter padded to the discovery cap).
            Some(size) if raw.sparse != Some(true) => {
                let size = usize::try_from(size)
                    .ok()
                    .filter(|s| *s <= 64 * 1024 * 1024)
                    .ok_or("a filled file is at most 64 MiB")?;
                let mut bytes = t.into_bytes();
                if bytes.len() > size {
                    return Err(format!(
                        "`text` is {} bytes, more than `size` ({size})",
                        bytes.len()
                    ));
                }
                bytes.resize(size, parse_fill(raw.fill.take().as_deref())?);
                raw.size = None;
                kinds.push(EntryKind::File(bytes));
            }
            _ => kinds.push(EntryKind::File(t.into_bytes())),
        }
    }
    if let Some(b) = raw.base64 {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b.split_whitespace().collect::<String>())
            .map_err(|e| format!("bad base64: {e}"))?;
        kinds.push(EntryKind::File(bytes));
    }
    if let Some(size) = raw.size {
        if raw.sparse == Some(true) {
            if raw.fill.is_some() {
                return Err("a sparse file has no `fill`".into());
            }
            kinds.push(EntryKind::Sparse { size });
        } else {
            if size > 64 * 1024 * 1024 {
                return Err(
                    "a filled file is at most 64 MiB; use `sparse: true` for larger ones".into(),
                );
            }
            let fill = parse_fill(raw.fill.as_deref())?;
            kinds.push(EntryKind::Sized { size, fill });
        }
    } else if raw.fill.is_some() || raw.sparse.is_some() {
        return Err("`fill` and `sparse` go with `size`".into());
    }
    if raw.dir == Some(true) {
        kinds.push(EntryKind::Dir);
    }
    if let Some(t) = raw.symlink {
        kinds.push(EntryKind::Symlink(unescape(&t)?));
    }
    if raw.fifo == Some(true) {
        kinds.push(EntryKind::Fifo);
    }
    if raw.socket == Some(true) {
        kinds.push(EntryKind::Socket);
    }
    if let Some(c) = raw.copy {
        if c.starts_with('/') || c.split('/').any(|s| s == "..") {
            return Err(format!(
                "`copy: {c}` must be a path inside the fixtures directory"
            ));
        }
        kinds.push(EntryKind::Copy(c));
    }
    if let Some(h) = raw.hardlink {
        kinds.push(EntryKind::Hardlink(parse_raw_path(&h)?));
    }
    if let Some(d) = raw.deep {
        if d.levels == 0
            || d.levels > 100_000
            || d.name.is_empty()
            || d.name.contains('/')
            || d.name == ".."
            || d.name == "."
        {
            return Err("`deep` needs 1..=100000 `levels` and a plain directory `name`".into());
        }
        kinds.push(EntryKind::Deep {
            levels: d.levels,
            name: d.name,
        });
    }
    let kind = match kinds.len() {
        1 => kinds.remove(0),
        0 => return Err("say what the entry is: text, base64, size, dir, symlink, fifo, socket, copy, hardlink or deep".into()),
        _ => return Err("an entry is exactly one thing (text, base64, size, dir, symlink, fifo, socket, copy, hardlink, deep)".into()),
    };
    let mode = raw.mode.as_ref().map(parse_mode).transpose()?;
    Ok(Entry {
        path,
        kind,
        mode,
        replace: raw.replace,
    })
}

fn os(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

/// Builds `tree` below `root` (which exists). `fixtures` is where `copy` sources live.
pub fn materialize(root: &Path, tree: &Tree, fixtures: &Path) -> Result<(), String> {
    let (links, others): (Vec<&Entry>, Vec<&Entry>) = tree
        .entries
        .iter()
        .partition(|e| matches!(e.kind, EntryKind::Hardlink(_)));
    for entry in others.into_iter().chain(links) {
        create(root, entry, fixtures).map_err(|e| {
            format!(
                "cannot create `{}`: {e}",
                String::from_utf8_lossy(&entry.path)
            )
        })?;
    }
    // Permission bits last, deepest first, so that a read-only directory does not stop its
    // children from being created.
    let mut with_mode: Vec<&Entry> = tree.entries.iter().filter(|e| e.mode.is_some()).collect();
    with_mode.sort_by_key(|e| std::cmp::Reverse(e.path.len()));
    for e in with_mode {
        if let Some(mode) = e.mode {
            std::fs::set_permissions(
                root.join(os(&e.path)),
                std::fs::Permissions::from_mode(mode),
            )
            .map_err(|err| {
                format!(
                    "cannot set the mode of `{}`: {err}",
                    String::from_utf8_lossy(&e.path)
                )
            })?;
        }
    }
    Ok(())
}

fn create(root: &Path, entry: &Entry, fixtures: &Path) -> std::io::Result<()> {
    let path = root.join(os(&entry.path));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // A `write` step may replace what is there; a fresh tree has nothing yet.
    let existing = std::fs::symlink_metadata(&path).ok();
    let remove_existing = |p: &Path| -> std::io::Result<()> {
        match &existing {
            Some(m) if m.is_dir() => std::fs::remove_dir_all(p),
            Some(_) => std::fs::remove_file(p),
            None => Ok(()),
        }
    };
    match &entry.kind {
        EntryKind::File(bytes) => write_file(&path, bytes, entry.replace, existing.is_some()),
        EntryKind::Sized { size, fill } => {
            let chunk = vec![*fill; 64 * 1024];
            let mut f = std::fs::File::create(&path)?;
            let mut left = *size;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                f.write_all(&chunk[..n])?;
                left -= n as u64;
            }
            Ok(())
        }
        EntryKind::Sparse { size } => std::fs::File::create(&path)?.set_len(*size),
        EntryKind::Dir => std::fs::create_dir_all(&path),
        EntryKind::Symlink(target) => {
            remove_existing(&path)?;
            std::os::unix::fs::symlink(os(target), &path)
        }
        EntryKind::Fifo => {
            remove_existing(&path)?;
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &path,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )?;
            Ok(())
        }
        EntryKind::Socket => {
            remove_existing(&path)?;
            drop(std::os::unix::net::UnixListener::bind(&path)?);
            Ok(())
        }
        EntryKind::Copy(src) => {
            let bytes = std::fs::read(fixtures.join(src)).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("fixture `{}`: {e}", fixtures.join(src).display()),
                )
            })?;
            write_file(&path, &bytes, entry.replace, existing.is_some())
        }
        EntryKind::Hardlink(target) => {
            remove_existing(&path)?;
            std::fs::hard_link(root.join(os(target)), &path)
        }
        EntryKind::Deep { levels, name } => {
            std::fs::create_dir_all(&path)?;
            // Built one level at a time relative to a directory descriptor: the full path of
            // a 10,000-level chain is far beyond PATH_MAX.
            let mut dir = rustix::fs::open(
                &path,
                rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?;
            for _ in 0..*levels {
                rustix::fs::mkdirat(
                    dir.as_fd(),
                    name.as_str(),
                    rustix::fs::Mode::from_raw_mode(0o755),
                )?;
                dir = rustix::fs::openat(
                    dir.as_fd(),
                    name.as_str(),
                    rustix::fs::OFlags::DIRECTORY
                        | rustix::fs::OFlags::NOFOLLOW
                        | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                )?;
            }
            Ok(())
        }
    }
}

fn write_file(path: &Path, bytes: &[u8], replace: bool, exists: bool) -> std::io::Result<()> {
    if replace && exists {
        let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(".skillspec-new");
        let tmp = path.with_file_name(tmp_name);
        std::fs::write(&tmp, bytes)?;
        if let Ok(old) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, old.permissions())?;
        }
        std::fs::rename(&tmp, path)
    } else {
        if exists && std::fs::symlink_metadata(path)?.file_type().is_symlink() {
            std::fs::remove_file(path)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        f.write_all(bytes)
    }
}

/// Removes `paths` below `root` (files, symlinks, or whole directories).
pub fn remove(root: &Path, paths: &[Vec<u8>]) -> Result<(), String> {
    for p in paths {
        let full = root.join(os(p));
        let res = match std::fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&full),
            Ok(_) => std::fs::remove_file(&full),
            Err(e) => Err(e),
        };
        res.map_err(|e| format!("cannot remove `{}`: {e}", String::from_utf8_lossy(p)))?;
    }
    Ok(())
}

/// Makes every directory below `root` writable and searchable again so the case root can be
/// removed even after a case made parts of it read-only.
pub fn make_removable(root: &Path) {
    fn visit(dir: &Path, depth: usize) {
        if depth > 64 {
            return;
        }
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    visit(&e.path(), depth + 1);
                }
            }
        }
    }
    visit(root, 0);
}

/// Removes the directory chains of `deep` entries bottom-up while holding one descriptor at a
/// time, so that cleanup needs neither long paths nor thousands of open files.
pub fn remove_deep_chains(root: &Path, tree: &Tree) {
    use rustix::fs::{openat, unlinkat, AtFlags, Mode, OFlags};
    let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for e in &tree.entries {
        let EntryKind::Deep { name, .. } = &e.kind else {
            continue;
        };
        let Ok(mut dir) = rustix::fs::open(root.join(os(&e.path)), flags, Mode::empty()) else {
            continue;
        };
        let mut depth = 0usize;
        while let Ok(next) = openat(dir.as_fd(), name.as_str(), flags, Mode::empty()) {
            dir = next;
            depth += 1;
        }
        while depth > 0 {
            let Ok(parent) = openat(dir.as_fd(), "..", flags, Mode::empty()) else {
                break;
            };
            if unlinkat(parent.as_fd(), name.as_str(), AtFlags::REMOVEDIR).is_err() {
                break;
            }
            dir = parent;
            depth -= 1;
        }
    }
}

/// The path of a tree entry below `root`.
pub fn path_in(root: &Path, rel: &[u8]) -> PathBuf {
    root.join(os(rel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(value: Value) -> Result<Entry, String> {
        let mut map = Map::new();
        map.insert("f".into(), value);
        Tree::from_yaml(&map).map(|mut t| t.entries.remove(0))
    }

    #[test]
    fn text_with_size_is_padded_to_exactly_that_size() {
        let e = entry(json!({"text": "---\n", "size": 10, "fill": "b"})).unwrap();
        assert_eq!(e.kind, EntryKind::File(b"---\nbbbbbb".to_vec()));
        let e = entry(json!({"text": "abc", "size": 3})).unwrap();
        assert_eq!(e.kind, EntryKind::File(b"abc".to_vec()));
    }

    #[test]
    fn text_longer_than_size_or_with_sparse_is_refused() {
        let err = entry(json!({"text": "abcd", "size": 3})).unwrap_err();
        assert!(err.contains("more than `size`"), "{err}");
        let err = entry(json!({"text": "a", "size": 3, "sparse": true})).unwrap_err();
        assert!(err.contains("exactly one thing"), "{err}");
        let err = entry(json!({"text": "a", "size": 67_108_865})).unwrap_err();
        assert!(err.contains("64 MiB"), "{err}");
    }
}
