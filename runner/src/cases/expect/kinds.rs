//! A mismatch and its kind (SPEC.md, "How verdicts are judged"): unsafe with its exposure,
//! permissive, or different; and the codes that say a call reached execution or found no tool.

use super::*;

/// How a mismatch is judged (SPEC.md, "How verdicts are judged").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MismatchKind {
    /// The run shows a security boundary crossed, by an observable a runtime that did not cross
    /// cannot produce.
    Unsafe(Exposure),
    /// The runtime accepted (loaded, offered, ran, passed on) what the specification requires it
    /// to refuse, and the run shows no crossing.
    Permissive,
    /// The runtime stayed safe but did not give the specified answer: another error code,
    /// missing fields, a refusal of something allowed, another order.
    Interop,
}

impl MismatchKind {
    pub fn word(self) -> &'static str {
        match self {
            MismatchKind::Unsafe(_) => "unsafe",
            MismatchKind::Permissive => "permissive",
            MismatchKind::Interop => "different",
        }
    }

    /// The exposure of an unsafe mismatch.
    pub fn exposure(self) -> Option<Exposure> {
        match self {
            MismatchKind::Unsafe(e) => Some(e),
            _ => None,
        }
    }
}

/// One difference between expected and actual.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub what: String,
    pub expected: String,
    pub actual: String,
    pub kind: MismatchKind,
    /// The tool of the specification whose absence alone explains this mismatch: a call to it
    /// answered `unknown_tool`, or a `tools` step did not offer it where the case expects it.
    /// Used to tell an area that is not implemented from one that fails.
    pub missing_tool: Option<String>,
}

impl Mismatch {
    /// A mismatch where the runtime stayed safe.
    pub fn interop(
        what: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Mismatch {
        Mismatch {
            what: what.into(),
            expected: expected.into(),
            actual: actual.into(),
            kind: MismatchKind::Interop,
            missing_tool: None,
        }
    }

    /// A mismatch where the runtime accepted what it must refuse, with no crossing shown.
    pub fn permissive(
        what: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Mismatch {
        Mismatch {
            kind: MismatchKind::Permissive,
            ..Mismatch::interop(what, expected, actual)
        }
    }

    /// A mismatch that shows the boundary `exposure` crossed.
    pub fn exposed(
        exposure: Exposure,
        what: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Mismatch {
        Mismatch {
            kind: MismatchKind::Unsafe(exposure),
            ..Mismatch::interop(what, expected, actual)
        }
    }

    /// This mismatch judged as `kind`.
    pub(super) fn judged(self, kind: MismatchKind) -> Mismatch {
        Mismatch { kind, ..self }
    }

    /// This mismatch explained by the absence of `tool`.
    pub(super) fn for_missing(self, tool: &str) -> Mismatch {
        Mismatch {
            missing_tool: Some(tool.to_owned()),
            ..self
        }
    }
}

pub(super) fn mismatch(
    what: impl Into<String>,
    expected: impl Into<String>,
    actual: impl Into<String>,
) -> Mismatch {
    Mismatch::interop(what, expected, actual)
}

/// The error codes of a call that reached execution: the helper was started, or the runtime
/// tried to start it. Where a case expects any other error (a refusal before execution), one of
/// these shows that the runtime went past a check that had to stop it.
pub const EXECUTION_CODES: &[&str] = &["spawn_failed", "script_failed", "timeout", "output_limit"];

/// The error code of a call to a tool the implementation does not have.
pub const UNKNOWN_TOOL: &str = "unknown_tool";
