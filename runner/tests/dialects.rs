//! Dialects end to end (SPEC.md "Dialects", PROTOCOL.md "Dialects"): the reference passes the
//! whole `agentskills` dialect through the adapter protocol in both modes; a case of a dialect
//! the implementation does not claim, or written for the other mode, is UNSUPPORTED with that
//! need; every report counts by dialect; a malformed claim fails the handshake.

mod common;
use common::{bin, case, validated_report};

use std::process::Command;

use serde_json::Value;

/// `skillspec run --filter 'agentskills.*'` against the reference served as an adapter with
/// `adapter_args`: the exit code, the validated report and the output.
fn run_agentskills(adapter_args: &str) -> (Option<i32>, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["run", "--filter", "agentskills.*", "--report"])
        .arg(dir.path().join("r"))
        .arg("--adapter")
        .arg(format!("{} adapter {adapter_args}", bin().display()))
        .env("TMPDIR", dir.path())
        .output()
        .expect("the runner starts");
    let text = common::text(&out);
    let report = validated_report(&dir.path().join("r"));
    (out.status.code(), report, text)
}

#[test]
fn the_reference_passes_the_dialect_in_both_modes_through_the_adapter() {
    for (mode, other) in [("strict", "lenient"), ("lenient", "strict")] {
        let (code, r, text) = run_agentskills(&format!("--agentskills-mode {mode}"));
        assert_eq!(code, Some(0), "{mode}: {text}");
        let cases = r["cases"].as_array().unwrap();
        assert!(cases.len() >= 100, "{}", cases.len());
        for c in cases {
            let ok = c["status"] == "pass"
                || (c["status"] == "unsupported"
                    && c["missing_features"] == serde_json::json!([format!("mode {other}")]));
            assert!(ok, "{mode}: {c}");
        }
        let d = &r["conformance"]["dialects"]["agentskills"];
        assert_eq!(d["claimed"], true);
        assert_eq!(d["label"], format!("agentskills 2026-08 ({mode})"));
        assert!(
            text.contains(&format!("dialect agentskills 2026-08 ({mode}): conforms")),
            "{text}"
        );
    }
}

#[test]
fn an_unclaimed_dialect_is_unsupported_and_never_headlines() {
    // An adapter that declares no dialect claims Portable Skills only (`tests/adapters/honest.py`).
    let adapter =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/adapters/honest.py");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["run", "--filter", "agentskills.validate.*", "--report"])
        .arg(dir.path().join("r"))
        .arg("--adapter")
        .arg(format!("python3 {}", adapter.display()))
        .env("TMPDIR", dir.path())
        .output()
        .expect("the runner starts");
    let text = common::text(&out);
    let r = validated_report(&dir.path().join("r"));
    let c = case(&r, "agentskills.validate.name-uppercase");
    assert_eq!(c["status"], "unsupported", "{text}");
    assert_eq!(
        c["missing_features"],
        serde_json::json!(["dialect agentskills 2026-08"])
    );
    assert_eq!(
        r["conformance"]["dialects"]["agentskills"]["claimed"],
        false
    );
    assert!(
        text.contains("dialect agentskills 2026-08 (not claimed): not checked"),
        "{text}"
    );
    assert!(text.contains("result: ok"), "{text}");
}

#[test]
fn a_dialect_run_for_information_is_judged_by_its_rules_and_never_headlines() {
    // honest.py claims Portable Skills only; `--for-information agentskills` sends the
    // dialect's mode-neutral cases anyway. Its catalog cases fail (it knows no `location`, no
    // activation tool): counted under the dialect's "(not claimed; for information)" line, not
    // in the headline's permissive or different counts. A case written for one mode still needs
    // a claim.
    let adapter =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/adapters/honest.py");
    let run = |extra: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(bin())
            .args(["run", "--filter", "agentskills.*", "--report"])
            .arg(dir.path().join("r"))
            .args(extra)
            .arg("--adapter")
            .arg(format!("python3 {}", adapter.display()))
            .env("TMPDIR", dir.path())
            .output()
            .expect("the runner starts");
        let text = common::text(&out);
        (
            out.status.code(),
            validated_report(&dir.path().join("r")),
            text,
        )
    };
    let (code, r, text) = run(&["--for-information", "agentskills"]);
    let cases = r["cases"].as_array().unwrap();
    let sent: Vec<&Value> = cases
        .iter()
        .filter(|c| c["status"] != "unsupported")
        .collect();
    let failed = sent.iter().filter(|c| c["status"] == "fail").count();
    assert!(!sent.is_empty() && failed > 0, "{text}");
    for c in cases
        .iter()
        .filter(|c| c["id"].as_str().unwrap().starts_with("agentskills.strict."))
    {
        assert_eq!(c["status"], "unsupported", "{c}");
    }
    assert_eq!(r["for_information"], serde_json::json!(["agentskills"]));
    let d = &r["conformance"]["dialects"]["agentskills"];
    assert_eq!(d["claimed"], false);
    assert_eq!(
        d["label"],
        "agentskills 2026-08 (not claimed; for information)"
    );
    assert_eq!(r["conformance"]["different"], 0, "{text}");
    assert_eq!(r["conformance"]["permissive"], 0, "{text}");
    assert!(
        text.contains("dialect agentskills 2026-08 (not claimed; for information): "),
        "{text}"
    );
    // Its failures are not listed, so the run still fails (a regression is one), but the
    // headline speaks of no permissive or different behaviour.
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("0 permissive; 0 safe but different"),
        "{text}"
    );

    // Without the flag, nothing of the dialect is sent.
    let (code, r, text) = run(&[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["status"] == "unsupported"));

    // A dialect the suite does not know is a usage error naming it.
    let out = Command::new(bin())
        .args(["run", "--for-information", "klingon"])
        .output()
        .expect("the runner starts");
    assert_eq!(out.status.code(), Some(2));
    assert!(common::text(&out).contains("no dialect `klingon`"));
}
