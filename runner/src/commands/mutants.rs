//! `skillspec mutants` (only with the cargo feature `mutants`): the dispatch to
//! [`crate::mutants`]: a worker run, the list of mutants, or the suite against each of them.

use std::process::ExitCode;

use super::cli::MutantsArgs;
use super::emit;
use crate::mutants;

pub fn mutants(args: MutantsArgs) -> ExitCode {
    let MutantsArgs {
        only,
        filter,
        jobs,
        report,
        python,
        stall,
        cases,
        case_filter,
        stop_after,
        list,
        worker,
        progress,
    } = args;
    if let Some(name) = worker {
        let suite = mutants::WorkerSuite {
            cases,
            case_filter,
            stop_after,
        };
        mutants::worker(&name, python.as_deref(), &suite)
    } else if list {
        emit(&mutants::list())
    } else {
        mutants::run(&mutants::Options {
            only,
            filter,
            jobs,
            report,
            python,
            stall,
            cases,
            case_filter,
            stop_after,
            progress: progress.display(),
        })
    }
}
