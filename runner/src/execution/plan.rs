//! Which cases a run runs, and how it judges them: `--filter` (a case's id or clauses), the
//! slice of `--partition K/N`, and the `--known-failures` list. Every command that runs a suite
//! builds its [`Plan`] here and hands its cases to [`crate::execution::run_suite`].
//!
//! A case belongs to slice `1 + (u64 from the first 8 bytes, big-endian, of SHA-256(case id)) mod
//! N`: the same on every machine and in every order, and adding or removing a case never moves
//! another case to a different slice (`report merge` joins the slices, see
//! `reports::merge`).

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::cases::{Case, Suite};

/// The largest N of `--partition K/N`, and of a partition `report merge` reads. Reason: a merge
/// lists the missing partitions, and a CI matrix of more than 1000 jobs is not a real one; an N
/// of 2^62 in a hostile report must cost nothing.
pub const MAX_PARTITIONS: u64 = 1000;

/// Slice `index` (1-based) of `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub index: u64,
    pub of: u64,
}

/// A `--partition` that is not `K/N` with 1 <= K <= N <= [`MAX_PARTITIONS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionError {
    /// What was given.
    pub given: String,
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}`: expected K/N, slice K of N with 1 <= K <= N <= {MAX_PARTITIONS} (for example 2/3)",
            self.given
        )
    }
}

impl std::error::Error for PartitionError {}

impl FromStr for Partition {
    type Err = PartitionError;

    fn from_str(s: &str) -> Result<Partition, PartitionError> {
        let bad = || PartitionError {
            given: s.to_owned(),
        };
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let of: u64 = n.trim().parse().map_err(|_| bad())?;
        if of == 0 || of > MAX_PARTITIONS || index == 0 || index > of {
            return Err(bad());
        }
        Ok(Partition { index, of })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

/// The slice (1-based) of `of` that the case `id` belongs to.
pub fn slice_of(id: &str, of: u64) -> u64 {
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % of.max(1) + 1
}

impl Partition {
    /// Whether the case `id` is in this slice.
    pub fn holds(&self, id: &str) -> bool {
        slice_of(id, self.of) == self.index
    }
}

/// Whether `case` is selected by `pattern`: a `*` glob when it holds `*`, else a substring; it is
/// matched against the case id and each clause id.
pub fn filter_matches(pattern: &str, case: &Case) -> bool {
    std::iter::once(case.id.as_str())
        .chain(case.clauses.iter().map(String::as_str))
        .any(|s| glob(pattern, s))
}

fn glob(pattern: &str, text: &str) -> bool {
    if !pattern.contains('*') {
        return text.contains(pattern);
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    rest.is_empty()
}

/// What a run runs.
#[derive(Debug)]
pub struct Plan<'a> {
    /// Every case the filter selected, in suite order (before slicing).
    pub selected: Vec<&'a Case>,
    /// The cases this run runs: the selected ones, or the slice of them `--partition` names.
    pub cases: Vec<&'a Case>,
    /// Case ids the implementation is known to fail (`--known-failures`).
    pub known_failures: BTreeSet<String>,
}

/// Why a plan cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// No case matches `--filter`.
    NoMatch,
    /// The known-failures list cannot be read.
    KnownFailuresUnreadable(String),
    /// A line of the known-failures list names no case of the suite.
    UnknownId {
        file: PathBuf,
        line: usize,
        id: String,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::NoMatch => f.write_str("no case matches the filter"),
            PlanError::KnownFailuresUnreadable(why) => f.write_str(why),
            PlanError::UnknownId { file, line, id } => {
                // Invisible characters (a stray mark, a zero-width space) are shown escaped: an
                // id that looks right must not hide why it matches nothing.
                let shown: String = id
                    .chars()
                    .map(|c| {
                        if c.is_control() || crate::input::invisible(c) {
                            c.escape_unicode().to_string()
                        } else {
                            c.to_string()
                        }
                    })
                    .collect();
                write!(f, "{}:{line}: no case has the id `{shown}`", file.display())
            }
        }
    }
}

impl std::error::Error for PlanError {}

/// The cases of `suite` that `filter` selects (all without one) and the slice `partition`
/// names of them; no known failures yet (see [`read_known_failures`]).
pub fn select<'a>(
    suite: &'a Suite,
    filter: Option<&str>,
    partition: Option<Partition>,
) -> Result<Plan<'a>, PlanError> {
    let selected: Vec<&Case> = suite
        .cases
        .iter()
        .filter(|c| filter.is_none_or(|p| filter_matches(p, c)))
        .collect();
    if selected.is_empty() {
        return Err(PlanError::NoMatch);
    }
    let cases = match partition {
        None => selected.clone(),
        Some(p) => selected
            .iter()
            .copied()
            .filter(|c| p.holds(&c.id))
            .collect(),
    };
    Ok(Plan {
        selected,
        cases,
        known_failures: BTreeSet::new(),
    })
}

/// Reads a known-failures file: case ids, one per line; blank lines and `#` comments ignored.
pub fn read_known_failures(path: &Path, suite: &Suite) -> Result<BTreeSet<String>, PlanError> {
    // A list of case ids: far below 1 MiB for any suite (810 ids of about 40 bytes).
    let text = crate::input::read_regular_text(
        path,
        1024 * 1024,
        "a known-failures list is a text file of case ids",
    )
    .map_err(PlanError::KnownFailuresUnreadable)?;
    // An editor may save the list with a byte order mark: it is not part of the first id.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut ids = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let id = line.split('#').next().unwrap_or_default().trim();
        if id.is_empty() {
            continue;
        }
        if !suite.cases.iter().any(|c| c.id == id) {
            return Err(PlanError::UnknownId {
                file: path.to_path_buf(),
                line: n + 1,
                id: id.to_owned(),
            });
        }
        ids.insert(id.to_owned());
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_failures_list_may_start_with_a_byte_order_mark() {
        let dir = tempfile::tempdir().unwrap();
        let suite = crate::cases::load_dir(&crate::default_cases_dir()).unwrap();
        let id = &suite.cases[0].id;
        let path = dir.path().join("known.txt");
        std::fs::write(&path, format!("\u{feff}{id}  # a reason\n")).unwrap();
        let ids = read_known_failures(&path, &suite).unwrap();
        assert!(ids.contains(id));
        // An invisible character inside an id is named, escaped.
        std::fs::write(&path, format!("{id}\u{200b}\n")).unwrap();
        let e = read_known_failures(&path, &suite).unwrap_err().to_string();
        assert!(e.contains("\\u{200b}"), "{e}");
    }

    #[test]
    fn globs() {
        assert!(glob("discovery.*", "discovery.depth"));
        assert!(glob("*.depth", "discovery.depth"));
        assert!(glob("d*y.*h", "discovery.depth"));
        assert!(!glob("read.*", "discovery.depth"));
        assert!(glob("depth", "discovery.depth.eight"));
    }

    #[test]
    fn partitions_parse_and_refuse() {
        assert_eq!(
            "2/3".parse::<Partition>(),
            Ok(Partition { index: 2, of: 3 })
        );
        assert_eq!(
            " 1 / 1 ".parse::<Partition>(),
            Ok(Partition { index: 1, of: 1 })
        );
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "1/2/3", "-1/2", "1/1001"] {
            let e = bad.parse::<Partition>().expect_err(bad).to_string();
            assert!(e.contains("expected K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn slices_are_balanced_and_cover_every_case_once() {
        let ids: Vec<String> = (0..2000).map(|i| format!("area.case-{i}")).collect();
        for n in [1, 2, 3, 4, 7] {
            let parts: Vec<Partition> = (1..=n).map(|index| Partition { index, of: n }).collect();
            for id in &ids {
                assert_eq!(parts.iter().filter(|p| p.holds(id)).count(), 1, "{id} {n}");
            }
            // Statistically balanced: each slice within 30% of its fair share.
            for p in &parts {
                let held = ids.iter().filter(|id| p.holds(id)).count() as u64;
                let fair = 2000 / n;
                assert!(held * 10 > fair * 7 && held * 10 < fair * 13, "{p}: {held}");
            }
        }
    }
}
