//! # skillspec reference runtime
//!
//! The reference implementation of the skill runtime that `SPEC.md` specifies: discovery of
//! SKILL.md skill directories under a configured root, the `skill_read_reference` and
//! `skill_run_script` tools with their security rules, the tool pipeline with turns, and the
//! Skill Guides prompt section. It knows nothing about the conformance runner; the runner drives
//! it through [`runtime::Runtime`].
//!
//! Module map, in layers: a module uses only modules of its own layer or below it
//! (`tests/architecture.rs` checks that no import cycle forms).
//! 1. Configuration and primitives: [`rules`] (the limits and check orders of SPEC.md),
//!    [`config`], [`tools`] (names, results, error codes), [`safe_fs`] (descriptor-relative,
//!    symlink-refusing, size-capped file access), [`yaml`], [`frontmatter`], [`legacy`] (parsing
//!    of untrusted metadata), [`skill_path`] (path text), [`policy`] (the allowlist),
//!    [`trading`] (the blocklist), [`interpreter`] and [`process`] (helper lifecycle),
//!    [`unseen`] (characters a reader does not see).
//! 2. The tools: [`discovery`] (the scan and the loaded guides), [`read_reference`] and
//!    [`run_script`] (the two skill tools), [`prompt`] (the Skill Guides section);
//!    [`agentskills`] (dialect `agentskills`: discovery in two scopes, the format validator, the
//!    catalog and activation).
//! 3. The profiles: [`selection`], [`trust`], [`lifecycle`] and [`profile`] (profile
//!    `selection` and `trust`: activation scoring, trust directories and the tool ceiling, the
//!    lifecycle tools); [`hitl`] (profile `hitl`: `read_skill`, `read_skill_file`, the
//!    human-confirmed `run_skill_script`).
//! 4. The runtime that composes them: [`runtime`] (discovery at start, the tool pipeline with
//!    turns, the system prompt).
//!
//! Below them all, only with the cargo feature `mutants`: `mutants`, the catalogue of
//! deliberate defects for `skillspec mutants` (see its documentation for where they live).
//!
//! Where a clause's rule is enforced, a `// spec: <clause-id>` comment says so:
//! `grep -rn 'spec: run.order' src` answers "where does this rule live".

#![deny(unsafe_code)]

/// `steps()`, the table of a module's replaceable steps in force: its `STEPS` in a normal build
/// (inlined away), or what its `mod mutated` chose for this process's mutant (feature `mutants`).
/// Declared here, before the modules, so that each uses the one definition.
macro_rules! steps_in_force {
    () => {
        #[cfg(not(feature = "mutants"))]
        #[inline(always)]
        fn steps() -> &'static Steps {
            &STEPS
        }

        #[cfg(feature = "mutants")]
        use mutated::steps;
    };
}

pub mod agentskills;
pub mod config;
pub mod discovery;
pub mod frontmatter;
pub mod hitl;
pub mod interpreter;
pub mod legacy;
pub mod lifecycle;
#[cfg(feature = "mutants")]
pub mod mutants;
pub mod policy;
pub mod process;
pub mod profile;
pub mod prompt;
pub mod read_reference;
pub mod rules;
pub mod run_script;
pub mod runtime;
pub mod safe_fs;
pub mod selection;
pub mod skill_path;
pub mod tools;
pub mod trading;
pub mod trust;
pub mod unseen;
pub mod yaml;

pub use config::Config;
pub use discovery::{discover, Discovery, Guide, GuideFormat, Skip, SkipReason};
pub use runtime::Runtime;
pub use tools::{ErrorCode, ToolError, ToolName, ToolResult};
