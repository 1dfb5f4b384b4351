//! Every case of `spec-cases/` as its own libtest trial (named by case id) against the reference
//! runtime in-process; then every case again as a *mutant* (`mutant:<id>`): its last expectation
//! changed into one the reference cannot meet, which must make the case fail. A mutant that
//! passes is a case whose steps never reach what it checks. Finally no process may outlive its
//! case.

use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use skillspec_reference::agentskills::Mode;
use skillspec_runner::cases::expect::{ErrorExpect, Matcher, OutcomeExpect};
use skillspec_runner::cases::Case;
use skillspec_runner::execution::{run_suite, CaseOutcome, Policy, RunOptions, Status};
use skillspec_runner::implementations::reference::Reference;
use skillspec_runner::implementations::{ImplError, Implementation};
use skillspec_runner::reports;

/// The modes the reference runs `case` in: the case's own, or, for a case of a dialect with
/// modes that names none, every mode (the first one's trial is named by the case id alone, the
/// others `MODE:ID`); a case of a dialect without modes runs once.
fn modes_of(case: &Case) -> Vec<Mode> {
    match case.mode {
        Some(m) => Mode::parse(m).into_iter().collect(),
        None if case.dialect.modes.is_empty() => vec![Mode::Lenient],
        None => case
            .dialect
            .modes
            .iter()
            .filter_map(|m| Mode::parse(m))
            .collect(),
    }
}

/// `case` run alone through the runner's one suite loop, against a fresh reference claiming
/// dialect `agentskills` in `mode`.
fn run_alone(case: &Case, opts: &RunOptions, mode: Mode) -> CaseOutcome {
    let start = move |_worker: usize| -> Result<Box<dyn Implementation>, ImplError> {
        Ok(Box::new(Reference::default().with_mode(mode)))
    };
    let mut outcome = run_suite(&[case], &start, opts, &Policy::default(), &mut ());
    outcome.results.remove(0)
}

fn main() {
    let args = Arguments::from_args();
    let (suite, opts) = skillspec_runner::repository_suite();
    let opts = Arc::new(opts);
    let mut trials = Vec::new();
    for case in suite.cases {
        // Cases whose preconditions do not hold here (for example as root) are ignored.
        let unmet = case.preconditions.iter().any(|p| p.unmet().is_some());
        let modes = modes_of(&case);
        for (i, mode) in modes.iter().copied().enumerate() {
            let (c, o) = (case.clone(), Arc::clone(&opts));
            let name = if i == 0 {
                case.id.clone()
            } else {
                format!("{}:{}", mode.as_str(), case.id)
            };
            trials.push(
                Trial::test(name, move || {
                    let outcome = run_alone(&c, &o, mode);
                    match outcome.status {
                        Status::Pass => Ok(()),
                        _ => Err(Failed::from(reports::describe(
                            &reports::ReportCase::from(&c),
                            &outcome,
                        ))),
                    }
                })
                .with_kind(case.area.clone())
                .with_ignored_flag(unmet),
            );
        }
        let mode = modes.first().copied().unwrap_or(Mode::Lenient);
        let (mut m, o) = (case.clone(), Arc::clone(&opts));
        trials.push(
            Trial::test(format!("mutant:{}", case.id), move || {
                if !mutate(&mut m) {
                    return Err(Failed::from("the case has no expectation to mutate"));
                }
                match run_alone(&m, &o, mode).status {
                    Status::Fail(_) => Ok(()),
                    other => Err(Failed::from(format!(
                        "the mutated case did not fail: {other:?}"
                    ))),
                }
            })
            .with_kind("mutant")
            .with_ignored_flag(unmet),
        );
    }
    let conclusion = libtest_mimic::run(&args, trials);
    // Every helper (and everything it started) must be gone: look for any process still working
    // inside a case root, by its current directory.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let survivors = processes_in_case_roots(&opts.temp_prefix);
    if !survivors.is_empty() {
        eprintln!(
            "processes outlived their cases:\n  {}",
            survivors.join("\n  ")
        );
        std::process::exit(101);
    }
    conclusion.exit();
}

/// Processes (other than this one) whose working directory is inside one of this run's case
/// roots (their names start with `prefix`, which holds this process's id).
fn processes_in_case_roots(prefix: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let tmp_dir = std::env::temp_dir();
    let tmp = std::fs::canonicalize(&tmp_dir)
        .unwrap_or(tmp_dir)
        .join(prefix);
    let prefix = tmp.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) {
            let cwd = cwd.to_string_lossy().into_owned();
            if cwd.starts_with(&prefix) {
                let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                out.push(format!(
                    "pid {pid} in {cwd}: {}",
                    String::from_utf8_lossy(&cmd).replace('\0', " ")
                ));
            }
        }
    }
    out
}

/// Changes the last expectation of `case` so that it cannot hold; false when nothing to change.
fn mutate(case: &mut Case) -> bool {
    let Some(step) = case.steps.iter_mut().rev().find(|s| !s.expect.is_empty()) else {
        return false;
    };
    match &mut step.expect.outcome {
        Some(OutcomeExpect::Discover(d)) => {
            if let Some(loaded) = &mut d.loaded {
                loaded.push("mutant-skill".into());
            } else if let Some((_, g)) = d.guides.iter_mut().next() {
                g.name = Some(Matcher::Exact("mutant name".into()));
            } else if let Some(skipped) = &mut d.skipped {
                skipped.insert("mutant/path".into(), "duplicate".into());
            }
        }
        Some(OutcomeExpect::Tools(t)) => {
            // Toggle one spec tool in the expected set; or claim the tools the case says are
            // not offered are offered.
            let tool = skillspec_runner::cases::clauses::SPEC_TOOLS[1].to_owned();
            match &mut t.offered {
                Some(offered) if offered.contains(&tool) => offered.retain(|x| *x != tool),
                Some(offered) => offered.push(tool),
                None => t.offered = Some(t.not_offered.clone()),
            }
        }
        Some(OutcomeExpect::Prompt(p)) => p.contains.push("\u{1}mutant".into()),
        Some(OutcomeExpect::Select(e)) => {
            // Claim one more selected skill, or another score, or one more tool kept.
            if let Some(selected) = &mut e.selected {
                selected.push("mutant-skill".into());
            } else if let Some(score) = e.scores.values_mut().next() {
                *score += 1;
            } else if let Some(ceiling) = &mut e.tool_ceiling {
                ceiling.push("mutant_tool".into());
            }
        }
        Some(OutcomeExpect::Validate(v)) => match &mut v.valid {
            Some(valid) => *valid = !*valid,
            None => {
                v.properties
                    .insert("name".into(), Matcher::Exact("mutant name".into()));
            }
        },
        Some(OutcomeExpect::Call(c)) => {
            c.ok = None;
            c.error = Some(ErrorExpect {
                code: "mutant_code".into(),
                fields: Default::default(),
            });
        }
        None => {
            if let Some(files) = &mut step.expect.files {
                std::mem::swap(&mut files.exists, &mut files.absent);
            }
        }
    }
    true
}
