//! The `Implementation` seam: the one place where the runner meets a skill runtime. The
//! reference runs in-process ([`reference::Reference`]); any other runtime runs as a subprocess
//! speaking the adapter protocol ([`adapter::Adapter`], over [`crate::protocol`]); the reference
//! is served over that protocol by [`adapter_server`] (`skillspec adapter`).
//!
//! Beside the cases in layer 2 of the runner: it depends on [`crate::protocol`] only.

pub mod adapter;
pub mod adapter_server;
pub mod reference;
pub mod reference_agentskills;

use crate::protocol::fault::{Fault, FaultKind};
use crate::protocol::{ImplInfo, StepOutcome, WireConfig, WireStep};

/// Why an implementation could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImplError {
    /// The implementation answered with a protocol `error` message (it is alive).
    Refused(String),
    /// The same, with what the adapter wrote to stderr during the case (a traceback the
    /// message points to): kept in the report beside the error.
    RefusedWithStderr(String, String),
    /// The implementation is broken: crashed, timed out, or violated the protocol. It is not
    /// asked anything more; an adapter is started again before the next case.
    Broken(Box<Fault>),
}

impl ImplError {
    /// A broken implementation with only this kind of fault (no request, no stderr).
    pub fn broken(kind: FaultKind) -> ImplError {
        ImplError::Broken(Box::new(Fault::new(kind)))
    }

    /// The message alone, without the stderr tail.
    pub fn message(&self) -> String {
        match self {
            ImplError::Refused(m) | ImplError::RefusedWithStderr(m, _) => m.clone(),
            ImplError::Broken(f) => f.message(),
        }
    }

    /// What is known about the breakage: a refusal where only a working implementation would
    /// do is a fault known by its message.
    pub fn into_fault(self) -> Fault {
        match self {
            ImplError::Broken(f) => *f,
            ImplError::Refused(m) => Fault::message_only(m),
            ImplError::RefusedWithStderr(m, stderr) => {
                let mut f = Fault::message_only(m);
                f.stderr_tail = Some(stderr);
                f
            }
        }
    }
}

impl std::fmt::Display for ImplError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImplError::Refused(m) | ImplError::RefusedWithStderr(m, _) => {
                write!(f, "the implementation reported an error: {m}")
            }
            ImplError::Broken(fault) => write!(f, "the implementation is broken: {fault}"),
        }
    }
}

impl std::error::Error for ImplError {}

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
    /// How long to wait for each answer of the next case (`None`: the run's step timeout). The
    /// runner sets it before every `start_case`: a `bounded:` case waits the runner's hang bound,
    /// whatever the step timeout (an implementation in-process has no timeout to set).
    fn set_case_timeout(&mut self, _timeout: Option<std::time::Duration>) {}
    /// Whether the next case's answers are kept as they came ([`Implementation::last_answer`]):
    /// only a case with a canary to look for needs them, and a 16 MiB answer kept twice costs
    /// 16 MiB more.
    fn keep_answers(&mut self, _keep: bool) {}
    /// Performs one step of the current case.
    fn step(&mut self, index: usize, step: &WireStep) -> Result<StepOutcome, ImplError>;
    /// The last step's answer as it came, before the runner read it into its own shape (an
    /// adapter's raw `result`): the canary scan reads every string of it, keys the runner drops
    /// included (SPEC.md, "What the canary scan sees"). `None` when there is nothing more to it
    /// than the outcome (the reference in-process).
    fn last_answer(&self) -> Option<&serde_json::Value> {
        None
    }
    /// Ends the current case and discards its runtime.
    fn end_case(&mut self) -> Result<(), ImplError>;
    /// The run is over: stop whatever the implementation keeps running (an adapter is stopped
    /// the documented way: `stop`, SIGTERM, SIGKILL). Nothing is asked of it afterwards.
    fn finish(&mut self) {}
}
