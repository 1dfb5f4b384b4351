//! A non-passing case in words, for the terminal and the reports: its kind and failure labels,
//! each mismatch, a broken adapter's fault with the end of its stderr ([`describe`]).

use std::fmt::Write as _;

use super::*;
use crate::cases::expect::Mismatch;
use crate::execution::{CaseOutcome, Failure, FailureKind, Status};
use crate::protocol::fault::Fault;

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

/// The end of a stderr tail that a person reads: its last [`TAIL_LINES`] lines, at most
/// [`TAIL_BYTES`] bytes.
pub(super) fn tail_for_people(tail: &str) -> &str {
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

pub(super) fn describe_raw(case: &ReportCase, outcome: &CaseOutcome) -> String {
    let mut s = String::new();
    // Every value on one line: a line break in any of them cannot start a line of its own.
    let id = one_line(&case.id);
    let loc = format!("{}:{}", one_line(&case.file), case.line);
    match &outcome.status {
        Status::Pass => {
            let _ = writeln!(s, "PASS {id}  ({loc})");
        }
        Status::NotExercised(why) => {
            let _ = writeln!(s, "NOT EXERCISED {id}  ({loc})");
            let _ = writeln!(s, "  passed, but tested nothing: {}", one_line(why));
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
                let verb = if missing.len() == 1 { "is" } else { "are" };
                format!(" ({} {verb} missing)", missing.join(" and "))
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
