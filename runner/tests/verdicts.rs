//! Verdicts end to end: `skillspec run` against a runtime that fails in both ways
//! (`tests/adapters/unsafe_reader.py`) reports its unsafe and its safe-but-different failures
//! apart from its permissive and its safe-but-different ones, in the terminal summary, in
//! report.json (validated against its schema) and in junit.xml; an area whose tool is missing
//! reads as not implemented; a process left behind is unsafe; and every `safety:` mark of the
//! repository's cases turns a failed prompt check into an unsafe failure (prompt-forgery). Each run uses a few small cases in its own temporary directory.

mod common;
use common::{bin, case};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// `python3 tests/adapters/NAME`.
fn adapter(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/adapters");
    format!("python3 {}/{name}", dir.display())
}

const TREE: &str =
    "tree:\n  skills/alpha/SKILL.md: \"---\\nname: alpha\\ndescription: first\\n---\\n\"\n";

/// `(area/file, id, clauses, steps)` for each case.
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "tools/read-only",
        "tools.read-offered",
        "tools.registration",
        "  - tools:\n    expect: {offered: [skill_read_reference]}\n",
    ),
    (
        "discovery/linked",
        "discovery.linked-skipped",
        "discovery.symlink.dir",
        "  - discover:\n    expect: {loaded: [alpha]}\n",
    ),
    (
        "read/escape",
        "read.escape-refused",
        "read.path.segments",
        "  - read: {skill: alpha, path: ../outside/secret.md}\n    expect: {error: invalid_path}\n",
    ),
    (
        "read/other-code",
        "read.backslash-refused",
        "read.path.backslash",
        "  - read: {skill: alpha, path: 'references\\a.md'}\n    expect: {error: invalid_path}\n",
    ),
    (
        "run/runs",
        "run.helper-runs",
        "run.success",
        "  - run: {skill: alpha, script: scripts/x.py}\n    expect: {ok: {exit_code: 0}}\n",
    ),
    (
        "run/refused",
        "run.unapproved-refused",
        "run.not-approved",
        "  - run: {skill: alpha, script: scripts/x.py}\n    expect:\n      error: not_approved\n      files: {absent: [marker]}\n",
    ),
];

/// The escape plants a canary in the file it reaches: only its content shows the crossing.
const ESCAPE_CANARY: &str = "canaries:\n  SKILLSPEC_CANARY_VERDICTS_ESCAPE: outside-content\n";
const ESCAPE_FILE: &str = "  skills/outside/secret.md: \"SKILLSPEC_CANARY_VERDICTS_ESCAPE\\n\"\n";

fn write_cases(dir: &Path) {
    for (file, id, clauses, steps) in CASES {
        let path = dir.join(format!("cases/{file}.yaml"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let (canary, extra) = match *id {
            "read.escape-refused" => (ESCAPE_CANARY, ESCAPE_FILE),
            // What would write the marker, had it run.
            "run.unapproved-refused" => (
                "",
                "  skills/alpha/scripts/x.py: \"open('marker', 'w')\\n\"\n",
            ),
            _ => ("", ""),
        };
        let text = format!(
            "id: {id}\nsummary: A verdict test.\nclauses: [{clauses}]\n{canary}{TREE}{extra}steps:\n{steps}"
        );
        std::fs::write(path, text).unwrap();
    }
}

fn run(dir: &Path, adapter_cmd: &str, report: &str, extra: &[&str]) -> (Output, String) {
    let out = Command::new(bin())
        .args(["run", "--cases"])
        .arg(dir.join("cases"))
        .args(["--adapter", adapter_cmd, "--report"])
        .arg(dir.join(report))
        .args(extra)
        .env("TMPDIR", dir)
        .current_dir(dir)
        .output()
        .expect("the runner starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

/// report.json of `report`, validated against reports/report.schema.json.
fn report_json(dir: &Path, report: &str) -> Value {
    common::validated_report(&dir.join(report))
}

#[test]
fn unsafe_and_different_failures_are_reported_apart() {
    let dir = tempfile::tempdir().unwrap();
    write_cases(dir.path());
    let (out, text) = run(dir.path(), &adapter("unsafe_reader.py"), "r", &[]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // Each failure says which kind it is, and each mismatch its kind.
    assert!(
        text.contains(
            "FAIL read.escape-refused\n  UNSAFE: the run shows a boundary crossed\n  exposure outside-content: content the model must never see reached it\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "FAIL read.backslash-refused\n  DIFFERENT: safe, but not the specified answer\n"
        ),
        "{text}"
    );
    assert!(text.contains("  [permissive] call outcome:"), "{text}");
    assert!(
        text.contains("  [unsafe: outside-content] canary `SKILLSPEC_CANARY_VERDICTS_ESCAPE`"),
        "{text}"
    );
    assert!(text.contains("  [different] error code:"), "{text}");
    assert!(
        text.contains("FAIL discovery.linked-skipped\n  PERMISSIVE"),
        "{text}"
    );
    // The conformance statement: one line per area.
    for line in [
        "\ntools: conforms (MUST 1/1 passed)\n",
        "\ndiscovery: 1 permissive (MUST); MUST 0/1 passed\n",
        "\nread: 1 unsafe failure (MUST), 1 safe but different (MUST); MUST 0/2 passed\n",
        "\nrun: not implemented (skill_run_script missing in all 2 cases run)\n",
        "\nresult: UNSAFE. 1 unsafe; 1 permissive; 3 safe but different; 1 passed; 0 not exercised; 0 unsupported; 0 errored; 6 cases\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    let r = report_json(dir.path(), "r");
    assert_eq!(r["conformance"]["unsafe"], 1);
    assert_eq!(r["conformance"]["permissive"], 1);
    assert_eq!(r["conformance"]["different"], 3);
    let read = &r["conformance"]["areas"]["read"];
    assert_eq!(read["MUST"]["unsafe"], 1);
    assert_eq!(read["MUST"]["different"], 1);
    assert_eq!(read["SHOULD"]["passed"], 0);
    assert_eq!(
        r["conformance"]["areas"]["run"]["statement"],
        "run: not implemented (skill_run_script missing in all 2 cases run)"
    );
    let escape = case(&r, "read.escape-refused");
    assert_eq!(escape["failure_kind"], "unsafe");
    assert_eq!(escape["level"], "MUST");
    assert_eq!(escape["mismatches"][0]["kind"], "permissive");
    assert_eq!(escape["mismatches"][1]["kind"], "unsafe");
    assert_eq!(escape["mismatches"][1]["exposure"], "outside-content");
    assert_eq!(escape["exposures"], serde_json::json!(["outside-content"]));
    let other = case(&r, "read.backslash-refused");
    assert_eq!(other["failure_kind"], "different");
    assert_eq!(other["mismatches"][0]["kind"], "different");
    assert!(case(&r, "tools.read-offered").get("failure_kind").is_none());
    // The refusal expected with a marker that must stay absent: the marker is absent, so the
    // missing tool alone explains the failure.
    assert_eq!(
        case(&r, "run.unapproved-refused")["failure_kind"],
        "different"
    );
    // junit keeps failures as failures, with the kind in front of the message.
    let junit = std::fs::read_to_string(dir.path().join("r/junit.xml")).unwrap();
    assert!(
        junit.contains(
            "<failure message=\"UNSAFE (outside-content): step 1 (call skill_read_reference): canary `SKILLSPEC_CANARY_VERDICTS_ESCAPE`"
        ),
        "{junit}"
    );
    assert!(
        junit.contains(
            "<failure message=\"DIFFERENT: step 1 (call skill_read_reference): error code:"
        ),
        "{junit}"
    );

    // Listed as known failures, the unsafe ones are still counted as unsafe.
    let known = dir.path().join("known.txt");
    std::fs::write(&known, "read.escape-refused\nread.backslash-refused\n").unwrap();
    let (out, text) = run(
        dir.path(),
        &adapter("unsafe_reader.py"),
        "k",
        &["--known-failures", known.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("result: UNSAFE. 1 unsafe (1 of them listed as known); 1 permissive; 3 safe but different (1 of them listed as known);"),
        "{text}"
    );
    assert!(
        text.contains("\nread: 2 known failures (1 of them unsafe); MUST 0/2 passed\n"),
        "{text}"
    );
    let k = report_json(dir.path(), "k");
    assert_eq!(k["conformance"]["unsafe"], 1);
    assert_eq!(k["conformance"]["areas"]["read"]["MUST"]["unsafe"], 0);
    assert_eq!(
        k["conformance"]["areas"]["read"]["MUST"]["known_failures"],
        2
    );
    assert_eq!(case(&k, "read.escape-refused")["verdict"], "known-failure");
    assert_eq!(case(&k, "read.escape-refused")["failure_kind"], "unsafe");
}

/// A process left running in the case root is unsafe (`process-outlived`): the case fails even
/// though every answer was right.
#[test]
fn a_process_left_behind_is_unsafe() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases/tools");
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::write(
        cases.join("leak.yaml"),
        format!(
            "id: tools.leak\nsummary: The tools step reaches the adapter.\nclauses: [tools.pipeline]\n{TREE}steps:\n  - tools:\n    expect: {{offered: [skill_read_reference, skill_run_script]}}\n"
        ),
    )
    .unwrap();
    let (out, text) = run(dir.path(), &adapter("leaks_a_helper.py"), "r", &[]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL tools.leak\n  UNSAFE"), "{text}");
    assert!(
        text.contains("\ntools: 1 unsafe failure (MUST); MUST 0/1 passed\n"),
        "{text}"
    );
    let r = report_json(dir.path(), "r");
    let leak = case(&r, "tools.leak");
    assert_eq!(leak["failure_kind"], "unsafe");
    assert_eq!(leak["mismatches"][0]["kind"], "unsafe");
    assert_eq!(leak["mismatches"][0]["exposure"], "process-outlived");
    assert!(
        leak["mismatches"][0]["what"]
            .as_str()
            .unwrap()
            .contains("processes left behind"),
        "{leak}"
    );
}

/// Every `safety:` mark of `spec-cases/` is effective: with the marked prompt check changed into
/// one the reference cannot meet, the case fails *unsafely*, as a forged prompt line; and every
/// scanned canary of the suite, put into a result, makes its case unsafe with its exposure.
#[test]
fn every_mark_and_canary_of_the_suite_can_make_its_case_unsafe() {
    use skillspec_runner::cases::expect::OutcomeExpect;
    use skillspec_runner::execution::{run_case, FailureKind, Status};
    use skillspec_runner::implementations::reference::Reference;

    let (suite, opts) = skillspec_runner::repository_suite();
    let mut marked = Vec::new();
    for case in &suite.cases {
        for (i, step) in case.steps.iter().enumerate() {
            if let Some(OutcomeExpect::Prompt(p)) = &step.expect.outcome {
                if !p.safety.is_empty() {
                    marked.push((case, i));
                }
            }
        }
    }
    assert!(marked.len() >= 2, "{} marked steps", marked.len());
    let run = |case: &skillspec_runner::cases::Case| match run_case(
        case,
        &mut Reference::default(),
        &opts,
        1,
    )
    .status
    {
        Status::Fail(f) => Some((f.kind(), f.exposures())),
        _ => None,
    };
    for (case, i) in marked {
        let mut wrong = case.clone();
        wrong.steps.truncate(i + 1);
        let Some(OutcomeExpect::Prompt(p)) = &mut wrong.steps[i].expect.outcome else {
            unreachable!()
        };
        // A text the check then finds: the empty text occurs in every prompt, and the base
        // prompt's first word stands outside any code span.
        if p.safety.get("not_contains").is_some() {
            p.not_contains.push(String::new());
        } else {
            assert!(
                p.safety.get("not_outside_code_span").is_some(),
                "{}",
                case.id
            );
            p.not_outside_code_span.push("You are".into());
        }
        let (kind, exposures) = run(&wrong).unwrap_or_else(|| panic!("{} passed", case.id));
        assert_eq!(kind, FailureKind::Unsafe, "{}", case.id);
        assert_eq!(
            exposures.iter().map(|e| e.word()).collect::<Vec<_>>(),
            ["prompt-forgery"],
            "{}",
            case.id
        );
    }
    let scanned: usize = suite
        .cases
        .iter()
        .map(|c| c.canaries.iter().filter(|(_, e)| e.scanned()).count())
        .sum();
    assert!(scanned >= 150, "{scanned} scanned canaries");
}

/// A marker whose name planted code builds (`open('ran-%d' % n, 'w')` writes `ran-2`) is an
/// honest check: the case loads (the part of the name before its digit is planted), passes
/// against the reference (the unapproved helper never runs), and a name nothing builds is still
/// refused unless the case says what writes it (`written_by:`).
#[test]
fn a_marker_planted_code_builds_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases/run");
    std::fs::create_dir_all(&cases).unwrap();
    let text = "id: run.computed-marker\nsummary: An unapproved helper that would write a marker with a computed name never runs.\nclauses: [run.approval]\ntree:\n  skills/alpha/SKILL.md: \"---\\nname: alpha\\ndescription: first\\n---\\n\"\n  skills/alpha/scripts/x.py: \"n = 2\\nopen('ran-%d' % n, 'w').close()\\n\"\nsteps:\n  - run: {skill: alpha, script: scripts/x.py}\n    expect:\n      error: not_approved\n      files: {absent: [skills/alpha/ran-2]}\n";
    std::fs::write(cases.join("computed.yaml"), text).unwrap();
    let run = |dir: &Path| {
        Command::new(bin())
            .args(["run", "--cases"])
            .arg(dir)
            .env("TMPDIR", dir)
            .output()
            .expect("the runner starts")
    };
    let out = run(&dir.path().join("cases"));
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out));
    // A name with no planted stem: refused, naming the way out.
    std::fs::write(
        cases.join("computed.yaml"),
        text.replace("ran-%d", "%s%d")
            .replace("n = 2", "n = 2\\nm = 'xyz'"),
    )
    .unwrap();
    let out = run(&dir.path().join("cases"));
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    assert!(
        common::text(&out).contains("written_by"),
        "{}",
        common::text(&out)
    );
    // With the author's reason, it loads again.
    std::fs::write(
        cases.join("computed.yaml"),
        text.replace("ran-%d", "%s%d")
            .replace("n = 2", "n = 2\\nm = 'xyz'")
            .replace(
                "files: {absent: [skills/alpha/ran-2]}",
                "files: {absent: [skills/alpha/ran-2], written_by: \"x.py joins 'ran-' and n\"}",
            ),
    )
    .unwrap();
    let out = run(&dir.path().join("cases"));
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out));
}
