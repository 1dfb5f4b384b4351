//! Dialect `agentskills` (version [`VERSION`]): the open Agent Skills standard (agentskills.io) as
//! SPEC.md's part "Dialect `agentskills`" restates it, beside the Portable Skills runtime of the
//! rest of the crate and sharing none of its rules.
//!
//! This file owns the public types and the table of replaceable steps (`Steps`); the work is in
//! - `read`: reading a `SKILL.md` out of a skill directory and its frontmatter
//!   (`agentskills.skill.*`, `agentskills.parse.delimiters`), with the colon fallback of lenient
//!   clients (`agentskills.parse.colon-fallback`);
//! - `validate`: the skill format ([`validate_text`], [`validate_dir`]): `agentskills.name.*`,
//!   `agentskills.description.*` and the optional fields;
//! - `scan`: discovery in a project scope and a user scope ([`discover`]): the walk's bounds, the
//!   strict and lenient loading, collisions (`agentskills.discovery.*`,
//!   `agentskills.lenient.*`, `agentskills.collision.*`);
//! - `catalog`: what the model sees ([`prompt`], [`offered_tools`]) and receives at activation
//!   ([`activate`]): `agentskills.catalog.*`, `agentskills.disclosure.*`,
//!   `agentskills.activation.*`;
//! - `mutated` (cargo feature `mutants` only): the deliberate defects of this dialect.
//!
//! All file access goes through [`crate::safe_fs`]: below a configured scope root (or the
//! directory given to [`validate_dir`]) no symlink is followed and only what a directory listing
//! says is a regular file is ever opened. A tool (layer 2): it uses `frontmatter`, `yaml`,
//! `safe_fs` and `rules`.

use std::collections::BTreeMap;
use std::path::PathBuf;

mod catalog;
#[cfg(feature = "mutants")]
mod mutated;
mod read;
mod scan;
#[cfg(test)]
mod tests;
mod validate;

pub use catalog::{activate, offered_tools, prompt, ACTIVATE_TOOL};
pub use scan::discover;
pub use validate::{validate_dir, validate_text};

/// The version of the dialect this module implements.
pub const VERSION: &str = "2026-08";

/// Skill directories lie at most this many levels below a scope root (its children are level 1).
pub const MAX_SCAN_DEPTH: usize = 4;
/// At most this many directories are examined per scope.
pub const MAX_SCAN_DIRS: usize = 2000;
/// Activation lists at most this many of a skill's files.
pub const MAX_LISTED_RESOURCES: usize = 100;

/// How a client treats a skill that breaks a rule of the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A skill that breaks a MUST of the format is not loaded.
    Strict,
    /// The client guide's lenient validation: cosmetic problems are diagnostics only.
    Lenient,
}

impl Mode {
    /// The mode named `s` (`strict`, `lenient`).
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "strict" => Some(Mode::Strict),
            "lenient" => Some(Mode::Lenient),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Lenient => "lenient",
        }
    }
}

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// The scope roots, as the operator configured them (either may be absent).
#[derive(Debug, Clone, Default)]
pub struct Roots {
    pub project: Option<PathBuf>,
    pub user: Option<PathBuf>,
}

/// One loaded skill: the client guide's record, with its body.
#[derive(Debug, Clone)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The absolute path of the SKILL.md: the scope root joined with the relative path the walk
    /// took.
    pub location: PathBuf,
    /// `location`'s parent.
    pub directory: PathBuf,
    /// The text after the closing delimiter line, trimmed.
    pub body: String,
    pub scope: Scope,
}

/// Something a scan noticed: a problem of a skill (loaded or not), a collision, a bound reached.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub path: PathBuf,
    pub clause: &'static str,
    pub message: String,
    /// The skill's problem this diagnostic reports, with its line and hint (none for a
    /// collision, a bound reached, a directory that cannot be read).
    pub problem: Option<Problem>,
}

/// The result of [`discover`].
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Sorted by the bytes of their names.
    pub skills: Vec<Skill>,
    pub diagnostics: Vec<Diagnostic>,
}

/// One problem of a skill, as the validator reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The clause broken, e.g. `agentskills.name.charset`.
    pub clause: &'static str,
    /// A MUST rule (decides validity), or a SHOULD.
    pub must: bool,
    /// The 1-based line in SKILL.md of the offending key (or of the frontmatter opening), when
    /// known.
    pub line: Option<usize>,
    /// What is wrong, naming the value.
    pub message: String,
    /// How to fix it, in one sentence.
    pub hint: String,
}

/// The frontmatter fields the standard defines, each present only when the frontmatter has it;
/// a value that is not a string is rendered as its YAML text (a list as JSON-like text).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Properties {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<String>,
    #[serde(rename = "allowed-tools", skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

/// A validator's verdict on one skill.
#[derive(Debug, Clone, Default)]
pub struct Validation {
    pub problems: Vec<Problem>,
    /// `None` when the frontmatter could not be read at all.
    pub properties: Option<Properties>,
}

impl Validation {
    /// Whether no MUST rule is broken.
    pub fn valid(&self) -> bool {
        !self.problems.iter().any(|p| p.must)
    }
}

/// Why [`activate`] returns no skill content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivateError {
    /// No loaded skill has that name.
    UnknownSkill,
}

impl ActivateError {
    /// The error code (`unknown_skill`).
    pub fn as_str(self) -> &'static str {
        match self {
            ActivateError::UnknownSkill => "unknown_skill",
        }
    }
}

impl std::fmt::Display for ActivateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no loaded skill has that name")
    }
}

impl std::error::Error for ActivateError {}

/// The steps of this dialect a mutant can replace: the dialect's own ([`STEPS`]) in every normal
/// build.
struct Steps {
    /// Splits SKILL.md at its delimiter lines.
    split: fn(&str) -> Result<crate::frontmatter::Split<'_>, crate::frontmatter::FrontmatterError>,
    /// Whether a directory entry's name is the skill file's.
    is_skill_md: fn(&[u8]) -> bool,
    /// Whether a character may stand in a name.
    name_char: fn(char) -> bool,
    /// Whether a name of this many characters has an allowed length.
    name_length: fn(usize) -> bool,
    /// Whether a name starts or ends with a hyphen.
    hyphen_edge: fn(&str) -> bool,
    /// Whether a name holds consecutive hyphens.
    double_hyphen: fn(&str) -> bool,
    /// Whether a name matches its directory's name.
    matches_directory: fn(&[u8], &[u8]) -> bool,
    /// Whether a description is empty.
    blank_description: fn(&str) -> bool,
    /// Whether a description of this many characters has an allowed length.
    description_length: fn(usize) -> bool,
    /// Whether a compatibility of this many characters has an allowed length.
    compatibility_length: fn(usize) -> bool,
    /// Whether a metadata value is allowed.
    metadata_value: fn(&crate::yaml::Tree) -> bool,
    /// Whether an `allowed-tools` value is allowed.
    allowed_tools: fn(&crate::yaml::Tree) -> bool,
    /// Whether the scan skips a directory of this name.
    skipped_dir: fn(&[u8]) -> bool,
    /// Orders the skills found, by scope, before the first of each name is kept (stable).
    rank_scopes: fn(&mut [Skill]),
    /// Whether a lenient client skips a skill with a problem under this clause.
    lenient_fatal: fn(&str) -> bool,
    /// The prompt when no skill loaded.
    empty_prompt: fn() -> String,
    /// One skill's entry in the catalog.
    catalog_entry: fn(&Skill, &mut String),
    /// The resources part of the activation content, from the skill directory and the listing.
    resources: fn(std::os::fd::BorrowedFd<'_>, &catalog::Listing) -> String,
}

const STEPS: Steps = Steps {
    split: crate::frontmatter::split,
    is_skill_md: read::is_skill_md,
    name_char: validate::name_char,
    name_length: validate::name_length,
    hyphen_edge: validate::hyphen_edge,
    double_hyphen: validate::double_hyphen,
    matches_directory: validate::matches_directory,
    blank_description: crate::frontmatter::is_blank,
    description_length: validate::description_length,
    compatibility_length: validate::compatibility_length,
    metadata_value: validate::is_string,
    allowed_tools: validate::is_string,
    skipped_dir: scan::skipped_dir,
    rank_scopes: scan::project_first,
    lenient_fatal: scan::lenient_fatal,
    empty_prompt: String::new,
    catalog_entry: catalog::entry,
    resources: catalog::resources_block,
};

steps_in_force!();
