//! Resolving the configured Python interpreter (`pythonPath`) once, at start-up, to an absolute
//! path (SPEC.md `run.exec`, "The interpreter").
//!
//! - An absolute path is used as it is.
//! - A bare name (no `/`, such as the default `python3`) is looked up in the runtime's own `PATH`,
//!   considering only absolute entries: empty entries and relative ones (`.`, `bin`) are skipped,
//!   so the lookup can never land in a skill directory (the helper's working directory) or in
//!   wherever the runtime happens to run. The first entry holding an executable regular file of
//!   that name wins.
//! - A relative path with a `/` (`./python3`, `venv/bin/python`) is refused: the only directory it
//!   could be relative to when a helper starts is the skill directory, which the skill's author
//!   controls.
//!
//! A configuration that does not resolve makes every script call that reaches execution
//! `spawn_failed`; nothing is ever run from a relative location.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Why the configured interpreter does not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterpreterError {
    /// The configured value is empty.
    Empty,
    /// A relative path with a `/`.
    Relative(OsString),
    /// A bare name that no absolute `PATH` entry holds as an executable file.
    NotFound {
        name: OsString,
        path: Option<OsString>,
    },
}

impl fmt::Display for InterpreterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpreterError::Empty => f.write_str("the configured interpreter is empty"),
            InterpreterError::Relative(p) => write!(
                f,
                "the configured interpreter `{}` is a relative path; use an absolute path or a bare command name",
                Path::new(p).display()
            ),
            InterpreterError::NotFound { name, path: None } => write!(
                f,
                "`{}` is not found: PATH is not set",
                Path::new(name).display()
            ),
            InterpreterError::NotFound {
                name,
                path: Some(path),
            } => write!(
                f,
                "`{}` is not an executable file in any absolute entry of PATH `{}`",
                Path::new(name).display(),
                Path::new(path).display()
            ),
        }
    }
}

/// Resolves `configured` with the runtime's `PATH` (`None`: unset).
pub fn resolve(configured: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf, InterpreterError> {
    let bytes = configured.as_bytes();
    if bytes.is_empty() {
        return Err(InterpreterError::Empty);
    }
    if bytes.starts_with(b"/") {
        return Ok(PathBuf::from(configured));
    }
    if bytes.contains(&b'/') {
        return Err(InterpreterError::Relative(configured.to_owned()));
    }
    let not_found = || InterpreterError::NotFound {
        name: configured.to_owned(),
        path: path_var.map(OsStr::to_owned),
    };
    let path_var = path_var.ok_or_else(not_found)?;
    path_var
        .as_bytes()
        .split(|b| *b == b':')
        .filter(|entry| entry.starts_with(b"/"))
        .map(|entry| Path::new(OsStr::from_bytes(entry)).join(configured))
        .find(|candidate| is_executable_file(candidate))
        .ok_or_else(not_found)
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn exe(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn only_absolute_path_entries_are_searched() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let real = exe(&bin, "python3");
        let path = format!(":.:relative:{}", bin.display());
        assert_eq!(
            resolve(OsStr::new("python3"), Some(OsStr::new(&path))),
            Ok(real)
        );
        assert!(matches!(
            resolve(OsStr::new("python3"), Some(OsStr::new(":.:relative"))),
            Err(InterpreterError::NotFound { .. })
        ));
        assert!(matches!(
            resolve(OsStr::new("python3"), None),
            Err(InterpreterError::NotFound { path: None, .. })
        ));
    }

    #[test]
    fn relative_paths_are_refused_and_absolute_ones_kept() {
        assert_eq!(
            resolve(OsStr::new("./python3"), Some(OsStr::new("/usr/bin"))),
            Err(InterpreterError::Relative("./python3".into()))
        );
        assert_eq!(
            resolve(OsStr::new("venv/bin/python"), None),
            Err(InterpreterError::Relative("venv/bin/python".into()))
        );
        assert_eq!(
            resolve(OsStr::new("/opt/py/bin/python3"), None),
            Ok(PathBuf::from("/opt/py/bin/python3"))
        );
        assert_eq!(resolve(OsStr::new(""), None), Err(InterpreterError::Empty));
    }

    #[test]
    fn a_non_executable_file_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::fs::write(a.join("python3"), "not executable").unwrap();
        std::fs::create_dir(a.join("python4")).unwrap();
        let real = exe(&b, "python3");
        let path = format!("{}:{}", a.display(), b.display());
        assert_eq!(
            resolve(OsStr::new("python3"), Some(OsStr::new(&path))),
            Ok(real)
        );
        assert!(resolve(OsStr::new("python4"), Some(OsStr::new(&path))).is_err());
    }
}
