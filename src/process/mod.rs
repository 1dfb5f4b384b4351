//! Running a helper process under the lifecycle rules of SPEC.md `run.process-group`,
//! `run.timeout` and `run.output-cap`.
//!
//! [`run_limited`] starts the helper under a supervisor process ([`spawn`]) that owns the helper's
//! whole process tree: whatever a descendant does (a new process group, a new session, a double
//! fork), on Linux it stays the supervisor's descendant, and when the helper ends, times out or
//! floods its output, the supervisor kills and reaps every one of them before it reports. The
//! runtime itself only talks to the supervisor: it writes the helper's input to its stdin, reads
//! stdout and stderr together with `poll` into two buffers whose combined size may not pass the
//! cap (at most `cap + 64 KiB` is ever held), and asks the supervisor to stop on timeout or at the
//! cap. Every wait is bounded: the runtime never waits on a process it does not own.
//!
//! A primitive: it uses only `rules` (what the supervisor kills, which descriptors the helper
//! keeps). `spawn` is the crate's only module with `unsafe` code (`fork`); its documentation
//! says why it is sound.

#[allow(unsafe_code)]
mod spawn;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

pub use spawn::Stage;
use spawn::{Report, Spec};

/// How long pipes are drained after the helper's tree is gone.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// How long the supervisor may take to kill the tree and report once asked to stop.
const STOP_BOUND: Duration = Duration::from_millis(3000);
/// How long the supervisor may take to exit after its report.
const REAP_BOUND: Duration = Duration::from_millis(1000);

/// What to run: the interpreter, its arguments, its complete environment (nothing is inherited)
/// and the directory it starts in, given as an open directory descriptor.
#[derive(Debug)]
pub struct HelperCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<OwnedFd>,
    merge_output: bool,
}

impl HelperCommand {
    /// A command running `program` (an absolute path: nothing is looked up) with an empty
    /// environment, in the runtime's working directory.
    pub fn new(program: impl AsRef<OsStr>) -> HelperCommand {
        HelperCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            merge_output: false,
        }
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Self {
        for a in args {
            self.arg(a);
        }
        self
    }

    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The helper starts in this directory, entered through the descriptor (`fchdir`), so a
    /// path swapped after the descriptor was opened changes nothing.
    pub fn current_dir_fd(&mut self, dir: OwnedFd) -> &mut Self {
        self.cwd = Some(dir);
        self
    }

    /// The helper's stdout and stderr are one pipe (descriptor 2 a copy of 1): everything it
    /// writes arrives in [`Finished::stdout`] in the order written, and `stderr` stays empty.
    pub fn merge_output(&mut self) -> &mut Self {
        self.merge_output = true;
        self
    }
}

/// What happens when the helper's output passes the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCap {
    /// The tree is killed and the run ends as [`Ending::OutputLimit`] (SPEC.md `run.output-cap`).
    Kill,
    /// The first `cap + 1` bytes are kept (so a caller sees that there was more), the rest is read
    /// and discarded, and the helper runs on until it exits or times out (SPEC.md
    /// `hitl.truncate`).
    Discard,
}

/// What ended the helper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The helper exited by itself: its exit code, or the signal that killed it.
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// The time limit passed; the tree was killed.
    TimedOut,
    /// stdout and stderr together passed the cap; the tree was killed.
    OutputLimit,
}

/// A finished helper run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why a helper could not be started.
#[derive(Debug)]
pub struct SpawnError {
    /// What was being done.
    pub what: &'static str,
    pub error: io::Error,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.error)
    }
}

impl std::error::Error for SpawnError {}

fn spawn_error(what: &'static str, error: io::Error) -> SpawnError {
    SpawnError { what, error }
}

/// Starts `command`, feeds `input` on its stdin, and supervises it until it ends, passes
/// `timeout`, or writes more than `cap` bytes to stdout and stderr together.
pub fn run_limited(
    command: &HelperCommand,
    input: &[u8],
    timeout: Duration,
    cap: usize,
) -> Result<Finished, SpawnError> {
    run(command, input, timeout, cap, OnCap::Kill)
}

/// Starts `command` with an empty stdin and supervises it until it ends or passes `timeout`;
/// output past `cap` bytes is discarded, not fatal ([`OnCap::Discard`]): at most `cap + 1` bytes
/// of stdout and stderr together come back.
pub fn run_truncating(
    command: &HelperCommand,
    timeout: Duration,
    cap: usize,
) -> Result<Finished, SpawnError> {
    run(command, &[], timeout, cap, OnCap::Discard)
}

fn run(
    command: &HelperCommand,
    input: &[u8],
    timeout: Duration,
    cap: usize,
    on_cap: OnCap,
) -> Result<Finished, SpawnError> {
    let args: Vec<&OsStr> = command.args.iter().map(OsString::as_os_str).collect();
    let env: Vec<(&OsStr, &OsStr)> = command
        .env
        .iter()
        .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
        .collect();
    let spec = Spec {
        program: &command.program,
        args: &args,
        env: &env,
        cwd: command.cwd.as_ref().map(AsFd::as_fd),
        merge_output: command.merge_output,
    };
    let deadline = Instant::now() + timeout;
    let started =
        spawn::start(&spec).map_err(|e| spawn_error("cannot start the helper's supervisor", e))?;
    let supervisor = started.supervisor;
    let mut session = Session {
        stdin: (!input.is_empty()).then_some(started.stdin),
        input,
        written: 0,
        pipes: [Some(started.stdout), Some(started.stderr)],
        out: Vec::new(),
        err: Vec::new(),
        report: Some(started.report),
        report_buf: Vec::new(),
        last: None,
        cap,
        on_cap,
    };
    if let Some(stdin) = &session.stdin {
        let _ = rustix::io::ioctl_fionbio(stdin, true);
    }

    let mut limit = None;
    while session.last.is_none() {
        let now = Instant::now();
        // spec: run.output-cap (one byte over the cap ends the run)
        if session.over_cap() {
            limit = Some(Ending::OutputLimit);
            break;
        }
        // spec: run.timeout (counted from the spawn)
        if now >= deadline {
            limit = Some(Ending::TimedOut);
            break;
        }
        if !session.pump(deadline - now) {
            break;
        }
    }
    if limit.is_some() && session.last.is_none() {
        // Ask the supervisor to kill the tree; it reports when nothing is left.
        let _ = rustix::io::write(&started.control, b"K");
        let stop_by = Instant::now() + STOP_BOUND;
        while session.last.is_none() && session.report.is_some() {
            let now = Instant::now();
            if now >= stop_by {
                spawn::kill_child(supervisor);
                break;
            }
            session.pump(stop_by - now);
        }
    }
    session.stdin = None;
    drop(started.control);
    // Collect what the dead tree left in the pipes, briefly.
    let grace_end = Instant::now() + DRAIN_GRACE;
    while session.pipes.iter().any(Option::is_some) && !session.over_cap() {
        let now = Instant::now();
        if now >= grace_end {
            break;
        }
        session.pump(grace_end - now);
    }
    reap(supervisor);

    let Session { out, err, last, .. } = session;
    let ending = match (limit, last) {
        (_, Some(Report::Failed(stage, errno))) => {
            return Err(spawn_error(
                stage_text(stage),
                io::Error::from_raw_os_error(errno),
            ))
        }
        (Some(limit), _) => limit,
        (None, _) if on_cap == OnCap::Kill && out.len() + err.len() > cap => Ending::OutputLimit,
        (None, Some(Report::Ended(raw))) => {
            let status = std::process::ExitStatus::from_raw(raw);
            Ending::Exited {
                code: status.code(),
                signal: status.signal(),
            }
        }
        (None, _) => {
            return Err(spawn_error(
                "the helper's supervisor ended without a report",
                io::Error::other("supervisor lost"),
            ))
        }
    };
    Ok(Finished {
        ending,
        stdout: out,
        stderr: err,
    })
}

fn stage_text(stage: Stage) -> &'static str {
    match stage {
        Stage::Fork => "cannot fork the helper",
        Stage::Chdir => "cannot enter the skill directory",
        Stage::Descriptors => "cannot set up the helper's descriptors",
        Stage::Exec => "cannot execute the interpreter",
    }
}

/// Reaps the supervisor: it exits right after its report; if it does not, it is killed.
fn reap(supervisor: i32) {
    let by = Instant::now() + REAP_BOUND;
    if spawn::try_reap(supervisor) {
        return;
    }
    // Wait for its exit on a pidfd (Linux 5.3+), not in 1 ms naps: a nap cost about 1 ms on every
    // helper run, most of the runtime's overhead over spawning the interpreter directly. The
    // supervisor is our unreaped child, so its pid cannot have been reused.
    #[cfg(target_os = "linux")]
    if let Some(pid) = rustix::process::Pid::from_raw(supervisor) {
        if let Ok(pidfd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
            loop {
                let now = Instant::now();
                if now >= by {
                    break;
                }
                let left = by - now;
                let ts = Timespec {
                    tv_sec: left.as_secs() as _,
                    tv_nsec: left.subsec_nanos() as _,
                };
                let mut fds = [PollFd::new(&pidfd, PollFlags::IN)];
                match poll(&mut fds, Some(&ts)) {
                    Ok(n) if n > 0 => {
                        if spawn::try_reap(supervisor) {
                            return;
                        }
                        break;
                    }
                    Ok(_) => break,
                    Err(rustix::io::Errno::INTR) => {}
                    Err(_) => break,
                }
            }
        }
    }
    while Instant::now() < by {
        if spawn::try_reap(supervisor) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    spawn::kill_child(supervisor);
    spawn::reap_blocking(supervisor);
}

/// The runtime's side of one helper run: its pipes and what came through them.
struct Session<'a> {
    stdin: Option<OwnedFd>,
    input: &'a [u8],
    written: usize,
    pipes: [Option<OwnedFd>; 2],
    out: Vec<u8>,
    err: Vec<u8>,
    report: Option<OwnedFd>,
    report_buf: Vec<u8>,
    /// The supervisor's final record (`Ended` or `Failed`).
    last: Option<Report>,
    cap: usize,
    on_cap: OnCap,
}

impl Session<'_> {
    /// Past the cap with [`OnCap::Kill`] (with [`OnCap::Discard`] the cap never ends a run).
    fn over_cap(&self) -> bool {
        self.on_cap == OnCap::Kill && self.out.len() + self.err.len() > self.cap
    }

    /// Waits up to `wait` for any pipe, then services what is ready. Returns false when nothing
    /// is left to wait for.
    fn pump(&mut self, wait: Duration) -> bool {
        const STDIN: usize = 0;
        const OUT: usize = 1;
        const ERR: usize = 2;
        const REPORT: usize = 3;
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
        let mut which: Vec<usize> = Vec::with_capacity(4);
        if let Some(fd) = &self.stdin {
            fds.push(PollFd::from_borrowed_fd(fd.as_fd(), PollFlags::OUT));
            which.push(STDIN);
        }
        for (i, p) in self.pipes.iter().enumerate() {
            if let Some(fd) = p {
                fds.push(PollFd::from_borrowed_fd(fd.as_fd(), PollFlags::IN));
                which.push(if i == 0 { OUT } else { ERR });
            }
        }
        if let Some(fd) = &self.report {
            fds.push(PollFd::from_borrowed_fd(fd.as_fd(), PollFlags::IN));
            which.push(REPORT);
        }
        if fds.is_empty() {
            return false;
        }
        let ts = Timespec {
            tv_sec: wait.as_secs() as i64,
            tv_nsec: i64::from(wait.subsec_nanos()),
        };
        if poll(&mut fds, Some(&ts)).is_err() {
            return true;
        }
        let ready: Vec<(usize, PollFlags)> = fds
            .iter()
            .zip(&which)
            .map(|(f, w)| (*w, f.revents()))
            .collect();
        drop(fds);
        for (w, revents) in ready {
            if revents.is_empty() {
                continue;
            }
            match w {
                STDIN => self.feed(),
                OUT | ERR => self.read_output(w - OUT),
                _ => self.read_report(),
            }
        }
        true
    }

    fn feed(&mut self) {
        let Some(fd) = &self.stdin else { return };
        match rustix::io::write(fd, &self.input[self.written..]) {
            Ok(n) => {
                self.written += n;
                if self.written >= self.input.len() {
                    self.stdin = None;
                }
            }
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => {}
            // The helper closed its stdin (or died): nothing more to feed.
            Err(_) => self.stdin = None,
        }
    }

    fn read_output(&mut self, index: usize) {
        let Some(fd) = &self.pipes[index] else { return };
        let room = (self.cap + 1)
            .saturating_sub(self.out.len() + self.err.len())
            .min(64 * 1024);
        if room == 0 {
            if self.on_cap == OnCap::Discard {
                // Past the cap: read on (the helper must not block on a full pipe), keep nothing.
                let mut scratch = [0u8; 16 * 1024];
                match rustix::io::read(fd, &mut scratch) {
                    Ok(0) => self.pipes[index] = None,
                    Ok(_) | Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => {}
                    Err(_) => self.pipes[index] = None,
                }
                return;
            }
            // Past the cap: nothing more is wanted (the tree is being killed).
            self.pipes[index] = None;
            return;
        }
        let buf = if index == 0 {
            &mut self.out
        } else {
            &mut self.err
        };
        let len = buf.len();
        buf.resize(len + room, 0);
        match rustix::io::read(fd, &mut buf[len..]) {
            Ok(0) => {
                buf.truncate(len);
                self.pipes[index] = None;
            }
            Ok(n) => buf.truncate(len + n),
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => buf.truncate(len),
            Err(_) => {
                buf.truncate(len);
                self.pipes[index] = None;
            }
        }
    }

    fn read_report(&mut self) {
        let Some(fd) = &self.report else { return };
        let mut chunk = [0u8; 64];
        match rustix::io::read(fd, &mut chunk) {
            Ok(0) => self.report = None,
            Ok(n) => {
                self.report_buf.extend_from_slice(&chunk[..n]);
                while self.report_buf.len() >= 8 {
                    let mut rec = [0u8; 8];
                    rec.copy_from_slice(&self.report_buf[..8]);
                    self.report_buf.drain(..8);
                    match Report::decode(rec) {
                        Some(Report::Started(_)) | None => {}
                        Some(last) => self.last = Some(last),
                    }
                }
            }
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => {}
            Err(_) => self.report = None,
        }
    }
}

/// Error kinds a caller may want to tell apart.
impl SpawnError {
    /// Whether the interpreter itself could not be executed (as opposed to the supervisor).
    pub fn is_exec(&self) -> bool {
        self.what == stage_text(Stage::Exec)
    }
}
