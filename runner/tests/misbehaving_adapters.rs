//! `skillspec run` against adapters that misbehave (the Python scripts in `tests/adapters/`):
//! each run must end within its step timeout plus the bounded shutdown, stay under 100 MiB
//! resident (measured with `wait4`), exit with the documented code, and report what broke with
//! the adapter's stderr tail. Each run uses a few small cases written into its own temporary
//! directory, which is also the run's `TMPDIR` (so no case root may be left there).
//!
//! `ru_maxrss` from `wait4` is the peak of the runner and of the children it reaped (the
//! adapters), so the adapters keep themselves small (they write long lines in pieces) and the
//! bound is, if anything, conservative. Each run also has a 2 GiB address-space limit, so that
//! a runner that buffers without bound fails a test instead of exhausting the machine.

mod common;
use common::{bin, repo};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The runner's resident-memory ceiling under any adapter.
const MAX_RSS_KIB: i64 = 100 * 1024;
/// What a broken adapter may cost beyond its step timeout: the bounded shutdown (stop, SIGTERM,
/// SIGKILL: 3 s at most) and slack for a loaded machine.
const MARGIN: Duration = Duration::from_secs(6);

/// `python3 tests/adapters/NAME args...`, quoted for `/bin/sh`.
fn adapter(name_and_args: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/adapters");
    format!("python3 {}/{name_and_args}", dir.display())
}

/// A case whose one `tools` step an adapter built on `proto.py` passes.
fn tools_case(id: &str) -> String {
    format!(
        r#"id: {id}
summary: The tools step reaches the adapter.
clauses: [tools.pipeline]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: first\n---\n"
steps:
  - tools:
    expect:
      offered: [skill_read_reference, skill_run_script]
"#
    )
}

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    /// A temporary directory with `cases/adapter/<file>.yaml` for each `(file, text)`.
    fn new(cases: &[(&str, String)]) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("cases/adapter")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        for (name, text) in cases {
            std::fs::write(dir.path().join(format!("cases/adapter/{name}.yaml")), text).unwrap();
        }
        Setup { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Starts `skillspec run --cases ... --adapter ADAPTER --report ...` with `extra` arguments,
    /// under a 2 GiB address-space limit (so that a runner that buffers without bound fails
    /// here instead of taking the machine's memory), `TMPDIR` in this directory, and its output
    /// in files.
    #[allow(
        clippy::zombie_processes,
        reason = "waited for with wait4 in Runner::wait, for its rusage"
    )]
    fn spawn(&self, adapter_cmd: &str, extra: &[&str]) -> Runner {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(r#"ulimit -v 2097152 && exec "$0" "$@""#)
            .arg(bin())
            .args(["run", "--cases"])
            .arg(self.path("cases"))
            .args(["--adapter", adapter_cmd, "--report"])
            .arg(self.path("report"))
            .args(extra)
            .env("TMPDIR", self.path("tmp"))
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(self.path("stdout")).unwrap())
            .stderr(std::fs::File::create(self.path("stderr")).unwrap());
        let child = cmd.spawn().expect("the runner starts");
        Runner {
            pid: child.id() as i32,
            started: Instant::now(),
        }
    }

    /// Runs to the end (at most `limit`) and collects everything.
    fn run(&self, adapter_cmd: &str, extra: &[&str], limit: Duration) -> Outcome {
        let runner = self.spawn(adapter_cmd, extra);
        self.finish(runner, limit)
    }

    fn finish(&self, runner: Runner, limit: Duration) -> Outcome {
        let (status, max_rss_kib, elapsed) = runner.wait(limit);
        let mut output = std::fs::read(self.path("stdout")).unwrap();
        output.extend(std::fs::read(self.path("stderr")).unwrap());
        let report = std::fs::read(self.path("report/report.json"))
            .ok()
            .map(|b| serde_json::from_slice::<Value>(&b).expect("report.json is JSON"));
        if let Some(r) = &report {
            check_schema(r);
        }
        let junit = std::fs::read(self.path("report/junit.xml")).ok();
        let leftovers: Vec<String> = std::fs::read_dir(self.path("tmp"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        Outcome {
            status,
            max_rss_kib,
            elapsed,
            text: String::from_utf8_lossy(&output).into_owned(),
            output,
            report,
            junit,
            leftovers,
        }
    }
}

struct Runner {
    pid: i32,
    started: Instant,
}

impl Runner {
    /// Waits for the runner (killing it after `limit`) and returns its status, its peak
    /// resident set in KiB, and how long it ran.
    fn wait(&self, limit: Duration) -> (ExitStatus, i64, Duration) {
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: `rusage` is a plain C struct of integers; all-zero bytes are a valid value.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: `self.pid` is this test's own child, waited for only here (std's `Child`
            // handle was dropped without waiting), and both out-pointers point at live, writable
            // locals of the types `wait4` expects.
            let r = unsafe { libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut usage) };
            if r == self.pid {
                return (
                    ExitStatus::from_raw(status),
                    usage.ru_maxrss,
                    self.started.elapsed(),
                );
            }
            assert_eq!(r, 0, "wait4: {}", std::io::Error::last_os_error());
            if self.started.elapsed() > limit {
                // Not reaped yet, so the pid is still this child's.
                let pid = rustix::process::Pid::from_raw(self.pid).unwrap();
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                panic!("the runner was still running after {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.pid).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
    }
}

struct Outcome {
    status: ExitStatus,
    max_rss_kib: i64,
    elapsed: Duration,
    output: Vec<u8>,
    text: String,
    report: Option<Value>,
    junit: Option<Vec<u8>>,
    leftovers: Vec<String>,
}

impl Outcome {
    /// The exit code, the memory bound, the time bound, and no case root left behind.
    fn check(&self, code: i32, within: Duration) -> &Self {
        // Shown with `--nocapture`: what each misbehaviour cost.
        eprintln!(
            "exit {:?}, peak RSS {} KiB, {:.1} s",
            self.status.code(),
            self.max_rss_kib,
            self.elapsed.as_secs_f64()
        );
        assert_eq!(self.status.code(), Some(code), "{}", self.text);
        assert!(
            self.max_rss_kib < MAX_RSS_KIB,
            "the runner peaked at {} KiB resident",
            self.max_rss_kib
        );
        assert!(
            self.elapsed < within,
            "the run took {:?} (bound {within:?})\n{}",
            self.elapsed,
            self.text
        );
        assert!(
            self.leftovers.is_empty(),
            "left in TMPDIR: {:?}",
            self.leftovers
        );
        self
    }

    fn report(&self) -> &Value {
        self.report.as_ref().expect("report.json written")
    }

    fn case(&self, id: &str) -> &Value {
        self.report()["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no case {id} in the report"))
    }
}

fn check_schema(report: &Value) {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo().join("reports/report.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the report schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report.json does not match its schema: {errors:?}"
    );
}

/// A broken case in the report: error, the unanswered request, and the stderr tail.
fn assert_broken(case: &Value, request: Value, error_has: &str, stderr_has: &str) {
    assert_eq!(case["status"], "error", "{case}");
    assert_eq!(case["broken_implementation"], true, "{case}");
    assert_eq!(case["unanswered_request"], request, "{case}");
    let error = case["error"].as_str().unwrap();
    assert!(error.contains(error_has), "{error}");
    let stderr = case["adapter_stderr"].as_str().unwrap();
    assert!(stderr.contains(stderr_has), "{stderr:?}");
}

#[test]
fn a_stderr_flood_without_newlines_keeps_only_a_bounded_tail() {
    let s = Setup::new(&[("one", tools_case("adapter.one"))]);
    let o = s.run(
        &adapter("stderr_flood.py"),
        &["--step-timeout", "2"],
        Duration::from_secs(60),
    );
    o.check(3, Duration::from_secs(2) + MARGIN);
    let case = o.case("adapter.one");
    assert_broken(
        case,
        serde_json::json!({"type": "case_start", "seq": 1}),
        "no response within 2 s",
        "EEEE",
    );
    // The last 8 KiB, with a note of how much came before.
    let tail = case["adapter_stderr"].as_str().unwrap();
    assert!(
        tail.starts_with('[') && tail.contains("earlier bytes dropped]"),
        "{}",
        &tail[..60]
    );
    assert!(tail.len() <= 8 * 1024 + 64, "{} bytes", tail.len());
    assert!(o.text.contains("adapter stderr (its last"), "{}", o.text);
}

#[test]
fn unsolicited_stdout_is_a_protocol_error_and_is_not_buffered() {
    // The adapter answers the first step, then floods stdout during the runner's 3 s wait.
    let flood_case = r#"id: adapter.flood
summary: An adapter that writes while nobody asked.
clauses: [tools.pipeline]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: first\n---\n"
steps:
  - tools:
    expect:
      offered: [skill_read_reference, skill_run_script]
  - wait: 3000
  - tools:
    expect:
      offered: [skill_read_reference, skill_run_script]
"#;
    let s = Setup::new(&[("flood", flood_case.to_owned())]);
    let o = s.run(
        &adapter("stdout_flood.py"),
        &["--step-timeout", "2"],
        Duration::from_secs(60),
    );
    o.check(3, Duration::from_secs(3 + 2) + MARGIN);
    assert_broken(
        o.case("adapter.flood"),
        serde_json::json!({"type": "step", "seq": 1, "index": 2}),
        "while no request was outstanding",
        "",
    );

    // An extra line sent together with the handshake answer is caught at the next request.
    let s = Setup::new(&[("one", tools_case("adapter.one"))]);
    let o = s.run(
        &adapter("extra_line.py"),
        &["--step-timeout", "2"],
        Duration::from_secs(60),
    );
    o.check(3, Duration::from_secs(2) + MARGIN);
    assert_broken(
        o.case("adapter.one"),
        serde_json::json!({"type": "case_start", "seq": 1}),
        "while no request was outstanding",
        "",
    );
}

#[test]
fn writing_a_large_request_to_an_adapter_that_stopped_reading_times_out() {
    let big = r#"id: adapter.big
summary: A call with an argument of 15 MB.
clauses: [tools.pipeline]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: first\n---\n"
steps:
  - call: {tool: no_such_tool, args: {text: {$repeat: "0123456789abcde", times: 1000000}}}
    expect:
      error: unknown_tool
"#;
    let s = Setup::new(&[("big", big.to_owned())]);
    let o = s.run(
        &adapter("stops_reading.py"),
        &["--step-timeout", "2"],
        Duration::from_secs(60),
    );
    o.check(3, Duration::from_secs(2) + MARGIN);
    assert_broken(
        o.case("adapter.big"),
        serde_json::json!({"type": "step", "seq": 1, "index": 0}),
        "did not read the request within 2 s",
        "stopped reading stdin",
    );
}

#[test]
fn non_utf8_stderr_is_kept_lossily_and_breaks_nothing() {
    // The adapter logs far more Latin-1 than a pipe holds for every request, and exits in the
    // middle of the second case.
    let s = Setup::new(&[
        ("a-chatty", tools_case("adapter.chatty")),
        ("b-crash", tools_case("adapter.crash")),
    ]);
    let o = s.run(
        &adapter("latin1_stderr.py"),
        &["--step-timeout", "5"],
        Duration::from_secs(60),
    );
    o.check(1, Duration::from_secs(5) + MARGIN);
    assert_eq!(o.case("adapter.chatty")["status"], "pass");
    assert_broken(
        o.case("adapter.crash"),
        serde_json::json!({"type": "case_start", "seq": 2}),
        "closed its stdout",
        "caf\u{fffd} crashed",
    );
}

#[test]
fn a_response_line_that_is_not_utf8_is_a_protocol_error() {
    let s = Setup::new(&[("one", tools_case("adapter.one"))]);
    let o = s.run(
        &adapter("bad_utf8_stdout.py"),
        &["--step-timeout", "2"],
        Duration::from_secs(60),
    );
    o.check(3, Duration::from_secs(2) + MARGIN);
    assert_broken(
        o.case("adapter.one"),
        serde_json::json!({"type": "case_start", "seq": 1}),
        "not valid UTF-8",
        "",
    );
}

#[test]
fn a_response_line_of_16_mib_passes_and_a_longer_one_is_a_protocol_error() {
    let max = r#"id: adapter.max
summary: A prompt of 16 MiB, the longest line the protocol allows.
clauses: [tools.pipeline]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: first\n---\n"
steps:
  - prompt:
    expect:
      contains: [ppppp]
"#;
    let s = Setup::new(&[
        ("a-max", max.to_owned()),
        ("b-over", tools_case("adapter.over")),
    ]);
    let o = s.run(
        &adapter("long_line.py"),
        &["--step-timeout", "10"],
        Duration::from_secs(60),
    );
    o.check(1, Duration::from_secs(10) + MARGIN);
    assert_eq!(o.case("adapter.max")["status"], "pass");
    assert_broken(
        o.case("adapter.over"),
        serde_json::json!({"type": "case_start", "seq": 2}),
        "longer than 16777216 bytes",
        "",
    );
}

#[test]
fn an_adapter_that_never_answers_stops_the_run_with_exit_3() {
    let gated = r#"id: adapter.a-gated
summary: Needs a feature the adapter does not declare, so it is never sent.
clauses: [run.platform]
requires: [platform-emulation]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: first\n---\n"
steps:
  - tools:
    expect:
      offered: [skill_read_reference, skill_run_script]
"#;
    let mut cases = vec![("a-gated".to_owned(), gated.to_owned())];
    for n in 1..=6 {
        cases.push((format!("c{n}"), tools_case(&format!("adapter.c{n}"))));
    }
    let cases: Vec<(&str, String)> = cases.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let s = Setup::new(&cases);
    let o = s.run(
        &adapter("never_answers.py"),
        &["--step-timeout", "1"],
        Duration::from_secs(120),
    );
    // Four cases broke it (the first breakage and three futile restarts), each costing its
    // step timeout and a shutdown.
    o.check(3, 4 * Duration::from_secs(1) + 2 * MARGIN);
    let summary = &o.report()["summary"];
    assert_eq!(summary["unsupported"], 1, "{summary}");
    assert_eq!(summary["errored"], 4, "{summary}");
    assert_eq!(summary["not_run"], 2, "{summary}");
    for (n, seq) in [(1, 2), (4, 5)] {
        assert_broken(
            o.case(&format!("adapter.c{n}")),
            serde_json::json!({"type": "case_start", "seq": seq}),
            "no response within 1 s",
            "hanging from now on",
        );
    }
    for n in [5, 6] {
        let c = o.case(&format!("adapter.c{n}"));
        assert_eq!(
            (&c["status"], &c["verdict"]),
            (&"not-run".into(), &"not-run".into())
        );
    }
    let reason = o.report()["stopped"]["reason"].as_str().unwrap();
    assert!(reason.contains("restarted 3 times"), "{reason}");
    assert!(
        o.text.contains("stopped early:") && o.text.contains("2 not run"),
        "{}",
        o.text
    );
    let junit = String::from_utf8(o.junit.clone().unwrap()).unwrap();
    assert_eq!(junit.matches("NOT RUN adapter.c").count(), 2, "{junit}");
}

#[test]
fn an_adapter_that_cannot_start_still_gets_a_report() {
    let s = Setup::new(&[("one", tools_case("adapter.one"))]);
    let o = s.run(
        "echo 'something went wrong' >&2; read request; echo not-json",
        &["--step-timeout", "2"],
        Duration::from_secs(30),
    );
    o.check(3, MARGIN);
    assert_eq!(o.report()["summary"]["not_run"], 1);
    let stopped = &o.report()["stopped"];
    assert_eq!(
        stopped["unanswered_request"],
        serde_json::json!({"type": "start"})
    );
    assert!(
        stopped["error"].as_str().unwrap().contains("not JSON"),
        "{stopped}"
    );
    assert!(stopped["adapter_stderr"]
        .as_str()
        .unwrap()
        .contains("something went wrong"));
    assert!(o.text.contains("something went wrong"), "{}", o.text);
}

/// Characters that must not reach a terminal: C0 controls but `\n` and `\t`, DEL, C1 controls,
/// and the bidirectional overrides.
fn terminal_unsafe(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            (c.is_control() && *c != '\n' && *c != '\t') || matches!(c, '\u{202a}'..='\u{202e}')
        })
        .collect()
}

/// Characters XML 1.0 does not allow.
fn xml_forbidden(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
        })
        .collect()
}

#[test]
fn control_characters_from_an_adapter_are_escaped() {
    let s = Setup::new(&[
        ("a-refused", tools_case("adapter.refused")),
        ("b-crash", tools_case("adapter.crash")),
    ]);
    let o = s.run(
        &adapter("control_chars.py"),
        &["--step-timeout", "2"],
        Duration::from_secs(60),
    );
    // The refusal is an error of a live adapter, so not every case broke it.
    o.check(1, Duration::from_secs(2) + MARGIN);
    let text = String::from_utf8(o.output.clone()).expect("the runner prints UTF-8");
    assert_eq!(terminal_unsafe(&text), Vec::<char>::new(), "{text}");
    // What was escaped is still there to read.
    assert!(text.contains("evil\\u{1b}[2J"), "{text}");
    assert!(text.contains("refused\\u{1b}"), "{text}");
    assert!(text.contains("dying\\u{1b}"), "{text}");
    let junit = String::from_utf8(o.junit.clone().unwrap()).unwrap();
    assert_eq!(xml_forbidden(&junit), Vec::<char>::new());
    assert!(junit.contains("dying\\u{1b}"), "{junit}");
    // report.json keeps the exact text, escaped the JSON way.
    let crash = o.case("adapter.crash");
    assert!(crash["adapter_stderr"]
        .as_str()
        .unwrap()
        .contains("dying\u{1b}[2J"));
    assert_eq!(o.case("adapter.refused")["broken_implementation"], false);
}

/// The lines of `text` that start with `prefix` (a line of the runner's own: an adapter's
/// multi-line message is printed indented under its case).
fn lines_starting(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

#[test]
fn line_breaks_from_an_adapter_cannot_forge_the_runners_lines() {
    let s = Setup::new(&[("a-refused", tools_case("adapter.refused"))]);
    let o = s.run(
        &adapter("forged_lines.py"),
        &["--step-timeout", "2"],
        Duration::from_secs(60),
    );
    o.check(1, Duration::from_secs(2) + MARGIN);
    let text = String::from_utf8(o.output.clone()).expect("the runner prints UTF-8");
    assert!(!text.contains('\r'), "{text}");
    let results = lines_starting(&text, "result:");
    assert_eq!(results.len(), 1, "one result line, the runner's: {text}");
    assert!(results[0].starts_with("result: FAILED"), "{text}");
    assert_eq!(
        lines_starting(&text, "looks good"),
        Vec::<String>::new(),
        "{text}"
    );
    // The text is still there to read, its line breaks escaped.
    assert!(text.contains("forger\\u{a}result: ok"), "{text}");
    // The refusal's own lines are printed indented under its case, each one escaped.
    for line in text.lines().filter(|l| l.contains("result: ok")) {
        assert!(
            line.starts_with("  ") || line.contains("\\u{a}result: ok"),
            "{line}"
        );
    }
}

#[test]
fn case_end_follows_a_case_whose_write_step_failed() {
    let case = r#"id: adapter.write-fails
summary: A write step the runner cannot perform, between two steps.
clauses: [tools.pipeline]
tree:
  skills/alpha/SKILL.md: "---\nname: alpha\ndescription: first\n---\n"
steps:
  - tools:
    expect:
      offered: [skill_read_reference, skill_run_script]
  - write:
      skills/alpha/extra.md: {copy: no-such-fixture.md}
  - tools:
    expect:
      offered: [skill_read_reference, skill_run_script]
"#;
    let s = Setup::new(&[("w", case.to_owned())]);
    let record = s.path("traffic.jsonl");
    let reference = format!("{} adapter", bin().display());
    let o = s.run(
        &reference,
        &["--record", record.to_str().unwrap()],
        Duration::from_secs(60),
    );
    o.check(1, MARGIN);
    assert_eq!(
        o.case("adapter.write-fails")["broken_implementation"],
        false
    );
    let sent: Vec<String> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["direction"] == "sent")
        .map(|e| e["message"]["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(sent, ["start", "case_start", "step", "case_end"]);
}

/// The pid the adapter wrote first into `marker`, and the rest of the file.
fn marker(path: &Path) -> (i32, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    (
        first.strip_prefix("pid ").unwrap().parse().unwrap(),
        rest.to_owned(),
    )
}

/// Whether `pid` is gone (or only a zombie about to be reaped by init).
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.chars().next()))
            .flatten();
        if matches!(state, None | Some('Z') | Some('X')) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn shutdown_is_stop_then_sigterm_then_sigkill() {
    // It stays after `stop`: SIGTERM lets it clean up (it records both).
    let s = Setup::new(&[("one", tools_case("adapter.one"))]);
    let m = s.path("marker");
    let o = s.run(
        &adapter(&format!("term_handler.py {}", m.display())),
        &[],
        Duration::from_secs(30),
    );
    o.check(0, MARGIN);
    let (pid, events) = marker(&m);
    assert_eq!(events, "stop\nterm\n");
    assert!(gone(pid));
    // The stop grace passed before SIGTERM.
    assert!(o.elapsed >= Duration::from_secs(1), "{:?}", o.elapsed);

    // It ignores SIGTERM too: SIGKILL ends it, within the documented bound.
    let s = Setup::new(&[("one", tools_case("adapter.one"))]);
    let m = s.path("marker");
    let o = s.run(
        &adapter(&format!("term_handler.py {} ignore-term", m.display())),
        &[],
        Duration::from_secs(30),
    );
    o.check(0, MARGIN);
    let (pid, events) = marker(&m);
    assert_eq!(events, "stop\n");
    assert!(gone(pid));
    assert!(o.elapsed >= Duration::from_secs(2), "{:?}", o.elapsed);
}

#[test]
fn sigint_and_sigterm_stop_the_adapter_group_and_remove_case_roots() {
    use rustix::process::Signal;
    // With two workers: both adapter processes are in a case, each with a child and a case root
    // of its own, when the signal arrives; none of them is left.
    for (signal, code) in [(Signal::TERM, 143), (Signal::INT, 130)] {
        let s = Setup::new(&[
            ("one", tools_case("adapter.one")),
            ("two", tools_case("adapter.two")),
        ]);
        let pids = s.path("pids");
        let runner = s.spawn(
            &adapter(&format!("hangs_with_child.py {}", pids.display())),
            &["--jobs", "2"],
        );
        let pid_files = || -> Vec<std::path::PathBuf> {
            let prefix = format!("{}.", pids.display());
            std::fs::read_dir(s.path(""))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let p = p.display().to_string();
                    p.starts_with(&prefix) && !p.ends_with(".tmp")
                })
                .collect()
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while pid_files().len() < 2 {
            assert!(
                Instant::now() < deadline,
                "both adapters never reached their cases"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let roots = std::fs::read_dir(s.path("tmp")).unwrap().count();
        assert_eq!(
            roots, 2,
            "each worker's case root exists while its case runs"
        );
        let before = Instant::now();
        runner.signal(signal);
        let o = s.finish(runner, Duration::from_secs(30));
        o.check(code, Duration::from_secs(60));
        assert!(before.elapsed() < MARGIN, "{:?}", before.elapsed());
        assert!(o.text.contains("interrupted by SIG"), "{}", o.text);
        for file in pid_files() {
            let text = std::fs::read_to_string(&file).unwrap();
            for pid in text.split_whitespace() {
                let pid: i32 = pid.parse().unwrap();
                assert!(gone(pid), "process {pid} of an adapter group survived");
            }
        }
    }
}

/// An implementation that leaves a process running in the case root fails that case, in any
/// run, and the process is killed (it is not left for the next case or the machine).
#[test]
fn a_process_left_behind_fails_the_case() {
    // Two adapter processes side by side: the process is its case's alone, not its neighbour's.
    let s = Setup::new(&[
        ("clean", tools_case("adapter.clean")),
        ("leak", tools_case("adapter.leak")),
    ]);
    let o = s.run(
        &adapter("leaks_a_helper.py"),
        &["--jobs", "2"],
        Duration::from_secs(60),
    );
    o.check(1, MARGIN);
    assert_eq!(o.case("adapter.clean")["status"], "pass");
    let case = o.case("adapter.leak");
    assert_eq!(case["status"], "fail", "{case}");
    let mismatch = &case["mismatches"][0];
    assert_eq!(
        mismatch["what"],
        "processes left behind in the case root after the case (now killed)"
    );
    assert!(
        mismatch["actual"].as_str().unwrap().contains("sleep 30"),
        "{mismatch}"
    );
    assert!(o.text.contains("FAIL adapter.leak"), "{}", o.text);
}
