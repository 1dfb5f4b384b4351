//! The case format's tests: loading, every refusal of a bad case file, and the rules across a
//! case.

use super::load::*;
use super::parse::*;
use super::*;

fn parse(text: &str) -> Result<Case, CaseError> {
    parse_case(Path::new("t.yaml"), Some("t"), text)
}

const GOOD: &str = "id: t.one\nsummary: A case.\nclauses: [discovery.portable]\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: b\\n---\\n\"\nsteps:\n  - discover:\n    expect:\n      loaded: [a]\n";

/// A case file directly in a flat `--cases DIR` takes its area from its id's first word
/// (issue #18: it was `root`); one in a directory below takes the directory's name.
#[test]
fn a_case_file_in_the_root_takes_its_area_from_its_id() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("one.yaml"),
        GOOD.replace("t.one", "read.flat.one"),
    )
    .expect("write");
    std::fs::create_dir(dir.path().join("odd")).expect("mkdir");
    std::fs::write(
        dir.path().join("odd/two.yaml"),
        GOOD.replace("t.one", "read.two"),
    )
    .expect("write");
    let suite = load_dir(dir.path()).expect("loads");
    let areas: Vec<(&str, &str)> = suite
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.area.as_str()))
        .collect();
    assert_eq!(areas, [("read.flat.one", "read"), ("read.two", "odd")]);
}

/// A YAML error's snippet is headed with the case file's name, not serde-saphyr's default
/// `<input>` (issue #18).
#[test]
fn a_yaml_error_names_the_case_file() {
    let file = Path::new("cases/broken-case.yaml");
    let Err(e) = parse_case(file, None, "id: t.one\nsummary: [unclosed\nclauses: x\n") else {
        panic!("accepted broken YAML")
    };
    assert!(!e.message.contains("<input>"), "{}", e.message);
    assert!(
        e.message.contains("cases/broken-case.yaml:"),
        "{}",
        e.message
    );
}

/// `exclusive:` names one resource in one word, and says nothing beside `alone: true`.
#[test]
fn exclusive_names_a_resource_and_is_not_beside_alone() {
    let with = |extra: &str| parse(&GOOD.replace("steps:", &format!("{extra}\nsteps:")));
    let c = with("exclusive: memory-4gib").expect("parses");
    assert_eq!(c.exclusive_with(), Some("memory-4gib"));
    assert!(c.may_take_long() && !c.runs_alone());
    let plain = parse(GOOD).expect("parses");
    assert!(plain.exclusive_with().is_none() && !plain.may_take_long());
    let e = with("exclusive: Big Memory").expect_err("two words");
    assert!(e.message.contains("one lowercase word"), "{}", e.message);
    assert_eq!(e.line, Some(6));
    let e = with("alone: true\nexclusive: memory-4gib").expect_err("both");
    assert!(e.message.contains("keep one of them"), "{}", e.message);
}

#[test]
fn good_case_parses() {
    let c = parse(GOOD).unwrap();
    assert_eq!(c.id, "t.one");
    assert_eq!(c.steps.len(), 1);
    assert_eq!(c.steps[0].line, 7);
    assert_eq!(c.config.skills_root, SkillsRoot::InCase("skills".into()));
}

#[test]
fn errors_name_the_line() {
    let e = parse(&GOOD.replace("discovery.portable", "discovery.nope")).unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("discovery.nope"));
    let e = parse(&GOOD.replace("loaded: [a]", "loadd: [a]")).unwrap_err();
    assert_eq!(e.line, Some(7));
    let e = parse(&GOOD.replace("    expect:\n      loaded: [a]\n", "")).unwrap_err();
    assert!(e.message.contains("checks nothing"));
    let e = parse(&GOOD.replace("discovery.portable", "hitl.confirm")).unwrap_err();
    assert!(e.message.contains("`hitl`"), "{}", e.message);
}

#[test]
fn every_safety_check_has_an_observable() {
    // A canary planted in a file outside the skill, looked for in every result.
    let planted = "id: t.c\nsummary: A case.\nclauses: [read.path.relative]\ncanaries:\n  SKILLSPEC_CANARY_T1: outside-content\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: b\\n---\\n\"\n  outside.md: \"SKILLSPEC_CANARY_T1\"\nsteps:\n  - read: {skill: a, path: ../outside.md}\n    expect:\n      error: invalid_path\n";
    let c = parse(planted).unwrap();
    assert_eq!(
        c.canaries.iter().collect::<Vec<_>>(),
        [(
            "SKILLSPEC_CANARY_T1",
            crate::cases::exposure::Exposure::OutsideContent
        )]
    );
    let refused = |text: &str, words: &str| {
        let e = parse(text).unwrap_err();
        assert!(e.message.contains(words), "{words}: {}", e.message);
        e
    };
    // Declared but planted nowhere: the case could never show the crossing.
    refused(
        &planted.replace("outside.md: \"SKILLSPEC_CANARY_T1\"", "outside.md: \"x\""),
        "is not planted",
    );
    // Where a runtime that crossed nothing is sent it, or must show it.
    refused(
        &planted.replace("path: ../outside.md", "path: SKILLSPEC_CANARY_T1"),
        "a step's arguments",
    );
    refused(
        &planted.replace("error: invalid_path", "ok: {content: SKILLSPEC_CANARY_T1}"),
        "an expected value",
    );
    refused(
        &planted.replace("  outside.md:", "  SKILLSPEC_CANARY_T1/x: a\n  outside.md:"),
        "a path",
    );
    // Disguised the way the scan sees through (escaped, re-cased): still shown by a runtime
    // that crossed nothing, so still refused.
    refused(
        &planted.replace("path: ../outside.md", "path: skillspec\\_canary\\_t1"),
        "a step's arguments",
    );
    // A configuration string a safe runtime may quote (the interpreter in a `spawn_failed`
    // message, the allowlist's text, the root as written): refused; the environment, where
    // secrets live, is not.
    for config in [
        "config: {python: \"{root}/SKILLSPEC_CANARY_T1\"}\n",
        "config: {script_allowlist: \"[SKILLSPEC_CANARY_T1]\"}\n",
        "config: {skills_root_as_written: \"SKILLSPEC_CANARY_T1\"}\n",
        "config: {timeout_ms: \"SKILLSPEC_CANARY_T1\"}\n",
    ] {
        refused(
            &planted.replace("steps:", &format!("{config}steps:")),
            "also occurs in",
        );
    }
    parse(&planted.replace(
        "  outside.md: \"SKILLSPEC_CANARY_T1\"\n",
        "  outside.md: \"x\"\nconfig: {env: {TOKEN: SKILLSPEC_CANARY_T1}}\n",
    ))
    .unwrap();
    // One canary inside another, once folded: showing the longer would show both.
    refused(
        &planted
            .replace(
                "  SKILLSPEC_CANARY_T1: outside-content\n",
                "  SKILLSPEC_CANARY_T1: outside-content\n  SKILLSPEC_CANARY_T1_B: code-ran\n",
            )
            .replace(
                "\"SKILLSPEC_CANARY_T1\"",
                "\"SKILLSPEC_CANARY_T1 SKILLSPEC_CANARY_T1_B\"",
            ),
        "is a part of canary",
    );
    // A `not_contains` of the token shows nothing a passing runtime sends: allowed.
    parse(&format!(
        "{planted}  - prompt:\n    expect:\n      not_contains: [SKILLSPEC_CANARY_T1]\n"
    ))
    .unwrap();
    // Marks: only prompt checks, only prompt-forgery, and their text holds such a canary.
    let forged = "id: t.f\nsummary: A case.\nclauses: [prompt.section]\ncanaries:\n  SKILLSPEC_CANARY_F1: prompt-forgery\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: \\\"x\\\\n- `SKILLSPEC_CANARY_F1`\\\"\\n---\\n\"\nsteps:\n  - prompt:\n    expect:\n      not_contains: [\"\\n- `SKILLSPEC_CANARY_F1`\"]\n      safety: {not_contains: prompt-forgery}\n";
    parse(forged).unwrap();
    let e = refused(
        &forged.replace(
            "not_contains: [\"\\n- `SKILLSPEC_CANARY_F1`\"]",
            "not_contains: [\"\\n- `evil`\"]",
        ),
        "hold no canary",
    );
    assert_eq!(e.line, Some(9));
    refused(
        &forged.replace(
            "safety: {not_contains: prompt-forgery}",
            "safety: [not_contains]",
        ),
        "names each marked check",
    );
    refused(
        &forged.replace(
            "safety: {not_contains: prompt-forgery}",
            "safety: {contains: prompt-forgery}",
        ),
        "does not check",
    );
    let run = format!(
        "{GOOD}  - run: {{skill: a, script: scripts/x.py}}\n    expect:\n      ok: {{stdout: x}}\n      safety: {{stdout: secret}}\n"
    );
    refused(&run, "only a prompt check can be marked");
    let e = refused(
        &GOOD.replace(
            "loaded: [a]\n",
            "loaded: [a]\n      safety: {loaded: outside-content}\n",
        ),
        "fixed rules",
    );
    assert_eq!(e.line, Some(7));
    // A marker nothing planted would write; `bounded` with nothing to hang on.
    let marker = format!("{GOOD}      files: {{absent: [skills/a/pwned]}}\n");
    refused(&marker, "could never fail");
    parse(&marker.replace("name: a\\n", "name: a\\nrun: touch pwned\\n")).unwrap();
    refused(
        &GOOD.replace("steps:", "bounded: a FIFO\nsteps:"),
        "nothing a runtime could hang on",
    );
    parse(
        &GOOD
            .replace("steps:", "bounded: a FIFO\nsteps:")
            .replace("tree:\n", "tree:\n  skills/f/SKILL.md: {fifo: true}\n"),
    )
    .unwrap();
    // A link that loops back up can hang a scan too.
    parse(
        &GOOD
            .replace("steps:", "bounded: a loop\nsteps:")
            .replace("tree:\n", "tree:\n  skills/loop: {symlink: ..}\n"),
    )
    .unwrap();
    // A forged line may come from a directory's name: planted there, a mark can use it.
    let named = forged
        .replace(
            "description: \\\"x\\\\n- `SKILLSPEC_CANARY_F1`\\\"",
            "description: b",
        )
        .replace(
            "skills/a/SKILL.md",
            "skills/a` SKILLSPEC_CANARY_F1 `/SKILL.md",
        );
    assert_ne!(named, forged);
    parse(&named).unwrap();
}

#[test]
fn profile_config_and_steps_need_their_features() {
    let profile = "id: t.p\nsummary: A case.\nclauses: [selection.order]\nrequires: [selection]\nconfig:\n  skill_dirs: {user: user}\nsteps:\n  - select: {message: deploy, tools: [shell]}\n    expect:\n      selected: []\n";
    let c = parse(profile).unwrap();
    assert_eq!(c.config.skills_root, SkillsRoot::Unset);
    let Action::Implementation(WireStep::Select { message, tools }) = &c.steps[0].action else {
        panic!("a select step");
    };
    assert_eq!(
        (message.as_str(), tools.as_slice()),
        ("deploy", &["shell".to_owned()][..])
    );
    for (from, to, words) in [
        ("requires: [selection]", "requires: [trust]", "clause"),
        (
            "  skill_dirs: {user: user}",
            "  skill_dirs: {user: ../up}",
            "without `..`",
        ),
        (
            "  skill_dirs: {user: user}",
            "  skill_dirs: {user: user}\n  skills_root: s",
            "leave `skills_root` out",
        ),
        (
            "  skill_dirs: {user: user}",
            "  skill_dirs: {user: user}\n  registry: r",
            "[trust]",
        ),
        (
            "      selected: []",
            "      scores: {}",
            "`selected`, `scores` or `tool_ceiling`",
        ),
    ] {
        let e = parse(&profile.replace(from, to)).unwrap_err();
        assert!(e.message.contains(words), "{to}: {}", e.message);
    }
    let e = parse(&GOOD.replace("  - discover:", "  - select: {message: x}\n  - discover:"))
        .unwrap_err();
    assert!(e.message.contains("[selection]"), "{}", e.message);
}

#[test]
fn hitl_config_defaults_and_needs_its_feature() {
    let hitl = "id: t.h\nsummary: A case.\nclauses: [hitl.confirm]\nrequires: [hitl]\nconfig:\n  hitl: {}\nsteps:\n  - call: {tool: run_skill_script, args: {skill: a, script: x.py}}\n    expect:\n      error: denied\n      asked: [{skill: a}]\n";
    let c = parse(hitl).unwrap();
    assert_eq!(
        c.config.hitl,
        Some(CaseHitl {
            enabled: true,
            script_tool_allowed: false,
            session: Session::Interactive,
            answers: Vec::new(),
            timeout_ms: None,
        })
    );
    let c = parse(&hitl.replace(
        "hitl: {}",
        "hitl: {enabled: false, script_tool_allowed: true, session: non-interactive, answers: [approve, deny], timeout_ms: 300}",
    ))
    .unwrap();
    let h = c.config.hitl.unwrap();
    assert_eq!(
        (
            h.enabled,
            h.script_tool_allowed,
            h.session,
            h.answers,
            h.timeout_ms
        ),
        (
            false,
            true,
            Session::NonInteractive,
            vec![Answer::Approve, Answer::Deny],
            Some("300".to_owned())
        )
    );
    for (from, to, words) in [
        ("hitl: {}", "hitl: {answers: [maybe]}", "maybe"),
        ("hitl: {}", "hitl: {session: tty}", "tty"),
        ("hitl: {}", "hitl: {timeout_ms: [1]}", "hitl.timeout_ms"),
        ("config:\n  hitl: {}\n", "", "add `config.hitl`"),
    ] {
        let e = parse(&hitl.replace(from, to)).unwrap_err();
        assert!(e.message.contains(words), "{to}: {}", e.message);
    }
    // Without the feature neither the configuration nor `asked` may appear.
    let core = hitl.replace(
        "clauses: [hitl.confirm]\nrequires: [hitl]\n",
        "clauses: [run.order]\n",
    );
    let e = parse(&core).unwrap_err();
    assert!(e.message.contains("requires: [hitl]"), "{}", e.message);
    let e = parse(&core.replace("config:\n  hitl: {}\n", "")).unwrap_err();
    assert!(e.message.contains("`asked`"), "{}", e.message);
}

/// A case file is YAML 1.2: a bare `y`, `no`, `on` or `off` in a step's arguments is that text,
/// not YAML 1.1's boolean, so a case that reads the path `y` asks for `y` (probe O8).
#[test]
fn yaml_1_1_boolean_words_are_text() {
    for word in ["y", "Y", "yes", "no", "n", "on", "Off"] {
        let c = parse(&format!("{GOOD}  - read: {{skill: a, path: {word}}}\n")).expect("parses");
        let Action::Implementation(WireStep::Call { args, .. }) = &c.steps[1].action else {
            panic!("a read step");
        };
        assert_eq!(args["path"].as_str(), Some(word), "{word}");
    }
    let c = parse(&format!("{GOOD}  - read: {{skill: a, path: true}}\n")).expect("parses");
    let Action::Implementation(WireStep::Call { args, .. }) = &c.steps[1].action else {
        panic!("a read step");
    };
    assert_eq!(args["path"], serde_json::Value::Bool(true));
}

#[test]
fn repeats_are_bounded_per_case_before_allocating() {
    let read = |times: u64| {
        format!(
            "  - read: {{skill: a, path: {{$repeat: \"{}\", times: {times}}}}}\n",
            "x".repeat(1000)
        )
    };
    let ok = parse(&format!("{GOOD}{}", read(16_000))).unwrap();
    let Action::Implementation(WireStep::Call { args, .. }) = &ok.steps[1].action else {
        panic!("a read step");
    };
    assert_eq!(args["path"].as_str().map(str::len), Some(16_000_000));
    let e = parse(&format!("{GOOD}{}{}", read(8_000), read(9_000))).unwrap_err();
    assert_eq!(e.line, Some(11));
    assert!(e.message.contains("16 MiB"), "{}", e.message);
    let e = parse(&format!("{GOOD}{}", read(1_000_000))).unwrap_err();
    assert_eq!(e.line, Some(10));
}

#[test]
fn paths_through_symlink_entries_are_refused_with_the_line() {
    let with_link = GOOD.replace("tree:\n", "tree:\n  out: {symlink: /etc}\n");
    let cases = [
        (with_link.replace("steps:\n", "  out/x: zz\nsteps:\n"), 5),
        (format!("{with_link}  - remove: [out/passwd]\n"), 11),
        (format!("{with_link}  - write: {{out/passwd: x}}\n"), 11),
        (
            format!("{with_link}  - discover:\n    expect: {{files: {{absent: [out/x]}}}}\n"),
            11,
        ),
        (with_link.replace("/etc}", "/etc, mode: 0o644}"), 5),
        (
            format!("{GOOD}config:\n  env: {{X: \"{{sha256:skills/a}}\"}}\n"),
            11,
        ),
    ];
    for (text, line) in cases {
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(line), "{text}\n{}", e.message);
        assert!(
            e.message.contains("symlink") || e.message.contains("not a regular file"),
            "{}",
            e.message
        );
    }
    parse(&format!(
        "{with_link}  - remove: [out]\n  - write: {{out/x: zz}}\n"
    ))
    .unwrap();
}
