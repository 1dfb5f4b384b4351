//! The runtime state of the `selection` and `trust` profile (SPEC.md, "Profile `selection` and
//! `trust`"): the scanned trust directories, the skills the latest selection of the turn made
//! active, and the dispatch of the lifecycle tools. [`crate::runtime::Runtime`] holds one when
//! `skill_dirs` is configured.
//!
//! A profile module (layer 3): it uses `selection`, `trust`, `lifecycle`, `config` and `tools`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::lifecycle::{self, LifecycleTool};
use crate::selection::{self, Candidate, Limits};
use crate::tools::ToolResult;
use crate::trust::{self, ProfileScan, ProfileSkill, SkillDirs, Trust};

/// One skill a selection made active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedSkill {
    pub name: String,
    pub score: u32,
    pub trust: Trust,
}

/// What one `select` gives: the active skills in selection order, and the tools of the host's
/// list that remain available with them active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub selected: Vec<SelectedSkill>,
    pub tool_ceiling: Vec<String>,
}

/// The profile's state in one runtime.
#[derive(Debug, Clone)]
pub struct Profile {
    dirs: SkillDirs,
    registry: Option<PathBuf>,
    limits: Limits,
    env: BTreeMap<String, String>,
    scan: ProfileScan,
    /// The skills the latest selection of the current turn made active.
    active: Vec<String>,
}

impl Profile {
    /// Starts the profile: scans the directories (gating against `env`, the runtime's own
    /// environment).
    pub fn start(
        dirs: SkillDirs,
        registry: Option<PathBuf>,
        limits: Limits,
        env: BTreeMap<String, String>,
    ) -> Profile {
        let scan = trust::scan(&dirs, &env);
        Profile {
            dirs,
            registry,
            limits,
            env,
            scan,
            active: Vec::new(),
        }
    }

    /// Scans the directories again; skills that are no longer loaded stop being active.
    pub fn rescan(&mut self) -> &ProfileScan {
        self.scan = trust::scan(&self.dirs, &self.env);
        let scan = &self.scan;
        self.active.retain(|n| scan.skill(n).is_some());
        &self.scan
    }

    pub fn scan(&self) -> &ProfileScan {
        &self.scan
    }

    /// Selects the active skills for `message` and the tool ceiling over the host's `tools`
    /// (SPEC.md `selection.*`, `trust.attenuation`); the selected skills are active until the
    /// next selection or the end of the turn.
    pub fn select(&mut self, message: &str, tools: &[String]) -> Selection {
        let candidates: Vec<Candidate<'_>> = self
            .scan
            .skills
            .iter()
            .map(|s| Candidate {
                name: &s.guide.id,
                activation: &s.fields.activation,
                body_bytes: s.guide.body.len(),
                selectable: (steps().selectable)(s),
            })
            .collect();
        let selected: Vec<SelectedSkill> = selection::select(&candidates, message, self.limits)
            .into_iter()
            .map(|s| {
                let skill = &self.scan.skills[s.index];
                SelectedSkill {
                    name: skill.guide.id.clone(),
                    score: s.score,
                    trust: skill.trust,
                }
            })
            .collect();
        self.active = selected.iter().map(|s| s.name.clone()).collect();
        Selection {
            tool_ceiling: trust::ceiling(tools, selected.iter().map(|s| s.trust)),
            selected,
        }
    }

    /// Whether the tool `name` stays under the ceiling of the skills active now (SPEC.md
    /// `trust.attenuation`): the ceiling applies to the tools the runtime itself offers and
    /// runs, not only to the host's list a `select` reports on.
    // spec: trust.attenuation
    pub fn allows_tool(&self, name: &str) -> bool {
        let trusts = self
            .active
            .iter()
            .filter_map(|n| self.scan.skill(n).map(|s| s.trust));
        !trust::ceiling(&[name.to_owned()], trusts).is_empty()
    }

    /// A new turn: no skill is active until the next selection.
    pub fn new_turn(&mut self) {
        self.active.clear();
    }

    /// Runs a lifecycle tool; install and remove rescan afterwards.
    pub fn call(&mut self, tool: LifecycleTool, args: &Value) -> ToolResult {
        let installed = self.dirs.installed.clone();
        match tool {
            LifecycleTool::List => lifecycle::list(&self.scan, &self.active, args),
            LifecycleTool::Install => {
                let result = lifecycle::install(
                    installed.as_deref(),
                    self.registry.as_deref(),
                    &self.scan,
                    args,
                );
                if result.is_ok() {
                    self.rescan();
                }
                result
            }
            LifecycleTool::Remove => {
                let result = lifecycle::remove(installed.as_deref(), &self.scan, args);
                if result.is_ok() {
                    self.rescan();
                }
                result
            }
        }
    }
}

/// Whether a loaded skill can be selected: when it is not gated.
// spec: selection.gating (a gated skill is never a candidate)
fn not_gated(skill: &ProfileSkill) -> bool {
    !skill.gated
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// Whether a loaded skill is a candidate.
    selectable: fn(&ProfileSkill) -> bool,
}

const STEPS: Steps = Steps {
    selectable: not_gated,
};

steps_in_force!();

/// The defect of this module (see `crate::mutants`).
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::SelectionGatingIgnored) => &GATING_IGNORED,
            _ => &STEPS,
        }
    }

    /// `selection-gating-ignored`.
    const GATING_IGNORED: Steps = Steps {
        selectable: |_| true,
    };
}
