//! Finding the Python interpreter that every case's runtime runs helpers with.
//!
//! `python3` on PATH is often a wrapper (a pyenv shim is a shell script that adds variables and
//! costs ~100 ms per start), which would make environment cases meaningless. The runner asks the
//! interpreter once for `sys.executable` and passes that real path to every case.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Resolves the interpreter: `explicit` when given, else the real executable behind `python3`.
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let candidate = explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let out = Command::new(&candidate)
        .args(["-I", "-c", "import sys; sys.stdout.write(sys.executable)"])
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", candidate.display()))?;
    if !out.status.success() {
        return Err(format!(
            "`{}` failed to report its executable",
            candidate.display()
        ));
    }
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if path.as_os_str().is_empty() || !path.is_file() {
        return Err(format!(
            "`{}` reported no usable executable",
            candidate.display()
        ));
    }
    Ok(path)
}
