//! The operator's tools end to end: `skillspec check-tree` (what loads, every skip with its detail
//! and fix hint, duplicates with all their copies, file symlinks left out, its exit codes) and
//! `skillspec allowlist` (its output, exported as `SPORTSCLAW_SKILL_SCRIPT_ALLOWLIST` in a case run
//! through the reference, approves exactly the helpers it names).

mod common;
use common::{case, skillspec, text, validated_report};

use std::path::Path;

use serde_json::Value;

/// The skill tree of the allowlist test: (path below the skills root, contents).
const SKILLS: &[(&str, &str)] = &[
    (
        "alpha/SKILL.md",
        "---\nname: alpha\ndescription: first\n---\nBody\n",
    ),
    // Each helper leaves a marker where it ran: a refused one must leave none.
    (
        "alpha/scripts/a.py",
        "open('ran-a', 'w').close()\nprint('alpha a')\n",
    ),
    (
        "alpha/scripts/sub/b.py",
        "open('ran-b', 'w').close()\nprint('alpha b')\n",
    ),
    ("alpha/scripts/notes.md", "not a helper\n"),
    (
        "beta/SKILL.md",
        "---\nname: beta\ndescription: second\n---\nBody\n",
    ),
    (
        "beta/scripts/c.py",
        "open('ran-c', 'w').close()\nprint('beta c')\n",
    ),
    (
        "beta/scripts/d.py",
        "open('ran-d', 'w').close()\nprint('beta d')\n",
    ),
];

fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

fn allowlist(root: &Path, only: &[&str]) -> std::process::Output {
    let mut args = vec!["allowlist", root.to_str().unwrap()];
    args.extend_from_slice(only);
    skillspec(&args)
}

/// A case file (in JSON, which is YAML) running every helper of [`SKILLS`] with `allowlist` as
/// the raw policy text, then editing `alpha/scripts/a.py` and running it again.
fn case_file(id: &str, allowlist: &str, approved: &[&str]) -> String {
    let tree: serde_json::Map<String, Value> = SKILLS
        .iter()
        .map(|(p, c)| (format!("skills/{p}"), Value::from(*c)))
        .collect();
    let mut steps = Vec::new();
    for (skill, script, out) in [
        ("alpha", "scripts/a.py", "alpha a\n"),
        ("alpha", "scripts/sub/b.py", "alpha b\n"),
        ("beta", "scripts/c.py", "beta c\n"),
        ("beta", "scripts/d.py", "beta d\n"),
    ] {
        let expect = if approved.contains(&format!("{skill}/{script}").as_str()) {
            serde_json::json!({"ok": {"exit_code": 0, "stdout": out}})
        } else {
            let marker = format!(
                "skills/{skill}/ran-{}",
                &script[script.len() - 4..script.len() - 3]
            );
            serde_json::json!({"error": {"code": "not_approved"}, "files": {"absent": [marker]}})
        };
        steps
            .push(serde_json::json!({"run": {"skill": skill, "script": script}, "expect": expect}));
    }
    steps.push(serde_json::json!({"write": {"skills/alpha/scripts/a.py": "print('SKILLSPEC_CANARY_RAN_ALLOWLIST_EDITED')\n"}}));
    steps.push(serde_json::json!({"new_turn": null}));
    steps.push(serde_json::json!({
        "run": {"skill": "alpha", "script": "scripts/a.py"},
        "expect": {"error": {"code": "not_approved"}},
    }));
    serde_json::json!({
        "id": id,
        "summary": "The output of `skillspec allowlist` approves exactly the helpers it names.",
        "clauses": ["run.approval", "policy.edited"],
        "canaries": {"SKILLSPEC_CANARY_RAN_ALLOWLIST_EDITED": "code-ran"},
        "tree": tree,
        "config": {"script_allowlist": allowlist},
        "steps": steps,
    })
    .to_string()
}

#[test]
fn allowlist_output_approves_exactly_those_helpers_in_a_reference_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    write_tree(&root, SKILLS);
    std::os::unix::fs::symlink("a.py", root.join("alpha/scripts/link.py")).unwrap();

    let all = allowlist(&root, &[]);
    assert_eq!(all.status.code(), Some(0), "{}", text(&all));
    let all_text = String::from_utf8(all.stdout.clone()).unwrap();
    let entries: Value = serde_json::from_str(&all_text).unwrap();
    let named: Vec<String> = entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["skill", "script", "sha256"]);
            format!(
                "{}/{}",
                e["skill"].as_str().unwrap(),
                e["script"].as_str().unwrap()
            )
        })
        .collect();
    // The symlinked helper can never run, so it is not approved (and said so on stderr).
    assert_eq!(
        named,
        [
            "alpha/scripts/a.py",
            "alpha/scripts/sub/b.py",
            "beta/scripts/c.py",
            "beta/scripts/d.py"
        ]
    );
    assert!(String::from_utf8_lossy(&all.stderr).contains("scripts/link.py"));

    let some = allowlist(&root, &["alpha", "beta/scripts/c.py"]);
    assert_eq!(some.status.code(), Some(0), "{}", text(&some));
    let some_text = String::from_utf8(some.stdout.clone()).unwrap();

    let cases = dir.path().join("cases");
    std::fs::create_dir_all(cases.join("run")).unwrap();
    std::fs::write(
        cases.join("run/allowlist-all.yaml"),
        case_file(
            "run.allowlist.all",
            all_text.trim_end(),
            &[
                "alpha/scripts/a.py",
                "alpha/scripts/sub/b.py",
                "beta/scripts/c.py",
                "beta/scripts/d.py",
            ],
        ),
    )
    .unwrap();
    std::fs::write(
        cases.join("run/allowlist-some.yaml"),
        case_file(
            "run.allowlist.some",
            some_text.trim_end(),
            &[
                "alpha/scripts/a.py",
                "alpha/scripts/sub/b.py",
                "beta/scripts/c.py",
            ],
        ),
    )
    .unwrap();
    let report = dir.path().join("report");
    let run = skillspec(&[
        "run",
        "--cases",
        cases.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let report = validated_report(&report);
    for id in ["run.allowlist.all", "run.allowlist.some"] {
        assert_eq!(case(&report, id)["status"], "pass", "{id}: {}", text(&run));
    }
}

#[test]
fn allowlist_arguments_that_name_nothing_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    write_tree(&root, SKILLS);
    write_tree(
        &root,
        &[(
            "broken/SKILL.md",
            "---\nname: broken\ndescription: Use when: x\n---\n",
        )],
    );
    for (arg, says) in [
        ("nope", "no loaded skill has the id `nope`"),
        ("broken", "was skipped: malformed"),
        ("alpha/a.py", "did you mean alpha/scripts/a.py"),
        ("alpha/scripts/notes.md", "no helper `scripts/notes.md`"),
    ] {
        let out = allowlist(&root, &["alpha", arg]);
        assert_eq!(out.status.code(), Some(2), "{arg}: {}", text(&out));
        assert!(out.stdout.is_empty(), "{arg}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(arg) && err.contains(says), "{arg}: {err}");
    }
    let missing = allowlist(&dir.path().join("missing"), &[]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let none = allowlist(&empty, &[]);
    assert_eq!(none.status.code(), Some(0), "{}", text(&none));
    assert_eq!(String::from_utf8_lossy(&none.stdout), "[]\n");
}

/// A tree with the skips an operator meets in public collections.
fn operator_tree(root: &Path) {
    write_tree(
        root,
        &[
            ("ok/SKILL.md", "---\nname: ok\ndescription: fine\n---\n"),
            ("ok/scripts/run.py", "print('ok')\n"),
            (
                "colon/SKILL.md",
                "---\nname: colon\ndescription: Use when: the user asks\n---\n",
            ),
            ("one/dup/SKILL.md", "---\nname: dup\ndescription: d\n---\n"),
            ("two/dup/SKILL.md", "---\nname: dup\ndescription: d\n---\n"),
            ("CLAUDE.md", "instructions\n"),
            // Two shapes real skills write that the reader loads (issue #18, part 3).
            (
                "emoji/SKILL.md",
                "---\nname: emoji\ndescription: \"Budget \\ud83d\\udcb0 helper\"\n---\n",
            ),
            (
                "openclaw/SKILL.md",
                "---\nname: openclaw\ndescription: o\nmetadata: {\n  \"openclaw\": {\"emoji\": \"x\"},\n}\n---\n",
            ),
            (
                "target/SKILL.md",
                "---\nname: target\ndescription: t\n---\n",
            ),
        ],
    );
    std::os::unix::fs::symlink("CLAUDE.md", root.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink("gone", root.join("dangling.md")).unwrap();
    std::os::unix::fs::symlink("target", root.join("linked")).unwrap();
}

#[test]
fn check_tree_json_carries_every_skip_with_its_detail_and_both_duplicate_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    operator_tree(&root);
    let out = skillspec(&["check-tree", "--json", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let loaded: Vec<&str> = (v["loaded"].as_array().unwrap().iter())
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(loaded, ["emoji", "ok", "openclaw", "target"]);
    assert_eq!(v["loaded"][0]["description"], "Budget \u{1f4b0} helper");
    let sha = v["loaded"][1]["helpers"][0]["sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64);
    assert_eq!(v["loaded"][1]["helpers"][0]["script"], "scripts/run.py");

    let skipped = v["skipped"].as_array().unwrap();
    let paths: Vec<&str> = skipped
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    // The file symlinks are not skills; the directory symlink could have been one.
    assert_eq!(paths, ["colon", "linked", "one/dup", "two/dup"]);
    let colon = &skipped[0];
    assert_eq!(colon["reason"], "malformed");
    // SKILL.md's own line, the one the hint names too (the reader counts from the frontmatter).
    assert!(
        colon["detail"]
            .as_str()
            .unwrap()
            .contains("at SKILL.md line 3"),
        "{colon}"
    );
    assert_eq!(colon["skill_md_line"], 3);
    assert!(colon["hint"]
        .as_str()
        .unwrap()
        .contains("description: \"Use when: the user asks\""));
    assert_eq!(skipped[1]["reason"], "symlink");
    assert!(skipped[2]["detail"].as_str().unwrap().contains("dup"));
    assert_eq!(skipped[3]["duplicate_id"], "dup");
    assert_eq!(
        v["duplicates"],
        serde_json::json!([{
            "id": "dup", "paths": ["one/dup", "two/dup"], "identical": true,
            "identical_copies": [["one/dup", "two/dup"]],
        }])
    );
    assert_eq!(
        v["summary"]["by_reason"],
        serde_json::json!({"duplicate": 2, "symlink": 1, "malformed": 1})
    );
    assert_eq!(v["summary"]["file_symlinks_ignored"], 2);
    assert_eq!(v["warnings"], serde_json::json!([]));

    let out = skillspec(&["check-tree", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    for shown in [
        "SKILL ",
        "REASON",
        "helper scripts/run.py  sha256 ",
        "fix (SKILL.md line 3): ",
        "dup: 2 copies, all byte-identical",
        "summary: 4 loaded, 4 skipped (2 duplicate, 1 symlink, 1 malformed)",
    ] {
        assert!(t.contains(shown), "{shown:?} missing from:\n{t}");
    }
    assert!(!t.contains("AGENTS.md") && !t.contains("guide"), "{t}");
}

/// Review round 3: a `#` value is a YAML comment (hinted, with its line), a skipped symlink names
/// its target, and valid skills nested inside another skill are listed as not examined.
#[test]
fn check_tree_hints_a_comment_value_names_link_targets_and_lists_nested_skills() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "hash/SKILL.md",
        "---\nname: hash\ndescription: #1 tool\n---\nBody\n",
    );
    write(
        "outer/SKILL.md",
        "---\nname: outer\ndescription: o\n---\nBody\n",
    );
    write(
        "outer/inner/SKILL.md",
        "---\nname: inner\ndescription: i\n---\nBody\n",
    );
    let elsewhere = dir.path().join("elsewhere");
    write(
        "../elsewhere/SKILL.md",
        "---\nname: x\ndescription: x\n---\n",
    );
    std::os::unix::fs::symlink(&elsewhere, root.join("linked")).unwrap();

    let out = skillspec(&["check-tree", "--json", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped = v["skipped"].as_array().unwrap();
    let hash = skipped.iter().find(|s| s["path"] == "hash").unwrap();
    assert_eq!(hash["skill_md_line"], 3, "{hash}");
    assert!(
        hash["hint"]
            .as_str()
            .unwrap()
            .contains("`#` after `description:` starts a YAML comment")
            && hash["hint"]
                .as_str()
                .unwrap()
                .contains("description: \"#1 tool\""),
        "{hash}"
    );
    let linked = skipped.iter().find(|s| s["path"] == "linked").unwrap();
    assert_eq!(linked["target"], elsewhere.to_str().unwrap(), "{linked}");
    assert_eq!(
        v["not_examined"],
        serde_json::json!(["outer/inner/SKILL.md"])
    );
    assert_eq!(v["summary"]["not_examined"], 1);

    let t = text(&skillspec(&["check-tree", root.to_str().unwrap()]));
    assert!(t.contains("fix (SKILL.md line 3): `#` after"), "{t}");
    assert!(
        t.contains(&format!("(it points to {})", elsewhere.display())),
        "{t}"
    );
    assert!(
        t.contains("not examined: 1 skill file(s)") && t.contains("\n  outer/inner/SKILL.md\n"),
        "{t}"
    );
}

#[test]
fn check_tree_exit_codes() {
    // 0 whatever the tree holds; 2 when the root cannot be opened (missing, or not a directory).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    for root in [dir.path().join("missing"), file] {
        for json in [false, true] {
            let mut args = vec!["check-tree", root.to_str().unwrap()];
            if json {
                args.push("--json");
            }
            let out = skillspec(&args);
            assert_eq!(out.status.code(), Some(2), "{}", text(&out));
            assert!(out.stdout.is_empty());
            assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open skills root"));
        }
    }
    let out = skillspec(&["check-tree", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
