//! Running a helper process under the lifecycle rules of SPEC.md `run.process-group`,
//! `run.timeout` and `run.output-cap`.
//!
//! The child runs in a new process group. The parent writes the helper bytes to its stdin from a
//! thread, and reads stdout and stderr together with `poll` into two buffers whose combined size
//! may not pass the cap (at most `cap + 64 KiB` is ever held). Exit is noticed through a pidfd
//! (or, where pidfds are missing, by polling `waitid(WNOWAIT)`), which does not reap the child:
//! the group is killed while the child is still a zombie, so its pid — the group id — cannot
//! have been reused, and only then is the child reaped. After the group is killed the pipes are
//! drained for a short grace period; a descendant that left the group (`setsid`) and keeps them
//! open cannot make the runtime hang.

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};

/// How long pipes are drained after the group was killed.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// How often exit is checked where pidfds are unavailable.
const EXIT_POLL: Duration = Duration::from_millis(5);

/// What ended the helper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The helper exited by itself: its exit code, or the signal that killed it.
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// The time limit passed; the group was killed.
    TimedOut,
    /// stdout and stderr together passed the cap; the group was killed.
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
pub struct SpawnError(pub std::io::Error);

/// Starts `command` in its own process group, feeds `input` on stdin, and supervises it.
pub fn run_limited(
    mut command: Command,
    input: Vec<u8>,
    timeout: Duration,
    cap: usize,
) -> Result<Finished, SpawnError> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().map_err(SpawnError)?;
    let deadline = Instant::now() + timeout;
    let pid = child.id();
    let pgid = i32::try_from(pid).ok().and_then(Pid::from_raw);

    // stdin: written from a thread so a helper that never reads cannot block us; closed after.
    let writer = child.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });

    let stdout: Option<OwnedFd> = child.stdout.take().map(OwnedFd::from);
    let stderr: Option<OwnedFd> = child.stderr.take().map(OwnedFd::from);
    let pidfd = pgid
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());

    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut pipes = [stdout, stderr];
    let mut exited = false;
    let ending = loop {
        let now = Instant::now();
        if now >= deadline {
            break Ending::TimedOut;
        }
        if out.len() + err.len() > cap {
            break Ending::OutputLimit;
        }
        if !exited {
            exited = match &pidfd {
                Some(_) => false,
                None => has_exited(pid),
            };
        }
        if exited {
            break Ending::Exited {
                code: None,
                signal: None,
            };
        }
        let wait = if pidfd.is_some() {
            deadline - now
        } else {
            (deadline - now).min(EXIT_POLL)
        };
        let (o, e) = (&mut out, &mut err);
        match pump(&mut pipes, pidfd.as_ref(), wait, [o, e], cap) {
            PumpResult::ChildExited => exited = true,
            PumpResult::Progress => {}
        }
    };
    // Kill the group while the child is unreaped (its pid, the group id, cannot be reused yet).
    if let Some(p) = pgid {
        let _ = rustix::process::kill_process_group(p, Signal::KILL);
    }
    // Collect what the killed group left in the pipes, briefly.
    let grace_end = Instant::now() + DRAIN_GRACE;
    while pipes.iter().any(Option::is_some) && out.len() + err.len() <= cap {
        let now = Instant::now();
        if now >= grace_end {
            break;
        }
        let (o, e) = (&mut out, &mut err);
        pump(&mut pipes, None, grace_end - now, [o, e], cap);
    }
    drop(pipes);
    let status = reap(&mut child);
    if let Some(w) = writer {
        let _ = w.join();
    }
    let ending = match ending {
        Ending::Exited { .. } if out.len() + err.len() > cap => Ending::OutputLimit,
        Ending::Exited { .. } => Ending::Exited {
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
        },
        other => other,
    };
    Ok(Finished {
        ending,
        stdout: out,
        stderr: err,
    })
}

fn reap(child: &mut Child) -> Option<std::process::ExitStatus> {
    child.wait().ok()
}

/// Whether the child has exited, without reaping it.
fn has_exited(pid: u32) -> bool {
    let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return true;
    };
    matches!(
        rustix::process::waitid(
            rustix::process::WaitId::Pid(p),
            rustix::process::WaitIdOptions::EXITED
                | rustix::process::WaitIdOptions::NOHANG
                | rustix::process::WaitIdOptions::NOWAIT,
        ),
        Ok(Some(_))
    )
}

enum PumpResult {
    ChildExited,
    Progress,
}

/// Waits up to `wait` for output or exit, and reads what is there (never more than `cap + 1`
/// bytes in all). A pipe at end of file is closed and set to `None`.
fn pump(
    pipes: &mut [Option<OwnedFd>; 2],
    pidfd: Option<&OwnedFd>,
    wait: Duration,
    bufs: [&mut Vec<u8>; 2],
    cap: usize,
) -> PumpResult {
    let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(3);
    let mut which: Vec<usize> = Vec::with_capacity(3);
    for (i, p) in pipes.iter().enumerate() {
        if let Some(fd) = p {
            fds.push(PollFd::from_borrowed_fd(fd.as_fd(), PollFlags::IN));
            which.push(i);
        }
    }
    if let Some(pfd) = pidfd {
        fds.push(PollFd::from_borrowed_fd(pfd.as_fd(), PollFlags::IN));
        which.push(2);
    }
    if fds.is_empty() {
        std::thread::sleep(wait.min(EXIT_POLL));
        return PumpResult::Progress;
    }
    let ts = Timespec {
        tv_sec: wait.as_secs() as i64,
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    if poll(&mut fds, Some(&ts)).is_err() {
        return PumpResult::Progress;
    }
    let ready: Vec<(usize, PollFlags)> = fds
        .iter()
        .zip(&which)
        .map(|(f, w)| (*w, f.revents()))
        .collect();
    drop(fds);
    let [out, err] = bufs;
    let mut result = PumpResult::Progress;
    let mut chunk = [0u8; 64 * 1024];
    for (w, revents) in ready {
        if revents.is_empty() {
            continue;
        }
        if w == 2 {
            result = PumpResult::ChildExited;
            continue;
        }
        let Some(fd) = &pipes[w] else { continue };
        let room = (cap + 1)
            .saturating_sub(out.len() + err.len())
            .min(chunk.len());
        if room == 0 {
            continue;
        }
        match rustix::io::read(fd, &mut chunk[..room]) {
            Ok(0) => pipes[w] = None,
            Ok(n) => {
                let buf = if w == 0 { &mut *out } else { &mut *err };
                buf.extend_from_slice(&chunk[..n]);
            }
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => {}
            Err(_) => pipes[w] = None,
        }
    }
    result
}
