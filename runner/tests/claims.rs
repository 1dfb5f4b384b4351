//! What an implementation says about its runtime decides what its passes and canaries mean
//! (PROTOCOL.md, "What the runtime reads and lacks"; SPEC.md, "How verdicts are judged"),
//! end to end against `tests/adapters/claims.py`, a runtime that declares what the test asks:
//! - a case about a format the runtime never reads is UNSUPPORTED (`needs skill-yml`);
//! - a pass of a case that exercises a mechanism the runtime lacks is NOT EXERCISED, with the
//!   runtime's reason, and counted apart from passes; the same pass without the claim is a pass;
//! - a canary read inside the declared read scope is permissive, outside it unsafe.

mod common;
use common::case;

use serde_json::Value;

const ALPHA: &str =
    "  skills/alpha/SKILL.md: \"---\\nname: alpha\\ndescription: first\\n---\\n\"\n";

const CASES: &[(&str, &str)] = &[
    (
        "discovery/yml",
        "id: x.yml\nsummary: A skill.yml case.\nclauses: [discovery.legacy]\nformats: [skill-yml]\ntree:\nALPHA  skills/beta/skill.yml: \"name: beta\\n\"\nsteps:\n  - discover:\n    expect: {loaded: [alpha]}\n",
    ),
    (
        "discovery/deep",
        "id: x.deep\nsummary: A skill nine levels down is not examined.\nclauses: [discovery.depth]\nexercises: [nested-scan]\ntree:\nALPHA  skills/1/2/3/4/5/6/7/8/deep/SKILL.md: \"---\\nname: deep\\ndescription: d\\n---\\n\"\nsteps:\n  - discover:\n    expect: {loaded: [alpha]}\n",
    ),
    (
        "tools/no-run",
        "id: x.no-run\nsummary: The allowlist removes the run tool.\nclauses: [tools.registration]\nrequires: [tool-allowlist]\nconfig: {tool_allowlist: [skill_read_reference]}\ntree:\nALPHA\nsteps:\n  - tools:\n    expect: {offered: [skill_read_reference]}\n",
    ),
    (
        "read/outside",
        "id: x.outside\nsummary: An outside read.\nclauses: [read.path.segments]\ncanaries:\n  SKILLSPEC_CANARY_CLAIMS_OUT: outside-content\ntree:\nALPHA  outside.md: \"SKILLSPEC_CANARY_CLAIMS_OUT\\n\"\nsteps:\n  - read: {skill: alpha, path: ../../outside.md}\n    expect: {error: invalid_path}\n",
    ),
];

/// Runs the cases against the adapter declaring `claims` (and `features`); the report.
fn run(claims: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, String)> = CASES
        .iter()
        .map(|(f, t)| (*f, t.replace("ALPHA", ALPHA)))
        .collect();
    let r = common::run_cases(
        dir.path(),
        &cases,
        "claims.py",
        &["--step-timeout", "10"],
        &[("SKILLSPEC_TEST_CLAIMS", claims)],
    );
    (r.report, r.text)
}

#[test]
fn claims_decide_what_a_pass_and_a_canary_mean() {
    let (r, text) = run(
        r#"{"features": ["tool-allowlist"], "formats": ["skill-md"], "read_scope": "case-root",
            "lacks": {"nested-scan": "scans the root's children only (claims.py, scan())",
                      "skill_run_script": "has no script tool (claims.py, result())"}}"#,
    );
    let yml = case(&r, "x.yml");
    assert_eq!(yml["status"], "unsupported", "{text}");
    assert_eq!(yml["missing_features"], serde_json::json!(["skill-yml"]));
    for id in ["x.deep", "x.no-run"] {
        let c = case(&r, id);
        assert_eq!(c["status"], "not-exercised", "{id}: {text}");
        assert!(
            c["not_exercised"].as_str().unwrap().contains("claims.py"),
            "{c}"
        );
    }
    assert_eq!(r["summary"]["not_exercised"], 2, "{text}");
    assert_eq!(r["summary"]["passed"], 0, "{text}");
    assert!(text.contains("2 not exercised"), "{text}");
    // Read inside the declared scope: the content was read, no claimed boundary crossed.
    let outside = case(&r, "x.outside");
    assert_eq!(outside["failure_kind"], "permissive", "{text}");
    assert!(outside.get("exposures").is_none(), "{outside}");

    // Without the claims: the same behaviour passes, is judged, and leaks.
    let (r, text) = run(r#"{"features": ["tool-allowlist"]}"#);
    assert_eq!(case(&r, "x.deep")["status"], "pass", "{text}");
    assert_eq!(case(&r, "x.no-run")["status"], "pass", "{text}");
    assert_eq!(case(&r, "x.yml")["status"], "pass", "{text}");
    let outside = case(&r, "x.outside");
    assert_eq!(outside["failure_kind"], "unsafe", "{text}");
    assert_eq!(outside["exposures"], serde_json::json!(["outside-content"]));
}

#[test]
fn a_claim_outside_the_closed_lists_breaks_the_handshake() {
    for bad in [
        r#"{"read_scope": "anywhere"}"#,
        r#"{"formats": []}"#,
        r#"{"lacks": {"depth": "x"}}"#,
        r#"{"lacks": {"nested-scan": ""}}"#,
    ] {
        let (r, text) = run(bad);
        assert_eq!(r["summary"]["not_run"], 4, "{bad}: {text}");
        assert!(
            text.contains("read_scope") || text.contains("formats") || text.contains("lacks"),
            "{bad}: {text}"
        );
    }
}
