//! The `mutants` command (only with the cargo feature `mutants`): proof that the suite catches
//! the defects real runtimes ship. For every mutant of the reference's catalogue
//! (`skillspec_reference::mutants`) it runs the whole embedded suite in-process against the
//! reference with that one defect switched on, and reports which cases killed it (failed or
//! errored); a mutant no case kills SURVIVED, which means a case is missing.
//!
//! Each mutant runs in a child process of this program (`mutants --worker NAME`), so the choice
//! of mutant is process-global and set once, a crash or a hang stays isolated, and several
//! mutants run at once (`--jobs`, default 4: most of a suite run is waiting for helpers). The
//! unmutated reference runs the same way beside them as the baseline, which must pass every case
//! it runs. A worker prints one line per case (`start INDEX ID`, then `end INDEX ID STATUS`); a
//! case that fails is run again and counts only when it fails again (a timing case can fail once
//! on a loaded machine: `flaky INDEX ID`); a case that makes no progress for `--stall` seconds (a
//! hang) stops that mutant's run, and the hung case counts as killing it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use skillspec_reference::mutants::{self as catalogue, Mutant};

use crate::cases::Case;
use crate::execution::{self, run_suite, CaseOutcome, Observer, Policy, RunOptions, Status};
use crate::implementations::reference::Reference;
use crate::implementations::{ImplError, Implementation};
use crate::output::outln;
use skillspec_reference::agentskills::Mode;

/// The name a worker takes for the unmutated reference.
pub const BASELINE: &str = "none";
/// How many case ids the table shows per mutant.
const SHOWN_IDS: usize = 3;

/// How one mutant (or the baseline) fared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The cases that failed or errored, in suite order.
    pub killers: Vec<String>,
    /// How each killer failed, in the same order: `unsafe (code-ran, ...)`, `permissive`,
    /// `different`, `error` or `hung`.
    pub kinds: Vec<String>,
    /// Cases that passed.
    pub passed: usize,
    /// The run stopped after `--stop-after` kills: there may be more.
    pub stopped_early: bool,
    /// Cases that failed once and passed when run again (not counted as kills).
    pub flaky: Vec<String>,
    /// Why the run stopped early (a hung case, a crashed worker), if it did.
    pub stopped: Option<String>,
    pub wall: Duration,
}

impl Outcome {
    pub fn killed(&self) -> bool {
        !self.killers.is_empty()
    }

    /// Whether some killer showed `exposure` (an unsafe verdict naming it; a hang for
    /// `unbounded`, since the reference in-process has no bound of its own).
    pub fn showed(&self, exposure: &str) -> bool {
        self.kinds.iter().any(|k| {
            (k.starts_with("unsafe (") && k[8..k.len() - 1].split(", ").any(|e| e == exposure))
                || (exposure == "unbounded" && k == "hung")
        })
    }

    /// The kinds of the kills, each with how many: `unsafe (code-ran) 2, different 1`.
    pub fn kinds_cell(&self) -> String {
        let mut counted: Vec<(&str, usize)> = Vec::new();
        for k in &self.kinds {
            match counted.iter_mut().find(|(w, _)| w == k) {
                Some((_, n)) => *n += 1,
                None => counted.push((k, 1)),
            }
        }
        counted
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the mutant counts as killed: some case failed, and for a defect of a safety rule
    /// some case showed the exposure it opens (a safety defect killed only as permissive or
    /// different is a missing observable).
    pub fn killed_as(&self, opens: Option<&str>) -> bool {
        self.killed() && opens.is_none_or(|e| self.showed(e))
    }

    /// The "killed by" cell: count and first ids, or SURVIVED.
    pub fn cell(&self) -> String {
        if !self.killed() {
            return match &self.stopped {
                Some(why) => format!("SURVIVED? ({why})"),
                None => "SURVIVED".into(),
            };
        }
        let mut shown: Vec<String> = self
            .killers
            .iter()
            .zip(
                self.kinds
                    .iter()
                    .map(String::as_str)
                    .chain(std::iter::repeat("")),
            )
            .take(SHOWN_IDS)
            .map(|(id, k)| {
                if k.is_empty() {
                    id.clone()
                } else {
                    format!("{id} ({k})")
                }
            })
            .collect();
        if self.killers.len() > SHOWN_IDS {
            shown.push("…".into());
        }
        let more = if self.stopped_early { "+" } else { "" };
        let mut cell = format!("{}{more}: {}", self.killers.len(), shown.join(", "));
        if let Some(why) = &self.stopped {
            cell.push_str(&format!(" ({why})"));
        }
        cell
    }
}

/// The options of `skillspec mutants`.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only these mutants (exact names); empty: all.
    pub only: Vec<String>,
    /// Only mutants whose name or clause contains this text.
    pub filter: Option<String>,
    pub jobs: usize,
    pub report: Option<PathBuf>,
    pub python: Option<PathBuf>,
    /// Seconds a case may make no progress before the mutant's run is stopped as hung.
    pub stall: u64,
    /// Run the cases of this directory instead of the embedded suite (while writing a case).
    pub cases: Option<PathBuf>,
    /// Only the cases whose id or clause matches (while writing a case; the table is partial).
    pub case_filter: Option<String>,
    /// Stop each mutant's run after this many kills (0: the whole suite, every kill counted).
    pub stop_after: usize,
    /// The progress display on stderr: the mutants done of all, those in flight.
    pub progress: crate::progress::Display,
}

/// What a worker runs: the suite and the cases of it.
#[derive(Debug, Clone, Default)]
pub struct WorkerSuite {
    pub cases: Option<PathBuf>,
    pub case_filter: Option<String>,
    /// Stop after this many kills (0: run every case and count them all).
    pub stop_after: usize,
}

/// Lists the catalogue.
pub fn list() -> String {
    let mut out = String::new();
    for m in Mutant::ALL {
        out.push_str(&format!(
            "{:<38} {:<28} {}\n",
            m.name(),
            m.clause(),
            m.description()
        ));
    }
    out
}

/// Why no mutant can be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectError {
    /// `--only` names that are no mutant's.
    Unknown(Vec<String>),
    /// The selection is empty.
    NoneMatches,
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::Unknown(names) => write!(
                f,
                "no mutant is named {} (`skillspec mutants --list` lists them)",
                names.join(", ")
            ),
            SelectError::NoneMatches => f.write_str("no mutant matches"),
        }
    }
}

impl std::error::Error for SelectError {}

/// The mutants `opts` selects, or the names it gives that are not mutants.
pub fn select(opts: &Options) -> Result<Vec<Mutant>, SelectError> {
    let unknown: Vec<String> = opts
        .only
        .iter()
        .filter(|n| Mutant::parse(n).is_none())
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(SelectError::Unknown(unknown));
    }
    let chosen: Vec<Mutant> = Mutant::ALL
        .iter()
        .copied()
        .filter(|m| opts.only.is_empty() || opts.only.iter().any(|n| n == m.name()))
        .filter(|m| {
            opts.filter
                .as_deref()
                .is_none_or(|f| m.name().contains(f) || m.clause().contains(f))
        })
        .collect();
    if chosen.is_empty() {
        return Err(SelectError::NoneMatches);
    }
    Ok(chosen)
}

/// `skillspec mutants`: runs the baseline and every selected mutant, prints the table, writes
/// the Markdown report; exit 0 when every mutant was killed and the baseline passed, else 1.
pub fn run(opts: &Options) -> ExitCode {
    let chosen = match select(opts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skillspec mutants: {e}");
            return ExitCode::from(2);
        }
    };
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skillspec mutants: cannot find this program to start workers: {e}");
            return ExitCode::from(1);
        }
    };
    let jobs = opts.jobs.max(1);
    outln!(
        "running the suite against the reference and {} mutant(s), {jobs} at a time",
        chosen.len()
    );
    let started = Instant::now();
    let mut names: Vec<String> = vec![BASELINE.to_owned()];
    names.extend(chosen.iter().map(|m| m.name().to_owned()));
    let progress = crate::progress::Progress::start(opts.progress, "mutants", names.len());
    let queue = Arc::new(Mutex::new(
        names.iter().cloned().enumerate().collect::<VecDeque<_>>(),
    ));
    let (tx, rx) = mpsc::channel::<(String, Outcome)>();
    let mut threads = Vec::new();
    for _ in 0..jobs.min(names.len()) {
        let queue = Arc::clone(&queue);
        let tx = tx.clone();
        let exe = exe.clone();
        let python = opts.python.clone();
        let suite = WorkerSuite {
            cases: opts.cases.clone(),
            case_filter: opts.case_filter.clone(),
            stop_after: opts.stop_after,
        };
        let stall = Duration::from_secs(opts.stall.max(1));
        let progress = progress.clone();
        threads.push(std::thread::spawn(move || loop {
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
            let Some((key, name)) = next else { break };
            progress.started(key, &name);
            let outcome = supervise_worker(&exe, &name, python.as_deref(), &suite, stall);
            progress.finished(
                key,
                if outcome.killed() {
                    "killed"
                } else {
                    "not killed"
                },
            );
            if tx.send((name, outcome)).is_err() {
                break;
            }
        }));
    }
    drop(tx);
    let mut results: Vec<(String, Outcome)> = Vec::new();
    for (name, outcome) in rx {
        let opens = Mutant::parse(&name).and_then(Mutant::opens);
        let mark = match (name.as_str(), outcome.killed()) {
            (BASELINE, false) => "passes",
            (BASELINE, true) => "FAILS",
            (_, true) if !outcome.killed_as(opens) => "NOT SHOWN",
            (_, true) => "killed",
            (_, false) => "SURVIVED",
        };
        progress.suspend(|| {
            outln!(
                "  {name:<38} {mark:<8} {:>5.1} s  {}",
                outcome.wall.as_secs_f64(),
                if name == BASELINE && !outcome.killed() {
                    format!("{} case(s) passed", outcome.passed)
                } else {
                    outcome.cell()
                }
            );
            if !outcome.flaky.is_empty() {
                outln!(
                    "  {:<38} (failed once, then passed: {})",
                    "",
                    outcome.flaky.join(", ")
                );
            }
        });
        results.push((name, outcome));
    }
    for t in threads {
        let _ = t.join();
    }
    progress.close();
    let wall = started.elapsed();
    let baseline = results
        .iter()
        .find(|(n, _)| n == BASELINE)
        .map(|(_, o)| o.clone())
        .unwrap_or_default();
    let rows: Vec<(Mutant, Outcome)> = chosen
        .iter()
        .map(|m| {
            let o = results
                .iter()
                .find(|(n, _)| n == m.name())
                .map(|(_, o)| o.clone())
                .unwrap_or_default();
            (*m, o)
        })
        .collect();
    let table = markdown(&rows, &baseline, wall);
    outln!("\n{table}");
    if let Some(path) = &opts.report {
        if let Err(e) = std::fs::write(path, &table) {
            eprintln!("skillspec mutants: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
        outln!("wrote {}", path.display());
    }
    let survivors = rows.iter().filter(|(_, o)| !o.killed()).count();
    let not_unsafe: Vec<&str> = rows
        .iter()
        .filter(|(m, o)| o.killed() && !o.killed_as(m.opens()))
        .map(|(m, _)| m.name())
        .collect();
    if baseline.killed() || baseline.stopped.is_some() {
        eprintln!(
            "skillspec mutants: the unmutated reference does not pass: {}",
            baseline.cell()
        );
        return ExitCode::from(1);
    }
    if survivors > 0 {
        eprintln!("skillspec mutants: {survivors} mutant(s) survived: a case is missing for each");
        return ExitCode::from(1);
    }
    if !not_unsafe.is_empty() {
        eprintln!(
            "skillspec mutants: {} defect(s) of a safety rule killed but never judged unsafe with the exposure they open (a case misses its observable): {}",
            not_unsafe.len(),
            not_unsafe.join(", ")
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The report: one row per mutant, then the totals. The only line that changes from run to run
/// on the same code is the last one (`Run time:`).
pub fn markdown(rows: &[(Mutant, Outcome)], baseline: &Outcome, wall: Duration) -> String {
    let mut out = String::from(
        "# Mutants\n\nEach row is a deliberate defect of the reference (`src/mutants.rs`), run against the suite by `skillspec mutants` (README.md, \"Mutants\"). *Killed by* gives how many cases failed against it (twice: a failure must reproduce) and the first of them, each with how it failed; the cases citing the mutant's clause run first, then its area's, then the rest, and `N+` means the run stopped after N kills (`--stop-after`). *Opens* is the exposure a defect of a safety rule opens (SPEC.md, \"How verdicts are judged\"): such a mutant counts as killed only when some case judged it unsafe with that exposure (a run keeps going past `--stop-after` until one does); *killed as* counts the kinds of its kills. SURVIVED would mean a case is missing; NOT SHOWN UNSAFE, that a case misses the observable of its crossing.\n\n| mutant | clause | what it does | opens | killed as | killed by |\n|---|---|---|---|---|---|\n",
    );
    for (m, o) in rows {
        let verdict = if !o.killed() {
            o.cell()
        } else if !o.killed_as(m.opens()) {
            format!("NOT SHOWN UNSAFE: {}", o.cell())
        } else {
            o.cell()
        };
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} | {} |\n",
            m.name(),
            m.clause(),
            m.description().replace('|', "\\|"),
            m.opens().map_or("—".to_owned(), |e| format!("`{e}`")),
            o.kinds_cell(),
            verdict.replace('|', "\\|")
        ));
    }
    let killed = rows.iter().filter(|(m, o)| o.killed_as(m.opens())).count();
    let safety = rows.iter().filter(|(m, _)| m.opens().is_some()).count();
    let safety_unsafe = rows
        .iter()
        .filter(|(m, o)| m.opens().is_some() && o.killed_as(m.opens()))
        .count();
    out.push_str(&format!(
        "\n{} mutants: {killed} killed, {} not. {safety_unsafe} of the {safety} defects of a safety rule were judged unsafe with the exposure they open. The unmutated reference passed {} case(s).\n\nRun time: {:.0} s\n",
        rows.len(),
        rows.len() - killed,
        baseline.passed,
        wall.as_secs_f64()
    ));
    out
}

/// Runs one worker and follows its progress; a case that makes no progress for `stall` stops it.
fn supervise_worker(
    exe: &Path,
    name: &str,
    python: Option<&Path>,
    suite: &WorkerSuite,
    stall: Duration,
) -> Outcome {
    let started = Instant::now();
    let mut command = Command::new(exe);
    command
        .args(["mutants", "--worker", name])
        // The workers of this run share their `exclusive:` names with one another only: a real
        // runtime's run holding a name machine-wide (`.ci/adapters` beside the mutants in CI)
        // would otherwise stall a worker past `--stall` and fail the unmutated reference.
        .env(
            crate::execution::run::EXCLUSIVE_SCOPE_VAR,
            format!("mutants-{}", std::process::id()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(p) = python {
        command.arg("--python").arg(p);
    }
    if let Some(dir) = &suite.cases {
        command.arg("--cases").arg(dir);
    }
    if let Some(f) = &suite.case_filter {
        command.arg("--case-filter").arg(f);
    }
    if suite.stop_after > 0 && name != BASELINE {
        command
            .arg("--stop-after")
            .arg(suite.stop_after.to_string());
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                stopped: Some(format!("the worker could not start: {e}")),
                wall: started.elapsed(),
                ..Outcome::default()
            }
        }
    };
    let (tx, rx) = mpsc::channel::<String>();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let mut outcome = Outcome::default();
    let mut current: Option<String> = None;
    let mut finished = false;
    loop {
        match rx.recv_timeout(stall) {
            Ok(line) => {
                let words: Vec<&str> = line.split(' ').collect();
                match words.as_slice() {
                    ["start", _, id] => current = Some((*id).to_owned()),
                    ["end", _, id, status, rest @ ..] => {
                        current = None;
                        match *status {
                            "fail" | "error" => {
                                outcome.killers.push((*id).to_owned());
                                outcome.kinds.push(kill_kind(status, rest));
                            }
                            "pass" => outcome.passed += 1,
                            _ => {}
                        }
                    }
                    ["flaky", _, id] => outcome.flaky.push((*id).to_owned()),
                    ["finished"] => finished = true,
                    ["stopped"] => {
                        finished = true;
                        outcome.stopped_early = true;
                    }
                    _ => {}
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let id = current.clone().unwrap_or_else(|| "?".into());
                outcome.killers.push(id.clone());
                outcome.kinds.push("hung".into());
                outcome.stopped = Some(format!(
                    "`{id}` hung: no answer within {} s, the run stopped there",
                    stall.as_secs()
                ));
                stop(&mut child);
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait();
    if !finished && outcome.stopped.is_none() {
        let id = current.unwrap_or_else(|| "?".into());
        let how = match status {
            Ok(s) => s.to_string(),
            Err(e) => e.to_string(),
        };
        outcome.killers.push(id.clone());
        outcome.kinds.push("error".into());
        outcome.stopped = Some(format!("the run crashed in `{id}` ({how})"));
    }
    outcome.wall = started.elapsed();
    outcome
}

/// How a killing case failed, from the rest of its `end` line (`unsafe code-ran,secret`,
/// `permissive -`): `unsafe (code-ran, secret)`, `permissive`, `different`, or `error`.
fn kill_kind(status: &str, rest: &[&str]) -> String {
    match (status, rest) {
        ("fail", ["unsafe", exposures, ..]) => {
            format!(
                "unsafe ({})",
                exposures.split(',').collect::<Vec<_>>().join(", ")
            )
        }
        ("fail", [kind, ..]) => (*kind).to_owned(),
        ("fail", []) => "fail".into(),
        _ => "error".into(),
    }
}

/// SIGTERM (the worker removes its case directory), then SIGKILL after a grace.
fn stop(child: &mut std::process::Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    let by = Instant::now() + Duration::from_secs(3);
    while Instant::now() < by {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
}

/// `skillspec mutants --worker NAME`: switches the mutant on (`none`: the unmutated reference)
/// and runs the embedded suite in-process ([`run_suite`]), one progress line per case.
pub fn worker(name: &str, python: Option<&Path>, which: &WorkerSuite) -> ExitCode {
    let mutant = match Mutant::parse(name) {
        None if name == BASELINE => None,
        None => {
            eprintln!("skillspec mutants: no mutant is named {name}");
            return ExitCode::from(2);
        }
        Some(m) => {
            if catalogue::activate(m).is_err() {
                eprintln!("skillspec mutants: a mutant was already active");
                return ExitCode::from(2);
            }
            Some(m)
        }
    };
    crate::hold_inherited_descriptor();
    let loaded = match &which.cases {
        Some(dir) => crate::cases::load_dir(dir),
        None => crate::suite::load_embedded(),
    };
    let suite = match loaded {
        Ok(s) => s,
        Err(errors) => {
            for e in errors {
                eprintln!("{e}");
            }
            return ExitCode::from(2);
        }
    };
    if let Err(e) = execution::roots::install_signal_handlers() {
        eprintln!("skillspec mutants: cannot handle SIGTERM: {e}");
    }
    let fixtures = match crate::suite::fixtures_for(
        None,
        which.cases.as_deref(),
        crate::suite::copies_fixtures(suite.cases.iter()),
    ) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("skillspec mutants: cannot write the fixtures: {e}");
            return ExitCode::from(1);
        }
    };
    let opts = RunOptions {
        temp_prefix: "skillspec-mutant-".into(),
        hang_bound: crate::execution::HANG_BOUND,
        for_information: Vec::new(),
        fixtures: fixtures.path().to_path_buf(),
        python: execution::python::resolve(python).unwrap_or_else(|_| "python3".into()),
    };
    let mut selected = worker_order(&suite, which.case_filter.as_deref(), mutant);
    // The reference claims one mode of dialect `agentskills` at a time: the cases written for
    // strict clients run last, against a strict reference; every other case against a lenient
    // one (SPEC.md, "Strict and lenient clients").
    let strict = |c: &Case| c.mode == Some(Mode::Strict.as_str());
    selected.sort_by_key(|(_, c)| strict(c));
    let split = selected
        .iter()
        .position(|(_, c)| strict(c))
        .unwrap_or(selected.len());
    let policy = Policy {
        retry_failures: true,
        ..Policy::default()
    };
    let mut outcome = None;
    let (mut kills, mut shown) = (0, false);
    for (part, mode) in [
        (&selected[..split], Mode::Lenient),
        (&selected[split..], Mode::Strict),
    ] {
        if part.is_empty() {
            continue;
        }
        let cases: Vec<&Case> = part.iter().map(|(_, c)| *c).collect();
        let mut progress = Progress {
            selected: part,
            kills,
            stop_after: which.stop_after,
            opens: mutant.and_then(Mutant::opens),
            shown,
        };
        let start = move |_worker: usize| -> Result<Box<dyn Implementation>, ImplError> {
            Ok(Box::new(Reference::default().with_mode(mode)))
        };
        // One worker: the supervisor reads this worker's `start`/`end` lines as the case in hand.
        let run = run_suite(&cases, &start, &opts, &policy, &mut progress);
        (kills, shown) = (progress.kills, progress.shown);
        let stopped = run.stopped.is_some();
        outcome = Some(run);
        if stopped {
            break;
        }
    }
    let stopped = outcome.is_some_and(|o| o.stopped.is_some());
    say(if stopped {
        "stopped".into()
    } else {
        "finished".into()
    });
    ExitCode::SUCCESS
}

/// The cases a worker runs, each with its index in the suite: those `case_filter` selects; with
/// a mutant, the cases citing its clause first, then the rest of its area, then the others.
fn worker_order<'a>(
    suite: &'a crate::cases::Suite,
    case_filter: Option<&str>,
    mutant: Option<Mutant>,
) -> Vec<(usize, &'a Case)> {
    let mut selected: Vec<(usize, &Case)> = suite
        .cases
        .iter()
        .filter(|c| case_filter.is_none_or(|p| crate::filter_matches(p, c)))
        .enumerate()
        .collect();
    if let Some(m) = mutant {
        let area = m.clause().split('.').next().unwrap_or_default();
        selected.sort_by_key(|(i, c)| {
            let cites = |p: &dyn Fn(&str) -> bool| c.clauses.iter().any(|k| p(k));
            let rank = if cites(&|k| k == m.clause()) {
                0
            } else if cites(&|k| k.split('.').next() == Some(area)) {
                1
            } else {
                2
            };
            (rank, *i)
        });
    }
    selected
}

/// One line to the supervising process; a parent that went away (a closed pipe) ends the
/// worker.
fn say(line: String) {
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        std::process::exit(1);
    }
}

/// The worker's progress lines: `start INDEX ID`, `flaky INDEX ID`, `end INDEX ID STATUS`.
struct Progress<'a> {
    /// The cases in the order they run, with their indices in the suite.
    selected: &'a [(usize, &'a Case)],
    /// Cases that failed or errored so far.
    kills: usize,
    /// Stop after this many kills (0: never).
    stop_after: usize,
    /// The exposure the mutant opens, and whether a kill showed it.
    opens: Option<&'static str>,
    shown: bool,
}

impl Progress<'_> {
    fn index(&self, position: usize) -> usize {
        self.selected.get(position).map_or(position, |(i, _)| *i)
    }
}

impl Observer for Progress<'_> {
    fn case_started(&mut self, position: usize, case: &Case) {
        say(format!("start {} {}", self.index(position), case.id));
    }

    fn case_flaky(&mut self, position: usize, case: &Case) {
        say(format!("flaky {} {}", self.index(position), case.id));
    }

    fn case_finished(&mut self, position: usize, case: &Case, outcome: &CaseOutcome) {
        let word = match &outcome.status {
            Status::Pass => "pass".to_owned(),
            Status::Fail(f) => {
                let exposures: Vec<&str> = f.exposures().iter().map(|e| e.word()).collect();
                self.kills += 1;
                if self.opens.is_some_and(|o| exposures.contains(&o)) {
                    self.shown = true;
                }
                format!(
                    "fail {} {}",
                    f.kind().word(),
                    if exposures.is_empty() {
                        "-".to_owned()
                    } else {
                        exposures.join(",")
                    }
                )
            }
            Status::Error { .. } => {
                self.kills += 1;
                "error".to_owned()
            }
            _ => "other".to_owned(),
        };
        say(format!("end {} {} {word}", self.index(position), case.id));
    }

    /// A mutant's run stops after `--stop-after` kills, but a defect of a safety rule only once a
    /// kill showed the exposure it opens (or the suite ends): its table row must say whether one
    /// did.
    fn stop(&mut self) -> Option<String> {
        (self.stop_after > 0
            && self.kills >= self.stop_after
            && (self.opens.is_none() || self.shown))
            .then(|| format!("{} kill(s)", self.kills))
    }
}
