//! The reference runtime behind the `Implementation` seam, in-process.
//!
//! It declares [`REFERENCE_FEATURES`]. For demonstrations it can also be built without declaring
//! some features ([`Reference::with_features`], which makes their cases UNSUPPORTED) or lacking
//! some mandatory behaviour ([`Reference::lacking`], which makes their cases FAIL).

use std::path::PathBuf;

use skillspec_reference::agentskills::{self, Mode};
use skillspec_reference::{Config, Runtime};

use crate::implementations::reference_agentskills::Session;
use crate::protocol::dialects::Claim;

use crate::implementations::{ImplError, Implementation};
use crate::protocol::features::Feature;
use crate::protocol::{
    CallResult, DiscoverResult, ImplInfo, LoadedGuide, OkFalse, OkTrue, PromptResult, SelectResult,
    SelectedSkill, SkippedPath, StepOutcome, ToolsResult, WireConfig, WireStep,
};

/// The features the reference implements: every optional feature.
pub const REFERENCE_FEATURES: [Feature; 6] = [
    Feature::ToolAllowlist,
    Feature::SkipReport,
    Feature::PlatformEmulation,
    Feature::Selection,
    Feature::Trust,
    Feature::Hitl,
];

/// Mandatory behaviour the reference can leave out (`skillspec adapter --without NAME`), to show
/// that the suite fails an implementation without it. The names are those of the former
/// features ([`crate::protocol::features::REMOVED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Omission {
    /// No trading guard: every call is treated as if `allow_trading` were set.
    TradingGuard,
    /// No replay guard: the replay mode is ignored.
    ReplayGuard,
    /// No reuse within a turn: every call starts a new turn.
    TurnReuse,
}

impl Omission {
    pub const ALL: [Omission; 3] = [
        Omission::TradingGuard,
        Omission::ReplayGuard,
        Omission::TurnReuse,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Omission::TradingGuard => "trading-guard",
            Omission::ReplayGuard => "replay-guard",
            Omission::TurnReuse => "turn-reuse",
        }
    }

    pub fn parse(s: &str) -> Option<Omission> {
        Omission::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// The reference runtime, one fresh [`Runtime`] per case (or, for a case of dialect
/// `agentskills`, one fresh client of that dialect in the reference's mode).
pub struct Reference {
    info: ImplInfo,
    runtime: Option<Runtime>,
    agentskills: Option<Session>,
    mode: Mode,
    omitted: Vec<Omission>,
    /// Profile `hitl`: the human the case scripts.
    human: ScriptedHuman,
}

/// The human of a `hitl` case (PROTOCOL.md, "Profiles"): answers each question with the next of
/// the case's answers, no once they have run out, and records the questions of each call.
#[derive(Debug, Default)]
pub struct ScriptedHuman {
    answers: std::collections::VecDeque<bool>,
    asked: Vec<serde_json::Value>,
}

impl ScriptedHuman {
    /// A human who will give these answers (`approve` is yes, anything else no).
    pub fn new(answers: &[String]) -> ScriptedHuman {
        ScriptedHuman {
            answers: answers.iter().map(|a| a == "approve").collect(),
            asked: Vec::new(),
        }
    }

    /// The questions asked since the last call of this method.
    pub fn take_asked(&mut self) -> Vec<serde_json::Value> {
        std::mem::take(&mut self.asked)
    }
}

impl skillspec_reference::hitl::Human for ScriptedHuman {
    fn confirm(&mut self, question: &skillspec_reference::hitl::Question) -> bool {
        self.asked.push(question.to_json());
        self.answers.pop_front().unwrap_or(false)
    }
}

impl Default for Reference {
    fn default() -> Self {
        Reference::with_features(REFERENCE_FEATURES.to_vec())
    }
}

impl Reference {
    /// A reference that declares only `features` (to exercise UNSUPPORTED reporting).
    pub fn with_features(features: Vec<Feature>) -> Reference {
        Reference {
            info: ImplInfo {
                name: "skillspec-reference".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                language: Some("rust".into()),
                features,
                unknown_features: Vec::new(),
                process_per_case: false,
                side_by_side: None,
                tool_names: Default::default(),
                dialects: dialect_claims(Mode::Lenient),
                ..ImplInfo::default()
            },
            runtime: None,
            agentskills: None,
            mode: Mode::Lenient,
            omitted: Vec::new(),
            human: ScriptedHuman::default(),
        }
    }

    /// The same reference claiming dialect `agentskills` in `mode` (the default: lenient).
    pub fn with_mode(mut self, mode: Mode) -> Reference {
        self.mode = mode;
        self.info.dialects = dialect_claims(mode);
        self
    }

    /// The same reference asking, over the protocol, for a fresh process per case.
    pub fn with_process_per_case(mut self, yes: bool) -> Reference {
        self.info.process_per_case = yes;
        self
    }

    /// The same reference without `omission`: a deliberately non-conforming implementation,
    /// named so in reports (`skillspec-reference (without trading-guard)`).
    pub fn lacking(mut self, omission: Omission) -> Reference {
        if !self.omitted.contains(&omission) {
            self.omitted.push(omission);
            let names: Vec<&str> = self.omitted.iter().map(|o| o.as_str()).collect();
            self.info.name = format!("skillspec-reference (without {})", names.join(", "));
        }
        self
    }
}

/// The dialects the reference claims: Portable Skills, and the open standard in `mode`.
fn dialect_claims(mode: Mode) -> Vec<Claim> {
    let mut out = crate::protocol::dialects::default_claims();
    out.push(Claim {
        name: "agentskills".into(),
        version: agentskills::VERSION.into(),
        mode: Some(mode.as_str().into()),
    });
    out
}

/// Translates the wire configuration into the reference's own.
pub fn runtime_config(config: &WireConfig) -> Config {
    Config {
        skills_root: config.skills_root.as_ref().map(PathBuf::from),
        script_allowlist: config.script_allowlist.clone(),
        tool_allowlist: config.tool_allowlist.clone(),
        allow_trading: config.allow_trading,
        replay: config.replay.clone(),
        timeout_ms: config.timeout_ms.clone(),
        python: PathBuf::from(&config.python),
        host_env: config.env.clone(),
        no_process_groups: config.platform.as_deref() == Some("no-process-groups") || !cfg!(unix),
        skill_dirs: config
            .skill_dirs
            .as_ref()
            .map(|d| skillspec_reference::trust::SkillDirs {
                user: d.user.as_ref().map(PathBuf::from),
                workspace: d.workspace.as_ref().map(PathBuf::from),
                installed: d.installed.as_ref().map(PathBuf::from),
            }),
        registry: config.registry.as_ref().map(PathBuf::from),
        selection: {
            let defaults = skillspec_reference::selection::Limits::default();
            let wire = config.selection.clone().unwrap_or_default();
            skillspec_reference::selection::Limits {
                max_active: wire.max_active.unwrap_or(defaults.max_active),
                max_context_tokens: wire
                    .max_context_tokens
                    .unwrap_or(defaults.max_context_tokens),
            }
        },
        hitl: config
            .hitl
            .as_ref()
            .map(|h| skillspec_reference::hitl::HitlConfig {
                enabled: h.enabled,
                script_tool_allowed: h.script_tool_allowed,
                // Exactly the documented values; anything else asks nobody (fail closed).
                session: skillspec_reference::hitl::Session::from_setting(&h.session),
                timeout_ms: h.timeout_ms.clone(),
            }),
    }
}

/// The `discover` result of the reference: the core root's guides, or with the profile the
/// guides of its directories with their trust levels.
fn discover(rt: &mut Runtime) -> DiscoverResult {
    let core = rt.rescan().clone();
    let (loaded, skipped) = match rt.profile() {
        Some(p) => {
            let scan = p.scan();
            let guides: Vec<(&skillspec_reference::Guide, Option<&str>)> = scan
                .skills
                .iter()
                .map(|s| (&s.guide, Some(s.trust.as_str())))
                .collect();
            (wire_guides(&guides), wire_skips(&scan.skipped))
        }
        None => {
            let guides: Vec<_> = core.loaded.iter().map(|g| (g, None)).collect();
            (wire_guides(&guides), wire_skips(&core.skipped))
        }
    };
    DiscoverResult {
        loaded,
        skipped: Some(skipped),
    }
}

fn wire_guides(guides: &[(&skillspec_reference::Guide, Option<&str>)]) -> Vec<LoadedGuide> {
    guides
        .iter()
        .map(|(g, trust)| LoadedGuide {
            id: g.id.clone(),
            format: Some(
                serde_json::to_value(g.format)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
            ),
            name: Some(g.name.clone()),
            description: Some(g.description.clone()),
            body: Some(g.body.clone()),
            trust: trust.map(str::to_owned),
            location: None,
        })
        .collect()
}

fn wire_skips(skips: &[skillspec_reference::Skip]) -> Vec<SkippedPath> {
    skips
        .iter()
        .map(|s| SkippedPath {
            path: s.path.clone(),
            reason: s.reason.as_str().to_owned(),
        })
        .collect()
}

impl Implementation for Reference {
    fn info(&self) -> &ImplInfo {
        &self.info
    }

    fn start_case(
        &mut self,
        _seq: u64,
        _case_id: &str,
        root: &str,
        wire: &WireConfig,
    ) -> Result<(), ImplError> {
        self.runtime = None;
        self.agentskills = None;
        // The reference claims two dialects: the case says whose rules apply.
        if wire.dialect.as_deref() == Some("agentskills") {
            self.agentskills = Some(Session::start(self.mode, root, wire));
            return Ok(());
        }
        let mut config = runtime_config(wire);
        if self.omitted.contains(&Omission::TradingGuard) {
            config.allow_trading = true;
        }
        if self.omitted.contains(&Omission::ReplayGuard) {
            config.replay = None;
        }
        self.runtime = Some(Runtime::start(config));
        self.human =
            ScriptedHuman::new(wire.hitl.as_ref().map_or(&[][..], |h| h.answers.as_slice()));
        Ok(())
    }

    fn step(&mut self, _index: usize, step: &WireStep) -> Result<StepOutcome, ImplError> {
        if let Some(session) = &mut self.agentskills {
            return Ok(session.step(step));
        }
        let rt = self
            .runtime
            .as_mut()
            .ok_or_else(|| ImplError::Refused("step outside a case".into()))?;
        Ok(match step {
            WireStep::Discover => StepOutcome::Discover(discover(rt)),
            WireStep::Tools => StepOutcome::Tools(ToolsResult {
                offered: rt
                    .offered_tool_names()
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            }),
            WireStep::Prompt => StepOutcome::Prompt(PromptResult {
                text: rt.system_prompt(),
                baseline: rt.baseline_prompt(),
            }),
            WireStep::Call { tool, args } => StepOutcome::Call({
                if self.omitted.contains(&Omission::TurnReuse) {
                    rt.new_turn();
                }
                let result = rt.call_with_human(tool, args, &mut self.human);
                // Profile `hitl`: the questions of this call, reported only in its cases.
                let asked = rt.is_hitl_host().then(|| self.human.take_asked());
                match result {
                    Ok(value) => CallResult::Ok {
                        ok: OkTrue(()),
                        value,
                        asked,
                    },
                    Err(e) => CallResult::Err {
                        ok: OkFalse(()),
                        error: e.to_map(),
                        asked,
                    },
                }
            }),
            WireStep::NewTurn => {
                rt.new_turn();
                StepOutcome::NewTurn
            }
            WireStep::Select { message, tools } => {
                // Without `skill_dirs` there are no profile skills: nothing is selected.
                let selection = rt.select(message, tools);
                StepOutcome::Select(SelectResult {
                    selected: selection
                        .iter()
                        .flat_map(|s| &s.selected)
                        .map(|s| SelectedSkill {
                            name: s.name.clone(),
                            score: Some(u64::from(s.score)),
                            trust: s.trust.as_str().to_owned(),
                        })
                        .collect(),
                    tool_ceiling: selection.map_or_else(|| tools.clone(), |s| s.tool_ceiling),
                })
            }
            WireStep::Validate { .. } => StepOutcome::Refused(
                "validation is dialect agentskills'; this case is Portable Skills'".into(),
            ),
        })
    }

    fn end_case(&mut self) -> Result<(), ImplError> {
        self.runtime = None;
        self.agentskills = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omissions_are_the_removed_features() {
        let names: Vec<&str> = Omission::ALL.iter().map(|o| o.as_str()).collect();
        assert_eq!(names, crate::protocol::features::REMOVED);
        for o in Omission::ALL {
            assert_eq!(Omission::parse(o.as_str()), Some(o));
        }
        let r = Reference::default()
            .lacking(Omission::TradingGuard)
            .lacking(Omission::ReplayGuard)
            .lacking(Omission::TradingGuard);
        assert_eq!(
            r.info().name,
            "skillspec-reference (without trading-guard, replay-guard)"
        );
        assert_eq!(r.info().features, REFERENCE_FEATURES);
    }

    /// A `hitl` case's configuration with this session text, an approval waiting, and a script
    /// that leaves `ran` behind when it runs.
    fn hitl_case(root: &std::path::Path, session: &str) -> WireConfig {
        let skill = root.join("skills/alpha");
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: alpha\ndescription: first\n---\nBody\n",
        )
        .unwrap();
        std::fs::write(
            skill.join("scripts/hello.py"),
            "open('ran', 'w').write('ran')\n",
        )
        .unwrap();
        WireConfig {
            skills_root: Some(root.join("skills").to_string_lossy().into_owned()),
            script_allowlist: None,
            tool_allowlist: None,
            allow_trading: false,
            replay: None,
            timeout_ms: None,
            python: "python3".into(),
            env: [("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())].into(),
            platform: None,
            skill_dirs: None,
            registry: None,
            selection: None,
            hitl: Some(crate::protocol::WireHitl {
                enabled: true,
                script_tool_allowed: true,
                session: session.to_owned(),
                answers: vec!["approve".into()],
                timeout_ms: None,
            }),
            dialect: None,
            user_skills_root: None,
        }
    }

    #[test]
    fn a_session_setting_other_than_the_documented_two_asks_nobody_and_runs_nothing() {
        let call = WireStep::Call {
            tool: "run_skill_script".into(),
            args: serde_json::json!({"skill": "alpha", "script": "scripts/hello.py"}),
        };
        for session in [
            "non_interactive",
            "NON-INTERACTIVE",
            "non-interactive ",
            "",
            "batch",
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let mut r = Reference::default();
            r.start_case(1, "x", "", &hitl_case(tmp.path(), session))
                .unwrap();
            let outcome = r.step(0, &call).unwrap();
            r.end_case().unwrap();
            let StepOutcome::Call(CallResult::Err { error, asked, .. }) = outcome else {
                panic!("{session:?}: the script ran: {outcome:?}");
            };
            assert_eq!(error["code"], "no_human", "{session:?}");
            assert_eq!(asked, Some(vec![]), "{session:?}");
            assert!(!tmp.path().join("skills/alpha/ran").exists(), "{session:?}");
        }
        // The documented interactive value still asks and runs.
        let tmp = tempfile::tempdir().unwrap();
        let mut r = Reference::default();
        r.start_case(1, "x", "", &hitl_case(tmp.path(), "interactive"))
            .unwrap();
        assert!(matches!(
            r.step(0, &call).unwrap(),
            StepOutcome::Call(CallResult::Ok { .. })
        ));
        assert!(tmp.path().join("skills/alpha/ran").exists());
    }
}
