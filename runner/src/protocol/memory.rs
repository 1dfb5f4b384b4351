//! What an adapter's processes hold in memory, for the runner's memory bound (`run
//! --memory-bound`; SPEC.md, "Limits of the runner"): the resident set of the adapter's
//! leader and of every process below it, read from `/proc`.
//!
//! The walk follows `/proc/PID/task/TID/children` from the leader, so it costs a few small reads
//! per adapter process, not a scan of every process on the machine; a process that left the tree
//! (double-forked, re-parented) is not counted. Resident pages shared between processes are
//! counted in each (the shell and the runtime share a few libraries): the sum errs high by a few
//! megabytes, never low. Where `/proc` cannot be read, nothing is measured and no bound applies.

use rustix::process::Pid;

/// The most processes one measurement visits (a fork bomb is bounded by the walk, not by this
/// module's memory).
const MAX_PROCESSES: usize = 4096;

/// The resident bytes of `leader` and its descendants, or `None` when `/proc` says nothing of
/// `leader` (it is gone, or there is no `/proc`).
pub fn resident_bytes(leader: Pid) -> Option<u64> {
    let first = leader.as_raw_nonzero().get();
    let mut total = resident_of(first)?;
    let mut queue = children_of(first);
    let mut visited = 1;
    while let Some(pid) = queue.pop() {
        if visited >= MAX_PROCESSES {
            break;
        }
        visited += 1;
        total = total.saturating_add(resident_of(pid).unwrap_or(0));
        queue.extend(children_of(pid));
    }
    Some(total)
}

/// `VmRSS` of `/proc/PID/status`, in bytes (`None`: no such process, or a kernel thread).
fn resident_of(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| {
        let kib = line.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?;
        kib.trim()
            .parse::<u64>()
            .ok()
            .map(|k| k.saturating_mul(1024))
    })
}

/// The children of every thread of `pid` (a thread that forked is their parent).
fn children_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten().take(MAX_PROCESSES) {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measurement sees a child's memory: a `sh` whose child holds 64 MiB more than the
    /// shell alone.
    #[test]
    fn a_descendants_memory_is_counted() {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        // `b'x' * n` writes every page (a zeroed bytearray may stay unbacked).
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("python3 -c 'import sys, time; b = b\"x\" * (64 << 20); sys.stdout.write(\"ready\\n\"); sys.stdout.flush(); time.sleep(30)'; exit 0")
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("sh runs");
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().expect("a pipe"));
        std::io::BufRead::read_line(&mut out, &mut line).expect("python says ready");
        let pid = Pid::from_child(&child);
        let measured = resident_bytes(pid);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        let _ = child.wait();
        let measured = measured.expect("/proc knows the shell");
        assert!(measured >= 64 << 20, "{measured} bytes");
        assert!(measured < 1 << 30, "{measured} bytes");
    }
}
