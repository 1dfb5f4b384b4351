//! The comparison's tests: each operation's expectations, and the kind of each mismatch.

use super::shapes::native_spelling;
use super::*;
use crate::protocol::LoadedGuide;
use serde_json::json;

fn call_step(tool: &str) -> WireStep {
    WireStep::Call {
        tool: tool.into(),
        args: json!({}),
    }
}

fn expect_call(yaml: Value) -> OutcomeExpect {
    OutcomeExpect::Call(serde_json::from_value(yaml).unwrap())
}

fn result(v: Value) -> StepOutcome {
    StepOutcome::Call(serde_json::from_value(v).unwrap())
}

/// The kinds of the mismatches of a call to `tool`, and their missing tools.
fn judge_call(tool: &str, expect: Value, actual: Value) -> Vec<(MismatchKind, Option<String>)> {
    check_outcome(
        &expect_call(expect),
        &call_step(tool),
        &result(actual),
        false,
    )
    .into_iter()
    .map(|m| (m.kind, m.missing_tool))
    .collect()
}

const READ: &str = "skill_read_reference";
const RUN: &str = "skill_run_script";
use MismatchKind::{Interop, Permissive};
const REMOVED: MismatchKind = MismatchKind::Unsafe(Exposure::RemovedTool);

#[test]
fn a_refusal_answered_with_success_is_safety() {
    let got = judge_call(
        READ,
        json!({"error": "invalid_path"}),
        json!({"ok": true, "value": {"content": "root:x:0:0"}}),
    );
    assert_eq!(got, [(Permissive, None)]);
    // Also where the refusal is `unknown_tool` (a tool that must not be offered).
    let got = judge_call(
        RUN,
        json!({"error": "unknown_tool"}),
        json!({"ok": true, "value": {"exit_code": 0}}),
    );
    assert_eq!(got, [(REMOVED, None)]);
}

/// A file over the read limit passed on whole is permissive; one the runtime cut within the
/// limit (deepagents' 80,000 characters) accepted nothing past the bound: different.
#[test]
fn a_read_cut_within_the_limit_is_only_different() {
    let over = "a".repeat(262_145);
    let got = judge_call(
        READ,
        json!({"error": "too_large"}),
        json!({"ok": true, "value": {"content": over}}),
    );
    assert_eq!(got, [(Permissive, None)]);
    let cut = "a".repeat(80_000);
    let got = judge_call(
        READ,
        json!({"error": "too_large"}),
        json!({"ok": true, "value": {"content": cut}}),
    );
    assert_eq!(got, [(Interop, None)]);
}

#[test]
fn another_refusal_or_other_fields_are_interop() {
    let got = judge_call(
        READ,
        json!({"error": "invalid_path"}),
        json!({"ok": false, "error": {"code": "not_found"}}),
    );
    assert_eq!(got, [(Interop, None)]);
    let got = judge_call(
        RUN,
        json!({"error": {"code": "not_approved", "approved_scripts": ["scripts/x.py"]}}),
        json!({"ok": false, "error": {"code": "not_approved", "approved_scripts": []}}),
    );
    assert_eq!(got, [(Interop, None)]);
}

#[test]
fn reaching_execution_where_a_refusal_was_due_is_safety() {
    for ran in ["script_failed", "timeout", "output_limit", "spawn_failed"] {
        let got = judge_call(
            RUN,
            json!({"error": "blocked_tool"}),
            json!({"ok": false, "error": {"code": ran}}),
        );
        assert_eq!(got, [(Permissive, None)], "{ran}");
    }
    // One execution ending for another is interop: the helper was allowed to start.
    let got = judge_call(
        RUN,
        json!({"error": "timeout"}),
        json!({"ok": false, "error": {"code": "script_failed"}}),
    );
    assert_eq!(got, [(Interop, None)]);
    // And a refusal where an execution ending was expected is too strict, not unsafe.
    let got = judge_call(
        RUN,
        json!({"error": "script_failed"}),
        json!({"ok": false, "error": {"code": "not_approved"}}),
    );
    assert_eq!(got, [(Interop, None)]);
}

#[test]
fn refusing_what_is_allowed_is_interop() {
    let got = judge_call(
        RUN,
        json!({"ok": {"exit_code": 0}}),
        json!({"ok": false, "error": {"code": "not_approved"}}),
    );
    assert_eq!(got, [(Interop, None)]);
}

#[test]
fn unknown_tool_for_a_spec_tool_names_the_missing_tool() {
    let missing = Some(RUN.to_owned());
    let got = judge_call(
        RUN,
        json!({"ok": {"exit_code": 0}}),
        json!({"ok": false, "error": {"code": "unknown_tool"}}),
    );
    assert_eq!(got, [(Interop, missing.clone())]);
    // One mismatch, whatever fields the expected error has.
    let got = judge_call(
        RUN,
        json!({"error": {"code": "not_approved", "hint": {"present": true}}}),
        json!({"ok": false, "error": {"code": "unknown_tool"}}),
    );
    assert_eq!(got, [(Interop, missing)]);
    // A tool the specification does not define is not "missing".
    let got = judge_call(
        "web_search",
        json!({"ok": {"x": 1}}),
        json!({"ok": false, "error": {"code": "unknown_tool"}}),
    );
    assert_eq!(got, [(Interop, None)]);
}

#[test]
fn marked_fields_of_a_result_are_safety() {
    let leak = json!({"ok": true, "value": {"exit_code": 0, "stdout": "['AWS_SECRET']\n"}});
    let plain = json!({"ok": {"exit_code": 0, "stdout": "[]\n"}});
    assert_eq!(
        judge_call(RUN, plain.clone(), leak.clone()),
        [(Interop, None)]
    );
    let mut marked = plain;
    marked["safety"] = json!({"stdout": "secret"});
    assert_eq!(
        judge_call(RUN, marked.clone(), leak),
        [(MismatchKind::Unsafe(Exposure::Secret), None)]
    );
    // Only the marked field: a wrong exit code stays interop.
    let other = json!({"ok": true, "value": {"exit_code": 3, "stdout": "[]\n"}});
    assert_eq!(judge_call(RUN, marked.clone(), other), [(Interop, None)]);
    // A refusal of a marked call is still only too strict.
    let refused = json!({"ok": false, "error": {"code": "not_approved"}});
    assert_eq!(judge_call(RUN, marked, refused), [(Interop, None)]);
    // Fields of an expected error can be marked too.
    let got = judge_call(
        RUN,
        json!({"error": {"code": "script_failed", "stderr": {"not_contains": "secret"}}, "safety": {"stderr": "secret"}}),
        json!({"ok": false, "error": {"code": "script_failed", "stderr": "a secret"}}),
    );
    assert_eq!(got, [(MismatchKind::Unsafe(Exposure::Secret), None)]);
}

fn guide(id: &str) -> LoadedGuide {
    LoadedGuide {
        id: id.into(),
        format: None,
        name: None,
        description: None,
        body: None,
        trust: None,
        location: None,
    }
}

fn judge_discover(want: &[&str], got: &[&str]) -> Vec<MismatchKind> {
    let e = OutcomeExpect::Discover(DiscoverExpect {
        loaded: Some(want.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    });
    let a = StepOutcome::Discover(DiscoverResult {
        loaded: got.iter().map(|id| guide(id)).collect(),
        skipped: None,
    });
    check_outcome(&e, &WireStep::Discover, &a, false)
        .into_iter()
        .map(|m| m.kind)
        .collect()
}

#[test]
fn an_extra_loaded_guide_is_safety_a_missing_one_or_the_order_interop() {
    assert_eq!(judge_discover(&["a"], &["a", "linked"]), [Permissive]);
    assert_eq!(judge_discover(&["a", "b"], &["a"]), [Interop]);
    assert_eq!(judge_discover(&["a", "b"], &["b", "a"]), [Interop]);
    assert_eq!(
        judge_discover(&["a", "b"], &["linked", "a"]),
        [Permissive, Interop]
    );
    assert!(judge_discover(&["a", "b"], &["a", "b"]).is_empty());
}

fn judge_tools(e: ToolsExpect, offered: &[&str]) -> Vec<(MismatchKind, Option<String>)> {
    let a = StepOutcome::Tools(ToolsResult {
        offered: offered.iter().map(|s| s.to_string()).collect(),
    });
    check_outcome(&OutcomeExpect::Tools(e), &WireStep::Tools, &a, false)
        .into_iter()
        .map(|m| (m.kind, m.missing_tool))
        .collect()
}

#[test]
fn offering_a_tool_that_must_not_be_is_safety_lacking_one_interop() {
    let only_read = ToolsExpect {
        offered: Some(vec![READ.into()]),
        not_offered: vec![],
    };
    assert_eq!(
        judge_tools(only_read.clone(), &[READ, RUN, "web_search"]),
        [(REMOVED, None)]
    );
    assert_eq!(
        judge_tools(only_read, &["web_search"]),
        [(Interop, Some(READ.to_owned()))]
    );
    let not_run = ToolsExpect {
        offered: None,
        not_offered: vec![RUN.into()],
    };
    assert_eq!(judge_tools(not_run.clone(), &[RUN]), [(REMOVED, None)]);
    assert!(judge_tools(not_run, &[READ]).is_empty());
}

fn judge_select(e: SelectExpect, got: &[(&str, u64)], ceiling: &[&str]) -> Vec<MismatchKind> {
    let got: Vec<(&str, Option<u64>)> = got.iter().map(|(n, s)| (*n, Some(*s))).collect();
    judge_select_reported(e, &got, ceiling)
}

fn judge_select_reported(
    e: SelectExpect,
    got: &[(&str, Option<u64>)],
    ceiling: &[&str],
) -> Vec<MismatchKind> {
    let a = StepOutcome::Select(SelectResult {
        selected: got
            .iter()
            .map(|(n, s)| crate::protocol::SelectedSkill {
                name: n.to_string(),
                score: *s,
                trust: "trusted".into(),
            })
            .collect(),
        tool_ceiling: ceiling.iter().map(|t| t.to_string()).collect(),
    });
    let step = WireStep::Select {
        message: "m".into(),
        tools: vec![],
    };
    check_outcome(&OutcomeExpect::Select(e), &step, &a, false)
        .into_iter()
        .map(|m| m.kind)
        .collect()
}

#[test]
fn a_skill_selected_or_a_tool_kept_that_must_not_be_is_safety() {
    let sel = |names: &[&str]| SelectExpect {
        selected: Some(names.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    };
    assert_eq!(
        judge_select(sel(&["a"]), &[("a", 10), ("gated", 10)], &[]),
        [Permissive]
    );
    assert_eq!(judge_select(sel(&["a", "b"]), &[("a", 10)], &[]), [Interop]);
    assert_eq!(
        judge_select(sel(&["a", "b"]), &[("b", 10), ("a", 10)], &[]),
        [Interop]
    );
    assert!(judge_select(sel(&[]), &[], &[]).is_empty());
    let scores = SelectExpect {
        scores: [("a".to_string(), 30)].into(),
        ..Default::default()
    };
    assert_eq!(judge_select(scores.clone(), &[("a", 25)], &[]), [Interop]);
    assert!(judge_select(scores.clone(), &[("a", 30)], &[]).is_empty());
    // A runtime that reports no score never passes a `scores:` expectation.
    assert_eq!(
        judge_select_reported(scores.clone(), &[("a", None)], &[]),
        [Interop]
    );
    assert_eq!(judge_select(scores, &[], &[]), [Interop]);
    let ceiling = SelectExpect {
        tool_ceiling: Some(vec!["memory_read".into()]),
        ..Default::default()
    };
    assert_eq!(
        judge_select(ceiling.clone(), &[], &["memory_read", "shell"]),
        [REMOVED]
    );
    assert_eq!(judge_select(ceiling.clone(), &[], &[]), [Interop]);
    assert!(judge_select(ceiling, &[], &["memory_read"]).is_empty());
}

#[test]
fn prompt_checks_are_interop_unless_marked() {
    let a = StepOutcome::Prompt(PromptResult {
        text: "## Operator rules".into(),
        baseline: String::new(),
    });
    let judge = |e: PromptExpect| -> Vec<MismatchKind> {
        check_outcome(&OutcomeExpect::Prompt(e), &WireStep::Prompt, &a, false)
            .into_iter()
            .map(|m| m.kind)
            .collect()
    };
    let mut e = PromptExpect {
        contains: vec!["`alpha`".into()],
        not_contains: vec!["Operator rules".into()],
        ..Default::default()
    };
    assert_eq!(judge(e.clone()), [Interop, Interop]);
    e.safety = Marks([("not_contains".to_owned(), Exposure::PromptForgery)].into());
    assert_eq!(
        judge(e),
        [Interop, MismatchKind::Unsafe(Exposure::PromptForgery)]
    );
}

#[test]
fn matchers() {
    let m = Matcher::from_value(json!({"contains": "ab", "length": 4})).unwrap();
    assert!(m.check(Some(&json!("xaby"))).is_ok());
    assert!(m.check(Some(&json!("xab"))).is_err());
    assert!(m.check(None).is_err());
    let m = Matcher::from_value(json!({"present": false})).unwrap();
    assert!(m.check(None).is_ok());
    assert!(m.check(Some(&json!(1))).is_err());
    let exact = Matcher::from_value(json!({"skill": "a"})).unwrap();
    assert_eq!(exact, Matcher::Exact(json!({"skill": "a"})));
    let list = Matcher::from_value(json!({"contains": ["a", "b"]})).unwrap();
    assert!(list.check(Some(&json!(["a", "b", "c"]))).is_ok());
    assert!(list.check(Some(&json!(["a", "c"]))).is_err());
    assert!(list.check(Some(&json!("ab"))).is_ok());
}

/// Profile `hitl`: a question missing where the script ran is unsafe; where nothing ran, or
/// where the runtime asked once too often, it is interop.
#[test]
fn asked_questions_are_judged_by_whether_the_script_ran() {
    const RUN_HITL: &str = "run_skill_script";
    let q = json!({"tool": RUN_HITL, "skill": "alpha", "script": "scripts/x.py", "args": []});
    let other = json!({"tool": RUN_HITL, "skill": "alpha", "script": "scripts/y.py", "args": []});
    let expect = |ok: bool| {
        if ok {
            json!({"ok": {"exit_code": 0}, "asked": [{"skill": "alpha", "script": "scripts/x.py", "args": []}]})
        } else {
            json!({"error": "denied", "asked": [{"skill": "alpha", "script": "scripts/x.py"}]})
        }
    };
    let ran = |asked: Value| json!({"ok": true, "value": {"exit_code": 0}, "asked": asked});
    let denied = |asked: Value| json!({"ok": false, "error": {"code": "denied"}, "asked": asked});
    // As expected.
    assert_eq!(judge_call(RUN_HITL, expect(true), ran(json!([q]))), []);
    assert_eq!(judge_call(RUN_HITL, expect(false), denied(json!([q]))), []);
    // Ran without asking, or asked about another script: unsafe (an absent `asked` is none).
    assert_eq!(
        judge_call(RUN_HITL, expect(true), ran(json!([]))),
        [(Permissive, None)]
    );
    assert_eq!(
        judge_call(
            RUN_HITL,
            expect(true),
            json!({"ok": true, "value": {"exit_code": 0}})
        ),
        [(Permissive, None)]
    );
    assert_eq!(
        judge_call(RUN_HITL, expect(true), ran(json!([other]))),
        [(Permissive, None)]
    );
    // Also when the run ended in a timeout (it was started).
    assert_eq!(
        judge_call(
            RUN_HITL,
            json!({"error": "timeout", "asked": [{"skill": "alpha"}]}),
            json!({"ok": false, "error": {"code": "timeout"}, "asked": []})
        ),
        [(Permissive, None)]
    );
    // Refused without asking, or asked twice before running: safe but different.
    assert_eq!(
        judge_call(RUN_HITL, expect(false), denied(json!([]))),
        [(Interop, None)]
    );
    assert_eq!(
        judge_call(RUN_HITL, expect(true), ran(json!([q, q]))),
        [(Interop, None)]
    );
    // Asked about a call that is then refused by its path.
    assert_eq!(
        judge_call(
            RUN_HITL,
            json!({"error": "invalid_path", "asked": []}),
            json!({"ok": false, "error": {"code": "invalid_path"}, "asked": [q]})
        ),
        [(Interop, None)]
    );
}

#[test]
fn root_is_substituted_in_expected_texts() {
    let e = expect_call(json!({
        "ok": {"directory": "{root}/skills/a", "output": {"starts_with": "{root}/", "contains": ["{root}"]}},
        "asked": [{"script": {"equals": "{root}/x"}}]
    }))
    .with_root("/tmp/case");
    let OutcomeExpect::Call(c) = e else {
        panic!("a call expectation")
    };
    let ok = c.ok.unwrap();
    assert!(ok["directory"]
        .check(Some(&json!("/tmp/case/skills/a")))
        .is_ok());
    assert!(ok["directory"]
        .check(Some(&json!("{root}/skills/a")))
        .is_err());
    assert!(ok["output"].check(Some(&json!("/tmp/case/out"))).is_ok());
    assert!(c.asked.unwrap()[0]["script"]
        .check(Some(&json!("/tmp/case/x")))
        .is_ok());
    let p = OutcomeExpect::Prompt(PromptExpect {
        contains: vec!["dir {root}/a".into()],
        ..Default::default()
    })
    .with_root("/r");
    let OutcomeExpect::Prompt(p) = p else {
        panic!("a prompt expectation")
    };
    assert_eq!(p.contains, ["dir /r/a"]);
}

fn judge_native(e: PromptExpect, names: &[(&str, &str)], text: &str) -> Vec<Mismatch> {
    let names: BTreeMap<String, String> = names
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let e = OutcomeExpect::Prompt(e).with_native_names(&names);
    let a = StepOutcome::Prompt(PromptResult {
        text: text.into(),
        baseline: String::new(),
    });
    check_outcome(&e, &WireStep::Prompt, &a, false)
}

const RUN_NATIVE: (&str, &str) = ("skill_run_script", "run_skill_script_native");
const READ_NATIVE: (&str, &str) = ("skill_read_reference", "read_skill_resource");

#[test]
fn not_contains_a_mapped_tool_finds_its_native_name_too() {
    let e = PromptExpect {
        not_contains: vec!["skill_run_script".into(), "`skill_run_script(`".into()],
        ..Default::default()
    };
    let prompt = "Run helpers with run_skill_script_native(skill, script).";
    // Without tool names, the check passes vacuously; with them, it finds the mention.
    assert_eq!(judge_native(e.clone(), &[], prompt), []);
    let got = judge_native(e.clone(), &[RUN_NATIVE], prompt);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].expected.contains("\"run_skill_script_native\""),
        "{}",
        got[0].expected
    );
    // The spec's spelling is still found.
    assert_eq!(
        judge_native(e, &[RUN_NATIVE], "call skill_run_script").len(),
        1
    );
}

#[test]
fn contains_a_mapped_tool_is_satisfied_by_either_spelling() {
    let e = PromptExpect {
        contains: vec!["skill_read_reference(skill, path)".into()],
        ..Default::default()
    };
    let native = "Read files with read_skill_resource(skill, path).";
    assert_eq!(judge_native(e.clone(), &[READ_NATIVE], native), []);
    assert_eq!(
        judge_native(
            e.clone(),
            &[READ_NATIVE],
            "skill_read_reference(skill, path)"
        ),
        []
    );
    assert_eq!(judge_native(e.clone(), &[], native).len(), 1);
    // Another tool's mapping does not help.
    assert_eq!(judge_native(e, &[RUN_NATIVE], native).len(), 1);
}

#[test]
fn occurrences_count_both_spellings() {
    // A guide body names the removed tool once; the runtime must add no mention of its own.
    let e = PromptExpect {
        occurrences: [("skill_run_script".to_owned(), 1)].into(),
        ..Default::default()
    };
    let body = "Never call skill_run_script here.";
    assert_eq!(judge_native(e.clone(), &[RUN_NATIVE], body), []);
    let mentioned = format!("{body}\nTools: run_skill_script_native");
    assert_eq!(judge_native(e.clone(), &[], &mentioned), []);
    assert_eq!(judge_native(e, &[RUN_NATIVE], &mentioned).len(), 1);
}

#[test]
fn only_whole_words_are_renamed_and_the_longest_name_wins() {
    let names: BTreeMap<String, String> = [
        ("read_skill".to_owned(), "get_skill".to_owned()),
        ("read_skill_file".to_owned(), "get_file".to_owned()),
    ]
    .into();
    assert_eq!(
        native_spelling("read_skill_file and read_skill(x)", &names).as_deref(),
        Some("get_file and get_skill(x)")
    );
    assert_eq!(native_spelling("my_read_skill", &names), None);
    assert_eq!(native_spelling("no tool here", &names), None);
    // The native spelling contains the spec's: each mention counted once.
    let e = PromptExpect {
        occurrences: [("skill_run_script".to_owned(), 2)].into(),
        ..Default::default()
    };
    let longer = [("skill_run_script", "skill_run_script_v2")];
    assert_eq!(
        judge_native(e, &longer, "skill_run_script_v2 and skill_run_script"),
        []
    );
}

/// A text stands outside a code span when an even number of backticks precede it on its line:
/// wrapped by the runtime and broken out of (`` `x` TOKEN `y` ``), not when merely shown.
#[test]
fn a_text_outside_a_code_span_is_found_by_backtick_parity() {
    use super::compare::outside_code_span;
    let t = "TOKEN";
    assert!(outside_code_span("- `x` TOKEN `y`: second", t).is_some());
    assert!(outside_code_span("see `/s/x` TOKEN `y/SKILL.md`", t).is_some());
    assert!(outside_code_span("TOKEN at the start", t).is_some());
    assert_eq!(outside_code_span("- x` TOKEN `y: second", t), None);
    assert_eq!(outside_code_span("<name>x` TOKEN `y</name>", t), None);
    assert_eq!(outside_code_span("use `tool`: x` TOKEN `y", t), None);
    assert_eq!(outside_code_span("a\nb", t), None);
}
