//! Processes an implementation left behind after a case: SPEC.md `run.process-group` says a helper
//! call leaves nothing running, and every run checks it, for the reference and for any adapter.
//!
//! A process belongs to a case when its working directory lies inside the case root (helpers run
//! in their skill directory) or one of its arguments names a path inside it (the helper's real
//! path is passed to the interpreter). The runner's own process is never counted. Found
//! processes are killed, so that one leaking case cannot disturb the next.

use std::path::Path;
use std::time::{Duration, Instant};

/// A process left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Survivor {
    pub pid: i32,
    /// Why it belongs to the case: its working directory or an argument, relative to the root.
    pub where_: String,
    pub command: String,
}

impl std::fmt::Display for Survivor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} ({}), {}", self.pid, self.command, self.where_)
    }
}

/// How long processes the implementation has just killed may take to disappear.
const GRACE: Duration = Duration::from_millis(500);

/// The processes that belong to the case rooted at `root`, after a short grace for ones that are
/// already dying; the ones found are sent SIGKILL.
pub fn collect(root: &Path) -> Vec<Survivor> {
    let by = Instant::now() + GRACE;
    loop {
        let found = scan(root);
        if found.is_empty() || Instant::now() >= by {
            for s in &found {
                if let Some(pid) = rustix::process::Pid::from_raw(s.pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One look at the process table (Linux `/proc`; elsewhere nothing is found).
pub fn scan(root: &Path) -> Vec<Survivor> {
    let me = std::process::id().to_string();
    let root_text = root.to_string_lossy().into_owned();
    let inside = |p: &str| p == root_text || p.starts_with(&format!("{root_text}/"));
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == me || !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(pid) = name.parse::<i32>() else {
            continue;
        };
        let dir = entry.path();
        let args: Vec<String> = std::fs::read(dir.join("cmdline"))
            .unwrap_or_default()
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let cwd = std::fs::read_link(dir.join("cwd"))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let relative = |p: &str| {
            p.strip_prefix(&root_text)
                .map(|r| r.trim_start_matches('/').to_owned())
                .unwrap_or_default()
        };
        let where_ = if inside(&cwd) {
            format!("working in `{}`", relative(&cwd))
        } else if let Some(a) = args.iter().find(|a| inside(a)) {
            format!("running `{}`", relative(a))
        } else {
            continue;
        };
        let mut command = args.join(" ");
        if command.len() > 200 {
            let mut cut = 200;
            while !command.is_char_boundary(cut) {
                cut -= 1;
            }
            command.truncate(cut);
            command.push('…');
        }
        out.push(Survivor {
            pid,
            where_,
            command,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_working_in_the_root_is_found_and_killed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("skill")).unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(root.join("skill"))
            .spawn()
            .unwrap();
        // Until the child has changed directory it is not in the root yet.
        let by = Instant::now() + Duration::from_secs(5);
        while scan(&root).is_empty() && Instant::now() < by {
            std::thread::sleep(Duration::from_millis(10));
        }
        let found = collect(&root);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pid, child.id() as i32);
        assert_eq!(found[0].where_, "working in `skill`");
        let status = child.wait().unwrap();
        assert!(!status.success(), "the survivor was killed");
        assert!(scan(&root).is_empty());
    }
}
