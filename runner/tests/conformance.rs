//! Every case of `spec-cases/` as its own libtest trial (named by case id) against the reference
//! runtime in-process.

use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use skillspec_runner::execute::{run_case, RunOptions, Status};
use skillspec_runner::reference::Reference;
use skillspec_runner::{case, default_cases_dir, default_fixtures_dir, python, report};

fn main() {
    let args = Arguments::from_args();
    let suite = match case::load_dir(&default_cases_dir()) {
        Ok(s) => s,
        Err(errors) => {
            for e in errors {
                eprintln!("{e}");
            }
            std::process::exit(2);
        }
    };
    let opts = Arc::new(RunOptions {
        fixtures: default_fixtures_dir(),
        python: python::resolve(None).unwrap_or_else(|_| "python3".into()),
    });
    let trials = suite
        .cases
        .into_iter()
        .map(|c| {
            let opts = Arc::clone(&opts);
            let area = c.area.clone();
            Trial::test(c.id.clone(), move || {
                let mut reference = Reference::default();
                let outcome = run_case(&c, &mut reference, &opts, 1);
                match outcome.status {
                    Status::Pass => Ok(()),
                    Status::Unsupported(_) => Ok(()),
                    _ => Err(Failed::from(report::describe(&c, &outcome))),
                }
            })
            .with_kind(area)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
