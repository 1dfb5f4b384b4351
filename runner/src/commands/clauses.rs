//! `skillspec clauses`: the clauses with the cases that cite them (coverage for auditors).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{emit, load_suite};

pub fn clauses(cases: Option<PathBuf>, json: bool) -> ExitCode {
    use crate::cases::clauses::{Level, CLAUSES};
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
        let items: Vec<serde_json::Value> = CLAUSES
            .iter()
            .map(|c| {
                serde_json::json!({"id": c.id, "level": level(c.level), "feature": c.feature, "cases": citing(c.id)})
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::Value::Array(items));
    } else {
        let mut uncited = 0;
        for c in CLAUSES {
            let ids = citing(c.id);
            uncited += usize::from(ids.is_empty());
            let feature = c.feature.map(|f| format!(" [{f}]")).unwrap_or_default();
            let _ = writeln!(
                out,
                "{:<32} {:<6} {:>4} case(s){feature}",
                c.id,
                level(c.level),
                ids.len()
            );
        }
        let _ = writeln!(
            out,
            "{} clauses, {} cited by no case",
            CLAUSES.len(),
            uncited
        );
    }
    emit(&out)
}
