//! The host side: one case's ironclaw, built from `case_start.config` and driven by the steps.
//!
//! This module owns the translation from the protocol's operations to ironclaw 0.24.0's public
//! API and back: `SkillRegistry` (discovery and trust), `prefilter_skills` (selection),
//! `attenuate_tools` (the tool ceiling) and the model-facing tools `SkillListTool` and
//! `SkillRemoveTool`. It never implements behaviour ironclaw lacks: what ironclaw cannot do is
//! answered as a host without it would answer (`unknown_tool`, an empty tool list) or, for an
//! operation with no such answer (`prompt`), with a protocol `error` saying why.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use ironclaw::config::SkillsConfig;
use ironclaw::context::JobContext;
use ironclaw::llm::ToolDefinition;
use ironclaw::skills::registry::SkillRegistryError;
use ironclaw::skills::{LoadedSkill, SkillRegistry, SkillTrust, attenuate_tools, prefilter_skills};
use ironclaw::tools::builtin::{SkillListTool, SkillRemoveTool};
use ironclaw::tools::{Tool, ToolError};
use serde_json::{Value, json};

/// The ironclaw release this adapter is built against (Cargo.toml pins `=0.24.0`).
pub const IRONCLAW_VERSION: &str = "0.24.0";

/// The model-facing skill tools this adapter can drive without a network. ironclaw also
/// registers `skill_search` and `skill_install`, which reach the ClawHub catalog over HTTPS
/// (README.md says why they are withheld).
const OFFERED_TOOLS: [&str; 2] = ["skill_list", "skill_remove"];

/// Numbers ironclaw uses when nothing is configured.
#[derive(Clone, Copy, Debug)]
pub struct Defaults {
    max_active: usize,
    max_context_tokens: usize,
    max_scan_depth: usize,
}

impl Defaults {
    /// `SkillsConfig::default()`: 3 active skills, 4000 tokens, scan depth 3 in 0.24.0.
    pub fn from_ironclaw() -> Defaults {
        let c = SkillsConfig::default();
        Defaults {
            max_active: c.max_active_skills,
            max_context_tokens: c.max_context_tokens,
            max_scan_depth: c.max_scan_depth,
        }
    }
}

/// What a step comes to.
pub enum StepOutcome {
    /// The step's `result` (tool errors included: they are results).
    Result(Value),
    /// The adapter cannot answer this step truthfully: a protocol `error` with this message.
    Unserved(String),
}

/// The three skill directories of a case (absolute paths, or as an operator wrote them).
#[derive(Debug, Default, PartialEq)]
struct Dirs {
    user: Option<PathBuf>,
    workspace: Option<PathBuf>,
    installed: Option<PathBuf>,
}

/// One case's ironclaw.
pub struct Host {
    runtime: tokio::runtime::Runtime,
    /// `None` when the case configures no skill directory at all: ironclaw's
    /// `SKILLS_ENABLED=false`, where it builds no registry and registers no skill tool.
    skills: Option<Skills>,
    limits: Limits,
}

struct Skills {
    dirs: Dirs,
    max_scan_depth: usize,
    /// Shared with the tools, as ironclaw's `app.rs` shares it.
    registry: Arc<RwLock<SkillRegistry>>,
}

#[derive(Debug, PartialEq)]
struct Limits {
    max_active: usize,
    max_context_tokens: usize,
}

/// The case's environment (`config.env`), checked so that `set_var` cannot panic.
pub fn parse_env(config: &Value) -> Result<Vec<(String, String)>, String> {
    let Some(env) = config.get("env") else {
        return Ok(Vec::new());
    };
    let Some(env) = env.as_object() else {
        return Err("config.env is not an object".into());
    };
    let mut out = Vec::with_capacity(env.len());
    for (key, value) in env {
        let Some(value) = value.as_str() else {
            return Err(format!("config.env.{key} is not a string"));
        };
        if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
            return Err(format!(
                "config.env has a variable no process environment can hold: {key:?}"
            ));
        }
        out.push((key.clone(), value.to_owned()));
    }
    Ok(out)
}

fn optional_path(v: Option<&Value>, what: &str) -> Result<Option<PathBuf>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(PathBuf::from(s))),
        Some(_) => Err(format!("config.{what} is neither a string nor null")),
    }
}

fn optional_count(v: Option<&Value>, what: &str, default: usize) -> Result<usize, String> {
    match v {
        None | Some(Value::Null) => Ok(default),
        Some(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("config.selection.{what} is not a non-negative integer")),
    }
}

/// `config.skill_dirs` when present, otherwise `config.skills_root` as the user directory.
fn dirs_of(config: &Value) -> Result<Option<Dirs>, String> {
    match config.get("skill_dirs") {
        None | Some(Value::Null) => Ok(optional_path(config.get("skills_root"), "skills_root")?
            .map(|root| Dirs {
                user: Some(root),
                ..Dirs::default()
            })),
        Some(Value::Object(d)) => Ok(Some(Dirs {
            user: optional_path(d.get("user"), "skill_dirs.user")?,
            workspace: optional_path(d.get("workspace"), "skill_dirs.workspace")?,
            installed: optional_path(d.get("installed"), "skill_dirs.installed")?,
        })),
        Some(_) => Err("config.skill_dirs is neither an object nor null".into()),
    }
}

fn limits_of(config: &Value, defaults: &Defaults) -> Result<Limits, String> {
    let sel = config.get("selection").filter(|v| !v.is_null());
    if let Some(sel) = sel
        && !sel.is_object()
    {
        return Err("config.selection is neither an object nor null".into());
    }
    let get = |key| sel.and_then(|s| s.get(key));
    Ok(Limits {
        max_active: optional_count(get("max_active"), "max_active", defaults.max_active)?,
        max_context_tokens: optional_count(
            get("max_context_tokens"),
            "max_context_tokens",
            defaults.max_context_tokens,
        )?,
    })
}

fn trust_name(t: SkillTrust) -> &'static str {
    match t {
        SkillTrust::Trusted => "trusted",
        SkillTrust::Installed => "installed",
    }
}

/// Builds and fills a registry the way ironclaw's `app.rs` does at start-up (plus the workspace
/// directory, which 0.24.0's public API offers and its app does not set).
async fn discover(dirs: &Dirs, max_scan_depth: usize) -> SkillRegistry {
    // ironclaw always has a user directory; a case without one gets the empty path, which
    // cannot be read (ENOENT) and so contributes nothing.
    let mut registry = SkillRegistry::new(dirs.user.clone().unwrap_or_default())
        .with_max_scan_depth(max_scan_depth);
    if let Some(d) = &dirs.installed {
        registry = registry.with_installed_dir(d.clone());
    }
    if let Some(d) = &dirs.workspace {
        registry = registry.with_workspace_dir(d.clone());
    }
    registry.discover_all().await;
    registry
}

fn guide(skill: &LoadedSkill) -> Value {
    json!({
        "id": skill.name(),
        "format": "portable",
        "name": skill.name(),
        "description": skill.manifest.description,
        "body": skill.prompt_content,
        "trust": trust_name(skill.trust),
    })
}

fn tool_error(code: &str, message: impl Into<String>) -> Value {
    json!({"ok": false, "error": {"code": code, "message": message.into()}})
}

/// The code of a `ToolError` from ironclaw's skill tools (README.md, "Error codes").
fn code_of_tool_error(e: &ToolError) -> &'static str {
    match e {
        ToolError::InvalidParameters(_) => "invalid_args",
        _ => "failed",
    }
}

/// The code of a typed registry error (README.md, "Error codes").
fn code_of_registry_error(e: &SkillRegistryError) -> &'static str {
    match e {
        SkillRegistryError::NotFound(_) => "not_found",
        SkillRegistryError::CannotRemove { .. } => "not_removable",
        SkillRegistryError::AlreadyExists { .. } => "exists",
        _ => "failed",
    }
}

impl Host {
    /// Starts the case's ironclaw: reads the configuration and scans, as ironclaw does when it
    /// starts. The process environment must already be the case's.
    pub fn start(config: &Value, defaults: &Defaults) -> Result<Host, String> {
        let dirs = dirs_of(config)?;
        let limits = limits_of(config, defaults)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot build the tokio runtime: {e}"))?;
        let skills = dirs.map(|dirs| {
            let registry = runtime.block_on(discover(&dirs, defaults.max_scan_depth));
            Skills {
                dirs,
                max_scan_depth: defaults.max_scan_depth,
                registry: Arc::new(RwLock::new(registry)),
            }
        });
        Ok(Host {
            runtime,
            skills,
            limits,
        })
    }

    pub fn step(&mut self, step: &Value) -> StepOutcome {
        let op = step.get("op").and_then(Value::as_str).unwrap_or("");
        match op {
            "discover" => self.discover(),
            "tools" => {
                let offered: &[&str] = if self.skills.is_some() {
                    &OFFERED_TOOLS
                } else {
                    &[]
                };
                StepOutcome::Result(json!({"offered": offered}))
            }
            // The selection is made afresh for every message; ironclaw keeps no turn state in
            // its skills module.
            "new_turn" => StepOutcome::Result(json!({})),
            "select" => self.select(step),
            "call" => self.call(step),
            "prompt" => StepOutcome::Unserved(
                "ironclaw 0.24.0 renders no skills prompt of its own: it injects the skills the \
                 prefilter selected for one message (inside its agent loop, which needs an LLM) \
                 and has no list of skills in the system prompt; see README.md"
                    .into(),
            ),
            other => StepOutcome::Unserved(format!("unknown step op `{other}`")),
        }
    }

    /// Scans again, as `SkillRegistry::reload` does (a fresh registry, `discover_all`).
    fn discover(&mut self) -> StepOutcome {
        let Some(skills) = &self.skills else {
            return StepOutcome::Result(json!({"loaded": []}));
        };
        let fresh = self
            .runtime
            .block_on(discover(&skills.dirs, skills.max_scan_depth));
        let loaded: Vec<Value> = fresh.skills().iter().map(guide).collect();
        match skills.registry.write() {
            Ok(mut guard) => *guard = fresh,
            Err(_) => return StepOutcome::Unserved("the skill registry lock is poisoned".into()),
        }
        StepOutcome::Result(json!({"loaded": loaded}))
    }

    fn select(&self, step: &Value) -> StepOutcome {
        let Some(message) = step.get("message").and_then(Value::as_str) else {
            return StepOutcome::Unserved("select without a string `message`".into());
        };
        let tools: Vec<String> = match step.get("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                match items
                    .iter()
                    .map(|t| t.as_str().map(str::to_owned))
                    .collect()
                {
                    Some(names) => names,
                    None => {
                        return StepOutcome::Unserved("select `tools` holds a non-string".into());
                    }
                }
            }
            Some(_) => return StepOutcome::Unserved("select `tools` is not a list".into()),
        };
        let definitions: Vec<ToolDefinition> = tools
            .into_iter()
            .map(|name| ToolDefinition {
                name,
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .collect();
        let active: Vec<LoadedSkill> = match &self.skills {
            None => Vec::new(),
            Some(skills) => match skills.registry.read() {
                Ok(guard) => prefilter_skills(
                    message,
                    guard.skills(),
                    self.limits.max_active,
                    self.limits.max_context_tokens,
                )
                .into_iter()
                .cloned()
                .collect(),
                Err(_) => {
                    return StepOutcome::Unserved("the skill registry lock is poisoned".into());
                }
            },
        };
        let ceiling = attenuate_tools(&definitions, &active);
        // No `score`: ironclaw computes it in a private function and returns only the skills.
        let selected: Vec<Value> = active
            .iter()
            .map(|s| json!({"name": s.name(), "trust": trust_name(s.trust)}))
            .collect();
        let tool_ceiling: Vec<&str> = ceiling.tools.iter().map(|t| t.name.as_str()).collect();
        StepOutcome::Result(json!({"selected": selected, "tool_ceiling": tool_ceiling}))
    }

    fn call(&self, step: &Value) -> StepOutcome {
        let Some(tool) = step.get("tool").and_then(Value::as_str) else {
            return StepOutcome::Unserved("call without a string `tool`".into());
        };
        let args = step.get("args").cloned().unwrap_or(Value::Null);
        let Some(skills) = self
            .skills
            .as_ref()
            .filter(|_| OFFERED_TOOLS.contains(&tool))
        else {
            return StepOutcome::Result(tool_error(
                "unknown_tool",
                format!("ironclaw offers no tool `{tool}` here"),
            ));
        };
        let ctx = JobContext::default();
        let registry = Arc::clone(&skills.registry);
        let outcome = if tool == "skill_list" {
            let tool = SkillListTool::new(registry);
            self.runtime.block_on(tool.execute(args, &ctx))
        } else {
            // `SkillRemoveTool::execute` starts with `SkillRegistry::validate_remove`; asking it
            // first (it changes nothing) gives the refusal as a typed error instead of text.
            if let Some(name) = args.get("name").and_then(Value::as_str) {
                let checked = match skills.registry.read() {
                    Ok(guard) => guard.validate_remove(name).map(|_| ()),
                    Err(_) => {
                        return StepOutcome::Unserved("the skill registry lock is poisoned".into());
                    }
                };
                if let Err(e) = checked {
                    return StepOutcome::Result(tool_error(
                        code_of_registry_error(&e),
                        e.to_string(),
                    ));
                }
            }
            let tool = SkillRemoveTool::new(registry);
            self.runtime.block_on(tool.execute(args, &ctx))
        };
        StepOutcome::Result(match outcome {
            Ok(output) => json!({"ok": true, "value": output.result}),
            Err(e) => tool_error(code_of_tool_error(&e), e.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const DEFAULTS: Defaults = Defaults {
        max_active: 3,
        max_context_tokens: 4000,
        max_scan_depth: 3,
    };

    fn skill(dir: &std::path::Path, name: &str, keywords: &[&str]) {
        let d = dir.join(name);
        fs::create_dir_all(&d).unwrap();
        let kws = keywords
            .iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(", ");
        fs::write(
            d.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: {name} things\nactivation:\n  keywords: [{kws}]\n  max_context_tokens: 100\n---\n\nDo {name}.\n"
            ),
        )
        .unwrap();
    }

    fn result(o: StepOutcome) -> Value {
        match o {
            StepOutcome::Result(v) => v,
            StepOutcome::Unserved(m) => panic!("unserved: {m}"),
        }
    }

    #[test]
    fn defaults_are_ironclaws() {
        let d = Defaults::from_ironclaw();
        assert_eq!(
            (d.max_active, d.max_context_tokens, d.max_scan_depth),
            (3, 4000, 3)
        );
    }

    #[test]
    fn env_that_no_process_can_hold_is_refused() {
        assert!(parse_env(&json!({"env": {"A=B": "x"}})).is_err());
        assert!(parse_env(&json!({"env": {"": "x"}})).is_err());
        assert!(parse_env(&json!({"env": {"A": "x\u{0}"}})).is_err());
        assert!(parse_env(&json!({"env": {"A": 1}})).is_err());
        assert_eq!(
            parse_env(&json!({"env": {"A": ""}})).unwrap(),
            vec![("A".to_string(), String::new())]
        );
    }

    #[test]
    fn skills_root_is_the_user_dir_and_skill_dirs_win() {
        let d = dirs_of(&json!({"skills_root": "/r"})).unwrap().unwrap();
        assert_eq!(d.user, Some(PathBuf::from("/r")));
        assert_eq!(dirs_of(&json!({"skills_root": null})).unwrap(), None);
        let d = dirs_of(&json!({"skills_root": null, "skill_dirs": {"user": null, "workspace": "/w", "installed": "/i"}}))
            .unwrap()
            .unwrap();
        assert_eq!((d.user, d.workspace), (None, Some(PathBuf::from("/w"))));
        assert!(dirs_of(&json!({"skill_dirs": 3})).is_err());
    }

    #[test]
    fn selection_limits_default_and_override() {
        assert_eq!(
            limits_of(&json!({}), &DEFAULTS).unwrap(),
            Limits {
                max_active: 3,
                max_context_tokens: 4000
            }
        );
        assert_eq!(
            limits_of(
                &json!({"selection": {"max_active": 1, "max_context_tokens": null}}),
                &DEFAULTS
            )
            .unwrap(),
            Limits {
                max_active: 1,
                max_context_tokens: 4000
            }
        );
        assert!(limits_of(&json!({"selection": {"max_active": -1}}), &DEFAULTS).is_err());
    }

    #[test]
    fn installed_skill_active_cuts_the_ceiling_to_read_only_tools() {
        let root = tempfile::tempdir().unwrap();
        let (user, inst) = (root.path().join("u"), root.path().join("i"));
        skill(&user, "deploy", &["deploy"]);
        skill(&inst, "weather", &["weather"]);
        let config = json!({"skill_dirs": {"user": user, "workspace": null, "installed": inst}});
        let mut host = Host::start(&config, &DEFAULTS).unwrap();
        let found = result(host.step(&json!({"op": "discover"})));
        let trust: Vec<(&str, &str)> = found["loaded"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (g["id"].as_str().unwrap(), g["trust"].as_str().unwrap()))
            .collect();
        assert_eq!(trust, vec![("deploy", "trusted"), ("weather", "installed")]);
        let tools = json!(["shell", "memory_read", "http"]);
        let r =
            result(host.step(&json!({"op": "select", "message": "deploy now", "tools": tools})));
        assert_eq!(
            r["selected"],
            json!([{"name": "deploy", "trust": "trusted"}])
        );
        assert_eq!(r["tool_ceiling"], tools);
        let r = result(
            host.step(&json!({"op": "select", "message": "deploy the weather", "tools": tools})),
        );
        assert_eq!(r["tool_ceiling"], json!(["memory_read"]));
    }

    #[test]
    fn remove_refuses_unknown_and_workspace_skills_and_removes_installed_ones() {
        let root = tempfile::tempdir().unwrap();
        let (ws, inst) = (root.path().join("w"), root.path().join("i"));
        skill(&ws, "local", &["local"]);
        skill(&inst, "fetched", &["fetched"]);
        let config = json!({"skill_dirs": {"user": null, "workspace": ws, "installed": inst}});
        let mut host = Host::start(&config, &DEFAULTS).unwrap();
        let call = |host: &mut Host, tool: &str, args: Value| {
            result(host.step(&json!({"op": "call", "tool": tool, "args": args})))
        };
        assert_eq!(
            call(&mut host, "skill_remove", json!({"name": "nope"}))["error"]["code"],
            "not_found"
        );
        assert_eq!(
            call(&mut host, "skill_remove", json!({"name": "local"}))["error"]["code"],
            "not_removable"
        );
        assert_eq!(
            call(&mut host, "skill_remove", json!({}))["error"]["code"],
            "invalid_args"
        );
        assert_eq!(
            call(&mut host, "skill_remove", json!({"name": "fetched"}))["value"]["name"],
            "fetched"
        );
        assert!(!inst.join("fetched/SKILL.md").exists());
        let listed = call(&mut host, "skill_list", json!({}));
        let names: Vec<&str> = listed["value"]["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["local"]);
        assert_eq!(
            call(&mut host, "skill_install", json!({"name": "x"}))["error"]["code"],
            "unknown_tool"
        );
    }

    /// ironclaw 0.24.0 gives installed and user skills the same source (`SkillSource::User`),
    /// and `validate_remove` refuses only workspace skills: its tool removes a Trusted user
    /// skill. The adapter reports that as it is (this test pins the translation, not a wish).
    #[test]
    fn a_trusted_user_skill_is_removed_as_ironclaw_does() {
        let root = tempfile::tempdir().unwrap();
        let user = root.path().join("u");
        skill(&user, "mine", &["mine"]);
        let config = json!({"skill_dirs": {"user": user, "workspace": null, "installed": null}});
        let mut host = Host::start(&config, &DEFAULTS).unwrap();
        let r = result(
            host.step(&json!({"op": "call", "tool": "skill_remove", "args": {"name": "mine"}})),
        );
        assert_eq!(r["ok"], true);
        assert!(!user.join("mine/SKILL.md").exists());
        let found = result(host.step(&json!({"op": "discover"})));
        assert_eq!(found["loaded"], json!([]));
    }

    #[test]
    fn without_any_skill_directory_the_skills_feature_is_off() {
        let mut host = Host::start(&json!({"skills_root": null}), &DEFAULTS).unwrap();
        assert_eq!(
            result(host.step(&json!({"op": "tools"})))["offered"],
            json!([])
        );
        assert_eq!(
            result(host.step(&json!({"op": "discover"})))["loaded"],
            json!([])
        );
        let r =
            result(host.step(&json!({"op": "select", "message": "deploy", "tools": ["shell"]})));
        assert_eq!(r, json!({"selected": [], "tool_ceiling": ["shell"]}));
        let r = result(host.step(&json!({"op": "call", "tool": "skill_list", "args": {}})));
        assert_eq!(r["error"]["code"], "unknown_tool");
        assert!(matches!(
            host.step(&json!({"op": "prompt"})),
            StepOutcome::Unserved(_)
        ));
    }
}
