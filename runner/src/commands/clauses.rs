//! `skillspec clauses [PATTERN]`: the clauses of every dialect with the cases that cite them
//! (coverage for auditors): in text, a line per clause with its count, and, for the clauses whose
//! id contains PATTERN, the ids of their cases beneath; in JSON, every clause with its case ids.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{emit, load_suite};

pub fn clauses(pattern: Option<&str>, cases: Option<PathBuf>, json: bool) -> ExitCode {
    use crate::cases::clauses::{all, Level};
    let suite = match load_suite(cases) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let citing = |id: &str| -> Vec<&str> {
        suite
            .cases
            .iter()
            .filter(|c| c.clauses.iter().any(|x| x == id))
            .map(|c| c.id.as_str())
            .collect()
    };
    let mut out = String::new();
    let level = |l: Level| match l {
        Level::Must => "MUST",
        Level::Should => "SHOULD",
        Level::May => "MAY",
    };
    if json {
        let items: Vec<serde_json::Value> = all()
            .map(|(d, c)| {
                serde_json::json!({"id": c.id, "dialect": d.name, "level": level(c.level), "feature": c.feature, "cases": citing(c.id)})
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::Value::Array(items));
    } else {
        let (mut uncited, mut count) = (0, 0);
        let shown = |id: &str| pattern.is_none_or(|p| id.contains(p));
        for (_, c) in all().filter(|(_, c)| shown(c.id)) {
            count += 1;
            let ids = citing(c.id);
            uncited += usize::from(ids.is_empty());
            let feature = c.feature.map(|f| format!(" [{f}]")).unwrap_or_default();
            let _ = writeln!(
                out,
                "{:<44} {:<6} {:>4} case(s){feature}",
                c.id,
                level(c.level),
                ids.len()
            );
            if pattern.is_some() {
                for id in &ids {
                    let _ = writeln!(out, "    {id}");
                }
            }
        }
        if count == 0 {
            eprintln!(
                "skillspec: no clause id contains {:?} (`skillspec clauses` lists them all)",
                pattern.unwrap_or_default()
            );
            return ExitCode::from(super::EXIT_USAGE);
        }
        let _ = writeln!(
            out,
            "{count} clauses, {uncited} cited by no case (SPEC.md says why for each){}",
            if pattern.is_none() {
                "; `skillspec clauses PATTERN` lists the cases of the clauses whose id contains PATTERN"
            } else {
                ""
            }
        );
    }
    emit(&out)
}
