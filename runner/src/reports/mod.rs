//! Reports: the human summary printed after a run, failure details, the JSON report and the
//! JUnit XML file written with `--report DIR`.
//!
//! Text that reaches a terminal or `junit.xml` goes through [`visible`]: an implementation's
//! name, messages and stderr can hold control characters, which must neither drive the terminal
//! nor make the XML ill-formed.

pub mod show;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use crate::cases::Case;
use crate::execution::{CaseOutcome, Status};
use crate::implementations::protocol::ImplInfo;
use crate::implementations::{Fault, RequestId};

/// Whether `c` is written as an escape by [`visible`].
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{fffe}'
                | '\u{ffff}'
        )
}

/// `text` with every control character but `\n` and `\t` (C0, DEL, C1), the Unicode
/// bidirectional controls and the non-characters U+FFFE/U+FFFF written as `\u{1b}`-style
/// escapes. What remains is safe on a terminal and allowed in XML 1.0.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
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

/// Every case of a run with its outcome.
pub struct RunReport<'a> {
    pub implementation: ImplInfo,
    pub cases_dir: String,
    pub results: Vec<(&'a Case, CaseOutcome)>,
    /// Case ids the implementation is known to fail (`--known-failures`).
    pub known_failures: BTreeSet<String>,
    /// Why the run stopped before its last case, if it did.
    pub stopped: Option<Stopped>,
}

/// Why a run stopped early (its remaining cases are NOT RUN).
#[derive(Debug, Clone)]
pub struct Stopped {
    /// In plain words.
    pub reason: String,
    /// The breakage that stopped it, when it is not one of the cases' (the adapter never
    /// started).
    pub fault: Option<Fault>,
}

impl RunReport<'_> {
    pub fn verdict(&self, case: &Case, outcome: &CaseOutcome) -> Verdict {
        Verdict::of(&outcome.status, self.known_failures.contains(&case.id))
    }

    pub fn totals(&self) -> Counts {
        let mut c = Counts::default();
        for (case, o) in &self.results {
            c.add(self.verdict(case, o));
        }
        c
    }

    pub fn by_area(&self) -> BTreeMap<String, Counts> {
        let mut m: BTreeMap<String, Counts> = BTreeMap::new();
        for (case, o) in &self.results {
            m.entry(case.area.clone())
                .or_default()
                .add(self.verdict(case, o));
        }
        m
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
                let _ = writeln!(s, "{indent}  {line}");
            }
        }
        None => {}
    }
    s
}

/// The detailed text of one non-passing case (escaped with [`visible`]).
pub fn describe(case: &Case, outcome: &CaseOutcome) -> String {
    visible(&describe_raw(case, outcome)).into_owned()
}

fn describe_raw(case: &Case, outcome: &CaseOutcome) -> String {
    let mut s = String::new();
    let loc = format!("{}:{}", case.file.display(), case.line);
    match &outcome.status {
        Status::Pass => {
            let _ = writeln!(s, "PASS {}  ({loc})", case.id);
        }
        Status::Fail(f) => {
            let _ = writeln!(s, "FAIL {}", case.id);
            let _ = writeln!(s, "  {}", case.summary);
            let _ = writeln!(
                s,
                "  at {}:{} (step {}: {})",
                case.file.display(),
                f.line,
                f.step,
                f.label
            );
            let _ = writeln!(s, "  clauses: {}", case.clauses.join(", "));
            for m in &f.mismatches {
                let _ = writeln!(s, "  {}:", m.what);
                let _ = writeln!(s, "    expected: {}", m.expected);
                let _ = writeln!(s, "    actual:   {}", m.actual);
            }
        }
        Status::Skipped(why) => {
            let _ = writeln!(s, "SKIPPED {}  ({loc}): {why}", case.id);
        }
        Status::Unsupported(missing) => {
            let names: Vec<&str> = missing.iter().map(|f| f.as_str()).collect();
            let _ = writeln!(
                s,
                "UNSUPPORTED {}  ({loc}): needs {}",
                case.id,
                names.join(", ")
            );
        }
        Status::Error { message, fault, .. } => {
            let _ = writeln!(s, "ERROR {}  ({loc})", case.id);
            for line in message.lines() {
                let _ = writeln!(s, "  {line}");
            }
            if let Some(f) = fault {
                s.push_str(&describe_fault(f, "  "));
            }
        }
        Status::NotRun => {
            let _ = writeln!(
                s,
                "NOT RUN {}  ({loc}): the run stopped before this case",
                case.id
            );
        }
    }
    s
}

/// The summary table printed at the end of a run (escaped with [`visible`]).
pub fn summary_text(report: &RunReport<'_>) -> String {
    visible(&summary_raw(report)).into_owned()
}

fn summary_raw(report: &RunReport<'_>) -> String {
    let mut s = String::new();
    let info = &report.implementation;
    if info.name.is_empty() && info.version.is_empty() {
        let _ = writeln!(s, "implementation: unknown (no handshake)");
    } else {
        let _ = writeln!(s, "implementation: {} {}", info.name, info.version);
    }
    let row = |s: &mut String, name: &str, c: &Counts| {
        let _ = writeln!(
            s,
            "{:<14} {:>7} {:>7} {:>7} {:>12} {:>8}",
            name, c.passed, c.failed, c.known_failures, c.unsupported, c.errored
        );
    };
    let _ = writeln!(
        s,
        "{:<14} {:>7} {:>7} {:>7} {:>12} {:>8}",
        "area", "passed", "failed", "known", "unsupported", "errored"
    );
    for (area, c) in report.by_area() {
        row(&mut s, &area, &c);
    }
    let t = report.totals();
    row(&mut s, "total", &t);
    let verdict = if t.is_ok() { "ok" } else { "FAILED" };
    let mut line = format!(
        "result: {verdict}. {} passed; {} failed; {} unsupported; {} errored; {} cases",
        t.passed,
        t.failed,
        t.unsupported,
        t.errored,
        t.total()
    );
    if t.not_run > 0 {
        line.push_str(&format!(" ({} not run: the run stopped early)", t.not_run));
    }
    if t.skipped > 0 {
        line.push_str(&format!(
            " ({} skipped: a precondition is not met here)",
            t.skipped
        ));
    }
    if t.known_failures > 0 || t.fixed > 0 {
        line.push_str(&format!(
            " ({} known failures; {} listed as known failures but passed: remove them from the list)",
            t.known_failures, t.fixed
        ));
    }
    let _ = writeln!(s, "{line}");
    if let Some(stopped) = &report.stopped {
        let _ = writeln!(s, "stopped early: {}", stopped.reason);
    }
    s
}

fn request_json(r: &RequestId) -> Value {
    let mut v = json!({"type": r.kind});
    if let Some(seq) = r.seq {
        v["seq"] = json!(seq);
    }
    if let Some(index) = r.index {
        v["index"] = json!(index);
    }
    v
}

/// The fields of a breakage in report.json: `unanswered_request` and `adapter_stderr`.
fn add_fault(v: &mut Value, fault: &Fault) {
    if let Some(r) = &fault.unanswered {
        v["unanswered_request"] = request_json(r);
    }
    if let Some(tail) = &fault.stderr_tail {
        v["adapter_stderr"] = json!(tail);
    }
}

/// The JSON report.
pub fn to_json(report: &RunReport<'_>) -> Value {
    let counts = |c: &Counts| {
        json!({"passed": c.passed, "failed": c.failed, "known_failures": c.known_failures, "fixed": c.fixed,
               "unsupported": c.unsupported, "skipped": c.skipped, "errored": c.errored, "not_run": c.not_run,
               "total": c.total()})
    };
    let areas: serde_json::Map<String, Value> = report
        .by_area()
        .iter()
        .map(|(a, c)| (a.clone(), counts(c)))
        .collect();
    let cases: Vec<Value> = report
        .results
        .iter()
        .map(|(case, o)| {
            let mut v = json!({
                "id": case.id,
                "file": case.file.display().to_string(),
                "line": case.line,
                "area": case.area,
                "clauses": case.clauses,
                "status": o.status.word(),
                "verdict": report.verdict(case, o).word(),
                "duration_ms": o.duration.as_millis() as u64,
            });
            match &o.status {
                Status::Fail(f) => {
                    v["step"] = json!(f.step);
                    v["step_line"] = json!(f.line);
                    v["step_label"] = json!(f.label);
                    v["mismatches"] = f
                        .mismatches
                        .iter()
                        .map(
                            |m| json!({"what": m.what, "expected": m.expected, "actual": m.actual}),
                        )
                        .collect();
                }
                Status::Unsupported(missing) => v["missing_features"] = json!(missing),
                Status::Skipped(why) => v["precondition"] = json!(why),
                Status::Error {
                    message,
                    broken,
                    fault,
                } => {
                    v["error"] = json!(message);
                    v["broken_implementation"] = json!(broken);
                    if let Some(f) = fault {
                        add_fault(&mut v, f);
                    }
                }
                Status::Pass | Status::NotRun => {}
            }
            v
        })
        .collect();
    let mut out = json!({
        "report_version": 1,
        "protocol_version": crate::implementations::protocol::PROTOCOL_VERSION,
        "runner": {"name": "skillspec", "version": env!("CARGO_PKG_VERSION")},
        "implementation": report.implementation,
        "cases_dir": report.cases_dir,
        "suite": crate::suite::report_entry(&report.cases_dir),
        "known_failures": report.known_failures,
        "summary": counts(&report.totals()),
        "areas": areas,
        "cases": cases,
    });
    if let Some(stopped) = &report.stopped {
        let mut v = json!({"reason": stopped.reason});
        if let Some(f) = &stopped.fault {
            v["error"] = json!(f.message);
            add_fault(&mut v, f);
        }
        out["stopped"] = v;
    }
    out
}

/// Writes `report.json` and `junit.xml` into `dir`.
pub fn write(report: &RunReport<'_>, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(&to_json(report)).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("report.json"), json + "\n")?;
    std::fs::write(
        dir.join("junit.xml"),
        junit(report).map_err(std::io::Error::other)?,
    )?;
    Ok(())
}

fn junit(report: &RunReport<'_>) -> Result<String, quick_junit::SerializeError> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut out = Report::new("skillspec");
    for (area, _) in report.by_area() {
        let mut suite = TestSuite::new(visible(&area).into_owned());
        for (case, o) in report.results.iter().filter(|(c, _)| c.area == area) {
            let status = match report.verdict(case, o) {
                Verdict::Passed => TestCaseStatus::success(),
                Verdict::Failed => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_description(describe(case, o));
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
                    s.set_description(describe(case, o));
                    s
                }
                Verdict::Unsupported
                | Verdict::KnownFailure
                | Verdict::Skipped
                | Verdict::NotRun => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(describe(case, o).trim().to_owned());
                    s
                }
            };
            let mut tc = TestCase::new(visible(&case.id).into_owned(), status);
            tc.set_classname(visible(&area).into_owned());
            tc.set_time(o.duration);
            suite.add_test_case(tc);
        }
        out.add_test_suite(suite);
    }
    out.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
