//! Mutation check of the suite itself: for every case, the last expectation is changed into one
//! the reference cannot meet, and the case must then fail. A case whose steps never reach the
//! behaviour it checks (or whose expectation cannot fail) shows up here as a passing mutant.

use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use skillspec_runner::case::Case;
use skillspec_runner::execute::{run_case, Status};
use skillspec_runner::expect::{ErrorExpect, Matcher, OutcomeExpect};
use skillspec_runner::reference::Reference;

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
        Some(OutcomeExpect::Tools(t)) => t.offered = Some(vec!["mutant_tool".into()]),
        Some(OutcomeExpect::Prompt(p)) => p.contains.push("\u{1}mutant".into()),
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

fn main() {
    let args = Arguments::from_args();
    let (suite, opts) = skillspec_runner::repository_suite();
    let opts = Arc::new(opts);
    let trials = suite
        .cases
        .into_iter()
        .map(|mut c| {
            let opts = Arc::clone(&opts);
            Trial::test(format!("mutant:{}", c.id), move || {
                if !mutate(&mut c) {
                    return Err(Failed::from("the case has no expectation to mutate"));
                }
                let outcome = run_case(&c, &mut Reference::default(), &opts, 1);
                match outcome.status {
                    Status::Fail(_) => Ok(()),
                    Status::Unsupported(_) | Status::Skipped(_) => Ok(()),
                    other => Err(Failed::from(format!(
                        "the mutated case did not fail: {other:?}"
                    ))),
                }
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
