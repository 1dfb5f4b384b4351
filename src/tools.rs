//! The skill tools' names, results and error codes, shared by both tools and the host.

use serde::Serialize;
use serde_json::{Map, Value};

/// The two skill tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ToolName {
    #[serde(rename = "skill_read_reference")]
    ReadReference,
    #[serde(rename = "skill_run_script")]
    RunScript,
}

impl ToolName {
    pub const ALL: [ToolName; 2] = [ToolName::ReadReference, ToolName::RunScript];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::ReadReference => "skill_read_reference",
            ToolName::RunScript => "skill_run_script",
        }
    }

    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// Every error code a skill tool call can return. `UnknownTool` is the host's answer for a tool
/// that is not offered; the rest belong to the tools (SPEC.md `read.errors`, `run.errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    UnknownTool,
    InvalidArgs,
    UnknownSkill,
    InvalidPath,
    NotFound,
    TooLarge,
    NotText,
    BlockedTool,
    ReplayBlocked,
    NotApproved,
    Timeout,
    OutputLimit,
    ScriptFailed,
    UnsupportedPlatform,
    SpawnFailed,
    // Profile `trust`: the lifecycle tools (SPEC.md `skills.lifecycle`).
    InvalidArchive,
    Exists,
    NotRemovable,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::InvalidArgs => "invalid_args",
            ErrorCode::UnknownSkill => "unknown_skill",
            ErrorCode::InvalidPath => "invalid_path",
            ErrorCode::NotFound => "not_found",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::NotText => "not_text",
            ErrorCode::BlockedTool => "blocked_tool",
            ErrorCode::ReplayBlocked => "replay_blocked",
            ErrorCode::NotApproved => "not_approved",
            ErrorCode::Timeout => "timeout",
            ErrorCode::OutputLimit => "output_limit",
            ErrorCode::ScriptFailed => "script_failed",
            ErrorCode::UnsupportedPlatform => "unsupported_platform",
            ErrorCode::SpawnFailed => "spawn_failed",
            ErrorCode::InvalidArchive => "invalid_archive",
            ErrorCode::Exists => "exists",
            ErrorCode::NotRemovable => "not_removable",
        }
    }
}

/// A failed call: a code, a human message (never compared by the suite) and structured fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    pub fields: Map<String, Value>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            fields: Map::new(),
        }
    }

    /// The error object of the wire form: the fields plus `code` and `message`.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut error = self.fields.clone();
        error.insert("code".into(), Value::from(self.code.as_str()));
        error.insert("message".into(), Value::from(self.message.clone()));
        error
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(key.to_owned(), value.into());
        self
    }
}

/// What a tool call returns.
pub type ToolResult = Result<Map<String, Value>, ToolError>;

/// The wire form used by reports and the adapter protocol:
/// `{"ok":true,"value":{..}}` or `{"ok":false,"error":{"code":..,"message":..,..fields}}`.
pub fn result_to_json(result: &ToolResult) -> Value {
    match result {
        Ok(value) => serde_json::json!({"ok": true, "value": value}),
        Err(e) => serde_json::json!({"ok": false, "error": e.to_map()}),
    }
}
