//! Discovery of dialect `agentskills` (SPEC.md "Discovery (G §Step 1)", "Lenient validation"):
//! the walk of a project scope and a user scope, the loading of each skill directory found in
//! the declared [`Mode`], and the collisions between names.
//!
//! The walk: each scope root is opened as configured (a link at the root path is the operator's
//! choice and is followed), and nothing below it ever is: directories are listed once, entered
//! with `O_NOFOLLOW` and examined in byte order of their names; `SKILL.md` is read only when the
//! listing shows a regular file ([`crate::safe_fs`], as `crate::discovery` does). A directory
//! holding an entry named `SKILL.md` is a skill directory and is not descended into; `.git` and
//! `node_modules` are skipped; skill directories lie at depth 1 to [`MAX_SCAN_DEPTH`]; at most
//! [`MAX_SCAN_DIRS`] directories are examined per scope.
//!
//! Clauses: `agentskills.discovery.*`, `agentskills.lenient.*`, `agentskills.collision.*`,
//! `agentskills.record.location`, `agentskills.parse.body-trimmed`.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::read::{self, shown};
use super::validate::{self, Checked};
use super::{steps, Catalog, Diagnostic, Mode, Problem, Roots, Scope, Skill};
use super::{MAX_SCAN_DEPTH, MAX_SCAN_DIRS};
use crate::safe_fs::{self, DirError, Entries, EntryKind, Use};

/// Finds and loads the skills of both scopes: the project's first, then the user's.
// spec: agentskills.discovery.scopes
pub fn discover(roots: &Roots, mode: Mode) -> Catalog {
    let mut found = Vec::new();
    let mut diagnostics = Vec::new();
    for (scope, root) in [(Scope::Project, &roots.project), (Scope::User, &roots.user)] {
        if let Some(root) = root {
            scan_scope(scope, root, mode, &mut found, &mut diagnostics);
        }
    }
    let skills = one_per_name(found, &mut diagnostics);
    Catalog {
        skills,
        diagnostics,
    }
}

/// Walks one scope root, adding the skills it loads to `found` in walk order.
fn scan_scope(
    scope: Scope,
    root: &Path,
    mode: Mode,
    found: &mut Vec<Skill>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let unreadable = |e: std::io::Error| Diagnostic {
        path: root.to_path_buf(),
        clause: "agentskills.discovery.scopes",
        message: format!("cannot read the {} skills directory: {e}", scope.as_str()),
        problem: None,
    };
    let fd = match safe_fs::open_root(root) {
        Ok(fd) => fd,
        Err(e) => return diagnostics.push(unreadable(e)),
    };
    let entries = match (safe_fs::access(Use::Scan).list_dir)(fd.as_fd()) {
        Ok(entries) => entries,
        Err(e) => return diagnostics.push(unreadable(e)),
    };
    // spec: agentskills.record.location (absolute: a relative root is taken from the working
    // directory, lexically, without resolving links)
    let base = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let mut walk = Walk {
        scope,
        mode,
        base: &base,
        examined: 0,
        stopped: false,
        found,
        diagnostics,
    };
    walk.children(fd.as_fd(), entries, &mut Vec::new());
}

/// One scope's walk.
struct Walk<'a> {
    scope: Scope,
    mode: Mode,
    /// The scope root, absolute.
    base: &'a Path,
    /// Directories examined so far.
    examined: usize,
    /// The bound was reached: nothing more is examined.
    stopped: bool,
    found: &'a mut Vec<Skill>,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl Walk<'_> {
    /// Examines the subdirectories of `dir` (reached by `path` from the root), listed in
    /// `entries` in byte order of their names.
    fn children(&mut self, dir: BorrowedFd<'_>, entries: Entries, path: &mut Vec<Vec<u8>>) {
        let skipped_dir = steps().skipped_dir;
        for (name, kind) in entries {
            // Only what the listing shows as a directory: a symlink is never followed.
            // spec: agentskills.discovery.skip-dirs
            if kind != EntryKind::Directory || skipped_dir(&name) {
                continue;
            }
            // spec: agentskills.discovery.bounds (at most MAX_SCAN_DIRS directories per scope)
            if self.examined >= MAX_SCAN_DIRS {
                return self.stop();
            }
            self.examined += 1;
            path.push(name);
            self.enter(dir, path);
            path.pop();
            if self.stopped {
                return;
            }
        }
    }

    /// Enters and lists the directory at `path` (listed in `dir`), once: a skill directory when
    /// the listing holds `SKILL.md`, else walked while the depth allows.
    fn enter(&mut self, dir: BorrowedFd<'_>, path: &mut Vec<Vec<u8>>) {
        let access = safe_fs::access(Use::Scan);
        let name = OsStr::from_bytes(path.last().map(Vec::as_slice).unwrap_or_default());
        let listed = (access.open_dir)(dir, name)
            .map_err(|e| match e {
                DirError::Unreadable(m) => format!("cannot enter the directory: {m}"),
                _ => "the directory was replaced or removed while the scan ran".to_owned(),
            })
            .and_then(|sub| match (access.list_dir)(sub.as_fd()) {
                Ok(entries) => Ok((sub, entries)),
                Err(e) => Err(format!("cannot list the directory: {e}")),
            });
        let (sub, entries) = match listed {
            Ok(listed) => listed,
            // spec: agentskills.lenient.others-unaffected (the rest of the tree is still walked)
            Err(message) => {
                let path = self.directory(path);
                return self.diagnostics.push(Diagnostic {
                    path,
                    clause: "agentskills.lenient.others-unaffected",
                    message,
                    problem: None,
                });
            }
        };
        // spec: agentskills.discovery.skill-md-exact (a skill directory is not descended into)
        if read::skill_md_entry(&entries).is_some() {
            self.candidate(sub.as_fd(), &entries, path);
        // spec: agentskills.discovery.bounds (skill directories down to MAX_SCAN_DEPTH levels)
        } else if path.len() < MAX_SCAN_DEPTH {
            self.children(sub.as_fd(), entries, path);
        }
    }

    /// The absolute path of the directory at `path`.
    fn directory(&self, path: &[Vec<u8>]) -> PathBuf {
        path.iter()
            .fold(self.base.to_path_buf(), |p, c| p.join(OsStr::from_bytes(c)))
    }

    /// Loads the skill directory `dir` at `path`, whose listing is `entries`, or records why
    /// not. Every problem of the skill is a diagnostic, loaded or not.
    fn candidate(&mut self, dir: BorrowedFd<'_>, entries: &Entries, path: &[Vec<u8>]) {
        let directory = self.directory(path);
        let location = directory.join("SKILL.md");
        let dir_name = path.last().map(Vec::as_slice).unwrap_or_default();
        let Checked { validation, body } = match read::read_skill_md(dir, entries) {
            Ok(bytes) => validate::check(dir_name, &bytes, self.mode == Mode::Lenient),
            Err(p) => return self.diagnose(&location, p),
        };
        let load = match self.mode {
            Mode::Strict => validation.valid(),
            Mode::Lenient => {
                let fatal = steps().lenient_fatal;
                !validation.problems.iter().any(|p| fatal(p.clause))
            }
        };
        for p in validation.problems {
            self.diagnose(&location, p);
        }
        let record = validation
            .properties
            .and_then(|p| Some((p.name?, p.description?)));
        let Some((name, description)) = record.filter(|_| load) else {
            return;
        };
        // spec: agentskills.parse.body-trimmed (the splitter's body, trimmed)
        self.found.push(Skill {
            name,
            description,
            location,
            directory,
            body,
            scope: self.scope,
        });
    }

    fn diagnose(&mut self, location: &Path, p: Problem) {
        let line = p.line.map(|l| format!(" (line {l})")).unwrap_or_default();
        self.diagnostics.push(Diagnostic {
            path: location.to_path_buf(),
            clause: p.clause,
            message: format!("{}{line}; {}", p.message, p.hint),
            problem: Some(p),
        });
    }

    /// The bound is reached: the scope's walk ends here.
    fn stop(&mut self) {
        self.stopped = true;
        self.diagnostics.push(Diagnostic {
            path: self.base.to_path_buf(),
            clause: "agentskills.discovery.bounds",
            message: format!(
                "the {} scope holds more than {MAX_SCAN_DIRS} directories: the scan stopped there",
                self.scope.as_str()
            ),
            problem: None,
        });
    }
}

/// Whether the walk skips a directory of this name.
// spec: agentskills.discovery.skip-dirs
pub(super) fn skipped_dir(name: &[u8]) -> bool {
    matches!(name, b".git" | b"node_modules")
}

/// Whether a lenient client skips a skill with a problem under `clause`: the skill file or its
/// frontmatter cannot be read, or it has no name or no usable description. Every other problem
/// (the name's rules, the optional fields', a description too long) is cosmetic: the skill loads
/// with a diagnostic.
// spec: agentskills.lenient.unparseable
// spec: agentskills.lenient.description-missing
// spec: agentskills.lenient.name-mismatch (not fatal: loads with a diagnostic)
// spec: agentskills.lenient.name-length (not fatal: loads with a diagnostic)
pub(super) fn lenient_fatal(clause: &str) -> bool {
    [
        read::SKILL_MD_CLAUSE,
        read::FRONTMATTER_CLAUSE,
        validate::NAME_REQUIRED,
        validate::DESCRIPTION_REQUIRED,
    ]
    .contains(&clause)
}

/// Orders the skills found so that the project's come first (stable: each scope keeps its walk
/// order).
// spec: agentskills.collision.project-over-user
pub(super) fn project_first(found: &mut [Skill]) {
    found.sort_by_key(|s| s.scope != Scope::Project);
}

/// Keeps the first skill of each name (after the step `rank_scopes`), sorted by
/// the bytes of their names; each one dropped is a diagnostic.
// spec: agentskills.collision.deterministic (within a scope, the first in walk order)
fn one_per_name(mut found: Vec<Skill>, diagnostics: &mut Vec<Diagnostic>) -> Vec<Skill> {
    (steps().rank_scopes)(&mut found);
    let mut kept: Vec<Skill> = Vec::with_capacity(found.len());
    let mut index: HashMap<String, usize> = HashMap::new();
    for skill in found {
        if let Some(winner) = index.get(&skill.name).and_then(|&i| kept.get(i)) {
            // spec: agentskills.collision.warning
            diagnostics.push(Diagnostic {
                path: skill.location.clone(),
                clause: "agentskills.collision.warning",
                message: format!(
                    "the {} skill {} is shadowed by the {} skill of that name at {}",
                    skill.scope.as_str(),
                    shown(&skill.name),
                    winner.scope.as_str(),
                    winner.location.display()
                ),
                problem: None,
            });
            continue;
        }
        index.insert(skill.name.clone(), kept.len());
        kept.push(skill);
    }
    kept.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    kept
}
