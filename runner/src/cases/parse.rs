//! Reading one case file: the raw YAML shape ([`RawCase`]), its id, summary, clauses and
//! required features, and [`parse_case`], which assembles a validated [`Case`] from the parts the
//! sibling modules check (steps and tree: `steps`; the rules across them: `rules`).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_saphyr::Spanned;

use super::rules::{check_features, check_observables, skipped_without_loaded};
use super::steps::{check_layout, check_steps, parse_steps, parse_tree};
use super::*;
use crate::cases::budget::Budget;
use crate::cases::fixture::Tree;
use crate::protocol::claims::{Format, Mechanism};
use crate::protocol::dialects::Dialect;
use crate::protocol::features::Feature;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCase {
    id: Spanned<String>,
    summary: Spanned<String>,
    clauses: Vec<Spanned<String>>,
    #[serde(default)]
    requires: Vec<Spanned<String>>,
    #[serde(default)]
    formats: Vec<Spanned<String>>,
    #[serde(default)]
    exercises: Vec<Spanned<String>>,
    #[serde(default)]
    harmless: Option<Spanned<String>>,
    #[serde(default)]
    twin_of: Option<Spanned<String>>,
    #[serde(default)]
    preconditions: Vec<Precondition>,
    #[serde(default)]
    tree: Option<Spanned<Value>>,
    #[serde(default)]
    config: Option<Spanned<Value>>,
    #[serde(default)]
    canaries: Option<Spanned<Value>>,
    #[serde(default)]
    bounded: Option<Spanned<String>>,
    #[serde(default)]
    alone: bool,
    #[serde(default)]
    exclusive: Option<Spanned<String>>,
    #[serde(default)]
    mode: Option<Spanned<String>>,
    steps: Vec<Spanned<Value>>,
}

/// Parses and validates one case file's text. `area` is the directory below the cases root that
/// holds the file; `None` for a file directly in the root, whose area is the first word of its
/// id (`discovery` for `discovery.portable.loads`).
pub fn parse_case(file: &Path, area: Option<&str>, text: &str) -> Result<Case, CaseError> {
    let cx = Ctx { file };
    // YAML 1.2's booleans only (`true`/`false`): a bare `y`, `no` or `on` in a step's arguments
    // is the text it reads as, not YAML 1.1's boolean (probe O8).
    let options = serde_saphyr::options! { strict_booleans: true };
    let raw: RawCase = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        // The snippet is headed with the file's name, not the parser's `<input>`.
        let name = file.display().to_string();
        let rendered = e.render_with_options(serde_saphyr::render_options! {
            source_name: Some(name.as_str()),
        });
        CaseError {
            file: file.to_path_buf(),
            line: None,
            message: format!("not a valid case file: {rendered}"),
        }
    })?;
    let line = raw.id.referenced.line() as usize;
    let (id, summary) = id_and_summary(&cx, line, &raw)?;
    if raw.clauses.is_empty() {
        return Err(cx.err(line, "`clauses` must cite at least one clause id"));
    }
    let requires = parse_requires(&cx, &raw.requires)?;
    let formats = words(
        &cx,
        &raw.formats,
        "format",
        Format::parse,
        &Format::ALL.map(Format::word),
    )?;
    let exercises = words(
        &cx,
        &raw.exercises,
        "mechanism",
        Mechanism::parse,
        &Mechanism::ALL.map(Mechanism::word),
    )?;
    let clause_ids = parse_clauses(&cx, &raw.clauses, &requires)?;
    let (dialect, mode) = dialect_and_mode(&cx, line, &raw)?;
    let tree_line = raw
        .tree
        .as_ref()
        .map_or(line, |t| t.referenced.line() as usize);
    let mut budget = Budget::for_case(&id);
    let tree = match &raw.tree {
        Some(t) => parse_tree(&cx, tree_line, &t.value, &mut budget)?,
        None => Tree::default(),
    };
    let config_line = raw
        .config
        .as_ref()
        .map_or(line, |c| c.referenced.line() as usize);
    let config = match &raw.config {
        Some(c) => config::parse_config(&cx, config_line, &c.value)?,
        None => CaseConfig::default(),
    };
    let steps = parse_steps(&cx, line, &raw.steps, &mut budget)?;
    check_layout(&cx, (tree_line, &tree), (config_line, &config), &steps)?;
    check_steps(&cx, line, &steps)?;
    check_features(&cx, line, &requires, &config, &steps)?;
    if skipped_without_loaded(&steps) {
        return Err(cx.err(
            line,
            "a `discover` step that expects `skipped` also expects `loaded` (skip reasons are only checked for implementations with skip-report)",
        ));
    }
    let canaries = match &raw.canaries {
        Some(c) => exposure::Canaries::parse(&c.value)
            .map_err(|m| cx.err(c.referenced.line() as usize, m))?,
        None => exposure::Canaries::default(),
    };
    let bounded = raw.bounded.as_ref().map(|b| b.value.trim().to_owned());
    let harmless = raw.harmless.as_ref().map(|h| h.value.trim().to_owned());
    check_observables(
        &cx,
        line,
        (&tree, &config, &steps),
        &canaries,
        (bounded.as_deref(), harmless.as_deref()),
    )?;
    let exclusive = sharing(&cx, &raw)?;
    // A valid id has at least one word.
    let area = area
        .or_else(|| id.split('.').next())
        .unwrap_or("")
        .to_owned();
    Ok(Case {
        id,
        summary,
        clauses: clause_ids,
        requires,
        formats,
        exercises,
        twin_of: raw.twin_of.as_ref().map(|t| t.value.trim().to_owned()),
        preconditions: raw.preconditions.clone(),
        tree,
        config,
        steps,
        file: file.to_path_buf(),
        line,
        area,
        canaries,
        bounded,
        alone: raw.alone,
        exclusive,
        dialect,
        mode,
    })
}

/// The case's dialect, that of the clauses it cites (all of one dialect), and its `mode:`, one
/// of that dialect's modes (SPEC.md, "Dialects").
pub(super) fn dialect_and_mode(
    cx: &Ctx<'_>,
    line: usize,
    raw: &RawCase,
) -> Result<(&'static Dialect, Option<&'static str>), CaseError> {
    let mut dialect: Option<&'static Dialect> = None;
    for c in &raw.clauses {
        let Some(d) = clauses::dialect_of(&c.value) else {
            continue;
        };
        match dialect {
            Some(first) if first.name != d.name => {
                return Err(cx.err(
                    c.referenced.line() as usize,
                    format!(
                        "clause `{}` belongs to dialect `{}`, the case's other clauses to `{}`: a case checks the rules of one dialect",
                        c.value, d.name, first.name
                    ),
                ))
            }
            _ => dialect = Some(d),
        }
    }
    let dialect = dialect
        .or_else(|| crate::protocol::dialects::lookup(crate::protocol::dialects::DEFAULT))
        .ok_or_else(|| cx.err(line, "the suite has no default dialect"))?;
    let mode = match &raw.mode {
        None => None,
        Some(m) => Some(dialect.mode(m.value.trim()).ok_or_else(|| {
            let known = if dialect.modes.is_empty() {
                format!("dialect `{}` has no modes", dialect.name)
            } else {
                format!(
                    "the modes of dialect `{}`: {}",
                    dialect.name,
                    dialect.modes.join(", ")
                )
            };
            cx.err(
                m.referenced.line() as usize,
                format!("unknown mode `{}` ({known})", m.value),
            )
        })?),
    };
    Ok((dialect, mode))
}

/// The case's `id` (dot-separated lowercase words; `line` is its line) and its one-line `summary`.
pub(super) fn id_and_summary(
    cx: &Ctx<'_>,
    line: usize,
    raw: &RawCase,
) -> Result<(String, String), CaseError> {
    let id = raw.id.value.clone();
    if !valid_case_id(&id) {
        return Err(cx.err(
            line,
            format!("case id `{id}` must be dot-separated lowercase words (a-z, 0-9, `-`)"),
        ));
    }
    let summary = raw.summary.value.trim().to_owned();
    if summary.is_empty() || summary.contains('\n') {
        return Err(cx.err(
            raw.summary.referenced.line() as usize,
            "`summary` must be one non-empty sentence on one line",
        ));
    }
    Ok((id, summary))
}

/// A list of words from a closed list (`formats`, `exercises`), each once, in the order first
/// written.
fn words<T: PartialEq>(
    cx: &Ctx<'_>,
    raw: &[Spanned<String>],
    what: &str,
    parse: fn(&str) -> Option<T>,
    known: &[&str],
) -> Result<Vec<T>, CaseError> {
    let mut out = Vec::new();
    for r in raw {
        let w = parse(&r.value).ok_or_else(|| {
            cx.err(
                r.referenced.line() as usize,
                format!("unknown {what} `{}` (known: {})", r.value, known.join(", ")),
            )
        })?;
        if !out.contains(&w) {
            out.push(w);
        }
    }
    Ok(out)
}

/// `requires`: features from the closed list, each once, in the order first written.
pub(super) fn parse_requires(
    cx: &Ctx<'_>,
    raw: &[Spanned<String>],
) -> Result<Vec<Feature>, CaseError> {
    let mut requires = Vec::new();
    for r in raw {
        let f = Feature::parse(&r.value).ok_or_else(|| {
            let known: Vec<&str> = Feature::ALL.iter().map(|f| f.as_str()).collect();
            cx.err(
                r.referenced.line() as usize,
                format!(
                    "unknown feature `{}` (known: {})",
                    r.value,
                    known.join(", ")
                ),
            )
        })?;
        if !requires.contains(&f) {
            requires.push(f);
        }
    }
    Ok(requires)
}

/// `clauses`: known clause ids, each of a feature's clauses with that feature in `requires`.
pub(super) fn parse_clauses(
    cx: &Ctx<'_>,
    raw: &[Spanned<String>],
    requires: &[Feature],
) -> Result<Vec<String>, CaseError> {
    let mut clause_ids = Vec::new();
    for c in raw {
        let clause = clauses::lookup(&c.value).ok_or_else(|| {
            cx.err(
                c.referenced.line() as usize,
                format!("unknown clause id `{}`", c.value),
            )
        })?;
        if let Some(f) = clause.feature {
            if !requires.contains(&f) {
                return Err(cx.err(
                    c.referenced.line() as usize,
                    format!(
                        "clause `{}` belongs to feature `{f}`: add it to `requires`",
                        c.value
                    ),
                ));
            }
        }
        clause_ids.push(c.value.clone());
    }
    Ok(clause_ids)
}

/// The case's `exclusive:` name (one lowercase word), refused beside `alone: true`, which
/// already keeps every other case away.
pub(super) fn sharing(cx: &Ctx<'_>, raw: &RawCase) -> Result<Option<String>, CaseError> {
    let Some(name) = &raw.exclusive else {
        return Ok(None);
    };
    let at = name.referenced.line() as usize;
    if raw.alone {
        return Err(cx.err(
            at,
            "`exclusive` beside `alone: true` says nothing more: a case that runs alone runs beside no case; keep one of them",
        ));
    }
    if !valid_word(&name.value) {
        return Err(cx.err(
            at,
            format!(
                "`exclusive: {}` must name a resource in one lowercase word (a-z, 0-9, `-`, `_`), like `memory-4gib`",
                name.value
            ),
        ));
    }
    Ok(Some(name.value.clone()))
}

pub(super) fn valid_case_id(id: &str) -> bool {
    id.split('.').all(valid_word)
}

/// One word of a case id, or an `exclusive:` name: lowercase letters, digits, `-`, `_`.
pub(super) fn valid_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}
