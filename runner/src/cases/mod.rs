//! The case format (v1): the typed model of a case file and its loading and validation.
//!
//! A case file is YAML, one case per file (spec-cases/README.md describes the format for
//! authors; `spec-cases/case.schema.json` is the editor schema). Loading turns it into a [`Case`]
//! whose every part is already checked: known clause ids, features from the closed list,
//! expectations that fit their step, at least one expectation per case. Errors name the file and
//! line.
//!
//! Layer 2 of the runner: it depends only on [`crate::protocol`] (the wire types a case's steps
//! and expectations are written in) and [`crate::input`].

pub mod budget;
pub mod clauses;
pub mod config;
pub mod expect;
pub mod exposure;
pub mod fixture;
pub mod refusals;
pub mod scan;
pub mod template;

pub(crate) mod load;
mod parse;
mod rules;
mod steps;
#[cfg(test)]
mod tests;

pub use load::{assemble, load_dir, CaseSource, Suite, MAX_CASE_FILE_BYTES};
pub use parse::parse_case;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::cases::expect::Expect;
use crate::cases::fixture::Tree;
use crate::protocol::features::Feature;
use crate::protocol::WireStep;

pub use config::{
    AllowEntry, Allowlist, Answer, CaseConfig, CaseHitl, CaseSkillDirs, HashSource, Platform,
    Session, SkillsRoot,
};

/// A problem with a case file, located as precisely as possible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for CaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// An operation the implementation performs.
    Implementation(WireStep),
    /// The runner writes these entries into the case root (creating or replacing them).
    Write(Tree),
    /// The runner removes these paths (files, symlinks or whole directories).
    Remove(Vec<Vec<u8>>),
    /// The runner waits this many milliseconds.
    Wait(u64),
}

impl Action {
    pub fn label(&self) -> String {
        match self {
            Action::Implementation(WireStep::Call { tool, .. }) => format!("call {tool}"),
            Action::Implementation(step) => step.op_name().to_owned(),
            Action::Write(_) => "write".into(),
            Action::Remove(_) => "remove".into(),
            Action::Wait(ms) => format!("wait {ms} ms"),
        }
    }
}

/// One step of a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The line of the step in its file (1-based).
    pub line: usize,
    pub action: Action,
    pub expect: Expect,
}

/// A condition on the environment the runner runs in (not on the implementation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precondition {
    /// Not running as root: file permissions are enforced.
    NotRoot,
}

impl Precondition {
    /// Why the precondition does not hold here, if it does not.
    pub fn unmet(self) -> Option<String> {
        match self {
            Precondition::NotRoot => rustix::process::geteuid().is_root().then(|| {
                "needs a runner that is not root, because root ignores file permissions".to_owned()
            }),
        }
    }
}

/// One validated case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    pub summary: String,
    pub clauses: Vec<String>,
    pub requires: Vec<Feature>,
    /// The skill file formats besides `SKILL.md` the case's subject is (`formats: [skill-yml]`):
    /// UNSUPPORTED for an implementation that does not read them.
    pub formats: Vec<crate::protocol::claims::Format>,
    /// The mechanisms the case names as exercised besides the tools its steps call
    /// (`exercises: [nested-scan]`); see [`Case::exercised`].
    pub exercises: Vec<crate::protocol::claims::Mechanism>,
    /// The case this one mirrors for the legacy `skill.yml` format (`twin_of: ID`): the same
    /// behaviour, so the reports count a failure of both as one distinct behaviour.
    pub twin_of: Option<String>,
    /// Conditions on where the runner runs; an unmet one skips the case.
    pub preconditions: Vec<Precondition>,
    pub tree: Tree,
    pub config: CaseConfig,
    pub steps: Vec<Step>,
    /// The file the case came from, and the line of its `id`.
    pub file: PathBuf,
    pub line: usize,
    /// The directory below the cases root that holds the file (`discovery`, `read`, ...), or for
    /// a file directly in the root the first word of the id.
    pub area: String,
    /// The canary tokens the case plants (SPEC.md, "How verdicts are judged").
    pub canaries: exposure::Canaries,
    /// What in the tree could make a runtime hang: then a step left unanswered is unsafe
    /// (`unbounded`) rather than an error.
    pub bounded: Option<String>,
    /// `alone: true`: see [`Case::runs_alone`].
    pub alone: bool,
    /// `exclusive: NAME`: see [`Case::exclusive_with`].
    pub exclusive: Option<String>,
    /// The dialect whose rules the case checks: that of its clauses (SPEC.md, "Dialects").
    pub dialect: &'static crate::protocol::dialects::Dialect,
    /// `mode: NAME`: the case is written for implementations of this mode of its dialect only.
    pub mode: Option<&'static str>,
}

impl Case {
    /// Whether the case runs with no other case beside it under `run --jobs N` (it says
    /// `alone: true`): for a case whose verdict a loaded machine could turn either way. The
    /// suite's timing cases do not need it (spec-cases/README.md, "Cases that measure time").
    pub fn runs_alone(&self) -> bool {
        self.alone
    }

    /// The name a case shares with the cases it must not run beside under `run --jobs N` (it
    /// says `exclusive: NAME`): cases of one name run one at a time, each beside any other case.
    /// For a case that needs much of one resource (the 4 GiB sparse reads: memory).
    pub fn exclusive_with(&self) -> Option<&str> {
        self.exclusive.as_deref()
    }

    /// Every mechanism the case exercises: the ones it names (`exercises:`), each tool of the
    /// specification a runtime may lack that its steps call or whose offer it checks, and each
    /// operation it performs that a runtime may not have (a scan, a validator). A pass while the
    /// implementation lacks one of them tested nothing: not exercised; a lacking operation
    /// ([`crate::protocol::claims::Mechanism::gates`]) makes the case UNSUPPORTED.
    pub fn exercised(&self) -> Vec<crate::protocol::claims::Mechanism> {
        use crate::cases::expect::OutcomeExpect;
        use crate::protocol::claims::Mechanism;
        fn push(out: &mut Vec<Mechanism>, m: Option<Mechanism>) {
            if let Some(m) = m.filter(|m| !out.contains(m)) {
                out.push(m);
            }
        }
        let mut out = self.exercises.clone();
        for s in &self.steps {
            match &s.action {
                Action::Implementation(WireStep::Call { tool, .. }) => {
                    push(&mut out, Mechanism::of_tool(tool))
                }
                Action::Implementation(WireStep::Discover) => push(&mut out, Some(Mechanism::Scan)),
                Action::Implementation(WireStep::Validate { .. }) => {
                    push(&mut out, Some(Mechanism::Validate))
                }
                _ => {}
            }
            if let Some(OutcomeExpect::Tools(t)) = &s.expect.outcome {
                // `offered` is the exact set of the specification's tools: it checks each of
                // them, offered or not.
                if t.offered.is_some() {
                    for tool in crate::cases::clauses::CORE_TOOLS {
                        push(&mut out, Mechanism::of_tool(tool));
                    }
                }
                for tool in &t.not_offered {
                    push(&mut out, Mechanism::of_tool(tool));
                }
            }
        }
        out
    }

    /// Whether the case is *hardening* (SPEC.md, "Hardening"): it requires no optional feature,
    /// every clause it cites lies in an area of the threat model
    /// ([`crate::cases::clauses::HARDENING_AREAS`]), and it can show an exposure, by a canary the
    /// scan looks for, a marker of code that must not run, a bound on an answer, or a
    /// safety-marked check. Such a case also runs for an implementation that does not claim its
    /// dialect, judged on its exposures alone.
    pub fn hardening(&self) -> bool {
        if self.requires.is_empty()
            && self
                .clauses
                .iter()
                .all(|c| crate::cases::clauses::in_hardening_area(c))
        {
            return self.exposes();
        }
        false
    }

    /// Whether the case can show an exposure at all (see [`Case::hardening`]).
    fn exposes(&self) -> bool {
        use crate::cases::expect::OutcomeExpect;
        self.canaries.iter().any(|(_, e)| e.scanned())
            || self.bounded.is_some()
            || self.steps.iter().any(|s| {
                s.expect
                    .files
                    .as_ref()
                    .is_some_and(|f| !f.absent.is_empty())
                    || match &s.expect.outcome {
                        Some(OutcomeExpect::Call(c)) => !c.safety.0.is_empty(),
                        Some(OutcomeExpect::Prompt(p)) => !p.safety.0.is_empty(),
                        _ => false,
                    }
            })
    }

    /// Whether the case may hold a worker long: it names something that could make a runtime
    /// hang (`bounded:`) or a resource it holds alone (`exclusive:`). Side by side, such cases
    /// start first, so that their waits overlap the rest of the run.
    pub fn may_take_long(&self) -> bool {
        self.bounded.is_some() || self.exclusive.is_some()
    }
}

/// Builds errors for one file.
pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a Path,
}

impl Ctx<'_> {
    pub(crate) fn err(&self, line: usize, message: impl Into<String>) -> CaseError {
        CaseError {
            file: self.file.to_path_buf(),
            line: (line > 0).then_some(line),
            message: message.into(),
        }
    }
}

pub(crate) fn as_object<'v>(
    cx: &Ctx<'_>,
    line: usize,
    what: &str,
    v: &'v Value,
) -> Result<&'v Map<String, Value>, CaseError> {
    v.as_object().ok_or_else(|| {
        cx.err(
            line,
            format!("`{what}` must be a mapping, got {}", kind_name(v)),
        )
    })
}

pub(crate) fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

pub(crate) fn typed<T: for<'de> Deserialize<'de>>(
    cx: &Ctx<'_>,
    line: usize,
    what: &str,
    v: &Value,
) -> Result<T, CaseError> {
    serde_json::from_value(v.clone()).map_err(|e| cx.err(line, format!("in `{what}`: {e}")))
}
