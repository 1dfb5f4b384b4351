//! The reference's dialect `agentskills` behind the `Implementation` seam: one session per case
//! of that dialect, mapping each step onto [`skillspec_reference::agentskills`] (discovery over the
//! project and user skills directories, the catalog in the prompt, `activate_skill`, the
//! validator). Nothing is decided here: the rules are the library's (SPEC.md, "Dialect
//! `agentskills`").

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use skillspec_reference::agentskills::{self, ActivateError, Catalog, Mode, Roots};

use crate::protocol::{
    CallResult, DiscoverResult, LoadedGuide, OkFalse, OkTrue, PromptResult, StepOutcome,
    ToolsResult, ValidateResult, WireConfig, WireStep,
};

/// The tool the reference offers for activation.
pub const ACTIVATE_TOOL: &str = "activate_skill";

/// One case of dialect `agentskills`.
pub struct Session {
    mode: Mode,
    roots: Roots,
    /// The case root: `validate` paths are relative to it.
    root: PathBuf,
    catalog: Catalog,
}

impl Session {
    /// Starts the client for a case: it scans its skills directories, as a host does at start.
    pub fn start(mode: Mode, root: &str, wire: &WireConfig) -> Session {
        let roots = Roots {
            project: wire.skills_root.as_ref().map(PathBuf::from),
            user: wire.user_skills_root.as_ref().map(PathBuf::from),
        };
        let catalog = agentskills::discover(&roots, mode);
        Session {
            mode,
            roots,
            root: PathBuf::from(root),
            catalog,
        }
    }

    /// Performs one step.
    pub fn step(&mut self, step: &WireStep) -> StepOutcome {
        match step {
            WireStep::Discover => {
                self.catalog = agentskills::discover(&self.roots, self.mode);
                StepOutcome::Discover(self.discovered())
            }
            WireStep::Tools => StepOutcome::Tools(ToolsResult {
                offered: agentskills::offered_tools(&self.catalog)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            }),
            WireStep::Prompt => {
                let base = skillspec_reference::prompt::BASE_PROMPT;
                let section = agentskills::prompt(&self.catalog);
                let text = if section.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}\n\n{section}")
                };
                StepOutcome::Prompt(PromptResult {
                    text,
                    baseline: base.to_owned(),
                })
            }
            WireStep::Call { tool, args } => StepOutcome::Call(self.call(tool, args)),
            WireStep::NewTurn => StepOutcome::NewTurn,
            WireStep::Select { .. } => StepOutcome::Refused(
                "the agentskills client has no selection (profile `selection` is Portable Skills')"
                    .into(),
            ),
            WireStep::Validate { path } => StepOutcome::Validate(validate(&self.root, path)),
        }
    }

    fn discovered(&self) -> DiscoverResult {
        DiscoverResult {
            loaded: self
                .catalog
                .skills
                .iter()
                .map(|s| LoadedGuide {
                    id: s.name.clone(),
                    format: None,
                    name: Some(s.name.clone()),
                    description: Some(s.description.clone()),
                    body: Some(s.body.clone()),
                    trust: None,
                    location: Some(s.location.to_string_lossy().into_owned()),
                })
                .collect(),
            skipped: None,
        }
    }

    fn call(&self, tool: &str, args: &Value) -> CallResult {
        let offered = agentskills::offered_tools(&self.catalog);
        if tool != ACTIVATE_TOOL || !offered.contains(&ACTIVATE_TOOL) {
            return error("unknown_tool", format!("no tool `{tool}` is offered"));
        }
        let name = match args.as_object() {
            Some(m) if m.len() == 1 => m.get("name").and_then(Value::as_str),
            _ => None,
        };
        let Some(name) = name else {
            return error(
                "invalid_args",
                "activate_skill takes exactly {\"name\": string}".into(),
            );
        };
        match agentskills::activate(&self.catalog, name) {
            Ok(content) => {
                let mut value = Map::new();
                value.insert("content".into(), content.into());
                CallResult::Ok {
                    ok: OkTrue(()),
                    value,
                    asked: None,
                }
            }
            Err(ActivateError::UnknownSkill) => {
                error("unknown_skill", "no loaded skill has this name".into())
            }
        }
    }
}

fn error(code: &str, message: String) -> CallResult {
    let mut error = Map::new();
    error.insert("code".into(), code.into());
    error.insert("message".into(), message.into());
    CallResult::Err {
        ok: OkFalse(()),
        error,
        asked: None,
    }
}

/// The validator's verdict on the skill directory at `path` (relative to the case root).
fn validate(root: &Path, path: &str) -> ValidateResult {
    let v = agentskills::validate_dir(&root.join(path));
    ValidateResult {
        valid: v.valid(),
        problems: v
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.clause, p.message))
            .collect(),
        properties: v
            .properties
            .as_ref()
            .and_then(|p| match serde_json::to_value(p) {
                Ok(Value::Object(m)) => Some(m),
                _ => None,
            }),
    }
}
