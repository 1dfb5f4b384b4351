//! The reference runtime behind the `Implementation` seam, in-process.

use std::path::PathBuf;

use skillspec_reference::{Config, Runtime};

use crate::features::Feature;
use crate::implementation::{ImplError, Implementation};
use crate::protocol::{
    CallResult, DiscoverResult, ImplInfo, LoadedGuide, OkFalse, OkTrue, PromptResult, SkippedPath,
    StepOutcome, ToolsResult, WireConfig, WireStep,
};

/// The features the reference implements.
pub const REFERENCE_FEATURES: [Feature; 5] = [
    Feature::TradingGuard,
    Feature::ReplayGuard,
    Feature::TurnReuse,
    Feature::SkipReport,
    Feature::PlatformEmulation,
];

/// The reference runtime, one fresh [`Runtime`] per case.
pub struct Reference {
    info: ImplInfo,
    runtime: Option<Runtime>,
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
            },
            runtime: None,
        }
    }
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
    }
}

impl Implementation for Reference {
    fn info(&self) -> &ImplInfo {
        &self.info
    }

    fn start_case(
        &mut self,
        _seq: u64,
        _case_id: &str,
        _root: &str,
        config: &WireConfig,
    ) -> Result<(), ImplError> {
        self.runtime = Some(Runtime::start(runtime_config(config)));
        Ok(())
    }

    fn step(&mut self, _index: usize, step: &WireStep) -> Result<StepOutcome, ImplError> {
        let rt = self
            .runtime
            .as_mut()
            .ok_or_else(|| ImplError::Refused("step outside a case".into()))?;
        Ok(match step {
            WireStep::Discover => {
                let d = rt.rescan();
                StepOutcome::Discover(DiscoverResult {
                    loaded: d
                        .loaded
                        .iter()
                        .map(|g| LoadedGuide {
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
                        })
                        .collect(),
                    skipped: Some(
                        d.skipped
                            .iter()
                            .map(|s| SkippedPath {
                                path: s.path.clone(),
                                reason: s.reason.as_str().to_owned(),
                            })
                            .collect(),
                    ),
                })
            }
            WireStep::Tools => StepOutcome::Tools(ToolsResult {
                offered: rt
                    .offered_tools()
                    .iter()
                    .map(|t| t.as_str().to_owned())
                    .collect(),
            }),
            WireStep::Prompt => StepOutcome::Prompt(PromptResult {
                text: rt.system_prompt(),
                baseline: rt.baseline_prompt(),
            }),
            WireStep::Call { tool, args } => StepOutcome::Call(match rt.call(tool, args) {
                Ok(value) => CallResult::Ok {
                    ok: OkTrue(()),
                    value,
                },
                Err(e) => CallResult::Err {
                    ok: OkFalse(()),
                    error: e.to_map(),
                },
            }),
            WireStep::NewTurn => {
                rt.new_turn();
                StepOutcome::NewTurn
            }
        })
    }

    fn end_case(&mut self) -> Result<(), ImplError> {
        self.runtime = None;
        Ok(())
    }
}
