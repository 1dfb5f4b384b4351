//! Keeps README.md's promise about the suite's shape true: every clause of the core profile that
//! draws a line between what it allows and what it refuses is cited by at least one case on each
//! side, and the clauses exempt from that (they describe only one side) are the ones README.md
//! names.
//!
//! A case is on the *allow* side when one of its steps expects a call to succeed, a guide to load
//! (a `loaded` list or `guides` without any `skipped`), both tools to be offered, or a text in the
//! prompt; on the *refuse* side when one expects an error code, a skipped path, a tool not
//! offered, or a text absent from the prompt. A discovery case with a loaded control and a skipped
//! subject counts as refusing only.

use skillspec_runner::cases::clauses::{CLAUSES, CORE_TOOLS};
use skillspec_runner::cases::expect::OutcomeExpect;
use skillspec_runner::cases::{load_dir, Case};
use skillspec_runner::default_cases_dir;

/// Clauses that describe only one side, with the reason README.md gives.
const EXEMPT: &[&str] = &[
    // The list of error codes, or the shape of one kind of result.
    "read.errors",
    "run.errors",
    "run.success",
    "run.failure",
    "run.not-approved",
    // Orders.
    "discovery.order",
    "run.order",
    // What a running helper sees and leaves behind.
    "run.env",
    "run.process-group",
    // When an identical call runs again.
    "tools.no-registry-cache",
    "tools.turn-reuse",
    // What grants nothing or needs nothing.
    "discovery.no-permissions",
    "policy.only-source",
    "read.no-approval",
];

fn is_core(id: &str) -> bool {
    matches!(
        id.split('.').next(),
        Some("enable" | "discovery" | "tools" | "read" | "run" | "policy" | "prompt")
    )
}

/// (allows, refuses) for one case.
fn sides(case: &Case) -> (bool, bool) {
    let (mut allow, mut refuse) = (false, false);
    for step in &case.steps {
        match &step.expect.outcome {
            Some(OutcomeExpect::Call(c)) => {
                allow |= c.ok.is_some();
                refuse |= c.error.is_some();
            }
            Some(OutcomeExpect::Discover(d)) => {
                let skips = d.skipped.as_ref().is_some_and(|s| !s.is_empty());
                let loads =
                    d.loaded.as_ref().is_some_and(|l| !l.is_empty()) || !d.guides.is_empty();
                refuse |= skips;
                allow |= loads && !skips;
            }
            Some(OutcomeExpect::Tools(t)) => {
                let offered = t.offered.clone().unwrap_or_default();
                let all = CORE_TOOLS.iter().all(|s| offered.iter().any(|o| o == s));
                allow |= t.offered.is_some() && all;
                refuse |= !t.not_offered.is_empty() || (t.offered.is_some() && !all);
            }
            Some(OutcomeExpect::Prompt(p)) => {
                allow |= !p.contains.is_empty();
                refuse |= !p.not_contains.is_empty();
            }
            // The profiles' `select` steps; no core clause is checked through them.
            Some(OutcomeExpect::Select(_)) => {}
            Some(OutcomeExpect::Validate(v)) => {
                allow |= v.valid == Some(true);
                refuse |= v.valid == Some(false);
            }
            None => {}
        }
    }
    (allow, refuse)
}

/// The sides missing for each of `clauses`: `no case where it allows` / `refuses` (the refuse
/// side only where `needs_refusal` says the clause draws one).
fn missing_sides<'c>(
    clauses: impl Iterator<Item = &'c skillspec_runner::cases::clauses::Clause>,
    needs_refusal: impl Fn(&str) -> bool,
) -> Vec<String> {
    let suite = load_dir(&default_cases_dir()).expect("the repository's cases load");
    let mut missing = Vec::new();
    for clause in clauses {
        let (mut allow, mut refuse) = (false, false);
        for case in suite
            .cases
            .iter()
            .filter(|k| k.clauses.iter().any(|x| x == clause.id))
        {
            let (a, r) = sides(case);
            allow |= a;
            refuse |= r;
        }
        if !allow {
            missing.push(format!("{}: no case where it allows", clause.id));
        }
        if !refuse && needs_refusal(clause.id) {
            missing.push(format!("{}: no case where it refuses", clause.id));
        }
    }
    missing
}

#[test]
fn every_core_clause_that_draws_a_line_has_cases_on_both_sides() {
    let missing = missing_sides(
        CLAUSES
            .iter()
            .filter(|c| is_core(c.id) && !EXEMPT.contains(&c.id)),
        |_| true,
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The same for dialect `agentskills`: every MUST clause of the skill format is cited by a case
/// where a skill that keeps it is accepted, and one where a skill that breaks it is refused
/// (but for the two that only allow: any body, any other file).
#[test]
fn every_agentskills_must_clause_has_cases_on_both_sides() {
    let missing = missing_sides(
        skillspec_runner::cases::clauses::agentskills::CLAUSES
            .iter()
            .filter(|c| c.level == skillspec_runner::cases::clauses::Level::Must),
        |id| id != "agentskills.body.free" && id != "agentskills.files.any",
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_exempt_clauses_are_real_and_named_in_the_readme() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md is readable");
    let section = readme
        .split("## Writing a case")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README.md has a `Writing a case` section");
    for id in EXEMPT {
        assert!(
            CLAUSES.iter().any(|c| c.id == *id),
            "`{id}` is not a clause"
        );
        assert!(
            section.contains(&format!("`{id}`")),
            "README.md's `Writing a case` does not name the exempt clause `{id}`"
        );
    }
}
