//! The deliberate defects of dialect `agentskills` (see `crate::mutants`), only with the cargo
//! feature `mutants`: each a [`Steps`] table with one step replaced by its defective twin,
//! chosen once per process by [`steps`]. The production code never asks which mutant is active.

use std::os::fd::BorrowedFd;

use super::catalog::{self, Listing};
use super::validate;
use super::*;
use crate::frontmatter::{FrontmatterError, Split};
use crate::mutants::{chosen, Mutant};
use crate::yaml::Tree;
use std::os::unix::ffi::OsStrExt;

pub(super) fn steps() -> &'static Steps {
    match chosen() {
        Some(Mutant::AsNameUppercaseAllowed) => &UPPERCASE_ALLOWED,
        Some(Mutant::AsNameLengthExclusive) => &NAME_LENGTH_EXCLUSIVE,
        Some(Mutant::AsNameEdgeHyphenAllowed) => &EDGE_HYPHEN_ALLOWED,
        Some(Mutant::AsNameDoubleHyphenAllowed) => &DOUBLE_HYPHEN_ALLOWED,
        Some(Mutant::AsNameDirCaseInsensitive) => &DIR_CASE_INSENSITIVE,
        Some(Mutant::AsDescriptionWhitespaceAccepted) => &WHITESPACE_DESCRIPTION,
        Some(Mutant::AsDescription1025Accepted) => &DESCRIPTION_1025,
        Some(Mutant::AsCompatibilityEmptyAccepted) => &EMPTY_COMPATIBILITY,
        Some(Mutant::AsMetadataNumberAccepted) => &METADATA_NUMBER,
        Some(Mutant::AsAllowedToolsListAccepted) => &ALLOWED_TOOLS_LIST,
        Some(Mutant::AsDashesMidLineClose) => &DASHES_MID_LINE,
        Some(Mutant::AsUserShadowsProject) => &USER_FIRST,
        Some(Mutant::AsEmptyCatalogShown) => &EMPTY_CATALOG,
        Some(Mutant::AsBodyInCatalog) => &BODY_IN_CATALOG,
        Some(Mutant::AsResourcesInlined) => &RESOURCES_INLINED,
        Some(Mutant::AsLenientSkipsMismatch) => &LENIENT_SKIPS_MISMATCH,
        Some(Mutant::AsNodeModulesScanned) => &NODE_MODULES_SCANNED,
        Some(Mutant::AsLowercaseSkillMd) => &LOWERCASE_SKILL_MD,
        _ => &STEPS,
    }
}

const UPPERCASE_ALLOWED: Steps = Steps {
    name_char: |c| validate::name_char(c) || c.is_ascii_uppercase(),
    ..STEPS
};
const NAME_LENGTH_EXCLUSIVE: Steps = Steps {
    name_length: |n| (1..64).contains(&n),
    ..STEPS
};
const EDGE_HYPHEN_ALLOWED: Steps = Steps {
    hyphen_edge: |_| false,
    ..STEPS
};
const DOUBLE_HYPHEN_ALLOWED: Steps = Steps {
    double_hyphen: |_| false,
    ..STEPS
};
const DIR_CASE_INSENSITIVE: Steps = Steps {
    matches_directory: |name, dir| name.eq_ignore_ascii_case(dir),
    ..STEPS
};
const WHITESPACE_DESCRIPTION: Steps = Steps {
    blank_description: str::is_empty,
    ..STEPS
};
const DESCRIPTION_1025: Steps = Steps {
    description_length: |n| n <= 1025,
    ..STEPS
};
const EMPTY_COMPATIBILITY: Steps = Steps {
    compatibility_length: |n| n <= 500,
    ..STEPS
};
const METADATA_NUMBER: Steps = Steps {
    metadata_value: |t| matches!(t, Tree::Scalar { .. }),
    ..STEPS
};
const ALLOWED_TOOLS_LIST: Steps = Steps {
    allowed_tools: |t| validate::is_string(t) || matches!(t, Tree::Sequence(_)),
    ..STEPS
};
const DASHES_MID_LINE: Steps = Steps {
    split: split_at_first_dashes,
    ..STEPS
};
const USER_FIRST: Steps = Steps {
    rank_scopes: |found| found.sort_by_key(|s| s.scope != Scope::User),
    ..STEPS
};
const EMPTY_CATALOG: Steps = Steps {
    empty_prompt: || {
        format!(
            "{}<available_skills>\n</available_skills>\n",
            catalog::INSTRUCTIONS
        )
    },
    ..STEPS
};
const BODY_IN_CATALOG: Steps = Steps {
    catalog_entry: entry_with_body,
    ..STEPS
};
const RESOURCES_INLINED: Steps = Steps {
    resources: resources_with_content,
    ..STEPS
};
const LENIENT_SKIPS_MISMATCH: Steps = Steps {
    lenient_fatal: |clause| {
        scan::lenient_fatal(clause) || clause == "agentskills.name.matches-directory"
    },
    ..STEPS
};
const NODE_MODULES_SCANNED: Steps = Steps {
    skipped_dir: |name| name == b".git",
    ..STEPS
};
const LOWERCASE_SKILL_MD: Steps = Steps {
    is_skill_md: |name| name.eq_ignore_ascii_case(b"SKILL.md"),
    ..STEPS
};

/// `as-dashes-mid-line-close`: after the opening line, the first `---` anywhere closes the
/// frontmatter (skills-ref's `content.split("---", 2)`).
fn split_at_first_dashes(text: &str) -> Result<Split<'_>, FrontmatterError> {
    if let Err(FrontmatterError::Missing) = crate::frontmatter::split(text) {
        return Err(FrontmatterError::Missing);
    }
    let text = crate::frontmatter::strip_bom(text);
    let rest = text.split_once('\n').map_or("", |(_, rest)| rest);
    let (frontmatter, body) = rest
        .split_once("---")
        .ok_or(FrontmatterError::Unterminated)?;
    Ok(Split {
        frontmatter,
        body: body.trim(),
    })
}

/// `as-body-in-catalog`: the catalog entry carries the skill's body.
fn entry_with_body(skill: &Skill, out: &mut String) {
    let mut own = String::new();
    catalog::entry(skill, &mut own);
    let end = own.strip_suffix("  </skill>\n").map_or(own.len(), str::len);
    let body = format!(
        "    <instructions>{}</instructions>\n",
        catalog::escape(&skill.body)
    );
    own.insert_str(end, &body);
    out.push_str(&own);
}

/// `as-resources-inlined`: each listed file's content follows the listing.
fn resources_with_content(dir: BorrowedFd<'_>, listing: &Listing) -> String {
    let mut out = catalog::resources_block(dir, listing);
    for file in &listing.files {
        let components: Vec<&[u8]> = file.split(|b| *b == b'/').collect();
        let Some((leaf, parents)) = components.split_last() else {
            continue;
        };
        let read = crate::safe_fs::open_dir_chain(dir, parents)
            .ok()
            .and_then(|parent| {
                let name = std::ffi::OsStr::from_bytes(leaf);
                crate::safe_fs::read_regular(std::os::fd::AsFd::as_fd(&parent), name, 262_144).ok()
            });
        if let Some(bytes) = read {
            let path = catalog::escape(&String::from_utf8_lossy(file));
            let content = String::from_utf8_lossy(&bytes);
            out.push_str(&format!(
                "<file_content path=\"{path}\">\n{content}\n</file_content>\n"
            ));
        }
    }
    out
}
