//! The `skillspec` program end to end: exit codes, adapter parity, failure reports, check-tree.

mod common;
use common::{bin, repo, skillspec, text};
use std::path::{Path, PathBuf};
use std::process::Command;

use skillspec_runner::cases::fixture::{self, Tree};

fn summary(report_dir: &Path) -> serde_json::Value {
    common::validated_report(report_dir)["summary"].clone()
}

/// The reference in-process and served over the protocol give the same verdict case for case,
/// on one slice of the suite (a quarter, by id hash: every area is in it). CI compares the whole
/// suite's two release runs the same way (`.ci/same-verdicts` in `.ci/run`).
#[test]
fn in_process_and_adapter_runs_agree_at_any_jobs() {
    // The same slice of the suite three ways: in-process one case at a time, in-process on 3
    // workers, and through `skillspec adapter` on 3 adapter processes. Reports and JUnit must
    // agree case for case, in the same order.
    let dir = tempfile::tempdir().unwrap();
    let slice = ["--partition", "1/4"];
    let adapter_cmd = format!("{} adapter", bin().display());
    let runs: [(&str, Vec<&str>); 3] = [
        ("serial", vec!["--jobs", "1"]),
        ("workers", vec!["--jobs", "3"]),
        ("adapters", vec!["--jobs", "3", "--adapter", &adapter_cmd]),
    ];
    let mut seen = Vec::new();
    for (name, extra) in &runs {
        let out_dir = dir.path().join(name);
        let args = [
            &["run", "--report", out_dir.to_str().unwrap()][..],
            &slice,
            extra,
        ]
        .concat();
        let out = skillspec(&args);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out));
        if extra.contains(&"3") {
            assert!(
                text(&out).contains("on 3 workers"),
                "{name}: {}",
                text(&out)
            );
        }
        let report = common::validated_report(&out_dir);
        let cases = report["cases"].as_array().cloned().unwrap_or_default();
        let verdicts: Vec<String> = cases
            .iter()
            .map(|c| {
                let mut c = c.clone();
                if let Some(o) = c.as_object_mut() {
                    o.remove("duration_ms");
                }
                c.to_string()
            })
            .collect();
        let junit = std::fs::read_to_string(out_dir.join("junit.xml")).unwrap();
        let names: Vec<&str> = junit
            .match_indices("<testcase name=\"")
            .map(|(at, m)| {
                let rest = &junit[at + m.len()..];
                &rest[..rest.find('"').unwrap_or(0)]
            })
            .collect();
        assert_eq!(
            names.len(),
            cases.len(),
            "{name}: junit.xml lists every case"
        );
        let names: Vec<String> = names.into_iter().map(String::from).collect();
        seen.push((name, summary(&out_dir), verdicts, names, cases));
    }
    let (_, sa, va, ja, cases) = &seen[0];
    assert!(sa["passed"].as_u64().unwrap() > 100, "{sa}");
    for (name, sb, vb, jb, _) in &seen[1..] {
        assert_eq!(sa, sb, "{name}");
        assert_eq!(va, vb, "{name}: every case's report entry");
        assert_eq!(ja, jb, "{name}: junit.xml order");
    }
    let areas: std::collections::BTreeSet<&str> = cases
        .iter()
        .map(|c| c["area"].as_str().unwrap_or(""))
        .collect();
    assert!(areas.len() >= 8, "the slice holds only the areas {areas:?}");
}

#[test]
fn a_changed_expectation_fails_and_names_the_case() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir_all(cases.join("discovery")).unwrap();
    let original =
        std::fs::read_to_string(repo().join("spec-cases/discovery/portable-basic.yaml")).unwrap();
    let changed = original.replace("loaded: [weather]", "loaded: [weather, extra]");
    assert_ne!(original, changed);
    std::fs::write(cases.join("discovery/portable-basic.yaml"), &original).unwrap();
    let ok = skillspec(&["run", "--cases", cases.to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    std::fs::write(cases.join("discovery/portable-basic.yaml"), &changed).unwrap();
    let out = skillspec(&["run", "--cases", cases.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(t.contains("FAIL discovery.portable.loads"), "{t}");
    assert!(t.contains("portable-basic.yaml:"), "{t}");
    assert!(t.contains("expected:") && t.contains("actual:"), "{t}");
}

#[test]
fn bad_case_files_exit_2_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "id: x.y\nsummary: s.\nclauses: [no.such.clause]\nsteps:\n  - discover:\n    expect: {loaded: []}\n",
    )
    .unwrap();
    let out = skillspec(&["run", "--cases", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let t = text(&out);
    assert!(
        t.contains("bad.yaml:3:") && t.contains("no.such.clause"),
        "{t}"
    );
    let missing = skillspec(&["run", "--cases", "/nonexistent/dir"]);
    assert_eq!(missing.status.code(), Some(2));
    let bad_flag = skillspec(&["run", "--no-such-flag"]);
    assert_eq!(bad_flag.status.code(), Some(2));
    let unknown = skillspec(&["show", "no.such.case"]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn a_broken_adapter_exits_3() {
    let out = skillspec(&[
        "run",
        "--filter",
        "discovery.portable.loads",
        "--adapter",
        "echo not-json",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let out = skillspec(&[
        "run",
        "--filter",
        "discovery.portable.loads",
        "--adapter",
        "exit 0",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
}

#[test]
fn show_and_list_render_cases() {
    let out = skillspec(&["show", "discovery.portable.loads"]);
    assert_eq!(out.status.code(), Some(0));
    let t = text(&out);
    assert!(
        t.contains("Given this tree") && t.contains("expect loaded, in this order: [weather]"),
        "{t}"
    );
    let list = skillspec(&["list", "--json"]);
    let cases: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert!(cases.as_array().unwrap().len() > 100);
}

#[test]
fn check_tree_survives_a_hostile_tree() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = r#"{
        "ok/SKILL.md": "---\nname: ok\ndescription: fine\n---\nbody\n",
        "loop": {"symlink": ".."},
        "fifo/SKILL.md": {"fifo": true},
        "sparse/SKILL.md": {"size": 4294967296, "sparse": true},
        "deep": {"deep": {"levels": 10000, "name": "d"}}
    }"#;
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(yaml).unwrap();
    let tree = Tree::from_yaml(&map).unwrap();
    fixture::materialize(dir.path(), &tree, Path::new("/nonexistent")).unwrap();
    let out = skillspec(&["check-tree", dir.path().to_str().unwrap(), "--json"]);
    fixture::remove_root(dir.path(), None).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let loaded: Vec<&str> = v["loaded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(loaded, ["ok"]);
    let reason = |p: &str| {
        v["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["path"] == p)
            .map(|s| s["reason"].as_str().unwrap().to_owned())
    };
    assert_eq!(reason("loop").as_deref(), Some("symlink"));
    assert_eq!(reason("fifo").as_deref(), Some("not_regular"));
    assert_eq!(reason("sparse").as_deref(), Some("too_large"));
    assert_eq!(reason("deep/d/d/d/d/d/d/d/d").as_deref(), Some("too_deep"));
    let missing = skillspec(&["check-tree", "/nonexistent/root"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn known_failures_lists_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir_all(cases.join("discovery")).unwrap();
    let original =
        std::fs::read_to_string(repo().join("spec-cases/discovery/portable-basic.yaml")).unwrap();
    let case_file = cases.join("discovery/portable-basic.yaml");
    std::fs::write(
        &case_file,
        original.replace("loaded: [weather]", "loaded: []"),
    )
    .unwrap();
    let list = dir.path().join("known.txt");
    let c = cases.to_str().unwrap();
    let first = skillspec(&[
        "run",
        "--cases",
        c,
        "--write-failures",
        list.to_str().unwrap(),
    ]);
    assert_eq!(first.status.code(), Some(1));
    let written = std::fs::read_to_string(&list).unwrap();
    assert!(
        written.lines().any(|l| l == "discovery.portable.loads"),
        "{written}"
    );
    // With the list, the known failure no longer fails the run.
    let known = skillspec(&[
        "run",
        "--cases",
        c,
        "--known-failures",
        list.to_str().unwrap(),
    ]);
    assert_eq!(known.status.code(), Some(0), "{}", text(&known));
    assert!(
        text(&known).contains("1 known failures"),
        "{}",
        text(&known)
    );
    // Once the case passes, the stale entry fails the run so the list stays honest.
    std::fs::write(&case_file, &original).unwrap();
    let report = dir.path().join("report");
    let fixed = skillspec(&[
        "run",
        "--cases",
        c,
        "--known-failures",
        list.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(summary(&report)["fixed"], 1);
    assert_eq!(fixed.status.code(), Some(1), "{}", text(&fixed));
    // The result line says it once (with the count), and the case itself says it is listed.
    assert!(
        text(&fixed).contains("1 listed as known failures but passed: remove it from the list"),
        "{}",
        text(&fixed)
    );
    assert!(
        text(&fixed).contains("listed as a known failure, but passed: remove it from the list"),
        "{}",
        text(&fixed)
    );
    // An id that names no case is a usage error naming the line.
    std::fs::write(&list, "# comment\nno.such.case\n").unwrap();
    let bad = skillspec(&[
        "run",
        "--cases",
        c,
        "--known-failures",
        list.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("known.txt:2:"), "{}", text(&bad));
}

#[test]
fn clauses_reports_coverage() {
    let out = skillspec(&["clauses", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let depth = v
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "discovery.depth")
        .unwrap();
    assert!(depth["cases"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == "discovery.depth.eight-loads"));
    assert_eq!(depth["level"], "MUST");
}

/// In text, `clauses PATTERN` shows the case ids of the matching clauses (review round 3: the ids
/// were only in `--json`); a pattern no clause matches is a usage error naming it.
#[test]
fn clauses_lists_the_cases_of_the_clauses_asked_for() {
    let out = skillspec(&["clauses", "discovery.depth"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("\n    discovery.depth.eight-loads\n"), "{t}");
    assert!(!t.contains("enable.unset "), "{t}");
    let all = text(&skillspec(&["clauses"]));
    assert!(all.contains("`skillspec clauses PATTERN`"), "{all}");
    assert!(!all.contains("    discovery.depth.eight-loads"), "{all}");
    let none = skillspec(&["clauses", "no-such-clause"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        text(&none).contains("\"no-such-clause\""),
        "{}",
        text(&none)
    );
}

/// The example adapter in Python models a naive legacy loader. Against it the suite passes what
/// that loader gets right, fails what it gets wrong, and survives it hanging on a FIFO (which the
/// case plants, so the hang is judged unsafe).
#[test]
fn the_suite_finds_the_deviations_of_a_naive_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("naive");
    let out = skillspec(&[
        "run",
        "--adapter",
        "python3 runner/examples/naive_legacy_adapter.py",
        "--filter",
        "discovery",
        // Long enough that a loaded machine makes no other case time out (at 3 s one did).
        "--step-timeout",
        "10",
        // The two FIFO cases hang the loader for ever: the verdict is the same at any bound, so
        // the test waits 15 s for each rather than the default 300.
        "--hang-bound",
        "15",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    let status = |id: &str| {
        r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["status"].as_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    assert_eq!(r["implementation"]["name"], "naive-legacy-loader");
    assert!(summary(&report)["failed"].as_u64().unwrap() > 0);
    // What the legacy loader does right passes through the protocol.
    assert_eq!(
        status("discovery.legacy.fallback.value-after-first-colon"),
        "pass"
    );
    assert_eq!(status("discovery.legacy.no-name-or-description"), "pass");
    // It blocks on a FIFO named skill.yml: the runner times out, restarts it and goes on. The
    // case plants that FIFO (`bounded:`), so the hang is its verdict: unsafe, unbounded.
    assert_eq!(status("discovery.legacy.fifo-skill-yml"), "fail");
    let fifo = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "discovery.legacy.fifo-skill-yml")
        .unwrap();
    assert_eq!(fifo["failure_kind"], "unsafe");
    assert_eq!(fifo["exposures"], serde_json::json!(["unbounded"]));
    // It loads no portable skills and does not sort.
    assert_eq!(status("discovery.portable.loads"), "fail");
    assert_eq!(status("discovery.order.bytes"), "fail");
    // Errors, each a real deviation that breaks the adapter rather than a wrong answer: it blocks
    // on the two FIFO cases, may walk all of /tmp through the two symlinks to `/tmp` for longer
    // than the step timeout, and writes a lone surrogate (not JSON) for a non-UTF-8 id.
    let errored = r["summary"]["errored"].as_u64().unwrap();
    let failed = r["summary"]["failed"].as_u64().unwrap();
    assert!(
        errored <= 6 && failed > 50,
        "errored {errored}, failed {failed}"
    );
}

/// One case's run report in `dir`, as the one partition of its run (for the report commands'
/// inputs, `report merge` included).
fn one_case_report(dir: &Path) -> String {
    let report = dir.join("one");
    let out = skillspec(&[
        "run",
        "--partition",
        "1/1",
        "--filter",
        "discovery.portable.loads",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    report.join("report.json").to_str().unwrap().to_owned()
}

/// Every command that prints survives a reader that went away before anything was written
/// (`skillspec list | head -0`): no panic (exit 101), the command's own exit code. Issue #18:
/// `report html`/`report merge` printed their last line with `println!` and panicked.
#[test]
fn a_closed_stdout_is_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let report = one_case_report(dir.path());
    let d = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let commands: Vec<Vec<String>> = vec![
        vec!["list".into()],
        vec!["clauses".into()],
        vec!["show".into(), "run.exec.only-standard-descriptors".into()],
        vec![
            "check-tree".into(),
            repo().join("fixtures").to_str().unwrap().into(),
        ],
        vec!["export".into(), d("exported")],
        vec!["report".into(), "markdown".into(), report.clone()],
        vec![
            "report".into(),
            "html".into(),
            d("page.html"),
            report.clone(),
        ],
        vec!["report".into(), "merge".into(), d("merged"), report.clone()],
        // These two stop once no one reads them, and a cut-short run or diagnosis exits 1.
        vec![
            "run".into(),
            "--jobs".into(),
            "1".into(),
            "--filter".into(),
            "read.*".into(),
        ],
        vec![
            "smoke".into(),
            "--adapter".into(),
            format!("{} adapter", bin().display()),
        ],
    ];
    for args in &commands {
        let mut child = Command::new(bin())
            .args(args)
            .current_dir(repo())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before anything is written (`skillspec list | head -0`).
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        let expected = if ["run", "smoke"].contains(&args[0].as_str()) {
            1
        } else {
            0
        };
        assert_eq!(out.status.code(), Some(expected), "{args:?}: {stderr}");
    }
}

/// `skillspec run -v | head`: the reader goes away in the middle of the run. The run stops
/// quietly (no panic, nothing on stderr) with exit 1, because cases were not run, and its report
/// says why it stopped. Issue #18: it panicked, exit 101.
#[test]
fn a_run_whose_reader_goes_away_stops_quietly() {
    use std::io::Read as _;
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    let mut child = Command::new(bin())
        .args(["run", "-v", "--jobs", "1", "--filter", "read.*", "--report"])
        .arg(&report)
        .current_dir(repo())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr, "", "nothing but the run's own words on stderr");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report = common::validated_report(&report);
    let reason = report["stopped"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("stdout was closed"), "{reason}");
    assert!(report["summary"]["not_run"].as_u64().unwrap_or(0) > 0);
}

/// `run --report DIR` and `--write-failures FILE` that cannot be written fail the command at
/// once, exit 2 naming the path, before any case runs (issue #18: exit 0 after the whole run,
/// with no report). Paths that can be written are checked without leaving anything behind.
#[test]
fn unwritable_report_paths_exit_2_before_any_case_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let taken = dir.path().join("taken");
    std::fs::create_dir_all(taken.join("junit.xml")).unwrap();
    let one = ["run", "--filter", "discovery.portable.loads"];
    let bad: [(&str, PathBuf, &str); 4] = [
        ("--report", file.join("report"), "a-file/report"),
        ("--report", taken.clone(), "taken/junit.xml"),
        (
            "--write-failures",
            dir.path().join("no/such/dir/f.txt"),
            "no/such/dir/f.txt",
        ),
        ("--write-failures", taken.clone(), "taken"),
    ];
    for (flag, path, named) in &bad {
        let out = skillspec(&[&one[..], &[flag, path.to_str().unwrap()]].concat());
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{flag} {}: {t}", path.display());
        assert!(t.contains(named), "{flag} names {named}: {t}");
        assert!(!t.contains("running "), "{flag}: no case ran: {t}");
    }
    // Writable: the report's directory is created, and the check leaves no file of its own.
    let report = dir.path().join("new/report");
    let failures = dir.path().join("failures.txt");
    let out = skillspec(
        &[
            &one[..],
            &[
                "--report",
                report.to_str().unwrap(),
                "--write-failures",
                failures.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(report.join("report.json").is_file() && report.join("junit.xml").is_file());
    let mut left: Vec<String> = std::fs::read_dir(&report)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["junit.xml", "report.json"]);
    assert!(std::fs::read_to_string(&failures)
        .unwrap()
        .starts_with("# Cases"));
}

/// `report html OUT` creates OUT's directory (issue #18: exit 1), as `run --report DIR` does.
#[test]
fn report_html_creates_the_directory_of_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let report = one_case_report(dir.path());
    let page = dir.path().join("pages/deeper/index.html");
    let out = skillspec(&["report", "html", page.to_str().unwrap(), &report]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("discovery.portable.loads"));
}

/// The trading and replay guards are mandatory: the reference told to lack one (`adapter
/// --without trading-guard`) fails the run (exit 1) and the failures name that guard's cases,
/// while its near-miss cases still pass. No case is reported UNSUPPORTED for a missing guard.
#[test]
fn a_runtime_lacking_a_guard_fails() {
    let dir = tempfile::tempdir().unwrap();
    for (guard, filter, named) in [
        (
            "trading-guard",
            "run.trading",
            "FAIL run.trading.pattern-02.blocked",
        ),
        ("replay-guard", "run.replay", "FAIL run.replay.live-blocked"),
    ] {
        let report = dir.path().join(guard);
        let adapter = format!("{} adapter --without {guard}", bin().display());
        let out = skillspec(&[
            "run",
            "--adapter",
            &adapter,
            "--filter",
            filter,
            "--report",
            report.to_str().unwrap(),
        ]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{t}");
        assert!(t.contains(named), "{t}");
        assert!(t.contains(&format!("(without {guard})")), "{t}");
        let s = summary(&report);
        assert_eq!(s["unsupported"], 0, "{s}");
        assert!(s["failed"].as_u64().unwrap() >= 5, "{s}");
        assert!(s["passed"].as_u64().unwrap() >= 1, "{s}");
    }
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("trading-guard/report.json")).unwrap(),
    )
    .unwrap();
    let status = |id: &str| {
        r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["status"].as_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    assert_eq!(
        status("run.trading.exact-polymarket-configure.blocked"),
        "fail"
    );
    assert_eq!(status("run.trading.arg-fullwidth-blocked"), "fail");
    assert_eq!(status("run.trading.pattern-09.near-miss-runs"), "pass");
    // An unknown name is refused with the list of known ones.
    let bad = skillspec(&["adapter", "--without", "no-such-guard"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("trading-guard"), "{}", text(&bad));
}

/// An adapter declaring feature names the runner does not know (a removed feature such as
/// `trading-guard`, or a future one) is not broken: the names are ignored, the run header warns,
/// and the report lists them.
#[test]
fn unknown_declared_features_are_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r");
    let adapter = format!(
        "{} adapter | sed -u 's/\"features\":\\[/\"features\":[\"trading-guard\",\"warp-drive\",/'",
        bin().display()
    );
    let out = skillspec(&[
        "run",
        "--adapter",
        &adapter,
        "--filter",
        "run.trading.pattern-01",
        "--report",
        report.to_str().unwrap(),
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("warning: the implementation declares feature(s) this runner does not know, ignored: `trading-guard` (no longer optional: its cases always run), `warp-drive`"),
        "{t}"
    );
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        r["implementation"]["unknown_features"],
        serde_json::json!(["trading-guard", "warp-drive"])
    );
    assert_eq!(r["summary"]["passed"], 2);
}

/// An adapter that asks for a fresh process per case (`process_per_case` in its handshake) gets
/// one: every case after the first is preceded by a new handshake, and the results are the same.
#[test]
fn a_process_per_case_adapter_is_restarted_before_each_case() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("traffic.jsonl");
    let adapter_cmd = format!("{} adapter --process-per-case", bin().display());
    let out = skillspec(&[
        "run",
        "--adapter",
        &adapter_cmd,
        "--filter",
        "read.path.segments",
        "--record",
        record.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sent: Vec<String> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["direction"] == "sent")
        .map(|e| e["message"]["type"].as_str().unwrap().to_owned())
        .collect();
    let starts = sent.iter().filter(|t| *t == "start").count();
    let cases = sent.iter().filter(|t| *t == "case_start").count();
    assert!(cases > 3, "{sent:?}");
    assert_eq!(starts, cases, "a handshake before every case: {sent:?}");
}

/// `skillspec adapter` answers each request line it cannot take (not UTF-8, not JSON, nested
/// 100,000 deep, not an object) with a protocol error, valid against the response schema, and
/// goes on serving: the good request after each bad line is answered. The error's `seq` is the
/// line's own when the line is an object with a valid one (PROTOCOL.md, "Errors"), else `null`.
#[test]
fn the_adapter_answers_bad_request_lines_with_errors_and_goes_on() {
    use std::io::Write;
    let deep = |open: &str, close: &str| {
        let mut line = open.repeat(100_000);
        line.push_str(&close.repeat(100_000));
        line.into_bytes()
    };
    let null = serde_json::Value::Null;
    let seq = |n: u64| serde_json::Value::from(n);
    let bad: Vec<(Vec<u8>, &str, serde_json::Value)> = vec![
        (b"{\"type\": \"st\xffart\"}".to_vec(), "UTF-8", null.clone()),
        (b"\xc3\x28 garbage".to_vec(), "UTF-8", null.clone()),
        (b"not json".to_vec(), "bad request", null.clone()),
        (
            b"{\"type\": \"start\", ".to_vec(),
            "bad request",
            null.clone(),
        ),
        (deep("[", "]"), "bad request", null.clone()),
        (deep("{\"a\":", "}"), "bad request", null.clone()),
        (b"[1, 2]".to_vec(), "bad request", null.clone()),
        (b"\"start\"".to_vec(), "bad request", null.clone()),
        (b"null".to_vec(), "bad request", null.clone()),
        (
            b"{\"type\": \"warp\"}".to_vec(),
            "bad request",
            null.clone(),
        ),
        (
            b"{\"type\": \"warp\", \"seq\": 7}".to_vec(),
            "bad request",
            seq(7),
        ),
        (
            b"{\"type\": \"step\", \"seq\": 9, \"index\": \"one\"}".to_vec(),
            "bad request",
            seq(9),
        ),
        (
            b"{\"type\": \"case_end\", \"seq\": -1}".to_vec(),
            "bad request",
            null.clone(),
        ),
        (
            b"{\"type\": \"case_end\", \"seq\": \"3\"}".to_vec(),
            "bad request",
            null.clone(),
        ),
    ];
    let good = br#"{"type":"start","protocol_version":2}"#;
    let mut input = Vec::new();
    for (line, _, _) in &bad {
        input.extend_from_slice(line);
        input.push(b'\n');
        input.extend_from_slice(good);
        input.push(b'\n');
    }
    input.extend_from_slice(b"{\"type\":\"stop\"}\n");
    let mut child = Command::new(bin())
        .arg("adapter")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut schema = common::schema("response.schema.json");
    schema["$defs"]["step_result"]["properties"]["result"] = serde_json::json!({});
    let schema = jsonschema::validator_for(&schema).unwrap();
    let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout.clone())
        .expect("answers are UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("answers are JSON"))
        .collect();
    assert_eq!(answers.len(), 2 * bad.len(), "{}", text(&out));
    for (pair, (line, words, seq)) in answers.chunks(2).zip(&bad) {
        let shown = String::from_utf8_lossy(&line[..line.len().min(40)]);
        let (error, started) = (&pair[0], &pair[1]);
        assert!(schema.is_valid(error), "{error}");
        assert_eq!(error["type"], "error", "{shown}: {error}");
        assert_eq!(&error["seq"], seq, "{shown}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(words), "{shown}: {message}");
        assert!(
            message.len() < 1000,
            "{shown}: a short message, got {message}"
        );
        assert_eq!(started["type"], "started", "{shown}: {started}");
    }
}

/// The lines of `text` that start with `prefix` (a line of the runner's own: an adapter's
/// multi-line message is printed indented under its case).
fn lines_starting<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// Control characters in `text` other than the line feed.
fn controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect()
}

#[test]
fn skill_directory_names_cannot_forge_check_tree_lines() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a\nloaded 9 guide(s) from /etc:", "b\r\nskipped 0:\tforged"] {
        let skill = dir.path().join(name);
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: forged\ndescription: d\n---\n",
        )
        .unwrap();
    }
    let out = skillspec(&["check-tree", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert_eq!(controls(&t), Vec::<char>::new(), "{t}");
    assert_eq!(lines_starting(&t, "loaded ").len(), 1, "{t}");
    assert!(lines_starting(&t, "skipped 0").is_empty(), "{t}");
    assert!(t.contains("a\\u{a}loaded 9 guide(s)"), "{t}");
}

#[test]
fn show_escapes_control_characters_of_a_case_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("discovery")).unwrap();
    let case = r#"id: discovery.forged
summary: "A case.\e[2J\rresult: ok"
clauses: [discovery.portable]
tree:
  skills/a/SKILL.md: "---\nname: a\ndescription: b\e[31m\rforged\n---\n"
steps:
  - discover:
    expect:
      loaded: [a]
"#;
    std::fs::write(dir.path().join("discovery/forged.yaml"), case).unwrap();
    let cases = dir.path().to_str().unwrap();
    let out = skillspec(&["show", "discovery.forged", "--cases", cases]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert_eq!(controls(&t), Vec::<char>::new(), "{t}");
    assert!(t.contains("A case.\\u{1b}[2J\\u{d}result: ok"), "{t}");
    assert!(t.contains("description: b\\u{1b}[31m\\u{d}forged"), "{t}");
}

#[test]
fn smoke_escapes_line_breaks_of_an_adapter() {
    let out = skillspec(&[
        "smoke",
        "--adapter",
        "python3 runner/tests/adapters/forged_lines.py",
        "--timeout",
        "5",
    ]);
    let t = text(&out);
    assert_eq!(controls(&t), Vec::<char>::new(), "{t}");
    assert!(lines_starting(&t, "result:").is_empty(), "{t}");
    assert!(lines_starting(&t, "looks good").is_empty(), "{t}");
    assert!(t.contains("forger\\u{a}result: ok"), "{t}");
}

/// A known-failures list that is a FIFO (or a device) is refused at once with exit 2 and the
/// file named, never waited on.
#[test]
fn a_known_failures_list_that_is_not_a_regular_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("known.txt");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for list in [fifo.to_str().unwrap(), "/dev/zero"] {
        let start = std::time::Instant::now();
        let out = skillspec(&[
            "run",
            "--known-failures",
            list,
            "--filter",
            "read.path.backslash.in-file-name-rejected",
        ]);
        assert_eq!(out.status.code(), Some(2), "{list}: {}", text(&out));
        assert!(
            text(&out).contains("is not a regular file"),
            "{}",
            text(&out)
        );
        assert!(text(&out).contains(list), "{}", text(&out));
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }
}

/// A run waiting on a hung case says so on stderr, once per interval, naming the case in flight
/// and how long it has waited (stdout keeps its marks); `--progress off` says nothing.
#[test]
fn a_run_waiting_on_a_case_says_which_and_for_how_long() {
    let args = |progress: &'static str| {
        vec![
            "run",
            "--adapter",
            "python3 runner/examples/naive_legacy_adapter.py",
            "--filter",
            "discovery.legacy.fifo-skill-yml",
            "--hang-bound",
            "4",
            "--progress",
            progress,
            "--progress-interval",
            "1",
        ]
    };
    let out = skillspec(&args("lines"));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = lines_starting(&err, "progress: ");
    assert!(lines.len() >= 2, "{}", text(&out));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("progress: 0 of 1 case after ")
                && l.contains("; in flight: discovery.legacy.fifo-skill-yml for ")),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("progress:"), "progress went to stdout");
    // One case is one case, not "1 cases".
    assert!(
        stdout.contains("; 1 case\n") && !stdout.contains("1 cases"),
        "{stdout}"
    );
    let quiet = skillspec(&args("off"));
    assert!(
        !String::from_utf8_lossy(&quiet.stderr).contains("progress:"),
        "{}",
        text(&quiet)
    );
    // The interval is at least a second; no wait is longer than a week (a deadline of now plus
    // 2^63 s overflowed the clock: a thread panicked and the run hung).
    for bad in [
        ["--progress-interval", "0"],
        ["--step-timeout", "9223372036854775807"],
        ["--hang-bound", "18446744073709551615"],
        ["--progress-interval", "604801"],
    ] {
        let refused = skillspec(&["run", bad[0], bad[1]]);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{bad:?}: {}",
            text(&refused)
        );
    }
}
