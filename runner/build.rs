//! Embeds the suite in the `skillspec` binary, so that an installed program works from any
//! directory with the source tree gone.
//!
//! Writes `$OUT_DIR/embedded.rs`: `SUITE_VERSION` (the repository's `SUITE_VERSION` file, checked
//! to be `MAJOR.MINOR.PATCH`) and `FILES`, one `(relative path, executable, include_bytes!(..))`
//! entry per regular file of `spec-cases/`, `fixtures/`, `protocol/*.schema.json`, `SPEC.md`,
//! `PROTOCOL.md`, `reports/report.schema.json` and `SUITE_VERSION`, sorted by path. Only the bytes
//! end up in the binary; the absolute paths here are compile-time only. Cargo reruns this script
//! when anything under those directories changes (a directory given to `rerun-if-changed` is
//! scanned whole, so added and removed files count too).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Directories embedded whole, relative to the repository root.
const DIRS: &[&str] = &["spec-cases", "fixtures", "protocol"];
/// Single files embedded, relative to the repository root.
const FILES: &[&str] = &[
    "SPEC.md",
    "PROTOCOL.md",
    "SUITE_VERSION",
    "reports/report.schema.json",
];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let repo = manifest
        .join("..")
        .canonicalize()
        .unwrap_or_else(|e| fail(&format!("cannot resolve the repository root: {e}")));
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for dir in DIRS {
        let path = repo.join(dir);
        println!("cargo:rerun-if-changed={}", path.display());
        collect(&repo, &path, &mut files);
    }
    for file in FILES {
        let path = repo.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        if !path.is_file() {
            fail(&format!("{} is missing", path.display()));
        }
        files.push(((*file).to_owned(), path));
    }
    files.sort();
    files.dedup_by(|a, b| a.0 == b.0);

    let version_text = std::fs::read_to_string(repo.join("SUITE_VERSION"))
        .unwrap_or_else(|e| fail(&format!("cannot read SUITE_VERSION: {e}")));
    let version = version_text.trim();
    let parts: Vec<&str> = version.split('.').collect();
    if parts.len() != 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        fail(&format!(
            "SUITE_VERSION must be MAJOR.MINOR.PATCH (digits only), found {version:?}"
        ));
    }

    let mut out = String::new();
    let _ = writeln!(out, "pub const SUITE_VERSION: &str = {version:?};");
    let _ = writeln!(out, "pub static FILES: &[EmbeddedFile] = &[");
    for (rel, path) in &files {
        let executable = is_executable(path);
        let _ = writeln!(
            out,
            "    EmbeddedFile {{ path: {rel:?}, executable: {executable}, bytes: include_bytes!({:?}) }},",
            path.display().to_string()
        );
    }
    let _ = writeln!(out, "];");
    let dest =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("embedded.rs");
    std::fs::write(&dest, out)
        .unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", dest.display())));
}

/// Every regular file below `dir` (never through a symlink), with its path relative to `repo`
/// spelled with `/`. Hidden entries and Python caches are left out; a symlink or a name that is
/// not UTF-8 stops the build (an export could not reproduce it).
fn collect(repo: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", dir.display())));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", dir.display())));
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            fail(&format!("{} has a name that is not UTF-8", path.display()));
        };
        if name.starts_with('.') || name == "__pycache__" || name.ends_with(".pyc") {
            continue;
        }
        let kind = entry
            .file_type()
            .unwrap_or_else(|e| fail(&format!("cannot stat {}: {e}", path.display())));
        if kind.is_dir() {
            collect(repo, &path, files);
        } else if kind.is_file() {
            let rel = path
                .strip_prefix(repo)
                .unwrap_or_else(|_| fail(&format!("{} is outside the repository", path.display())))
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.push((rel, path));
        } else {
            fail(&format!(
                "{} is not a regular file or directory; the embedded suite cannot hold it",
                path.display()
            ));
        }
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

fn fail(message: &str) -> ! {
    eprintln!("runner/build.rs: {message}");
    std::process::exit(1);
}
