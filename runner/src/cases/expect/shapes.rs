//! The expectation of each operation, as a case writes it: `discover` (loaded, guides, skipped),
//! `tools`, `prompt` (with the native spellings of mapped tools), `select`, a call (`ok` or
//! `error`, and the questions of profile `hitl`), and `files`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::*;

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
    /// Dialect `agentskills`: the record's `location` (`{root}` is the case root).
    #[serde(default)]
    pub location: Option<Matcher>,
}

impl GuideExpect {
    pub fn is_empty(&self) -> bool {
        self.format.is_none()
            && self.name.is_none()
            && self.description.is_none()
            && self.body.is_none()
            && self.trust.is_none()
            && self.location.is_none()
    }
}

/// What `validate` (dialect `agentskills`) must report. Each key is optional; at least one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateExpect {
    /// The validator's verdict.
    #[serde(default)]
    pub valid: Option<bool>,
    /// Properties the validator read (`name`, `description`, ...).
    #[serde(default)]
    pub properties: BTreeMap<String, Matcher>,
}

impl ValidateExpect {
    pub fn is_empty(&self) -> bool {
        self.valid.is_none() && self.properties.is_empty()
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
    /// The checks of this step (`contains`, `not_contains`, `not_outside_code_span`,
    /// `occurrences`, `same_as_baseline`)
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
    /// No text occurs outside a Markdown code span of the runtime's: each occurrence has an odd
    /// number of backticks before it on its line (a name merely shown, as a label or XML text,
    /// opens no span of the runtime's and forges nothing; one the runtime wrapped in backticks
    /// of its own and that closed them stands outside: a forged prompt text).
    #[serde(default)]
    pub not_outside_code_span: Vec<String>,
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
    pub(super) fn found(&self, prompt: &str, text: &str) -> bool {
        prompt.contains(text) || self.native.get(text).is_some_and(|n| prompt.contains(n))
    }

    /// How often `text` occurs in `prompt` in either spelling (leftmost, longest, not
    /// overlapping: for one spelling, what `str::matches` counts).
    pub(super) fn count(&self, prompt: &str, text: &str) -> usize {
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
    pub(super) fn described(&self, text: &str) -> String {
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
pub(super) fn native_spelling(text: &str, names: &BTreeMap<String, String>) -> Option<String> {
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
    /// What writes the `absent` markers when no planted text spells their names (a helper that
    /// builds a name, `open('ran-%d' % n, 'w')`): the author's reviewed reason, shown by `show`.
    #[serde(default)]
    pub written_by: Option<String>,
}

impl FilesExpect {
    pub fn is_empty(&self) -> bool {
        self.exists.is_empty() && self.absent.is_empty()
    }
}
