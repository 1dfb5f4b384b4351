//! The rule that a refusal guarding a crossing carries what makes the crossing visible (SPEC.md,
//! "How verdicts are judged"; spec-cases/README.md, "Canaries and other observables"): a call
//! that must not run a helper (`skill_run_script` answered with any refusal, for instance
//! `not_approved` for a helper edited after approval) plants a `code-ran` canary or marker in
//! the helper it names; a read that must be refused and whose path leaves the skill (`..`, an
//! absolute path, a link in the tree) plants an `outside-content` canary in what it would reach.
//! Otherwise a runtime that ran the helper, or returned the file, would be judged merely
//! permissive: the difference between permissive and unsafe would be whether the case's author
//! remembered a canary. A case may say why crossing is harmless by nature instead (`harmless:`,
//! for a respelling of the approved helper's own path).

use crate::cases::expect::{OutcomeExpect, EXECUTION_CODES};
use crate::cases::exposure::{Canaries, Exposure};
use crate::cases::fixture::{EntryKind, Tree};
use crate::cases::{Action, SkillsRoot, Step};
use crate::protocol::WireStep;

/// The tools a run refusal is about: the core tool, and profile `hitl`'s.
const RUN_TOOLS: [&str; 2] = ["skill_run_script", "run_skill_script"];
/// The tool a read refusal is about.
const READ_TOOL: &str = "skill_read_reference";

/// The first step (its line and the problem) that refuses a crossing without planting what would
/// show it, unless the case says why the crossing is harmless.
pub fn check(
    trees: &[&Tree],
    root: &SkillsRoot,
    steps: &[Step],
    canaries: &Canaries,
    markers: &[(String, Option<String>)],
    harmless: Option<&str>,
) -> Result<(), (usize, String)> {
    if harmless.is_some_and(|h| !h.trim().is_empty()) {
        return Ok(());
    }
    let SkillsRoot::InCase(root) = root else {
        return Ok(());
    };
    for step in steps {
        let Action::Implementation(WireStep::Call { tool, args }) = &step.action else {
            continue;
        };
        let Some(OutcomeExpect::Call(call)) = &step.expect.outcome else {
            continue;
        };
        let Some(want) = &call.error else { continue };
        let skill = args.get("skill").and_then(|v| v.as_str());
        let (exposure, field) = match tool.as_str() {
            t if RUN_TOOLS.contains(&t) && !EXECUTION_CODES.contains(&want.code.as_str()) => {
                (Exposure::CodeRan, "script")
            }
            READ_TOOL => (Exposure::OutsideContent, "path"),
            _ => continue,
        };
        let (Some(skill), Some(path)) = (skill, args.get(field).and_then(|v| v.as_str())) else {
            continue;
        };
        let base = format!("{}/{skill}", root.trim_end_matches('/'));
        let Some(target) = reach(trees, &base, path) else {
            continue;
        };
        if exposure == Exposure::OutsideContent && target.inside(&base) {
            // A refused path that stays inside the skill: accepting it is permissive by nature.
            continue;
        }
        let shown = |text: &[u8]| {
            canaries
                .iter()
                .any(|(t, e)| e == exposure && text.windows(t.len()).any(|w| w == t.as_bytes()))
                || (exposure == Exposure::CodeRan
                    && markers.iter().any(|(m, written_by)| {
                        // The author said what writes it (a name the helper builds another way).
                        if written_by.as_ref().is_some_and(|r| !r.trim().is_empty()) {
                            return true;
                        }
                        let name = m.rsplit('/').next().unwrap_or(m);
                        let stem = name
                            .split(|c: char| c.is_ascii_digit())
                            .next()
                            .unwrap_or("");
                        [name, stem]
                            .iter()
                            .filter(|n| n.len() >= 3)
                            .any(|n| text.windows(n.len()).any(|w| w == n.as_bytes()))
                    }))
        };
        let ok = match &target.text {
            Some(texts) => texts.iter().any(|t| shown(t)),
            // A copied fixture or an entry without text: a canary of the exposure anywhere in
            // the case, or a marker, must show it.
            None => {
                canaries.iter().any(|(_, e)| e == exposure)
                    || (exposure == Exposure::CodeRan && !markers.is_empty())
            }
        };
        if !ok {
            let what = match exposure {
                Exposure::CodeRan => format!(
                    "the helper `{}` it must not run prints no `code-ran` canary and writes no `files: absent` marker of the case",
                    target.describe()
                ),
                _ => format!(
                    "what the path would reach outside the skill (`{}`) holds no `outside-content` canary of the case",
                    target.describe()
                ),
            };
            return Err((
                step.line,
                format!(
                    "this `{tool}` call must be refused (`{}`), but {what}: a runtime that crossed would be judged merely permissive; plant one, or say why crossing is harmless (`harmless: ...`)",
                    want.code
                ),
            ));
        }
    }
    Ok(())
}

/// What a path of a call reaches in the case's trees, lexically (`..` and `.` resolved, one link
/// of the tree followed per component).
struct Target<'a> {
    path: Vec<u8>,
    /// The texts the case plants there (the tree's, then each `write` step's); `None` when one
    /// of the versions has no text the loader sees (a copied fixture, a hard link).
    text: Option<Vec<&'a [u8]>>,
}

impl Target<'_> {
    fn inside(&self, base: &str) -> bool {
        let base = format!("{base}/");
        self.path.starts_with(base.as_bytes())
    }

    fn describe(&self) -> String {
        String::from_utf8_lossy(&self.path).into_owned()
    }
}

/// Resolves `path` below `base` (both relative to the case root) through the trees' entries;
/// `None` when it reaches nothing the case plants (or leaves the case root: nothing there holds a
/// canary either).
fn reach<'a>(trees: &[&'a Tree], base: &str, path: &str) -> Option<Target<'a>> {
    let start = if path.starts_with('/') { "" } else { base };
    let mut parts: Vec<String> = Vec::new();
    let mut pending: Vec<String> = format!("{start}/{path}")
        .split('/')
        .rev()
        .map(str::to_owned)
        .collect();
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                parts.pop()?;
                continue;
            }
            _ => parts.push(part),
        }
        let here = parts.join("/");
        let entry = trees
            .iter()
            .flat_map(|t| t.entries.iter().rev())
            .find(|e| e.path == here.as_bytes());
        if let Some(EntryKind::Symlink(target)) = entry.map(|e| &e.kind) {
            hops += 1;
            if hops > 16 {
                return None;
            }
            let target = String::from_utf8_lossy(target).into_owned();
            parts.pop();
            if let Some(rest) = target.strip_prefix("{root}") {
                // An absolute link the case controls: from the case root.
                parts.clear();
                pending.extend(rest.split('/').rev().map(str::to_owned));
            } else if target.starts_with('/') {
                // Out of the case: nothing there holds a canary.
                return None;
            } else {
                pending.extend(target.split('/').rev().map(str::to_owned));
            }
        }
    }
    let at = parts.join("/").into_bytes();
    let versions: Vec<&EntryKind> = trees
        .iter()
        .flat_map(|t| t.entries.iter())
        .filter(|e| e.path == at)
        .map(|e| &e.kind)
        .collect();
    let mut texts = Vec::new();
    let mut opaque = false;
    for kind in &versions {
        match kind {
            EntryKind::File(bytes) => texts.push(bytes.as_slice()),
            EntryKind::Copy(_) | EntryKind::Hardlink(_) => opaque = true,
            _ => {}
        }
    }
    if texts.is_empty() && !opaque {
        return None;
    }
    Some(Target {
        path: at,
        text: (!opaque).then_some(texts),
    })
}
