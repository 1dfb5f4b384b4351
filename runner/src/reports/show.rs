//! `skillspec show`: one case rendered as prose for auditors. A case file is text from elsewhere
//! (`--cases DIR`): its control characters are printed as escapes.

use std::fmt::Write as _;

use crate::cases::expect::{
    CallExpect, DiscoverExpect, Matcher, OutcomeExpect, PromptExpect, SelectExpect, ToolsExpect,
};
use crate::cases::fixture::EntryKind;
use crate::cases::{Action, Allowlist, Case, CaseConfig, CaseHitl, HashSource, SkillsRoot};
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

/// [`render`] before escaping: the header, the tree, the configuration, then each step.
fn render_raw(case: &Case) -> String {
    let mut s = String::new();
    header(&mut s, case);
    tree(&mut s, case);
    config(&mut s, &case.config);
    steps(&mut s, case);
    s
}

/// The case's id, summary, file, clauses, required features, canaries, `bounded` and how it
/// shares the machine (`exclusive`, `alone`).
fn header(s: &mut String, case: &Case) {
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
    if let Some(name) = case.exclusive_with() {
        let _ = writeln!(
            s,
            "  exclusive: {name} (under --jobs N, one case of this name at a time)"
        );
    }
    if case.runs_alone() {
        let _ = writeln!(s, "  alone: true (under --jobs N, no other case beside it)");
    }
}

/// The tree the case builds before its first step.
fn tree(s: &mut String, case: &Case) {
    let _ = writeln!(s, "\nGiven this tree in a fresh directory:");
    if case.tree.entries.is_empty() {
        let _ = writeln!(s, "    (nothing)");
    }
    for e in &case.tree.entries {
        let mode = e.mode.map(|m| format!("[mode {m:o}] ")).unwrap_or_default();
        let _ = writeln!(s, "    {}: {mode}{}", path(&e.path), entry(&e.kind));
    }
}

/// The runtime's configuration, one line per setting the case makes.
fn config(s: &mut String, c: &CaseConfig) {
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
    script_allowlist(s, c.script_allowlist.as_ref());
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
    profiles(s, c);
    for (k, v) in &c.env {
        let _ = writeln!(s, "    host environment {}={}", one_line(k), one_line(v));
    }
}

/// The operator's script allowlist: unset, verbatim, or one line per entry.
fn script_allowlist(s: &mut String, allowlist: Option<&Allowlist>) {
    match allowlist {
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
}

/// The settings of the profiles (`selection`, `trust`, `hitl`): skill directories, registry,
/// selection limits and the approval-gated host.
fn profiles(s: &mut String, c: &CaseConfig) {
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
        hitl(s, h);
    }
}

/// The approval-gated script host (profile `hitl`) and the human's answers.
fn hitl(s: &mut String, h: &CaseHitl) {
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

/// What a `validate` step expects, in words.
fn expect_validate(s: &mut String, e: &crate::cases::expect::ValidateExpect) {
    if let Some(valid) = e.valid {
        let _ = writeln!(
            s,
            "     expect the skill {}",
            if valid { "valid" } else { "invalid" }
        );
    }
    for (k, m) in &e.properties {
        let _ = writeln!(s, "     expect the property {k} that {}", matcher(m));
    }
}

/// Each step: what it does, then what it expects.
fn steps(s: &mut String, case: &Case) {
    let _ = writeln!(s, "\nSteps:");
    let dirs = case.config.skill_dirs.is_some();
    for (i, step) in case.steps.iter().enumerate() {
        let what = action(&step.action, dirs);
        let _ = writeln!(s, "  {}. (line {}) {what}", i + 1, step.line);
        match &step.expect.outcome {
            None => {}
            Some(OutcomeExpect::Discover(d)) => expect_discover(s, d),
            Some(OutcomeExpect::Tools(t)) => expect_tools(s, t),
            Some(OutcomeExpect::Prompt(p)) => expect_prompt(s, p),
            Some(OutcomeExpect::Call(c)) => expect_call(s, c),
            Some(OutcomeExpect::Select(e)) => expect_select(s, e),
            Some(OutcomeExpect::Validate(e)) => expect_validate(s, e),
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
}

/// What a step does, in words; `skill_dirs` says whether the case scans the profile's skill
/// directories rather than a skills root.
fn action(action: &Action, skill_dirs: bool) -> String {
    match action {
        Action::Implementation(WireStep::Discover) if skill_dirs => {
            "scan the skill directories".to_owned()
        }
        Action::Implementation(WireStep::Discover) => "scan the skills root".to_owned(),
        Action::Implementation(WireStep::Tools) => "list the tools offered to the model".to_owned(),
        Action::Implementation(WireStep::Prompt) => "render the system prompt".to_owned(),
        Action::Implementation(WireStep::Validate { path }) => {
            format!("validate the skill directory {path}")
        }
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
    }
}

/// What a `discover` step expects: the skills loaded, their guides' fields, the paths skipped.
fn expect_discover(s: &mut String, d: &DiscoverExpect) {
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

/// What a `tools` step expects: the tools offered, and those not offered.
fn expect_tools(s: &mut String, t: &ToolsExpect) {
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

/// What a `prompt` step expects: texts in it or not, sameness with the baseline, safety marks.
fn expect_prompt(s: &mut String, p: &PromptExpect) {
    for c in &p.contains {
        let _ = writeln!(s, "     expect the prompt to contain {c:?}");
    }
    for c in &p.not_contains {
        let _ = writeln!(s, "     expect the prompt not to contain {c:?}");
    }
    match p.same_as_baseline {
        Some(true) => {
            let _ = writeln!(
                s,
                "     expect the prompt byte-identical to the prompt without the feature"
            );
        }
        Some(false) => {
            let _ = writeln!(
                s,
                "     expect the prompt to differ from the prompt without the feature"
            );
        }
        None => {}
    }
    safety_line(s, &p.safety);
}

/// What a tool call expects: success or an error with their fields, the human's questions,
/// safety marks.
fn expect_call(s: &mut String, c: &CallExpect) {
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
    safety_line(s, &c.safety);
}

/// What a `select` step expects: the skills selected, their scores, the tool ceiling.
fn expect_select(s: &mut String, e: &SelectExpect) {
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
