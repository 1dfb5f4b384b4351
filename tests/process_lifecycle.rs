//! Helper lifecycle, observed from outside: an output flood of gigabytes is cut at the cap with
//! bounded memory, the helper's whole tree dies on every ending — also descendants that left its
//! process group or session, or joined the runtime's own group — nothing is left in the process
//! table, the runtime's own group is never signalled, every wait is bounded, and the helper starts
//! in the directory it was given as a descriptor even when the path was swapped for a symlink.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use skillspec_reference::process::{run_limited, Ending, Finished, HelperCommand, SpawnError};

const CAP: usize = 262_144;

fn sh(script: &str) -> HelperCommand {
    let mut c = HelperCommand::new("/bin/sh");
    c.arg("-c").arg(script).env("PATH", "/usr/bin:/bin");
    c
}

fn run(command: HelperCommand, input: &[u8], timeout: Duration) -> Result<Finished, SpawnError> {
    run_limited(&command, input, timeout, CAP)
}

/// The real Python interpreter behind `python3`.
fn python() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; sys.stdout.write(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8(out.stdout).unwrap())
}

fn py(code: &str, args: &[&str]) -> HelperCommand {
    let mut c = HelperCommand::new(python());
    c.arg("-c").arg(code).args(args);
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
        let done = run(sh(script), b"", Duration::from_secs(60)).unwrap();
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
    let ok = run(
        sh("head -c 131072 /dev/zero; head -c 131072 /dev/zero >&2"),
        b"",
        Duration::from_secs(20),
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
    let over = run(
        sh("head -c 131072 /dev/zero; head -c 131073 /dev/zero >&2"),
        b"",
        Duration::from_secs(20),
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
            run(sh(&script), b"", Duration::from_millis(500)).unwrap()
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
    let done = run(sh("echo $$"), b"", Duration::from_secs(10)).unwrap();
    let pid = String::from_utf8_lossy(&done.stdout).trim().to_owned();
    assert!(!pid.is_empty());
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "pid {pid} is still in the process table (zombie)"
    );
}

/// Kills whatever still carries `token` (so a failing test leaves nothing behind) and returns
/// what it found.
fn survivors(token: &str) -> Vec<String> {
    let left = processes_with(token);
    for line in &left {
        if let Some(pid) = line.split(':').next().and_then(|p| p.parse::<i32>().ok()) {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
    left
}

/// The ways a descendant can leave the helper's process group or session, as helper programs
/// that start a long-lived descendant carrying `TOKEN` in its command line. The descendant creates
/// `ready` in the working directory once it has escaped, and the helper waits for that before it
/// goes on, so every run really escapes before the helper ends. `RUNTIME_PGID` is this process's
/// group.
const ESCAPES: [(&str, &str); 7] = [
    ("setsid", "setsid sh -c ': > ready; sleep 1000' TOKEN &"),
    ("double fork", "(sh -c ': > ready; sleep 1000' TOKEN &)"),
    (
        "stopped descendant",
        "sh -c ': > ready; kill -STOP $$; sleep 1000' TOKEN &",
    ),
    (
        "child in a new group",
        "python:import os\nif os.fork() == 0:\n    os.setpgid(0, 0)\n    os.execv('/bin/sh', ['sh', '-c', ': > ready; sleep 1000', 'TOKEN'])",
    ),
    (
        "helper joins its parent's group",
        "python:import os\nos.setpgid(0, os.getpgid(os.getppid()))\nif os.fork() == 0:\n    os.execv('/bin/sh', ['sh', '-c', ': > ready; sleep 1000', 'TOKEN'])",
    ),
    (
        "helper joins the runtime's group",
        "python:import os\nos.setpgid(0, RUNTIME_PGID)\nif os.fork() == 0:\n    os.execv('/bin/sh', ['sh', '-c', ': > ready; sleep 1000', 'TOKEN'])",
    ),
    (
        "helper forks into a new group and joins it",
        "python:import os\nr, w = os.pipe()\npid = os.fork()\nif pid == 0:\n    os.setpgid(0, 0)\n    os.write(w, b'x')\n    os.execv('/bin/sh', ['sh', '-c', ': > ready; sleep 1000', 'TOKEN'])\nos.read(r, 1)\nos.setpgid(0, pid)",
    ),
];

/// Waits for `ready`, says `started`, then ends or keeps running.
const SH_TAIL: &str = "until [ -e ready ]; do sleep 0.01; done; echo started";
const PY_TAIL: &str = "\nimport time\nwhile not os.path.exists('ready'):\n    time.sleep(0.01)\nprint('started', flush=True)";

#[test]
fn no_descendant_survives_whatever_it_did() {
    let runtime_group = rustix::process::getpgrp().as_raw_nonzero().get();
    for (label, program) in ESCAPES {
        for ending in ["exit", "timeout"] {
            let token = format!(
                "skillspec-escape-{}-{}-{}",
                label.replace(' ', "-").replace('\'', ""),
                ending,
                std::process::id()
            );
            let program = program
                .replace("TOKEN", &token)
                .replace("RUNTIME_PGID", &runtime_group.to_string());
            let keep_running = if ending == "exit" { "" } else { "\nsleep 1000" };
            let mut command = match program.strip_prefix("python:") {
                Some(code) => py(
                    &format!(
                        "{code}{PY_TAIL}{}",
                        if ending == "exit" {
                            ""
                        } else {
                            "\ntime.sleep(1000)"
                        }
                    ),
                    &[],
                ),
                None => sh(&format!("{program}\n{SH_TAIL}{keep_running}")),
            };
            let workdir = tempfile::tempdir().unwrap();
            command.current_dir_fd(
                rustix::fs::open(
                    workdir.path(),
                    rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
                    rustix::fs::Mode::empty(),
                )
                .unwrap(),
            );
            let timeout = Duration::from_millis(if ending == "exit" { 20_000 } else { 1500 });
            let started = Instant::now();
            let done = within(Duration::from_secs(30), move || {
                run(command, b"", timeout).unwrap()
            });
            let took = started.elapsed();
            let left = survivors(&token);
            assert!(left.is_empty(), "{label}, {ending}: survivors {left:?}");
            assert_eq!(
                String::from_utf8_lossy(&done.stdout).lines().next(),
                Some("started"),
                "{label}, {ending}: {done:?}"
            );
            match ending {
                "exit" => {
                    assert_eq!(
                        done.ending,
                        Ending::Exited {
                            code: Some(0),
                            signal: None
                        },
                        "{label}"
                    );
                    assert!(took < Duration::from_secs(5), "{label}: took {took:?}");
                }
                _ => {
                    assert_eq!(done.ending, Ending::TimedOut, "{label}");
                    assert!(
                        took < timeout + Duration::from_secs(3),
                        "{label}: a {timeout:?} timeout took {took:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_helper_starts_in_the_directory_it_was_given_even_after_a_swap() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let skill = base.join("skill");
    let outside = base.join("outside");
    std::fs::create_dir(&skill).unwrap();
    std::fs::create_dir(&outside).unwrap();
    let fd: OwnedFd = rustix::fs::open(
        &skill,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    // The race: after the checked walk opened the directory, its path now leads elsewhere.
    std::fs::rename(&skill, base.join("moved")).unwrap();
    std::os::unix::fs::symlink(&outside, &skill).unwrap();
    let mut command = sh("pwd -P; echo written > marker");
    command.current_dir_fd(fd);
    let done = run(command, b"", Duration::from_secs(10)).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        format!("{}\n", base.join("moved").display())
    );
    assert!(base.join("moved/marker").exists());
    assert!(!outside.join("marker").exists());
}

#[test]
fn the_helper_gets_only_the_three_standard_descriptors() {
    // A descriptor without close-on-exec, as launchers leave them (seen: a pipe and /dev/null).
    let leaked = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    let code = "import os\nfds = []\nfor fd in range(3, 4096):\n    try:\n        os.fstat(fd)\n        fds.append(fd)\n    except OSError:\n        pass\nprint(fds)";
    let done = run(py(code, &[]), b"", Duration::from_secs(10)).unwrap();
    assert_eq!(String::from_utf8_lossy(&done.stdout), "[]\n", "{done:?}");
    drop(leaked);
}

#[test]
fn concurrent_helpers_do_not_hold_each_others_pipes() {
    // Each supervisor is forked while other threads hold other helpers' pipes; a copy kept open
    // would keep a `cat` from ever seeing the end of its input.
    let threads: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let input = format!("input {i}");
                let done = run(sh("cat"), input.as_bytes(), Duration::from_secs(10)).unwrap();
                (input, done)
            })
        })
        .collect();
    for t in threads {
        let (input, done) = t.join().unwrap();
        assert_eq!(
            done.ending,
            Ending::Exited {
                code: Some(0),
                signal: None
            }
        );
        assert_eq!(String::from_utf8_lossy(&done.stdout), input);
    }
}

#[test]
fn stdin_receives_the_input_bytes() {
    let done = run(sh("cat"), b"verified bytes", Duration::from_secs(10)).unwrap();
    assert_eq!(done.stdout, b"verified bytes");
}

#[test]
fn a_missing_interpreter_is_a_spawn_error() {
    let e = run(
        HelperCommand::new("/nonexistent/python3"),
        b"",
        Duration::from_secs(1),
    )
    .unwrap_err();
    assert!(e.is_exec(), "{e}");
}
