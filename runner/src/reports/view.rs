//! One report.json as the reports people look at (`report markdown`, `report html`) show it:
//! the run it was written from ([`super::json::from_json`]) with where it came from, and the
//! statements, counts and kinds of that run, from the same functions as `skillspec run`'s own
//! summary. An area's statement is the one the report holds (written by those functions when
//! the run ended), else the one they give now (reports of earlier runners).
//!
//! Strings here are exactly as report.json has them, unescaped: whoever prints them escapes them
//! for their medium.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::from_json;
use super::{result_line, CaseResult, Conformance, LevelCounts, RunReport, Verdict};
use crate::execution::FailureKind;

/// `text` cut to `max` characters, saying how much was left out.
pub fn cut(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}… ({} more characters in report.json)", n - max)
}

/// One report.json, read back.
#[derive(Debug, Clone)]
pub struct ReportView {
    /// Where it was read from (for messages and headings).
    pub source: String,
    /// The version of the runner that wrote it.
    pub runner_version: String,
    /// `partition` as written, when the report is one slice of a run (or an incomplete merge).
    pub partition: Option<Value>,
    pub run: RunReport,
    /// The run's counts per area and level.
    pub conformance: Conformance,
    /// The plain line of each area.
    pub statements: BTreeMap<String, String>,
    /// The plain line of each dialect the run has cases of (SPEC.md, "Dialects").
    pub dialect_statements: Vec<String>,
}

impl ReportView {
    /// Reads a parsed report.json. `source` names it in headings and messages (and in errors).
    pub fn from_json(source: &str, v: &Value) -> Result<ReportView, String> {
        let run = from_json(v).map_err(|e| format!("{source}: {e}"))?;
        let conformance = run.conformance();
        let written = v
            .get("conformance")
            .and_then(|c| c.get("areas"))
            .and_then(Value::as_object);
        let statements = conformance
            .areas
            .iter()
            .map(|(area, a)| {
                let line = written
                    .and_then(|w| w.get(area))
                    .and_then(|w| w.get("statement"))
                    .and_then(Value::as_str)
                    .map_or_else(|| a.statement(area), str::to_owned);
                (area.clone(), line)
            })
            .collect();
        let dialect_statements = run.dialect_statements(&conformance);
        Ok(ReportView {
            dialect_statements,
            source: source.to_owned(),
            runner_version: v
                .get("runner")
                .and_then(|r| r.get("version"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            partition: v.get("partition").cloned(),
            run,
            conformance,
            statements,
        })
    }

    /// `name version`, or a placeholder when the adapter never said.
    pub fn title(&self) -> String {
        let imp = &self.run.implementation;
        let t = format!("{} {}", imp.name, imp.version);
        if t.trim().is_empty() {
            "unknown implementation (no handshake)".to_owned()
        } else {
            t.trim().to_owned()
        }
    }

    /// The run's overall line, as its summary ends (`result: ...`).
    pub fn result(&self) -> String {
        format!("result: {}", result_line(&self.run, &self.conformance))
    }

    /// Every case with its outcome and verdict, in report order.
    pub fn cases(&self) -> impl Iterator<Item = CaseResult<'_>> {
        self.run.cases()
    }

    /// The counts of one area, all levels together (zero for an area the report does not have).
    pub fn area(&self, area: &str) -> LevelCounts {
        self.conformance
            .areas
            .get(area)
            .map(|a| a.all())
            .unwrap_or_default()
    }

    /// Failed cases of one kind that are not listed as known failures, in report order.
    pub fn failures(&self, kind: FailureKind) -> Vec<CaseResult<'_>> {
        self.cases()
            .filter(|r| r.verdict == Verdict::Failed && r.kind() == Some(kind))
            .collect()
    }

    /// The failed cases the reports list under `kind`, in report order: the unsafe ones listed
    /// as known or not (a listed crossing is still a crossing), the others only when not listed.
    pub fn listed(&self, kind: FailureKind) -> Vec<CaseResult<'_>> {
        self.cases()
            .filter(|r| {
                r.kind() == Some(kind)
                    && (r.verdict == Verdict::Failed
                        || (kind == FailureKind::Unsafe && r.verdict == Verdict::KnownFailure))
            })
            .collect()
    }

    /// Errors, cases not run and known failures that passed, in report order.
    pub fn other_problems(&self) -> Vec<CaseResult<'_>> {
        self.cases()
            .filter(|r| {
                matches!(
                    r.verdict,
                    Verdict::Errored | Verdict::NotRun | Verdict::Fixed
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(cases: Value) -> Value {
        json!({"report_version": 1, "implementation": {"name": "x", "version": "1", "features": []},
               "cases_dir": "c", "known_failures": [], "cases": cases})
    }

    #[test]
    fn an_earlier_report_is_judged_as_a_run_would_judge_it() {
        // No level, failure_kind or conformance: computed from the clauses and mismatches.
        let v = report(json!([
            {"id": "a", "file": "f", "line": 1, "area": "read", "clauses": ["skills.lifecycle"],
             "status": "pass", "verdict": "pass", "duration_ms": 0},
            {"id": "b", "file": "f", "line": 1, "area": "read", "clauses": ["read.path.segments"],
             "status": "fail", "verdict": "fail", "duration_ms": 0, "step": 1, "step_line": 3,
             "step_label": "read", "mismatches": [
                {"what": "x", "expected": "1", "actual": "2", "kind": "different"},
                {"what": "y", "expected": "1", "actual": "2", "kind": "unsafe",
                 "exposure": "code-ran"}]},
        ]));
        let r = ReportView::from_json("r", &v).expect("reads");
        let read = &r.conformance.areas["read"];
        assert_eq!(read.levels[0].unsafe_failures, 1);
        assert_eq!(read.levels[1].passed, 1);
        assert_eq!(
            r.statements["read"],
            "read: 1 unsafe failure (MUST); MUST 0/1 passed, SHOULD 1/1 passed"
        );
        assert_eq!(r.failures(FailureKind::Unsafe).len(), 1);
        assert!(r
            .result()
            .starts_with("result: UNSAFE. 1 unsafe; 0 permissive; 0 safe but different;"));
    }

    #[test]
    fn cut_says_how_much_is_left_out() {
        assert_eq!(cut("abcdef", 3), "abc… (3 more characters in report.json)");
        assert_eq!(cut("abc", 3), "abc");
    }

    #[test]
    fn a_written_statement_is_shown_as_written() {
        let mut v = report(json!([{"id": "a", "file": "f", "line": 1, "area": "read",
            "clauses": [], "status": "pass", "verdict": "pass", "duration_ms": 0}]));
        v["conformance"] = json!({"areas": {"read": {"statement": "read: as written"}}});
        let r = ReportView::from_json("r", &v).expect("reads");
        assert_eq!(r.statements["read"], "read: as written");
    }

    #[test]
    fn a_mismatch_of_an_older_runner_is_refused_with_the_reason() {
        let failing = |mismatch: Value| {
            report(json!([{"id": "b", "file": "f", "line": 1, "area": "read",
                "clauses": [], "status": "fail", "verdict": "fail", "duration_ms": 0,
                "mismatches": [mismatch]}]))
        };
        for old in [
            json!({"what": "x", "expected": "1", "actual": "2"}),
            json!({"what": "x", "expected": "1", "actual": "2", "kind": "safety"}),
            json!({"what": "x", "expected": "1", "actual": "2", "kind": "interop"}),
        ] {
            let e = ReportView::from_json("old.json", &failing(old)).expect_err("old kinds");
            assert!(
                e.starts_with("old.json: case 1 (`b`): a mismatch has no `kind` of unsafe, permissive or different")
                    && e.contains("older than these verdicts; run the suite again"),
                "{e}"
            );
        }
        let bare = json!({"what": "x", "expected": "1", "actual": "2", "kind": "unsafe"});
        let e = ReportView::from_json("r.json", &failing(bare)).expect_err("no exposure");
        assert!(e.contains("an unsafe mismatch has no `exposure`"), "{e}");
        let unknown = json!({"what": "x", "expected": "1", "actual": "2", "kind": "unsafe",
                             "exposure": "leak"});
        let e = ReportView::from_json("r.json", &failing(unknown)).expect_err("bad exposure");
        assert!(e.contains("exposure `leak` is not one of"), "{e}");
    }
}
