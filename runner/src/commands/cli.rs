//! The command line: the clap definitions of every `skillspec` subcommand and its options.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::reports::merge::Partition;

/// The longest wait any option of seconds takes: a week. Far above any real bound, and far below
/// the values whose deadline (now + seconds) a clock cannot hold.
pub const MAX_SECONDS: u64 = 7 * 24 * 3600;

/// The largest `--memory-bound`, in MiB: 1 PiB, more than any machine holds.
pub const MAX_MEMORY_MIB: u64 = 1 << 30;

#[derive(Parser)]
#[command(
    name = "skillspec",
    version = crate::suite::version_text(),
    about = "Conformance suite and reference runtime for SKILL.md skill runtimes"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the suite against the reference (default) or an adapter.
    Run(Box<RunArgs>),
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
        /// Only the clauses whose id contains this text, each with the ids of its cases.
        pattern: Option<String>,
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
        /// The rules to judge the tree by: `portable-skills` (what the reference runtime loads)
        /// or `agentskills` (the open Agent Skills standard: every problem of every skill, with
        /// its SKILL.md line, clause and a fix).
        #[arg(long, value_name = "DIALECT", default_value = "portable-skills",
              value_parser = ["portable-skills", "agentskills"])]
        dialect: String,
        /// With `--dialect agentskills`: a strict client (skips every skill that breaks the
        /// format) or a lenient one (loads cosmetic ones, as the client guide recommends).
        #[arg(long, value_name = "MODE", value_parser = ["strict", "lenient"])]
        mode: Option<String>,
    },
    /// Print SPORTSCLAW_SKILL_SCRIPT_ALLOWLIST approving the helpers of the skills loaded from
    /// ROOT (all of them, or those named), hashed as skill_run_script hashes them.
    Allowlist {
        /// The skills root.
        root: PathBuf,
        /// Only these: a skill id (its helpers) or SKILL/SCRIPT (one helper, e.g.
        /// espn-api/scripts/espn_fetch.py).
        #[arg(value_name = "SKILL[/SCRIPT]")]
        only: Vec<String>,
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
        /// The mode in which the reference claims dialect `agentskills` (SPEC.md, "Dialect
        /// `agentskills`": strict skips every skill that breaks the format, lenient loads
        /// cosmetic ones as the client guide recommends).
        #[arg(long, value_name = "MODE", default_value = "lenient",
              value_parser = ["strict", "lenient"])]
        agentskills_mode: String,
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
    Mutants(MutantsArgs),
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
pub enum ReportCommand {
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

// The options of `run` (the command's help is the doc comment of `Command::Run`).
#[derive(Args)]
pub struct RunArgs {
    /// A command that starts an implementation speaking the adapter protocol (run by /bin/sh).
    #[arg(long, value_name = "CMD")]
    pub adapter: Option<String>,
    /// The directory of case files (default: the suite embedded in this program).
    #[arg(long, value_name = "DIR")]
    pub cases: Option<PathBuf>,
    /// Where `copy:` fixtures live (default: the `fixtures` directory beside `--cases DIR`
    /// when there is one, else the embedded fixtures).
    #[arg(long, value_name = "DIR")]
    pub fixtures: Option<PathBuf>,
    /// Only cases whose id or clause ids match (substring, or a glob with `*`).
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,
    /// Write report.json and junit.xml into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// The Python interpreter for helpers (default: the real executable behind python3).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Seconds to wait for any one adapter response (at least 1). A case that declares
    /// `bounded:` waits `--hang-bound` instead.
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=MAX_SECONDS))]
    pub step_timeout: u64,
    /// Seconds a request of a `bounded:` case (a FIFO, a socket, a link loop, a 4 GiB sparse
    /// file in its tree) may go unanswered before the runtime counts as hung (`unbounded`),
    /// whatever `--step-timeout` says: well above any finite answer, so that neither the step
    /// timeout nor the machine's load decides the verdict.
    #[arg(long, value_name = "SECS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..=MAX_SECONDS))]
    pub hang_bound: u64,
    /// MiB an adapter's processes (its command and everything it starts) may grow by in memory
    /// while a request is unanswered (at least 64; default 16 GiB). Past it they are killed at
    /// once: in a `bounded:` case the runtime counts as hung (`unbounded`), elsewhere the case is
    /// an error. Four times the largest file a case plants (4 GiB), above the most any finite
    /// answer was measured to take (12.1 GiB), so that a runtime that reads an endless file
    /// cannot take the machine's memory.
    #[arg(long, value_name = "MIB", default_value_t = crate::protocol::transport::MEMORY_BOUND >> 20,
          value_parser = clap::value_parser!(u64).range(64..=MAX_MEMORY_MIB))]
    pub memory_bound: u64,
    /// Also run the cases of this dialect when the implementation does not claim it, for
    /// information: judged by its rules, counted under `NAME VERSION (not claimed; for
    /// information)`, never in the headline (SPEC.md, "Dialects"). Repeatable.
    #[arg(long, value_name = "DIALECT", value_parser = dialect_name)]
    pub for_information: Vec<&'static str>,
    /// The mode in which the embedded reference claims dialect `agentskills` (`strict` or
    /// `lenient`); an adapter declares its own, so this goes only without `--adapter`.
    #[arg(long, value_name = "MODE", value_parser = ["strict", "lenient"])]
    pub agentskills_mode: Option<String>,
    /// A file of case ids (one per line, `#` comments) the implementation is known to fail:
    /// they do not fail the run, and a listed case that passes does.
    #[arg(long, value_name = "FILE")]
    pub known_failures: Option<PathBuf>,
    /// Write the ids of the cases that failed or errored to this file (a known-failures list).
    #[arg(long, value_name = "FILE")]
    pub write_failures: Option<PathBuf>,
    /// Append every adapter message, both directions, to this file (JSON lines).
    #[arg(long, value_name = "FILE", requires = "adapter")]
    pub record: Option<PathBuf>,
    /// Print every case, not only the ones that did not pass.
    #[arg(long, short)]
    pub verbose: bool,
    /// Run only slice K of N of the selected cases (1 <= K <= N; a case's slice is a hash of
    /// its id), for splitting a run across a CI matrix; `report merge` joins the slices.
    #[arg(long, value_name = "K/N")]
    pub partition: Option<Partition>,
    /// Run N cases side by side: N workers in-process, or N adapter processes, each given whole
    /// cases (default: the number of CPUs; 1 runs them one after another, in suite order). Cases
    /// that may hang or need much memory start first, those of one `exclusive:` name one at a
    /// time; cases marked `alone: true` run alone, last. Reports are in suite order, as with
    /// --jobs 1.
    #[arg(long, short, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// The progress display of `run` and `mutants`, on stderr.
#[derive(Args, Clone, Copy)]
pub struct ProgressArgs {
    /// How progress shows on stderr: `auto` (a live bar with the cases in flight when stderr is
    /// a terminal, else a plain line every --progress-interval seconds), `bar`, `lines`, `off`.
    #[arg(long, value_name = "HOW", value_enum, default_value_t = crate::progress::Mode::Auto)]
    pub progress: crate::progress::Mode,
    /// Seconds between the plain progress lines (at least 1).
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=MAX_SECONDS))]
    pub progress_interval: u64,
}

impl ProgressArgs {
    /// The display these options choose for this process's stderr.
    pub fn display(&self) -> crate::progress::Display {
        crate::progress::Display::choose(
            self.progress,
            std::time::Duration::from_secs(self.progress_interval),
        )
    }
}

// The options of `mutants` (its help is the doc comment of `Command::Mutants`).
#[cfg(feature = "mutants")]
#[derive(Args)]
pub struct MutantsArgs {
    /// Only this mutant (repeatable).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Only mutants whose name or clause contains this text.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// How many mutants run at once (each in its own process).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub jobs: usize,
    /// Also write the table as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// The Python interpreter for helpers (default: the real executable behind python3).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Seconds a case may go without an answer before the mutant's run counts it as hung.
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=MAX_SECONDS))]
    pub stall: u64,
    /// Run the cases of this directory instead of the embedded suite (while writing a case).
    #[arg(long, value_name = "DIR")]
    pub cases: Option<PathBuf>,
    /// Only the cases whose id or clause matches (while writing a case: the table is partial).
    #[arg(long, value_name = "PATTERN")]
    pub case_filter: Option<String>,
    /// Stop each mutant's run after this many kills (0: the whole suite, every kill counted).
    /// The cases citing the mutant's clause run first, then its area, then the rest.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub stop_after: usize,
    /// List the mutants (name, clause, what each does) and exit.
    #[arg(long)]
    pub list: bool,
    /// Internal: run the suite in this process with this mutant (`none`: no mutant).
    #[arg(long, value_name = "NAME", hide = true)]
    pub worker: Option<String>,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// A dialect of the suite, by name (`--for-information`).
fn dialect_name(name: &str) -> Result<&'static str, String> {
    crate::protocol::dialects::lookup(name)
        .map(|d| d.name)
        .ok_or_else(|| {
            let known: Vec<&str> = crate::protocol::dialects::DIALECTS
                .iter()
                .map(|d| d.name)
                .collect();
            format!("no dialect `{name}` (the suite's: {})", known.join(", "))
        })
}
