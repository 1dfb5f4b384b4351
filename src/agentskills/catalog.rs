//! What the model sees of dialect `agentskills` (SPEC.md "The record and the catalog",
//! "Disclosure", "Activation"): the prompt section with its instructions and the catalog of
//! names, descriptions and locations ([`prompt`]), the activation tool it is offered
//! ([`offered_tools`]), and the content an activation returns ([`activate`]): the body, the
//! skill's directory and the names of its other files, never their content.
//!
//! Clauses: `agentskills.catalog.*`, `agentskills.disclosure.*`, `agentskills.activation.*`.

use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{steps, ActivateError, Catalog, Skill};
use super::{MAX_LISTED_RESOURCES, MAX_SCAN_DEPTH, MAX_SCAN_DIRS};
use crate::safe_fs::{self, EntryKind, Use};

/// The name of the activation tool.
pub const ACTIVATE_TOOL: &str = "activate_skill";

/// The prompt section's heading and instructions, before the catalog.
pub(super) const INSTRUCTIONS: &str = "## Skills\n\
\n\
The following skills provide specialized instructions for specific tasks.\n\
When a task matches a skill's description, call the activate_skill tool with the skill's name \
to load its full instructions.\n\
When a skill references relative paths, resolve them against the skill's directory (the parent \
of its SKILL.md).\n\
\n";

/// The Skills section of the system prompt: "" when no skill loaded.
// spec: agentskills.catalog.empty-omitted
pub fn prompt(catalog: &Catalog) -> String {
    if catalog.skills.is_empty() {
        return (steps().empty_prompt)();
    }
    // spec: agentskills.catalog.instructions
    let mut out = String::from(INSTRUCTIONS);
    out.push_str("<available_skills>\n");
    let entry = steps().catalog_entry;
    for skill in &catalog.skills {
        entry(skill, &mut out);
    }
    out.push_str("</available_skills>\n");
    out
}

/// One skill in the catalog: its name, description and location, escaped.
// spec: agentskills.catalog.fields
// spec: agentskills.disclosure.catalog (never the body)
pub(super) fn entry(skill: &Skill, out: &mut String) {
    out.push_str("  <skill>\n");
    out.push_str(&format!("    <name>{}</name>\n", escape(&skill.name)));
    let description = escape(&skill.description);
    out.push_str(&format!("    <description>{description}</description>\n"));
    let location = escape(&lossy(&skill.location));
    out.push_str(&format!("    <location>{location}</location>\n"));
    out.push_str("  </skill>\n");
}

/// The tools the model is offered: the activation tool, only when a skill loaded.
// spec: agentskills.catalog.empty-omitted
pub fn offered_tools(catalog: &Catalog) -> Vec<&'static str> {
    if catalog.skills.is_empty() {
        Vec::new()
    } else {
        vec![ACTIVATE_TOOL]
    }
}

/// The content the model receives when it activates the skill named exactly `name`: the body,
/// the skill's directory, and the names of its other files (listed now, never read).
// spec: agentskills.activation.unknown-name
// spec: agentskills.disclosure.body-on-activation
// spec: agentskills.activation.content (the body, without the frontmatter)
pub fn activate(catalog: &Catalog, name: &str) -> Result<String, ActivateError> {
    let skill = catalog
        .skills
        .iter()
        .find(|s| s.name == name)
        .ok_or(ActivateError::UnknownSkill)?;
    let mut out = format!(
        "<skill_content name=\"{}\">\n{}\n\nSkill directory: {}\n\
         Relative paths in this skill are relative to the skill directory.\n",
        escape(&skill.name),
        skill.body,
        escape(&lossy(&skill.directory)),
    );
    // The directory is opened by the path discovery recorded (its scope root as configured);
    // nothing below it is followed.
    if let Ok(dir) = safe_fs::open_root(&skill.directory) {
        let listing = list_resources(dir.as_fd());
        out.push_str(&(steps().resources)(dir.as_fd(), &listing));
    }
    out.push_str("</skill_content>\n");
    Ok(out)
}

/// A skill's other files: the first [`MAX_LISTED_RESOURCES`] relative paths (`/`-separated) in
/// byte order, and whether there were more.
pub(super) struct Listing {
    pub files: Vec<Vec<u8>>,
    pub capped: bool,
}

/// Lists every regular file below the skill directory `dir` but its `SKILL.md`, down to
/// [`MAX_SCAN_DEPTH`] levels and through at most [`MAX_SCAN_DIRS`] directories, never following
/// a link and opening no file.
// spec: agentskills.activation.resources-listed
fn list_resources(dir: BorrowedFd<'_>) -> Listing {
    let mut files = Files {
        smallest: BinaryHeap::new(),
        total: 0,
        dirs: 0,
    };
    files.walk(dir, &mut Vec::new(), 1);
    Listing {
        capped: files.total > MAX_LISTED_RESOURCES,
        files: files.smallest.into_sorted_vec(),
    }
}

/// What the listing keeps while it walks.
struct Files {
    /// The smallest paths so far (at most [`MAX_LISTED_RESOURCES`]): the largest is dropped.
    smallest: BinaryHeap<Vec<u8>>,
    total: usize,
    dirs: usize,
}

impl Files {
    /// Lists `dir`, whose entries lie at `depth` (the skill directory's at 1), below `prefix`.
    fn walk(&mut self, dir: BorrowedFd<'_>, prefix: &mut Vec<u8>, depth: usize) {
        let access = safe_fs::access(Use::Scan);
        let Ok(entries) = (access.list_dir)(dir) else {
            return;
        };
        let is_skill_md = steps().is_skill_md;
        for (name, kind) in entries {
            let mark = prefix.len();
            if mark > 0 {
                prefix.push(b'/');
            }
            prefix.extend_from_slice(&name);
            match kind {
                EntryKind::Regular if !(depth == 1 && is_skill_md(&name)) => {
                    self.total += 1;
                    self.smallest.push(prefix.clone());
                    if self.smallest.len() > MAX_LISTED_RESOURCES {
                        self.smallest.pop();
                    }
                }
                EntryKind::Directory if depth < MAX_SCAN_DEPTH && self.dirs < MAX_SCAN_DIRS => {
                    self.dirs += 1;
                    if let Ok(sub) = (access.open_dir)(dir, OsStr::from_bytes(&name)) {
                        self.walk(sub.as_fd(), prefix, depth + 1);
                    }
                }
                _ => {}
            }
            prefix.truncate(mark);
        }
    }
}

/// The `<skill_resources>` block of the activation content ("" when the skill has no other
/// file): names only, no file is opened.
// spec: agentskills.disclosure.resources-on-demand
pub(super) fn resources_block(_dir: BorrowedFd<'_>, listing: &Listing) -> String {
    if listing.files.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n<skill_resources>\n");
    for file in &listing.files {
        let file = escape(&String::from_utf8_lossy(file));
        out.push_str(&format!("  <file>{file}</file>\n"));
    }
    if listing.capped {
        let cap = MAX_LISTED_RESOURCES;
        out.push_str(&format!("  <!-- listing capped at {cap} files -->\n"));
    }
    out.push_str("</skill_resources>\n");
    out
}

/// `s` with `&`, `<`, `>`, `"` and `'` written as XML entities.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A path as text (bytes that are not UTF-8 replaced).
fn lossy(path: &Path) -> String {
    String::from_utf8_lossy(path.as_os_str().as_bytes()).into_owned()
}
