//! Helper lifecycle, observed from outside: an output flood of gigabytes is cut at the cap with
//! bounded memory, the whole process group dies on every ending, nothing is left in the process
//! table, and a descendant that holds the pipes cannot make the runtime hang.

use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use skillspec_reference::process::{run_limited, Ending};

const CAP: usize = 262_144;

fn sh(script: &str) -> Command {
    let mut c = Command::new("/bin/sh");
    c.arg("-c").arg(script);
    c
}

/// Peak resident set size of this process, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Processes whose command line contains `token`.
fn processes_with(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(token) {
                found.push(format!("{}: {cmd}", name.to_string_lossy()));
            }
        }
    }
    found
}

/// Runs `f` on a thread and fails if it does not return within `limit` (a hang, not a speed test).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).expect("the runtime hung")
}

#[test]
fn gigabyte_floods_are_cut_at_the_cap_with_bounded_memory() {
    let before = peak_rss_kib();
    for script in [
        "head -c 8589934592 /dev/zero",
        "head -c 4294967296 /dev/zero >&2",
        "(head -c 4294967296 /dev/zero &) ; head -c 4294967296 /dev/zero >&2",
    ] {
        let done = run_limited(sh(script), Vec::new(), Duration::from_secs(60), CAP).unwrap();
        assert_eq!(done.ending, Ending::OutputLimit, "{script}");
        assert!(
            done.stdout.len() + done.stderr.len() <= CAP + 1,
            "{script}: kept more than the cap"
        );
    }
    let grown = peak_rss_kib().saturating_sub(before);
    eprintln!("peak RSS grew by {grown} KiB while cutting 20 GiB of offered output");
    assert!(grown < 16 * 1024, "peak RSS grew by {grown} KiB");
}

#[test]
fn exactly_the_cap_passes_and_one_more_byte_does_not() {
    let ok = run_limited(
        sh("head -c 131072 /dev/zero; head -c 131072 /dev/zero >&2"),
        Vec::new(),
        Duration::from_secs(20),
        CAP,
    )
    .unwrap();
    assert_eq!(
        ok.ending,
        Ending::Exited {
            code: Some(0),
            signal: None
        }
    );
    assert_eq!((ok.stdout.len(), ok.stderr.len()), (131072, 131072));
    let over = run_limited(
        sh("head -c 131072 /dev/zero; head -c 131073 /dev/zero >&2"),
        Vec::new(),
        Duration::from_secs(20),
        CAP,
    )
    .unwrap();
    assert_eq!(over.ending, Ending::OutputLimit);
}

#[test]
fn no_descendant_survives_any_ending() {
    for (label, script, expected) in [
        ("exit", "sleep 1000 & sleep 1000 & exit 0", "exit"),
        ("timeout", "sleep 1000 & sleep 1000", "timeout"),
        ("flood", "sleep 1000 & head -c 1000000 /dev/zero", "limit"),
        ("failure", "sleep 1000 & exit 3", "exit"),
    ] {
        let token = format!("skillspec-lifecycle-{label}-{}", std::process::id());
        // The token travels in $0 of each sleeping shell so the process table can be searched.
        let script = script.replace("sleep 1000", &format!("sh -c 'sleep 1000' {token}"));
        let done = within(Duration::from_secs(30), move || {
            run_limited(sh(&script), Vec::new(), Duration::from_millis(500), CAP).unwrap()
        });
        match expected {
            "timeout" => assert_eq!(done.ending, Ending::TimedOut),
            "limit" => assert_eq!(done.ending, Ending::OutputLimit),
            _ => assert!(matches!(done.ending, Ending::Exited { .. })),
        }
        // SIGKILL is delivered asynchronously; give the kernel a moment to remove them.
        let mut left = processes_with(&token);
        for _ in 0..100 {
            if left.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            left = processes_with(&token);
        }
        assert!(left.is_empty(), "{label}: survivors {left:?}");
    }
}

#[test]
fn the_child_is_reaped() {
    let done = run_limited(sh("echo $$"), Vec::new(), Duration::from_secs(10), CAP).unwrap();
    let pid = String::from_utf8_lossy(&done.stdout).trim().to_owned();
    assert!(!pid.is_empty());
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "pid {pid} is still in the process table (zombie)"
    );
}

#[test]
fn an_escaped_descendant_holding_the_pipes_cannot_hang_the_runtime() {
    let token = format!("skillspec-escape-{}", std::process::id());
    let script = format!("setsid sh -c 'sleep 1000' {token} & echo started");
    let done = within(Duration::from_secs(20), move || {
        run_limited(sh(&script), Vec::new(), Duration::from_secs(10), CAP).unwrap()
    });
    assert_eq!(
        done.ending,
        Ending::Exited {
            code: Some(0),
            signal: None
        }
    );
    assert_eq!(String::from_utf8_lossy(&done.stdout), "started\n");
    // It escaped the group, as SPEC.md says it can; clean it up ourselves.
    for line in processes_with(&token) {
        if let Some(pid) = line.split(':').next().and_then(|p| p.parse::<i32>().ok()) {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
    }
}

#[test]
fn stdin_receives_the_input_bytes() {
    let done = run_limited(
        sh("cat"),
        b"verified bytes".to_vec(),
        Duration::from_secs(10),
        CAP,
    )
    .unwrap();
    assert_eq!(done.stdout, b"verified bytes");
}

#[test]
fn a_missing_interpreter_is_a_spawn_error() {
    assert!(run_limited(
        Command::new("/nonexistent/python3"),
        Vec::new(),
        Duration::from_secs(1),
        CAP
    )
    .is_err());
}
