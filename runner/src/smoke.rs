//! `skillspec smoke --adapter CMD`: is this adapter usable, and if not, why, in plain words.
//!
//! It runs a handful of trivial cases (`runner/smoke-cases/*.yaml`, embedded, loaded by the
//! ordinary case loader: [`smoke_cases`]) through [`run_suite`] against the adapter, as `run`
//! does, with one difference: the adapter carries an [`Inspector`] ([`Checks`]) that sees every
//! exchange, so the conversation is lenient where it still can be (a polluting line is skipped, a
//! wrong `seq` accepted) and one pass lists as many problems as possible. Each problem becomes a
//! [`Finding`]: a handshake that never comes (with the exit status and stderr tail when the
//! process died), the wrong `protocol_version`, stdout polluted by logging, the wrong
//! `seq`/`index` echoed, answers of the wrong type, responses that do not match
//! `protocol/response.schema.json` and results that do not match
//! `protocol/step-result.schema.json` (the embedded schemas, checked by
//! [`crate::protocol::schema`]), unsolicited lines, a slow start, an adapter that does not exit on
//! `stop`, and what `process_per_case` means for it. The first case that breaks the adapter ends
//! the smoke run.
//!
//! Exit codes: 0 the adapter is usable and every smoke case passed; 1 it is usable but a smoke
//! case failed (the runtime, or how the adapter wires it, is wrong); 3 it is not usable.
//!
//! Clauses: PROTOCOL.md (the whole conversation).

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};

use crate::cases::{self, Case, CaseError};
use crate::execution::{run_suite, CaseOutcome, Observer, Policy, RunOptions, Status};
use crate::implementations::adapter::{Adapter, Inspector, Outgoing};
use crate::implementations::{ImplError, Implementation};
use crate::protocol::fault::{Fault, FaultKind};
use crate::protocol::schema::{bounded_json, SchemaError, Schemas};
use crate::protocol::transport::{Shutdown, TransportError, MAX_LINE, STOP_GRACE};
use crate::protocol::{ImplInfo, WireStep, PROTOCOL_VERSION};
use crate::reports::one_line;

/// A handshake slower than this is worth a warning.
pub const SLOW_START: Duration = Duration::from_secs(2);
/// Lines of stderr shown with a problem.
const TAIL_LINES: usize = 20;

/// The smoke cases, in the order they run: `(file name, hint when it fails, YAML)`.
pub const SMOKE_CASES: &[(&str, &str, &str)] = &[
    (
        "discover-one-skill.yaml",
        "the runtime must scan `config.skills_root`, an absolute path inside the case's `root`, \
         and report what loaded as {\"loaded\": [{\"id\": ..}]}",
        include_str!("../smoke-cases/discover-one-skill.yaml"),
    ),
    (
        "read-reference.yaml",
        "a `call` step is the tool call as the model makes it; its result is \
         {\"ok\": true, \"value\": {\"content\": ..}}",
        include_str!("../smoke-cases/read-reference.yaml"),
    ),
    (
        "read-missing.yaml",
        "a tool's own error is a result, {\"ok\": false, \"error\": {\"code\": \"not_found\"}}, \
         not a protocol `error` message",
        include_str!("../smoke-cases/read-missing.yaml"),
    ),
    (
        "run-approved-helper.yaml",
        "pass `config.script_allowlist` (the operator's allowlist text) and `config.python` to \
         the runtime",
        include_str!("../smoke-cases/run-approved-helper.yaml"),
    ),
    (
        "fresh-runtime.yaml",
        "every `case_start` must start a fresh runtime over the new `root` and `config`; a \
         runtime that keeps state once loaded needs `\"process_per_case\": true` in its \
         `started` answer",
        include_str!("../smoke-cases/fresh-runtime.yaml"),
    ),
];

/// The smoke cases, loaded like any suite (named `smoke:<file>` in messages), each with its
/// hint, in the order of [`SMOKE_CASES`].
pub fn smoke_cases() -> Result<Vec<(Case, &'static str)>, Vec<CaseError>> {
    let name = |file: &str| PathBuf::from(format!("smoke:{file}"));
    let sources = SMOKE_CASES.iter().map(|(file, _, text)| cases::CaseSource {
        file: name(file),
        area: Some("smoke".into()),
        text: Ok((*text).to_owned()),
    });
    let suite = cases::assemble(
        PathBuf::from("smoke:"),
        sources,
        Vec::new(),
        "no smoke case",
    )?;
    let mut out = Vec::new();
    for (file, hint, _) in SMOKE_CASES {
        if let Some(c) = suite.cases.iter().find(|c| c.file == name(file)) {
            out.push((c.clone(), *hint));
        }
    }
    Ok(out)
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

    /// How many findings there are so far.
    fn len(&self) -> usize {
        self.items.len()
    }
}

/// What the checks learned, shared between the adapter's inspector and the smoke run.
struct State {
    schemas: Schemas,
    timeout: Duration,
    findings: Findings,
    /// How long each handshake took.
    handshakes: Vec<Duration>,
    /// Processes started.
    starts: usize,
    /// Lines that were no protocol message, while the current request waited for its answer.
    polluted: Vec<String>,
    /// The findings there were before the current answer was checked: a fault that follows an
    /// answer already diagnosed (the wrong type, a refused handshake) adds nothing.
    before_answer: Option<usize>,
    /// The current step's result did not match its schema (already diagnosed).
    result_invalid: bool,
}

/// `skillspec smoke`'s checks, as the adapter's [`Inspector`].
#[derive(Clone)]
pub struct Checks(Arc<Mutex<State>>);

impl Checks {
    fn new(schemas: Schemas, timeout: Duration) -> Checks {
        Checks(Arc::new(Mutex::new(State {
            schemas,
            timeout,
            findings: Findings::default(),
            handshakes: Vec::new(),
            starts: 0,
            polluted: Vec::new(),
            before_answer: None,
            result_invalid: false,
        })))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The advice for a line written while no request was outstanding.
const ONE_LINE_PER_REQUEST: &str =
    "write exactly one line per request, the answer, after reading the whole request";

impl State {
    /// Notes the polluting lines of the request that just ended.
    fn flush_polluted(&mut self, what: &str) {
        if self.polluted.is_empty() {
            return;
        }
        let polluted = std::mem::take(&mut self.polluted);
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
            "stdout is polluted: the adapter printed lines that are not protocol messages".into(),
            details,
        );
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

    /// Checks an answer: its type, the schema, the `seq`/`index` echo, the protocol version.
    fn check_answer(&mut self, request: &Outgoing<'_>, answer: &Value) {
        let what = request.words();
        let expected = request.answer_type();
        let kind = answer.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "error" {
            let errors = self.schemas.response_errors("error", answer);
            self.schema_problem(&what, "error", errors);
            if matches!(request, Outgoing::Start { .. }) {
                let message = answer
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)");
                self.findings.problem(
                    Kind::Refused,
                    format!("the adapter refused the handshake: {}", one_line(message)),
                    vec![],
                );
            }
            return;
        }
        if kind != expected {
            self.findings.problem(
                Kind::WrongType,
                format!("the adapter answered {what} with the wrong message type"),
                vec![
                    format!(
                        "expected {{\"type\": \"{expected}\", ..}}, got {}",
                        one_line(&bounded_json(answer))
                    ),
                    "answer each request in order, with exactly one line".into(),
                ],
            );
            return;
        }
        let mut errors = self.schemas.response_errors(expected, answer);
        if expected == "started" {
            // A wrong version has its own diagnosis.
            errors.retain(|e| !e.starts_with("at /protocol_version:"));
            self.check_version(answer);
        }
        self.schema_problem(&what, expected, errors);
        let id = request.id();
        let echoes = [
            ("seq", id.seq.map(Value::from)),
            ("index", id.index.map(Value::from)),
        ];
        for (key, sent) in echoes {
            let Some(sent) = sent else { continue };
            let got = answer.get(key).cloned().unwrap_or(Value::Null);
            if got != sent {
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
    }

    fn check_version(&mut self, answer: &Value) {
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
    }

    /// Describes an exchange that got no answer: the adapter exited, or stayed silent.
    fn no_answer(&mut self, request: &Outgoing<'_>, fault: &Fault) {
        let what = request.words();
        let timeout = self.timeout.as_secs_f64();
        let handshake = matches!(request, Outgoing::Start { .. });
        let tail = tail_lines(without_dropped_note(
            fault.stderr_tail.as_deref().unwrap_or(""),
        ));
        if let Some(exit) = fault.exited {
            let mut details = vec![match exit {
                Some(exit) => exit.to_string(),
                None => "it is gone, its exit status unknown".into(),
            }];
            details.extend(tail);
            let title = if handshake {
                "no handshake: the adapter exited before answering `start`".to_owned()
            } else {
                format!("the adapter exited while the runner waited for its answer to {what}")
            };
            self.findings.problem(Kind::Exited, title, details);
            return;
        }
        let mut details = tail;
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

    /// What a fault of an exchange says about the adapter, where its answer did not say it
    /// already.
    fn fault(&mut self, request: Option<&Outgoing<'_>>, fault: &Fault) {
        let Some(request) = request else {
            // It could not even be spawned.
            if let FaultKind::CannotStart { error, .. } = &fault.kind {
                self.findings.problem(
                    Kind::CannotStart,
                    format!("the adapter cannot be started: {error}"),
                    vec![],
                );
            }
            return;
        };
        let what = request.words();
        self.flush_polluted(&what);
        let diagnosed = self
            .before_answer
            .take()
            .is_some_and(|n| self.findings.len() > n);
        match &fault.kind {
            FaultKind::Transport(TransportError::LineTooLong { .. }) => self.findings.problem(
                Kind::TooLong,
                format!("an answer line is longer than {MAX_LINE} bytes (the limit)"),
                vec![format!("answering {what}")],
            ),
            FaultKind::Transport(TransportError::AnsweredEarly { preview, .. }) => {
                self.findings.problem(
                    Kind::Unsolicited,
                    "the adapter wrote to stdout before it had read the whole request".into(),
                    vec![
                        format!("while {what} was written: {preview}"),
                        ONE_LINE_PER_REQUEST.into(),
                    ],
                )
            }
            FaultKind::Transport(_) => self.no_answer(request, fault),
            FaultKind::BadResult(m) => {
                if !std::mem::take(&mut self.result_invalid) {
                    self.findings.problem(
                        Kind::ResultSchema,
                        "a step result does not have the shape the runner reads".into(),
                        vec![format!(
                            "the result of {what}: {}",
                            one_line(&m.to_string())
                        )],
                    );
                }
            }
            FaultKind::NotAMessage { .. } if matches!(request, Outgoing::Start { .. }) => {
                if !self.findings.has(Kind::Schema) {
                    self.findings.problem(
                        Kind::Schema,
                        "the `started` answer has no usable `implementation` {\"name\", \"version\", ..}".into(),
                        vec![],
                    );
                }
            }
            _ if diagnosed => {}
            other => self.findings.problem(
                Kind::Schema,
                format!(
                    "an answer to {what} cannot be used: {}",
                    one_line(&other.to_string())
                ),
                vec![],
            ),
        }
    }
}

impl Inspector for Checks {
    fn spawned(&mut self) {
        self.state().starts += 1;
    }

    fn unsolicited(&mut self, request: &Outgoing<'_>, bytes: &str) {
        self.state().findings.problem(
            Kind::Unsolicited,
            "the adapter wrote to stdout while no request was outstanding".into(),
            vec![
                format!("before {}: {bytes}", request.words()),
                ONE_LINE_PER_REQUEST.into(),
            ],
        );
    }

    fn stray_line(&mut self, request: &Outgoing<'_>, line: &[u8], not_utf8: Option<usize>) {
        let preview = crate::protocol::transport::preview(line);
        let mut s = self.state();
        match not_utf8 {
            Some(at) => s.findings.problem(
                Kind::NotUtf8,
                "the adapter wrote a line that is not UTF-8".into(),
                vec![format!(
                    "answering {}, invalid at byte {at}: {preview}",
                    request.words()
                )],
            ),
            None => s.polluted.push(preview),
        }
    }

    fn answer(&mut self, request: &Outgoing<'_>, answer: &Value) {
        let mut s = self.state();
        s.flush_polluted(&request.words());
        s.before_answer = Some(s.findings.len());
        s.check_answer(request, answer);
    }

    fn started(&mut self, info: &ImplInfo, took: Duration) {
        let mut s = self.state();
        s.before_answer = None;
        s.handshakes.push(took);
        if took > SLOW_START {
            s.findings.warning(
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
        if !info.unknown_features.is_empty() {
            s.findings.warning(
                Kind::UnknownFeatures,
                format!(
                    "unknown feature names are ignored: {}",
                    one_line(&info.unknown_features.join(", "))
                ),
                vec![format!(
                    "known: {}",
                    crate::protocol::features::Feature::ALL
                        .iter()
                        .map(|f| f.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )],
            );
        }
    }

    fn result(&mut self, request: &Outgoing<'_>, step: &WireStep, result: &Value) {
        let mut s = self.state();
        s.before_answer = None;
        let errors = s.schemas.result_errors(step, result);
        s.result_invalid = !errors.is_empty();
        if s.result_invalid {
            let mut details = vec![format!("the result of {}:", request.words())];
            details.extend(errors.into_iter().map(|e| format!("  {e}")));
            details.push(
                "PROTOCOL.md (`step`) gives each operation's result; protocol/step-result.schema.json is the schema"
                    .into(),
            );
            s.findings.problem(
                Kind::ResultSchema,
                "a step result does not match protocol/step-result.schema.json".into(),
                details,
            );
        }
    }

    fn fault(&mut self, request: Option<&Outgoing<'_>>, fault: &Fault) {
        self.state().fault(request, fault);
    }

    fn stopped(&mut self, how: Shutdown, late: Option<String>) {
        let mut s = self.state();
        if let Some(late) = late {
            s.findings.problem(
                Kind::Unsolicited,
                "the adapter wrote to stdout while no request was outstanding".into(),
                vec![
                    format!("after its last answer: {late}"),
                    ONE_LINE_PER_REQUEST.into(),
                ],
            );
        }
        let signal = match how {
            Shutdown::Term => "SIGTERM",
            Shutdown::Kill => "SIGKILL",
            Shutdown::Already | Shutdown::Exited => return,
        };
        s.findings.warning(
            Kind::SlowStop,
            format!(
                "the adapter did not exit within {} s of `stop` and the end of its stdin; the runner needed {signal}",
                STOP_GRACE.as_secs()
            ),
            vec!["exit when stdin ends or on {\"type\": \"stop\"} (PROTOCOL.md, Shutdown)".into()],
        );
    }
}

/// The smoke run's view of the suite: one line per case, the failures' details and hints, and
/// the first breakage ends the run.
struct Account<'a> {
    out: &'a mut dyn Write,
    checks: Checks,
    hints: &'a [(Case, &'static str)],
    /// The ids and hints of the cases that failed (the adapter stayed usable).
    failed: Vec<(String, &'static str)>,
    /// The adapter broke: the run stops.
    broke: bool,
    /// The first error writing the account.
    error: Option<io::Error>,
}

impl Account<'_> {
    fn write(&mut self, text: std::fmt::Arguments<'_>) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_fmt(text).and_then(|()| self.out.flush()) {
                self.error = Some(e);
            }
        }
    }
}

impl Observer for Account<'_> {
    fn started(&mut self, i: &ImplInfo, _workers: usize) {
        let took = self
            .checks
            .state()
            .handshakes
            .first()
            .copied()
            .unwrap_or_default();
        let features = if i.features.is_empty() {
            "none".to_owned()
        } else {
            let names: Vec<&str> = i.features.iter().map(|f| f.as_str()).collect();
            names.join(", ")
        };
        let language = i
            .language
            .as_deref()
            .map(|l| format!(" ({})", one_line(l)))
            .unwrap_or_default();
        self.write(format_args!(
            "handshake: answered in {:.2} s: {} {}{language}, features: {features}\n",
            took.as_secs_f64(),
            one_line(&i.name),
            one_line(&i.version),
        ));
    }

    fn case_finished(&mut self, position: usize, case: &Case, outcome: &CaseOutcome) {
        let word = match &outcome.status {
            Status::Pass => "pass",
            Status::NotExercised(_) => "not exercised",
            Status::Fail(_) => "FAIL",
            Status::Error { .. } => "ERROR",
            Status::Unsupported(_) => "unsupported",
            Status::Skipped(_) => "skipped",
            Status::NotRun => "not run",
        };
        self.write(format_args!("case {:<28} {word}\n", one_line(&case.id)));
        if matches!(outcome.status, Status::Pass) {
            return;
        }
        if outcome.status.is_broken() {
            self.write(format_args!(
                "    the adapter broke: see the problems below\n"
            ));
            self.broke = true;
            return;
        }
        let hint = self.hints.get(position).map_or("", |(_, h)| *h);
        for line in crate::reports::describe(&case.into(), outcome).lines() {
            self.write(format_args!("    {line}\n"));
        }
        self.write(format_args!("    hint: {hint}\n"));
        self.failed.push((case.id.clone(), hint));
    }

    fn stop(&mut self) -> Option<String> {
        self.broke
            .then(|| "the adapter broke during a smoke case".into())
    }
}

/// Runs the smoke checks, writing the account to `out`. Returns the exit code.
pub fn run(opts: &Options, out: &mut dyn Write) -> io::Result<u8> {
    let cases = match smoke_cases() {
        Ok(c) => c,
        Err(errors) => {
            for e in errors {
                writeln!(out, "skillspec smoke: a built-in case is invalid: {e}")?;
            }
            return Ok(2);
        }
    };
    let schemas = match Schemas::load() {
        Ok(s) => s,
        Err(e) => return schemas_do_not_load(out, &e),
    };
    writeln!(
        out,
        "skillspec smoke: checking the adapter `{}` (protocol {PROTOCOL_VERSION}, {} s per answer)",
        one_line(&opts.command),
        opts.timeout.as_secs_f64()
    )?;
    out.flush()?;
    let checks = Checks::new(schemas, opts.timeout);
    let selected: Vec<&Case> = cases.iter().map(|(c, _)| c).collect();
    let fixtures = crate::suite::fixtures_for(
        None,
        None,
        crate::suite::copies_fixtures(selected.iter().copied()),
    )?;
    let run_opts = RunOptions {
        fixtures: fixtures.path().to_path_buf(),
        python: opts.python.clone(),
        temp_prefix: "skillspec-smoke-".into(),
        hang_bound: crate::execution::HANG_BOUND,
        for_information: Vec::new(),
    };
    let start = |_worker: usize| -> Result<Box<dyn Implementation>, ImplError> {
        let inspector: Box<dyn Inspector> = Box::new(checks.clone());
        let adapter = Adapter::spawn_inspected(
            &opts.command,
            opts.timeout,
            Some(crate::protocol::transport::MEMORY_BOUND),
            None,
            Some(inspector),
        )?;
        Ok(Box::new(adapter))
    };
    let mut account = Account {
        out,
        checks: checks.clone(),
        hints: &cases,
        failed: Vec::new(),
        broke: false,
        error: None,
    };
    let outcome = run_suite(
        &selected,
        &start,
        &run_opts,
        &Policy::default(),
        &mut account,
    );
    let ran = outcome
        .results
        .iter()
        .filter(|o| !matches!(o.status, Status::NotRun))
        .count();
    let Account {
        out, failed, error, ..
    } = account;
    if let Some(e) = error {
        return Err(e);
    }
    let started = outcome.not_started.is_none();
    let state = checks.state();
    conclude(
        out,
        opts,
        &state,
        started.then_some(&outcome.info),
        &failed,
        ran,
    )
}

fn schemas_do_not_load(out: &mut dyn Write, e: &SchemaError) -> io::Result<u8> {
    writeln!(
        out,
        "skillspec smoke: the embedded protocol schemas do not load: {e}"
    )?;
    Ok(2)
}

/// Prints what `process_per_case` means, the problems and the warnings, and the verdict; returns
/// the exit code.
fn conclude(
    out: &mut dyn Write,
    opts: &Options,
    state: &State,
    started: Option<&ImplInfo>,
    failed: &[(String, &str)],
    ran: usize,
) -> io::Result<u8> {
    let findings = &state.findings;
    let of = |severity: Severity| -> Vec<&Finding> {
        findings
            .all()
            .iter()
            .filter(|f| f.severity == severity)
            .collect()
    };
    let (problems, warnings) = (of(Severity::Problem), of(Severity::Warning));
    if let Some(info) = started {
        let per_case = if info.process_per_case {
            format!(
                "yes: the runner stops the adapter after every case and starts it again ({} start(s) in this smoke run, slowest handshake {:.2} s)",
                state.starts,
                state.handshakes.iter().max().copied().unwrap_or_default().as_secs_f64()
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
        let ids: Vec<&str> = failed.iter().map(|(id, _)| id.as_str()).collect();
        writeln!(
            out,
            "\nthe adapter speaks the protocol, but {} of {ran} smoke case(s) failed ({}): check the hints above, then run `skillspec run --adapter {quoted}`",
            failed.len(),
            ids.join(", ")
        )?;
        1
    } else {
        writeln!(out, "\nlooks good: run `skillspec run --adapter {quoted}`")?;
        0
    };
    out.flush()?;
    Ok(code)
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

/// A stderr tail without the transport's note of how many bytes came before it (`[N earlier
/// bytes dropped]`): smoke shows the last lines only.
fn without_dropped_note(tail: &str) -> &str {
    tail.strip_prefix('[')
        .and_then(|rest| rest.split_once(" earlier bytes dropped]"))
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map_or(tail, |(_, rest)| rest)
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
        assert_eq!(without_dropped_note("[12 earlier bytes dropped]EEE"), "EEE");
        assert_eq!(without_dropped_note("[x] earlier"), "[x] earlier");
    }
}
