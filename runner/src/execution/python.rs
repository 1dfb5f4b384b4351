//! Finding the Python interpreter that every case's runtime runs helpers with.
//!
//! `python3` on PATH is often a wrapper (a pyenv shim is a shell script that adds variables and
//! costs ~100 ms per start), which would make environment cases meaningless. The runner asks the
//! interpreter once for `sys.executable` and passes that real path to every case.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why the interpreter cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PythonError {
    /// It cannot be run at all.
    CannotRun { candidate: PathBuf, error: String },
    /// It ran and failed.
    Failed { candidate: PathBuf },
    /// It named no file that exists.
    NoExecutable { candidate: PathBuf },
}

impl fmt::Display for PythonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PythonError::CannotRun { candidate, error } => {
                write!(f, "cannot run `{}`: {error}", candidate.display())
            }
            PythonError::Failed { candidate } => {
                write!(
                    f,
                    "`{}` failed to report its executable",
                    candidate.display()
                )
            }
            PythonError::NoExecutable { candidate } => {
                write!(f, "`{}` reported no usable executable", candidate.display())
            }
        }
    }
}

impl std::error::Error for PythonError {}

/// Resolves the interpreter: `explicit` when given, else the real executable behind `python3`.
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, PythonError> {
    let candidate = explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let out = match Command::new(&candidate)
        .args(["-I", "-c", "import sys; sys.stdout.write(sys.executable)"])
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            return Err(PythonError::CannotRun {
                candidate,
                error: e.to_string(),
            })
        }
    };
    if !out.status.success() {
        return Err(PythonError::Failed { candidate });
    }
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if path.as_os_str().is_empty() || !path.is_file() {
        return Err(PythonError::NoExecutable { candidate });
    }
    Ok(path)
}
