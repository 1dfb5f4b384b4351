//! report.json, both ways: [`to_json`] writes a run's report, [`from_json`] reads one back into
//! the [`RunReport`] it was written from, losing nothing that report.json or junit.xml show
//! (durations keep their milliseconds). Everything a report says beyond its cases (`summary`,
//! `areas`, `conformance`, verdicts, kinds) is computed from the `RunReport` by the functions of
//! [`super`], whether the report is being written by `run` or rewritten by `report merge`.
//!
//! Reports of earlier runners stay readable where what they lack can be computed the same way:
//! a case without `level` gets the strongest level of its clauses, one without `summary` has
//! none (callers may look it up in the suite), a mismatch without `missing_tool` has none. A
//! mismatch without `kind` (runners before safety/interop verdicts) cannot be judged, and is
//! refused with a message saying so.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::{
    level_from_word, level_of, level_word, Counts, ReportCase, RunReport, Stopped, LEVELS,
};
use crate::cases::expect::{Exposure, Mismatch, MismatchKind};
use crate::execution::{CaseOutcome, Failure, Status};
use crate::protocol::claims::Need;
use crate::protocol::fault::{Fault, RequestId};
use crate::protocol::ImplInfo;

/// The `type`s of the requests an adapter can leave unanswered (PROTOCOL.md).
const REQUEST_TYPES: [&str; 4] = ["start", "case_start", "step", "case_end"];

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

fn counts_json(c: &Counts) -> Value {
    json!({"passed": c.passed, "not_exercised": c.not_exercised, "failed": c.failed, "known_failures": c.known_failures, "fixed": c.fixed,
           "unsupported": c.unsupported, "skipped": c.skipped, "errored": c.errored, "not_run": c.not_run,
           "total": c.total()})
}

fn mismatch_json(m: &Mismatch) -> Value {
    let mut v = json!({"what": m.what, "expected": m.expected, "actual": m.actual,
                       "kind": m.kind.word()});
    if let Some(e) = m.kind.exposure() {
        v["exposure"] = json!(e.word());
    }
    if let Some(tool) = &m.missing_tool {
        v["missing_tool"] = json!(tool);
    }
    v
}

fn case_json(case: &ReportCase, o: &CaseOutcome, verdict: super::Verdict) -> Value {
    let mut v = Map::new();
    v.insert("id".into(), json!(case.id));
    if let Some(summary) = &case.summary {
        v.insert("summary".into(), json!(summary));
    }
    let mut v = Value::Object(v);
    for (key, value) in [
        ("file", json!(case.file)),
        ("line", json!(case.line)),
        ("area", json!(case.area)),
        ("dialect", json!(case.dialect)),
        ("clauses", json!(case.clauses)),
        ("status", json!(o.status.word())),
        ("verdict", json!(verdict.word())),
        ("level", json!(level_word(case.level))),
        ("duration_ms", json!(o.duration.as_millis() as u64)),
    ] {
        v[key] = value;
    }
    if let Some(twin) = &case.twin_of {
        v["twin_of"] = json!(twin);
    }
    if case.hardening {
        v["hardening"] = json!(true);
    }
    match &o.status {
        Status::Fail(f) => {
            v["failure_kind"] = json!(f.kind().word());
            let exposures: Vec<&str> = f.exposures().into_iter().map(|e| e.word()).collect();
            if !exposures.is_empty() {
                v["exposures"] = json!(exposures);
            }
            v["step"] = json!(f.step);
            v["step_line"] = json!(f.line);
            v["step_label"] = json!(f.label);
            v["mismatches"] = f.mismatches.iter().map(mismatch_json).collect();
        }
        Status::Unsupported(missing) => v["missing_features"] = json!(missing),
        Status::NotExercised(why) => v["not_exercised"] = json!(why),
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
}

/// The counts of each level of `a`, keyed by the level's word.
fn levels_json(a: &super::AreaConformance) -> Map<String, Value> {
    LEVELS
        .iter()
        .zip(&a.levels)
        .map(|(level, c)| (level_word(*level).to_owned(), c.to_json()))
        .collect()
}

/// The JSON report (reports/report.schema.json).
pub fn to_json(report: &RunReport) -> Value {
    let areas: Map<String, Value> = report
        .by_area()
        .iter()
        .map(|(a, c)| (a.clone(), counts_json(c)))
        .collect();
    let cases: Vec<Value> = report
        .cases()
        .map(|r| case_json(r.case, r.outcome, r.verdict))
        .collect();
    let conformance = report.conformance();
    let conformance_areas: Map<String, Value> = conformance
        .areas
        .iter()
        .map(|(area, a)| {
            let mut v = levels_json(a);
            v.insert("statement".into(), json!(a.statement(area)));
            (area.clone(), Value::Object(v))
        })
        .collect();
    let conformance_dialects: Map<String, Value> = conformance
        .dialects
        .iter()
        .map(|(name, a)| {
            let mut v = levels_json(a);
            let label = report.dialect_label(name);
            v.insert("label".into(), json!(label));
            v.insert(
                "claimed".into(),
                json!(crate::protocol::dialects::lookup(name)
                    .is_some_and(|d| report.implementation.claim_of(d).is_some())),
            );
            v.insert(
                "statement".into(),
                json!(a.statement(&format!("dialect {label}"))),
            );
            (name.clone(), Value::Object(v))
        })
        .collect();
    let mut out = json!({
        "report_version": 1,
        "protocol_version": crate::protocol::PROTOCOL_VERSION,
        "runner": {"name": "skillspec", "version": env!("CARGO_PKG_VERSION")},
        "implementation": report.implementation,
        "cases_dir": report.cases_dir,
        "suite": report.suite,
        "known_failures": report.known_failures,
        "for_information": report.for_information,
        "summary": counts_json(&report.totals()),
        "areas": areas,
        "conformance": {
            "areas": conformance_areas,
            "dialects": conformance_dialects,
            "unsafe": conformance.unsafe_total(),
            "unsafe_distinct": report.unsafe_distinct(),
            "permissive": conformance.permissive_total(),
            "different": conformance.different_total(),
        },
        "cases": cases,
    });
    if let Some(stopped) = &report.stopped {
        let mut v = json!({"reason": stopped.reason});
        if let Some(f) = &stopped.fault {
            v["error"] = json!(f.message());
            add_fault(&mut v, f);
        }
        out["stopped"] = v;
    }
    out
}

/// The `summary` (and `areas`) counts of report.json, by name, as [`to_json`] writes them.
pub fn counts_by_name(c: &Counts) -> Vec<(String, u64)> {
    match counts_json(c) {
        Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| (k, v.as_u64().unwrap_or(0)))
            .collect(),
        _ => Vec::new(),
    }
}

fn text(v: &Value, key: &str) -> Result<String, String> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("`{key}` is not a string")),
        None => Err(format!("`{key}` is missing")),
    }
}

fn opt_text(v: &Value, key: &str) -> Result<Option<String>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text(v, key).map(Some),
    }
}

fn number(v: &Value, key: &str) -> Result<u64, String> {
    match v.get(key) {
        Some(n) => n
            .as_u64()
            .ok_or_else(|| format!("`{key}` is not a whole number")),
        None => Err(format!("`{key}` is missing")),
    }
}

fn opt_number(v: &Value, key: &str) -> Result<Option<u64>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => number(v, key).map(Some),
    }
}

fn texts(v: &Value, key: &str) -> Result<Vec<String>, String> {
    let bad = || format!("`{key}` is not a list of strings");
    match v.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(str::to_owned).ok_or_else(bad))
            .collect(),
        Some(_) => Err(bad()),
    }
}

fn size(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn request(v: &Value) -> Result<RequestId, String> {
    let kind = text(v, "type")?;
    let kind = REQUEST_TYPES
        .into_iter()
        .find(|t| *t == kind)
        .ok_or_else(|| format!("unknown request type `{}`", super::one_line(&kind)))?;
    Ok(RequestId {
        kind,
        seq: opt_number(v, "seq")?,
        index: opt_number(v, "index")?.map(size),
    })
}

/// The breakage a case or `stopped` tells of, if it tells of one.
fn fault(v: &Value, message: String) -> Result<Option<Fault>, String> {
    let unanswered = match v.get("unanswered_request") {
        None | Some(Value::Null) => None,
        Some(r) => Some(request(r).map_err(|e| format!("`unanswered_request`: {e}"))?),
    };
    let stderr_tail = opt_text(v, "adapter_stderr")?;
    Ok(Some(Fault {
        unanswered,
        stderr_tail,
        ..Fault::message_only(message)
    })
    .filter(|f| f.unanswered.is_some() || f.stderr_tail.is_some()))
}

fn mismatch(m: &Value) -> Result<Mismatch, String> {
    let exposure = opt_text(m, "exposure")?;
    let kind = match (m.get("kind").and_then(Value::as_str), exposure.as_deref()) {
        (Some("unsafe"), Some(word)) => MismatchKind::Unsafe(Exposure::parse(word).ok_or_else(|| {
            format!(
                "exposure `{}` is not one of SPEC.md's closed list",
                super::one_line(word)
            )
        })?),
        (Some("unsafe"), None) => return Err("an unsafe mismatch has no `exposure`".into()),
        (Some("permissive"), _) => MismatchKind::Permissive,
        (Some("different"), _) => MismatchKind::Interop,
        (Some("safety" | "interop"), _) | (None, _) => {
            return Err("a mismatch has no `kind` of unsafe, permissive or different: the report was written by a runner older than these verdicts; run the suite again with this runner".into())
        }
        (Some(other), _) => {
            return Err(format!(
                "mismatch kind `{}` is not unsafe, permissive or different",
                super::one_line(other)
            ))
        }
    };
    Ok(Mismatch {
        what: text(m, "what")?,
        expected: text(m, "expected")?,
        actual: text(m, "actual")?,
        kind,
        missing_tool: opt_text(m, "missing_tool")?,
    })
}

fn status(v: &Value) -> Result<Status, String> {
    Ok(match text(v, "status")?.as_str() {
        "pass" => Status::Pass,
        "fail" => {
            let mismatches = match v.get("mismatches") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a.iter().map(mismatch).collect::<Result<_, _>>()?,
                Some(_) => return Err("`mismatches` is not a list".into()),
            };
            Status::Fail(Failure {
                step: size(opt_number(v, "step")?.unwrap_or(0)),
                line: size(opt_number(v, "step_line")?.unwrap_or(0)),
                label: opt_text(v, "step_label")?.unwrap_or_default(),
                mismatches,
            })
        }
        "unsupported" => Status::Unsupported(
            texts(v, "missing_features")?
                .iter()
                .map(|name| {
                    Need::parse(name).ok_or_else(|| {
                        format!(
                            "`missing_features`: no feature or format `{}`",
                            super::one_line(name)
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
        "not-exercised" => Status::NotExercised(opt_text(v, "not_exercised")?.unwrap_or_default()),
        "skipped" => Status::Skipped(opt_text(v, "precondition")?.unwrap_or_default()),
        "error" => {
            let message = opt_text(v, "error")?.unwrap_or_default();
            Status::Error {
                fault: fault(v, message.clone())?,
                message,
                broken: v
                    .get("broken_implementation")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            }
        }
        "not-run" => Status::NotRun,
        other => {
            return Err(format!(
                "status `{}` is not one of this runner's",
                super::one_line(other)
            ))
        }
    })
}

fn case(v: &Value) -> Result<(ReportCase, CaseOutcome), String> {
    let clauses = texts(v, "clauses")?;
    let level = match opt_text(v, "level")? {
        Some(word) => level_from_word(&word).ok_or_else(|| {
            format!(
                "level `{}` is not MUST, SHOULD or MAY",
                super::one_line(&word)
            )
        })?,
        None => level_of(&clauses),
    };
    let case = ReportCase {
        id: text(v, "id")?,
        summary: opt_text(v, "summary")?,
        file: text(v, "file")?,
        line: size(number(v, "line")?),
        area: text(v, "area")?,
        clauses,
        level,
        twin_of: opt_text(v, "twin_of")?,
        // A report of a runner before dialects: every case was Portable Skills'.
        dialect: opt_text(v, "dialect")?
            .unwrap_or_else(|| crate::protocol::dialects::DEFAULT.to_owned()),
        hardening: v.get("hardening").and_then(Value::as_bool).unwrap_or(false),
    };
    let outcome = CaseOutcome {
        status: status(v)?,
        duration: Duration::from_millis(opt_number(v, "duration_ms")?.unwrap_or(0)),
    };
    Ok((case, outcome))
}

/// Reads a parsed report.json back into its run. Errors say which case or field is wrong.
pub fn from_json(v: &Value) -> Result<RunReport, String> {
    let imp = v
        .get("implementation")
        .ok_or("`implementation` is missing")?;
    let mut implementation: ImplInfo = serde_json::from_value(imp.clone())
        .map_err(|e| format!("`implementation`: {}", super::one_line(&e.to_string())))?;
    // Written apart from `features`, which keeps only the names this runner knows.
    implementation
        .unknown_features
        .extend(texts(imp, "unknown_features").map_err(|e| format!("`implementation`: {e}"))?);
    let known_failures: BTreeSet<String> = texts(v, "known_failures")?.into_iter().collect();
    let Some(Value::Array(cases)) = v.get("cases") else {
        return Err("`cases` is not a list".into());
    };
    let results = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            case(c).map_err(|e| {
                let id = c.get("id").and_then(Value::as_str).unwrap_or("?");
                format!("case {} (`{}`): {e}", i + 1, super::one_line(id))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // One verdict per case: a report listing an id twice would count it twice.
    let mut seen = BTreeSet::new();
    for (i, (c, _)) in results.iter().enumerate() {
        if !seen.insert(c.id.as_str()) {
            return Err(format!(
                "case {} lists the id `{}` a second time: a report holds each case once",
                i + 1,
                super::one_line(&c.id)
            ));
        }
    }
    let stopped = match v.get("stopped") {
        None | Some(Value::Null) => None,
        Some(s) => {
            let reason = text(s, "reason").map_err(|e| format!("`stopped`: {e}"))?;
            let message = opt_text(s, "error").map_err(|e| format!("`stopped`: {e}"))?;
            let fault = match message {
                Some(m) => Some(fault(s, m.clone())?.unwrap_or_else(|| Fault::message_only(m))),
                None => fault(s, String::new())?,
            };
            Some(Stopped { reason, fault })
        }
    };
    let cases_dir = text(v, "cases_dir")?;
    Ok(RunReport {
        implementation,
        // What the run found; for an earlier runner's report, what this one finds now.
        suite: match v.get("suite") {
            Some(s) if s.is_object() => s.clone(),
            _ => crate::suite::report_entry(&cases_dir),
        },
        cases_dir,
        results,
        known_failures,
        stopped,
        for_information: texts(v, "for_information")?,
    })
}

/// The largest report.json the report commands read. Reason: a report of the whole suite is
/// under 1 MiB (the committed ones of real runtimes, about 700 KiB), so 16 MiB leaves room for a
/// run in which every case ends with a full 8 KiB stderr tail; a bigger file is not a report
/// this runner wrote, and reading it whole would cost memory without bound.
pub const MAX_REPORT_BYTES: u64 = 16 * 1024 * 1024;

/// The bytes of the report file `file` ([`crate::input::read_regular`], at most
/// [`MAX_REPORT_BYTES`]).
fn read_regular(file: &Path) -> Result<Vec<u8>, String> {
    crate::input::read_regular(
        file,
        MAX_REPORT_BYTES,
        "a report is a report.json file or the directory holding one",
    )
}

/// Reads a report given as a file or as the directory that holds `report.json`: a regular file
/// of at most [`MAX_REPORT_BYTES`], JSON, of a `report_version` this runner reads, with `cases`.
/// Errors name the file and say what is wrong.
pub fn read_report(path: &Path) -> Result<Value, String> {
    let file = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_path_buf()
    };
    let bytes = read_regular(&file)?;
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
