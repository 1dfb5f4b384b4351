//! The adapter process groups a run keeps alive outside its own process, and how SIGINT/SIGTERM
//! tear them down.
//!
//! Adapter groups are spawned while the registry is locked ([`spawn_group`]), so the signal
//! thread, which takes the same lock and keeps it until the process exits, sees every one of
//! them: nothing can be spawned behind its back. On a signal ([`install_signal_handlers`]) it
//! sends SIGTERM to every adapter group, waits up to [`SIGNAL_GRACE`] for their leaders, sends
//! SIGKILL, then runs the teardown a higher layer gave it (the run's case roots are removed
//! there: `execution::roots`), and exits with 128 + the signal number (130 for SIGINT, 143 for
//! SIGTERM).

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// How long the signal path lets adapter groups react to SIGTERM before SIGKILL.
pub const SIGNAL_GRACE: Duration = Duration::from_secs(1);

struct Groups {
    /// Leader pids (= process group ids) of the adapters that may still have processes.
    leaders: Vec<Pid>,
    /// A signal arrived: nothing new may be spawned.
    terminating: bool,
}

static GROUPS: Mutex<Groups> = Mutex::new(Groups {
    leaders: Vec::new(),
    terminating: false,
});

fn lock() -> MutexGuard<'static, Groups> {
    GROUPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The error of anything started while a signal is being handled.
pub fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "the run is being interrupted")
}

/// Spawns `command` (which must start its own process group) and registers that group.
pub fn spawn_group(command: &mut Command) -> io::Result<Child> {
    let mut live = lock();
    if live.terminating {
        return Err(interrupted());
    }
    let child = command.spawn()?;
    live.leaders.push(Pid::from_child(&child));
    Ok(child)
}

/// Starts an adapter command line under `/bin/sh -c`, with piped stdin, stdout and stderr, in a
/// process group of its own, and registers that group.
pub fn spawn_shell_group(command_line: &str) -> io::Result<Child> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command_line)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    spawn_group(&mut cmd)
}

/// The group led by `pid` is gone (its leader reaped, the rest killed).
pub fn forget_group(pid: Pid) {
    lock().leaders.retain(|p| *p != pid);
}

/// What the teardown of a higher layer did on a signal: how many things it removed (named in
/// the message as `what`, singular and plural) and what it could not remove.
#[derive(Debug, Default)]
pub struct Teardown {
    pub removed: usize,
    pub left: Vec<String>,
}

/// Starts a thread that turns SIGINT and SIGTERM into [`terminate`] with `teardown`.
pub fn install_signal_handlers(teardown: fn() -> Teardown) -> io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                terminate(signal, teardown);
            }
        })?;
    Ok(())
}

/// Stops every registered adapter group, runs `teardown` (which removes the case roots) and
/// exits with 128 + `signal`.
pub fn terminate(signal: i32, teardown: fn() -> Teardown) -> ! {
    // Held until the process exits: the run cannot spawn anything more.
    let mut live = lock();
    live.terminating = true;
    let groups = std::mem::take(&mut live.leaders);
    for pid in &groups {
        let _ = rustix::process::kill_process_group(*pid, Signal::TERM);
    }
    let deadline = Instant::now() + SIGNAL_GRACE;
    for pid in &groups {
        while !leader_exited(*pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // The leaders are not reaped here (the main thread owns them), so each group id still
    // belongs to its group and cannot name another one.
    for pid in &groups {
        let _ = rustix::process::kill_process_group(*pid, Signal::KILL);
    }
    let done = teardown();
    let name = if signal == signal_hook::consts::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    eprintln!(
        "\nskillspec: interrupted by {name}: stopped {} adapter process group(s) and removed {} case director{}",
        groups.len(),
        done.removed,
        if done.removed == 1 { "y" } else { "ies" }
    );
    for l in &done.left {
        eprintln!("skillspec: could not remove {l}");
    }
    std::process::exit(128 + signal);
}

/// Whether the child `pid` has exited (without reaping it). A pid that is no longer our child
/// (already reaped) counts as exited.
pub fn leader_exited(pid: Pid) -> bool {
    use rustix::process::{waitid, WaitId, WaitIdOptions};
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    !matches!(waitid(WaitId::Pid(pid), options), Ok(None))
}
