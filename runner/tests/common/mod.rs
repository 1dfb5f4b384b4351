//! What the runner's integration tests share: where the binary and the repository are, running
//! the program, its output as text, and the protocol's JSON Schemas. Each test crate uses part of
//! it, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The `skillspec` binary cargo built for these tests.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_skillspec"))
}

/// The repository's top directory (as written, not resolved).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `skillspec ARGS` in the repository to completion.
pub fn skillspec(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the binary runs")
}

/// stdout then stderr, decoded lossily.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `protocol/NAME` as JSON.
pub fn schema(name: &str) -> Value {
    let path = repo().join("protocol").join(name);
    serde_json::from_slice(&std::fs::read(path).expect("schema exists")).expect("schema is JSON")
}

/// `DIR/report.json`, after checking it against `reports/report.schema.json`.
pub fn validated_report(dir: &Path) -> Value {
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("report written"))
            .expect("report is JSON");
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo().join("reports/report.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the report schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report.json does not match its schema: {errors:?}"
    );
    report
}

/// The case `id` of a report.json.
pub fn case<'r>(report: &'r Value, id: &str) -> &'r Value {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no case {id} in the report"))
}

/// A run of `skillspec run` over case files written for it: each `(area/name, text)` goes to
/// `DIR/cases/area/name.yaml`, `tests/adapters/ADAPTER` is the implementation, `args` go to `run`
/// and `env` to its environment (TMPDIR is the directory). The exit code, the validated
/// report.json and the output.
pub struct AdapterRun {
    pub code: Option<i32>,
    pub report: Value,
    pub text: String,
}

pub fn run_cases(
    dir: &Path,
    cases: &[(&str, String)],
    adapter: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> AdapterRun {
    for (file, text) in cases {
        let path = dir.join(format!("cases/{file}.yaml"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let adapter = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/adapters")
        .join(adapter);
    let report = dir.join(format!("r{}", args.join("_").replace(['-', '/'], "")));
    let out = Command::new(bin())
        .arg("run")
        .args(args)
        .arg("--cases")
        .arg(dir.join("cases"))
        .arg("--adapter")
        .arg(format!("python3 {}", adapter.display()))
        .arg("--report")
        .arg(&report)
        .env("TMPDIR", dir)
        .envs(env.iter().copied())
        .output()
        .expect("the runner starts");
    AdapterRun {
        code: out.status.code(),
        text: text(&out),
        report: validated_report(&report),
    }
}
