//! # skillspec runner
//!
//! Runs the data-driven conformance suite (`spec-cases/`) against a skill runtime: the reference
//! in-process, or any implementation over the JSON adapter protocol (PROTOCOL.md).
//!
//! The top-level modules are layers, bottom up; each imports only from layers below it (the
//! repository's `tests/architecture.rs` checks that there is no import cycle, and this order):
//! 0. [`embedded`] (the files `build.rs` embeds), [`input`] (reading files a user names:
//!    regular files only, bounded), [`output`] (stdout for every command: a reader that went
//!    away is no panic) and [`progress`] (a long run's progress on stderr).
//! 1. [`protocol`]: the adapter protocol's wire types, the optional [`protocol::features`], the
//!    typed [`protocol::fault::Fault`], the bounded [`protocol::transport`], the adapter process
//!    groups and the signal path ([`protocol::live`]), the schema checker
//!    ([`protocol::schema`]).
//! 2. [`cases`]: the case format: the closed vocabularies cases cite ([`cases::clauses`]),
//!    loading and validation, fixture trees ([`cases::fixture`]), expectations
//!    ([`cases::expect`]) and a case's configuration rendered for a run
//!    ([`cases::template`]). Beside it, [`implementations`]: the `Implementation` seam, the
//!    reference in-process ([`implementations::reference`]), any program over the protocol
//!    ([`implementations::adapter`]) and the reference served over it
//!    ([`implementations::adapter_server`]).
//! 3. [`execution`]: running one case (fixture, steps, comparison, cleanup) and the one loop
//!    that runs a suite ([`execution::run_suite`], with its [`execution::plan`]: filter,
//!    partition, known failures), the processes left behind ([`execution::survivors`]), the
//!    case roots a signal removes ([`execution::roots`]), the interpreter
//!    ([`execution::python`]).
//! 4. [`suite`]: the suite embedded in the binary, its version, where a run takes its cases and
//!    fixtures from, and `export`.
//! 5. [`reports`]: the terminal summary, report.json, junit.xml, and cases as prose
//!    ([`reports::show`]); `mutants` (only with the cargo feature `mutants`): the suite against
//!    each deliberate defect of the reference, a worker per mutant.
//! 6. [`smoke`] (a plain-words diagnosis of an adapter: the smoke cases through `run_suite`)
//!    and [`check_tree`] (the reference on a real skills root), [`check_agentskills`] (the same
//!    root judged by the open Agent Skills standard).
//! 7. [`commands`]: the `skillspec` program's command line ([`commands::cli`]) and one module
//!    per subcommand; `main.rs` only parses and dispatches.
//!
//! The runner has no `unsafe` code (`deny(unsafe_code)`).

#![deny(unsafe_code)]

pub mod cases;
pub mod check_agentskills;
pub mod check_tree;
pub mod commands;
pub mod embedded;
pub mod execution;
pub mod implementations;
pub mod input;
#[cfg(feature = "mutants")]
pub mod mutants;
pub mod output;
pub mod progress;
pub mod protocol;
pub mod reports;
pub mod smoke;
pub mod suite;

use std::path::PathBuf;

/// The source tree's cases directory (a compiled-in absolute path), for this repository's own
/// tests. The `skillspec` program never uses it: it runs `--cases DIR` or the suite embedded in
/// it ([`suite`]), so an installed binary works with the source tree gone.
pub fn default_cases_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../spec-cases"))
}

/// The source tree's fixtures directory (compiled in), for this repository's own tests; see
/// [`default_cases_dir`].
pub fn default_fixtures_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures"))
}

/// Keeps one descriptor open without close-on-exec for the rest of the process, as the programs
/// that start real runtimes leave them (seen: a pipe and `/dev/null` at descriptors 10 and 251).
/// Every implementation under test inherits it (the in-process reference through this process,
/// an adapter through its start), so a runtime that passes inherited descriptors on to helpers
/// fails `run.exec.only-standard-descriptors` everywhere, not only where a launcher leaked one.
pub fn hold_inherited_descriptor() {
    static HELD: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    HELD.get_or_init(|| {
        if let Ok(fd) = rustix::fs::open(
            "/dev/null",
            rustix::fs::OFlags::RDONLY,
            rustix::fs::Mode::empty(),
        ) {
            // Deliberately never closed: it must stay open for every case of the run.
            let _ = std::os::fd::IntoRawFd::into_raw_fd(fd);
        }
    });
}

/// The repository's suite and run options for the test harnesses: every case error is printed
/// and the process exits with 2, as `skillspec run` does.
pub fn repository_suite() -> (cases::Suite, execution::RunOptions) {
    hold_inherited_descriptor();
    let suite = cases::load_dir(&default_cases_dir()).unwrap_or_else(|errors| {
        for e in errors {
            eprintln!("{e}");
        }
        std::process::exit(2);
    });
    let opts = execution::RunOptions {
        fixtures: default_fixtures_dir(),
        python: execution::python::resolve(None).unwrap_or_else(|_| "python3".into()),
        temp_prefix: format!("skillspec-test-{}-", std::process::id()),
        hang_bound: execution::HANG_BOUND,
        for_information: Vec::new(),
    };
    (suite, opts)
}

pub use execution::plan::filter_matches;
