//! `skillspec report`: merging the partitions of a run, and rendering reports as Markdown or
//! HTML.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::cli::ReportCommand;
use super::{emit, load_suite, usage_error, EXIT_FAILED};
use crate::cases::Suite;
use crate::output::outln;
use crate::reports;
use crate::reports::json::read_report;
use crate::reports::merge;
use crate::reports::view::ReportView;

/// `skillspec report ...`: exit 0 done, 1 the output could not be written, 2 a report could not
/// be read or the partitions do not merge.
pub fn report_command(command: ReportCommand) -> ExitCode {
    match command {
        ReportCommand::Merge {
            out_dir,
            reports,
            allow_incomplete,
            cases,
        } => merge_reports(&out_dir, &reports, allow_incomplete, cases),
        ReportCommand::Markdown { reports } => match read_views(&reports) {
            Ok(views) => emit(&reports::markdown::render(&views)),
            Err(code) => code,
        },
        ReportCommand::Html {
            out,
            reports,
            cases,
        } => html_report(&out, &reports, cases),
    }
}

/// Reads every report (exit 2 naming the first unreadable one).
fn read_views(paths: &[PathBuf]) -> Result<Vec<ReportView>, ExitCode> {
    let mut views = Vec::new();
    for p in paths {
        let v = read_report(p).map_err(usage_error)?;
        views.push(ReportView::from_json(&p.display().to_string(), &v).map_err(usage_error)?);
    }
    Ok(views)
}

/// The suite for a report command: `--cases` (which must load), else the embedded suite. Never
/// a directory a report names (its `cases_dir`): a report is data from elsewhere, and loading
/// cases from where it says would show that place's files in the page, or walk the file system.
fn suite_for_report(cases: Option<PathBuf>) -> Result<Result<Suite, String>, ExitCode> {
    if let Some(dir) = cases {
        return load_suite(Some(dir)).map(Ok);
    }
    Ok(crate::suite::load_embedded().map_err(|errors| {
        format!(
            "the embedded suite did not load ({} error(s))",
            errors.len()
        )
    }))
}

fn merge_reports(
    out_dir: &Path,
    paths: &[PathBuf],
    allow_incomplete: bool,
    cases: Option<PathBuf>,
) -> ExitCode {
    let mut inputs = Vec::new();
    for p in paths {
        match read_report(p) {
            Ok(report) => inputs.push(merge::Input {
                source: p.display().to_string(),
                report,
            }),
            Err(e) => return usage_error(e),
        }
    }
    let suite = match suite_for_report(cases) {
        Ok(s) => s.ok(),
        Err(code) => return code,
    };
    let summary_of = |id: &str| {
        suite
            .as_ref()
            .and_then(|s| s.cases.iter().find(|c| c.id == id))
            .map(|c| c.summary.clone())
    };
    let merged = match merge::merge(&inputs, allow_incomplete, &summary_of) {
        Ok(m) => m,
        Err(e) => return usage_error(format!("cannot merge: {e}")),
    };
    if let Err(e) = reports::write_files(out_dir, &merged.report, &merged.junit) {
        eprintln!("skillspec: cannot write to {}: {e}", out_dir.display());
        return ExitCode::from(EXIT_FAILED);
    }
    let mut line = format!(
        "merged {} partition(s), {} case(s), into {}",
        inputs.len(),
        merged.cases,
        out_dir.display()
    );
    if !merged.missing.is_empty() {
        let missing: Vec<String> = merged.missing.iter().map(u64::to_string).collect();
        line.push_str(&format!(
            " (incomplete: partition(s) {} missing)",
            missing.join(", ")
        ));
    }
    outln!("{line}");
    ExitCode::SUCCESS
}

fn html_report(out: &Path, paths: &[PathBuf], cases: Option<PathBuf>) -> ExitCode {
    let views = match read_views(paths) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let suite = match suite_for_report(cases) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let page = reports::html::render(&views, suite.as_ref().map_err(String::as_str));
    // OUT's directory is created, as `run --report DIR` and `report merge OUT_DIR` create theirs.
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
    if let Err(e) = parent.map_or(Ok(()), std::fs::create_dir_all) {
        eprintln!(
            "skillspec: cannot create the directory of {}: {e}",
            out.display()
        );
        return ExitCode::from(EXIT_FAILED);
    }
    if let Err(e) = std::fs::write(out, page) {
        eprintln!("skillspec: cannot write {}: {e}", out.display());
        return ExitCode::from(EXIT_FAILED);
    }
    if let Err(why) = &suite {
        eprintln!("skillspec: note: the page shows no case definitions: {why}");
    }
    outln!("wrote {}", out.display());
    ExitCode::SUCCESS
}
