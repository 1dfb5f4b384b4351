//! What an implementation says about its own runtime beside its features (PROTOCOL.md,
//! "What the runtime reads and lacks"): the files its reading tool may return by design
//! ([`ReadScope`]), the skill file formats it reads ([`Format`]), and the mechanisms it does not
//! have ([`Mechanism`], each with the adapter's reason). The runner judges with them, and never
//! on an adapter's say-so alone: a read scope turns a canary read inside it from a crossing into a
//! permissive answer (the content was still read), a format the runtime never reads makes the
//! cases about that format UNSUPPORTED, and a missing mechanism turns a *pass* of a case that
//! exercises it into "not exercised" (a failure stays a failure).
//!
//! Clauses: SPEC.md "How verdicts are judged" (not exercised; a read scope).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Longest reason an adapter may give for a mechanism its runtime lacks (bytes), as every
/// adapter message is kept to its first 4096 bytes.
pub const MAX_REASON: usize = 4096;

/// What the runtime's file-reading tool may return by design.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ReadScope {
    /// Only files inside the skill's own directory (what SPEC.md requires).
    #[default]
    Skill,
    /// Any file below the skills root.
    SkillsRoot,
    /// Any file below its workspace, which the adapter roots at the case root (the directory that
    /// holds the skills root).
    CaseRoot,
}

impl ReadScope {
    pub const ALL: [ReadScope; 3] = [ReadScope::Skill, ReadScope::SkillsRoot, ReadScope::CaseRoot];

    pub fn word(self) -> &'static str {
        match self {
            ReadScope::Skill => "skill",
            ReadScope::SkillsRoot => "skills-root",
            ReadScope::CaseRoot => "case-root",
        }
    }

    pub fn parse(word: &str) -> Option<ReadScope> {
        ReadScope::ALL.into_iter().find(|s| s.word() == word)
    }
}

/// A skill file format a runtime reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `SKILL.md` with YAML frontmatter.
    SkillMd,
    /// The legacy `skill.yml` beside a `SKILL.md`.
    SkillYml,
}

impl Format {
    pub const ALL: [Format; 2] = [Format::SkillMd, Format::SkillYml];

    pub fn word(self) -> &'static str {
        match self {
            Format::SkillMd => "skill-md",
            Format::SkillYml => "skill-yml",
        }
    }

    pub fn parse(word: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.word() == word)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// A mechanism a case can exercise and a runtime can lack. A case that passes while the runtime
/// lacks a mechanism it exercises tested nothing: it is reported "not exercised".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// The tool `skill_read_reference`, or the runtime's own tool mapped onto it.
    #[serde(rename = "skill_read_reference")]
    ReadTool,
    /// The tool `skill_run_script`, or the runtime's own tool mapped onto it.
    #[serde(rename = "skill_run_script")]
    RunTool,
    /// A scan below the skills root's direct children.
    NestedScan,
    /// A tool that sees the model's argument object (not only positional values).
    ArgumentKeys,
    /// A scan of skills directories (`discover`): a validator has none.
    Scan,
    /// A validator (`validate`, dialect `agentskills`): most clients have none.
    Validate,
    /// Activation (`activate_skill`, dialect `agentskills`): a validator has none.
    #[serde(rename = "activate_skill")]
    ActivateTool,
}

impl Mechanism {
    pub const ALL: [Mechanism; 7] = [
        Mechanism::ReadTool,
        Mechanism::RunTool,
        Mechanism::NestedScan,
        Mechanism::ArgumentKeys,
        Mechanism::Scan,
        Mechanism::Validate,
        Mechanism::ActivateTool,
    ];

    pub fn word(self) -> &'static str {
        match self {
            Mechanism::ReadTool => "skill_read_reference",
            Mechanism::RunTool => "skill_run_script",
            Mechanism::NestedScan => "nested-scan",
            Mechanism::ArgumentKeys => "argument-keys",
            Mechanism::Scan => "scan",
            Mechanism::Validate => "validate",
            Mechanism::ActivateTool => "activate_skill",
        }
    }

    /// Whether a case that uses this mechanism cannot be asked at all of a runtime without it: an
    /// operation the runtime does not have (a scan, a validator, activation). Such a case is
    /// UNSUPPORTED, never sent. For the others (a tool, a deeper scan, argument keys) the case
    /// runs, and a pass is "not exercised".
    pub fn gates(self) -> bool {
        matches!(
            self,
            Mechanism::Scan | Mechanism::Validate | Mechanism::ActivateTool
        )
    }

    pub fn parse(word: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.word() == word)
    }

    /// The mechanism a tool of the specification is, if it is one a runtime may lack.
    pub fn of_tool(tool: &str) -> Option<Mechanism> {
        match tool {
            "skill_read_reference" => Some(Mechanism::ReadTool),
            "skill_run_script" => Some(Mechanism::RunTool),
            "activate_skill" => Some(Mechanism::ActivateTool),
            _ => None,
        }
    }

    pub fn names() -> String {
        Mechanism::ALL.map(Mechanism::word).join(", ")
    }
}

impl std::fmt::Display for Mechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// What a case needs of an implementation that it may not have: an optional feature it must
/// declare, a skill file format it must read, the dialect it must claim, or the mode of that
/// dialect it must claim. A case with a need unmet is UNSUPPORTED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Need {
    Feature(crate::protocol::features::Feature),
    Format(Format),
    /// `dialect NAME VERSION` ([`crate::protocol::dialects::Dialect::need`]).
    Dialect(&'static str),
    /// `mode NAME` ([`crate::protocol::dialects::Dialect::mode_needs`]).
    Mode(&'static str),
    /// An operation the runtime lacks ([`Mechanism::gates`]): `scan`, `validate`,
    /// `activate_skill`.
    Mechanism(Mechanism),
}

impl Need {
    /// The same as [`Need::word`], as features spell it.
    pub fn as_str(self) -> &'static str {
        self.word()
    }

    pub fn word(self) -> &'static str {
        match self {
            Need::Feature(f) => f.as_str(),
            Need::Format(f) => f.word(),
            Need::Dialect(w) | Need::Mode(w) => w,
            Need::Mechanism(m) => m.word(),
        }
    }

    /// A feature's, a format's, a dialect's or a mode's word.
    pub fn parse(word: &str) -> Option<Need> {
        use crate::protocol::dialects::DIALECTS;
        crate::protocol::features::Feature::parse(word)
            .map(Need::Feature)
            .or_else(|| Format::parse(word).map(Need::Format))
            .or_else(|| {
                DIALECTS
                    .iter()
                    .find(|d| d.need == word)
                    .map(|d| Need::Dialect(d.need))
            })
            .or_else(|| {
                DIALECTS
                    .iter()
                    .flat_map(|d| d.mode_needs.iter())
                    .find(|m| **m == word)
                    .map(|m| Need::Mode(m))
            })
            .or_else(|| {
                Mechanism::parse(word)
                    .filter(|m| m.gates())
                    .map(Need::Mechanism)
            })
    }
}

impl std::fmt::Display for Need {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

impl serde::Serialize for Need {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.word())
    }
}

/// What is wrong with a claim of `implementation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimError {
    ReadScope(String),
    Formats(String),
    Lacks(String),
}

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimError::ReadScope(got) => write!(
                f,
                "`read_scope` must be one of {}, got {got}",
                ReadScope::ALL.map(ReadScope::word).join(", ")
            ),
            ClaimError::Formats(why) => write!(
                f,
                "`formats` must be a non-empty list of {} (each once): {why}",
                Format::ALL.map(Format::word).join(", ")
            ),
            ClaimError::Lacks(why) => write!(
                f,
                "`lacks` maps a mechanism ({}) to a non-empty reason of at most {MAX_REASON} bytes: {why}",
                Mechanism::names()
            ),
        }
    }
}

impl std::error::Error for ClaimError {}

/// Reads `read_scope` as sent (absent: [`ReadScope::Skill`]).
pub fn read_scope(word: Option<&str>) -> Result<ReadScope, ClaimError> {
    match word {
        None => Ok(ReadScope::default()),
        Some(w) => ReadScope::parse(w).ok_or_else(|| ClaimError::ReadScope(quoted(w))),
    }
}

/// Reads `formats` as sent (absent: both).
pub fn formats(words: Option<Vec<String>>) -> Result<Vec<Format>, ClaimError> {
    let Some(words) = words else {
        return Ok(Format::ALL.to_vec());
    };
    if words.is_empty() {
        return Err(ClaimError::Formats("the list is empty".into()));
    }
    let mut out = Vec::new();
    for w in &words {
        let f = Format::parse(w)
            .ok_or_else(|| ClaimError::Formats(format!("unknown format {}", quoted(w))))?;
        if out.contains(&f) {
            return Err(ClaimError::Formats(format!("{} twice", quoted(w))));
        }
        out.push(f);
    }
    Ok(out)
}

/// Reads `lacks` as sent (absent: nothing lacking).
pub fn lacks(map: BTreeMap<String, String>) -> Result<BTreeMap<Mechanism, String>, ClaimError> {
    let mut out = BTreeMap::new();
    for (word, reason) in map {
        let m = Mechanism::parse(&word)
            .ok_or_else(|| ClaimError::Lacks(format!("unknown mechanism {}", quoted(&word))))?;
        if reason.trim().is_empty() || reason.len() > MAX_REASON {
            return Err(ClaimError::Lacks(format!(
                "the reason for `{m}` is {} bytes",
                reason.len()
            )));
        }
        out.insert(m, reason);
    }
    Ok(out)
}

/// `text` in backticks, its control characters escaped, cut at 80 bytes.
fn quoted(text: &str) -> String {
    let mut s: String = text.escape_debug().collect();
    if s.len() > 80 {
        let mut end = 80;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    format!("`{s}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_claims_are_the_specification_s_defaults() {
        assert_eq!(read_scope(None), Ok(ReadScope::Skill));
        assert_eq!(formats(None), Ok(vec![Format::SkillMd, Format::SkillYml]));
        assert_eq!(lacks(BTreeMap::new()), Ok(BTreeMap::new()));
    }

    #[test]
    fn claims_are_read_from_closed_lists() {
        assert_eq!(read_scope(Some("case-root")), Ok(ReadScope::CaseRoot));
        assert!(read_scope(Some("anything"))
            .unwrap_err()
            .to_string()
            .contains("one of skill, skills-root, case-root"));
        assert_eq!(
            formats(Some(vec!["skill-md".into()])),
            Ok(vec![Format::SkillMd])
        );
        for bad in [
            vec![],
            vec!["skill-md".into(), "skill-md".into()],
            vec!["SKILL.md".into()],
        ] {
            assert!(formats(Some(bad.clone())).is_err(), "{bad:?}");
        }
        let ok = lacks(BTreeMap::from([(
            "nested-scan".to_owned(),
            "scans the root's children only (skills.py:40)".to_owned(),
        )]))
        .unwrap();
        assert_eq!(
            ok.keys().copied().collect::<Vec<_>>(),
            [Mechanism::NestedScan]
        );
        for (word, reason) in [
            ("depth", "x"),
            ("nested-scan", " "),
            ("nested-scan", &"x".repeat(4097)[..]),
        ] {
            let e = lacks(BTreeMap::from([(word.to_owned(), reason.to_owned())])).unwrap_err();
            assert!(e.to_string().contains("`lacks` maps a mechanism"), "{e}");
        }
    }
}
