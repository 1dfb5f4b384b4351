//! The conformance statement (SPEC.md, "How verdicts are judged"): counts per area and level
//! ([`LevelCounts`]), one plain line per area ([`AreaConformance`]), and the run's
//! ([`Conformance`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use super::*;
use crate::execution::{FailureKind, Status};

/// Counts of one level of one area in the conformance statement: each case counted once.
/// `unsafe_failures` and `different_failures` are failures not listed as known; a listed failure
/// (or error) is a `known_failures`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelCounts {
    pub passed: usize,
    pub unsafe_failures: usize,
    pub permissive_failures: usize,
    pub different_failures: usize,
    /// Passed, but a mechanism the case exercises is one the implementation lacks.
    pub not_exercised: usize,
    pub known_failures: usize,
    pub fixed: usize,
    pub unsupported: usize,
    pub skipped: usize,
    pub errored: usize,
    pub not_run: usize,
}

impl LevelCounts {
    pub(super) fn add(&mut self, verdict: Verdict, kind: Option<FailureKind>) {
        match (verdict, kind) {
            (Verdict::Failed, Some(FailureKind::Unsafe)) => self.unsafe_failures += 1,
            (Verdict::Failed, Some(FailureKind::Permissive)) => self.permissive_failures += 1,
            (Verdict::Failed, _) => self.different_failures += 1,
            (Verdict::Passed, _) => self.passed += 1,
            (Verdict::NotExercised, _) => self.not_exercised += 1,
            (Verdict::KnownFailure, _) => self.known_failures += 1,
            (Verdict::Fixed, _) => self.fixed += 1,
            (Verdict::Unsupported, _) => self.unsupported += 1,
            (Verdict::Skipped, _) => self.skipped += 1,
            (Verdict::Errored, _) => self.errored += 1,
            (Verdict::NotRun, _) => self.not_run += 1,
        }
    }

    /// Adds `o` into these counts.
    pub fn merge(&mut self, o: &LevelCounts) {
        self.passed += o.passed;
        self.unsafe_failures += o.unsafe_failures;
        self.permissive_failures += o.permissive_failures;
        self.different_failures += o.different_failures;
        self.not_exercised += o.not_exercised;
        self.known_failures += o.known_failures;
        self.fixed += o.fixed;
        self.unsupported += o.unsupported;
        self.skipped += o.skipped;
        self.errored += o.errored;
        self.not_run += o.not_run;
    }

    /// Each count with its name in report.json's `conformance`, in that order.
    pub fn named(&self) -> [(&'static str, usize); 11] {
        [
            ("passed", self.passed),
            ("not_exercised", self.not_exercised),
            ("unsafe", self.unsafe_failures),
            ("permissive", self.permissive_failures),
            ("different", self.different_failures),
            ("known_failures", self.known_failures),
            ("fixed", self.fixed),
            ("unsupported", self.unsupported),
            ("skipped", self.skipped),
            ("errored", self.errored),
            ("not_run", self.not_run),
        ]
    }

    /// Cases the implementation was judged on: run, and neither gated nor left out.
    pub fn judged(&self) -> usize {
        self.passed
            + self.unsafe_failures
            + self.permissive_failures
            + self.different_failures
            + self.known_failures
            + self.fixed
            + self.errored
    }

    /// Cases the implementation was not judged on: gated, skipped, not run, or passed without
    /// reaching what they check (not exercised).
    pub fn total(&self) -> usize {
        self.judged() + self.not_exercised + self.unsupported + self.skipped + self.not_run
    }

    pub(super) fn to_json(self) -> Value {
        Value::Object(
            self.named()
                .into_iter()
                .map(|(name, n)| (name.to_owned(), Value::from(n)))
                .collect(),
        )
    }
}

/// What one area (a directory of cases) shows about the implementation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AreaConformance {
    /// Counts per level, in the order of [`LEVELS`].
    pub levels: [LevelCounts; 3],
    /// Failed cases of each kind that are listed as known failures (counted in
    /// `known_failures`).
    pub unsafe_known: usize,
    pub permissive_known: usize,
    pub different_known: usize,
    /// Errored cases listed as known failures (counted in `known_failures`).
    pub errored_known: usize,
    /// The features the UNSUPPORTED cases need.
    pub unsupported_features: BTreeSet<String>,
    /// Cases that reached the implementation.
    pub sent: usize,
    /// Failed cases whose every mismatch is explained by a missing tool of the specification.
    pub missing_tool_failures: usize,
    /// Those tools.
    pub missing_tools: BTreeSet<String>,
}

impl AreaConformance {
    /// All levels together.
    pub fn all(&self) -> LevelCounts {
        let mut c = LevelCounts::default();
        for l in &self.levels {
            c.merge(l);
        }
        c
    }

    /// Counts `r` in.
    pub fn add(&mut self, r: &CaseResult<'_>) {
        let kind = r.kind();
        self.levels[level_index(r.case.level)].add(r.verdict, kind);
        match (r.verdict, kind) {
            (Verdict::KnownFailure, Some(FailureKind::Unsafe)) => self.unsafe_known += 1,
            (Verdict::KnownFailure, Some(FailureKind::Permissive)) => self.permissive_known += 1,
            (Verdict::KnownFailure, Some(FailureKind::Different)) => self.different_known += 1,
            (Verdict::KnownFailure, None) => self.errored_known += 1,
            _ => {}
        }
        match &r.outcome.status {
            Status::Unsupported(missing) => self
                .unsupported_features
                .extend(missing.iter().map(|f| f.as_str().to_owned())),
            Status::Fail(f) => {
                let tools = f.missing_tools();
                if !tools.is_empty() {
                    self.missing_tool_failures += 1;
                    self.missing_tools
                        .extend(tools.into_iter().map(str::to_owned));
                }
            }
            _ => {}
        }
        if r.outcome.status.was_sent() {
            self.sent += 1;
        }
    }

    /// The cases of `results` counted as one area (or one clause).
    pub fn of<'a>(results: impl IntoIterator<Item = &'a CaseResult<'a>>) -> AreaConformance {
        let mut a = AreaConformance::default();
        for r in results {
            a.add(r);
        }
        a
    }

    /// Unsafe failures, listed as known or not.
    pub fn unsafe_total(&self) -> usize {
        self.all().unsafe_failures + self.unsafe_known
    }

    /// Permissive failures, listed as known or not.
    pub fn permissive_total(&self) -> usize {
        self.all().permissive_failures + self.permissive_known
    }

    /// What a cell of a table shows instead of `0/N` passed when the implementation was not
    /// judged on these cases: `not implemented: skill_run_script missing` (every case that
    /// reached it failed only for a missing tool), `unsupported (needs hitl)` (every case
    /// gated), `not run`, or `not checked` (gated, skipped or not run). `None` otherwise.
    pub fn short(&self) -> Option<String> {
        let all = self.all();
        if all.total() == 0 {
            return None;
        }
        if self.not_implemented() {
            let tools: Vec<&str> = self.missing_tools.iter().map(String::as_str).collect();
            return Some(format!("not implemented: {} missing", tools.join(" and ")));
        }
        if all.judged() > 0 {
            return None;
        }
        let needs: Vec<&str> = self
            .unsupported_features
            .iter()
            .map(String::as_str)
            .collect();
        Some(if all.unsupported == all.total() {
            format!("unsupported (needs {})", needs.join(", "))
        } else if all.not_exercised == all.total() {
            "not exercised (the implementation lacks what it checks)".to_owned()
        } else if all.not_run == all.total() {
            "not run".to_owned()
        } else if all.skipped == all.total() {
            "skipped (a precondition is not met here)".to_owned()
        } else {
            "not checked".to_owned()
        })
    }

    /// Whether the implementation does not have what this area checks: every case that reached
    /// it failed only because a tool of the specification is missing (SPEC.md, "How verdicts
    /// are judged").
    pub fn not_implemented(&self) -> bool {
        self.sent > 0 && self.missing_tool_failures == self.sent
    }

    /// `3 MUST` / `MUST` for a count spread over levels.
    pub(super) fn by_level(&self, count: impl Fn(&LevelCounts) -> usize) -> String {
        let parts: Vec<(usize, &str)> = LEVELS
            .iter()
            .zip(&self.levels)
            .map(|(l, c)| (count(c), level_word(*l)))
            .filter(|(n, _)| *n > 0)
            .collect();
        match parts.as_slice() {
            [(_, word)] => (*word).to_owned(),
            _ => parts
                .iter()
                .map(|(n, w)| format!("{n} {w}"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// `MUST 202/202 passed` for each level with judged cases.
    pub(super) fn passed_fractions(&self) -> String {
        LEVELS
            .iter()
            .zip(&self.levels)
            .filter(|(_, c)| c.judged() > 0)
            .map(|(l, c)| {
                format!(
                    "{} {}/{} passed",
                    level_word(*l),
                    c.passed + c.fixed,
                    c.judged()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The cases left aside (unsupported, skipped, not run), as `; 4 UNSUPPORTED (needs x)`.
    pub(super) fn aside(&self) -> String {
        let all = self.all();
        let mut s = String::new();
        if all.unsupported > 0 {
            let needs: Vec<&str> = self
                .unsupported_features
                .iter()
                .map(String::as_str)
                .collect();
            let _ = write!(
                s,
                "; {} UNSUPPORTED (needs {})",
                all.unsupported,
                needs.join(", ")
            );
        }
        if all.not_exercised > 0 {
            let _ = write!(
                s,
                "; {} not exercised (passed, but the implementation lacks what {} check)",
                all.not_exercised,
                plural(all.not_exercised, "it would", "they would")
            );
        }
        if all.skipped > 0 {
            let _ = write!(
                s,
                "; {} skipped (a precondition is not met here)",
                all.skipped
            );
        }
        if all.not_run > 0 {
            let _ = write!(s, "; {} not run", all.not_run);
        }
        s
    }

    /// The plain line for `area`, e.g. `discovery: conforms (MUST 202/202 passed)`.
    pub fn statement(&self, area: &str) -> String {
        let all = self.all();
        let aside = self.aside();
        if all.judged() == 0 {
            if all.not_run == all.total() {
                return format!(
                    "{area}: not run ({} {}; the run stopped early)",
                    all.total(),
                    plural(all.total(), "case", "cases")
                );
            }
            return format!("{area}: not checked ({})", aside.trim_start_matches("; "));
        }
        if self.not_implemented() {
            let tools: Vec<&str> = self.missing_tools.iter().map(String::as_str).collect();
            let run = if self.sent == 1 {
                "the one case run".to_owned()
            } else {
                format!("all {} cases run", self.sent)
            };
            return format!(
                "{area}: not implemented ({} missing in {run}{aside})",
                tools.join(" and "),
            );
        }
        let mut failures = Vec::new();
        if all.unsafe_failures > 0 {
            failures.push(format!(
                "{} unsafe {} ({})",
                all.unsafe_failures,
                plural(all.unsafe_failures, "failure", "failures"),
                self.by_level(|c| c.unsafe_failures)
            ));
        }
        if all.permissive_failures > 0 {
            failures.push(format!(
                "{} permissive ({})",
                all.permissive_failures,
                self.by_level(|c| c.permissive_failures)
            ));
        }
        if all.different_failures > 0 {
            let mut d = format!(
                "{} safe but different ({})",
                all.different_failures,
                self.by_level(|c| c.different_failures)
            );
            if self.missing_tool_failures > 0 {
                let tools: Vec<&str> = self.missing_tools.iter().map(String::as_str).collect();
                let _ = write!(
                    d,
                    ", {} of them only because {} {} missing",
                    self.missing_tool_failures,
                    tools.join(" and "),
                    plural(tools.len(), "is", "are")
                );
            }
            failures.push(d);
        }
        if all.errored > 0 {
            failures.push(format!(
                "{} errored ({})",
                all.errored,
                self.by_level(|c| c.errored)
            ));
        }
        if all.known_failures > 0 {
            let mut k = format!("{} known failures", all.known_failures);
            let kinds: Vec<String> = [
                (self.unsafe_known, "unsafe"),
                (self.permissive_known, "permissive"),
                (self.errored_known, "errored"),
            ]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .enumerate()
            .map(|(i, (n, w))| {
                if i == 0 {
                    format!("{n} of them {w}")
                } else {
                    format!("{n} {w}")
                }
            })
            .collect();
            if !kinds.is_empty() {
                let _ = write!(k, " ({})", kinds.join(", "));
            }
            failures.push(k);
        }
        if all.fixed > 0 {
            failures.push(format!("{} listed as known failures but passed", all.fixed));
        }
        let fractions = self.passed_fractions();
        if failures.is_empty() {
            if all.not_run > 0 {
                return format!("{area}: no failure in the cases run ({fractions}{aside})");
            }
            return format!("{area}: conforms ({fractions}{aside})");
        }
        format!("{area}: {}; {fractions}{aside}", failures.join(", "))
    }
}

pub(super) fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// The conformance statement of a run: per area and level, and the unsafe and different
/// failures of the whole run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conformance {
    pub areas: BTreeMap<String, AreaConformance>,
    /// The same cases counted by dialect (SPEC.md, "Dialects").
    pub dialects: BTreeMap<String, AreaConformance>,
    /// The dialects run for information, unclaimed: their permissive and different failures
    /// are in their own dialect's statement and never in the run's totals (the headline). An
    /// unsafe failure counts wherever it is: a crossing is one whatever the dialect.
    pub for_information: BTreeSet<String>,
}

impl Conformance {
    /// Every case that failed unsafely, listed as known or not.
    pub fn unsafe_total(&self) -> usize {
        self.areas
            .values()
            .map(|a| a.all().unsafe_failures + a.unsafe_known)
            .sum()
    }

    /// Of those, the ones listed as known failures.
    pub fn unsafe_known(&self) -> usize {
        self.areas.values().map(|a| a.unsafe_known).sum()
    }

    /// The counts the headline speaks of: every dialect's, less the dialects run for
    /// information ([`Conformance::for_information`]). The dialects partition the same cases as
    /// the areas.
    fn headline(&self) -> impl Iterator<Item = &AreaConformance> {
        self.dialects
            .iter()
            .filter(|(name, _)| !self.for_information.contains(*name))
            .map(|(_, a)| a)
    }

    /// Every case that failed permissively, listed as known or not, in the dialects the
    /// headline speaks of.
    pub fn permissive_total(&self) -> usize {
        self.headline()
            .map(|a| a.all().permissive_failures + a.permissive_known)
            .sum()
    }

    /// Of those, the ones listed as known failures.
    pub fn permissive_known(&self) -> usize {
        self.headline().map(|a| a.permissive_known).sum()
    }

    /// Every case that failed safely but differently, listed as known or not, in the dialects
    /// the headline speaks of.
    pub fn different_total(&self) -> usize {
        self.headline()
            .map(|a| a.all().different_failures + a.different_known)
            .sum()
    }

    /// Of those, the ones listed as known failures.
    pub fn different_known(&self) -> usize {
        self.headline().map(|a| a.different_known).sum()
    }

    /// Every errored case, listed as known or not: an error is never hidden by a list (it says
    /// the implementation could not be judged there), in every dialect.
    pub fn errored_total(&self) -> usize {
        self.areas
            .values()
            .map(|a| a.all().errored + a.errored_known)
            .sum()
    }

    /// Of those, the ones listed as known failures.
    pub fn errored_known(&self) -> usize {
        self.areas.values().map(|a| a.errored_known).sum()
    }

    /// The permissive and different failures, listed as known or not, of the dialects run for
    /// information: counted in their dialect's statement, never in the headline's kinds.
    pub fn for_information_failures(&self) -> usize {
        self.dialects
            .iter()
            .filter(|(name, _)| self.for_information.contains(*name))
            .map(|(_, a)| {
                let c = a.all();
                c.permissive_failures
                    + c.different_failures
                    + a.permissive_known
                    + a.different_known
            })
            .sum()
    }

    /// Every area and level added up.
    pub fn all(&self) -> LevelCounts {
        let mut c = LevelCounts::default();
        for a in self.areas.values() {
            c.merge(&a.all());
        }
        c
    }
}
