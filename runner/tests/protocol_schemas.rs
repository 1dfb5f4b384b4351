//! The adapter protocol as documented: every message of a whole suite run through
//! `skillspec adapter` (recorded with `--record`) is valid against `protocol/*.schema.json`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn schema(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../protocol")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).expect("schema exists")).expect("schema is JSON")
}

#[test]
fn recorded_traffic_matches_the_schemas() {
    let request =
        jsonschema::validator_for(&schema("request.schema.json")).expect("request schema compiles");
    // The envelope is checked with `result` left open; the result against its own schema.
    let mut response_doc = schema("response.schema.json");
    response_doc["$defs"]["step_result"]["properties"]["result"] = serde_json::json!({});
    let response = jsonschema::validator_for(&response_doc).expect("response schema compiles");
    let result = jsonschema::validator_for(&schema("step-result.schema.json"))
        .expect("step-result schema compiles");

    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("traffic.jsonl");
    let bin = env!("CARGO_BIN_EXE_skillspec");
    let out = Command::new(bin)
        .args([
            "run",
            "--adapter",
            &format!("{bin} adapter"),
            "--record",
            record.to_str().unwrap(),
        ])
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let text = std::fs::read_to_string(&record).unwrap();
    let (mut sent, mut received, mut results) = (0, 0, 0);
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let message = &entry["message"];
        let errors: Vec<String> = match entry["direction"].as_str() {
            Some("sent") => {
                sent += 1;
                request
                    .iter_errors(message)
                    .map(|e| e.to_string())
                    .collect()
            }
            Some("received") => {
                received += 1;
                let mut errors: Vec<String> = response
                    .iter_errors(message)
                    .map(|e| e.to_string())
                    .collect();
                if message["type"] == "step_result" {
                    results += 1;
                    errors.extend(
                        result
                            .iter_errors(&message["result"])
                            .map(|e| e.to_string()),
                    );
                }
                errors
            }
            other => panic!("unknown direction {other:?}"),
        };
        assert!(
            errors.is_empty(),
            "{message} does not match its schema: {errors:?}"
        );
    }
    assert_eq!(sent, received, "every request is answered once");
    assert!(results > 400, "only {results} step results were recorded");
}

#[test]
fn the_schemas_reject_what_the_protocol_forbids() {
    let request = jsonschema::validator_for(&schema("request.schema.json")).unwrap();
    assert!(!request.is_valid(&serde_json::json!({"type": "start", "protocol_version": 1})));
    assert!(!request.is_valid(
        &serde_json::json!({"type": "step", "seq": 1, "index": 0, "step": {"op": "dance"}})
    ));
    let result = jsonschema::validator_for(&schema("step-result.schema.json")).unwrap();
    assert!(!result.is_valid(&serde_json::json!({"ok": false, "error": {"message": "no code"}})));
    assert!(result.is_valid(&serde_json::json!({"ok": false, "error": {"code": "not_found"}})));
}

/// Every case file of the suite is valid against the editor schema `spec-cases/case.schema.json`
/// (the schema stays in step with the format the runner reads).
#[test]
fn every_case_file_matches_the_editor_schema() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec-cases");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(path.join("case.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&doc).expect("case schema compiles");
    let mut files = Vec::new();
    let mut dirs = vec![path];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "yaml") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 700, "only {} case files", files.len());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let case: Value = serde_saphyr::from_str(&text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&case)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
    }
}
