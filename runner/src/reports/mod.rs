//! Reports: everything a run's results become, in one place. [`RunReport`] is a run: each
//! case ([`ReportCase`]) with its outcome, the implementation, the known failures and why the
//! run stopped early. From it come the verdict of each case ([`Verdict`]), the counts, the
//! conformance statement per area and level with one plain line per area ([`Conformance`]), the
//! terminal summary and its `result:` line, the text of each non-passing case ([`describe`]),
//! report.json ([`json`]) and junit.xml. report.json reads back into the `RunReport` it was
//! written from ([`json::from_json`]), so `report merge` ([`merge`]), `report markdown`
//! ([`markdown`]) and `report html` ([`html`]) use these same functions rather than wording of
//! their own.
//!
//! Text that reaches a terminal or `junit.xml` goes through [`visible`]: an implementation's
//! name, messages and stderr can hold control characters, which must neither drive the terminal
//! nor make the XML ill-formed. A value printed within one line goes through [`one_line`],
//! which escapes line breaks too, so that it cannot forge a line of the runner's own.

pub mod html;
pub mod json;
pub mod markdown;
pub mod merge;
pub mod show;
pub mod view;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::cases::clauses::{self, Level};
use crate::cases::expect::Mismatch;
use crate::cases::Case;
use crate::execution::{CaseOutcome, Failure, FailureKind, Status};
use crate::protocol::fault::Fault;
use crate::protocol::ImplInfo;

pub use json::to_json;

/// Whether `c` is written as an escape by [`visible`] (`keep_breaks`) or [`one_line`].
fn needs_escape(c: char, keep_breaks: bool) -> bool {
    (c.is_control() && !(keep_breaks && (c == '\n' || c == '\t')))
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{2066}'..='\u{2069}'
                | '\u{fffe}'
                | '\u{ffff}'
        )
}

fn escaped(text: &str, keep_breaks: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, keep_breaks)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c, keep_breaks) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every control character but `\n` and `\t` (C0, DEL, C1), the Unicode
/// bidirectional controls, the line and paragraph separators and the non-characters U+FFFE/U+FFFF written as `\u{1b}`-style
/// escapes. What remains is safe on a terminal and allowed in XML 1.0. For a block of lines the
/// runner composes; a value printed within one line goes through [`one_line`].
pub fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

/// `text` as [`visible`] writes it, with `\n` and `\t` escaped too (`\u{a}`, `\u{9}`): for
/// anything from outside the runner (an implementation's name, messages and values, a skill
/// directory's name, a case file's text) that is printed within one line, so that it can
/// neither start a line of its own (a forged `result: ok` line) nor drive the terminal. Every
/// printer uses it: the terminal summary, failure output, `check-tree`, `show`, `smoke`.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

/// A case's outcome judged against the implementation's list of known failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Failed,
    /// Failed or errored, and listed as a known failure.
    KnownFailure,
    /// Passed although listed as a known failure: the list is out of date.
    Fixed,
    Unsupported,
    /// A precondition of the case is not met where the runner runs (for example running as root).
    Skipped,
    Errored,
    /// The run stopped before this case.
    NotRun,
}

impl Verdict {
    pub fn of(status: &Status, known: bool) -> Verdict {
        match (status, known) {
            (Status::Pass, false) => Verdict::Passed,
            (Status::Pass, true) => Verdict::Fixed,
            (Status::Unsupported(_), _) => Verdict::Unsupported,
            (Status::Skipped(_), _) => Verdict::Skipped,
            (Status::Fail(_) | Status::Error { .. }, true) => Verdict::KnownFailure,
            (Status::Fail(_), false) => Verdict::Failed,
            (Status::Error { .. }, false) => Verdict::Errored,
            (Status::NotRun, _) => Verdict::NotRun,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Passed => "pass",
            Verdict::Failed => "fail",
            Verdict::KnownFailure => "known-failure",
            Verdict::Fixed => "fixed",
            Verdict::Unsupported => "unsupported",
            Verdict::Skipped => "skipped",
            Verdict::Errored => "error",
            Verdict::NotRun => "not-run",
        }
    }

    /// Whether this verdict makes the run fail.
    pub fn is_bad(self) -> bool {
        matches!(
            self,
            Verdict::Failed | Verdict::Errored | Verdict::Fixed | Verdict::NotRun
        )
    }
}

/// Counts of one area (or of the whole run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
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

fn level_index(level: Level) -> usize {
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

/// `kind` in capitals, as failures are labelled for people: `UNSAFE`, `PERMISSIVE` or
/// `DIFFERENT`.
pub fn kind_label(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Unsafe => "UNSAFE",
        FailureKind::Permissive => "PERMISSIVE",
        FailureKind::Different => "DIFFERENT",
    }
}

/// A failure's kind as its messages start: `UNSAFE (outside-content, code-ran)` (with the
/// exposures the run showed), `PERMISSIVE` or `DIFFERENT`.
pub fn failure_label(f: &Failure) -> String {
    let kind = f.kind();
    let exposures = f.exposures();
    if kind != FailureKind::Unsafe || exposures.is_empty() {
        return kind_label(kind).to_owned();
    }
    let words: Vec<&str> = exposures.iter().map(|e| e.word()).collect();
    format!("{} ({})", kind_label(kind), words.join(", "))
}

/// A mismatch's kind as reports print it: `unsafe: outside-content`, `permissive` or
/// `different`.
pub fn mismatch_label(m: &Mismatch) -> String {
    match m.kind.exposure() {
        Some(e) => format!("{}: {}", m.kind.word(), e.word()),
        None => m.kind.word().to_owned(),
    }
}

/// Counts of one level of one area in the conformance statement: each case counted once.
/// `unsafe_failures` and `different_failures` are failures not listed as known; a listed failure
/// (or error) is a `known_failures`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelCounts {
    pub passed: usize,
    pub unsafe_failures: usize,
    pub permissive_failures: usize,
    pub different_failures: usize,
    pub known_failures: usize,
    pub fixed: usize,
    pub unsupported: usize,
    pub skipped: usize,
    pub errored: usize,
    pub not_run: usize,
}

impl LevelCounts {
    fn add(&mut self, verdict: Verdict, kind: Option<FailureKind>) {
        match (verdict, kind) {
            (Verdict::Failed, Some(FailureKind::Unsafe)) => self.unsafe_failures += 1,
            (Verdict::Failed, Some(FailureKind::Permissive)) => self.permissive_failures += 1,
            (Verdict::Failed, _) => self.different_failures += 1,
            (Verdict::Passed, _) => self.passed += 1,
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
        self.known_failures += o.known_failures;
        self.fixed += o.fixed;
        self.unsupported += o.unsupported;
        self.skipped += o.skipped;
        self.errored += o.errored;
        self.not_run += o.not_run;
    }

    /// Each count with its name in report.json's `conformance`, in that order.
    pub fn named(&self) -> [(&'static str, usize); 10] {
        [
            ("passed", self.passed),
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

    pub fn total(&self) -> usize {
        self.judged() + self.unsupported + self.skipped + self.not_run
    }

    fn to_json(self) -> Value {
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
    fn by_level(&self, count: impl Fn(&LevelCounts) -> usize) -> String {
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
    fn passed_fractions(&self) -> String {
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
    fn aside(&self) -> String {
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
                    ", {} of them only because {} is missing",
                    self.missing_tool_failures,
                    tools.join(" and ")
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

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
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

    /// Every case that failed permissively, listed as known or not.
    pub fn permissive_total(&self) -> usize {
        self.areas
            .values()
            .map(|a| a.all().permissive_failures + a.permissive_known)
            .sum()
    }

    /// Of those, the ones listed as known failures.
    pub fn permissive_known(&self) -> usize {
        self.areas.values().map(|a| a.permissive_known).sum()
    }

    /// Every case that failed safely but differently, listed as known or not.
    pub fn different_total(&self) -> usize {
        self.areas
            .values()
            .map(|a| a.all().different_failures + a.different_known)
            .sum()
    }

    /// Of those, the ones listed as known failures.
    pub fn different_known(&self) -> usize {
        self.areas.values().map(|a| a.different_known).sum()
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

/// How a case failed, when it did (its status is a failure).
pub fn failure_kind(outcome: &CaseOutcome) -> Option<FailureKind> {
    match &outcome.status {
        Status::Fail(f) => Some(f.kind()),
        _ => None,
    }
}

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
}

pub use crate::execution::Stopped;

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
        let mut c = Conformance::default();
        for r in self.cases() {
            c.areas.entry(r.case.area.clone()).or_default().add(&r);
        }
        c
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

/// The end of a stderr tail that a person reads: its last [`TAIL_LINES`] lines, at most
/// [`TAIL_BYTES`] bytes.
fn tail_for_people(tail: &str) -> &str {
    let mut start = tail.len().saturating_sub(TAIL_BYTES);
    while !tail.is_char_boundary(start) {
        start += 1;
    }
    let body = tail.trim_end_matches('\n');
    if let Some((i, _)) = body.rmatch_indices('\n').nth(TAIL_LINES - 1) {
        start = start.max(i + 1);
    }
    &tail[start..]
}

/// Lines of an adapter's stderr shown in the terminal and in junit.xml.
pub const TAIL_LINES: usize = 20;
/// Bytes of an adapter's stderr shown in the terminal and in junit.xml.
pub const TAIL_BYTES: usize = 2048;

/// The lines that tell what is known about a breakage: the unanswered request and the stderr
/// tail, indented by `indent`.
pub fn describe_fault(fault: &Fault, indent: &str) -> String {
    let mut s = String::new();
    if let Some(r) = &fault.unanswered {
        let _ = writeln!(s, "{indent}unanswered request: {r}");
    }
    match fault.stderr_tail.as_deref() {
        Some("") => {
            let _ = writeln!(s, "{indent}adapter stderr: (nothing)");
        }
        Some(tail) => {
            let shown = tail_for_people(tail);
            if shown.len() < tail.len() {
                let _ = writeln!(
                    s,
                    "{indent}adapter stderr (its last {} bytes; report.json has {}):",
                    shown.len(),
                    tail.len()
                );
            } else {
                let _ = writeln!(s, "{indent}adapter stderr (its last {} bytes):", tail.len());
            }
            for line in shown.lines() {
                let _ = writeln!(s, "{indent}  {}", one_line(line));
            }
        }
        None => {}
    }
    s
}

/// The detailed text of one non-passing case (escaped with [`visible`]).
pub fn describe(case: &ReportCase, outcome: &CaseOutcome) -> String {
    visible(&describe_raw(case, outcome)).into_owned()
}

fn describe_raw(case: &ReportCase, outcome: &CaseOutcome) -> String {
    let mut s = String::new();
    // Every value on one line: a line break in any of them cannot start a line of its own.
    let id = one_line(&case.id);
    let loc = format!("{}:{}", one_line(&case.file), case.line);
    match &outcome.status {
        Status::Pass => {
            let _ = writeln!(s, "PASS {id}  ({loc})");
        }
        Status::Fail(f) => {
            let kind = f.kind();
            let why = match kind {
                FailureKind::Unsafe => "the run shows a boundary crossed",
                FailureKind::Permissive => {
                    "accepted what the specification requires refused; no crossing shown"
                }
                FailureKind::Different => "safe, but not the specified answer",
            };
            let missing = f.missing_tools();
            let missing = if missing.is_empty() {
                String::new()
            } else {
                format!(" ({} is missing)", missing.join(" and "))
            };
            // The kind on a line of its own: tools and tests match the `FAIL <id>` line exactly.
            let _ = writeln!(s, "FAIL {id}");
            let _ = writeln!(s, "  {}: {why}{missing}", kind_label(kind));
            for e in f.exposures() {
                let _ = writeln!(s, "  exposure {}: {}", e.word(), e.meaning());
            }
            if let Some(summary) = &case.summary {
                let _ = writeln!(s, "  {}", one_line(summary));
            }
            let _ = writeln!(
                s,
                "  at {}:{} (step {}: {})",
                one_line(&case.file),
                f.line,
                f.step,
                one_line(&f.label)
            );
            let _ = writeln!(s, "  clauses: {}", one_line(&case.clauses.join(", ")));
            for m in &f.mismatches {
                let _ = writeln!(s, "  [{}] {}:", mismatch_label(m), one_line(&m.what));
                let _ = writeln!(s, "    expected: {}", one_line(&m.expected));
                let _ = writeln!(s, "    actual:   {}", one_line(&m.actual));
            }
        }
        Status::Skipped(why) => {
            let _ = writeln!(s, "SKIPPED {id}  ({loc}): {}", one_line(why));
        }
        Status::Unsupported(missing) => {
            let names: Vec<&str> = missing.iter().map(|f| f.as_str()).collect();
            let _ = writeln!(s, "UNSUPPORTED {id}  ({loc}): needs {}", names.join(", "));
        }
        Status::Error { message, fault, .. } => {
            let _ = writeln!(s, "ERROR {id}  ({loc})");
            for line in message.lines() {
                let _ = writeln!(s, "  {}", one_line(line));
            }
            if let Some(f) = fault {
                s.push_str(&describe_fault(f, "  "));
            }
        }
        Status::NotRun => {
            let _ = writeln!(s, "NOT RUN {id}  ({loc}): the run stopped before this case");
        }
    }
    s
}

/// The summary table printed at the end of a run (escaped with [`visible`]).
pub fn summary_text(report: &RunReport) -> String {
    visible(&summary_raw(report)).into_owned()
}

fn summary_raw(report: &RunReport) -> String {
    let mut s = String::new();
    let info = &report.implementation;
    if info.name.is_empty() && info.version.is_empty() {
        let _ = writeln!(s, "implementation: unknown (no handshake)");
    } else {
        let _ = writeln!(
            s,
            "implementation: {} {}",
            one_line(&info.name),
            one_line(&info.version)
        );
    }
    let conformance = report.conformance();
    let row = |s: &mut String, name: &str, level: &str, c: &LevelCounts| {
        let _ = writeln!(
            s,
            "{:<12} {:<6} {:>6} {:>6} {:>10} {:>9} {:>5} {:>11} {:>7} {:>7} {:>7}",
            name,
            level,
            c.passed,
            c.unsafe_failures,
            c.permissive_failures,
            c.different_failures,
            c.known_failures,
            c.unsupported,
            c.skipped,
            c.errored,
            c.not_run
        );
    };
    let _ = writeln!(
        s,
        "{:<12} {:<6} {:>6} {:>6} {:>10} {:>9} {:>5} {:>11} {:>7} {:>7} {:>7}",
        "area",
        "level",
        "passed",
        "unsafe",
        "permissive",
        "different",
        "known",
        "unsupported",
        "skipped",
        "errored",
        "not run"
    );
    for (area, a) in &conformance.areas {
        for (level, c) in LEVELS.iter().zip(&a.levels) {
            if c.total() > 0 {
                row(&mut s, &one_line(area), level_word(*level), c);
            }
        }
    }
    row(&mut s, "total", "", &conformance.all());
    let _ = writeln!(s);
    for (area, a) in &conformance.areas {
        let _ = writeln!(s, "{}", one_line(&a.statement(area)));
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "result: {}", result_line(report, &conformance));
    if let Some(stopped) = &report.stopped {
        let _ = writeln!(s, "stopped early: {}", one_line(&stopped.reason));
    }
    s
}

/// The word a run is headlined with (`result: WORD.`): the worst kind of failure it shows,
/// listed as known or not — `UNSAFE` when any case failed unsafely, else `PERMISSIVE` when any
/// failed permissively — else `FAILED` when the run fails (a failure or error not listed as
/// known, a listed case that passed, cases not run), else `ok`. The exit code does not follow
/// the word: known failures of any kind leave the run passing.
pub fn result_word(report: &RunReport, conformance: &Conformance) -> &'static str {
    if conformance.unsafe_total() > 0 {
        "UNSAFE"
    } else if conformance.permissive_total() > 0 {
        "PERMISSIVE"
    } else if !report.totals().is_ok() {
        "FAILED"
    } else {
        "ok"
    }
}

/// The run's overall line (the summary prints it after `result: `): [`result_word`], the
/// unsafe, permissive and different failures, then the other counts. `conformance` is the
/// report's.
pub fn result_line(report: &RunReport, conformance: &Conformance) -> String {
    let t = report.totals();
    let verdict = result_word(report, conformance);
    let with_known = |n: usize, what: &str, known: usize| {
        if known > 0 {
            format!("{n} {what} ({known} of them listed as known)")
        } else {
            format!("{n} {what}")
        }
    };
    let mut line = format!(
        "{verdict}. {}; {}; {}; {} passed; {} unsupported; {} errored; {} cases",
        with_known(
            conformance.unsafe_total(),
            "unsafe",
            conformance.unsafe_known()
        ),
        with_known(
            conformance.permissive_total(),
            "permissive",
            conformance.permissive_known()
        ),
        with_known(
            conformance.different_total(),
            "safe but different",
            conformance.different_known()
        ),
        t.passed,
        t.unsupported,
        t.errored,
        t.total()
    );
    if t.not_run > 0 {
        line.push_str(&format!(" ({} not run: the run stopped early)", t.not_run));
    }
    if t.skipped > 0 {
        line.push_str(&format!(
            " ({} skipped: {})",
            t.skipped,
            skip_reasons(report)
        ));
    }
    if t.known_failures > 0 || t.fixed > 0 {
        line.push_str(&format!(
            " ({} known failures; {} listed as known failures but passed: remove them from the list)",
            t.known_failures, t.fixed
        ));
    }
    line
}

/// Why the run's skipped cases were skipped, in words, without `-v`: the one reason (`needs a
/// runner that is not root, because root ignores file permissions`), or each with its count, in
/// the order first met. A case skipped with no reason (a report from elsewhere) counts as `a
/// precondition is not met here`.
fn skip_reasons(report: &RunReport) -> String {
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for r in report.cases().filter(|r| r.verdict == Verdict::Skipped) {
        let why = match &r.outcome.status {
            Status::Skipped(why) if !why.trim().is_empty() => why.as_str(),
            _ => "a precondition is not met here",
        };
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, n)) => *n += 1,
            None => reasons.push((why, 1)),
        }
    }
    match reasons.as_slice() {
        [(why, _)] => one_line(why).into_owned(),
        _ => reasons
            .iter()
            .map(|(why, n)| format!("{n} {}", one_line(why)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Writes `report.json` (with `partition` when the run is one slice of a run) and `junit.xml`
/// of `report` into `dir`.
pub fn write(report: &RunReport, dir: &Path, partition: Option<&Value>) -> std::io::Result<()> {
    let mut json = to_json(report);
    if let Some(p) = partition {
        json["partition"] = p.clone();
    }
    write_files(dir, &json, &junit(report).map_err(std::io::Error::other)?)
}

/// The files [`write_files`] writes into a report directory.
pub const REPORT_FILES: [&str; 2] = ["report.json", "junit.xml"];

/// Writes `report.json` (pretty, with a final newline) and `junit.xml` into `dir`.
pub fn write_files(dir: &Path, report_json: &Value, junit_xml: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(report_json).map_err(std::io::Error::other)?;
    let [json_file, junit_file] = REPORT_FILES;
    std::fs::write(dir.join(json_file), text + "\n")?;
    std::fs::write(dir.join(junit_file), junit_xml)
}

/// The one-line message of a failure in junit.xml: `UNSAFE (exposure, ...):`, `PERMISSIVE:` or
/// `DIFFERENT:`, the step, and the first mismatch of that kind.
fn failure_message(f: &Failure) -> String {
    let kind = f.kind();
    let first = f
        .mismatches
        .iter()
        .find(|m| crate::execution::FailureKind::of(m.kind) == kind);
    let what = first.map_or(String::new(), |m| {
        format!(": {}: expected {}, actual {}", m.what, m.expected, m.actual)
    });
    format!("{}: step {} ({}){what}", failure_label(f), f.step, f.label)
}

/// junit.xml of a run: one suite per area, one test case per case. Failures say
/// `UNSAFE (exposure, ...):`, `PERMISSIVE:` or `DIFFERENT:` first; known failures, unsupported,
/// skipped and not-run cases are skipped ones.
pub fn junit(report: &RunReport) -> Result<String, quick_junit::SerializeError> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut out = Report::new("skillspec");
    for (area, _) in report.by_area() {
        let mut suite = TestSuite::new(visible(&area).into_owned());
        for r in report.cases().filter(|r| r.case.area == area) {
            let status = match r.verdict {
                Verdict::Passed => TestCaseStatus::success(),
                Verdict::Failed => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    if let Some(f) = r.failure() {
                        s.set_message(one_line(&failure_message(f)).into_owned());
                    }
                    s.set_description(describe(r.case, r.outcome));
                    s
                }
                Verdict::Fixed => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_description(
                        "listed as a known failure, but passed: remove it from the list",
                    );
                    s
                }
                Verdict::Errored => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                    s.set_description(describe(r.case, r.outcome));
                    s
                }
                Verdict::Unsupported
                | Verdict::KnownFailure
                | Verdict::Skipped
                | Verdict::NotRun => {
                    let mut s = TestCaseStatus::skipped();
                    let text = describe(r.case, r.outcome);
                    match r.failure() {
                        // A known failure keeps its kind in front, so an unsafe one stays visible.
                        Some(f) => s.set_message(format!(
                            "{}: known failure: {}",
                            failure_label(f),
                            text.trim()
                        )),
                        None => s.set_message(text.trim().to_owned()),
                    };
                    s
                }
            };
            let mut tc = TestCase::new(visible(&r.case.id).into_owned(), status);
            tc.set_classname(visible(&area).into_owned());
            tc.set_time(r.outcome.duration);
            suite.add_test_case(tc);
        }
        out.add_test_suite(suite);
    }
    out.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::expect::Exposure;
    use crate::protocol::features::Feature;
    use crate::protocol::ImplInfo;
    use serde_json::json;
    use std::time::Duration;

    fn case(id: &str, area: &str) -> Case {
        let text = format!(
            "id: {id}\nsummary: s.\nclauses: [tools.registration]\nsteps:\n  - tools:\n    expect: {{offered: []}}\n"
        );
        crate::cases::parse_case(Path::new("t.yaml"), Some(area), &text).unwrap()
    }

    fn outcome(status: Status) -> CaseOutcome {
        CaseOutcome {
            status,
            duration: Duration::ZERO,
        }
    }

    fn fail(mismatches: Vec<Mismatch>) -> CaseOutcome {
        outcome(Status::Fail(Failure {
            step: 1,
            line: 5,
            label: "call skill_run_script".into(),
            mismatches,
        }))
    }

    fn unsafe_fail() -> CaseOutcome {
        fail(vec![
            Mismatch::interop("error code", "x", "y"),
            Mismatch::permissive("call outcome", "error invalid_path", "success"),
            Mismatch::exposed(
                Exposure::OutsideContent,
                "later, step 2 (`read`): canary `SKILLSPEC_CANARY_X` in the result",
                "absent",
                "present",
            ),
        ])
    }

    fn permissive_fail() -> CaseOutcome {
        fail(vec![Mismatch::permissive(
            "call outcome",
            "error invalid_path",
            "success",
        )])
    }

    fn different_fail() -> CaseOutcome {
        fail(vec![Mismatch::interop(
            "error code",
            "invalid_path",
            "not_found",
        )])
    }

    fn missing_tool_fail() -> CaseOutcome {
        fail(vec![Mismatch {
            missing_tool: Some("skill_run_script".into()),
            ..Mismatch::interop("call outcome", "success", "error unknown_tool")
        }])
    }

    fn report(results: Vec<(&Case, CaseOutcome)>, known: &[&str]) -> RunReport {
        RunReport {
            implementation: ImplInfo {
                name: "t".into(),
                version: "0".into(),
                language: None,
                features: Vec::new(),
                unknown_features: Vec::new(),
                process_per_case: false,
                side_by_side: None,
                tool_names: Default::default(),
                ..ImplInfo::default()
            },
            cases_dir: "cases".into(),
            suite: crate::suite::report_entry("cases"),
            results: results
                .into_iter()
                .map(|(c, o)| (ReportCase::from(c), o))
                .collect(),
            known_failures: known.iter().map(|s| s.to_string()).collect(),
            stopped: None,
        }
    }

    /// One case of each kind of result, in areas whose statements differ.
    struct Fixture {
        cases: Vec<Case>,
    }

    impl Fixture {
        fn new() -> Fixture {
            let mut cases = vec![
                case("d.one", "discovery"),
                case("d.two", "discovery"),
                case("r.pass", "read"),
                case("r.unsafe", "read"),
                case("r.different", "read"),
                case("run.a", "run"),
                case("run.b", "run"),
                case("run.gated", "run"),
                case("p.gated", "policy"),
                case("pr.left", "prompt"),
                case("t.should", "tools"),
                case("r.permissive", "read"),
            ];
            // A SHOULD clause (its profile cannot be required yet, so set directly).
            cases[10].clauses = vec!["skills.lifecycle".into()];
            Fixture { cases }
        }

        fn report(&self, known: &[&str]) -> RunReport {
            let c = &self.cases;
            let gated = || outcome(Status::Unsupported(vec![Feature::ToolAllowlist]));
            report(
                vec![
                    (&c[0], outcome(Status::Pass)),
                    (&c[1], outcome(Status::Pass)),
                    (&c[2], outcome(Status::Pass)),
                    (&c[3], unsafe_fail()),
                    (&c[4], different_fail()),
                    (&c[5], missing_tool_fail()),
                    (&c[6], missing_tool_fail()),
                    (&c[7], gated()),
                    (&c[8], gated()),
                    (&c[9], outcome(Status::NotRun)),
                    (&c[10], different_fail()),
                    (&c[11], permissive_fail()),
                ],
                known,
            )
        }
    }

    #[test]
    fn each_area_reads_as_one_plain_line() {
        let f = Fixture::new();
        let r = f.report(&[]);
        let c = r.conformance();
        let line = |area: &str| c.areas[area].statement(area);
        assert_eq!(line("discovery"), "discovery: conforms (MUST 2/2 passed)");
        assert_eq!(
            line("read"),
            "read: 1 unsafe failure (MUST), 1 permissive (MUST), 1 safe but different (MUST); MUST 1/4 passed"
        );
        assert_eq!(
            line("run"),
            "run: not implemented (skill_run_script missing in all 2 cases run; 1 UNSUPPORTED (needs tool-allowlist))"
        );
        assert_eq!(
            line("policy"),
            "policy: not checked (1 UNSUPPORTED (needs tool-allowlist))"
        );
        assert_eq!(
            line("prompt"),
            "prompt: not run (1 case; the run stopped early)"
        );
        assert_eq!(
            line("tools"),
            "tools: 1 safe but different (SHOULD); SHOULD 0/1 passed"
        );
        assert_eq!(
            (c.unsafe_total(), c.permissive_total(), c.different_total()),
            (1, 1, 4)
        );
        let text = summary_text(&r);
        for want in [line("discovery"), line("read"), line("run")] {
            assert!(text.contains(&format!("\n{want}\n")), "{text}");
        }
        assert!(
            text.contains(
                "result: UNSAFE. 1 unsafe; 1 permissive; 4 safe but different; 3 passed;"
            ),
            "{text}"
        );
        // The table: one row per area and level that has cases, a column per kind.
        assert!(
            text.contains("\narea         level  passed unsafe permissive different known"),
            "{text}"
        );
        assert!(
            text.contains("\nread         MUST        1      1          1         1     0"),
            "{text}"
        );
        assert!(text.contains("\ntools        SHOULD      0"), "{text}");
        assert!(!text.contains("tools        MUST"), "{text}");
    }

    #[test]
    fn a_known_unsafe_failure_is_still_counted_as_unsafe() {
        let f = Fixture::new();
        let r = f.report(&["r.unsafe", "r.different", "run.a", "run.b", "t.should"]);
        let c = r.conformance();
        assert_eq!((c.unsafe_total(), c.unsafe_known()), (1, 1));
        let read = &c.areas["read"];
        assert_eq!(read.levels[0].unsafe_failures, 0);
        assert_eq!(read.levels[0].known_failures, 2);
        assert_eq!(
            read.statement("read"),
            "read: 1 permissive (MUST), 2 known failures (1 of them unsafe); MUST 1/4 passed"
        );
        // Listed or not, an area whose tool is missing reads as not implemented.
        assert!(c.areas["run"]
            .statement("run")
            .starts_with("run: not implemented"));
        let text = summary_text(&r);
        assert!(
            text.contains("result: UNSAFE. 1 unsafe (1 of them listed as known); 1 permissive; 4 safe but different (4 of them listed as known);"),
            "{text}"
        );
        let junit = junit(&r).unwrap();
        assert!(
            junit.contains("UNSAFE (outside-content): known failure: FAIL r.unsafe\n  UNSAFE:"),
            "{junit}"
        );
    }

    #[test]
    fn report_json_carries_kinds_levels_and_the_statement() {
        let f = Fixture::new();
        let r = f.report(&["r.different"]);
        let v = to_json(&r);
        let schema: Value =
            serde_json::from_str(include_str!("../../../reports/report.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        let case = |id: &str| {
            v["cases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == id)
                .unwrap()
                .clone()
        };
        assert_eq!(case("r.unsafe")["failure_kind"], "unsafe");
        assert_eq!(case("r.unsafe")["exposures"], json!(["outside-content"]));
        assert_eq!(case("r.unsafe")["mismatches"][0]["kind"], "different");
        assert_eq!(case("r.unsafe")["mismatches"][1]["kind"], "permissive");
        assert!(case("r.unsafe")["mismatches"][1].get("exposure").is_none());
        assert_eq!(case("r.unsafe")["mismatches"][2]["kind"], "unsafe");
        assert_eq!(
            case("r.unsafe")["mismatches"][2]["exposure"],
            "outside-content"
        );
        assert_eq!(case("r.permissive")["failure_kind"], "permissive");
        assert!(case("r.permissive").get("exposures").is_none());
        assert_eq!(case("r.different")["failure_kind"], "different");
        assert_eq!(case("r.different")["verdict"], "known-failure");
        assert!(case("r.pass").get("failure_kind").is_none());
        assert_eq!(case("r.pass")["level"], "MUST");
        assert_eq!(case("t.should")["level"], "SHOULD");
        let conf = &v["conformance"];
        assert_eq!(conf["unsafe"], 1);
        assert_eq!(conf["permissive"], 1);
        assert_eq!(conf["different"], 4);
        assert_eq!(conf["areas"]["read"]["MUST"]["permissive"], 1);
        // The schema's exposures are the closed list.
        let words: Vec<&str> = Exposure::ALL.iter().map(|e| e.word()).collect();
        assert_eq!(schema["$defs"]["exposure"]["enum"], json!(words));
        assert_eq!(conf["areas"]["read"]["MUST"]["known_failures"], 1);
        assert_eq!(conf["areas"]["read"]["MUST"]["unsafe"], 1);
        assert_eq!(conf["areas"]["tools"]["SHOULD"]["different"], 1);
        assert_eq!(conf["areas"]["tools"]["MUST"]["different"], 0);
        assert_eq!(
            conf["areas"]["discovery"]["statement"],
            "discovery: conforms (MUST 2/2 passed)"
        );
        // A failure_kind on a case that did not fail does not validate, nor an unsafe mismatch
        // without its exposure, nor an exposure outside the closed list, nor the old kinds.
        let mut bad = v.clone();
        bad["cases"][0]["failure_kind"] = json!("unsafe");
        assert!(!validator.is_valid(&bad));
        let at = v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c["id"] == "r.unsafe")
            .unwrap();
        let broken = |f: &dyn Fn(&mut Value)| {
            let mut b = v.clone();
            f(&mut b["cases"][at]);
            validator.is_valid(&b)
        };
        assert!(broken(&|_| {}));
        assert!(!broken(&|c| {
            c["mismatches"][2]
                .as_object_mut()
                .unwrap()
                .remove("exposure");
        }));
        assert!(!broken(&|c| c["mismatches"][2]["exposure"] = json!("leak")));
        assert!(!broken(&|c| c["mismatches"][0]["kind"] = json!("interop")));
        assert!(!broken(&|c| c["mismatches"][1]["kind"] = json!("safety")));
        assert!(!broken(&|c| c["exposures"] = json!(["leak"])));
        assert!(!broken(&|c| c["failure_kind"] = json!("safety")));
    }

    /// The summary's result line says why cases were skipped (issue #18: running as root), not
    /// only that a precondition is not met; several reasons each with its count.
    #[test]
    fn the_result_line_says_why_cases_were_skipped() {
        let root = "needs a runner that is not root, because root ignores file permissions";
        let (a, b, c) = (case("d.a", "d"), case("d.b", "d"), case("d.c", "d"));
        let skipped = |why: &str| outcome(Status::Skipped(why.into()));
        let one = report(vec![(&a, skipped(root)), (&b, skipped(root))], &[]);
        let line = result_line(&one, &one.conformance());
        assert!(line.ends_with(&format!(" (2 skipped: {root})")), "{line}");
        assert!(summary_text(&one).contains(&format!("2 skipped: {root})")));
        let mixed = report(
            vec![
                (&a, skipped(root)),
                (&b, skipped("flaky")),
                (&c, skipped(root)),
            ],
            &[],
        );
        let line = result_line(&mixed, &mixed.conformance());
        assert!(
            line.ends_with(&format!(" (3 skipped: 2 {root}; 1 flaky)")),
            "{line}"
        );
        let unsaid = report(vec![(&a, skipped(""))], &[]);
        let line = result_line(&unsaid, &unsaid.conformance());
        assert!(
            line.ends_with(" (1 skipped: a precondition is not met here)"),
            "{line}"
        );
    }

    #[test]
    fn report_json_reads_back_into_the_run_it_was_written_from() {
        use crate::protocol::fault::RequestId;
        let f = Fixture::new();
        // A listed failure and a listed case that passed (fixed), besides every other result.
        let mut r = f.report(&["r.pass", "r.different"]);
        let fault = Fault {
            unanswered: Some(RequestId {
                kind: "step",
                seq: Some(3),
                index: Some(1),
            }),
            stderr_tail: Some("Traceback\n  boom\n".into()),
            ..Fault::message_only("broke")
        };
        r.results[0].1 = CaseOutcome {
            status: Status::Skipped("needs a runner that is not root".into()),
            duration: Duration::from_millis(12),
        };
        r.results[1].1 = outcome(Status::Error {
            message: "the adapter broke\nsecond line".into(),
            broken: true,
            fault: Some(fault.clone()),
        });
        r.stopped = Some(Stopped {
            reason: "it kept breaking".into(),
            fault: Some(fault),
        });
        r.implementation.language = Some("rust".into());
        r.implementation.unknown_features = vec!["from-the-future".into()];
        let written = to_json(&r);
        let back = json::from_json(&written).expect("reads back");
        assert_eq!(to_json(&back), written);
        assert_eq!(junit(&back).unwrap(), junit(&r).unwrap());
        assert_eq!(summary_text(&back), summary_text(&r));
        // What only the mismatches' `missing_tool` tells survives the trip.
        assert_eq!(
            back.conformance().areas["run"].statement("run"),
            "run: not implemented (skill_run_script missing in all 2 cases run; 1 UNSUPPORTED (needs tool-allowlist))"
        );
        assert_eq!(back.results[0].0.summary.as_deref(), Some("s."));
        assert!(junit(&back)
            .unwrap()
            .contains("unanswered request: `step` seq 3 index 1"));
    }

    #[test]
    fn junit_failures_say_unsafe_or_different() {
        let f = Fixture::new();
        let junit = junit(&f.report(&[])).unwrap();
        assert!(
            junit.contains(
                "message=\"UNSAFE (outside-content): step 1 (call skill_run_script): later, step 2 (`read`): canary `SKILLSPEC_CANARY_X` in the result: expected absent, actual present\""
            ),
            "{junit}"
        );
        assert!(
            junit.contains("message=\"DIFFERENT: step 1 (call skill_run_script): error code:"),
            "{junit}"
        );
    }

    #[test]
    fn junit_says_permissive_too() {
        let f = Fixture::new();
        let junit = junit(&f.report(&[])).unwrap();
        assert!(
            junit.contains(
                "message=\"PERMISSIVE: step 1 (call skill_run_script): call outcome: expected error invalid_path, actual success\""
            ),
            "{junit}"
        );
    }

    /// The headline follows the worst kind, listed as known or not; only what is not listed
    /// makes the run fail.
    #[test]
    fn the_result_word_follows_the_worst_kind_known_or_not() {
        let f = Fixture::new();
        let word = |r: &RunReport| result_word(r, &r.conformance());
        let every_failure = [
            "r.unsafe",
            "r.different",
            "run.a",
            "run.b",
            "t.should",
            "r.permissive",
        ];
        let mut all_known = f.report(&every_failure);
        all_known.results.retain(|(c, _)| c.id != "pr.left");
        // Nothing left that fails the run, and yet it is no "ok".
        assert!(all_known.cases().all(|r| !r.verdict.is_bad()));
        assert_eq!(word(&all_known), "UNSAFE");
        let text = summary_text(&all_known);
        assert!(
            text.contains("\nresult: UNSAFE. 1 unsafe (1 of them listed as known); 1 permissive (1 of them listed as known);"),
            "{text}"
        );
        assert!(
            text.contains(
                "\nread: 3 known failures (1 of them unsafe, 1 permissive); MUST 1/4 passed\n"
            ),
            "{text}"
        );
        let mut r = all_known.clone();
        r.results.retain(|(c, _)| c.id != "r.unsafe");
        assert_eq!(word(&r), "PERMISSIVE");
        r.results.retain(|(c, _)| c.id != "r.permissive");
        assert_eq!(word(&r), "ok");
        let mut r = f.report(&[]);
        r.results
            .retain(|(c, _)| c.id != "r.unsafe" && c.id != "r.permissive");
        assert_eq!(word(&r), "FAILED");
    }

    #[test]
    fn an_area_not_judged_says_why_in_short() {
        let f = Fixture::new();
        let c = f.report(&[]).conformance();
        let short = |area: &str| c.areas[area].short();
        assert_eq!(
            short("run").as_deref(),
            Some("not implemented: skill_run_script missing")
        );
        assert_eq!(
            short("policy").as_deref(),
            Some("unsupported (needs tool-allowlist)")
        );
        assert_eq!(short("prompt").as_deref(), Some("not run"));
        assert_eq!(short("read"), None);
        assert_eq!(short("discovery"), None);
    }

    #[test]
    fn a_failure_says_its_kind_exposures_and_each_check() {
        let f = Fixture::new();
        let r = f.report(&[]);
        let (case, outcome) = r.results.iter().find(|(c, _)| c.id == "r.unsafe").unwrap();
        let text = describe(case, outcome);
        for want in [
            "FAIL r.unsafe\n  UNSAFE: the run shows a boundary crossed\n  exposure outside-content: content the model must never see reached it\n  s.\n",
            "  [different] error code:\n    expected: x\n    actual:   y\n",
            "  [permissive] call outcome:\n    expected: error invalid_path\n",
            "  [unsafe: outside-content] later, step 2 (`read`): canary `SKILLSPEC_CANARY_X` in the result:\n    expected: absent\n    actual:   present\n",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        let (case, outcome) = r
            .results
            .iter()
            .find(|(c, _)| c.id == "r.permissive")
            .unwrap();
        let text = describe(case, outcome);
        assert!(
            text.starts_with("FAIL r.permissive\n  PERMISSIVE: accepted what the specification requires refused; no crossing shown\n  s.\n"),
            "{text}"
        );
        assert!(!text.contains("exposure"), "{text}");
    }

    #[test]
    fn a_case_has_the_strongest_level_it_cites() {
        let mut c = case("x.y", "tools");
        assert_eq!(ReportCase::from(&c).level, Level::Must);
        c.clauses = vec!["skills.lifecycle".into()];
        assert_eq!(ReportCase::from(&c).level, Level::Should);
        c.clauses.push("tools.registration".into());
        assert_eq!(ReportCase::from(&c).level, Level::Must);
        assert_eq!(level_of(&["no.such-clause".into()]), Level::Must);
    }

    #[test]
    fn visible_escapes_controls_and_keeps_the_rest() {
        assert_eq!(
            visible("plain\ttext\nnext ünïcode"),
            "plain\ttext\nnext ünïcode"
        );
        assert_eq!(
            visible("a\u{1b}[2J\u{7}\u{0}\r\u{7f}\u{9b}\u{202e}\u{fffe}z"),
            "a\\u{1b}[2J\\u{7}\\u{0}\\u{d}\\u{7f}\\u{9b}\\u{202e}\\u{fffe}z"
        );
    }

    #[test]
    fn one_line_escapes_line_breaks_as_well() {
        assert_eq!(one_line("plain ünïcode"), "plain ünïcode");
        assert_eq!(
            one_line("a\nb\tc\r\n\u{85}\u{2028}d"),
            "a\\u{a}b\\u{9}c\\u{d}\\u{a}\\u{85}\\u{2028}d"
        );
    }

    #[test]
    fn values_from_an_implementation_cannot_forge_summary_or_failure_lines() {
        const FORGED: &str = "\nresult: ok. forged\r\nFAIL forged.case";
        let c = case("read.a", "read");
        let mut o = fail(vec![Mismatch::interop("what", "expected", FORGED)]);
        if let Status::Fail(f) = &mut o.status {
            f.label = format!("label{FORGED}");
        }
        let mut r = report(vec![(&c, o)], &[]);
        r.implementation.name = format!("impl{FORGED}");
        r.implementation.version = format!("1{FORGED}");
        r.stopped = Some(Stopped {
            reason: format!("stopped{FORGED}"),
            fault: None,
        });
        let text = summary_text(&r) + &describe(&r.results[0].0, &r.results[0].1);
        let starting = |p: &str| {
            text.lines()
                .filter(|l| l.trim_start().starts_with(p))
                .count()
        };
        assert_eq!(starting("result:"), 1, "{text}");
        assert_eq!(starting("FAIL"), 1, "{text}");
        assert!(!text.contains('\r'), "{text}");
        assert!(
            text.contains("impl\\u{a}result: ok. forged\\u{d}\\u{a}FAIL"),
            "{text}"
        );
    }

    #[test]
    fn people_see_the_end_of_a_long_tail() {
        let many: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let shown = tail_for_people(&many);
        assert!(
            shown.starts_with("line 80\n") && shown.ends_with("line 99\n"),
            "{shown}"
        );
        let wide = "x".repeat(5000);
        assert_eq!(tail_for_people(&wide).len(), TAIL_BYTES);
        assert_eq!(tail_for_people("short"), "short");
    }
}
