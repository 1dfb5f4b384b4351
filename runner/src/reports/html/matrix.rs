//! The page's matrix (`#matrix`): one table per dialect, clauses grouped by area as rows, one
//! column per report; and what a cell says of the cases of one report citing one clause
//! ([`ClauseResult`]), also used by each report's table by clause. A cell's fraction is the one
//! the terminal and the conformance statements give (passed of the cases judged).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::status::{status_class, STATUSES};
use super::{anchor, esc, label};
use crate::cases::clauses::CLAUSES;
use crate::reports::view::ReportView;
use crate::reports::{clause_level, level_word, AreaConformance, CaseResult, Verdict};

/// A cell of the matrix or a clause row: the cases of one report that cite one clause.
#[derive(Default)]
pub(super) struct ClauseResult<'a> {
    pub(super) cases: Vec<CaseResult<'a>>,
}

impl ClauseResult<'_> {
    pub(super) fn count(&self, status: &str) -> usize {
        self.cases
            .iter()
            .filter(|c| status_class(c) == status)
            .count()
    }

    pub(super) fn worst(&self) -> &'static str {
        STATUSES
            .iter()
            .find(|s| self.count(s) > 0)
            .copied()
            .unwrap_or("none")
    }

    /// Of the cases counted by [`ClauseResult::count`], those listed as known failures.
    fn listed(&self, status: &str) -> usize {
        self.cases
            .iter()
            .filter(|c| status_class(c) == status && c.verdict == Verdict::KnownFailure)
            .count()
    }

    /// `25/115 (3 unsafe, 87 different, 85 of them listed; 87 unsupported)`: passed of the cases
    /// judged (the denominator of the conformance statements and of `skillspec run`'s terminal
    /// account: unsupported, skipped, not run and not exercised cases are not judged), then every
    /// other status with its count, a listed one saying how many of it the list names.
    pub(super) fn text(&self) -> String {
        if self.cases.is_empty() {
            return "–".into();
        }
        let counts = AreaConformance::of(&self.cases);
        // Not judged at all (every case gated, or only a missing tool): say so, not `0/57`.
        if let Some(short) = counts.short() {
            return format!("{short} ({} cases)", self.cases.len());
        }
        let all = counts.all();
        let mut s = format!("{}/{}", all.passed + all.fixed, all.judged());
        let others: Vec<String> = STATUSES
            .iter()
            .filter(|st| !matches!(**st, "pass" | "known-failure"))
            .filter_map(|st| {
                let n = self.count(st);
                let listed = self.listed(st);
                (n > 0).then(|| match listed {
                    0 => format!("{n} {st}"),
                    k if k == n => format!("{n} {st}, listed"),
                    k => format!("{n} {st}, {k} of them listed"),
                })
            })
            .collect();
        if !others.is_empty() {
            let _ = write!(s, " ({})", others.join("; "));
        }
        s
    }
}

pub(super) fn clause_order(ids: &BTreeSet<&str>) -> Vec<String> {
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
pub(super) fn clause_group(id: &str) -> &str {
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
pub(super) fn clause_dialect(id: &str) -> &'static str {
    crate::cases::clauses::dialect_of(id).map_or(crate::protocol::dialects::DEFAULT, |d| d.name)
}

pub(super) fn by_clause(r: &ReportView) -> BTreeMap<&str, ClauseResult<'_>> {
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
pub(super) fn matrix(out: &mut String, reports: &[ReportView], clauses: &[String]) {
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
