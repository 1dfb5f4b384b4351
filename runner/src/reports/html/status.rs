//! A case's status on the page: its class (the verdict's word, a failure by its kind, listed as
//! known or not), the classes the filter matches it by, the badge's words, every status in the
//! order of the filter, and the legend that says what each colour means.

use crate::reports::{CaseResult, Verdict};

/// The status class of a case in one report: its verdict's word, a failure by its kind, an
/// error as an error, listed as known or not: the list never hides what a case showed (a listed
/// crossing is still one, a listed error still an error).
pub(super) fn status_class(c: &CaseResult<'_>) -> &'static str {
    match (c.verdict, c.kind()) {
        (Verdict::Failed | Verdict::KnownFailure, Some(kind)) => kind.word(),
        (Verdict::KnownFailure, None) => "error",
        (verdict, _) => verdict.word(),
    }
}

/// The classes the filter matches a case by in one report: its status class, and for a case
/// listed as a known failure `known-failure` too (so both its own filter and the known one show
/// it).
pub(super) fn filter_classes(c: &CaseResult<'_>) -> Vec<&'static str> {
    let class = status_class(c);
    if c.verdict == Verdict::KnownFailure {
        vec![class, "known-failure"]
    } else {
        vec![class]
    }
}

/// The words of a case's badge: its status class's, said to be listed when it is.
pub(super) fn badge_word(c: &CaseResult<'_>) -> &'static str {
    match (status_class(c), c.verdict) {
        ("unsafe", Verdict::KnownFailure) => "unsafe failure (listed as known)",
        ("permissive", Verdict::KnownFailure) => "permissive behaviour (listed as known)",
        ("different", Verdict::KnownFailure) => "different behaviour (listed as known)",
        ("error", Verdict::KnownFailure) => "error (listed as known)",
        (class, _) => status_word(class),
    }
}

/// Every status class, worst first (the order of the filter and of a cell's colour).
pub(super) const STATUSES: [&str; 11] = [
    "unsafe",
    "permissive",
    "different",
    "error",
    "not-run",
    "fixed",
    "known-failure",
    "pass",
    "not-exercised",
    "unsupported",
    "skipped",
];

pub(super) fn status_word(s: &str) -> &'static str {
    match s {
        "unsafe" => "unsafe failure",
        "permissive" => "permissive behaviour",
        "different" => "different behaviour",
        "error" => "error",
        "not-run" => "not run",
        "fixed" => "known failure that passed",
        "known-failure" => "known failure",
        "not-exercised" => "passed, but tested nothing (not exercised)",
        "pass" => "pass",
        "unsupported" => "unsupported",
        _ => "skipped",
    }
}

/// What each colour of the page means, in the order of [`STATUSES`] (the legend).
pub(super) fn meaning(s: &str) -> &'static str {
    match s {
        "unsafe" => "the run showed a crossing: content, code or a removed tool reached the model or ran, or no answer in bounded time",
        "permissive" => "accepted or ran what the rule refuses, with nothing shown crossing",
        "different" => "safe, but not what the rule says (another answer, error code or order)",
        "error" => "the case could not be judged: the implementation broke or answered out of protocol",
        "not-run" => "the run stopped before the case",
        "fixed" => "listed as a known failure, but passed: the list is out of date",
        "known-failure" => "a filter only: the cases the run's known-failures list names (each keeps its own colour)",
        "pass" => "behaved as the rule says, and the case reached what it checks",
        "not-exercised" => "passed, but the implementation lacks what the case would check: it tested nothing",
        "unsupported" => "not sent: the implementation does not declare a feature, format or dialect the case needs",
        _ => "not run here: a precondition of the case is not met on this machine (for example running as root)",
    }
}
