//! The top of the page: what to fix first (`#fix-first`), per report: every unsafe failure,
//! listed as known or not, with what it exposed; then the clauses with the most failures in the
//! dialects the implementation claims (unsafe, permissive, different and errored cases, listed
//! or not). And the legend (`#legend`): what each colour of the page means.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::status::{meaning, status_class, status_word, STATUSES};
use super::{anchor, esc, label};
use crate::execution::Status;
use crate::reports::view::ReportView;
use crate::reports::{CaseResult, Verdict};

/// How many clauses the list of the most failing names.
const CLAUSES_SHOWN: usize = 5;

/// The status classes of a case that is a failure to fix.
fn to_fix(c: &CaseResult<'_>) -> bool {
    matches!(
        status_class(c),
        "unsafe" | "permissive" | "different" | "error"
    )
}

pub(super) fn fix_first(out: &mut String, reports: &[ReportView]) {
    let _ = writeln!(
        out,
        "<section id=\"fix-first\"><h2>What to fix first</h2><p class=\"muted\">Per report: the unsafe failures (listed as known or not), then the clauses with the most failed or errored cases in the dialects the implementation claims.</p>"
    );
    for (i, r) in reports.iter().enumerate() {
        let _ = writeln!(
            out,
            "<div class=\"fix\" data-report=\"r{}\"><h3><a href=\"#r{}\">{}</a> <span class=\"muted\">({})</span></h3>",
            i + 1,
            i + 1,
            esc(&r.title()),
            esc(&label(r))
        );
        let unsafe_cases: Vec<CaseResult<'_>> =
            r.cases().filter(|c| status_class(c) == "unsafe").collect();
        if unsafe_cases.is_empty() {
            let _ = writeln!(out, "<p class=\"c-pass\">No unsafe failure.</p>");
        } else {
            let _ = writeln!(
                out,
                "<p><strong>{} unsafe failure(s)</strong>, each a crossing the run showed:</p><ol class=\"unsafe-first\">",
                unsafe_cases.len()
            );
            for c in &unsafe_cases {
                let exposed: Vec<&str> = match &c.outcome.status {
                    Status::Fail(f) => f.exposures().iter().map(|e| e.word()).collect(),
                    _ => Vec::new(),
                };
                let _ = writeln!(
                    out,
                    "<li class=\"c-unsafe\"><a href=\"#case-{}\"><code>{}</code></a> exposed <code>{}</code>{}</li>",
                    anchor(&c.case.id),
                    esc(&c.case.id),
                    esc(&exposed.join(", ")),
                    if c.verdict == Verdict::KnownFailure {
                        " (listed as known)"
                    } else {
                        ""
                    }
                );
            }
            let _ = writeln!(out, "</ol>");
        }
        most_failing(out, i + 1, r);
        let _ = writeln!(out, "</div>");
    }
    let _ = writeln!(out, "</section>");
}

/// The clauses of the claimed dialects with the most cases to fix, most first (ties by id).
fn most_failing(out: &mut String, n: usize, r: &ReportView) {
    let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for c in r.cases() {
        if r.run.for_information.contains(&c.case.dialect) {
            continue;
        }
        for cl in &c.case.clauses {
            let e = per.entry(cl.as_str()).or_default();
            e.1 += 1;
            if to_fix(&c) {
                e.0 += 1;
            }
        }
    }
    let mut ranked: Vec<(&str, usize, usize)> = per
        .into_iter()
        .filter(|(_, (bad, _))| *bad > 0)
        .map(|(id, (bad, all))| (id, bad, all))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if ranked.is_empty() {
        let _ = writeln!(
            out,
            "<p>No failed or errored case in the dialects it claims.</p>"
        );
        return;
    }
    let _ = writeln!(
        out,
        "<p>Then the clauses with the most failed or errored cases:</p><ol class=\"clauses-first\">"
    );
    for (id, bad, all) in ranked.iter().take(CLAUSES_SHOWN) {
        let _ = writeln!(
            out,
            "<li><a href=\"#r{n}-clause-{}\"><code>{}</code></a>: {bad} of its {all} case(s)</li>",
            anchor(id),
            esc(id)
        );
    }
    let _ = writeln!(out, "</ol>");
    if ranked.len() > CLAUSES_SHOWN {
        let _ = writeln!(
            out,
            "<p class=\"muted\">and {} more clause(s) with failures: the report's table by clause lists them all.</p>",
            ranked.len() - CLAUSES_SHOWN
        );
    }
}

/// What each colour means: a chip per status class, in the filter's order.
pub(super) fn legend(out: &mut String) {
    let _ = write!(
        out,
        "<section id=\"legend\"><h2>Colours</h2><dl class=\"legend\">"
    );
    for s in STATUSES {
        let _ = write!(
            out,
            "<dt><span class=\"badge c-{s}\">{}</span></dt><dd>{}</dd>",
            esc(status_word(s)),
            esc(meaning(s))
        );
    }
    let _ = writeln!(out, "</dl></section>");
}
