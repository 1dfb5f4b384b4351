//! `skillspec run`: the suite against the reference or an adapter, with the run's reports,
//! known failures and exit code (`run`, `not_run`, `adapter_did_not_start`, `finish`,
//! `read_known_failures`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use super::cli::RunArgs;
use super::{load_suite, usage_error, EXIT_BROKEN, EXIT_FAILED};
use crate::cases::{Case, Suite};
use crate::execution::python;
use crate::execution::{self, CaseOutcome, RunOptions, Status};
use crate::filter_matches;
use crate::implementations::adapter::Adapter;
use crate::implementations::reference::Reference;
use crate::implementations::ImplError;
use crate::implementations::Implementation;
use crate::reports::merge;
use crate::reports::{self, one_line, visible, ReportCase, RunReport, Stopped};

/// Restarts of a broken adapter that may achieve nothing in a row (the restarted adapter broke
/// again before completing a case) before the run stops.
const MAX_FUTILE_RESTARTS: usize = 3;

pub fn run(args: RunArgs) -> ExitCode {
    crate::hold_inherited_descriptor();
    let suite = match load_suite(args.cases.clone()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let selected: Vec<&Case> = suite
        .cases
        .iter()
        .filter(|c| args.filter.as_deref().is_none_or(|p| filter_matches(p, c)))
        .collect();
    if selected.is_empty() {
        return usage_error("no case matches the filter");
    }
    let partition = args
        .partition
        .map(|p| merge::partition_json(p, args.filter.as_deref(), &selected));
    let selected: Vec<&Case> = match args.partition {
        None => selected,
        Some(p) => {
            let all = selected.len();
            let slice: Vec<&Case> = selected.into_iter().filter(|c| p.holds(&c.id)).collect();
            println!(
                "partition {p}: {} of the {all} selected case(s)",
                slice.len()
            );
            slice
        }
    };
    let known_failures = match &args.known_failures {
        None => std::collections::BTreeSet::new(),
        Some(path) => match read_known_failures(path, &suite) {
            Ok(k) => k,
            Err(e) => return usage_error(e),
        },
    };
    let python = match python::resolve(args.python.as_deref()) {
        Ok(p) => p,
        Err(e) if args.python.is_some() => return usage_error(e),
        // Without a usable python3 the script cases fail with spawn_failed, which says why.
        Err(_) => PathBuf::from("python3"),
    };
    if let Err(e) = crate::execution::live::install_signal_handlers() {
        eprintln!("skillspec: cannot handle SIGINT/SIGTERM: {e}");
    }
    // The embedded fixtures, when used, live in a private temporary directory until this
    // value is dropped at the end of the run (or a signal removes it).
    let fixtures = match crate::suite::fixtures_for(
        args.fixtures.clone(),
        args.cases.as_deref(),
        crate::suite::copies_fixtures(selected.iter().copied()),
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
        fixtures: fixtures.path().to_path_buf(),
        python,
    };
    let mut imp: Box<dyn Implementation> = match &args.adapter {
        None => Box::new(Reference::default()),
        Some(cmd) => {
            let record = match &args.record {
                None => None,
                Some(path) => match std::fs::File::create(path) {
                    Ok(f) => Some(f),
                    Err(e) => return usage_error(format!("cannot create {}: {e}", path.display())),
                },
            };
            match Adapter::spawn(cmd, Duration::from_secs(args.step_timeout.max(1)), record) {
                Ok(a) => Box::new(a),
                Err(e) => {
                    return adapter_did_not_start(
                        &args,
                        &suite,
                        &selected,
                        known_failures,
                        e,
                        partition.as_ref(),
                    )
                }
            }
        }
    };
    let info = imp.info().clone();
    println!(
        "running {} case(s) from {} against {}",
        selected.len(),
        one_line(&crate::suite::describe_source(args.cases.as_deref())),
        one_line(&format!("{} {}", info.name, info.version))
    );
    if args.cases.is_none() && Path::new("spec-cases").is_dir() {
        println!("(./spec-cases is not used: pass --cases spec-cases to run it)");
    }
    if let Some(warning) = crate::cases::features::unknown_warning(&info.unknown_features) {
        println!("{}", one_line(&warning));
    }
    let mut results = Vec::new();
    let mut details = Vec::new();
    let mut column = 0;
    // Cases in a row that broke the adapter: the first breakage, then each futile restart.
    let mut broken_in_a_row = 0;
    let mut stopped = None;
    for (i, case) in selected.iter().enumerate() {
        let report_case = ReportCase::from(*case);
        if stopped.is_some() {
            results.push((report_case, not_run()));
            continue;
        }
        let outcome = execution::run_case(case, imp.as_mut(), &opts, i as u64 + 1);
        if outcome.status.is_broken() {
            broken_in_a_row += 1;
        } else if outcome.status.was_sent() {
            broken_in_a_row = 0;
        }
        if args.verbose {
            print!("{}", reports::describe(&report_case, &outcome));
        } else {
            let mark = match outcome.status {
                Status::Pass => '.',
                Status::Fail(_) => 'F',
                Status::Unsupported(_) => 'U',
                Status::Skipped(_) => 'S',
                Status::Error { .. } => 'E',
                Status::NotRun => ' ',
            };
            print!("{mark}");
            column += 1;
            if column == 72 {
                println!();
                column = 0;
            }
            let known = known_failures.contains(&case.id);
            if reports::Verdict::of(&outcome.status, known).is_bad() {
                details.push(reports::describe(&report_case, &outcome));
            }
        }
        let _ = std::io::stdout().flush();
        results.push((report_case, outcome));
        if broken_in_a_row > MAX_FUTILE_RESTARTS && i + 1 < selected.len() {
            stopped = Some(Stopped {
                reason: format!(
                    "the adapter broke in {broken_in_a_row} cases in a row: it was restarted {} times and broke again each time before completing a case, so the run stopped; the remaining {} case(s) were not run",
                    broken_in_a_row - 1,
                    selected.len() - i - 1
                ),
                fault: None,
            });
        }
    }
    // Stop the adapter (stop, SIGTERM, SIGKILL) before reporting.
    drop(imp);
    if column != 0 {
        println!();
    }
    for d in &details {
        println!("\n{}", d.trim_end());
    }
    let run_report = RunReport {
        implementation: info,
        cases_dir: suite.root.display().to_string(),
        suite: crate::suite::report_entry(&suite.root.display().to_string()),
        results,
        known_failures,
        stopped,
    };
    finish(&args, &run_report, partition.as_ref())
}

fn not_run() -> CaseOutcome {
    CaseOutcome {
        status: Status::NotRun,
        duration: Duration::ZERO,
    }
}

/// The adapter did not get through its handshake: every case is NOT RUN, exit 3.
fn adapter_did_not_start(
    args: &RunArgs,
    suite: &Suite,
    selected: &[&Case],
    known_failures: std::collections::BTreeSet<String>,
    error: ImplError,
    partition: Option<&serde_json::Value>,
) -> ExitCode {
    let fault = match error {
        ImplError::Broken(f) => f,
        ImplError::Refused(m) => crate::implementations::Fault::new(m),
    };
    eprintln!(
        "skillspec: the adapter could not start: {}\n{}",
        one_line(&fault.message),
        visible(reports::describe_fault(&fault, "  ").trim_end())
    );
    let run_report = RunReport {
        implementation: crate::implementations::protocol::ImplInfo::default(),
        cases_dir: suite.root.display().to_string(),
        suite: crate::suite::report_entry(&suite.root.display().to_string()),
        results: selected
            .iter()
            .map(|c| (ReportCase::from(*c), not_run()))
            .collect(),
        known_failures,
        stopped: Some(Stopped {
            reason: "the adapter could not start, so no case was run".into(),
            fault: Some(fault),
        }),
    };
    finish(args, &run_report, partition)
}

/// Prints the summary, writes the reports and picks the exit code.
fn finish(
    args: &RunArgs,
    run_report: &RunReport,
    partition: Option<&serde_json::Value>,
) -> ExitCode {
    println!("\n{}", reports::summary_text(run_report).trim_end());
    if let Some(dir) = &args.report {
        match reports::write(run_report, dir, partition) {
            Ok(()) => println!("report written to {}", dir.display()),
            Err(e) => eprintln!(
                "skillspec: cannot write the report to {}: {e}",
                dir.display()
            ),
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
    } else if !totals.is_ok() {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// Reads a known-failures file: case ids, one per line; blank lines and `#` comments ignored.
fn read_known_failures(
    path: &Path,
    suite: &Suite,
) -> Result<std::collections::BTreeSet<String>, String> {
    // A list of case ids: far below 1 MiB for any suite (810 ids of about 40 bytes).
    let text = crate::input::read_regular_text(
        path,
        1024 * 1024,
        "a known-failures list is a text file of case ids",
    )?;
    let mut ids = std::collections::BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let id = line.split('#').next().unwrap_or_default().trim();
        if id.is_empty() {
            continue;
        }
        if !suite.cases.iter().any(|c| c.id == id) {
            return Err(format!(
                "{}:{}: no case has the id `{id}`",
                path.display(),
                n + 1
            ));
        }
        ids.insert(id.to_owned());
    }
    Ok(ids)
}
