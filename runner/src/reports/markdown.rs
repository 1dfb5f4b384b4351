//! `skillspec report markdown`: one or more report.json files as GitHub-flavoured Markdown that
//! fits a CI job summary.
//!
//! Per implementation: the run's `result:` line, the counts per area and level with each area's
//! statement (all as `skillspec run` words them, [`super::view`]), then the unsafe failures
//! (listed as known or not, each with its exposures), the permissive and the different
//! behaviours, and the remaining problems (errors, cases not run, known failures that
//! passed), each with its case id, clauses, failing step and mismatches. Several reports also get
//! a matrix (implementations × areas) first.
//!
//! Everything taken from a report goes through [`md`]: control characters are escaped, HTML is
//! written as entities (a job summary renders HTML), Markdown punctuation is backslash-escaped
//! and line breaks become `<br>`, so an implementation's text cannot add markup, links or
//! tables of its own; and URLs are defanged (`://` shown as `[:]//`, `www.` as `www[.]`), so
//! GitHub's autolinker makes no link of them either.

use std::fmt::Write as _;

use super::html::entity;
use super::view::{cut, ReportView};
use super::{
    failure_label, level_word, mismatch_label, visible, CaseResult, LevelCounts, Verdict, LEVELS,
};
use crate::execution::{FailureKind, Status};

/// Characters of a mismatch's expected or actual value shown before it is cut.
pub const VALUE_CHARS: usize = 300;
/// Cases listed per kind and implementation before the rest are only counted.
pub const LIST_CASES: usize = 100;

/// `text` as inert Markdown text (see the module docs).
pub fn md(text: &str) -> String {
    let text = visible(text);
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if let Some(e) = entity(c) {
            out.push_str(e);
            continue;
        }
        match c {
            '\n' => out.push_str("<br>"),
            '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    defang(&out)
}

/// `text` with its URLs made inert for GitHub's autolinker: `://` written `\[:\]//` and a
/// `www.` that starts a word `www\[.\]` (shown as `[:]//` and `www[.]`).
fn defang(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut after_word = false;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("://") {
            out.push_str("\\[:\\]//");
            rest = &rest[3..];
            after_word = false;
            continue;
        }
        let www = rest
            .get(..4)
            .is_some_and(|w| w.eq_ignore_ascii_case("www."));
        if www && !after_word {
            out.push_str(&rest[..3]);
            out.push_str("\\[.\\]");
            rest = &rest[4..];
            after_word = false;
            continue;
        }
        out.push(c);
        after_word = c.is_alphanumeric();
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A cell of the matrix: `short` (why the area was not judged) when there is one, else the cases
/// passed of all, then what did not pass. 🛑 when any case failed unsafely (`unsafe_total`,
/// listed as known or not), ⚠️ permissively, ✅ when every judged case passed, ❌ otherwise.
fn cell(
    c: &LevelCounts,
    unsafe_total: usize,
    permissive_total: usize,
    short: Option<String>,
) -> String {
    let total = c.total();
    if total == 0 {
        return "–".into();
    }
    let mark = if unsafe_total > 0 {
        "🛑"
    } else if permissive_total > 0 {
        "⚠️"
    } else if c.judged() > 0 && c.judged() == c.passed && c.not_run == 0 {
        "✅"
    } else if c.judged() == 0 {
        "➖"
    } else {
        "❌"
    };
    if let Some(short) = short {
        return format!("{mark} {} ({total} cases)", md(&short));
    }
    let words = |name: &'static str| match name {
        "known_failures" => "known",
        "not_run" => "not run",
        "not_exercised" => "not exercised",
        other => other,
    };
    let unsafe_known = unsafe_total.saturating_sub(c.unsafe_failures);
    let mut parts = Vec::new();
    for (name, n) in c.named() {
        if name == "known_failures" && unsafe_known > 0 {
            parts.push(format!("{n} known ({unsafe_known} of them unsafe)"));
        } else if name != "passed" && n > 0 {
            parts.push(format!("{n} {}", words(name)));
        }
    }
    let mut s = format!("{mark} {}/{total}", c.passed);
    if !parts.is_empty() {
        let _ = write!(s, " ({})", parts.join(", "));
    }
    s
}

/// The matrix of several reports: one row per implementation, one column per area.
fn matrix(out: &mut String, reports: &[ReportView]) {
    let mut areas: Vec<&str> = Vec::new();
    for r in reports {
        for a in r.conformance.areas.keys() {
            if !areas.contains(&a.as_str()) {
                areas.push(a);
            }
        }
    }
    areas.sort_unstable();
    let _ = writeln!(out, "## Implementations × areas\n");
    let _ = write!(out, "| implementation |");
    for a in &areas {
        let _ = write!(out, " {} |", md(a));
    }
    let _ = writeln!(out, " all |");
    let _ = write!(out, "|---|");
    for _ in &areas {
        let _ = write!(out, "---|");
    }
    let _ = writeln!(out, "---|");
    for r in reports {
        let _ = write!(out, "| {} |", md(&r.title()));
        for a in &areas {
            let area = r.conformance.areas.get(*a).cloned().unwrap_or_default();
            let _ = write!(
                out,
                " {} |",
                cell(
                    &area.all(),
                    area.unsafe_total(),
                    area.permissive_total(),
                    area.short()
                )
            );
        }
        let c = &r.conformance;
        let _ = writeln!(
            out,
            " {} |",
            cell(&c.all(), c.unsafe_total(), c.permissive_total(), None)
        );
    }
    let _ = writeln!(
        out,
        "\nEach cell: cases passed of the cases of that area, then what did not pass (or why the area was not judged). 🛑 unsafe failures (listed as known or not), ⚠️ permissive ones, ❌ other problems, ➖ not judged.\n"
    );
}

fn case_line(out: &mut String, r: &CaseResult<'_>) {
    let c = r.case;
    let _ = write!(
        out,
        "- **{}** ({}; clauses: {})",
        md(&c.id),
        level_word(c.level),
        md(&c.clauses.join(", "))
    );
    match &r.outcome.status {
        Status::Fail(f) => {
            let known = if r.verdict == Verdict::KnownFailure {
                " (listed as known)"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                ": **{}**{known}: step {}, {} (line {})",
                md(&failure_label(f)),
                f.step,
                md(&f.label),
                f.line
            );
            for e in f.exposures() {
                let _ = writeln!(out, "  - exposure {}: {}", e.word(), e.meaning());
            }
            for m in &f.mismatches {
                let _ = writeln!(
                    out,
                    "  - {} \\[{}\\]: expected {}; actual {}",
                    md(&m.what),
                    md(&mismatch_label(m)),
                    md(&cut(&m.expected, VALUE_CHARS)),
                    md(&cut(&m.actual, VALUE_CHARS))
                );
            }
        }
        Status::Error { message, fault, .. } => {
            let _ = writeln!(out);
            let _ = writeln!(out, "  - error: {}", md(&cut(message, VALUE_CHARS)));
            if let Some(u) = fault.as_ref().and_then(|f| f.unanswered.as_ref()) {
                let _ = writeln!(out, "  - unanswered request: {}", md(&u.to_string()));
            }
            if let Some(t) = fault.as_ref().and_then(|f| f.stderr_tail.as_ref()) {
                let chars: Vec<char> = t.chars().collect();
                let tail: String = chars[chars.len().saturating_sub(VALUE_CHARS)..]
                    .iter()
                    .collect();
                let _ = writeln!(out, "  - end of the adapter's stderr: {}", md(&tail));
            }
        }
        _ => {
            let _ = writeln!(out);
        }
    }
}

fn case_list(out: &mut String, heading: &str, cases: &[CaseResult<'_>]) {
    if cases.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {heading} ({})\n", cases.len());
    for c in cases.iter().take(LIST_CASES) {
        case_line(out, c);
    }
    if cases.len() > LIST_CASES {
        let _ = writeln!(
            out,
            "- … and {} more (see report.json)",
            cases.len() - LIST_CASES
        );
    }
    let _ = writeln!(out);
}

fn one(out: &mut String, r: &ReportView) {
    let _ = writeln!(out, "## {}\n", md(&r.title()));
    let _ = writeln!(out, "**{}**\n", md(&r.result()));
    let mut meta = format!(
        "{} {} from {}, skillspec {}",
        r.run.results.len(),
        super::conformance::plural(r.run.results.len(), "case", "cases"),
        md(&r.source),
        md(&r.runner_version)
    );
    if let Some(p) = &r.partition {
        let of = p.get("of").and_then(serde_json::Value::as_u64).unwrap_or(0);
        match p.get("index").and_then(serde_json::Value::as_u64) {
            Some(i) => {
                let _ = write!(meta, "; partition {i}/{of} of the run");
            }
            None => {
                let _ = write!(
                    meta,
                    "; an incomplete merge of partitions (missing: {})",
                    md(&p.get("missing").map(|m| m.to_string()).unwrap_or_default())
                );
            }
        }
    }
    let _ = writeln!(out, "{meta}\n");
    if let Some(s) = &r.run.stopped {
        let _ = writeln!(out, "The run stopped early: {}\n", md(&s.reason));
    }
    let names = LevelCounts::default().named().map(|(name, _)| match name {
        "known_failures" => "known",
        "not_run" => "not run",
        "not_exercised" => "not exercised",
        other => other,
    });
    let _ = writeln!(
        out,
        "| area | level | {} |\n|---|---|{}",
        names.join(" | "),
        "---|".repeat(names.len())
    );
    for (area, a) in &r.conformance.areas {
        for (l, c) in LEVELS.iter().zip(&a.levels) {
            if c.total() == 0 {
                continue;
            }
            let mut row = format!("| {} | {} |", md(area), level_word(*l));
            for (_, n) in c.named() {
                let _ = write!(row, " {n} |");
            }
            let _ = writeln!(out, "{row}");
        }
    }
    let _ = writeln!(out);
    for s in r.statements.values().chain(&r.dialect_statements) {
        let _ = writeln!(out, "- {}", md(s));
    }
    let _ = writeln!(out);
    case_list(out, "Unsafe failures", &r.listed(FailureKind::Unsafe));
    case_list(
        out,
        "Permissive behaviours",
        &r.listed(FailureKind::Permissive),
    );
    case_list(
        out,
        "Different behaviours",
        &r.listed(FailureKind::Different),
    );
    case_list(
        out,
        "Errors, cases not run, known failures that passed",
        &r.other_problems(),
    );
}

/// The Markdown of `reports` (a matrix first when there are several).
pub fn render(reports: &[ReportView]) -> String {
    let mut out = String::from("# skillspec conformance\n\n");
    if reports.len() > 1 {
        matrix(&mut out, reports);
    }
    for r in reports {
        one(&mut out, r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_leaves_no_markup() {
        let s = md("<script>alert(1)</script> *x* [a](b) | `c`\n# h \u{1b}[2J");
        assert!(!s.contains('<') || s.contains("<br>"), "{s}");
        assert!(!s.contains("<script"), "{s}");
        assert!(s.contains("&lt;script&gt;"), "{s}");
        assert!(s.contains("\\*x\\*") && s.contains("\\[a\\]") && s.contains("\\|"));
        assert!(s.contains("<br>\\# h") && s.contains("\\\\u{1b}"), "{s}");
        assert!(!s.contains('\u{1b}'));
    }

    #[test]
    fn md_defangs_urls() {
        assert_eq!(
            md("see https://x.example/a, WWW.y.example and awww.z"),
            "see https\\[:\\]//x.example/a, WWW\\[.\\]y.example and awww.z"
        );
        assert_eq!(md("a:/b and www"), "a:/b and www");
    }
}
