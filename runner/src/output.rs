//! The program's standard output, for every command: all it prints goes through [`print`] (the
//! [`out!`] and [`outln!`] macros) or the [`Stdout`] writer, never `println!`, which panics
//! (exit 101) when stdout is a pipe whose reader went away (`skillspec run -v | head`).
//!
//! A closed stdout is not an error here and is not reported: from then on nothing more is
//! printed, and [`closed`] says so. What a command does then is its own decision, in its
//! module: the commands that print a result exit as they would have (the reader had what it
//! wanted); `run` stops the run (no one reads it), so its exit code is 1 (cases not run), and
//! `smoke` stops its diagnosis, exit 1. Any other failure to write (a full disk) is said once on
//! stderr and then treated the same way, except that [`failed`] is then true.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Nothing more is written to stdout: its reader went away, or a write failed.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// A write to stdout failed for another reason than a reader that went away.
static FAILED: AtomicBool = AtomicBool::new(false);

/// Writes `args` to stdout and flushes it, unless stdout is [`closed`]; a reader that went away
/// closes it quietly.
pub fn print(args: std::fmt::Arguments<'_>) {
    if closed() {
        return;
    }
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        lost(&e);
    }
}

/// Stdout's reader went away, or a write to it failed: nothing more is printed.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// A write to stdout failed for another reason than a reader that went away (it was said on
/// stderr).
pub fn failed() -> bool {
    FAILED.load(Ordering::Relaxed)
}

/// Records a failed write to stdout: quietly when its reader went away, else said once on
/// stderr (written directly: `eprintln!` would panic on a closed stderr too).
fn lost(e: &io::Error) {
    if e.kind() != io::ErrorKind::BrokenPipe && !FAILED.swap(true, Ordering::Relaxed) {
        let _ = writeln!(io::stderr(), "skillspec: cannot write the output: {e}");
    }
    CLOSED.store(true, Ordering::Relaxed);
}

/// Stdout as an [`io::Write`], for code that writes to any writer (`smoke`): each call is
/// flushed, a failure is recorded as [`print`] records it and returned (so that the writer's
/// user stops); once stdout is [`closed`], every write fails with `BrokenPipe`.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if closed() {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let mut stdout = io::stdout().lock();
        let written = stdout.write(buf).and_then(|n| stdout.flush().map(|()| n));
        written.inspect_err(lost)
    }

    fn flush(&mut self) -> io::Result<()> {
        if closed() {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        io::stdout().lock().flush().inspect_err(lost)
    }
}

/// `print!` through [`print`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::print(format_args!($($arg)*))
    };
}

/// `println!` through [`print`].
macro_rules! outln {
    () => {
        $crate::output::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
