//! `skillspec show`: one case as readable prose.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{emit, load_suite, usage_error};
use crate::reports::show;

pub fn show_case(cases: Option<PathBuf>, id: &str) -> ExitCode {
    let suite = match load_suite(cases) {
        Ok(s) => s,
        Err(code) => return code,
    };
    match suite.cases.iter().find(|c| c.id == id) {
        Some(c) => emit(&show::render(c)),
        None => {
            let close: Vec<&str> = suite
                .cases
                .iter()
                .filter(|c| c.id.contains(id))
                .map(|c| c.id.as_str())
                .take(10)
                .collect();
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!(" (did you mean: {})", close.join(", "))
            };
            usage_error(format!("no case has the id `{id}`{hint}"))
        }
    }
}
