//! The rules across a whole case: the features its configuration and steps need
//! ([`check_features`]) and that every safety check has an observable ([`check_observables`]:
//! SPEC.md "How verdicts are judged").

use super::*;
use crate::cases::fixture::Tree;
use crate::protocol::features::Feature;
use crate::protocol::WireStep;

/// Each optional setting, expectation and step the case uses has its feature in `requires`,
/// and a case requiring `hitl` configures its host.
pub(super) fn check_features(
    cx: &Ctx<'_>,
    line: usize,
    requires: &[Feature],
    config: &CaseConfig,
    steps: &[Step],
) -> Result<(), CaseError> {
    if config.tool_allowlist.is_some() && !requires.contains(&Feature::ToolAllowlist) {
        return Err(cx.err(
            line,
            "`config.tool_allowlist` needs `requires: [tool-allowlist]` (a host may have no operator tool allowlist)",
        ));
    }
    if config.platform.is_some() && !requires.contains(&Feature::PlatformEmulation) {
        return Err(cx.err(
            line,
            "`config.platform` needs `requires: [platform-emulation]`",
        ));
    }
    let has = |f: Feature| requires.contains(&f);
    if config.skill_dirs.is_some() && !has(Feature::Selection) && !has(Feature::Trust) {
        return Err(cx.err(
            line,
            "`config.skill_dirs` needs `requires: [selection]` or `[trust]` (the profile's directories)",
        ));
    }
    if config.selection.is_some() && !has(Feature::Selection) {
        return Err(cx.err(line, "`config.selection` needs `requires: [selection]`"));
    }
    if config.registry.is_some() && !has(Feature::Trust) {
        return Err(cx.err(line, "`config.registry` needs `requires: [trust]`"));
    }
    if config.hitl.is_some() && !has(Feature::Hitl) {
        return Err(cx.err(line, "`config.hitl` needs `requires: [hitl]`"));
    }
    if has(Feature::Hitl) && config.hitl.is_none() {
        return Err(cx.err(
            line,
            "a case requiring `hitl` configures the profile's host: add `config.hitl` (`{}` for the defaults)",
        ));
    }
    if let Some(step) = steps.iter().find(|s| {
        matches!(&s.expect.outcome, Some(crate::cases::expect::OutcomeExpect::Call(c)) if c.asked.is_some())
            && !has(Feature::Hitl)
    }) {
        return Err(cx.err(step.line, "`asked` (the human's questions) needs `requires: [hitl]`"));
    }
    if let Some(step) = steps.iter().find(|s| {
        matches!(s.action, Action::Implementation(WireStep::Select { .. }))
            && !has(Feature::Selection)
    }) {
        return Err(cx.err(step.line, "a `select` step needs `requires: [selection]`"));
    }
    Ok(())
}

/// Every safety check of the case has an observable ([`exposure::check_observables`]).
pub(super) fn check_observables(
    cx: &Ctx<'_>,
    line: usize,
    (tree, config, steps): (&Tree, &CaseConfig, &[Step]),
    canaries: &exposure::Canaries,
    (bounded, harmless): (Option<&str>, Option<&str>),
) -> Result<(), CaseError> {
    use crate::cases::expect::OutcomeExpect as O;
    use crate::cases::fixture::EntryKind;
    let mut trees = vec![tree];
    trees.extend(steps.iter().filter_map(|s| match &s.action {
        Action::Write(t) => Some(t),
        _ => None,
    }));
    let planted = exposure::Planted::new(&trees, config.env.values());
    let mut forbidden = Vec::new();
    for t in &trees {
        for e in &t.entries {
            forbidden.push(("a path", String::from_utf8_lossy(&e.path).into_owned()));
            if let EntryKind::Symlink(target) = &e.kind {
                forbidden.push((
                    "a link target",
                    String::from_utf8_lossy(target).into_owned(),
                ));
            }
        }
    }
    // Every configuration string a runtime may show (in an error message, a prompt, a refusal):
    // a canary there would be shown by a runtime that crossed nothing. The environment is where
    // `secret` canaries live, and it is never shown by a safe runtime.
    for (what, text) in config.shown_strings() {
        forbidden.push((what, text));
    }
    let mut marks = Vec::new();
    let mut absent = Vec::new();
    for s in steps {
        if let Action::Implementation(wire) = &s.action {
            let args = serde_json::to_string(wire).unwrap_or_default();
            forbidden.push((exposure::ARGUMENTS, args));
        }
        forbidden.push(("an expected value", s.expect.positive_text()));
        if let Some(files) = &s.expect.files {
            absent.extend(
                files
                    .absent
                    .iter()
                    .map(|p| (s.line, p.clone(), files.written_by.clone())),
            );
        }
        match &s.expect.outcome {
            Some(O::Prompt(p)) => {
                for (check, e) in &p.safety.0 {
                    let texts = match check.as_str() {
                        "contains" => p.contains.clone(),
                        "not_contains" => p.not_contains.clone(),
                        "not_outside_code_span" => p.not_outside_code_span.clone(),
                        "occurrences" => p.occurrences.keys().cloned().collect(),
                        _ => Vec::new(),
                    };
                    marks.push((s.line, check.clone(), *e, texts));
                }
            }
            Some(O::Call(c)) => {
                for (check, e) in &c.safety.0 {
                    marks.push((s.line, check.clone(), *e, Vec::new()));
                }
            }
            _ => {}
        }
    }
    let observed = exposure::Observed {
        canaries,
        planted: &planted,
        forbidden,
        marks,
        absent,
        bounded: bounded.map(|b| (b, exposure::Planted::can_hang(&trees))),
    };
    exposure::check_observables(&observed)
        .map_err(|(at, m)| cx.err(if at == 0 { line } else { at }, m))?;
    let markers: Vec<(String, Option<String>)> = observed
        .absent
        .iter()
        .map(|(_, p, why)| (p.clone(), why.clone()))
        .collect();
    crate::cases::refusals::check(
        &trees,
        &config.skills_root,
        steps,
        canaries,
        &markers,
        harmless,
    )
    .map_err(|(at, m)| cx.err(at, m))
}

pub(super) fn skipped_without_loaded(steps: &[Step]) -> bool {
    steps.iter().any(|s| {
        matches!(&s.expect.outcome, Some(crate::cases::expect::OutcomeExpect::Discover(d)) if d.skipped.is_some() && d.loaded.is_none())
    })
}
