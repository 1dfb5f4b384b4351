//! The runner's side of the adapter protocol: an [`Implementation`] that is a subprocess.
//!
//! The command runs under `/bin/sh -c` in its own process group (killed as a whole when the
//! adapter is dropped or restarted). Responses are read on a thread so that every wait has a
//! deadline; the adapter's stderr is kept (last lines) for error messages.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::implementation::{ImplError, Implementation};
use crate::protocol::{
    ImplInfo, Request, Response, StepOutcome, WireConfig, WireStep, PROTOCOL_VERSION,
};

/// Longest accepted response line, in bytes.
const MAX_LINE: usize = 64 * 1024 * 1024;
/// How many lines of the adapter's stderr are kept for messages.
const STDERR_LINES: usize = 20;

struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Result<String, String>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Drop for Process {
    fn drop(&mut self) {
        // Ask nicely, then make sure: the whole process group goes.
        let _ = writeln!(self.stdin, "{}", serde_json::json!({"type": "stop"}));
        let _ = self.stdin.flush();
        let pid = self.child.id() as i32;
        for _ in 0..20 {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Some(pgid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An implementation reached through the adapter protocol.
pub struct Adapter {
    command: String,
    timeout: Duration,
    process: Option<Process>,
    info: ImplInfo,
    seq: u64,
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
            process: None,
            info: ImplInfo {
                name: String::new(),
                version: String::new(),
                language: None,
                features: Vec::new(),
                unknown_features: Vec::new(),
            },
            seq: 0,
            record,
        };
        adapter.restart()?;
        Ok(adapter)
    }

    fn restart(&mut self) -> Result<(), ImplError> {
        self.process = None;
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| ImplError::Broken(format!("cannot start `{}`: {e}", self.command)))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| ImplError::Broken("no stdin pipe".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| ImplError::Broken("no stdout pipe".into()))?;
        let stderr_pipe = child
            .stderr
            .take()
            .ok_or_else(|| ImplError::Broken("no stderr pipe".into()))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                let res = reader
                    .by_ref()
                    .take(MAX_LINE as u64 + 1)
                    .read_until(b'\n', &mut buf);
                match res {
                    Ok(0) => {
                        let _ = tx.send(Err("the adapter closed its stdout (exited?)".into()));
                        return;
                    }
                    Ok(_) if buf.len() > MAX_LINE => {
                        let _ = tx.send(Err(format!(
                            "a response line is longer than {MAX_LINE} bytes"
                        )));
                        return;
                    }
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf).trim_end().to_owned();
                        if tx.send(Ok(line)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(format!("reading the adapter's stdout: {e}")));
                        return;
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { return };
                if let Ok(mut q) = sink.lock() {
                    if q.len() == STDERR_LINES {
                        q.pop_front();
                    }
                    q.push_back(line);
                }
            }
        });
        self.process = Some(Process {
            child,
            stdin,
            lines: rx,
            stderr,
        });
        match self.exchange(&Request::Start {
            protocol_version: PROTOCOL_VERSION,
        })? {
            Response::Started {
                protocol_version,
                implementation,
            } => {
                if protocol_version != PROTOCOL_VERSION {
                    return Err(ImplError::Broken(format!(
                        "the adapter speaks protocol version {protocol_version}, the runner {PROTOCOL_VERSION}"
                    )));
                }
                self.info = implementation;
                Ok(())
            }
            other => Err(self.unexpected("started", &other)),
        }
    }

    fn stderr_tail(&self) -> String {
        let Some(p) = &self.process else {
            return String::new();
        };
        let lines: Vec<String> = p
            .stderr
            .lock()
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default();
        if lines.is_empty() {
            String::new()
        } else {
            format!(
                "\n  adapter stderr (last lines):\n    {}",
                lines.join("\n    ")
            )
        }
    }

    fn unexpected(&self, wanted: &str, got: &Response) -> ImplError {
        match got {
            Response::Error { message, .. } => ImplError::Refused(message.clone()),
            other => ImplError::Broken(format!(
                "expected a `{wanted}` response, got {}",
                serde_json::to_string(other).unwrap_or_default()
            )),
        }
    }

    fn log(&mut self, direction: &str, line: &str) {
        if let Some(f) = &mut self.record {
            let message: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|_| serde_json::Value::from(line));
            let _ = writeln!(
                f,
                "{}",
                serde_json::json!({"direction": direction, "message": message})
            );
        }
    }

    /// Sends one request and reads one response.
    fn exchange(&mut self, request: &Request) -> Result<Response, ImplError> {
        let text = serde_json::to_string(request).map_err(|e| ImplError::Broken(e.to_string()))?;
        self.log("sent", &text);
        let timeout = self.timeout;
        let result = {
            let p = self
                .process
                .as_mut()
                .ok_or_else(|| ImplError::Broken("the adapter is not running".into()))?;
            if let Err(e) = writeln!(p.stdin, "{text}").and_then(|_| p.stdin.flush()) {
                Err(format!("cannot write to the adapter: {e}"))
            } else {
                match p.lines.recv_timeout(timeout) {
                    Ok(Ok(line)) => Ok(line),
                    Ok(Err(e)) => Err(e),
                    Err(RecvTimeoutError::Timeout) => {
                        Err(format!("no response within {} s", timeout.as_secs_f64()))
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        Err("the adapter's stdout reader stopped".into())
                    }
                }
            }
        };
        let result = result.and_then(|line| {
            self.log("received", &line);
            serde_json::from_str::<Response>(&line).map_err(|e| {
                format!(
                    "the adapter sent a line that is not a protocol message ({e}): {}",
                    crate::expect::show(&serde_json::Value::from(line.clone()))
                )
            })
        });
        result.map_err(|m| ImplError::Broken(format!("{m}{}", self.stderr_tail())))
    }
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
        let response = self.exchange(&Request::CaseStart {
            seq,
            case: case_id.to_owned(),
            root: root.to_owned(),
            config: config.clone(),
        })?;
        match response {
            Response::CaseStarted { seq: s } if s == seq => Ok(()),
            other => Err(self.unexpected("case_started", &other)),
        }
    }

    fn step(&mut self, index: usize, step: &WireStep) -> Result<StepOutcome, ImplError> {
        let seq = self.seq;
        let response = self.exchange(&Request::Step {
            seq,
            index,
            step: step.clone(),
        })?;
        match response {
            Response::StepResult {
                seq: s,
                index: i,
                result,
            } if s == seq && i == index => {
                StepOutcome::from_wire(step, result).map_err(ImplError::Broken)
            }
            other => Err(self.unexpected("step_result", &other)),
        }
    }

    fn end_case(&mut self) -> Result<(), ImplError> {
        let seq = self.seq;
        match self.exchange(&Request::CaseEnd { seq })? {
            Response::CaseEnded { seq: s } if s == seq => Ok(()),
            other => Err(self.unexpected("case_ended", &other)),
        }
    }

    fn recover(&mut self) -> Result<(), ImplError> {
        self.restart()
    }
}
