//! The runtime's configuration: what an operator sets (environment variables in the original
//! runtime, fields here so that a host or a test can set them without touching the process
//! environment).

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The default helper timeout (`SKILL_SCRIPT_TIMEOUT_MS` unset).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// Everything the runtime is configured with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `SPORTSCLAW_SKILL_GUIDES_DIR`: the skills root. `None` turns the whole feature off.
    pub skills_root: Option<PathBuf>,
    /// `SPORTSCLAW_SKILL_SCRIPT_ALLOWLIST`: the raw policy text. `None` denies every script.
    pub script_allowlist: Option<String>,
    /// The operator's tool allowlist. `None` offers every registered tool.
    pub tool_allowlist: Option<Vec<String>>,
    /// `allowTrading`: lifts the trading blocklist.
    pub allow_trading: bool,
    /// `SPORTS_SKILLS_REPLAY` as the runtime sees it. `None` (unset) and `off` allow helpers.
    pub replay: Option<String>,
    /// `SKILL_SCRIPT_TIMEOUT_MS`; `None` means [`DEFAULT_TIMEOUT_MS`].
    pub timeout_ms: Option<u64>,
    /// The interpreter that runs helpers (`pythonPath`, default `python3`), as the operator wrote
    /// it: resolved once at start-up (see [`crate::interpreter`]).
    pub python: PathBuf,
    /// The environment of the runtime's own process, from which helpers inherit the allowed
    /// variables only.
    pub host_env: BTreeMap<String, String>,
    /// Behave as on a platform without POSIX process groups (Windows): script calls that pass
    /// approval are `unsupported_platform`. On such a platform this is simply true.
    pub no_process_groups: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            skills_root: None,
            script_allowlist: None,
            tool_allowlist: None,
            allow_trading: false,
            replay: None,
            timeout_ms: None,
            python: PathBuf::from("python3"),
            host_env: BTreeMap::new(),
            no_process_groups: !cfg!(unix),
        }
    }
}

impl Config {
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)
    }
}
