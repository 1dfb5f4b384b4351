//! Properties of the reference that must hold for every input, checked on generated inputs:
//!
//! - discovery gives the same result whatever order the file system lists directories in (the
//!   same tree is built twice on tmpfs in opposite creation orders, which tmpfs lists in
//!   different orders; the test checks that the listings really differed);
//! - a script allowlist with any bad entry approves nothing, while the same allowlist without
//!   it approves every entry;
//! - a path the validator accepts never leads outside the skill directory, lexically.
//!
//! (The path property over real trees full of symlinks is `tests/path_containment.rs`.)

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, TestRunner};
use skillspec_reference::discovery::discover;
use skillspec_reference::policy::Policy;
use skillspec_reference::skill_path::{validate, PathScope};

// --- discovery and enumeration order -----------------------------------------------------------

#[derive(Debug, Clone)]
enum Kind {
    Portable,
    Legacy,
    Malformed,
    Incomplete,
    NotASkill,
}

/// One directory of a generated tree: its parent groups, its name, what it holds.
#[derive(Debug, Clone)]
struct Dir {
    groups: Vec<&'static str>,
    name: &'static str,
    kind: Kind,
}

fn dir() -> impl Strategy<Value = Dir> {
    (
        prop::collection::vec(prop::sample::select(vec!["g1", "g2", "team", "x"]), 0..3),
        // Few names, so that duplicates (all dropped, whatever is found first) are common.
        prop::sample::select(vec!["alpha", "beta", "gamma", "delta", "g1", "team"]),
        prop_oneof![
            4 => Just(Kind::Portable),
            3 => Just(Kind::Legacy),
            1 => Just(Kind::Malformed),
            1 => Just(Kind::Incomplete),
            1 => Just(Kind::NotASkill),
        ],
    )
        .prop_map(|(groups, name, kind)| Dir { groups, name, kind })
}

/// The files of the tree, in the order given: (relative path, contents).
fn files(dirs: &[Dir]) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        let mut p = PathBuf::new();
        for g in &d.groups {
            p.push(g);
        }
        p.push(d.name);
        let skill = |text: String| (p.join("SKILL.md"), text);
        match d.kind {
            Kind::Portable => out.push(skill(format!(
                "---\nname: {}\ndescription: number {i}\n---\nBody {i}\n",
                d.name
            ))),
            Kind::Legacy => {
                out.push((
                    p.join("skill.yml"),
                    format!("name: {}\ndescription: legacy {i}\n", d.name),
                ));
                out.push(skill(format!("Legacy body {i}\n")));
            }
            Kind::Malformed => out.push(skill("---\nname: [unclosed\n---\n".into())),
            Kind::Incomplete => out.push(skill("---\nname: only\n---\n".into())),
            Kind::NotASkill => out.push((p.join(format!("notes-{i}.md")), "n".into())),
        }
    }
    out
}

/// Creates the files in the given order; a file whose path is taken, or runs through a file,
/// is left out (the same in both orders, see `canonical`).
fn build(root: &Path, files: &[(PathBuf, String)]) {
    for (rel, text) in files {
        let path = root.join(rel);
        if path.exists() {
            continue;
        }
        if let Some(parent) = path.parent() {
            if std::fs::create_dir_all(parent).is_err() {
                continue;
            }
        }
        let _ = std::fs::write(&path, text);
    }
}

/// Keeps the first file per path, and drops files below a path that is a file, so the tree
/// does not depend on the creation order.
fn canonical(files: Vec<(PathBuf, String)>) -> Vec<(PathBuf, String)> {
    let mut seen = BTreeSet::new();
    let unique: Vec<_> = files
        .into_iter()
        .filter(|(p, _)| seen.insert(p.clone()))
        .collect();
    let paths: BTreeSet<PathBuf> = unique.iter().map(|(p, _)| p.clone()).collect();
    unique
        .into_iter()
        .filter(|(p, _)| !p.ancestors().skip(1).any(|a| paths.contains(a)))
        .collect()
}

/// Every directory's listing, in the order the file system returns it.
fn listings(root: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        for n in &names {
            let p = d.join(n);
            if p.is_dir() {
                stack.push(p);
            }
        }
        let mut rel = d.strip_prefix(root).unwrap().to_path_buf();
        rel.push("");
        out.push((rel, names));
    }
    out.sort();
    out
}

/// A directory on tmpfs, whose listing order is the creation order (or its reverse).
fn tmpfs_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

#[test]
fn discovery_does_not_depend_on_listing_order() {
    let mut runner = TestRunner::new(PtConfig {
        cases: 96,
        failure_persistence: None,
        ..PtConfig::default()
    });
    let orders_differed = std::cell::Cell::new(0usize);
    let duplicates_seen = std::cell::Cell::new(0usize);
    runner
        .run(&prop::collection::vec(dir(), 1..14), |dirs| {
            let forward = canonical(files(&dirs));
            let mut backward = forward.clone();
            backward.reverse();
            let (a, b) = (tmpfs_dir(), tmpfs_dir());
            build(a.path(), &forward);
            build(b.path(), &backward);
            let (la, lb) = (listings(a.path()), listings(b.path()));
            // Same entries per directory; only the order may differ.
            let sorted = |l: &[(PathBuf, Vec<String>)]| -> Vec<(PathBuf, Vec<String>)> {
                l.iter()
                    .map(|(p, n)| {
                        let mut n = n.clone();
                        n.sort();
                        (p.clone(), n)
                    })
                    .collect()
            };
            prop_assert_eq!(sorted(&la), sorted(&lb));
            if la != lb {
                orders_differed.set(orders_differed.get() + 1);
            }
            let (da, db) = (discover(a.path()).unwrap(), discover(b.path()).unwrap());
            if da
                .skipped
                .iter()
                .any(|s| format!("{:?}", s.reason) == "Duplicate")
            {
                duplicates_seen.set(duplicates_seen.get() + 1);
            }
            prop_assert_eq!(&da.loaded, &db.loaded);
            prop_assert_eq!(&da.skipped, &db.skipped);
            Ok(())
        })
        .unwrap();
    // The property was really exercised: listings came back in different orders, and
    // duplicate names (where a walk that depends on order would keep one) occurred.
    let (orders_differed, duplicates_seen) = (orders_differed.get(), duplicates_seen.get());
    assert!(
        orders_differed > 10,
        "only {orders_differed} of 96 trees were listed in different orders"
    );
    assert!(
        duplicates_seen > 5,
        "only {duplicates_seen} trees had duplicates"
    );
}

// --- the policy never approves when an entry is bad --------------------------------------------

const HEX: &str = "0123456789abcdef";

fn sha() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(HEX.chars().collect::<Vec<_>>()), 64)
        .prop_map(|c| c.into_iter().collect())
}

fn good_entries() -> impl Strategy<Value = Vec<(String, String, String)>> {
    prop::collection::vec(
        (
            prop::sample::select(vec!["a", "b", "weather", "x y"]),
            prop::sample::select(vec!["scripts/x.py", "scripts/y.py", "scripts/d/z.py"]),
            sha(),
        ),
        1..6,
    )
    .prop_map(|v| {
        let mut seen = BTreeSet::new();
        v.into_iter()
            .filter(|(s, p, _)| seen.insert((*s, *p)))
            .map(|(s, p, h)| (s.to_owned(), p.to_owned(), h))
            .collect()
    })
}

fn entry_json(skill: &str, script: &str, sha: &str) -> String {
    serde_json::json!({"skill": skill, "script": script, "sha256": sha}).to_string()
}

/// One bad entry, given a good one to imitate.
fn bad_entry(kind: u8, (skill, script, sha): &(String, String, String)) -> String {
    let q = |s: &str| serde_json::Value::from(s).to_string();
    match kind % 11 {
        0 => entry_json(
            skill,
            script,
            &sha.to_uppercase().replace(char::is_numeric, "A"),
        ),
        1 => entry_json(skill, script, &sha[1..]),
        2 => entry_json(skill, script, &format!("{}g", &sha[1..])),
        3 => format!(
            r#"{{"skill":{},"script":{},"sha256":{},"extra":1}}"#,
            q(skill),
            q(script),
            q(sha)
        ),
        4 => format!(r#"{{"skill":{},"script":{}}}"#, q(skill), q(script)),
        5 => format!(
            r#"{{"skill":{},"skill":{},"script":{},"sha256":{}}}"#,
            q(skill),
            q(skill),
            q(script),
            q(sha)
        ),
        6 => format!(
            r#"{{"skill":1,"script":{},"sha256":{}}}"#,
            q(script),
            q(sha)
        ),
        7 => entry_json(skill, script, sha), // a duplicate of a good entry
        8 => format!("[{},{},{}]", q(skill), q(script), q(sha)),
        9 => "null".into(),
        _ => entry_json(skill, script, &format!(" {}", &sha[1..])),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn a_bad_entry_means_nothing_is_approved(
        good in good_entries(),
        kind in any::<u8>(),
        imitate in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
    ) {
        let mut entries: Vec<String> = good.iter().map(|(s, p, h)| entry_json(s, p, h)).collect();
        // Without the bad entry: valid, and every entry approved (the control).
        let clean = Policy::parse(Some(&format!("[{}]", entries.join(","))));
        for (s, p, h) in &good {
            prop_assert!(clean.approves(s, p, h), "{clean:?} does not approve {s} {p}");
        }
        let bad = bad_entry(kind, imitate.get(&good));
        entries.insert(at.index(entries.len() + 1), bad.clone());
        let text = format!("[{}]", entries.join(","));
        let policy = Policy::parse(Some(&text));
        prop_assert!(matches!(policy, Policy::Invalid(_)), "{text} parsed as {policy:?}");
        for (s, p, h) in &good {
            prop_assert!(!policy.approves(s, p, h), "{text} approves {s} {p}");
            prop_assert!(policy.approved_scripts(s).is_empty());
        }
    }

    // --- accepted paths stay inside, lexically ----------------------------------------------

    #[test]
    fn accepted_paths_never_leave_the_skill_directory(
        path in prop_oneof![
            ".*",
            prop::collection::vec(
                prop::sample::select(vec![
                    "references", "scripts", "SKILL.md", "..", ".", "", "a.md", "b.py", "...",
                    "..md", "x/..", "\u{2215}", "\u{ff0e}\u{ff0e}", "a\u{0}.md", "%2e%2e", " ",
                ]),
                1..6,
            )
            .prop_map(|s| s.join("/")),
        ]
    ) {
        let skill = Path::new("/skills/alpha");
        for scope in [PathScope::Reference, PathScope::Script] {
            if let Ok(segments) = validate(&path, scope) {
                let mut resolved = skill.to_path_buf();
                for c in Path::new(&path).components() {
                    match c {
                        Component::Normal(n) => resolved.push(n),
                        Component::ParentDir => { resolved.pop(); }
                        Component::CurDir => {}
                        Component::RootDir | Component::Prefix(_) => resolved = PathBuf::from("/"),
                    }
                }
                prop_assert!(
                    resolved.starts_with(skill) && resolved != skill,
                    "{scope:?} accepted {path:?}, which resolves to {}", resolved.display()
                );
                prop_assert_eq!(segments.len(), Path::new(&path).components().count());
            }
        }
    }
}
