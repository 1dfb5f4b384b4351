//! Reports: everything a run's results become, in one place. [`RunReport`] is a run: each
//! case ([`ReportCase`]) with its outcome, the implementation, the known failures and why the
//! run stopped early. From it come the verdict of each case ([`Verdict`]), the counts, the
//! conformance statement per area and level with one plain line per area ([`Conformance`]), the
//! terminal summary and its `result:` line, the text of each non-passing case ([`describe`]),
//! report.json ([`json`]) and junit.xml. report.json reads back into the `RunReport` it was
//! written from ([`json::from_json`]), so `report merge` ([`merge`]), `report markdown`
//! ([`markdown`]) and `report html` ([`html`]) use these same functions rather than wording of
//! their own.
//!
//! Text that reaches a terminal or `junit.xml` goes through [`visible`]: an implementation's
//! name, messages and stderr can hold control characters, which must neither drive the terminal
//! nor make the XML ill-formed. A value printed within one line goes through [`one_line`],
//! which escapes line breaks too, so that it cannot forge a line of the runner's own.

pub mod html;
pub mod json;
pub mod markdown;
pub mod merge;
pub mod show;
pub mod view;

mod conformance;
mod counts;
mod describe;
mod junit;
mod run_report;
mod summary;
#[cfg(test)]
mod tests;

pub use crate::execution::Stopped;
pub use conformance::{AreaConformance, Conformance, LevelCounts};
pub use counts::{
    clause_level, failure_kind, level_from_word, level_of, level_word, Counts, LEVELS,
};
pub use describe::{
    describe, describe_fault, failure_label, kind_label, mismatch_label, TAIL_BYTES, TAIL_LINES,
};
pub use junit::{junit, write, write_files, REPORT_FILES};
pub use run_report::{CaseResult, ReportCase, RunReport};
pub use summary::{result_line, result_word, summary_text};

use counts::level_index;

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::execution::Status;

pub use json::to_json;

/// Whether `c` is written as an escape by [`visible`] (`keep_breaks`) or [`one_line`]: a control
/// character (but a line break and a tab where `keep_breaks`), a character a reader does not see
/// (the reference's one definition, `unseen::is_unseen`: format characters such as U+200B and the
/// bidirectional controls, U+2028/U+2029, the Hangul fillers, variation selectors...), or a
/// noncharacter U+FFFE/U+FFFF.
fn needs_escape(c: char, keep_breaks: bool) -> bool {
    (c.is_control() && !(keep_breaks && (c == '\n' || c == '\t')))
        || skillspec_reference::unseen::is_unseen(c)
        || matches!(c, '\u{fffe}' | '\u{ffff}')
}

fn escaped(text: &str, keep_breaks: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, keep_breaks)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c, keep_breaks) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every control character but `\n` and `\t` (C0, DEL, C1), the Unicode
/// bidirectional controls, the invisible format characters (zero-width space, joiners, word
/// joiner, invisible operators, the byte order mark), the line and paragraph separators and the non-characters U+FFFE/U+FFFF written as `\u{1b}`-style
/// escapes. What remains is safe on a terminal and allowed in XML 1.0. For a block of lines the
/// runner composes; a value printed within one line goes through [`one_line`].
pub fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

/// `text` as [`visible`] writes it, with `\n` and `\t` escaped too (`\u{a}`, `\u{9}`): for
/// anything from outside the runner (an implementation's name, messages and values, a skill
/// directory's name, a case file's text) that is printed within one line, so that it can
/// neither start a line of its own (a forged `result: ok` line) nor drive the terminal. Every
/// printer uses it: the terminal summary, failure output, `check-tree`, `show`, `smoke`.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

/// A case's outcome judged against the implementation's list of known failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// Passed, but the implementation lacks a mechanism the case exercises: it tested nothing.
    NotExercised,
    Failed,
    /// Failed or errored, and listed as a known failure.
    KnownFailure,
    /// Passed although listed as a known failure: the list is out of date.
    Fixed,
    Unsupported,
    /// A precondition of the case is not met where the runner runs (for example running as root).
    Skipped,
    Errored,
    /// The run stopped before this case.
    NotRun,
}

impl Verdict {
    pub fn of(status: &Status, known: bool) -> Verdict {
        match (status, known) {
            (Status::Pass, false) => Verdict::Passed,
            (Status::Pass, true) => Verdict::Fixed,
            // Listed as a known failure, and it did not fail: the list is out of date.
            (Status::NotExercised(_), true) => Verdict::Fixed,
            (Status::NotExercised(_), false) => Verdict::NotExercised,
            (Status::Unsupported(_), _) => Verdict::Unsupported,
            (Status::Skipped(_), _) => Verdict::Skipped,
            (Status::Fail(_) | Status::Error { .. }, true) => Verdict::KnownFailure,
            (Status::Fail(_), false) => Verdict::Failed,
            (Status::Error { .. }, false) => Verdict::Errored,
            (Status::NotRun, _) => Verdict::NotRun,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Passed => "pass",
            Verdict::NotExercised => "not-exercised",
            Verdict::Failed => "fail",
            Verdict::KnownFailure => "known-failure",
            Verdict::Fixed => "fixed",
            Verdict::Unsupported => "unsupported",
            Verdict::Skipped => "skipped",
            Verdict::Errored => "error",
            Verdict::NotRun => "not-run",
        }
    }

    /// Whether this verdict makes the run fail.
    pub fn is_bad(self) -> bool {
        matches!(
            self,
            Verdict::Failed | Verdict::Errored | Verdict::Fixed | Verdict::NotRun
        )
    }
}
