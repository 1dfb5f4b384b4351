//! Expectations: what a case says a step must produce, and the comparison that turns an actual
//! outcome into a list of mismatches. Only codes and structured fields are compared, never an
//! implementation's free-text `message`.
//!
//! Each mismatch is also judged here (SPEC.md, "How verdicts are judged"):
//! [`MismatchKind::Unsafe`] with its [`Exposure`] when the comparison itself shows a crossing (a
//! removed tool offered or answering, a marked prompt check: a forged line);
//! [`MismatchKind::Permissive`] when the runtime accepted what it must refuse (a refusal answered
//! with success, a call that reached execution, an extra guide loaded or skill selected);
//! [`MismatchKind::Interop`] otherwise. Canaries, markers, processes and timeouts, the other
//! observables, are judged where the case runs ([`crate::execution`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

pub use crate::cases::exposure::{Exposure, Marks};
use crate::protocol::{
    CallResult, DiscoverResult, PromptResult, SelectResult, StepOutcome, ToolsResult, WireStep,
};

/// Everything one step expects.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expect {
    pub outcome: Option<OutcomeExpect>,
    pub files: Option<FilesExpect>,
}

impl Expect {
    pub fn is_empty(&self) -> bool {
        self.outcome.is_none() && self.files.as_ref().is_none_or(FilesExpect::is_empty)
    }
}

impl Expect {
    /// Every text this expectation requires a passing runtime to send or show (rendered as
    /// JSON, `not_contains` left out): a scanned canary may not occur in it, or a runtime that
    /// crossed nothing would show the canary ([`crate::cases::exposure::check_observables`]).
    pub fn positive_text(&self) -> String {
        use serde_json::json;
        let matcher = |m: &Matcher| match m {
            Matcher::Exact(v) => v.to_string(),
            Matcher::Ops(ops) => {
                let mut ops = (**ops).clone();
                ops.not_contains = None;
                serde_json::to_string(&ops).unwrap_or_default()
            }
        };
        let fields = |m: &BTreeMap<String, Matcher>| -> String {
            m.values().map(matcher).collect::<Vec<_>>().join(" ")
        };
        let mut out = Vec::new();
        match &self.outcome {
            Some(OutcomeExpect::Discover(d)) => {
                out.push(json!(d.loaded).to_string());
                for g in d.guides.values() {
                    let all = [&g.format, &g.name, &g.description, &g.body, &g.trust];
                    out.extend(all.into_iter().flatten().map(matcher));
                }
                out.push(json!(d.skipped).to_string());
            }
            Some(OutcomeExpect::Tools(t)) => out.push(json!(t.offered).to_string()),
            Some(OutcomeExpect::Prompt(p)) => {
                out.push(json!(p.contains).to_string());
                out.extend(p.occurrences.keys().cloned());
            }
            Some(OutcomeExpect::Call(c)) => {
                out.extend(c.ok.iter().map(fields));
                if let Some(e) = &c.error {
                    out.push(e.code.clone());
                    out.push(fields(&e.fields));
                }
                out.extend(c.asked.iter().flatten().map(fields));
            }
            Some(OutcomeExpect::Select(sel)) => {
                out.push(json!(sel.selected).to_string());
                out.push(json!(sel.tool_ceiling).to_string());
            }
            None => {}
        }
        out.join("\n")
    }
}

/// The expectation on a step's result, by operation.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeExpect {
    Discover(DiscoverExpect),
    Tools(ToolsExpect),
    Prompt(PromptExpect),
    Call(CallExpect),
    Select(SelectExpect),
}

impl OutcomeExpect {
    /// This expectation with `{root}` in its texts replaced by the case root (the absolute
    /// directories profile `hitl` reports). Only call and prompt expectations hold such texts.
    pub fn with_root(&self, root: &str) -> OutcomeExpect {
        let text = |t: &String| t.replace("{root}", root);
        let fields = |m: &BTreeMap<String, Matcher>| -> BTreeMap<String, Matcher> {
            m.iter()
                .map(|(k, v)| (k.clone(), v.with_root(root)))
                .collect()
        };
        match self {
            OutcomeExpect::Call(c) => OutcomeExpect::Call(CallExpect {
                safety: c.safety.clone(),
                ok: c.ok.as_ref().map(fields),
                error: c.error.as_ref().map(|e| ErrorExpect {
                    code: e.code.clone(),
                    fields: fields(&e.fields),
                }),
                asked: c.asked.as_ref().map(|qs| qs.iter().map(fields).collect()),
            }),
            OutcomeExpect::Prompt(p) => OutcomeExpect::Prompt(PromptExpect {
                safety: p.safety.clone(),
                contains: p.contains.iter().map(text).collect(),
                not_contains: p.not_contains.iter().map(text).collect(),
                occurrences: p.occurrences.iter().map(|(k, n)| (text(k), *n)).collect(),
                same_as_baseline: p.same_as_baseline,
                native: p.native.clone(),
            }),
            other => other.clone(),
        }
    }
}

impl OutcomeExpect {
    /// This expectation for a runtime whose tools have native names (see
    /// [`PromptExpect::with_native_names`]); only prompt expectations change.
    pub fn with_native_names(self, names: &BTreeMap<String, String>) -> OutcomeExpect {
        match self {
            OutcomeExpect::Prompt(p) if !names.is_empty() => {
                OutcomeExpect::Prompt(p.with_native_names(names))
            }
            other => other,
        }
    }
}

fn value_with_root(v: &Value, root: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("{root}", root)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| value_with_root(i, root)).collect())
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), value_with_root(v, root)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What `select` (profile `selection`) must report. Each key is optional; at least one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectExpect {
    /// The selected skills, exactly and in this order. One the case does not list is a safety
    /// mismatch (a gated, vetoed or over-budget skill made active).
    #[serde(default)]
    pub selected: Option<Vec<String>>,
    /// The scores of selected skills.
    #[serde(default)]
    pub scores: BTreeMap<String, u64>,
    /// The tools that remain, as a set. One the case does not list is a safety mismatch (a
    /// ceiling wider than allowed).
    #[serde(default)]
    pub tool_ceiling: Option<Vec<String>>,
}

impl SelectExpect {
    pub fn is_empty(&self) -> bool {
        self.selected.is_none() && self.scores.is_empty() && self.tool_ceiling.is_none()
    }
}

/// What `discover` must report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiscoverExpect {
    /// The loaded ids, exactly and in this order.
    pub loaded: Option<Vec<String>>,
    /// Fields of individual loaded guides.
    pub guides: BTreeMap<String, GuideExpect>,
    /// Paths that must be reported skipped, with their reason code; checked only for
    /// implementations with the `skip-report` feature (a case also says what `loaded` must be).
    pub skipped: Option<BTreeMap<String, String>>,
}

/// Fields of one loaded guide.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuideExpect {
    #[serde(default)]
    pub format: Option<Matcher>,
    #[serde(default)]
    pub name: Option<Matcher>,
    #[serde(default)]
    pub description: Option<Matcher>,
    #[serde(default)]
    pub body: Option<Matcher>,
    /// Profile `trust`: `trusted` or `installed`.
    #[serde(default)]
    pub trust: Option<Matcher>,
}

impl GuideExpect {
    pub fn is_empty(&self) -> bool {
        self.format.is_none()
            && self.name.is_none()
            && self.description.is_none()
            && self.body.is_none()
            && self.trust.is_none()
    }
}

/// What `tools` must report. Only the tools the specification defines
/// ([`crate::cases::clauses::SPEC_TOOLS`]) are compared: every real host offers its own tools
/// as well, and those are not the suite's business.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsExpect {
    /// Of the spec's tools, exactly these are offered (order does not matter).
    #[serde(default)]
    pub offered: Option<Vec<String>>,
    /// None of these is offered.
    #[serde(default)]
    pub not_offered: Vec<String>,
}

impl ToolsExpect {
    /// Tool names this expectation mentions that the specification does not define.
    pub fn unknown_tools(&self) -> Vec<&str> {
        self.offered
            .iter()
            .flatten()
            .chain(&self.not_offered)
            .map(String::as_str)
            .filter(|t| !crate::cases::clauses::SPEC_TOOLS.contains(t))
            .collect()
    }
}

/// What `prompt` must report.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptExpect {
    /// The checks of this step (`contains`, `not_contains`, `occurrences`, `same_as_baseline`)
    /// whose violation is a safety mismatch; the others are interop.
    #[serde(default)]
    pub safety: Marks,
    /// Each text occurs in the prompt.
    #[serde(default)]
    pub contains: Vec<String>,
    /// No text occurs in the prompt.
    #[serde(default)]
    pub not_contains: Vec<String>,
    /// Each text occurs exactly this many times.
    #[serde(default)]
    pub occurrences: BTreeMap<String, usize>,
    /// The prompt is (or is not) byte-identical to the prompt the implementation reports it
    /// rendered without the feature. Self-reported, so only ever a secondary check: cases pin
    /// what the prompt must and must not contain directly.
    #[serde(default)]
    pub same_as_baseline: Option<bool>,
    /// Set by [`PromptExpect::with_native_names`], never read from a case: each checked text
    /// that names a tool the adapter mapped, with that tool spelled by its native name. A check
    /// holds for both spellings (see [`PromptExpect::with_native_names`]).
    #[serde(skip)]
    pub native: BTreeMap<String, String>,
}

impl PromptExpect {
    /// This expectation for a runtime whose tools have their own names (`names`: spec tool →
    /// native name, `implementation.tool_names`): where a checked text names a mapped tool, the
    /// check holds for the native spelling as well. `contains` is satisfied by either spelling,
    /// `not_contains` finds neither, `occurrences` counts both (PROTOCOL.md, "Mapping a
    /// runtime's own tools"). A tool name counts only as a whole word of the text (`read_skill`
    /// is not renamed inside `read_skill_file`).
    // spec: prompt.filtered
    pub fn with_native_names(&self, names: &BTreeMap<String, String>) -> PromptExpect {
        let mut native = BTreeMap::new();
        let texts = self
            .contains
            .iter()
            .chain(&self.not_contains)
            .chain(self.occurrences.keys());
        for t in texts {
            if let Some(n) = native_spelling(t, names) {
                native.insert(t.clone(), n);
            }
        }
        PromptExpect {
            native,
            ..self.clone()
        }
    }

    /// Whether `text` occurs in `prompt`, in the case's or (for a mapped tool) the native
    /// spelling.
    fn found(&self, prompt: &str, text: &str) -> bool {
        prompt.contains(text) || self.native.get(text).is_some_and(|n| prompt.contains(n))
    }

    /// How often `text` occurs in `prompt` in either spelling (leftmost, longest, not
    /// overlapping: for one spelling, what `str::matches` counts).
    fn count(&self, prompt: &str, text: &str) -> usize {
        let Some(other) = self.native.get(text) else {
            return prompt.matches(text).count();
        };
        let (long, short) = if other.len() >= text.len() {
            (other.as_str(), text)
        } else {
            (text, other.as_str())
        };
        let (mut n, mut rest) = (0, prompt);
        while let Some(i) = rest.find(short).into_iter().chain(rest.find(long)).min() {
            let after = &rest[i..];
            let len = if after.starts_with(long) {
                long.len()
            } else {
                short.len()
            };
            n += 1;
            rest = &after[len..];
        }
        n
    }

    /// `text` in words for a report, with its native spelling when it has one.
    fn described(&self, text: &str) -> String {
        let case = show(&Value::from(text));
        match self.native.get(text) {
            Some(n) => format!(
                "{case} (or, by the adapter's tool names, {})",
                show(&Value::from(n.as_str()))
            ),
            None => case,
        }
    }
}

/// `text` with every whole-word mention of a tool of `names` replaced by its native name, or
/// `None` when it mentions none. The longest name wins where several start at one place.
fn native_spelling(text: &str, names: &BTreeMap<String, String>) -> Option<String> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut by_length: Vec<(&String, &String)> = names.iter().collect();
    by_length.sort_by_key(|(spec, _)| std::cmp::Reverse(spec.len()));
    let (mut out, mut changed, mut i) = (String::new(), false, 0);
    while i < text.len() {
        let before = text[..i].chars().next_back();
        let hit = by_length.iter().find(|(spec, _)| {
            text[i..].starts_with(spec.as_str())
                && !word(before)
                && !word(text[i + spec.len()..].chars().next())
        });
        match hit {
            Some((spec, native)) => {
                out.push_str(native);
                i += spec.len();
                changed = true;
            }
            None => {
                let c = text[i..].chars().next().unwrap_or_default();
                out.push(c);
                i += c.len_utf8().max(1);
            }
        }
    }
    changed.then_some(out)
}

/// What a tool call must return: exactly one of `ok` and `error`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallExpect {
    /// The result fields (of `ok`, or of `error` beside its code) whose mismatch is a safety
    /// mismatch: where the safety property lives inside the answer, such as a helper's stdout
    /// that shows a leaked credential. Other field mismatches are interop.
    #[serde(default)]
    pub safety: Marks,
    /// The call succeeds; each listed field of the value matches.
    #[serde(default)]
    pub ok: Option<BTreeMap<String, Matcher>>,
    /// The call fails with this code (and these fields match).
    #[serde(default)]
    pub error: Option<ErrorExpect>,
    /// Profile `hitl`: the questions the runtime asked the human during the call, exactly this
    /// many and in this order, each with these fields (`tool`, `skill`, `script`, `args`). A
    /// question missing (or about another call) where the script ran is a safety mismatch.
    #[serde(default)]
    pub asked: Option<Vec<BTreeMap<String, Matcher>>>,
}

/// An expected error: a code, optionally with field matchers.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorExpect {
    pub code: String,
    pub fields: BTreeMap<String, Matcher>,
}

impl<'de> Deserialize<'de> for ErrorExpect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::String(code) => Ok(ErrorExpect {
                code,
                fields: BTreeMap::new(),
            }),
            Value::Object(mut m) => {
                let code = match m.remove("code") {
                    Some(Value::String(c)) => c,
                    _ => return Err(D::Error::custom("`error` needs a string `code`")),
                };
                if m.contains_key("message") {
                    return Err(D::Error::custom(
                        "`message` is free text and is never compared; check codes and fields",
                    ));
                }
                let mut fields = BTreeMap::new();
                for (k, v) in m {
                    fields.insert(k, Matcher::from_value(v).map_err(D::Error::custom)?);
                }
                Ok(ErrorExpect { code, fields })
            }
            other => Err(D::Error::custom(format!(
                "`error` must be a code or a mapping, got {other}"
            ))),
        }
    }
}

/// Filesystem state after a step, paths relative to the case root.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesExpect {
    #[serde(default)]
    pub exists: Vec<String>,
    #[serde(default)]
    pub absent: Vec<String>,
}

impl FilesExpect {
    pub fn is_empty(&self) -> bool {
        self.exists.is_empty() && self.absent.is_empty()
    }
}

/// How one value is checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// Equal to this JSON value.
    Exact(Value),
    /// Every listed operation holds.
    Ops(Box<MatchOps>),
}

/// The operations of a matcher mapping, e.g. `{contains: "x", length: 3}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MatchOps {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// Substring of a string, or element of a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<OneOrMany>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<OneOrMany>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_with: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_with: Option<String>,
    /// Bytes of a string (UTF-8), or elements of a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
    /// Whether the field is there at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present: Option<bool>,
}

/// One value or a list of them.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(untagged)]
pub enum OneOrMany {
    Many(Vec<Value>),
    One(Value),
}

impl OneOrMany {
    fn items(&self) -> Vec<&Value> {
        match self {
            OneOrMany::Many(v) => v.iter().collect(),
            OneOrMany::One(v) => vec![v],
        }
    }
}

const OP_KEYS: [&str; 7] = [
    "equals",
    "contains",
    "not_contains",
    "starts_with",
    "ends_with",
    "length",
    "present",
];

impl Matcher {
    /// A mapping whose keys are all matcher operations is a matcher; anything else is an exact value.
    pub fn from_value(v: Value) -> Result<Matcher, String> {
        match &v {
            Value::Object(m)
                if !m.is_empty() && m.keys().all(|k| OP_KEYS.contains(&k.as_str())) =>
            {
                serde_json::from_value(v)
                    .map(Matcher::Ops)
                    .map_err(|e| e.to_string())
            }
            _ => Ok(Matcher::Exact(v)),
        }
    }

    /// Checks `actual` (`None` when the field is missing); returns what failed.
    pub fn check(&self, actual: Option<&Value>) -> Result<(), String> {
        match self {
            Matcher::Exact(want) => match actual {
                Some(a) if a == want => Ok(()),
                _ => Err(format!("equal to {}", show(want))),
            },
            Matcher::Ops(ops) => {
                if let Some(present) = ops.present {
                    if actual.is_some() != present {
                        return Err(if present {
                            "present".into()
                        } else {
                            "absent".into()
                        });
                    }
                }
                let Some(a) = actual else {
                    return if ops.present == Some(false) {
                        Ok(())
                    } else {
                        Err("present".into())
                    };
                };
                if let Some(want) = &ops.equals {
                    if a != want {
                        return Err(format!("equal to {}", show(want)));
                    }
                }
                for item in ops.contains.iter().flat_map(OneOrMany::items) {
                    if !contains(a, item) {
                        return Err(format!("containing {}", show(item)));
                    }
                }
                for item in ops.not_contains.iter().flat_map(OneOrMany::items) {
                    if contains(a, item) {
                        return Err(format!("not containing {}", show(item)));
                    }
                }
                if let Some(p) = &ops.starts_with {
                    if !a.as_str().is_some_and(|s| s.starts_with(p.as_str())) {
                        return Err(format!("starting with {}", show(&Value::from(p.clone()))));
                    }
                }
                if let Some(p) = &ops.ends_with {
                    if !a.as_str().is_some_and(|s| s.ends_with(p.as_str())) {
                        return Err(format!("ending with {}", show(&Value::from(p.clone()))));
                    }
                }
                if let Some(n) = ops.length {
                    let len = match a {
                        Value::String(s) => Some(s.len() as u64),
                        Value::Array(v) => Some(v.len() as u64),
                        _ => None,
                    };
                    if len != Some(n) {
                        return Err(format!("of length {n}"));
                    }
                }
                Ok(())
            }
        }
    }
}

impl Matcher {
    /// This matcher with `{root}` in its texts replaced by `root`.
    pub fn with_root(&self, root: &str) -> Matcher {
        match self {
            Matcher::Exact(v) => Matcher::Exact(value_with_root(v, root)),
            Matcher::Ops(ops) => {
                let many = |o: &Option<OneOrMany>| {
                    o.as_ref().map(|o| match o {
                        OneOrMany::Many(v) => {
                            OneOrMany::Many(v.iter().map(|i| value_with_root(i, root)).collect())
                        }
                        OneOrMany::One(v) => OneOrMany::One(value_with_root(v, root)),
                    })
                };
                Matcher::Ops(Box::new(MatchOps {
                    equals: ops.equals.as_ref().map(|v| value_with_root(v, root)),
                    contains: many(&ops.contains),
                    not_contains: many(&ops.not_contains),
                    starts_with: ops.starts_with.as_ref().map(|t| t.replace("{root}", root)),
                    ends_with: ops.ends_with.as_ref().map(|t| t.replace("{root}", root)),
                    length: ops.length,
                    present: ops.present,
                }))
            }
        }
    }
}

impl<'de> Deserialize<'de> for Matcher {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Matcher::from_value(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

fn contains(haystack: &Value, needle: &Value) -> bool {
    match (haystack, needle) {
        (Value::String(h), Value::String(n)) => h.contains(n.as_str()),
        (Value::Array(items), n) => items.contains(n),
        _ => false,
    }
}

pub use crate::protocol::show;

/// How a mismatch is judged (SPEC.md, "How verdicts are judged").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MismatchKind {
    /// The run shows a security boundary crossed, by an observable a runtime that did not cross
    /// cannot produce.
    Unsafe(Exposure),
    /// The runtime accepted (loaded, offered, ran, passed on) what the specification requires it
    /// to refuse, and the run shows no crossing.
    Permissive,
    /// The runtime stayed safe but did not give the specified answer: another error code,
    /// missing fields, a refusal of something allowed, another order.
    Interop,
}

impl MismatchKind {
    pub fn word(self) -> &'static str {
        match self {
            MismatchKind::Unsafe(_) => "unsafe",
            MismatchKind::Permissive => "permissive",
            MismatchKind::Interop => "different",
        }
    }

    /// The exposure of an unsafe mismatch.
    pub fn exposure(self) -> Option<Exposure> {
        match self {
            MismatchKind::Unsafe(e) => Some(e),
            _ => None,
        }
    }
}

/// One difference between expected and actual.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub what: String,
    pub expected: String,
    pub actual: String,
    pub kind: MismatchKind,
    /// The tool of the specification whose absence alone explains this mismatch: a call to it
    /// answered `unknown_tool`, or a `tools` step did not offer it where the case expects it.
    /// Used to tell an area that is not implemented from one that fails.
    pub missing_tool: Option<String>,
}

impl Mismatch {
    /// A mismatch where the runtime stayed safe.
    pub fn interop(
        what: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Mismatch {
        Mismatch {
            what: what.into(),
            expected: expected.into(),
            actual: actual.into(),
            kind: MismatchKind::Interop,
            missing_tool: None,
        }
    }

    /// A mismatch where the runtime accepted what it must refuse, with no crossing shown.
    pub fn permissive(
        what: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Mismatch {
        Mismatch {
            kind: MismatchKind::Permissive,
            ..Mismatch::interop(what, expected, actual)
        }
    }

    /// A mismatch that shows the boundary `exposure` crossed.
    pub fn exposed(
        exposure: Exposure,
        what: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Mismatch {
        Mismatch {
            kind: MismatchKind::Unsafe(exposure),
            ..Mismatch::interop(what, expected, actual)
        }
    }

    /// This mismatch judged as `kind`.
    fn judged(self, kind: MismatchKind) -> Mismatch {
        Mismatch { kind, ..self }
    }

    /// This mismatch explained by the absence of `tool`.
    fn for_missing(self, tool: &str) -> Mismatch {
        Mismatch {
            missing_tool: Some(tool.to_owned()),
            ..self
        }
    }
}

fn mismatch(
    what: impl Into<String>,
    expected: impl Into<String>,
    actual: impl Into<String>,
) -> Mismatch {
    Mismatch::interop(what, expected, actual)
}

/// The error codes of a call that reached execution: the helper was started, or the runtime
/// tried to start it. Where a case expects any other error (a refusal before execution), one of
/// these shows that the runtime went past a check that had to stop it.
pub const EXECUTION_CODES: &[&str] = &["spawn_failed", "script_failed", "timeout", "output_limit"];

/// The error code of a call to a tool the implementation does not have.
pub const UNKNOWN_TOOL: &str = "unknown_tool";

/// Compares an outcome with the expectation of its step (`step`, the operation that produced
/// it), and judges each mismatch. `skip_report` says whether the implementation declares the
/// `skip-report` feature: without it, `skipped` is not checked.
pub fn check_outcome(
    expect: &OutcomeExpect,
    step: &WireStep,
    actual: &StepOutcome,
    skip_report: bool,
) -> Vec<Mismatch> {
    match (expect, actual) {
        (OutcomeExpect::Discover(e), StepOutcome::Discover(a)) => check_discover(e, a, skip_report),
        (OutcomeExpect::Tools(e), StepOutcome::Tools(a)) => check_tools(e, a),
        (OutcomeExpect::Prompt(e), StepOutcome::Prompt(a)) => check_prompt(e, a),
        (OutcomeExpect::Call(e), StepOutcome::Call(a)) => {
            let tool = match step {
                WireStep::Call { tool, .. } => Some(tool.as_str()),
                _ => None,
            };
            check_call(e, tool, a)
        }
        (OutcomeExpect::Select(e), StepOutcome::Select(a)) => check_select(e, a),
        (e, StepOutcome::Refused(message)) => {
            crate::cases::refusal::judge(e, step, message, skip_report)
        }
        (_, other) => vec![mismatch(
            "result kind",
            "the result of this step's operation",
            format!("{other:?}"),
        )],
    }
}

/// How [`check_allowed_list`] words its two mismatches.
struct AllowedList {
    /// The safety mismatch: items present that the case does not list.
    extra: &'static str,
    /// What the implementation did with the items ("loaded", "selected").
    verb: &'static str,
    /// The interop mismatch: the listed items, in order.
    order: &'static str,
}

/// A list the case gives exactly (loaded guides, selected skills): an item the case does not list
/// is safety (the runtime let something through it must not); what is left must be the expected
/// list exactly, and a missing item or another order is interop.
fn check_allowed_list(words: AllowedList, want: &[String], got: &[&str]) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let extra: Vec<&str> = got.iter().copied().filter(|g| !want.contains(g)).collect();
    if !extra.is_empty() {
        out.push(Mismatch::permissive(
            words.extra,
            format!("only {}", show(&serde_json::json!(want))),
            format!(
                "also {} ({}: {})",
                show(&serde_json::json!(extra)),
                words.verb,
                show(&serde_json::json!(got))
            ),
        ));
    }
    let kept: Vec<&str> = got.iter().copied().filter(|g| want.contains(g)).collect();
    if kept != want {
        out.push(mismatch(
            words.order,
            show(&serde_json::json!(want)),
            show(&serde_json::json!(got)),
        ));
    }
    out
}

fn check_discover(e: &DiscoverExpect, a: &DiscoverResult, skip_report: bool) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let ids: Vec<&str> = a.loaded.iter().map(|g| g.id.as_str()).collect();
    if let Some(want) = &e.loaded {
        out.extend(check_allowed_list(
            AllowedList {
                extra: "guides loaded that the case does not allow",
                verb: "loaded",
                order: "loaded ids, in order",
            },
            want,
            &ids,
        ));
    }
    for (id, g) in &e.guides {
        let Some(actual) = a.loaded.iter().find(|l| &l.id == id) else {
            out.push(mismatch(format!("guide `{id}`"), "loaded", "not loaded"));
            continue;
        };
        let fields = [
            ("format", &g.format, &actual.format),
            ("name", &g.name, &actual.name),
            ("description", &g.description, &actual.description),
            ("body", &g.body, &actual.body),
            ("trust", &g.trust, &actual.trust),
        ];
        for (field, matcher, value) in fields {
            if let Some(m) = matcher {
                let v = value.clone().map(Value::from);
                if let Err(want) = m.check(v.as_ref()) {
                    out.push(mismatch(
                        format!("guide `{id}` {field}"),
                        want,
                        v.map_or("(missing)".into(), |v| show(&v)),
                    ));
                }
            }
        }
    }
    if let Some(want) = e.skipped.as_ref().filter(|_| skip_report) {
        match &a.skipped {
            None => out.push(mismatch(
                "skipped paths",
                "a skip report",
                "none (the implementation reports no `skipped`)",
            )),
            Some(skipped) => {
                for (path, reason) in want {
                    let got: Vec<&str> = skipped
                        .iter()
                        .filter(|s| &s.path == path)
                        .map(|s| s.reason.as_str())
                        .collect();
                    if !got.contains(&reason.as_str()) {
                        let actual = if got.is_empty() {
                            "not reported".to_owned()
                        } else {
                            got.join(", ")
                        };
                        out.push(mismatch(
                            format!("skip reason of `{path}`"),
                            reason.clone(),
                            actual,
                        ));
                    }
                }
            }
        }
    }
    out
}

/// A `select` step (SPEC.md, "How verdicts are judged"): a skill selected that the case does not
/// list, or a tool left in the ceiling that it does not list, is safety; a missing one, another
/// order or another score is interop.
fn check_select(e: &SelectExpect, a: &SelectResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let names: Vec<&str> = a.selected.iter().map(|s| s.name.as_str()).collect();
    if let Some(want) = &e.selected {
        out.extend(check_allowed_list(
            AllowedList {
                extra: "skills selected that the case does not allow",
                verb: "selected",
                order: "selected skills, in order",
            },
            want,
            &names,
        ));
    }
    for (name, want) in &e.scores {
        match a.selected.iter().find(|s| &s.name == name) {
            None => out.push(mismatch(
                format!("score of `{name}`"),
                want.to_string(),
                format!(
                    "not selected (selected: {})",
                    show(&serde_json::json!(names))
                ),
            )),
            Some(s) if s.score != Some(*want) => out.push(mismatch(
                format!("score of `{name}`"),
                want.to_string(),
                s.score.map_or_else(
                    || "not reported (the runtime gave no score)".to_string(),
                    |n| n.to_string(),
                ),
            )),
            Some(_) => {}
        }
    }
    if let Some(want) = &e.tool_ceiling {
        let all = show(&serde_json::json!(a.tool_ceiling));
        for t in &a.tool_ceiling {
            if !want.contains(t) {
                out.push(Mismatch::exposed(
                    Exposure::RemovedTool,
                    format!("tool `{t}` in the ceiling"),
                    format!(
                        "removed (the ceiling is {})",
                        show(&serde_json::json!(want))
                    ),
                    format!("kept (ceiling: {all})"),
                ));
            }
        }
        for t in want {
            if !a.tool_ceiling.contains(t) {
                out.push(mismatch(
                    format!("tool `{t}` in the ceiling"),
                    "kept",
                    format!("removed (ceiling: {all})"),
                ));
            }
        }
    }
    out
}

fn check_tools(e: &ToolsExpect, a: &ToolsResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut actual = a.offered.clone();
    actual.sort();
    if let Some(want) = &e.offered {
        let spec_offered: Vec<&str> = actual
            .iter()
            .map(String::as_str)
            .filter(|t| crate::cases::clauses::SPEC_TOOLS.contains(t))
            .collect();
        let all = show(&Value::from(actual.clone()));
        for t in &spec_offered {
            if !want.iter().any(|w| w == t) {
                out.push(Mismatch::exposed(
                    Exposure::RemovedTool,
                    format!("tool `{t}`"),
                    format!(
                        "not offered (of the spec's tools, only {})",
                        show(&Value::from(want.clone()))
                    ),
                    format!("offered (all offered: {all})"),
                ));
            }
        }
        for t in want {
            if !spec_offered.contains(&t.as_str()) {
                out.push(
                    mismatch(
                        format!("tool `{t}`"),
                        "offered",
                        format!("not offered (all offered: {all})"),
                    )
                    .for_missing(t),
                );
            }
        }
    }
    for t in &e.not_offered {
        if actual.contains(t) {
            out.push(Mismatch::exposed(
                Exposure::RemovedTool,
                format!("tool `{t}`"),
                "not offered",
                "offered",
            ));
        }
    }
    out
}

fn check_prompt(e: &PromptExpect, a: &PromptResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    // The kind of a violated check: different unless the case marks it with its exposure.
    let kind = |check: &str| {
        e.safety
            .get(check)
            .map_or(MismatchKind::Interop, MismatchKind::Unsafe)
    };
    for c in &e.contains {
        if !e.found(&a.text, c) {
            out.push(
                mismatch(
                    "prompt",
                    format!("containing {}", e.described(c)),
                    show(&Value::from(a.text.clone())),
                )
                .judged(kind("contains")),
            );
        }
    }
    for c in &e.not_contains {
        if e.found(&a.text, c) {
            out.push(
                mismatch(
                    "prompt",
                    format!("not containing {}", e.described(c)),
                    show(&Value::from(a.text.clone())),
                )
                .judged(kind("not_contains")),
            );
        }
    }
    for (text, want) in &e.occurrences {
        let got = e.count(&a.text, text);
        if got != *want {
            out.push(
                mismatch(
                    format!("occurrences of {} in the prompt", e.described(text)),
                    want.to_string(),
                    format!("{got} in {}", show(&Value::from(a.text.clone()))),
                )
                .judged(kind("occurrences")),
            );
        }
    }
    if let Some(same) = e.same_as_baseline {
        if (a.text == a.baseline) != same {
            let expected = if same {
                "byte-identical to the baseline prompt"
            } else {
                "different from the baseline prompt"
            };
            out.push(
                mismatch(
                    "prompt against baseline",
                    expected,
                    format!(
                        "text {} / baseline {}",
                        show(&Value::from(a.text.clone())),
                        show(&Value::from(a.baseline.clone()))
                    ),
                )
                .judged(kind("same_as_baseline")),
            );
        }
    }
    out
}

/// The field mismatches of a result `value` against `fields`, judged by the case's `safety`
/// list; `side` is `result` or `error`.
fn check_fields(
    side: &str,
    fields: &BTreeMap<String, Matcher>,
    value: &serde_json::Map<String, Value>,
    safety: &Marks,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for (k, m) in fields {
        if let Err(want) = m.check(value.get(k)) {
            let kind = safety
                .get(k)
                .map_or(MismatchKind::Interop, MismatchKind::Unsafe);
            out.push(
                mismatch(
                    format!("{side} field `{k}`"),
                    want,
                    value.get(k).map_or("(missing)".into(), show),
                )
                .judged(kind),
            );
        }
    }
    out
}

/// `tool`, when it is one the specification defines and `error` says the implementation does
/// not have it (while the case expected something else).
fn missing_spec_tool<'t>(
    tool: Option<&'t str>,
    error: &serde_json::Map<String, Value>,
    expected_code: Option<&str>,
) -> Option<&'t str> {
    let code = error.get("code").and_then(Value::as_str)?;
    tool.filter(|t| {
        code == UNKNOWN_TOOL
            && expected_code != Some(UNKNOWN_TOOL)
            && crate::cases::clauses::SPEC_TOOLS.contains(t)
    })
}

fn check_call(e: &CallExpect, tool: Option<&str>, a: &CallResult) -> Vec<Mismatch> {
    let mut out = check_call_outcome(e, tool, a);
    if let Some(want) = &e.asked {
        out.extend(check_asked(want, a));
    }
    out
}

/// Compares the questions a call asked the human (profile `hitl`) with the expected ones. Where
/// the script ran (a success, or an execution code), an expected question that is missing or
/// differs is a safety mismatch: the script ran without the approval the case requires. Any
/// other difference is interop.
fn check_asked(want: &[BTreeMap<String, Matcher>], a: &CallResult) -> Vec<Mismatch> {
    let asked = a.asked();
    let ran = match a {
        CallResult::Ok { .. } => true,
        CallResult::Err { error, .. } => error
            .get("code")
            .and_then(Value::as_str)
            .is_some_and(|c| EXECUTION_CODES.contains(&c)),
    };
    let mut failed = asked.len() != want.len();
    let mut unasked = false;
    for (i, fields) in want.iter().enumerate() {
        let Some(q) = asked.get(i).and_then(Value::as_object) else {
            failed = true;
            unasked = true;
            continue;
        };
        if fields.iter().any(|(k, m)| m.check(q.get(k)).is_err()) {
            failed = true;
            unasked = true;
        }
    }
    if !failed {
        return Vec::new();
    }
    let expected = format!(
        "{} question(s): [{}]",
        want.len(),
        want.iter()
            .map(|f| {
                f.iter()
                    .map(|(k, m)| format!("{k} {}", describe_matcher(m)))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .map(|t| format!("{{{t}}}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let actual = show(&Value::Array(asked.to_vec()));
    vec![if ran && unasked {
        Mismatch::permissive(
            "questions asked to the human (the script ran)",
            expected,
            actual,
        )
    } else {
        mismatch("questions asked to the human", expected, actual)
    }]
}

/// A matcher in words, for a report.
fn describe_matcher(m: &Matcher) -> String {
    match m {
        Matcher::Exact(v) => show(v),
        Matcher::Ops(ops) => show(&serde_json::to_value(ops.as_ref()).unwrap_or(Value::Null)),
    }
}

fn check_call_outcome(e: &CallExpect, tool: Option<&str>, a: &CallResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    match (e, a) {
        (
            CallExpect {
                ok: Some(fields), ..
            },
            CallResult::Ok { value, .. },
        ) => out.extend(check_fields("result", fields, value, &e.safety)),
        (CallExpect { ok: Some(_), .. }, CallResult::Err { error, .. }) => {
            // Refusing what should have been allowed is too strict, never unsafe.
            let m = mismatch(
                "call outcome",
                "success",
                format!("error {}", show(&Value::Object(error.clone()))),
            );
            out.push(match missing_spec_tool(tool, error, None) {
                Some(t) => m.for_missing(t),
                None => m,
            });
        }
        (
            CallExpect {
                error: Some(want), ..
            },
            CallResult::Err { error, .. },
        ) => {
            let code = error.get("code").and_then(Value::as_str).unwrap_or("");
            if let Some(t) = missing_spec_tool(tool, error, Some(&want.code)) {
                out.push(
                    mismatch(
                        "error code",
                        want.code.clone(),
                        format!("{code} (the implementation has no tool `{t}`)"),
                    )
                    .for_missing(t),
                );
                return out;
            }
            if code != want.code {
                // Reaching execution where a check before it had to refuse: the helper was
                // started (or about to be). Any other code is a safe refusal of its own.
                let ran = EXECUTION_CODES.contains(&code)
                    && !EXECUTION_CODES.contains(&want.code.as_str());
                let actual = format!("{code} ({})", show(&Value::Object(error.clone())));
                out.push(if ran {
                    Mismatch::permissive(
                        "error code (the call reached execution)",
                        format!("{} (refused before anything is started)", want.code),
                        actual,
                    )
                } else {
                    mismatch("error code", want.code.clone(), actual)
                });
            }
            out.extend(check_fields("error", &want.fields, error, &e.safety));
        }
        (
            CallExpect {
                error: Some(want), ..
            },
            CallResult::Ok { value, .. },
        ) => {
            // The specification requires a refusal and the runtime did it anyway: permissive,
            // unless the tool had been removed (it answered a call it must not take).
            let (what, expected, actual) = (
                "call outcome",
                format!("error {}", want.code),
                format!("success {}", show(&Value::Object(value.clone()))),
            );
            out.push(if want.code == UNKNOWN_TOOL {
                Mismatch::exposed(Exposure::RemovedTool, what, expected, actual)
            } else {
                Mismatch::permissive(what, expected, actual)
            });
        }
        (
            CallExpect {
                ok: None,
                error: None,
                ..
            },
            _,
        ) => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::LoadedGuide;
    use serde_json::json;

    fn call_step(tool: &str) -> WireStep {
        WireStep::Call {
            tool: tool.into(),
            args: json!({}),
        }
    }

    fn expect_call(yaml: Value) -> OutcomeExpect {
        OutcomeExpect::Call(serde_json::from_value(yaml).unwrap())
    }

    fn result(v: Value) -> StepOutcome {
        StepOutcome::Call(serde_json::from_value(v).unwrap())
    }

    /// The kinds of the mismatches of a call to `tool`, and their missing tools.
    fn judge_call(tool: &str, expect: Value, actual: Value) -> Vec<(MismatchKind, Option<String>)> {
        check_outcome(
            &expect_call(expect),
            &call_step(tool),
            &result(actual),
            false,
        )
        .into_iter()
        .map(|m| (m.kind, m.missing_tool))
        .collect()
    }

    const READ: &str = "skill_read_reference";
    const RUN: &str = "skill_run_script";
    use MismatchKind::{Interop, Permissive};
    const REMOVED: MismatchKind = MismatchKind::Unsafe(Exposure::RemovedTool);

    #[test]
    fn a_refusal_answered_with_success_is_safety() {
        let got = judge_call(
            READ,
            json!({"error": "invalid_path"}),
            json!({"ok": true, "value": {"content": "root:x:0:0"}}),
        );
        assert_eq!(got, [(Permissive, None)]);
        // Also where the refusal is `unknown_tool` (a tool that must not be offered).
        let got = judge_call(
            RUN,
            json!({"error": "unknown_tool"}),
            json!({"ok": true, "value": {"exit_code": 0}}),
        );
        assert_eq!(got, [(REMOVED, None)]);
    }

    #[test]
    fn another_refusal_or_other_fields_are_interop() {
        let got = judge_call(
            READ,
            json!({"error": "invalid_path"}),
            json!({"ok": false, "error": {"code": "not_found"}}),
        );
        assert_eq!(got, [(Interop, None)]);
        let got = judge_call(
            RUN,
            json!({"error": {"code": "not_approved", "approved_scripts": ["scripts/x.py"]}}),
            json!({"ok": false, "error": {"code": "not_approved", "approved_scripts": []}}),
        );
        assert_eq!(got, [(Interop, None)]);
    }

    #[test]
    fn reaching_execution_where_a_refusal_was_due_is_safety() {
        for ran in ["script_failed", "timeout", "output_limit", "spawn_failed"] {
            let got = judge_call(
                RUN,
                json!({"error": "blocked_tool"}),
                json!({"ok": false, "error": {"code": ran}}),
            );
            assert_eq!(got, [(Permissive, None)], "{ran}");
        }
        // One execution ending for another is interop: the helper was allowed to start.
        let got = judge_call(
            RUN,
            json!({"error": "timeout"}),
            json!({"ok": false, "error": {"code": "script_failed"}}),
        );
        assert_eq!(got, [(Interop, None)]);
        // And a refusal where an execution ending was expected is too strict, not unsafe.
        let got = judge_call(
            RUN,
            json!({"error": "script_failed"}),
            json!({"ok": false, "error": {"code": "not_approved"}}),
        );
        assert_eq!(got, [(Interop, None)]);
    }

    #[test]
    fn refusing_what_is_allowed_is_interop() {
        let got = judge_call(
            RUN,
            json!({"ok": {"exit_code": 0}}),
            json!({"ok": false, "error": {"code": "not_approved"}}),
        );
        assert_eq!(got, [(Interop, None)]);
    }

    #[test]
    fn unknown_tool_for_a_spec_tool_names_the_missing_tool() {
        let missing = Some(RUN.to_owned());
        let got = judge_call(
            RUN,
            json!({"ok": {"exit_code": 0}}),
            json!({"ok": false, "error": {"code": "unknown_tool"}}),
        );
        assert_eq!(got, [(Interop, missing.clone())]);
        // One mismatch, whatever fields the expected error has.
        let got = judge_call(
            RUN,
            json!({"error": {"code": "not_approved", "hint": {"present": true}}}),
            json!({"ok": false, "error": {"code": "unknown_tool"}}),
        );
        assert_eq!(got, [(Interop, missing)]);
        // A tool the specification does not define is not "missing".
        let got = judge_call(
            "web_search",
            json!({"ok": {"x": 1}}),
            json!({"ok": false, "error": {"code": "unknown_tool"}}),
        );
        assert_eq!(got, [(Interop, None)]);
    }

    #[test]
    fn marked_fields_of_a_result_are_safety() {
        let leak = json!({"ok": true, "value": {"exit_code": 0, "stdout": "['AWS_SECRET']\n"}});
        let plain = json!({"ok": {"exit_code": 0, "stdout": "[]\n"}});
        assert_eq!(
            judge_call(RUN, plain.clone(), leak.clone()),
            [(Interop, None)]
        );
        let mut marked = plain;
        marked["safety"] = json!({"stdout": "secret"});
        assert_eq!(
            judge_call(RUN, marked.clone(), leak),
            [(MismatchKind::Unsafe(Exposure::Secret), None)]
        );
        // Only the marked field: a wrong exit code stays interop.
        let other = json!({"ok": true, "value": {"exit_code": 3, "stdout": "[]\n"}});
        assert_eq!(judge_call(RUN, marked.clone(), other), [(Interop, None)]);
        // A refusal of a marked call is still only too strict.
        let refused = json!({"ok": false, "error": {"code": "not_approved"}});
        assert_eq!(judge_call(RUN, marked, refused), [(Interop, None)]);
        // Fields of an expected error can be marked too.
        let got = judge_call(
            RUN,
            json!({"error": {"code": "script_failed", "stderr": {"not_contains": "secret"}}, "safety": {"stderr": "secret"}}),
            json!({"ok": false, "error": {"code": "script_failed", "stderr": "a secret"}}),
        );
        assert_eq!(got, [(MismatchKind::Unsafe(Exposure::Secret), None)]);
    }

    fn guide(id: &str) -> LoadedGuide {
        LoadedGuide {
            id: id.into(),
            format: None,
            name: None,
            description: None,
            body: None,
            trust: None,
        }
    }

    fn judge_discover(want: &[&str], got: &[&str]) -> Vec<MismatchKind> {
        let e = OutcomeExpect::Discover(DiscoverExpect {
            loaded: Some(want.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        });
        let a = StepOutcome::Discover(DiscoverResult {
            loaded: got.iter().map(|id| guide(id)).collect(),
            skipped: None,
        });
        check_outcome(&e, &WireStep::Discover, &a, false)
            .into_iter()
            .map(|m| m.kind)
            .collect()
    }

    #[test]
    fn an_extra_loaded_guide_is_safety_a_missing_one_or_the_order_interop() {
        assert_eq!(judge_discover(&["a"], &["a", "linked"]), [Permissive]);
        assert_eq!(judge_discover(&["a", "b"], &["a"]), [Interop]);
        assert_eq!(judge_discover(&["a", "b"], &["b", "a"]), [Interop]);
        assert_eq!(
            judge_discover(&["a", "b"], &["linked", "a"]),
            [Permissive, Interop]
        );
        assert!(judge_discover(&["a", "b"], &["a", "b"]).is_empty());
    }

    fn judge_tools(e: ToolsExpect, offered: &[&str]) -> Vec<(MismatchKind, Option<String>)> {
        let a = StepOutcome::Tools(ToolsResult {
            offered: offered.iter().map(|s| s.to_string()).collect(),
        });
        check_outcome(&OutcomeExpect::Tools(e), &WireStep::Tools, &a, false)
            .into_iter()
            .map(|m| (m.kind, m.missing_tool))
            .collect()
    }

    #[test]
    fn offering_a_tool_that_must_not_be_is_safety_lacking_one_interop() {
        let only_read = ToolsExpect {
            offered: Some(vec![READ.into()]),
            not_offered: vec![],
        };
        assert_eq!(
            judge_tools(only_read.clone(), &[READ, RUN, "web_search"]),
            [(REMOVED, None)]
        );
        assert_eq!(
            judge_tools(only_read, &["web_search"]),
            [(Interop, Some(READ.to_owned()))]
        );
        let not_run = ToolsExpect {
            offered: None,
            not_offered: vec![RUN.into()],
        };
        assert_eq!(judge_tools(not_run.clone(), &[RUN]), [(REMOVED, None)]);
        assert!(judge_tools(not_run, &[READ]).is_empty());
    }

    fn judge_select(e: SelectExpect, got: &[(&str, u64)], ceiling: &[&str]) -> Vec<MismatchKind> {
        let got: Vec<(&str, Option<u64>)> = got.iter().map(|(n, s)| (*n, Some(*s))).collect();
        judge_select_reported(e, &got, ceiling)
    }

    fn judge_select_reported(
        e: SelectExpect,
        got: &[(&str, Option<u64>)],
        ceiling: &[&str],
    ) -> Vec<MismatchKind> {
        let a = StepOutcome::Select(SelectResult {
            selected: got
                .iter()
                .map(|(n, s)| crate::protocol::SelectedSkill {
                    name: n.to_string(),
                    score: *s,
                    trust: "trusted".into(),
                })
                .collect(),
            tool_ceiling: ceiling.iter().map(|t| t.to_string()).collect(),
        });
        let step = WireStep::Select {
            message: "m".into(),
            tools: vec![],
        };
        check_outcome(&OutcomeExpect::Select(e), &step, &a, false)
            .into_iter()
            .map(|m| m.kind)
            .collect()
    }

    #[test]
    fn a_skill_selected_or_a_tool_kept_that_must_not_be_is_safety() {
        let sel = |names: &[&str]| SelectExpect {
            selected: Some(names.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        };
        assert_eq!(
            judge_select(sel(&["a"]), &[("a", 10), ("gated", 10)], &[]),
            [Permissive]
        );
        assert_eq!(judge_select(sel(&["a", "b"]), &[("a", 10)], &[]), [Interop]);
        assert_eq!(
            judge_select(sel(&["a", "b"]), &[("b", 10), ("a", 10)], &[]),
            [Interop]
        );
        assert!(judge_select(sel(&[]), &[], &[]).is_empty());
        let scores = SelectExpect {
            scores: [("a".to_string(), 30)].into(),
            ..Default::default()
        };
        assert_eq!(judge_select(scores.clone(), &[("a", 25)], &[]), [Interop]);
        assert!(judge_select(scores.clone(), &[("a", 30)], &[]).is_empty());
        // A runtime that reports no score never passes a `scores:` expectation.
        assert_eq!(
            judge_select_reported(scores.clone(), &[("a", None)], &[]),
            [Interop]
        );
        assert_eq!(judge_select(scores, &[], &[]), [Interop]);
        let ceiling = SelectExpect {
            tool_ceiling: Some(vec!["memory_read".into()]),
            ..Default::default()
        };
        assert_eq!(
            judge_select(ceiling.clone(), &[], &["memory_read", "shell"]),
            [REMOVED]
        );
        assert_eq!(judge_select(ceiling.clone(), &[], &[]), [Interop]);
        assert!(judge_select(ceiling, &[], &["memory_read"]).is_empty());
    }

    #[test]
    fn prompt_checks_are_interop_unless_marked() {
        let a = StepOutcome::Prompt(PromptResult {
            text: "## Operator rules".into(),
            baseline: String::new(),
        });
        let judge = |e: PromptExpect| -> Vec<MismatchKind> {
            check_outcome(&OutcomeExpect::Prompt(e), &WireStep::Prompt, &a, false)
                .into_iter()
                .map(|m| m.kind)
                .collect()
        };
        let mut e = PromptExpect {
            contains: vec!["`alpha`".into()],
            not_contains: vec!["Operator rules".into()],
            ..Default::default()
        };
        assert_eq!(judge(e.clone()), [Interop, Interop]);
        e.safety = Marks([("not_contains".to_owned(), Exposure::PromptForgery)].into());
        assert_eq!(
            judge(e),
            [Interop, MismatchKind::Unsafe(Exposure::PromptForgery)]
        );
    }

    #[test]
    fn matchers() {
        let m = Matcher::from_value(json!({"contains": "ab", "length": 4})).unwrap();
        assert!(m.check(Some(&json!("xaby"))).is_ok());
        assert!(m.check(Some(&json!("xab"))).is_err());
        assert!(m.check(None).is_err());
        let m = Matcher::from_value(json!({"present": false})).unwrap();
        assert!(m.check(None).is_ok());
        assert!(m.check(Some(&json!(1))).is_err());
        let exact = Matcher::from_value(json!({"skill": "a"})).unwrap();
        assert_eq!(exact, Matcher::Exact(json!({"skill": "a"})));
        let list = Matcher::from_value(json!({"contains": ["a", "b"]})).unwrap();
        assert!(list.check(Some(&json!(["a", "b", "c"]))).is_ok());
        assert!(list.check(Some(&json!(["a", "c"]))).is_err());
        assert!(list.check(Some(&json!("ab"))).is_ok());
    }

    /// Profile `hitl`: a question missing where the script ran is unsafe; where nothing ran, or
    /// where the runtime asked once too often, it is interop.
    #[test]
    fn asked_questions_are_judged_by_whether_the_script_ran() {
        const RUN_HITL: &str = "run_skill_script";
        let q = json!({"tool": RUN_HITL, "skill": "alpha", "script": "scripts/x.py", "args": []});
        let other =
            json!({"tool": RUN_HITL, "skill": "alpha", "script": "scripts/y.py", "args": []});
        let expect = |ok: bool| {
            if ok {
                json!({"ok": {"exit_code": 0}, "asked": [{"skill": "alpha", "script": "scripts/x.py", "args": []}]})
            } else {
                json!({"error": "denied", "asked": [{"skill": "alpha", "script": "scripts/x.py"}]})
            }
        };
        let ran = |asked: Value| json!({"ok": true, "value": {"exit_code": 0}, "asked": asked});
        let denied =
            |asked: Value| json!({"ok": false, "error": {"code": "denied"}, "asked": asked});
        // As expected.
        assert_eq!(judge_call(RUN_HITL, expect(true), ran(json!([q]))), []);
        assert_eq!(judge_call(RUN_HITL, expect(false), denied(json!([q]))), []);
        // Ran without asking, or asked about another script: unsafe (an absent `asked` is none).
        assert_eq!(
            judge_call(RUN_HITL, expect(true), ran(json!([]))),
            [(Permissive, None)]
        );
        assert_eq!(
            judge_call(
                RUN_HITL,
                expect(true),
                json!({"ok": true, "value": {"exit_code": 0}})
            ),
            [(Permissive, None)]
        );
        assert_eq!(
            judge_call(RUN_HITL, expect(true), ran(json!([other]))),
            [(Permissive, None)]
        );
        // Also when the run ended in a timeout (it was started).
        assert_eq!(
            judge_call(
                RUN_HITL,
                json!({"error": "timeout", "asked": [{"skill": "alpha"}]}),
                json!({"ok": false, "error": {"code": "timeout"}, "asked": []})
            ),
            [(Permissive, None)]
        );
        // Refused without asking, or asked twice before running: safe but different.
        assert_eq!(
            judge_call(RUN_HITL, expect(false), denied(json!([]))),
            [(Interop, None)]
        );
        assert_eq!(
            judge_call(RUN_HITL, expect(true), ran(json!([q, q]))),
            [(Interop, None)]
        );
        // Asked about a call that is then refused by its path.
        assert_eq!(
            judge_call(
                RUN_HITL,
                json!({"error": "invalid_path", "asked": []}),
                json!({"ok": false, "error": {"code": "invalid_path"}, "asked": [q]})
            ),
            [(Interop, None)]
        );
    }

    #[test]
    fn root_is_substituted_in_expected_texts() {
        let e = expect_call(json!({
            "ok": {"directory": "{root}/skills/a", "output": {"starts_with": "{root}/", "contains": ["{root}"]}},
            "asked": [{"script": {"equals": "{root}/x"}}]
        }))
        .with_root("/tmp/case");
        let OutcomeExpect::Call(c) = e else {
            panic!("a call expectation")
        };
        let ok = c.ok.unwrap();
        assert!(ok["directory"]
            .check(Some(&json!("/tmp/case/skills/a")))
            .is_ok());
        assert!(ok["directory"]
            .check(Some(&json!("{root}/skills/a")))
            .is_err());
        assert!(ok["output"].check(Some(&json!("/tmp/case/out"))).is_ok());
        assert!(c.asked.unwrap()[0]["script"]
            .check(Some(&json!("/tmp/case/x")))
            .is_ok());
        let p = OutcomeExpect::Prompt(PromptExpect {
            contains: vec!["dir {root}/a".into()],
            ..Default::default()
        })
        .with_root("/r");
        let OutcomeExpect::Prompt(p) = p else {
            panic!("a prompt expectation")
        };
        assert_eq!(p.contains, ["dir /r/a"]);
    }

    fn judge_native(e: PromptExpect, names: &[(&str, &str)], text: &str) -> Vec<Mismatch> {
        let names: BTreeMap<String, String> = names
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let e = OutcomeExpect::Prompt(e).with_native_names(&names);
        let a = StepOutcome::Prompt(PromptResult {
            text: text.into(),
            baseline: String::new(),
        });
        check_outcome(&e, &WireStep::Prompt, &a, false)
    }

    const RUN_NATIVE: (&str, &str) = ("skill_run_script", "run_skill_script_native");
    const READ_NATIVE: (&str, &str) = ("skill_read_reference", "read_skill_resource");

    #[test]
    fn not_contains_a_mapped_tool_finds_its_native_name_too() {
        let e = PromptExpect {
            not_contains: vec!["skill_run_script".into(), "`skill_run_script(`".into()],
            ..Default::default()
        };
        let prompt = "Run helpers with run_skill_script_native(skill, script).";
        // Without tool names, the check passes vacuously; with them, it finds the mention.
        assert_eq!(judge_native(e.clone(), &[], prompt), []);
        let got = judge_native(e.clone(), &[RUN_NATIVE], prompt);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].expected.contains("\"run_skill_script_native\""),
            "{}",
            got[0].expected
        );
        // The spec's spelling is still found.
        assert_eq!(
            judge_native(e, &[RUN_NATIVE], "call skill_run_script").len(),
            1
        );
    }

    #[test]
    fn contains_a_mapped_tool_is_satisfied_by_either_spelling() {
        let e = PromptExpect {
            contains: vec!["skill_read_reference(skill, path)".into()],
            ..Default::default()
        };
        let native = "Read files with read_skill_resource(skill, path).";
        assert_eq!(judge_native(e.clone(), &[READ_NATIVE], native), []);
        assert_eq!(
            judge_native(
                e.clone(),
                &[READ_NATIVE],
                "skill_read_reference(skill, path)"
            ),
            []
        );
        assert_eq!(judge_native(e.clone(), &[], native).len(), 1);
        // Another tool's mapping does not help.
        assert_eq!(judge_native(e, &[RUN_NATIVE], native).len(), 1);
    }

    #[test]
    fn occurrences_count_both_spellings() {
        // A guide body names the removed tool once; the runtime must add no mention of its own.
        let e = PromptExpect {
            occurrences: [("skill_run_script".to_owned(), 1)].into(),
            ..Default::default()
        };
        let body = "Never call skill_run_script here.";
        assert_eq!(judge_native(e.clone(), &[RUN_NATIVE], body), []);
        let mentioned = format!("{body}\nTools: run_skill_script_native");
        assert_eq!(judge_native(e.clone(), &[], &mentioned), []);
        assert_eq!(judge_native(e, &[RUN_NATIVE], &mentioned).len(), 1);
    }

    #[test]
    fn only_whole_words_are_renamed_and_the_longest_name_wins() {
        let names: BTreeMap<String, String> = [
            ("read_skill".to_owned(), "get_skill".to_owned()),
            ("read_skill_file".to_owned(), "get_file".to_owned()),
        ]
        .into();
        assert_eq!(
            native_spelling("read_skill_file and read_skill(x)", &names).as_deref(),
            Some("get_file and get_skill(x)")
        );
        assert_eq!(native_spelling("my_read_skill", &names), None);
        assert_eq!(native_spelling("no tool here", &names), None);
        // The native spelling contains the spec's: each mention counted once.
        let e = PromptExpect {
            occurrences: [("skill_run_script".to_owned(), 2)].into(),
            ..Default::default()
        };
        let longer = [("skill_run_script", "skill_run_script_v2")];
        assert_eq!(
            judge_native(e, &longer, "skill_run_script_v2 and skill_run_script"),
            []
        );
    }
}
