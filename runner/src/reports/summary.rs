//! The terminal summary: the table of counts, the area lines, and the `result:` line
//! ([`summary_text`], [`result_word`], [`result_line`]).

use std::fmt::Write as _;

use super::*;
use crate::execution::Status;

/// The summary table printed at the end of a run (escaped with [`visible`]).
pub fn summary_text(report: &RunReport) -> String {
    visible(&summary_raw(report)).into_owned()
}

pub(super) fn summary_raw(report: &RunReport) -> String {
    let mut s = String::new();
    let info = &report.implementation;
    if info.name.is_empty() && info.version.is_empty() {
        let _ = writeln!(s, "implementation: unknown (no handshake)");
    } else {
        let _ = writeln!(
            s,
            "implementation: {} {}",
            one_line(&info.name),
            one_line(&info.version)
        );
    }
    let conformance = report.conformance();
    let row = |s: &mut String, name: &str, level: &str, c: &LevelCounts| {
        let _ = writeln!(
            s,
            "{:<12} {:<6} {:>6} {:>9} {:>6} {:>10} {:>9} {:>5} {:>11} {:>7} {:>7} {:>7}",
            name,
            level,
            c.passed,
            c.not_exercised,
            c.unsafe_failures,
            c.permissive_failures,
            c.different_failures,
            c.known_failures,
            c.unsupported,
            c.skipped,
            c.errored,
            c.not_run
        );
    };
    let _ = writeln!(
        s,
        "{:<12} {:<6} {:>6} {:>9} {:>6} {:>10} {:>9} {:>5} {:>11} {:>7} {:>7} {:>7}",
        "area",
        "level",
        "passed",
        "not exer.",
        "unsafe",
        "permissive",
        "different",
        "known",
        "unsupported",
        "skipped",
        "errored",
        "not run"
    );
    for (area, a) in &conformance.areas {
        for (level, c) in LEVELS.iter().zip(&a.levels) {
            if c.total() > 0 {
                row(&mut s, &one_line(area), level_word(*level), c);
            }
        }
    }
    row(&mut s, "total", "", &conformance.all());
    let _ = writeln!(s);
    for (area, a) in &conformance.areas {
        let _ = writeln!(s, "{}", one_line(&a.statement(area)));
    }
    let _ = writeln!(s);
    for line in report.dialect_statements(&conformance) {
        let _ = writeln!(s, "{}", one_line(&line));
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "result: {}", result_line(report, &conformance));
    if let Some(stopped) = &report.stopped {
        let _ = writeln!(s, "stopped early: {}", one_line(&stopped.reason));
    }
    s
}

/// The word a run is headlined with (`result: WORD.`): the worst kind of failure it shows,
/// listed as known or not — `UNSAFE` when any case failed unsafely, else `PERMISSIVE` when any
/// failed permissively — else `FAILED` when the run fails (a failure or error not listed as
/// known, a listed case that passed, cases not run), else `ok`. The exit code does not follow
/// the word: known failures of any kind leave the run passing.
pub fn result_word(report: &RunReport, conformance: &Conformance) -> &'static str {
    if conformance.unsafe_total() > 0 {
        "UNSAFE"
    } else if conformance.permissive_total() > 0 {
        "PERMISSIVE"
    } else if !report.totals().is_ok() {
        "FAILED"
    } else {
        "ok"
    }
}

/// The run's overall line (the summary prints it after `result: `): [`result_word`], the
/// unsafe, permissive and different failures, then the other counts. `conformance` is the
/// report's.
pub fn result_line(report: &RunReport, conformance: &Conformance) -> String {
    let t = report.totals();
    let verdict = result_word(report, conformance);
    let with_known = |n: usize, what: &str, known: usize| {
        if known > 0 {
            format!("{n} {what} ({known} of them listed as known)")
        } else {
            format!("{n} {what}")
        }
    };
    let distinct = report.unsafe_distinct();
    let unsafe_word = if distinct < conformance.unsafe_total() {
        format!(
            "unsafe, {distinct} distinct {}",
            if distinct == 1 {
                "behaviour"
            } else {
                "behaviours"
            }
        )
    } else {
        "unsafe".to_owned()
    };
    let mut line = format!(
        "{verdict}. {}; {}; {}; {} passed; {} not exercised; {} unsupported; {}; {} {}",
        with_known(
            conformance.unsafe_total(),
            &unsafe_word,
            conformance.unsafe_known()
        ),
        with_known(
            conformance.permissive_total(),
            "permissive",
            conformance.permissive_known()
        ),
        with_known(
            conformance.different_total(),
            "safe but different",
            conformance.different_known()
        ),
        t.passed,
        t.not_exercised,
        t.unsupported,
        with_known(
            conformance.errored_total(),
            "errored",
            conformance.errored_known()
        ),
        t.total(),
        if t.total() == 1 { "case" } else { "cases" }
    );
    if t.not_run > 0 {
        line.push_str(&format!(" ({} not run: the run stopped early)", t.not_run));
    }
    if t.skipped > 0 {
        line.push_str(&format!(
            " ({} skipped: {})",
            t.skipped,
            skip_reasons(report)
        ));
    }
    if t.fixed > 0 {
        line.push_str(&format!(
            " ({} known failures; {} listed as known failures but passed: remove {} from the list)",
            t.known_failures,
            t.fixed,
            if t.fixed == 1 { "it" } else { "them" }
        ));
    } else if t.known_failures > 0 {
        line.push_str(&format!(" ({} known failures)", t.known_failures));
    }
    line
}

/// Why the run's skipped cases were skipped, in words, without `-v`: the one reason (`needs a
/// runner that is not root, because root ignores file permissions`), or each with its count, in
/// the order first met. A case skipped with no reason (a report from elsewhere) counts as `a
/// precondition is not met here`.
pub(super) fn skip_reasons(report: &RunReport) -> String {
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for r in report.cases().filter(|r| r.verdict == Verdict::Skipped) {
        let why = match &r.outcome.status {
            Status::Skipped(why) if !why.trim().is_empty() => why.as_str(),
            _ => "a precondition is not met here",
        };
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, n)) => *n += 1,
            None => reasons.push((why, 1)),
        }
    }
    match reasons.as_slice() {
        [(why, _)] => one_line(why).into_owned(),
        _ => reasons
            .iter()
            .map(|(why, n)| format!("{n} {}", one_line(why)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}
