//! skillspec adapter for the real ironclaw 0.24.0 (crate `ironclaw`, its public `skills` module).
//!
//! This module owns the transport: JSON lines on stdin/stdout (PROTOCOL.md, version 2), the
//! session state machine (`start`, `case_start`, `step`, `case_end`, `stop`) and the process
//! environment of the one case this process serves (`process_per_case: true`). What each
//! operation means in ironclaw's terms is in `host.rs`; README.md beside Cargo.toml lists every
//! mapping and every guess.

mod host;

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use serde_json::{Value, json};

use host::{Host, StepOutcome};

/// The only protocol version this adapter speaks.
const PROTOCOL_VERSION: u64 = 2;

/// The `implementation` object of the `started` answer.
fn implementation() -> Value {
    json!({
        "name": "ironclaw",
        "version": host::IRONCLAW_VERSION,
        "language": "rust",
        // `skip-report` is not declared: ironclaw drops a skill it cannot load with a log line
        // only, and its API says nothing about why.
        "features": ["selection", "trust"],
        // The gating checks read the process environment (PATH for `which`, the variables of
        // `requires.env`), so each case gets a process of its own whose environment is set once,
        // before any thread exists.
        "process_per_case": true,
    })
}

/// Where the session stands.
enum Phase {
    /// No case has started in this process yet.
    Fresh,
    /// The case with this `seq` is running.
    InCase { seq: u64, host: Box<Host> },
    /// The one case of this process has ended (or failed to start).
    Spent,
}

struct Session {
    phase: Phase,
    /// The numeric defaults of `ironclaw::config::SkillsConfig::default()`, read at start-up
    /// (before the case's environment replaces the process environment).
    defaults: host::Defaults,
}

/// What a request leads to.
enum Reply {
    Line(Value),
    Stop,
}

fn error(seq: Option<u64>, message: impl Into<String>) -> Reply {
    Reply::Line(json!({"type": "error", "seq": seq, "message": message.into()}))
}

impl Session {
    fn handle(&mut self, request: &Value) -> Reply {
        let seq = request.get("seq").and_then(Value::as_u64);
        let Some(kind) = request.get("type").and_then(Value::as_str) else {
            return error(seq, "request without a string `type`");
        };
        match kind {
            "start" => match request.get("protocol_version").and_then(Value::as_u64) {
                Some(PROTOCOL_VERSION) => Reply::Line(json!({
                    "type": "started",
                    "protocol_version": PROTOCOL_VERSION,
                    "implementation": implementation(),
                })),
                other => error(
                    None,
                    format!(
                        "protocol version {other:?} is not spoken here (only {PROTOCOL_VERSION})"
                    ),
                ),
            },
            "case_start" => self.case_start(seq, request),
            "step" => self.step(seq, request),
            "case_end" => match std::mem::replace(&mut self.phase, Phase::Spent) {
                Phase::InCase { seq: started, .. } if Some(started) == seq => {
                    Reply::Line(json!({"type": "case_ended", "seq": started}))
                }
                Phase::InCase { seq: started, host } => {
                    self.phase = Phase::InCase { seq: started, host };
                    error(
                        seq,
                        format!("case_end for seq {seq:?} while case {started} runs"),
                    )
                }
                _ => error(seq, "case_end without a running case"),
            },
            "stop" => Reply::Stop,
            other => error(seq, format!("unknown request type `{other}`")),
        }
    }

    fn case_start(&mut self, seq: Option<u64>, request: &Value) -> Reply {
        let Some(seq) = seq else {
            return error(None, "case_start without an integer `seq`");
        };
        if !matches!(self.phase, Phase::Fresh) {
            return error(
                Some(seq),
                "this adapter serves one case per process (it declared process_per_case: true)",
            );
        }
        // Whatever happens next, this process has had its case.
        self.phase = Phase::Spent;
        let config = request.get("config").unwrap_or(&Value::Null);
        let env = match host::parse_env(config) {
            Ok(env) => env,
            Err(message) => return error(Some(seq), message),
        };
        replace_environment(&env);
        match Host::start(config, &self.defaults) {
            Ok(host) => {
                self.phase = Phase::InCase {
                    seq,
                    host: Box::new(host),
                };
                Reply::Line(json!({"type": "case_started", "seq": seq}))
            }
            Err(message) => error(Some(seq), message),
        }
    }

    fn step(&mut self, seq: Option<u64>, request: &Value) -> Reply {
        let index = request.get("index").and_then(Value::as_u64);
        let (Some(seq), Some(index)) = (seq, index) else {
            return error(seq, "step without integer `seq` and `index`");
        };
        let Phase::InCase { seq: started, host } = &mut self.phase else {
            return error(Some(seq), "step without a running case");
        };
        if *started != seq {
            return error(
                Some(seq),
                format!("step for seq {seq} while case {started} runs"),
            );
        }
        let step = request.get("step").unwrap_or(&Value::Null);
        match host.step(step) {
            StepOutcome::Result(result) => Reply::Line(json!({
                "type": "step_result", "seq": seq, "index": index, "result": result,
            })),
            StepOutcome::Unserved(message) => error(Some(seq), message),
        }
    }
}

/// Makes `env` the whole process environment (the runtime's environment of PROTOCOL.md).
fn replace_environment(env: &[(String, String)]) {
    let old: Vec<_> = std::env::vars_os().map(|(key, _)| key).collect();
    for key in old {
        // SAFETY: the process is single-threaded here. `main` reads stdin and writes stdout on
        // its own thread and has created no other; the tokio runtime (whose blocking pool runs
        // ironclaw's gating checks) is built by `Host::start`, after this function returns, and
        // `Session::case_start` calls this function at most once per process (the `Fresh`
        // phase is left before the call). So nothing reads or writes the environment
        // concurrently.
        unsafe { std::env::remove_var(key) };
    }
    for (key, value) in env {
        // SAFETY: as above (same single-threaded moment). `parse_env` has checked that `key` is
        // non-empty and holds no `=` or NUL, and that `value` holds no NUL, so `set_var` does
        // not panic.
        unsafe { std::env::set_var(key, value) };
    }
}

fn write_line(out: &mut impl Write, value: &Value) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")?;
    out.flush()
}

fn main() -> ExitCode {
    let mut session = Session {
        phase: Phase::Fresh,
        defaults: host::Defaults::from_ironclaw(),
    };
    let mut input = io::stdin().lock();
    let mut out = io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return ExitCode::SUCCESS,
            Ok(_) => {}
            Err(e) => {
                eprintln!("ironclaw adapter: reading stdin: {e}");
                return ExitCode::FAILURE;
            }
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let reply = match serde_json::from_slice::<Value>(text) {
            Ok(request) => session.handle(&request),
            Err(e) => error(None, format!("request is not JSON: {e}")),
        };
        match reply {
            Reply::Line(value) => {
                if let Err(e) = write_line(&mut out, &value) {
                    eprintln!("ironclaw adapter: writing stdout: {e}");
                    return ExitCode::FAILURE;
                }
            }
            Reply::Stop => return ExitCode::SUCCESS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(reply: Reply) -> Value {
        match reply {
            Reply::Line(v) => v,
            Reply::Stop => panic!("expected a line, got stop"),
        }
    }

    fn session() -> Session {
        Session {
            phase: Phase::Fresh,
            defaults: host::Defaults::from_ironclaw(),
        }
    }

    #[test]
    fn handshake_declares_only_what_ironclaw_serves() {
        let v = line(session().handle(&json!({"type": "start", "protocol_version": 2})));
        assert_eq!(v["type"], "started");
        assert_eq!(v["implementation"]["version"], "0.24.0");
        assert_eq!(
            v["implementation"]["features"],
            json!(["selection", "trust"])
        );
        assert_eq!(v["implementation"]["process_per_case"], true);
    }

    #[test]
    fn other_protocol_versions_are_refused() {
        let v = line(session().handle(&json!({"type": "start", "protocol_version": 3})));
        assert_eq!(v["type"], "error");
    }

    #[test]
    fn steps_outside_a_case_and_unknown_requests_are_errors() {
        let mut s = session();
        let v = line(
            s.handle(&json!({"type": "step", "seq": 1, "index": 0, "step": {"op": "discover"}})),
        );
        assert_eq!(v["type"], "error");
        let v = line(s.handle(&json!({"type": "dance", "seq": 1})));
        assert_eq!(v["type"], "error");
        assert!(matches!(s.handle(&json!({"type": "stop"})), Reply::Stop));
    }
}
