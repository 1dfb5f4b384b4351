//! Running cases against an implementation. Here: one case ([`run_case`]): build the fixture in
//! a fresh temporary root, render the configuration ([`crate::cases::template`]), drive the steps
//! (the runner performs `write`, `remove` and `wait` itself), compare every outcome with its
//! expectation, search what the model is shown for canaries, and clean up. Below: the one loop
//! that runs a suite ([`run`], [`run_suite`]) and what it runs ([`plan`]), the processes a case
//! leaves behind ([`survivors`]), the case roots a signal removes ([`roots`]), the interpreter
//! ([`python`]).
//!
//! Layer 3 of the runner: it uses [`crate::cases`], [`crate::implementations`] and
//! [`crate::protocol`], never the reports or the commands above it.
//!
//! Clauses: SPEC.md "How verdicts are judged" (the kinds of failure, canaries, markers, a hang
//! of a `bounded` case), `run.process-group` (processes left behind).

pub mod plan;
pub mod python;
pub mod roots;
pub mod run;
pub mod survivors;

pub use run::{not_run, run_suite, Factory, Observer, Policy, Stopped, SuiteOutcome};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cases::expect::{check_outcome, Exposure, Mismatch, MismatchKind};
use crate::cases::fixture;
use crate::cases::{Action, Case};
use crate::implementations::{ImplError, Implementation};
use crate::protocol::claims::{Need, ReadScope};
use crate::protocol::fault::Fault;
use crate::protocol::features::Feature;
use crate::protocol::StepOutcome;

/// Settings shared by every case of a run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where `copy:` fixture sources live.
    pub fixtures: PathBuf,
    /// The interpreter every case's runtime runs helpers with.
    pub python: PathBuf,
    /// The name prefix of each case's temporary root (so one run can find its own leftovers).
    pub temp_prefix: String,
    /// How long a request of a `bounded:` case may go unanswered before it counts as a hang
    /// (`unbounded`), whatever the step timeout: one suite-wide bound set by the runner, well
    /// above what any finite answer takes (a 4 GiB file read whole: about 30 s on an idle
    /// 2-core machine), so that neither the step timeout nor the machine's load decides a
    /// verdict (SPEC.md, "How verdicts are judged").
    pub hang_bound: Duration,
    /// The dialects whose cases run although the implementation does not claim them, for
    /// information (`run --for-information`; SPEC.md, "Dialects"): judged by their rules,
    /// counted under their `(not claimed; for information)` label, never in the headline.
    pub for_information: Vec<&'static str>,
}

/// The runner's bound for a `bounded:` case's requests ([`RunOptions::hang_bound`]).
pub const HANG_BOUND: Duration = Duration::from_secs(300);

/// The step at which a case failed and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// 1-based step number.
    pub step: usize,
    pub line: usize,
    pub label: String,
    pub mismatches: Vec<Mismatch>,
}

/// How a failed case failed (SPEC.md, "How verdicts are judged"), worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureKind {
    /// The run shows a security boundary crossed (at least one mismatch carries an exposure).
    Unsafe,
    /// The runtime accepted what the specification requires it to refuse, and the run shows no
    /// crossing.
    Permissive,
    /// The runtime stayed safe and strict but answered otherwise.
    Different,
}

impl FailureKind {
    pub const ALL: [FailureKind; 3] = [
        FailureKind::Unsafe,
        FailureKind::Permissive,
        FailureKind::Different,
    ];

    pub fn word(self) -> &'static str {
        match self {
            FailureKind::Unsafe => "unsafe",
            FailureKind::Permissive => "permissive",
            FailureKind::Different => "different",
        }
    }

    /// The kind a mismatch of this kind makes its case.
    pub fn of(kind: MismatchKind) -> FailureKind {
        match kind {
            MismatchKind::Unsafe(_) => FailureKind::Unsafe,
            MismatchKind::Permissive => FailureKind::Permissive,
            MismatchKind::Interop => FailureKind::Different,
        }
    }
}

impl Failure {
    /// The worst kind among the mismatches: unsafe, then permissive, then different.
    pub fn kind(&self) -> FailureKind {
        self.mismatches
            .iter()
            .map(|m| FailureKind::of(m.kind))
            .min()
            .unwrap_or(FailureKind::Different)
    }

    /// The exposures the run showed, each once, in the order of the list.
    pub fn exposures(&self) -> Vec<Exposure> {
        let mut out = Vec::new();
        for e in self.mismatches.iter().filter_map(|m| m.kind.exposure()) {
            if !out.contains(&e) {
                out.push(e);
            }
        }
        out
    }

    /// The tools of the specification whose absence alone explains every mismatch of this
    /// failure (empty when any mismatch has another reason).
    pub fn missing_tools(&self) -> Vec<&str> {
        let mut tools = Vec::new();
        for m in &self.mismatches {
            match &m.missing_tool {
                Some(t) if !tools.contains(&t.as_str()) => tools.push(t.as_str()),
                Some(_) => {}
                None => return Vec::new(),
            }
        }
        tools
    }
}

/// How a case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail(Failure),
    /// The implementation does not declare these required features, or does not read these
    /// formats.
    Unsupported(Vec<Need>),
    /// The case passed, but the implementation lacks a mechanism the case exercises (it declares
    /// so, with a reason): the pass tested nothing (SPEC.md, "How verdicts are judged").
    NotExercised(String),
    /// The runner cannot run the case here: a precondition of the case is not met.
    Skipped(String),
    /// The case could not be run: a broken implementation or an unusable fixture.
    Error {
        message: String,
        /// The implementation broke (it is restarted before the next case).
        broken: bool,
        /// What the runner knows about the breakage: the unanswered request, the stderr tail.
        fault: Option<Fault>,
    },
    /// The run stopped before this case (the adapter kept breaking, or never started).
    NotRun,
}

impl Status {
    pub fn word(&self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail(_) => "fail",
            Status::Unsupported(_) => "unsupported",
            Status::NotExercised(_) => "not-exercised",
            Status::Skipped(_) => "skipped",
            Status::Error { .. } => "error",
            Status::NotRun => "not-run",
        }
    }

    /// Whether the case reached the implementation (it was neither gated nor left out).
    pub fn was_sent(&self) -> bool {
        !matches!(
            self,
            Status::Unsupported(_) | Status::Skipped(_) | Status::NotRun
        )
    }

    /// Whether the case errored because the implementation broke.
    pub fn is_broken(&self) -> bool {
        matches!(self, Status::Error { broken: true, .. })
    }
}

/// The result of one case.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    pub status: Status,
    pub duration: Duration,
}

/// For each of `paths`, whether the case itself plants it: an entry of the tree or of a `write`
/// step is that path or lies below it (a skill directory the case builds). What the case plants
/// is no trace of the runtime's code; anything else that appears is, whenever it appears (a
/// descendant may write its file after the step that started it).
fn planted_by_case(case: &Case, paths: &[String]) -> Vec<bool> {
    let mut trees = vec![&case.tree];
    trees.extend(case.steps.iter().filter_map(|s| match &s.action {
        Action::Write(t) => Some(t),
        _ => None,
    }));
    paths
        .iter()
        .map(|p| {
            let Ok(rel) = fixture::parse_raw_path(p) else {
                return false;
            };
            trees.iter().flat_map(|t| &t.entries).any(|e| {
                e.path == rel || (e.path.starts_with(&rel) && e.path.get(rel.len()) == Some(&b'/'))
            })
        })
        .collect()
}

/// Checks a step's `files`. `planted` says which `absent` paths the case itself plants.
fn check_files(
    case_root: &Path,
    expect: &crate::cases::expect::FilesExpect,
    planted: &[bool],
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for (list, should_exist) in [(&expect.exists, true), (&expect.absent, false)] {
        for (i, p) in list.iter().enumerate() {
            // Found without following a link at any component; a path the runner could only
            // check through a link is a mismatch whatever was expected.
            let found = fixture::parse_raw_path(p).and_then(|rel| fixture::probe(case_root, &rel));
            let actual = match &found {
                Ok(exists) if *exists == should_exist => continue,
                Ok(exists) => if *exists { "exists" } else { "absent" }.to_owned(),
                Err(why) => format!("not checked: {why}"),
            };
            // A file that must be absent and that the case did not plant is the marker of
            // something that must not have run (a helper, a planted interpreter or a
            // descendant writes it): code ran. One the case planted (a skill that should have
            // been removed) shows no crossing: different. A link in its way is no proof of
            // either, only of something standing where nothing may: permissive. A missing
            // file that should exist is different.
            let what = format!("file `{p}`");
            let was_there = !should_exist && planted.get(i).copied().unwrap_or(false);
            out.push(match (should_exist, &found) {
                (true, _) => Mismatch::interop(what, "exists", actual),
                (false, Ok(_)) if was_there => Mismatch::interop(
                    what,
                    "absent after the step",
                    "still there (the case planted it)",
                ),
                (false, Ok(_)) => Mismatch::exposed(
                    Exposure::CodeRan,
                    format!("{what} (the marker of code that must not run)"),
                    "absent",
                    actual,
                ),
                (false, Err(_)) => Mismatch::permissive(what, "absent", actual),
            });
        }
    }
    out
}

/// What `case` needs of the implementation `info` describes and does not get: undeclared
/// features, formats it does not read, the dialect or mode it does not claim, operations it
/// lacks. A case with any is UNSUPPORTED and never sent. `for_information`: the dialects run
/// although unclaimed ([`RunOptions::for_information`]).
pub fn unmet_needs(
    case: &Case,
    info: &crate::protocol::ImplInfo,
    for_information: &[&str],
) -> Vec<Need> {
    case.requires
        .iter()
        .copied()
        .filter(|f| !info.features.contains(f))
        .map(Need::Feature)
        .chain(
            case.formats
                .iter()
                .copied()
                .filter(|f| !info.reads(*f))
                .map(Need::Format),
        )
        .chain(dialect_need(case, info, for_information))
        .chain(
            case.exercised()
                .into_iter()
                .filter(|m| m.gates() && info.lacks.contains_key(m))
                .map(Need::Mechanism),
        )
        .collect()
}

/// Runs `case` against `imp`. `seq` numbers the case within the run.
///
/// After a successful `case_start`, `case_end` is always sent, whatever happened in between,
/// unless the implementation broke. A broken implementation is not recovered here: an adapter
/// starts a fresh process at the next `start_case`.
pub fn run_case(
    case: &Case,
    imp: &mut dyn Implementation,
    opts: &RunOptions,
    seq: u64,
) -> CaseOutcome {
    let started = Instant::now();
    let missing = unmet_needs(case, imp.info(), &opts.for_information);
    let unmet: Vec<String> = case
        .preconditions
        .iter()
        .filter_map(|p| p.unmet())
        .collect();
    let status = if !missing.is_empty() {
        Status::Unsupported(missing)
    } else if !unmet.is_empty() {
        Status::Skipped(unmet.join("; "))
    } else {
        let status = run_steps(case, imp, opts, seq).unwrap_or_else(StepError::into_status);
        let status = if judged_as_hardening(case, imp.info()) {
            hardening_only(status)
        } else {
            status
        };
        exercised(case, imp.info(), status)
    };
    CaseOutcome {
        status,
        duration: started.elapsed(),
    }
}

/// Whether `case` runs for `info` as hardening (SPEC.md, "Hardening"): the implementation does
/// not claim the case's dialect, and the case is one whose exposures the threat model covers
/// ([`Case::hardening`], not written for one mode). Data only: no dialect is named.
pub fn judged_as_hardening(case: &Case, info: &crate::protocol::ImplInfo) -> bool {
    info.claim_of(case.dialect).is_none() && case.hardening() && case.mode.is_none()
}

/// A hardening run's status: only the exposures count. A failure whose mismatches show no
/// crossing passes, unless every one of them is a missing tool of the specification (the
/// behaviour was never reached: not exercised); the unsafe mismatches of a failure stand alone.
fn hardening_only(status: Status) -> Status {
    let Status::Fail(mut f) = status else {
        return status;
    };
    let (crossing, rest): (Vec<_>, Vec<_>) = f
        .mismatches
        .into_iter()
        .partition(|m| m.kind.exposure().is_some());
    if !crossing.is_empty() {
        f.mismatches = crossing;
        return Status::Fail(f);
    }
    let tools: Vec<&str> = rest
        .iter()
        .filter_map(|m| m.missing_tool.as_deref())
        .collect();
    if !rest.is_empty() && tools.len() == rest.len() {
        return Status::NotExercised(format!(
            "hardening: the runtime has no {}",
            tools.first().copied().unwrap_or_default()
        ));
    }
    Status::Pass
}

/// What a case needs of the implementation's dialect claims (SPEC.md, "Dialects"): the claim of
/// the case's dialect (name and version), and, for a case written for one mode, a claim in that
/// mode. A case the implementation runs as hardening needs no claim, nor does a case of a dialect
/// run for information (`for_information`) that is written for no mode. Data only: the case's
/// dialect and mode against the implementation's claims.
fn dialect_need(
    case: &Case,
    info: &crate::protocol::ImplInfo,
    for_information: &[&str],
) -> Option<Need> {
    if judged_as_hardening(case, info) {
        return None;
    }
    let Some(claim) = info.claim_of(case.dialect) else {
        if case.mode.is_none() && for_information.contains(&case.dialect.name) {
            return None;
        }
        return Some(Need::Dialect(case.dialect.need));
    };
    let mode = case.mode?;
    (claim.mode.as_deref() != Some(mode))
        .then(|| case.dialect.mode_need(mode).map(Need::Mode))
        .flatten()
}

/// A pass of a case that exercises a mechanism the implementation lacks tested nothing: not
/// exercised, with the implementation's reason (SPEC.md, "How verdicts are judged"). Any other
/// outcome stands.
fn exercised(case: &Case, info: &crate::protocol::ImplInfo, status: Status) -> Status {
    if status != Status::Pass {
        return status;
    }
    let lacking: Vec<String> = case
        .exercised()
        .into_iter()
        .filter_map(|m| info.lacks.get(&m).map(|why| format!("no {m}: {why}")))
        .collect();
    if lacking.is_empty() {
        Status::Pass
    } else {
        Status::NotExercised(format!("the runtime has {}", lacking.join("; ")))
    }
}

enum StepError {
    Fixture(String),
    Impl(ImplError),
    /// The case is judged, and the implementation broke while it ran: `case_end` is not sent.
    Judged(Box<Status>),
    /// An error, and then `case_end` failed too.
    Then(Box<StepError>, ImplError),
}

impl StepError {
    /// The message, whether the implementation broke, and what is known about the breakage.
    fn parts(self) -> (String, bool, Option<Fault>) {
        match self {
            StepError::Fixture(message) => (message, false, None),
            StepError::Impl(ImplError::Broken(fault)) => (
                format!("the implementation is broken: {}", fault.message()),
                true,
                Some(*fault),
            ),
            StepError::Impl(refused @ ImplError::RefusedWithStderr(..)) => {
                (refused.to_string(), false, Some(refused.into_fault()))
            }
            StepError::Impl(refused) => (refused.to_string(), false, None),
            StepError::Judged(status) => (format!("{status:?}"), true, None),
            StepError::Then(first, end) => {
                let (message, ..) = first.parts();
                let (then, broken, fault) = StepError::Impl(end).parts();
                (
                    format!("{message}\nand then `case_end` failed: {then}"),
                    broken,
                    fault,
                )
            }
        }
    }

    fn into_status(self) -> Status {
        if let StepError::Judged(status) = self {
            return *status;
        }
        let (message, broken, fault) = self.parts();
        Status::Error {
            message,
            broken,
            fault,
        }
    }
}

fn run_steps(
    case: &Case,
    imp: &mut dyn Implementation,
    opts: &RunOptions,
    seq: u64,
) -> Result<Status, StepError> {
    // Registered, so that SIGINT/SIGTERM can remove it (see `live`).
    let tmp =
        roots::create_root(|| tempfile::Builder::new().prefix(&opts.temp_prefix).tempdir())
            .map_err(|e| StepError::Fixture(format!("cannot create a temporary directory: {e}")))?;
    // The canonical path, so that the real path of anything inside equals its spelled path.
    let result = match tmp.path().canonicalize() {
        Ok(root) => left_behind(case, drive(case, imp, opts, seq, &root), &root),
        Err(e) => Err(StepError::Fixture(format!(
            "cannot resolve the temporary directory: {e}"
        ))),
    };
    let path = tmp.path().to_path_buf();
    if let Err(e) = roots::remove_root(tmp) {
        eprintln!(
            "skillspec: could not remove the case directory {} of {}: {e}",
            path.display(),
            case.id
        );
    }
    result
}

/// Fails the case when the implementation left processes behind in the case root (they are
/// killed); a case that errored keeps its error, with the processes named.
fn left_behind(
    case: &Case,
    result: Result<Status, StepError>,
    root: &Path,
) -> Result<Status, StepError> {
    let survivors = survivors::collect(root);
    if survivors.is_empty() {
        return result;
    }
    // Left running what must end with the call: a process outlived its case.
    let mismatch = Mismatch::exposed(
        Exposure::ProcessOutlived,
        "processes left behind in the case root after the case (now killed)",
        "none (SPEC.md run.process-group)",
        survivors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
    );
    match result {
        Ok(Status::Pass) => Ok(Status::Fail(Failure {
            step: case.steps.len(),
            line: case.steps.last().map_or(case.line, |s| s.line),
            label: "after the last step".into(),
            mismatches: vec![mismatch],
        })),
        Ok(Status::Fail(mut failure)) => {
            failure.mismatches.push(mismatch);
            Ok(Status::Fail(failure))
        }
        Err(StepError::Fixture(message)) => Err(StepError::Fixture(format!(
            "{message}\nand processes were left behind: {}",
            mismatch.actual
        ))),
        other => other,
    }
}

fn drive(
    case: &Case,
    imp: &mut dyn Implementation,
    opts: &RunOptions,
    seq: u64,
    root: &Path,
) -> Result<Status, StepError> {
    check_copied_observables(case, &opts.fixtures)
        .map_err(|e| StepError::Fixture(e.to_string()))?;
    fixture::materialize(root, &case.tree, &opts.fixtures).map_err(StepError::Fixture)?;
    let config = crate::cases::template::wire_config(case, root, &opts.python)
        .map_err(|e| StepError::Fixture(e.to_string()))?;
    // A bounded case's requests wait the runner's bound, not the step timeout.
    imp.set_case_timeout(case.bounded.as_ref().map(|_| opts.hang_bound));
    imp.keep_answers(case.canaries.iter().any(|(_, e)| e.scanned()));
    match imp.start_case(seq, &case.id, &root.to_string_lossy(), &config) {
        Ok(()) => {}
        Err(ImplError::Broken(fault)) if fault.out_of_bounds() && case.bounded.is_some() => {
            // The runtime scans when it starts: a hang there is the one a bounded case plants.
            return Ok(Status::Fail(Failure {
                step: 1,
                line: case.line,
                label: "start (the runtime's first scan, before step 1)".into(),
                mismatches: vec![hang(case, "case_start", &fault)],
            }));
        }
        Err(e) => return Err(StepError::Impl(e)),
    }
    let result = drive_steps(case, imp, opts, root);
    match result {
        // Nothing more is sent to a broken implementation.
        Err(StepError::Impl(ImplError::Broken(_))) => result,
        Err(StepError::Judged(status)) => Ok(*status),
        result => match (result, imp.end_case()) {
            (result, Ok(())) => result,
            (Ok(_), Err(e)) => Err(StepError::Impl(e)),
            (Err(first), Err(e)) => Err(StepError::Then(Box::new(first), e)),
        },
    }
}

/// A tool offered (or answering) that the case says must not be is a removed tool only where an
/// operator's setting actively removes it: the tool allowlist, profile `hitl`'s settings, or
/// attenuation (a `select` step's ceiling, and a call while an earlier `select` of the case
/// expects a ceiling narrower than its tools). Elsewhere it follows from what the runtime loaded
/// or from a feature that is not switched off the way the case switches it off (no root, an
/// empty one: a runtime may have no such "off" state and another switch), which is judged on its
/// own: permissive (SPEC.md, `removed-tool`).
fn removal_shown(
    case: &Case,
    index: usize,
    wire: &crate::protocol::WireStep,
    m: Mismatch,
) -> Mismatch {
    use crate::protocol::WireStep;
    if m.kind != MismatchKind::Unsafe(Exposure::RemovedTool)
        || matches!(wire, WireStep::Select { .. })
    {
        return m;
    }
    let c = &case.config;
    let hitl_removes = c
        .hitl
        .as_ref()
        .is_some_and(|h| !h.enabled || !h.script_tool_allowed);
    // Attenuation in effect: an earlier `select` of the case expects a ceiling narrower than the
    // host's tools it was given (an Installed skill active, so the runtime's tools go too).
    let attenuated = matches!(wire, WireStep::Call { .. })
        && case.steps[..index.min(case.steps.len())].iter().any(|s| {
            match (&s.action, &s.expect.outcome) {
                (
                    Action::Implementation(WireStep::Select { tools, .. }),
                    Some(crate::cases::expect::OutcomeExpect::Select(e)),
                ) => e
                    .tool_ceiling
                    .as_ref()
                    .is_some_and(|c| tools.iter().any(|t| !c.contains(t))),
                _ => false,
            }
        });
    if c.tool_allowlist.is_some() || hitl_removes || attenuated {
        m
    } else {
        Mismatch {
            kind: MismatchKind::Permissive,
            ..m
        }
    }
}

/// Permissive is only for a refusal with a security purpose (SPEC.md, "How verdicts are
/// judged"): where none of the case's clauses has one (reuse within a turn, tools offered over a
/// root that loads nothing, the prompt's layout), accepting what it refuses is only different.
fn purpose_shown(case: &Case, m: Mismatch) -> Mismatch {
    if m.kind != MismatchKind::Permissive
        || case
            .clauses
            .iter()
            .any(|c| crate::cases::clauses::has_security_purpose(c))
    {
        return m;
    }
    Mismatch {
        kind: MismatchKind::Interop,
        what: format!("{} (a refusal without a security purpose)", m.what),
        ..m
    }
}

/// A request of a `bounded` case left unanswered within the runner's bounds (the hang bound, the
/// memory bound): the runtime hung on what the case plants, or grew without bound reading it.
fn hang(case: &Case, request: &str, fault: &Fault) -> Mismatch {
    // SPEC.md "How verdicts are judged" (a hang where a bounded answer is required)
    Mismatch::exposed(
        Exposure::Unbounded,
        format!(
            "an answer to `{request}` (the case plants {})",
            case.bounded.as_deref().unwrap_or("")
        ),
        "an answer in bounded time",
        fault.message(),
    )
}

/// A canary or marker of a case that nothing of it plants: a bug of the case.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PlantedNowhere {
    file: PathBuf,
    needle: String,
}

impl std::fmt::Display for PlantedNowhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: `{}` (a canary or a `files: absent` marker) is planted nowhere: no file of the tree, of a `write` step or of a copied fixture holds it",
            self.file.display(),
            self.needle
        )
    }
}

/// The canaries and markers a case plants only in `copy:` fixtures are checked here, where the
/// fixtures are (the loader checks the rest): a case whose observable is planted nowhere is a
/// bug of the case, never a verdict.
fn check_copied_observables(case: &Case, fixtures: &Path) -> Result<(), PlantedNowhere> {
    let mut trees = vec![&case.tree];
    trees.extend(case.steps.iter().filter_map(|s| match &s.action {
        Action::Write(t) => Some(t),
        _ => None,
    }));
    let mut planted = crate::cases::exposure::Planted::new(&trees, case.config.env.values());
    let args: Vec<String> = case
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::Implementation(wire) => serde_json::to_string(wire).ok(),
            _ => None,
        })
        .collect();
    let markers: Vec<(&str, Option<&str>)> = case
        .steps
        .iter()
        .filter_map(|s| s.expect.files.as_ref())
        .flat_map(|f| f.absent.iter().map(|p| (p, f.written_by.as_deref())))
        .map(|(p, why)| (p.rsplit('/').next().unwrap_or(p), why))
        .filter(|(m, _)| !args.iter().any(|a| a.contains(m)))
        .collect();
    // What the loader could not find inline, because a copied fixture might hold it.
    let deferred_tokens: Vec<&str> = case
        .canaries
        .iter()
        .map(|(t, _)| t)
        .filter(|n| planted.holds(n).is_none())
        .collect();
    let deferred_markers: Vec<(&str, Option<&str>)> = markers
        .into_iter()
        .filter(|(m, why)| planted.writes(m, *why).is_none())
        .collect();
    if deferred_tokens.is_empty() && deferred_markers.is_empty() {
        return Ok(());
    }
    // A fixture that cannot be read is reported where the case copies it (the tree, or its
    // `write` step), by `materialize`; here it only cannot hold a needle.
    let mut copied = Vec::new();
    for name in std::mem::take(&mut planted.copies) {
        match crate::input::read_regular(&fixtures.join(name), fixture::MAX_READ, "a fixture") {
            Ok(bytes) => copied.push(bytes),
            Err(_) => return Ok(()),
        }
    }
    planted.texts.extend(copied.iter().map(Vec::as_slice));
    let unplanted = deferred_tokens
        .into_iter()
        .find(|t| planted.holds(t) != Some(true))
        .or_else(|| {
            deferred_markers
                .into_iter()
                .find(|(m, why)| planted.writes(m, *why) != Some(true))
                .map(|(m, _)| m)
        });
    match unplanted {
        Some(needle) => Err(PlantedNowhere {
            file: case.file.clone(),
            needle: needle.to_owned(),
        }),
        None => Ok(()),
    }
}

/// The text of an outcome that a model is shown, searched for canaries: results, guides,
/// skip reports, tool names, the prompt (not the self-reported baseline), selections.
fn shown_text(outcome: &StepOutcome) -> String {
    match outcome {
        StepOutcome::Discover(d) => serde_json::to_string(d).unwrap_or_default(),
        StepOutcome::Tools(t) => t.offered.join("\n"),
        StepOutcome::Prompt(p) => p.text.clone(),
        StepOutcome::Call(c) => serde_json::to_string(c).unwrap_or_default(),
        StepOutcome::NewTurn => String::new(),
        StepOutcome::Select(sel) => serde_json::to_string(sel).unwrap_or_default(),
        StepOutcome::Validate(v) => serde_json::to_string(v).unwrap_or_default(),
        StepOutcome::Refused(message) => message.to_string(),
    }
}

/// Every string of an answer as it came, keys included, in document order.
fn strings_of<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|i| strings_of(i, out)),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.push(k);
                strings_of(v, out);
            }
        }
        _ => {}
    }
}

/// The scanned canaries of `case` in `outcome` (and in `raw`, the answer as it came, every key
/// the runner's own shape drops included) not reported before (each is reported once), as
/// written or disguised (SPEC.md, "What the canary scan sees").
fn canaries_seen(
    case: &Case,
    outcome: &StepOutcome,
    raw: Option<&serde_json::Value>,
    (label, scope): (&str, Option<ReadScope>),
    reported: &mut Vec<String>,
) -> Vec<Mismatch> {
    if !case.canaries.iter().any(|(_, e)| e.scanned()) {
        return Vec::new();
    }
    let shown = shown_text(outcome);
    let mut texts = vec![shown.as_str()];
    if let Some(raw) = raw {
        strings_of(raw, &mut texts);
    }
    let scan = crate::cases::scan::Scan::of(texts);
    let mut out = Vec::new();
    for (token, exposure, how) in case.canaries.seen_in(&scan) {
        if reported.iter().any(|t| t == token) {
            continue;
        }
        reported.push(token.to_owned());
        let shown = if how == crate::cases::scan::Rendering::Plain {
            excerpt(scan.plain(), token)
        } else {
            excerpt(scan.plain(), "")
        };
        let what = format!("canary `{token}`{} ({})", how.note(), exposure.meaning());
        let actual = format!("in the result of `{label}`: {shown}");
        let expected = "never shown: the case plants it only where the model must not reach";
        out.push(match scope {
            // SPEC.md "How verdicts are judged" (a read scope): inside what the runtime's reading
            // tool returns by design, the content was read, but no boundary it claims crossed.
            Some(scope) if exposure == Exposure::OutsideContent && within_scope(case, token, scope) => {
                Mismatch::permissive(
                    format!(
                        "{what}, read inside the runtime's declared read scope `{}`: no boundary it claims was crossed",
                        scope.word()
                    ),
                    expected,
                    actual,
                )
            }
            _ => Mismatch::exposed(exposure, what, expected, actual),
        });
    }
    out
}

/// Whether every file the case plants `token` in lies inside `scope` (the case root holds
/// them all; the skills root those below it). An environment value is in no read scope.
fn within_scope(case: &Case, token: &str, scope: ReadScope) -> bool {
    use crate::cases::fixture::EntryKind;
    let root: Option<Vec<u8>> = match (&case.config.skills_root, scope) {
        (_, ReadScope::Skill) => return false,
        (_, ReadScope::CaseRoot) => None,
        (crate::cases::SkillsRoot::InCase(p), ReadScope::SkillsRoot) => {
            Some(format!("{}/", p.trim_end_matches('/')).into_bytes())
        }
        (_, ReadScope::SkillsRoot) => return false,
    };
    if case.config.env.values().any(|v| v.contains(token)) {
        return false;
    }
    let mut trees = vec![&case.tree];
    trees.extend(case.steps.iter().filter_map(|s| match &s.action {
        Action::Write(t) => Some(t),
        _ => None,
    }));
    let needle = token.as_bytes();
    let planted: Vec<&Vec<u8>> = trees
        .iter()
        .flat_map(|t| &t.entries)
        .filter(|e| match &e.kind {
            EntryKind::File(bytes) | EntryKind::Tar { bytes, .. } => {
                bytes.windows(needle.len()).any(|w| w == needle)
            }
            _ => false,
        })
        .map(|e| &e.path)
        .collect();
    !planted.is_empty()
        && planted
            .iter()
            .all(|p| root.as_ref().is_none_or(|r| p.starts_with(r)))
}

/// Up to 160 bytes of `text` around the first `token`.
fn excerpt(text: &str, token: &str) -> String {
    let at = text.find(token).unwrap_or(0);
    let mut start = at.saturating_sub(60);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + token.len() + 100).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let (pre, post) = (
        if start > 0 { "…" } else { "" },
        if end < text.len() { "…" } else { "" },
    );
    format!("{pre}{}{post}", &text[start..end])
}

/// The steps of a started case. The first step with a mismatch fails the case; the steps after
/// it still run, and only what they show crossed (canaries, markers, removed tools, processes)
/// is added to the failure: a verdict rests on what the run showed, not on where it stopped.
fn drive_steps(
    case: &Case,
    imp: &mut dyn Implementation,
    opts: &RunOptions,
    root: &Path,
) -> Result<Status, StepError> {
    let mut failure: Option<Failure> = None;
    let mut reported = Vec::new();
    let mut broken = false;
    for (index, step) in case.steps.iter().enumerate() {
        let label = step.action.label();
        let mut mismatches =
            match step_mismatches(case, imp, opts, root, step, index, &mut reported) {
                Ok(m) => m,
                Err(StepError::Impl(ImplError::Broken(_))) if failure.is_some() => {
                    // Observing after the failure: the failure stands, the implementation is broken.
                    broken = true;
                    break;
                }
                Err(StepError::Impl(ImplError::Broken(fault)))
                    if fault.out_of_bounds() && case.bounded.is_some() =>
                {
                    let hang = hang(case, &label, &fault);
                    return Err(StepError::Judged(Box::new(Status::Fail(Failure {
                        step: index + 1,
                        line: step.line,
                        label,
                        mismatches: vec![hang],
                    }))));
                }
                Err(e) if failure.is_some() => {
                    // A fixture or protocol error after the failure: the failure stands.
                    drop(e);
                    break;
                }
                Err(e) => return Err(e),
            };
        match &mut failure {
            None if !mismatches.is_empty() => {
                failure = Some(Failure {
                    step: index + 1,
                    line: step.line,
                    label,
                    mismatches,
                })
            }
            None => {}
            Some(f) => {
                // What a later step shows counts where it does not depend on the state the
                // failure left: a tool ceiling does (it follows the skills then active).
                let state_bound = matches!(
                    &step.action,
                    Action::Implementation(crate::protocol::WireStep::Select { .. })
                );
                mismatches.retain(|m| matches!(m.kind, MismatchKind::Unsafe(_)) && !state_bound);
                f.mismatches
                    .extend(mismatches.into_iter().map(|m| Mismatch {
                        what: format!("later, step {} (`{label}`): {}", index + 1, m.what),
                        ..m
                    }));
            }
        }
    }
    let status = failure.map_or(Status::Pass, Status::Fail);
    if broken {
        return Err(StepError::Judged(Box::new(status)));
    }
    Ok(status)
}

/// One step: performed, then compared with its expectation, and searched for canaries.
fn step_mismatches(
    case: &Case,
    imp: &mut dyn Implementation,
    opts: &RunOptions,
    root: &Path,
    step: &crate::cases::Step,
    index: usize,
    reported: &mut Vec<String>,
) -> Result<Vec<Mismatch>, StepError> {
    let mut mismatches = Vec::new();
    let planted = step
        .expect
        .files
        .as_ref()
        .map_or_else(Vec::new, |f| planted_by_case(case, &f.absent));
    match &step.action {
        Action::Implementation(wire) => {
            let outcome = imp.step(index, wire).map_err(StepError::Impl)?;
            if let Some(expect) = &step.expect.outcome {
                let skip_report = imp.info().features.contains(&Feature::SkipReport);
                let expect = expect
                    .with_root(&root.to_string_lossy())
                    .with_native_names(&imp.info().tool_names);
                let judged = check_outcome(&expect, wire, &outcome, skip_report);
                mismatches.extend(
                    judged
                        .into_iter()
                        .map(|m| removal_shown(case, index, wire, m))
                        .map(|m| purpose_shown(case, m)),
                );
            }
            // SPEC.md "How verdicts are judged" (a canary seen is a crossing, whatever was expected)
            // A read's result is judged against what the runtime's reading tool returns by design.
            let scope = matches!(wire, crate::protocol::WireStep::Call { tool, .. } if tool == "skill_read_reference")
                .then_some(imp.info().read_scope);
            mismatches.extend(canaries_seen(
                case,
                &outcome,
                imp.last_answer(),
                (&step.action.label(), scope),
                reported,
            ));
        }
        Action::Write(tree) => {
            fixture::materialize(root, tree, &opts.fixtures).map_err(StepError::Fixture)?
        }
        Action::Remove(paths) => fixture::remove(root, paths).map_err(StepError::Fixture)?,
        Action::Wait(ms) => std::thread::sleep(Duration::from_millis(*ms)),
    }
    if let Some(files) = &step.expect.files {
        // When the step's call failed only because its tool is missing, a file it should
        // have made is missing for that reason too (a file that must be absent is not
        // explained by it).
        let missing = match mismatches.first() {
            Some(first) if mismatches.iter().all(|m| m.missing_tool.is_some()) => {
                first.missing_tool.clone()
            }
            _ => None,
        };
        mismatches.extend(check_files(root, files, &planted).into_iter().map(|m| {
            match (&missing, m.kind) {
                (Some(tool), MismatchKind::Interop) => Mismatch {
                    missing_tool: Some(tool.clone()),
                    ..m
                },
                _ => m,
            }
        }));
    }
    Ok(mismatches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_must_be_absent_is_safety_one_that_must_exist_interop() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker"), b"ran").unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("link")).unwrap();
        let expect = crate::cases::expect::FilesExpect {
            exists: vec!["made".into(), "marker".into()],
            absent: vec!["marker".into(), "link/passwd".into(), "made".into()],
            written_by: None,
        };
        let got: Vec<(String, MismatchKind)> =
            check_files(dir.path(), &expect, &[false, false, false])
                .into_iter()
                .map(|m| (m.what, m.kind))
                .collect();
        assert_eq!(
            got,
            [
                ("file `made`".to_owned(), MismatchKind::Interop),
                (
                    "file `marker` (the marker of code that must not run)".to_owned(),
                    MismatchKind::Unsafe(Exposure::CodeRan)
                ),
                // Checked only through a link: something stands where nothing may, but nothing
                // shows that it ran.
                ("file `link/passwd`".to_owned(), MismatchKind::Permissive),
            ]
        );
    }

    #[test]
    fn a_file_the_case_planted_is_no_marker() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("installed")).unwrap();
        let expect = crate::cases::expect::FilesExpect {
            exists: vec![],
            absent: vec!["installed".into()],
            written_by: None,
        };
        let kinds = |planted: &[bool]| -> Vec<MismatchKind> {
            check_files(dir.path(), &expect, planted)
                .into_iter()
                .map(|m| m.kind)
                .collect()
        };
        // The case planted it (a skill that should have been removed): different.
        assert_eq!(kinds(&[true]), [MismatchKind::Interop]);
        // Anything else that appears, whenever, was written by code that must not run.
        assert_eq!(kinds(&[false]), [MismatchKind::Unsafe(Exposure::CodeRan)]);
        let text = "id: t.p\nsummary: s.\nclauses: [discovery.portable]\ntree:\n  installed/notes/SKILL.md: \"x\\n\"\nsteps:\n  - discover:\n    expect: {loaded: []}\n  - write: {later/file: \"y\\n\"}\n";
        let case = crate::cases::parse_case(Path::new("t.yaml"), Some("t"), text).unwrap();
        let paths = [
            "installed/notes",
            "installed/not",
            "later/file",
            "child-late",
        ]
        .map(String::from);
        assert_eq!(planted_by_case(&case, &paths), [true, false, true, false]);
    }

    #[test]
    fn a_tool_is_removed_only_where_the_case_removes_it() {
        use crate::protocol::WireStep;
        let case = |config: &str| {
            let text = format!("id: t.r\nsummary: s.\nclauses: [tools.registration]\n{config}steps:\n  - tools:\n    expect: {{offered: []}}\n");
            crate::cases::parse_case(Path::new("t.yaml"), Some("t"), &text).unwrap()
        };
        let offered = || {
            Mismatch::exposed(
                Exposure::RemovedTool,
                "tool `skill_read_reference`",
                "not offered",
                "offered",
            )
        };
        let kind = |c: &Case, wire: &WireStep| removal_shown(c, 0, wire, offered()).kind;
        let removed = MismatchKind::Unsafe(Exposure::RemovedTool);
        // The operator's allowlist removed the tool, and it is there.
        let allow = "requires: [tool-allowlist]\nconfig: {tool_allowlist: []}\n";
        assert_eq!(kind(&case(allow), &WireStep::Tools), removed);
        // The feature off by no root or an empty one is no operator's removal: a runtime may
        // have no such "off" state (SPEC.md, `removed-tool`).
        for config in [
            "config: {skills_root: null}\n",
            "config: {skills_root_as_written: \"\"}\n",
            "config: {skills_root_as_written: \"{root_relative}/skills\"}\n",
            "config: {skills_root_as_written: \"{root}/skills\"}\n",
        ] {
            assert_eq!(
                kind(&case(config), &WireStep::Tools),
                MismatchKind::Permissive,
                "{config}"
            );
        }
        // A root whose skills should not have loaded: the offer follows from the loading.
        assert_eq!(kind(&case(""), &WireStep::Tools), MismatchKind::Permissive);
        // Attenuation (a select step's ceiling) is a removal wherever it happens.
        let select = WireStep::Select {
            message: "m".into(),
            tools: vec![],
        };
        assert_eq!(kind(&case(""), &select), removed);
        // A call of a tool an earlier select removed from the ceiling (attenuation).
        let attenuation = "id: t.a\nsummary: s.\nclauses: [trust.attenuation]\nrequires: [selection, trust]\nconfig:\n  skill_dirs: {installed: installed}\nsteps:\n  - select: {message: notes, tools: [skill_remove]}\n    expect: {tool_ceiling: []}\n  - call: {tool: skill_remove, args: {name: notes}}\n    expect: {error: unknown_tool}\n";
        let attenuated =
            crate::cases::parse_case(Path::new("t.yaml"), Some("t"), attenuation).unwrap();
        let call = |tool: &str| WireStep::Call {
            tool: tool.into(),
            args: serde_json::json!({}),
        };
        assert_eq!(
            removal_shown(&attenuated, 1, &call("skill_remove"), offered()).kind,
            removed
        );
        // Before the select, nothing is attenuated.
        assert_eq!(
            removal_shown(&attenuated, 0, &call("skill_remove"), offered()).kind,
            MismatchKind::Permissive
        );
        // Other kinds pass through.
        let other = Mismatch::permissive("call outcome", "error", "success");
        assert_eq!(
            removal_shown(&case(""), 0, &WireStep::Tools, other).kind,
            MismatchKind::Permissive
        );
    }

    #[test]
    fn a_failure_is_as_bad_as_its_worst_mismatch() {
        let interop = Mismatch::interop("error code", "invalid_path", "not_found");
        let missing = Mismatch {
            missing_tool: Some("skill_run_script".into()),
            ..Mismatch::interop("call outcome", "success", "unknown_tool")
        };
        let failure = |mismatches: Vec<Mismatch>| Failure {
            step: 1,
            line: 1,
            label: "call".into(),
            mismatches,
        };
        let different = failure(vec![interop.clone(), missing.clone()]);
        assert_eq!(different.kind(), FailureKind::Different);
        // Not every mismatch is explained by the missing tool.
        assert!(different.missing_tools().is_empty());
        let not_there = failure(vec![missing.clone(), missing.clone()]);
        assert_eq!(not_there.missing_tools(), ["skill_run_script"]);
        let loose = failure(vec![
            missing.clone(),
            Mismatch::permissive("call outcome", "error invalid_path", "success"),
        ]);
        assert_eq!(loose.kind(), FailureKind::Permissive);
        assert!(loose.exposures().is_empty());
        let leaked = failure(vec![
            missing,
            Mismatch::permissive("call outcome", "error invalid_path", "success"),
            Mismatch::exposed(Exposure::CodeRan, "file `marker`", "absent", "exists"),
        ]);
        assert_eq!(leaked.kind(), FailureKind::Unsafe);
        assert_eq!(leaked.exposures(), [Exposure::CodeRan]);
        assert!(leaked.missing_tools().is_empty());
    }
}
