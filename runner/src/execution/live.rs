//! What a run keeps alive outside its own process — adapter process groups and case roots
//! (temporary directories) — and how SIGINT/SIGTERM tear it down.
//!
//! Both live in one global registry. Adapter groups are spawned, and case roots created, while
//! the registry is locked ([`spawn_group`], [`create_root`]), so the signal thread, which takes
//! the same lock and keeps it until the process exits, sees every one of them: nothing can be
//! created behind its back. On a signal ([`install_signal_handlers`]) it sends SIGTERM to every
//! adapter group, waits up to [`SIGNAL_GRACE`] for their leaders, sends SIGKILL, then stops the
//! run's own fixture work and waits for it to return ([`fixture::guard::stop_and_wait`]: the
//! signal path and a worker never change the same tree at once), removes every case root
//! ([`fixture::remove_root_alone`]: never anything outside it, whatever the depth), and exits
//! with 128 + the signal number (130 for SIGINT, 143 for SIGTERM).

use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use crate::cases::fixture::{self, Identity};

/// How long the signal path lets adapter groups react to SIGTERM before SIGKILL.
pub const SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// How long the signal path waits for the run's fixture work to notice the stop and return;
/// every loop of that work checks the stop flag, so this is reached only when a system call
/// hangs. The roots are then left on disk (and named), never removed under a running worker.
pub const FIXTURE_PATIENCE: Duration = Duration::from_secs(10);

struct Live {
    /// Leader pids (= process group ids) of the adapters that may still have processes.
    groups: Vec<Pid>,
    /// Case roots that exist on disk, with the identity each had when it was made.
    roots: Vec<(PathBuf, Identity)>,
    /// A signal arrived: nothing new may be created.
    terminating: bool,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    groups: Vec::new(),
    roots: Vec::new(),
    terminating: false,
});

fn lock() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "the run is being interrupted")
}

/// Spawns `command` (which must start its own process group) and registers that group.
pub fn spawn_group(command: &mut Command) -> io::Result<Child> {
    let mut live = lock();
    if live.terminating {
        return Err(interrupted());
    }
    let child = command.spawn()?;
    live.groups.push(Pid::from_child(&child));
    Ok(child)
}

/// Starts an adapter command line under `/bin/sh -c`, with piped stdin, stdout and stderr, in a
/// process group of its own, and registers that group (what `run` and `smoke` both start).
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
    lock().groups.retain(|p| *p != pid);
}

/// Creates a case root with `create` and registers its path.
pub fn create_root(
    create: impl FnOnce() -> io::Result<tempfile::TempDir>,
) -> io::Result<tempfile::TempDir> {
    let mut live = lock();
    if live.terminating {
        return Err(interrupted());
    }
    let dir = create()?;
    let id = Identity::at(dir.path())?;
    live.roots.push((dir.path().to_path_buf(), id));
    Ok(dir)
}

/// The case root at `path` was removed.
pub fn forget_root(path: &Path) {
    lock().roots.retain(|(p, _)| p != path);
}

/// Removes the registered case root `dir` (with everything in it, never anything outside it)
/// and forgets it. When a signal is being handled the removal stops and the signal path removes
/// the root instead; this then waits until the process exits.
pub fn remove_root(dir: tempfile::TempDir) -> io::Result<()> {
    // Removed here, not by `TempDir`'s own drop, which knows neither the stop nor the depth.
    let path = dir.keep();
    let id = lock()
        .roots
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, id)| *id);
    let removed = fixture::remove_root(&path, id);
    forget_root(&path);
    removed
}

/// Starts a thread that turns SIGINT and SIGTERM into [`terminate`].
pub fn install_signal_handlers() -> io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                terminate(signal);
            }
        })?;
    Ok(())
}

/// Stops every registered adapter group, removes every registered case root and exits with
/// 128 + `signal`.
pub fn terminate(signal: i32) -> ! {
    // Held until the process exits: the run cannot spawn or create anything more.
    let mut live = lock();
    live.terminating = true;
    let groups = std::mem::take(&mut live.groups);
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
    let roots = std::mem::take(&mut live.roots);
    let mut left = Vec::new();
    match fixture::guard::stop_and_wait(FIXTURE_PATIENCE) {
        Some(alone) => {
            for (root, id) in &roots {
                if let Err(e) = fixture::remove_root_alone(root, Some(*id), &alone) {
                    left.push(format!("{}: {e}", root.display()));
                }
            }
        }
        None => left.extend(roots.iter().map(|(root, _)| {
            format!(
                "{}: the run's fixture work did not stop within {} s",
                root.display(),
                FIXTURE_PATIENCE.as_secs()
            )
        })),
    }
    let name = if signal == signal_hook::consts::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    eprintln!(
        "\nskillspec: interrupted by {name}: stopped {} adapter process group(s) and removed {} case director{}",
        groups.len(),
        roots.len() - left.len(),
        if roots.len() - left.len() == 1 { "y" } else { "ies" }
    );
    for l in &left {
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
