//! The adapter's process and pipes: `/bin/sh -c CMD` in its own process group, one request line
//! written and one response line read under a single deadline, a bounded tail of stderr, and
//! the stop → SIGTERM → SIGKILL shutdown.
//!
//! Everything runs on the calling thread over non-blocking pipe ends and `poll`, so every wait
//! has a deadline and every buffer a bound, whatever the adapter does:
//! - a response line is at most [`MAX_LINE`] bytes; bytes on stdout while no request is
//!   outstanding (or before the request was completely written) are a protocol error;
//! - stderr is drained whenever the runner waits for the adapter, and only its last
//!   [`STDERR_TAIL`] bytes are kept, as bytes (no encoding is assumed);
//! - writing a request is part of the exchange, so an adapter that stops reading its stdin
//!   cannot block the runner past the deadline;
//! - while a request is outstanding, the adapter's processes are measured every
//!   [`MEMORY_EVERY`] ([`crate::protocol::memory`]); when they have grown by more than the run's
//!   memory bound since the request was sent, they are killed at once and the exchange fails
//!   ([`TransportError::OverMemory`]), so a runtime that reads an endless file into memory
//!   cannot take the machine's memory from every other job. Growth, not the total: what a
//!   runtime kept from earlier cases is no part of this request's answer.
//!
//! [`Transport::exchange`] is the strict exchange `run` uses; `smoke` uses its parts
//! ([`Transport::check_quiet`], [`Transport::send`], [`Transport::read_line`]) to note what is
//! wrong and carry on, and reads how the adapter ended ([`Shutdown`], [`Transport::exit`]).
//! Every failure is a [`TransportError`].
//!
//! Clauses: PROTOCOL.md (one JSON object a line, Shutdown).

use std::io;
use std::os::fd::OwnedFd;

use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::fs::OFlags;
use rustix::io::Errno;
use rustix::process::{Pid, Signal};

use crate::protocol::fault::Exit;
use crate::protocol::{live, memory};

/// Longest accepted response line, in bytes (without its `\n`).
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// How many bytes of the adapter's stderr are kept (the last ones).
pub const STDERR_TAIL: usize = 8 * 1024;
/// After `stop` (and closing its stdin), how long the adapter has to exit by itself.
pub const STOP_GRACE: Duration = Duration::from_secs(1);
/// After SIGTERM to its process group, how long the group has to exit.
pub const TERM_GRACE: Duration = Duration::from_secs(1);
/// After SIGKILL, how long the runner waits to reap the adapter.
pub const KILL_GRACE: Duration = Duration::from_secs(1);

/// The run's default memory bound for an adapter's processes, in bytes: 16 GiB (`run
/// --memory-bound`). Four times the largest file a case plants (4 GiB, sparse): the most a
/// finite answer was measured to take is 12.1 GiB (google-adk's scan of a skill with a 4 GiB
/// reference file, deepagents' read of one: three copies of it), and that must stay a verdict
/// on its answer.
pub const MEMORY_BOUND: u64 = 16 << 30;
/// How often the adapter's memory is measured while a request is outstanding.
pub const MEMORY_EVERY: Duration = Duration::from_millis(200);

/// Bytes read per system call.
const CHUNK: usize = 64 * 1024;
/// Reads per drain before going back to `poll` (so a flood cannot starve the deadline).
const READS_PER_DRAIN: usize = 16;
/// The `stop` message.
const STOP: &[u8] = b"{\"type\":\"stop\"}\n";

/// Why an exchange with the adapter failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// Bytes on stdout while no request was outstanding (a preview of them).
    Unsolicited { preview: String },
    /// The runner's end of the adapter's stdin is gone already.
    StdinClosed,
    /// Writing the request hit a closed pipe after `written` of `total` bytes.
    StdinGone { written: usize, total: usize },
    /// Writing the request failed otherwise.
    WriteFailed { error: String },
    /// Bytes on stdout before the whole request was read.
    AnsweredEarly {
        written: usize,
        total: usize,
        preview: String,
    },
    /// The adapter did not read the whole request before the deadline.
    NotReading {
        timeout: Duration,
        written: usize,
        total: usize,
    },
    /// No response line before the deadline (`got`: bytes of an unfinished line).
    NoResponse { timeout: Duration, got: usize },
    /// A response line longer than [`MAX_LINE`].
    LineTooLong { preview: String },
    /// The adapter's stdout ended.
    StdoutClosed,
    /// Reading stdout failed.
    ReadFailed { error: String },
    /// While the request was outstanding, the adapter's processes grew from `base` bytes to
    /// `used`, by more than the run's memory bound `bound`; they were killed.
    OverMemory { bound: u64, base: u64, used: u64 },
}

impl TransportError {
    /// Whether the adapter grew past the memory bound while it owed the answer.
    pub fn is_over_memory(&self) -> bool {
        matches!(self, TransportError::OverMemory { .. })
    }

    /// Whether the request's time ran out.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            TransportError::NotReading { .. } | TransportError::NoResponse { .. }
        )
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Unsolicited { preview } => write!(
                f,
                "the adapter wrote to stdout while no request was outstanding: {preview}"
            ),
            TransportError::StdinClosed => f.write_str("the adapter's stdin is closed"),
            TransportError::StdinGone { written, total } => write!(
                f,
                "the adapter closed its stdin (exited?) after {written} of {total} bytes of the request"
            ),
            TransportError::WriteFailed { error } => {
                write!(f, "cannot write to the adapter: {error}")
            }
            TransportError::AnsweredEarly {
                written,
                total,
                preview,
            } => write!(
                f,
                "the adapter wrote to stdout before it had read the whole request ({written} of {total} bytes written): {preview}"
            ),
            TransportError::NotReading {
                timeout,
                written,
                total,
            } => write!(
                f,
                "the adapter did not read the request within {} s ({written} of {total} bytes written)",
                timeout.as_secs_f64()
            ),
            TransportError::NoResponse { timeout, got: 0 } => {
                write!(f, "no response within {} s", timeout.as_secs_f64())
            }
            TransportError::NoResponse { timeout, got } => write!(
                f,
                "no complete response line within {} s (got {got} bytes without a newline)",
                timeout.as_secs_f64()
            ),
            TransportError::LineTooLong { preview } => write!(
                f,
                "a response line is longer than {MAX_LINE} bytes (the limit): {preview}"
            ),
            TransportError::StdoutClosed => f.write_str("the adapter closed its stdout (exited?)"),
            TransportError::ReadFailed { error } => {
                write!(f, "reading the adapter's stdout: {error}")
            }
            TransportError::OverMemory { bound, base, used } => write!(
                f,
                "the adapter's processes grew by {} MiB (from {} MiB to {} MiB) while the request was unanswered, past the run's memory bound of {} MiB (--memory-bound): they were killed",
                used.saturating_sub(*base).div_ceil(1 << 20),
                base >> 20,
                used.div_ceil(1 << 20),
                bound >> 20
            ),
        }
    }
}

impl std::error::Error for TransportError {}

/// How [`Transport::shutdown`] ended the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    /// Done before (nothing more happened now).
    Already,
    /// The leader exited by itself after `stop` and the end of its stdin.
    Exited,
    /// It needed SIGTERM.
    Term,
    /// It needed SIGKILL.
    Kill,
}

/// The last bytes of a stream.
#[derive(Debug, Default)]
struct Tail {
    bytes: Vec<u8>,
    /// How many bytes were dropped from the front.
    dropped: u64,
}

impl Tail {
    fn push(&mut self, data: &[u8]) {
        if data.len() >= STDERR_TAIL {
            self.dropped += (self.bytes.len() + data.len() - STDERR_TAIL) as u64;
            self.bytes.clear();
            self.bytes
                .extend_from_slice(&data[data.len() - STDERR_TAIL..]);
            return;
        }
        let over = (self.bytes.len() + data.len()).saturating_sub(STDERR_TAIL);
        if over > 0 {
            self.bytes.drain(..over);
            self.dropped += over as u64;
        }
        self.bytes.extend_from_slice(data);
    }

    /// How many bytes were pushed in all (a mark for [`Tail::since`]).
    fn written(&self) -> u64 {
        self.dropped + self.bytes.len() as u64
    }

    /// The bytes pushed after `mark` (a [`Tail::written`] value), decoded lossily: those still
    /// kept, after a note of how many were dropped.
    fn since(&self, mark: u64) -> String {
        let skip = mark.saturating_sub(self.dropped);
        let kept = self.bytes.get(skip as usize..).unwrap_or_default();
        let text = String::from_utf8_lossy(kept);
        if mark < self.dropped {
            format!("[{} earlier bytes dropped]{text}", self.dropped - mark)
        } else {
            text.into_owned()
        }
    }

    fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        if self.dropped > 0 {
            format!("[{} earlier bytes dropped]{text}", self.dropped)
        } else {
            text.into_owned()
        }
    }
}

enum Read {
    Data,
    Eof,
    WouldBlock,
}

/// A running adapter process.
pub struct Transport {
    /// The `/bin/sh` leader; its pid is the process group id.
    pid: Pid,
    /// The leader has been reaped (or given up on): nothing more to wait for.
    reaped: bool,
    /// How the leader ended, when the runner reaped it.
    exit: Option<Exit>,
    stdin: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
    /// Bytes read from stdout and not consumed yet.
    pending: Vec<u8>,
    tail: Tail,
    /// A request was left half written: a `stop` line would be glued to it.
    torn: bool,
    /// How much its processes may grow while a request is outstanding (`None`: unbounded).
    memory_bound: Option<u64>,
    /// What its processes held when the outstanding request was sent.
    memory_base: u64,
    /// When the processes were last measured.
    measured: Instant,
}

fn nonblocking(fd: impl Into<OwnedFd>) -> io::Result<OwnedFd> {
    let fd = fd.into();
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags | OFlags::NONBLOCK)?;
    Ok(fd)
}

fn timespec(d: Duration) -> Timespec {
    Timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

/// A short, printable sample of bytes an adapter sent.
pub fn preview(bytes: &[u8]) -> String {
    const MAX: usize = 200;
    let cut = bytes.len().min(MAX);
    let text = String::from_utf8_lossy(&bytes[..cut]);
    let text = format!("{text:?}");
    if bytes.len() > MAX {
        format!("{text}… ({} bytes)", bytes.len())
    } else {
        text
    }
}

impl Transport {
    /// Starts `command` under `/bin/sh -c` in a new process group.
    pub fn spawn(command: &str) -> io::Result<Transport> {
        let mut child = live::spawn_shell_group(command)?;
        let pid = Pid::from_child(&child);
        let mut t = Transport {
            pid,
            reaped: false,
            exit: None,
            stdin: None,
            stdout: None,
            stderr: None,
            pending: Vec::new(),
            tail: Tail::default(),
            torn: false,
            memory_bound: None,
            memory_base: 0,
            measured: Instant::now(),
        };
        // From here on, dropping `t` stops the process group.
        let missing = || io::Error::other("a pipe to the adapter is missing");
        t.stdin = Some(nonblocking(child.stdin.take().ok_or_else(missing)?)?);
        t.stdout = Some(nonblocking(child.stdout.take().ok_or_else(missing)?)?);
        t.stderr = Some(nonblocking(child.stderr.take().ok_or_else(missing)?)?);
        Ok(t)
    }

    /// Bounds how much the adapter's processes may grow in memory while a request is
    /// outstanding.
    pub fn set_memory_bound(&mut self, bound: Option<u64>) {
        self.memory_bound = bound;
    }

    /// Notes what the adapter's processes hold as a request is sent: the base its growth is
    /// measured from.
    fn note_memory_base(&mut self) {
        if self.memory_bound.is_some() {
            self.memory_base = memory::resident_bytes(self.pid).unwrap_or(0);
            self.measured = Instant::now();
        }
    }

    /// Fails, and kills the adapter's process group, when its processes have grown by more than
    /// the memory bound since the request was sent (measured at most every [`MEMORY_EVERY`]).
    fn check_memory(&mut self) -> Result<(), TransportError> {
        let Some(bound) = self.memory_bound else {
            return Ok(());
        };
        if self.measured.elapsed() < MEMORY_EVERY {
            return Ok(());
        }
        self.measured = Instant::now();
        let base = self.memory_base;
        match memory::resident_bytes(self.pid) {
            Some(used) if used.saturating_sub(base) > bound => {
                // At once: every further moment takes memory from the rest of the machine.
                let _ = rustix::process::kill_process_group(self.pid, Signal::KILL);
                Err(TransportError::OverMemory { bound, base, used })
            }
            _ => Ok(()),
        }
    }

    /// The last bytes the adapter wrote to stderr, decoded lossily.
    pub fn stderr_tail(&self) -> String {
        self.tail.text()
    }

    /// How many bytes the adapter has written to stderr so far (a mark for
    /// [`Transport::stderr_since`]).
    pub fn stderr_written(&self) -> u64 {
        self.tail.written()
    }

    /// What the adapter wrote to stderr after `mark` (of what the tail keeps), once what is
    /// waiting in the pipe now is read too.
    pub fn stderr_since(&mut self, mark: u64) -> String {
        self.drain_stderr();
        self.tail.since(mark)
    }

    /// How the leader ended, once it was reaped (`None`: still running, or its status was not
    /// the runner's to collect).
    pub fn exit(&self) -> Option<Exit> {
        self.exit
    }

    /// Whether the leader has exited (without reaping it).
    pub fn leader_exited(&self) -> bool {
        self.reaped || live::leader_exited(self.pid)
    }

    /// Writes `request` (one line, with its `\n`) and reads one response line (without its
    /// `\n`), both within `timeout`; bytes nobody asked for are an error.
    pub fn exchange(
        &mut self,
        request: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, TransportError> {
        let deadline = Instant::now() + timeout;
        self.check_quiet()?;
        self.send(request, deadline, timeout)?;
        self.read_line(deadline, timeout)
    }

    /// Fails when something arrived on stdout while no request was outstanding (or stdout
    /// ended); the bytes stay pending (see [`Self::discard_pending`]).
    pub fn check_quiet(&mut self) -> Result<(), TransportError> {
        self.drain_stderr();
        if self.pending.is_empty() {
            match self.read_stdout()? {
                Read::WouldBlock => {}
                Read::Data => {}
                Read::Eof => return Err(self.closed()),
            }
        }
        if !self.pending.is_empty() {
            return Err(TransportError::Unsolicited {
                preview: preview(&self.pending),
            });
        }
        Ok(())
    }

    /// Drops whatever was read from stdout and not consumed.
    pub fn discard_pending(&mut self) {
        self.pending.clear();
    }

    /// Writes `request` by `deadline` (`timeout` is how messages name it). Nothing may arrive
    /// on stdout before the whole request is written.
    pub fn send(
        &mut self,
        request: &[u8],
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), TransportError> {
        let total = request.len();
        let mut written = 0;
        self.note_memory_base();
        while written < total {
            let Some(stdin) = &self.stdin else {
                return Err(TransportError::StdinClosed);
            };
            match rustix::io::write(stdin, &request[written..]) {
                Ok(n) => {
                    written += n;
                    continue;
                }
                Err(Errno::AGAIN) | Err(Errno::INTR) => {}
                Err(Errno::PIPE) => {
                    self.torn = written > 0;
                    return Err(TransportError::StdinGone { written, total });
                }
                Err(e) => {
                    self.torn = written > 0;
                    return Err(TransportError::WriteFailed {
                        error: e.to_string(),
                    });
                }
            }
            // While the pipe is full: keep stderr flowing, and watch stdout, where nothing may
            // arrive before the whole request has been read.
            self.drain_stderr();
            match self.read_stdout()? {
                Read::Eof => {
                    self.torn = written > 0;
                    return Err(self.closed());
                }
                Read::Data | Read::WouldBlock => {}
            }
            if !self.pending.is_empty() {
                self.torn = true;
                return Err(TransportError::AnsweredEarly {
                    written,
                    total,
                    preview: preview(&self.pending),
                });
            }
            if !self.wait(deadline, true) {
                self.torn = written > 0;
                return Err(TransportError::NotReading {
                    timeout,
                    written,
                    total,
                });
            }
            if let Err(e) = self.check_memory() {
                self.torn = written > 0;
                return Err(e);
            }
        }
        Ok(())
    }

    /// Reads one response line (without its `\n`) by `deadline` (`timeout` is how messages
    /// name it).
    pub fn read_line(
        &mut self,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Vec<u8>, TransportError> {
        let mut scanned = 0;
        loop {
            if let Some(i) = self.pending[scanned..].iter().position(|b| *b == b'\n') {
                let end = scanned + i;
                if end > MAX_LINE {
                    break;
                }
                // The line keeps the buffer (no copy of up to 16 MiB); the rest moves out.
                let rest = self.pending.split_off(end + 1);
                let mut line = std::mem::replace(&mut self.pending, rest);
                line.pop();
                return Ok(line);
            }
            scanned = self.pending.len();
            if scanned > MAX_LINE {
                break;
            }
            match self.read_stdout()? {
                Read::Data => continue,
                Read::Eof => return Err(self.closed()),
                Read::WouldBlock => {}
            }
            self.drain_stderr();
            if !self.wait(deadline, false) {
                return Err(TransportError::NoResponse {
                    timeout,
                    got: self.pending.len(),
                });
            }
            self.check_memory()?;
        }
        Err(TransportError::LineTooLong {
            preview: preview(&self.pending),
        })
    }

    fn closed(&mut self) -> TransportError {
        // Its last words are on stderr.
        self.drain_stderr_until(Instant::now() + Duration::from_millis(200));
        TransportError::StdoutClosed
    }

    /// One read from stdout into `pending` (at most [`CHUNK`] bytes).
    fn read_stdout(&mut self) -> Result<Read, TransportError> {
        let Some(stdout) = &self.stdout else {
            return Ok(Read::Eof);
        };
        let mut buf = [0u8; CHUNK];
        loop {
            return match rustix::io::read(stdout, &mut buf) {
                Ok(0) => {
                    self.stdout = None;
                    Ok(Read::Eof)
                }
                Ok(n) => {
                    // Grow by doubling, but never past what one line may need.
                    let needed = self.pending.len() + n;
                    if needed > self.pending.capacity() {
                        let target = (self.pending.capacity() * 2)
                            .clamp(needed, (MAX_LINE + CHUNK).max(needed));
                        self.pending.reserve_exact(target - self.pending.len());
                    }
                    self.pending.extend_from_slice(&buf[..n]);
                    Ok(Read::Data)
                }
                Err(Errno::AGAIN) => Ok(Read::WouldBlock),
                Err(Errno::INTR) => continue,
                Err(e) => Err(TransportError::ReadFailed {
                    error: e.to_string(),
                }),
            };
        }
    }

    /// Reads what stderr has now (a bounded amount) into the tail.
    fn drain_stderr(&mut self) {
        let mut buf = [0u8; CHUNK];
        for _ in 0..READS_PER_DRAIN {
            let Some(stderr) = &self.stderr else { return };
            match rustix::io::read(stderr, &mut buf) {
                Ok(0) => self.stderr = None,
                Ok(n) => self.tail.push(&buf[..n]),
                Err(Errno::INTR) => {}
                // Would block, or broken: either way nothing more to read now.
                Err(_) => return,
            }
        }
    }

    /// Drains stderr until it closes or `deadline`.
    fn drain_stderr_until(&mut self, deadline: Instant) {
        while self.stderr.is_some() {
            self.drain_stderr();
            if self.stderr.is_none() || !self.wait_stderr(deadline) {
                return;
            }
        }
    }

    fn wait_stderr(&mut self, deadline: Instant) -> bool {
        let Some(stderr) = &self.stderr else {
            return false;
        };
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        let mut fds = [PollFd::new(stderr, PollFlags::IN)];
        let _ = rustix::event::poll(&mut fds, Some(&timespec(deadline - now)));
        true
    }

    /// Waits until stdout or stderr is readable (or stdin writable, with `write`). False when
    /// `deadline` passed first.
    fn wait(&mut self, deadline: Instant, write: bool) -> bool {
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        let mut fds = Vec::with_capacity(3);
        if let Some(fd) = &self.stdout {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        if let Some(fd) = &self.stderr {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        if write {
            if let Some(fd) = &self.stdin {
                fds.push(PollFd::new(fd, PollFlags::OUT));
            }
        }
        // With a memory bound, wake at least every MEMORY_EVERY to measure. An interrupted or
        // early poll just goes round again; the caller re-checks everything.
        let mut until = deadline - now;
        if self.memory_bound.is_some() {
            until = until.min(MEMORY_EVERY);
        }
        let _ = rustix::event::poll(&mut fds, Some(&timespec(until)));
        true
    }

    /// Waits for the leader to exit (without reaping it), draining its pipes meanwhile.
    fn wait_leader(&mut self, deadline: Instant) -> bool {
        loop {
            if live::leader_exited(self.pid) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            self.drain_stderr();
            // Whatever it still prints on stdout is no answer to anything.
            if let Ok(Read::Data) = self.read_stdout() {
                self.pending.clear();
            }
            // Closed pipes are not polled, so this sleeps at most 10 ms.
            let step = (Instant::now() + Duration::from_millis(10)).min(deadline);
            self.wait(step, false);
        }
    }

    fn reap(&mut self) {
        use rustix::process::{waitid, WaitId, WaitIdOptions};
        match waitid(
            WaitId::Pid(self.pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG,
        ) {
            Ok(None) => {}
            Ok(Some(status)) => {
                self.reaped = true;
                self.exit = match (status.exit_status(), status.terminating_signal()) {
                    (Some(code), _) => Some(Exit::Code(code)),
                    (None, Some(signal)) => Some(Exit::Signal(signal)),
                    (None, None) => None,
                };
            }
            // Not our child any more.
            Err(_) => self.reaped = true,
        }
    }

    /// Whether no live process of the adapter's group is left (once the leader is reaped).
    fn group_empty(&self) -> bool {
        if rustix::process::test_kill_process_group(self.pid) == Err(Errno::SRCH) {
            return true;
        }
        // kill(2) still finds zombies: orphans of the adapter whose new parent has not reaped
        // them yet. They are dead; where /proc exists, look at the members' states.
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        let pgid = self.pid.as_raw_nonzero().get();
        !entries.flatten().any(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // `pid (comm) state ppid pgrp ...`; comm may hold anything, so parse after the last `)`.
            let mut fields = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest)
                .unwrap_or_default()
                .split_whitespace();
            let state = fields.next();
            let pgrp = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
            pgrp == Some(pgid) && !matches!(state, Some("Z") | Some("X"))
        })
    }

    fn wait_group_empty(&mut self, deadline: Instant) -> bool {
        loop {
            if self.group_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops the adapter: `stop` and EOF on its stdin, up to [`STOP_GRACE`] to exit; then
    /// SIGTERM to its process group and up to [`TERM_GRACE`]; then SIGKILL, and up to
    /// [`KILL_GRACE`] to reap it. Returns at once when already done. Says what it took for the
    /// leader to exit.
    pub fn shutdown(&mut self) -> Shutdown {
        if self.reaped {
            return Shutdown::Already;
        }
        if let Some(stdin) = self.stdin.take() {
            if !self.torn {
                let _ = rustix::io::write(&stdin, STOP);
            }
        }
        let mut exited = self.wait_leader(Instant::now() + STOP_GRACE);
        let mut took = Shutdown::Exited;
        if exited {
            self.reap();
        }
        if !(self.reaped && self.group_empty()) {
            // While the leader is not reaped, the group id cannot name any other group.
            let _ = rustix::process::kill_process_group(self.pid, Signal::TERM);
            let deadline = Instant::now() + TERM_GRACE;
            if !exited {
                exited = self.wait_leader(deadline);
                took = if exited {
                    Shutdown::Term
                } else {
                    Shutdown::Kill
                };
                if exited {
                    self.reap();
                }
            }
            let empty = self.reaped && self.wait_group_empty(deadline);
            if !empty {
                let _ = rustix::process::kill_process_group(self.pid, Signal::KILL);
            }
            if !self.reaped {
                self.wait_leader(Instant::now() + KILL_GRACE);
                self.reap();
            }
        }
        live::forget_group(self.pid);
        // Whatever it wrote last.
        self.drain_stderr_until(Instant::now() + Duration::from_millis(100));
        self.stdout = None;
        self.stderr = None;
        // Given up on a process that survives SIGKILL: it stays a zombie, never waited for.
        self.reaped = true;
        took
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_since_a_mark_is_what_came_after_it() {
        let mut t = Tail::default();
        t.push(b"before\n");
        let mark = t.written();
        t.push(b"Traceback\n");
        assert_eq!(t.since(mark), "Traceback\n");
        assert_eq!(t.since(t.written()), "");
        t.push(&vec![b'x'; STDERR_TAIL]);
        assert!(
            t.since(mark).starts_with("[10 earlier bytes dropped]"),
            "{}",
            &t.since(mark)[..40]
        );
    }

    #[test]
    fn the_tail_keeps_the_last_bytes() {
        let mut t = Tail::default();
        t.push(b"abc");
        assert_eq!(t.text(), "abc");
        t.push(&vec![b'x'; STDERR_TAIL]);
        assert_eq!(t.bytes.len(), STDERR_TAIL);
        assert_eq!(t.dropped, 3);
        t.push(b"\xe9end");
        assert_eq!(t.bytes.len(), STDERR_TAIL);
        assert!(t.text().ends_with("x\u{fffd}end"), "{}", t.text());
        assert!(t.text().starts_with("[7 earlier bytes dropped]"));
    }
}
