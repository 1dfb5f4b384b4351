//! A run as the reports see it: each case ([`ReportCase`]) with its outcome ([`CaseResult`]),
//! the implementation, the known failures and why the run stopped ([`RunReport`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::*;
use crate::cases::clauses::Level;
use crate::cases::Case;
use crate::execution::{CaseOutcome, Failure, FailureKind, Status};
use crate::protocol::ImplInfo;

/// What the reports show of a case: who it is, where it is written, what it checks. A run takes
/// it from the [`Case`]; a report.json holds all of it ([`json::from_json`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportCase {
    pub id: String,
    /// The case's one-line summary. `None` only for a report of an earlier runner (which did not
    /// write it) whose case the suite at hand does not have.
    pub summary: Option<String>,
    pub clauses: Vec<String>,
    /// The case file, as shown to people.
    pub file: String,
    /// The line of its `id`.
    pub line: usize,
    pub area: String,
    /// The strongest level among its clauses ([`level_of`]).
    pub level: Level,
    /// The case it mirrors for the legacy format, if it is such a twin.
    pub twin_of: Option<String>,
    /// The dialect whose rules it checks (SPEC.md, "Dialects").
    pub dialect: String,
    /// Whether it is a hardening case ([`Case::hardening`]).
    pub hardening: bool,
}

impl From<&Case> for ReportCase {
    fn from(case: &Case) -> ReportCase {
        ReportCase {
            id: case.id.clone(),
            summary: Some(case.summary.clone()),
            clauses: case.clauses.clone(),
            file: case.file.display().to_string(),
            line: case.line,
            area: case.area.clone(),
            level: level_of(&case.clauses),
            twin_of: case.twin_of.clone(),
            dialect: case.dialect.name.to_owned(),
            hardening: case.hardening(),
        }
    }
}

/// Every case of a run with its outcome.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub implementation: ImplInfo,
    pub cases_dir: String,
    /// The `suite` object of report.json: the version of the suite the run ran, as
    /// [`crate::suite::report_entry`] found it when the run began.
    pub suite: Value,
    /// In the order of the run (the suite's: by id).
    pub results: Vec<(ReportCase, CaseOutcome)>,
    /// Case ids the implementation is known to fail (`--known-failures`).
    pub known_failures: BTreeSet<String>,
    /// Why the run stopped before its last case, if it did.
    pub stopped: Option<Stopped>,
    /// The dialects run for information although the implementation does not claim them
    /// (`run --for-information`; SPEC.md, "Dialects"): their counts never headline.
    pub for_information: Vec<String>,
}

use crate::execution::Stopped;

/// The name the reports count hardening verdicts under (SPEC.md, "Hardening").
pub const HARDENING: &str = "hardening";

/// One case of a run, its outcome and its verdict.
#[derive(Debug, Clone, Copy)]
pub struct CaseResult<'a> {
    pub case: &'a ReportCase,
    pub outcome: &'a CaseOutcome,
    pub verdict: Verdict,
}

impl CaseResult<'_> {
    /// How the case failed, when its status is a failure (listed as known or not).
    pub fn kind(&self) -> Option<FailureKind> {
        failure_kind(self.outcome)
    }

    /// The failure, when its status is one.
    pub fn failure(&self) -> Option<&Failure> {
        match &self.outcome.status {
            Status::Fail(f) => Some(f),
            _ => None,
        }
    }
}

impl RunReport {
    /// Distinct unsafe behaviours: the cases that failed unsafely (listed as known or not), a
    /// legacy twin counted once with the case it mirrors when both did.
    pub fn unsafe_distinct(&self) -> usize {
        let unsafe_ids: BTreeSet<&str> = self
            .results
            .iter()
            .filter(
                |(_, o)| matches!(&o.status, Status::Fail(f) if f.kind() == FailureKind::Unsafe),
            )
            .map(|(c, _)| c.id.as_str())
            .collect();
        self.results
            .iter()
            .filter(|(c, _)| unsafe_ids.contains(c.id.as_str()))
            .filter(|(c, _)| c.twin_of.as_deref().is_none_or(|t| !unsafe_ids.contains(t)))
            .count()
    }

    pub fn verdict(&self, case: &ReportCase, outcome: &CaseOutcome) -> Verdict {
        Verdict::of(&outcome.status, self.known_failures.contains(&case.id))
    }

    /// Each case with its outcome and verdict, in the order of the run.
    pub fn cases(&self) -> impl Iterator<Item = CaseResult<'_>> {
        self.results.iter().map(|(case, outcome)| CaseResult {
            case,
            outcome,
            verdict: self.verdict(case, outcome),
        })
    }

    pub fn totals(&self) -> Counts {
        let mut c = Counts::default();
        for r in self.cases() {
            c.add(r.verdict);
        }
        c
    }

    pub fn by_area(&self) -> BTreeMap<String, Counts> {
        let mut m: BTreeMap<String, Counts> = BTreeMap::new();
        for r in self.cases() {
            m.entry(r.case.area.clone()).or_default().add(r.verdict);
        }
        m
    }

    /// The conformance statement of this run.
    pub fn conformance(&self) -> Conformance {
        let mut c = Conformance {
            for_information: self
                .for_information
                .iter()
                .filter(|d| {
                    crate::protocol::dialects::lookup(d)
                        .is_none_or(|known| self.implementation.claim_of(known).is_none())
                })
                .cloned()
                .collect(),
            ..Conformance::default()
        };
        for r in self.cases() {
            c.areas.entry(r.case.area.clone()).or_default().add(&r);
            c.dialects
                .entry(self.counted_under(r.case).to_owned())
                .or_default()
                .add(&r);
        }
        c
    }

    /// The dialect a case's verdict is counted under: its own, or `hardening` when the
    /// implementation does not claim it and the case ran as hardening (SPEC.md, "Hardening").
    pub fn counted_under<'c>(&self, case: &'c ReportCase) -> &'c str {
        let claimed = crate::protocol::dialects::lookup(&case.dialect)
            .is_some_and(|d| self.implementation.claim_of(d).is_some());
        if case.hardening && !claimed {
            HARDENING
        } else {
            &case.dialect
        }
    }

    /// How the reports name the counts of `dialect`: its claim (`agentskills 2026-08
    /// (lenient)`), or, for a dialect the implementation does not claim, `NAME VERSION (not
    /// claimed)`: its cases are shown for information and never headline.
    pub fn dialect_label(&self, dialect: &str) -> String {
        if dialect == HARDENING {
            return "hardening (threat model: skills from untrusted sources; exposures only)"
                .into();
        }
        let known = crate::protocol::dialects::lookup(dialect);
        let claim = known.and_then(|d| self.implementation.claim_of(d));
        match (claim, known) {
            (Some(c), _) => c.label(),
            (None, Some(d)) if self.for_information.iter().any(|f| f == d.name) => {
                format!("{} {} (not claimed; for information)", d.name, d.version)
            }
            (None, Some(d)) => format!("{} {} (not claimed)", d.name, d.version),
            (None, None) => format!("{dialect} (not claimed)"),
        }
    }

    /// One line per dialect of the run: its label and its conformance statement.
    pub fn dialect_statements(&self, conformance: &Conformance) -> Vec<String> {
        conformance
            .dialects
            .iter()
            .map(|(name, a)| a.statement(&format!("dialect {}", self.dialect_label(name))))
            .collect()
    }

    /// Ids of the cases that failed or errored, sorted (for `--write-failures`).
    pub fn failing_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .results
            .iter()
            .filter(|(_, o)| matches!(o.status, Status::Fail(_) | Status::Error { .. }))
            .map(|(c, _)| c.id.as_str())
            .collect();
        ids.sort();
        ids
    }

    /// True when the implementation never worked: it never started, or every case sent to it
    /// (not gated by features or preconditions, not left out) errored because it broke.
    pub fn all_broken(&self) -> bool {
        let mut sent = self.results.iter().filter(|(_, o)| o.status.was_sent());
        match sent.next() {
            None => self.stopped.as_ref().is_some_and(|s| s.fault.is_some()),
            Some(first) => first.1.status.is_broken() && sent.all(|(_, o)| o.status.is_broken()),
        }
    }
}
