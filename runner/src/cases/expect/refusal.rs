//! Judging a step the runtime refused (PROTOCOL.md, "Refusals"): a `step_result` with
//! `refused` in place of `result`, or every step of a case whose `case_started` said the runtime
//! refused to start. A refusal is a safe outcome: it is never unsafe and never ERROR.
//!
//! The refused step counts as the safe answer of its operation (nothing loaded, no tool offered,
//! an empty prompt, nothing selected, a call refused with the code [`REFUSED`], a skill judged
//! invalid) and is compared
//! with the step's expectation like any result; every mismatch that leaves is "different", and
//! its text carries the runtime's own message. So a case that expects nothing loaded passes
//! against a refused scan, and a case expecting `error: invalid_path` fails as different (the
//! runtime refused, but not with the specified code), never as permissive.

use crate::cases::expect::{check_outcome, show, Mismatch, MismatchKind, OutcomeExpect};
use crate::protocol::{
    CallResult, DiscoverResult, OkFalse, PromptResult, SelectResult, StepOutcome, ToolsResult,
    ValidateResult, WireStep, REFUSED,
};

/// The outcome a refused `step` counts as: the safe answer of its operation.
pub fn counted_as(step: &WireStep, message: &str) -> StepOutcome {
    match step {
        WireStep::Discover => StepOutcome::Discover(DiscoverResult {
            loaded: Vec::new(),
            skipped: Some(Vec::new()),
        }),
        WireStep::Tools => StepOutcome::Tools(ToolsResult {
            offered: Vec::new(),
        }),
        WireStep::Prompt => StepOutcome::Prompt(PromptResult {
            text: String::new(),
            baseline: String::new(),
        }),
        WireStep::Call { .. } => {
            let mut error = serde_json::Map::new();
            error.insert("code".into(), REFUSED.into());
            error.insert("message".into(), message.into());
            StepOutcome::Call(CallResult::Err {
                ok: OkFalse(()),
                error,
                asked: None,
            })
        }
        WireStep::NewTurn => StepOutcome::NewTurn,
        WireStep::Select { .. } => StepOutcome::Select(SelectResult {
            selected: Vec::new(),
            tool_ceiling: Vec::new(),
        }),
        WireStep::Validate { .. } => StepOutcome::Validate(ValidateResult {
            valid: false,
            problems: vec![message.to_owned()],
            properties: None,
        }),
    }
}

/// The mismatches of a step the runtime refused with `message`, against `expect`: those of
/// [`counted_as`], each judged different (a refusal crosses no boundary and is not the absence
/// of a tool), with the runtime's message in its text.
pub fn judge(
    expect: &OutcomeExpect,
    step: &WireStep,
    message: &str,
    skip_report: bool,
) -> Vec<Mismatch> {
    let stand_in = counted_as(step, message);
    // spec: PROTOCOL.md "Refusals": a refused step is a safe refusal, never unsafe.
    check_outcome(expect, step, &stand_in, skip_report)
        .into_iter()
        .map(|m| Mismatch {
            actual: format!(
                "{} (the runtime refused the `{}` step: {})",
                m.actual,
                step.op_name(),
                show(&serde_json::Value::from(message))
            ),
            kind: MismatchKind::Interop,
            missing_tool: None,
            ..m
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::expect::{
        CallExpect, DiscoverExpect, ErrorExpect, PromptExpect, ToolsExpect,
    };

    pub(super) fn call_step() -> WireStep {
        WireStep::Call {
            tool: "skill_read_reference".into(),
            args: serde_json::json!({"skill": "alpha", "path": "../x.md"}),
        }
    }

    pub(super) fn judged(e: OutcomeExpect, step: &WireStep) -> Vec<Mismatch> {
        check_outcome(
            &e,
            step,
            &StepOutcome::Refused("EMFILE: the scanner gave up".into()),
            true,
        )
    }

    #[test]
    pub(super) fn a_refused_call_is_a_different_refusal_with_the_runtimes_message() {
        let e = OutcomeExpect::Call(CallExpect {
            error: Some(ErrorExpect {
                code: "invalid_path".into(),
                fields: Default::default(),
            }),
            ..Default::default()
        });
        let got = judged(e, &call_step());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].kind, MismatchKind::Interop);
        assert_eq!(got[0].expected, "invalid_path");
        assert!(got[0].actual.starts_with("refused ("), "{}", got[0].actual);
        assert!(
            got[0].actual.contains("\"EMFILE: the scanner gave up\""),
            "{}",
            got[0].actual
        );
    }

    #[test]
    pub(super) fn a_refused_call_where_success_was_due_is_different_not_a_missing_tool() {
        let e = OutcomeExpect::Call(CallExpect {
            ok: Some(Default::default()),
            ..Default::default()
        });
        let got = judged(e, &call_step());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].kind, MismatchKind::Interop);
        assert_eq!(got[0].missing_tool, None);
    }

    #[test]
    pub(super) fn a_refused_scan_loaded_nothing_and_offered_no_tool() {
        // Nothing expected: the refusal passes.
        let nothing = OutcomeExpect::Discover(DiscoverExpect {
            loaded: Some(Vec::new()),
            ..Default::default()
        });
        assert_eq!(judged(nothing, &WireStep::Discover), []);
        // Something expected: different, never unsafe.
        let alpha = OutcomeExpect::Discover(DiscoverExpect {
            loaded: Some(vec!["alpha".into()]),
            ..Default::default()
        });
        let got = judged(alpha, &WireStep::Discover);
        assert!(!got.is_empty());
        assert!(got.iter().all(|m| m.kind == MismatchKind::Interop));
        // A tool the case wants offered: different, and not explained as a missing tool.
        let tools = OutcomeExpect::Tools(ToolsExpect {
            offered: Some(vec!["skill_read_reference".into()]),
            not_offered: vec!["skill_run_script".into()],
        });
        let got = judged(tools, &WireStep::Tools);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            (got[0].kind, got[0].missing_tool.as_deref()),
            (MismatchKind::Interop, None)
        );
    }

    #[test]
    pub(super) fn a_refused_prompt_is_never_unsafe_even_where_a_check_is_marked() {
        let e = OutcomeExpect::Prompt(PromptExpect {
            safety: crate::cases::exposure::Marks(
                [(
                    "contains".to_owned(),
                    crate::cases::exposure::Exposure::PromptForgery,
                )]
                .into(),
            ),
            contains: vec!["## Skills".into()],
            same_as_baseline: Some(false),
            ..Default::default()
        });
        let got = judged(e, &WireStep::Prompt);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got.iter().all(|m| m.kind == MismatchKind::Interop));
    }
}
