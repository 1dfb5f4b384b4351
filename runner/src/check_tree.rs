//! `skillspec check-tree ROOT`: what the reference loads from a real skills root, why everything
//! else was skipped, and warnings an operator should act on although they change nothing in what
//! loads: files of a loaded skill that are hard links (their bytes have another name, possibly
//! outside the skill, that someone else may be able to change). Every name from the tree is
//! printed through [`one_line`]: a directory named with a line break cannot forge a line.

use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::reports::one_line;
use skillspec_reference::{discover, Discovery, GuideFormat};

/// How deep and how many entries the hard-link scan of one skill looks at.
const SCAN_DEPTH: usize = 8;
const SCAN_ENTRIES: usize = 10_000;

/// A regular file of a loaded skill with more than one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HardLink {
    /// Relative to the root.
    pub path: String,
    pub links: u64,
}

/// The hard-linked regular files below each loaded skill directory (never following symlinks).
pub fn hard_links(root: &Path, discovery: &Discovery) -> Vec<HardLink> {
    let mut out = Vec::new();
    for g in &discovery.loaded {
        let mut seen = 0usize;
        scan(root, &PathBuf::from(&g.path), 0, &mut seen, &mut out);
    }
    out
}

fn scan(root: &Path, rel: &Path, depth: usize, seen: &mut usize, out: &mut Vec<HardLink>) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        *seen += 1;
        if *seen > SCAN_ENTRIES {
            return;
        }
        let child = rel.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(root.join(&child)) else {
            continue;
        };
        if meta.is_file() && meta.nlink() > 1 {
            out.push(HardLink {
                path: child.display().to_string(),
                links: meta.nlink(),
            });
        } else if meta.is_dir() && depth < SCAN_DEPTH {
            scan(root, &child, depth + 1, seen, out);
        }
    }
}

/// The text (or JSON) `check-tree` prints; an error when the root cannot be opened.
pub fn render(root: &Path, as_json: bool) -> Result<String, String> {
    let d = discover(root).map_err(|e| e.to_string())?;
    let links = hard_links(root, &d);
    let mut out = String::new();
    if as_json {
        let value = json!({
            "loaded": d.loaded.iter().map(|g| json!({
                "id": g.id, "path": g.path, "format": g.format, "name": g.name, "description": g.description,
            })).collect::<Vec<_>>(),
            "skipped": d.skipped.iter().map(|s| json!({"path": s.path, "reason": s.reason.as_str()})).collect::<Vec<_>>(),
            "warnings": links.iter().map(|l| json!({"path": l.path, "warning": "hard_link", "links": l.links})).collect::<Vec<_>>(),
        });
        let _ = writeln!(out, "{value}");
        return Ok(out);
    }
    let _ = writeln!(
        out,
        "loaded {} guide(s) from {}:",
        d.loaded.len(),
        one_line(&root.display().to_string())
    );
    for g in &d.loaded {
        let format = match g.format {
            GuideFormat::Legacy => "legacy",
            GuideFormat::Portable => "portable",
        };
        let _ = writeln!(
            out,
            "  {:<24} {:<9} {}  ({})",
            one_line(&g.id),
            format,
            one_line(&g.name),
            one_line(&g.path)
        );
    }
    if !d.skipped.is_empty() {
        let _ = writeln!(out, "skipped {}:", d.skipped.len());
        for s in &d.skipped {
            let _ = writeln!(
                out,
                "  {:<40} {:<12} {}",
                one_line(&s.path),
                s.reason.as_str(),
                one_line(&s.detail)
            );
        }
    }
    if !links.is_empty() {
        let _ = writeln!(
            out,
            "warnings: {} file(s) of loaded skills are hard links (the same bytes have another name, maybe outside the skill, and change with it):",
            links.len()
        );
        for l in &links {
            let _ = writeln!(out, "  {:<40} {} links", one_line(&l.path), l.links);
        }
    }
    Ok(out)
}
