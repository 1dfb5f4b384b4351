//! # skillspec runner
//!
//! Runs the data-driven conformance suite (`spec-cases/`) against a skill runtime: the reference
//! in-process, or any implementation over the JSON adapter protocol (PROTOCOL.md).
//!
//! Module map, by job:
//! - [`cases`]: the case format: the closed vocabularies cases cite ([`cases::clauses`],
//!   [`cases::features`]), loading and validation, fixture trees ([`cases::fixture`]) and
//!   expectations ([`cases::expect`]).
//! - [`implementations`]: the `Implementation` seam and its sides: the reference in-process
//!   ([`implementations::reference`]), the adapter protocol ([`implementations::protocol`]), any
//!   program over it ([`implementations::adapter`], with its bounded transport) and the
//!   reference served over it ([`implementations::adapter_server`]).
//! - [`execution`]: running one case (fixture, steps, comparison, cleanup), the processes left
//!   behind ([`execution::survivors`]), what a signal must tear down ([`execution::live`]), the
//!   interpreter ([`execution::python`]).
//! - [`reports`]: the terminal summary, report.json, junit.xml, and cases as prose
//!   ([`reports::show`]).
//! - [`commands`]: the `skillspec` program's command line ([`commands::cli`]) and one module per
//!   subcommand; `main.rs` only parses and dispatches.
//! - [`input`]: reading files a user names (regular files only, bounded).
//! - [`check_tree`]: what the `check-tree` command reports (the reference on a real skills root).
//! - [`suite`]: the suite embedded in the binary, its version, where a run takes its cases and
//!   fixtures from, and `export`.
//! - [`smoke`]: the `smoke` command (a few trivial cases and a plain-words diagnosis of an
//!   adapter).
//! - `mutants` (only with the cargo feature `mutants`): the `mutants` command, the suite against
//!   each deliberate defect of the reference.

pub mod cases;
pub mod check_tree;
pub mod commands;
pub mod embedded;
pub mod execution;
pub mod implementations;
pub mod input;
#[cfg(feature = "mutants")]
pub mod mutants;
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
    };
    (suite, opts)
}

pub use execution::plan::filter_matches;
