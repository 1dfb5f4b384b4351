//! `skillspec adapter`: the reference served over the adapter protocol on stdin/stdout
//! (`serve_adapter`, with `--without`, `--process-per-case` and `--agentskills-mode`).

use std::process::ExitCode;

use super::{usage_error, EXIT_FAILED};
use crate::implementations::adapter_server;
use crate::implementations::reference::{Omission, Reference, REFERENCE_FEATURES};
use crate::protocol::features::Feature;
use skillspec_reference::agentskills::Mode;

pub fn serve_adapter(without: &[String], process_per_case: bool, mode: &str) -> ExitCode {
    let Some(mode) = Mode::parse(mode) else {
        return usage_error(format!("`--agentskills-mode {mode}`: strict or lenient"));
    };
    // `--without NAME`: an optional feature is no longer declared (its cases become
    // UNSUPPORTED); a mandatory behaviour that once was a feature is left out (its cases FAIL).
    let mut features: Vec<Feature> = REFERENCE_FEATURES.to_vec();
    let mut omitted = Vec::new();
    for name in without {
        if let Some(f) = Feature::parse(name) {
            features.retain(|x| *x != f);
        } else if let Some(o) = Omission::parse(name) {
            omitted.push(o);
        } else {
            let known: Vec<&str> = Feature::ALL
                .iter()
                .map(|f| f.as_str())
                .chain(Omission::ALL.iter().map(|o| o.as_str()))
                .collect();
            return usage_error(format!(
                "`--without {name}`: no such feature or guard (known: {})",
                known.join(", ")
            ));
        }
    }
    let mut reference = omitted
        .into_iter()
        .fold(Reference::with_features(features), Reference::lacking)
        .with_process_per_case(process_per_case)
        .with_mode(mode);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    match adapter_server::serve(&mut reference, stdin.lock(), stdout.lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skillspec adapter: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
