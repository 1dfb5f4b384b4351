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
mod status;

use super::view::{cut, ReportView};
use super::{
    clause_level, failure_label, level_word, mismatch_label, visible, CaseResult, LevelCounts,
    Verdict, LEVELS,
};
use crate::cases::clauses::CLAUSES;
use crate::cases::Suite;
use crate::execution::{FailureKind, Status};
use assets::{csp_hash, CSS, JS};
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

/// A cell of the matrix or a clause row: the cases of one report that cite one clause.
#[derive(Default)]
struct ClauseResult<'a> {
    cases: Vec<CaseResult<'a>>,
}

impl ClauseResult<'_> {
    fn count(&self, status: &str) -> usize {
        self.cases
            .iter()
            .filter(|c| status_class(c) == status)
            .count()
    }

    fn worst(&self) -> &'static str {
        STATUSES
            .iter()
            .find(|s| self.count(s) > 0)
            .copied()
            .unwrap_or("none")
    }

    fn text(&self) -> String {
        if self.cases.is_empty() {
            return "–".into();
        }
        // Not judged at all (every case gated, or only a missing tool): say so, not `0/57`.
        if let Some(short) = super::AreaConformance::of(&self.cases).short() {
            return format!("{short} ({} cases)", self.cases.len());
        }
        let mut s = format!("{}/{}", self.count("pass"), self.cases.len());
        let bad: Vec<String> = STATUSES
            .iter()
            .filter(|st| **st != "pass")
            .filter_map(|st| {
                let n = self.count(st);
                (n > 0).then(|| format!("{n} {st}"))
            })
            .collect();
        if !bad.is_empty() {
            let _ = write!(s, " ({})", bad.join(", "));
        }
        s
    }
}

fn clause_order(ids: &BTreeSet<&str>) -> Vec<String> {
    let mut out: Vec<String> = CLAUSES
        .iter()
        .filter(|c| ids.contains(c.id))
        .map(|c| c.id.to_owned())
        .collect();
    for id in ids {
        if !out.iter().any(|x| x == id) {
            out.push((*id).to_owned());
        }
    }
    out
}

/// The rows a clause is grouped under in the matrix: its first segment (`read`), or, for a
/// clause of a dialect other than the default, its first two (`agentskills.catalog`).
fn clause_group(id: &str) -> &str {
    let default = crate::cases::clauses::dialect_of(id)
        .is_none_or(|d| d.name == crate::protocol::dialects::DEFAULT);
    let segments = if default { 1 } else { 2 };
    match id.match_indices('.').nth(segments - 1) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

/// The dialect whose matrix lists a clause (its name; a clause the suite does not know is
/// listed under the default dialect).
fn clause_dialect(id: &str) -> &'static str {
    crate::cases::clauses::dialect_of(id).map_or(crate::protocol::dialects::DEFAULT, |d| d.name)
}

fn by_clause(r: &ReportView) -> BTreeMap<&str, ClauseResult<'_>> {
    let mut m: BTreeMap<&str, ClauseResult<'_>> = BTreeMap::new();
    for c in r.cases() {
        for cl in &c.case.clauses {
            m.entry(cl.as_str()).or_default().cases.push(c);
        }
    }
    m
}

/// The matrix: one table per dialect (SPEC.md, "Dialects"), clauses as rows grouped by area,
/// one column per report, whose heading says what the implementation claims of that dialect.
/// A group's row counts the cases citing any clause of the group, each once.
fn matrix(out: &mut String, reports: &[ReportView], clauses: &[String]) {
    let per_report: Vec<BTreeMap<&str, ClauseResult<'_>>> = reports.iter().map(by_clause).collect();
    let _ = writeln!(
        out,
        "<section id=\"matrix\"><h2>Clauses × implementations</h2>\n<p class=\"muted\">One table per dialect. Each cell: cases passed of the cases citing the clause, then what did not pass; it links to the details. A column's heading says whether the implementation claims the dialect: the cases of a dialect it does not claim are unsupported, except the hardening cases, judged on their exposures alone.</p>"
    );
    let mut dialects: Vec<&'static str> = Vec::new();
    for id in clauses {
        let d = clause_dialect(id);
        if !dialects.contains(&d) {
            dialects.push(d);
        }
    }
    for dialect in dialects {
        let rows: Vec<&String> = clauses
            .iter()
            .filter(|id| clause_dialect(id) == dialect)
            .collect();
        let title = crate::protocol::dialects::lookup(dialect).map_or(dialect, |d| d.title);
        let _ = writeln!(
            out,
            "<h3 id=\"matrix-{}\">dialect <code>{}</code>: {}</h3>",
            anchor(dialect),
            esc(dialect),
            esc(title)
        );
        let _ = write!(
            out,
            "<table class=\"matrix\" data-dialect=\"{}\"><thead><tr><th scope=\"col\">clause</th><th scope=\"col\">level</th>",
            esc(dialect)
        );
        for (i, r) in reports.iter().enumerate() {
            let _ = write!(
                out,
                "<th scope=\"col\" class=\"impl\"><a href=\"#r{}\">{}</a><span class=\"label\">{}</span><span class=\"label claim\">{}</span></th>",
                i + 1,
                esc(&r.title()),
                esc(&label(r)),
                esc(&r.run.dialect_label(dialect))
            );
        }
        let _ = writeln!(out, "</tr></thead><tbody>");
        let mut group = "";
        for id in rows {
            let g = clause_group(id);
            if g != group {
                group = g;
                let _ = write!(out, "<tr class=\"area\"><th colspan=\"2\">{}</th>", esc(g));
                for (i, r) in reports.iter().enumerate() {
                    let res = ClauseResult {
                        cases: r
                            .cases()
                            .filter(|c| c.case.clauses.iter().any(|cl| clause_group(cl) == g))
                            .collect(),
                    };
                    // The report's area section when it has one of that name, else the
                    // group's first clause.
                    let target = if r.cases().any(|c| c.case.area == g) {
                        format!("area-{}", anchor(g))
                    } else {
                        format!("clause-{}", anchor(id))
                    };
                    let _ = write!(
                        out,
                        "<td class=\"cell c-{}\"><a href=\"#r{}-{}\">{}</a></td>",
                        res.worst(),
                        i + 1,
                        target,
                        esc(&res.text())
                    );
                }
                let _ = writeln!(out, "</tr>");
            }
            let _ = write!(
                out,
                "<tr><th scope=\"row\"><code>{}</code></th><td>{}</td>",
                esc(id),
                level_word(clause_level(id))
            );
            for (i, m) in per_report.iter().enumerate() {
                match m.get(id.as_str()) {
                    Some(res) => {
                        let _ = write!(
                            out,
                            "<td class=\"cell c-{}\"><a href=\"#r{}-clause-{}\">{}</a></td>",
                            res.worst(),
                            i + 1,
                            anchor(id),
                            esc(&res.text())
                        );
                    }
                    None => {
                        let _ = write!(out, "<td class=\"cell c-none\">–</td>");
                    }
                }
            }
            let _ = writeln!(out, "</tr>");
        }
        let _ = writeln!(out, "</tbody></table>");
    }
    let _ = writeln!(out, "</section>");
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

/// One row per report: its statement and main counts.
fn overview(out: &mut String, reports: &[ReportView]) {
    let _ = writeln!(
        out,
        "<section id=\"overview\"><h2>Overview</h2><table class=\"overview\"><tr><th>implementation</th><th>statement</th><th>passed</th><th>not exercised</th><th>unsafe</th><th>permissive</th><th>different</th><th>other problems</th><th>not applicable</th><th>cases</th></tr>"
    );
    for (i, r) in reports.iter().enumerate() {
        let t = r.conformance.all();
        let c = &r.conformance;
        // Each kind counts every failed case of that kind, listed as known or not (a runtime
        // whose failures are all listed is still unsafe where it is); a known failure without
        // a kind (an error) is one of the other problems.
        let kinds = [
            (c.unsafe_total(), c.unsafe_known(), "unsafe"),
            (c.permissive_total(), c.permissive_known(), "permissive"),
            (c.different_total(), c.different_known(), "different"),
        ];
        let known_kinds: usize = kinds.iter().map(|k| k.1).sum();
        let known_other = t.known_failures.saturating_sub(known_kinds);
        let other = t.errored + t.not_run + t.fixed + known_other;
        let na = t.unsupported + t.skipped;
        let known = |n: usize| {
            if n > 0 {
                format!("<span class=\"label\">{n} listed as known</span>")
            } else {
                String::new()
            }
        };
        let cls = |n: usize, c: &'static str| if n > 0 { c } else { "none" };
        let _ = write!(
            out,
            "<tr><th><a href=\"#r{}\">{}</a><span class=\"label\">{}</span></th><td class=\"statement c-{}\">{}</td><td class=\"n c-{}\">{}</td>",
            i + 1,
            esc(&r.title()),
            esc(&label(r)),
            headline_class(r),
            esc(&r.result()),
            cls(t.passed, "pass"),
            t.passed,
        );
        let _ = write!(out, "<td class=\"n\">{}</td>", t.not_exercised);
        for (n, k, class) in kinds {
            let _ = write!(
                out,
                "<td class=\"n c-{}\" data-kind=\"{class}\">{n}{}</td>",
                cls(n, class),
                known(k)
            );
        }
        let _ = writeln!(
            out,
            "<td class=\"n c-{}\">{other}{}</td><td class=\"n\">{na}</td><td class=\"n\">{}</td></tr>",
            cls(other, "error"),
            known(known_other),
            t.total()
        );
    }
    let _ = writeln!(out, "</table></section>");
}

/// The class of a report's headline: the colour of its [`super::result_word`].
fn headline_class(r: &ReportView) -> &'static str {
    match super::result_word(&r.run, &r.conformance) {
        "UNSAFE" => "unsafe",
        "PERMISSIVE" => "permissive",
        "FAILED" => "error",
        _ => "pass",
    }
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

/// The status class of the cases a count of [`LevelCounts::named`] counts.
fn count_class(name: &str) -> &'static str {
    match name {
        "passed" => "pass",
        "not_exercised" => "not-exercised",
        "unsafe" => "unsafe",
        "permissive" => "permissive",
        "different" => "different",
        "known_failures" => "known-failure",
        "fixed" => "fixed",
        "unsupported" => "unsupported",
        "skipped" => "skipped",
        "errored" => "error",
        "not_run" => "not-run",
        _ => "none",
    }
}

/// One report's section: its heading, the counts, the table by area and level, the failure
/// lists and the table by clause. `i` numbers the section (anchors are `r{i + 1}-...`).
fn report_section(out: &mut String, i: usize, r: &ReportView, clauses: &[String]) {
    let n = i + 1;
    report_heading(out, n, r);
    // The counts: report.json's summary, with the failures split by kind.
    let t = r.conformance.all();
    summary_table(out, &t);
    levels_table(out, n, r, &t);
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

/// The summary table: each count of `t` (all areas and levels together) and the total.
fn summary_table(out: &mut String, t: &LevelCounts) {
    let mut cols: Vec<(&str, usize)> = t.named().to_vec();
    cols.push(("total", t.total()));
    let _ = write!(out, "<table class=\"summary\"><tr>");
    for (name, _) in &cols {
        let _ = write!(out, "<th>{}</th>", name.replace('_', " "));
    }
    let _ = write!(out, "</tr><tr>");
    for (name, v) in &cols {
        let class = if *v > 0 { count_class(name) } else { "none" };
        let _ = write!(
            out,
            "<td class=\"n c-{class}\" data-count=\"{name}\">{v}</td>"
        );
    }
    let _ = writeln!(out, "</tr></table>");
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
        "<header><h1>skillspec conformance report</h1><p class=\"muted\">{} report(s), written by skillspec {}</p><nav><a href=\"#overview\">overview</a><a href=\"#matrix\">clauses × implementations</a>",
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
    overview(&mut out, reports);
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
