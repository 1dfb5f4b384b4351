//! `skillspec export`: the embedded suite written into a directory.

use std::path::Path;
use std::process::ExitCode;

use super::{emit, usage_error};

pub fn export(dir: &Path, force: bool) -> ExitCode {
    match crate::suite::export(dir, force) {
        Ok(done) => {
            let replaced = if done.replaced > 0 {
                format!(" ({} replaced)", done.replaced)
            } else {
                String::new()
            };
            emit(&format!(
                "wrote {} files of suite {}{replaced} to {}\n",
                done.files,
                crate::suite::VERSION,
                dir.display()
            ))
        }
        Err(e) => usage_error(format!("export: {e}")),
    }
}
