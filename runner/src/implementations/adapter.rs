//! The runner's side of the adapter protocol: an [`Implementation`] that is a subprocess.
//!
//! This module owns the conversation (handshake, one request per case event, checking that each
//! answer is the one expected); [`crate::protocol::transport`] owns the process and its pipes
//! (bounded lines, deadlines on writes and reads, the stderr tail, stop → SIGTERM → SIGKILL).
//!
//! Whatever breaks an exchange (a timeout, a line that is not UTF-8 or not a protocol message,
//! the wrong `seq`/`index`, an unsolicited line, a closed pipe) stops the adapter at once and is
//! reported as [`ImplError::Broken`] with a typed [`Fault`]: the request left unanswered, the
//! stderr tail, how the adapter had ended. The next `start_case` starts a fresh adapter and
//! repeats the handshake.
//!
//! An [`Inspector`] (`skillspec smoke`'s checks) sees every exchange on the way; with one, the
//! adapter is *lenient* where it still can be (bytes nobody asked for and lines that are no JSON
//! object are skipped, a wrong `seq`, `index` or `protocol_version` is accepted), so that one pass
//! finds as many problems as possible.
//!
//! Clauses: PROTOCOL.md (Handshake, Messages, "Refusals", Shutdown, `process_per_case`).

use std::io::Write;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::implementations::{ImplError, Implementation};
use crate::protocol::fault::{bounded, Fault, FaultKind, RequestId};
use crate::protocol::transport::{self, Shutdown, Transport, TransportError};
use crate::protocol::{
    ImplInfo, Refusal, Response, StepOutcome, WireConfig, WireStep, PROTOCOL_VERSION,
};

/// A request as sent, borrowing its parts (a step can carry megabytes of arguments). Serializes
/// exactly like [`crate::protocol::Request`].
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outgoing<'a> {
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
    /// Its `type`, and `seq`/`index` where it has them.
    pub fn id(&self) -> RequestId {
        let (kind, seq, index) = match self {
            Outgoing::Start { .. } => ("start", None, None),
            Outgoing::CaseStart { seq, .. } => ("case_start", Some(*seq), None),
            Outgoing::Step { seq, index, .. } => ("step", Some(*seq), Some(*index)),
            Outgoing::CaseEnd { seq } => ("case_end", Some(*seq), None),
        };
        RequestId { kind, seq, index }
    }

    /// The `type` of the answer it calls for.
    pub fn answer_type(&self) -> &'static str {
        match self {
            Outgoing::Start { .. } => "started",
            Outgoing::CaseStart { .. } => "case_started",
            Outgoing::Step { .. } => "step_result",
            Outgoing::CaseEnd { .. } => "case_ended",
        }
    }

    /// The request in words: `` `step` seq 2 index 0 (op `discover`) ``.
    pub fn words(&self) -> String {
        let mut s = self.id().to_string();
        if let Outgoing::Step { step, .. } = self {
            s.push_str(&format!(" (op `{}`)", step.op_name()));
        }
        s
    }
}

/// What `skillspec smoke` checks along the conversation. Every method has a default that does
/// nothing; an adapter with an inspector is lenient (see the module documentation).
pub trait Inspector: Send {
    /// A process was spawned for the adapter.
    fn spawned(&mut self) {}
    /// Bytes were waiting on stdout before `request` was sent (they are dropped).
    fn unsolicited(&mut self, _request: &Outgoing<'_>, _bytes: &str) {}
    /// A line that is no JSON object came while waiting for the answer to `request` (it is
    /// skipped); `not_utf8` gives where its UTF-8 breaks, if it does.
    fn stray_line(&mut self, _request: &Outgoing<'_>, _line: &[u8], _not_utf8: Option<usize>) {}
    /// The answer to `request`, a JSON object, as it came.
    fn answer(&mut self, _request: &Outgoing<'_>, _answer: &Value) {}
    /// The handshake completed in `took`, introducing `info`.
    fn started(&mut self, _info: &ImplInfo, _took: Duration) {}
    /// The `result` of a step, before it is read.
    fn result(&mut self, _request: &Outgoing<'_>, _step: &WireStep, _result: &Value) {}
    /// The adapter broke at `request` (`None`: before any request, as it was spawned).
    fn fault(&mut self, _request: Option<&Outgoing<'_>>, _fault: &Fault) {}
    /// The adapter was stopped the documented way; `late` is a preview of what it wrote to
    /// stdout after its last answer.
    fn stopped(&mut self, _how: Shutdown, _late: Option<String>) {}
}

/// The `--record` log of a run: one file shared by every adapter process of the run, each line
/// one message, tagged with the worker whose adapter sent or received it (lines of different
/// workers interleave; each worker's own lines keep their order).
#[derive(Clone)]
pub struct Record {
    file: std::sync::Arc<std::sync::Mutex<std::fs::File>>,
    worker: usize,
}

impl Record {
    /// The log in `file`, for worker 0.
    pub fn new(file: std::fs::File) -> Record {
        Record {
            file: std::sync::Arc::new(std::sync::Mutex::new(file)),
            worker: 0,
        }
    }

    /// The same log, for the adapter of worker `worker`.
    pub fn for_worker(&self, worker: usize) -> Record {
        Record {
            file: self.file.clone(),
            worker,
        }
    }

    fn log(&self, direction: &str, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let message: Value =
            serde_json::from_str(&text).unwrap_or_else(|_| Value::from(text.as_ref()));
        let entry =
            serde_json::json!({"worker": self.worker, "direction": direction, "message": message});
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(file, "{entry}");
    }
}

/// An implementation reached through the adapter protocol.
pub struct Adapter {
    command: String,
    timeout: Duration,
    /// How much the adapter's processes may grow in memory while a request is outstanding
    /// (`run --memory-bound`; `None`: unbounded).
    memory_bound: Option<u64>,
    /// The running adapter; `None` after it broke, until the next case starts it again.
    transport: Option<Transport>,
    info: ImplInfo,
    seq: u64,
    /// The runtime's message when it refused to start for the current case: every step of the
    /// case is then refused with it, and none is sent (PROTOCOL.md, "Refusals").
    refused_start: Option<String>,
    /// Where every message sent and received is logged (`--record`), one JSON object a line.
    record: Option<Record>,
    /// `smoke`'s checks; with them the conversation is lenient.
    inspector: Option<Box<dyn Inspector>>,
    /// The last step's `result` as it came (for the canary scan).
    last_answer: Option<Value>,
    /// The current case's wait for each answer, when it is not `timeout` (a `bounded:` case).
    case_timeout: Option<Duration>,
    /// Keep each step's `result` as it came (the case has a canary to look for).
    keep_answers: bool,
    /// How much the adapter had written to stderr when the current case started: an error
    /// answer carries what it wrote since (a traceback the kit points to).
    stderr_mark: u64,
}

impl Adapter {
    /// Starts `command` and performs the handshake. With `record`, every message in both
    /// directions is appended there as `{"worker":N,"direction":"sent"|"received","message":..}`.
    /// `memory_bound` bounds how much its processes may grow while a request is outstanding.
    pub fn spawn(
        command: &str,
        timeout: Duration,
        memory_bound: Option<u64>,
        record: Option<Record>,
    ) -> Result<Adapter, ImplError> {
        Adapter::spawn_inspected(command, timeout, memory_bound, record, None)
    }

    /// [`Adapter::spawn`], with `inspector` watching every exchange (then lenient).
    pub fn spawn_inspected(
        command: &str,
        timeout: Duration,
        memory_bound: Option<u64>,
        record: Option<Record>,
        inspector: Option<Box<dyn Inspector>>,
    ) -> Result<Adapter, ImplError> {
        let mut adapter = Adapter {
            command: command.to_owned(),
            timeout,
            memory_bound,
            transport: None,
            info: ImplInfo::default(),
            seq: 0,
            refused_start: None,
            last_answer: None,
            case_timeout: None,
            keep_answers: false,
            stderr_mark: 0,
            record,
            inspector,
        };
        adapter.start()?;
        Ok(adapter)
    }

    /// Starts the process and performs the handshake.
    fn start(&mut self) -> Result<(), ImplError> {
        self.transport = None;
        let transport = match Transport::spawn(&self.command) {
            Ok(mut t) => {
                t.set_memory_bound(self.memory_bound);
                t
            }
            Err(e) => {
                let fault = Fault::new(FaultKind::CannotStart {
                    command: self.command.clone(),
                    error: e.to_string(),
                });
                if let Some(i) = &mut self.inspector {
                    i.fault(None, &fault);
                }
                return Err(ImplError::Broken(Box::new(fault)));
            }
        };
        if let Some(i) = &mut self.inspector {
            i.spawned();
        }
        self.transport = Some(transport);
        let request = Outgoing::Start {
            protocol_version: PROTOCOL_VERSION,
        };
        let began = Instant::now();
        match self.exchange(&request)? {
            Response::Started {
                protocol_version,
                implementation,
            } => {
                if protocol_version != PROTOCOL_VERSION && self.inspector.is_none() {
                    return Err(self.fail(
                        &request,
                        FaultKind::WrongVersion {
                            got: protocol_version,
                        },
                    ));
                }
                if let Some(i) = &mut self.inspector {
                    i.started(&implementation, began.elapsed());
                }
                self.info = implementation;
                Ok(())
            }
            // An adapter that refuses the handshake is of no use.
            Response::Error { message, .. } => {
                Err(self.fail(&request, FaultKind::RefusedHandshake { message }))
            }
            other => Err(self.unexpected(&request, &other)),
        }
    }

    /// Stops the adapter and describes what broke: the fault, the request left unanswered,
    /// the stderr tail, and how the adapter had ended.
    fn fail(&mut self, request: &Outgoing<'_>, kind: FaultKind) -> ImplError {
        self.fail_after(request, kind, false)
    }

    /// [`Self::fail`], saying whether the request's time ran out.
    fn fail_after(
        &mut self,
        request: &Outgoing<'_>,
        kind: FaultKind,
        timed_out: bool,
    ) -> ImplError {
        let mut fault = Fault::new(kind);
        fault.unanswered = Some(request.id());
        fault.timed_out = timed_out;
        if let Some(mut t) = self.transport.take() {
            // Gone by itself, or still running (and stopped now)?
            let gone = fault.kind.is_closed() || t.leader_exited();
            let _ = t.shutdown();
            fault.stderr_tail = Some(t.stderr_tail());
            fault.exited = gone.then(|| t.exit());
        }
        if let Some(i) = &mut self.inspector {
            i.fault(Some(request), &fault);
        }
        ImplError::Broken(Box::new(fault))
    }

    /// An answer of the wrong type: a protocol `error` is a refusal (the adapter is alive);
    /// anything else breaks it.
    fn unexpected(&mut self, request: &Outgoing<'_>, got: &Response) -> ImplError {
        match got {
            Response::Error { message, .. } => {
                let stderr = self
                    .transport
                    .as_mut()
                    .map(|t| t.stderr_since(self.stderr_mark))
                    .unwrap_or_default();
                if stderr.trim().is_empty() {
                    ImplError::Refused(bounded(message))
                } else {
                    ImplError::RefusedWithStderr(bounded(message), stderr)
                }
            }
            other => {
                let got = crate::protocol::show(&serde_json::to_value(other).unwrap_or_default());
                self.fail(
                    request,
                    FaultKind::Unexpected {
                        wanted: request.answer_type(),
                        got,
                    },
                )
            }
        }
    }

    fn log(&mut self, direction: &str, line: &[u8]) {
        if let Some(r) = &self.record {
            r.log(direction, line);
        }
    }

    /// Sends one request and reads one response; any failure stops the adapter.
    fn exchange(&mut self, request: &Outgoing<'_>) -> Result<Response, ImplError> {
        let mut text = serde_json::to_vec(request)
            .map_err(|e| ImplError::broken(FaultKind::Encode(e.to_string())))?;
        self.log("sent", &text);
        text.push(b'\n');
        let timeout = self.case_timeout.unwrap_or(self.timeout);
        if self.transport.is_none() {
            let mut fault = Fault::new(FaultKind::NotRunning);
            fault.unanswered = Some(request.id());
            return Err(ImplError::Broken(Box::new(fault)));
        }
        let started = Instant::now();
        let line = match self.transfer(request, &text, timeout) {
            Ok(line) => line,
            Err(e) => {
                // The transport gives up at the deadline; an error after it is the timeout.
                let timed_out = started.elapsed() >= timeout;
                return Err(self.fail_after(request, FaultKind::Transport(e), timed_out));
            }
        };
        drop(text);
        self.log("received", &line);
        let parsed = decode_response(line);
        parsed.map_err(|kind| self.fail(request, kind))
    }

    /// The transport's exchange: strict, or, with an inspector, lenient about bytes nobody asked
    /// for and lines that are no JSON object (each is shown to the inspector and skipped).
    fn transfer(
        &mut self,
        request: &Outgoing<'_>,
        text: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, TransportError> {
        let Some(t) = self.transport.as_mut() else {
            return Err(TransportError::StdinClosed);
        };
        let Some(inspector) = self.inspector.as_mut() else {
            return t.exchange(text, timeout);
        };
        let deadline = Instant::now() + timeout;
        match t.check_quiet() {
            Err(TransportError::Unsolicited { preview }) => {
                inspector.unsolicited(request, &preview);
                t.discard_pending();
            }
            other => other?,
        }
        t.send(text, deadline, timeout)?;
        loop {
            let line = t.read_line(deadline, timeout)?;
            match std::str::from_utf8(&line) {
                Err(e) => inspector.stray_line(request, &line, Some(e.valid_up_to())),
                Ok(s) => match serde_json::from_str::<Value>(s) {
                    Ok(v) if v.is_object() => {
                        inspector.answer(request, &v);
                        return Ok(line);
                    }
                    _ => inspector.stray_line(request, &line, None),
                },
            }
        }
    }

    /// Whether a wrong `seq`/`index` echo is let through (with an inspector, which notes it).
    fn lenient(&self) -> bool {
        self.inspector.is_some()
    }

    /// Stops the adapter the documented way, telling the inspector how it went.
    fn stop(&mut self) {
        let Some(mut t) = self.transport.take() else {
            return;
        };
        let late = match t.check_quiet() {
            Err(TransportError::Unsolicited { preview }) => Some(preview),
            _ => None,
        };
        let how = t.shutdown();
        if let Some(i) = &mut self.inspector {
            i.stopped(how, late);
        }
    }
}

/// Decodes one response line as the runner reads it from an adapter: UTF-8, then JSON, then a
/// protocol message; every failure quotes (a bounded preview of) the line.
pub fn decode_response(line: Vec<u8>) -> Result<Response, FaultKind> {
    let value = match std::str::from_utf8(&line) {
        Err(e) => Err(FaultKind::NotUtf8 {
            valid_up_to: e.valid_up_to(),
            preview: transport::preview(&line),
        }),
        Ok(s) => serde_json::from_str::<Value>(s).map_err(|e| FaultKind::NotJson {
            error: e.to_string(),
            preview: transport::preview(&line),
        }),
    };
    // Through a `Value`, so that a long line is never held in three copies at once.
    drop(line);
    value.and_then(|v| {
        serde_json::from_value::<Response>(v).map_err(|e| FaultKind::NotAMessage {
            error: e.to_string(),
        })
    })
}

/// The runtime's message of a refusal, bounded; an empty one is a protocol error (an adapter
/// maps a runtime's signal, and the signal's text travels with it).
fn refusal_message(r: Refusal) -> Result<String, FaultKind> {
    if r.message.trim().is_empty() {
        return Err(FaultKind::EmptyRefusal);
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
            // It broke during an earlier case (or stopped after it): a fresh one for this case.
            self.start().map_err(|e| match e {
                ImplError::Broken(mut f) => {
                    f.restarting = true;
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
        self.stderr_mark = self.transport.as_ref().map_or(0, Transport::stderr_written);
        match self.exchange(&request)? {
            Response::CaseStarted { seq: s, refused } if s == seq || self.lenient() => {
                if let Some(r) = refused {
                    let message = refusal_message(r).map_err(|k| self.fail(&request, k))?;
                    self.refused_start = Some(format!("the runtime refused to start: {message}"));
                }
                Ok(())
            }
            other => Err(self.unexpected(&request, &other)),
        }
    }

    fn step(&mut self, index: usize, step: &WireStep) -> Result<StepOutcome, ImplError> {
        if let Some(message) = &self.refused_start {
            // spec: PROTOCOL.md "Refusals": a runtime that did not start refuses every step.
            return Ok(StepOutcome::Refused(message.clone()));
        }
        let seq = self.seq;
        let request = Outgoing::Step { seq, index, step };
        self.last_answer = None;
        match self.exchange(&request)? {
            Response::StepResult {
                seq: s,
                index: i,
                result,
                refused,
            } if (s == seq && i == index) || self.lenient() => match (result, refused) {
                (Some(result), None) => {
                    if let Some(inspector) = &mut self.inspector {
                        inspector.result(&request, step, &result);
                    }
                    if self.keep_answers {
                        self.last_answer = Some(result.clone());
                    }
                    StepOutcome::from_wire(step, result)
                        .map_err(|m| self.fail(&request, FaultKind::BadResult(m)))
                }
                (None, Some(r)) => match refusal_message(r) {
                    Ok(message) => Ok(StepOutcome::Refused(message)),
                    Err(k) => Err(self.fail(&request, k)),
                },
                (Some(_), Some(_)) => Err(self.fail(&request, FaultKind::ResultAndRefusal)),
                (None, None) => Err(self.fail(&request, FaultKind::NoResult)),
            },
            other => Err(self.unexpected(&request, &other)),
        }
    }

    fn set_case_timeout(&mut self, timeout: Option<Duration>) {
        self.case_timeout = timeout;
    }

    fn keep_answers(&mut self, keep: bool) {
        self.keep_answers = keep;
    }

    fn last_answer(&self) -> Option<&Value> {
        self.last_answer.as_ref()
    }

    fn end_case(&mut self) -> Result<(), ImplError> {
        let seq = self.seq;
        let request = Outgoing::CaseEnd { seq };
        match self.exchange(&request)? {
            Response::CaseEnded { seq: s } if s == seq || self.lenient() => {
                if self.info.process_per_case {
                    // Stopped the documented way (`stop`, then SIGTERM, then SIGKILL); the next
                    // case starts a fresh process.
                    self.stop();
                }
                Ok(())
            }
            other => Err(self.unexpected(&request, &other)),
        }
    }

    fn finish(&mut self) {
        self.stop();
    }
}
