//! The clauses of dialect `agentskills` (SPEC.md, "Dialect `agentskills`"), mirrored from that
//! part's clause index (a test keeps the two equal). None belongs to an optional feature: the
//! dialect's own modes (`strict`, `lenient`) are declared with the dialect, and a case written
//! for one mode says so (`mode:`).

use super::{Clause, Level};

/// Every clause of the dialect, in the order of its clause index.
pub const CLAUSES: &[Clause] = &[
    Clause {
        id: "agentskills.skill.skill-md",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.skill.frontmatter",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.name.required",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.name.length",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.name.charset",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.name.hyphen-edges",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.name.no-double-hyphen",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.name.matches-directory",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.description.required",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.description.length",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.description.content",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.license.text",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.compatibility.length",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.compatibility.when-needed",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.metadata.string-map",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.metadata.key-names",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.allowed-tools.string",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.fields.unknown",
        level: Level::May,
        feature: None,
    },
    Clause {
        id: "agentskills.body.free",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.body.size",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.files.any",
        level: Level::Must,
        feature: None,
    },
    Clause {
        id: "agentskills.references.relative",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.disclosure.catalog",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.disclosure.body-on-activation",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.disclosure.resources-on-demand",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.discovery.skill-md-exact",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.discovery.skip-dirs",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.discovery.gitignore",
        level: Level::May,
        feature: None,
    },
    Clause {
        id: "agentskills.discovery.bounds",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.discovery.scopes",
        level: Level::May,
        feature: None,
    },
    Clause {
        id: "agentskills.collision.project-over-user",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.collision.deterministic",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.collision.warning",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.trust.project-gate",
        level: Level::May,
        feature: None,
    },
    Clause {
        id: "agentskills.parse.delimiters",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.parse.fields",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.parse.body-trimmed",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.parse.colon-fallback",
        level: Level::May,
        feature: None,
    },
    Clause {
        id: "agentskills.lenient.name-mismatch",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.lenient.name-length",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.lenient.description-missing",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.lenient.unparseable",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.lenient.others-unaffected",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.record.location",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.catalog.fields",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.catalog.instructions",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.catalog.filtered-hidden",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.catalog.empty-omitted",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.activation.content",
        level: Level::May,
        feature: None,
    },
    Clause {
        id: "agentskills.activation.resources-listed",
        level: Level::May,
        feature: None,
    },
    Clause {
        id: "agentskills.activation.unknown-name",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.activation.user-explicit",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.activation.wrapping",
        level: Level::May,
        feature: None,
    },
    Clause {
        id: "agentskills.permissions.allowlist",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.context.protect",
        level: Level::Should,
        feature: None,
    },
    Clause {
        id: "agentskills.context.dedupe",
        level: Level::May,
        feature: None,
    },
];
