//! The `skillspec` program's subcommands, one module each; `main.rs` only parses the command line
//! ([`cli`]) and dispatches here. Shared here: the exit codes, writing a command's output
//! ([`emit`]; every command prints through [`crate::output`], which makes a closed stdout
//! quiet), usage errors and loading the suite a command names.
//!
//! - [`cli`]: the clap definitions of every subcommand.
//! - [`run`]: `run`, the suite against the reference or an adapter.
//! - [`list`]: `list`, the cases and the clauses they check.
//! - [`clauses`]: `clauses`, the clauses with the cases that cite them.
//! - [`show`]: `show`, one case as prose.
//! - [`check_tree`]: `check-tree`, what the reference loads from a skills root.
//! - [`allowlist`]: `allowlist`, the script allowlist approving a root's helpers.
//! - [`report`]: `report merge|markdown|html`.
//! - [`adapter`]: `adapter`, the reference served over the adapter protocol.
//! - [`smoke`]: `smoke`, a plain-words diagnosis of an adapter.
//! - [`export`]: `export`, the embedded suite written to a directory.
//! - `mutants` (only with the cargo feature `mutants`): `mutants`, the suite against each mutant.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cases::{self, Suite};
use crate::output;

pub mod adapter;
pub mod allowlist;
pub mod check_tree;
pub mod clauses;
pub mod cli;
pub mod export;
pub mod list;
#[cfg(feature = "mutants")]
pub mod mutants;
pub mod report;
pub mod run;
pub mod show;
pub mod smoke;

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_BROKEN: u8 = 3;

/// Writes a command's whole output to stdout ([`crate::output`]). A reader that went away
/// (`skillspec list | head -1`) is not an error: the reader had what it wanted.
pub(crate) fn emit(text: &str) -> ExitCode {
    output::print(format_args!("{text}"));
    if output::failed() {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

pub(crate) fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("skillspec: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// `--cases DIR`, else the suite embedded in this program (never the source tree's directory:
/// an installed program must not depend on it).
pub(crate) fn load_suite(cases: Option<PathBuf>) -> Result<Suite, ExitCode> {
    let Some(dir) = cases else {
        return crate::suite::load_embedded().map_err(|errors| {
            for e in &errors {
                eprintln!("{e}");
            }
            eprintln!("skillspec: the embedded suite does not load; this program is broken");
            ExitCode::from(EXIT_USAGE)
        });
    };
    if !dir.is_dir() {
        return Err(usage_error(format!(
            "the cases directory {} does not exist",
            dir.display()
        )));
    }
    cases::load_dir(&dir).map_err(|errors| {
        for e in &errors {
            eprintln!("{e}");
        }
        eprintln!(
            "skillspec: {} error(s) in case files; nothing was run",
            errors.len()
        );
        ExitCode::from(EXIT_USAGE)
    })
}
