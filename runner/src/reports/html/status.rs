//! A case's status on the page: its class (the verdict's word, a failure by its kind), the
//! classes the filter matches it by, the badge's words, and every status in the order of the
//! filter.

use crate::execution::FailureKind;
use crate::reports::{CaseResult, Verdict};

/// The status class of a case in one report: its verdict's word, a failure by its kind. An
/// unsafe failure is `unsafe` (red) listed as known or not: a listed crossing is still one.
pub(super) fn status_class(c: &CaseResult<'_>) -> &'static str {
    match (c.verdict, c.kind()) {
        (Verdict::Failed | Verdict::KnownFailure, Some(FailureKind::Unsafe)) => "unsafe",
        (Verdict::Failed, Some(kind)) => kind.word(),
        (verdict, _) => verdict.word(),
    }
}

/// The classes the filter matches a case by in one report: its status class, and for a known
/// unsafe failure `known-failure` too (so both the unsafe and the known filters show it).
pub(super) fn filter_classes(c: &CaseResult<'_>) -> Vec<&'static str> {
    let class = status_class(c);
    if class == "unsafe" && c.verdict == Verdict::KnownFailure {
        vec![class, "known-failure"]
    } else {
        vec![class]
    }
}

/// The word of a case's badge: its status class's, said to be listed when an unsafe failure is.
pub(super) fn badge_word(c: &CaseResult<'_>) -> &'static str {
    match (status_class(c), c.verdict) {
        ("unsafe", Verdict::KnownFailure) => "unsafe failure (listed as known)",
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
