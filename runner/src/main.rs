//! The `skillspec` command-line program.
//!
//! Exit codes: 0 every case passed (or the command succeeded); 1 a case failed, errored or was
//! not run; 2 bad usage or bad case files; 3 the adapter is broken (it never started, or every
//! case sent to it errored because it broke); 130/143 interrupted by SIGINT/SIGTERM (the
//! adapter's process group is stopped and the case roots removed first, see `live`).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use skillspec_runner::cases::{self, Case, Suite};
use skillspec_runner::execution::python;
use skillspec_runner::execution::{self, CaseOutcome, RunOptions, Status};
use skillspec_runner::filter_matches;
use skillspec_runner::implementations::adapter::Adapter;
use skillspec_runner::implementations::adapter_server;
use skillspec_runner::implementations::reference::{Omission, Reference, REFERENCE_FEATURES};
use skillspec_runner::implementations::ImplError;
use skillspec_runner::implementations::Implementation;
use skillspec_runner::protocol::features::Feature;
use skillspec_runner::reports::json::read_report;
use skillspec_runner::reports::merge::{self, Partition};
use skillspec_runner::reports::show;
use skillspec_runner::reports::view::ReportView;
use skillspec_runner::reports::{self, one_line, visible, ReportCase, RunReport, Stopped};

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_BROKEN: u8 = 3;
/// Restarts of a broken adapter that may achieve nothing in a row (the restarted adapter broke
/// again before completing a case) before the run stops.
const MAX_FUTILE_RESTARTS: usize = 3;

#[derive(Parser)]
#[command(
    name = "skillspec",
    version = skillspec_runner::suite::version_text(),
    about = "Conformance suite and reference runtime for SKILL.md skill runtimes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the suite against the reference (default) or an adapter.
    Run {
        /// A command that starts an implementation speaking the adapter protocol (run by /bin/sh).
        #[arg(long, value_name = "CMD")]
        adapter: Option<String>,
        /// The directory of case files (default: the suite embedded in this program).
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
        /// Where `copy:` fixtures live (default: the `fixtures` directory beside `--cases DIR`
        /// when there is one, else the embedded fixtures).
        #[arg(long, value_name = "DIR")]
        fixtures: Option<PathBuf>,
        /// Only cases whose id or clause ids match (substring, or a glob with `*`).
        #[arg(long, value_name = "PATTERN")]
        filter: Option<String>,
        /// Write report.json and junit.xml into this directory.
        #[arg(long, value_name = "DIR")]
        report: Option<PathBuf>,
        /// The Python interpreter for helpers (default: the real executable behind python3).
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
        /// Seconds to wait for any one adapter response.
        #[arg(long, value_name = "SECS", default_value_t = 60)]
        step_timeout: u64,
        /// A file of case ids (one per line, `#` comments) the implementation is known to fail:
        /// they do not fail the run, and a listed case that passes does.
        #[arg(long, value_name = "FILE")]
        known_failures: Option<PathBuf>,
        /// Write the ids of the cases that failed or errored to this file (a known-failures list).
        #[arg(long, value_name = "FILE")]
        write_failures: Option<PathBuf>,
        /// Append every adapter message, both directions, to this file (JSON lines).
        #[arg(long, value_name = "FILE", requires = "adapter")]
        record: Option<PathBuf>,
        /// Print every case, not only the ones that did not pass.
        #[arg(long, short)]
        verbose: bool,
        /// Run only slice K of N of the selected cases (1 <= K <= N; a case's slice is a hash of
        /// its id), for splitting a run across a CI matrix; `report merge` joins the slices.
        #[arg(long, value_name = "K/N")]
        partition: Option<Partition>,
    },
    /// List the cases and the clauses they check.
    List {
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List the clauses with the cases that cite them (coverage for auditors).
    Clauses {
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show one case as readable prose.
    Show {
        /// The case id.
        id: String,
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
    },
    /// Report what the reference loads from a skills root and why everything else was skipped.
    CheckTree {
        /// The skills root.
        root: PathBuf,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Merge partitions of a run, or render reports as Markdown or HTML.
    Report {
        #[command(subcommand)]
        command: ReportCommand,
    },
    /// Serve the reference over the adapter protocol on stdin/stdout.
    Adapter {
        /// Do not declare this optional feature (its cases become UNSUPPORTED), or leave out this
        /// mandatory guard (`trading-guard`, `replay-guard`, `turn-reuse`: its cases FAIL).
        /// Repeatable.
        #[arg(long, value_name = "FEATURE")]
        without: Vec<String>,
        /// Ask the runner for a fresh adapter process for every case (as runtimes that cache
        /// state when first loaded need).
        #[arg(long)]
        process_per_case: bool,
    },
    /// Check an adapter with a few trivial cases and say in plain words what is wrong with it
    /// (exit 0 usable, 1 usable but a smoke case failed, 3 not usable).
    Smoke {
        /// The command that starts the adapter (run by /bin/sh).
        #[arg(long, value_name = "CMD")]
        adapter: String,
        /// Seconds to wait for any one answer, the handshake included.
        #[arg(long, value_name = "SECS", default_value_t = 10)]
        timeout: u64,
        /// The Python interpreter for helpers (default: the real executable behind python3).
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
    },
    /// Run the suite against every mutant of the reference (deliberate defects) and report which
    /// cases killed each; exit 1 when one survived (only built with the feature `mutants`).
    #[cfg(feature = "mutants")]
    Mutants {
        /// Only this mutant (repeatable).
        #[arg(long, value_name = "NAME")]
        only: Vec<String>,
        /// Only mutants whose name or clause contains this text.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        /// How many mutants run at once (each in its own process).
        #[arg(long, value_name = "N", default_value_t = 4)]
        jobs: usize,
        /// Also write the table as Markdown to this file.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// The Python interpreter for helpers (default: the real executable behind python3).
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
        /// Seconds a case may go without an answer before the mutant's run counts it as hung.
        #[arg(long, value_name = "SECS", default_value_t = 60)]
        stall: u64,
        /// Run the cases of this directory instead of the embedded suite (while writing a case).
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
        /// Only the cases whose id or clause matches (while writing a case: the table is partial).
        #[arg(long, value_name = "PATTERN")]
        case_filter: Option<String>,
        /// Stop each mutant's run after this many kills (0: the whole suite, every kill counted).
        /// The cases citing the mutant's clause run first, then its area, then the rest.
        #[arg(long, value_name = "N", default_value_t = 0)]
        stop_after: usize,
        /// List the mutants (name, clause, what each does) and exit.
        #[arg(long)]
        list: bool,
        /// Internal: run the suite in this process with this mutant (`none`: no mutant).
        #[arg(long, value_name = "NAME", hide = true)]
        worker: Option<String>,
    },
    /// Write the embedded suite (spec-cases/, fixtures/, SPEC.md, PROTOCOL.md, the schemas,
    /// SUITE_VERSION) into DIR.
    Export {
        /// The directory to write into (created if missing).
        dir: PathBuf,
        /// Overwrite files that already exist.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
enum ReportCommand {
    /// Merge the report.json files of every partition of one run (`run --partition K/N`) into
    /// OUT_DIR/report.json and OUT_DIR/junit.xml, as one full run writes them.
    Merge {
        /// Where to write report.json and junit.xml.
        out_dir: PathBuf,
        /// The partitions' report.json files (or the directories holding them).
        #[arg(required = true, value_name = "REPORT.json")]
        reports: Vec<PathBuf>,
        /// Merge even when some partitions are missing (the result says which).
        #[arg(long)]
        allow_incomplete: bool,
        /// The cases directory, for the cases' summaries in junit.xml (default: the embedded
        /// suite; never a directory a report names).
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
    },
    /// Print reports as Markdown for a CI job summary (a matrix first when there are several).
    Markdown {
        /// report.json files (or the directories holding them).
        #[arg(required = true, value_name = "REPORT.json")]
        reports: Vec<PathBuf>,
    },
    /// Write reports as one self-contained HTML page.
    Html {
        /// The HTML file to write.
        out: PathBuf,
        /// report.json files (or the directories holding them).
        #[arg(required = true, value_name = "REPORT.json")]
        reports: Vec<PathBuf>,
        /// The cases directory, for each case's summary, tree and steps (default: the embedded
        /// suite; never a directory a report names).
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            adapter,
            cases,
            fixtures,
            filter,
            report,
            python,
            step_timeout,
            known_failures,
            write_failures,
            record,
            verbose,
            partition,
        } => run(RunArgs {
            adapter,
            cases,
            fixtures,
            filter,
            report,
            python,
            step_timeout,
            known_failures,
            write_failures,
            record,
            verbose,
            partition,
        }),
        Command::List { cases, json } => list(cases, json),
        Command::Clauses { cases, json } => clauses(cases, json),
        Command::Show { id, cases } => show_case(cases, &id),
        Command::CheckTree { root, json } => check_tree(&root, json),
        Command::Report { command } => report_command(command),
        Command::Adapter {
            without,
            process_per_case,
        } => serve_adapter(&without, process_per_case),
        Command::Smoke {
            adapter,
            timeout,
            python,
        } => smoke(adapter, timeout, python),
        Command::Export { dir, force } => export(&dir, force),
        #[cfg(feature = "mutants")]
        Command::Mutants {
            only,
            filter,
            jobs,
            report,
            python,
            stall,
            cases,
            case_filter,
            stop_after,
            list,
            worker,
        } => {
            use skillspec_runner::mutants;
            if let Some(name) = worker {
                let suite = mutants::WorkerSuite {
                    cases,
                    case_filter,
                    stop_after,
                };
                mutants::worker(&name, python.as_deref(), &suite)
            } else if list {
                emit(&mutants::list())
            } else {
                mutants::run(&mutants::Options {
                    only,
                    filter,
                    jobs,
                    report,
                    python,
                    stall,
                    cases,
                    case_filter,
                    stop_after,
                })
            }
        }
    }
}

/// Writes a command's whole output to stdout. A reader that went away (`skillspec list | head -1`)
/// is not an error.
fn emit(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skillspec: cannot write the output: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("skillspec: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// `--cases DIR`, else the suite embedded in this program (never the source tree's directory:
/// an installed program must not depend on it).
fn load_suite(cases: Option<PathBuf>) -> Result<Suite, ExitCode> {
    let Some(dir) = cases else {
        return skillspec_runner::suite::load_embedded().map_err(|errors| {
            for e in &errors {
                eprintln!("{e}");
            }
            eprintln!("skillspec: the embedded suite does not load; this program is broken");
            ExitCode::from(EXIT_USAGE)
        });
    };
    if !dir.is_dir() {
        return Err(usage_error(format!(
            "the cases directory {} does not exist",
            dir.display()
        )));
    }
    cases::load_dir(&dir).map_err(|errors| {
        for e in &errors {
            eprintln!("{e}");
        }
        eprintln!(
            "skillspec: {} error(s) in case files; nothing was run",
            errors.len()
        );
        ExitCode::from(EXIT_USAGE)
    })
}

struct RunArgs {
    adapter: Option<String>,
    cases: Option<PathBuf>,
    fixtures: Option<PathBuf>,
    filter: Option<String>,
    report: Option<PathBuf>,
    python: Option<PathBuf>,
    step_timeout: u64,
    known_failures: Option<PathBuf>,
    write_failures: Option<PathBuf>,
    record: Option<PathBuf>,
    verbose: bool,
    partition: Option<Partition>,
}

fn run(args: RunArgs) -> ExitCode {
    skillspec_runner::hold_inherited_descriptor();
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
    if let Err(e) = skillspec_runner::execution::roots::install_signal_handlers() {
        eprintln!("skillspec: cannot handle SIGINT/SIGTERM: {e}");
    }
    // The embedded fixtures, when used, live in a private temporary directory until this
    // value is dropped at the end of the run (or a signal removes it).
    let fixtures = match skillspec_runner::suite::fixtures_for(
        args.fixtures.clone(),
        args.cases.as_deref(),
        skillspec_runner::suite::copies_fixtures(selected.iter().copied()),
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
        one_line(&skillspec_runner::suite::describe_source(
            args.cases.as_deref()
        )),
        one_line(&format!("{} {}", info.name, info.version))
    );
    if args.cases.is_none() && Path::new("spec-cases").is_dir() {
        println!("(./spec-cases is not used: pass --cases spec-cases to run it)");
    }
    if let Some(warning) =
        skillspec_runner::protocol::features::unknown_warning(&info.unknown_features)
    {
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
        suite: skillspec_runner::suite::report_entry(&suite.root.display().to_string()),
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
    let fault = error.into_fault();
    eprintln!(
        "skillspec: the adapter could not start: {}\n{}",
        one_line(&fault.message()),
        visible(reports::describe_fault(&fault, "  ").trim_end())
    );
    let run_report = RunReport {
        implementation: skillspec_runner::protocol::ImplInfo::default(),
        cases_dir: suite.root.display().to_string(),
        suite: skillspec_runner::suite::report_entry(&suite.root.display().to_string()),
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
    let text = skillspec_runner::input::read_regular_text(
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

fn list(cases: Option<PathBuf>, json: bool) -> ExitCode {
    let suite = match load_suite(cases) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut out = String::new();
    if json {
        let items: Vec<serde_json::Value> = suite
            .cases
            .iter()
            .map(|c| {
                serde_json::json!({
                    "id": c.id, "summary": c.summary, "clauses": c.clauses, "requires": c.requires,
                    "area": c.area, "file": c.file.display().to_string(), "line": c.line,
                })
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::Value::Array(items));
    } else {
        for c in &suite.cases {
            let _ = writeln!(out, "{:<50} {}", c.id, c.clauses.join(" "));
        }
        let _ = writeln!(out, "{} cases", suite.cases.len());
    }
    emit(&out)
}

fn clauses(cases: Option<PathBuf>, json: bool) -> ExitCode {
    use skillspec_runner::cases::clauses::{Level, CLAUSES};
    let suite = match load_suite(cases) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let citing = |id: &str| -> Vec<&str> {
        suite
            .cases
            .iter()
            .filter(|c| c.clauses.iter().any(|x| x == id))
            .map(|c| c.id.as_str())
            .collect()
    };
    let mut out = String::new();
    let level = |l: Level| match l {
        Level::Must => "MUST",
        Level::Should => "SHOULD",
        Level::May => "MAY",
    };
    if json {
        let items: Vec<serde_json::Value> = CLAUSES
            .iter()
            .map(|c| {
                serde_json::json!({"id": c.id, "level": level(c.level), "feature": c.feature, "cases": citing(c.id)})
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::Value::Array(items));
    } else {
        let mut uncited = 0;
        for c in CLAUSES {
            let ids = citing(c.id);
            uncited += usize::from(ids.is_empty());
            let feature = c.feature.map(|f| format!(" [{f}]")).unwrap_or_default();
            let _ = writeln!(
                out,
                "{:<32} {:<6} {:>4} case(s){feature}",
                c.id,
                level(c.level),
                ids.len()
            );
        }
        let _ = writeln!(
            out,
            "{} clauses, {} cited by no case",
            CLAUSES.len(),
            uncited
        );
    }
    emit(&out)
}

fn show_case(cases: Option<PathBuf>, id: &str) -> ExitCode {
    let suite = match load_suite(cases) {
        Ok(s) => s,
        Err(code) => return code,
    };
    match suite.cases.iter().find(|c| c.id == id) {
        Some(c) => emit(&show::render(c)),
        None => {
            let close: Vec<&str> = suite
                .cases
                .iter()
                .filter(|c| c.id.contains(id))
                .map(|c| c.id.as_str())
                .take(10)
                .collect();
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!(" (did you mean: {})", close.join(", "))
            };
            usage_error(format!("no case has the id `{id}`{hint}"))
        }
    }
}

fn check_tree(root: &Path, json: bool) -> ExitCode {
    match skillspec_runner::check_tree::render(root, json) {
        Ok(text) => emit(&text),
        Err(e) => usage_error(e),
    }
}

fn serve_adapter(without: &[String], process_per_case: bool) -> ExitCode {
    // `--without NAME`: an optional feature is no longer declared (its cases become
    // UNSUPPORTED); a mandatory behaviour that once was a feature is left out (its cases FAIL).
    let mut features: Vec<Feature> = REFERENCE_FEATURES.to_vec();
    let mut omitted = Vec::new();
    for name in without {
        if let Some(f) = Feature::parse(name) {
            features.retain(|x| *x != f);
        } else if let Some(o) = Omission::parse(name) {
            omitted.push(o);
        } else {
            let known: Vec<&str> = Feature::ALL
                .iter()
                .map(|f| f.as_str())
                .chain(Omission::ALL.iter().map(|o| o.as_str()))
                .collect();
            return usage_error(format!(
                "`--without {name}`: no such feature or guard (known: {})",
                known.join(", ")
            ));
        }
    }
    let mut reference = omitted
        .into_iter()
        .fold(Reference::with_features(features), Reference::lacking)
        .with_process_per_case(process_per_case);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    match adapter_server::serve(&mut reference, stdin.lock(), stdout.lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skillspec adapter: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// `skillspec report ...`: exit 0 done, 1 the output could not be written, 2 a report could not
/// be read or the partitions do not merge.
fn report_command(command: ReportCommand) -> ExitCode {
    match command {
        ReportCommand::Merge {
            out_dir,
            reports,
            allow_incomplete,
            cases,
        } => merge_reports(&out_dir, &reports, allow_incomplete, cases),
        ReportCommand::Markdown { reports } => match read_views(&reports) {
            Ok(views) => emit(&reports::markdown::render(&views)),
            Err(code) => code,
        },
        ReportCommand::Html {
            out,
            reports,
            cases,
        } => html_report(&out, &reports, cases),
    }
}

/// Reads every report (exit 2 naming the first unreadable one).
fn read_views(paths: &[PathBuf]) -> Result<Vec<ReportView>, ExitCode> {
    let mut views = Vec::new();
    for p in paths {
        let v = read_report(p).map_err(usage_error)?;
        views.push(ReportView::from_json(&p.display().to_string(), &v).map_err(usage_error)?);
    }
    Ok(views)
}

/// The suite for a report command: `--cases` (which must load), else the embedded suite. Never
/// a directory a report names (its `cases_dir`): a report is data from elsewhere, and loading
/// cases from where it says would show that place's files in the page, or walk the file system.
fn suite_for_report(cases: Option<PathBuf>) -> Result<Result<Suite, String>, ExitCode> {
    if let Some(dir) = cases {
        return load_suite(Some(dir)).map(Ok);
    }
    Ok(skillspec_runner::suite::load_embedded().map_err(|errors| {
        format!(
            "the embedded suite did not load ({} error(s))",
            errors.len()
        )
    }))
}

fn merge_reports(
    out_dir: &Path,
    paths: &[PathBuf],
    allow_incomplete: bool,
    cases: Option<PathBuf>,
) -> ExitCode {
    let mut inputs = Vec::new();
    for p in paths {
        match read_report(p) {
            Ok(report) => inputs.push(merge::Input {
                source: p.display().to_string(),
                report,
            }),
            Err(e) => return usage_error(e),
        }
    }
    let suite = match suite_for_report(cases) {
        Ok(s) => s.ok(),
        Err(code) => return code,
    };
    let summary_of = |id: &str| {
        suite
            .as_ref()
            .and_then(|s| s.cases.iter().find(|c| c.id == id))
            .map(|c| c.summary.clone())
    };
    let merged = match merge::merge(&inputs, allow_incomplete, &summary_of) {
        Ok(m) => m,
        Err(e) => return usage_error(format!("cannot merge: {e}")),
    };
    if let Err(e) = reports::write_files(out_dir, &merged.report, &merged.junit) {
        eprintln!("skillspec: cannot write to {}: {e}", out_dir.display());
        return ExitCode::from(EXIT_FAILED);
    }
    let mut line = format!(
        "merged {} partition(s), {} case(s), into {}",
        inputs.len(),
        merged.cases,
        out_dir.display()
    );
    if !merged.missing.is_empty() {
        let missing: Vec<String> = merged.missing.iter().map(u64::to_string).collect();
        line.push_str(&format!(
            " (incomplete: partition(s) {} missing)",
            missing.join(", ")
        ));
    }
    println!("{line}");
    ExitCode::SUCCESS
}

fn html_report(out: &Path, paths: &[PathBuf], cases: Option<PathBuf>) -> ExitCode {
    let views = match read_views(paths) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let suite = match suite_for_report(cases) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let page = reports::html::render(&views, suite.as_ref().map_err(String::as_str));
    if let Err(e) = std::fs::write(out, page) {
        eprintln!("skillspec: cannot write {}: {e}", out.display());
        return ExitCode::from(EXIT_FAILED);
    }
    if let Err(why) = &suite {
        eprintln!("skillspec: note: the page shows no case definitions: {why}");
    }
    println!("wrote {}", out.display());
    ExitCode::SUCCESS
}

fn smoke(adapter: String, timeout: u64, python: Option<PathBuf>) -> ExitCode {
    let python = match python::resolve(python.as_deref()) {
        Ok(p) => p,
        Err(e) if python.is_some() => return usage_error(e),
        Err(_) => PathBuf::from("python3"),
    };
    if let Err(e) = skillspec_runner::execution::roots::install_signal_handlers() {
        eprintln!("skillspec: cannot handle SIGINT/SIGTERM: {e}");
    }
    let opts = skillspec_runner::smoke::Options {
        command: adapter,
        timeout: Duration::from_secs(timeout.max(1)),
        python,
    };
    let mut stdout = std::io::stdout().lock();
    match skillspec_runner::smoke::run(&opts, &mut stdout) {
        Ok(code) => ExitCode::from(code),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(EXIT_FAILED),
        Err(e) => {
            eprintln!("skillspec smoke: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn export(dir: &Path, force: bool) -> ExitCode {
    match skillspec_runner::suite::export(dir, force) {
        Ok(done) => {
            let replaced = if done.replaced > 0 {
                format!(" ({} replaced)", done.replaced)
            } else {
                String::new()
            };
            emit(&format!(
                "wrote {} files of suite {}{replaced} to {}\n",
                done.files,
                skillspec_runner::suite::VERSION,
                dir.display()
            ))
        }
        Err(e) => usage_error(format!("export: {e}")),
    }
}
