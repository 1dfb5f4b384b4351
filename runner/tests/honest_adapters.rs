//! An honest adapter of a runtime whose tools have other names and that refuses
//! (`tests/adapters/honest.py`), end to end under `skillspec run`: prompt checks naming a spec
//! tool hold for the native name the adapter declares in `implementation.tool_names` (which
//! report.json carries), and a refused start, scan or call is judged a safe, different
//! refusal with the runtime's message in the mismatch, never ERROR and never unsafe; after a
//! refused start no step is sent. Every recorded message is valid against the schemas.

mod common;
use common::{bin, case, schema};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const ALPHA: &str =
    "  skills/alpha/SKILL.md: \"---\\nname: alpha\\ndescription: first\\n---\\n\"\n";

/// `(file, id, config and tree, steps)`.
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "prompt/filtered",
        "honest.prompt-filtered",
        "requires: [tool-allowlist]\nconfig:\n  tool_allowlist: [skill_read_reference]\n",
        "  - prompt:\n    expect: {not_contains: [skill_run_script]}\n",
    ),
    (
        "prompt/mentions-read",
        "honest.prompt-mentions-read",
        "",
        "  - prompt:\n    expect: {contains: ['skill_read_reference(skill, path)']}\n",
    ),
    (
        "read/denied",
        "honest.read-denied",
        "",
        "  - read: {skill: alpha, path: ../x.md}\n    expect: {error: invalid_path}\n",
    ),
    (
        "discovery/fifo",
        "honest.fifo-aborts-scan",
        "  skills/pipe/SKILL.md: {fifo: true}\n",
        "  - discover:\n    expect: {loaded: [alpha]}\n",
    ),
    (
        "discovery/fifo-nothing",
        "honest.fifo-nothing-expected",
        "  skills/pipe/SKILL.md: {fifo: true}\n",
        "  - discover:\n    expect: {loaded: []}\n",
    ),
    (
        "enable/missing-root",
        "honest.missing-root",
        "config:\n  skills_root: missing\n",
        "  - tools:\n    expect: {not_offered: [skill_run_script]}\n  - read: {skill: alpha, path: SKILL.md}\n    expect: {error: unknown_skill}\n",
    ),
];

fn write_cases(dir: &Path) {
    for (file, id, extra, steps) in CASES {
        let path = dir.join(format!("cases/{file}.yaml"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let (config, tree) = if extra.contains("config:") {
            (*extra, "")
        } else {
            ("", *extra)
        };
        let text = format!(
            "id: {id}\nsummary: An honest adapter test.\nclauses: [prompt.filtered]\ntree:\n{ALPHA}{tree}{config}steps:\n{steps}"
        );
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn an_honest_adapter_maps_names_and_reports_refusals() {
    let dir = tempfile::tempdir().unwrap();
    write_cases(dir.path());
    let adapter = format!(
        "python3 {}",
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/adapters/honest.py")
            .display()
    );
    let record = dir.path().join("traffic.jsonl");
    let out = Command::new(bin())
        .args(["run", "--cases"])
        .arg(dir.path().join("cases"))
        .args(["--adapter", &adapter, "--report"])
        .arg(dir.path().join("r"))
        .arg("--record")
        .arg(&record)
        .env("TMPDIR", dir.path())
        .current_dir(dir.path())
        .output()
        .expect("the runner starts");
    let text = common::text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let r = common::validated_report(&dir.path().join("r"));
    assert_eq!(
        r["implementation"]["tool_names"]["skill_run_script"],
        "run_skill_script_native"
    );
    assert_eq!(r["summary"]["errored"], 0, "{text}");
    // The native name of a removed tool is a mention of it.
    let filtered = case(&r, "honest.prompt-filtered");
    assert_eq!(filtered["status"], "fail", "{text}");
    assert_eq!(filtered["failure_kind"], "different");
    assert!(
        filtered["mismatches"][0]["expected"]
            .as_str()
            .unwrap()
            .contains("run_skill_script_native"),
        "{filtered}"
    );
    // The native name of a tool the prompt must name is the name.
    assert_eq!(
        case(&r, "honest.prompt-mentions-read")["status"],
        "pass",
        "{text}"
    );
    // Refusals: different, with the runtime's message; a refused scan loaded nothing.
    for (id, message) in [
        (
            "honest.read-denied",
            "PermissionError: sandbox denied the read of '../x.md'",
        ),
        ("honest.fifo-aborts-scan", "OSError: scanner aborted: "),
        (
            "honest.missing-root",
            "the runtime refused to start: FileNotFoundError: ",
        ),
    ] {
        let c = case(&r, id);
        assert_eq!(c["status"], "fail", "{id}: {c}");
        assert_eq!(c["failure_kind"], "different", "{id}: {c}");
        let actual = c["mismatches"][0]["actual"].as_str().unwrap();
        assert!(actual.contains(message), "{id}: {actual}");
    }
    assert_eq!(case(&r, "honest.fifo-nothing-expected")["status"], "pass");
    let read = case(&r, "honest.read-denied");
    assert!(
        read["mismatches"][0]["actual"]
            .as_str()
            .unwrap()
            .starts_with("refused ("),
        "{read}"
    );
    // After the refused start, only the `tools` step was judged (it passes: nothing offered),
    // and no step reached the adapter; the read is refused too.
    let missing = case(&r, "honest.missing-root");
    assert_eq!(missing["step"], 2, "{missing}");
    check_traffic(&record, "honest.missing-root");
}

/// Every recorded message matches its schema, and no step of `refused_case` was sent.
fn check_traffic(record: &Path, refused_case: &str) {
    // The envelope; results are checked against their own schema elsewhere.
    let mut doc = schema("response.schema.json");
    doc["$defs"]["step_result"]["properties"]["result"] = serde_json::json!({});
    let response = jsonschema::validator_for(&doc).unwrap();
    let text = std::fs::read_to_string(record).unwrap();
    let mut refused_seq = None;
    let mut refusals = 0;
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let m = &entry["message"];
        if entry["direction"] == "sent" {
            if m["case"] == refused_case {
                refused_seq = Some(m["seq"].clone());
            }
            if m["type"] == "step" {
                assert_ne!(
                    Some(&m["seq"]),
                    refused_seq.as_ref(),
                    "a step was sent: {m}"
                );
            }
            continue;
        }
        let errors: Vec<String> = response.iter_errors(m).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{m}: {errors:?}");
        refusals += usize::from(m.get("refused").is_some());
    }
    assert!(refused_seq.is_some());
    assert_eq!(
        refusals, 4,
        "a refused start, two scans and a call:\n{text}"
    );
}
