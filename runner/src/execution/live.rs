//! What a run keeps alive outside its own process — adapter process groups and case roots
//! (temporary directories) — and how SIGINT/SIGTERM tear it down.
//!
//! Both live in one global registry. Adapter groups are spawned, and case roots created, while
//! the registry is locked ([`spawn_group`], [`create_root`]), so the signal thread, which takes
//! the same lock and keeps it until the process exits, sees every one of them: nothing can be
//! created behind its back. On a signal ([`install_signal_handlers`]) it sends SIGTERM to every
//! adapter group, waits up to [`SIGNAL_GRACE`] for their leaders, sends SIGKILL, removes every
//! case root, and exits with 128 + the signal number (130 for SIGINT, 143 for SIGTERM).

use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// How long the signal path lets adapter groups react to SIGTERM before SIGKILL.
pub const SIGNAL_GRACE: Duration = Duration::from_secs(1);

struct Live {
    /// Leader pids (= process group ids) of the adapters that may still have processes.
    groups: Vec<Pid>,
    /// Case roots that exist on disk.
    roots: Vec<PathBuf>,
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
    live.roots.push(dir.path().to_path_buf());
    Ok(dir)
}

/// The case root at `path` was removed.
pub fn forget_root(path: &Path) {
    lock().roots.retain(|p| p != path);
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
    for root in &roots {
        if let Err(e) = remove_tree(root) {
            left.push(format!("{}: {e}", root.display()));
        }
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

/// Removes the directory tree at `root`, whatever its depth, holding at most two descriptors
/// at a time and never following a symlink; directories are made writable first. Entries that
/// vanish meanwhile are fine.
pub fn remove_tree(root: &Path) -> io::Result<()> {
    let mut last = Ok(());
    // A few passes: something running may still add files while we remove them.
    for _ in 0..3 {
        last = remove_tree_once(root);
        match std::fs::symlink_metadata(root) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            _ => {}
        }
    }
    last.and(Err(io::Error::other("the directory is still there")))
}

fn remove_tree_once(root: &Path) -> io::Result<()> {
    use rustix::fs::{openat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags, CWD};
    use rustix::io::Errno;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let gone = |e: Errno| e == Errno::NOENT;
    let mut dir = match openat(CWD, root, flags, Mode::empty()) {
        Ok(d) => d,
        Err(e) if gone(e) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    // The names of the directories between `root` and `dir`.
    let mut names: Vec<std::ffi::CString> = Vec::new();
    loop {
        let _ = rustix::fs::fchmod(&dir, Mode::from_raw_mode(0o700));
        let mut subdir = None;
        for entry in Dir::read_from(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            if name.to_bytes() == b"." || name.to_bytes() == b".." {
                continue;
            }
            if entry.file_type() != FileType::Directory {
                match unlinkat(&dir, name, AtFlags::empty()) {
                    Ok(()) => continue,
                    Err(e) if gone(e) => continue,
                    Err(e) if e == Errno::ISDIR || e == Errno::PERM => {}
                    Err(e) => return Err(e.into()),
                }
            }
            subdir = Some(name.to_owned());
            break;
        }
        if let Some(name) = subdir {
            match openat(&dir, name.as_c_str(), flags, Mode::empty()) {
                Ok(child) => {
                    dir = child;
                    names.push(name);
                }
                Err(e) if gone(e) => {}
                Err(e) => return Err(e.into()),
            }
            continue;
        }
        // `dir` is empty: remove it from its parent.
        match names.pop() {
            Some(name) => {
                let parent = openat(&dir, c"..", flags, Mode::empty())?;
                match unlinkat(&parent, name.as_c_str(), AtFlags::REMOVEDIR) {
                    Ok(()) => {}
                    Err(e) if gone(e) => {}
                    Err(e) => return Err(e.into()),
                }
                dir = parent;
            }
            None => {
                drop(dir);
                return match std::fs::remove_dir(root) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    other => other,
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_deep_and_locked_trees() {
        let top = tempfile::tempdir().unwrap();
        let root = top.path().join("case");
        let mut p = root.clone();
        // Deeper than PATH_MAX allows to spell and than a descriptor per level would allow.
        std::fs::create_dir(&p).unwrap();
        let mut dir =
            rustix::fs::open(&p, rustix::fs::OFlags::DIRECTORY, rustix::fs::Mode::empty()).unwrap();
        for _ in 0..3000 {
            rustix::fs::mkdirat(&dir, "dddddddddd", rustix::fs::Mode::from_raw_mode(0o700))
                .unwrap();
            dir = rustix::fs::openat(
                &dir,
                "dddddddddd",
                rustix::fs::OFlags::DIRECTORY,
                rustix::fs::Mode::empty(),
            )
            .unwrap();
        }
        drop(dir);
        p.push("locked");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("f"), b"x").unwrap();
        std::os::unix::fs::symlink("/", p.join("link")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
        remove_tree(&root).unwrap();
        assert!(std::fs::symlink_metadata(&root).is_err());
        // Already gone is fine.
        remove_tree(&root).unwrap();
    }
}
