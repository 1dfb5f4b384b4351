//! `skillspec show`: one case rendered as prose for auditors. A case file is text from elsewhere
//! (`--cases DIR`): its control characters are printed as escapes.

use std::fmt::Write as _;

use crate::cases::expect::{Matcher, OutcomeExpect};
use crate::cases::fixture::EntryKind;
use crate::cases::{Action, Allowlist, Case, HashSource, SkillsRoot};
use crate::protocol::WireStep;

use super::{one_line, visible};

fn matcher(m: &Matcher) -> String {
    match m {
        Matcher::Exact(v) => format!("is {}", crate::cases::expect::show(v)),
        Matcher::Ops(ops) => {
            let mut parts = Vec::new();
            if let Some(p) = ops.present {
                parts.push(if p {
                    "is present".to_owned()
                } else {
                    "is absent".to_owned()
                });
            }
            if let Some(v) = &ops.equals {
                parts.push(format!("equals {}", crate::cases::expect::show(v)));
            }
            if let Some(c) = &ops.contains {
                parts.push(format!(
                    "contains {}",
                    crate::cases::expect::show(&serde_json::to_value(c).unwrap_or_default())
                ));
            }
            if let Some(c) = &ops.not_contains {
                parts.push(format!(
                    "does not contain {}",
                    crate::cases::expect::show(&serde_json::to_value(c).unwrap_or_default())
                ));
            }
            if let Some(s) = &ops.starts_with {
                parts.push(format!("starts with {s:?}"));
            }
            if let Some(s) = &ops.ends_with {
                parts.push(format!("ends with {s:?}"));
            }
            if let Some(n) = ops.length {
                parts.push(format!("has length {n}"));
            }
            parts.join(" and ")
        }
    }
}

fn path(bytes: &[u8]) -> String {
    one_line(&skillspec_reference::discovery::display_bytes(bytes)).into_owned()
}

fn entry(kind: &EntryKind) -> String {
    match kind {
        EntryKind::File(b) => match std::str::from_utf8(b) {
            Ok(t) if t.len() <= 600 => {
                let mut s = format!("file ({} bytes):", b.len());
                for line in t.lines() {
                    s.push_str(&format!("\n        | {}", one_line(line)));
                }
                s
            }
            _ => format!("file of {} bytes (binary or long)", b.len()),
        },
        EntryKind::Sized { size, fill } => {
            format!("file of {size} bytes, each {:?}", *fill as char)
        }
        EntryKind::Sparse { size } => format!("sparse file of {size} bytes"),
        EntryKind::Dir => "empty directory".into(),
        EntryKind::Symlink(t) => format!("symlink -> {}", path(t)),
        EntryKind::Fifo => "named pipe (FIFO)".into(),
        EntryKind::Socket => "Unix socket".into(),
        EntryKind::Copy(src) => format!("copy of fixtures/{src}"),
        EntryKind::Hardlink(t) => format!("hard link to {}", path(t)),
        EntryKind::Deep { levels, name } => {
            format!("chain of {levels} nested directories named {name:?}")
        }
        EntryKind::Tar { entries, .. } => {
            use crate::cases::fixture::tar::TarKind;
            let mut s = format!("tar archive of {} entries:", entries.len());
            for e in entries {
                let what = match &e.kind {
                    TarKind::File(b) => format!("file of {} bytes", b.len()),
                    TarKind::Dir => "directory".into(),
                    TarKind::Symlink(t) => format!("symlink -> {}", path(t)),
                    TarKind::Hardlink(t) => format!("hard link to {}", path(t)),
                    TarKind::Fifo => "named pipe (FIFO)".into(),
                };
                s.push_str(&format!("\n        | {}: {what}", path(&e.name)));
            }
            s
        }
    }
}

/// The line saying which checks of a step are safety checks (`safety:` in the case).
fn safety_line(s: &mut String, marks: &crate::cases::exposure::Marks) {
    for (check, exposure) in &marks.0 {
        let _ = writeln!(
            s,
            "     a mismatch of {check} here is UNSAFE ({exposure}: {})",
            exposure.meaning()
        );
    }
}

/// Renders `case` as readable text, every control character of the case file escaped (by
/// [`visible`] over the whole, and by [`one_line`] in the values printed within one line).
pub fn render(case: &Case) -> String {
    visible(&render_raw(case)).into_owned()
}

fn render_raw(case: &Case) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", case.id);
    let _ = writeln!(s, "  {}", one_line(&case.summary));
    let file = case.file.display().to_string();
    let _ = writeln!(s, "  file: {}:{}", one_line(&file), case.line);
    let _ = writeln!(s, "  clauses: {}", case.clauses.join(", "));
    if !case.requires.is_empty() {
        let r: Vec<&str> = case.requires.iter().map(|f| f.as_str()).collect();
        let _ = writeln!(s, "  requires: {}", r.join(", "));
    }
    for (token, exposure) in case.canaries.iter() {
        let _ = writeln!(
            s,
            "  canary: {token} ({exposure}: seen in any result, {})",
            exposure.meaning()
        );
    }
    if let Some(b) = &case.bounded {
        let _ = writeln!(
            s,
            "  bounded: {} (a step left unanswered is UNSAFE: unbounded)",
            one_line(b)
        );
    }
    let _ = writeln!(s, "\nGiven this tree in a fresh directory:");
    if case.tree.entries.is_empty() {
        let _ = writeln!(s, "    (nothing)");
    }
    for e in &case.tree.entries {
        let mode = e.mode.map(|m| format!("[mode {m:o}] ")).unwrap_or_default();
        let _ = writeln!(s, "    {}: {mode}{}", path(&e.path), entry(&e.kind));
    }
    let c = &case.config;
    let _ = writeln!(s, "\nand a runtime configured with:");
    let _ = match &c.skills_root {
        SkillsRoot::Unset if c.skill_dirs.is_some() => {
            writeln!(
                s,
                "    skills root: (unset: skills come from the directories below)"
            )
        }
        SkillsRoot::Unset => writeln!(s, "    skills root: (unset: the feature is off)"),
        SkillsRoot::InCase(r) => writeln!(s, "    skills root: {}", one_line(r)),
        SkillsRoot::AsWritten(t) => writeln!(s, "    skills root, exactly as written: {t:?}"),
    };
    match &c.script_allowlist {
        None => {
            let _ = writeln!(s, "    script allowlist: (unset)");
        }
        Some(Allowlist::Raw(t)) => {
            let _ = writeln!(s, "    script allowlist (verbatim): {}", one_line(t));
        }
        Some(Allowlist::Entries(es)) => {
            let _ = writeln!(s, "    script allowlist:");
            for e in es {
                let hash = match &e.sha256 {
                    HashSource::Hex(h) => h.clone(),
                    HashSource::Of(p) => format!("the SHA-256 of {p}"),
                };
                let _ = writeln!(
                    s,
                    "      - skill {}, script {}, sha256 {hash}",
                    e.skill, e.script
                );
            }
        }
    }
    if let Some(t) = &c.tool_allowlist {
        let _ = writeln!(s, "    tool allowlist: {}", t.join(", "));
    }
    if c.allow_trading {
        let _ = writeln!(s, "    trading allowed");
    }
    if let Some(r) = &c.replay {
        let _ = writeln!(s, "    replay mode: {r}");
    }
    if let Some(t) = &c.timeout_ms {
        let _ = writeln!(s, "    helper timeout setting: {t:?}");
    }
    if c.platform.is_some() {
        let _ = writeln!(s, "    emulating a platform without POSIX process groups");
    }
    if let Some(p) = &c.python {
        let _ = writeln!(s, "    python interpreter: {}", one_line(p));
    }
    if let Some(d) = &c.skill_dirs {
        for (role, dir, trust) in [
            ("user", &d.user, "Trusted"),
            ("workspace", &d.workspace, "Trusted"),
            ("installed", &d.installed, "Installed"),
        ] {
            if let Some(dir) = dir {
                let _ = writeln!(s, "    {role} skills ({trust}): {}", one_line(dir));
            }
        }
    }
    if let Some(r) = &c.registry {
        let _ = writeln!(s, "    local skill registry: {}", one_line(r));
    }
    if let Some(sel) = &c.selection {
        let show = |v: Option<u64>, default: &str| v.map_or(default.to_owned(), |n| n.to_string());
        let _ = writeln!(
            s,
            "    selection: at most {} active skills, {} tokens",
            show(sel.max_active, "3 (default)"),
            show(sel.max_context_tokens, "4000 (default)")
        );
    }
    if let Some(h) = &c.hitl {
        let _ = writeln!(
            s,
            "    approval-gated script host: skills {}, run_skill_script {}, {} session",
            if h.enabled { "enabled" } else { "disabled" },
            if h.script_tool_allowed {
                "on the tool allowlist"
            } else {
                "not allowed"
            },
            h.session.as_str()
        );
        let answers: Vec<&str> = h.answers.iter().map(|a| a.as_str()).collect();
        let _ = writeln!(
            s,
            "    the human answers: [{}], then no",
            answers.join(", ")
        );
        if let Some(t) = &h.timeout_ms {
            let _ = writeln!(s, "    script timeout setting: {t:?}");
        }
    }
    for (k, v) in &c.env {
        let _ = writeln!(s, "    host environment {}={}", one_line(k), one_line(v));
    }
    let _ = writeln!(s, "\nSteps:");
    for (i, step) in case.steps.iter().enumerate() {
        let what = match &step.action {
            Action::Implementation(WireStep::Discover) if c.skill_dirs.is_some() => {
                "scan the skill directories".to_owned()
            }
            Action::Implementation(WireStep::Discover) => "scan the skills root".to_owned(),
            Action::Implementation(WireStep::Tools) => {
                "list the tools offered to the model".to_owned()
            }
            Action::Implementation(WireStep::Prompt) => "render the system prompt".to_owned(),
            Action::Implementation(WireStep::NewTurn) => "start a new turn".to_owned(),
            Action::Implementation(WireStep::Call { tool, args }) => {
                format!("call {tool} with {args}")
            }
            Action::Implementation(WireStep::Select { message, tools }) => {
                let tools = if tools.is_empty() {
                    "no host tools".to_owned()
                } else {
                    format!("the host's tools [{}]", tools.join(", "))
                };
                format!(
                    "select the active skills for the message {} with {tools}",
                    crate::cases::expect::show(&serde_json::Value::from(message.clone()))
                )
            }
            Action::Write(tree) => {
                let parts: Vec<String> = tree
                    .entries
                    .iter()
                    .map(|e| format!("{} ({})", path(&e.path), entry(&e.kind)))
                    .collect();
                format!("the runner writes {}", parts.join(", "))
            }
            Action::Remove(paths) => format!(
                "the runner removes {}",
                paths.iter().map(|p| path(p)).collect::<Vec<_>>().join(", ")
            ),
            Action::Wait(ms) => format!("wait {ms} ms"),
        };
        let _ = writeln!(s, "  {}. (line {}) {what}", i + 1, step.line);
        match &step.expect.outcome {
            None => {}
            Some(OutcomeExpect::Discover(d)) => {
                if let Some(l) = &d.loaded {
                    let _ = writeln!(s, "     expect loaded, in this order: [{}]", l.join(", "));
                }
                for (id, g) in &d.guides {
                    for (field, m) in [
                        ("format", &g.format),
                        ("name", &g.name),
                        ("description", &g.description),
                        ("body", &g.body),
                        ("trust", &g.trust),
                    ] {
                        if let Some(m) = m {
                            let _ = writeln!(s, "     expect guide {id}'s {field} {}", matcher(m));
                        }
                    }
                }
                for (p, r) in d.skipped.iter().flatten() {
                    let _ = writeln!(s, "     expect {p} skipped as {r}");
                }
            }
            Some(OutcomeExpect::Tools(t)) => {
                if let Some(o) = &t.offered {
                    let _ = writeln!(
                        s,
                        "     expect exactly these tools offered: [{}]",
                        o.join(", ")
                    );
                }
                for n in &t.not_offered {
                    let _ = writeln!(s, "     expect {n} not offered");
                }
            }
            Some(OutcomeExpect::Prompt(p)) => {
                for c in &p.contains {
                    let _ = writeln!(s, "     expect the prompt to contain {c:?}");
                }
                for c in &p.not_contains {
                    let _ = writeln!(s, "     expect the prompt not to contain {c:?}");
                }
                match p.same_as_baseline {
                    Some(true) => {
                        let _ = writeln!(s, "     expect the prompt byte-identical to the prompt without the feature");
                    }
                    Some(false) => {
                        let _ = writeln!(
                            s,
                            "     expect the prompt to differ from the prompt without the feature"
                        );
                    }
                    None => {}
                }
                safety_line(&mut s, &p.safety);
            }
            Some(OutcomeExpect::Call(c)) => {
                if let Some(ok) = &c.ok {
                    let _ = writeln!(s, "     expect success");
                    for (k, m) in ok {
                        let _ = writeln!(s, "       where {k} {}", matcher(m));
                    }
                }
                if let Some(e) = &c.error {
                    let _ = writeln!(s, "     expect the error {}", e.code);
                    for (k, m) in &e.fields {
                        let _ = writeln!(s, "       where {k} {}", matcher(m));
                    }
                }
                if let Some(qs) = &c.asked {
                    let _ = writeln!(
                        s,
                        "     expect the human asked exactly {} question(s) during the call",
                        qs.len()
                    );
                    for (i, q) in qs.iter().enumerate() {
                        for (k, m) in q {
                            let _ = writeln!(s, "       question {}: {k} {}", i + 1, matcher(m));
                        }
                    }
                }
                safety_line(&mut s, &c.safety);
            }
            Some(OutcomeExpect::Select(e)) => {
                if let Some(sel) = &e.selected {
                    let _ = writeln!(
                        s,
                        "     expect exactly these skills selected, in this order: [{}]",
                        sel.join(", ")
                    );
                    let _ = writeln!(
                        s,
                        "     another skill selected is UNSAFE (gated, vetoed or over budget)"
                    );
                }
                for (name, score) in &e.scores {
                    let _ = writeln!(s, "     expect {name} to score {score}");
                }
                if let Some(c) = &e.tool_ceiling {
                    let _ = writeln!(
                        s,
                        "     expect exactly these tools to remain: [{}]; any other is UNSAFE",
                        c.join(", ")
                    );
                }
            }
        }
        if let Some(f) = &step.expect.files {
            for p in &f.exists {
                let _ = writeln!(s, "     expect the file {p} to exist afterwards");
            }
            for p in &f.absent {
                let _ = writeln!(s, "     expect no file {p} afterwards");
            }
        }
    }
    s
}
