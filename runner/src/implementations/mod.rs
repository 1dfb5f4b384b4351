//! The `Implementation` seam: the one place where the runner meets a skill runtime. The
//! reference runs in-process ([`reference::Reference`]); any other runtime runs as a subprocess
//! speaking the adapter protocol ([`adapter::Adapter`], over [`protocol`]).

pub mod adapter;
pub mod adapter_server;
pub mod protocol;
pub mod reference;

use crate::implementations::protocol::{ImplInfo, StepOutcome, WireConfig, WireStep};

/// Why an implementation could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImplError {
    /// The implementation answered with a protocol `error` message (it is alive).
    Refused(String),
    /// The implementation is broken: crashed, timed out, or violated the protocol. It is not
    /// asked anything more; an adapter is started again before the next case.
    Broken(Fault),
}

impl ImplError {
    /// A broken implementation with only a message (no request, no stderr).
    pub fn broken(message: impl Into<String>) -> ImplError {
        ImplError::Broken(Fault::new(message))
    }

    /// The message alone, without the stderr tail.
    pub fn message(&self) -> &str {
        match self {
            ImplError::Refused(m) => m,
            ImplError::Broken(f) => &f.message,
        }
    }
}

impl std::fmt::Display for ImplError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImplError::Refused(m) => write!(f, "the implementation reported an error: {m}"),
            ImplError::Broken(fault) => write!(f, "the implementation is broken: {fault}"),
        }
    }
}

/// What the runner knows about an implementation that broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What went wrong, in plain words.
    pub message: String,
    /// The request that got no valid answer, when the breakage happened during an exchange.
    pub unanswered: Option<RequestId>,
    /// The last bytes the adapter wrote to stderr (decoded lossily), when it is a subprocess.
    pub stderr_tail: Option<String>,
    /// The request got no answer before `--step-timeout` ran out.
    pub timed_out: bool,
}

impl Fault {
    pub fn new(message: impl Into<String>) -> Fault {
        Fault {
            message: message.into(),
            unanswered: None,
            stderr_tail: None,
            timed_out: false,
        }
    }
}

impl std::fmt::Display for Fault {
    /// The message and the unanswered request (the stderr tail is for
    /// [`crate::reports::describe_fault`], which bounds it for people).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(r) = &self.unanswered {
            write!(f, " (unanswered request: {r})")?;
        }
        Ok(())
    }
}

/// Which request an adapter left unanswered: its `type`, and `seq`/`index` where it has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestId {
    pub kind: &'static str,
    pub seq: Option<u64>,
    pub index: Option<usize>,
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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

/// A skill runtime under test.
///
/// After an `ImplError::Broken` the implementation must be usable again at the next
/// `start_case` (an adapter starts a fresh process there); a case that fails to start that way
/// reports `Broken` too.
pub trait Implementation {
    /// Name, version and declared features.
    fn info(&self) -> &ImplInfo;
    /// Starts a fresh runtime for one case, configured with `config`, over the tree at `root`.
    fn start_case(
        &mut self,
        seq: u64,
        case_id: &str,
        root: &str,
        config: &WireConfig,
    ) -> Result<(), ImplError>;
    /// Performs one step of the current case.
    fn step(&mut self, index: usize, step: &WireStep) -> Result<StepOutcome, ImplError>;
    /// Ends the current case and discards its runtime.
    fn end_case(&mut self) -> Result<(), ImplError>;
}
