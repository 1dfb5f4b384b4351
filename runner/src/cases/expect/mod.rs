//! Expectations: what a case says a step must produce, and the comparison that turns an actual
//! outcome into a list of mismatches. Only codes and structured fields are compared, never an
//! implementation's free-text `message`.
//!
//! Each mismatch is also judged here (SPEC.md, "How verdicts are judged"):
//! [`MismatchKind::Unsafe`] with its [`Exposure`] when the comparison itself shows a crossing (a
//! removed tool offered or answering, a marked prompt check: a forged line);
//! [`MismatchKind::Permissive`] when the runtime accepted what it must refuse (a refusal answered
//! with success, a call that reached execution, an extra guide loaded or skill selected);
//! [`MismatchKind::Interop`] otherwise. Canaries, markers, processes and timeouts, the other
//! observables, are judged where the case runs ([`crate::execution`]).

use std::collections::BTreeMap;

use serde_json::Value;

pub use crate::cases::exposure::{Exposure, Marks};

mod call;
mod compare;
mod kinds;
mod matcher;
pub mod refusal;
mod shapes;
#[cfg(test)]
mod tests;

pub use crate::protocol::show;
pub use compare::check_outcome;
pub use kinds::{Mismatch, MismatchKind, EXECUTION_CODES, UNKNOWN_TOOL};
pub use matcher::{MatchOps, Matcher, OneOrMany};
pub use shapes::{
    CallExpect, DiscoverExpect, ErrorExpect, FilesExpect, GuideExpect, PromptExpect, SelectExpect,
    ToolsExpect, ValidateExpect,
};

use crate::protocol::{
    CallResult, DiscoverResult, PromptResult, SelectResult, StepOutcome, ToolsResult,
    ValidateResult, WireStep,
};
use call::check_call;
use kinds::mismatch;

/// Everything one step expects.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expect {
    pub outcome: Option<OutcomeExpect>,
    pub files: Option<FilesExpect>,
}

impl Expect {
    pub fn is_empty(&self) -> bool {
        self.outcome.is_none() && self.files.as_ref().is_none_or(FilesExpect::is_empty)
    }
}

impl Expect {
    /// Every text this expectation requires a passing runtime to send or show (rendered as
    /// JSON, `not_contains` left out): a scanned canary may not occur in it, or a runtime that
    /// crossed nothing would show the canary ([`crate::cases::exposure::check_observables`]).
    pub fn positive_text(&self) -> String {
        use serde_json::json;
        let matcher = |m: &Matcher| match m {
            Matcher::Exact(v) => v.to_string(),
            Matcher::Ops(ops) => {
                let mut ops = (**ops).clone();
                ops.not_contains = None;
                serde_json::to_string(&ops).unwrap_or_default()
            }
        };
        let fields = |m: &BTreeMap<String, Matcher>| -> String {
            m.values().map(matcher).collect::<Vec<_>>().join(" ")
        };
        let mut out = Vec::new();
        match &self.outcome {
            Some(OutcomeExpect::Discover(d)) => {
                out.push(json!(d.loaded).to_string());
                for g in d.guides.values() {
                    let all = [
                        &g.format,
                        &g.name,
                        &g.description,
                        &g.body,
                        &g.trust,
                        &g.location,
                    ];
                    out.extend(all.into_iter().flatten().map(matcher));
                }
                out.push(json!(d.skipped).to_string());
            }
            Some(OutcomeExpect::Tools(t)) => out.push(json!(t.offered).to_string()),
            Some(OutcomeExpect::Prompt(p)) => {
                out.push(json!(p.contains).to_string());
                out.extend(p.occurrences.keys().cloned());
            }
            Some(OutcomeExpect::Call(c)) => {
                out.extend(c.ok.iter().map(fields));
                if let Some(e) = &c.error {
                    out.push(e.code.clone());
                    out.push(fields(&e.fields));
                }
                out.extend(c.asked.iter().flatten().map(fields));
            }
            Some(OutcomeExpect::Select(sel)) => {
                out.push(json!(sel.selected).to_string());
                out.push(json!(sel.tool_ceiling).to_string());
            }
            Some(OutcomeExpect::Validate(v)) => out.push(fields(&v.properties)),
            None => {}
        }
        out.join("\n")
    }
}

/// The expectation on a step's result, by operation.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeExpect {
    Discover(DiscoverExpect),
    Tools(ToolsExpect),
    Prompt(PromptExpect),
    Call(CallExpect),
    Select(SelectExpect),
    Validate(ValidateExpect),
}

impl OutcomeExpect {
    /// This expectation with `{root}` in its texts replaced by the case root (the absolute
    /// directories profile `hitl` reports, the `location` of dialect `agentskills`). Only call,
    /// prompt and discover expectations hold such texts.
    pub fn with_root(&self, root: &str) -> OutcomeExpect {
        let text = |t: &String| t.replace("{root}", root);
        let fields = |m: &BTreeMap<String, Matcher>| -> BTreeMap<String, Matcher> {
            m.iter()
                .map(|(k, v)| (k.clone(), v.with_root(root)))
                .collect()
        };
        match self {
            OutcomeExpect::Call(c) => OutcomeExpect::Call(CallExpect {
                safety: c.safety.clone(),
                ok: c.ok.as_ref().map(fields),
                error: c.error.as_ref().map(|e| ErrorExpect {
                    code: e.code.clone(),
                    fields: fields(&e.fields),
                }),
                asked: c.asked.as_ref().map(|qs| qs.iter().map(fields).collect()),
            }),
            OutcomeExpect::Prompt(p) => OutcomeExpect::Prompt(PromptExpect {
                safety: p.safety.clone(),
                contains: p.contains.iter().map(text).collect(),
                not_contains: p.not_contains.iter().map(text).collect(),
                not_outside_code_span: p.not_outside_code_span.iter().map(text).collect(),
                occurrences: p.occurrences.iter().map(|(k, n)| (text(k), *n)).collect(),
                same_as_baseline: p.same_as_baseline,
                native: p.native.clone(),
            }),
            OutcomeExpect::Discover(d) => OutcomeExpect::Discover(DiscoverExpect {
                guides: d
                    .guides
                    .iter()
                    .map(|(id, g)| {
                        let mut g = g.clone();
                        g.location = g.location.as_ref().map(|m| m.with_root(root));
                        (id.clone(), g)
                    })
                    .collect(),
                ..d.clone()
            }),
            other => other.clone(),
        }
    }
}

impl OutcomeExpect {
    /// This expectation for a runtime whose tools have native names (see
    /// [`PromptExpect::with_native_names`]); only prompt expectations change.
    pub fn with_native_names(self, names: &BTreeMap<String, String>) -> OutcomeExpect {
        match self {
            OutcomeExpect::Prompt(p) if !names.is_empty() => {
                OutcomeExpect::Prompt(p.with_native_names(names))
            }
            other => other,
        }
    }
}

fn value_with_root(v: &Value, root: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("{root}", root)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| value_with_root(i, root)).collect())
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), value_with_root(v, root)))
                .collect(),
        ),
        other => other.clone(),
    }
}
