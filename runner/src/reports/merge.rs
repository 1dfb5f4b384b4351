//! Splitting a run across a CI matrix: `skillspec run --partition K/N` and
//! `skillspec report merge`.
//!
//! A case belongs to slice `1 + (u64 from the first 8 bytes, big-endian, of SHA-256(case id)) mod
//! N`. The slice depends on the case id and N alone: the same on every machine and in every
//! order, and adding or removing a case never moves another case to a different slice. (Slices
//! are balanced only statistically; a small selection can leave a slice empty, which is a valid,
//! empty partition.)
//!
//! A partition's report.json carries `partition`: its index and N, how many cases the whole run
//! selected, the filter, and a fingerprint of the selected cases (their ids and file bytes).
//! [`merge`] refuses partitions that do not belong to one run (another runner, implementation,
//! suite, selection, N or known-failures list), overlapping partitions always, and missing ones
//! unless asked to merge an incomplete set. Each partition's report.json is read back into its
//! run ([`from_json`]) and checked (its verdicts, `summary` and `areas` must follow from its
//! cases); the cases of all of them, in id order, make the merged [`RunReport`], whose
//! report.json and junit.xml are written by the very functions `skillspec run` writes its own
//! with, so the merge of a partitioned run equals the full run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::json::{counts_by_name, from_json, to_json};
use super::{junit, one_line, RunReport, Stopped};
use crate::cases::Case;

pub use crate::execution::plan::{slice_of, Partition, PartitionError, MAX_PARTITIONS};

/// A fingerprint of the selected cases: SHA-256 over their ids and file bytes, in id order.
pub fn selection_fingerprint(selected: &[&Case]) -> String {
    let mut sorted: Vec<&&Case> = selected.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let mut h = Sha256::new();
    for c in sorted {
        h.update(c.id.as_bytes());
        h.update([0]);
        // A file that vanished since loading only changes the fingerprint.
        h.update(std::fs::read(&c.file).unwrap_or_default());
        h.update([0]);
    }
    let mut s = String::from("sha256:");
    for b in h.finalize() {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The `partition` object of a partition's report.json. `selected` is every case the run
/// selected (before slicing).
pub fn partition_json(p: Partition, filter: Option<&str>, selected: &[&Case]) -> Value {
    json!({
        "index": p.index,
        "of": p.of,
        "selected": selected.len(),
        "filter": filter,
        "suite": selection_fingerprint(selected),
    })
}

/// One report given to [`merge`], with where it came from (for messages).
pub struct Input {
    pub source: String,
    pub report: Value,
}

/// The result of [`merge`].
pub struct Merged {
    pub report: Value,
    pub junit: String,
    /// How many cases the merged report holds.
    pub cases: usize,
    /// Partitions missing from an incomplete merge.
    pub missing: Vec<u64>,
}

/// The fields of a partition that must agree across one run.
struct Slice<'a> {
    input: &'a Input,
    index: u64,
    of: u64,
    part: &'a Value,
}

fn describe_impl(v: &Value) -> String {
    let imp = v.get("implementation").cloned().unwrap_or(Value::Null);
    let name = imp.get("name").and_then(Value::as_str).unwrap_or("");
    let version = imp.get("version").and_then(Value::as_str).unwrap_or("");
    one_line(format!("{name} {version}").trim()).into_owned()
}

fn describe_runner(v: &Value) -> String {
    let r = v.get("runner").cloned().unwrap_or(Value::Null);
    let name = r.get("name").and_then(Value::as_str).unwrap_or("?");
    let version = r.get("version").and_then(Value::as_str).unwrap_or("?");
    one_line(&format!("{name} {version}")).into_owned()
}

fn slice<'a>(input: &'a Input) -> Result<Slice<'a>, String> {
    let src = &input.source;
    let part = input
        .report
        .get("partition")
        .filter(|p| p.is_object())
        .ok_or_else(|| {
            format!("{src} is not a partition of a run: it has no `partition` (write partitions with `skillspec run --partition K/N --report DIR`)")
        })?;
    if part.get("merged").is_some() {
        return Err(format!(
            "{src} is itself an incomplete merge: merge the partitions' own reports"
        ));
    }
    let num = |k: &str| part.get(k).and_then(Value::as_u64);
    // The merge lists the missing partitions: N is bounded as `--partition` bounds it.
    if let Some(of) = num("of").filter(|of| *of > MAX_PARTITIONS) {
        return Err(format!(
            "{src}: its `partition` says of {of}, more than the {MAX_PARTITIONS} partitions `run --partition` writes"
        ));
    }
    match (num("index"), num("of")) {
        (Some(index), Some(of)) if of >= 1 && (1..=of).contains(&index) => Ok(Slice {
            input,
            index,
            of,
            part,
        }),
        _ => Err(format!(
            "{src}: its `partition` has no valid index and of (1 <= index <= of)"
        )),
    }
}

/// Checks that every slice belongs to the same run as the first.
fn same_run(slices: &[Slice<'_>]) -> Result<(), String> {
    let first = &slices[0];
    let (a, fa) = (&first.input.report, &first.input.source);
    for s in &slices[1..] {
        let (b, fb) = (&s.input.report, &s.input.source);
        if a.get("runner") != b.get("runner")
            || a.get("protocol_version") != b.get("protocol_version")
            || a.get("report_version") != b.get("report_version")
        {
            return Err(format!(
                "{fb} was written by {} and {fa} by {}: partitions of one run come from one runner version",
                describe_runner(b),
                describe_runner(a)
            ));
        }
        if a.get("implementation") != b.get("implementation") {
            let (ib, ia) = (describe_impl(b), describe_impl(a));
            return Err(if ia == ib {
                format!("{fb} and {fa} both test {ia} but with different features or options: partitions of one run test one implementation")
            } else {
                format!("{fb} tested {ib} but {fa} tested {ia}: partitions of one run test one implementation")
            });
        }
        if s.of != first.of {
            return Err(format!(
                "{fb} is partition {}/{} but {fa} is partition {}/{}: the partitions of one run share N",
                s.index, s.of, first.index, first.of
            ));
        }
        for (key, what) in [
            ("filter", "filter"),
            ("selected", "number of selected cases"),
            ("suite", "fingerprint of the selected cases"),
        ] {
            if s.part.get(key) != first.part.get(key) {
                let show = |p: &Value| {
                    one_line(&p.get(key).map(Value::to_string).unwrap_or("none".into()))
                        .into_owned()
                };
                return Err(format!(
                    "{fb} and {fa} select different cases (their {what}: {} and {}): partitions of one run come from the same suite and filter",
                    show(s.part),
                    show(first.part)
                ));
            }
        }
        if a.get("known_failures") != b.get("known_failures") {
            return Err(format!(
                "{fb} and {fa} were run with different known-failures lists"
            ));
        }
    }
    Ok(())
}

/// Checks that what a partition says follows from its cases (`run`, read back from it): each
/// case's verdict (from its status and the known-failures list), `summary` and `areas`.
fn check_counts(input: &Input, run: &RunReport) -> Result<(), String> {
    let src = &input.source;
    let written = input.report.get("cases").and_then(Value::as_array);
    for (r, c) in run.cases().zip(written.into_iter().flatten()) {
        let verdict = c.get("verdict").and_then(Value::as_str).unwrap_or("");
        if verdict != r.verdict.word() {
            return Err(format!(
                "{src}: case `{}` has verdict `{}`, but its status `{}` and the known-failures list make it `{}`",
                one_line(&r.case.id),
                one_line(verdict),
                r.outcome.status.word(),
                r.verdict.word()
            ));
        }
    }
    let agrees = |counts: &super::Counts, written: Option<&Value>| {
        counts_by_name(counts).iter().all(|(k, n)| {
            written
                .and_then(|w| w.get(k))
                .and_then(Value::as_u64)
                .unwrap_or(0)
                == *n
        })
    };
    if !agrees(&run.totals(), input.report.get("summary")) {
        return Err(format!("{src}: its summary does not match its cases"));
    }
    for (area, counts) in run.by_area() {
        let written = input.report.get("areas").and_then(|a| a.get(&area));
        if !agrees(&counts, written) {
            return Err(format!(
                "{src}: its counts of area `{}` do not match its cases",
                one_line(&area)
            ));
        }
    }
    Ok(())
}

/// Merges partitions of one run into one report. `summary_of` gives the summary of a case whose
/// partition does not carry it (reports of earlier runners). Errors say which reports disagree
/// and why.
pub fn merge(
    inputs: &[Input],
    allow_incomplete: bool,
    summary_of: &dyn Fn(&str) -> Option<String>,
) -> Result<Merged, String> {
    if inputs.is_empty() {
        return Err("no report to merge".into());
    }
    let slices: Vec<Slice<'_>> = inputs.iter().map(slice).collect::<Result<_, _>>()?;
    same_run(&slices)?;
    let of = slices[0].of;
    let mut by_index: BTreeMap<u64, &Slice<'_>> = BTreeMap::new();
    for s in &slices {
        if let Some(other) = by_index.insert(s.index, s) {
            return Err(format!(
                "{} and {} are both partition {}/{}: overlapping partitions cannot be merged",
                other.input.source, s.input.source, s.index, of
            ));
        }
    }
    let missing: Vec<u64> = (1..=of).filter(|i| !by_index.contains_key(i)).collect();
    if !missing.is_empty() && !allow_incomplete {
        let list = |v: Vec<u64>| {
            v.iter()
                .map(|i| format!("{i}/{of}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(format!(
            "partition(s) {} missing (given: {}): pass every partition's report, or --allow-incomplete to merge what there is",
            list(missing),
            list(by_index.keys().copied().collect())
        ));
    }
    let mut runs = Vec::new();
    let mut results = Vec::new();
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for (k, s) in &by_index {
        let src = &s.input.source;
        let mut run = from_json(&s.input.report).map_err(|e| format!("{src}: {e}"))?;
        for (case, _) in &run.results {
            let belongs = slice_of(&case.id, of);
            if belongs != *k {
                return Err(format!(
                    "{src}: case `{}` is in partition {k}/{of} but belongs to {belongs}/{of}: this report was not sliced by this runner's --partition",
                    one_line(&case.id),
                ));
            }
            if let Some(other) = seen.insert(case.id.clone(), src) {
                return Err(format!(
                    "case `{}` is in both {other} and {src}: overlapping partitions cannot be merged",
                    one_line(&case.id)
                ));
            }
        }
        check_counts(s.input, &run)?;
        results.append(&mut run.results);
        runs.push((*k, run));
    }
    // In the order of a full run: the suite's, by id.
    results.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    for (case, _) in &mut results {
        if case.summary.is_none() {
            case.summary = summary_of(&case.id);
        }
    }
    let selected = slices[0].part.get("selected").and_then(Value::as_u64);
    if missing.is_empty() && selected.is_some_and(|n| n != results.len() as u64) {
        return Err(format!(
            "the partitions hold {} cases but the run selected {}: some partition reports are incomplete",
            results.len(),
            selected.unwrap_or(0)
        ));
    }
    let stopped = runs.iter().find_map(|(k, run)| {
        let s = run.stopped.as_ref()?;
        Some(Stopped {
            reason: format!("partition {k}/{of}: {}", s.reason),
            fault: s.fault.clone(),
        })
    });
    // Every partition was run with the same implementation and known failures (`same_run`).
    let (_, first_run) = runs.swap_remove(0);
    let merged = RunReport {
        results,
        stopped,
        ..first_run
    };
    let mut report = to_json(&merged);
    // The runner that ran the cases, as the partitions (which agree) say.
    let first = &slices[0].input.report;
    for key in ["runner", "protocol_version"] {
        if let Some(v) = first.get(key) {
            report[key] = v.clone();
        }
    }
    if !missing.is_empty() {
        let mut p = slices[0].part.clone();
        if let Some(o) = p.as_object_mut() {
            o.remove("index");
            o.insert("merged".into(), json!(by_index.keys().collect::<Vec<_>>()));
            o.insert("missing".into(), json!(missing));
        }
        report["partition"] = p;
    }
    let junit = junit(&merged).map_err(|e| format!("junit.xml: {e}"))?;
    Ok(Merged {
        cases: merged.results.len(),
        report,
        junit,
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The only partition of a run of one slice, as `run --partition 1/1` writes it, with a
    /// pass and a failure explained by a missing tool, the failure without its summary (as an
    /// earlier runner wrote it).
    fn only_partition() -> Input {
        let cases = json!([
            {"id": "read.a", "summary": "A reads.", "file": "a.yaml", "line": 1, "area": "read",
             "clauses": ["read.scope"], "status": "pass", "verdict": "pass", "duration_ms": 2},
            {"id": "run.b", "file": "b.yaml", "line": 1, "area": "run", "clauses": ["run.success"],
             "status": "fail", "verdict": "fail", "duration_ms": 3, "step": 1, "step_line": 4,
             "step_label": "call skill_run_script", "mismatches": [
                {"what": "call outcome", "expected": "success", "actual": "error unknown_tool",
                 "kind": "different", "missing_tool": "skill_run_script"}]},
        ]);
        let run = from_json(
            &json!({"implementation": {"name": "x", "version": "1", "features": []},
            "cases_dir": "c", "known_failures": [], "cases": cases}),
        )
        .expect("a run");
        let mut report = to_json(&run);
        report["partition"] = json!({"index": 1, "of": 1, "selected": 2, "filter": null,
                                     "suite": format!("sha256:{}", "0".repeat(64))});
        Input {
            source: "p1".into(),
            report,
        }
    }

    #[test]
    fn a_merge_is_written_by_the_functions_a_run_writes_with() {
        let input = only_partition();
        let summary_of = |id: &str| (id == "run.b").then(|| "B runs.".to_owned());
        let merged = merge(std::slice::from_ref(&input), false, &summary_of).expect("merges");
        let run = from_json(&merged.report).expect("reads back");
        assert_eq!(merged.report, to_json(&run));
        assert_eq!(merged.junit, junit(&run).expect("junit"));
        assert_eq!(merged.report["cases"][1]["summary"], "B runs.");
        assert!(merged.junit.contains("FAIL run.b\n  DIFFERENT: safe, but not the specified answer (skill_run_script is missing)\n  B runs.\n"), "{}", merged.junit);
        assert_eq!(
            merged.report["conformance"]["areas"]["run"]["statement"],
            "run: not implemented (skill_run_script missing in the one case run)"
        );
    }

    #[test]
    fn a_verdict_that_does_not_follow_from_its_case_is_refused() {
        let mut input = only_partition();
        input.report["cases"][0]["verdict"] = json!("known-failure");
        let e = merge(&[input], false, &|_| None).err().expect("refused");
        assert_eq!(e, "p1: case `read.a` has verdict `known-failure`, but its status `pass` and the known-failures list make it `pass`");
        let mut input = only_partition();
        input.report["summary"]["passed"] = json!(2);
        let e = merge(&[input], false, &|_| None).err().expect("refused");
        assert_eq!(e, "p1: its summary does not match its cases");
    }
}
