//! The page's one set of numbers: [`columns`] counts a report's cases once each, in the words and
//! with the numbers of its result line (`skillspec run`'s terminal, [`crate::reports::result_line`]),
//! and both the overview (`#overview`, a row per report) and each report's section (its counts
//! table, `td[data-count=NAME]`) show exactly those columns. A failure or error listed as known is
//! counted under what it showed, with how many of it the list names: a list never hides a
//! crossing or an error. The columns add up to the report's cases.

use std::fmt::Write as _;

use super::{esc, label};
use crate::reports::view::ReportView;

/// One count of a report.
pub(super) struct Column {
    /// The key (`data-count`), as report.json's `summary` names it where it has it.
    pub key: &'static str,
    pub heading: &'static str,
    pub n: usize,
    /// Of `n`, the cases listed as known failures.
    pub listed: usize,
    /// The status class of a non-zero count.
    pub class: &'static str,
}

/// The counts of `r`, each case in exactly one column but the total.
pub(super) fn columns(r: &ReportView) -> Vec<Column> {
    let t = r.conformance.all();
    let c = &r.conformance;
    let col = |key, heading, n, listed, class| Column {
        key,
        heading,
        n,
        listed,
        class,
    };
    vec![
        col("passed", "passed", t.passed, 0, "pass"),
        col(
            "not_exercised",
            "not exercised",
            t.not_exercised,
            0,
            "not-exercised",
        ),
        col(
            "unsafe",
            "unsafe",
            c.unsafe_total(),
            c.unsafe_known(),
            "unsafe",
        ),
        col(
            "permissive",
            "permissive",
            c.permissive_total(),
            c.permissive_known(),
            "permissive",
        ),
        col(
            "different",
            "different",
            c.different_total(),
            c.different_known(),
            "different",
        ),
        col(
            "errored",
            "errored",
            c.errored_total(),
            c.errored_known(),
            "error",
        ),
        col("not_run", "not run", t.not_run, 0, "not-run"),
        col("fixed", "listed, but passed", t.fixed, t.fixed, "fixed"),
        col(
            "for_information",
            "for information",
            c.for_information_failures(),
            0,
            "none",
        ),
        col(
            "unsupported",
            "unsupported",
            t.unsupported,
            0,
            "unsupported",
        ),
        col("skipped", "skipped", t.skipped, 0, "skipped"),
        col("total", "cases", t.total(), 0, "none"),
    ]
}

/// A count's cell: the number, and how many of it are listed.
fn cell(out: &mut String, c: &Column) {
    let class = if c.n > 0 { c.class } else { "none" };
    let _ = write!(
        out,
        "<td class=\"n c-{class}\" data-count=\"{}\">{}",
        c.key, c.n
    );
    if c.listed > 0 {
        let _ = write!(
            out,
            "<span class=\"label\">{} listed as known</span>",
            c.listed
        );
    }
    let _ = write!(out, "</td>");
}

fn header_row(out: &mut String, first: &str, cols: &[Column]) {
    let _ = write!(out, "<tr>{first}");
    for c in cols {
        let _ = write!(out, "<th>{}</th>", c.heading);
    }
    let _ = writeln!(out, "</tr>");
}

/// One row per report: its result word and the counts of [`columns`].
pub(super) fn overview(out: &mut String, reports: &[ReportView]) {
    let _ = writeln!(
        out,
        "<section id=\"overview\"><h2>Overview</h2><p class=\"muted\">The numbers of each report's result line, each case counted once; a case listed as a known failure is counted under what it showed. <em>For information</em>: the permissive and different failures of dialects the implementation does not claim (run with <code>--for-information</code>).</p><table class=\"overview\">"
    );
    let Some(first) = reports.first() else {
        let _ = writeln!(out, "</table></section>");
        return;
    };
    header_row(
        out,
        "<th>implementation</th><th>result</th>",
        &columns(first),
    );
    for (i, r) in reports.iter().enumerate() {
        let _ = write!(
            out,
            "<tr data-report=\"r{}\"><th><a href=\"#r{}\">{}</a><span class=\"label\">{}</span></th><td class=\"c-{}\">{}</td>",
            i + 1,
            i + 1,
            esc(&r.title()),
            esc(&label(r)),
            headline_class(r),
            crate::reports::result_word(&r.run, &r.conformance)
        );
        for c in columns(r) {
            cell(out, &c);
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</table></section>");
}

/// A report section's counts: the same columns as its overview row.
pub(super) fn summary_table(out: &mut String, r: &ReportView) {
    let cols = columns(r);
    let _ = write!(out, "<table class=\"summary\">");
    header_row(out, "", &cols);
    let _ = write!(out, "<tr>");
    for c in &cols {
        cell(out, c);
    }
    let _ = writeln!(out, "</tr></table>");
}

/// The class of a report's headline: the colour of its [`crate::reports::result_word`].
pub(super) fn headline_class(r: &ReportView) -> &'static str {
    match crate::reports::result_word(&r.run, &r.conformance) {
        "UNSAFE" => "unsafe",
        "PERMISSIVE" => "permissive",
        "FAILED" => "error",
        _ => "pass",
    }
}
