//! `skillspec check-tree`: the command around [`crate::check_tree`] (what the reference loads
//! from a skills root and why everything else was skipped) and, with `--dialect agentskills`,
//! [`crate::check_agentskills`] (the tree judged by the open standard).

use std::path::Path;
use std::process::ExitCode;

use skillspec_reference::agentskills::Mode;

use super::{emit, usage_error};

pub fn check_tree(root: &Path, json: bool, dialect: &str, mode: Option<&str>) -> ExitCode {
    let rendered = match (dialect, mode) {
        ("agentskills", mode) => {
            let mode = match mode {
                Some("strict") => Mode::Strict,
                _ => Mode::Lenient,
            };
            crate::check_agentskills::render(root, mode, json)
        }
        (_, Some(_)) => {
            return usage_error(
                "`--mode` goes with `--dialect agentskills` (Portable Skills has no modes)",
            )
        }
        _ => crate::check_tree::render(root, json),
    };
    match rendered {
        Ok(text) => emit(&text),
        Err(e) => usage_error(e),
    }
}
