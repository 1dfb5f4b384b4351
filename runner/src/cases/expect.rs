//! Expectations: what a case says a step must produce, and the comparison that turns an actual
//! outcome into a list of mismatches. Only codes and structured fields are compared, never an
//! implementation's free-text `message`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::implementations::protocol::{
    CallResult, DiscoverResult, PromptResult, StepOutcome, ToolsResult,
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

/// The expectation on a step's result, by operation.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeExpect {
    Discover(DiscoverExpect),
    Tools(ToolsExpect),
    Prompt(PromptExpect),
    Call(CallExpect),
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
}

impl GuideExpect {
    pub fn is_empty(&self) -> bool {
        self.format.is_none()
            && self.name.is_none()
            && self.description.is_none()
            && self.body.is_none()
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
}

/// What a tool call must return: exactly one of `ok` and `error`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallExpect {
    /// The call succeeds; each listed field of the value matches.
    #[serde(default)]
    pub ok: Option<BTreeMap<String, Matcher>>,
    /// The call fails with this code (and these fields match).
    #[serde(default)]
    pub error: Option<ErrorExpect>,
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
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchOps {
    #[serde(default)]
    pub equals: Option<Value>,
    /// Substring of a string, or element of a list.
    #[serde(default)]
    pub contains: Option<OneOrMany>,
    #[serde(default)]
    pub not_contains: Option<OneOrMany>,
    #[serde(default)]
    pub starts_with: Option<String>,
    #[serde(default)]
    pub ends_with: Option<String>,
    /// Bytes of a string (UTF-8), or elements of a list.
    #[serde(default)]
    pub length: Option<u64>,
    /// Whether the field is there at all.
    #[serde(default)]
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

/// Renders a value for a report, shortening long strings.
pub fn show(v: &Value) -> String {
    const MAX: usize = 400;
    let text = v.to_string();
    if text.len() <= MAX {
        return text;
    }
    let mut cut = MAX;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..cut], text.len())
}

/// One difference between expected and actual.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub what: String,
    pub expected: String,
    pub actual: String,
}

fn mismatch(
    what: impl Into<String>,
    expected: impl Into<String>,
    actual: impl Into<String>,
) -> Mismatch {
    Mismatch {
        what: what.into(),
        expected: expected.into(),
        actual: actual.into(),
    }
}

/// Compares an outcome with the expectation of its step. `skip_report` says whether the
/// implementation declares the `skip-report` feature: without it, `skipped` is not checked.
pub fn check_outcome(
    expect: &OutcomeExpect,
    actual: &StepOutcome,
    skip_report: bool,
) -> Vec<Mismatch> {
    match (expect, actual) {
        (OutcomeExpect::Discover(e), StepOutcome::Discover(a)) => check_discover(e, a, skip_report),
        (OutcomeExpect::Tools(e), StepOutcome::Tools(a)) => check_tools(e, a),
        (OutcomeExpect::Prompt(e), StepOutcome::Prompt(a)) => check_prompt(e, a),
        (OutcomeExpect::Call(e), StepOutcome::Call(a)) => check_call(e, a),
        (_, other) => vec![mismatch(
            "result kind",
            "the result of this step's operation",
            format!("{other:?}"),
        )],
    }
}

fn check_discover(e: &DiscoverExpect, a: &DiscoverResult, skip_report: bool) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let ids: Vec<&str> = a.loaded.iter().map(|g| g.id.as_str()).collect();
    if let Some(want) = &e.loaded {
        if ids != want.iter().map(String::as_str).collect::<Vec<_>>() {
            out.push(mismatch(
                "loaded ids, in order",
                show(&Value::from(want.clone())),
                show(&serde_json::json!(ids)),
            ));
        }
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

fn check_tools(e: &ToolsExpect, a: &ToolsResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut actual = a.offered.clone();
    actual.sort();
    if let Some(want) = &e.offered {
        let mut want = want.clone();
        want.sort();
        let spec_offered: Vec<String> = actual
            .iter()
            .filter(|t| crate::cases::clauses::SPEC_TOOLS.contains(&t.as_str()))
            .cloned()
            .collect();
        if want != spec_offered {
            out.push(mismatch(
                "offered tools (of those the spec defines)",
                show(&Value::from(want)),
                format!(
                    "{} (all offered: {})",
                    show(&Value::from(spec_offered)),
                    show(&Value::from(actual.clone()))
                ),
            ));
        }
    }
    for t in &e.not_offered {
        if actual.contains(t) {
            out.push(mismatch(format!("tool `{t}`"), "not offered", "offered"));
        }
    }
    out
}

fn check_prompt(e: &PromptExpect, a: &PromptResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for c in &e.contains {
        if !a.text.contains(c.as_str()) {
            out.push(mismatch(
                "prompt",
                format!("containing {}", show(&Value::from(c.clone()))),
                show(&Value::from(a.text.clone())),
            ));
        }
    }
    for c in &e.not_contains {
        if a.text.contains(c.as_str()) {
            out.push(mismatch(
                "prompt",
                format!("not containing {}", show(&Value::from(c.clone()))),
                show(&Value::from(a.text.clone())),
            ));
        }
    }
    for (text, want) in &e.occurrences {
        let got = a.text.matches(text.as_str()).count();
        if got != *want {
            out.push(mismatch(
                format!(
                    "occurrences of {} in the prompt",
                    show(&Value::from(text.clone()))
                ),
                want.to_string(),
                format!("{got} in {}", show(&Value::from(a.text.clone()))),
            ));
        }
    }
    if let Some(same) = e.same_as_baseline {
        if (a.text == a.baseline) != same {
            let expected = if same {
                "byte-identical to the baseline prompt"
            } else {
                "different from the baseline prompt"
            };
            out.push(mismatch(
                "prompt against baseline",
                expected,
                format!(
                    "text {} / baseline {}",
                    show(&Value::from(a.text.clone())),
                    show(&Value::from(a.baseline.clone()))
                ),
            ));
        }
    }
    out
}

fn check_call(e: &CallExpect, a: &CallResult) -> Vec<Mismatch> {
    let mut out = Vec::new();
    match (e, a) {
        (
            CallExpect {
                ok: Some(fields), ..
            },
            CallResult::Ok { value, .. },
        ) => {
            for (k, m) in fields {
                if let Err(want) = m.check(value.get(k)) {
                    out.push(mismatch(
                        format!("result field `{k}`"),
                        want,
                        value.get(k).map_or("(missing)".into(), show),
                    ));
                }
            }
        }
        (CallExpect { ok: Some(_), .. }, CallResult::Err { error, .. }) => {
            out.push(mismatch(
                "call outcome",
                "success",
                format!("error {}", show(&Value::Object(error.clone()))),
            ));
        }
        (
            CallExpect {
                error: Some(want), ..
            },
            CallResult::Err { error, .. },
        ) => {
            let code = error.get("code").and_then(Value::as_str).unwrap_or("");
            if code != want.code {
                out.push(mismatch(
                    "error code",
                    want.code.clone(),
                    format!("{code} ({})", show(&Value::Object(error.clone()))),
                ));
            }
            for (k, m) in &want.fields {
                if let Err(w) = m.check(error.get(k)) {
                    out.push(mismatch(
                        format!("error field `{k}`"),
                        w,
                        error.get(k).map_or("(missing)".into(), show),
                    ));
                }
            }
        }
        (
            CallExpect {
                error: Some(want), ..
            },
            CallResult::Ok { value, .. },
        ) => {
            out.push(mismatch(
                "call outcome",
                format!("error {}", want.code),
                format!("success {}", show(&Value::Object(value.clone()))),
            ));
        }
        (
            CallExpect {
                ok: None,
                error: None,
            },
            _,
        ) => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
