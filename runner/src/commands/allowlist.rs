//! `skillspec allowlist ROOT [SKILL[/SCRIPT]...]`: the value of
//! `SPORTSCLAW_SKILL_SCRIPT_ALLOWLIST` (SPEC.md `policy.format`: a JSON array of objects with
//! exactly `skill`, `script` and `sha256`) approving the helpers of the skills the reference
//! loads from ROOT that `skill_run_script` would accept: its path rules, no symlink anywhere, at
//! most 1 MiB (SPEC.md `run.path`, `run.approval`). The hash is of exactly the bytes the runtime
//! would read and hash: both come from the reference ([`crate::check_tree::helpers`], built on
//! `run_script::helper_sha256`), not from a second copy of the rules.
//!
//! Without arguments every such helper of every loaded skill is approved (the ones that cannot
//! run are named on stderr). `SKILL` approves that skill's helpers, `SKILL/SCRIPT` one helper
//! (`espn-api/scripts/espn_fetch.py`). An argument that names no loaded skill or no helper that
//! could run is an error naming it (exit 2, nothing printed on stdout); a root that cannot be
//! opened likewise.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;

use super::{emit, usage_error};
use crate::check_tree::{examine, Helper};
use crate::reports::one_line;

/// One approval: skill id, script path, hash.
type Entry = (String, String, String);

pub fn allowlist(root: &Path, wanted: &[String]) -> ExitCode {
    let (_root_fd, x) = match examine(root) {
        Ok(v) => v,
        Err(e) => return usage_error(e),
    };
    let skills: Vec<(&str, &[Helper])> = (x.discovery.loaded.iter())
        .zip(&x.helpers)
        .map(|(g, (h, _))| (g.id.as_str(), h.as_slice()))
        .collect();
    let mut entries: Vec<Entry> = Vec::new();
    let mut errors = Vec::new();
    if wanted.is_empty() {
        for (id, helpers) in &skills {
            for h in *helpers {
                match &h.sha256 {
                    Ok(sha) => entries.push((id.to_string(), h.script.clone(), sha.clone())),
                    Err(why) => eprintln!(
                        "skillspec: not approved, cannot run: {} of {}: {}",
                        one_line(&h.script),
                        one_line(id),
                        one_line(why)
                    ),
                }
            }
        }
    }
    for arg in wanted {
        match select(&skills, &x, arg) {
            Ok(found) => {
                for e in found {
                    if !entries.contains(&e) {
                        entries.push(e);
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        for e in &errors[..errors.len() - 1] {
            eprintln!("skillspec: {e}");
        }
        return usage_error(&errors[errors.len() - 1]);
    }
    let value: Vec<_> = entries
        .iter()
        .map(|(skill, script, sha256)| json!({"skill": skill, "script": script, "sha256": sha256}))
        .collect();
    emit(&format!(
        "{}\n",
        escape_invisible(&serde_json::Value::from(value).to_string())
    ))
}

/// `json` (a serialized JSON value) with every character that shows as nothing or reorders the
/// text around it (bidirectional controls and marks, zero-width characters, the byte order mark)
/// written as a JSON `\uXXXX` escape: an operator reviews the printed allowlist and pastes it, and
/// a helper named with a right-to-left override must not read as another name. Such characters
/// can only stand inside JSON strings, where the escape means the same character.
fn escape_invisible(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if crate::input::invisible(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The approvals one argument names, or why it names none.
fn select(
    skills: &[(&str, &[Helper])],
    x: &crate::check_tree::Examined,
    arg: &str,
) -> Result<Vec<Entry>, String> {
    let (skill, script) = match arg.split_once('/') {
        Some((s, p)) => (s, Some(p)),
        None => (arg, None),
    };
    let shown = one_line(arg);
    let Some((id, helpers)) = skills.iter().find(|(id, _)| *id == skill) else {
        let why = x
            .discovery
            .skipped
            .iter()
            .find(|s| s.path.rsplit('/').next() == Some(skill))
            .map(|s| {
                format!(
                    " (a directory of that name was skipped: {}: {})",
                    s.reason.as_str(),
                    one_line(&s.detail)
                )
            })
            .unwrap_or_default();
        return Err(format!(
            "`{shown}`: no loaded skill has the id `{}`{why}",
            one_line(skill)
        ));
    };
    let pick = |h: &Helper| -> Result<Entry, String> {
        h.sha256
            .clone()
            .map(|sha| (id.to_string(), h.script.clone(), sha))
            .map_err(|why| {
                format!(
                    "`{shown}` cannot run, so it cannot be approved: {}",
                    one_line(&why)
                )
            })
    };
    match script {
        None => {
            let ok: Vec<Entry> = helpers.iter().filter_map(|h| pick(h).ok()).collect();
            if ok.is_empty() {
                return Err(format!(
                    "`{shown}`: the skill has no helper that could run (scripts/**.py)"
                ));
            }
            Ok(ok)
        }
        Some(script) => match helpers.iter().find(|h| h.script == script) {
            Some(h) => pick(h).map(|e| vec![e]),
            None => {
                let near = helpers
                    .iter()
                    .find(|h| h.script.rsplit('/').next() == script.rsplit('/').next())
                    .map(|h| format!("; did you mean {}/{}?", one_line(id), one_line(&h.script)))
                    .unwrap_or_default();
                Err(format!(
                    "`{shown}`: skill `{}` has no helper `{}` (a helper is named by its path in the skill, scripts/...py){near}",
                    one_line(id),
                    one_line(script)
                ))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn invisible_characters_are_escaped_and_mean_the_same() {
        let value = serde_json::json!([{"script": "scripts/a\u{202e}yp.py"}]);
        let text = super::escape_invisible(&value.to_string());
        assert!(text.contains("\\u202e"), "{text}");
        assert!(!text.contains('\u{202e}'));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }
}
