//! The committed reports of the real-runtime adapters (`reports/<name>/report.json`, made by
//! `runner/adapters/<name>/run`): each validates against `reports/report.schema.json`, covers
//! exactly the cases of this suite (so a case added or removed without regenerating the report
//! fails here), has no failure that is not a listed known failure, lists exactly the ids of its
//! adapter's `known-failures.txt`, whose every entry carries a reason; and the table in
//! `reports/README.md` is the one `runner/adapters/reports.py` derives from these reports.
//! Whether a fresh run of the runtime still gives these reports is `.ci/adapters`' job (it needs
//! the runtimes installed).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// The adapters of `runner/adapters/ci.txt` (`name jobs  # why` per line), the one list CI runs.
fn adapters() -> Vec<String> {
    let path = repo().join("runner/adapters/ci.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let names: Vec<String> = text
        .lines()
        .filter_map(|l| {
            l.split('#')
                .next()?
                .split_whitespace()
                .next()
                .map(str::to_owned)
        })
        .collect();
    assert!(!names.is_empty(), "{} lists no adapter", path.display());
    names
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn json(path: &PathBuf) -> Value {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn suite_ids() -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_skillspec"))
        .args(["list", "--json"])
        .current_dir(repo())
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "skillspec list --json failed");
    let list: Value = serde_json::from_slice(&out.stdout).expect("list --json is JSON");
    list.as_array()
        .expect("a list")
        .iter()
        .map(|c| c["id"].as_str().expect("an id").to_string())
        .collect()
}

/// The ids of a known-failures.txt; panics naming the line when an entry has no `# reason`.
fn known_failures(name: &str) -> BTreeSet<String> {
    let path = repo().join(format!("runner/adapters/{name}/known-failures.txt"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut ids = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (id, reason) = line.split_once('#').unwrap_or((line, ""));
        assert!(
            !reason.trim().is_empty(),
            "{}:{}: `{}` has no `# reason`",
            path.display(),
            n + 1,
            id.trim()
        );
        assert!(
            ids.insert(id.trim().to_string()),
            "{}:{}: `{}` is listed twice",
            path.display(),
            n + 1,
            id.trim()
        );
    }
    ids
}

#[test]
fn committed_adapter_reports_are_current_and_match_their_known_failures() {
    let schema = json(&repo().join("reports/report.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("the report schema compiles");
    let suite = suite_ids();
    for name in adapters() {
        let name = name.as_str();
        let path = repo().join(format!("reports/{name}/report.json"));
        let report = json(&path);
        let errors: Vec<String> = validator
            .iter_errors(&report)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());

        let cases = report["cases"].as_array().expect("cases");
        let ids: BTreeSet<String> = cases
            .iter()
            .map(|c| c["id"].as_str().expect("id").to_string())
            .collect();
        let missing: Vec<_> = suite.difference(&ids).collect();
        let extra: Vec<_> = ids.difference(&suite).collect();
        assert!(
            missing.is_empty() && extra.is_empty() && ids.len() == cases.len(),
            "{} is not a whole run of this suite (regenerate it with runner/adapters/{name}/run): \
             missing {missing:?}, not in the suite {extra:?}",
            path.display()
        );

        let summary = &report["summary"];
        for key in ["failed", "fixed", "not_run"] {
            assert_eq!(
                summary[key].as_u64(),
                Some(0),
                "{}: summary.{key} is not 0: the committed run did not pass with its known failures",
                path.display()
            );
        }
        let listed = known_failures(name);
        let in_report: BTreeSet<String> = report["known_failures"]
            .as_array()
            .expect("known_failures")
            .iter()
            .map(|v| v.as_str().expect("an id").to_string())
            .collect();
        assert_eq!(
            listed,
            in_report,
            "runner/adapters/{name}/known-failures.txt and {} list different cases (regenerate the report)",
            path.display()
        );
        let known_verdicts: BTreeSet<String> = cases
            .iter()
            .filter(|c| c["verdict"] == "known-failure")
            .map(|c| c["id"].as_str().expect("id").to_string())
            .collect();
        assert_eq!(
            known_verdicts,
            listed,
            "{}: the cases judged known failures are not exactly the listed ones",
            path.display()
        );
    }
}

#[test]
fn the_table_in_reports_readme_matches_the_committed_reports() {
    let python = match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => "python3",
        _ => {
            eprintln!("python3 is not available: the table is checked by .ci/adapters instead");
            return;
        }
    };
    let out = Command::new(python)
        .args(["runner/adapters/reports.py", "table", "--check"])
        .current_dir(repo())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// reports.py's own tests (runner/adapters/test_reports.py): an adapter's name or version with
/// HTML, line breaks, `|` or a URL stays inert text in its one cell of the table.
#[test]
fn reports_py_escapes_what_an_adapter_wrote() {
    if !Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("python3 is not available: reports.py's tests are not run");
        return;
    }
    let out = Command::new("python3")
        .args([
            "-m",
            "unittest",
            "discover",
            "-s",
            "runner/adapters",
            "-p",
            "test_reports.py",
        ])
        .current_dir(repo())
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    // All of them ran (a test file that imports nothing runs 0 tests and still says OK).
    let ran: usize = text
        .split("Ran ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(ran >= 9, "{text}");
}

/// The HTML overview counts a runtime's unsafe and different failures whether or not they are
/// listed as known (a runtime whose failures are all listed is still unsafe where it is), and
/// says how many are listed.
#[test]
fn the_html_overview_counts_listed_failures_by_kind() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = dir.path().join("page.html");
    let report = repo().join("reports/deepagents");
    let out = Command::new(env!("CARGO_BIN_EXE_skillspec"))
        .arg("report")
        .arg("html")
        .arg(&page)
        .arg(&report)
        .current_dir(repo())
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("the page is written");
    let json = json(&report.join("report.json"));
    let cases = json["cases"].as_array().expect("cases");
    // The overview speaks of the dialects the runtime claims and of hardening: a dialect it runs
    // for information (`for_information`) counts only its unsafe failures there.
    let informed: Vec<&Value> = json["for_information"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let kind = |k: &str| {
        cases
            .iter()
            .filter(|c| c["status"] == "fail" && c["failure_kind"] == k)
            .filter(|c| {
                k == "unsafe" || c["hardening"] == true || !informed.contains(&&c["dialect"])
            })
            .count()
    };
    let (unsafe_n, different_n) = (kind("unsafe"), kind("different"));
    assert!(
        unsafe_n > 0 && different_n > 0,
        "the deepagents report has failures of both kinds"
    );
    for n in [unsafe_n, different_n] {
        let cell = format!("{n}<span class=\"label\">{n} listed as known</span>");
        assert!(html.contains(&cell), "the overview does not show `{cell}`");
    }
}
