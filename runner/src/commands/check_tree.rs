//! `skillspec check-tree`: the command around [`crate::check_tree`] (what the reference loads
//! from a skills root and why everything else was skipped).

use std::path::Path;
use std::process::ExitCode;

use super::{emit, usage_error};

pub fn check_tree(root: &Path, json: bool) -> ExitCode {
    match crate::check_tree::render(root, json) {
        Ok(text) => emit(&text),
        Err(e) => usage_error(e),
    }
}
