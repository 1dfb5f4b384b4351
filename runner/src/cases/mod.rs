//! The case format (v1): the typed model of a case file and its loading and validation.
//!
//! A case file is YAML, one case per file (spec-cases/README.md describes the format for
//! authors; `spec-cases/case.schema.json` is the editor schema). Loading turns it into a [`Case`]
//! whose every part is already checked: known clause ids, features from the closed list,
//! expectations that fit their step, at least one expectation per case. Errors name the file and
//! line.
//!
//! Layer 2 of the runner: it depends only on [`crate::protocol`] (the wire types a case's steps
//! and expectations are written in) and [`crate::input`].

pub mod budget;
pub mod clauses;
pub mod config;
pub mod expect;
pub mod exposure;
pub mod fixture;
pub mod refusal;
pub mod template;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use crate::cases::budget::Budget;
use crate::cases::expect::{
    CallExpect, DiscoverExpect, Expect, FilesExpect, GuideExpect, PromptExpect, SelectExpect,
    ToolsExpect,
};
use crate::cases::fixture::{parse_raw_path, Layout, Tree};
use crate::protocol::features::Feature;
use crate::protocol::WireStep;

pub use config::{
    AllowEntry, Allowlist, Answer, CaseConfig, CaseHitl, CaseSkillDirs, HashSource, Platform,
    Session, SkillsRoot,
};

/// A problem with a case file, located as precisely as possible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for CaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// An operation the implementation performs.
    Implementation(WireStep),
    /// The runner writes these entries into the case root (creating or replacing them).
    Write(Tree),
    /// The runner removes these paths (files, symlinks or whole directories).
    Remove(Vec<Vec<u8>>),
    /// The runner waits this many milliseconds.
    Wait(u64),
}

impl Action {
    pub fn label(&self) -> String {
        match self {
            Action::Implementation(WireStep::Call { tool, .. }) => format!("call {tool}"),
            Action::Implementation(step) => step.op_name().to_owned(),
            Action::Write(_) => "write".into(),
            Action::Remove(_) => "remove".into(),
            Action::Wait(ms) => format!("wait {ms} ms"),
        }
    }
}

/// One step of a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The line of the step in its file (1-based).
    pub line: usize,
    pub action: Action,
    pub expect: Expect,
}

/// A condition on the environment the runner runs in (not on the implementation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precondition {
    /// Not running as root: file permissions are enforced.
    NotRoot,
}

impl Precondition {
    /// Why the precondition does not hold here, if it does not.
    pub fn unmet(self) -> Option<String> {
        match self {
            Precondition::NotRoot => rustix::process::geteuid().is_root().then(|| {
                "needs a runner that is not root, because root ignores file permissions".to_owned()
            }),
        }
    }
}

/// One validated case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    pub summary: String,
    pub clauses: Vec<String>,
    pub requires: Vec<Feature>,
    /// Conditions on where the runner runs; an unmet one skips the case.
    pub preconditions: Vec<Precondition>,
    pub tree: Tree,
    pub config: CaseConfig,
    pub steps: Vec<Step>,
    /// The file the case came from, and the line of its `id`.
    pub file: PathBuf,
    pub line: usize,
    /// The directory below the cases root that holds the file (`discovery`, `read`, ...), or for
    /// a file directly in the root the first word of the id.
    pub area: String,
    /// The canary tokens the case plants (SPEC.md, "How verdicts are judged").
    pub canaries: exposure::Canaries,
    /// What in the tree could make a runtime hang: then a step left unanswered is unsafe
    /// (`unbounded`) rather than an error.
    pub bounded: Option<String>,
    /// `alone: true`: see [`Case::runs_alone`].
    pub alone: bool,
    /// `exclusive: NAME`: see [`Case::exclusive_with`].
    pub exclusive: Option<String>,
}

impl Case {
    /// Whether the case runs with no other case beside it under `run --jobs N` (it says
    /// `alone: true`): for a case whose verdict a loaded machine could turn either way. The
    /// suite's timing cases do not need it (spec-cases/README.md, "Cases that measure time").
    pub fn runs_alone(&self) -> bool {
        self.alone
    }

    /// The name a case shares with the cases it must not run beside under `run --jobs N` (it
    /// says `exclusive: NAME`): cases of one name run one at a time, each beside any other case.
    /// For a case that needs much of one resource (the 4 GiB sparse reads: memory).
    pub fn exclusive_with(&self) -> Option<&str> {
        self.exclusive.as_deref()
    }

    /// Whether the case may hold a worker long: it names something that could make a runtime
    /// hang (`bounded:`) or a resource it holds alone (`exclusive:`). Side by side, such cases
    /// start first, so that their waits overlap the rest of the run.
    pub fn may_take_long(&self) -> bool {
        self.bounded.is_some() || self.exclusive.is_some()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: Spanned<String>,
    summary: Spanned<String>,
    clauses: Vec<Spanned<String>>,
    #[serde(default)]
    requires: Vec<Spanned<String>>,
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
    steps: Vec<Spanned<Value>>,
}

/// Builds errors for one file.
struct Ctx<'a> {
    file: &'a Path,
}

impl Ctx<'_> {
    fn err(&self, line: usize, message: impl Into<String>) -> CaseError {
        CaseError {
            file: self.file.to_path_buf(),
            line: (line > 0).then_some(line),
            message: message.into(),
        }
    }
}

/// Parses and validates one case file's text. `area` is the directory below the cases root that
/// holds the file; `None` for a file directly in the root, whose area is the first word of its
/// id (`discovery` for `discovery.portable.loads`).
pub fn parse_case(file: &Path, area: Option<&str>, text: &str) -> Result<Case, CaseError> {
    let cx = Ctx { file };
    let raw: RawCase = serde_saphyr::from_str(text).map_err(|e| {
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
    let clause_ids = parse_clauses(&cx, &raw.clauses, &requires)?;
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
    check_observables(
        &cx,
        line,
        (&tree, &config, &steps),
        &canaries,
        bounded.as_deref(),
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
    })
}

/// The case's `id` (dot-separated lowercase words; `line` is its line) and its one-line `summary`.
fn id_and_summary(cx: &Ctx<'_>, line: usize, raw: &RawCase) -> Result<(String, String), CaseError> {
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

/// `requires`: features from the closed list, each once, in the order first written.
fn parse_requires(cx: &Ctx<'_>, raw: &[Spanned<String>]) -> Result<Vec<Feature>, CaseError> {
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
fn parse_clauses(
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

/// `steps`: at least one (`line` is the case's), each charged to the case's `budget`.
fn parse_steps(
    cx: &Ctx<'_>,
    line: usize,
    raw: &[Spanned<Value>],
    budget: &mut Budget,
) -> Result<Vec<Step>, CaseError> {
    if raw.is_empty() {
        return Err(cx.err(line, "`steps` must not be empty"));
    }
    let mut steps = Vec::new();
    for s in raw {
        steps.push(parse_step(
            cx,
            s.referenced.line() as usize,
            &s.value,
            budget,
        )?);
    }
    Ok(steps)
}

/// The case checks something (some step expects something) and reaches the implementation.
fn check_steps(cx: &Ctx<'_>, line: usize, steps: &[Step]) -> Result<(), CaseError> {
    if steps.iter().all(|s| s.expect.is_empty()) {
        return Err(cx.err(
            line,
            "the case checks nothing: give at least one step an `expect`",
        ));
    }
    if !steps
        .iter()
        .any(|s| matches!(s.action, Action::Implementation(_)))
    {
        return Err(cx.err(line, "the case never reaches the implementation"));
    }
    Ok(())
}

/// Each optional setting, expectation and step the case uses has its feature in `requires`,
/// and a case requiring `hitl` configures its host.
fn check_features(
    cx: &Ctx<'_>,
    line: usize,
    requires: &[Feature],
    config: &CaseConfig,
    steps: &[Step],
) -> Result<(), CaseError> {
    if config.tool_allowlist.is_some() && !requires.contains(&Feature::ToolAllowlist) {
        return Err(cx.err(
            line,
            "`config.tool_allowlist` needs `requires: [tool-allowlist]` (a host may have no operator tool allowlist)",
        ));
    }
    if config.platform.is_some() && !requires.contains(&Feature::PlatformEmulation) {
        return Err(cx.err(
            line,
            "`config.platform` needs `requires: [platform-emulation]`",
        ));
    }
    let has = |f: Feature| requires.contains(&f);
    if config.skill_dirs.is_some() && !has(Feature::Selection) && !has(Feature::Trust) {
        return Err(cx.err(
            line,
            "`config.skill_dirs` needs `requires: [selection]` or `[trust]` (the profile's directories)",
        ));
    }
    if config.selection.is_some() && !has(Feature::Selection) {
        return Err(cx.err(line, "`config.selection` needs `requires: [selection]`"));
    }
    if config.registry.is_some() && !has(Feature::Trust) {
        return Err(cx.err(line, "`config.registry` needs `requires: [trust]`"));
    }
    if config.hitl.is_some() && !has(Feature::Hitl) {
        return Err(cx.err(line, "`config.hitl` needs `requires: [hitl]`"));
    }
    if has(Feature::Hitl) && config.hitl.is_none() {
        return Err(cx.err(
            line,
            "a case requiring `hitl` configures the profile's host: add `config.hitl` (`{}` for the defaults)",
        ));
    }
    if let Some(step) = steps.iter().find(|s| {
        matches!(&s.expect.outcome, Some(crate::cases::expect::OutcomeExpect::Call(c)) if c.asked.is_some())
            && !has(Feature::Hitl)
    }) {
        return Err(cx.err(step.line, "`asked` (the human's questions) needs `requires: [hitl]`"));
    }
    if let Some(step) = steps.iter().find(|s| {
        matches!(s.action, Action::Implementation(WireStep::Select { .. }))
            && !has(Feature::Selection)
    }) {
        return Err(cx.err(step.line, "a `select` step needs `requires: [selection]`"));
    }
    Ok(())
}

/// Every safety check of the case has an observable ([`exposure::check_observables`]).
fn check_observables(
    cx: &Ctx<'_>,
    line: usize,
    (tree, config, steps): (&Tree, &CaseConfig, &[Step]),
    canaries: &exposure::Canaries,
    bounded: Option<&str>,
) -> Result<(), CaseError> {
    use crate::cases::expect::OutcomeExpect as O;
    use crate::cases::fixture::EntryKind;
    let mut trees = vec![tree];
    trees.extend(steps.iter().filter_map(|s| match &s.action {
        Action::Write(t) => Some(t),
        _ => None,
    }));
    let planted = exposure::Planted::new(&trees, config.env.values());
    let mut forbidden = Vec::new();
    for t in &trees {
        for e in &t.entries {
            forbidden.push(("a path", String::from_utf8_lossy(&e.path).into_owned()));
            if let EntryKind::Symlink(target) = &e.kind {
                forbidden.push((
                    "a link target",
                    String::from_utf8_lossy(target).into_owned(),
                ));
            }
        }
    }
    let mut marks = Vec::new();
    let mut absent = Vec::new();
    for s in steps {
        if let Action::Implementation(wire) = &s.action {
            let args = serde_json::to_string(wire).unwrap_or_default();
            forbidden.push((exposure::ARGUMENTS, args));
        }
        forbidden.push(("an expected value", s.expect.positive_text()));
        if let Some(files) = &s.expect.files {
            absent.extend(files.absent.iter().map(|p| (s.line, p.clone())));
        }
        match &s.expect.outcome {
            Some(O::Prompt(p)) => {
                for (check, e) in &p.safety.0 {
                    let texts = match check.as_str() {
                        "contains" => p.contains.clone(),
                        "not_contains" => p.not_contains.clone(),
                        "occurrences" => p.occurrences.keys().cloned().collect(),
                        _ => Vec::new(),
                    };
                    marks.push((s.line, check.clone(), *e, texts));
                }
            }
            Some(O::Call(c)) => {
                for (check, e) in &c.safety.0 {
                    marks.push((s.line, check.clone(), *e, Vec::new()));
                }
            }
            _ => {}
        }
    }
    let observed = exposure::Observed {
        canaries,
        planted: &planted,
        forbidden,
        marks,
        absent,
        bounded: bounded.map(|b| (b, exposure::Planted::can_hang(&trees))),
    };
    exposure::check_observables(&observed)
        .map_err(|(at, m)| cx.err(if at == 0 { line } else { at }, m))
}

/// The case's `exclusive:` name (one lowercase word), refused beside `alone: true`, which
/// already keeps every other case away.
fn sharing(cx: &Ctx<'_>, raw: &RawCase) -> Result<Option<String>, CaseError> {
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

fn skipped_without_loaded(steps: &[Step]) -> bool {
    steps.iter().any(|s| {
        matches!(&s.expect.outcome, Some(crate::cases::expect::OutcomeExpect::Discover(d)) if d.skipped.is_some() && d.loaded.is_none())
    })
}

fn valid_case_id(id: &str) -> bool {
    id.split('.').all(valid_word)
}

/// One word of a case id, or an `exclusive:` name: lowercase letters, digits, `-`, `_`.
fn valid_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn as_object<'v>(
    cx: &Ctx<'_>,
    line: usize,
    what: &str,
    v: &'v Value,
) -> Result<&'v Map<String, Value>, CaseError> {
    v.as_object().ok_or_else(|| {
        cx.err(
            line,
            format!("`{what}` must be a mapping, got {}", kind_name(v)),
        )
    })
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn typed<T: for<'de> Deserialize<'de>>(
    cx: &Ctx<'_>,
    line: usize,
    what: &str,
    v: &Value,
) -> Result<T, CaseError> {
    serde_json::from_value(v.clone()).map_err(|e| cx.err(line, format!("in `{what}`: {e}")))
}

/// Refuses, when the case loads, what the runner could only do by following a link: an entry,
/// `remove` or `files` path below a symlink entry, a hard link whose source lies through one,
/// and hashing (`sha256_of`, `{sha256:PATH}`) anything but a regular file entry of the tree
/// (see [`Layout`]). Errors name the line of the `tree`, `config` or step.
fn check_layout(
    cx: &Ctx<'_>,
    (tree_line, tree): (usize, &Tree),
    (config_line, config): (usize, &CaseConfig),
    steps: &[Step],
) -> Result<(), CaseError> {
    let mut layout = Layout::default();
    layout
        .write(tree)
        .map_err(|m| cx.err(tree_line, format!("in `tree`: {m}")))?;
    let mut hashed: Vec<&str> = Vec::new();
    let mut raw_texts: Vec<&str> = config.env.values().map(String::as_str).collect();
    raw_texts.extend(config.python.as_deref());
    match &config.script_allowlist {
        Some(Allowlist::Raw(text)) => raw_texts.push(text),
        Some(Allowlist::Entries(entries)) => {
            hashed.extend(entries.iter().filter_map(|e| match &e.sha256 {
                HashSource::Of(path) => Some(path.as_str()),
                HashSource::Hex(_) => None,
            }))
        }
        None => {}
    }
    for text in raw_texts {
        hashed.extend(
            template::hashed_paths(text)
                .map_err(|m| cx.err(config_line, format!("in `config`: {m}")))?,
        );
    }
    for path in hashed {
        parse_raw_path(path)
            .and_then(|rel| layout.regular_file(&rel))
            .map_err(|m| {
                cx.err(
                    config_line,
                    format!("in `config`: cannot hash `{path}`: {m}"),
                )
            })?;
    }
    for step in steps {
        let at = |m: String| cx.err(step.line, format!("in `{}`: {m}", step.action.label()));
        match &step.action {
            Action::Write(t) => layout.write(t).map_err(at)?,
            Action::Remove(paths) => layout.remove(paths).map_err(at)?,
            Action::Implementation(_) | Action::Wait(_) => {}
        }
        if let Some(files) = &step.expect.files {
            for p in files.exists.iter().chain(&files.absent) {
                parse_raw_path(p)
                    .and_then(|rel| layout.reachable(&rel))
                    .map_err(|m| cx.err(step.line, format!("in `expect.files`: {m}")))?;
            }
        }
    }
    Ok(())
}

fn parse_tree(
    cx: &Ctx<'_>,
    line: usize,
    v: &Value,
    budget: &mut Budget,
) -> Result<Tree, CaseError> {
    let obj = as_object(cx, line, "tree", v)?;
    Tree::from_yaml_within(obj, budget).map_err(|m| cx.err(line, format!("in `tree`: {m}")))
}

/// The operation keys a step may have; exactly one per step.
const OPS: [&str; 11] = [
    "discover", "tools", "prompt", "call", "read", "run", "new_turn", "write", "remove", "wait",
    "select",
];

fn parse_step(
    cx: &Ctx<'_>,
    line: usize,
    v: &Value,
    budget: &mut Budget,
) -> Result<Step, CaseError> {
    let obj = as_object(cx, line, "step", v)?;
    for key in obj.keys() {
        if key != "expect" && !OPS.contains(&key.as_str()) {
            return Err(cx.err(
                line,
                format!("unknown step key `{key}` (operations: {})", OPS.join(", ")),
            ));
        }
    }
    let ops: Vec<&str> = OPS
        .iter()
        .copied()
        .filter(|k| obj.contains_key(*k))
        .collect();
    let op = match ops.as_slice() {
        [op] => *op,
        [] => {
            return Err(cx.err(
                line,
                format!("a step needs one operation: {}", OPS.join(", ")),
            ))
        }
        _ => {
            return Err(cx.err(
                line,
                format!(
                    "a step has one operation, this one has {}",
                    ops.join(" and ")
                ),
            ))
        }
    };
    let payload = &obj[op];
    let no_payload = |what: &str| -> Result<(), CaseError> {
        match payload {
            Value::Null => Ok(()),
            Value::Object(m) if m.is_empty() => Ok(()),
            _ => Err(cx.err(line, format!("`{what}` takes no value"))),
        }
    };
    let action = match op {
        "discover" => {
            no_payload(op)?;
            Action::Implementation(WireStep::Discover)
        }
        "tools" => {
            no_payload(op)?;
            Action::Implementation(WireStep::Tools)
        }
        "prompt" => {
            no_payload(op)?;
            Action::Implementation(WireStep::Prompt)
        }
        "new_turn" => {
            no_payload(op)?;
            Action::Implementation(WireStep::NewTurn)
        }
        "read" => Action::Implementation(WireStep::Call {
            tool: "skill_read_reference".into(),
            args: expand_repeats(payload.clone(), budget).map_err(|e| cx.err(line, e))?,
        }),
        "run" => Action::Implementation(WireStep::Call {
            tool: "skill_run_script".into(),
            args: expand_repeats(payload.clone(), budget).map_err(|e| cx.err(line, e))?,
        }),
        "call" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct RawCall {
                tool: String,
                args: Value,
            }
            let c: RawCall = typed(cx, line, "call", payload)?;
            Action::Implementation(WireStep::Call {
                tool: c.tool,
                args: expand_repeats(c.args, budget).map_err(|e| cx.err(line, e))?,
            })
        }
        "select" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct RawSelect {
                message: String,
                #[serde(default)]
                tools: Vec<String>,
            }
            let expanded = expand_repeats(payload.clone(), budget).map_err(|e| cx.err(line, e))?;
            let r: RawSelect = typed(cx, line, "select", &expanded)?;
            Action::Implementation(WireStep::Select {
                message: r.message,
                tools: r.tools,
            })
        }
        "write" => {
            let m = as_object(cx, line, "write", payload)?;
            Action::Write(
                Tree::from_yaml_within(m, budget)
                    .map_err(|e| cx.err(line, format!("in `write`: {e}")))?,
            )
        }
        "remove" => {
            let paths: Vec<String> = typed(cx, line, "remove", payload)?;
            let mut out = Vec::new();
            for p in paths {
                out.push(
                    parse_raw_path(&p).map_err(|e| cx.err(line, format!("in `remove`: {e}")))?,
                );
            }
            Action::Remove(out)
        }
        "wait" => {
            let ms: u64 = typed(cx, line, "wait (milliseconds)", payload)?;
            if ms > 60_000 {
                return Err(cx.err(line, "`wait` is at most 60000 ms"));
            }
            Action::Wait(ms)
        }
        _ => unreachable!("OPS lists every operation"),
    };
    let expect = match obj.get("expect") {
        None | Some(Value::Null) => Expect::default(),
        Some(e) => parse_expect(cx, line, &action, e)?,
    };
    Ok(Step {
        line,
        action,
        expect,
    })
}

/// Replaces every `{$repeat: TEXT, times: N, then: TEXT}` in tool arguments by TEXT repeated N
/// times followed by the optional `then` text, so long arguments stay readable in a case. Each
/// expansion is charged to the case's `budget` (at most [`budget::MAX_REPEAT_PER_CASE`] in all, and
/// counted in its bytes) before anything is allocated.
fn expand_repeats(v: Value, budget: &mut Budget) -> Result<Value, String> {
    match v {
        Value::Object(m) if m.contains_key("$repeat") => {
            let text = m.get("$repeat").and_then(Value::as_str);
            let times = m.get("times").and_then(Value::as_u64);
            let then = m.get("then").map(|t| t.as_str().ok_or(())).transpose();
            let only_known = m
                .keys()
                .all(|k| matches!(k.as_str(), "$repeat" | "times" | "then"));
            match (text, times, then, only_known) {
                (Some(text), Some(times), Ok(then), true) if times <= 1_000_000 => {
                    let then = then.unwrap_or("");
                    // At most 1,000,000 times a text from the case file: no overflow in u64.
                    budget.repeat(text.len() as u64 * times + then.len() as u64)?;
                    Ok(Value::String(text.repeat(times as usize) + then))
                }
                _ => Err(
                    "`$repeat` takes a text, `times` (at most 1000000) and an optional `then` text"
                        .into(),
                ),
            }
        }
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(k, expand_repeats(v, budget)?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => items
            .into_iter()
            .map(|item| expand_repeats(item, budget))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        other => Ok(other),
    }
}

fn parse_expect(
    cx: &Ctx<'_>,
    line: usize,
    action: &Action,
    v: &Value,
) -> Result<Expect, CaseError> {
    let obj = as_object(cx, line, "expect", v)?;
    let mut rest = obj.clone();
    let files: Option<FilesExpect> = match rest.remove("files") {
        Some(f) => Some(typed(cx, line, "expect.files", &f)?),
        None => None,
    };
    if rest.contains_key("safety")
        && !matches!(
            action,
            Action::Implementation(WireStep::Call { .. } | WireStep::Prompt)
        )
    {
        return Err(cx.err(
            line,
            "`safety` marks fields of a call's result or checks of a prompt; the mismatches of other steps are judged by fixed rules (SPEC.md, \"How verdicts are judged\")",
        ));
    }
    let rest = Value::Object(rest);
    let has_rest = rest.as_object().is_some_and(|m| !m.is_empty());
    use crate::cases::expect::OutcomeExpect as O;
    let outcome = match action {
        _ if !has_rest => None,
        Action::Implementation(WireStep::Discover) => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                #[serde(default)]
                loaded: Option<Vec<String>>,
                #[serde(default)]
                guides: BTreeMap<String, GuideExpect>,
                #[serde(default)]
                skipped: Option<BTreeMap<String, String>>,
            }
            let r: Raw = typed(cx, line, "expect (of discover)", &rest)?;
            Some(O::Discover(DiscoverExpect {
                loaded: r.loaded,
                guides: r.guides,
                skipped: r.skipped,
            }))
        }
        Action::Implementation(WireStep::Tools) => {
            let t: ToolsExpect = typed(cx, line, "expect (of tools)", &rest)?;
            if let Some(unknown) = t.unknown_tools().first() {
                return Err(cx.err(
                    line,
                    format!(
                        "`{unknown}` is not a tool the specification defines ({}); a host's own tools are never compared",
                        crate::cases::clauses::SPEC_TOOLS.join(", ")
                    ),
                ));
            }
            Some(O::Tools(t))
        }
        Action::Implementation(WireStep::Prompt) => Some(O::Prompt(typed::<PromptExpect>(
            cx,
            line,
            "expect (of prompt)",
            &rest,
        )?)),
        Action::Implementation(WireStep::Select { .. }) => {
            let e: SelectExpect = typed(cx, line, "expect (of select)", &rest)?;
            if e.is_empty() {
                return Err(cx.err(
                    line,
                    "a `select` expects `selected`, `scores` or `tool_ceiling`",
                ));
            }
            Some(O::Select(e))
        }
        Action::Implementation(WireStep::Call { .. }) => {
            let c: CallExpect = typed(cx, line, "expect (of a tool call)", &rest)?;
            if c.ok.is_some() == c.error.is_some() {
                return Err(cx.err(
                    line,
                    "a call's `expect` has exactly one of `ok` and `error`",
                ));
            }
            Some(O::Call(c))
        }
        other => {
            return Err(cx.err(
                line,
                format!("`{}` steps can only expect `files`", other.label()),
            ))
        }
    };
    let expect = Expect { outcome, files };
    check_safety_marks(cx, line, &expect)?;
    if let Some(O::Discover(d)) = &expect.outcome {
        for (id, g) in &d.guides {
            if g.is_empty() {
                return Err(cx.err(line, format!("`guides.{id}` checks nothing")));
            }
        }
    }
    Ok(expect)
}

/// Checks a step's `safety` list: each name once, and each one a field the step's
/// `ok` or `error` checks (not the error `code`, which fixed rules judge) or a check its `prompt`
/// expectation makes.
fn check_safety_marks(cx: &Ctx<'_>, line: usize, expect: &Expect) -> Result<(), CaseError> {
    use crate::cases::expect::OutcomeExpect as O;
    let (marks, known): (Vec<&String>, Vec<&str>) = match &expect.outcome {
        Some(O::Call(c)) => (
            c.safety.0.keys().collect(),
            c.ok.iter()
                .flat_map(|f| f.keys())
                .chain(c.error.iter().flat_map(|e| e.fields.keys()))
                .map(String::as_str)
                .collect(),
        ),
        Some(O::Prompt(p)) => {
            let mut known = Vec::new();
            if !p.contains.is_empty() {
                known.push("contains");
            }
            if !p.not_contains.is_empty() {
                known.push("not_contains");
            }
            if !p.occurrences.is_empty() {
                known.push("occurrences");
            }
            if p.same_as_baseline.is_some() {
                known.push("same_as_baseline");
            }
            (p.safety.0.keys().collect(), known)
        }
        _ => return Ok(()),
    };
    for mark in marks {
        if !known.contains(&mark.as_str()) {
            let hint = if mark == "code" {
                " (an error code is judged by fixed rules)".to_owned()
            } else if known.is_empty() {
                String::new()
            } else {
                format!(" (this step checks: {})", known.join(", "))
            };
            return Err(cx.err(
                line,
                format!(
                    "`safety` names `{mark}`, which this step's expectation does not check{hint}"
                ),
            ));
        }
    }
    Ok(())
}

/// All cases of a directory tree, sorted by id.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    pub root: PathBuf,
    pub cases: Vec<Case>,
}

/// Loads every `*.yaml` / `*.yml` file below `dir` (recursively) as one case each.
/// Returns every error found, not only the first.
pub fn load_dir(dir: &Path) -> Result<Suite, Vec<CaseError>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    collect_files(dir, &mut files, &mut errors);
    files.sort();
    let sources = files.into_iter().map(|file| {
        let area = file.strip_prefix(dir).ok().and_then(|rel| {
            let mut comps = rel.components();
            let first = comps.next()?;
            comps
                .next()
                .map(|_| first.as_os_str().to_string_lossy().into_owned())
        });
        // A case file is a few KiB (the suite's largest is under 3 KiB); the cap lets a case
        // spell out as much argument text as `$repeat` may make (16 MiB), and no FIFO or device
        // is ever waited on.
        let text = crate::input::read_regular_text(&file, MAX_CASE_FILE_BYTES, "a case file")
            .map_err(|e| e.replace(&format!("{}", file.display()), "it"));
        CaseSource { file, area, text }
    });
    assemble(
        dir.to_path_buf(),
        sources,
        errors,
        "no case files (*.yaml) found",
    )
}

/// One case file for [`assemble`]: its name in messages, its area (the directory below the
/// suite's root; `None` directly in the root: see [`parse_case`]), and its text or why it could
/// not be read.
pub struct CaseSource {
    pub file: PathBuf,
    pub area: Option<String>,
    pub text: Result<String, String>,
}

/// Parses each source as one case into a suite rooted at `root`, sorted by id: every error is
/// kept (the `errors` found before, unreadable files, bad cases, ids used twice), and a suite
/// with no case at all is the error `empty`. Whether the files came from a directory or from the
/// binary, they are judged alike.
pub fn assemble(
    root: PathBuf,
    sources: impl IntoIterator<Item = CaseSource>,
    errors: Vec<CaseError>,
    empty: &str,
) -> Result<Suite, Vec<CaseError>> {
    assemble_within(root, sources, errors, empty, budget::MAX_SUITE_HELD)
}

/// [`assemble`], with all cases together holding at most `max_held` bytes in memory.
pub(crate) fn assemble_within(
    root: PathBuf,
    sources: impl IntoIterator<Item = CaseSource>,
    mut errors: Vec<CaseError>,
    empty: &str,
    max_held: u64,
) -> Result<Suite, Vec<CaseError>> {
    let mut cases: Vec<Case> = Vec::new();
    let mut held = 0u64;
    for source in sources {
        let text = match source.text {
            Ok(t) => t,
            Err(message) => {
                errors.push(CaseError {
                    file: source.file,
                    line: None,
                    message,
                });
                continue;
            }
        };
        match parse_case(&source.file, source.area.as_deref(), &text) {
            Ok(case) if held + budget::held(&case) > max_held => {
                // spec-cases/README.md "Budgets": what all cases of a run hold in memory.
                errors.push(CaseError {
                    file: case.file.clone(),
                    line: Some(case.line),
                    message: format!(
                        "case `{}` holds {} bytes of file contents and arguments in memory, and the cases loaded before it {held}: all cases of a run together hold at most {} MiB ({max_held} bytes)",
                        case.id,
                        budget::held(&case),
                        max_held >> 20
                    ),
                });
            }
            Ok(case) => {
                held += budget::held(&case);
                if let Some(other) = cases.iter().find(|c| c.id == case.id) {
                    errors.push(CaseError {
                        file: case.file.clone(),
                        line: Some(case.line),
                        message: format!(
                            "duplicate case id `{}` (also in {}:{})",
                            case.id,
                            other.file.display(),
                            other.line
                        ),
                    });
                } else {
                    cases.push(case);
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if cases.is_empty() && errors.is_empty() {
        errors.push(CaseError {
            file: root.clone(),
            line: None,
            message: empty.into(),
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Suite { root, cases })
}

/// The largest case file the loader reads.
pub const MAX_CASE_FILE_BYTES: u64 = 16 * 1024 * 1024;

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<CaseError>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push(CaseError {
                file: dir.to_path_buf(),
                line: None,
                message: format!("cannot read the cases directory: {e}"),
            });
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            collect_files(&path, files, errors);
        } else if ft.is_file()
            && matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            )
        {
            files.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Case, CaseError> {
        parse_case(Path::new("t.yaml"), Some("t"), text)
    }

    const GOOD: &str = "id: t.one\nsummary: A case.\nclauses: [discovery.portable]\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: b\\n---\\n\"\nsteps:\n  - discover:\n    expect:\n      loaded: [a]\n";

    /// A case file directly in a flat `--cases DIR` takes its area from its id's first word
    /// (issue #18: it was `root`); one in a directory below takes the directory's name.
    #[test]
    fn a_case_file_in_the_root_takes_its_area_from_its_id() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(
            dir.path().join("one.yaml"),
            GOOD.replace("t.one", "read.flat.one"),
        )
        .expect("write");
        std::fs::create_dir(dir.path().join("odd")).expect("mkdir");
        std::fs::write(
            dir.path().join("odd/two.yaml"),
            GOOD.replace("t.one", "read.two"),
        )
        .expect("write");
        let suite = load_dir(dir.path()).expect("loads");
        let areas: Vec<(&str, &str)> = suite
            .cases
            .iter()
            .map(|c| (c.id.as_str(), c.area.as_str()))
            .collect();
        assert_eq!(areas, [("read.flat.one", "read"), ("read.two", "odd")]);
    }

    /// A YAML error's snippet is headed with the case file's name, not serde-saphyr's default
    /// `<input>` (issue #18).
    #[test]
    fn a_yaml_error_names_the_case_file() {
        let file = Path::new("cases/broken-case.yaml");
        let Err(e) = parse_case(file, None, "id: t.one\nsummary: [unclosed\nclauses: x\n") else {
            panic!("accepted broken YAML")
        };
        assert!(!e.message.contains("<input>"), "{}", e.message);
        assert!(
            e.message.contains("cases/broken-case.yaml:"),
            "{}",
            e.message
        );
    }

    /// `exclusive:` names one resource in one word, and says nothing beside `alone: true`.
    #[test]
    fn exclusive_names_a_resource_and_is_not_beside_alone() {
        let with = |extra: &str| parse(&GOOD.replace("steps:", &format!("{extra}\nsteps:")));
        let c = with("exclusive: memory-4gib").expect("parses");
        assert_eq!(c.exclusive_with(), Some("memory-4gib"));
        assert!(c.may_take_long() && !c.runs_alone());
        let plain = parse(GOOD).expect("parses");
        assert!(plain.exclusive_with().is_none() && !plain.may_take_long());
        let e = with("exclusive: Big Memory").expect_err("two words");
        assert!(e.message.contains("one lowercase word"), "{}", e.message);
        assert_eq!(e.line, Some(6));
        let e = with("alone: true\nexclusive: memory-4gib").expect_err("both");
        assert!(e.message.contains("keep one of them"), "{}", e.message);
    }

    #[test]
    fn good_case_parses() {
        let c = parse(GOOD).unwrap();
        assert_eq!(c.id, "t.one");
        assert_eq!(c.steps.len(), 1);
        assert_eq!(c.steps[0].line, 7);
        assert_eq!(c.config.skills_root, SkillsRoot::InCase("skills".into()));
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse(&GOOD.replace("discovery.portable", "discovery.nope")).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("discovery.nope"));
        let e = parse(&GOOD.replace("loaded: [a]", "loadd: [a]")).unwrap_err();
        assert_eq!(e.line, Some(7));
        let e = parse(&GOOD.replace("    expect:\n      loaded: [a]\n", "")).unwrap_err();
        assert!(e.message.contains("checks nothing"));
        let e = parse(&GOOD.replace("discovery.portable", "hitl.confirm")).unwrap_err();
        assert!(e.message.contains("`hitl`"), "{}", e.message);
    }

    #[test]
    fn every_safety_check_has_an_observable() {
        // A canary planted in a file outside the skill, looked for in every result.
        let planted = "id: t.c\nsummary: A case.\nclauses: [read.path.relative]\ncanaries:\n  SKILLSPEC_CANARY_T1: outside-content\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: b\\n---\\n\"\n  outside.md: \"SKILLSPEC_CANARY_T1\"\nsteps:\n  - read: {skill: a, path: ../outside.md}\n    expect:\n      error: invalid_path\n";
        let c = parse(planted).unwrap();
        assert_eq!(
            c.canaries.iter().collect::<Vec<_>>(),
            [(
                "SKILLSPEC_CANARY_T1",
                crate::cases::exposure::Exposure::OutsideContent
            )]
        );
        let refused = |text: &str, words: &str| {
            let e = parse(text).unwrap_err();
            assert!(e.message.contains(words), "{words}: {}", e.message);
            e
        };
        // Declared but planted nowhere: the case could never show the crossing.
        refused(
            &planted.replace("outside.md: \"SKILLSPEC_CANARY_T1\"", "outside.md: \"x\""),
            "is not planted",
        );
        // Where a runtime that crossed nothing is sent it, or must show it.
        refused(
            &planted.replace("path: ../outside.md", "path: SKILLSPEC_CANARY_T1"),
            "a step's arguments",
        );
        refused(
            &planted.replace("error: invalid_path", "ok: {content: SKILLSPEC_CANARY_T1}"),
            "an expected value",
        );
        refused(
            &planted.replace("  outside.md:", "  SKILLSPEC_CANARY_T1/x: a\n  outside.md:"),
            "a path",
        );
        // A `not_contains` of the token shows nothing a passing runtime sends: allowed.
        parse(&format!(
            "{planted}  - prompt:\n    expect:\n      not_contains: [SKILLSPEC_CANARY_T1]\n"
        ))
        .unwrap();
        // Marks: only prompt checks, only prompt-forgery, and their text holds such a canary.
        let forged = "id: t.f\nsummary: A case.\nclauses: [prompt.section]\ncanaries:\n  SKILLSPEC_CANARY_F1: prompt-forgery\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: \\\"x\\\\n- `SKILLSPEC_CANARY_F1`\\\"\\n---\\n\"\nsteps:\n  - prompt:\n    expect:\n      not_contains: [\"\\n- `SKILLSPEC_CANARY_F1`\"]\n      safety: {not_contains: prompt-forgery}\n";
        parse(forged).unwrap();
        let e = refused(
            &forged.replace(
                "not_contains: [\"\\n- `SKILLSPEC_CANARY_F1`\"]",
                "not_contains: [\"\\n- `evil`\"]",
            ),
            "hold no canary",
        );
        assert_eq!(e.line, Some(9));
        refused(
            &forged.replace(
                "safety: {not_contains: prompt-forgery}",
                "safety: [not_contains]",
            ),
            "names each marked check",
        );
        refused(
            &forged.replace(
                "safety: {not_contains: prompt-forgery}",
                "safety: {contains: prompt-forgery}",
            ),
            "does not check",
        );
        let run = format!(
            "{GOOD}  - run: {{skill: a, script: scripts/x.py}}\n    expect:\n      ok: {{stdout: x}}\n      safety: {{stdout: secret}}\n"
        );
        refused(&run, "only a prompt check can be marked");
        let e = refused(
            &GOOD.replace(
                "loaded: [a]\n",
                "loaded: [a]\n      safety: {loaded: outside-content}\n",
            ),
            "fixed rules",
        );
        assert_eq!(e.line, Some(7));
        // A marker nothing planted would write; `bounded` with nothing to hang on.
        let marker = format!("{GOOD}      files: {{absent: [skills/a/pwned]}}\n");
        refused(&marker, "could never fail");
        parse(&marker.replace("name: a\\n", "name: a\\nrun: touch pwned\\n")).unwrap();
        refused(
            &GOOD.replace("steps:", "bounded: a FIFO\nsteps:"),
            "nothing a runtime could hang on",
        );
        parse(
            &GOOD
                .replace("steps:", "bounded: a FIFO\nsteps:")
                .replace("tree:\n", "tree:\n  skills/f/SKILL.md: {fifo: true}\n"),
        )
        .unwrap();
        // A link that loops back up can hang a scan too.
        parse(
            &GOOD
                .replace("steps:", "bounded: a loop\nsteps:")
                .replace("tree:\n", "tree:\n  skills/loop: {symlink: ..}\n"),
        )
        .unwrap();
        // A forged line may come from a directory's name: planted there, a mark can use it.
        let named = forged
            .replace(
                "description: \\\"x\\\\n- `SKILLSPEC_CANARY_F1`\\\"",
                "description: b",
            )
            .replace(
                "skills/a/SKILL.md",
                "skills/a` SKILLSPEC_CANARY_F1 `/SKILL.md",
            );
        assert_ne!(named, forged);
        parse(&named).unwrap();
    }

    #[test]
    fn profile_config_and_steps_need_their_features() {
        let profile = "id: t.p\nsummary: A case.\nclauses: [selection.order]\nrequires: [selection]\nconfig:\n  skill_dirs: {user: user}\nsteps:\n  - select: {message: deploy, tools: [shell]}\n    expect:\n      selected: []\n";
        let c = parse(profile).unwrap();
        assert_eq!(c.config.skills_root, SkillsRoot::Unset);
        let Action::Implementation(WireStep::Select { message, tools }) = &c.steps[0].action else {
            panic!("a select step");
        };
        assert_eq!(
            (message.as_str(), tools.as_slice()),
            ("deploy", &["shell".to_owned()][..])
        );
        for (from, to, words) in [
            ("requires: [selection]", "requires: [trust]", "clause"),
            (
                "  skill_dirs: {user: user}",
                "  skill_dirs: {user: ../up}",
                "without `..`",
            ),
            (
                "  skill_dirs: {user: user}",
                "  skill_dirs: {user: user}\n  skills_root: s",
                "leave `skills_root` out",
            ),
            (
                "  skill_dirs: {user: user}",
                "  skill_dirs: {user: user}\n  registry: r",
                "[trust]",
            ),
            (
                "      selected: []",
                "      scores: {}",
                "`selected`, `scores` or `tool_ceiling`",
            ),
        ] {
            let e = parse(&profile.replace(from, to)).unwrap_err();
            assert!(e.message.contains(words), "{to}: {}", e.message);
        }
        let e = parse(&GOOD.replace("  - discover:", "  - select: {message: x}\n  - discover:"))
            .unwrap_err();
        assert!(e.message.contains("[selection]"), "{}", e.message);
    }

    #[test]
    fn hitl_config_defaults_and_needs_its_feature() {
        let hitl = "id: t.h\nsummary: A case.\nclauses: [hitl.confirm]\nrequires: [hitl]\nconfig:\n  hitl: {}\nsteps:\n  - call: {tool: run_skill_script, args: {skill: a, script: x.py}}\n    expect:\n      error: denied\n      asked: [{skill: a}]\n";
        let c = parse(hitl).unwrap();
        assert_eq!(
            c.config.hitl,
            Some(CaseHitl {
                enabled: true,
                script_tool_allowed: false,
                session: Session::Interactive,
                answers: Vec::new(),
                timeout_ms: None,
            })
        );
        let c = parse(&hitl.replace(
            "hitl: {}",
            "hitl: {enabled: false, script_tool_allowed: true, session: non-interactive, answers: [approve, deny], timeout_ms: 300}",
        ))
        .unwrap();
        let h = c.config.hitl.unwrap();
        assert_eq!(
            (
                h.enabled,
                h.script_tool_allowed,
                h.session,
                h.answers,
                h.timeout_ms
            ),
            (
                false,
                true,
                Session::NonInteractive,
                vec![Answer::Approve, Answer::Deny],
                Some("300".to_owned())
            )
        );
        for (from, to, words) in [
            ("hitl: {}", "hitl: {answers: [maybe]}", "maybe"),
            ("hitl: {}", "hitl: {session: tty}", "tty"),
            ("hitl: {}", "hitl: {timeout_ms: [1]}", "hitl.timeout_ms"),
            ("config:\n  hitl: {}\n", "", "add `config.hitl`"),
        ] {
            let e = parse(&hitl.replace(from, to)).unwrap_err();
            assert!(e.message.contains(words), "{to}: {}", e.message);
        }
        // Without the feature neither the configuration nor `asked` may appear.
        let core = hitl.replace(
            "clauses: [hitl.confirm]\nrequires: [hitl]\n",
            "clauses: [run.order]\n",
        );
        let e = parse(&core).unwrap_err();
        assert!(e.message.contains("requires: [hitl]"), "{}", e.message);
        let e = parse(&core.replace("config:\n  hitl: {}\n", "")).unwrap_err();
        assert!(e.message.contains("`asked`"), "{}", e.message);
    }

    #[test]
    fn repeats_are_bounded_per_case_before_allocating() {
        let read = |times: u64| {
            format!(
                "  - read: {{skill: a, path: {{$repeat: \"{}\", times: {times}}}}}\n",
                "x".repeat(1000)
            )
        };
        let ok = parse(&format!("{GOOD}{}", read(16_000))).unwrap();
        let Action::Implementation(WireStep::Call { args, .. }) = &ok.steps[1].action else {
            panic!("a read step");
        };
        assert_eq!(args["path"].as_str().map(str::len), Some(16_000_000));
        let e = parse(&format!("{GOOD}{}{}", read(8_000), read(9_000))).unwrap_err();
        assert_eq!(e.line, Some(11));
        assert!(e.message.contains("16 MiB"), "{}", e.message);
        let e = parse(&format!("{GOOD}{}", read(1_000_000))).unwrap_err();
        assert_eq!(e.line, Some(10));
    }

    #[test]
    fn paths_through_symlink_entries_are_refused_with_the_line() {
        let with_link = GOOD.replace("tree:\n", "tree:\n  out: {symlink: /etc}\n");
        let cases = [
            (with_link.replace("steps:\n", "  out/x: zz\nsteps:\n"), 5),
            (format!("{with_link}  - remove: [out/passwd]\n"), 11),
            (format!("{with_link}  - write: {{out/passwd: x}}\n"), 11),
            (
                format!("{with_link}  - discover:\n    expect: {{files: {{absent: [out/x]}}}}\n"),
                11,
            ),
            (with_link.replace("/etc}", "/etc, mode: 0o644}"), 5),
            (
                format!("{GOOD}config:\n  env: {{X: \"{{sha256:skills/a}}\"}}\n"),
                11,
            ),
        ];
        for (text, line) in cases {
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, Some(line), "{text}\n{}", e.message);
            assert!(
                e.message.contains("symlink") || e.message.contains("not a regular file"),
                "{}",
                e.message
            );
        }
        parse(&format!(
            "{with_link}  - remove: [out]\n  - write: {{out/x: zz}}\n"
        ))
        .unwrap();
    }
}
