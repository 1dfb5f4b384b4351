//! What the runner knows when an implementation breaks: a typed [`FaultKind`] (a timeout, an
//! exit, a line that is not JSON, the wrong answer, ...) with its context (the request left
//! unanswered, the stderr tail, whether the request's time ran out, how the adapter had ended).
//!
//! [`Fault`]'s `Display` and [`Fault::message`] give the words report.json, junit.xml and the
//! terminal show; `skillspec smoke` reads the kind to say in plain words what is wrong.
//!
//! Clauses: PROTOCOL.md ("Errors", "Refusals", Shutdown): what breaks an exchange.

use std::fmt;

use crate::protocol::transport::TransportError;
use crate::protocol::PROTOCOL_VERSION;

/// Longest message text taken from an adapter into a report.
pub const MAX_MESSAGE: usize = 4096;

/// What the runner knows about an implementation that broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What went wrong.
    pub kind: FaultKind,
    /// It went wrong while the adapter was being started again for a later case.
    pub restarting: bool,
    /// The request that got no valid answer, when the breakage happened during an exchange.
    pub unanswered: Option<RequestId>,
    /// The last bytes the adapter wrote to stderr (decoded lossily), when it is a subprocess.
    pub stderr_tail: Option<String>,
    /// The request got no answer before `--step-timeout` ran out.
    pub timed_out: bool,
    /// The adapter had exited by itself when the fault was seen, with this status when the
    /// runner could collect it (`Some(None)`: gone, its status unknown). `None`: it was still
    /// running (it was then stopped), or it is no subprocess.
    pub exited: Option<Option<Exit>>,
}

/// How an adapter's process (its `/bin/sh` leader) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal of this number killed it.
    Signal(i32),
}

impl fmt::Display for Exit {
    /// In plain words, with what the shell's own statuses mean.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Code(127) => f.write_str("exit status 127: /bin/sh did not find the command"),
            Exit::Code(126) => f.write_str("exit status 126: the command is not executable"),
            Exit::Code(code) => write!(f, "exit status {code}"),
            Exit::Signal(sig) => write!(f, "killed by signal {sig}"),
        }
    }
}

/// The kinds of breakage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// The adapter's command could not be started.
    CannotStart { command: String, error: String },
    /// The adapter is not running (it broke before, and was not started again).
    NotRunning,
    /// A request could not be encoded (never seen: the runner builds every request).
    Encode(String),
    /// Writing the request or reading the answer failed (a timeout, a closed pipe, a line that
    /// is too long, bytes nobody asked for).
    Transport(TransportError),
    /// The answer line is not UTF-8.
    NotUtf8 { valid_up_to: usize, preview: String },
    /// The answer line is not JSON.
    NotJson { error: String, preview: String },
    /// The answer is JSON but no protocol message.
    NotAMessage { error: String },
    /// The handshake answer gives another protocol version.
    WrongVersion { got: u32 },
    /// The adapter answered the handshake with an `error`.
    RefusedHandshake { message: String },
    /// Another message than the one the request calls for (`got` is quoted, bounded); a wrong
    /// `seq` or `index` is one.
    Unexpected { wanted: &'static str, got: String },
    /// A `refused` object with an empty `message`.
    EmptyRefusal,
    /// A `step_result` with both `result` and `refused`.
    ResultAndRefusal,
    /// A `step_result` with neither `result` nor `refused`.
    NoResult,
    /// A step's `result` does not have the shape of its operation's result.
    BadResult(crate::protocol::ResultError),
    /// A breakage known only by its message (read back from a report.json, or a refusal where
    /// only a working adapter would do).
    Message(String),
}

impl FaultKind {
    /// Whether the adapter's stdout ended (it exited, or closed it) while the runner waited.
    pub fn is_closed(&self) -> bool {
        matches!(
            self,
            FaultKind::Transport(
                TransportError::StdoutClosed
                    | TransportError::StdinGone { .. }
                    | TransportError::StdinClosed
            )
        )
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::CannotStart { command, error } => {
                write!(f, "cannot start `{command}`: {error}")
            }
            FaultKind::NotRunning => f.write_str("the adapter is not running"),
            FaultKind::Encode(e) => f.write_str(e),
            FaultKind::Transport(e) => e.fmt(f),
            FaultKind::NotUtf8 {
                valid_up_to,
                preview,
            } => write!(
                f,
                "the adapter sent a response line that is not valid UTF-8 (at byte {valid_up_to}): {preview}"
            ),
            FaultKind::NotJson { error, preview } => write!(
                f,
                "the adapter sent a line that is not JSON ({error}): {preview}"
            ),
            FaultKind::NotAMessage { error } => write!(
                f,
                "the adapter sent a line that is not a protocol message: {error}"
            ),
            FaultKind::WrongVersion { got } => write!(
                f,
                "the adapter speaks protocol version {got}, the runner {PROTOCOL_VERSION}"
            ),
            FaultKind::RefusedHandshake { message } => {
                write!(f, "the adapter refused the handshake: {message}")
            }
            FaultKind::Unexpected { wanted, got } => {
                write!(f, "expected a `{wanted}` response, got {got}")
            }
            FaultKind::EmptyRefusal => f.write_str(
                "a `refused` object has an empty `message`: it must carry the runtime's own message (PROTOCOL.md, \"Refusals\")",
            ),
            FaultKind::ResultAndRefusal => f.write_str(
                "a `step_result` has both `result` and `refused` (exactly one is allowed)",
            ),
            FaultKind::NoResult => {
                f.write_str("a `step_result` has neither `result` nor `refused`")
            }
            FaultKind::BadResult(e) => e.fmt(f),
            FaultKind::Message(m) => f.write_str(m),
        }
    }
}

impl Fault {
    /// A fault of `kind` with no context yet.
    pub fn new(kind: FaultKind) -> Fault {
        Fault {
            kind,
            restarting: false,
            unanswered: None,
            stderr_tail: None,
            timed_out: false,
            exited: None,
        }
    }

    /// Whether the request got no answer within the runner's bounds: its time ran out, or the
    /// adapter's processes grew past the memory bound while it was outstanding. In a `bounded:`
    /// case either is the hang the case plants (`unbounded`).
    pub fn out_of_bounds(&self) -> bool {
        self.timed_out || matches!(&self.kind, FaultKind::Transport(e) if e.is_over_memory())
    }

    /// A fault known only by its message.
    pub fn message_only(message: impl Into<String>) -> Fault {
        Fault::new(FaultKind::Message(message.into()))
    }

    /// What went wrong, in plain words, at most [`MAX_MESSAGE`] bytes of it (an adapter's own
    /// text can be long; a message read back from a report is bounded already).
    pub fn message(&self) -> String {
        let what = match &self.kind {
            FaultKind::Message(m) => m.clone(),
            kind => bounded(&kind.to_string()),
        };
        if self.restarting {
            format!("restarting the adapter failed: {what}")
        } else {
            what
        }
    }
}

impl fmt::Display for Fault {
    /// The message and the unanswered request (the stderr tail is for the reports, which bound
    /// it for people).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())?;
        if let Some(r) = &self.unanswered {
            write!(f, " (unanswered request: {r})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Fault {}

/// Which request an adapter left unanswered: its `type`, and `seq`/`index` where it has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestId {
    pub kind: &'static str,
    pub seq: Option<u64>,
    pub index: Option<usize>,
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`", self.kind)?;
        if let Some(seq) = self.seq {
            write!(f, " seq {seq}")?;
        }
        if let Some(index) = self.index {
            write!(f, " index {index}")?;
        }
        Ok(())
    }
}

/// `text`, cut to [`MAX_MESSAGE`] bytes.
pub fn bounded(text: &str) -> String {
    if text.len() <= MAX_MESSAGE {
        return text.to_owned();
    }
    let mut cut = MAX_MESSAGE;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..cut], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_bounded_and_say_when_a_restart_failed() {
        let long = Fault::new(FaultKind::RefusedHandshake {
            message: "x".repeat(5000),
        });
        let m = long.message();
        assert!(
            m.starts_with("the adapter refused the handshake: xxx"),
            "{m}"
        );
        assert!(m.ends_with("… (5035 bytes in all)"), "{m}");
        let mut f = Fault::new(FaultKind::NotRunning);
        f.restarting = true;
        f.unanswered = Some(RequestId {
            kind: "case_start",
            seq: Some(2),
            index: None,
        });
        assert_eq!(
            f.to_string(),
            "restarting the adapter failed: the adapter is not running (unanswered request: `case_start` seq 2)"
        );
        assert_eq!(
            Exit::Code(127).to_string(),
            "exit status 127: /bin/sh did not find the command"
        );
    }
}
