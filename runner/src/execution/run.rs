//! The one loop that runs a suite: [`run_suite`]. `skillspec run`, `skillspec smoke`, the
//! `mutants` workers and the repository's conformance test all call it.
//!
//! It starts the implementation ([`Factory`]), runs the cases in order ([`super::run_case`]),
//! tells an [`Observer`] what happens (started, each case started and finished, a restart after
//! a breakage, a failure that did not reproduce), and owns the policies every caller shares ([`Policy`]): a failure run
//! again before it counts, the stop after too many failures, and the stop when a broken adapter
//! keeps breaking after its restarts (an adapter starts a fresh process at the next case by
//! itself; here the futile restarts are counted). When a run stops early, its remaining cases are
//! NOT RUN, and [`SuiteOutcome::stopped`] says why; an implementation that never started leaves
//! every case NOT RUN. The outcomes come back in the order of the cases given.
//!
//! Cases are independent (each gets a fresh runtime over a fresh root), so this loop is also the
//! one a parallel run (`run --jobs N`) would split: a factory per worker, whole cases handed to
//! each, outcomes reported in suite order.
//!
//! Clauses: SPEC.md "How verdicts are judged" (NOT RUN, a broken implementation).

use std::time::Duration;

use crate::cases::Case;
use crate::execution::{run_case, CaseOutcome, RunOptions, Status};
use crate::implementations::{ImplError, Implementation};
use crate::protocol::fault::Fault;
use crate::protocol::ImplInfo;

/// Restarts of a broken adapter that may achieve nothing in a row (the restarted adapter broke
/// again before completing a case) before `run` stops.
pub const MAX_FUTILE_RESTARTS: usize = 3;

/// Where a run's implementation comes from.
pub trait Factory {
    /// A started implementation (an adapter after its handshake).
    fn start(&mut self) -> Result<Box<dyn Implementation>, ImplError>;
}

impl<F> Factory for F
where
    F: FnMut() -> Result<Box<dyn Implementation>, ImplError>,
{
    fn start(&mut self) -> Result<Box<dyn Implementation>, ImplError> {
        self()
    }
}

/// What a caller is told while the suite runs. Every method has a default that does nothing.
pub trait Observer {
    /// The implementation started; cases follow.
    fn started(&mut self, _info: &ImplInfo) {}
    /// Case `position` (0-based, in the order given) is about to run.
    fn case_started(&mut self, _position: usize, _case: &Case) {}
    /// Case `position` is about to run while the implementation is broken (it broke in an
    /// earlier case and has not completed one since): if the case is sent, the implementation
    /// starts again for it (an adapter spawns a fresh process and repeats the handshake).
    fn restarting(&mut self, _position: usize, _case: &Case) {}
    /// Case `position` failed once and passed when run again ([`Policy::retry_failures`]).
    fn case_flaky(&mut self, _position: usize, _case: &Case) {}
    /// Case `position` ended.
    fn case_finished(&mut self, _position: usize, _case: &Case, _outcome: &CaseOutcome) {}
    /// Asked after each case that is not the last: `Some(reason)` stops the run (the remaining
    /// cases are NOT RUN, and the reason is [`Stopped::reason`]).
    fn stop(&mut self) -> Option<String> {
        None
    }
}

/// The observer that wants to know nothing.
impl Observer for () {}

/// How a run goes on when cases fail or break the implementation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy {
    /// Stop when this many cases in a row broke the implementation after the first breakage
    /// (each broken case is followed by a restart); `None`: never.
    pub futile_restarts: Option<usize>,
    /// A failed or errored case runs again and counts only when it fails again; one that passes
    /// the second time is SKIPPED as `flaky` (a timing case can fail once on a loaded machine).
    pub retry_failures: bool,
    /// Stop after this many failed or errored cases (0: never).
    pub stop_after_failures: usize,
}

/// Why a run stopped early (its remaining cases are NOT RUN).
#[derive(Debug, Clone)]
pub struct Stopped {
    /// In plain words.
    pub reason: String,
    /// The breakage that stopped it, when it is not one of the cases' (the adapter never
    /// started).
    pub fault: Option<Fault>,
}

/// The end of a run.
#[derive(Debug)]
pub struct SuiteOutcome {
    /// The implementation, as it introduced itself (the default when it never started).
    pub info: ImplInfo,
    /// One outcome per case, in the order the cases were given.
    pub results: Vec<CaseOutcome>,
    /// Why the run stopped before its last case, if it did.
    pub stopped: Option<Stopped>,
    /// The implementation never started: why.
    pub not_started: Option<ImplError>,
}

/// The outcome of a case the run did not reach.
pub fn not_run() -> CaseOutcome {
    CaseOutcome {
        status: Status::NotRun,
        duration: Duration::ZERO,
    }
}

/// Runs `cases` in order against the implementation `factory` starts. Case `i` is sent with
/// `seq` i + 1. The implementation is finished (an adapter stopped the documented way) before
/// this returns.
pub fn run_suite(
    cases: &[&Case],
    factory: &mut dyn Factory,
    opts: &RunOptions,
    policy: &Policy,
    observer: &mut dyn Observer,
) -> SuiteOutcome {
    let mut imp = match factory.start() {
        Ok(imp) => imp,
        Err(e) => {
            return SuiteOutcome {
                info: ImplInfo::default(),
                results: cases.iter().map(|_| not_run()).collect(),
                stopped: Some(Stopped {
                    reason: "the adapter could not start, so no case was run".into(),
                    fault: Some(e.clone().into_fault()),
                }),
                not_started: Some(e),
            };
        }
    };
    let info = imp.info().clone();
    observer.started(&info);
    let mut results = Vec::with_capacity(cases.len());
    // Cases in a row that broke the adapter: the first breakage, then each futile restart.
    let mut broken_in_a_row = 0;
    let mut failures = 0;
    let mut stopped = None;
    for (i, case) in cases.iter().enumerate() {
        if stopped.is_some() {
            results.push(not_run());
            continue;
        }
        if broken_in_a_row > 0 {
            observer.restarting(i, case);
        }
        observer.case_started(i, case);
        let outcome = run_one(case, imp.as_mut(), opts, i as u64 + 1, policy, || {
            observer.case_flaky(i, case)
        });
        if outcome.status.is_broken() {
            broken_in_a_row += 1;
        } else if outcome.status.was_sent() {
            broken_in_a_row = 0;
        }
        failures += usize::from(matches!(
            outcome.status,
            Status::Fail(_) | Status::Error { .. }
        ));
        observer.case_finished(i, case, &outcome);
        results.push(outcome);
        let left = cases.len() - i - 1;
        if left == 0 {
            continue;
        }
        stopped = if policy
            .futile_restarts
            .is_some_and(|max| broken_in_a_row > max)
        {
            Some(Stopped {
                reason: format!(
                    "the adapter broke in {broken_in_a_row} cases in a row: it was restarted {} times and broke again each time before completing a case, so the run stopped; the remaining {left} case(s) were not run",
                    broken_in_a_row - 1,
                ),
                fault: None,
            })
        } else if policy.stop_after_failures > 0 && failures >= policy.stop_after_failures {
            Some(Stopped {
                reason: format!(
                    "{failures} case(s) failed, the most this run goes on after; the remaining {left} case(s) were not run"
                ),
                fault: None,
            })
        } else {
            observer.stop().map(|reason| Stopped {
                reason,
                fault: None,
            })
        };
    }
    // Stop the adapter (stop, SIGTERM, SIGKILL) before reporting.
    imp.finish();
    drop(imp);
    SuiteOutcome {
        info,
        results,
        stopped,
        not_started: None,
    }
}

/// One case, run again when it failed and the policy says so.
fn run_one(
    case: &Case,
    imp: &mut dyn Implementation,
    opts: &RunOptions,
    seq: u64,
    policy: &Policy,
    flaky: impl FnOnce(),
) -> CaseOutcome {
    let mut outcome = run_case(case, imp, opts, seq);
    // A failure must reproduce to count: on a loaded machine a timing case can fail once.
    if policy.retry_failures && matches!(outcome.status, Status::Fail(_) | Status::Error { .. }) {
        let again = run_case(case, imp, opts, seq);
        if again.status == Status::Pass {
            outcome.status = Status::Skipped("flaky".into());
            flaky();
        }
    }
    outcome
}
