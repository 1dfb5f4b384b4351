//! Comparing an outcome with its expectation ([`check_outcome`]) for every operation but a call
//! (`call`): discover, tools, select and prompt, each mismatch judged.

use serde_json::Value;

use super::*;

/// Compares an outcome with the expectation of its step (`step`, the operation that produced
/// it), and judges each mismatch. `skip_report` says whether the implementation declares the
/// `skip-report` feature: without it, `skipped` is not checked.
pub fn check_outcome(
    expect: &OutcomeExpect,
    step: &WireStep,
    actual: &StepOutcome,
    skip_report: bool,
) -> Vec<Mismatch> {
    match (expect, actual) {
        (OutcomeExpect::Discover(e), StepOutcome::Discover(a)) => check_discover(e, a, skip_report),
        (OutcomeExpect::Tools(e), StepOutcome::Tools(a)) => check_tools(e, a),
        (OutcomeExpect::Prompt(e), StepOutcome::Prompt(a)) => check_prompt(e, a),
        (OutcomeExpect::Call(e), StepOutcome::Call(a)) => {
            let tool = match step {
                WireStep::Call { tool, .. } => Some(tool.as_str()),
                _ => None,
            };
            check_call(e, tool, a)
        }
        (OutcomeExpect::Select(e), StepOutcome::Select(a)) => check_select(e, a),
        (OutcomeExpect::Validate(e), StepOutcome::Validate(a)) => check_validate(e, a),
        (e, StepOutcome::Refused(message)) => {
            crate::cases::expect::refusal::judge(e, step, message, skip_report)
        }
        (_, other) => vec![mismatch(
            "result kind",
            "the result of this step's operation",
            format!("{other:?}"),
        )],
    }
}

/// A validator's verdict and the properties it read (dialect `agentskills`). Every mismatch is
/// different: the dialect states no security purpose for its rules.
pub(super) fn check_validate(e: &ValidateExpect, a: &ValidateResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    if let Some(want) = e.valid {
        if a.valid != want {
            let why = if a.problems.is_empty() {
                String::new()
            } else {
                format!(" ({})", show(&serde_json::json!(a.problems)))
            };
            out.push(mismatch(
                "verdict",
                if want { "valid" } else { "invalid" },
                format!("{}{why}", if a.valid { "valid" } else { "invalid" }),
            ));
        }
    }
    for (field, m) in &e.properties {
        let v = a.properties.as_ref().and_then(|p| p.get(field));
        if let Err(want) = m.check(v) {
            out.push(mismatch(
                format!("property `{field}`"),
                want,
                v.map_or("(missing)".into(), show),
            ));
        }
    }
    out
}

/// How [`check_allowed_list`] words its two mismatches.
pub(super) struct AllowedList {
    /// The safety mismatch: items present that the case does not list.
    extra: &'static str,
    /// What the implementation did with the items ("loaded", "selected").
    verb: &'static str,
    /// The interop mismatch: the listed items, in order.
    order: &'static str,
}

/// A list the case gives exactly (loaded guides, selected skills): an item the case does not list
/// is safety (the runtime let something through it must not); what is left must be the expected
/// list exactly, and a missing item or another order is interop.
pub(super) fn check_allowed_list(
    words: AllowedList,
    want: &[String],
    got: &[&str],
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let extra: Vec<&str> = got.iter().copied().filter(|g| !want.contains(g)).collect();
    if !extra.is_empty() {
        out.push(Mismatch::permissive(
            words.extra,
            format!("only {}", show(&serde_json::json!(want))),
            format!(
                "also {} ({}: {})",
                show(&serde_json::json!(extra)),
                words.verb,
                show(&serde_json::json!(got))
            ),
        ));
    }
    let kept: Vec<&str> = got.iter().copied().filter(|g| want.contains(g)).collect();
    if kept != want {
        out.push(mismatch(
            words.order,
            show(&serde_json::json!(want)),
            show(&serde_json::json!(got)),
        ));
    }
    out
}

pub(super) fn check_discover(
    e: &DiscoverExpect,
    a: &DiscoverResult,
    skip_report: bool,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let ids: Vec<&str> = a.loaded.iter().map(|g| g.id.as_str()).collect();
    if let Some(want) = &e.loaded {
        out.extend(check_allowed_list(
            AllowedList {
                extra: "guides loaded that the case does not allow",
                verb: "loaded",
                order: "loaded ids, in order",
            },
            want,
            &ids,
        ));
    }
    for (id, g) in &e.guides {
        let Some(actual) = a.loaded.iter().find(|l| &l.id == id) else {
            out.push(mismatch(format!("guide `{id}`"), "loaded", "not loaded"));
            continue;
        };
        let fields = [
            ("format", &g.format, &actual.format),
            ("name", &g.name, &actual.name),
            ("description", &g.description, &actual.description),
            ("body", &g.body, &actual.body),
            ("trust", &g.trust, &actual.trust),
            ("location", &g.location, &actual.location),
        ];
        for (field, matcher, value) in fields {
            if let Some(m) = matcher {
                let v = value.clone().map(Value::from);
                if let Err(want) = m.check(v.as_ref()) {
                    out.push(mismatch(
                        format!("guide `{id}` {field}"),
                        want,
                        v.map_or("(missing)".into(), |v| show(&v)),
                    ));
                }
            }
        }
    }
    if let Some(want) = e.skipped.as_ref().filter(|_| skip_report) {
        match &a.skipped {
            None => out.push(mismatch(
                "skipped paths",
                "a skip report",
                "none (the implementation reports no `skipped`)",
            )),
            Some(skipped) => {
                for (path, reason) in want {
                    let got: Vec<&str> = skipped
                        .iter()
                        .filter(|s| &s.path == path)
                        .map(|s| s.reason.as_str())
                        .collect();
                    if !got.contains(&reason.as_str()) {
                        let actual = if got.is_empty() {
                            "not reported".to_owned()
                        } else {
                            got.join(", ")
                        };
                        out.push(mismatch(
                            format!("skip reason of `{path}`"),
                            reason.clone(),
                            actual,
                        ));
                    }
                }
            }
        }
    }
    out
}

/// A `select` step (SPEC.md, "How verdicts are judged"): a skill selected that the case does not
/// list, or a tool left in the ceiling that it does not list, is safety; a missing one, another
/// order or another score is interop.
pub(super) fn check_select(e: &SelectExpect, a: &SelectResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let names: Vec<&str> = a.selected.iter().map(|s| s.name.as_str()).collect();
    if let Some(want) = &e.selected {
        out.extend(check_allowed_list(
            AllowedList {
                extra: "skills selected that the case does not allow",
                verb: "selected",
                order: "selected skills, in order",
            },
            want,
            &names,
        ));
    }
    for (name, want) in &e.scores {
        match a.selected.iter().find(|s| &s.name == name) {
            None => out.push(mismatch(
                format!("score of `{name}`"),
                want.to_string(),
                format!(
                    "not selected (selected: {})",
                    show(&serde_json::json!(names))
                ),
            )),
            Some(s) if s.score != Some(*want) => out.push(mismatch(
                format!("score of `{name}`"),
                want.to_string(),
                s.score.map_or_else(
                    || "not reported (the runtime gave no score)".to_string(),
                    |n| n.to_string(),
                ),
            )),
            Some(_) => {}
        }
    }
    if let Some(want) = &e.tool_ceiling {
        let all = show(&serde_json::json!(a.tool_ceiling));
        for t in &a.tool_ceiling {
            if !want.contains(t) {
                out.push(Mismatch::exposed(
                    Exposure::RemovedTool,
                    format!("tool `{t}` in the ceiling"),
                    format!(
                        "removed (the ceiling is {})",
                        show(&serde_json::json!(want))
                    ),
                    format!("kept (ceiling: {all})"),
                ));
            }
        }
        for t in want {
            if !a.tool_ceiling.contains(t) {
                out.push(mismatch(
                    format!("tool `{t}` in the ceiling"),
                    "kept",
                    format!("removed (ceiling: {all})"),
                ));
            }
        }
    }
    out
}

pub(super) fn check_tools(e: &ToolsExpect, a: &ToolsResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut actual = a.offered.clone();
    actual.sort();
    if let Some(want) = &e.offered {
        let spec_offered: Vec<&str> = actual
            .iter()
            .map(String::as_str)
            .filter(|t| crate::cases::clauses::SPEC_TOOLS.contains(t))
            .collect();
        let all = show(&Value::from(actual.clone()));
        for t in &spec_offered {
            if !want.iter().any(|w| w == t) {
                out.push(Mismatch::exposed(
                    Exposure::RemovedTool,
                    format!("tool `{t}`"),
                    format!(
                        "not offered (of the spec's tools, only {})",
                        show(&Value::from(want.clone()))
                    ),
                    format!("offered (all offered: {all})"),
                ));
            }
        }
        for t in want {
            if !spec_offered.contains(&t.as_str()) {
                out.push(
                    mismatch(
                        format!("tool `{t}`"),
                        "offered",
                        format!("not offered (all offered: {all})"),
                    )
                    .for_missing(t),
                );
            }
        }
    }
    for t in &e.not_offered {
        if actual.contains(t) {
            out.push(Mismatch::exposed(
                Exposure::RemovedTool,
                format!("tool `{t}`"),
                "not offered",
                "offered",
            ));
        }
    }
    out
}

pub(super) fn check_prompt(e: &PromptExpect, a: &PromptResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    // The kind of a violated check: different unless the case marks it with its exposure.
    let kind = |check: &str| {
        e.safety
            .get(check)
            .map_or(MismatchKind::Interop, MismatchKind::Unsafe)
    };
    for c in &e.contains {
        if !e.found(&a.text, c) {
            out.push(
                mismatch(
                    "prompt",
                    format!("containing {}", e.described(c)),
                    show(&Value::from(a.text.clone())),
                )
                .judged(kind("contains")),
            );
        }
    }
    for c in &e.not_contains {
        if e.found(&a.text, c) {
            // The prompt around what it must not contain (a spelling by the adapter's tool
            // names found instead shows from its own place).
            let needle = match e.native.get(c) {
                Some(n) if !a.text.contains(c.as_str()) => n.as_str(),
                _ => c.as_str(),
            };
            out.push(
                mismatch(
                    "prompt",
                    format!("not containing {}", e.described(c)),
                    crate::protocol::show_around(&a.text, needle),
                )
                .judged(kind("not_contains")),
            );
        }
    }
    for c in &e.not_outside_code_span {
        if let Some(line) = outside_code_span(&a.text, c) {
            out.push(
                mismatch(
                    "prompt",
                    format!(
                        "{} never outside a code span of the runtime's",
                        e.described(c)
                    ),
                    format!("outside one on the line {}", show(&Value::from(line))),
                )
                .judged(kind("not_outside_code_span")),
            );
        }
    }
    for (text, want) in &e.occurrences {
        let got = e.count(&a.text, text);
        if got != *want {
            out.push(
                mismatch(
                    format!("occurrences of {} in the prompt", e.described(text)),
                    want.to_string(),
                    format!("{got} in {}", show(&Value::from(a.text.clone()))),
                )
                .judged(kind("occurrences")),
            );
        }
    }
    if let Some(same) = e.same_as_baseline {
        if (a.text == a.baseline) != same {
            let expected = if same {
                "byte-identical to the baseline prompt"
            } else {
                "different from the baseline prompt"
            };
            out.push(
                mismatch(
                    "prompt against baseline",
                    expected,
                    format!(
                        "text {} / baseline {}",
                        show(&Value::from(a.text.clone())),
                        show(&Value::from(a.baseline.clone()))
                    ),
                )
                .judged(kind("same_as_baseline")),
            );
        }
    }
    out
}

/// The first line of `prompt` on which `text` stands outside a Markdown code span: an even
/// number of backticks before it on its line (none, or a span the runtime opened and the text's
/// own backtick closed).
pub(super) fn outside_code_span<'p>(prompt: &'p str, text: &str) -> Option<&'p str> {
    if text.is_empty() {
        return None;
    }
    prompt.lines().find(|line| {
        line.match_indices(text)
            .any(|(at, _)| line[..at].matches('`').count() % 2 == 0)
    })
}
