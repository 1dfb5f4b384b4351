//! The runtime's configuration: what an operator sets (environment variables in the original
//! runtime, fields here so that a host or a test can set them without touching the process
//! environment), with the settings of the profiles ([`SkillDirs`], [`Limits`], [`HitlConfig`]),
//! and how the timeout setting is read (SPEC.md `run.timeout`, `hitl.timeout`).
//!
//! A primitive: it uses no other module of the crate. The profile modules re-export their
//! settings (`trust::SkillDirs`, `selection::Limits`, `hitl::HitlConfig`).

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The default helper timeout (`SKILL_SCRIPT_TIMEOUT_MS` unset or not a valid setting).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The largest accepted `SKILL_SCRIPT_TIMEOUT_MS` (one day).
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;

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
    /// `SKILL_SCRIPT_TIMEOUT_MS` exactly as set (`None`: unset); see [`Config::timeout_ms`].
    pub timeout_ms: Option<String>,
    /// The interpreter that runs helpers (`pythonPath`, default `python3`), as the operator wrote
    /// it: resolved once at start-up (see [`crate::interpreter`]).
    pub python: PathBuf,
    /// The environment of the runtime's own process, from which helpers inherit the allowed
    /// variables only.
    pub host_env: BTreeMap<String, String>,
    /// Behave as on a platform without POSIX process groups (Windows): script calls that pass
    /// approval are `unsupported_platform`. On such a platform this is simply true.
    pub no_process_groups: bool,
    /// Profile `selection`/`trust`: the user, workspace and installed skill directories. `None`
    /// leaves the profile off; with it the profile's skills come from these directories.
    pub skill_dirs: Option<SkillDirs>,
    /// Profile `trust`: the local registry directory `skill_install` reads archives from.
    pub registry: Option<PathBuf>,
    /// Profile `selection`: how many skills may be active and the token budget they share.
    pub selection: Limits,
    /// Profile `hitl`: the approval-gated script host. With it the core's tools and prompt
    /// section give way to the profile's.
    pub hitl: Option<HitlConfig>,
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
            skill_dirs: None,
            registry: None,
            selection: Limits::default(),
            hitl: None,
        }
    }
}

impl Config {
    /// The helper timeout in milliseconds (SPEC.md `run.timeout`): the setting when it is a
    /// decimal integer of ASCII digits only, from 1 to [`MAX_TIMEOUT_MS`]; otherwise — unset,
    /// empty, `0`, negative, signed, spaced, fractional, exponent, not a number, too large —
    /// [`DEFAULT_TIMEOUT_MS`]. A typo can neither disable the limit nor make every call time out
    /// at once.
    pub fn timeout_ms(&self) -> u64 {
        (steps().timeout_ms)(self.timeout_ms.as_deref())
    }
}

/// A timeout setting read by the rules of SPEC.md `run.timeout` (also used by `hitl.timeout`).
// spec: run.timeout (ASCII digits only, 1 to one day, else the default)
pub fn parse_timeout_ms(setting: Option<&str>) -> u64 {
    setting
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms))
        .unwrap_or(DEFAULT_TIMEOUT_MS)
}

/// The configured skill directories of profile `trust` (absolute paths); `None` is not
/// configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillDirs {
    pub user: Option<PathBuf>,
    pub workspace: Option<PathBuf>,
    pub installed: Option<PathBuf>,
}

/// How many skills may be active at once by default (profile `selection`).
pub const DEFAULT_MAX_ACTIVE: u64 = 3;
/// The prompt token budget for active skills by default (profile `selection`).
pub const DEFAULT_MAX_CONTEXT_TOKENS: u64 = 4000;

/// The limits of one selection of profile `selection` (`config.selection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// At most this many skills are active.
    pub max_active: u64,
    /// The prompt token budget the active skills share.
    pub max_context_tokens: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_active: DEFAULT_MAX_ACTIVE,
            max_context_tokens: DEFAULT_MAX_CONTEXT_TOKENS,
        }
    }
}

/// Whether a human can be asked (profile `hitl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Session {
    Interactive,
    /// Nobody can answer: `run_skill_script` fails closed (`no_human`).
    NonInteractive,
    /// A setting other than exactly `interactive` or `non-interactive`: nobody is asked, as in a
    /// non-interactive session (fail closed).
    Unrecognized,
}

impl Session {
    /// The session a setting names (SPEC.md `hitl.confirm`): exactly `interactive` or
    /// `non-interactive`, compared byte for byte. Anything else (`non_interactive`,
    /// `NON-INTERACTIVE`, `interactive ` with a space, the empty text, `batch`) is
    /// [`Session::Unrecognized`]: a setting the runtime cannot read never means a human is there.
    // spec: hitl.confirm (the session setting fails closed)
    pub fn from_setting(text: &str) -> Session {
        match text {
            "interactive" => Session::Interactive,
            "non-interactive" => Session::NonInteractive,
            _ => Session::Unrecognized,
        }
    }
}

/// The settings of profile `hitl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitlConfig {
    /// `skills.enabled`: false leaves no trace (no tool, no prompt text, no scan).
    pub enabled: bool,
    /// `run_skill_script` is on the host's tool allowlist (high risk: off by default).
    pub script_tool_allowed: bool,
    pub session: Session,
    /// The script timeout setting as text, read as `run.timeout` reads its setting.
    pub timeout_ms: Option<String>,
}

impl HitlConfig {
    /// The script timeout in milliseconds (SPEC.md `hitl.timeout`, the grammar of `run.timeout`).
    // spec: hitl.timeout
    pub fn timeout_ms(&self) -> u64 {
        (steps().timeout_ms)(self.timeout_ms.as_deref())
    }
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// How a timeout setting is read.
    timeout_ms: fn(Option<&str>) -> u64,
}

const STEPS: Steps = Steps {
    timeout_ms: parse_timeout_ms,
};

steps_in_force!();

/// The defect of this module (see `crate::mutants`).
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::TimeoutSettingLenient) => &LENIENT,
            _ => &STEPS,
        }
    }

    const LENIENT: Steps = Steps {
        timeout_ms: lenient_timeout_ms,
    };

    /// `timeout-setting-lenient`: the setting trimmed (and a `+` dropped) before it is read.
    fn lenient_timeout_ms(setting: Option<&str>) -> u64 {
        parse_timeout_ms(setting.map(|t| t.trim().trim_start_matches('+')))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_settings() {
        let with = |t: Option<&str>| {
            Config {
                timeout_ms: t.map(str::to_owned),
                ..Config::default()
            }
            .timeout_ms()
        };
        assert_eq!(with(None), DEFAULT_TIMEOUT_MS);
        assert_eq!(with(Some("500")), 500);
        assert_eq!(with(Some("0500")), 500);
        assert_eq!(with(Some("1")), 1);
        assert_eq!(with(Some("86400000")), MAX_TIMEOUT_MS);
        for bad in [
            "",
            "0",
            "-5",
            "+5",
            " 500",
            "500 ",
            "1e3",
            "1.5",
            "abc",
            "86400001",
            "99999999999999999999999",
        ] {
            assert_eq!(with(Some(bad)), DEFAULT_TIMEOUT_MS, "{bad:?}");
        }
    }
}
