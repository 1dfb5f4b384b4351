//! A case's configuration rendered for one run: the placeholders of its raw strings (`{root}`,
//! `{sha256:PATH}`, `{root_relative}`) replaced, its paths made absolute in the case root, and
//! the result as the protocol's [`WireConfig`]. The loader uses [`hashed_paths`] to check, when
//! a case loads, that every hashed path is a regular file of its tree.
//!
//! Clauses: `run.approval` (the allowlist's `sha256` of a script, computed from the tree as
//! planted).

use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::cases::fixture;
use crate::cases::{Allowlist, Case, HashSource, SkillsRoot};
use crate::protocol::{WireConfig, WireHitl, WireSkillDirs};

/// Why a configuration cannot be rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// `{sha256:` without its `}`.
    Unclosed { text: String },
    /// A path of the tree that is not one.
    BadPath(String),
    /// A file of the case root that cannot be hashed.
    Hash { path: String, why: HashError },
    /// `{root_relative}` where the case root has no absolute path to build it from.
    NotRelative,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::Unclosed { text } => write!(f, "unclosed `{{sha256:` in `{text}`"),
            TemplateError::BadPath(why) => f.write_str(why),
            TemplateError::Hash { path, why } => write!(f, "cannot hash `{path}`: {why}"),
            TemplateError::NotRelative => {
                f.write_str("cannot express the case root as a relative path")
            }
        }
    }
}

impl std::error::Error for TemplateError {}

/// Why a file of the case root cannot be hashed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashError {
    /// It cannot be opened as a regular file without following a link (the reason).
    Open(String),
    /// Reading it failed.
    Read { rel: String, error: String },
    /// It grew past [`fixture::MAX_READ`] while it was read.
    Grew { rel: String },
}

impl fmt::Display for HashError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HashError::Open(why) => f.write_str(why),
            HashError::Read { rel, error } => write!(f, "`{rel}`: {error}"),
            HashError::Grew { rel } => write!(
                f,
                "`{rel}` grew past the {} bytes the runner reads",
                fixture::MAX_READ
            ),
        }
    }
}

impl std::error::Error for HashError {}

/// The SHA-256 of the regular file `rel` of the case root, lowercase hex. The file is opened
/// without following a link at any component, must be a regular file (never a FIFO or a device),
/// and is read only up to [`fixture::MAX_READ`] bytes; anything else is an error naming the path.
pub fn sha256_file(root: &Path, rel: &[u8]) -> Result<String, HashError> {
    use std::io::Read;
    let shown = || String::from_utf8_lossy(rel).into_owned();
    let file = fixture::open_regular(root, rel, fixture::MAX_READ).map_err(HashError::Open)?;
    let mut hasher = Sha256::new();
    let mut limited = file.take(fixture::MAX_READ + 1);
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = limited.read(&mut buf).map_err(|e| HashError::Read {
            rel: shown(),
            error: e.to_string(),
        })?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > fixture::MAX_READ {
            return Err(HashError::Grew { rel: shown() });
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A piece of a raw configuration string.
enum Piece<'a> {
    Text(&'a str),
    /// `{root}`: the case root.
    Root,
    /// `{sha256:PATH}`: the hash of this tree path (still escaped).
    Sha256(&'a str),
}

/// Splits a raw configuration string at its `{root}` and `{sha256:PATH}` placeholders.
fn pieces(text: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        out.push(Piece::Text(&rest[..start]));
        let after = &rest[start..];
        if let Some(stripped) = after.strip_prefix("{root}") {
            out.push(Piece::Root);
            rest = stripped;
        } else if let Some(body) = after.strip_prefix("{sha256:") {
            let end = body.find('}').ok_or_else(|| TemplateError::Unclosed {
                text: text.to_owned(),
            })?;
            out.push(Piece::Sha256(&body[..end]));
            rest = &body[end + 1..];
        } else {
            out.push(Piece::Text("{"));
            rest = &after[1..];
        }
    }
    out.push(Piece::Text(rest));
    Ok(out)
}

/// The tree paths a raw configuration string hashes with `{sha256:PATH}` (checked when the case
/// loads: each must be a regular file entry of the tree).
pub fn hashed_paths(text: &str) -> Result<Vec<&str>, TemplateError> {
    Ok(pieces(text)?
        .into_iter()
        .filter_map(|p| match p {
            Piece::Sha256(path) => Some(path),
            _ => None,
        })
        .collect())
}

/// The hash of the tree path `path` (as written in the case) in the case root.
fn hash_of(root: &Path, path: &str) -> Result<String, TemplateError> {
    let rel = fixture::parse_raw_path(path).map_err(TemplateError::BadPath)?;
    sha256_file(root, &rel).map_err(|why| TemplateError::Hash {
        path: path.to_owned(),
        why,
    })
}

/// Replaces `{root}` and `{sha256:PATH}` in a raw configuration string.
pub fn substitute(text: &str, root: &Path) -> Result<String, TemplateError> {
    let mut out = String::new();
    for piece in pieces(text)? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Root => out.push_str(&root.to_string_lossy()),
            Piece::Sha256(path) => out.push_str(&hash_of(root, path)?),
        }
    }
    Ok(out)
}

/// The wire configuration of `case` rooted at `root`.
pub fn wire_config(case: &Case, root: &Path, python: &Path) -> Result<WireConfig, TemplateError> {
    let c = &case.config;
    let script_allowlist = match &c.script_allowlist {
        None => None,
        Some(Allowlist::Raw(text)) => Some(substitute(text, root)?),
        Some(Allowlist::Entries(entries)) => {
            let mut items = Vec::new();
            for e in entries {
                let sha = match &e.sha256 {
                    HashSource::Hex(h) => h.clone(),
                    HashSource::Of(rel) => hash_of(root, rel)?,
                };
                items
                    .push(serde_json::json!({"skill": e.skill, "script": e.script, "sha256": sha}));
            }
            Some(serde_json::Value::Array(items).to_string())
        }
    };
    let mut env = std::collections::BTreeMap::new();
    for (k, v) in &c.env {
        env.insert(k.clone(), substitute(v, root)?);
    }
    let abs = |p: &str| root.join(p).to_string_lossy().into_owned();
    Ok(WireConfig {
        skills_root: match &c.skills_root {
            SkillsRoot::Unset => None,
            SkillsRoot::InCase(r) => Some(abs(r)),
            SkillsRoot::AsWritten(text) => Some(substitute(text, root)?.replace(
                "{root_relative}",
                &relative_from_anywhere(root).ok_or(TemplateError::NotRelative)?,
            )),
        },
        script_allowlist,
        tool_allowlist: c.tool_allowlist.clone(),
        allow_trading: c.allow_trading,
        replay: c.replay.clone(),
        timeout_ms: c.timeout_ms.clone(),
        python: match &c.python {
            Some(p) => substitute(p, root)?,
            None => python.to_string_lossy().into_owned(),
        },
        env,
        platform: c.platform.map(|p| match p {
            crate::cases::Platform::NoProcessGroups => "no-process-groups".to_owned(),
        }),
        skill_dirs: c.skill_dirs.as_ref().map(|d| WireSkillDirs {
            user: d.user.as_deref().map(abs),
            workspace: d.workspace.as_deref().map(abs),
            installed: d.installed.as_deref().map(abs),
        }),
        registry: c.registry.as_deref().map(abs),
        user_skills_root: c.user_skills_root.as_deref().map(abs),
        dialect: (case.dialect.name != crate::protocol::dialects::DEFAULT)
            .then(|| case.dialect.name.to_owned()),
        selection: c.selection.clone(),
        hitl: c.hitl.as_ref().map(|h| WireHitl {
            enabled: h.enabled,
            script_tool_allowed: h.script_tool_allowed,
            session: h.session.as_str().to_owned(),
            answers: h.answers.iter().map(|a| a.as_str().to_owned()).collect(),
            timeout_ms: h.timeout_ms.clone(),
        }),
    })
}

/// How many `..` a `{root_relative}` path climbs: more than any working directory or runtime
/// home is deep, so the path reaches `/` from all of them (`..` at `/` stays at `/`).
const CLIMB: usize = 48;

/// The case root as a relative path that leads to it from any directory less than [`CLIMB`]
/// levels deep: `../` to `/`, then the root's absolute path without its leading `/`. Where a
/// runtime resolves a relative setting (its working directory, its own home, its config file's
/// directory), it reaches the case root, so whether it opens the path does not depend on where
/// the runner, the runtime or its temporary directories happen to sit on this machine.
fn relative_from_anywhere(root: &Path) -> Option<String> {
    let root = root.canonicalize().ok()?;
    let below = root.strip_prefix("/").ok()?;
    let mut rel = PathBuf::new();
    for _ in 0..CLIMB {
        rel.push("..");
    }
    rel.push(below);
    Some(rel.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_relative_leads_to_the_root_from_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b/c")).unwrap();
        std::fs::write(dir.path().join("a/marker"), b"m").unwrap();
        let root = dir.path().join("a");
        let rel = relative_from_anywhere(&root).unwrap();
        assert!(Path::new(&rel).is_relative(), "{rel}");
        for base in [
            Path::new("/"),
            Path::new("/tmp"),
            dir.path(),
            &dir.path().join("a/b/c"),
        ] {
            assert_eq!(
                std::fs::read(base.join(&rel).join("marker")).unwrap(),
                b"m",
                "from {}",
                base.display()
            );
        }
    }

    #[test]
    fn substitution() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"abc").unwrap();
        let out = substitute("[{root}] {sha256:f} {x}", dir.path()).unwrap();
        assert_eq!(
            out,
            format!(
                "[{}] ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad {{x}}",
                dir.path().display()
            )
        );
        assert!(substitute("{sha256:missing}", dir.path()).is_err());
        assert_eq!(
            hashed_paths("a {sha256:x/y} {root} {sha256:z}").unwrap(),
            ["x/y", "z"]
        );
        assert!(hashed_paths("{sha256:x").is_err());
    }

    #[test]
    fn hashes_read_only_regular_files_in_the_case_root() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let sparse = std::fs::File::create(dir.path().join("huge")).unwrap();
        sparse.set_len(fixture::MAX_READ + 1).unwrap();
        let started = std::time::Instant::now();
        for (rel, words) in [
            ("zero", "`zero` is a symlink"),
            ("etc/passwd", "`etc` is a symlink"),
            ("fifo", "a FIFO"),
            ("huge", "more than the 67108864"),
        ] {
            let err = sha256_file(dir.path(), rel.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(err.contains(words), "{rel}: {err}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let err = substitute("{sha256:zero}", dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot hash `zero`"), "{err}");
    }
}
