//! # skillspec reference runtime
//!
//! The reference implementation of the skill runtime that `SPEC.md` specifies: discovery of
//! SKILL.md skill directories under a configured root, the `skill_read_reference` and
//! `skill_run_script` tools with their security rules, the tool pipeline with turns, and the
//! Skill Guides prompt section. It knows nothing about the conformance runner; the runner drives
//! it through [`runtime::Runtime`].
//!
//! Module map:
//! - [`safe_fs`]: descriptor-relative, symlink-refusing, size-capped file access.
//! - [`yaml`], [`frontmatter`], [`legacy`]: parsing of untrusted metadata.
//! - [`discovery`]: the scan and the loaded guides.
//! - [`skill_path`], [`read_reference`], [`run_script`]: the two tools; [`policy`], [`trading`]
//!   and [`process`]: approval, the trading guard and helper lifecycle.
//! - [`tools`], [`runtime`], [`prompt`], [`config`], [`interpreter`]: the host around them.
//! - [`selection`], [`trust`], [`lifecycle`], [`profile`]: the `selection` and `trust` profile
//!   (activation scoring, trust directories and the tool ceiling, the lifecycle tools).
//! - [`hitl`]: the `hitl` profile (`read_skill`, `read_skill_file`, the human-confirmed
//!   `run_skill_script`).
//! - [`mutants`]: deliberate defects for `skillspec mutants`, compiled out without the cargo
//!   feature `mutants`.

pub mod config;
pub mod discovery;
pub mod frontmatter;
pub mod hitl;
pub mod interpreter;
pub mod legacy;
pub mod lifecycle;
pub mod mutants;
pub mod policy;
pub mod process;
pub mod profile;
pub mod prompt;
pub mod read_reference;
pub mod run_script;
pub mod runtime;
pub mod safe_fs;
pub mod selection;
pub mod skill_path;
pub mod tools;
pub mod trading;
pub mod trust;
pub mod yaml;

pub use config::Config;
pub use discovery::{discover, Discovery, Guide, GuideFormat, Skip, SkipReason};
pub use runtime::Runtime;
pub use tools::{ErrorCode, ToolError, ToolName, ToolResult};
