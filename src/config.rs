//! The runtime's configuration: what an operator sets (environment variables in the original
//! runtime, fields here so that a host or a test can set them without touching the process
//! environment).

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
    pub skill_dirs: Option<crate::trust::SkillDirs>,
    /// Profile `trust`: the local registry directory `skill_install` reads archives from.
    pub registry: Option<PathBuf>,
    /// Profile `selection`: how many skills may be active and the token budget they share.
    pub selection: crate::selection::Limits,
    /// Profile `hitl`: the approval-gated script host. With it the core's tools and prompt
    /// section give way to the profile's.
    pub hitl: Option<crate::hitl::HitlConfig>,
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
            selection: crate::selection::Limits::default(),
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
        parse_timeout_ms(self.timeout_ms.as_deref())
    }
}

/// A timeout setting read by the rules of SPEC.md `run.timeout` (also used by `hitl.timeout`).
pub fn parse_timeout_ms(setting: Option<&str>) -> u64 {
    setting
        .map(
            |t| match crate::mutants::active(crate::mutants::Mutant::TimeoutSettingLenient) {
                true => t.trim().trim_start_matches('+'),
                false => t,
            },
        )
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms))
        .unwrap_or(DEFAULT_TIMEOUT_MS)
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
