//! The case roots (temporary directories) a run keeps on disk, and their removal on
//! SIGINT/SIGTERM.
//!
//! Case roots are created while the registry is locked ([`create_root`]), so the signal path,
//! which takes the same lock and keeps it until the process exits, sees every one of them. On a
//! signal ([`install_signal_handlers`]: the adapter groups are stopped first, by
//! [`crate::protocol::live`]) it stops the run's own fixture work and waits for it to return
//! ([`fixture::guard::stop_and_wait`]: the signal path and a worker never change the same tree at
//! once), then removes every case root ([`fixture::remove_root_alone`]: never anything outside
//! it, whatever the depth).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::cases::fixture::{self, Identity};
use crate::protocol::live::{self, Teardown};

/// How long the signal path waits for the run's fixture work to notice the stop and return;
/// every loop of that work checks the stop flag, so this is reached only when a system call
/// hangs. The roots are then left on disk (and named), never removed under a running worker.
pub const FIXTURE_PATIENCE: Duration = Duration::from_secs(10);

struct Roots {
    /// Case roots that exist on disk, with the identity each had when it was made.
    roots: Vec<(PathBuf, Identity)>,
    /// A signal arrived: nothing new may be created.
    terminating: bool,
}

static ROOTS: Mutex<Roots> = Mutex::new(Roots {
    roots: Vec::new(),
    terminating: false,
});

fn lock() -> MutexGuard<'static, Roots> {
    ROOTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Creates a case root with `create` and registers its path.
pub fn create_root(
    create: impl FnOnce() -> io::Result<tempfile::TempDir>,
) -> io::Result<tempfile::TempDir> {
    let mut roots = lock();
    if roots.terminating {
        return Err(live::interrupted());
    }
    let dir = create()?;
    let id = Identity::at(dir.path())?;
    roots.roots.push((dir.path().to_path_buf(), id));
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

/// Starts the thread that turns SIGINT and SIGTERM into stopping every adapter group, removing
/// every case root and exiting with 128 + the signal number.
pub fn install_signal_handlers() -> io::Result<()> {
    live::install_signal_handlers(teardown)
}

/// The signal path's part here: every registered case root removed. The registry stays locked
/// until the process exits, so the run cannot create anything more.
fn teardown() -> Teardown {
    let mut guard = lock();
    guard.terminating = true;
    let roots = std::mem::take(&mut guard.roots);
    // Never unlocked: the process exits right after this returns.
    std::mem::forget(guard);
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
    Teardown {
        removed: roots.len() - left.len(),
        left,
    }
}
