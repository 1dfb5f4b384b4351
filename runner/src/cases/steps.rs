//! A case's steps and tree: each step's operation and expectation ([`parse_step`],
//! [`parse_expect`]), `$repeat` expansion within the case's budget, the `safety:` marks, and the
//! layout rules that keep every path of the tree, the steps and the configuration inside the
//! case root and off its links ([`check_layout`]).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use super::*;
use crate::cases::budget::Budget;
use crate::cases::expect::{
    CallExpect, DiscoverExpect, Expect, FilesExpect, GuideExpect, PromptExpect, SelectExpect,
    ToolsExpect, ValidateExpect,
};
use crate::cases::fixture::{parse_raw_path, Layout, Tree};
use crate::protocol::WireStep;

/// `steps`: at least one (`line` is the case's), each charged to the case's `budget`.
pub(super) fn parse_steps(
    cx: &Ctx<'_>,
    line: usize,
    raw: &[Spanned<Value>],
    budget: &mut Budget,
) -> Result<Vec<Step>, CaseError> {
    if raw.is_empty() {
        return Err(cx.err(line, "`steps` must not be empty"));
    }
    let mut steps = Vec::new();
    for s in raw {
        steps.push(parse_step(
            cx,
            s.referenced.line() as usize,
            &s.value,
            budget,
        )?);
    }
    Ok(steps)
}

/// The case checks something (some step expects something) and reaches the implementation.
pub(super) fn check_steps(cx: &Ctx<'_>, line: usize, steps: &[Step]) -> Result<(), CaseError> {
    if steps.iter().all(|s| s.expect.is_empty()) {
        return Err(cx.err(
            line,
            "the case checks nothing: give at least one step an `expect`",
        ));
    }
    if !steps
        .iter()
        .any(|s| matches!(s.action, Action::Implementation(_)))
    {
        return Err(cx.err(line, "the case never reaches the implementation"));
    }
    Ok(())
}

/// Refuses, when the case loads, what the runner could only do by following a link: an entry,
/// `remove` or `files` path below a symlink entry, a hard link whose source lies through one,
/// and hashing (`sha256_of`, `{sha256:PATH}`) anything but a regular file entry of the tree
/// (see [`Layout`]). Errors name the line of the `tree`, `config` or step.
pub(super) fn check_layout(
    cx: &Ctx<'_>,
    (tree_line, tree): (usize, &Tree),
    (config_line, config): (usize, &CaseConfig),
    steps: &[Step],
) -> Result<(), CaseError> {
    let mut layout = Layout::default();
    layout
        .write(tree)
        .map_err(|m| cx.err(tree_line, format!("in `tree`: {m}")))?;
    let mut hashed: Vec<&str> = Vec::new();
    let mut raw_texts: Vec<&str> = config.env.values().map(String::as_str).collect();
    raw_texts.extend(config.python.as_deref());
    match &config.script_allowlist {
        Some(Allowlist::Raw(text)) => raw_texts.push(text),
        Some(Allowlist::Entries(entries)) => {
            hashed.extend(entries.iter().filter_map(|e| match &e.sha256 {
                HashSource::Of(path) => Some(path.as_str()),
                HashSource::Hex(_) => None,
            }))
        }
        None => {}
    }
    for text in raw_texts {
        hashed.extend(
            template::hashed_paths(text)
                .map_err(|m| cx.err(config_line, format!("in `config`: {m}")))?,
        );
    }
    for path in hashed {
        parse_raw_path(path)
            .and_then(|rel| layout.regular_file(&rel))
            .map_err(|m| {
                cx.err(
                    config_line,
                    format!("in `config`: cannot hash `{path}`: {m}"),
                )
            })?;
    }
    for step in steps {
        let at = |m: String| cx.err(step.line, format!("in `{}`: {m}", step.action.label()));
        match &step.action {
            Action::Write(t) => layout.write(t).map_err(at)?,
            Action::Remove(paths) => layout.remove(paths).map_err(at)?,
            Action::Implementation(_) | Action::Wait(_) => {}
        }
        if let Some(files) = &step.expect.files {
            for p in files.exists.iter().chain(&files.absent) {
                parse_raw_path(p)
                    .and_then(|rel| layout.reachable(&rel))
                    .map_err(|m| cx.err(step.line, format!("in `expect.files`: {m}")))?;
            }
        }
    }
    Ok(())
}

pub(super) fn parse_tree(
    cx: &Ctx<'_>,
    line: usize,
    v: &Value,
    budget: &mut Budget,
) -> Result<Tree, CaseError> {
    let obj = as_object(cx, line, "tree", v)?;
    Tree::from_yaml_within(obj, budget).map_err(|m| cx.err(line, format!("in `tree`: {m}")))
}

/// The operation keys a step may have; exactly one per step.
pub(super) const OPS: [&str; 12] = [
    "discover", "tools", "prompt", "call", "read", "run", "new_turn", "write", "remove", "wait",
    "select", "validate",
];

pub(super) fn parse_step(
    cx: &Ctx<'_>,
    line: usize,
    v: &Value,
    budget: &mut Budget,
) -> Result<Step, CaseError> {
    let obj = as_object(cx, line, "step", v)?;
    for key in obj.keys() {
        if key != "expect" && !OPS.contains(&key.as_str()) {
            return Err(cx.err(
                line,
                format!("unknown step key `{key}` (operations: {})", OPS.join(", ")),
            ));
        }
    }
    let ops: Vec<&str> = OPS
        .iter()
        .copied()
        .filter(|k| obj.contains_key(*k))
        .collect();
    let op = match ops.as_slice() {
        [op] => *op,
        [] => {
            return Err(cx.err(
                line,
                format!("a step needs one operation: {}", OPS.join(", ")),
            ))
        }
        _ => {
            return Err(cx.err(
                line,
                format!(
                    "a step has one operation, this one has {}",
                    ops.join(" and ")
                ),
            ))
        }
    };
    let payload = &obj[op];
    let no_payload = |what: &str| -> Result<(), CaseError> {
        match payload {
            Value::Null => Ok(()),
            Value::Object(m) if m.is_empty() => Ok(()),
            _ => Err(cx.err(line, format!("`{what}` takes no value"))),
        }
    };
    let action = match op {
        "discover" => {
            no_payload(op)?;
            Action::Implementation(WireStep::Discover)
        }
        "tools" => {
            no_payload(op)?;
            Action::Implementation(WireStep::Tools)
        }
        "prompt" => {
            no_payload(op)?;
            Action::Implementation(WireStep::Prompt)
        }
        "new_turn" => {
            no_payload(op)?;
            Action::Implementation(WireStep::NewTurn)
        }
        "read" => Action::Implementation(WireStep::Call {
            tool: "skill_read_reference".into(),
            args: expand_repeats(payload.clone(), budget).map_err(|e| cx.err(line, e))?,
        }),
        "run" => Action::Implementation(WireStep::Call {
            tool: "skill_run_script".into(),
            args: expand_repeats(payload.clone(), budget).map_err(|e| cx.err(line, e))?,
        }),
        "call" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct RawCall {
                tool: String,
                args: Value,
            }
            let c: RawCall = typed(cx, line, "call", payload)?;
            Action::Implementation(WireStep::Call {
                tool: c.tool,
                args: expand_repeats(c.args, budget).map_err(|e| cx.err(line, e))?,
            })
        }
        "select" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct RawSelect {
                message: String,
                #[serde(default)]
                tools: Vec<String>,
            }
            let expanded = expand_repeats(payload.clone(), budget).map_err(|e| cx.err(line, e))?;
            let r: RawSelect = typed(cx, line, "select", &expanded)?;
            Action::Implementation(WireStep::Select {
                message: r.message,
                tools: r.tools,
            })
        }
        "validate" => {
            let path: String = typed(cx, line, "validate (a path in the case root)", payload)?;
            parse_raw_path(&path).map_err(|e| cx.err(line, format!("in `validate`: {e}")))?;
            Action::Implementation(WireStep::Validate { path })
        }
        "write" => {
            let m = as_object(cx, line, "write", payload)?;
            Action::Write(
                Tree::from_yaml_within(m, budget)
                    .map_err(|e| cx.err(line, format!("in `write`: {e}")))?,
            )
        }
        "remove" => {
            let paths: Vec<String> = typed(cx, line, "remove", payload)?;
            let mut out = Vec::new();
            for p in paths {
                out.push(
                    parse_raw_path(&p).map_err(|e| cx.err(line, format!("in `remove`: {e}")))?,
                );
            }
            Action::Remove(out)
        }
        "wait" => {
            let ms: u64 = typed(cx, line, "wait (milliseconds)", payload)?;
            if ms > 60_000 {
                return Err(cx.err(line, "`wait` is at most 60000 ms"));
            }
            Action::Wait(ms)
        }
        _ => unreachable!("OPS lists every operation"),
    };
    let expect = match obj.get("expect") {
        None | Some(Value::Null) => Expect::default(),
        Some(e) => parse_expect(cx, line, &action, e)?,
    };
    Ok(Step {
        line,
        action,
        expect,
    })
}

/// Replaces every `{$repeat: TEXT, times: N, then: TEXT}` in tool arguments by TEXT repeated N
/// times followed by the optional `then` text, so long arguments stay readable in a case. Each
/// expansion is charged to the case's `budget` (at most [`budget::MAX_REPEAT_PER_CASE`] in all, and
/// counted in its bytes) before anything is allocated.
pub(super) fn expand_repeats(v: Value, budget: &mut Budget) -> Result<Value, String> {
    match v {
        Value::Object(m) if m.contains_key("$repeat") => {
            let text = m.get("$repeat").and_then(Value::as_str);
            let times = m.get("times").and_then(Value::as_u64);
            let then = m.get("then").map(|t| t.as_str().ok_or(())).transpose();
            let only_known = m
                .keys()
                .all(|k| matches!(k.as_str(), "$repeat" | "times" | "then"));
            match (text, times, then, only_known) {
                (Some(text), Some(times), Ok(then), true) if times <= 1_000_000 => {
                    let then = then.unwrap_or("");
                    // At most 1,000,000 times a text from the case file: no overflow in u64.
                    budget.repeat(text.len() as u64 * times + then.len() as u64)?;
                    Ok(Value::String(text.repeat(times as usize) + then))
                }
                _ => Err(
                    "`$repeat` takes a text, `times` (at most 1000000) and an optional `then` text"
                        .into(),
                ),
            }
        }
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(k, expand_repeats(v, budget)?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => items
            .into_iter()
            .map(|item| expand_repeats(item, budget))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        other => Ok(other),
    }
}

pub(super) fn parse_expect(
    cx: &Ctx<'_>,
    line: usize,
    action: &Action,
    v: &Value,
) -> Result<Expect, CaseError> {
    let obj = as_object(cx, line, "expect", v)?;
    let mut rest = obj.clone();
    let files: Option<FilesExpect> = match rest.remove("files") {
        Some(f) => Some(typed(cx, line, "expect.files", &f)?),
        None => None,
    };
    if rest.contains_key("safety")
        && !matches!(
            action,
            Action::Implementation(WireStep::Call { .. } | WireStep::Prompt)
        )
    {
        return Err(cx.err(
            line,
            "`safety` marks fields of a call's result or checks of a prompt; the mismatches of other steps are judged by fixed rules (SPEC.md, \"How verdicts are judged\")",
        ));
    }
    let rest = Value::Object(rest);
    let has_rest = rest.as_object().is_some_and(|m| !m.is_empty());
    use crate::cases::expect::OutcomeExpect as O;
    let outcome = match action {
        _ if !has_rest => None,
        Action::Implementation(WireStep::Discover) => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                #[serde(default)]
                loaded: Option<Vec<String>>,
                #[serde(default)]
                guides: BTreeMap<String, GuideExpect>,
                #[serde(default)]
                skipped: Option<BTreeMap<String, String>>,
            }
            let r: Raw = typed(cx, line, "expect (of discover)", &rest)?;
            Some(O::Discover(DiscoverExpect {
                loaded: r.loaded,
                guides: r.guides,
                skipped: r.skipped,
            }))
        }
        Action::Implementation(WireStep::Tools) => {
            let t: ToolsExpect = typed(cx, line, "expect (of tools)", &rest)?;
            if let Some(unknown) = t.unknown_tools().first() {
                return Err(cx.err(
                    line,
                    format!(
                        "`{unknown}` is not a tool the specification defines ({}); a host's own tools are never compared",
                        crate::cases::clauses::SPEC_TOOLS.join(", ")
                    ),
                ));
            }
            Some(O::Tools(t))
        }
        Action::Implementation(WireStep::Prompt) => Some(O::Prompt(typed::<PromptExpect>(
            cx,
            line,
            "expect (of prompt)",
            &rest,
        )?)),
        Action::Implementation(WireStep::Select { .. }) => {
            let e: SelectExpect = typed(cx, line, "expect (of select)", &rest)?;
            if e.is_empty() {
                return Err(cx.err(
                    line,
                    "a `select` expects `selected`, `scores` or `tool_ceiling`",
                ));
            }
            Some(O::Select(e))
        }
        Action::Implementation(WireStep::Validate { .. }) => {
            let e: ValidateExpect = typed(cx, line, "expect (of validate)", &rest)?;
            if e.is_empty() {
                return Err(cx.err(line, "a `validate` expects `valid` or `properties`"));
            }
            Some(O::Validate(e))
        }
        Action::Implementation(WireStep::Call { .. }) => {
            let c: CallExpect = typed(cx, line, "expect (of a tool call)", &rest)?;
            if c.ok.is_some() == c.error.is_some() {
                return Err(cx.err(
                    line,
                    "a call's `expect` has exactly one of `ok` and `error`",
                ));
            }
            Some(O::Call(c))
        }
        other => {
            return Err(cx.err(
                line,
                format!("`{}` steps can only expect `files`", other.label()),
            ))
        }
    };
    let expect = Expect { outcome, files };
    check_safety_marks(cx, line, &expect)?;
    if let Some(O::Discover(d)) = &expect.outcome {
        for (id, g) in &d.guides {
            if g.is_empty() {
                return Err(cx.err(line, format!("`guides.{id}` checks nothing")));
            }
        }
    }
    Ok(expect)
}

/// Checks a step's `safety` list: each name once, and each one a field the step's
/// `ok` or `error` checks (not the error `code`, which fixed rules judge) or a check its `prompt`
/// expectation makes.
pub(super) fn check_safety_marks(
    cx: &Ctx<'_>,
    line: usize,
    expect: &Expect,
) -> Result<(), CaseError> {
    use crate::cases::expect::OutcomeExpect as O;
    let (marks, known): (Vec<&String>, Vec<&str>) = match &expect.outcome {
        Some(O::Call(c)) => (
            c.safety.0.keys().collect(),
            c.ok.iter()
                .flat_map(|f| f.keys())
                .chain(c.error.iter().flat_map(|e| e.fields.keys()))
                .map(String::as_str)
                .collect(),
        ),
        Some(O::Prompt(p)) => {
            let mut known = Vec::new();
            if !p.contains.is_empty() {
                known.push("contains");
            }
            if !p.not_contains.is_empty() {
                known.push("not_contains");
            }
            if !p.occurrences.is_empty() {
                known.push("occurrences");
            }
            if !p.not_outside_code_span.is_empty() {
                known.push("not_outside_code_span");
            }
            if p.same_as_baseline.is_some() {
                known.push("same_as_baseline");
            }
            (p.safety.0.keys().collect(), known)
        }
        _ => return Ok(()),
    };
    for mark in marks {
        if !known.contains(&mark.as_str()) {
            let hint = if mark == "code" {
                " (an error code is judged by fixed rules)".to_owned()
            } else if known.is_empty() {
                String::new()
            } else {
                format!(" (this step checks: {})", known.join(", "))
            };
            return Err(cx.err(
                line,
                format!(
                    "`safety` names `{mark}`, which this step's expectation does not check{hint}"
                ),
            ));
        }
    }
    Ok(())
}
