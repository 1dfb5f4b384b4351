//! The `config` key of a case: the implementation-neutral runtime configuration ([`CaseConfig`])
//! and its parsing and checks (spec-cases/README.md, "Configuration"). Part of the case format,
//! it implements no SPEC.md clause; its types are re-exported from [`crate::cases`].

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{as_object, kind_name, typed, CaseError, Ctx};

/// Where the hash of an allowlist entry comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashSource {
    /// Written out in the case.
    Hex(String),
    /// The SHA-256 of this fixture file (relative to the case root), computed after the tree is built.
    Of(String),
}

/// One structured allowlist entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowEntry {
    pub skill: String,
    pub script: String,
    pub sha256: HashSource,
}

/// The operator's script allowlist as a case gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowlist {
    /// Entries the runner serializes to the policy JSON.
    Entries(Vec<AllowEntry>),
    /// The policy text verbatim (for malformed policies); `{sha256:PATH}` and `{root}` are
    /// substituted.
    Raw(String),
}

/// Implementation-neutral runtime configuration of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseConfig {
    /// The skills root. Default: `skills` in the case root.
    pub skills_root: SkillsRoot,
    pub script_allowlist: Option<Allowlist>,
    pub tool_allowlist: Option<Vec<String>>,
    pub allow_trading: bool,
    pub replay: Option<String>,
    /// `SKILL_SCRIPT_TIMEOUT_MS` exactly as set (a number in the case file is sent as its text).
    pub timeout_ms: Option<String>,
    /// The runtime's own environment; `{root}` in values is the case root.
    pub env: BTreeMap<String, String>,
    /// Overrides the interpreter the runner resolved (`{root}` is the case root), for cases about
    /// an interpreter that cannot start or that records how it was called.
    pub python: Option<String>,
    /// A platform to emulate (needs the `platform-emulation` feature).
    pub platform: Option<Platform>,
    /// Profile `selection`/`trust`: the skill directories by trust, relative to the case root.
    pub skill_dirs: Option<CaseSkillDirs>,
    /// Profile `trust`: the local registry directory, relative to the case root.
    pub registry: Option<String>,
    /// Profile `selection`: the selection limits (`None` fields: the defaults).
    pub selection: Option<crate::protocol::WireSelection>,
    /// Profile `hitl`: the approval-gated script host.
    pub hitl: Option<CaseHitl>,
    /// Dialect `agentskills`: the user-level skills directory, relative to the case root.
    pub user_skills_root: Option<String>,
}

impl CaseConfig {
    /// Every string of the configuration that a runtime may show (in an error message, a
    /// prompt, a refusal), each with what it is; not the environment's values (a runtime never
    /// shows them, and `secret` canaries live there).
    pub fn shown_strings(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        match &self.skills_root {
            SkillsRoot::InCase(p) | SkillsRoot::AsWritten(p) => {
                out.push(("the skills root", p.clone()))
            }
            SkillsRoot::Unset => {}
        }
        match &self.script_allowlist {
            Some(Allowlist::Raw(text)) => out.push(("the script allowlist's text", text.clone())),
            Some(Allowlist::Entries(entries)) => {
                for e in entries {
                    out.push((
                        "a script allowlist entry",
                        format!("{} {}", e.skill, e.script),
                    ));
                    let (HashSource::Hex(h) | HashSource::Of(h)) = &e.sha256;
                    out.push(("a script allowlist entry", h.clone()));
                }
            }
            None => {}
        }
        for t in self.tool_allowlist.iter().flatten() {
            out.push(("the tool allowlist", t.clone()));
        }
        for (what, v) in [
            ("the replay setting", &self.replay),
            ("the timeout setting", &self.timeout_ms),
            ("the interpreter", &self.python),
            ("the registry directory", &self.registry),
            ("the user skills root", &self.user_skills_root),
        ] {
            if let Some(v) = v {
                out.push((what, v.clone()));
            }
        }
        for k in self.env.keys() {
            out.push(("an environment variable's name", k.clone()));
        }
        if let Some(dirs) = &self.skill_dirs {
            for d in [&dirs.user, &dirs.workspace, &dirs.installed]
                .into_iter()
                .flatten()
            {
                out.push(("a skill directory", d.clone()));
            }
        }
        if let Some(h) = &self.hitl {
            if let Some(t) = &h.timeout_ms {
                out.push(("the hitl timeout setting", t.clone()));
            }
        }
        out
    }
}

/// `config.hitl` of a case (profile `hitl`), with the case format's defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseHitl {
    /// `skills.enabled`; default true.
    pub enabled: bool,
    /// `run_skill_script` on the tool allowlist; default false (the seed's default).
    pub script_tool_allowed: bool,
    /// Whether a human can be asked; default interactive.
    pub session: Session,
    /// The human's answers, in order; default none (so every question is answered no).
    pub answers: Vec<Answer>,
    /// The script timeout setting as text (a number in the case file is sent as its text).
    pub timeout_ms: Option<String>,
}

/// Whether a human can be asked (profile `hitl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Session {
    Interactive,
    NonInteractive,
}

impl Session {
    pub fn as_str(self) -> &'static str {
        match self {
            Session::Interactive => "interactive",
            Session::NonInteractive => "non-interactive",
        }
    }
}

/// One answer of the human (profile `hitl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    Approve,
    Deny,
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Approve => "approve",
            Answer::Deny => "deny",
        }
    }
}

/// `config.skill_dirs` of a case: each directory relative to the case root, or not configured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSkillDirs {
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub workspace: Option<String>,
    #[serde(default)]
    pub installed: Option<String>,
}

/// Where the runtime's skills root is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillsRoot {
    /// Not set: the feature is off.
    Unset,
    /// This path relative to the case root (sent as an absolute path).
    InCase(String),
    /// This text exactly as an operator might write it (empty, relative), sent verbatim.
    AsWritten(String),
}

/// Platforms a case can ask the runtime to emulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    /// No POSIX process groups (as on Windows).
    NoProcessGroups,
}

impl Default for CaseConfig {
    fn default() -> Self {
        CaseConfig {
            skills_root: SkillsRoot::InCase("skills".into()),
            script_allowlist: None,
            tool_allowlist: None,
            allow_trading: false,
            replay: None,
            timeout_ms: None,
            env: BTreeMap::new(),
            python: None,
            platform: None,
            skill_dirs: None,
            registry: None,
            selection: None,
            hitl: None,
            user_skills_root: None,
        }
    }
}

/// A case's `config` as written, before its checks.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    skills_root: Option<String>,
    #[serde(default)]
    skills_root_as_written: Option<String>,
    #[serde(default)]
    script_allowlist: Option<Value>,
    #[serde(default)]
    tool_allowlist: Option<Vec<String>>,
    #[serde(default)]
    allow_trading: bool,
    #[serde(default)]
    replay: Option<String>,
    #[serde(default)]
    timeout_ms: Option<Value>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    python: Option<String>,
    #[serde(default)]
    platform: Option<Platform>,
    #[serde(default)]
    skill_dirs: Option<CaseSkillDirs>,
    #[serde(default)]
    registry: Option<String>,
    #[serde(default)]
    selection: Option<crate::protocol::WireSelection>,
    #[serde(default)]
    hitl: Option<RawHitl>,
    #[serde(default)]
    user_skills_root: Option<String>,
}

/// `config.hitl` as written, the case format's defaults filled in by serde.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHitl {
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    script_tool_allowed: bool,
    #[serde(default = "interactive")]
    session: Session,
    #[serde(default)]
    answers: Vec<Answer>,
    #[serde(default)]
    timeout_ms: Option<Value>,
}

fn yes() -> bool {
    true
}

fn interactive() -> Session {
    Session::Interactive
}

/// One structured `script_allowlist` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    skill: String,
    script: String,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    sha256_of: Option<String>,
}

/// Parses and checks a case's `config` mapping `v`; errors name `line`, the line of `config`.
pub(super) fn parse_config(cx: &Ctx<'_>, line: usize, v: &Value) -> Result<CaseConfig, CaseError> {
    let obj = as_object(cx, line, "config", v)?;
    let raw: RawConfig = typed(cx, line, "config", v)?;
    let root_key = obj.contains_key("skills_root");
    check_dirs(cx, line, root_key, &raw)?;
    let skills_root = skills_root(
        cx,
        line,
        (root_key, raw.skills_root, raw.skills_root_as_written),
        raw.skill_dirs.is_some(),
    )?;
    let script_allowlist = script_allowlist(cx, line, raw.script_allowlist)?;
    let hitl = hitl(cx, line, raw.hitl)?;
    Ok(CaseConfig {
        hitl,
        skills_root,
        script_allowlist,
        tool_allowlist: raw.tool_allowlist,
        allow_trading: raw.allow_trading,
        replay: raw.replay,
        timeout_ms: timeout_text(cx, line, "timeout_ms", raw.timeout_ms)?,
        env: raw.env,
        python: raw.python,
        platform: raw.platform,
        skill_dirs: raw.skill_dirs,
        registry: raw.registry,
        selection: raw.selection,
        user_skills_root: raw.user_skills_root,
    })
}

/// The directories of the profiles: `skill_dirs` without a skills root (`root_key`: the
/// `skills_root` key is written), and each of them and `registry` inside the case root.
fn check_dirs(cx: &Ctx<'_>, line: usize, root_key: bool, raw: &RawConfig) -> Result<(), CaseError> {
    // With `skill_dirs` (the profile's directories) the core root is unset.
    if raw.skill_dirs.is_some() && (root_key || raw.skills_root_as_written.is_some()) {
        return Err(cx.err(
            line,
            "`config.skill_dirs` replaces the skills root: leave `skills_root` out",
        ));
    }
    if let Some(d) = &raw.skill_dirs {
        for (what, p) in [
            ("skill_dirs.user", &d.user),
            ("skill_dirs.workspace", &d.workspace),
            ("skill_dirs.installed", &d.installed),
        ] {
            if let Some(p) = p {
                in_case(cx, line, what, p)?;
            }
        }
    }
    if let Some(r) = &raw.registry {
        in_case(cx, line, "registry", r)?;
    }
    if let Some(r) = &raw.user_skills_root {
        in_case(cx, line, "user_skills_root", r)?;
    }
    Ok(())
}

/// `config.WHAT` (the path `p`) is relative to the case root and does not climb out of it.
fn in_case(cx: &Ctx<'_>, line: usize, what: &str, p: &str) -> Result<(), CaseError> {
    if p.is_empty() || p.starts_with('/') || p.split('/').any(|s| s == "..") {
        return Err(cx.err(
            line,
            format!("`config.{what}` must be relative to the case root, without `..`"),
        ));
    }
    Ok(())
}

/// The skills root from `skills_root` (whether its key is written, and its value) and
/// `skills_root_as_written`; `skill_dirs` says whether the profile's directories are configured.
fn skills_root(
    cx: &Ctx<'_>,
    line: usize,
    (root_key, in_case, as_written): (bool, Option<String>, Option<String>),
    skill_dirs: bool,
) -> Result<SkillsRoot, CaseError> {
    // `skills_root: null` (written out) unsets the root; leaving the key out uses `skills`.
    let skills_root = match (root_key, as_written) {
        (false, None) if skill_dirs => SkillsRoot::Unset,
        (true, Some(_)) => {
            return Err(cx.err(
                line,
                "`config` has either `skills_root` or `skills_root_as_written`, not both",
            ))
        }
        (false, Some(text)) => SkillsRoot::AsWritten(text),
        (true, None) => in_case.map_or(SkillsRoot::Unset, SkillsRoot::InCase),
        (false, None) => SkillsRoot::InCase("skills".into()),
    };
    if let SkillsRoot::InCase(root) = &skills_root {
        if root.starts_with('/') || root.split('/').any(|s| s == "..") {
            return Err(cx.err(
                line,
                "`config.skills_root` must be relative to the case root, without `..`",
            ));
        }
    }
    Ok(skills_root)
}

/// `config.script_allowlist`: unset, the policy text verbatim, or a list of entries.
fn script_allowlist(
    cx: &Ctx<'_>,
    line: usize,
    v: Option<Value>,
) -> Result<Option<Allowlist>, CaseError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(Allowlist::Raw(s))),
        Some(Value::Array(items)) => {
            let mut entries = Vec::new();
            for item in items {
                entries.push(allow_entry(cx, line, &item)?);
            }
            Ok(Some(Allowlist::Entries(entries)))
        }
        Some(other) => Err(cx.err(
            line,
            format!(
                "`config.script_allowlist` must be a list of entries or a raw string, got {}",
                kind_name(&other)
            ),
        )),
    }
}

/// One structured `script_allowlist` entry, with exactly one of `sha256` and `sha256_of`.
fn allow_entry(cx: &Ctx<'_>, line: usize, item: &Value) -> Result<AllowEntry, CaseError> {
    let e: RawEntry = typed(cx, line, "config.script_allowlist", item)?;
    let sha256 = match (e.sha256, e.sha256_of) {
        (Some(h), None) => HashSource::Hex(h),
        (None, Some(p)) => HashSource::Of(p),
        _ => {
            return Err(cx.err(
                line,
                "each `script_allowlist` entry needs exactly one of `sha256` and `sha256_of`",
            ))
        }
    };
    Ok(AllowEntry {
        skill: e.skill,
        script: e.script,
        sha256,
    })
}

/// `config.hitl` with its defaults, its timeout setting as text.
fn hitl(cx: &Ctx<'_>, line: usize, raw: Option<RawHitl>) -> Result<Option<CaseHitl>, CaseError> {
    let Some(h) = raw else {
        return Ok(None);
    };
    Ok(Some(CaseHitl {
        enabled: h.enabled,
        script_tool_allowed: h.script_tool_allowed,
        session: h.session,
        answers: h.answers,
        timeout_ms: timeout_text(cx, line, "hitl.timeout_ms", h.timeout_ms)?,
    }))
}

/// A timeout setting (`config.WHAT`) as the text sent: a number in the case file is sent as its
/// text.
fn timeout_text(
    cx: &Ctx<'_>,
    line: usize,
    what: &str,
    v: Option<Value>,
) -> Result<Option<String>, CaseError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(t)) => Ok(Some(t)),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(cx.err(
            line,
            format!(
                "`config.{what}` is the setting's text or a number, got {}",
                kind_name(&other)
            ),
        )),
    }
}
