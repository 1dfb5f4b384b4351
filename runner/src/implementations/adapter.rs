//! The runner's side of the adapter protocol: an [`Implementation`] that is a subprocess.
//!
//! This module owns the conversation (handshake, one request per case event, checking that each
//! answer is the one expected); [`transport`] owns the process and its pipes (bounded lines,
//! deadlines on writes and reads, the stderr tail, stop → SIGTERM → SIGKILL).
//!
//! Whatever breaks an exchange (a timeout, a line that is not UTF-8 or not a protocol message,
//! the wrong `seq`/`index`, an unsolicited line, a closed pipe) stops the adapter at once and is
//! reported as [`ImplError::Broken`] with the request left unanswered and the stderr tail. The
//! next `start_case` starts a fresh adapter and repeats the handshake.

pub mod transport;

use std::io::Write;
use std::time::Duration;

use serde::Serialize;

use crate::implementations::protocol::{
    ImplInfo, Refusal, Response, StepOutcome, WireConfig, WireStep, PROTOCOL_VERSION,
};
use crate::implementations::{Fault, ImplError, Implementation, RequestId};
use transport::Transport;

/// Longest message text taken from an adapter into a report.
const MAX_MESSAGE: usize = 4096;

/// A request as sent, borrowing its parts (a step can carry megabytes of arguments). Serializes
/// exactly like [`crate::implementations::protocol::Request`].
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Outgoing<'a> {
    Start {
        protocol_version: u32,
    },
    CaseStart {
        seq: u64,
        case: &'a str,
        root: &'a str,
        config: &'a WireConfig,
    },
    Step {
        seq: u64,
        index: usize,
        step: &'a WireStep,
    },
    CaseEnd {
        seq: u64,
    },
}

impl Outgoing<'_> {
    fn id(&self) -> RequestId {
        let (kind, seq, index) = match self {
            Outgoing::Start { .. } => ("start", None, None),
            Outgoing::CaseStart { seq, .. } => ("case_start", Some(*seq), None),
            Outgoing::Step { seq, index, .. } => ("step", Some(*seq), Some(*index)),
            Outgoing::CaseEnd { seq } => ("case_end", Some(*seq), None),
        };
        RequestId { kind, seq, index }
    }
}

/// `text`, cut to [`MAX_MESSAGE`] bytes.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_MESSAGE {
        return text.to_owned();
    }
    let mut cut = MAX_MESSAGE;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..cut], text.len())
}

/// An implementation reached through the adapter protocol.
pub struct Adapter {
    command: String,
    timeout: Duration,
    /// The running adapter; `None` after it broke, until the next case starts it again.
    transport: Option<Transport>,
    info: ImplInfo,
    seq: u64,
    /// The runtime's message when it refused to start for the current case: every step of the
    /// case is then refused with it, and none is sent (PROTOCOL.md, "Refusals").
    refused_start: Option<String>,
    /// Where every message sent and received is logged (`--record`), one JSON object a line.
    record: Option<std::fs::File>,
}

impl Adapter {
    /// Starts `command` and performs the handshake. With `record`, every message in both
    /// directions is appended there as `{"direction":"sent"|"received","message":..}`.
    pub fn spawn(
        command: &str,
        timeout: Duration,
        record: Option<std::fs::File>,
    ) -> Result<Adapter, ImplError> {
        let mut adapter = Adapter {
            command: command.to_owned(),
            timeout,
            transport: None,
            info: ImplInfo::default(),
            seq: 0,
            refused_start: None,
            record,
        };
        adapter.start()?;
        Ok(adapter)
    }

    /// Starts the process and performs the handshake.
    fn start(&mut self) -> Result<(), ImplError> {
        self.transport = None;
        let transport = Transport::spawn(&self.command)
            .map_err(|e| ImplError::broken(format!("cannot start `{}`: {e}", self.command)))?;
        self.transport = Some(transport);
        let request = Outgoing::Start {
            protocol_version: PROTOCOL_VERSION,
        };
        match self.exchange(&request)? {
            Response::Started {
                protocol_version,
                implementation,
            } => {
                if protocol_version != PROTOCOL_VERSION {
                    return Err(self.fail(
                        &request,
                        format!(
                            "the adapter speaks protocol version {protocol_version}, the runner {PROTOCOL_VERSION}"
                        ),
                    ));
                }
                self.info = implementation;
                Ok(())
            }
            // An adapter that refuses the handshake is of no use.
            Response::Error { message, .. } => Err(self.fail(
                &request,
                format!("the adapter refused the handshake: {message}"),
            )),
            other => Err(self.unexpected(&request, "started", &other)),
        }
    }

    /// Stops the adapter and describes what broke: the message, the request left unanswered,
    /// and the stderr tail.
    fn fail(&mut self, request: &Outgoing<'_>, message: String) -> ImplError {
        self.fail_after(request, message, false)
    }

    /// [`Self::fail`], saying whether the request's time ran out.
    fn fail_after(
        &mut self,
        request: &Outgoing<'_>,
        message: String,
        timed_out: bool,
    ) -> ImplError {
        let stderr_tail = self.transport.take().map(|mut t| {
            t.shutdown();
            t.stderr_tail()
        });
        ImplError::Broken(Fault {
            message: bounded(&message),
            unanswered: Some(request.id()),
            stderr_tail,
            timed_out,
        })
    }

    fn unexpected(&mut self, request: &Outgoing<'_>, wanted: &str, got: &Response) -> ImplError {
        match got {
            Response::Error { message, .. } => ImplError::Refused(bounded(message)),
            other => {
                let message = format!(
                    "expected a `{wanted}` response, got {}",
                    crate::cases::expect::show(&serde_json::to_value(other).unwrap_or_default())
                );
                self.fail(request, message)
            }
        }
    }

    fn log(&mut self, direction: &str, line: &[u8]) {
        if let Some(f) = &mut self.record {
            let text = String::from_utf8_lossy(line);
            let message: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|_| serde_json::Value::from(text.as_ref()));
            let _ = writeln!(
                f,
                "{}",
                serde_json::json!({"direction": direction, "message": message})
            );
        }
    }

    /// Sends one request and reads one response; any failure stops the adapter.
    fn exchange(&mut self, request: &Outgoing<'_>) -> Result<Response, ImplError> {
        let mut text = serde_json::to_vec(request).map_err(|e| ImplError::broken(e.to_string()))?;
        self.log("sent", &text);
        text.push(b'\n');
        let timeout = self.timeout;
        let Some(t) = self.transport.as_mut() else {
            return Err(ImplError::Broken(Fault {
                message: "the adapter is not running".into(),
                unanswered: Some(request.id()),
                stderr_tail: None,
                timed_out: false,
            }));
        };
        let started = std::time::Instant::now();
        let line = match t.exchange(&text, timeout) {
            Ok(line) => line,
            Err(message) => {
                // The transport gives up at the deadline; an error after it is the timeout.
                let timed_out = started.elapsed() >= timeout;
                return Err(self.fail_after(request, message, timed_out));
            }
        };
        drop(text);
        self.log("received", &line);
        let parsed = decode_response(line);
        parsed.map_err(|m| self.fail(request, m))
    }
}

/// Decodes one response line as the runner reads it from an adapter: UTF-8, then JSON, then a
/// protocol message; every failure is a message quoting (a bounded preview of) the line.
pub fn decode_response(line: Vec<u8>) -> Result<Response, String> {
    let value = match std::str::from_utf8(&line) {
        Err(e) => Err(format!(
            "the adapter sent a response line that is not valid UTF-8 (at byte {}): {}",
            e.valid_up_to(),
            transport::preview(&line)
        )),
        Ok(s) => serde_json::from_str::<serde_json::Value>(s).map_err(|e| {
            format!(
                "the adapter sent a line that is not JSON ({e}): {}",
                transport::preview(&line)
            )
        }),
    };
    // Through a `Value`, so that a long line is never held in three copies at once.
    drop(line);
    value.and_then(|v| {
        serde_json::from_value::<Response>(v)
            .map_err(|e| format!("the adapter sent a line that is not a protocol message: {e}"))
    })
}

/// The runtime's message of a refusal, bounded; an empty one is a protocol error (an adapter
/// maps a runtime's signal, and the signal's text travels with it).
fn refusal_message(r: Refusal) -> Result<String, String> {
    if r.message.trim().is_empty() {
        return Err("a `refused` object has an empty `message`: it must carry the runtime's own message (PROTOCOL.md, \"Refusals\")".into());
    }
    Ok(bounded(&r.message))
}

impl Implementation for Adapter {
    fn info(&self) -> &ImplInfo {
        &self.info
    }

    fn start_case(
        &mut self,
        seq: u64,
        case_id: &str,
        root: &str,
        config: &WireConfig,
    ) -> Result<(), ImplError> {
        self.seq = seq;
        if self.transport.is_none() {
            // It broke during an earlier case: a fresh one for this case.
            self.start().map_err(|e| match e {
                ImplError::Broken(mut f) => {
                    f.message = format!("restarting the adapter failed: {}", f.message);
                    ImplError::Broken(f)
                }
                refused => refused,
            })?;
        }
        let request = Outgoing::CaseStart {
            seq,
            case: case_id,
            root,
            config,
        };
        self.refused_start = None;
        match self.exchange(&request)? {
            Response::CaseStarted { seq: s, refused } if s == seq => {
                if let Some(r) = refused {
                    let message = refusal_message(r).map_err(|m| self.fail(&request, m))?;
                    self.refused_start = Some(format!("the runtime refused to start: {message}"));
                }
                Ok(())
            }
            other => Err(self.unexpected(&request, "case_started", &other)),
        }
    }

    fn step(&mut self, index: usize, step: &WireStep) -> Result<StepOutcome, ImplError> {
        if let Some(message) = &self.refused_start {
            // spec: PROTOCOL.md "Refusals": a runtime that did not start refuses every step.
            return Ok(StepOutcome::Refused(message.clone()));
        }
        let seq = self.seq;
        let request = Outgoing::Step { seq, index, step };
        match self.exchange(&request)? {
            Response::StepResult {
                seq: s,
                index: i,
                result,
                refused,
            } if s == seq && i == index => match (result, refused) {
                (Some(result), None) => {
                    StepOutcome::from_wire(step, result).map_err(|m| self.fail(&request, m))
                }
                (None, Some(r)) => match refusal_message(r) {
                    Ok(message) => Ok(StepOutcome::Refused(message)),
                    Err(m) => Err(self.fail(&request, m)),
                },
                (Some(_), Some(_)) => Err(self.fail(
                    &request,
                    "a `step_result` has both `result` and `refused` (exactly one is allowed)"
                        .into(),
                )),
                (None, None) => Err(self.fail(
                    &request,
                    "a `step_result` has neither `result` nor `refused`".into(),
                )),
            },
            other => Err(self.unexpected(&request, "step_result", &other)),
        }
    }

    fn end_case(&mut self) -> Result<(), ImplError> {
        let seq = self.seq;
        let request = Outgoing::CaseEnd { seq };
        match self.exchange(&request)? {
            Response::CaseEnded { seq: s } if s == seq => {
                if self.info.process_per_case {
                    // Stopped the documented way (`stop`, then SIGTERM, then SIGKILL); the next
                    // case starts a fresh process.
                    if let Some(mut t) = self.transport.take() {
                        t.shutdown();
                    }
                }
                Ok(())
            }
            other => Err(self.unexpected(&request, "case_ended", &other)),
        }
    }
}
