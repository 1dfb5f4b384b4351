//! The reports' tests: counts, the conformance statement, the summary, descriptions and JUnit.

use std::path::Path;

use super::counts::*;
use super::describe::*;
use super::summary::*;
use super::*;
use crate::cases::clauses::Level;
use crate::cases::expect::Exposure;
use crate::cases::expect::Mismatch;
use crate::cases::Case;
use crate::execution::{CaseOutcome, Failure, Status};
use crate::protocol::fault::Fault;
use crate::protocol::features::Feature;
use crate::protocol::ImplInfo;
use serde_json::{json, Value};
use std::time::Duration;

fn case(id: &str, area: &str) -> Case {
    let text = format!(
        "id: {id}\nsummary: s.\nclauses: [tools.registration]\nsteps:\n  - tools:\n    expect: {{offered: []}}\n"
    );
    crate::cases::parse_case(Path::new("t.yaml"), Some(area), &text).unwrap()
}

fn outcome(status: Status) -> CaseOutcome {
    CaseOutcome {
        status,
        duration: Duration::ZERO,
    }
}

fn fail(mismatches: Vec<Mismatch>) -> CaseOutcome {
    outcome(Status::Fail(Failure {
        step: 1,
        line: 5,
        label: "call skill_run_script".into(),
        mismatches,
    }))
}

fn unsafe_fail() -> CaseOutcome {
    fail(vec![
        Mismatch::interop("error code", "x", "y"),
        Mismatch::permissive("call outcome", "error invalid_path", "success"),
        Mismatch::exposed(
            Exposure::OutsideContent,
            "later, step 2 (`read`): canary `SKILLSPEC_CANARY_X` in the result",
            "absent",
            "present",
        ),
    ])
}

fn permissive_fail() -> CaseOutcome {
    fail(vec![Mismatch::permissive(
        "call outcome",
        "error invalid_path",
        "success",
    )])
}

fn different_fail() -> CaseOutcome {
    fail(vec![Mismatch::interop(
        "error code",
        "invalid_path",
        "not_found",
    )])
}

fn missing_tool_fail() -> CaseOutcome {
    fail(vec![Mismatch {
        missing_tool: Some("skill_run_script".into()),
        ..Mismatch::interop("call outcome", "success", "error unknown_tool")
    }])
}

fn report(results: Vec<(&Case, CaseOutcome)>, known: &[&str]) -> RunReport {
    RunReport {
        implementation: ImplInfo {
            name: "t".into(),
            version: "0".into(),
            language: None,
            features: Vec::new(),
            unknown_features: Vec::new(),
            process_per_case: false,
            side_by_side: None,
            tool_names: Default::default(),
            ..ImplInfo::default()
        },
        cases_dir: "cases".into(),
        suite: crate::suite::report_entry("cases"),
        results: results
            .into_iter()
            .map(|(c, o)| (ReportCase::from(c), o))
            .collect(),
        known_failures: known.iter().map(|s| s.to_string()).collect(),
        stopped: None,
        for_information: Vec::new(),
    }
}

/// One case of each kind of result, in areas whose statements differ.
struct Fixture {
    cases: Vec<Case>,
}

impl Fixture {
    fn new() -> Fixture {
        let mut cases = vec![
            case("d.one", "discovery"),
            case("d.two", "discovery"),
            case("r.pass", "read"),
            case("r.unsafe", "read"),
            case("r.different", "read"),
            case("run.a", "run"),
            case("run.b", "run"),
            case("run.gated", "run"),
            case("p.gated", "policy"),
            case("pr.left", "prompt"),
            case("t.should", "tools"),
            case("r.permissive", "read"),
        ];
        // A SHOULD clause (its profile cannot be required yet, so set directly).
        cases[10].clauses = vec!["skills.lifecycle".into()];
        Fixture { cases }
    }

    fn report(&self, known: &[&str]) -> RunReport {
        let c = &self.cases;
        let gated = || {
            outcome(Status::Unsupported(vec![
                crate::protocol::claims::Need::Feature(Feature::ToolAllowlist),
            ]))
        };
        report(
            vec![
                (&c[0], outcome(Status::Pass)),
                (&c[1], outcome(Status::Pass)),
                (&c[2], outcome(Status::Pass)),
                (&c[3], unsafe_fail()),
                (&c[4], different_fail()),
                (&c[5], missing_tool_fail()),
                (&c[6], missing_tool_fail()),
                (&c[7], gated()),
                (&c[8], gated()),
                (&c[9], outcome(Status::NotRun)),
                (&c[10], different_fail()),
                (&c[11], permissive_fail()),
            ],
            known,
        )
    }
}

#[test]
fn each_area_reads_as_one_plain_line() {
    let f = Fixture::new();
    let r = f.report(&[]);
    let c = r.conformance();
    let line = |area: &str| c.areas[area].statement(area);
    assert_eq!(line("discovery"), "discovery: conforms (MUST 2/2 passed)");
    assert_eq!(
        line("read"),
        "read: 1 unsafe failure (MUST), 1 permissive (MUST), 1 safe but different (MUST); MUST 1/4 passed"
    );
    assert_eq!(
        line("run"),
        "run: not implemented (skill_run_script missing in all 2 cases run; 1 UNSUPPORTED (needs tool-allowlist))"
    );
    assert_eq!(
        line("policy"),
        "policy: not checked (1 UNSUPPORTED (needs tool-allowlist))"
    );
    assert_eq!(
        line("prompt"),
        "prompt: not run (1 case; the run stopped early)"
    );
    assert_eq!(
        line("tools"),
        "tools: 1 safe but different (SHOULD); SHOULD 0/1 passed"
    );
    assert_eq!(
        (c.unsafe_total(), c.permissive_total(), c.different_total()),
        (1, 1, 4)
    );
    let text = summary_text(&r);
    for want in [line("discovery"), line("read"), line("run")] {
        assert!(text.contains(&format!("\n{want}\n")), "{text}");
    }
    assert!(
        text.contains("result: UNSAFE. 1 unsafe; 1 permissive; 4 safe but different; 3 passed;"),
        "{text}"
    );
    // The table: one row per area and level that has cases, a column per kind.
    assert!(
        text.contains("\narea         level  passed not exer. unsafe permissive different known"),
        "{text}"
    );
    assert!(
        text.contains("\nread         MUST        1         0      1          1         1     0"),
        "{text}"
    );
    assert!(text.contains("\ntools        SHOULD      0"), "{text}");
    assert!(!text.contains("tools        MUST"), "{text}");
}

#[test]
fn a_known_unsafe_failure_is_still_counted_as_unsafe() {
    let f = Fixture::new();
    let r = f.report(&["r.unsafe", "r.different", "run.a", "run.b", "t.should"]);
    let c = r.conformance();
    assert_eq!((c.unsafe_total(), c.unsafe_known()), (1, 1));
    let read = &c.areas["read"];
    assert_eq!(read.levels[0].unsafe_failures, 0);
    assert_eq!(read.levels[0].known_failures, 2);
    assert_eq!(
        read.statement("read"),
        "read: 1 permissive (MUST), 2 known failures (1 of them unsafe); MUST 1/4 passed"
    );
    // Listed or not, an area whose tool is missing reads as not implemented.
    assert!(c.areas["run"]
        .statement("run")
        .starts_with("run: not implemented"));
    let text = summary_text(&r);
    assert!(
        text.contains("result: UNSAFE. 1 unsafe (1 of them listed as known); 1 permissive; 4 safe but different (4 of them listed as known);"),
        "{text}"
    );
    let junit = junit(&r).unwrap();
    assert!(
        junit.contains("UNSAFE (outside-content): known failure: FAIL r.unsafe\n  UNSAFE:"),
        "{junit}"
    );
}

#[test]
fn report_json_carries_kinds_levels_and_the_statement() {
    let f = Fixture::new();
    let r = f.report(&["r.different"]);
    let v = to_json(&r);
    let schema: Value =
        serde_json::from_str(include_str!("../../../reports/report.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let case = |id: &str| {
        v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(case("r.unsafe")["failure_kind"], "unsafe");
    assert_eq!(case("r.unsafe")["exposures"], json!(["outside-content"]));
    assert_eq!(case("r.unsafe")["mismatches"][0]["kind"], "different");
    assert_eq!(case("r.unsafe")["mismatches"][1]["kind"], "permissive");
    assert!(case("r.unsafe")["mismatches"][1].get("exposure").is_none());
    assert_eq!(case("r.unsafe")["mismatches"][2]["kind"], "unsafe");
    assert_eq!(
        case("r.unsafe")["mismatches"][2]["exposure"],
        "outside-content"
    );
    assert_eq!(case("r.permissive")["failure_kind"], "permissive");
    assert!(case("r.permissive").get("exposures").is_none());
    assert_eq!(case("r.different")["failure_kind"], "different");
    assert_eq!(case("r.different")["verdict"], "known-failure");
    assert!(case("r.pass").get("failure_kind").is_none());
    assert_eq!(case("r.pass")["level"], "MUST");
    assert_eq!(case("t.should")["level"], "SHOULD");
    let conf = &v["conformance"];
    assert_eq!(conf["unsafe"], 1);
    assert_eq!(conf["permissive"], 1);
    assert_eq!(conf["different"], 4);
    assert_eq!(conf["areas"]["read"]["MUST"]["permissive"], 1);
    // The schema's exposures are the closed list.
    let words: Vec<&str> = Exposure::ALL.iter().map(|e| e.word()).collect();
    assert_eq!(schema["$defs"]["exposure"]["enum"], json!(words));
    assert_eq!(conf["areas"]["read"]["MUST"]["known_failures"], 1);
    assert_eq!(conf["areas"]["read"]["MUST"]["unsafe"], 1);
    assert_eq!(conf["areas"]["tools"]["SHOULD"]["different"], 1);
    assert_eq!(conf["areas"]["tools"]["MUST"]["different"], 0);
    assert_eq!(
        conf["areas"]["discovery"]["statement"],
        "discovery: conforms (MUST 2/2 passed)"
    );
    // A failure_kind on a case that did not fail does not validate, nor an unsafe mismatch
    // without its exposure, nor an exposure outside the closed list, nor the old kinds.
    let mut bad = v.clone();
    bad["cases"][0]["failure_kind"] = json!("unsafe");
    assert!(!validator.is_valid(&bad));
    let at = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["id"] == "r.unsafe")
        .unwrap();
    let broken = |f: &dyn Fn(&mut Value)| {
        let mut b = v.clone();
        f(&mut b["cases"][at]);
        validator.is_valid(&b)
    };
    assert!(broken(&|_| {}));
    assert!(!broken(&|c| {
        c["mismatches"][2]
            .as_object_mut()
            .unwrap()
            .remove("exposure");
    }));
    assert!(!broken(&|c| c["mismatches"][2]["exposure"] = json!("leak")));
    assert!(!broken(&|c| c["mismatches"][0]["kind"] = json!("interop")));
    assert!(!broken(&|c| c["mismatches"][1]["kind"] = json!("safety")));
    assert!(!broken(&|c| c["exposures"] = json!(["leak"])));
    assert!(!broken(&|c| c["failure_kind"] = json!("safety")));
}

/// The summary's result line says why cases were skipped (issue #18: running as root), not
/// only that a precondition is not met; several reasons each with its count.
#[test]
fn the_result_line_says_why_cases_were_skipped() {
    let root = "needs a runner that is not root, because root ignores file permissions";
    let (a, b, c) = (case("d.a", "d"), case("d.b", "d"), case("d.c", "d"));
    let skipped = |why: &str| outcome(Status::Skipped(why.into()));
    let one = report(vec![(&a, skipped(root)), (&b, skipped(root))], &[]);
    let line = result_line(&one, &one.conformance());
    assert!(line.ends_with(&format!(" (2 skipped: {root})")), "{line}");
    assert!(summary_text(&one).contains(&format!("2 skipped: {root})")));
    let mixed = report(
        vec![
            (&a, skipped(root)),
            (&b, skipped("flaky")),
            (&c, skipped(root)),
        ],
        &[],
    );
    let line = result_line(&mixed, &mixed.conformance());
    assert!(
        line.ends_with(&format!(" (3 skipped: 2 {root}; 1 flaky)")),
        "{line}"
    );
    let unsaid = report(vec![(&a, skipped(""))], &[]);
    let line = result_line(&unsaid, &unsaid.conformance());
    assert!(
        line.ends_with(" (1 skipped: a precondition is not met here)"),
        "{line}"
    );
}

#[test]
fn report_json_reads_back_into_the_run_it_was_written_from() {
    use crate::protocol::fault::RequestId;
    let f = Fixture::new();
    // A listed failure and a listed case that passed (fixed), besides every other result.
    let mut r = f.report(&["r.pass", "r.different"]);
    let fault = Fault {
        unanswered: Some(RequestId {
            kind: "step",
            seq: Some(3),
            index: Some(1),
        }),
        stderr_tail: Some("Traceback\n  boom\n".into()),
        ..Fault::message_only("broke")
    };
    r.results[0].1 = CaseOutcome {
        status: Status::Skipped("needs a runner that is not root".into()),
        duration: Duration::from_millis(12),
    };
    r.results[1].1 = outcome(Status::Error {
        message: "the adapter broke\nsecond line".into(),
        broken: true,
        fault: Some(fault.clone()),
    });
    r.stopped = Some(Stopped {
        reason: "it kept breaking".into(),
        fault: Some(fault),
    });
    r.implementation.language = Some("rust".into());
    r.implementation.unknown_features = vec!["from-the-future".into()];
    let written = to_json(&r);
    let back = json::from_json(&written).expect("reads back");
    assert_eq!(to_json(&back), written);
    assert_eq!(junit(&back).unwrap(), junit(&r).unwrap());
    assert_eq!(summary_text(&back), summary_text(&r));
    // What only the mismatches' `missing_tool` tells survives the trip.
    assert_eq!(
        back.conformance().areas["run"].statement("run"),
        "run: not implemented (skill_run_script missing in all 2 cases run; 1 UNSUPPORTED (needs tool-allowlist))"
    );
    assert_eq!(back.results[0].0.summary.as_deref(), Some("s."));
    assert!(junit(&back)
        .unwrap()
        .contains("unanswered request: `step` seq 3 index 1"));
}

#[test]
fn a_report_listing_a_case_twice_is_refused_naming_it() {
    let f = Fixture::new();
    let mut written = to_json(&f.report(&[]));
    let cases = written["cases"].as_array_mut().unwrap();
    let first = cases[0].clone();
    cases.push(first.clone());
    let e = json::from_json(&written).unwrap_err();
    assert!(
        e.contains(first["id"].as_str().unwrap()) && e.contains("a second time"),
        "{e}"
    );
}

#[test]
fn junit_failures_say_unsafe_or_different() {
    let f = Fixture::new();
    let junit = junit(&f.report(&[])).unwrap();
    assert!(
        junit.contains(
            "message=\"UNSAFE (outside-content): step 1 (call skill_run_script): later, step 2 (`read`): canary `SKILLSPEC_CANARY_X` in the result: expected absent, actual present\""
        ),
        "{junit}"
    );
    assert!(
        junit.contains("message=\"DIFFERENT: step 1 (call skill_run_script): error code:"),
        "{junit}"
    );
}

#[test]
fn junit_says_permissive_too() {
    let f = Fixture::new();
    let junit = junit(&f.report(&[])).unwrap();
    assert!(
        junit.contains(
            "message=\"PERMISSIVE: step 1 (call skill_run_script): call outcome: expected error invalid_path, actual success\""
        ),
        "{junit}"
    );
}

/// The headline follows the worst kind, listed as known or not; only what is not listed
/// makes the run fail.
#[test]
fn the_result_word_follows_the_worst_kind_known_or_not() {
    let f = Fixture::new();
    let word = |r: &RunReport| result_word(r, &r.conformance());
    let every_failure = [
        "r.unsafe",
        "r.different",
        "run.a",
        "run.b",
        "t.should",
        "r.permissive",
    ];
    let mut all_known = f.report(&every_failure);
    all_known.results.retain(|(c, _)| c.id != "pr.left");
    // Nothing left that fails the run, and yet it is no "ok".
    assert!(all_known.cases().all(|r| !r.verdict.is_bad()));
    assert_eq!(word(&all_known), "UNSAFE");
    let text = summary_text(&all_known);
    assert!(
        text.contains("\nresult: UNSAFE. 1 unsafe (1 of them listed as known); 1 permissive (1 of them listed as known);"),
        "{text}"
    );
    assert!(
        text.contains(
            "\nread: 3 known failures (1 of them unsafe, 1 permissive); MUST 1/4 passed\n"
        ),
        "{text}"
    );
    let mut r = all_known.clone();
    r.results.retain(|(c, _)| c.id != "r.unsafe");
    assert_eq!(word(&r), "PERMISSIVE");
    r.results.retain(|(c, _)| c.id != "r.permissive");
    assert_eq!(word(&r), "ok");
    let mut r = f.report(&[]);
    r.results
        .retain(|(c, _)| c.id != "r.unsafe" && c.id != "r.permissive");
    assert_eq!(word(&r), "FAILED");
}

#[test]
fn an_area_not_judged_says_why_in_short() {
    let f = Fixture::new();
    let c = f.report(&[]).conformance();
    let short = |area: &str| c.areas[area].short();
    assert_eq!(
        short("run").as_deref(),
        Some("not implemented: skill_run_script missing")
    );
    assert_eq!(
        short("policy").as_deref(),
        Some("unsupported (needs tool-allowlist)")
    );
    assert_eq!(short("prompt").as_deref(), Some("not run"));
    assert_eq!(short("read"), None);
    assert_eq!(short("discovery"), None);
}

#[test]
fn a_failure_says_its_kind_exposures_and_each_check() {
    let f = Fixture::new();
    let r = f.report(&[]);
    let (case, outcome) = r.results.iter().find(|(c, _)| c.id == "r.unsafe").unwrap();
    let text = describe(case, outcome);
    for want in [
        "FAIL r.unsafe\n  UNSAFE: the run shows a boundary crossed\n  exposure outside-content: content the model must never see reached it\n  s.\n",
        "  [different] error code:\n    expected: x\n    actual:   y\n",
        "  [permissive] call outcome:\n    expected: error invalid_path\n",
        "  [unsafe: outside-content] later, step 2 (`read`): canary `SKILLSPEC_CANARY_X` in the result:\n    expected: absent\n    actual:   present\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    let (case, outcome) = r
        .results
        .iter()
        .find(|(c, _)| c.id == "r.permissive")
        .unwrap();
    let text = describe(case, outcome);
    assert!(
        text.starts_with("FAIL r.permissive\n  PERMISSIVE: accepted what the specification requires refused; no crossing shown\n  s.\n"),
        "{text}"
    );
    assert!(!text.contains("exposure"), "{text}");
}

#[test]
fn a_case_has_the_strongest_level_it_cites() {
    let mut c = case("x.y", "tools");
    assert_eq!(ReportCase::from(&c).level, Level::Must);
    c.clauses = vec!["skills.lifecycle".into()];
    assert_eq!(ReportCase::from(&c).level, Level::Should);
    c.clauses.push("tools.registration".into());
    assert_eq!(ReportCase::from(&c).level, Level::Must);
    assert_eq!(level_of(&["no.such-clause".into()]), Level::Must);
}

#[test]
fn visible_escapes_controls_and_keeps_the_rest() {
    assert_eq!(
        visible("plain\ttext\nnext ünïcode"),
        "plain\ttext\nnext ünïcode"
    );
    assert_eq!(
        visible("a\u{1b}[2J\u{7}\u{0}\r\u{7f}\u{9b}\u{202e}\u{fffe}z"),
        "a\\u{1b}[2J\\u{7}\\u{0}\\u{d}\\u{7f}\\u{9b}\\u{202e}\\u{fffe}z"
    );
}

#[test]
fn one_line_escapes_line_breaks_as_well() {
    assert_eq!(one_line("plain ünïcode"), "plain ünïcode");
    assert_eq!(
        one_line("a\nb\tc\r\n\u{85}\u{2028}d"),
        "a\\u{a}b\\u{9}c\\u{d}\\u{a}\\u{85}\\u{2028}d"
    );
}

#[test]
fn values_from_an_implementation_cannot_forge_summary_or_failure_lines() {
    const FORGED: &str = "\nresult: ok. forged\r\nFAIL forged.case";
    let c = case("read.a", "read");
    let mut o = fail(vec![Mismatch::interop("what", "expected", FORGED)]);
    if let Status::Fail(f) = &mut o.status {
        f.label = format!("label{FORGED}");
    }
    let mut r = report(vec![(&c, o)], &[]);
    r.implementation.name = format!("impl{FORGED}");
    r.implementation.version = format!("1{FORGED}");
    r.stopped = Some(Stopped {
        reason: format!("stopped{FORGED}"),
        fault: None,
    });
    let text = summary_text(&r) + &describe(&r.results[0].0, &r.results[0].1);
    let starting = |p: &str| {
        text.lines()
            .filter(|l| l.trim_start().starts_with(p))
            .count()
    };
    assert_eq!(starting("result:"), 1, "{text}");
    assert_eq!(starting("FAIL"), 1, "{text}");
    assert!(!text.contains('\r'), "{text}");
    assert!(
        text.contains("impl\\u{a}result: ok. forged\\u{d}\\u{a}FAIL"),
        "{text}"
    );
}

#[test]
fn people_see_the_end_of_a_long_tail() {
    let many: String = (0..100).map(|i| format!("line {i}\n")).collect();
    let shown = tail_for_people(&many);
    assert!(
        shown.starts_with("line 80\n") && shown.ends_with("line 99\n"),
        "{shown}"
    );
    let wide = "x".repeat(5000);
    assert_eq!(tail_for_people(&wide).len(), TAIL_BYTES);
    assert_eq!(tail_for_people("short"), "short");
}

/// Two missing tools "are" missing; one "is" (a failure's line said "X and Y is missing").
#[test]
fn missing_tools_agree_with_their_verb() {
    let c = case("run.x", "run");
    let two = fail(vec![
        Mismatch {
            missing_tool: Some("skill_read_reference".into()),
            ..Mismatch::interop("call outcome", "success", "error unknown_tool")
        },
        Mismatch {
            missing_tool: Some("skill_run_script".into()),
            ..Mismatch::interop("call outcome", "success", "error unknown_tool")
        },
    ]);
    let text = describe(&ReportCase::from(&c), &two);
    assert!(
        text.contains("(skill_read_reference and skill_run_script are missing)"),
        "{text}"
    );
    let one = describe(&ReportCase::from(&c), &missing_tool_fail());
    assert!(
        text.contains(" are missing") && one.contains("(skill_run_script is missing)"),
        "{one}"
    );
}

/// Invisible format characters are written as escapes wherever the runner prints outside text
/// (check-tree printed a zero-width space and a byte order mark in a skill id raw).
#[test]
fn invisible_format_characters_are_escaped() {
    assert_eq!(
        one_line("a\u{200b}b\u{feff}c\u{2060}d\u{200d}"),
        "a\\u{200b}b\\u{feff}c\\u{2060}d\\u{200d}"
    );
    // Default-ignorable letters and marks render as nothing too: a Hangul filler, the combining
    // grapheme joiner, a variation selector, a tag character.
    assert_eq!(
        one_line("a\u{3164}b\u{34f}c\u{fe0f}d\u{e0041}"),
        "a\\u{3164}b\\u{34f}c\\u{fe0f}d\\u{e0041}"
    );
    assert_eq!(visible("plain é 日本"), "plain é 日本");
}
