//! The reports people look at and runs split across a CI matrix: `run --partition`,
//! `report merge` (equal to a full run; refusals with exit 2), `report markdown` and
//! `report html` (escaping, matrix shape).

mod common;
use common::{bin, repo, skillspec, text};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use skillspec_runner::reports::merge::{self, slice_of, Input};

fn p(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Reads a report.json and checks it against reports/report.schema.json.
fn report(dir: &Path) -> Value {
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("report written"))
            .expect("report is JSON");
    let schema: Value = serde_json::from_slice(
        &std::fs::read(repo().join("reports/report.schema.json")).expect("schema"),
    )
    .expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the report schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", dir.display());
    report
}

fn ids(report: &Value) -> Vec<String> {
    report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_owned())
        .collect()
}

/// The report without what differs between runs of the same cases: durations, and the
/// `time` attributes of junit.xml.
fn without_durations(mut report: Value) -> Value {
    for c in report["cases"].as_array_mut().expect("cases") {
        c.as_object_mut().expect("case").remove("duration_ms");
    }
    report
}

fn junit_without_times(dir: &Path) -> String {
    let xml = std::fs::read_to_string(dir.join("junit.xml")).expect("junit.xml written");
    let mut out = String::new();
    let mut rest = xml.as_str();
    while let Some(at) = rest.find(" time=\"") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 7..];
        rest = &after[after.find('"').expect("closing quote") + 1..];
    }
    out.push_str(rest);
    out
}

/// Runs the filtered suite whole and in `n` partitions, merges them, and compares.
fn full_and_merged(extra: &[&str], filter: &str, n: u64, want_code: i32) -> (Value, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let full = dir.path().join("full");
    let mut args = vec!["run", "--filter", filter, "--report", p(&full)];
    args.extend_from_slice(extra);
    let out = skillspec(&args);
    assert_eq!(out.status.code(), Some(want_code), "{}", text(&out));
    let full_report = report(&full);
    assert!(full_report.get("partition").is_none());

    let mut parts = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for k in 1..=n {
        let part = dir.path().join(format!("p{k}"));
        let slice = format!("{k}/{n}");
        let mut args = vec![
            "run",
            "--filter",
            filter,
            "--partition",
            &slice,
            "--report",
            p(&part),
        ];
        args.extend_from_slice(extra);
        let out = skillspec(&args);
        let r = report(&part);
        // A partition fails exactly when one of its cases does.
        let bad = r["summary"]["failed"].as_u64().unwrap_or(0) > 0;
        assert_eq!(out.status.code(), Some(i32::from(bad)), "{}", text(&out));
        assert!(
            text(&out).contains(&format!("partition {slice}: ")),
            "{}",
            text(&out)
        );
        assert_eq!(r["partition"]["index"], json!(k));
        assert_eq!(r["partition"]["of"], json!(n));
        assert_eq!(
            r["partition"]["selected"],
            json!(full_report["cases"].as_array().map(Vec::len))
        );
        for id in ids(&r) {
            assert_eq!(slice_of(&id, n), k, "{id} is in the wrong partition");
            seen.push(id);
        }
        parts.push(part);
    }
    // Every selected case in exactly one partition.
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len(), "a case is in two partitions");
    let mut full_ids = ids(&full_report);
    full_ids.sort();
    assert_eq!(sorted, full_ids);

    let merged = dir.path().join("merged");
    let mut args = vec!["report", "merge", p(&merged)];
    // In a scrambled order: merging does not depend on it.
    for part in parts.iter().rev() {
        args.push(p(part));
    }
    let out = skillspec(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let merged_report = report(&merged);
    assert_eq!(
        junit_without_times(&full),
        junit_without_times(&merged),
        "junit.xml of the merge differs from the full run's"
    );
    (
        without_durations(full_report),
        without_durations(merged_report),
    )
}

#[test]
fn a_merged_partitioned_run_equals_the_full_run() {
    let (full, merged) = full_and_merged(&[], "read.", 3, 0);
    assert!(full["cases"].as_array().is_some_and(|c| c.len() > 30));
    assert_eq!(ids(&full), ids(&merged), "same cases in the same order");
    assert_eq!(full["summary"], merged["summary"]);
    assert_eq!(full["areas"], merged["areas"]);
    assert_eq!(full, merged);
}

#[test]
fn a_merged_partitioned_run_with_failures_equals_the_full_run() {
    let adapter = format!("{} adapter --without trading-guard", bin().display());
    let (full, merged) = full_and_merged(&["--adapter", &adapter], "run.trading.arg", 3, 1);
    assert!(full["summary"]["failed"].as_u64().is_some_and(|n| n > 5));
    assert_eq!(full, merged);
}

#[test]
fn partitions_are_deterministic_and_may_be_empty() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for d in [&a, &b] {
        let out = skillspec(&[
            "run",
            "--filter",
            "enable.",
            "--partition",
            "2/3",
            "--report",
            p(d),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    assert_eq!(ids(&report(&a)), ids(&report(&b)));
    // One case in many slices: all but one are empty, valid partitions.
    let mut held = 0;
    for k in 1..=4 {
        let d = dir.path().join(format!("one{k}"));
        let slice = format!("{k}/4");
        let out = skillspec(&[
            "run",
            "--filter",
            "discovery.portable.loads",
            "--partition",
            &slice,
            "--report",
            p(&d),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        held += ids(&report(&d)).len();
    }
    assert_eq!(held, 1);
    for bad in ["0/3", "4/3", "3", "x/y"] {
        let out = skillspec(&["run", "--partition", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out));
        assert!(text(&out).contains("expected K/N"), "{}", text(&out));
    }
}

/// Writes `v` as report.json in a new directory under `dir`.
fn put(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(
        d.join("report.json"),
        serde_json::to_string_pretty(v).expect("serializes"),
    )
    .expect("write");
    d
}

fn refused(args: &[&str], out_dir: &Path, needle: &str) {
    let out = skillspec(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("cannot merge") || t.contains("skillspec: "),
        "{t}"
    );
    assert!(t.contains(needle), "expected `{needle}` in: {t}");
    assert!(!out_dir.join("report.json").exists(), "nothing is written");
}

#[test]
fn merge_refuses_what_is_not_one_whole_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let mut parts = Vec::new();
    for k in 1..=3 {
        let part = d.join(format!("p{k}"));
        let slice = format!("{k}/3");
        let out = skillspec(&[
            "run",
            "--filter",
            "enable.",
            "--partition",
            &slice,
            "--report",
            p(&part),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        parts.push(part);
    }
    let [p1, p2, p3] = [&parts[0], &parts[1], &parts[2]];
    let out = d.join("out");
    let o = p(&out);

    refused(
        &["report", "merge", o, p(p1), p(p2)],
        &out,
        "partition(s) 3/3 missing",
    );
    refused(
        &["report", "merge", o, p(p1), p(p2), p(p3), p(p1)],
        &out,
        "are both partition 1/3",
    );

    let mut other_impl = report(p2);
    other_impl["implementation"]["version"] = json!("9.9.9");
    let x = put(d, "impl", &other_impl);
    refused(
        &["report", "merge", o, p(p1), p(&x), p(p3)],
        &out,
        "partitions of one run test one implementation",
    );

    let mut features = report(p2);
    features["implementation"]["features"] = json!([]);
    let x = put(d, "features", &features);
    refused(
        &["report", "merge", o, p(p1), p(&x), p(p3)],
        &out,
        "with different features or options",
    );

    let mut other_runner = report(p2);
    other_runner["runner"]["version"] = json!("0.0.1");
    let x = put(d, "runner", &other_runner);
    refused(
        &["report", "merge", o, p(p1), p(&x), p(p3)],
        &out,
        "one runner version",
    );

    let halves = d.join("half");
    let run = skillspec(&[
        "run",
        "--filter",
        "enable.",
        "--partition",
        "1/2",
        "--report",
        p(&halves),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    refused(&["report", "merge", o, p(p1), p(&halves)], &out, "share N");

    let filtered = d.join("filtered");
    let run = skillspec(&[
        "run",
        "--filter",
        "enable.unset",
        "--partition",
        "2/3",
        "--report",
        p(&filtered),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    refused(
        &["report", "merge", o, p(p1), p(&filtered), p(p3)],
        &out,
        "select different cases",
    );

    let whole = d.join("whole");
    let run = skillspec(&["run", "--filter", "enable.", "--report", p(&whole)]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    refused(
        &["report", "merge", o, p(&whole)],
        &out,
        "is not a partition of a run",
    );

    // A case moved into another slice's report.
    let (mut a, mut b) = (report(p1), report(p2));
    let moved = b["cases"][0].clone();
    a["cases"].as_array_mut().expect("cases").push(moved);
    b["cases"].as_array_mut().expect("cases").remove(0);
    let (xa, xb) = (put(d, "a", &a), put(d, "b", &b));
    refused(
        &["report", "merge", o, p(&xa), p(&xb), p(p3)],
        &out,
        "belongs to 2/3",
    );

    let garbage = d.join("garbage.json");
    std::fs::write(&garbage, "{not json").expect("write");
    refused(
        &["report", "merge", o, p(p1), p(&garbage)],
        &out,
        "not JSON",
    );
    refused(
        &["report", "merge", o, p(&d.join("nope"))],
        &out,
        "cannot read",
    );

    // --allow-incomplete merges what there is and says what is missing.
    let run = skillspec(&["report", "merge", "--allow-incomplete", o, p(p3), p(p1)]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(
        text(&run).contains("partition(s) 2 missing"),
        "{}",
        text(&run)
    );
    let merged = report(&out);
    assert_eq!(merged["partition"]["missing"], json!([2]));
    assert_eq!(merged["partition"]["merged"], json!([1, 3]));
    let held = ids(&report(p1)).len() + ids(&report(p3)).len();
    assert_eq!(ids(&merged).len(), held);
    assert_eq!(merged["summary"]["total"], json!(held));
    // ... but overlapping partitions never.
    std::fs::remove_dir_all(&out).expect("rm");
    refused(
        &["report", "merge", "--allow-incomplete", o, p(p1), p(p1)],
        &out,
        "are both partition 1/3",
    );
}

/// A count object of `conformance` for `cases` (test-side counting).
fn conformance_counts(cases: &[Value]) -> Value {
    let mut areas = serde_json::Map::new();
    for c in cases {
        let area = c["area"].as_str().unwrap_or("").to_owned();
        let level = c["level"].as_str().unwrap_or("MUST").to_owned();
        let key = match (c["verdict"].as_str(), c["failure_kind"].as_str()) {
            (Some("pass"), _) => "passed",
            (Some("fail"), Some("unsafe")) => "unsafe",
            (Some("fail"), Some("permissive")) => "permissive",
            (Some("fail"), _) => "different",
            _ => "errored",
        };
        // Every count of a level, as a run writes it (zero where no case counts).
        let zero = json!({"passed": 0, "not_exercised": 0, "unsafe": 0, "permissive": 0, "different": 0, "known_failures": 0,
                          "fixed": 0, "unsupported": 0, "skipped": 0, "errored": 0, "not_run": 0});
        let entry = areas.entry(area).or_insert_with(
            || json!({"MUST": zero.clone(), "SHOULD": zero.clone(), "MAY": zero, "statement": "x"}),
        );
        let n = entry[&level][key].as_u64().unwrap_or(0);
        entry[&level][key] = json!(n + 1);
    }
    let unsafe_n = cases
        .iter()
        .filter(|c| c["failure_kind"] == "unsafe")
        .count();
    let different = cases
        .iter()
        .filter(|c| c["failure_kind"] == "different")
        .count();
    json!({"areas": areas, "unsafe": unsafe_n, "permissive": 0, "different": different})
}

fn summary_of(cases: &[Value]) -> Value {
    let count = |v: &str| cases.iter().filter(|c| c["verdict"] == v).count();
    json!({"passed": count("pass"), "not_exercised": count("not-exercised"), "failed": count("fail"), "known_failures": 0, "fixed": 0,
           "unsupported": 0, "skipped": 0, "errored": count("error"), "not_run": 0, "total": cases.len()})
}

fn areas_of(cases: &[Value]) -> Value {
    let mut m = serde_json::Map::new();
    for area in ["read", "run"] {
        let these: Vec<Value> = cases
            .iter()
            .filter(|c| c["area"] == area)
            .cloned()
            .collect();
        if !these.is_empty() {
            m.insert(area.into(), summary_of(&these));
        }
    }
    Value::Object(m)
}

/// A report with the fields another part of the runner adds (`level`, `failure_kind`,
/// mismatch `kind`, `conformance`).
fn rich_report(cases: Vec<Value>, name: &str) -> Value {
    json!({
        "report_version": 1, "protocol_version": 2,
        "runner": {"name": "skillspec", "version": "0.1.0"},
        "implementation": {"name": name, "version": "1.0", "features": []},
        "cases_dir": "spec-cases", "known_failures": [],
        "summary": summary_of(&cases), "areas": areas_of(&cases),
        "conformance": conformance_counts(&cases),
        "cases": cases,
    })
}

fn rich_cases() -> Vec<Value> {
    let mut cases: Vec<Value> = (0..40)
        .map(|i| {
            let area = if i % 2 == 0 { "read" } else { "run" };
            let level = ["MUST", "SHOULD", "MAY"][i % 3];
            let clauses = match (area, i % 4) {
                ("read", 0) => json!(["read.errors", "read.no-approval"]),
                ("read", _) => json!(["read.errors"]),
                (_, 1) => json!(["run.errors", "run.order"]),
                _ => json!(["run.errors"]),
            };
            let mut c = json!({"id": format!("{area}.case-{i:02}"), "file": format!("spec-cases/{area}/c{i}.yaml"),
                "line": 1, "area": area, "dialect": "portable-skills", "clauses": clauses, "status": "pass", "verdict": "pass",
                "duration_ms": 1, "level": level});
            if i % 5 == 0 {
                let kind = if i % 10 == 0 { "unsafe" } else { "different" };
                c["status"] = json!("fail");
                c["verdict"] = json!("fail");
                c["failure_kind"] = json!(kind);
                c["step"] = json!(1);
                c["step_line"] = json!(5);
                c["step_label"] = json!("read");
                c["mismatches"] = if kind == "unsafe" {
                    c["exposures"] = json!(["outside-content"]);
                    json!([{"what": "content", "expected": "a", "actual": "b",
                        "kind": "unsafe", "exposure": "outside-content"}])
                } else {
                    json!([{"what": "content", "expected": "a", "actual": "b", "kind": "different"}])
                };
            }
            c
        })
        .collect();
    // In the order of a run: by id.
    cases.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    cases
}

#[test]
fn merged_conformance_counts_add_up_to_the_full_run() {
    let cases = rich_cases();
    let full = rich_report(cases.clone(), "rich");
    let inputs: Vec<Input> = (1..=3)
        .map(|k| {
            let mine: Vec<Value> = cases
                .iter()
                .filter(|c| slice_of(c["id"].as_str().unwrap_or(""), 3) == k)
                .cloned()
                .collect();
            let mut r = rich_report(mine, "rich");
            r["partition"] = json!({"index": k, "of": 3, "selected": cases.len(), "filter": null,
                                    "suite": format!("sha256:{}", "0".repeat(64))});
            Input {
                source: format!("p{k}"),
                report: r,
            }
        })
        .collect();
    let merged = merge::merge(&inputs, false, &|_| None).expect("merges");
    assert_eq!(merged.report["cases"], full["cases"]);
    assert_eq!(merged.report["summary"], full["summary"]);
    assert_eq!(merged.report["areas"], full["areas"]);
    for area in ["read", "run"] {
        for level in ["MUST", "SHOULD", "MAY"] {
            assert_eq!(
                merged.report["conformance"]["areas"][area][level],
                full["conformance"]["areas"][area][level],
                "{area} {level}"
            );
        }
        let statement = merged.report["conformance"]["areas"][area]["statement"]
            .as_str()
            .unwrap_or("");
        assert!(statement.contains("MUST"), "{statement}");
    }
    assert_eq!(merged.report["conformance"]["unsafe"], json!(4));
    assert_eq!(merged.report["conformance"]["different"], json!(4));
    assert!(merged.report.get("partition").is_none());
}

const EVIL: &str = "<script>alert(1)</script>\"'</textarea></pre><img src=x onerror=alert(2)>\u{1b}[31m\u{0}\u{7}*bold* [link](http://x) | cell";

/// A report whose every implementation-written text is hostile.
fn evil_report() -> Value {
    let mut cases = rich_cases();
    let at = |id: &str| cases.iter().position(|c| c["id"] == id).expect("case");
    let (a, b, e) = (at("read.case-00"), at("read.case-10"), at("run.case-01"));
    cases[a]["mismatches"][0]["actual"] = json!(EVIL);
    cases[a]["mismatches"][0]["what"] = json!(format!("what {EVIL}"));
    cases[a]["mismatches"][0]["expected"] =
        json!("see www.evil.example/x, HTTPS://evil.example/y or ftp://evil.example");
    cases[b]["mismatches"][0]["actual"] = json!(format!("line one\n{EVIL}"));
    cases[e] = json!({"id": "run.case-01", "file": "spec-cases/run/c1.yaml", "line": 1, "area": "run",
        "clauses": ["run.errors"], "status": "error", "verdict": "error", "duration_ms": 3,
        "error": format!("the adapter broke: {EVIL}"), "broken_implementation": true,
        "adapter_stderr": format!("Traceback {EVIL}"), "unanswered_request": {"type": "step", "seq": 1, "index": 0}});
    let mut r = rich_report(cases, &format!("evil {EVIL}"));
    r["implementation"]["version"] = json!(EVIL);
    r["conformance"]["areas"]["read"]["statement"] = json!(format!("statement {EVIL}"));
    r["stopped"] = json!({"reason": format!("stopped {EVIL}")});
    r
}

fn assert_inert(page: &str, what: &str) {
    for raw in [
        "<script>alert",
        "</textarea>",
        "<img",
        "onerror=alert(2)>",
        "\u{1b}",
        "\u{0}",
        "\u{7}",
    ] {
        assert!(
            !page.contains(raw),
            "{what} contains {raw:?} from the report"
        );
    }
}

#[test]
fn markdown_and_html_escape_what_an_implementation_wrote() {
    let dir = tempfile::tempdir().expect("tempdir");
    let evil = put(dir.path(), "evil", &evil_report());
    let md = skillspec(&["report", "markdown", p(&evil)]);
    assert_eq!(md.status.code(), Some(0), "{}", text(&md));
    let md = String::from_utf8(md.stdout).expect("UTF-8");
    assert_inert(&md, "the Markdown");
    // No URL for GitHub to link: `://` and `www.` are defanged.
    assert!(!md.contains("://"), "{md}");
    assert!(!md.to_lowercase().contains("www.evil"), "{md}");
    assert!(
        md.contains("HTTPS\\[:\\]//evil.example/y") && md.contains("www\\[.\\]evil.example/x"),
        "{md}"
    );
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{md}");
    assert!(md.contains("\\*bold\\*") && md.contains("\\[link\\]") && md.contains("\\| cell"));
    assert!(
        md.contains("\\\\u{1b}\\[31m"),
        "control characters shown as escapes: {md}"
    );
    // Unsafe failures first, then the different ones, then errors.
    let (u, d, e) = (
        md.find("### Unsafe failures (4)").expect("unsafe listed"),
        md.find("### Different behaviours (4)")
            .expect("different listed"),
        md.find("### Errors, cases not run").expect("errors listed"),
    );
    assert!(u < d && d < e, "{md}");
    assert!(md[u..d].contains("read.case-10") && !md[d..e].contains("read.case-10"));

    let out = dir.path().join("page.html");
    let html = skillspec(&["report", "html", p(&out), p(&evil)]);
    assert_eq!(html.status.code(), Some(0), "{}", text(&html));
    let page = std::fs::read_to_string(&out).expect("page written");
    assert_inert(&page, "the HTML");
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&lt;/textarea&gt;"));
    assert!(page.contains("\\u{1b}[31m\\u{0}\\u{7}"));
    assert!(page.contains("statement evil") || page.contains("statement &lt;script"));
    // Nothing external: no URL the browser would fetch.
    for external in ["src=\"http", "href=\"http", "@import", "url("] {
        assert!(!page.contains(external), "{external}");
    }
    assert!(page.contains("Content-Security-Policy") && page.contains("default-src 'none'"));
}

/// The cells of each row of the matrix tables, one per dialect (a `colspan` counted as its
/// width).
fn matrix_rows(page: &str) -> Vec<usize> {
    let mut rows = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find("<table class=\"matrix\"") {
        let end = start + rest[start..].find("</table>").expect("table end");
        rows.extend(rest[start..end].split("<tr").skip(1).map(|row| {
            let cells = row.matches("<td").count() + row.matches("<th").count();
            let wide = row.matches("colspan=\"2\"").count();
            cells + wide
        }));
        rest = &rest[end..];
    }
    assert!(!rows.is_empty(), "a matrix");
    rows
}

#[test]
fn the_matrix_has_one_column_per_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut paths = Vec::new();
    for (i, name) in ["alpha", "beta", "gamma"].iter().enumerate() {
        let mut r = rich_report(rich_cases(), name);
        if i == 2 {
            // A report of an older runner: no level, kinds or conformance.
            r.as_object_mut().expect("object").remove("conformance");
            for c in r["cases"].as_array_mut().expect("cases") {
                let c = c.as_object_mut().expect("case");
                c.remove("level");
                c.remove("failure_kind");
            }
        }
        paths.push(put(dir.path(), name, &r));
    }
    let all: Vec<&str> = paths.iter().map(|x| p(x)).collect();

    let out = dir.path().join("three.html");
    let mut args = vec!["report", "html", p(&out)];
    args.extend(&all);
    let run = skillspec(&args);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let page = std::fs::read_to_string(&out).expect("page");
    assert_eq!(page.matches("class=\"impl\"").count(), 3);
    let rows = matrix_rows(&page);
    assert!(rows.len() > 3);
    assert!(rows.iter().all(|n| *n == 2 + 3), "{rows:?}");
    assert_eq!(page.matches("<section class=\"report\"").count(), 3);
    assert_eq!(page.matches("<details class=\"case\"").count(), 40);

    let one = dir.path().join("one.html");
    let run = skillspec(&["report", "html", p(&one), all[0]]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let page = std::fs::read_to_string(&one).expect("page");
    assert_eq!(page.matches("class=\"impl\"").count(), 1);
    assert!(matrix_rows(&page).iter().all(|n| *n == 3));

    let mut args = vec!["report", "markdown"];
    args.extend(&all);
    let md = skillspec(&args);
    assert_eq!(md.status.code(), Some(0), "{}", text(&md));
    let md = String::from_utf8(md.stdout).expect("UTF-8");
    let matrix: Vec<&str> = md
        .split("## Implementations × areas")
        .nth(1)
        .expect("a matrix for several reports")
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    // Header, separator, one row per implementation; columns: name, 2 areas, all.
    assert_eq!(matrix.len(), 5, "{matrix:?}");
    for row in &matrix {
        assert_eq!(
            row.matches(" |").count() + row.matches("---|").count(),
            4,
            "{row}"
        );
    }
    assert!(matrix[2].starts_with("| alpha 1.0 |"), "{matrix:?}");
    // The older report's failures still count: kinds derived from the mismatches.
    assert!(md.contains("## gamma 1.0"));
    assert_eq!(md.matches("### Unsafe failures (4)").count(), 3, "{md}");

    let single = skillspec(&["report", "markdown", all[0]]);
    let single = String::from_utf8(single.stdout).expect("UTF-8");
    assert!(!single.contains("Implementations × areas"));
}

/// A report in which a listed unsafe failure, an area of gated cases and an area whose tool is
/// missing are all there is besides passes: by the exit code the run passed.
fn known_unsafe_report(name: &str) -> Value {
    let case = |id: &str, area: &str| {
        json!({"id": id, "file": format!("spec-cases/{area}/{id}.yaml"), "line": 1, "area": area,
               "clauses": [format!("{area}.errors")], "status": "pass", "verdict": "pass", "duration_ms": 1,
               "level": "MUST"})
    };
    let mut cases = vec![case("read.fine", "read")];
    let mut leak = case("read.leak", "read");
    for (k, v) in [
        ("status", json!("fail")),
        ("verdict", json!("known-failure")),
        ("failure_kind", json!("unsafe")),
        ("exposures", json!(["outside-content"])),
        ("step", json!(1)),
        ("step_line", json!(5)),
        ("step_label", json!("call skill_read_reference")),
        (
            "mismatches",
            json!([
            {"what": "call outcome", "expected": "error invalid_path", "actual": "success",
             "kind": "permissive"},
            {"what": "later, step 2 (`read`): canary `SKILLSPEC_CANARY_T1` in the result",
             "expected": "absent", "actual": "present", "kind": "unsafe",
             "exposure": "outside-content"}]),
        ),
    ] {
        leak[k] = v;
    }
    cases.push(leak);
    for i in 0..3 {
        let mut c = case(&format!("hitl.ask-{i}"), "hitl");
        c["status"] = json!("unsupported");
        c["verdict"] = json!("unsupported");
        c["missing_features"] = json!(["hitl"]);
        cases.push(c);
    }
    let mut known = vec![json!("read.leak")];
    for i in 0..2 {
        let id = format!("run.missing-{i}");
        let mut c = case(&id, "run");
        for (k, v) in [
            ("status", json!("fail")),
            ("verdict", json!("known-failure")),
            ("failure_kind", json!("different")),
            ("step", json!(1)),
            ("step_line", json!(5)),
            ("step_label", json!("call skill_run_script")),
            (
                "mismatches",
                json!([{"what": "call outcome", "expected": "success",
                "actual": "error unknown_tool", "kind": "different",
                "missing_tool": "skill_run_script"}]),
            ),
        ] {
            c[k] = v;
        }
        cases.push(c);
        known.push(json!(id));
    }
    let mut r = rich_report(cases, name);
    r["known_failures"] = json!(known);
    r.as_object_mut().expect("object").remove("conformance");
    r
}

/// A listed unsafe failure keeps its run from being headlined `ok` and is shown red and with
/// its exposure; an area that was not judged says why instead of `0/3`.
#[test]
fn listed_unsafe_failures_and_unjudged_areas_are_shown_for_what_they_are() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = put(dir.path(), "alpha", &known_unsafe_report("alpha"));
    let b = put(dir.path(), "beta", &known_unsafe_report("beta"));
    let md = skillspec(&["report", "markdown", p(&a), p(&b)]);
    assert_eq!(md.status.code(), Some(0), "{}", text(&md));
    let md = String::from_utf8(md.stdout).expect("UTF-8");
    assert!(!md.contains("result: ok"), "{md}");
    assert!(
        md.contains("**result: UNSAFE. 1 unsafe (1 of them listed as known); 0 permissive;"),
        "{md}"
    );
    for want in [
        "| 🛑 1/2 (1 known (1 of them unsafe)) |",
        "| ➖ unsupported (needs hitl) (3 cases) |",
        "| ❌ not implemented: skill\\_run\\_script missing (2 cases) |",
        "### Unsafe failures (1)",
        ": **UNSAFE (outside-content)** (listed as known): step 1",
        "  - exposure outside-content: content the model must never see reached it\n",
        "\\[unsafe: outside-content\\]: expected absent; actual present",
        "| area | level | passed | not exercised | unsafe | permissive | different | known |",
    ] {
        assert!(md.contains(want), "missing {want:?} in\n{md}");
    }
    assert!(!md.contains("0/3") && !md.contains("0/2"), "{md}");

    let out = dir.path().join("page.html");
    let run = skillspec(&["report", "html", p(&out), p(&a), p(&b)]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let page = std::fs::read_to_string(&out).expect("page");
    assert!(!page.contains("result: ok"), "the headline says ok");
    for want in [
        "<p class=\"statement c-unsafe\">result: UNSAFE. 1 unsafe (1 of them listed as known);",
        "<td class=\"n c-unsafe\" data-count=\"unsafe\">1<span class=\"label\">1 listed as known</span></td>",
        "<details class=\"case\" id=\"case-read.leak\" data-area=\"read\" data-statuses=\"known-failure unsafe\">",
        "<span class=\"badge c-unsafe\" title=\"alpha 1.0\">unsafe failure (listed as known)</span>",
        "exposure <code>outside-content</code>: content the model must never see reached it",
        ">unsupported (needs hitl) (3 cases)</a></td>",
        ">not implemented: skill_run_script missing (2 cases)</a></td>",
        "<h3>Unsafe failures (listed as known or not) <span class=\"badge c-unsafe\">1</span></h3>",
    ] {
        assert!(page.contains(want), "missing {want:?} in the page");
    }
    // The read area's cell of the matrix is red, not the grey of a known failure.
    assert!(
        page.contains(
            "<td class=\"cell c-unsafe\"><a href=\"#r1-area-read\">1/2 (1 unsafe, listed)</a></td>"
        ),
        "the read area is not red"
    );
    assert!(
        !page.contains(">0/3") && !page.contains(">0/2"),
        "a cell says 0/N"
    );
}

/// The texts of the `td[data-count]` cells of `html` from `start` on, up to the first
/// `</table>`, by key.
fn count_cells(html: &str, start: &str) -> Vec<(String, String)> {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in the page"));
    let table = &html[from..];
    let table = &table[..table.find("</table>").expect("table end")];
    table
        .split("data-count=\"")
        .skip(1)
        .map(|cell| {
            let (key, rest) = cell.split_once("\">").expect("cell");
            let text = rest.split("</td>").next().expect("cell end");
            (key.to_owned(), text.to_owned())
        })
        .collect()
}

/// One set of numbers on the page: the overview's row and the report section's counts are the
/// same cells, each case in one column, and an error listed as a known failure is counted as an
/// error there, in the matrix and in the result line (it used to read "0 errored" beside 95
/// listed errors). The legend explains every chip colour, and "what to fix first" lists the
/// unsafe failure, then the clause with the most failures.
#[test]
fn the_page_has_one_set_of_numbers_and_hides_no_error_behind_a_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut r = known_unsafe_report("alpha");
    let mut cases = r["cases"].as_array().expect("cases").clone();
    let mut broke = cases[0].clone();
    broke["id"] = json!("read.broke");
    broke["status"] = json!("error");
    broke["verdict"] = json!("known-failure");
    broke["error"] = json!("the adapter broke: a traceback");
    cases.push(broke);
    r["known_failures"]
        .as_array_mut()
        .expect("list")
        .push(json!("read.broke"));
    r["cases"] = json!(cases);
    r["summary"] = summary_of(&cases);
    let a = put(dir.path(), "alpha", &r);
    let md = skillspec(&["report", "markdown", p(&a)]);
    let md = String::from_utf8(md.stdout).expect("UTF-8");
    assert!(
        md.contains("; 1 errored (1 of them listed as known); 8 cases"),
        "{md}"
    );

    let out = dir.path().join("page.html");
    let run = skillspec(&["report", "html", p(&out), p(&a)]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let page = std::fs::read_to_string(&out).expect("page");
    let overview = count_cells(&page, "<table class=\"overview\">");
    let section = count_cells(&page, "<table class=\"summary\">");
    assert_eq!(overview, section, "the overview and the section disagree");
    let n = |key: &str| -> usize {
        let cell = &section.iter().find(|(k, _)| k == key).expect(key).1;
        cell.split('<')
            .next()
            .expect("n")
            .parse()
            .expect("a number")
    };
    assert_eq!(n("errored"), 1);
    assert!(
        section
            .iter()
            .any(|(k, v)| k == "errored" && v.contains("1 listed as known")),
        "{section:?}"
    );
    let parts: usize = section
        .iter()
        .filter(|(k, _)| k != "total")
        .map(|(k, _)| n(k))
        .sum();
    assert_eq!(parts, n("total"), "the columns do not add up: {section:?}");
    assert_eq!(n("total"), 8);
    // The matrix says what the listed cases showed.
    assert!(
        page.contains(">1/3 (1 unsafe, listed; 1 error, listed)</a></td>"),
        "the read area's cell hides the listed error"
    );
    // The legend: every status the filter knows, with its meaning.
    let legend = &page[page.find("<section id=\"legend\">").expect("legend")..];
    let legend = &legend[..legend.find("</section>").expect("legend end")];
    for class in [
        "unsafe",
        "permissive",
        "different",
        "error",
        "not-exercised",
        "unsupported",
        "pass",
    ] {
        assert!(
            legend.contains(&format!("<span class=\"badge c-{class}\">")),
            "no legend for {class}"
        );
    }
    // What to fix first: the unsafe case, then the clause with the most failures.
    let fix = &page[page.find("<section id=\"fix-first\">").expect("fix first")..];
    let fix = &fix[..fix.find("</section>").expect("fix first end")];
    let unsafe_at = fix
        .find("<code>read.leak</code></a> exposed <code>outside-content</code> (listed as known)")
        .expect("the unsafe case first");
    let clause_at = fix
        .find("<code>run.errors</code></a>: 2 of its 2 case(s)")
        .expect("the clause with the most failures");
    assert!(unsafe_at < clause_at, "{fix}");
    assert!(page.find("id=\"fix-first\"") < page.find("id=\"matrix\""));
}

#[test]
fn report_commands_refuse_what_is_not_a_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_report = put(dir.path(), "x", &json!({"hello": 1}));
    for args in [
        vec!["report", "markdown", p(&not_report)],
        vec!["report", "html", "/dev/null", p(&not_report)],
    ] {
        let out = skillspec(&args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            text(&out).contains("not a skillspec report"),
            "{}",
            text(&out)
        );
    }
    let out = skillspec(&["report", "markdown"]);
    assert_eq!(out.status.code(), Some(2));
}

/// What a report command run by [`bounded`] did.
struct Bounded {
    /// `None` when it was still running after the deadline (and was killed).
    code: Option<i32>,
    output: String,
}

/// Runs `skillspec ARGS` under a 1 GiB address-space limit (so that a runner that reads or
/// allocates without bound fails here instead of taking the machine's memory) and kills it if
/// it has not ended within 20 s.
fn bounded(args: &[&str]) -> Bounded {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_path = dir.path().join("out.txt");
    let out = std::fs::File::create(&out_path).expect("output file");
    let mut child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"ulimit -v 1048576 && exec "$0" "$@""#)
        .arg(bin())
        .args(args)
        .current_dir(repo())
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().expect("dup"))
        .stderr(out)
        .spawn()
        .expect("the binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status.code().unwrap_or(-1));
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let output = String::from_utf8_lossy(&std::fs::read(&out_path).expect("output")).into_owned();
    Bounded { code, output }
}

/// The smallest report.json `report merge` reads, as partition `index` of `of`.
fn partition_of(of: Value) -> Value {
    json!({"report_version": 1, "cases": [],
           "implementation": {"name": "x", "version": "1", "features": []},
           "cases_dir": "spec-cases", "known_failures": [],
           "partition": {"index": 1, "of": of, "selected": 0, "filter": null,
                         "suite": format!("sha256:{}", "0".repeat(64))}})
}

#[test]
fn merge_refuses_more_partitions_than_a_run_can_have() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    for of in [json!(5_000_000u64), json!(1u64 << 62), json!(u64::MAX)] {
        let r = put(dir.path(), "p", &partition_of(of.clone()));
        for extra in [None, Some("--allow-incomplete")] {
            let mut args = vec!["report", "merge", p(&out), p(&r)];
            args.extend(extra);
            let b = bounded(&args);
            assert_eq!(
                b.code,
                Some(2),
                "of {of} {extra:?}: {}",
                &b.output[..b.output.len().min(400)]
            );
            assert!(
                b.output.len() < 1000,
                "of {of}: a message of {} bytes",
                b.output.len()
            );
            assert!(
                b.output.contains("more than the 1000 partitions"),
                "of {of}: {}",
                b.output
            );
            assert!(!out.join("report.json").exists());
        }
    }
}

#[test]
fn report_inputs_are_regular_files_of_bounded_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let fifo = d.join("fifo.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    // A directory whose report.json is a FIFO.
    std::fs::create_dir_all(d.join("fifodir")).expect("mkdir");
    let made = std::process::Command::new("mkfifo")
        .arg(d.join("fifodir/report.json"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    // A regular file one byte over the cap (sparse: it costs no disk).
    let big = d.join("big.json");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(16 * 1024 * 1024 + 1))
        .expect("sparse file");
    let out = d.join("out");
    let page = d.join("page.html");
    let cases: [(&Path, &str); 4] = [
        (&fifo, "is not a regular file (a FIFO)"),
        (&d.join("fifodir"), "is not a regular file (a FIFO)"),
        (&big, "is larger than 16 MiB"),
        (
            Path::new("/dev/zero"),
            "is not a regular file (a character device)",
        ),
    ];
    for (input, needle) in cases {
        for args in [
            vec!["report", "markdown", p(input)],
            vec!["report", "html", p(&page), p(input)],
            vec!["report", "merge", p(&out), p(input)],
        ] {
            let b = bounded(&args);
            assert_eq!(b.code, Some(2), "{args:?}: {}", b.output);
            assert!(
                b.output.contains(needle),
                "{args:?}: expected `{needle}` in {}",
                b.output
            );
            assert!(
                b.output.contains(p(input)),
                "{args:?}: names the file: {}",
                b.output
            );
        }
    }
    // A symlink to a report is followed.
    let real = put(d, "real", &rich_report(rich_cases(), "linked"));
    let link = d.join("link.json");
    std::os::unix::fs::symlink(real.join("report.json"), &link).expect("symlink");
    let b = bounded(&["report", "markdown", p(&link)]);
    assert_eq!(b.code, Some(0), "{}", b.output);
    assert!(b.output.contains("## linked 1.0"), "{}", b.output);
}

#[test]
fn report_html_never_loads_cases_from_a_path_the_report_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::fs::write(
        elsewhere.join("creds.yaml"),
        "password: hunter2-SECRET\nuser: admin\n",
    )
    .expect("write");
    let mut r = rich_report(rich_cases(), "named");
    r["cases_dir"] = json!(p(&elsewhere));
    // A case of the embedded suite, whose definition the page then shows.
    r["cases"][0]["id"] = json!("enable.scripts-deny-default.no-allowlist");
    let report = put(dir.path(), "r", &r);
    let page = dir.path().join("page.html");
    let run = skillspec(&["report", "html", p(&page), p(&report)]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let html = std::fs::read_to_string(&page).expect("page written");
    for (what, t) in [("the page", html.as_str()), ("the output", &text(&run))] {
        assert!(
            !t.contains("hunter2"),
            "{what} shows the file the report names: {t}"
        );
        assert!(
            !t.contains(p(&elsewhere)) || what == "the page",
            "{what}: {t}"
        );
    }
    assert!(
        html.contains("Given this tree in a fresh directory"),
        "the embedded suite's definitions are shown"
    );
    // And a merge looks nothing up there either.
    let mut part = partition_of(json!(1));
    part["cases_dir"] = json!(p(&elsewhere));
    let part = put(dir.path(), "part", &part);
    let out = dir.path().join("merged");
    let run = skillspec(&["report", "merge", p(&out), p(&part)]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(!text(&run).contains("hunter2"), "{}", text(&run));
}
