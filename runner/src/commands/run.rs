//! `skillspec run`: the suite against the reference or an adapter, through
//! [`crate::execution::run_suite`], with the run's terminal account ([`Terminal`]), reports,
//! known failures and exit code.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use super::cli::RunArgs;
use super::{load_suite, usage_error, EXIT_BROKEN, EXIT_FAILED};
use crate::cases::Case;
use crate::execution::plan::{self, Plan};
use crate::execution::python;
use crate::execution::run::MAX_FUTILE_RESTARTS;
use crate::execution::{run_suite, CaseOutcome, Observer, Policy, RunOptions, Status};
use crate::implementations::adapter::{Adapter, Record};
use crate::implementations::reference::Reference;
use crate::implementations::{ImplError, Implementation};
use crate::output::{self, out, outln};
use crate::progress::Progress;
use crate::protocol::ImplInfo;
use crate::reports::merge;
use crate::reports::{self, one_line, visible, ReportCase, RunReport};
use skillspec_reference::agentskills::Mode;

pub fn run(args: RunArgs) -> ExitCode {
    crate::hold_inherited_descriptor();
    let suite = match load_suite(args.cases.clone()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut plan = match plan::select(&suite, args.filter.as_deref(), args.partition) {
        Ok(p) => p,
        Err(e) => return usage_error(e),
    };
    if let Err(e) = check_outputs(&args) {
        return usage_error(e);
    }
    let partition = args
        .partition
        .map(|p| merge::partition_json(p, args.filter.as_deref(), &plan.selected));
    if let Some(p) = args.partition {
        outln!(
            "partition {p}: {} of the {} selected case(s)",
            plan.cases.len(),
            plan.selected.len()
        );
    }
    if let Some(path) = &args.known_failures {
        match plan::read_known_failures(path, &suite) {
            Ok(k) => plan.known_failures = k,
            Err(e) => return usage_error(e),
        }
    }
    let python = match python::resolve(args.python.as_deref()) {
        Ok(p) => p,
        Err(e) if args.python.is_some() => return usage_error(e),
        // Without a usable python3 the script cases fail with spawn_failed, which says why.
        Err(_) => PathBuf::from("python3"),
    };
    if let Err(e) = crate::execution::roots::install_signal_handlers() {
        eprintln!("skillspec: cannot handle SIGINT/SIGTERM: {e}");
    }
    // The embedded fixtures, when used, live in a private temporary directory until this
    // value is dropped at the end of the run (or a signal removes it).
    let fixtures = match crate::suite::fixtures_for(
        args.fixtures.clone(),
        args.cases.as_deref(),
        crate::suite::copies_fixtures(plan.cases.iter().copied()),
    ) {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "skillspec: cannot write the embedded fixtures to a temporary directory: {e}"
            );
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let opts = RunOptions {
        temp_prefix: "skillspec-".into(),
        hang_bound: Duration::from_secs(args.hang_bound),
        for_information: args.for_information.clone(),
        fixtures: fixtures.path().to_path_buf(),
        python,
    };
    let record = match (&args.adapter, &args.record) {
        (Some(_), Some(path)) => match std::fs::File::create(path) {
            Ok(f) => Some(Record::new(f)),
            Err(e) => return usage_error(format!("cannot create {}: {e}", path.display())),
        },
        _ => None,
    };
    let timeout = Duration::from_secs(args.step_timeout);
    let memory_bound = args.memory_bound.saturating_mul(1 << 20);
    let adapter = args.adapter.clone();
    let mode = match (&args.adapter, args.agentskills_mode.as_deref()) {
        (Some(_), Some(_)) => {
            return usage_error(
                "`--agentskills-mode` sets the embedded reference's mode; an adapter declares its own (`implementation.dialects`)",
            )
        }
        (_, Some("strict")) => Mode::Strict,
        _ => Mode::Lenient,
    };
    let start = move |worker: usize| -> Result<Box<dyn Implementation>, ImplError> {
        Ok(match &adapter {
            None => Box::new(Reference::default().with_mode(mode)),
            Some(cmd) => Box::new(Adapter::spawn(
                cmd,
                timeout,
                Some(memory_bound),
                record.as_ref().map(|r| r.for_worker(worker)),
            )?),
        })
    };
    let policy = Policy {
        futile_restarts: Some(MAX_FUTILE_RESTARTS),
        jobs: args.jobs.map_or_else(default_jobs, usize::from),
        ..Policy::default()
    };
    let progress = Progress::start(args.progress.display(), "cases", plan.cases.len());
    let mut terminal = Terminal::new(&args, &plan, progress);
    let outcome = run_suite(&plan.cases, &start, &opts, &policy, &mut terminal);
    terminal.progress.close();
    if let Some(e) = &outcome.not_started {
        let fault = e.clone().into_fault();
        eprintln!(
            "skillspec: the adapter could not start: {}\n{}",
            one_line(&fault.message()),
            visible(reports::describe_fault(&fault, "  ").trim_end())
        );
    } else {
        terminal.close(&outcome.results);
    }
    let run_report = RunReport {
        implementation: outcome.info,
        cases_dir: suite.root.display().to_string(),
        suite: crate::suite::report_entry(&suite.root.display().to_string()),
        results: plan
            .cases
            .iter()
            .map(|c| ReportCase::from(*c))
            .zip(outcome.results)
            .collect(),
        known_failures: plan.known_failures,
        stopped: outcome.stopped,
        for_information: args
            .for_information
            .iter()
            .map(|d| (*d).to_owned())
            .collect(),
    };
    finish(&args, &run_report, partition.as_ref())
}

/// What `run` prints while the suite runs: the header once the implementation started, a mark
/// per case (or, with `--verbose`, every case in full), and the details of the cases whose
/// verdict is bad once the run is over.
struct Terminal<'a> {
    args: &'a RunArgs,
    plan: &'a Plan<'a>,
    /// Marks printed on the current line.
    column: usize,
    /// The details printed after the marks, with each case's position (printed in suite order).
    details: Vec<(usize, String)>,
    /// The progress display on stderr.
    progress: Progress,
    /// The marks are left out: the live bar on stderr counts the cases, and stdout is the same
    /// terminal.
    no_marks: bool,
}

impl<'a> Terminal<'a> {
    fn new(args: &'a RunArgs, plan: &'a Plan<'a>, progress: Progress) -> Terminal<'a> {
        let no_marks = progress.is_bar() && std::io::stdout().is_terminal();
        Terminal {
            args,
            plan,
            column: 0,
            details: Vec::new(),
            progress,
            no_marks,
        }
    }

    /// Ends the line of marks and prints the details, in suite order, of the cases the run
    /// reports (`results`: a stopped run reports a case another worker had started after the stop
    /// as NOT RUN).
    fn close(&mut self, results: &[CaseOutcome]) {
        if self.column != 0 {
            outln!();
        }
        self.details.sort_by_key(|(position, _)| *position);
        let reported = |p: usize| results.get(p).is_some_and(|o| o.status != Status::NotRun);
        for (_, d) in self.details.iter().filter(|(p, _)| reported(*p)) {
            outln!("\n{}", d.trim_end());
        }
    }
}

impl Observer for Terminal<'_> {
    fn started(&mut self, info: &ImplInfo, workers: usize) {
        let side_by_side = match workers {
            1 if self.args.jobs.is_some_and(|j| j > 1) => {
                " (one at a time: the adapter says it cannot run twice side by side)".to_owned()
            }
            1 => String::new(),
            n => format!(" on {n} workers"),
        };
        self.progress.suspend(|| {
            outln!(
                "running {} case(s) from {} against {}{side_by_side}",
                self.plan.cases.len(),
                one_line(&crate::suite::describe_source(self.args.cases.as_deref())),
                one_line(&format!("{} {}", info.name, info.version))
            );
            if self.args.cases.is_none() && Path::new("spec-cases").is_dir() {
                outln!("(./spec-cases is not used: pass --cases spec-cases to run it)");
            }
            if let Some(warning) =
                crate::protocol::features::unknown_warning(&info.unknown_features)
            {
                outln!("{}", one_line(&warning));
            }
        });
    }

    fn worker_lost(&mut self, worker: usize, error: &ImplError) {
        self.progress.suspend(|| {
            eprintln!(
                "skillspec: worker {worker}'s adapter could not start, the other workers run its cases: {}",
                one_line(&error.message())
            )
        });
    }

    fn case_started(&mut self, position: usize, case: &Case) {
        self.progress.started(position, &case.id);
    }

    fn case_finished(&mut self, position: usize, case: &Case, outcome: &CaseOutcome) {
        self.progress.finished(position, ended_as(&outcome.status));
        let report_case = ReportCase::from(case);
        let known = self.plan.known_failures.contains(&case.id);
        let mut described = reports::describe(&report_case, outcome);
        if known && outcome.status == Status::Pass {
            described
                .push_str("  listed as a known failure, but passed: remove it from the list\n");
        }
        if self.args.verbose {
            self.progress.suspend(|| out!("{described}"));
        } else if self.no_marks {
            if reports::Verdict::of(&outcome.status, known).is_bad() {
                self.details.push((position, described));
            }
        } else {
            let mark = match outcome.status {
                Status::Pass => '.',
                Status::NotExercised(_) => 'n',
                Status::Fail(_) => 'F',
                Status::Unsupported(_) => 'U',
                Status::Skipped(_) => 'S',
                Status::Error { .. } => 'E',
                Status::NotRun => ' ',
            };
            out!("{mark}");
            self.column += 1;
            if self.column == 72 {
                outln!();
                self.column = 0;
            }
            if reports::Verdict::of(&outcome.status, known).is_bad() {
                self.details.push((position, described));
            }
        }
    }

    // A closed stdout (`skillspec run -v | head`): no one reads the run, so it stops; its cases
    // not run make the exit code 1, so a cut-short run never reads as a pass.
    fn stop(&mut self) -> Option<String> {
        output::closed().then(|| {
            "stdout was closed (its reader went away) or could not be written, so the run stopped early".to_owned()
        })
    }
}

/// How a case ended, in the progress display's counts.
fn ended_as(status: &Status) -> &'static str {
    match status {
        Status::Pass => "passed",
        Status::NotExercised(_) => "not exercised",
        Status::Fail(_) => "failed",
        Status::Unsupported(_) => "unsupported",
        Status::Skipped(_) => "skipped",
        Status::Error { .. } => "errored",
        Status::NotRun => "not run",
    }
}

/// `--report DIR` and `--write-failures FILE`, checked before any case runs, so that a report
/// that cannot be written fails the command at once (exit 2) rather than after the whole run with
/// no report. DIR is created (the run writes into it whatever its outcome); `report.json` and
/// `junit.xml` in it and FILE are checked by [`writable`], which leaves nothing behind.
fn check_outputs(args: &RunArgs) -> Result<(), String> {
    if let Some(dir) = &args.report {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot write the report to {}: {e}", dir.display()))?;
        for name in reports::REPORT_FILES {
            writable(&dir.join(name))?;
        }
    }
    if let Some(path) = &args.write_failures {
        writable(path)?;
    }
    Ok(())
}

/// Whether the file at `path` can be written at the end of the run, found out without changing
/// it: a regular file is opened for writing (not truncated), a missing one is created and removed
/// again, a directory is refused, and a pipe or device (`/dev/stdout`, `>(cat)`) is not opened
/// (opening a FIFO would wait for its reader) and is written at the end as given.
fn writable(path: &Path) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(format!(
            "cannot write {}: it is a directory",
            path.display()
        )),
        Ok(m) if m.is_file() => std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map(drop)
            .map_err(cannot),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(cannot)?;
            std::fs::remove_file(path).map_err(cannot)
        }
        Err(e) => Err(cannot(e)),
    }
}

/// `--jobs` left out: one worker per CPU.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Prints the summary, writes the reports and picks the exit code: a report that could not be
/// written after all ([`check_outputs`] passed, then the disk filled) makes it at least 1.
fn finish(
    args: &RunArgs,
    run_report: &RunReport,
    partition: Option<&serde_json::Value>,
) -> ExitCode {
    outln!("\n{}", reports::summary_text(run_report).trim_end());
    let mut written = true;
    if let Some(dir) = &args.report {
        match reports::write(run_report, dir, partition) {
            Ok(()) => outln!("report written to {}", dir.display()),
            Err(e) => {
                eprintln!(
                    "skillspec: cannot write the report to {}: {e}",
                    dir.display()
                );
                written = false;
            }
        }
    }
    if let Some(path) = &args.write_failures {
        let mut text =
            String::from("# Cases this implementation fails (skillspec run --write-failures).\n");
        for id in run_report.failing_ids() {
            text.push_str(id);
            text.push('\n');
        }
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("skillspec: cannot write {}: {e}", path.display());
            written = false;
        }
    }
    let totals = run_report.totals();
    if run_report.all_broken() {
        let why = if run_report
            .stopped
            .as_ref()
            .is_some_and(|s| s.fault.is_some())
        {
            "it never got through the handshake"
        } else {
            "every case sent to it errored because it broke"
        };
        eprintln!("skillspec: the adapter is broken: {why}");
        ExitCode::from(EXIT_BROKEN)
    } else if !totals.is_ok() || !written {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}
