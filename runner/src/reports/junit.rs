//! Writing a run's files: report.json and junit.xml ([`write`], [`junit`]).

use std::path::Path;

use serde_json::Value;

use super::*;
use crate::execution::Failure;

/// Writes `report.json` (with `partition` when the run is one slice of a run) and `junit.xml`
/// of `report` into `dir`.
pub fn write(report: &RunReport, dir: &Path, partition: Option<&Value>) -> std::io::Result<()> {
    let mut json = to_json(report);
    if let Some(p) = partition {
        json["partition"] = p.clone();
    }
    write_files(dir, &json, &junit(report).map_err(std::io::Error::other)?)
}

/// The files [`write_files`] writes into a report directory.
pub const REPORT_FILES: [&str; 2] = ["report.json", "junit.xml"];

/// Writes `report.json` (pretty, with a final newline) and `junit.xml` into `dir`.
pub fn write_files(dir: &Path, report_json: &Value, junit_xml: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(report_json).map_err(std::io::Error::other)?;
    let [json_file, junit_file] = REPORT_FILES;
    std::fs::write(dir.join(json_file), text + "\n")?;
    std::fs::write(dir.join(junit_file), junit_xml)
}

/// The one-line message of a failure in junit.xml: `UNSAFE (exposure, ...):`, `PERMISSIVE:` or
/// `DIFFERENT:`, the step, and the first mismatch of that kind.
pub(super) fn failure_message(f: &Failure) -> String {
    let kind = f.kind();
    let first = f
        .mismatches
        .iter()
        .find(|m| crate::execution::FailureKind::of(m.kind) == kind);
    let what = first.map_or(String::new(), |m| {
        format!(": {}: expected {}, actual {}", m.what, m.expected, m.actual)
    });
    format!("{}: step {} ({}){what}", failure_label(f), f.step, f.label)
}

/// junit.xml of a run: one suite per area, one test case per case (with its dialect as the
/// property `dialect`). Failures say
/// `UNSAFE (exposure, ...):`, `PERMISSIVE:` or `DIFFERENT:` first; known failures, unsupported,
/// skipped and not-run cases are skipped ones.
pub fn junit(report: &RunReport) -> Result<String, quick_junit::SerializeError> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut out = Report::new("skillspec");
    for (area, _) in report.by_area() {
        let mut suite = TestSuite::new(visible(&area).into_owned());
        for r in report.cases().filter(|r| r.case.area == area) {
            let status = match r.verdict {
                Verdict::Passed => TestCaseStatus::success(),
                Verdict::Failed => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    if let Some(f) = r.failure() {
                        s.set_message(one_line(&failure_message(f)).into_owned());
                    }
                    s.set_description(describe(r.case, r.outcome));
                    s
                }
                Verdict::Fixed => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_description(
                        "listed as a known failure, but passed: remove it from the list",
                    );
                    s
                }
                Verdict::Errored => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                    s.set_description(describe(r.case, r.outcome));
                    s
                }
                Verdict::Unsupported
                | Verdict::NotExercised
                | Verdict::KnownFailure
                | Verdict::Skipped
                | Verdict::NotRun => {
                    let mut s = TestCaseStatus::skipped();
                    let text = describe(r.case, r.outcome);
                    match r.failure() {
                        // A known failure keeps its kind in front, so an unsafe one stays visible.
                        Some(f) => s.set_message(format!(
                            "{}: known failure: {}",
                            failure_label(f),
                            text.trim()
                        )),
                        None => s.set_message(text.trim().to_owned()),
                    };
                    s
                }
            };
            let mut tc = TestCase::new(visible(&r.case.id).into_owned(), status);
            tc.set_classname(visible(&area).into_owned());
            // The dialect its verdict counts under (SPEC.md, "Dialects"; `hardening` for a case
            // judged on its exposures alone).
            tc.add_property(quick_junit::Property::new(
                "dialect",
                visible(report.counted_under(r.case)).into_owned(),
            ));
            tc.set_time(r.outcome.duration);
            suite.add_test_case(tc);
        }
        out.add_test_suite(suite);
    }
    out.to_string()
}
