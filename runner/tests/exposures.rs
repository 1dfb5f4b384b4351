//! Unsafe only where the run shows a crossing (SPEC.md, "How verdicts are judged"), end to end
//! against `tests/adapters/reads_anything.py`, a runtime that checks nothing and shows only what
//! it really read: a read that returns an outside file's canary is unsafe (`outside-content`); the
//! same read of a file inside the skill is permissive; a canary shown by a step after the first
//! failing one still makes the case unsafe; a runtime that hangs on a FIFO in a `bounded` case is
//! unsafe (`unbounded`), and in a case without `bounded` an error.

mod common;
use common::{bin, case};
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const ALPHA: &str =
    "  skills/alpha/SKILL.md: \"---\\nname: alpha\\ndescription: first\\n---\\n\"\n";

/// `(file, text)`: each case's whole text after its id line.
const CASES: &[(&str, &str)] = &[
    (
        "read/outside",
        "id: x.outside\nsummary: An outside read.\nclauses: [read.path.segments]\ncanaries:\n  SKILLSPEC_CANARY_X1: outside-content\ntree:\nALPHA  skills/outside.md: \"SKILLSPEC_CANARY_X1\\n\"\nsteps:\n  - read: {skill: alpha, path: ../outside.md}\n    expect: {error: invalid_path}\n",
    ),
    (
        "read/inside",
        "id: x.inside\nsummary: An in-skill read by a path that must be refused.\nclauses: [read.path.segments]\ntree:\nALPHA  skills/alpha/references/a.md: \"fine\\n\"\nsteps:\n  - read: {skill: alpha, path: references/../references/a.md}\n    expect: {error: invalid_path}\n",
    ),
    (
        "read/later",
        "id: x.later\nsummary: The first step fails permissively, a later one shows the canary.\nclauses: [read.path.segments]\ncanaries:\n  SKILLSPEC_CANARY_X2: outside-content\ntree:\nALPHA  skills/alpha/references/a.md: \"fine\\n\"\n  skills/outside.md: \"SKILLSPEC_CANARY_X2\\n\"\nsteps:\n  - read: {skill: alpha, path: references/../references/a.md}\n    expect: {error: invalid_path}\n  - read: {skill: alpha, path: ../outside.md}\n    expect: {error: invalid_path}\n",
    ),
    (
        "discovery/fifo-bounded",
        "id: x.fifo-bounded\nsummary: A FIFO named SKILL.md is never waited on.\nclauses: [discovery.malformed]\nbounded: a FIFO named SKILL.md\ntree:\nALPHA  skills/f/SKILL.md: {fifo: true}\nsteps:\n  - discover:\n    expect: {loaded: [alpha]}\n",
    ),
    (
        "discovery/fifo-unbounded",
        "id: x.fifo-plain\nsummary: The same, without bounded.\nclauses: [discovery.malformed]\ntree:\nALPHA  skills/f/SKILL.md: {fifo: true}\nsteps:\n  - discover:\n    expect: {loaded: [alpha]}\n",
    ),
];

fn run(filter: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, String)> = CASES
        .iter()
        .map(|(f, t)| (*f, t.replace("ALPHA", ALPHA)))
        .collect();
    let r = common::run_cases(
        dir.path(),
        &cases,
        "reads_anything.py",
        &[
            "--step-timeout",
            "2",
            "--hang-bound",
            "3",
            "--filter",
            filter,
        ],
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.text);
    (r.report, r.text)
}

fn kinds(c: &Value) -> Vec<(String, Option<String>)> {
    c["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["kind"].as_str().unwrap().to_owned(),
                m["exposure"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

#[test]
fn unsafe_needs_the_canary_permissive_does_not() {
    let (r, text) = run("x.*");
    let outside = case(&r, "x.outside");
    assert_eq!(outside["failure_kind"], "unsafe", "{text}");
    assert_eq!(outside["exposures"], serde_json::json!(["outside-content"]));
    assert_eq!(
        kinds(outside),
        [
            ("permissive".to_owned(), None),
            ("unsafe".to_owned(), Some("outside-content".to_owned()))
        ]
    );
    // The same acceptance of a path that stays inside the skill shows nothing crossed.
    let inside = case(&r, "x.inside");
    assert_eq!(inside["failure_kind"], "permissive", "{text}");
    assert!(inside.get("exposures").is_none());
    // The case failed at step 1; step 2 still ran, and what it showed makes the case unsafe.
    let later = case(&r, "x.later");
    assert_eq!(later["failure_kind"], "unsafe", "{text}");
    assert_eq!(later["step"], 1);
    let last = later["mismatches"].as_array().unwrap().last().unwrap();
    assert!(
        last["what"].as_str().unwrap().starts_with(
            "later, step 2 (`call skill_read_reference`): canary `SKILLSPEC_CANARY_X2`"
        ),
        "{last}"
    );
    // x.outside, x.later and the hang of x.fifo-bounded.
    assert_eq!(r["conformance"]["unsafe"], 3, "{text}");
    assert_eq!(r["conformance"]["permissive"], 1, "{text}");
}

#[test]
fn a_hang_is_unsafe_only_where_the_case_plants_what_hangs() {
    let (r, text) = run("x.fifo-*");
    let bounded = case(&r, "x.fifo-bounded");
    assert_eq!(bounded["failure_kind"], "unsafe", "{text}");
    assert_eq!(bounded["exposures"], serde_json::json!(["unbounded"]));
    let plain = case(&r, "x.fifo-plain");
    assert_eq!(plain["status"], "error", "{text}");
}

/// A runtime that reads a link to /dev/zero into memory is stopped at the run's memory bound
/// (`--memory-bound`), long before the hang bound: in a `bounded:` case that is the hang the case
/// plants (`unbounded`, the message says how much it held), in another case an error. Through
/// `tests/adapters/hoards_a_read.py`, with a bound of 128 MiB.
#[test]
fn a_runtime_that_grows_without_bound_is_stopped_at_the_memory_bound() {
    const ZERO: &str = "clauses: [read.regular-file]\ntree:\n  skills/alpha/SKILL.md: \"---\\nname: alpha\\ndescription: d\\n---\\n\"\n  skills/alpha/references/zero.txt: {symlink: /dev/zero}\nsteps:\n  - read: {skill: alpha, path: references/zero.txt}\n    expect: {error: invalid_path}\n";
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "read/zero-bounded",
            format!("id: x.zero-bounded\nsummary: A link to /dev/zero is never read.\nbounded: a link to /dev/zero\n{ZERO}"),
        ),
        (
            "read/zero-plain",
            format!("id: x.zero-plain\nsummary: The same, without bounded.\n{ZERO}"),
        ),
    ];
    let cases: Vec<(&str, String)> = cases.iter().map(|(f, t)| (*f, t.clone())).collect();
    let began = std::time::Instant::now();
    let r = common::run_cases(
        dir.path(),
        &cases,
        "hoards_a_read.py",
        &[
            "--memory-bound",
            "128",
            "--step-timeout",
            "120",
            "--hang-bound",
            "120",
        ],
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.text);
    assert!(
        began.elapsed().as_secs() < 60,
        "stopped by the memory bound, not a clock: {}",
        r.text
    );
    let bounded = case(&r.report, "x.zero-bounded");
    assert_eq!(bounded["failure_kind"], "unsafe", "{}", r.text);
    assert_eq!(bounded["exposures"], serde_json::json!(["unbounded"]));
    let got = bounded["mismatches"][0]["actual"]
        .as_str()
        .unwrap_or_default();
    assert!(
        got.contains("past the run's memory bound of 128 MiB"),
        "{got}"
    );
    let plain = case(&r.report, "x.zero-plain");
    assert_eq!(plain["status"], "error", "{}", r.text);
    assert!(r.text.contains("memory bound"), "{}", r.text);
}

#[test]
fn the_runner_itself_never_judges_a_passing_reference_unsafe() {
    // The reference passes the repository's suite with every canary planted: no canary is seen.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["run", "--filter", "read.*", "--report"])
        .arg(dir.path().join("r"))
        .env("TMPDIR", dir.path())
        .output()
        .expect("the runner starts");
    assert_eq!(out.status.code(), Some(0));
    let r = common::validated_report(&dir.path().join("r"));
    assert_eq!(r["conformance"]["unsafe"], 0);
}

/// Every rendering the review of the canary model passed a leak on in (and each key the runner's
/// own shape drops), through `tests/adapters/disguises_a_leak.py`: a runtime that reads a refused
/// path naively and passes the outside file's canary on disguised, while answering the right
/// refusal. Each is judged unsafe (`outside-content`); the plain rendering is the control.
#[test]
fn a_disguised_canary_is_still_a_leak() {
    const HOWS: [&str; 11] = [
        "plain",
        "markdown",
        "lower",
        "zero-width",
        "fullwidth",
        "html",
        "base64",
        "hex",
        "extra-key",
        "guide-key",
        "baseline",
    ];
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(String, String)> = HOWS
        .iter()
        .enumerate()
        .map(|(n, how)| {
            (
                format!("read/{how}"),
                format!(
                    "id: x.render.{how}\nsummary: A leak passed on as {how}.\nclauses: [read.path.segments]\ncanaries:\n  SKILLSPEC_CANARY_RENDER_{n}: outside-content\ntree:\n{ALPHA}  skills/outside.md: \"SKILLSPEC_CANARY_RENDER_{n}\\n\"\nsteps:\n  - discover:\n    expect: {{loaded: [alpha]}}\n  - prompt:\n    expect: {{contains: [\"`alpha`\"]}}\n  - read: {{skill: alpha, path: ../outside.md}}\n    expect: {{error: invalid_path}}\n"
                ),
            )
        })
        .collect();
    let cases: Vec<(&str, String)> = cases.iter().map(|(f, t)| (f.as_str(), t.clone())).collect();
    let run = common::run_cases(
        dir.path(),
        &cases,
        "disguises_a_leak.py",
        &["--step-timeout", "10"],
        &[],
    );
    let (text, r) = (run.text, run.report);
    assert_eq!(run.code, Some(1), "{text}");
    for how in HOWS {
        let c = case(&r, &format!("x.render.{how}"));
        assert_eq!(c["failure_kind"], "unsafe", "{how}: {c}");
        assert_eq!(
            c["exposures"],
            serde_json::json!(["outside-content"]),
            "{how}: {c}"
        );
    }
}

/// A verdict never depends on the step timeout (issue: a runtime that reads a 4 GiB file whole
/// passed at the default timeout and was "unbounded" at `--step-timeout 5`): a `bounded:` case
/// waits the runner's hang bound whatever the step timeout. `tests/adapters/slow_scan.py` takes
/// 4 s for each scan of a tree holding a sparse file, as a runtime reading it whole would; at
/// `--step-timeout 1` and at `--step-timeout 30` the verdicts are the same.
#[test]
fn the_step_timeout_decides_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases/discovery");
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::write(
        cases.join("sparse.yaml"),
        format!("id: x.sparse\nsummary: A huge sparse SKILL.md is skipped.\nclauses: [discovery.size]\nbounded: a sparse 4 GiB SKILL.md\ntree:\n{ALPHA}  skills/huge/SKILL.md: {{size: 4294967296, sparse: true}}\nsteps:\n  - discover:\n    expect: {{loaded: [alpha]}}\n"),
    )
    .unwrap();
    let adapter = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/adapters/slow_scan.py");
    let verdict = |timeout: &str| {
        let report = dir.path().join(format!("r{timeout}"));
        let out = Command::new(bin())
            .args([
                "run",
                "--step-timeout",
                timeout,
                "--hang-bound",
                "60",
                "--cases",
            ])
            .arg(dir.path().join("cases"))
            .arg("--adapter")
            .arg(format!("python3 {}", adapter.display()))
            .arg("--report")
            .arg(&report)
            .env("TMPDIR", dir.path())
            .output()
            .expect("the runner starts");
        let r = common::validated_report(&report);
        let c = case(&r, "x.sparse").clone();
        (
            out.status.code(),
            c["status"].clone(),
            c.get("failure_kind").cloned(),
        )
    };
    let short = verdict("1");
    assert_eq!(short, verdict("30"));
    assert_eq!(short.1, "pass", "{short:?}");
}

/// The repository's `policy.*` cases through `tests/adapters/runs_anything.py` (a runtime with
/// no approval), claiming the dialects `claims` (JSON; none: Portable Skills): the validated
/// report and the run's output.
fn runs_anything_policy(claims: Option<&str>) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let adapter = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/adapters/runs_anything.py");
    let mut cmd = Command::new(bin());
    cmd.args([
        "run",
        "--filter",
        "policy.*",
        "--jobs",
        "2",
        "--step-timeout",
        "30",
    ])
    .arg("--cases")
    .arg(common::repo().join("spec-cases"))
    .arg("--fixtures")
    .arg(common::repo().join("fixtures"))
    .arg("--adapter")
    .arg(format!("python3 {}", adapter.display()))
    .arg("--report")
    .arg(dir.path().join("r"))
    .env("TMPDIR", dir.path());
    if let Some(c) = claims {
        cmd.env("RUNS_ANYTHING_DIALECTS", c);
    }
    let out = cmd.output().expect("the runner starts");
    let text = common::text(&out);
    (common::validated_report(&dir.path().join("r")), text)
}

/// On a runtime with no approval at all (`tests/adapters/runs_anything.py`: it runs any helper
/// it is named, by path), every `policy` case in which a helper ran where a refusal was due is
/// unsafe (`code-ran`), edited and swapped helpers included: never merely permissive. The
/// repository's own cases, through the adapter.
#[test]
fn a_runtime_without_approval_is_unsafe_wherever_a_helper_ran() {
    let (r, text) = runs_anything_policy(None);
    let cases = r["cases"].as_array().unwrap();
    let failed: Vec<&Value> = cases.iter().filter(|c| c["status"] == "fail").collect();
    assert!(failed.len() >= 40, "{text}");
    for c in &failed {
        assert_eq!(c["failure_kind"], "unsafe", "{}: {c}", c["id"]);
        assert!(
            c["exposures"]
                .as_array()
                .unwrap()
                .contains(&Value::from("code-ran")),
            "{c}"
        );
    }
    for id in [
        "policy.edited.one-byte-appended",
        "policy.edited.beyond-64-kib",
        "policy.malformed.hash-63-chars",
    ] {
        assert_eq!(case(&r, id)["failure_kind"], "unsafe", "{id}: {text}");
    }
}

/// The hardening relabelling, case for case (SPEC.md, "Hardening"): the same runtime without
/// approval, once claiming Portable Skills and once only the open Agent Skills standard. Claiming
/// the other dialect, every hardening case still runs and is judged on its exposures alone: it
/// fails exactly where the Portable Skills run showed a crossing, with the same exposures, and is
/// counted under `hardening`; every other Portable Skills case is UNSUPPORTED.
#[test]
fn hardening_cases_keep_their_exposures_for_a_runtime_of_another_dialect() {
    let (portable, _) = runs_anything_policy(None);
    let (other, _) = runs_anything_policy(Some(
        r#"[{"name":"agentskills","version":"2026-08","mode":"lenient"}]"#,
    ));
    let mut hardening = 0;
    for p in portable["cases"].as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        let o = case(&other, id);
        if p["hardening"] == true {
            hardening += 1;
            let was_unsafe = p["failure_kind"] == "unsafe";
            assert_eq!(o["failure_kind"] == "unsafe", was_unsafe, "{id}: {p} / {o}");
            assert_eq!(o["exposures"], p["exposures"], "{id}");
            if !was_unsafe {
                assert!(
                    o["status"] == "pass" || o["status"] == "not-exercised",
                    "{id}: {o}"
                );
            }
        } else {
            assert_eq!(o["status"], "unsupported", "{id}: {o}");
        }
    }
    assert!(hardening >= 40, "{hardening} hardening cases");
    let h = &other["conformance"]["dialects"]["hardening"];
    assert!(
        h["statement"].as_str().unwrap().contains("threat model"),
        "{h}"
    );
    assert!(portable["conformance"]["dialects"]
        .get("hardening")
        .is_none());
}
