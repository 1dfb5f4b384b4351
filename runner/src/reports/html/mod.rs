//! `skillspec report html`: one or more report.json files as ONE self-contained HTML page.
//!
//! The page holds everything inline (CSS, a little vanilla JS) and loads nothing: its
//! Content-Security-Policy allows no source at all except its own style and script, by hash.
//! Its parts, in order:
//! - `#matrix`: one table per dialect (`table.matrix[data-dialect]`), clauses (grouped by area)
//!   × implementations, one column per report (`th.impl`, with the implementation's claim of
//!   that dialect); each cell counts that report's cases citing the clause and links to the
//!   clause's row in the report's section.
//! - `section.report#rN` per report: the conformance statement, the counts
//!   (`td[data-count=NAME]`: report.json's `summary` with the failures split into `unsafe`,
//!   `permissive` and `different`), the counts per area and level with each area's statement
//!   (as `skillspec run` words them, [`super::view`]), the unsafe failures (listed as known or
//!   not, with their exposures), the permissive and the different behaviours, other problems,
//!   and the results per clause (`#rN-clause-ID`).
//!
//! An unsafe failure is red (`c-unsafe`) wherever it shows, listed as known or not, and the
//! `unsafe` filter shows it; a cell whose cases were not judged (all gated, or failing only for
//! a missing tool) says so (`unsupported (needs hitl)`, `not implemented: X missing`).
//! - `#cases`: every case once (`details.case#case-ID`): a badge per report, its summary,
//!   clauses and file, per report its outcome (failing step, expected and actual, error,
//!   adapter stderr), and its definition (fixture tree, configuration, steps with their
//!   expectations) as `skillspec show` prints it, taken from `--cases` or the embedded suite
//!   (never from a directory a report names).
//!
//! Counts and results are plain HTML; the script only adds filters (status, area, text) and
//! opens the case a link points to.
//!
//! Everything from a report or the suite goes through [`esc`] (control characters as `\u{..}`,
//! then `& < > " '` as entities) or, for fragment ids, [`anchor`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

mod assets;
mod counts;
mod fix_first;
mod matrix;
mod status;

use super::view::{cut, ReportView};
use super::{
    clause_level, failure_label, level_word, mismatch_label, visible, CaseResult, LevelCounts,
    Verdict, LEVELS,
};
use crate::cases::Suite;
use crate::execution::{FailureKind, Status};
use assets::{csp_hash, CSS, JS};
use counts::headline_class;
use matrix::{by_clause, clause_group, clause_order, matrix};
use status::{badge_word, filter_classes, status_class, status_word, STATUSES};

/// Characters of one expected/actual value, error or stderr shown before it is cut.
pub const VALUE_CHARS: usize = 20_000;

/// `c` as the entity it must be written as in HTML text and attribute values, if it must.
pub fn entity(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    }
}

/// `text` escaped for HTML text and attribute values.
pub fn esc(text: &str) -> String {
    let text = visible(text);
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match entity(c) {
            Some(e) => out.push_str(e),
            None => out.push(c),
        }
    }
    out
}

/// `text` as a fragment id: ASCII letters, digits, `.` and `-` kept, anything else as `_hex_`
/// (one-to-one, and safe in `id="…"` and `href="#…"`).
pub fn anchor(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            out.push(c);
        } else {
            let _ = write!(out, "_{:x}_", c as u32);
        }
    }
    out
}

/// A short name for a report beside its implementation's (two runs of one implementation have
/// the same title): the directory of a `report.json`, else the file name.
pub fn label(r: &ReportView) -> String {
    let path = std::path::Path::new(&r.source);
    let name = if path.file_name().is_some_and(|f| f == "report.json") {
        path.parent().and_then(|p| p.file_name())
    } else {
        path.file_name()
    };
    name.map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| r.source.clone())
}

fn case_link(c: &CaseResult<'_>) -> String {
    format!(
        "<a href=\"#case-{}\"><code>{}</code></a>",
        anchor(&c.case.id),
        esc(&c.case.id)
    )
}

/// Characters of an expected or actual value in a list of failures (the case has them whole).
const LIST_CHARS: usize = 200;

/// The exposures of a failure, each with its meaning (nothing when it shows none).
fn exposures(out: &mut String, f: &crate::execution::Failure) {
    let shown = f.exposures();
    if shown.is_empty() {
        return;
    }
    let _ = write!(out, "<ul class=\"exposures\">");
    for e in shown {
        let _ = write!(
            out,
            "<li class=\"c-unsafe\">exposure <code>{}</code>: {}</li>",
            e.word(),
            esc(e.meaning())
        );
    }
    let _ = write!(out, "</ul>");
}

fn failure_list(out: &mut String, heading: &str, class: &str, cases: &[CaseResult<'_>]) {
    if cases.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<h3>{heading} <span class=\"badge c-{class}\">{}</span></h3><ul class=\"cases\">",
        cases.len()
    );
    for c in cases {
        let _ = write!(
            out,
            "<li>{} <span class=\"muted\">{} · {}</span>",
            case_link(c),
            level_word(c.case.level),
            esc(&c.case.clauses.join(", "))
        );
        match &c.outcome.status {
            Status::Fail(f) => {
                let known = if c.verdict == Verdict::KnownFailure {
                    " (listed as known)"
                } else {
                    ""
                };
                let _ = write!(
                    out,
                    " — <strong>{}</strong>{known}, step {}: {}",
                    esc(&failure_label(f)),
                    f.step,
                    esc(&f.label)
                );
                exposures(out, f);
                let _ = write!(out, "<ul>");
                for m in &f.mismatches {
                    let _ = write!(
                        out,
                        "<li>[{}] <em>{}</em>: expected <code>{}</code>, actual <code>{}</code></li>",
                        esc(&mismatch_label(m)),
                        esc(&m.what),
                        esc(&cut(&m.expected, LIST_CHARS)),
                        esc(&cut(&m.actual, LIST_CHARS))
                    );
                }
                let _ = write!(out, "</ul>");
            }
            Status::Error { message, .. } => {
                let first = message.lines().next().unwrap_or("");
                let _ = write!(out, ": {}", esc(first));
            }
            _ => {}
        }
        let _ = writeln!(out, "</li>");
    }
    let _ = writeln!(out, "</ul>");
}

/// One report's section: its heading, the counts, the table by area and level, the failure
/// lists and the table by clause. `i` numbers the section (anchors are `r{i + 1}-...`).
fn report_section(out: &mut String, i: usize, r: &ReportView, clauses: &[String]) {
    let n = i + 1;
    report_heading(out, n, r);
    // The counts: the overview's, case for case.
    counts::summary_table(out, r);
    levels_table(out, n, r, &r.conformance.all());
    failure_lists(out, r);
    clauses_table(out, n, r, clauses);
}

/// The section's opening: title, result statement, source line with features and partition,
/// and why the run stopped early, if it did.
fn report_heading(out: &mut String, n: usize, r: &ReportView) {
    let _ = writeln!(
        out,
        "<section class=\"report\" id=\"r{n}\"><h2>{} <span class=\"muted\">({})</span></h2>",
        esc(&r.title()),
        esc(&label(r))
    );
    let _ = writeln!(
        out,
        "<p class=\"statement c-{}\">{}</p>",
        headline_class(r),
        esc(&r.result())
    );
    let mut meta = format!("{} · skillspec {}", esc(&r.source), esc(&r.runner_version));
    let features: Vec<&str> = r
        .run
        .implementation
        .features
        .iter()
        .map(|f| f.as_str())
        .chain(
            r.run
                .implementation
                .unknown_features
                .iter()
                .map(String::as_str),
        )
        .collect();
    if !features.is_empty() {
        let _ = write!(meta, " · features: {}", esc(&features.join(", ")));
    }
    if let Some(p) = &r.partition {
        let _ = write!(meta, " · partition {}", esc(&p.to_string()));
    }
    let _ = writeln!(out, "<p class=\"muted\">{meta}</p>");
    if let Some(s) = &r.run.stopped {
        let _ = writeln!(
            out,
            "<p class=\"c-error\">The run stopped early: {}</p>",
            esc(&s.reason)
        );
    }
}

/// The table by area and level: one row per level an area has cases of, with the counts of
/// `t`'s columns and the area's statement.
fn levels_table(out: &mut String, n: usize, r: &ReportView, t: &LevelCounts) {
    let _ = write!(
        out,
        "<h3>By area and level</h3><table class=\"levels\"><tr><th>area</th><th>level</th>"
    );
    for (name, _) in t.named() {
        let _ = write!(out, "<th>{}</th>", name.replace('_', " "));
    }
    let _ = writeln!(out, "<th>statement</th></tr>");
    for (area, a) in &r.conformance.areas {
        let rows: Vec<(&str, &LevelCounts)> = LEVELS
            .iter()
            .zip(&a.levels)
            .filter(|(_, c)| c.total() > 0)
            .map(|(l, c)| (level_word(*l), c))
            .collect();
        for (k, (l, c)) in rows.iter().enumerate() {
            let _ = write!(out, "<tr>");
            if k == 0 {
                let _ = write!(
                    out,
                    "<th rowspan=\"{}\" id=\"r{n}-area-{}\">{}</th>",
                    rows.len(),
                    anchor(area),
                    esc(area)
                );
            }
            let _ = write!(out, "<td>{l}</td>");
            for (_, count) in c.named() {
                let _ = write!(out, "<td class=\"n\">{count}</td>");
            }
            if k == 0 {
                let _ = write!(
                    out,
                    "<td rowspan=\"{}\">{}</td>",
                    rows.len(),
                    esc(r.statements.get(area).map(String::as_str).unwrap_or(""))
                );
            }
            let _ = writeln!(out, "</tr>");
        }
    }
    let _ = writeln!(out, "</table>");
    if !r.dialect_statements.is_empty() {
        let _ = write!(out, "<h3>By dialect</h3><ul class=\"dialects\">");
        for line in &r.dialect_statements {
            let _ = write!(out, "<li>{}</li>", esc(line));
        }
        let _ = writeln!(out, "</ul>");
    }
}

/// The failure lists: unsafe, permissive, different, then the other problems.
fn failure_lists(out: &mut String, r: &ReportView) {
    failure_list(
        out,
        "Unsafe failures (listed as known or not)",
        "unsafe",
        &r.listed(FailureKind::Unsafe),
    );
    failure_list(
        out,
        "Permissive behaviours",
        "permissive",
        &r.listed(FailureKind::Permissive),
    );
    failure_list(
        out,
        "Different behaviours",
        "different",
        &r.listed(FailureKind::Different),
    );
    failure_list(
        out,
        "Errors, cases not run, known failures that passed",
        "error",
        &r.other_problems(),
    );
}

/// The table by clause, in the order of `clauses`: each clause's level, result and a badge per
/// case citing it; it closes the section.
fn clauses_table(out: &mut String, n: usize, r: &ReportView, clauses: &[String]) {
    let results = by_clause(r);
    let _ = writeln!(
        out,
        "<h3>By clause</h3><table class=\"clauses\"><tr><th>clause</th><th>level</th><th>result</th><th>cases</th></tr>"
    );
    for id in clauses {
        let Some(res) = results.get(id.as_str()) else {
            continue;
        };
        let _ = write!(
            out,
            "<tr id=\"r{n}-clause-{}\"><th><code>{}</code></th><td>{}</td><td class=\"c-{}\">{}</td><td>",
            anchor(id),
            esc(id),
            level_word(clause_level(id)),
            res.worst(),
            esc(&res.text())
        );
        for c in &res.cases {
            let _ = write!(
                out,
                "<a class=\"badge c-{}\" href=\"#case-{}\" title=\"{}\">{}</a>",
                status_class(c),
                anchor(&c.case.id),
                esc(badge_word(c)),
                esc(&c.case.id)
            );
        }
        let _ = writeln!(out, "</td></tr>");
    }
    let _ = writeln!(out, "</table></section>");
}

fn pre(text: &str) -> String {
    format!("<pre>{}</pre>", esc(&cut(text, VALUE_CHARS)))
}

fn outcome(out: &mut String, r: &ReportView, c: &CaseResult<'_>) {
    let class = status_class(c);
    let _ = write!(
        out,
        "<div class=\"outcome c-{class}\"><h4>{}: <span class=\"badge c-{class}\">{}</span> <span class=\"muted\">{} ms</span></h4>",
        esc(&r.title()),
        esc(badge_word(c)),
        c.outcome.duration.as_millis()
    );
    match &c.outcome.status {
        Status::Fail(f) => {
            let _ = write!(
                out,
                "<p><strong>{}</strong>: failed at step {} (line {}): {}</p>",
                esc(&failure_label(f)),
                f.step,
                f.line,
                esc(&f.label)
            );
            exposures(out, f);
            if !f.mismatches.is_empty() {
                let _ = write!(
                    out,
                    "<table class=\"mm\"><tr><th>what</th><th>kind</th><th>expected</th><th>actual</th></tr>"
                );
                for m in &f.mismatches {
                    let _ = write!(
                        out,
                        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        esc(&m.what),
                        esc(&mismatch_label(m)),
                        pre(&m.expected),
                        pre(&m.actual)
                    );
                }
                let _ = write!(out, "</table>");
            }
        }
        Status::NotExercised(why) => {
            let _ = write!(out, "<p>passed, but tested nothing: {}</p>", esc(why));
        }
        Status::Error {
            message,
            broken,
            fault,
        } => {
            let _ = write!(
                out,
                "<p>error{}:</p>{}",
                if *broken {
                    " (the implementation broke)"
                } else {
                    ""
                },
                pre(message)
            );
            if let Some(u) = fault.as_ref().and_then(|f| f.unanswered.as_ref()) {
                let _ = write!(out, "<p>unanswered request: {}</p>", esc(&u.to_string()));
            }
            if let Some(t) = fault.as_ref().and_then(|f| f.stderr_tail.as_ref()) {
                let _ = write!(out, "<p>the adapter's stderr (its end):</p>{}", pre(t));
            }
        }
        Status::Unsupported(missing) => {
            let names: Vec<&str> = missing.iter().map(|f| f.as_str()).collect();
            let _ = write!(
                out,
                "<p>needs features the implementation does not declare: {}</p>",
                esc(&names.join(", "))
            );
        }
        Status::Skipped(why) => {
            let _ = write!(out, "<p>skipped: {}</p>", esc(why));
        }
        Status::Pass | Status::NotRun => {}
    }
    let _ = writeln!(out, "</div>");
}

fn cases_section(out: &mut String, reports: &[ReportView], suite: Result<&Suite, &str>) {
    let mut order: Vec<&str> = Vec::new();
    let mut seen = BTreeSet::new();
    for r in reports {
        for c in r.cases() {
            if seen.insert(c.case.id.as_str()) {
                order.push(&c.case.id);
            }
        }
    }
    let lookup: Vec<BTreeMap<&str, CaseResult<'_>>> = reports
        .iter()
        .map(|r| r.cases().map(|c| (c.case.id.as_str(), c)).collect())
        .collect();
    let areas: BTreeSet<&str> = reports
        .iter()
        .flat_map(|r| r.cases().map(|c| c.case.area.as_str()))
        .collect();
    let _ = writeln!(
        out,
        "<section id=\"cases\"><h2>Cases ({})</h2>",
        order.len()
    );
    if let Err(why) = suite {
        let _ = writeln!(
            out,
            "<p class=\"muted\">Case definitions are not shown: {}</p>",
            esc(why)
        );
    }
    let _ = write!(out, "<form id=\"filters\" hidden><strong>Show:</strong> ");
    for s in STATUSES {
        let _ = write!(
            out,
            "<label><input type=\"checkbox\" name=\"status\" value=\"{s}\" checked> <span class=\"badge c-{s}\">{}</span></label>",
            status_word(s)
        );
    }
    let _ = write!(
        out,
        "<label>area <select name=\"area\"><option value=\"\">all</option>"
    );
    for a in &areas {
        let _ = write!(out, "<option value=\"{0}\">{0}</option>", esc(a));
    }
    let _ = writeln!(
        out,
        "</select></label><label>text <input type=\"search\" name=\"text\"></label> <output id=\"shown\"></output></form>"
    );
    for id in order {
        let views: Vec<Option<&CaseResult<'_>>> = lookup.iter().map(|m| m.get(id)).collect();
        let Some(first) = views.iter().flatten().next() else {
            continue;
        };
        let statuses: BTreeSet<&str> = views
            .iter()
            .flatten()
            .flat_map(|c| filter_classes(c))
            .collect();
        let def = suite.ok().and_then(|s| s.cases.iter().find(|c| c.id == id));
        let summary = first
            .case
            .summary
            .clone()
            .or_else(|| def.map(|d| d.summary.clone()));
        let _ = write!(
            out,
            "<details class=\"case\" id=\"case-{}\" data-area=\"{}\" data-statuses=\"{}\"><summary>",
            anchor(id),
            esc(&first.case.area),
            statuses.into_iter().collect::<Vec<_>>().join(" ")
        );
        for (r, v) in reports.iter().zip(&views) {
            match v {
                Some(c) => {
                    let class = status_class(c);
                    let _ = write!(
                        out,
                        "<span class=\"badge c-{class}\" title=\"{}\">{}</span>",
                        esc(&r.title()),
                        esc(badge_word(c))
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        "<span class=\"badge c-none\" title=\"{}\">not in this report</span>",
                        esc(&r.title())
                    );
                }
            }
        }
        let _ = write!(out, " <code>{}</code>", esc(id));
        if let Some(s) = &summary {
            let _ = write!(out, " <span class=\"muted\">{}</span>", esc(s));
        }
        let _ = write!(out, "</summary>");
        let _ = write!(out, "<p>{} · clauses: ", level_word(first.case.level));
        for (k, cl) in first.case.clauses.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            let _ = write!(
                out,
                "<a href=\"#r1-clause-{}\"><code>{}</code></a>",
                anchor(cl),
                esc(cl)
            );
        }
        let _ = writeln!(
            out,
            " · <code>{}:{}</code></p>",
            esc(&first.case.file),
            first.case.line
        );
        for (r, v) in reports.iter().zip(&views) {
            if let Some(c) = v {
                outcome(out, r, c);
            }
        }
        match def {
            Some(d) => {
                let _ = writeln!(out, "<h4>The case</h4>{}", pre(&super::show::render(d)));
            }
            None if suite.is_ok() => {
                let _ = writeln!(
                    out,
                    "<p class=\"muted\">This case is not in the suite the page was made with (<code>--cases</code>, else the embedded one).</p>"
                );
            }
            None => {}
        }
        let _ = writeln!(out, "</details>");
    }
    let _ = writeln!(out, "</section>");
}

/// The page for `reports`. `suite` gives the cases' summaries and definitions, or why there
/// are none.
pub fn render(reports: &[ReportView], suite: Result<&Suite, &str>) -> String {
    let mut ids: BTreeSet<&str> = BTreeSet::new();
    for r in reports {
        for (c, _) in &r.run.results {
            for cl in &c.clauses {
                ids.insert(cl);
            }
        }
    }
    let order = clause_order(&ids);
    // Grouped by area, in the requirements' order within one.
    let mut groups: Vec<String> = Vec::new();
    for c in &order {
        let g = clause_group(c).to_owned();
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let mut clauses: Vec<String> = Vec::with_capacity(order.len());
    for g in &groups {
        clauses.extend(order.iter().filter(|c| clause_group(c) == g).cloned());
    }

    let titles: Vec<String> = reports.iter().map(ReportView::title).collect();
    let mut out = String::with_capacity(256 * 1024);
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src {}; script-src {}; img-src data:; base-uri 'none'; form-action 'none'\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>skillspec: {}</title>\n<style>{CSS}</style></head><body>",
        csp_hash(CSS),
        csp_hash(JS),
        esc(&titles.join(", "))
    );
    let _ = writeln!(
        out,
        "<header><h1>skillspec conformance report</h1><p class=\"muted\">{} report(s), written by skillspec {}</p><nav><a href=\"#overview\">overview</a><a href=\"#fix-first\">fix first</a><a href=\"#legend\">colours</a><a href=\"#matrix\">clauses × implementations</a>",
        reports.len(),
        env!("CARGO_PKG_VERSION")
    );
    for (i, (t, r)) in titles.iter().zip(reports).enumerate() {
        let _ = write!(
            out,
            "<a href=\"#r{}\">{} ({})</a>",
            i + 1,
            esc(t),
            esc(&label(r))
        );
    }
    let _ = writeln!(out, "<a href=\"#cases\">cases</a></nav></header>");
    counts::overview(&mut out, reports);
    fix_first::fix_first(&mut out, reports);
    fix_first::legend(&mut out);
    matrix(&mut out, reports, &clauses);
    for (i, r) in reports.iter().enumerate() {
        report_section(&mut out, i, r, &clauses);
    }
    cases_section(&mut out, reports, suite);
    let _ = writeln!(out, "<script>{JS}</script></body></html>");
    out
}

#[cfg(test)]
mod tests;
