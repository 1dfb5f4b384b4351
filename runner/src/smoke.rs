//! `skillspec smoke --adapter CMD`: is this adapter usable, and if not, why, in plain words.
//!
//! It starts the adapter, performs the handshake, runs a handful of trivial built-in cases
//! ([`SMOKE_CASES`]) through the ordinary case machinery, and checks every exchange on the way:
//! a handshake that never comes (with the exit status and stderr tail when the process died),
//! the wrong `protocol_version`, stdout polluted by logging, the wrong `seq`/`index` echoed,
//! answers of the wrong type, responses that do not match `protocol/response.schema.json` and
//! results that do not match `protocol/step-result.schema.json` (the embedded schemas, checked
//! by [`shape`]), unsolicited lines, a slow start, an adapter that does not exit on `stop`,
//! and what `process_per_case` means for it.
//!
//! Unlike `run`, which stops an adapter at its first protocol error, smoke notes a problem and
//! carries on wherever it still can (a polluting line is skipped, a wrong `seq` accepted), so
//! one pass lists as many problems as possible. It drives the adapter's process itself (one
//! thread per output pipe) to see exit statuses and time the handshake; the process group is
//! registered with [`crate::execution::live`] like `run`'s adapters.
//!
//! Exit codes: 0 the adapter is usable and every smoke case passed; 1 it is usable but a smoke
//! case failed (the runtime, or how the adapter wires it, is wrong); 3 it is not usable.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use serde_json::{json, Value};

use crate::cases::{self, Case};
use crate::execution::{self, live, RunOptions, Status};
use crate::implementations::adapter::transport::{MAX_LINE, STDERR_TAIL};
use crate::implementations::protocol::{
    ImplInfo, StepOutcome, WireConfig, WireStep, PROTOCOL_VERSION,
};
use crate::implementations::{Fault, ImplError, Implementation};
use crate::reports::one_line;

/// A handshake slower than this is worth a warning.
pub const SLOW_START: Duration = Duration::from_secs(2);
/// After `stop` and EOF on its stdin, how long the adapter has to exit (PROTOCOL.md, Shutdown).
const STOP_GRACE: Duration = Duration::from_secs(1);
/// After SIGTERM, how long its process group has.
const TERM_GRACE: Duration = Duration::from_secs(1);
/// Lines of stderr shown with a problem.
const TAIL_LINES: usize = 20;

/// The built-in cases, in the order they run: `(file name, hint when it fails, YAML)`.
pub const SMOKE_CASES: &[(&str, &str, &str)] = &[
    (
        "discover-one-skill.yaml",
        "the runtime must scan `config.skills_root`, an absolute path inside the case's `root`, \
         and report what loaded as {\"loaded\": [{\"id\": ..}]}",
        r#"id: smoke.discover.one-skill
summary: One portable skill in the skills root loads, and both skill tools are offered.
clauses: [discovery.portable, tools.registration]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: A first skill.\n---\nBody\n"
steps:
  - discover:
    expect:
      loaded: [alpha]
  - tools:
    expect:
      offered: [skill_read_reference, skill_run_script]
"#,
    ),
    (
        "read-reference.yaml",
        "a `call` step is the tool call as the model makes it; its result is \
         {\"ok\": true, \"value\": {\"content\": ..}}",
        r#"id: smoke.read.reference
summary: A skill's reference file is read back exactly.
clauses: [read.scope]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: A first skill.\n---\nBody\n"
  skills/alpha/references/guide.md: "Read me.\n"
steps:
  - read: {skill: alpha, path: references/guide.md}
    expect:
      ok: {content: "Read me.\n"}
"#,
    ),
    (
        "read-missing.yaml",
        "a tool's own error is a result, {\"ok\": false, \"error\": {\"code\": \"not_found\"}}, \
         not a protocol `error` message",
        r#"id: smoke.read.missing
summary: Reading a reference that does not exist is the tool error not_found.
clauses: [read.errors]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: A first skill.\n---\nBody\n"
steps:
  - read: {skill: alpha, path: references/missing.md}
    expect:
      error: not_found
"#,
    ),
    (
        "run-approved-helper.yaml",
        "pass `config.script_allowlist` (the operator's allowlist text) and `config.python` to \
         the runtime",
        r#"id: smoke.run.approved-helper
summary: An approved helper script runs and its output comes back.
clauses: [run.approval, run.success]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: A first skill.\n---\nBody\n"
  skills/alpha/scripts/hello.py: |
    print('hello')
config:
  script_allowlist:
    - {skill: alpha, script: scripts/hello.py, sha256_of: skills/alpha/scripts/hello.py}
steps:
  - run: {skill: alpha, script: scripts/hello.py}
    expect:
      ok: {exit_code: 0, stdout: "hello\n"}
"#,
    ),
    (
        "fresh-runtime.yaml",
        "every `case_start` must start a fresh runtime over the new `root` and `config`; a \
         runtime that keeps state once loaded needs `\"process_per_case\": true` in its \
         `started` answer",
        r#"id: smoke.fresh-runtime
summary: A later case with another skills root sees only its own skill, not the earlier cases' ones.
clauses: [discovery.portable]
tree:
  skills/beta/SKILL.md: "---\nname: beta\ndescription: A second skill.\n---\nBody\n"
steps:
  - discover:
    expect:
      loaded: [beta]
"#,
    ),
];

/// The smoke cases, parsed (named `smoke:<file>` in messages).
pub fn smoke_cases() -> Result<Vec<(Case, &'static str)>, cases::CaseError> {
    SMOKE_CASES
        .iter()
        .map(|(file, hint, text)| {
            let name = PathBuf::from(format!("smoke:{file}"));
            cases::parse_case(&name, "smoke", text).map(|c| (c, *hint))
        })
        .collect()
}

/// What `smoke` is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The adapter command (run by `/bin/sh -c`).
    pub command: String,
    /// How long to wait for any one answer, the handshake included.
    pub timeout: Duration,
    /// The interpreter the cases' runtimes run helpers with.
    pub python: PathBuf,
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The runner cannot use the adapter as it is.
    Problem,
    /// Usable, but worth fixing.
    Warning,
}

/// What kind of thing is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    CannotStart,
    NoHandshake,
    NoAnswer,
    Exited,
    Polluted,
    NotUtf8,
    TooLong,
    Refused,
    WrongVersion,
    WrongType,
    WrongSeq,
    WrongIndex,
    Schema,
    ResultSchema,
    Unsolicited,
    SlowStart,
    UnknownFeatures,
    SlowStop,
}

/// One diagnosis: a title in plain words, and the details that show it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub severity: Severity,
    pub kind: Kind,
    pub title: String,
    pub details: Vec<String>,
    /// How many times it was seen.
    pub count: usize,
}

/// The findings of one smoke run, one per kind (the first occurrence, counted).
#[derive(Debug, Default)]
pub struct Findings {
    items: Vec<Finding>,
}

impl Findings {
    fn add(&mut self, severity: Severity, kind: Kind, title: String, details: Vec<String>) {
        if let Some(f) = self.items.iter_mut().find(|f| f.kind == kind) {
            f.count += 1;
            return;
        }
        self.items.push(Finding {
            severity,
            kind,
            title,
            details,
            count: 1,
        });
    }

    fn problem(&mut self, kind: Kind, title: String, details: Vec<String>) {
        self.add(Severity::Problem, kind, title, details);
    }

    fn warning(&mut self, kind: Kind, title: String, details: Vec<String>) {
        self.add(Severity::Warning, kind, title, details);
    }

    pub fn all(&self) -> &[Finding] {
        &self.items
    }

    pub fn has_problems(&self) -> bool {
        self.items.iter().any(|f| f.severity == Severity::Problem)
    }

    pub fn has(&self, kind: Kind) -> bool {
        self.items.iter().any(|f| f.kind == kind)
    }
}

/// What the adapter's stdout reader reports.
enum Line {
    Bytes(Vec<u8>),
    /// Bytes without a final newline, then end of file.
    Unterminated(Vec<u8>),
    TooLong,
    Closed,
    Failed,
}

/// The last bytes of the adapter's stderr.
#[derive(Default)]
struct Tail(Vec<u8>);

impl Tail {
    fn push(&mut self, data: &[u8]) {
        self.0.extend_from_slice(data);
        if self.0.len() > STDERR_TAIL {
            let over = self.0.len() - STDERR_TAIL;
            self.0.drain(..over);
        }
    }
}

/// A running adapter, driven directly (not through [`crate::implementations::adapter`]) so
/// that its exit status and timings are visible.
struct Proc {
    child: Child,
    pid: Pid,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<Tail>>,
    /// stdout reached its end.
    closed: bool,
    /// Collected already (so the group id may no longer be ours to signal).
    status: Option<ExitStatus>,
}

impl Proc {
    fn spawn(command: &str) -> io::Result<Proc> {
        let mut child = live::spawn_shell_group(command)?;
        let pid = Pid::from_child(&child);
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        if let Some(stdout) = stdout {
            std::thread::spawn(move || read_lines(stdout, &tx));
        }
        let tail = Arc::new(Mutex::new(Tail::default()));
        if let Some(mut stderr) = stderr {
            let tail = Arc::clone(&tail);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(&buf[..n]);
                }
            });
        }
        Ok(Proc {
            child,
            pid,
            stdin,
            lines,
            stderr: tail,
            closed: false,
            status: None,
        })
    }

    fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&tail.0).into_owned()
    }

    fn send(&mut self, message: &Value) -> io::Result<()> {
        let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
        line.push(b'\n');
        match &mut self.stdin {
            Some(stdin) => stdin.write_all(&line).and_then(|()| stdin.flush()),
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "stdin closed")),
        }
    }

    /// The next event from stdout, or `None` when `deadline` passed first.
    fn next(&mut self, deadline: Instant) -> Option<Line> {
        if self.closed {
            return Some(Line::Closed);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Line::Closed) | Err(RecvTimeoutError::Disconnected) => {
                self.closed = true;
                Some(Line::Closed)
            }
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Timeout) => None,
        }
    }

    /// Lines already waiting (written while no request was outstanding).
    fn pending(&mut self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            match self.lines.try_recv() {
                Ok(Line::Bytes(b)) | Ok(Line::Unterminated(b)) => out.push(b),
                Ok(Line::Closed) | Err(TryRecvError::Disconnected) => {
                    self.closed = true;
                    return out;
                }
                Ok(_) => {}
                Err(TryRecvError::Empty) => return out,
            }
        }
    }

    /// Waits up to `within` for the shell leader to exit, without collecting it.
    fn wait_exit(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if live::leader_exited(self.pid) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills whatever is left of the group and collects the leader's exit status.
    fn collect(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            // The leader is not collected yet, so the group id still names this group.
            let _ = rustix::process::kill_process_group(self.pid, Signal::KILL);
            self.status = self.child.wait().ok();
            live::forget_group(self.pid);
        }
        self.status
    }

    /// Stops the adapter the documented way (`stop`, EOF, SIGTERM, SIGKILL). Returns which
    /// step it took: `None` when it exited by itself after `stop`.
    fn stop(&mut self) -> Option<&'static str> {
        if self.status.is_some() {
            return None;
        }
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"{\"type\":\"stop\"}\n");
        }
        if self.wait_exit(STOP_GRACE) {
            self.collect();
            return None;
        }
        let _ = rustix::process::kill_process_group(self.pid, Signal::TERM);
        let needed = if self.wait_exit(TERM_GRACE) {
            "SIGTERM"
        } else {
            "SIGKILL"
        };
        self.collect();
        Some(needed)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.status.is_none() {
            self.stdin = None;
            let _ = rustix::process::kill_process_group(self.pid, Signal::TERM);
            if !self.wait_exit(TERM_GRACE) {
                let _ = rustix::process::kill_process_group(self.pid, Signal::KILL);
            }
            self.collect();
        }
    }
}

/// Reads stdout line by line (each at most [`MAX_LINE`] bytes) into `tx`.
fn read_lines(stdout: impl Read, tx: &mpsc::Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        let read = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf);
        let line = match read {
            Err(_) => Line::Failed,
            Ok(0) => Line::Closed,
            Ok(_) if buf.last() == Some(&b'\n') => {
                buf.pop();
                Line::Bytes(buf)
            }
            Ok(_) if buf.len() > MAX_LINE => Line::TooLong,
            Ok(_) => Line::Unterminated(buf),
        };
        let last = !matches!(line, Line::Bytes(_));
        if tx.send(line).is_err() || last {
            if last {
                let _ = tx.send(Line::Closed);
            }
            return;
        }
    }
}

/// A short, printable sample of what the adapter sent.
fn preview(bytes: &[u8]) -> String {
    crate::implementations::adapter::transport::preview(bytes)
}

/// The last lines of `tail`, indented, for people.
fn tail_lines(tail: &str) -> Vec<String> {
    let trimmed = tail.trim_end();
    if trimmed.is_empty() {
        return vec!["its stderr: (nothing)".into()];
    }
    let lines: Vec<&str> = trimmed.lines().collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    let mut out = vec![if from > 0 {
        format!("the last {TAIL_LINES} lines of its stderr:")
    } else {
        "its stderr:".into()
    }];
    out.extend(lines[from..].iter().map(|l| format!("  | {}", one_line(l))));
    out
}

/// How an exit status reads.
fn status_words(status: Option<ExitStatus>) -> String {
    match status {
        None => "it is gone, its exit status unknown".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(127), _) => "exit status 127: /bin/sh did not find the command".into(),
            (Some(126), _) => "exit status 126: the command is not executable".into(),
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => format!("{s}"),
        },
    }
}

/// The protocol's schemas (`protocol/response.schema.json`, `protocol/step-result.schema.json`,
/// as embedded), checked by [`shape`] one definition at a time, so that an error names the
/// field at fault.
struct Schemas {
    response: shape::Schema,
    result: shape::Schema,
}

impl Schemas {
    fn load() -> Result<Schemas, String> {
        let doc = |path: &str| -> Result<shape::Schema, String> {
            let f = crate::suite::file(path).ok_or_else(|| format!("{path} is not embedded"))?;
            let v = serde_json::from_slice(f.bytes).map_err(|e| format!("{path}: {e}"))?;
            shape::Schema::new(v).map_err(|e| format!("{path}: {e}"))
        };
        Ok(Schemas {
            response: doc("protocol/response.schema.json")?,
            result: doc("protocol/step-result.schema.json")?,
        })
    }

    /// Why `v` is not a valid answer of type `kind` (its `result` is checked on its own).
    fn response_errors(&self, kind: &str, v: &Value) -> Vec<String> {
        self.response.errors(kind, v)
    }

    /// Why `result` is not a valid result of `step`.
    fn result_errors(&self, step: &WireStep, result: &Value) -> Vec<String> {
        let def = match step {
            WireStep::Discover => "discover",
            WireStep::Tools => "tools",
            WireStep::Prompt => "prompt",
            WireStep::NewTurn => "new_turn",
            WireStep::Select { .. } => "select",
            WireStep::Call { .. } => match result.get("ok") {
                Some(Value::Bool(true)) => "call_ok",
                Some(Value::Bool(false)) => "call_error",
                _ => {
                    return vec![format!(
                        "a `call` result is {{\"ok\": true, \"value\": {{..}}}} or {{\"ok\": false, \"error\": {{\"code\": ..}}}}; got {}",
                        one_line(&bounded_json(result))
                    )]
                }
            },
        };
        self.result.errors(def, result)
    }
}

/// The part of JSON Schema (2020-12) that the protocol's schemas use, checked by hand: `type`,
/// `const`, `enum`, `minimum`, `maximum`, `properties`, `required`, `additionalProperties`,
/// `maxProperties`, `items`, `oneOf` and `$ref` to `#/$defs/NAME` (the one reference to another
/// file, the `result` of a `step_result`, is checked separately, against step-result.schema.json).
/// A schema that uses any other keyword is refused when it loads, so a schema edit cannot be
/// silently ignored; `smoke`'s tests check that this agrees with the `jsonschema` crate. (That
/// crate as a dependency of the program grew the release binary from 8.4 to 12.5 MB.)
pub mod shape {
    use serde_json::Value;

    /// Keywords that are understood (the annotations among them are ignored).
    const KNOWN: &[&str] = &[
        "$schema",
        "$id",
        "$defs",
        "$ref",
        "title",
        "description",
        "type",
        "const",
        "enum",
        "minimum",
        "maximum",
        "properties",
        "required",
        "additionalProperties",
        "maxProperties",
        "items",
        "oneOf",
    ];
    /// The one reference to another schema file (checked separately).
    const EXTERNAL: &str = "step-result.schema.json";
    /// Errors reported per check, at most.
    const MAX_ERRORS: usize = 5;

    /// A loaded schema document.
    pub struct Schema {
        root: Value,
    }

    impl Schema {
        /// Loads `root`, refusing any keyword this checker does not know.
        pub fn new(root: Value) -> Result<Schema, String> {
            keywords(&root, "")?;
            Ok(Schema { root })
        }

        /// Why `instance` does not match the definition `#/$defs/{def}` (empty when it does).
        pub fn errors(&self, def: &str, instance: &Value) -> Vec<String> {
            let mut out = Vec::new();
            match self.root.pointer(&format!("/$defs/{def}")) {
                Some(schema) => self.check(schema, instance, "", &mut out),
                None => out.push(format!("the schema has no definition `{def}`")),
            }
            out.truncate(MAX_ERRORS);
            out
        }

        fn check(&self, schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
            let here = if at.is_empty() { "/" } else { at };
            let obj = match schema {
                Value::Bool(true) => return,
                Value::Bool(false) => {
                    out.push(format!("at {here}: nothing is allowed here"));
                    return;
                }
                Value::Object(o) => o,
                _ => return,
            };
            if let Some(Value::String(r)) = obj.get("$ref") {
                if let Some(def) = r.strip_prefix("#/$defs/") {
                    match self.root.pointer(&format!("/$defs/{def}")) {
                        Some(target) => self.check(target, v, at, out),
                        None => {
                            out.push(format!("at {here}: the schema refers to a missing `{r}`"))
                        }
                    }
                }
            }
            if let Some(t) = obj.get("type") {
                let allowed: Vec<&str> = match t {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                if !allowed.iter().any(|t| is_type(v, t)) {
                    out.push(format!(
                        "at {here}: expected {}, got {}",
                        allowed.join(" or "),
                        describe(v)
                    ));
                    return;
                }
            }
            if let Some(c) = obj.get("const") {
                if c != v {
                    out.push(format!("at {here}: must be {c}, got {}", short(v)));
                }
            }
            if let Some(Value::Array(options)) = obj.get("enum") {
                if !options.contains(v) {
                    let list: Vec<String> = options.iter().map(Value::to_string).collect();
                    out.push(format!(
                        "at {here}: must be one of {}, got {}",
                        list.join(", "),
                        short(v)
                    ));
                }
            }
            if let (Some(min), Some(n)) = (obj.get("minimum").and_then(Value::as_f64), v.as_f64()) {
                if n < min {
                    out.push(format!("at {here}: must be at least {min}, got {n}"));
                }
            }
            if let (Some(max), Some(n)) = (obj.get("maximum").and_then(Value::as_f64), v.as_f64()) {
                if n > max {
                    out.push(format!("at {here}: must be at most {max}, got {n}"));
                }
            }
            if let Value::Object(map) = v {
                let props = obj.get("properties").and_then(Value::as_object);
                if let Some(Value::Array(required)) = obj.get("required") {
                    for key in required.iter().filter_map(Value::as_str) {
                        if !map.contains_key(key) {
                            out.push(format!("at {here}: `{key}` is required and missing"));
                        }
                    }
                }
                if let Some(max) = obj.get("maxProperties").and_then(Value::as_u64) {
                    if map.len() as u64 > max {
                        out.push(format!(
                            "at {here}: at most {max} field(s) allowed, got {}",
                            map.len()
                        ));
                    }
                }
                for (key, value) in map {
                    let path = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                    match props.and_then(|p| p.get(key)) {
                        Some(sub) => self.check(sub, value, &path, out),
                        None => match obj.get("additionalProperties") {
                            Some(Value::Bool(false)) => {
                                out.push(format!("at {here}: `{key}` is not allowed here"))
                            }
                            Some(sub) => self.check(sub, value, &path, out),
                            None => {}
                        },
                    }
                }
            }
            if let (Some(items), Value::Array(list)) = (obj.get("items"), v) {
                for (i, item) in list.iter().enumerate() {
                    self.check(items, item, &format!("{at}/{i}"), out);
                }
            }
            if let Some(Value::Array(alternatives)) = obj.get("oneOf") {
                let results: Vec<Vec<String>> = alternatives
                    .iter()
                    .map(|alt| {
                        let mut e = Vec::new();
                        self.check(alt, v, at, &mut e);
                        e
                    })
                    .collect();
                let matching = results.iter().filter(|e| e.is_empty()).count();
                if matching != 1 {
                    out.push(format!(
                        "at {here}: must match exactly one of {} alternatives, matches {matching}",
                        alternatives.len()
                    ));
                }
            }
        }
    }

    fn is_type(v: &Value, t: &str) -> bool {
        match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "number" => v.is_number(),
            "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
            _ => false,
        }
    }

    fn describe(v: &Value) -> String {
        let kind = match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        format!("{kind} ({})", short(v))
    }

    fn short(v: &Value) -> String {
        super::bounded_json(v)
    }

    /// Refuses keywords outside [`KNOWN`] and references this checker cannot follow.
    fn keywords(schema: &Value, at: &str) -> Result<(), String> {
        let Value::Object(obj) = schema else {
            return match schema {
                Value::Bool(_) => Ok(()),
                _ => Err(format!("{at}: a schema must be an object or a boolean")),
            };
        };
        for (key, value) in obj {
            let here = format!("{at}/{key}");
            if !KNOWN.contains(&key.as_str()) {
                return Err(format!(
                    "{here}: the keyword `{key}` is not checked by `skillspec smoke` (runner/src/smoke.rs, `shape`): teach it there"
                ));
            }
            match key.as_str() {
                "properties" | "$defs" => {
                    for (name, sub) in value.as_object().into_iter().flatten() {
                        keywords(sub, &format!("{here}/{name}"))?;
                    }
                }
                "items" | "additionalProperties" => keywords(value, &here)?,
                "oneOf" => {
                    for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                        keywords(sub, &format!("{here}/{i}"))?;
                    }
                }
                "$ref" => {
                    let r = value.as_str().unwrap_or_default();
                    if !(r.starts_with("#/$defs/") || r == EXTERNAL) {
                        return Err(format!("{here}: cannot follow the reference `{r}`"));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn bounded_json(v: &Value) -> String {
    let text = v.to_string();
    if text.len() <= 300 {
        return text;
    }
    let mut cut = 300;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &text[..cut], text.len())
}

/// The request being answered, in words (`step` seq 2 index 0).
fn request_words(request: &Value) -> String {
    let mut s = format!("`{}`", request["type"].as_str().unwrap_or("?"));
    if let Some(seq) = request.get("seq") {
        let _ = write!(s, " seq {seq}");
    }
    if let Some(index) = request.get("index") {
        let _ = write!(s, " index {index}");
    }
    if let Some(op) = request.pointer("/step/op").and_then(Value::as_str) {
        let _ = write!(s, " (op `{op}`)");
    }
    s
}

/// The adapter seen through the smoke checks: an [`Implementation`] for the case machinery.
struct Probe {
    command: String,
    timeout: Duration,
    schemas: Schemas,
    proc: Option<Proc>,
    info: ImplInfo,
    seq: u64,
    findings: Findings,
    /// How long each handshake took.
    handshakes: Vec<Duration>,
    /// Processes started.
    starts: usize,
    /// The runtime refused to start for the current case (PROTOCOL.md, "Refusals").
    refused_start: Option<String>,
}

impl Probe {
    fn new(opts: &Options, schemas: Schemas) -> Probe {
        Probe {
            command: opts.command.clone(),
            timeout: opts.timeout,
            schemas,
            proc: None,
            info: ImplInfo::default(),
            seq: 0,
            findings: Findings::default(),
            handshakes: Vec::new(),
            starts: 0,
            refused_start: None,
        }
    }

    fn broken(&mut self, message: String) -> ImplError {
        let stderr_tail = self.proc.as_ref().map(Proc::stderr_tail);
        self.proc = None;
        ImplError::Broken(Fault {
            message,
            unanswered: None,
            stderr_tail,
            timed_out: false,
        })
    }

    /// Starts the adapter and performs the handshake.
    fn start(&mut self) -> Result<(), ImplError> {
        self.proc = None;
        let proc = match Proc::spawn(&self.command) {
            Ok(p) => p,
            Err(e) => {
                self.findings.problem(
                    Kind::CannotStart,
                    format!("the adapter cannot be started: {e}"),
                    vec![],
                );
                return Err(ImplError::broken(format!("cannot start: {e}")));
            }
        };
        self.starts += 1;
        self.proc = Some(proc);
        let began = Instant::now();
        let request = json!({"type": "start", "protocol_version": PROTOCOL_VERSION});
        let answer = self.ask(&request, "started")?;
        let took = began.elapsed();
        self.handshakes.push(took);
        if took > SLOW_START {
            self.findings.warning(
                Kind::SlowStart,
                format!(
                    "slow start: the handshake took {:.1} s (more than {} s)",
                    took.as_secs_f64(),
                    SLOW_START.as_secs()
                ),
                vec![
                    "the runner waits for it again whenever the adapter is restarted (after a breakage, and after every case with process_per_case)".into(),
                    "start the runtime lazily, or keep the adapter's own start-up light".into(),
                ],
            );
        }
        let version = answer
            .get("protocol_version")
            .cloned()
            .unwrap_or(Value::Null);
        if version != json!(PROTOCOL_VERSION) {
            self.findings.problem(
                Kind::WrongVersion,
                format!(
                    "wrong protocol_version: the adapter answered {}, this runner speaks {PROTOCOL_VERSION}",
                    one_line(&bounded_json(&version))
                ),
                vec![format!(
                    "answer {{\"type\": \"started\", \"protocol_version\": {PROTOCOL_VERSION}, ..}}; PROTOCOL.md (Versioning) lists what changed between versions"
                )],
            );
        }
        let info = answer
            .get("implementation")
            .cloned()
            .map(serde_json::from_value::<ImplInfo>);
        match info {
            Some(Ok(info)) => {
                if !info.unknown_features.is_empty() {
                    self.findings.warning(
                        Kind::UnknownFeatures,
                        format!(
                            "unknown feature names are ignored: {}",
                            one_line(&info.unknown_features.join(", "))
                        ),
                        vec![format!(
                            "known: {}",
                            crate::cases::features::Feature::ALL
                                .iter()
                                .map(|f| f.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )],
                    );
                }
                self.info = info;
                Ok(())
            }
            _ => {
                if !self.findings.has(Kind::Schema) {
                    self.findings.problem(
                        Kind::Schema,
                        "the `started` answer has no usable `implementation` {\"name\", \"version\", ..}".into(),
                        vec![],
                    );
                }
                Err(self.broken("the `started` answer has no usable `implementation`".into()))
            }
        }
    }

    /// Sends `request` and reads its answer, noting every problem on the way. Returns the
    /// answer when there is one to go on with (even a flawed one).
    fn ask(&mut self, request: &Value, expected: &str) -> Result<Value, ImplError> {
        let timeout = self.timeout;
        let what = request_words(request);
        let Some(proc) = self.proc.as_mut() else {
            return Err(ImplError::broken("the adapter is not running"));
        };
        let early = proc.pending();
        let sent = proc.send(request);
        if let Some(first) = early.first() {
            self.findings.problem(
                Kind::Unsolicited,
                "the adapter wrote to stdout while no request was outstanding".into(),
                vec![
                    format!("before {what}: {}", preview(first)),
                    "write exactly one line per request, the answer, after reading the whole request".into(),
                ],
            );
        }
        let deadline = Instant::now() + timeout;
        let mut polluted: Vec<String> = Vec::new();
        let outcome = loop {
            let Some(proc) = self.proc.as_mut() else {
                return Err(ImplError::broken("the adapter is not running"));
            };
            match proc.next(deadline) {
                None => break Err(None),
                Some(Line::Closed) | Some(Line::Failed) => break Err(Some(())),
                Some(Line::TooLong) => {
                    self.findings.problem(
                        Kind::TooLong,
                        format!("an answer line is longer than {MAX_LINE} bytes (the limit)"),
                        vec![format!("answering {what}")],
                    );
                    return Err(self.broken("an answer line is too long".into()));
                }
                Some(Line::Unterminated(b)) | Some(Line::Bytes(b)) => {
                    let text = match std::str::from_utf8(&b) {
                        Ok(t) => t,
                        Err(e) => {
                            self.findings.problem(
                                Kind::NotUtf8,
                                "the adapter wrote a line that is not UTF-8".into(),
                                vec![format!(
                                    "answering {what}, invalid at byte {}: {}",
                                    e.valid_up_to(),
                                    preview(&b)
                                )],
                            );
                            continue;
                        }
                    };
                    match serde_json::from_str::<Value>(text) {
                        Ok(v) if v.is_object() => break Ok(v),
                        _ => {
                            polluted.push(preview(&b));
                            continue;
                        }
                    }
                }
            }
        };
        if !polluted.is_empty() {
            let mut details: Vec<String> = polluted
                .iter()
                .take(5)
                .map(|l| format!("answering {what}: {l}"))
                .collect();
            if polluted.len() > 5 {
                details.push(format!("... and {} more such lines", polluted.len() - 5));
            }
            details.push(
                "your runtime or adapter prints to stdout; log to stderr (only protocol messages, one JSON object a line, may go to stdout)"
                    .into(),
            );
            self.findings.problem(
                Kind::Polluted,
                "stdout is polluted: the adapter printed lines that are not protocol messages"
                    .into(),
                details,
            );
        }
        let answer = match outcome {
            Ok(v) => v,
            Err(exited) => return Err(self.no_answer(request, &what, exited.is_some(), sent)),
        };
        self.check(request, &what, expected, answer)
    }

    /// Describes an exchange that got no answer: the adapter exited, or stayed silent.
    fn no_answer(
        &mut self,
        request: &Value,
        what: &str,
        exited: bool,
        sent: io::Result<()>,
    ) -> ImplError {
        let timeout = self.timeout.as_secs_f64();
        let Some(proc) = self.proc.as_mut() else {
            return ImplError::broken("the adapter is not running");
        };
        let handshake = request["type"] == "start";
        let gone = exited || sent.is_err() || proc.wait_exit(Duration::ZERO);
        if gone {
            proc.wait_exit(Duration::from_secs(1));
            let status = proc.collect();
            let mut details = vec![status_words(status)];
            details.extend(tail_lines(&proc.stderr_tail()));
            let title = if handshake {
                "no handshake: the adapter exited before answering `start`".to_owned()
            } else {
                format!("the adapter exited while the runner waited for its answer to {what}")
            };
            self.findings.problem(Kind::Exited, title, details);
        } else {
            let mut details = tail_lines(&proc.stderr_tail());
            details.push(
                "the adapter must read its stdin line by line and flush stdout after every answer (Python: print(..., flush=True), or run it with python3 -u)"
                    .into(),
            );
            if handshake {
                self.findings.problem(
                    Kind::NoHandshake,
                    format!("no handshake: nothing on stdout within {timeout} s after `start` (the process is still running)"),
                    details,
                );
            } else {
                self.findings.problem(
                    Kind::NoAnswer,
                    format!("no answer to {what} within {timeout} s"),
                    details,
                );
            }
        }
        self.broken(format!("no answer to {what}"))
    }

    /// Checks an answer: its type, the schema, the `seq`/`index` echo. Refusals (`error`)
    /// become [`ImplError::Refused`].
    fn check(
        &mut self,
        request: &Value,
        what: &str,
        expected: &str,
        answer: Value,
    ) -> Result<Value, ImplError> {
        let kind = answer.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "error" {
            let errors = self.schemas.response_errors("error", &answer);
            self.schema_problem(what, "error", errors);
            let message = answer
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
                .to_owned();
            if request["type"] == "start" {
                self.findings.problem(
                    Kind::Refused,
                    format!("the adapter refused the handshake: {}", one_line(&message)),
                    vec![],
                );
                return Err(self.broken(format!("refused the handshake: {message}")));
            }
            return Err(ImplError::Refused(message));
        }
        if kind != expected {
            self.findings.problem(
                Kind::WrongType,
                format!("the adapter answered {what} with the wrong message type"),
                vec![
                    format!(
                        "expected {{\"type\": \"{expected}\", ..}}, got {}",
                        one_line(&bounded_json(&answer))
                    ),
                    "answer each request in order, with exactly one line".into(),
                ],
            );
            return Err(self.broken(format!("answered {what} with `{kind}`")));
        }
        let mut errors = self.schemas.response_errors(expected, &answer);
        if expected == "started" {
            // A wrong version has its own diagnosis.
            errors.retain(|e| !e.starts_with("at /protocol_version:"));
        }
        self.schema_problem(what, expected, errors);
        for key in ["seq", "index"] {
            let Some(sent) = request.get(key) else {
                continue;
            };
            let got = answer.get(key).cloned().unwrap_or(Value::Null);
            if &got != sent {
                let kind = if key == "seq" {
                    Kind::WrongSeq
                } else {
                    Kind::WrongIndex
                };
                self.findings.problem(
                    kind,
                    format!("wrong `{key}`: the answer must echo the request's `{key}`"),
                    vec![
                        format!(
                            "{what} was answered with `{key}` {}",
                            one_line(&bounded_json(&got))
                        ),
                        format!("copy `{key}` from the request into the answer"),
                    ],
                );
            }
        }
        Ok(answer)
    }

    fn schema_problem(&mut self, what: &str, kind: &str, errors: Vec<String>) {
        if errors.is_empty() {
            return;
        }
        let mut details = vec![format!("the `{kind}` answer to {what}:")];
        details.extend(errors.into_iter().map(|e| format!("  {e}")));
        self.findings.problem(
            Kind::Schema,
            "an answer does not match protocol/response.schema.json".into(),
            details,
        );
    }
}

/// The runtime's message of a `refused` answer (`case_started` or `step_result`), if it is one.
fn refused_message(answer: &Value) -> Option<String> {
    answer.get("refused").map(|r| {
        r.get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    })
}

impl Implementation for Probe {
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
        if self.proc.is_none() {
            self.start()?;
        }
        let request = json!({"type": "case_start", "seq": seq, "case": case_id, "root": root, "config": config});
        let answer = self.ask(&request, "case_started")?;
        self.refused_start = refused_message(&answer);
        Ok(())
    }

    fn step(&mut self, index: usize, step: &WireStep) -> Result<StepOutcome, ImplError> {
        if let Some(message) = &self.refused_start {
            return Ok(StepOutcome::Refused(message.clone()));
        }
        let request = json!({"type": "step", "seq": self.seq, "index": index, "step": step});
        let what = request_words(&request);
        let answer = self.ask(&request, "step_result")?;
        if let Some(message) = refused_message(&answer) {
            // The schema check of the answer (in `ask`) has seen its shape.
            return Ok(StepOutcome::Refused(message));
        }
        let result = answer.get("result").cloned().unwrap_or(Value::Null);
        let errors = self.schemas.result_errors(step, &result);
        let invalid = !errors.is_empty();
        if invalid {
            let mut details = vec![format!("the result of {what}:")];
            details.extend(errors.into_iter().map(|e| format!("  {e}")));
            details.push(
                "PROTOCOL.md (`step`) gives each operation's result; protocol/step-result.schema.json is the schema"
                    .into(),
            );
            self.findings.problem(
                Kind::ResultSchema,
                "a step result does not match protocol/step-result.schema.json".into(),
                details,
            );
        }
        match StepOutcome::from_wire(step, result) {
            Ok(outcome) => Ok(outcome),
            Err(m) => {
                if !invalid {
                    self.findings.problem(
                        Kind::ResultSchema,
                        "a step result does not have the shape the runner reads".into(),
                        vec![format!("the result of {what}: {}", one_line(&m))],
                    );
                }
                Err(self.broken(m))
            }
        }
    }

    fn end_case(&mut self) -> Result<(), ImplError> {
        let request = json!({"type": "case_end", "seq": self.seq});
        self.ask(&request, "case_ended")?;
        if self.info.process_per_case {
            self.stop();
        }
        Ok(())
    }
}

impl Probe {
    /// Stops the adapter the documented way, and notes when it needed a signal.
    fn stop(&mut self) {
        let Some(mut proc) = self.proc.take() else {
            return;
        };
        let late = proc.pending();
        if let Some(first) = late.first() {
            self.findings.problem(
                Kind::Unsolicited,
                "the adapter wrote to stdout while no request was outstanding".into(),
                vec![
                    format!("after its last answer: {}", preview(first)),
                    "write exactly one line per request, the answer, after reading the whole request".into(),
                ],
            );
        }
        if let Some(signal) = proc.stop() {
            self.findings.warning(
                Kind::SlowStop,
                format!(
                    "the adapter did not exit within {} s of `stop` and the end of its stdin; the runner needed {signal}",
                    STOP_GRACE.as_secs()
                ),
                vec!["exit when stdin ends or on {\"type\": \"stop\"} (PROTOCOL.md, Shutdown)".into()],
            );
        }
    }
}

/// Runs the smoke checks, writing the account to `out`. Returns the exit code.
pub fn run(opts: &Options, out: &mut dyn Write) -> io::Result<u8> {
    let cases = match smoke_cases() {
        Ok(c) => c,
        Err(e) => {
            writeln!(out, "skillspec smoke: a built-in case is invalid: {e}")?;
            return Ok(2);
        }
    };
    let schemas = match Schemas::load() {
        Ok(s) => s,
        Err(e) => {
            writeln!(
                out,
                "skillspec smoke: the embedded protocol schemas do not load: {e}"
            )?;
            return Ok(2);
        }
    };
    writeln!(
        out,
        "skillspec smoke: checking the adapter `{}` (protocol {PROTOCOL_VERSION}, {} s per answer)",
        one_line(&opts.command),
        opts.timeout.as_secs_f64()
    )?;
    out.flush()?;
    let mut probe = Probe::new(opts, schemas);
    let started = probe.start();
    let mut failed: Vec<(String, &str)> = Vec::new();
    let mut ran = 0;
    if started.is_ok() {
        let i = &probe.info;
        let took = probe.handshakes.first().copied().unwrap_or_default();
        writeln!(
            out,
            "handshake: answered in {:.2} s: {} {}{}, features: {}",
            took.as_secs_f64(),
            one_line(&i.name),
            one_line(&i.version),
            i.language
                .as_deref()
                .map(|l| format!(" ({})", one_line(l)))
                .unwrap_or_default(),
            if i.features.is_empty() {
                "none".to_owned()
            } else {
                i.features
                    .iter()
                    .map(|f| f.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )?;
        let fixtures = crate::suite::fixtures_for(
            None,
            None,
            crate::suite::copies_fixtures(cases.iter().map(|(c, _)| c)),
        )?;
        let run_opts = RunOptions {
            fixtures: fixtures.path().to_path_buf(),
            python: opts.python.clone(),
            temp_prefix: "skillspec-smoke-".into(),
        };
        for (n, (case, hint)) in cases.iter().enumerate() {
            let outcome = execution::run_case(case, &mut probe, &run_opts, n as u64 + 1);
            ran += 1;
            let word = match &outcome.status {
                Status::Pass => "pass",
                Status::Fail(_) => "FAIL",
                Status::Error { .. } => "ERROR",
                Status::Unsupported(_) => "unsupported",
                Status::Skipped(_) => "skipped",
                Status::NotRun => "not run",
            };
            writeln!(out, "case {:<28} {word}", one_line(&case.id))?;
            if !matches!(outcome.status, Status::Pass) {
                if !outcome.status.is_broken() {
                    for line in crate::reports::describe(&case.into(), &outcome).lines() {
                        writeln!(out, "    {line}")?;
                    }
                    writeln!(out, "    hint: {hint}")?;
                    failed.push((case.id.clone(), hint));
                } else {
                    writeln!(out, "    the adapter broke: see the problems below")?;
                    break;
                }
            }
            out.flush()?;
        }
        probe.stop();
    }
    // Whatever is left (a failed handshake) is stopped here.
    probe.proc = None;

    let findings = &probe.findings;
    let problems: Vec<&Finding> = findings
        .all()
        .iter()
        .filter(|f| f.severity == Severity::Problem)
        .collect();
    let warnings: Vec<&Finding> = findings
        .all()
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .collect();
    if started.is_ok() {
        let per_case = if probe.info.process_per_case {
            format!(
                "yes: the runner stops the adapter after every case and starts it again ({} start(s) in this smoke run, slowest handshake {:.2} s)",
                probe.starts,
                probe
                    .handshakes
                    .iter()
                    .max()
                    .copied()
                    .unwrap_or_default()
                    .as_secs_f64()
            )
        } else {
            "no: one process serves every case, so each `case_start` must give a fresh runtime (declare it in `started` if the runtime keeps state once loaded)".into()
        };
        writeln!(out, "process_per_case: {per_case}")?;
    }
    for (title, list) in [("problem", &problems), ("warning", &warnings)] {
        for (n, f) in list.iter().enumerate() {
            let times = if f.count > 1 {
                format!(" (seen {} times)", f.count)
            } else {
                String::new()
            };
            writeln!(out, "\n{title} {}: {}{times}", n + 1, one_line(&f.title))?;
            for d in &f.details {
                writeln!(out, "    {}", one_line(d))?;
            }
        }
    }
    let quoted = shell_quote(&opts.command);
    let code = if !problems.is_empty() {
        writeln!(
            out,
            "\nnot usable: fix the {} problem(s) above, then run `skillspec smoke --adapter {quoted}` again",
            problems.len()
        )?;
        3
    } else if !failed.is_empty() {
        writeln!(
            out,
            "\nthe adapter speaks the protocol, but {} of {ran} smoke case(s) failed ({}): check the hints above, then run `skillspec run --adapter {quoted}`",
            failed.len(),
            failed
                .iter()
                .map(|(id, _)| id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        1
    } else {
        writeln!(out, "\nlooks good: run `skillspec run --adapter {quoted}`")?;
        0
    };
    out.flush()?;
    Ok(code)
}

/// `text` quoted for a POSIX shell when it needs it.
fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b))
    {
        return text.to_owned();
    }
    format!("'{}'", one_line(&text.replace('\'', r"'\''")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smoke_cases_load() {
        let cases = smoke_cases().expect("the built-in cases are valid");
        assert_eq!(cases.len(), SMOKE_CASES.len());
        let mut ids: Vec<&str> = cases.iter().map(|(c, _)| c.id.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), cases.len());
    }

    #[test]
    fn the_schemas_catch_wrong_shapes() {
        let s = Schemas::load().expect("the embedded schemas compile");
        assert!(s
            .response_errors("case_started", &json!({"type": "case_started", "seq": 1}))
            .is_empty());
        let e = s.response_errors("case_started", &json!({"type": "case_started"}));
        assert!(e.iter().any(|e| e.contains("seq")), "{e:?}");
        assert!(s
            .result_errors(&WireStep::Discover, &json!({"loaded": [{"id": "a"}]}))
            .is_empty());
        let e = s.result_errors(&WireStep::Discover, &json!({"skills": ["a"]}));
        assert_eq!(
            e,
            [
                "at /: `loaded` is required and missing",
                "at /: `skills` is not allowed here"
            ]
        );
        let e = s.result_errors(&WireStep::Discover, &json!({"loaded": [{"id": 7}]}));
        assert_eq!(e, ["at /loaded/0/id: expected string, got a number (7)"]);
        let call = WireStep::Call {
            tool: "x".into(),
            args: json!({}),
        };
        let e = s.result_errors(&call, &json!({"ok": "yes"}));
        assert!(e[0].contains("\"ok\": true"), "{e:?}");
        let e = s.result_errors(&call, &json!({"ok": false, "error": {}}));
        assert!(e.iter().any(|e| e.contains("code")), "{e:?}");
    }

    /// The hand-written checker agrees with the `jsonschema` crate on valid and invalid
    /// messages of every definition.
    #[test]
    fn the_shape_checker_agrees_with_jsonschema() {
        let doc = |path: &str| -> Value {
            serde_json::from_slice(crate::suite::file(path).unwrap().bytes).unwrap()
        };
        let reference = |mut d: Value, def: &str| {
            d.as_object_mut().unwrap().remove("oneOf");
            d["$ref"] = json!(format!("#/$defs/{def}"));
            if let Some(r) = d.pointer_mut("/$defs/step_result/properties/result") {
                *r = json!({});
            }
            jsonschema::validator_for(&d).unwrap()
        };
        let samples: &[(&str, &str, Value)] = &[
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a", "version": "1"}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 1, "implementation": {"name": "a", "version": "1"}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a"}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a", "version": "1", "features": ["x", 3]}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a", "version": "1", "language": null, "process_per_case": true}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a", "version": "1", "extra": 1}}),
            ),
            (
                "response",
                "case_started",
                json!({"type": "case_started", "seq": 3}),
            ),
            (
                "response",
                "case_started",
                json!({"type": "case_started", "seq": -1}),
            ),
            (
                "response",
                "case_started",
                json!({"type": "case_started", "seq": 1.5}),
            ),
            (
                "response",
                "case_started",
                json!({"type": "case_started", "seq": "1"}),
            ),
            ("response", "case_started", json!({"type": "case_started"})),
            (
                "response",
                "step_result",
                json!({"type": "step_result", "seq": 1, "index": 0, "result": {"anything": 1}}),
            ),
            (
                "response",
                "step_result",
                json!({"type": "step_result", "seq": 1, "result": {}}),
            ),
            (
                "response",
                "case_ended",
                json!({"type": "case_ended", "seq": 1, "more": true}),
            ),
            (
                "response",
                "error",
                json!({"type": "error", "seq": 1, "message": "no"}),
            ),
            ("response", "error", json!({"type": "error", "message": 5})),
            (
                "response",
                "error",
                json!({"type": "error", "seq": null, "message": "no"}),
            ),
            (
                "result",
                "discover",
                json!({"loaded": [{"id": "a", "format": "portable"}]}),
            ),
            (
                "result",
                "discover",
                json!({"loaded": [{"id": "a", "format": "other"}]}),
            ),
            ("result", "discover", json!({"loaded": [{"name": "a"}]})),
            (
                "result",
                "discover",
                json!({"loaded": [], "skipped": [{"path": "x", "reason": "symlink"}]}),
            ),
            (
                "result",
                "discover",
                json!({"loaded": [], "skipped": [{"path": "x"}]}),
            ),
            ("result", "discover", json!({"skills": ["a"]})),
            (
                "result",
                "tools",
                json!({"offered": ["skill_read_reference"]}),
            ),
            (
                "result",
                "tools",
                json!({"offered": "skill_read_reference"}),
            ),
            ("result", "prompt", json!({"text": "a", "baseline": "b"})),
            ("result", "prompt", json!({"text": "a"})),
            (
                "result",
                "call_ok",
                json!({"ok": true, "value": {"content": "x"}}),
            ),
            ("result", "call_ok", json!({"ok": true, "value": "x"})),
            (
                "result",
                "call_error",
                json!({"ok": false, "error": {"code": "not_found"}}),
            ),
            (
                "result",
                "call_error",
                json!({"ok": false, "error": {"message": "x"}}),
            ),
            (
                "result",
                "call_error",
                json!({"ok": false, "error": {"code": 3}}),
            ),
            ("result", "new_turn", json!({})),
            ("result", "new_turn", json!({"x": 1})),
            ("result", "new_turn", json!([])),
        ];
        let s = Schemas::load().unwrap();
        let (mut valid, mut invalid) = (0, 0);
        for (doc_name, def, instance) in samples {
            let (mine, theirs) = match *doc_name {
                "response" => (
                    s.response.errors(def, instance),
                    reference(doc("protocol/response.schema.json"), def),
                ),
                _ => (
                    s.result.errors(def, instance),
                    reference(doc("protocol/step-result.schema.json"), def),
                ),
            };
            let expected = theirs.is_valid(instance);
            assert_eq!(mine.is_empty(), expected, "{def} {instance}: {mine:?}");
            if expected {
                valid += 1;
            } else {
                invalid += 1;
            }
        }
        assert!(
            valid >= 10 && invalid >= 15,
            "{valid} valid, {invalid} invalid samples"
        );
    }

    #[test]
    fn the_shape_checker_refuses_keywords_it_does_not_know() {
        let err =
            shape::Schema::new(json!({"$defs": {"a": {"properties": {"x": {"pattern": "^a"}}}}}))
                .err()
                .unwrap();
        assert!(
            err.contains("/$defs/a/properties/x/pattern") && err.contains("`pattern`"),
            "{err}"
        );
        assert!(shape::Schema::new(json!({"$ref": "other.json"})).is_err());
        let ok = shape::Schema::new(
            json!({"$defs": {"a": {"type": "integer", "minimum": 0, "maximum": 9}}}),
        )
        .unwrap();
        assert!(ok.errors("a", &json!(3)).is_empty());
        assert_eq!(
            ok.errors("a", &json!(-1)),
            ["at /: must be at least 0, got -1"]
        );
        assert_eq!(
            ok.errors("a", &json!(10)),
            ["at /: must be at most 9, got 10"]
        );
        assert_eq!(
            ok.errors("b", &json!(1)),
            ["the schema has no definition `b`"]
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("skillspec"), "skillspec");
        assert_eq!(shell_quote("python3 a.py"), "'python3 a.py'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn stderr_tails_are_bounded_and_visible() {
        let many: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let t = tail_lines(&many);
        assert_eq!(t.len(), TAIL_LINES + 1);
        assert!(t[0].contains("last 20 lines"));
        assert!(t.last().unwrap().ends_with("line 49"));
        assert_eq!(tail_lines("\n"), ["its stderr: (nothing)"]);
        assert!(tail_lines("a\u{1b}[31m")[1].contains("\\u{1b}"));
    }
}
