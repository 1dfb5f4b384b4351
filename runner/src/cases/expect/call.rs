//! Comparing a call's result with its expectation: the outcome (`ok` or the error code, a call
//! that reached execution, a refusal answered with success), its fields, and the questions asked
//! to the human (profile `hitl`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::*;

/// The field mismatches of a result `value` against `fields`, judged by the case's `safety`
/// list; `side` is `result` or `error`.
pub(super) fn check_fields(
    side: &str,
    fields: &BTreeMap<String, Matcher>,
    value: &serde_json::Map<String, Value>,
    safety: &Marks,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for (k, m) in fields {
        if let Err(want) = m.check(value.get(k)) {
            let kind = safety
                .get(k)
                .map_or(MismatchKind::Interop, MismatchKind::Unsafe);
            out.push(
                mismatch(
                    format!("{side} field `{k}`"),
                    want,
                    value.get(k).map_or("(missing)".into(), show),
                )
                .judged(kind),
            );
        }
    }
    out
}

/// `tool`, when it is one the specification defines and `error` says the implementation does
/// not have it (while the case expected something else).
pub(super) fn missing_spec_tool<'t>(
    tool: Option<&'t str>,
    error: &serde_json::Map<String, Value>,
    expected_code: Option<&str>,
) -> Option<&'t str> {
    let code = error.get("code").and_then(Value::as_str)?;
    tool.filter(|t| {
        code == UNKNOWN_TOOL
            && expected_code != Some(UNKNOWN_TOOL)
            && crate::cases::clauses::SPEC_TOOLS.contains(t)
    })
}

pub(super) fn check_call(e: &CallExpect, tool: Option<&str>, a: &CallResult) -> Vec<Mismatch> {
    let mut out = check_call_outcome(e, tool, a);
    if let Some(want) = &e.asked {
        out.extend(check_asked(want, a));
    }
    out
}

/// Compares the questions a call asked the human (profile `hitl`) with the expected ones. Where
/// the script ran (a success, or an execution code), an expected question that is missing or
/// differs is a safety mismatch: the script ran without the approval the case requires. Any
/// other difference is interop.
pub(super) fn check_asked(want: &[BTreeMap<String, Matcher>], a: &CallResult) -> Vec<Mismatch> {
    let asked = a.asked();
    let ran = match a {
        CallResult::Ok { .. } => true,
        CallResult::Err { error, .. } => error
            .get("code")
            .and_then(Value::as_str)
            .is_some_and(|c| EXECUTION_CODES.contains(&c)),
    };
    let mut failed = asked.len() != want.len();
    let mut unasked = false;
    for (i, fields) in want.iter().enumerate() {
        let Some(q) = asked.get(i).and_then(Value::as_object) else {
            failed = true;
            unasked = true;
            continue;
        };
        if fields.iter().any(|(k, m)| m.check(q.get(k)).is_err()) {
            failed = true;
            unasked = true;
        }
    }
    if !failed {
        return Vec::new();
    }
    let expected = format!(
        "{} question(s): [{}]",
        want.len(),
        want.iter()
            .map(|f| {
                f.iter()
                    .map(|(k, m)| format!("{k} {}", describe_matcher(m)))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .map(|t| format!("{{{t}}}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let actual = show(&Value::Array(asked.to_vec()));
    vec![if ran && unasked {
        Mismatch::permissive(
            "questions asked to the human (the script ran)",
            expected,
            actual,
        )
    } else {
        mismatch("questions asked to the human", expected, actual)
    }]
}

/// A matcher in words, for a report.
pub(super) fn describe_matcher(m: &Matcher) -> String {
    match m {
        Matcher::Exact(v) => show(v),
        Matcher::Ops(ops) => show(&serde_json::to_value(ops.as_ref()).unwrap_or(Value::Null)),
    }
}

pub(super) fn check_call_outcome(
    e: &CallExpect,
    tool: Option<&str>,
    a: &CallResult,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    match (e, a) {
        (
            CallExpect {
                ok: Some(fields), ..
            },
            CallResult::Ok { value, .. },
        ) => out.extend(check_fields("result", fields, value, &e.safety)),
        (CallExpect { ok: Some(_), .. }, CallResult::Err { error, .. }) => {
            // Refusing what should have been allowed is too strict, never unsafe.
            let m = mismatch(
                "call outcome",
                "success",
                format!("error {}", show(&Value::Object(error.clone()))),
            );
            out.push(match missing_spec_tool(tool, error, None) {
                Some(t) => m.for_missing(t),
                None => m,
            });
        }
        (
            CallExpect {
                error: Some(want), ..
            },
            CallResult::Err { error, .. },
        ) => {
            let code = error.get("code").and_then(Value::as_str).unwrap_or("");
            if let Some(t) = missing_spec_tool(tool, error, Some(&want.code)) {
                out.push(
                    mismatch(
                        "error code",
                        want.code.clone(),
                        format!("{code} (the implementation has no tool `{t}`)"),
                    )
                    .for_missing(t),
                );
                return out;
            }
            if code != want.code {
                // Reaching execution where a check before it had to refuse: the helper was
                // started (or about to be). Any other code is a safe refusal of its own.
                let ran = EXECUTION_CODES.contains(&code)
                    && !EXECUTION_CODES.contains(&want.code.as_str());
                let actual = format!("{code} ({})", show(&Value::Object(error.clone())));
                out.push(if ran {
                    Mismatch::permissive(
                        "error code (the call reached execution)",
                        format!("{} (refused before anything is started)", want.code),
                        actual,
                    )
                } else {
                    mismatch("error code", want.code.clone(), actual)
                });
            }
            out.extend(check_fields("error", &want.fields, error, &e.safety));
        }
        (
            CallExpect {
                error: Some(want), ..
            },
            CallResult::Ok { value, .. },
        ) => {
            // The specification requires a refusal and the runtime did it anyway: permissive,
            // unless the tool had been removed (it answered a call it must not take).
            let (what, expected, actual) = (
                "call outcome",
                format!("error {}", want.code),
                format!("success {}", show(&Value::Object(value.clone()))),
            );
            out.push(if want.code == UNKNOWN_TOOL {
                Mismatch::exposed(Exposure::RemovedTool, what, expected, actual)
            } else if want.code == TOO_LARGE && cut_within_cap(value) {
                // The file was not passed on whole: what the model got is within the bound the
                // refusal protects (a runtime's own cut), so nothing was accepted past it.
                mismatch(
                    "call outcome (content cut within the read limit)",
                    expected,
                    actual,
                )
            } else {
                Mismatch::permissive(what, expected, actual)
            });
        }
        (
            CallExpect {
                ok: None,
                error: None,
                ..
            },
            _,
        ) => {}
    }
    out
}

/// The refusal of a file over the read limit (SPEC.md `read.size`).
pub(super) const TOO_LARGE: &str = "too_large";

/// Whether a read's `content` is at most the read limit (SPEC.md `read.size`: 262,144 bytes).
fn cut_within_cap(value: &serde_json::Map<String, Value>) -> bool {
    value
        .get("content")
        .and_then(Value::as_str)
        .is_some_and(|c| c.len() as u64 <= skillspec_reference::rules::SPEC.read.max_bytes)
}
