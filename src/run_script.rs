//! `skill_run_script(skill, script, args)`: runs an operator-approved Python helper.
//!
//! The checks of SPEC.md `run.*`, in order, the first failure deciding: input; skill; path (the
//! race-free walk of [`crate::read_reference`], restricted to `scripts/**.py`); trading guard;
//! replay guard; approval (the bytes are read once from the descriptor the walk opened, hashed,
//! and matched against the policy, which is parsed anew on every call); execution of exactly those
//! bytes through a fixed bootstrap, with a filtered environment and the limits of
//! [`crate::process`]. The limits and the order of the guards are [`crate::rules`]'.
//!
//! A tool (layer 2): it uses `read_reference`'s walk and the primitives `config`, `policy`,
//! `trading`, `process`, `interpreter`, `safe_fs`, `skill_path`, `tools` and `rules`.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::discovery::{Discovery, Guide};
use crate::interpreter::InterpreterError;
use crate::policy::Policy;
use crate::process::{self, Ending, Finished, HelperCommand};
use crate::read_reference::{find_skill, leaf_error, object_args, open_parent, string_arg};
use crate::rules::{rules, Guard, TradingCheck, SPEC};
use crate::safe_fs::{self, LeafError, Use};
use crate::skill_path::{self, PathScope};
use crate::tools::{ErrorCode, ToolError, ToolResult};
use crate::trading;

/// At most this many arguments.
pub const MAX_ARGS: usize = SPEC.run.max_args;
/// Each argument is at most this many UTF-8 bytes.
pub const MAX_ARG_BYTES: usize = SPEC.run.max_arg_bytes;
/// A helper larger than this is never read whole and never runs.
pub const MAX_HELPER_BYTES: u64 = SPEC.run.max_helper_bytes;
/// stdout and stderr together, in bytes.
pub const OUTPUT_CAP: usize = SPEC.run.output_cap;
/// `script_failed` carries this many characters (Unicode scalar values) of the end of stderr.
pub const STDERR_TAIL_CHARS: usize = SPEC.run.stderr_tail_chars;
/// The only variables a helper inherits from the runtime's environment.
pub use crate::rules::PASSED_ENV;

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
// spec: run.input.args
pub fn check_args(obj: &Map<String, Value>) -> Result<Vec<String>, ToolError> {
    let Some(value) = obj.get("args") else {
        return Ok(Vec::new());
    };
    let list = value
        .as_array()
        .ok_or_else(|| invalid_args("`args` must be a list of strings"))?;
    let limits = &rules().run;
    if list.len() > limits.max_args {
        return Err(invalid_args(format!("at most {MAX_ARGS} arguments")));
    }
    let has_control = steps().has_control;
    let mut out = Vec::with_capacity(list.len());
    for (i, a) in list.iter().enumerate() {
        let s = a
            .as_str()
            .ok_or_else(|| invalid_args(format!("argument {i} is not a string")))?;
        if s.len() > limits.max_arg_bytes {
            return Err(invalid_args(format!(
                "argument {i} is longer than {MAX_ARG_BYTES} bytes"
            )));
        }
        if has_control(s) {
            return Err(invalid_args(format!(
                "argument {i} contains a control character"
            )));
        }
        out.push(s.to_owned());
    }
    Ok(out)
}

/// Whether `text` holds a control character (Unicode Cc).
fn has_control(text: &str) -> bool {
    text.chars().any(char::is_control)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The last `n` characters of `text`.
pub fn tail_chars(text: &str, n: usize) -> &str {
    match text.char_indices().rev().nth(n.saturating_sub(1)) {
        Some((i, _)) if n > 0 => &text[i..],
        _ if n == 0 => "",
        _ => text,
    }
}

/// The interpreter as resolved at start-up, or why it did not resolve.
type Interpreter = Result<PathBuf, InterpreterError>;

/// How the helper is started: the command line, and what its stdin gets.
struct Invocation<'a> {
    command: HelperCommand,
    input: &'a [u8],
}

/// One call's checked input.
struct Call<'a> {
    skill: &'a str,
    script: &'a str,
    argv: Vec<String>,
    guide: &'a Guide,
    /// The script path's segments (`scripts/...`); the last is the helper's file name.
    segments: Vec<&'a str>,
}

impl Call<'_> {
    fn leaf(&self) -> &str {
        self.segments.last().copied().unwrap_or_default()
    }
}

/// Runs `skill_run_script`. `root_path` is the real path of the skills root; `interpreter` is the
/// configured interpreter as resolved at start-up.
// spec: run.order (input, skill, path, the guards, approval, then execution)
// spec: run.errors (each refusal below has the code of its check)
pub fn run_script(
    root: &OwnedFd,
    root_path: &Path,
    discovery: &Discovery,
    config: &Config,
    interpreter: &Interpreter,
    args: &Value,
) -> ToolResult {
    // 1. Input.
    // spec: run.input.fields
    let obj = object_args(args, &["skill", "script", "args"], &["skill", "script"])?;
    let skill = string_arg(obj, "skill")?;
    let script = string_arg(obj, "script")?;
    let argv = check_args(obj)?;
    let guide = find_skill(discovery, skill)?;

    // 2. Path: validated text, then the walk; the helper stays open from here on.
    // spec: run.path
    let segments = skill_path::validate(script, PathScope::Script)
        .map_err(|rule| ToolError::new(ErrorCode::InvalidPath, rule.explain()))?;
    let call = Call {
        skill,
        script,
        argv,
        guide,
        segments,
    };
    let (skill_dir_fd, helper) = open_helper(root, guide, &call.segments)?;

    // 3.–5. The guards (mandatory), approval, then the guards `rules` places after it (none).
    let limits = &rules().run;
    check_guards(limits.before_approval, config, &call)?;
    let bytes = approve(config, root_path, &call, helper)?;
    check_guards(limits.after_approval, config, &call)?;

    // Helpers need POSIX process groups for their lifecycle; without them nothing is spawned.
    // spec: run.platform
    if config.no_process_groups {
        return Err(ToolError::new(
            ErrorCode::UnsupportedPlatform,
            "script execution needs POSIX process groups (Linux or macOS)",
        ));
    }
    execute(root_path, config, interpreter, &call, skill_dir_fd, &bytes)
}

/// The walk of `run.path` from the skills root to the helper `segments` names (already
/// validated): the skill directory and the opened helper. A symlink anywhere is `invalid_path`,
/// a missing component `not_found`, anything but a regular file `invalid_path`.
// spec: run.path
fn open_helper(
    root: &OwnedFd,
    guide: &Guide,
    segments: &[&str],
) -> Result<(OwnedFd, OwnedFd), ToolError> {
    let access = safe_fs::access(Use::Helper);
    let (skill_dir_fd, parent) = open_parent(access, root, guide, segments)?;
    let leaf = segments.last().copied().unwrap_or_default();
    let helper = (access.open_file)(parent.as_fd(), OsStr::from_bytes(leaf.as_bytes()))
        .map_err(|e| leaf_error(e, MAX_HELPER_BYTES))?;
    Ok((skill_dir_fd, helper))
}

/// The SHA-256 (lowercase hex) that approval would match for the helper `script` of `guide`
/// if `skill_run_script` were called now: the same path checks and walk (`run.path`) and the
/// same capped read of the same bytes (`run.approval`), without a policy, the guards or a run.
/// An error is what the call would refuse with before approval; a helper larger than 1 MiB is
/// `not_approved` (it can never be approved). For operator tools (`skillspec allowlist`).
// spec: run.path
// spec: run.approval (the bytes that are hashed, under the same cap)
pub fn helper_sha256(root: &OwnedFd, guide: &Guide, script: &str) -> Result<String, ToolError> {
    let segments = skill_path::validate(script, PathScope::Script)
        .map_err(|rule| ToolError::new(ErrorCode::InvalidPath, rule.explain()))?;
    let (_, helper) = open_helper(root, guide, &segments)?;
    match safe_fs::read_capped(&helper, rules().run.max_helper_bytes) {
        Ok(bytes) => Ok(sha256_of(&bytes)),
        Err(LeafError::TooLarge) => Err(ToolError::new(
            ErrorCode::NotApproved,
            "the helper is larger than 1 MiB and can never be approved",
        )),
        Err(e) => Err(leaf_error(e, MAX_HELPER_BYTES)),
    }
}

/// Checks `guards` in order, the first failure deciding.
fn check_guards(guards: &[Guard], config: &Config, call: &Call<'_>) -> Result<(), ToolError> {
    for guard in guards {
        match guard {
            Guard::Trading => trading_guard(config, call)?,
            Guard::Replay => replay_guard(config)?,
        }
    }
    Ok(())
}

/// The trading guard: the helper's name without `.py`, then every argument, cut into folded
/// tokens (SPEC.md `run.trading`). Only `allow_trading` lifts it.
// spec: run.trading
fn trading_guard(config: &Config, call: &Call<'_>) -> Result<(), ToolError> {
    if config.allow_trading {
        return Ok(());
    }
    for check in rules().run.trading_checks {
        match check {
            TradingCheck::HelperName => {
                let leaf = call.leaf();
                if let Some(hit) = trading::check_helper_name(leaf) {
                    return Err(ToolError::new(
                        ErrorCode::BlockedTool,
                        format!("the helper name `{leaf}` is on the trading blocklist: {hit}"),
                    ));
                }
            }
            TradingCheck::Arguments => {
                if let Some((i, hit)) = (call.argv.iter().enumerate())
                    .find_map(|(i, a)| trading::check(a).map(|hit| (i, hit)))
                {
                    return Err(ToolError::new(
                        ErrorCode::BlockedTool,
                        format!("argument {i} is on the trading blocklist: {hit}"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The replay guard: anything but exactly `off` refuses.
// spec: run.replay
fn replay_guard(config: &Config) -> Result<(), ToolError> {
    let replay_off = steps().replay_off;
    match config.replay.as_deref().filter(|m| !replay_off(m)) {
        Some(mode) => Err(ToolError::new(
            ErrorCode::ReplayBlocked,
            format!(
                "replay mode is `{mode}`: helpers fetch live data and do not run during replay"
            ),
        )),
        None => Ok(()),
    }
}

/// Whether a set `SPORTS_SKILLS_REPLAY` lets helpers run: exactly `off`.
fn is_exactly_off(mode: &str) -> bool {
    mode == "off"
}

/// Approval: the helper is read once from the descriptor the walk opened, hashed, and matched
/// against the policy, which is parsed on every call. Returns the approved bytes.
// spec: run.approval (read, hashed and matched anew on every call)
// spec: policy.edited (likewise: no cached hash)
fn approve(
    config: &Config,
    root_path: &Path,
    call: &Call<'_>,
    helper: OwnedFd,
) -> Result<Vec<u8>, ToolError> {
    let (skill, script) = (call.skill, call.script);
    let policy = Policy::parse(config.script_allowlist.as_deref());
    // spec: run.not-approved (a `hint` and the skill's `approved_scripts`)
    let not_approved = |why: &str| {
        ToolError::new(ErrorCode::NotApproved, format!("{script} of {skill} is not approved: {why}"))
            .with(
                "hint",
                format!("Tell the user that running {script} of skill {skill} needs the operator's approval (an allowlist entry with this skill, script and the SHA-256 of the reviewed file); do not try to run it another way."),
            )
            .with("approved_scripts", policy.approved_scripts(skill))
    };
    let bytes = match safe_fs::read_capped(&helper, rules().run.max_helper_bytes) {
        Ok(b) => b,
        Err(LeafError::TooLarge) => {
            return Err(not_approved(
                "the helper is larger than 1 MiB and can never be approved",
            ))
        }
        Err(e) => return Err(leaf_error(e, MAX_HELPER_BYTES)),
    };
    drop(helper);
    let digest = (steps().digest)(root_path, call, &bytes);
    match (steps().verdict)(&policy, &call.guide.id, script, &digest) {
        Ok(()) => Ok(bytes),
        Err(why) => Err(not_approved(why)),
    }
}

/// The policy's verdict on a helper of `skill` at `script` whose bytes hash to `digest`: approved,
/// or why not.
fn policy_verdict(
    policy: &Policy,
    skill: &str,
    script: &str,
    digest: &str,
) -> Result<(), &'static str> {
    match policy {
        // spec: enable.scripts-deny-default
        Policy::Unset => Err("no script allowlist is configured"),
        Policy::Invalid(_) => Err("the script allowlist is malformed, so no script is approved"),
        Policy::Valid(_) if !policy.approves(skill, script, digest) => {
            Err("no allowlist entry matches this skill, script and content")
        }
        Policy::Valid(_) => Ok(()),
    }
}

/// The SHA-256 of the helper's bytes, in lowercase hex (computed anew on every call).
fn sha256_hex(_root_path: &Path, _call: &Call<'_>, bytes: &[u8]) -> String {
    sha256_of(bytes)
}

/// The SHA-256 of `bytes`, in lowercase hex.
fn sha256_of(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Execution, environment and limits (SPEC.md `run.exec`, `run.env`, `run.timeout`,
/// `run.output-cap`). The helper enters the skill directory through the descriptor the checked
/// walk opened; its real path is derived from the root's real path and the checked components,
/// never resolved again.
// spec: run.exec
fn execute(
    root_path: &Path,
    config: &Config,
    interpreter: &Interpreter,
    call: &Call<'_>,
    skill_dir_fd: OwnedFd,
    bytes: &[u8],
) -> ToolResult {
    let steps = steps();
    let mut skill_dir = root_path.to_path_buf();
    for c in &call.guide.components {
        skill_dir.push(OsStr::from_bytes(c));
    }
    // spec: run.spawn (an interpreter that did not resolve)
    let python = (steps.interpreter)(&skill_dir, config, interpreter)
        .map_err(|e| ToolError::new(ErrorCode::SpawnFailed, e.to_string()))?;
    let real_path: PathBuf = call.segments.iter().fold(skill_dir, |p, s| p.join(s));
    let skill_dir_fd = (steps.working_dir)(config, call.guide, skill_dir_fd);
    let Invocation { mut command, input } = (steps.invocation)(&python, &real_path, bytes);
    command.args(&call.argv).current_dir_fd(skill_dir_fd);
    // spec: run.env (built from scratch: the passed variables, then replay off)
    for key in rules().run.passed_env {
        if let Some(v) = config.host_env.get(*key) {
            command.env(key, v);
        }
    }
    command.env("SPORTS_SKILLS_REPLAY", "off");
    // spec: run.timeout
    let timeout = Duration::from_millis(config.timeout_ms());
    // spec: run.output-cap
    let cap = rules().run.output_cap;
    let finished = process::run_limited(&command, input, timeout, cap).map_err(|e| {
        ToolError::new(
            ErrorCode::SpawnFailed,
            format!("cannot start {}: {e}", python.display()),
        )
    })?;
    (steps.result)(call, finished, timeout)
}

/// The interpreter resolved at start-up (SPEC.md `run.exec`, "The interpreter").
fn resolved_interpreter(
    _skill_dir: &Path,
    _config: &Config,
    interpreter: &Interpreter,
) -> Interpreter {
    interpreter.clone()
}

/// The helper's working directory: the skill directory as the checked walk opened it.
fn walked_directory(_config: &Config, _guide: &Guide, skill_dir_fd: OwnedFd) -> OwnedFd {
    skill_dir_fd
}

/// `<python> -I -c <BOOTSTRAP> <real path>`, with the hashed bytes for its stdin.
// spec: run.isolation (`-I`, and the bootstrap keeps the directories off `sys.path`)
fn bootstrap_invocation<'a>(python: &Path, real_path: &Path, bytes: &'a [u8]) -> Invocation<'a> {
    let mut command = HelperCommand::new(python);
    command.arg("-I").arg("-c").arg(BOOTSTRAP).arg(real_path);
    Invocation {
        command,
        input: bytes,
    }
}

/// The call's result from how the helper ended.
fn result_of(call: &Call<'_>, finished: Finished, timeout: Duration) -> ToolResult {
    let stdout = String::from_utf8_lossy(&finished.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&finished.stderr).into_owned();
    match finished.ending {
        Ending::TimedOut => Err(ToolError::new(
            ErrorCode::Timeout,
            format!("the helper ran longer than {} ms", timeout.as_millis()),
        )
        .with("timeout_ms", timeout.as_millis() as u64)),
        // spec: run.output-cap (no partial output)
        Ending::OutputLimit => {
            let cap = rules().run.output_cap;
            Err(ToolError::new(
                ErrorCode::OutputLimit,
                format!("stdout and stderr together passed {cap} bytes"),
            )
            .with("limit_bytes", cap as u64))
        }
        // spec: run.success
        Ending::Exited { code: Some(0), .. } => {
            let mut out = Map::new();
            out.insert("skill".into(), Value::from(call.skill));
            out.insert("script".into(), Value::from(call.script));
            out.insert("exit_code".into(), Value::from(0));
            out.insert("stdout".into(), Value::from(stdout));
            out.insert("stderr".into(), Value::from(stderr));
            Ok(out)
        }
        // spec: run.failure
        Ending::Exited { code, signal } => {
            let tail = (steps().stderr_tail)(&stderr, rules().run.stderr_tail_chars);
            let mut e = ToolError::new(ErrorCode::ScriptFailed, "the helper failed")
                .with("exit_code", code.map_or(Value::Null, Value::from))
                .with("stderr", tail);
            if let Some(sig) = signal {
                e = e.with("signal", sig);
            }
            Err(e)
        }
    }
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// Whether an argument holds a character that refuses it.
    has_control: fn(&str) -> bool,
    /// Whether a set replay setting lets helpers run.
    replay_off: fn(&str) -> bool,
    /// The digest matched against the policy.
    digest: fn(&Path, &Call<'_>, &[u8]) -> String,
    /// The policy's verdict on a helper (skill, script, digest).
    verdict: fn(&Policy, &str, &str, &str) -> Result<(), &'static str>,
    /// The interpreter a call runs, from the skill directory, the configuration and the one
    /// resolved at start-up.
    interpreter: fn(&Path, &Config, &Interpreter) -> Interpreter,
    /// The directory the helper starts in, from the walked skill directory.
    working_dir: fn(&Config, &Guide, OwnedFd) -> OwnedFd,
    /// The command line and the helper's stdin.
    invocation: for<'a> fn(&Path, &Path, &'a [u8]) -> Invocation<'a>,
    /// The result of a finished run.
    result: fn(&Call<'_>, Finished, Duration) -> ToolResult,
    /// The end of stderr a failure carries.
    stderr_tail: fn(&str, usize) -> &str,
}

const STEPS: Steps = Steps {
    has_control,
    replay_off: is_exactly_off,
    digest: sha256_hex,
    verdict: policy_verdict,
    interpreter: resolved_interpreter,
    working_dir: walked_directory,
    invocation: bootstrap_invocation,
    result: result_of,
    stderr_tail: tail_chars,
};

steps_in_force!();

/// The defects of this module (see `crate::mutants`); those of limits, guard order and
/// environment are `rules`', those of the walk `safe_fs`'.
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::RunArgsControlAllowed) => &CONTROLS_ALLOWED,
            Some(Mutant::ReplayCaseInsensitiveOff) => &ANY_CASE_OFF,
            Some(Mutant::HashOnceCached) => &HASH_CACHED,
            Some(Mutant::ApprovalIgnored) => &APPROVAL_IGNORED,
            Some(Mutant::InterpreterPathFromSkillDir) => &INTERPRETER_FROM_SKILL_DIR,
            Some(Mutant::CwdByPath) => &CWD_BY_PATH,
            Some(Mutant::RunFromDisk) => &FROM_DISK,
            Some(Mutant::IsolationKeepsScriptDir) => &NOT_ISOLATED,
            Some(Mutant::OutputCapTruncates) => &CAP_TRUNCATES,
            Some(Mutant::FailureTailBytes) => &TAIL_BYTES,
            _ => &STEPS,
        }
    }

    const CONTROLS_ALLOWED: Steps = Steps {
        has_control: |_| false,
        ..STEPS
    };
    const ANY_CASE_OFF: Steps = Steps {
        replay_off: |m| m.eq_ignore_ascii_case("off"),
        ..STEPS
    };
    const HASH_CACHED: Steps = Steps {
        digest: first_digest,
        ..STEPS
    };
    const APPROVAL_IGNORED: Steps = Steps {
        verdict: |_, _, _, _| Ok(()),
        ..STEPS
    };
    const INTERPRETER_FROM_SKILL_DIR: Steps = Steps {
        interpreter: interpreter_from_skill_dir,
        ..STEPS
    };
    const CWD_BY_PATH: Steps = Steps {
        working_dir: directory_by_path,
        ..STEPS
    };
    const FROM_DISK: Steps = Steps {
        invocation: path_invocation,
        ..STEPS
    };
    const NOT_ISOLATED: Steps = Steps {
        invocation: unisolated_invocation,
        ..STEPS
    };
    const CAP_TRUNCATES: Steps = Steps {
        result: truncated_result,
        ..STEPS
    };
    const TAIL_BYTES: Steps = Steps {
        stderr_tail: tail_bytes,
        ..STEPS
    };

    /// `hash-once-cached`: the digest first computed for this helper (keyed by the root's real
    /// path, skill and script) for the rest of the process.
    fn first_digest(root_path: &Path, call: &Call<'_>, bytes: &[u8]) -> String {
        use std::collections::HashMap;
        use std::sync::Mutex;
        static CACHE: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);
        let key = format!("{}\0{}\0{}", root_path.display(), call.skill, call.script);
        let digest = sha256_hex(root_path, call, bytes);
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get_or_insert_with(HashMap::new)
            .entry(key)
            .or_insert(digest)
            .clone()
    }

    /// `interpreter-path-from-skill-dir`: a bare interpreter name is looked up in `PATH` at call
    /// time, the way a spawn in the skill directory does: a relative entry (`.`, an empty one) is
    /// taken from the skill directory.
    fn interpreter_from_skill_dir(
        skill_dir: &Path,
        config: &Config,
        interpreter: &Interpreter,
    ) -> Interpreter {
        use std::os::unix::fs::PermissionsExt;
        let name = &config.python;
        let planted = (!name.as_os_str().as_bytes().contains(&b'/'))
            .then(|| config.host_env.get("PATH"))
            .flatten()
            .and_then(|path| {
                path.split(':').find_map(|entry| {
                    let candidate = skill_dir.join(entry).join(name);
                    std::fs::metadata(&candidate)
                        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                        .then_some(candidate)
                })
            });
        planted.map_or_else(|| interpreter.clone(), Ok)
    }

    /// `cwd-by-path`: the skill directory opened by path from the configured skills root
    /// (following links).
    fn directory_by_path(config: &Config, guide: &Guide, skill_dir_fd: OwnedFd) -> OwnedFd {
        use rustix::fs::{Mode, OFlags};
        let Some(mut path) = config.skills_root.clone() else {
            return skill_dir_fd;
        };
        for c in &guide.components {
            path.push(OsStr::from_bytes(c));
        }
        rustix::fs::open(
            &path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap_or(skill_dir_fd)
    }

    /// `run-from-disk`: `<python> -I <real path>`, which reads the file again; stdin empty.
    fn path_invocation<'a>(python: &Path, real_path: &Path, _bytes: &'a [u8]) -> Invocation<'a> {
        let mut command = HelperCommand::new(python);
        command.arg("-I").arg(real_path);
        Invocation {
            command,
            input: &[],
        }
    }

    /// `isolation-keeps-script-dir`: without `-I`, and without the bootstrap's line that drops
    /// the working and helper directories from `sys.path`.
    fn unisolated_invocation<'a>(
        python: &Path,
        real_path: &Path,
        bytes: &'a [u8],
    ) -> Invocation<'a> {
        let bootstrap: Vec<&str> = BOOTSTRAP
            .lines()
            .filter(|l| !l.starts_with("sys.path[:]"))
            .collect();
        let mut command = HelperCommand::new(python);
        command.arg("-c").arg(bootstrap.join("\n")).arg(real_path);
        Invocation {
            command,
            input: bytes,
        }
    }

    /// `output-cap-truncates`: at the cap the run counts as a success with what was read.
    fn truncated_result(call: &Call<'_>, mut finished: Finished, timeout: Duration) -> ToolResult {
        if finished.ending == Ending::OutputLimit {
            finished.ending = Ending::Exited {
                code: Some(0),
                signal: None,
            };
        }
        result_of(call, finished, timeout)
    }

    /// `failure-tail-bytes`: the last `n` bytes of `text` (moved forward to a character
    /// boundary).
    fn tail_bytes(text: &str, n: usize) -> &str {
        let mut start = text.len().saturating_sub(n);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        &text[start..]
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
