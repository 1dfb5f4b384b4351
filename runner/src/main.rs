//! The `skillspec` command-line program: parses the command line and dispatches to the command's
//! module in [`skillspec_runner::commands`].
//!
//! Exit codes: 0 every case passed (or the command succeeded); 1 a case failed, errored or was
//! not run; 2 bad usage or bad case files; 3 the adapter is broken (it never started, or every
//! case sent to it errored because it broke); 130/143 interrupted by SIGINT/SIGTERM (the
//! adapter's process group is stopped and the case roots removed first, see
//! `protocol::live` and `execution::roots`).

#![deny(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

use skillspec_runner::commands::cli::{Cli, Command};
use skillspec_runner::commands::{
    adapter, allowlist, check_tree, clauses, export, list, report, run, show, smoke,
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run::run(*args),
        Command::List { cases, json } => list::list(cases, json),
        Command::Clauses {
            pattern,
            cases,
            json,
        } => clauses::clauses(pattern.as_deref(), cases, json),
        Command::Show { id, cases } => show::show_case(cases, &id),
        Command::CheckTree {
            root,
            json,
            dialect,
            mode,
        } => check_tree::check_tree(&root, json, &dialect, mode.as_deref()),
        Command::Allowlist { root, only } => allowlist::allowlist(&root, &only),
        Command::Report { command } => report::report_command(command),
        Command::Adapter {
            without,
            process_per_case,
            agentskills_mode,
        } => adapter::serve_adapter(&without, process_per_case, &agentskills_mode),
        Command::Smoke {
            adapter,
            timeout,
            python,
        } => smoke::smoke(adapter, timeout, python),
        Command::Export { dir, force } => export::export(&dir, force),
        #[cfg(feature = "mutants")]
        Command::Mutants(args) => skillspec_runner::commands::mutants::mutants(args),
    }
}
