//! The `Implementation` seam: the one place where the runner meets a skill runtime. The
//! reference runs in-process ([`crate::reference::Reference`]); any other runtime runs as a
//! subprocess speaking the adapter protocol ([`crate::adapter_client::Adapter`]).

use crate::protocol::{ImplInfo, StepOutcome, WireConfig, WireStep};

/// Why an implementation could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImplError {
    /// The implementation answered with a protocol `error` message (it is alive).
    Refused(String),
    /// The implementation is broken: crashed, timed out, or violated the protocol.
    Broken(String),
}

impl std::fmt::Display for ImplError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImplError::Refused(m) => write!(f, "the implementation reported an error: {m}"),
            ImplError::Broken(m) => write!(f, "the implementation is broken: {m}"),
        }
    }
}

/// A skill runtime under test.
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
    /// Called after a `Broken` error so the next case starts clean (an adapter is restarted).
    fn recover(&mut self) -> Result<(), ImplError> {
        Ok(())
    }
}
