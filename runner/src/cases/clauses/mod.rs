//! The clause ids, mirrored from the clause indexes of SPEC.md (their source; SPEC.md explains
//! each): the `portable-skills` dialect's and its profiles' here ([`CLAUSES`]), each other
//! dialect's in a module of its own ([`agentskills`]), and which dialect each table belongs to
//! ([`TABLES`]). Cases may only cite ids listed here, all of one dialect, and a case citing a
//! clause that belongs to an optional feature must require that feature.

pub mod agentskills;

use crate::protocol::dialects::{self, Dialect};
use crate::protocol::features::Feature;

pub use crate::protocol::SPEC_TOOLS;

/// The tools of the core profile (the first of [`SPEC_TOOLS`]).
pub const CORE_TOOLS: &[&str] = &["skill_read_reference", "skill_run_script"];

/// How binding a clause is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Must,
    Should,
    May,
}

/// One requirement clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clause {
    pub id: &'static str,
    pub level: Level,
    /// The optional feature an implementation must declare for cases of this clause to apply.
    pub feature: Option<Feature>,
}

/// Every clause id, in the order of the requirements document.
pub const CLAUSES: &[Clause] = &[
    Clause {
        id: "enable.unset",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "enable.tools-appear",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "enable.scripts-deny-default",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.portable",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.portable.non-string",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.portable.extra-keys",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.portable.body",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.legacy",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.legacy.yaml",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.legacy.fallback",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.id",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.duplicate",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.malformed",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.order",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.symlink.dir",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.symlink.skill-md",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.symlink.skill-yml",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.depth",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.size",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "discovery.no-permissions",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "tools.registration",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "tools.pipeline",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "tools.no-registry-cache",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "tools.turn-reuse",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.scope",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.no-approval",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.path.relative",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.path.segments",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.path.backslash",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.path.colon",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.path.control",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.realpath",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.regular-file",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.extension",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.size",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.utf8",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.errors",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "read.args",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.input.fields",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.input.args",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.path",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.trading",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.replay",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.approval",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.exec",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.isolation",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.env",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.timeout",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.output-cap",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.process-group",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.platform",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.success",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.failure",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.not-approved",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.spawn",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.errors",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "run.order",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "policy.format",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "policy.malformed",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "policy.duplicate",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "policy.edited",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "policy.only-source",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "prompt.section",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "prompt.instructions",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "prompt.filtered",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "prompt.unchanged",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "selection.format",
        level: Level::Must,
        feature: Some(Feature::Selection),
    },
    Clause {
        id: "selection.gating",
        level: Level::Must,
        feature: Some(Feature::Selection),
    },
    Clause {
        id: "selection.score.keywords",
        level: Level::Must,
        feature: Some(Feature::Selection),
    },
    Clause {
        id: "selection.score.patterns",
        level: Level::Must,
        feature: Some(Feature::Selection),
    },
    Clause {
        id: "selection.score.tags",
        level: Level::Must,
        feature: Some(Feature::Selection),
    },
    Clause {
        id: "selection.score.exclude",
        level: Level::Must,
        feature: Some(Feature::Selection),
    },
    Clause {
        id: "selection.order",
        level: Level::Must,
        feature: Some(Feature::Selection),
    },
    Clause {
        id: "selection.budget",
        level: Level::Must,
        feature: Some(Feature::Selection),
    },
    Clause {
        id: "trust.levels",
        level: Level::Must,
        feature: Some(Feature::Trust),
    },
    Clause {
        id: "trust.attenuation",
        level: Level::Must,
        feature: Some(Feature::Trust),
    },
    Clause {
        id: "skills.lifecycle",
        level: Level::Should,
        feature: Some(Feature::Trust),
    },
    Clause {
        id: "hitl.zero-trace",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.default-off",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.confirm",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.fence",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.python-only",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.timeout",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.truncate",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.result",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.read-file",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
    Clause {
        id: "hitl.levels",
        level: Level::Must,
        feature: Some(Feature::Hitl),
    },
];

/// Each dialect's clause table: the data that makes a dialect (with its cases).
pub const TABLES: &[(&str, &[Clause])] = &[
    ("portable-skills", CLAUSES),
    ("agentskills", agentskills::CLAUSES),
];

/// Every clause of every dialect, with its dialect.
pub fn all() -> impl Iterator<Item = (&'static Dialect, &'static Clause)> {
    TABLES.iter().flat_map(|(name, table)| {
        let d = dialects::lookup(name);
        table.iter().filter_map(move |c| d.map(|d| (d, c)))
    })
}

/// Looks a clause up by id, in every dialect.
pub fn lookup(id: &str) -> Option<&'static Clause> {
    all().find(|(_, c)| c.id == id).map(|(_, c)| c)
}

/// The dialect a clause belongs to.
pub fn dialect_of(id: &str) -> Option<&'static Dialect> {
    all().find(|(_, c)| c.id == id).map(|(d, _)| d)
}

/// The clauses whose refusals have no security purpose (SPEC.md, "How verdicts are judged":
/// permissive is only for a refusal with one): reuse within a turn, a fresh registry, which
/// tools a root that loads nothing offers, the prompt's wording and layout, the order of what
/// loads or is selected, scores and budgets. A clause id matches an entry equal to it or below it.
pub const WITHOUT_SECURITY_PURPOSE: &[&str] = &[
    "tools.turn-reuse",
    "tools.no-registry-cache",
    "tools.registration",
    "tools.pipeline",
    "prompt",
    "discovery.order",
    "selection.order",
    "selection.score",
    "selection.budget",
    // Dialect `agentskills`: the standard states no security purpose for any of its rules (SPEC.md,
    // "Dialect `agentskills`", threat model); accepting what it refuses is a different answer.
    "agentskills",
];

/// The clause areas whose exposures the hardening threat model covers (SPEC.md, "Hardening"):
/// what an untrusted skill's files make a runtime load, show, read or run. Not `enable` and
/// `tools`: their exposures come from the operator's settings (the feature's switch, the tool
/// allowlist), whose meaning is each dialect's own; not the profiles, which a runtime declares.
pub const HARDENING_AREAS: &[&str] = &["discovery", "read", "run", "policy", "prompt"];

/// Whether a case citing `id` may be a hardening case.
pub fn in_hardening_area(id: &str) -> bool {
    HARDENING_AREAS
        .iter()
        .any(|a| id.split('.').next() == Some(*a))
}

/// Whether a refusal the clause requires guards a boundary (a path, a scope, an extension,
/// arguments, the discovery gates, approval, the feature's switch): accepting what it refuses is
/// then permissive, else only different.
pub fn has_security_purpose(id: &str) -> bool {
    !WITHOUT_SECURITY_PURPOSE
        .iter()
        .any(|p| id == *p || (id.starts_with(p) && id.as_bytes().get(p.len()) == Some(&b'.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn security_purpose_is_decided_by_clause() {
        for id in [
            "read.path.segments",
            "discovery.size",
            "policy.edited",
            "enable.unset",
            "run.approval",
        ] {
            assert!(has_security_purpose(id), "{id}");
        }
        for id in [
            "tools.turn-reuse",
            "prompt.section",
            "discovery.order",
            "selection.score.tags",
        ] {
            assert!(!has_security_purpose(id), "{id}");
        }
        // Every entry names clauses that exist, in any dialect.
        for p in WITHOUT_SECURITY_PURPOSE {
            assert!(
                all().any(|(_, c)| c.id == *p || c.id.starts_with(&format!("{p}."))),
                "{p}"
            );
        }
        assert!(!has_security_purpose("agentskills.name.charset"));
    }

    fn spec() -> String {
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md")).unwrap()
    }

    /// The rows (id, level, feature) of the clause index table that follows `heading` in SPEC.md,
    /// up to the next heading.
    fn index_rows(spec: &str, heading: &str) -> Vec<(String, String, String)> {
        let index = spec
            .split(&format!("\n{heading}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("SPEC.md has no `{heading}`"));
        index
            .lines()
            .take_while(|l| !l.starts_with('#'))
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| {
                let cells: Vec<&str> = l.trim_end_matches(" |").split(" | ").collect();
                match cells.as_slice() {
                    [id, level, feature] => Some((
                        id.trim_end_matches('`').to_owned(),
                        level.to_string(),
                        feature.to_string(),
                    )),
                    _ => None,
                }
            })
            .collect()
    }

    fn table_rows(table: &[Clause]) -> Vec<(String, String, String)> {
        table
            .iter()
            .map(|c| {
                (
                    c.id.to_owned(),
                    match c.level {
                        Level::Must => "MUST",
                        Level::Should => "SHOULD",
                        Level::May => "MAY",
                    }
                    .to_owned(),
                    c.feature.map_or("—".to_owned(), |f| f.as_str().to_owned()),
                )
            })
            .collect()
    }

    /// SPEC.md's clause indexes are the source of the ids: each dialect's table mirrors its index
    /// exactly (ids, order, levels, features).
    #[test]
    fn clauses_mirror_the_spec_index() {
        let spec = spec();
        assert_eq!(index_rows(&spec, "## Clause index"), table_rows(CLAUSES));
        assert_eq!(
            index_rows(&spec, "### Clause index of dialect `agentskills`"),
            table_rows(agentskills::CLAUSES)
        );
        // Every table is a dialect of the protocol's list, and no id is in two tables.
        for (name, _) in TABLES {
            assert!(dialects::lookup(name).is_some(), "{name}");
        }
        let mut ids: Vec<&str> = all().map(|(_, c)| c.id).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }

    /// Every MUST clause of dialect `agentskills` is cited by at least two cases.
    #[test]
    fn every_agentskills_must_clause_has_two_cases() {
        let (count, thin) = thinly_cited_in(agentskills::CLAUSES, |c| c.level == Level::Must);
        assert_eq!(count, 15);
        assert!(
            thin.is_empty(),
            "MUST clauses with fewer than two cases: {thin:?}"
        );
    }

    /// A case may only cite a clause that SPEC.md explains in a section of its own.
    #[test]
    fn every_cited_clause_is_specified() {
        let spec = spec();
        let suite = crate::cases::load_dir(&crate::default_cases_dir()).unwrap();
        let unexplained: Vec<(&str, &str)> = suite
            .cases
            .iter()
            .flat_map(|c| c.clauses.iter().map(move |k| (c.id.as_str(), k.as_str())))
            .filter(|(_, k)| {
                !spec.contains(&format!("### `{k}`")) && !spec.contains(&format!("#### `{k}`"))
            })
            .collect();
        assert!(
            unexplained.is_empty(),
            "cases cite clauses SPEC.md has no section for: {unexplained:?}"
        );
    }

    /// Every clause of the core profile is explained in SPEC.md under its own heading.
    #[test]
    fn spec_explains_every_core_clause() {
        let spec = spec();
        let missing: Vec<&str> = CLAUSES
            .iter()
            .filter(|c| {
                matches!(
                    c.id.split('.').next(),
                    Some("enable" | "discovery" | "tools" | "read" | "run" | "policy" | "prompt")
                )
            })
            .filter(|c| !spec.contains(&format!("### `{}`", c.id)))
            .map(|c| c.id)
            .collect();
        assert!(missing.is_empty(), "SPEC.md has no section for {missing:?}");
    }

    /// Seed 000 makes nothing of the core profile optional (SPEC.md "Optional features"): no core
    /// clause belongs to a feature, so a runtime lacking one of them fails its cases instead of
    /// being reported UNSUPPORTED. Only the other seeds' profiles are features.
    #[test]
    fn core_clauses_belong_to_no_feature() {
        let core = |c: &&Clause| {
            matches!(
                c.id.split('.').next(),
                Some("enable" | "discovery" | "tools" | "read" | "run" | "policy" | "prompt")
            )
        };
        let optional: Vec<&str> = CLAUSES
            .iter()
            .filter(core)
            .filter(|c| c.feature.is_some() || c.level != Level::Must)
            .map(|c| c.id)
            .collect();
        assert!(optional.is_empty(), "optional core clauses: {optional:?}");
        assert!(CLAUSES
            .iter()
            .filter(|c| !core(c))
            .all(|c| c.feature.is_some()));
    }

    /// How many clauses `select` picks, and those of them that fewer than two cases of the
    /// repository suite cite (with their counts).
    fn thinly_cited(select: impl Fn(&Clause) -> bool) -> (usize, Vec<(&'static str, usize)>) {
        thinly_cited_in(CLAUSES, select)
    }

    /// [`thinly_cited`] over the clauses of `table`.
    fn thinly_cited_in(
        table: &'static [Clause],
        select: impl Fn(&Clause) -> bool,
    ) -> (usize, Vec<(&'static str, usize)>) {
        let suite = crate::cases::load_dir(&crate::default_cases_dir()).unwrap();
        let picked: Vec<&Clause> = table.iter().filter(|c| select(c)).collect();
        let thin = picked
            .iter()
            .map(|c| {
                let n = suite
                    .cases
                    .iter()
                    .filter(|k| k.clauses.iter().any(|x| x == c.id))
                    .count();
                (c.id, n)
            })
            .filter(|(_, n)| *n < 2)
            .collect();
        (picked.len(), thin)
    }

    /// Every clause of the `selection` and `trust` profile is cited by at least two cases.
    #[test]
    fn every_selection_and_trust_clause_has_two_cases() {
        let (count, thin) =
            thinly_cited(|c| matches!(c.feature, Some(Feature::Selection | Feature::Trust)));
        assert_eq!(count, 11);
        assert!(
            thin.is_empty(),
            "profile clauses with fewer than two cases: {thin:?}"
        );
    }

    /// Every clause of the `hitl` profile is cited by at least two cases.
    #[test]
    fn every_hitl_clause_has_two_cases() {
        let (count, thin) = thinly_cited(|c| c.feature == Some(Feature::Hitl));
        assert_eq!(count, 10);
        assert!(
            thin.is_empty(),
            "hitl clauses with fewer than two cases: {thin:?}"
        );
    }

    /// Every clause of the core profile is cited by at least two cases of the repository suite.
    #[test]
    fn every_core_clause_has_two_cases() {
        let suite = crate::cases::load_dir(&crate::default_cases_dir()).unwrap();
        let thin: Vec<(&str, usize)> = CLAUSES
            .iter()
            .filter(|c| {
                matches!(
                    c.id.split('.').next(),
                    Some("enable" | "discovery" | "tools" | "read" | "run" | "policy" | "prompt")
                )
            })
            .map(|c| {
                (
                    c.id,
                    suite
                        .cases
                        .iter()
                        .filter(|k| k.clauses.iter().any(|x| x == c.id))
                        .count(),
                )
            })
            .filter(|(_, n)| *n < 2)
            .collect();
        assert!(
            thin.is_empty(),
            "clauses with fewer than two cases: {thin:?}"
        );
    }
}
