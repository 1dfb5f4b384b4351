//! Starting a helper under its own supervisor process. This is the only module of the reference
//! with `unsafe` code: `fork` and what a forked child of a multi-threaded process may do.
//!
//! The runtime forks a *supervisor* S. S leaves the runtime's process group (its own group), makes
//! itself a child subreaper (Linux, `PR_SET_CHILD_SUBREAPER`), keeps exactly the descriptors it
//! needs, and forks the *helper* H. H starts its own process group, enters the skill directory
//! through the descriptor the checked walk produced (`fchdir`), gets the pipes as 0–2, closes
//! every other descriptor and executes the interpreter.
//!
//! Every descendant of H that is orphaned — however it left H's process group or session —
//! is re-parented to S, never to init. S waits until H exits or the runtime asks it to stop (a
//! byte on the control pipe, or the pipe's end of file when the runtime is gone), then kills H,
//! H's process group, and every child it has, repeatedly, until it has no child left; then it
//! reports H's wait status on the report pipe and exits. S never signals the runtime's group.
//!
//! Report records are 8 bytes, `[tag: u32 LE][value: i32 LE]` (see [`Report`]); pipe writes of at
//! most `PIPE_BUF` bytes are atomic, so a record always arrives whole.
//!
//! # Why the `unsafe` is sound
//! After `fork` in a multi-threaded process, the child may only call async-signal-safe functions
//! until it executes or exits. The forked code below ([`supervise`], [`exec_helper`]) therefore
//! only performs raw system calls through `libc` on integers and on memory prepared before the
//! fork (C strings and pointer arrays in [`Prepared`], which the child's copy of the address space
//! still holds); it allocates nothing, takes no lock, touches no Rust runtime state, and never
//! returns: it ends in `execve` or `_exit`.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

/// Descriptor layout inside the supervisor (fixed so the forked code needs no bookkeeping).
const S_STDIN_R: RawFd = 3;
const S_STDOUT_W: RawFd = 4;
const S_STDERR_W: RawFd = 5;
const S_EXECERR_R: RawFd = 6;
const S_EXECERR_W: RawFd = 7;
const S_CONTROL_R: RawFd = 8;
const S_REPORT_W: RawFd = 9;
const S_CWD: RawFd = 10;
/// The first descriptor above the layout.
const S_FIRST_FREE: RawFd = 11;

/// How long the supervisor keeps killing and reaping before it reports anyway.
const KILL_LOOP_NANOS: i64 = 2_000_000_000;

/// What the supervisor reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// The helper runs with this pid.
    Started(i32),
    /// The helper ended with this raw wait status, and nothing of its tree is left.
    Ended(i32),
    /// The helper could not be started: the stage that failed and its `errno`.
    Failed(Stage, i32),
}

/// Where starting the helper failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The supervisor could not fork the helper.
    Fork,
    /// The helper could not enter the skill directory.
    Chdir,
    /// The helper could not set up its descriptors.
    Descriptors,
    /// `execve` failed (a missing or non-executable interpreter).
    Exec,
}

const TAG_STARTED: u32 = 1;
const TAG_ENDED: u32 = 2;
const TAG_FAILED: u32 = 3;

impl Stage {
    fn code(self) -> u32 {
        match self {
            Stage::Fork => 1,
            Stage::Chdir => 2,
            Stage::Descriptors => 3,
            Stage::Exec => 4,
        }
    }

    fn from_code(code: u32) -> Option<Stage> {
        [Stage::Fork, Stage::Chdir, Stage::Descriptors, Stage::Exec]
            .into_iter()
            .find(|s| s.code() == code)
    }
}

impl Report {
    /// Decodes one 8-byte record.
    pub fn decode(bytes: [u8; 8]) -> Option<Report> {
        let tag = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let value = i32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        match tag {
            TAG_STARTED => Some(Report::Started(value)),
            TAG_ENDED => Some(Report::Ended(value)),
            t if t >> 8 == TAG_FAILED => Some(Report::Failed(Stage::from_code(t & 0xff)?, value)),
            _ => None,
        }
    }
}

fn record(tag: u32, value: i32) -> [u8; 8] {
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&tag.to_le_bytes());
    out[4..].copy_from_slice(&value.to_le_bytes());
    out
}

/// Everything the forked code needs, prepared before the fork.
struct Prepared {
    program: CString,
    /// Keeps the strings `argv` points into alive.
    _args: Vec<CString>,
    _env: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

/// What to start: an interpreter, its arguments, its whole environment, its directory.
pub struct Spec<'a> {
    pub program: &'a OsStr,
    pub args: &'a [&'a OsStr],
    pub env: &'a [(&'a OsStr, &'a OsStr)],
    /// The directory to enter, as an open directory descriptor.
    pub cwd: Option<std::os::fd::BorrowedFd<'a>>,
    /// The helper's stderr is its stdout pipe (descriptors 1 and 2 are one pipe, so the runtime
    /// reads both in the order they were written); the stderr pipe then only reports end of file.
    pub merge_output: bool,
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a program path, argument or environment entry contains a NUL byte",
        )
    })
}

fn prepare(spec: &Spec<'_>) -> io::Result<Prepared> {
    let program = cstring(spec.program.as_bytes())?;
    let mut args = vec![program.clone()];
    for a in spec.args {
        args.push(cstring(a.as_bytes())?);
    }
    let mut env = Vec::with_capacity(spec.env.len());
    for (k, v) in spec.env {
        let mut entry = k.as_bytes().to_vec();
        entry.push(b'=');
        entry.extend_from_slice(v.as_bytes());
        env.push(cstring(&entry)?);
    }
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    envp.push(std::ptr::null());
    Ok(Prepared {
        program,
        _args: args,
        _env: env,
        argv,
        envp,
    })
}

/// The runtime's ends of a started supervisor.
pub struct Started {
    /// The supervisor's pid (the runtime's child; its group id too).
    pub supervisor: i32,
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub report: OwnedFd,
    pub control: OwnedFd,
}

/// A close-on-exec pipe whose two ends are both above the standard descriptors.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    // Without pipe2 the flag is set right after creation (a fork in that instant could inherit
    // the descriptors; the supervisor closes everything it does not need in any case).
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    let (r, w) = {
        let (r, w) = rustix::pipe::pipe()?;
        rustix::io::fcntl_setfd(&r, rustix::io::FdFlags::CLOEXEC)?;
        rustix::io::fcntl_setfd(&w, rustix::io::FdFlags::CLOEXEC)?;
        (r, w)
    };
    Ok((above_stdio(r)?, above_stdio(w)?))
}

fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}

/// Forks the supervisor, which forks and executes the helper.
pub fn start(spec: &Spec<'_>) -> io::Result<Started> {
    let prepared = prepare(spec)?;
    let (stdin_r, stdin_w) = pipe()?;
    let (stdout_r, stdout_w) = pipe()?;
    let (stderr_r, stderr_w) = pipe()?;
    let (execerr_r, execerr_w) = pipe()?;
    let (control_r, control_w) = pipe()?;
    let (report_r, report_w) = pipe()?;
    // The rules of the helper's process, read before the fork (the forked code only reads
    // these booleans).
    let helper = crate::rules::rules().helper;
    let leaky = !helper.close_inherited_descriptors;
    let kill = Kill {
        group: helper.kill_group,
        descendants: helper.kill_descendants,
    };
    let needed: [RawFd; 8] = [
        stdin_r.as_raw_fd(),
        stdout_w.as_raw_fd(),
        if spec.merge_output {
            stdout_w.as_raw_fd()
        } else {
            stderr_w.as_raw_fd()
        },
        execerr_r.as_raw_fd(),
        execerr_w.as_raw_fd(),
        control_r.as_raw_fd(),
        report_w.as_raw_fd(),
        spec.cwd.map_or(-1, |fd| fd.as_raw_fd()),
    ];
    // SAFETY: `fork` is called with no lock of ours held. In the child, `supervise` only makes
    // async-signal-safe system calls on the integers in `needed` and on `prepared`, which was
    // fully built before the fork and is not freed in the child (it never returns: it ends in
    // `_exit`). See the module documentation.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: as above; this is the forked child and `supervise` never returns.
        unsafe { supervise(&needed, &prepared, leaky, kill) }
    }
    Ok(Started {
        supervisor: pid,
        stdin: stdin_w,
        stdout: stdout_r,
        stderr: stderr_r,
        report: report_r,
        control: control_w,
    })
    // The child's ends (and the exec-error pipe) are closed here, in the runtime, as they drop.
}

/// What the supervisor kills when the helper ends: always the helper; its process group and every
/// descendant too, as [`crate::rules::HelperRules`] says (SPEC.md `run.process-group`).
#[derive(Clone, Copy)]
struct Kill {
    group: bool,
    descendants: bool,
}

/// Sends SIGKILL to the runtime's own child `pid` (still unreaped, so the pid cannot have been
/// reused).
pub fn kill_child(pid: i32) {
    // SAFETY: `kill` has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Reaps the runtime's own child `pid` without blocking; true once it is reaped (or gone).
pub fn try_reap(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: `waitpid` writes only to `status`, a valid local.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    r == pid || (r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR))
}

/// Reaps the runtime's own child `pid`, blocking (only after it was sent SIGKILL).
pub fn reap_blocking(pid: i32) {
    let mut status = 0;
    loop {
        // SAFETY: `waitpid` writes only to `status`, a valid local.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Forked code: only async-signal-safe system calls from here on.

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Writes all of `buf` to `fd`, retrying on EINTR.
unsafe fn write_all(fd: RawFd, buf: &[u8]) {
    let mut off = 0;
    while off < buf.len() {
        let n = libc::write(fd, buf[off..].as_ptr().cast(), buf.len() - off);
        if n > 0 {
            off += n as usize;
        } else if n < 0 && errno() == libc::EINTR {
            continue;
        } else {
            return;
        }
    }
}

unsafe fn set_signal(sig: libc::c_int, handler: libc::sighandler_t) {
    let mut action: libc::sigaction = std::mem::zeroed();
    action.sa_sigaction = handler;
    libc::sigemptyset(&mut action.sa_mask);
    libc::sigaction(sig, &action, std::ptr::null_mut());
}

unsafe fn clear_signal_mask() {
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
}

/// Closes every descriptor from `first` up.
unsafe fn close_from(first: RawFd) {
    #[cfg(target_os = "linux")]
    {
        if libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            0,
        ) == 0
        {
            return;
        }
    }
    let mut limit: libc::rlimit = std::mem::zeroed();
    let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
        limit.rlim_cur.min(1 << 20) as RawFd
    } else {
        1 << 16
    };
    let mut fd = first;
    while fd < max {
        libc::close(fd);
        fd += 1;
    }
}

/// Moves the descriptors in `needed` to `S_STDIN_R..=S_CWD` (a `-1` slot stays closed) and closes
/// everything else above the standard descriptors: copies of other helpers' pipes that other
/// threads of the runtime held at the moment of the fork must not stay open in this process.
unsafe fn arrange(needed: &[RawFd; 8]) -> bool {
    let mut high = [-1; 8];
    for (i, fd) in needed.iter().enumerate() {
        if *fd >= 0 {
            high[i] = libc::fcntl(*fd, libc::F_DUPFD, S_FIRST_FREE);
            if high[i] < 0 {
                return false;
            }
        }
    }
    for (i, fd) in high.iter().enumerate() {
        let slot = S_STDIN_R + i as RawFd;
        if *fd >= 0 {
            if libc::dup2(*fd, slot) < 0 {
                return false;
            }
        } else {
            libc::close(slot);
        }
    }
    close_from(S_FIRST_FREE);
    true
}

/// The supervisor. Never returns.
unsafe fn supervise(needed: &[RawFd; 8], prepared: &Prepared, leaky: bool, kill: Kill) -> ! {
    // Its own process group: signals for the runtime's group (a terminal's Ctrl-C) do not reach
    // it, and it never shares a group with the helper.
    libc::setpgid(0, 0);
    // The runtime's end of file on the control pipe, not a signal, tells it to clean up; a write
    // to a closed report pipe must not kill it before it has.
    for sig in [
        libc::SIGPIPE,
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
    ] {
        set_signal(sig, libc::SIG_IGN);
    }
    clear_signal_mask();
    if !arrange(needed) {
        // No report pipe can be trusted here; the runtime sees end of file and reports a failure.
        libc::_exit(1);
    }
    #[cfg(target_os = "linux")]
    if kill.descendants {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }

    let helper = libc::fork();
    if helper < 0 {
        let e = errno();
        write_all(
            S_REPORT_W,
            &record((TAG_FAILED << 8) | Stage::Fork.code(), e),
        );
        libc::_exit(1);
    }
    if helper == 0 {
        exec_helper(prepared, needed[7] >= 0, leaky);
    }
    for fd in [S_STDIN_R, S_STDOUT_W, S_STDERR_W, S_EXECERR_W, S_CWD] {
        libc::close(fd);
    }
    write_all(S_REPORT_W, &record(TAG_STARTED, helper));
    wait_for_end_or_stop(helper);
    let status = kill_tree(helper, kill);
    let mut failure = [0u8; 8];
    let mut got = 0usize;
    while got < failure.len() {
        let n = libc::read(
            S_EXECERR_R,
            failure[got..].as_mut_ptr().cast(),
            failure.len() - got,
        );
        if n > 0 {
            got += n as usize;
        } else if n < 0 && errno() == libc::EINTR {
            continue;
        } else {
            break;
        }
    }
    if got == failure.len() {
        write_all(S_REPORT_W, &failure);
    } else {
        write_all(S_REPORT_W, &record(TAG_ENDED, status));
    }
    libc::_exit(0);
}

/// Blocks until the helper has exited (without reaping it) or the runtime wrote to, or closed,
/// the control pipe.
unsafe fn wait_for_end_or_stop(helper: libc::pid_t) {
    #[cfg(target_os = "linux")]
    let pidfd = libc::syscall(libc::SYS_pidfd_open, helper, 0) as libc::c_int;
    #[cfg(not(target_os = "linux"))]
    let pidfd: libc::c_int = -1;
    loop {
        let mut fds = [
            libc::pollfd {
                fd: S_CONTROL_R,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let (count, timeout) = if pidfd >= 0 { (2, -1) } else { (1, 5) };
        let n = libc::poll(fds.as_mut_ptr(), count, timeout);
        if n < 0 && errno() != libc::EINTR {
            return;
        }
        if fds[0].revents != 0 || (pidfd >= 0 && fds[1].revents != 0) {
            return;
        }
        if pidfd < 0 && has_exited(helper) {
            return;
        }
    }
}

/// Whether the helper has exited, without reaping it.
unsafe fn has_exited(helper: libc::pid_t) -> bool {
    let mut info: libc::siginfo_t = std::mem::zeroed();
    let r = libc::waitid(
        libc::P_PID,
        helper as libc::id_t,
        &mut info,
        libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
    );
    r == 0 && info.si_pid() != 0
}

/// Kills the helper, its group and every child of this process (orphaned descendants are
/// re-parented here), reaping them, until none is left or the time bound passes. Returns the
/// helper's wait status.
// spec: run.process-group (SIGKILL to the helper, its group and every descendant, then reaped)
unsafe fn kill_tree(helper: libc::pid_t, kill: Kill) -> i32 {
    // The helper is unreaped, so neither its pid nor its group id can have been reused.
    libc::kill(helper, libc::SIGKILL);
    if kill.group {
        libc::kill(-helper, libc::SIGKILL);
    }
    if !kill.descendants {
        let mut status = 0;
        while libc::waitpid(helper, &mut status, 0) < 0 && errno() == libc::EINTR {}
        return status;
    }
    let start = monotonic_nanos();
    let mut helper_status = 0;
    loop {
        kill_children();
        let mut status = 0;
        let r = libc::waitpid(-1, &mut status, libc::WNOHANG);
        if r == helper {
            helper_status = status;
            continue;
        }
        if r > 0 {
            continue;
        }
        if r < 0 {
            match errno() {
                libc::EINTR => continue,
                _ => return helper_status, // ECHILD: nothing left
            }
        }
        if monotonic_nanos() - start > KILL_LOOP_NANOS {
            return helper_status;
        }
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 500_000,
        };
        libc::nanosleep(&pause, std::ptr::null_mut());
    }
}

unsafe fn monotonic_nanos() -> i64 {
    let mut ts: libc::timespec = std::mem::zeroed();
    libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// Sends SIGKILL to every child of this (single-threaded) process, as listed by
/// `/proc/thread-self/children`. Where that file does not exist, only the helper and its group
/// were killed.
unsafe fn kill_children() {
    #[cfg(target_os = "linux")]
    {
        let fd = libc::open(
            c"/proc/thread-self/children".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        let mut buf = [0u8; 512];
        let mut pid: libc::pid_t = 0;
        let mut in_number = false;
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            if n <= 0 {
                break;
            }
            for b in &buf[..n as usize] {
                if b.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add((b - b'0') as libc::pid_t);
                    in_number = true;
                } else {
                    if in_number && pid > 0 {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    pid = 0;
                    in_number = false;
                }
            }
        }
        if in_number && pid > 0 {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::close(fd);
    }
}

/// The helper: own group, default signals, the skill directory, descriptors 0–2, nothing else
/// open, then the interpreter. Never returns.
unsafe fn exec_helper(prepared: &Prepared, has_cwd: bool, leaky: bool) -> ! {
    let fail = |fd: RawFd, stage: Stage| -> ! {
        let e = errno();
        write_all(fd, &record((TAG_FAILED << 8) | stage.code(), e));
        libc::_exit(127)
    };
    libc::setpgid(0, 0);
    for sig in [
        libc::SIGPIPE,
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
    ] {
        set_signal(sig, libc::SIG_DFL);
    }
    clear_signal_mask();
    if has_cwd && libc::fchdir(S_CWD) != 0 {
        fail(S_EXECERR_W, Stage::Chdir);
    }
    if libc::dup2(S_STDIN_R, 0) < 0
        || libc::dup2(S_STDOUT_W, 1) < 0
        || libc::dup2(S_STDERR_W, 2) < 0
    {
        fail(S_EXECERR_W, Stage::Descriptors);
    }
    // The exec-error pipe moves to 3 (closed by a successful exec); everything above goes.
    if libc::dup2(S_EXECERR_W, 3) < 0 || libc::fcntl(3, libc::F_SETFD, libc::FD_CLOEXEC) < 0 {
        fail(S_EXECERR_W, Stage::Descriptors);
    }
    // spec: run.exec (the helper gets exactly descriptors 0 to 2)
    if !leaky {
        close_from(4);
    }
    libc::execve(
        prepared.program.as_ptr(),
        prepared.argv.as_ptr(),
        prepared.envp.as_ptr(),
    );
    fail(3, Stage::Exec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        assert_eq!(
            Report::decode(record(TAG_STARTED, 42)),
            Some(Report::Started(42))
        );
        assert_eq!(Report::decode(record(TAG_ENDED, 9)), Some(Report::Ended(9)));
        assert_eq!(
            Report::decode(record((TAG_FAILED << 8) | Stage::Exec.code(), 2)),
            Some(Report::Failed(Stage::Exec, 2))
        );
        assert_eq!(Report::decode(record(99, 0)), None);
    }

    #[test]
    fn pipes_are_above_the_standard_descriptors() {
        let (r, w) = pipe().unwrap();
        assert!(r.as_raw_fd() > 2 && w.as_raw_fd() > 2);
    }
}
