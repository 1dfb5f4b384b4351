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
//! unless asked to merge an incomplete set. It works on report.json values only: the merged
//! `summary`, `areas` and any other per-area counts (such as `conformance`) are the partitions'
//! counts added up and checked against the cases; the merged junit.xml is written from the
//! merged cases the way `skillspec run` writes it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::view::{self, CaseView, LevelCounts, ReportView};
use super::{visible, RunReport, TAIL_BYTES, TAIL_LINES};
use crate::cases::Case;

/// Slice `index` (1-based) of `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub index: u64,
    pub of: u64,
}

/// The largest N of `--partition K/N`.
pub const MAX_PARTITIONS: u64 = 1000;

impl FromStr for Partition {
    type Err = String;

    fn from_str(s: &str) -> Result<Partition, String> {
        let bad = || {
            format!("`{s}`: expected K/N, slice K of N with 1 <= K <= N <= {MAX_PARTITIONS} (for example 2/3)")
        };
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let of: u64 = n.trim().parse().map_err(|_| bad())?;
        if of == 0 || of > MAX_PARTITIONS || index == 0 || index > of {
            return Err(bad());
        }
        Ok(Partition { index, of })
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

/// The slice (1-based) of `of` that the case `id` belongs to.
pub fn slice_of(id: &str, of: u64) -> u64 {
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % of.max(1) + 1
}

impl Partition {
    /// Whether the case `id` is in this slice.
    pub fn holds(&self, id: &str) -> bool {
        slice_of(id, self.of) == self.index
    }
}

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

/// Writes report.json (with `partition`) and junit.xml of one partition into `dir`.
pub fn write_partition(
    report: &RunReport<'_>,
    dir: &Path,
    partition: &Value,
) -> std::io::Result<()> {
    super::write(report, dir)?;
    let mut v = super::to_json(report);
    v["partition"] = partition.clone();
    write_json(&dir.join("report.json"), &v)
}

/// Writes `v` as pretty JSON with a final newline.
pub fn write_json(path: &Path, v: &Value) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
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
    visible(format!("{name} {version}").trim()).into_owned()
}

fn describe_runner(v: &Value) -> String {
    let r = v.get("runner").cloned().unwrap_or(Value::Null);
    let name = r.get("name").and_then(Value::as_str).unwrap_or("?");
    let version = r.get("version").and_then(Value::as_str).unwrap_or("?");
    visible(&format!("{name} {version}")).into_owned()
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
                    visible(&p.get(key).map(Value::to_string).unwrap_or("none".into())).into_owned()
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

/// The `summary` keys of report.json and the verdict each counts.
const SUMMARY_KEYS: [(&str, &str); 8] = [
    ("passed", "pass"),
    ("failed", "fail"),
    ("known_failures", "known-failure"),
    ("fixed", "fixed"),
    ("unsupported", "unsupported"),
    ("skipped", "skipped"),
    ("errored", "error"),
    ("not_run", "not-run"),
];

fn counts_of<'a>(verdicts: impl Iterator<Item = &'a str>) -> BTreeMap<&'static str, u64> {
    let mut m: BTreeMap<&'static str, u64> = SUMMARY_KEYS.iter().map(|(k, _)| (*k, 0)).collect();
    let mut total = 0;
    for v in verdicts {
        total += 1;
        if let Some((k, _)) = SUMMARY_KEYS.iter().find(|(_, w)| *w == v) {
            *m.entry(k).or_default() += 1;
        }
    }
    m.insert("total", total);
    m
}

fn agrees(counts: &BTreeMap<&'static str, u64>, written: Option<&Value>) -> bool {
    counts.iter().all(|(k, n)| {
        written
            .and_then(|w| w.get(*k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
            == *n
    })
}

/// Checks a report's `summary` and `areas` against its cases.
fn check_counts(input: &Input) -> Result<(), String> {
    let cases: Vec<&Value> = input
        .report
        .get("cases")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    fn verdict<'a>(c: &&'a Value) -> &'a str {
        c.get("verdict").and_then(Value::as_str).unwrap_or("")
    }
    let summary = counts_of(cases.iter().map(verdict));
    if !agrees(&summary, input.report.get("summary")) {
        return Err(format!(
            "{}: its summary does not match its cases",
            input.source
        ));
    }
    let mut areas: BTreeSet<&str> = BTreeSet::new();
    for c in &cases {
        areas.insert(c.get("area").and_then(Value::as_str).unwrap_or(""));
    }
    for area in areas {
        let counts = counts_of(
            cases
                .iter()
                .filter(|c| c.get("area").and_then(Value::as_str).unwrap_or("") == area)
                .map(verdict),
        );
        let written = input.report.get("areas").and_then(|a| a.get(area));
        if !agrees(&counts, written) {
            return Err(format!(
                "{}: its counts of area `{}` do not match its cases",
                input.source,
                visible(area)
            ));
        }
    }
    Ok(())
}

/// Adds `v` into `acc`: numbers are summed, objects merged key by key, anything else kept.
fn add_json(acc: &mut Value, v: &Value) {
    if let (Some(x), Some(y)) = (acc.as_u64(), v.as_u64()) {
        *acc = json!(x + y);
        return;
    }
    if let (Value::Object(a), Value::Object(b)) = (acc, v) {
        for (k, x) in b {
            match a.get_mut(k) {
                Some(y) => add_json(y, x),
                None => {
                    a.insert(k.clone(), x.clone());
                }
            }
        }
    }
}

fn sorted(m: &Map<String, Value>) -> Map<String, Value> {
    let b: BTreeMap<&String, &Value> = m.iter().collect();
    b.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Sums the `key` objects of the inputs (per-area maps come out sorted, as a run writes them).
fn sum_of(inputs: &[&Input], key: &str) -> Option<Value> {
    let mut acc: Option<Value> = None;
    for i in inputs {
        if let Some(v) = i.report.get(key) {
            match &mut acc {
                None => acc = Some(v.clone()),
                Some(a) => add_json(a, v),
            }
        }
    }
    acc
}

/// The conformance counts added up, with each area's statement (and the overall one, if the
/// reports have one) written anew from the added-up counts.
fn merged_conformance(inputs: &[&Input]) -> Option<Value> {
    let mut c = sum_of(inputs, "conformance")?;
    if let Some(areas) = c.get_mut("areas").and_then(Value::as_object_mut) {
        *areas = sorted(areas);
        for by_level in areas.values_mut() {
            let levels: BTreeMap<&'static str, LevelCounts> = view::LEVELS
                .iter()
                .filter_map(|l| {
                    by_level
                        .get(*l)
                        .map(|v| (*l, LevelCounts::from_json_counts(v)))
                })
                .collect();
            if by_level.get("statement").is_some() {
                by_level["statement"] = json!(view::area_statement(&levels));
            }
        }
    }
    Some(c)
}

/// Merges partitions of one run into one report. Errors say which reports disagree and why.
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
    // Cases, in the order a full run has them: the suite's, by id.
    let mut cases: Vec<(String, Value)> = Vec::new();
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for s in by_index.values() {
        let src = &s.input.source;
        for c in s
            .input
            .report
            .get("cases")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = c.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
            let belongs = slice_of(&id, of);
            if belongs != s.index {
                return Err(format!(
                    "{src}: case `{}` is in partition {}/{of} but belongs to {belongs}/{of}: this report was not sliced by this runner's --partition",
                    visible(&id),
                    s.index
                ));
            }
            if let Some(other) = seen.insert(id.clone(), src) {
                return Err(format!(
                    "case `{}` is in both {other} and {src}: overlapping partitions cannot be merged",
                    visible(&id)
                ));
            }
            cases.push((id, c.clone()));
        }
        check_counts(s.input)?;
    }
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    let selected = slices[0].part.get("selected").and_then(Value::as_u64);
    if missing.is_empty() && selected.is_some_and(|n| n != cases.len() as u64) {
        return Err(format!(
            "the partitions hold {} cases but the run selected {}: some partition reports are incomplete",
            cases.len(),
            selected.unwrap_or(0)
        ));
    }
    let used: Vec<&Input> = by_index.values().map(|s| s.input).collect();
    let mut summary = sum_of(&used, "summary").unwrap_or_else(|| json!({}));
    let mut areas = sum_of(&used, "areas").unwrap_or_else(|| json!({}));
    if let Some(a) = areas.as_object_mut() {
        *a = sorted(a);
    }
    if let Some(s) = summary.as_object_mut() {
        if s.is_empty() {
            *s = counts_of(std::iter::empty())
                .into_iter()
                .map(|(k, v)| (k.to_owned(), json!(v)))
                .collect();
        }
    }
    let conformance = merged_conformance(&used);
    let stopped = used.iter().zip(by_index.keys()).find_map(|(i, k)| {
        let mut s = i.report.get("stopped")?.clone();
        let reason = s.get("reason").and_then(Value::as_str).unwrap_or("");
        s["reason"] = json!(format!("partition {k}/{of}: {reason}"));
        Some(s)
    });
    let first = &slices[0];
    let mut out = Map::new();
    let template = first.input.report.as_object().cloned().unwrap_or_default();
    for (k, v) in &template {
        let value = match k.as_str() {
            "partition" => {
                if missing.is_empty() {
                    continue;
                }
                let mut p = first.part.clone();
                if let Some(o) = p.as_object_mut() {
                    o.remove("index");
                    o.insert("merged".into(), json!(by_index.keys().collect::<Vec<_>>()));
                    o.insert("missing".into(), json!(missing));
                }
                p
            }
            "summary" => summary.clone(),
            "areas" => areas.clone(),
            "cases" => Value::Array(cases.iter().map(|c| c.1.clone()).collect()),
            "conformance" => conformance.clone().unwrap_or(Value::Null),
            "stopped" => match &stopped {
                Some(s) => s.clone(),
                None => continue,
            },
            _ => v.clone(),
        };
        out.insert(k.clone(), value);
    }
    if let (Some(c), false) = (&conformance, out.contains_key("conformance")) {
        out.insert("conformance".into(), c.clone());
    }
    if let (Some(s), false) = (&stopped, out.contains_key("stopped")) {
        out.insert("stopped".into(), s.clone());
    }
    let mut report = Value::Object(out);
    // The overall statement, if the reports carry one, from the merged counts.
    if report
        .get("conformance")
        .and_then(|c| c.get("statement"))
        .is_some()
    {
        let line = ReportView::from_json("merged", &report).statement();
        report["conformance"]["statement"] = json!(line);
    }
    let junit = junit_from_json(&report, summary_of).map_err(|e| format!("junit.xml: {e}"))?;
    Ok(Merged {
        cases: cases.len(),
        report,
        junit,
        missing,
    })
}

/// The end of a stderr tail that a person reads (as the terminal and a run's junit.xml show it).
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

/// The text a run writes for a non-passing case (`reports::describe`), from report.json.
pub fn describe_json(c: &CaseView, summary: Option<&str>) -> String {
    let mut s = String::new();
    let loc = format!("{}:{}", c.file, c.line);
    match c.status.as_str() {
        "pass" => {
            let _ = writeln!(s, "PASS {}  ({loc})", c.id);
        }
        "fail" => {
            let _ = writeln!(s, "FAIL {}", c.id);
            if let Some(summary) = summary {
                let _ = writeln!(s, "  {summary}");
            }
            let _ = writeln!(
                s,
                "  at {}:{} (step {}: {})",
                c.file,
                c.step_line.unwrap_or(0),
                c.step.unwrap_or(0),
                c.step_label.as_deref().unwrap_or("")
            );
            let _ = writeln!(s, "  clauses: {}", c.clauses.join(", "));
            for m in &c.mismatches {
                let _ = writeln!(s, "  {}:", m.what);
                let _ = writeln!(s, "    expected: {}", m.expected);
                let _ = writeln!(s, "    actual:   {}", m.actual);
            }
        }
        "skipped" => {
            let _ = writeln!(
                s,
                "SKIPPED {}  ({loc}): {}",
                c.id,
                c.precondition.as_deref().unwrap_or("")
            );
        }
        "unsupported" => {
            let _ = writeln!(
                s,
                "UNSUPPORTED {}  ({loc}): needs {}",
                c.id,
                c.missing_features.join(", ")
            );
        }
        "error" => {
            let _ = writeln!(s, "ERROR {}  ({loc})", c.id);
            for line in c.error.as_deref().unwrap_or("").lines() {
                let _ = writeln!(s, "  {line}");
            }
            if let Some(r) = &c.unanswered {
                let _ = writeln!(s, "  unanswered request: {r}");
            }
            match c.adapter_stderr.as_deref() {
                Some("") => {
                    let _ = writeln!(s, "  adapter stderr: (nothing)");
                }
                Some(tail) => {
                    let shown = tail_for_people(tail);
                    if shown.len() < tail.len() {
                        let _ = writeln!(
                            s,
                            "  adapter stderr (its last {} bytes; report.json has {}):",
                            shown.len(),
                            tail.len()
                        );
                    } else {
                        let _ = writeln!(s, "  adapter stderr (its last {} bytes):", tail.len());
                    }
                    for line in shown.lines() {
                        let _ = writeln!(s, "    {line}");
                    }
                }
                None => {}
            }
        }
        _ => {
            let _ = writeln!(
                s,
                "NOT RUN {}  ({loc}): the run stopped before this case",
                c.id
            );
        }
    }
    visible(&s).into_owned()
}

/// junit.xml for a report.json, as `skillspec run` writes it: one suite per area, one test
/// case per case. `summary_of` gives a case's one-line summary (report.json does not hold it).
pub fn junit_from_json(
    report: &Value,
    summary_of: &dyn Fn(&str) -> Option<String>,
) -> Result<String, quick_junit::SerializeError> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let cases: Vec<CaseView> = report
        .get("cases")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(view::case_view).collect())
        .unwrap_or_default();
    let areas: BTreeSet<&str> = cases.iter().map(|c| c.area.as_str()).collect();
    let mut out = Report::new("skillspec");
    for area in areas {
        let mut suite = TestSuite::new(visible(area).into_owned());
        for c in cases.iter().filter(|c| c.area == area) {
            let summary = c.summary.clone().or_else(|| summary_of(&c.id));
            let text = || describe_json(c, summary.as_deref());
            let status = match c.verdict.as_str() {
                "pass" => TestCaseStatus::success(),
                "fail" => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_description(text());
                    s
                }
                "fixed" => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_description(
                        "listed as a known failure, but passed: remove it from the list",
                    );
                    s
                }
                "error" => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                    s.set_description(text());
                    s
                }
                _ => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(text().trim().to_owned());
                    s
                }
            };
            let mut tc = TestCase::new(visible(&c.id).into_owned(), status);
            tc.set_classname(visible(area).into_owned());
            tc.set_time(Duration::from_millis(c.duration_ms));
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
    fn partitions_parse_and_refuse() {
        assert_eq!(
            "2/3".parse::<Partition>(),
            Ok(Partition { index: 2, of: 3 })
        );
        assert_eq!(
            " 1 / 1 ".parse::<Partition>(),
            Ok(Partition { index: 1, of: 1 })
        );
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "1/2/3", "-1/2", "1/1001"] {
            let e = bad.parse::<Partition>().expect_err(bad);
            assert!(e.contains("expected K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn slices_are_balanced_and_cover_every_case_once() {
        let ids: Vec<String> = (0..2000).map(|i| format!("area.case-{i}")).collect();
        for n in [1, 2, 3, 4, 7] {
            let parts: Vec<Partition> = (1..=n).map(|index| Partition { index, of: n }).collect();
            for id in &ids {
                assert_eq!(parts.iter().filter(|p| p.holds(id)).count(), 1, "{id} {n}");
            }
            // Statistically balanced: each slice within 30% of its fair share.
            for p in &parts {
                let held = ids.iter().filter(|id| p.holds(id)).count() as u64;
                let fair = 2000 / n;
                assert!(held * 10 > fair * 7 && held * 10 < fair * 13, "{p}: {held}");
            }
        }
    }

    #[test]
    fn sums_add_numbers_and_merge_objects() {
        let mut a = json!({"read": {"MUST": {"passed": 2, "unsafe": 1}, "statement": "a"}});
        add_json(
            &mut a,
            &json!({"read": {"MUST": {"passed": 3}, "SHOULD": {"passed": 1}, "statement": "b"}, "run": {"MUST": {"passed": 1}}}),
        );
        assert_eq!(
            a,
            json!({"read": {"MUST": {"passed": 5, "unsafe": 1}, "SHOULD": {"passed": 1}, "statement": "a"},
                   "run": {"MUST": {"passed": 1}}})
        );
    }

    #[test]
    fn long_stderr_tails_show_their_end() {
        let many: String = (0..100).map(|i| format!("line {i}\n")).collect();
        assert!(tail_for_people(&many).starts_with("line 80\n"));
    }
}
