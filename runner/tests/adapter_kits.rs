//! The adapter kits (`runner/adapters/kit/`) end to end: their own test suites pass, and adapters
//! built on them speak the protocol flawlessly under the real runner — every case PASS or FAIL,
//! none ERROR, every message recorded valid against `protocol/*.schema.json` — also when the
//! runtime prints to stdout from everywhere, a child process included, when it asks for a
//! process per case, and when it says it cannot run side by side. Needs `python3` and `node`
//! (Node 18 or later).

mod common;
use common::{repo, schema};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Checks every recorded message against the schemas; returns the number of step results.
fn check_traffic(record: &Path) -> usize {
    let request = jsonschema::validator_for(&schema("request.schema.json")).unwrap();
    let mut response_doc = schema("response.schema.json");
    response_doc["$defs"]["step_result"]["properties"]["result"] = serde_json::json!({});
    let response = jsonschema::validator_for(&response_doc).unwrap();
    let result = jsonschema::validator_for(&schema("step-result.schema.json")).unwrap();
    let text = std::fs::read_to_string(record).expect("traffic recorded");
    let (mut sent, mut received, mut results) = (0, 0, 0);
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).expect("record lines are JSON");
        let message = &entry["message"];
        let errors: Vec<String> = if entry["direction"] == "sent" {
            sent += 1;
            request
                .iter_errors(message)
                .map(|e| e.to_string())
                .collect()
        } else {
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
        };
        assert!(
            errors.is_empty(),
            "{message} does not match its schema: {errors:?}"
        );
    }
    assert_eq!(sent, received, "every request is answered once");
    results
}

/// Runs `adapter` on the cases `filter` selects; returns the report.
fn run(adapter: &str, filter: &str, dir: &Path) -> Value {
    let (record, report) = (dir.join("traffic.jsonl"), dir.join("report"));
    let out = Command::new(env!("CARGO_BIN_EXE_skillspec"))
        .args([
            "run",
            "--adapter",
            adapter,
            "--filter",
            filter,
            "--step-timeout",
            "20",
        ])
        .arg("--record")
        .arg(&record)
        .arg("--report")
        .arg(&report)
        .current_dir(repo())
        .output()
        .expect("the runner starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{adapter}: exit {:?}\n{text}",
        out.status.code()
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).expect("report"))
            .expect("report is JSON");
    let summary = &report["summary"];
    assert_eq!(summary["errored"], 0, "{adapter}: {summary}\n{text}");
    assert_eq!(summary["not_run"], 0, "{adapter}: {summary}");
    let (passed, failed) = (
        summary["passed"].as_u64().unwrap(),
        summary["failed"].as_u64().unwrap(),
    );
    assert!(passed > 0, "{adapter}: {summary}");
    assert!(
        check_traffic(&record) as u64 >= passed + failed,
        "{adapter}: fewer step results than cases"
    );
    report
}

#[test]
fn the_kit_test_suites_pass() {
    let out = Command::new(repo().join("runner/adapters/kit/test"))
        .output()
        .expect("runner/adapters/kit/test starts");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_toy_runtimes_speak_the_protocol_under_the_runner() {
    for (adapter, name) in [
        (
            "python3 runner/adapters/kit/python/example_runtime.py",
            "toy-python-runtime",
        ),
        (
            "node runner/adapters/kit/node/example-runtime.mjs",
            "toy-node-runtime",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let report = run(adapter, "enable.*", dir.path());
        assert_eq!(report["implementation"]["name"], name);
        // The toys are not conforming runtimes: the suite must find that, not hide it.
        assert!(report["summary"]["failed"].as_u64().unwrap() > 0);
    }
}

/// The runtime prints, logs and lets a child process write to the stdout it inherited, and wants
/// a fresh process per case: the protocol stays clean, and the chatter is not in it.
#[test]
fn a_noisy_runtime_cannot_corrupt_the_protocol() {
    let kit = repo().join("runner/adapters/kit");
    let dir = tempfile::tempdir().unwrap();
    let python = dir.path().join("noisy.py");
    std::fs::write(
        &python,
        format!(
            r#"import os, subprocess, sys
sys.path.insert(0, {kit:?})
import skillspec_kit as kit
print("noise at import")
sys.path.insert(0, {toy:?})
import example_runtime

class Noisy(example_runtime.Adapter):
    name = "noisy-python"
    process_per_case = True
    def start_case(self, config, root):
        print("noise in start_case")
        os.write(1, b"raw noise on fd 1\n")
        subprocess.run(["sh", "-c", "echo noise from a child"], check=True)
        super().start_case(config, root)
    def discover(self):
        print("noise in discover")
        return super().discover()

kit.serve(Noisy())
"#,
            kit = kit.join("python").to_str().unwrap(),
            toy = kit.join("python").to_str().unwrap(),
        ),
    )
    .unwrap();
    let node = dir.path().join("noisy.mjs");
    std::fs::write(
        &node,
        format!(
            r#"import * as kit from {kit:?};
import {{ spawnSync }} from 'node:child_process';
import fs from 'node:fs';
console.log('noise at import');
await kit.serve({{
  name: 'noisy-node', version: '0', processPerCase: true,
  startCase(config) {{
    console.log('noise in startCase');
    fs.writeSync(1, 'raw noise on fd 1\n');
    spawnSync('sh', ['-c', 'echo noise from a child'], {{ stdio: 'inherit' }});
    this.root = config.skills_root;
  }},
  discover() {{ process.stdout.write('noise in discover\n'); return []; }},
  tools() {{ return []; }},
  prompt() {{ return {{ text: 'p', baseline: 'p' }}; }},
  newTurn() {{}},
}});
"#,
            kit = kit.join("node/skillspec-kit.mjs").to_str().unwrap(),
        ),
    )
    .unwrap();
    for (adapter, name) in [
        (format!("python3 {}", python.display()), "noisy-python"),
        (format!("node {}", node.display()), "noisy-node"),
    ] {
        let sub = dir.path().join(name);
        std::fs::create_dir(&sub).unwrap();
        let report = run(&adapter, "enable.unset", &sub);
        assert_eq!(report["implementation"]["name"], name);
        let traffic = std::fs::read_to_string(sub.join("traffic.jsonl")).unwrap();
        assert!(!traffic.contains("noise"), "noise reached the protocol");
        let starts = traffic
            .lines()
            .filter(|l| l.contains(r#""type":"start""#))
            .count();
        let cases = report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "pass" || c["status"] == "fail")
            .count();
        assert_eq!(starts, cases, "one process (one handshake) per case");
    }
}

/// The kits' `side_by_side` (Python) / `sideBySide` (Node) reach the runner: at `--jobs 3` an
/// adapter that says it cannot run twice at once gets one process (one handshake, every recorded
/// line worker 0, and the header says why), and the same adapter saying nothing gets 3 workers.
#[test]
fn side_by_side_false_keeps_a_kit_adapter_on_one_process() {
    let kit = repo().join("runner/adapters/kit");
    let dir = tempfile::tempdir().unwrap();
    let mut adapters = Vec::new();
    for (alone, python_value, node_value) in [(true, "False", "false"), (false, "True", "true")] {
        let python = dir.path().join(format!("alone-{alone}.py"));
        std::fs::write(
            &python,
            format!(
                "import sys\nsys.path.insert(0, {kit:?})\nimport skillspec_kit as kit\n\
                 import example_runtime\n\n\
                 class Alone(example_runtime.Adapter):\n    side_by_side = {python_value}\n\n\
                 kit.serve(Alone())\n",
                kit = kit.join("python").to_str().unwrap(),
            ),
        )
        .unwrap();
        adapters.push((format!("python3 {}", python.display()), alone));
        let node = dir.path().join(format!("alone-{alone}.mjs"));
        std::fs::write(
            &node,
            format!(
                "import * as kit from {kit:?};\nawait kit.serve({{\n  name: 'alone-node', \
                 version: '0', sideBySide: {node_value},\n  discover() {{ return []; }},\n  \
                 tools() {{ return []; }},\n  prompt() {{ return {{ text: 'p', baseline: 'p' }}; \
                 }},\n  newTurn() {{}},\n}});\n",
                kit = kit.join("node/skillspec-kit.mjs").to_str().unwrap(),
            ),
        )
        .unwrap();
        adapters.push((format!("node {}", node.display()), alone));
    }
    for (n, (adapter, alone)) in adapters.iter().enumerate() {
        let sub = dir.path().join(format!("run-{n}"));
        std::fs::create_dir(&sub).unwrap();
        let record = sub.join("traffic.jsonl");
        let out = Command::new(env!("CARGO_BIN_EXE_skillspec"))
            .args(["run", "--adapter", adapter, "--filter", "enable.*"])
            .args(["--jobs", "3", "--step-timeout", "20", "--record"])
            .arg(&record)
            .arg("--report")
            .arg(sub.join("report"))
            .current_dir(repo())
            .output()
            .expect("the runner starts");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{adapter}: exit {:?}\n{stdout}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        check_traffic(&record);
        let traffic = std::fs::read_to_string(&record).unwrap();
        let lines: Vec<Value> = traffic
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let starts = lines
            .iter()
            .filter(|l| l["direction"] == "sent" && l["message"]["type"] == "start")
            .count();
        if *alone {
            assert!(
                stdout.contains("one at a time: the adapter says it cannot run twice side by side"),
                "{adapter}: {stdout}"
            );
            assert!(
                lines.iter().all(|l| l["worker"] == 0),
                "{adapter}: a line of another worker"
            );
            assert_eq!(starts, 1, "{adapter}: one process, one handshake");
        } else {
            assert!(stdout.contains("on 3 workers"), "{adapter}: {stdout}");
        }
    }
}

/// Review round 3: "traceback on the adapter's stderr" pointed nowhere. An errored case whose
/// adapter is alive shows what the adapter wrote to stderr during that case, in the terminal
/// and in report.json (`adapter_stderr`), and nothing an earlier case wrote.
#[test]
fn an_errored_case_carries_the_adapters_stderr_of_that_case() {
    let kit = repo().join("runner/adapters/kit/python");
    let dir = tempfile::tempdir().unwrap();
    let adapter = dir.path().join("raises.py");
    std::fs::write(
        &adapter,
        format!(
            "import sys\nsys.path.insert(0, {kit:?})\nimport skillspec_kit as kit\n\n\
             class A(kit.Runtime):\n    name, version = 'raises', '0'\n    cases = 0\n\
             \x20   def start_case(self, config, root):\n        A.cases += 1\n\
             \x20       print('noise of case %d' % A.cases, file=sys.stderr)\n\
             \x20   def discover(self):\n        raise RuntimeError('boom %d' % A.cases)\n\n\
             kit.serve(A())\n",
            kit = kit.to_str().unwrap(),
        ),
    )
    .unwrap();
    let report = dir.path().join("report");
    let out = Command::new(env!("CARGO_BIN_EXE_skillspec"))
        .args([
            "run",
            "--adapter",
            &format!("python3 {}", adapter.display()),
        ])
        .args([
            "--filter",
            "discovery.portable.body.*",
            "--jobs",
            "1",
            "--report",
        ])
        .arg(&report)
        .current_dir(repo())
        .output()
        .expect("the runner starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("adapter stderr"), "{stdout}");
    assert!(stdout.contains("RuntimeError: boom"), "{stdout}");
    let r: Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    let errored: Vec<&Value> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "error")
        .collect();
    assert!(errored.len() >= 2, "{}", r["summary"]);
    for (i, c) in errored.iter().enumerate() {
        let stderr = c["adapter_stderr"].as_str().unwrap_or_default();
        let n = i + 1;
        assert!(stderr.contains(&format!("noise of case {n}\n")), "{c}");
        assert!(stderr.contains(&format!("RuntimeError: boom {n}")), "{c}");
        assert!(!stderr.contains(&format!("case {}\n", n + 1)), "{c}");
        if n > 1 {
            assert!(
                !stderr.contains(&format!("noise of case {}\n", n - 1)),
                "{c}"
            );
        }
        assert_eq!(c["broken_implementation"], false);
    }
}
