//! `skillspec list`: the cases and the clauses they check, as text or JSON.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{emit, load_suite};

pub fn list(cases: Option<PathBuf>, json: bool) -> ExitCode {
    let suite = match load_suite(cases) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut out = String::new();
    if json {
        let items: Vec<serde_json::Value> = suite
            .cases
            .iter()
            .map(|c| {
                serde_json::json!({
                    "id": c.id, "summary": c.summary, "clauses": c.clauses, "requires": c.requires,
                    "area": c.area, "file": c.file.display().to_string(), "line": c.line,
                })
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::Value::Array(items));
    } else {
        for c in &suite.cases {
            let _ = writeln!(out, "{:<50} {}", c.id, c.clauses.join(" "));
        }
        let _ = writeln!(out, "{} cases", suite.cases.len());
    }
    emit(&out)
}
