//! Loading a whole suite: every case file below a directory ([`load_dir`]) or from any other
//! source ([`assemble`]), each parsed on its own, ids unique, every error kept.

use std::path::Path;

use super::*;

/// All cases of a directory tree, sorted by id.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    pub root: PathBuf,
    pub cases: Vec<Case>,
}

/// Loads every `*.yaml` / `*.yml` file below `dir` (recursively) as one case each.
/// Returns every error found, not only the first.
pub fn load_dir(dir: &Path) -> Result<Suite, Vec<CaseError>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    collect_files(dir, &mut files, &mut errors);
    files.sort();
    let sources = files.into_iter().map(|file| {
        // The area is the file's directory below the cases root (`read`, `agentskills/catalog`).
        let area = file.strip_prefix(dir).ok().and_then(|rel| {
            let parent = rel.parent()?;
            let words: Vec<String> = parent
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            (!words.is_empty()).then(|| words.join("/"))
        });
        // A case file is a few KiB (the suite's largest is under 3 KiB); the cap lets a case
        // spell out as much argument text as `$repeat` may make (16 MiB), and no FIFO or device
        // is ever waited on.
        let text = crate::input::read_regular_text(&file, MAX_CASE_FILE_BYTES, "a case file")
            .map_err(|e| e.replace(&format!("{}", file.display()), "it"));
        CaseSource { file, area, text }
    });
    assemble(
        dir.to_path_buf(),
        sources,
        errors,
        "no case files (*.yaml) found",
    )
}

/// One case file for [`assemble`]: its name in messages, its area (the directory below the
/// suite's root; `None` directly in the root: see [`parse_case`]), and its text or why it could
/// not be read.
pub struct CaseSource {
    pub file: PathBuf,
    pub area: Option<String>,
    pub text: Result<String, String>,
}

/// Parses each source as one case into a suite rooted at `root`, sorted by id: every error is
/// kept (the `errors` found before, unreadable files, bad cases, ids used twice), and a suite
/// with no case at all is the error `empty`. Whether the files came from a directory or from the
/// binary, they are judged alike.
pub fn assemble(
    root: PathBuf,
    sources: impl IntoIterator<Item = CaseSource>,
    errors: Vec<CaseError>,
    empty: &str,
) -> Result<Suite, Vec<CaseError>> {
    assemble_within(root, sources, errors, empty, budget::MAX_SUITE_HELD)
}

/// [`assemble`], with all cases together holding at most `max_held` bytes in memory.
pub(crate) fn assemble_within(
    root: PathBuf,
    sources: impl IntoIterator<Item = CaseSource>,
    mut errors: Vec<CaseError>,
    empty: &str,
    max_held: u64,
) -> Result<Suite, Vec<CaseError>> {
    let mut cases: Vec<Case> = Vec::new();
    let mut held = 0u64;
    for source in sources {
        let text = match source.text {
            Ok(t) => t,
            Err(message) => {
                errors.push(CaseError {
                    file: source.file,
                    line: None,
                    message,
                });
                continue;
            }
        };
        match parse_case(&source.file, source.area.as_deref(), &text) {
            Ok(case) if held + budget::held(&case) > max_held => {
                // spec-cases/README.md "Budgets": what all cases of a run hold in memory.
                errors.push(CaseError {
                    file: case.file.clone(),
                    line: Some(case.line),
                    message: format!(
                        "case `{}` holds {} bytes of file contents and arguments in memory, and the cases loaded before it {held}: all cases of a run together hold at most {} MiB ({max_held} bytes)",
                        case.id,
                        budget::held(&case),
                        max_held >> 20
                    ),
                });
            }
            Ok(case) => {
                held += budget::held(&case);
                if let Some(other) = cases.iter().find(|c| c.id == case.id) {
                    errors.push(CaseError {
                        file: case.file.clone(),
                        line: Some(case.line),
                        message: format!(
                            "duplicate case id `{}` (also in {}:{})",
                            case.id,
                            other.file.display(),
                            other.line
                        ),
                    });
                } else {
                    cases.push(case);
                }
            }
            Err(e) => errors.push(e),
        }
    }
    // A twin names a case of the same run (a `--cases` directory of its own is judged alone).
    for case in &cases {
        if let Some(twin) = &case.twin_of {
            if twin == &case.id || !cases.iter().any(|c| &c.id == twin) {
                errors.push(CaseError {
                    file: case.file.clone(),
                    line: Some(case.line),
                    message: format!(
                        "`twin_of: {twin}` names no other case of the suite (the case this one mirrors for skill.yml)"
                    ),
                });
            }
        }
    }
    if cases.is_empty() && errors.is_empty() {
        errors.push(CaseError {
            file: root.clone(),
            line: None,
            message: empty.into(),
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Suite { root, cases })
}

/// The largest case file the loader reads.
pub const MAX_CASE_FILE_BYTES: u64 = 16 * 1024 * 1024;

pub(super) fn collect_files(dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<CaseError>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push(CaseError {
                file: dir.to_path_buf(),
                line: None,
                message: format!("cannot read the cases directory: {e}"),
            });
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            collect_files(&path, files, errors);
        } else if ft.is_file()
            && matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            )
        {
            files.push(path);
        }
    }
}
