//! The protocol layer, the lowest of the runner: everything about talking to an implementation
//! that knows nothing of cases.
//!
//! - the adapter protocol, version 2 (this module): the JSON messages exchanged between the
//!   runner and an implementation, one JSON object per line. PROTOCOL.md is the normative
//!   description and `protocol/*.schema.json` the schemas; these types are the runner's side of
//!   the same contract;
//! - [`features`]: the closed list of optional features an implementation declares;
//! - [`dialects`]: the rule sets an implementation claims (`implementation.dialects`);
//! - [`fault`]: what the runner knows when an implementation breaks, typed;
//! - [`transport`]: the adapter's process and pipes, bounded;
//! - [`live`]: the adapter process groups a run keeps alive, and the signal path;
//! - [`memory`]: what an adapter's processes hold in memory (the run's memory bound);
//! - [`schema`]: the embedded protocol schemas, checked by hand (for `skillspec smoke`).
//!
//! Clauses: PROTOCOL.md as a whole (messages, "Refusals", "Mapping a runtime's own tools",
//! Shutdown); SPEC.md `tools.registration` for the names of the specification's tools.

pub mod claims;
pub mod dialects;
pub mod fault;
pub mod features;
pub mod live;
pub mod memory;
pub mod schema;
pub mod transport;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::claims::{ClaimError, Format, Mechanism, ReadScope};
use crate::protocol::features::Feature;

/// The tools the specification defines. `tools` expectations compare only these: a host's own
/// tools are not the suite's business. The first two are the core's; the lifecycle tools belong
/// to the `trust` profile (SPEC.md `skills.lifecycle`), the next three to the `hitl` profile, and
/// `activate_skill` to dialect `agentskills` (its activation, SPEC.md "Dialect `agentskills`").
// spec: tools.registration
pub const SPEC_TOOLS: &[&str] = &[
    "skill_read_reference",
    "skill_run_script",
    "skill_list",
    "skill_install",
    "skill_remove",
    "read_skill",
    "read_skill_file",
    "run_skill_script",
    "activate_skill",
];

/// A JSON value as messages quote it: compact, at most 400 bytes (then cut, with the size).
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

/// `text` as messages quote it ([`show`]), but when it is too long to quote whole, the part
/// around `needle`'s first occurrence, so a quoted mismatch shows what it is about (a forged line
/// deep in a long prompt): the window as JSON, with where it sits. Without `needle` in `text`:
/// [`show`].
pub fn show_around(text: &str, needle: &str) -> String {
    const SIDE: usize = 160;
    let whole = show(&Value::from(text));
    let Some(at) = text
        .find(needle)
        .filter(|_| whole.ends_with(" bytes in all)"))
    else {
        return whole;
    };
    let mut start = at.saturating_sub(SIDE);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + needle.len() + SIDE).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    format!(
        "{}{}{} (bytes {start}..{end} of {})",
        if start > 0 { "…" } else { "" },
        Value::from(&text[start..end]),
        if end < text.len() { "…" } else { "" },
        text.len()
    )
}

/// The protocol version this runner speaks.
pub const PROTOCOL_VERSION: u32 = 2;

/// Implementation-neutral runtime configuration for one case, with paths made absolute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireConfig {
    /// The skills root (`SPORTSCLAW_SKILL_GUIDES_DIR`); `null` when unset.
    pub skills_root: Option<String>,
    /// The raw operator script allowlist text; `null` when unset.
    pub script_allowlist: Option<String>,
    /// The operator's tool allowlist; `null` offers every tool.
    pub tool_allowlist: Option<Vec<String>>,
    /// Whether trading tools are allowed.
    pub allow_trading: bool,
    /// `SPORTS_SKILLS_REPLAY` as the runtime sees it; `null` when unset.
    pub replay: Option<String>,
    /// `SKILL_SCRIPT_TIMEOUT_MS` exactly as the runtime sees it (any text, valid or not);
    /// `null` when unset.
    pub timeout_ms: Option<String>,
    /// The Python interpreter to run helpers with (absolute path).
    pub python: String,
    /// The environment of the runtime's own process.
    pub env: BTreeMap<String, String>,
    /// A platform to emulate (feature `platform-emulation`): `"no-process-groups"` behaves as a
    /// platform without POSIX process groups. Absent or `null`: the real platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Profile `selection`/`trust`: the skill directories by trust (absolute paths). When
    /// present, `skills_root` is null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_dirs: Option<WireSkillDirs>,
    /// Profile `trust`: the local registry directory `skill_install` reads `<name>.tar` from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    /// Profile `selection`: the selection limits (null fields: the defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<WireSelection>,
    /// Profile `hitl`: the approval-gated script host (SPEC.md, "Profile `hitl`").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitl: Option<WireHitl>,
    /// The dialect of the case (SPEC.md "Dialects"): an implementation that claims several
    /// applies this one's rules. Absent: `portable-skills`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// Dialect `agentskills`: the user-level skills directory (`skills_root` is the project's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_skills_root: Option<String>,
}

/// `config.hitl`: every field is always sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireHitl {
    /// `skills.enabled`: false leaves no trace of skills.
    pub enabled: bool,
    /// `run_skill_script` is on the host's tool allowlist.
    pub script_tool_allowed: bool,
    /// `interactive` (a human can be asked) or `non-interactive` (nobody can).
    pub session: String,
    /// The human's answers (`approve` or `deny`), one per question, in order; when they run out
    /// the human says no.
    pub answers: Vec<String>,
    /// The script timeout setting, exactly as set (as `timeout_ms` of the core); `null`: unset.
    pub timeout_ms: Option<String>,
}

/// `config.skill_dirs`: each directory absolute, or null when not configured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireSkillDirs {
    pub user: Option<String>,
    pub workspace: Option<String>,
    pub installed: Option<String>,
}

/// `config.selection`: null (or absent) is the default (3 active skills, 4000 tokens).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireSelection {
    #[serde(default)]
    pub max_active: Option<u64>,
    #[serde(default)]
    pub max_context_tokens: Option<u64>,
}

/// An operation the implementation performs for one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum WireStep {
    /// Scan the skills root again and report what loaded.
    Discover,
    /// Report the tools offered to the model.
    Tools,
    /// Report the system prompt, and the prompt as rendered without the feature.
    Prompt,
    /// Call a tool with arguments (any JSON value, passed as the model would).
    Call { tool: String, args: Value },
    /// Start a new turn.
    NewTurn,
    /// Profile `selection`: select the active skills for a message, and report the tool ceiling
    /// over the host's `tools`.
    Select { message: String, tools: Vec<String> },
    /// Dialect `agentskills`: a validator's verdict on one skill directory (absolute path).
    Validate { path: String },
}

impl WireStep {
    pub fn op_name(&self) -> &'static str {
        match self {
            WireStep::Discover => "discover",
            WireStep::Tools => "tools",
            WireStep::Prompt => "prompt",
            WireStep::Call { .. } => "call",
            WireStep::NewTurn => "new_turn",
            WireStep::Select { .. } => "select",
            WireStep::Validate { .. } => "validate",
        }
    }
}

/// Messages from the runner to the implementation.
// `CaseStart` carries the whole configuration; one is built per case, so boxing it buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    Start {
        protocol_version: u32,
    },
    CaseStart {
        seq: u64,
        case: String,
        root: String,
        config: WireConfig,
    },
    Step {
        seq: u64,
        index: usize,
        step: WireStep,
    },
    CaseEnd {
        seq: u64,
    },
    Stop,
}

/// Who the implementation is and what it supports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "WireImplInfo")]
pub struct ImplInfo {
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub features: Vec<Feature>,
    /// Declared names this runner does not know: ignored, and the run header warns
    /// (PROTOCOL.md, `features`). Never sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_features: Vec<String>,
    /// The adapter wants a fresh process for every case (for runtimes that cache state when a
    /// module is first loaded): the runner stops it after each case and starts it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub process_per_case: bool,
    /// `Some(false)`: the adapter cannot run twice at once (state shared between its processes,
    /// a fixed port or directory), so `run --jobs N` starts only one (PROTOCOL.md, "Running side
    /// by side"). Absent means it can: see [`ImplInfo::runs_side_by_side`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_by_side: Option<bool>,
    /// The runtime's own name of each tool of the specification the adapter maps onto one of
    /// the runtime's tools (`{"skill_read_reference": "read_skill_resource"}`): prompt checks
    /// that name a mapped tool hold for its native name as well (PROTOCOL.md, "Mapping a
    /// runtime's own tools"). Checked by [`check_tool_names`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_names: BTreeMap<String, String>,
    /// What the runtime's reading tool returns by design (PROTOCOL.md, "What the runtime reads
    /// and lacks"); absent: only the skill's own files.
    #[serde(default, skip_serializing_if = "is_default_scope")]
    pub read_scope: ReadScope,
    /// The skill file formats the runtime reads; absent: both.
    #[serde(default = "all_formats", skip_serializing_if = "is_all_formats")]
    pub formats: Vec<Format>,
    /// The mechanisms the runtime does not have, each with the adapter's reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lacks: BTreeMap<Mechanism, String>,
    /// The dialects the implementation claims (absent: `portable-skills`).
    #[serde(default = "dialects::default_claims")]
    pub dialects: Vec<dialects::Claim>,
}

fn is_default_scope(s: &ReadScope) -> bool {
    *s == ReadScope::default()
}

fn all_formats() -> Vec<Format> {
    Format::ALL.to_vec()
}

fn is_all_formats(f: &[Format]) -> bool {
    Format::ALL.iter().all(|x| f.contains(x))
}

impl Default for ImplInfo {
    /// An implementation that declares nothing: no optional feature, and the specification's
    /// defaults for what it reads (both formats, only the skill's own files) and lacks (nothing).
    fn default() -> Self {
        ImplInfo {
            name: String::new(),
            version: String::new(),
            language: None,
            features: Vec::new(),
            unknown_features: Vec::new(),
            process_per_case: false,
            side_by_side: None,
            tool_names: BTreeMap::new(),
            read_scope: ReadScope::default(),
            formats: all_formats(),
            lacks: BTreeMap::new(),
            dialects: dialects::default_claims(),
        }
    }
}

impl ImplInfo {
    /// Whether the runtime reads this skill file format.
    pub fn reads(&self, format: Format) -> bool {
        self.formats.contains(&format)
    }

    /// The claim of this implementation that covers cases of `dialect`, if any.
    pub fn claim_of(&self, dialect: &dialects::Dialect) -> Option<&dialects::Claim> {
        self.dialects.iter().find(|c| c.covers(dialect))
    }

    /// Whether several processes of this implementation may run cases at once.
    pub fn runs_side_by_side(&self) -> bool {
        self.side_by_side != Some(false)
    }
}

/// Longest native tool name an adapter may declare in `tool_names` (bytes).
pub const MAX_NATIVE_NAME: usize = 256;

/// What is wrong with `implementation.tool_names`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolNamesError {
    /// A key that is no tool of the specification.
    NotASpecTool { name: String },
    /// A native name that is empty, too long, or holds spaces or control characters.
    BadNative { spec: String, native: String },
}

impl std::fmt::Display for ToolNamesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolNamesError::NotASpecTool { name } => write!(
                f,
                "`tool_names`: {} is not a tool of the specification (its keys are among {})",
                show(&Value::from(name.as_str())),
                SPEC_TOOLS.join(", ")
            ),
            ToolNamesError::BadNative { spec, native } => write!(
                f,
                "`tool_names`: the native name of `{spec}` must be 1 to {MAX_NATIVE_NAME} bytes without spaces or control characters, got {}",
                show(&Value::from(native.as_str()))
            ),
        }
    }
}

impl std::error::Error for ToolNamesError {}

/// Checks `implementation.tool_names`: each key a tool of the specification, each value a
/// non-empty name of at most [`MAX_NATIVE_NAME`] bytes without control characters or spaces.
// spec: PROTOCOL.md "Mapping a runtime's own tools"
pub fn check_tool_names(names: &BTreeMap<String, String>) -> Result<(), ToolNamesError> {
    for (spec, native) in names {
        if !SPEC_TOOLS.contains(&spec.as_str()) {
            return Err(ToolNamesError::NotASpecTool { name: spec.clone() });
        }
        if native.is_empty()
            || native.len() > MAX_NATIVE_NAME
            || native.chars().any(|c| c.is_control() || c.is_whitespace())
        {
            return Err(ToolNamesError::BadNative {
                spec: spec.clone(),
                native: native.clone(),
            });
        }
    }
    Ok(())
}

/// [`ImplInfo`] as an adapter sends it: feature names are read as plain strings, so that a name
/// this runner does not know (a removed feature, or one of a newer runner) is not an error.
#[derive(Deserialize)]
struct WireImplInfo {
    name: String,
    version: String,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    features: Vec<String>,
    #[serde(default)]
    process_per_case: bool,
    #[serde(default)]
    side_by_side: Option<bool>,
    #[serde(default)]
    tool_names: BTreeMap<String, String>,
    #[serde(default)]
    read_scope: Option<String>,
    #[serde(default)]
    formats: Option<Vec<String>>,
    #[serde(default)]
    lacks: BTreeMap<String, String>,
    #[serde(default)]
    dialects: Option<Vec<dialects::Claim>>,
}

/// What is wrong with an `implementation` object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImplInfoError {
    ToolNames(ToolNamesError),
    Claim(ClaimError),
    Dialects(String),
}

impl std::fmt::Display for ImplInfoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImplInfoError::ToolNames(e) => e.fmt(f),
            ImplInfoError::Claim(e) => e.fmt(f),
            ImplInfoError::Dialects(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ImplInfoError {}

impl From<ToolNamesError> for ImplInfoError {
    fn from(e: ToolNamesError) -> Self {
        ImplInfoError::ToolNames(e)
    }
}

impl From<ClaimError> for ImplInfoError {
    fn from(e: ClaimError) -> Self {
        ImplInfoError::Claim(e)
    }
}

impl TryFrom<WireImplInfo> for ImplInfo {
    type Error = ImplInfoError;

    fn try_from(w: WireImplInfo) -> Result<ImplInfo, ImplInfoError> {
        check_tool_names(&w.tool_names)?;
        let read_scope = claims::read_scope(w.read_scope.as_deref())?;
        let formats = claims::formats(w.formats)?;
        let lacks = claims::lacks(w.lacks)?;
        let dialects = dialects::claims(w.dialects).map_err(ImplInfoError::Dialects)?;
        let (features, unknown_features) = crate::protocol::features::split_declared(w.features);
        Ok(ImplInfo {
            name: w.name,
            version: w.version,
            language: w.language,
            features,
            unknown_features,
            process_per_case: w.process_per_case,
            side_by_side: w.side_by_side,
            tool_names: w.tool_names,
            read_scope,
            formats,
            lacks,
            dialects,
        })
    }
}

/// `refused` of `case_started` or `step_result`: the runtime refused to start, or to perform
/// the step (it would not scan a root, start at all, or take a call), and said why. The
/// message is the runtime's own (an exception's text, a log line, a return value), non-empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    pub message: String,
}

/// The error code a refused call counts as when it is judged (PROTOCOL.md, "Refusals").
pub const REFUSED: &str = "refused";

/// Messages from the implementation to the runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    Started {
        protocol_version: u32,
        implementation: ImplInfo,
    },
    CaseStarted {
        seq: u64,
        /// The runtime refused to start for this case (every step of it is then refused).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refused: Option<Refusal>,
    },
    /// Exactly one of `result` and `refused`.
    StepResult {
        seq: u64,
        index: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// The runtime refused the step, in place of a result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refused: Option<Refusal>,
    },
    CaseEnded {
        seq: u64,
    },
    /// The implementation could not do what was asked (not a tool error: those are results).
    Error {
        #[serde(default)]
        seq: Option<u64>,
        message: String,
    },
}

/// One loaded guide as reported by `discover`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadedGuide {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Profile `trust`: `trusted` or `installed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<String>,
    /// Dialect `agentskills`: the absolute path of the skill's `SKILL.md` (its record's
    /// `location`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// One skipped path as reported by `discover` (feature `skip-report`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedPath {
    pub path: String,
    pub reason: String,
}

/// The result of a `discover` step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoverResult {
    pub loaded: Vec<LoadedGuide>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Vec<SkippedPath>>,
}

/// The result of a `tools` step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolsResult {
    pub offered: Vec<String>,
}

/// The result of a `prompt` step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptResult {
    /// The system prompt the model sees.
    pub text: String,
    /// The system prompt as the runtime rendered it before this feature existed.
    pub baseline: String,
}

/// One skill a `select` step made active.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectedSkill {
    pub name: String,
    /// Absent when the runtime's API does not expose scores (ironclaw's scoring function is
    /// private); a `scores:` expectation then fails as "not reported", never passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u64>,
    pub trust: String,
}

/// The result of a `select` step (profile `selection`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectResult {
    /// The active skills, in selection order.
    pub selected: Vec<SelectedSkill>,
    /// The tools of the step's `tools` that remain available (order not compared).
    pub tool_ceiling: Vec<String>,
}

/// The result of a `validate` step (dialect `agentskills`): the validator's verdict, its problems
/// in its own words (never compared), and the properties it read (absent: it read none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidateResult {
    pub valid: bool,
    #[serde(default)]
    pub problems: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<serde_json::Map<String, Value>>,
}

/// The result of a `call` step: `{"ok":true,"value":{..}}` or `{"ok":false,"error":{"code":..}}`.
///
/// Profile `hitl`: `asked` lists the questions the runtime asked the human during this call
/// (each `{"tool","skill","script","args"}`), in order; absent means none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CallResult {
    Ok {
        ok: OkTrue,
        value: serde_json::Map<String, Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        asked: Option<Vec<Value>>,
    },
    Err {
        ok: OkFalse,
        error: serde_json::Map<String, Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        asked: Option<Vec<Value>>,
    },
}

impl CallResult {
    /// The questions the runtime asked the human during the call (none when not reported).
    pub fn asked(&self) -> &[Value] {
        match self {
            CallResult::Ok { asked, .. } | CallResult::Err { asked, .. } => {
                asked.as_deref().unwrap_or(&[])
            }
        }
    }
}

/// The literal `true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OkTrue(#[serde(with = "literal_true")] pub ());
/// The literal `false`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OkFalse(#[serde(with = "literal_false")] pub ());

macro_rules! literal_bool {
    ($name:ident, $value:expr) => {
        mod $name {
            use serde::{Deserialize, Deserializer, Serializer};
            pub fn serialize<S: Serializer>(_: &(), s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bool($value)
            }
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
                if bool::deserialize(d)? == $value {
                    Ok(())
                } else {
                    Err(serde::de::Error::custom(concat!(
                        "expected ",
                        stringify!($value)
                    )))
                }
            }
        }
    };
}
literal_bool!(literal_true, true);
literal_bool!(literal_false, false);

/// A step's result, typed by the operation that produced it.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    Discover(DiscoverResult),
    Tools(ToolsResult),
    Prompt(PromptResult),
    Call(CallResult),
    NewTurn,
    Select(SelectResult),
    Validate(ValidateResult),
    /// The runtime refused the step (or to start for the case), with its own message: judged
    /// as a safe refusal (by the case layer, `cases::refusal`).
    Refused(String),
}

/// Why a step's `result` is not the result of its operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultError {
    /// It does not have the operation's shape.
    Mismatch { op: &'static str, error: String },
    /// A `call` result that is neither `ok` nor an error.
    NotACallResult { result: String },
    /// A `call` error without a string `code`.
    NoCode { result: String },
}

impl std::fmt::Display for ResultError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResultError::Mismatch { op, error } => {
                write!(f, "result of `{op}` does not match the protocol: {error}")
            }
            ResultError::NotACallResult { result } => write!(
                f,
                "result of `call` must be {{\"ok\":true,\"value\":{{..}}}} or {{\"ok\":false,\"error\":{{\"code\":..}}}}, got {result}"
            ),
            ResultError::NoCode { result } => {
                write!(f, "error result of `call` has no string `code`: {result}")
            }
        }
    }
}

impl std::error::Error for ResultError {}

impl StepOutcome {
    /// Parses the untyped `result` of a `step_result` for the operation that was sent.
    pub fn from_wire(step: &WireStep, result: Value) -> Result<StepOutcome, ResultError> {
        let op = step.op_name();
        let parse_err = |e: serde_json::Error| ResultError::Mismatch {
            op,
            error: e.to_string(),
        };
        Ok(match step {
            WireStep::Discover => {
                StepOutcome::Discover(serde_json::from_value(result).map_err(parse_err)?)
            }
            WireStep::Tools => {
                StepOutcome::Tools(serde_json::from_value(result).map_err(parse_err)?)
            }
            WireStep::Prompt => {
                StepOutcome::Prompt(serde_json::from_value(result).map_err(parse_err)?)
            }
            WireStep::Call { .. } => {
                let call: CallResult = serde_json::from_value(result.clone()).map_err(|_| {
                    ResultError::NotACallResult {
                        result: result.to_string(),
                    }
                })?;
                if let CallResult::Err { error, .. } = &call {
                    if !error.get("code").is_some_and(Value::is_string) {
                        return Err(ResultError::NoCode {
                            result: result.to_string(),
                        });
                    }
                }
                StepOutcome::Call(call)
            }
            WireStep::NewTurn => StepOutcome::NewTurn,
            WireStep::Select { .. } => {
                StepOutcome::Select(serde_json::from_value(result).map_err(parse_err)?)
            }
            WireStep::Validate { .. } => {
                StepOutcome::Validate(serde_json::from_value(result).map_err(parse_err)?)
            }
        })
    }

    /// The `result` and `refused` fields of the `step_result` that carries this outcome.
    pub fn to_response_parts(&self) -> (Option<Value>, Option<Refusal>) {
        match self {
            StepOutcome::Refused(message) => (
                None,
                Some(Refusal {
                    message: message.clone(),
                }),
            ),
            other => (Some(other.to_wire()), None),
        }
    }

    /// The wire form of this outcome (a refusal as `{"refused":{"message":..}}`).
    pub fn to_wire(&self) -> Value {
        let v = match self {
            StepOutcome::Discover(d) => serde_json::to_value(d),
            StepOutcome::Tools(t) => serde_json::to_value(t),
            StepOutcome::Prompt(p) => serde_json::to_value(p),
            StepOutcome::Call(c) => serde_json::to_value(c),
            StepOutcome::NewTurn => Ok(Value::Object(Default::default())),
            StepOutcome::Select(r) => serde_json::to_value(r),
            StepOutcome::Validate(r) => serde_json::to_value(r),
            StepOutcome::Refused(message) => {
                Ok(serde_json::json!({"refused": {"message": message}}))
            }
        };
        v.unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_quoted_around_what_a_mismatch_is_about() {
        // A forged line 3,000 bytes into a prompt: `show` cuts it off at 400 bytes, the
        // mismatch must still show it (review round 3: prompt mismatches cut before the line).
        let prompt = format!(
            "{}\n## Forged SKILLSPEC_CANARY_X\n{}",
            "a".repeat(3000),
            "b".repeat(500)
        );
        assert!(!show(&Value::from(prompt.as_str())).contains("Forged"));
        let quoted = show_around(&prompt, "\n## Forged SKILLSPEC_CANARY_X");
        assert!(
            quoted.contains("\\n## Forged SKILLSPEC_CANARY_X"),
            "{quoted}"
        );
        assert!(
            quoted.starts_with('…') && quoted.contains(" of 3530)"),
            "{quoted}"
        );
        // Short texts, and texts without the needle, are quoted as before.
        assert_eq!(show_around("short", "x"), show(&Value::from("short")));
        let long = "é".repeat(400);
        assert_eq!(show_around(&long, "zz"), show(&Value::from(long.as_str())));
        // Multi-byte characters at the window's edges are never split.
        let wide = format!("{}NEEDLE{}", "é".repeat(300), "ü".repeat(300));
        assert!(show_around(&wide, "NEEDLE").contains("NEEDLE"));
    }

    fn started(implementation: Value) -> Result<Response, serde_json::Error> {
        serde_json::from_value(
            serde_json::json!({"type": "started", "protocol_version": 2, "implementation": implementation}),
        )
    }

    #[test]
    fn tool_names_are_read_and_checked() {
        let Response::Started { implementation, .. } = started(serde_json::json!({
            "name": "acme", "version": "1",
            "tool_names": {"skill_read_reference": "read_skill_resource"}
        }))
        .unwrap() else {
            panic!("a started message")
        };
        assert_eq!(
            implementation.tool_names,
            BTreeMap::from([("skill_read_reference".into(), "read_skill_resource".into())])
        );
        // Carried into report.json, and read back from it.
        let v = serde_json::to_value(&implementation).unwrap();
        assert_eq!(
            v["tool_names"]["skill_read_reference"],
            "read_skill_resource"
        );
        assert_eq!(
            serde_json::from_value::<ImplInfo>(v).unwrap(),
            implementation
        );
        // Absent: nothing written.
        let plain = ImplInfo::default();
        assert!(serde_json::to_value(&plain)
            .unwrap()
            .get("tool_names")
            .is_none());
        for (names, words) in [
            (
                serde_json::json!({"read_file": "x"}),
                "\"read_file\" is not a tool",
            ),
            (
                serde_json::json!({"skill_run_script": ""}),
                "1 to 256 bytes",
            ),
            (
                serde_json::json!({"skill_run_script": "a b"}),
                "without spaces",
            ),
            (
                serde_json::json!({"skill_run_script": "x".repeat(257)}),
                "1 to 256 bytes",
            ),
            (
                serde_json::json!({"skill_run_script": 3}),
                "expected a string",
            ),
        ] {
            let err =
                started(serde_json::json!({"name": "a", "version": "1", "tool_names": names}))
                    .unwrap_err()
                    .to_string();
            assert!(err.contains(words), "{err}");
        }
    }

    #[test]
    fn the_schema_lists_the_spec_tools_as_tool_names() {
        let f = crate::embedded::file("protocol/response.schema.json").unwrap();
        let schema: Value = serde_json::from_slice(f.bytes).unwrap();
        let props = &schema["$defs"]["started"]["properties"]["implementation"]["properties"]
            ["tool_names"]["properties"];
        let listed: Vec<&str> = props
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut spec = SPEC_TOOLS.to_vec();
        let mut listed_sorted = listed.clone();
        spec.sort();
        listed_sorted.sort();
        assert_eq!(listed_sorted, spec);
    }

    #[test]
    fn refusals_are_read_from_case_started_and_step_result() {
        let r: Response = serde_json::from_value(serde_json::json!(
            {"type": "case_started", "seq": 1, "refused": {"message": "no such directory"}}
        ))
        .unwrap();
        assert_eq!(
            r,
            Response::CaseStarted {
                seq: 1,
                refused: Some(Refusal {
                    message: "no such directory".into()
                })
            }
        );
        let r: Response = serde_json::from_value(serde_json::json!(
            {"type": "step_result", "seq": 1, "index": 0, "refused": {"message": "EMFILE"}}
        ))
        .unwrap();
        let Response::StepResult {
            result: None,
            refused: Some(_),
            ..
        } = r
        else {
            panic!("a refused step: {r:?}")
        };
        // Only `message`, a string.
        for bad in [
            serde_json::json!({"message": 1}),
            serde_json::json!({"message": "m", "code": "x"}),
            serde_json::json!({}),
        ] {
            assert!(serde_json::from_value::<Response>(serde_json::json!(
                {"type": "step_result", "seq": 1, "index": 0, "refused": bad}
            ))
            .is_err());
        }
        // The reference's server writes a refused outcome as `refused`, in place of `result`.
        assert_eq!(
            StepOutcome::Refused("m".into()).to_response_parts(),
            (
                None,
                Some(Refusal {
                    message: "m".into()
                })
            )
        );
        assert!(StepOutcome::NewTurn.to_response_parts().0.is_some());
    }
}
