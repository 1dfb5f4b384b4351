//! Every case of `spec-cases/` as its own libtest trial (named by case id) against the reference
//! runtime in-process.

use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use skillspec_runner::execute::{run_case, Status};
use skillspec_runner::reference::Reference;
use skillspec_runner::report;

fn main() {
    let args = Arguments::from_args();
    let (suite, opts) = skillspec_runner::repository_suite();
    let opts = Arc::new(opts);
    let trials = suite
        .cases
        .into_iter()
        .map(|c| {
            let opts = Arc::clone(&opts);
            let area = c.area.clone();
            Trial::test(c.id.clone(), move || {
                let mut reference = Reference::default();
                let outcome = run_case(&c, &mut reference, &opts, 1);
                match outcome.status {
                    Status::Pass => Ok(()),
                    Status::Unsupported(_) | Status::Skipped(_) => Ok(()),
                    _ => Err(Failed::from(report::describe(&c, &outcome))),
                }
            })
            .with_kind(area)
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    // Every helper (and everything it started) must be gone: look for any process still working
    // inside a case root, by its current directory.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let survivors = processes_in_case_roots();
    if !survivors.is_empty() {
        eprintln!(
            "processes outlived their cases:\n  {}",
            survivors.join("\n  ")
        );
        std::process::exit(101);
    }
    conclusion.exit();
}

/// Processes (other than this one) whose working directory is inside a `skillspec-` case root.
fn processes_in_case_roots() -> Vec<String> {
    let me = std::process::id().to_string();
    let tmp_dir = std::env::temp_dir();
    let tmp = std::fs::canonicalize(&tmp_dir)
        .unwrap_or(tmp_dir)
        .join("skillspec-");
    let prefix = tmp.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) {
            let cwd = cwd.to_string_lossy().into_owned();
            if cwd.starts_with(&prefix) {
                let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                out.push(format!(
                    "pid {pid} in {cwd}: {}",
                    String::from_utf8_lossy(&cmd).replace('\0', " ")
                ));
            }
        }
    }
    out
}
