//! Counting cases: how many of each verdict ([`Counts`]), the levels (MUST, SHOULD, MAY) and the
//! level of a case (the strongest among its clauses).

use super::*;
use crate::cases::clauses::{self, Level};
use crate::execution::{CaseOutcome, FailureKind, Status};

/// Counts of one area (or of the whole run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
    pub not_exercised: usize,
    pub failed: usize,
    pub known_failures: usize,
    pub fixed: usize,
    pub unsupported: usize,
    pub skipped: usize,
    pub errored: usize,
    pub not_run: usize,
}

impl Counts {
    pub fn add(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Passed => self.passed += 1,
            Verdict::NotExercised => self.not_exercised += 1,
            Verdict::Failed => self.failed += 1,
            Verdict::KnownFailure => self.known_failures += 1,
            Verdict::Fixed => self.fixed += 1,
            Verdict::Unsupported => self.unsupported += 1,
            Verdict::Skipped => self.skipped += 1,
            Verdict::Errored => self.errored += 1,
            Verdict::NotRun => self.not_run += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.passed
            + self.not_exercised
            + self.failed
            + self.known_failures
            + self.fixed
            + self.unsupported
            + self.skipped
            + self.errored
            + self.not_run
    }

    pub fn is_ok(&self) -> bool {
        self.failed == 0 && self.errored == 0 && self.fixed == 0 && self.not_run == 0
    }
}

/// The levels of the specification, strongest first.
pub const LEVELS: [Level; 3] = [Level::Must, Level::Should, Level::May];

/// `MUST`, `SHOULD` or `MAY`.
pub fn level_word(level: Level) -> &'static str {
    match level {
        Level::Must => "MUST",
        Level::Should => "SHOULD",
        Level::May => "MAY",
    }
}

pub(super) fn level_index(level: Level) -> usize {
    match level {
        Level::Must => 0,
        Level::Should => 1,
        Level::May => 2,
    }
}

/// The level a report.json spells `word` as, if it is one.
pub fn level_from_word(word: &str) -> Option<Level> {
    LEVELS.into_iter().find(|l| level_word(*l) == word)
}

/// The level of a clause id (`MUST` for an id this runner does not know).
pub fn clause_level(id: &str) -> Level {
    clauses::lookup(id).map_or(Level::Must, |c| c.level)
}

/// The level of a case: the strongest level among the clauses it cites (`MUST` when it cites
/// none this runner knows).
pub fn level_of(case_clauses: &[String]) -> Level {
    case_clauses
        .iter()
        .filter_map(|id| clauses::lookup(id))
        .map(|c| c.level)
        .min_by_key(|l| level_index(*l))
        .unwrap_or(Level::Must)
}

/// How a case failed, when it did (its status is a failure).
pub fn failure_kind(outcome: &CaseOutcome) -> Option<FailureKind> {
    match &outcome.status {
        Status::Fail(f) => Some(f.kind()),
        _ => None,
    }
}
