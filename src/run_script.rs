//! `skill_run_script(skill, script, args)`: runs an operator-approved Python helper.
//!
//! The checks of SPEC.md `run.*`, in order, the first failure deciding: input; skill; path (the
//! race-free walk of [`crate::read_reference`], restricted to `scripts/**.py`); trading guard;
//! replay guard; approval (the bytes are read once from the descriptor the walk opened, hashed,
//! and matched against the policy, which is parsed anew on every call); execution of exactly those
//! bytes through a fixed bootstrap, with a filtered environment and the limits of
//! [`crate::process`].

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::discovery::Discovery;
use crate::interpreter::InterpreterError;
use crate::mutants::{self, active, Mutant};
use crate::policy::Policy;
use crate::process::{self, Ending, HelperCommand};
use crate::read_reference::{find_skill, leaf_error, object_args, open_parent, string_arg};
use crate::safe_fs::{self, LeafError};
use crate::skill_path::{self, PathScope};
use crate::tools::{ErrorCode, ToolError, ToolResult};
use crate::trading;

/// At most this many arguments.
pub const MAX_ARGS: usize = 32;
/// Each argument is at most this many UTF-8 bytes.
pub const MAX_ARG_BYTES: usize = 4096;
/// A helper larger than this is never read whole and never runs.
pub const MAX_HELPER_BYTES: u64 = 1024 * 1024;
/// stdout and stderr together, in bytes.
pub const OUTPUT_CAP: usize = 262_144;
/// `script_failed` carries this many characters (Unicode scalar values) of the end of stderr.
pub const STDERR_TAIL_CHARS: usize = 4000;
/// The only variables a helper inherits from the runtime's environment.
pub const PASSED_ENV: [&str; 9] = [
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SYSTEMROOT",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// The fixed bootstrap passed with `-I -c`. It reads the verified helper bytes from stdin,
/// replaces stdin with the null device, drops the current directory from `sys.path`, sets
/// `sys.argv` to the helper's real path and the arguments, and runs the bytes as `__main__` with
/// `__file__` set to the real path.
pub const BOOTSTRAP: &str = r#"import os, sys
_path = sys.argv[1]
_source = sys.stdin.buffer.read()
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
sys.stdin = open(0, "r", closefd=False)
sys.argv = sys.argv[1:]
sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd(), os.path.dirname(_path))]
_main = type(sys)("__main__")  # the module type, without importing `types`
_main.__file__ = _path
_main.__builtins__ = __builtins__
sys.modules["__main__"] = _main
_code = compile(_source, _path, "exec", dont_inherit=True)
del _source
exec(_code, _main.__dict__)
"#;

fn invalid_args(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::InvalidArgs, message)
}

/// Checks the `args` argument: a list of at most 32 strings of at most 4096 bytes without
/// control characters. A missing `args` is an empty list.
pub fn check_args(obj: &Map<String, Value>) -> Result<Vec<String>, ToolError> {
    let Some(value) = obj.get("args") else {
        return Ok(Vec::new());
    };
    let list = value
        .as_array()
        .ok_or_else(|| invalid_args("`args` must be a list of strings"))?;
    if list.len() > MAX_ARGS + usize::from(active(Mutant::RunArgsLimitOffByOne)) {
        return Err(invalid_args(format!("at most {MAX_ARGS} arguments")));
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, a) in list.iter().enumerate() {
        let s = a
            .as_str()
            .ok_or_else(|| invalid_args(format!("argument {i} is not a string")))?;
        if s.len() > MAX_ARG_BYTES {
            return Err(invalid_args(format!(
                "argument {i} is longer than {MAX_ARG_BYTES} bytes"
            )));
        }
        if s.chars().any(char::is_control) && !active(Mutant::RunArgsControlAllowed) {
            return Err(invalid_args(format!(
                "argument {i} contains a control character"
            )));
        }
        out.push(s.to_owned());
    }
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The last `n` characters of `text`.
pub fn tail_chars(text: &str, n: usize) -> &str {
    if active(Mutant::FailureTailBytes) {
        return mutants::tail_bytes(text, n);
    }
    match text.char_indices().rev().nth(n.saturating_sub(1)) {
        Some((i, _)) if n > 0 => &text[i..],
        _ if n == 0 => "",
        _ => text,
    }
}

/// Runs `skill_run_script`. `root_path` is the real path of the skills root; `interpreter` is the
/// configured interpreter as resolved at start-up.
pub fn run_script(
    root: &OwnedFd,
    root_path: &Path,
    discovery: &Discovery,
    config: &Config,
    interpreter: &Result<PathBuf, InterpreterError>,
    args: &Value,
) -> ToolResult {
    // 1. Input.
    let obj = object_args(args, &["skill", "script", "args"], &["skill", "script"])?;
    let skill = string_arg(obj, "skill")?;
    let script = string_arg(obj, "script")?;
    let argv = check_args(obj)?;
    let guide = find_skill(discovery, skill)?;

    // 2. Path: validated text, then the walk; the helper stays open from here on.
    let segments = skill_path::validate(script, PathScope::Script)
        .map_err(|rule| ToolError::new(ErrorCode::InvalidPath, rule.explain()))?;
    let (skill_dir_fd, parent) = if active(Mutant::RunChecksLeafOnly) {
        mutants::open_parent_following(root, guide, &segments)?
    } else {
        open_parent(root, guide, &segments)?
    };
    let leaf = segments.last().copied().unwrap_or_default();
    let helper = safe_fs::open_regular(parent.as_fd(), OsStr::from_bytes(leaf.as_bytes()))
        .map_err(|e| leaf_error(e, MAX_HELPER_BYTES))?;

    // 3. Trading guard (mandatory): the helper's name without `.py`, then every argument, cut
    // into folded tokens (SPEC.md `run.trading`). Only `allow_trading` lifts it.
    let trading_guard = || -> Result<(), ToolError> {
        if config.allow_trading {
            return Ok(());
        }
        if let Some(hit) =
            trading::check_helper_name(leaf).filter(|_| !active(Mutant::TradingArgsOnly))
        {
            return Err(ToolError::new(
                ErrorCode::BlockedTool,
                format!("the helper name `{leaf}` is on the trading blocklist: {hit}"),
            ));
        }
        if let Some((i, hit)) = argv
            .iter()
            .enumerate()
            .filter(|_| !active(Mutant::TradingNameOnly))
            .find_map(|(i, a)| trading::check(a).map(|hit| (i, hit)))
        {
            return Err(ToolError::new(
                ErrorCode::BlockedTool,
                format!("argument {i} is on the trading blocklist: {hit}"),
            ));
        }
        Ok(())
    };
    if !active(Mutant::TradingAfterApproval) {
        trading_guard()?;
    }

    // 4. Replay guard (mandatory): anything but exactly `off` refuses before approval.
    let replay_guard = || match config.replay.as_deref().filter(|m| {
        *m != "off" && !(active(Mutant::ReplayCaseInsensitiveOff) && m.eq_ignore_ascii_case("off"))
    }) {
        Some(mode) => Err(ToolError::new(
            ErrorCode::ReplayBlocked,
            format!(
                "replay mode is `{mode}`: helpers fetch live data and do not run during replay"
            ),
        )),
        None => Ok(()),
    };
    if !active(Mutant::ReplayAfterApproval) {
        replay_guard()?;
    }

    // 5. Approval: read once, hash, match; the policy is parsed on every call.
    let policy = Policy::parse(config.script_allowlist.as_deref());
    let not_approved = |why: &str| {
        ToolError::new(ErrorCode::NotApproved, format!("{script} of {skill} is not approved: {why}"))
            .with(
                "hint",
                format!("Tell the user that running {script} of skill {skill} needs the operator's approval (an allowlist entry with this skill, script and the SHA-256 of the reviewed file); do not try to run it another way."),
            )
            .with("approved_scripts", policy.approved_scripts(skill))
    };
    let bytes = match safe_fs::read_capped(&helper, MAX_HELPER_BYTES) {
        Ok(b) => b,
        Err(LeafError::TooLarge) => {
            return Err(not_approved(
                "the helper is larger than 1 MiB and can never be approved",
            ))
        }
        Err(e) => return Err(leaf_error(e, MAX_HELPER_BYTES)),
    };
    drop(helper);
    let mut digest = hex(&Sha256::digest(&bytes));
    if active(Mutant::HashOnceCached) {
        digest = mutants::first_digest(root_path, skill, script, digest);
    }
    match &policy {
        Policy::Unset => return Err(not_approved("no script allowlist is configured")),
        Policy::Invalid(_) => {
            return Err(not_approved(
                "the script allowlist is malformed, so no script is approved",
            ))
        }
        Policy::Valid(_) if !policy.approves(&guide.id, script, &digest) => {
            return Err(not_approved(
                "no allowlist entry matches this skill, script and content",
            ))
        }
        Policy::Valid(_) => {}
    }
    if active(Mutant::TradingAfterApproval) {
        trading_guard()?;
    }
    if active(Mutant::ReplayAfterApproval) {
        replay_guard()?;
    }

    // Helpers need POSIX process groups for their lifecycle; without them nothing is spawned.
    if config.no_process_groups {
        return Err(ToolError::new(
            ErrorCode::UnsupportedPlatform,
            "script execution needs POSIX process groups (Linux or macOS)",
        ));
    }

    // 6.–8. Execution, environment, limits. The helper enters the skill directory through the
    // descriptor the checked walk opened; its real path is derived from the root's real path and
    // the checked components, never resolved again.
    let mut skill_dir = root_path.to_path_buf();
    for c in &guide.components {
        skill_dir.push(OsStr::from_bytes(c));
    }
    let planted = active(Mutant::InterpreterPathFromSkillDir)
        .then(|| mutants::lookup_from(&skill_dir, &config.python, config.host_env.get("PATH")))
        .flatten();
    let python = match &planted {
        Some(p) => p,
        None => interpreter
            .as_ref()
            .map_err(|e| ToolError::new(ErrorCode::SpawnFailed, e.to_string()))?,
    };
    let real_path: PathBuf = segments.iter().fold(skill_dir, |p, s| p.join(s));
    let skill_dir_fd = match active(Mutant::CwdByPath) {
        true => mutants::open_by_configured_path(config, &guide.components).unwrap_or(skill_dir_fd),
        false => skill_dir_fd,
    };
    let mut command = HelperCommand::new(python);
    if active(Mutant::RunFromDisk) {
        command.arg("-I").arg(&real_path);
    } else if active(Mutant::IsolationKeepsScriptDir) {
        command
            .arg("-c")
            .arg(mutants::bootstrap_keeping_path(BOOTSTRAP))
            .arg(&real_path);
    } else {
        command.arg("-I").arg("-c").arg(BOOTSTRAP).arg(&real_path);
    }
    command.args(&argv).current_dir_fd(skill_dir_fd);
    for key in PASSED_ENV {
        if let Some(v) = config.host_env.get(key) {
            command.env(key, v);
        }
    }
    for (key, m) in [
        ("HOME", Mutant::EnvLeaksHome),
        ("GITHUB_TOKEN", Mutant::EnvLeaksCredential),
    ] {
        if let Some(v) = config.host_env.get(key).filter(|_| active(m)) {
            command.env(key, v);
        }
    }
    command.env("SPORTS_SKILLS_REPLAY", "off");
    let timeout = Duration::from_millis(config.timeout_ms());
    let input = match active(Mutant::RunFromDisk) {
        true => &[][..],
        false => &bytes[..],
    };
    let cap = OUTPUT_CAP - usize::from(active(Mutant::OutputCapExclusive));
    let finished = process::run_limited(&command, input, timeout, cap).map_err(|e| {
        ToolError::new(
            ErrorCode::SpawnFailed,
            format!("cannot start {}: {e}", python.display()),
        )
    })?;
    let stdout = String::from_utf8_lossy(&finished.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&finished.stderr).into_owned();
    let ending = match finished.ending {
        Ending::OutputLimit if active(Mutant::OutputCapTruncates) => Ending::Exited {
            code: Some(0),
            signal: None,
        },
        other => other,
    };
    match ending {
        Ending::TimedOut => Err(ToolError::new(
            ErrorCode::Timeout,
            format!("the helper ran longer than {} ms", timeout.as_millis()),
        )
        .with("timeout_ms", timeout.as_millis() as u64)),
        Ending::OutputLimit => Err(ToolError::new(
            ErrorCode::OutputLimit,
            format!("stdout and stderr together passed {OUTPUT_CAP} bytes"),
        )
        .with("limit_bytes", OUTPUT_CAP as u64)),
        Ending::Exited { code: Some(0), .. } => {
            let mut out = Map::new();
            out.insert("skill".into(), Value::from(skill));
            out.insert("script".into(), Value::from(script));
            out.insert("exit_code".into(), Value::from(0));
            out.insert("stdout".into(), Value::from(stdout));
            out.insert("stderr".into(), Value::from(stderr));
            Ok(out)
        }
        Ending::Exited { code, signal } => {
            let mut e = ToolError::new(ErrorCode::ScriptFailed, "the helper failed")
                .with("exit_code", code.map_or(Value::Null, Value::from))
                .with("stderr", tail_chars(&stderr, STDERR_TAIL_CHARS));
            if let Some(sig) = signal {
                e = e.with("signal", sig);
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails() {
        assert_eq!(tail_chars("abcdef", 3), "def");
        assert_eq!(tail_chars("ab", 3), "ab");
        assert_eq!(tail_chars("ééé", 2), "éé");
        assert_eq!(tail_chars("abc", 0), "");
    }
}
