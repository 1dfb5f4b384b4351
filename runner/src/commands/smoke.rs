//! `skillspec smoke`: the command around [`crate::smoke`] (a few trivial cases and a
//! plain-words diagnosis of an adapter).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::{usage_error, EXIT_FAILED};
use crate::execution::python;
use crate::output;

pub fn smoke(adapter: String, timeout: u64, python: Option<PathBuf>) -> ExitCode {
    let python = match python::resolve(python.as_deref()) {
        Ok(p) => p,
        Err(e) if python.is_some() => return usage_error(e),
        Err(_) => PathBuf::from("python3"),
    };
    if let Err(e) = crate::execution::roots::install_signal_handlers() {
        eprintln!("skillspec: cannot handle SIGINT/SIGTERM: {e}");
    }
    let opts = crate::smoke::Options {
        command: adapter,
        timeout: Duration::from_secs(timeout.max(1)),
        python,
    };
    // A closed stdout stops the diagnosis: exit 1, never a verdict no one read
    // ([`crate::output`] has said on stderr when it was not its reader going away).
    match crate::smoke::run(&opts, &mut output::Stdout) {
        Ok(code) => ExitCode::from(code),
        Err(_) if output::closed() => ExitCode::from(EXIT_FAILED),
        Err(e) => {
            eprintln!("skillspec smoke: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
