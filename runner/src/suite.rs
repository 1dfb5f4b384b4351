//! The suite inside the binary: its files, its version, where a run takes its cases and fixtures
//! from, and `skillspec export`.
//!
//! `runner/build.rs` embeds every file of `spec-cases/`, `fixtures/` and `protocol/`, and
//! `SPEC.md`, `PROTOCOL.md`, `SUITE_VERSION` and `reports/report.schema.json` ([`FILES`]), so an
//! installed `skillspec` needs nothing from the source tree. A run uses `--cases DIR` when given,
//! else the embedded cases, parsed from memory; their files are named
//! `embedded:spec-cases/<area>/<file>.yaml` in messages and reports (`skillspec export` writes
//! them to `spec-cases/<area>/<file>.yaml`). `copy:` fixtures come from `--fixtures DIR`, else
//! from the `fixtures/` beside an explicit cases directory, else from the embedded fixtures,
//! written once per run (only when a selected case copies one) into a private temporary
//! directory that is removed when the run ends (also on SIGINT/SIGTERM: it is registered with
//! [`crate::execution::roots`]).
//!
//! The suite's version ([`VERSION`], the repository's `SUITE_VERSION` file) follows semver:
//! major when the case format, the protocol or the meaning of a clause changes; minor when cases
//! are added; patch for fixes (README.md, "Versions").

use std::io;
use std::path::{Path, PathBuf};

use crate::cases::{self, CaseError, Suite};

pub use crate::embedded::{file, EmbeddedFile, FILES, VERSION};

/// How the embedded cases' directory is named in messages and reports (`cases_dir`).
pub const EMBEDDED_ROOT: &str = "embedded:spec-cases";

/// The runner's, the suite's and the protocol's versions, as `--version` prints them.
pub fn version_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        format!(
            "{} (suite {VERSION}, protocol {})",
            env!("CARGO_PKG_VERSION"),
            crate::protocol::PROTOCOL_VERSION
        )
    })
}

/// The embedded cases, parsed from memory, sorted by id; every error is returned, as
/// [`cases::load_dir`] does for a directory.
pub fn load_embedded() -> Result<Suite, Vec<CaseError>> {
    let sources = FILES.iter().filter_map(|f| {
        let rel = f.path.strip_prefix("spec-cases/")?;
        if !(rel.ends_with(".yaml") || rel.ends_with(".yml")) {
            return None;
        }
        // The directory below spec-cases/, as `load_dir` names areas.
        let area = rel.rsplit_once('/').map(|(dir, _)| dir.to_owned());
        let text = std::str::from_utf8(f.bytes)
            .map(str::to_owned)
            .map_err(|e| format!("cannot read: not UTF-8 ({e})"));
        Some(cases::CaseSource {
            file: PathBuf::from(format!("embedded:{}", f.path)),
            area,
            text,
        })
    });
    cases::assemble(
        PathBuf::from(EMBEDDED_ROOT),
        sources,
        Vec::new(),
        "no case files were embedded",
    )
}

/// Where a run's cases come from, in the words of the run header.
pub fn describe_source(cases: Option<&Path>) -> String {
    match cases {
        None => format!("the embedded suite {VERSION}"),
        Some(dir) => match version_beside(dir) {
            Some(v) => format!("{} (suite {v})", dir.display()),
            None => dir.display().to_string(),
        },
    }
}

/// The `suite` object of report.json for a run whose `cases_dir` is `cases_dir`: the embedded
/// suite's version, or for a directory the version its `../SUITE_VERSION` states (`null` when
/// there is none, as for a directory of one's own cases).
pub fn report_entry(cases_dir: &str) -> serde_json::Value {
    if cases_dir == EMBEDDED_ROOT {
        serde_json::json!({"version": VERSION, "source": "embedded"})
    } else {
        serde_json::json!({"version": version_beside(Path::new(cases_dir)), "source": "directory"})
    }
}

/// The version in the `SUITE_VERSION` file beside the cases directory `dir` (the layout of the
/// repository and of `skillspec export`), when it holds `MAJOR.MINOR.PATCH`.
pub fn version_beside(dir: &Path) -> Option<String> {
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
    let file = parent.unwrap_or(Path::new(".")).join("SUITE_VERSION");
    let meta = std::fs::metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > 64 {
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    let v = text.trim();
    is_semver(v).then(|| v.to_owned())
}

/// Whether `v` is `MAJOR.MINOR.PATCH`, digits only.
pub fn is_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The fixtures directory of a run, and the temporary copy of the embedded fixtures behind it
/// (removed on drop).
pub struct Fixtures {
    path: PathBuf,
    embedded: bool,
    extracted: Option<tempfile::TempDir>,
}

impl Fixtures {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether these are the embedded fixtures.
    pub fn is_embedded(&self) -> bool {
        self.embedded
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        if let Some(dir) = self.extracted.take() {
            let _ = crate::execution::roots::remove_root(dir);
        }
    }
}

/// Whether any of `cases` copies a fixture (in its tree or in a `write` step).
pub fn copies_fixtures<'a>(cases: impl IntoIterator<Item = &'a cases::Case>) -> bool {
    use crate::cases::fixture::{EntryKind, Tree};
    let copies = |t: &Tree| {
        t.entries
            .iter()
            .any(|e| matches!(e.kind, EntryKind::Copy(_)))
    };
    cases.into_iter().any(|c| {
        copies(&c.tree)
            || c.steps
                .iter()
                .any(|s| matches!(&s.action, cases::Action::Write(t) if copies(t)))
    })
}

/// The fixtures a run uses: `explicit` when given; else `fixtures/` beside an explicit cases
/// directory when it exists; else the embedded fixtures, written into a private temporary
/// directory (mode 0700) that lives as long as the returned value, when `needed` (a selected
/// case copies a fixture; else nothing is written and the path names no directory).
pub fn fixtures_for(
    explicit: Option<PathBuf>,
    cases: Option<&Path>,
    needed: bool,
) -> io::Result<Fixtures> {
    if let Some(path) = explicit {
        return Ok(Fixtures {
            path,
            embedded: false,
            extracted: None,
        });
    }
    if let Some(beside) = cases
        .and_then(|c| c.parent())
        .map(|p| p.join("fixtures"))
        .filter(|p| p.is_dir())
    {
        return Ok(Fixtures {
            path: beside,
            embedded: false,
            extracted: None,
        });
    }
    if !needed {
        return Ok(Fixtures {
            path: PathBuf::from("embedded:fixtures"),
            embedded: true,
            extracted: None,
        });
    }
    let dir = crate::execution::roots::create_root(|| {
        use std::os::unix::fs::PermissionsExt as _;
        tempfile::Builder::new()
            .prefix("skillspec-fixtures-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
    })?;
    let fixtures = Fixtures {
        path: dir.path().join("fixtures"),
        embedded: true,
        extracted: Some(dir),
    };
    let root = fixtures.path.parent().map(Path::to_path_buf);
    if let Some(root) = root {
        write_files(&root, |p| p.starts_with("fixtures/"))?;
    }
    Ok(fixtures)
}

/// Writes the embedded files that `select` picks below `dest` (which exists).
fn write_files(dest: &Path, select: impl Fn(&str) -> bool) -> io::Result<usize> {
    let mut written = 0;
    for f in FILES.iter().filter(|f| select(f.path)) {
        write_one(dest, f)?;
        written += 1;
    }
    Ok(written)
}

fn write_one(dest: &Path, f: &EmbeddedFile) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let path = dest.join(f.path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mode = if f.executable { 0o755 } else { 0o644 };
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    out.write_all(f.bytes)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// What `skillspec export` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub files: usize,
    /// Existing files that `--force` replaced.
    pub replaced: usize,
}

/// Writes every embedded file into `dest` (created if missing) under its repository path. An
/// existing entry at any of those paths stops the export before anything is written, unless
/// `force`: then each is removed first (a symlink itself, never its target) and written anew.
/// A directory where a file belongs is never removed.
pub fn export(dest: &Path, force: bool) -> Result<Exported, String> {
    if dest.exists() && !dest.is_dir() {
        return Err(format!("{} exists and is not a directory", dest.display()));
    }
    let mut existing = Vec::new();
    for f in FILES {
        let path = dest.join(f.path);
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if meta.is_dir() {
                return Err(format!(
                    "{} is a directory, where the file {} belongs; nothing was written",
                    path.display(),
                    f.path
                ));
            }
            existing.push(path);
        }
    }
    if !existing.is_empty() && !force {
        let shown: Vec<String> = existing
            .iter()
            .take(3)
            .map(|p| p.display().to_string())
            .collect();
        return Err(format!(
            "{} of the {} files already exist ({}{}); nothing was written; pass --force to overwrite them",
            existing.len(),
            FILES.len(),
            shown.join(", "),
            if existing.len() > shown.len() { ", ..." } else { "" }
        ));
    }
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    for path in &existing {
        std::fs::remove_file(path)
            .map_err(|e| format!("cannot replace {}: {e}", path.display()))?;
    }
    let files = write_files(dest, |_| true).map_err(|e| format!("cannot write: {e}"))?;
    Ok(Exported {
        files,
        replaced: existing.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_and_its_contracts_are_embedded() {
        for path in [
            "SPEC.md",
            "PROTOCOL.md",
            "SUITE_VERSION",
            "reports/report.schema.json",
            "protocol/request.schema.json",
            "protocol/response.schema.json",
            "protocol/step-result.schema.json",
            "spec-cases/README.md",
            "fixtures/helpers/echo_args.py",
        ] {
            assert!(file(path).is_some(), "{path} is not embedded");
        }
        assert!(FILES.windows(2).all(|w| w[0].path < w[1].path));
        assert!(FILES.iter().all(|f| !f.path.contains("__pycache__")));
        assert_eq!(
            std::str::from_utf8(file("SUITE_VERSION").unwrap().bytes)
                .unwrap()
                .trim(),
            VERSION
        );
        assert!(is_semver(VERSION));
    }

    #[test]
    fn the_embedded_cases_are_the_repository_cases() {
        let embedded = load_embedded().expect("the embedded cases load");
        let on_disk = cases::load_dir(&crate::default_cases_dir()).expect("the repository's load");
        assert_eq!(embedded.cases.len(), on_disk.cases.len());
        for (e, d) in embedded.cases.iter().zip(&on_disk.cases) {
            assert_eq!(e.id, d.id);
            assert_eq!(e.area, d.area, "{}", e.id);
            assert_eq!(e.steps, d.steps, "{}", e.id);
            assert!(
                e.file.to_string_lossy().starts_with("embedded:spec-cases/"),
                "{}",
                e.file.display()
            );
        }
        assert_eq!(embedded.root, Path::new(EMBEDDED_ROOT));
    }

    #[test]
    fn semver_only() {
        assert!(is_semver("2.0.0"));
        assert!(is_semver("10.22.333"));
        for bad in ["2.0", "2.0.0.1", "v2.0.0", "2.0.0-rc1", "2..0", ""] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn report_entry_names_the_source() {
        assert_eq!(
            report_entry(EMBEDDED_ROOT),
            serde_json::json!({"version": VERSION, "source": "embedded"})
        );
        let dir = tempfile::tempdir().unwrap();
        let cases = dir.path().join("spec-cases");
        std::fs::create_dir(&cases).unwrap();
        let entry = report_entry(&cases.display().to_string());
        assert_eq!(entry["version"], serde_json::Value::Null);
        std::fs::write(dir.path().join("SUITE_VERSION"), "3.1.4\n").unwrap();
        let entry = report_entry(&cases.display().to_string());
        assert_eq!(
            entry,
            serde_json::json!({"version": "3.1.4", "source": "directory"})
        );
        std::fs::write(dir.path().join("SUITE_VERSION"), "latest\n").unwrap();
        assert_eq!(
            report_entry(&cases.display().to_string())["version"],
            serde_json::Value::Null
        );
    }

    #[test]
    fn embedded_fixtures_live_as_long_as_the_run() {
        let fixtures = fixtures_for(None, None, true).unwrap();
        assert!(fixtures.is_embedded());
        let path = fixtures.path().to_path_buf();
        assert_eq!(
            std::fs::read(path.join("helpers/echo_args.py")).unwrap(),
            file("fixtures/helpers/echo_args.py").unwrap().bytes
        );
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "the temporary directory is private");
        }
        drop(fixtures);
        assert!(!path.exists());
        let explicit = fixtures_for(Some("/x".into()), None, true).unwrap();
        assert_eq!(explicit.path(), Path::new("/x"));
        assert!(!explicit.is_embedded());
        // Nothing is written for a run that copies no fixture.
        let unneeded = fixtures_for(None, None, false).unwrap();
        assert!(unneeded.is_embedded() && !unneeded.path().exists());
        let suite = load_embedded().unwrap();
        assert!(copies_fixtures(&suite.cases));
        let without: Vec<&cases::Case> = suite
            .cases
            .iter()
            .filter(|c| !copies_fixtures([*c]))
            .collect();
        assert!(!without.is_empty() && without.len() < suite.cases.len());
    }

    #[test]
    fn export_refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let out = export(dir.path(), false).unwrap();
        assert_eq!(
            out,
            Exported {
                files: FILES.len(),
                replaced: 0
            }
        );
        for f in FILES {
            assert_eq!(
                std::fs::read(dir.path().join(f.path)).unwrap(),
                f.bytes,
                "{}",
                f.path
            );
        }
        std::fs::write(dir.path().join("SPEC.md"), "changed").unwrap();
        let err = export(dir.path(), false).unwrap_err();
        assert!(
            err.contains("--force") && err.contains("nothing was written"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(dir.path().join("SPEC.md")).unwrap(),
            b"changed"
        );
        // A symlink is replaced, never written through.
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        std::fs::remove_file(dir.path().join("PROTOCOL.md")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("PROTOCOL.md")).unwrap();
        let out = export(dir.path(), true).unwrap();
        assert_eq!(out.replaced, FILES.len());
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
        assert_eq!(
            std::fs::read(dir.path().join("SPEC.md")).unwrap(),
            file("SPEC.md").unwrap().bytes
        );
        // A directory in the way is never removed.
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join("SPEC.md/inside")).unwrap();
        let err = export(other.path(), true).unwrap_err();
        assert!(err.contains("is a directory"), "{err}");
        assert!(other.path().join("SPEC.md/inside").is_dir());
    }
}
