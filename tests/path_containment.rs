//! Property: no path that `skill_read_reference` accepts can resolve outside the skill
//! directory, on generated paths over generated trees full of symlinks (inside, outside,
//! absolute, dangling, looping). Files outside the skill hold a canary that must never be read.

use std::os::unix::fs::symlink;
use std::path::Path;

use proptest::prelude::*;
use serde_json::json;
use skillspec_reference::{Config, Runtime};

const CANARY: &str = "OUTSIDE-CANARY";

/// One node of a generated tree below `skills/alpha/references/`.
#[derive(Debug, Clone)]
enum Node {
    File(String),
    Dir(String),
    Link(String, &'static str),
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a", "b", "c.md", "d.txt", "SKILL.md", "e.json", "f.yml", "..x", "x..md",
    ])
    .prop_map(str::to_owned)
}

fn target() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "../../../outside",
        "../../../outside/secret.md",
        "/tmp",
        "/etc/hostname",
        "..",
        ".",
        "a",
        "c.md",
        "../SKILL.md",
        "nowhere.md",
        "../references",
    ])
}

fn node() -> impl Strategy<Value = (Vec<String>, Node)> {
    (
        prop::collection::vec(name(), 0..3),
        prop_oneof![
            name().prop_map(Node::File),
            name().prop_map(Node::Dir),
            (name(), target()).prop_map(|(n, t)| Node::Link(n, t))
        ],
    )
}

fn segment() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "references",
        "SKILL.md",
        "a",
        "b",
        "c.md",
        "d.txt",
        "e.json",
        "f.yml",
        "..",
        ".",
        "",
        "outside",
        "secret.md",
        "..x",
        "x..md",
    ])
    .prop_map(str::to_owned)
}

fn build(root: &Path, nodes: &[(Vec<String>, Node)]) {
    let skill = root.join("skills/alpha");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: alpha\ndescription: d\n---\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/secret.md"), CANARY).unwrap();
    for (parents, node) in nodes {
        // Never create anything through a symlink made earlier: the tree stays what it says.
        let rel = parents.join("/");
        if crosses_symlink(&skill.join("references"), &rel) {
            continue;
        }
        let mut dir = skill.join("references");
        for p in parents {
            dir.push(p);
        }
        if std::fs::create_dir_all(&dir).is_err() {
            continue;
        }
        let leaf = match node {
            Node::File(n) | Node::Dir(n) | Node::Link(n, _) => dir.join(n),
        };
        if std::fs::symlink_metadata(&leaf).is_ok() {
            continue;
        }
        let _ = match node {
            Node::File(n) => std::fs::write(dir.join(n), format!("inside {n}")),
            Node::Dir(n) => std::fs::create_dir_all(dir.join(n)),
            Node::Link(n, t) => symlink(t, dir.join(n)),
        };
    }
}

/// True when some prefix of `rel` below `base` is a symlink.
fn crosses_symlink(base: &Path, rel: &str) -> bool {
    let mut p = base.to_path_buf();
    rel.split('/').filter(|s| !s.is_empty()).any(|seg| {
        p.push(seg);
        std::fs::symlink_metadata(&p)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, .. ProptestConfig::default() })]

    #[test]
    fn accepted_paths_stay_inside(nodes in prop::collection::vec(node(), 0..12), paths in prop::collection::vec(prop::collection::vec(segment(), 1..5), 1..12)) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        build(&root, &nodes);
        let skill = root.join("skills/alpha");
        let mut rt = Runtime::start(Config { skills_root: Some(root.join("skills")), ..Config::default() });
        let own = rt.call("skill_read_reference", &json!({"skill": "alpha", "path": "SKILL.md"}));
        prop_assert!(own.is_ok(), "the skill's own SKILL.md must be readable: {own:?}");
        let mut accepted = 0usize;
        for segs in paths {
            let path = segs.join("/");
            let result = rt.call("skill_read_reference", &json!({"skill": "alpha", "path": path}));
            if let Ok(value) = &result {
                let content = value["content"].as_str().unwrap_or_default();
                prop_assert!(!content.contains(CANARY), "read the outside canary through {path}");
                prop_assert!(!crosses_symlink(&skill, &path), "accepted {path}, which crosses a symlink");
                let real = skill.join(&path).canonicalize().unwrap();
                prop_assert!(real.starts_with(&skill), "accepted {path} resolving to {}", real.display());
                prop_assert_eq!(std::fs::read_to_string(&real).unwrap(), content);
            }
            accepted += usize::from(result.is_ok());
        }
        let _ = accepted;
    }
}
