//! `skillspec check-tree ROOT --dialect agentskills`: a real skills tree judged by the open Agent
//! Skills standard (SPEC.md, "Dialect `agentskills`"), in one pass, as the reference's client of
//! that dialect sees it in the mode asked for: what loads, every problem of every skill directory
//! (loaded or not) with its `SKILL.md` line, clause id and a fix hint, the skills shadowed by
//! another of the same name, and the `SKILL.md` files no client finds because they lie inside
//! another skill's directory or deeper than the scan goes.
//!
//! Nothing here decides a rule: what loads and every problem are the reference's
//! ([`skillspec_reference::agentskills::discover`]); this module only looks for the `SKILL.md`
//! files the scan does not reach (a bounded walk that never follows a link) and presents the
//! results. The JSON has the shape of the portable `check-tree --json`: `loaded`, `skipped`,
//! `duplicates`, `summary`, `warnings`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use skillspec_reference::agentskills::{self, Catalog, Diagnostic, Mode, Roots};

use crate::reports::one_line;

/// A skills tree as the dialect's client in one mode sees it.
struct Examined {
    catalog: Catalog,
    /// Every skill directory the scan judged, with its problems (absolute `SKILL.md` path).
    judged: BTreeMap<PathBuf, Vec<Diagnostic>>,
    /// `SKILL.md` files the scan never reaches (inside a skill, or too deep), relative to the
    /// root.
    unreached: Vec<String>,
    /// The walk for them stopped at its bound.
    unreached_truncated: bool,
}

/// Renders the report on `root` in `mode`, as text or JSON.
pub fn render(root: &Path, mode: Mode, as_json: bool) -> Result<String, String> {
    let meta = std::fs::metadata(root)
        .map_err(|e| format!("cannot read the skills root {}: {e}", root.display()))?;
    if !meta.is_dir() {
        return Err(format!(
            "the skills root {} is not a directory",
            root.display()
        ));
    }
    let base = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let catalog = agentskills::discover(
        &Roots {
            project: Some(base.clone()),
            user: None,
        },
        mode,
    );
    let mut judged: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
    for s in &catalog.skills {
        judged.entry(s.location.clone()).or_default();
    }
    for d in &catalog.diagnostics {
        if d.problem.is_some() || d.clause == "agentskills.collision.warning" {
            judged.entry(d.path.clone()).or_default().push(d.clone());
        }
    }
    let (unreached, unreached_truncated) = unreached(&base, &judged);
    let x = Examined {
        catalog,
        judged,
        unreached,
        unreached_truncated,
    };
    Ok(if as_json {
        format!("{}\n", to_json(&base, mode, &x))
    } else {
        to_text(&base, mode, &x)
    })
}

/// `path` relative to `base`, as text.
fn rel(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The `SKILL.md` files below `base` that the scan did not judge (the walk of
/// [`crate::check_tree::unreached`], skipping what the scan skips: `.git`, `node_modules`).
fn unreached(base: &Path, judged: &BTreeMap<PathBuf, Vec<Diagnostic>>) -> (Vec<String>, bool) {
    crate::check_tree::unreached(base, &["SKILL.md"], &[".git", "node_modules"], &|p| {
        judged.contains_key(p)
    })
}

fn problem_json(base: &Path, d: &Diagnostic) -> Value {
    let mut v = json!({"clause": d.clause, "message": d.message});
    if let Some(p) = &d.problem {
        v = json!({"clause": p.clause, "level": if p.must { "MUST" } else { "SHOULD" },
                   "message": p.message, "hint": p.hint});
        if let Some(line) = p.line {
            v["skill_md_line"] = json!(line);
        }
    }
    v["path"] = json!(rel(base, &d.path));
    v
}

fn to_json(base: &Path, mode: Mode, x: &Examined) -> Value {
    let loaded: Vec<&PathBuf> = x.catalog.skills.iter().map(|s| &s.location).collect();
    let problems_of = |path: &PathBuf| -> Vec<Value> {
        x.judged
            .get(path)
            .into_iter()
            .flatten()
            .filter(|d| d.problem.is_some())
            .map(|d| problem_json(base, d))
            .collect()
    };
    let skipped: Vec<Value> = x
        .judged
        .iter()
        .filter(|(path, _)| !loaded.contains(path))
        .map(|(path, ds)| {
            let shadowed = ds
                .iter()
                .find(|d| d.clause == "agentskills.collision.warning");
            let mut v = json!({"path": rel(base, path), "problems": problems_of(path)});
            if let Some(d) = shadowed {
                v["shadowed"] = json!(d.message);
            }
            v
        })
        .collect();
    let mut by_clause: BTreeMap<&str, usize> = BTreeMap::new();
    for d in x
        .judged
        .values()
        .flatten()
        .filter_map(|d| d.problem.as_ref())
    {
        *by_clause.entry(d.clause).or_default() += 1;
    }
    let mut names: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for d in x
        .judged
        .values()
        .flatten()
        .filter(|d| d.clause == "agentskills.collision.warning")
    {
        names
            .entry("shadowed")
            .or_default()
            .push(rel(base, &d.path));
    }
    let mut warnings: Vec<Value> = x
        .unreached
        .iter()
        .map(|p| json!({"path": p, "warning": "skill_md_not_reached"}))
        .collect();
    if x.unreached_truncated {
        warnings.push(json!({"path": "", "warning": "unreached_walk_truncated"}));
    }
    for d in x
        .catalog
        .diagnostics
        .iter()
        .filter(|d| d.problem.is_none() && d.clause != "agentskills.collision.warning")
    {
        warnings
            .push(json!({"path": rel(base, &d.path), "warning": d.clause, "detail": d.message}));
    }
    json!({
        "dialect": {"name": "agentskills", "version": agentskills::VERSION, "mode": mode.as_str()},
        "loaded": x.catalog.skills.iter().map(|s| json!({
            "id": s.name, "path": rel(base, &s.directory), "name": s.name,
            "description": s.description, "location": s.location.to_string_lossy(),
            "problems": problems_of(&s.location),
        })).collect::<Vec<_>>(),
        "skipped": skipped,
        "duplicates": names.get("shadowed").cloned().unwrap_or_default(),
        "summary": {
            "loaded": x.catalog.skills.len(),
            "skipped": x.judged.len() - x.catalog.skills.len(),
            "loaded_with_problems": x.catalog.skills.iter()
                .filter(|s| x.judged.get(&s.location).is_some_and(|d| d.iter().any(|d| d.problem.as_ref().is_some_and(|p| p.must))))
                .count(),
            "by_clause": by_clause,
            "not_reached": x.unreached.len(),
        },
        "warnings": warnings,
    })
}

fn to_text(base: &Path, mode: Mode, x: &Examined) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "dialect agentskills {} ({}): loaded {} skill(s) from {}",
        agentskills::VERSION,
        mode.as_str(),
        x.catalog.skills.len(),
        one_line(&base.display().to_string())
    );
    for (path, ds) in &x.judged {
        let loaded = x.catalog.skills.iter().any(|s| &s.location == path);
        let problems: Vec<&Diagnostic> = ds.iter().collect();
        if loaded && problems.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "{} {}",
            if loaded { "loaded: " } else { "skipped:" },
            one_line(&rel(base, path))
        );
        for d in problems {
            match &d.problem {
                Some(p) => {
                    let line = p.line.map(|l| format!(":{l}")).unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "  SKILL.md{line} {} {}: {}",
                        if p.must { "MUST" } else { "SHOULD" },
                        p.clause,
                        one_line(&p.message)
                    );
                    let _ = writeln!(out, "    fix: {}", one_line(&p.hint));
                }
                None => {
                    let _ = writeln!(out, "  {}: {}", d.clause, one_line(&d.message));
                }
            }
        }
    }
    for p in &x.unreached {
        let _ = writeln!(
            out,
            "not reached: {} (inside another skill's directory or deeper than the scan goes: no client finds it)",
            one_line(p)
        );
    }
    let problems = x
        .judged
        .values()
        .flatten()
        .filter(|d| d.problem.is_some())
        .count();
    let _ = writeln!(
        out,
        "{} loaded, {} skipped, {problems} problem(s), {} SKILL.md not reached",
        x.catalog.skills.len(),
        x.judged.len() - x.catalog.skills.len(),
        x.unreached.len()
    );
    out
}
