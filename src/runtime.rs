//! The minimal host around the skill tools: discovery at start, the tool registry and the
//! operator's tool allowlist, dispatch, turns and the system prompt.
//!
//! SPEC.md `enable.*`, `tools.*`: the tools are registered only when a guide loaded; the operator
//! allowlist can remove either; within a turn an identical call (same tool, same canonical JSON
//! arguments) is answered with the earlier result without running again; a new turn forgets.
//! Nothing here caches across turns.
//!
//! The runtime (layer 4): it composes the tools (`discovery`, `read_reference`, `run_script`,
//! `prompt`), the profiles (`profile`, `trust`, `lifecycle`, `hitl`) and the primitives.

use std::os::fd::{AsFd, OwnedFd};

use serde_json::Value;

use crate::config::Config;
use crate::discovery::{self, Discovery};
use crate::hitl;
use crate::interpreter::{self, InterpreterError};
use crate::lifecycle::LifecycleTool;
use crate::profile::{Profile, Selection};
use crate::prompt;
use crate::read_reference;
use crate::run_script;
use crate::safe_fs;
use crate::tools::{ErrorCode, ToolError, ToolName, ToolResult};

/// One runtime instance: a configured host after start-up.
pub struct Runtime {
    config: Config,
    root: Option<OwnedFd>,
    /// The real path of the root, resolved when it was opened (helpers get real paths).
    root_path: std::path::PathBuf,
    discovery: Discovery,
    /// Calls made in the current turn: (tool, canonical arguments) and their results.
    turn: Vec<TurnEntry>,
    /// The configured interpreter, resolved once at start-up.
    interpreter: Result<std::path::PathBuf, InterpreterError>,
    /// Profile `selection`/`trust`, when `skill_dirs` is configured.
    profile: Option<Profile>,
    /// Lifecycle calls made in the current turn (turn reuse, as for the core tools).
    profile_turn: Vec<(LifecycleTool, String, ToolResult)>,
}

impl Runtime {
    /// Starts a runtime: resolves the interpreter and, with a skills root configured, scans it.
    pub fn start(config: Config) -> Runtime {
        let interpreter = interpreter::resolve(
            config.python.as_os_str(),
            config.host_env.get("PATH").map(std::ffi::OsStr::new),
        );
        let absolute = |p: &Option<std::path::PathBuf>| p.clone().filter(|p| p.is_absolute());
        // Relative directories are never opened (as for the skills root, `enable.unset`).
        let profile = config.skill_dirs.as_ref().map(|dirs| {
            Profile::start(
                crate::trust::SkillDirs {
                    user: absolute(&dirs.user),
                    workspace: absolute(&dirs.workspace),
                    installed: absolute(&dirs.installed),
                },
                absolute(&config.registry),
                config.selection,
                config.host_env.clone(),
            )
        });
        let mut rt = Runtime {
            interpreter,
            config,
            root: None,
            root_path: std::path::PathBuf::new(),
            discovery: Discovery::default(),
            turn: Vec::new(),
            profile,
            profile_turn: Vec::new(),
        };
        rt.rescan();
        rt
    }

    /// The profile's state, when `skill_dirs` is configured.
    pub fn profile(&self) -> Option<&Profile> {
        self.profile.as_ref()
    }

    /// Selects the active skills for a message (profile `selection`); `None` without the
    /// profile.
    pub fn select(&mut self, message: &str, tools: &[String]) -> Option<Selection> {
        self.profile.as_mut().map(|p| p.select(message, tools))
    }

    /// The lifecycle tools offered: all three whenever the profile is on, filtered by the
    /// operator's tool allowlist and by the ceiling of the active skills.
    pub fn offered_lifecycle_tools(&self) -> Vec<LifecycleTool> {
        if self.profile.is_none() {
            return Vec::new();
        }
        LifecycleTool::ALL
            .into_iter()
            .filter(|t| match &self.config.tool_allowlist {
                Some(list) => list.iter().any(|n| n == t.as_str()),
                None => true,
            })
            .filter(|t| self.under_ceiling(t.as_str()))
            .collect()
    }

    /// Whether the active skills' tool ceiling keeps `tool` (always, without the profile).
    fn under_ceiling(&self, tool: &str) -> bool {
        (steps().under_ceiling)(self.profile.as_ref(), tool)
    }

    /// The names of every tool offered to the model: the core tools, then the profiles'.
    pub fn offered_tool_names(&self) -> Vec<&'static str> {
        let core = self.offered_tools().into_iter().map(ToolName::as_str);
        let profile = self
            .offered_lifecycle_tools()
            .into_iter()
            .map(LifecycleTool::as_str);
        let hitl = self
            .offered_hitl_tools()
            .into_iter()
            .map(hitl::HitlTool::as_str);
        core.chain(profile).chain(hitl).collect()
    }

    /// Whether the runtime is profile `hitl`'s host (skills enabled or not).
    pub fn is_hitl_host(&self) -> bool {
        self.config.hitl.is_some()
    }

    /// Profile `hitl`: the tools its host offers (none without the profile).
    pub fn offered_hitl_tools(&self) -> Vec<hitl::HitlTool> {
        self.config
            .hitl
            .as_ref()
            .map_or_else(Vec::new, hitl::offered)
    }

    /// Scans the skills root again (a reload); the turn memory is kept. With the profile, its
    /// directories are scanned again too.
    pub fn rescan(&mut self) -> &Discovery {
        if let Some(p) = &mut self.profile {
            p.rescan();
        }
        self.root = None;
        self.discovery = Discovery::default();
        // An empty setting is the same as none; a relative one is never opened (SPEC.md
        // `enable.unset`); a root that cannot be opened loads no guide (`tools.registration`).
        // Profile `hitl` with skills disabled: nothing is read (`hitl.zero-trace`).
        // spec: hitl.zero-trace (skills disabled: nothing is scanned)
        if self.config.hitl.as_ref().is_some_and(|h| !h.enabled) {
            return &self.discovery;
        }
        // spec: enable.unset (no root, an empty one or a relative one: nothing is opened)
        if let Some(root) = self.config.skills_root.as_ref().filter(|r| r.is_absolute()) {
            if let Ok(fd) = safe_fs::open_root(root) {
                self.root_path = safe_fs::real_path_of(&fd)
                    .or_else(|| std::fs::canonicalize(root).ok())
                    .unwrap_or_else(|| root.clone());
                self.discovery = discovery::discover_in(fd.as_fd());
                self.root = Some(fd);
            }
        }
        &self.discovery
    }

    pub fn discovery(&self) -> &Discovery {
        &self.discovery
    }

    /// The registered tools: both when at least one guide loaded, else none. With profile
    /// `hitl` the core's tools are never registered (the profile's host has its own).
    // spec: enable.tools-appear (both tools with a guide loaded, legacy ones included)
    pub fn registered_tools(&self) -> Vec<ToolName> {
        if !(steps().registers)(&self.discovery) || self.config.hitl.is_some() {
            Vec::new()
        } else {
            ToolName::ALL.to_vec()
        }
    }

    /// The tools offered to the model: registered, allowed by the operator's tool allowlist and
    /// kept by the ceiling of the active skills (profile `trust`).
    pub fn offered_tools(&self) -> Vec<ToolName> {
        self.registered_tools()
            .into_iter()
            // spec: tools.pipeline (the operator's allowlist removes a tool)
            .filter(|t| match &self.config.tool_allowlist {
                Some(list) => list.iter().any(|n| n == t.as_str()),
                None => true,
            })
            .filter(|t| self.under_ceiling(t.as_str()))
            .collect()
    }

    /// The system prompt as the model sees it. With profile `hitl`: the host's prompt, then
    /// the profile's section when skills are enabled and at least one loaded.
    pub fn system_prompt(&self) -> String {
        if self.config.hitl.is_some() {
            let offered = self.offered_hitl_tools();
            let mut out = self.baseline_prompt();
            if !offered.is_empty() && !self.discovery.loaded.is_empty() {
                out.push_str("\n\n");
                out.push_str(&hitl::prompt_section(
                    &self.discovery.loaded,
                    &self.root_path,
                    &offered,
                ));
            }
            return out;
        }
        prompt::system_prompt(&self.discovery.loaded, &self.offered_tools())
    }

    /// The system prompt as the runtime rendered it before portable skills (no tool text). With
    /// profile `hitl`: the host's prompt without skills.
    pub fn baseline_prompt(&self) -> String {
        if self.config.hitl.is_some() {
            return prompt::BASE_PROMPT.to_owned();
        }
        prompt::system_prompt(&self.discovery.loaded, &[])
    }

    /// Starts a new turn: earlier calls are no longer reused (and no profile skill is active).
    pub fn new_turn(&mut self) {
        (steps().forget)(&mut self.turn);
        self.profile_turn.clear();
        if let Some(p) = &mut self.profile {
            p.new_turn();
        }
    }

    /// Dispatches a tool call through the pipeline: offered check, turn reuse, the tool. Nobody
    /// answers a confirmation (profile `hitl`): see [`Runtime::call_with_human`].
    pub fn call(&mut self, tool: &str, args: &Value) -> ToolResult {
        self.call_with_human(tool, args, &mut hitl::NoAnswer)
    }

    /// [`Runtime::call`] with `human` answering the confirmations of profile `hitl`.
    pub fn call_with_human(
        &mut self,
        tool: &str,
        args: &Value,
        human: &mut dyn hitl::Human,
    ) -> ToolResult {
        if let Some(config) = &self.config.hitl {
            // The profile's host: its tools only, no reuse within a turn (SPEC.md "Profile
            // `hitl`", "One host, three tools").
            let Some(t) = hitl::HitlTool::parse(tool).filter(|t| hitl::offered(config).contains(t))
            else {
                return Err(ToolError::new(
                    ErrorCode::UnknownTool,
                    format!("no tool named `{tool}` is offered"),
                ));
            };
            let cx = hitl::Context {
                root: self.root.as_ref(),
                root_path: &self.root_path,
                discovery: &self.discovery,
                config,
                interpreter: &self.interpreter,
                host_env: &self.config.host_env,
            };
            return hitl::call(&cx, t, args, human);
        }
        if let Some(t) =
            LifecycleTool::parse(tool).filter(|t| self.offered_lifecycle_tools().contains(t))
        {
            let key = canonical_json(args);
            if let Some((_, _, earlier)) = self
                .profile_turn
                .iter()
                .find(|(x, k, _)| *x == t && *k == key)
            {
                return earlier.clone();
            }
            let Some(profile) = self.profile.as_mut() else {
                return Err(ToolError::new(ErrorCode::UnknownTool, "no profile"));
            };
            let result = profile.call(t, args);
            self.profile_turn.push((t, key, result.clone()));
            return result;
        }
        let callable = steps().callable;
        let Some(name) = ToolName::parse(tool).filter(|t| callable(self, *t)) else {
            return Err(ToolError::new(
                ErrorCode::UnknownTool,
                format!("no tool named `{tool}` is offered"),
            ));
        };
        // spec: tools.turn-reuse (an identical call of the turn returns the earlier result)
        let key = canonical_json(args);
        if let Some((_, _, earlier)) = self.turn.iter().find(|(t, k, _)| *t == name && *k == key) {
            return earlier.clone();
        }
        let result = self.execute(name, args);
        self.turn.push((name, key, result.clone()));
        result
    }

    fn execute(&self, name: ToolName, args: &Value) -> ToolResult {
        let Some(root) = &self.root else {
            return Err(ToolError::new(
                ErrorCode::UnknownSkill,
                "no skills root is configured",
            ));
        };
        match name {
            ToolName::ReadReference => read_reference::read_reference(root, &self.discovery, args),
            ToolName::RunScript => run_script::run_script(
                root,
                &self.root_path,
                &self.discovery,
                &self.config,
                &self.interpreter,
                args,
            ),
        }
    }
}

/// A call of the turn: the tool, its canonical arguments and the result.
type TurnEntry = (ToolName, String, ToolResult);

/// Whether the ceiling of the active skills keeps `tool` (always, without the profile).
// spec: trust.attenuation (the ceiling applies to what the runtime offers and runs)
fn ceiling_keeps(profile: Option<&Profile>, tool: &str) -> bool {
    profile.is_none_or(|p| p.allows_tool(tool))
}

/// Whether the skill tools are registered: when at least one guide loaded.
// spec: tools.registration
fn guides_loaded(discovery: &Discovery) -> bool {
    !discovery.loaded.is_empty()
}

/// A new turn forgets every call of the last one.
// spec: tools.no-registry-cache (no result outlives its turn)
fn forget_all(turn: &mut Vec<TurnEntry>) {
    turn.clear();
}

/// Whether a core tool can be called: when it is offered.
// spec: tools.pipeline (a tool that is not offered is `unknown_tool`)
fn is_offered(rt: &Runtime, tool: ToolName) -> bool {
    rt.offered_tools().contains(&tool)
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// Whether the active skills' ceiling keeps a tool.
    under_ceiling: fn(Option<&Profile>, &str) -> bool,
    /// Whether the skill tools are registered after a scan.
    registers: fn(&Discovery) -> bool,
    /// What a new turn does with the calls of the last.
    forget: fn(&mut Vec<TurnEntry>),
    /// Whether a core tool can be called.
    callable: fn(&Runtime, ToolName) -> bool,
}

const STEPS: Steps = Steps {
    under_ceiling: ceiling_keeps,
    registers: guides_loaded,
    forget: forget_all,
    callable: is_offered,
};

steps_in_force!();

/// The defects of this module (see `crate::mutants`).
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::TrustCeilingNotApplied) => &CEILING_NOT_APPLIED,
            Some(Mutant::ToolsWithoutGuides) => &ALWAYS_REGISTERED,
            Some(Mutant::TurnReuseAcrossTurns) => &NEVER_FORGETS,
            Some(Mutant::ToolsDisallowedCallable) => &REGISTERED_CALLABLE,
            _ => &STEPS,
        }
    }

    /// `trust-ceiling-not-applied`.
    const CEILING_NOT_APPLIED: Steps = Steps {
        under_ceiling: |_, _| true,
        ..STEPS
    };
    /// `tools-without-guides`.
    const ALWAYS_REGISTERED: Steps = Steps {
        registers: |_| true,
        ..STEPS
    };
    /// `turn-reuse-across-turns`.
    const NEVER_FORGETS: Steps = Steps {
        forget: |_| {},
        ..STEPS
    };
    /// `tools-disallowed-callable`: registered is enough.
    const REGISTERED_CALLABLE: Steps = Steps {
        callable: |rt, tool| is_offered(rt, tool) || rt.registered_tools().contains(&tool),
        ..STEPS
    };
}

/// The canonical text of a JSON value: object keys sorted (recursively), no white space. Two
/// calls are identical when their tool names and canonical arguments are equal.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(canonical_json)
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::canonical_json;

    #[test]
    fn canonical_form_ignores_key_order() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"skill":"a","path":"x","n":{"b":1,"a":[2,{"d":1,"c":2}]}}"#)
                .unwrap();
        let b: serde_json::Value =
            serde_json::from_str(r#"{"n":{"a":[2,{"c":2,"d":1}],"b":1},"path":"x","skill":"a"}"#)
                .unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"n":{"a":[2,{"c":2,"d":1}],"b":1},"path":"x","skill":"a"}"#
        );
    }
}
