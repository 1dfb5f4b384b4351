//! A lenient reading of report.json for the reports people look at (`report markdown`,
//! `report html`) and for `report merge`.
//!
//! It owns the view those share: the cases with their verdicts, how bad each failure is
//! (`unsafe` or `different`), the level of each case, and the counts per area and level. It
//! works from the JSON alone, so reports written by other runner versions still render: a field
//! that is absent is derived where it can be (a case's level from its clauses, a failure's kind
//! from its mismatches) and left out where it cannot.
//!
//! Strings here are exactly as report.json has them, unescaped: whoever prints them escapes them
//! for their medium.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::cases::clauses::{Level, CLAUSES};

/// The levels of a clause, strongest first, as report.json writes them.
pub const LEVELS: [&str; 3] = ["MUST", "SHOULD", "MAY"];

/// How bad a failed case is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The implementation did something the specification forbids for safety.
    Unsafe,
    /// The implementation behaves differently from the specification, without a safety impact.
    Different,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Unsafe => "unsafe",
            Kind::Different => "different",
        }
    }
}

/// The counts of one area and level. The names are those of report.json's `conformance`;
/// `failed` holds failures whose kind the report does not say (reports without `failure_kind`).
pub const COUNT_NAMES: [&str; 10] = [
    "passed",
    "unsafe",
    "different",
    "failed",
    "known_failures",
    "fixed",
    "unsupported",
    "skipped",
    "errored",
    "not_run",
];

/// Counts keyed as [`COUNT_NAMES`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelCounts(pub [u64; 10]);

impl LevelCounts {
    pub fn get(&self, name: &str) -> u64 {
        COUNT_NAMES
            .iter()
            .position(|n| *n == name)
            .map_or(0, |i| self.0[i])
    }

    fn bump(&mut self, name: &str) {
        if let Some(i) = COUNT_NAMES.iter().position(|n| *n == name) {
            self.0[i] += 1;
        }
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Cases whose behaviour was checked and found wrong (known failures included).
    pub fn failing(&self) -> u64 {
        self.get("unsafe") + self.get("different") + self.get("failed") + self.get("known_failures")
    }

    pub fn add(&mut self, other: &LevelCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }

    /// Reads counts named as [`COUNT_NAMES`] (absent ones are 0).
    pub fn from_json_counts(v: &Value) -> LevelCounts {
        let mut c = LevelCounts::default();
        for (i, name) in COUNT_NAMES.iter().enumerate() {
            c.0[i] = v.get(*name).and_then(Value::as_u64).unwrap_or(0);
        }
        c
    }
}

/// One mismatch of a failed step.
#[derive(Debug, Clone)]
pub struct Mismatch {
    pub what: String,
    pub expected: String,
    pub actual: String,
    /// `safety` or `interop` when the report says.
    pub kind: Option<String>,
}

/// One case of a report.
#[derive(Debug, Clone)]
pub struct CaseView {
    pub id: String,
    pub file: String,
    pub line: u64,
    pub area: String,
    pub clauses: Vec<String>,
    /// `pass`, `fail`, `unsupported`, `skipped`, `error`, `not-run`.
    pub status: String,
    /// `pass`, `fail`, `known-failure`, `fixed`, `unsupported`, `skipped`, `error`, `not-run`.
    pub verdict: String,
    /// `MUST`, `SHOULD` or `MAY`: the report's, else the strongest level of its clauses.
    pub level: &'static str,
    /// For failed cases (and known failures): the report's `failure_kind`, else derived from
    /// the mismatches' `kind`.
    pub kind: Option<Kind>,
    pub summary: Option<String>,
    pub duration_ms: u64,
    pub step: Option<u64>,
    pub step_line: Option<u64>,
    pub step_label: Option<String>,
    pub mismatches: Vec<Mismatch>,
    pub error: Option<String>,
    pub broken: bool,
    pub unanswered: Option<String>,
    pub adapter_stderr: Option<String>,
    pub missing_features: Vec<String>,
    pub precondition: Option<String>,
}

impl CaseView {
    /// The count of [`COUNT_NAMES`] this case adds to.
    pub fn count_name(&self) -> &'static str {
        match self.verdict.as_str() {
            "pass" => "passed",
            "fail" => match self.kind {
                Some(Kind::Unsafe) => "unsafe",
                Some(Kind::Different) => "different",
                None => "failed",
            },
            "known-failure" => "known_failures",
            "fixed" => "fixed",
            "unsupported" => "unsupported",
            "skipped" => "skipped",
            "error" => "errored",
            _ => "not_run",
        }
    }

    /// The word shown for the case: its verdict, with the kind of a failure.
    pub fn label(&self) -> String {
        match (self.verdict.as_str(), self.kind) {
            ("fail", Some(k)) => format!("fail ({})", k.word()),
            (v, _) => v.to_owned(),
        }
    }
}

/// One report.json, read leniently.
#[derive(Debug, Clone)]
pub struct ReportView {
    /// Where it was read from (for messages and headings).
    pub source: String,
    pub name: String,
    pub version: String,
    pub features: Vec<String>,
    pub runner_version: String,
    pub cases_dir: String,
    pub cases: Vec<CaseView>,
    /// Counts per area and level: the report's `conformance` when it has one, else counted here.
    pub levels: BTreeMap<String, BTreeMap<&'static str, LevelCounts>>,
    /// The plain line per area: the report's, else derived from the counts.
    pub statements: BTreeMap<String, String>,
    /// `summary` as written (passed, failed, ... total).
    pub summary: BTreeMap<String, u64>,
    pub stopped: Option<String>,
    /// `partition` as written, when the report is one slice of a run.
    pub partition: Option<Value>,
    /// Whether the report had a `conformance` object.
    pub has_conformance: bool,
}

fn string(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
}

fn opt_string(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn level_word(l: Level) -> &'static str {
    match l {
        Level::Must => "MUST",
        Level::Should => "SHOULD",
        Level::May => "MAY",
    }
}

/// The level of a clause id (`MUST` for an id this runner does not know).
pub fn clause_level(id: &str) -> &'static str {
    CLAUSES
        .iter()
        .find(|c| c.id == id)
        .map_or("MUST", |c| level_word(c.level))
}

/// The strongest level among `clauses` (`MUST` when there are none).
pub fn strongest_level(clauses: &[String]) -> &'static str {
    let levels: Vec<&str> = clauses.iter().map(|c| clause_level(c)).collect();
    LEVELS
        .iter()
        .find(|l| levels.contains(l))
        .copied()
        .unwrap_or("MUST")
}

fn level_of(v: &Value, clauses: &[String]) -> &'static str {
    match v.get("level").and_then(Value::as_str) {
        Some(l) => LEVELS.iter().find(|x| **x == l).copied().unwrap_or("MUST"),
        None => strongest_level(clauses),
    }
}

fn kind_of(v: &Value, mismatches: &[Mismatch]) -> Option<Kind> {
    match v.get("failure_kind").and_then(Value::as_str) {
        Some("unsafe") => return Some(Kind::Unsafe),
        Some("different") => return Some(Kind::Different),
        _ => {}
    }
    if mismatches
        .iter()
        .any(|m| m.kind.as_deref() == Some("safety"))
    {
        Some(Kind::Unsafe)
    } else if !mismatches.is_empty()
        && mismatches
            .iter()
            .all(|m| m.kind.as_deref() == Some("interop"))
    {
        Some(Kind::Different)
    } else {
        None
    }
}

fn unanswered(v: &Value) -> Option<String> {
    let r = v.get("unanswered_request")?;
    let mut s = format!("`{}`", r.get("type").and_then(Value::as_str).unwrap_or("?"));
    if let Some(seq) = r.get("seq").and_then(Value::as_u64) {
        s.push_str(&format!(" seq {seq}"));
    }
    if let Some(index) = r.get("index").and_then(Value::as_u64) {
        s.push_str(&format!(" index {index}"));
    }
    Some(s)
}

/// Reads one case object of report.json.
pub fn case_view(v: &Value) -> CaseView {
    let clauses = strings(v, "clauses");
    let mismatches: Vec<Mismatch> = v
        .get("mismatches")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|m| Mismatch {
                    what: string(m, "what"),
                    expected: string(m, "expected"),
                    actual: string(m, "actual"),
                    kind: opt_string(m, "kind"),
                })
                .collect()
        })
        .unwrap_or_default();
    let verdict = string(v, "verdict");
    let kind = if matches!(verdict.as_str(), "fail" | "known-failure") {
        kind_of(v, &mismatches)
    } else {
        None
    };
    CaseView {
        id: string(v, "id"),
        file: string(v, "file"),
        line: v.get("line").and_then(Value::as_u64).unwrap_or(0),
        area: string(v, "area"),
        level: level_of(v, &clauses),
        clauses,
        status: string(v, "status"),
        verdict,
        kind,
        summary: opt_string(v, "summary"),
        duration_ms: v.get("duration_ms").and_then(Value::as_u64).unwrap_or(0),
        step: v.get("step").and_then(Value::as_u64),
        step_line: v.get("step_line").and_then(Value::as_u64),
        step_label: opt_string(v, "step_label"),
        mismatches,
        error: opt_string(v, "error"),
        broken: v
            .get("broken_implementation")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        unanswered: unanswered(v),
        adapter_stderr: opt_string(v, "adapter_stderr"),
        missing_features: strings(v, "missing_features"),
        precondition: opt_string(v, "precondition"),
    }
}

/// Counts per area and level from the cases.
pub fn count_levels(cases: &[CaseView]) -> BTreeMap<String, BTreeMap<&'static str, LevelCounts>> {
    let mut m: BTreeMap<String, BTreeMap<&'static str, LevelCounts>> = BTreeMap::new();
    for c in cases {
        let area = m.entry(c.area.clone()).or_insert_with(|| {
            LEVELS
                .iter()
                .map(|l| (*l, LevelCounts::default()))
                .collect()
        });
        area.entry(c.level).or_default().bump(c.count_name());
    }
    m
}

/// The plain line of one area, from its counts per level.
pub fn area_statement(levels: &BTreeMap<&'static str, LevelCounts>) -> String {
    let zero = LevelCounts::default();
    let must = levels.get("MUST").unwrap_or(&zero);
    let should = levels.get("SHOULD").unwrap_or(&zero);
    let mut s = if must.total() == 0 {
        "no MUST case".to_owned()
    } else if must.failing() + must.get("errored") + must.get("not_run") + must.get("fixed") == 0 {
        format!("meets every MUST checked ({} passed)", must.get("passed"))
    } else {
        let mut parts = Vec::new();
        for (name, word) in [
            ("unsafe", "unsafe"),
            ("different", "different"),
            ("failed", "failed"),
            ("known_failures", "known failures"),
            ("errored", "errored"),
            ("not_run", "not run"),
            ("fixed", "listed as known failures but passed"),
        ] {
            let n = must.get(name);
            if n > 0 {
                parts.push(format!("{n} {word}"));
            }
        }
        format!(
            "does not meet every MUST: {} of {} MUST cases pass ({})",
            must.get("passed"),
            must.total(),
            parts.join(", ")
        )
    };
    if should.failing() > 0 {
        s.push_str(&format!(
            "; {} of {} SHOULD cases fail",
            should.failing(),
            should.total()
        ));
    }
    s
}

impl ReportView {
    /// Reads a parsed report.json. `source` names it in headings and messages.
    pub fn from_json(source: &str, v: &Value) -> ReportView {
        let imp = v.get("implementation").cloned().unwrap_or(Value::Null);
        let cases: Vec<CaseView> = v
            .get("cases")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(case_view).collect())
            .unwrap_or_default();
        let conformance = v.get("conformance").filter(|c| c.is_object());
        let mut levels = count_levels(&cases);
        let mut statements = BTreeMap::new();
        if let Some(areas) = conformance
            .and_then(|c| c.get("areas"))
            .and_then(Value::as_object)
        {
            for (area, by_level) in areas {
                let entry = levels.entry(area.clone()).or_default();
                for l in LEVELS {
                    if let Some(c) = by_level.get(l) {
                        entry.insert(l, LevelCounts::from_json_counts(c));
                    }
                }
                if let Some(s) = by_level.get("statement").and_then(Value::as_str) {
                    statements.insert(area.clone(), s.to_owned());
                }
            }
        }
        for (area, by_level) in &levels {
            statements
                .entry(area.clone())
                .or_insert_with(|| area_statement(by_level));
        }
        let summary = v
            .get("summary")
            .and_then(Value::as_object)
            .map(|o| {
                o.iter()
                    .filter_map(|(k, x)| x.as_u64().map(|n| (k.clone(), n)))
                    .collect()
            })
            .unwrap_or_default();
        ReportView {
            source: source.to_owned(),
            name: string(&imp, "name"),
            version: string(&imp, "version"),
            features: strings(&imp, "features"),
            runner_version: v
                .get("runner")
                .map(|r| string(r, "version"))
                .unwrap_or_default(),
            cases_dir: string(v, "cases_dir"),
            cases,
            levels,
            statements,
            summary,
            stopped: v
                .get("stopped")
                .and_then(|s| s.get("reason"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            partition: v.get("partition").cloned(),
            has_conformance: conformance.is_some(),
        }
    }

    /// `name version`, or a placeholder when the adapter never said.
    pub fn title(&self) -> String {
        let t = format!("{} {}", self.name, self.version);
        if t.trim().is_empty() {
            "unknown implementation (no handshake)".to_owned()
        } else {
            t.trim().to_owned()
        }
    }

    /// The counts of every area and level added up.
    pub fn totals(&self) -> LevelCounts {
        let mut t = LevelCounts::default();
        for by_level in self.levels.values() {
            for c in by_level.values() {
                t.add(c);
            }
        }
        t
    }

    /// Failed cases of one kind (`None`: kind not reported), in report order.
    pub fn failures(&self, kind: Option<Kind>) -> Vec<&CaseView> {
        self.cases
            .iter()
            .filter(|c| c.verdict == "fail" && c.kind == kind)
            .collect()
    }

    /// The overall plain line.
    pub fn statement(&self) -> String {
        let t = self.totals();
        let bad = t.get("unsafe")
            + t.get("different")
            + t.get("failed")
            + t.get("errored")
            + t.get("fixed")
            + t.get("not_run");
        let mut s = if bad == 0 && t.total() > 0 {
            format!(
                "conforms: every case that applies passes ({} passed",
                t.get("passed")
            )
        } else if t.total() == 0 {
            "no case was run (".to_owned()
        } else {
            let mut parts = Vec::new();
            for (name, one, many) in [
                ("unsafe", "unsafe failure", "unsafe failures"),
                ("different", "different behaviour", "different behaviours"),
                ("failed", "failure", "failures"),
                ("errored", "error", "errors"),
                ("not_run", "not run", "not run"),
                (
                    "fixed",
                    "listed as a known failure but passed",
                    "listed as known failures but passed",
                ),
            ] {
                let n = t.get(name);
                if n > 0 {
                    parts.push(format!("{n} {}", if n == 1 { one } else { many }));
                }
            }
            format!(
                "does not conform: {} ({} passed",
                parts.join(", "),
                t.get("passed")
            )
        };
        for (name, word) in [
            ("known_failures", "known failures"),
            ("unsupported", "unsupported"),
            ("skipped", "skipped"),
        ] {
            let n = t.get(name);
            if n > 0 {
                s.push_str(&format!(", {n} {word}"));
            }
        }
        s.push_str(&format!(" of {} cases)", t.total()));
        s
    }
}

/// Reads a report given as a file or as the directory that holds `report.json`.
/// Errors name the file and say what is wrong with it.
pub fn read_report(path: &Path) -> Result<Value, String> {
    let file = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_path_buf()
    };
    let bytes = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let v: Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: not JSON: {e}", file.display()))?;
    match v.get("report_version").and_then(Value::as_u64) {
        Some(1) => {}
        Some(n) => {
            return Err(format!(
                "{}: report_version {n} is not one this runner reads (it reads 1)",
                file.display()
            ))
        }
        None => {
            return Err(format!(
                "{}: not a skillspec report (no report_version)",
                file.display()
            ))
        }
    }
    if !v.get("cases").is_some_and(Value::is_array) {
        return Err(format!(
            "{}: not a skillspec report (no cases)",
            file.display()
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kind_comes_from_the_report_else_from_the_mismatches() {
        let c = case_view(
            &json!({"id": "a", "verdict": "fail", "failure_kind": "different",
            "mismatches": [{"what": "x", "expected": "1", "actual": "2", "kind": "safety"}]}),
        );
        assert_eq!(c.kind, Some(Kind::Different));
        let c = case_view(&json!({"id": "a", "verdict": "fail",
            "mismatches": [{"what": "x", "expected": "1", "actual": "2", "kind": "interop"},
                           {"what": "y", "expected": "1", "actual": "2", "kind": "safety"}]}));
        assert_eq!(c.kind, Some(Kind::Unsafe));
        let c = case_view(&json!({"id": "a", "verdict": "fail",
            "mismatches": [{"what": "x", "expected": "1", "actual": "2"}]}));
        assert_eq!(c.kind, None);
        assert_eq!(c.count_name(), "failed");
        let c = case_view(&json!({"id": "a", "verdict": "pass", "failure_kind": "unsafe"}));
        assert_eq!(c.kind, None);
    }

    #[test]
    fn level_comes_from_the_report_else_from_the_clauses() {
        let should = CLAUSES
            .iter()
            .find(|c| c.level == Level::Should)
            .expect("the spec has SHOULD clauses");
        let c = case_view(&json!({"id": "a", "clauses": [should.id]}));
        assert_eq!(c.level, "SHOULD");
        let c = case_view(&json!({"id": "a", "clauses": [should.id, "enable.unset"]}));
        assert_eq!(c.level, "MUST");
        let c = case_view(&json!({"id": "a", "clauses": [should.id], "level": "MAY"}));
        assert_eq!(c.level, "MAY");
    }

    #[test]
    fn statements_name_what_fails() {
        let v = json!({"report_version": 1, "cases": [
            {"id": "a", "area": "read", "clauses": ["enable.unset"], "verdict": "pass"},
            {"id": "b", "area": "read", "clauses": ["enable.unset"], "verdict": "fail", "failure_kind": "unsafe"},
            {"id": "c", "area": "run", "clauses": ["enable.unset"], "verdict": "pass"},
        ]});
        let r = ReportView::from_json("r", &v);
        assert_eq!(
            r.statements["read"],
            "does not meet every MUST: 1 of 2 MUST cases pass (1 unsafe)"
        );
        assert_eq!(r.statements["run"], "meets every MUST checked (1 passed)");
        assert_eq!(
            r.statement(),
            "does not conform: 1 unsafe failure (2 passed of 3 cases)"
        );
    }
}
