//! The one loop that runs a suite: [`run_suite`]. `skillspec run`, `skillspec smoke`, the
//! `mutants` workers and the repository's conformance test all call it.
//!
//! It starts the implementation ([`Factory`]), runs the cases ([`super::run_case`]) on
//! [`Policy::jobs`] workers, tells an [`Observer`] what happens (started, each case started and
//! finished, a restart after a breakage, a failure that did not reproduce, a worker whose
//! implementation would not start), and owns the policies every caller shares ([`Policy`]): a
//! failure run again before it counts, the stop after too many failures, and the stop when a
//! broken adapter keeps breaking after its restarts (an adapter starts a fresh process at the next
//! case by itself; here the futile restarts are counted). When a run stops early, the cases not
//! yet started are NOT RUN, and [`SuiteOutcome::stopped`] says why; an implementation that never
//! started leaves every case NOT RUN. The outcomes come back in the order of the cases given.
//!
//! Side by side (`run --jobs N`): cases are independent (each gets a fresh runtime over a fresh
//! root), so each worker is a thread with an implementation of its own (in-process: a reference;
//! with `--adapter`: an adapter process), taking whole cases from one queue ([`Queue`]). Worker 0
//! starts first; the others start once its handshake says the implementation may run twice at
//! once ([`ImplInfo::runs_side_by_side`]). The cases that may hold a worker long start first
//! ([`Case::may_take_long`]), cases of one `exclusive:` name run one at a time
//! ([`Case::exclusive_with`]), and a case that runs alone ([`Case::runs_alone`]) runs with no
//! other case beside it, after the others (spec-cases/README.md, "Cases that measure time"). The
//! observer hears of cases as they start and end; the stop policies are decided in suite order,
//! so `--jobs 1` and `--jobs N` stop at the same case and report the same: a case after it is NOT
//! RUN even where another worker had already started it. With one worker, the cases run in the
//! order given, exactly as a serial loop would.
//!
//! Clauses: SPEC.md "How verdicts are judged" (NOT RUN, a broken implementation).

use std::sync::mpsc;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::cases::Case;
use crate::execution::{run_case, CaseOutcome, RunOptions, Status};
use crate::implementations::{ImplError, Implementation};
use crate::protocol::fault::Fault;
use crate::protocol::ImplInfo;

/// Restarts of a broken adapter that may achieve nothing in a row (the restarted adapter broke
/// again before completing a case) before `run` stops.
pub const MAX_FUTILE_RESTARTS: usize = 3;

/// Where a run's implementations come from: one per worker, each started on its worker's own
/// thread and used there only.
pub trait Factory: Sync {
    /// A started implementation for worker `worker` (0-based; an adapter after its handshake).
    fn start(&self, worker: usize) -> Result<Box<dyn Implementation>, ImplError>;
}

impl<F> Factory for F
where
    F: Fn(usize) -> Result<Box<dyn Implementation>, ImplError> + Sync,
{
    fn start(&self, worker: usize) -> Result<Box<dyn Implementation>, ImplError> {
        self(worker)
    }
}

/// What a caller is told while the suite runs, on the caller's own thread. Every method has a
/// default that does nothing. With several workers, cases start and end in any order; each call
/// names the case's position in the order given.
pub trait Observer {
    /// The implementation started (worker 0's handshake); cases follow on `workers` workers.
    fn started(&mut self, _info: &ImplInfo, _workers: usize) {}
    /// Case `position` (0-based, in the order given) is about to run.
    fn case_started(&mut self, _position: usize, _case: &Case) {}
    /// Case `position` is about to run on a worker whose implementation is broken (it broke in
    /// that worker's previous case): if the case is sent, the implementation starts again for it
    /// (an adapter spawns a fresh process and repeats the handshake).
    fn restarting(&mut self, _position: usize, _case: &Case) {}
    /// Case `position` failed once and passed when run again ([`Policy::retry_failures`]).
    fn case_flaky(&mut self, _position: usize, _case: &Case) {}
    /// Case `position` ended.
    fn case_finished(&mut self, _position: usize, _case: &Case, _outcome: &CaseOutcome) {}
    /// Worker `worker` (not the first) could not start its implementation: the other workers
    /// run its share of the cases.
    fn worker_lost(&mut self, _worker: usize, _error: &ImplError) {}
    /// Asked after each case that is not the last, in the order given: `Some(reason)` stops the
    /// run (the cases not started yet are NOT RUN, and the reason is [`Stopped::reason`]).
    fn stop(&mut self) -> Option<String> {
        None
    }
}

/// The observer that wants to know nothing.
impl Observer for () {}

/// How a run is spread over workers, and how it goes on when cases fail or break the
/// implementation.
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
    /// Workers running cases side by side (`run --jobs N`); 0 and 1 both mean one.
    pub jobs: usize,
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
    /// The workers that ran cases.
    pub workers: usize,
}

/// The outcome of a case the run did not reach.
pub fn not_run() -> CaseOutcome {
    CaseOutcome {
        status: Status::NotRun,
        duration: Duration::ZERO,
    }
}

/// What a worker tells the caller's thread.
enum Event {
    /// Worker 0's implementation started.
    Started(ImplInfo),
    /// Worker 0's implementation could not start: nothing runs.
    NotStarted(ImplError),
    /// A later worker's implementation could not start.
    Lost(usize, ImplError),
    Restarting(usize),
    Begun(usize),
    Flaky(usize),
    Done(usize, CaseOutcome),
}

/// The cases waiting for a worker. With one worker: in the order given. With several: first the
/// cases that may hold a worker long ([`Case::may_take_long`]: `exclusive:`, then `bounded:`), so
/// that their waits overlap the rest of the run instead of ending it; then the others; then the
/// cases that run alone. Each group keeps the order given. A worker takes the first waiting case
/// that may start now: a case that runs alone only when no case runs, and no case while it runs;
/// an `exclusive:` case only when no case of its name runs. When no case runs, the first waiting
/// case may always start, so the queue never stalls.
struct Queue {
    /// The `exclusive:` names, by group.
    names: Vec<String>,
    state: Mutex<QueueState>,
    wake: Condvar,
}

/// How long a worker waits before it asks again for a group's lock another process holds.
const LOCK_POLL: Duration = Duration::from_millis(250);

/// The lock of an `exclusive:` name across processes: every `skillspec run` on the machine
/// (the adapters of `.ci/adapters` run side by side, each a run of its own) holds it before it
/// starts a case of that name, so that, for instance, two runtimes never read a 4 GiB file whole
/// at once. On Linux it is a Unix socket bound to the abstract name
/// `skillspec-exclusive-NAME`: the bind fails while another process holds the name, and the
/// kernel releases it when the socket closes, also when a run is killed; nothing is left in the
/// file system. Elsewhere, and where the socket cannot be made, the name is held in this process
/// alone.
struct GroupLock {
    /// Held open while the case runs: closing it releases the name.
    _socket: Option<std::os::unix::net::UnixListener>,
}

/// The environment variable that narrows the `exclusive:` locks to the processes that share its
/// value: `skillspec mutants` gives its workers one of their own, so that a mutant's run of the
/// reference (bounded by its own rules) never waits, and is never judged hung, while a real
/// runtime's run elsewhere on the machine holds a name for minutes.
pub const EXCLUSIVE_SCOPE_VAR: &str = "SKILLSPEC_EXCLUSIVE_SCOPE";

impl GroupLock {
    /// Takes the name, in this process's scope ([`EXCLUSIVE_SCOPE_VAR`]), if no other process
    /// holds it: `None` while one does.
    fn try_take(name: &str) -> Option<GroupLock> {
        let scope = std::env::var(EXCLUSIVE_SCOPE_VAR).unwrap_or_default();
        GroupLock::try_take_in(&scope, name)
    }

    /// Takes the name within `scope` (empty: the whole machine).
    fn try_take_in(scope: &str, name: &str) -> Option<GroupLock> {
        #[cfg(target_os = "linux")]
        {
            use std::os::linux::net::SocketAddrExt;
            use std::os::unix::net::{SocketAddr, UnixListener};
            let lock = if scope.is_empty() {
                format!("skillspec-exclusive-{name}")
            } else {
                format!("skillspec-exclusive-{scope}-{name}")
            };
            let Ok(addr) = SocketAddr::from_abstract_name(lock) else {
                return Some(GroupLock { _socket: None });
            };
            match UnixListener::bind_addr(&addr) {
                Ok(socket) => Some(GroupLock {
                    _socket: Some(socket),
                }),
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => None,
                Err(_) => Some(GroupLock { _socket: None }),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (scope, name);
            Some(GroupLock { _socket: None })
        }
    }
}

/// How one case shares the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sharing {
    /// Beside any case but one that runs alone.
    Beside,
    /// Beside any case but one that runs alone or one of the same group.
    Exclusive(usize),
    /// Beside no case.
    Alone,
}

#[derive(Default)]
struct QueueState {
    /// How each case shares the machine, by position.
    sharing: Vec<Sharing>,
    /// The cases not handed out yet, in the order they are handed out.
    waiting: Vec<usize>,
    /// Cases handed out and not finished.
    running: usize,
    /// One of them runs alone.
    alone_running: bool,
    /// The `exclusive:` groups with a case running, each with its lock across processes.
    held: Vec<Option<GroupLock>>,
    /// A waiting case's group is held by another process: ask again after [`LOCK_POLL`].
    polling: bool,
    /// The run stopped: nothing more is handed out.
    closed: bool,
}

impl Queue {
    fn new(cases: &[&Case], workers: usize) -> Queue {
        let mut groups: Vec<&str> = Vec::new();
        let sharing: Vec<Sharing> = cases
            .iter()
            .map(|c| {
                if c.runs_alone() {
                    Sharing::Alone
                } else if let Some(name) = c.exclusive_with() {
                    let group = groups.iter().position(|g| *g == name).unwrap_or_else(|| {
                        groups.push(name);
                        groups.len() - 1
                    });
                    Sharing::Exclusive(group)
                } else {
                    Sharing::Beside
                }
            })
            .collect();
        let mut waiting: Vec<usize> = (0..cases.len()).collect();
        if workers > 1 {
            // Stable, so each group keeps the order given.
            waiting.sort_by_key(|&i| match sharing[i] {
                Sharing::Exclusive(_) => 0,
                Sharing::Beside if cases[i].may_take_long() => 1,
                Sharing::Beside => 2,
                Sharing::Alone => 3,
            });
        }
        Queue {
            state: Mutex::new(QueueState {
                sharing,
                waiting,
                held: groups.iter().map(|_| None).collect(),
                ..QueueState::default()
            }),
            names: groups.into_iter().map(str::to_owned).collect(),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next case for a worker, waiting while no waiting case may start beside the ones
    /// running; `None` when there is none left or the run stopped.
    fn take(&self) -> Option<usize> {
        let mut state = self.lock();
        loop {
            if state.closed || state.waiting.is_empty() {
                return None;
            }
            if let Some(position) = self.pick(&mut state) {
                return Some(position);
            }
            state = if state.polling {
                // Another process holds a lock a waiting case needs: its release wakes nobody
                // here, so ask again shortly.
                self.wake
                    .wait_timeout(state, LOCK_POLL)
                    .map(|(s, _)| s)
                    .unwrap_or_else(|p| p.into_inner().0)
            } else {
                self.wake.wait(state).unwrap_or_else(|p| p.into_inner())
            };
        }
    }

    /// Hands out the first waiting case that may start beside the ones running, if any.
    fn pick(&self, state: &mut QueueState) -> Option<usize> {
        state.polling = false;
        let mut lock = None;
        let mut at = None;
        for (i, &p) in state.waiting.iter().enumerate() {
            let ready = match state.sharing[p] {
                Sharing::Alone => state.running == 0,
                Sharing::Exclusive(group)
                    if !state.alone_running && state.held[group].is_none() =>
                {
                    lock = GroupLock::try_take(&self.names[group]);
                    state.polling |= lock.is_none();
                    lock.is_some()
                }
                Sharing::Exclusive(_) => false,
                Sharing::Beside => !state.alone_running,
            };
            if ready {
                at = Some(i);
                break;
            }
        }
        let position = state.waiting.remove(at?);
        state.running += 1;
        match state.sharing[position] {
            Sharing::Alone => state.alone_running = true,
            Sharing::Exclusive(group) => state.held[group] = lock,
            Sharing::Beside => {}
        }
        Some(position)
    }

    /// Case `position`, handed out, has ended.
    fn done(&self, position: usize) {
        let mut state = self.lock();
        state.running -= 1;
        match state.sharing[position] {
            Sharing::Alone => state.alone_running = false,
            // Dropping the lock closes its file, which releases it for other processes.
            Sharing::Exclusive(group) => state.held[group] = None,
            Sharing::Beside => {}
        }
        self.wake.notify_all();
    }

    /// The implementation will send none of the cases `unsent` names (a need of theirs is
    /// unmet: UNSUPPORTED): they take no `exclusive:` name, so a run that only reports them never
    /// waits for another process's hold on it. Called before any case is handed out.
    fn share_unsent(&self, unsent: impl Fn(usize) -> bool) {
        let mut state = self.lock();
        for (i, s) in state.sharing.iter_mut().enumerate() {
            if matches!(s, Sharing::Exclusive(_)) && unsent(i) {
                *s = Sharing::Beside;
            }
        }
    }

    /// Nothing more is handed out.
    fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_all();
    }
}

/// The run's account in the order of the cases: outcomes as they arrive, and the stop policies
/// applied to the longest prefix that has ended.
struct InOrder {
    results: Vec<Option<CaseOutcome>>,
    /// Every case before this one has ended and was weighed.
    cursor: usize,
    /// Cases in a row that broke the adapter: the first breakage, then each futile restart.
    broken_in_a_row: usize,
    failures: usize,
    stopped: Option<Stopped>,
}

impl InOrder {
    /// Weighs the cases that have ended in order since the last call; returns whether the run
    /// stops now.
    fn advance(&mut self, policy: &Policy, observer: &mut dyn Observer) -> bool {
        let total = self.results.len();
        while self.stopped.is_none() && self.cursor < total {
            let Some(outcome) = &self.results[self.cursor] else {
                return false;
            };
            if outcome.status.is_broken() {
                self.broken_in_a_row += 1;
            } else if outcome.status.was_sent() {
                self.broken_in_a_row = 0;
            }
            self.failures += usize::from(matches!(
                outcome.status,
                Status::Fail(_) | Status::Error { .. }
            ));
            self.cursor += 1;
            let left = total - self.cursor;
            if left == 0 {
                break;
            }
            self.stopped = self.stop_now(left, policy, observer);
            if self.stopped.is_some() {
                return true;
            }
        }
        false
    }

    fn stop_now(
        &self,
        left: usize,
        policy: &Policy,
        observer: &mut dyn Observer,
    ) -> Option<Stopped> {
        let broken = self.broken_in_a_row;
        let failures = self.failures;
        if policy.futile_restarts.is_some_and(|max| broken > max) {
            Some(Stopped {
                reason: format!(
                    "the adapter broke in {broken} cases in a row: it was restarted {} times and broke again each time before completing a case, so the run stopped; the remaining {left} case(s) were not run",
                    broken - 1,
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
        }
    }
}

/// Runs `cases` against the implementations `factory` starts, on [`Policy::jobs`] workers.
/// Case `i` is sent with `seq` i + 1. Every implementation is finished (an adapter stopped the
/// documented way) before this returns.
pub fn run_suite(
    cases: &[&Case],
    factory: &dyn Factory,
    opts: &RunOptions,
    policy: &Policy,
    observer: &mut dyn Observer,
) -> SuiteOutcome {
    let jobs = policy.jobs.clamp(1, cases.len().max(1));
    let queue = Queue::new(cases, jobs);
    let mut account = InOrder {
        results: cases.iter().map(|_| None).collect(),
        cursor: 0,
        broken_in_a_row: 0,
        failures: 0,
        stopped: None,
    };
    let mut info = None;
    let mut not_started = None;
    let mut workers = 0;
    let (tx, rx) = mpsc::channel::<Event>();
    std::thread::scope(|scope| {
        let spawn = |worker: usize, tx: mpsc::Sender<Event>| {
            let queue = &queue;
            scope.spawn(move || work(worker, factory, queue, cases, opts, policy, &tx));
        };
        spawn(0, tx.clone());
        workers = 1;
        // Dropped once the others are spawned, so that the loop below ends with the last worker.
        let mut tx = Some(tx);
        for event in &rx {
            match event {
                Event::Started(i) => {
                    if i.runs_side_by_side() {
                        workers = jobs;
                    }
                    observer.started(&i, workers);
                    if let Some(tx) = tx.take() {
                        for worker in 1..workers {
                            spawn(worker, tx.clone());
                        }
                    }
                    info = Some(i);
                }
                Event::NotStarted(e) => {
                    tx = None;
                    not_started = Some(e);
                }
                Event::Lost(worker, e) => observer.worker_lost(worker, &e),
                Event::Restarting(i) => observer.restarting(i, cases[i]),
                Event::Begun(i) => observer.case_started(i, cases[i]),
                Event::Flaky(i) => observer.case_flaky(i, cases[i]),
                Event::Done(i, outcome) => {
                    observer.case_finished(i, cases[i], &outcome);
                    account.results[i] = Some(outcome);
                    if account.advance(policy, observer) {
                        queue.close();
                    }
                }
            }
        }
    });
    if let Some(e) = not_started {
        return SuiteOutcome {
            info: ImplInfo::default(),
            results: cases.iter().map(|_| not_run()).collect(),
            stopped: Some(Stopped {
                reason: "the adapter could not start, so no case was run".into(),
                fault: Some(e.clone().into_fault()),
            }),
            not_started: Some(e),
            workers: 0,
        };
    }
    // A stopped run reports what `--jobs 1` would: the cases after the one it stopped at are
    // NOT RUN, even where another worker had already started them.
    let weighed = if account.stopped.is_some() {
        account.cursor
    } else {
        cases.len()
    };
    SuiteOutcome {
        info: info.unwrap_or_default(),
        results: account
            .results
            .into_iter()
            .enumerate()
            .map(|(i, o)| o.filter(|_| i < weighed).unwrap_or_else(not_run))
            .collect(),
        stopped: account.stopped,
        not_started: None,
        workers,
    }
}

/// One worker: its own implementation, whole cases from the queue until none is left, then the
/// implementation finished (an adapter stopped the documented way).
fn work(
    worker: usize,
    factory: &dyn Factory,
    queue: &Queue,
    cases: &[&Case],
    opts: &RunOptions,
    policy: &Policy,
    tx: &mpsc::Sender<Event>,
) {
    // A send fails only when the caller's thread is gone, which `thread::scope` rules out.
    let mut imp = match factory.start(worker) {
        Ok(imp) => imp,
        Err(e) => {
            if worker == 0 {
                queue.close();
                let _ = tx.send(Event::NotStarted(e));
            } else {
                let _ = tx.send(Event::Lost(worker, e));
            }
            return;
        }
    };
    if worker == 0 {
        let info = imp.info();
        queue.share_unsent(|i| {
            !super::unmet_needs(cases[i], info, &opts.for_information).is_empty()
        });
        let _ = tx.send(Event::Started(info.clone()));
    }
    let mut broken = false;
    while let Some(i) = queue.take() {
        if broken {
            let _ = tx.send(Event::Restarting(i));
        }
        let _ = tx.send(Event::Begun(i));
        let outcome = run_one(cases[i], imp.as_mut(), opts, i as u64 + 1, policy, || {
            let _ = tx.send(Event::Flaky(i));
        });
        if outcome.status.is_broken() {
            broken = true;
        } else if outcome.status.was_sent() {
            broken = false;
        }
        queue.done(i);
        let _ = tx.send(Event::Done(i, outcome));
    }
    // Stop the adapter (stop, SIGTERM, SIGKILL) before the run reports.
    imp.finish();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A case with `extra` keys (`bounded: ...`, `exclusive: ...`, `alone: true`).
    fn case(n: usize, extra: &str) -> Case {
        let text = format!(
            "id: t.c{n}\nsummary: A case.\nclauses: [discovery.portable]\n{extra}\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: b\\n---\\n\"\n  skills/f: {{fifo: true}}\nsteps:\n  - discover:\n    expect:\n      loaded: [a]\n"
        );
        crate::cases::parse_case(Path::new("t.yaml"), Some("t"), &text)
            .unwrap_or_else(|e| panic!("{}", e.message))
    }

    fn try_take(queue: &Queue) -> Option<usize> {
        let mut state = queue.lock();
        queue.pick(&mut state)
    }

    /// The keys of the cases `mixed` builds, by position.
    const KEYS: [&str; 6] = [
        "",
        "bounded: a FIFO",
        "exclusive: memory",
        "exclusive: memory",
        "alone: true",
        "",
    ];

    fn mixed() -> Vec<Case> {
        KEYS.iter().enumerate().map(|(n, k)| case(n, k)).collect()
    }

    #[test]
    fn one_worker_takes_the_cases_in_the_order_given() {
        let cases = mixed();
        let refs: Vec<&Case> = cases.iter().collect();
        let queue = Queue::new(&refs, 1);
        let mut order = Vec::new();
        while let Some(p) = try_take(&queue) {
            order.push(p);
            queue.done(p);
        }
        assert_eq!(order, [0, 1, 2, 3, 4, 5]);
    }

    /// Side by side: `exclusive:` cases first, then `bounded:`, then the rest, then the ones that
    /// run alone; a case of a held group is passed over for the next that may start, and a case
    /// that runs alone waits for every other to end.
    #[test]
    fn several_workers_start_the_long_cases_first_and_keep_groups_apart() {
        let cases = mixed();
        let refs: Vec<&Case> = cases.iter().collect();
        let queue = Queue::new(&refs, 3);
        assert_eq!(try_take(&queue), Some(2), "an exclusive case first");
        assert_eq!(
            try_take(&queue),
            Some(1),
            "3 shares 2's group: the bounded case"
        );
        assert_eq!(try_take(&queue), Some(0));
        assert_eq!(try_take(&queue), Some(5));
        assert_eq!(try_take(&queue), None, "3 waits for 2, 4 for every case");
        queue.done(2);
        assert_eq!(try_take(&queue), Some(3));
        for p in [0, 1, 3] {
            queue.done(p);
            assert_eq!(try_take(&queue), None, "5 still runs");
        }
        queue.done(5);
        assert_eq!(try_take(&queue), Some(4));
        queue.done(4);
        assert_eq!(try_take(&queue), None);
        queue.close();
        assert_eq!(queue.take(), None);
    }

    /// An `exclusive:` name is held across processes too: a second queue (another `skillspec
    /// run`, as the adapters of `.ci/adapters` are) does not start a case of that name while the
    /// first runs one, and does once it ended.
    #[test]
    fn an_exclusive_name_is_held_across_runs() {
        let name = format!("exclusive: test-{}", std::process::id());
        let cases = [case(0, &name), case(1, "")];
        let refs: Vec<&Case> = cases.iter().collect();
        let first = Queue::new(&refs, 2);
        let second = Queue::new(&refs, 2);
        assert_eq!(try_take(&first), Some(0));
        assert_eq!(
            try_take(&second),
            Some(1),
            "another case may start beside it"
        );
        assert_eq!(try_take(&second), None, "the other run holds the name");
        assert!(second.lock().polling, "and the second run asks again later");
        first.done(0);
        assert_eq!(try_take(&second), Some(0));
        second.done(0);
    }

    /// A scope narrows a name to the processes that share it: a name held machine-wide (or in
    /// another scope) does not block it, and within the scope it is held as ever.
    #[test]
    fn an_exclusive_scope_is_apart_from_the_machine() {
        let name = format!("scoped-{}", std::process::id());
        let machine = GroupLock::try_take_in("", &name);
        assert!(machine.as_ref().is_some_and(|l| l._socket.is_some()));
        assert!(
            GroupLock::try_take_in("", &name).is_none(),
            "held machine-wide"
        );
        let scoped = GroupLock::try_take_in("mutants-1", &name);
        assert!(
            scoped.is_some(),
            "a scope does not wait for the machine's holder"
        );
        assert!(
            GroupLock::try_take_in("mutants-1", &name).is_none(),
            "held within its scope"
        );
        assert!(GroupLock::try_take_in("mutants-2", &name).is_some());
    }

    /// A case the implementation will not send (UNSUPPORTED for it) takes no `exclusive:` name:
    /// a run that only reports it never waits while another process holds the name.
    #[test]
    fn an_unsent_case_waits_for_no_exclusive_name() {
        let name = format!("exclusive: unsent-{}", std::process::id());
        let cases = [case(0, &name)];
        let refs: Vec<&Case> = cases.iter().collect();
        let holder = Queue::new(&refs, 1);
        assert_eq!(try_take(&holder), Some(0));
        let other = Queue::new(&refs, 1);
        other.share_unsent(|_| true);
        assert_eq!(
            try_take(&other),
            Some(0),
            "not held back by the other run's name"
        );
        holder.done(0);
        other.done(0);
    }

    /// While a case runs alone, nothing else starts, not even one queued before it.
    #[test]
    fn nothing_starts_beside_a_case_that_runs_alone() {
        let cases = [case(0, "alone: true"), case(1, "alone: true")];
        let refs: Vec<&Case> = cases.iter().collect();
        let queue = Queue::new(&refs, 2);
        assert_eq!(try_take(&queue), Some(0));
        assert_eq!(try_take(&queue), None);
        queue.done(0);
        assert_eq!(try_take(&queue), Some(1));
    }

    /// Real workers on threads: every case runs once, the queue never stalls, and at no moment do
    /// two cases of one group run, or anything beside a case that runs alone.
    #[test]
    fn workers_on_threads_run_every_case_once_within_the_rules() {
        let keys = [
            "exclusive: a",
            "exclusive: a",
            "bounded: a FIFO",
            "",
            "alone: true",
            "exclusive: b",
            "",
            "exclusive: a",
            "alone: true",
            "",
        ];
        let cases: Vec<Case> = keys.iter().enumerate().map(|(n, k)| case(n, k)).collect();
        let refs: Vec<&Case> = cases.iter().collect();
        let queue = Queue::new(&refs, 3);
        let running: Mutex<Vec<usize>> = Mutex::new(Vec::new());
        let ran: Mutex<Vec<usize>> = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    while let Some(p) = queue.take() {
                        {
                            let mut now = running.lock().expect("lock");
                            now.push(p);
                            let alone = now.iter().any(|&q| keys[q] == "alone: true");
                            assert!(!alone || now.len() == 1, "beside a case alone: {now:?}");
                            let group_a =
                                now.iter().filter(|&&q| keys[q] == "exclusive: a").count();
                            assert!(group_a <= 1, "two of group a: {now:?}");
                        }
                        std::thread::sleep(Duration::from_millis(5));
                        running.lock().expect("lock").retain(|&q| q != p);
                        ran.lock().expect("lock").push(p);
                        queue.done(p);
                    }
                });
            }
        });
        let mut ran = ran.into_inner().expect("lock");
        ran.sort_unstable();
        assert_eq!(ran, (0..keys.len()).collect::<Vec<_>>());
    }
}
