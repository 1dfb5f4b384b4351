//! `skillspec check-tree` (the reference's discovery) on skill trees built to exhaust it: its peak
//! memory stays bounded and linear whatever the tree holds.

mod common;
use common::bin;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `command` to completion and returns its exit code, its stdout, and its peak resident set
/// size in KiB (from the kernel's accounting of that one child).
// The child is reaped with `wait4` (which std does not offer), not with `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_measured(command: &mut Command) -> (Option<i32>, Vec<u8>, u64) {
    use std::io::Read;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut out = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        stdout.read_to_end(&mut out).expect("stdout is readable");
    }
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `wait4` writes only to `status` and `usage`, both valid locals; `pid` is our own
    // unreaped child (std's `Child` is not waited on afterwards).
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4 failed: {}", std::io::Error::last_os_error());
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, out, usage.ru_maxrss as u64)
}

fn same_id_tree(root: &Path, n: usize) {
    for i in 0..n {
        let dir = root.join(format!("g{i:05}/same"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: same\ndescription: one of many\n---\n",
        )
        .unwrap();
    }
}

#[test]
fn twelve_thousand_directories_sharing_one_id_cost_linear_memory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    same_id_tree(&root, 12_000);
    let (code, out, peak_kib) = run_measured(
        Command::new(bin())
            .args(["check-tree", "--json"])
            .arg(&root),
    );
    assert_eq!(code, Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out).expect("check-tree prints JSON");
    assert_eq!(report["loaded"].as_array().map(Vec::len), Some(0));
    let skipped = report["skipped"].as_array().expect("a skipped list");
    assert_eq!(skipped.len(), 12_000);
    assert!(skipped.iter().all(|s| s["reason"] == "duplicate"));
    eprintln!("check-tree on 12,000 same-id directories: peak RSS {peak_kib} KiB");
    assert!(
        peak_kib < 100 * 1024,
        "check-tree used {peak_kib} KiB for 12,000 duplicates"
    );
}

#[test]
fn check_tree_warns_about_hard_links_to_files_outside_a_skill() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    std::fs::create_dir_all(root.join("alpha/references")).unwrap();
    std::fs::write(
        root.join("alpha/SKILL.md"),
        "---\nname: alpha\ndescription: first\n---\n",
    )
    .unwrap();
    let outside = dir.path().join("outside.md");
    std::fs::write(&outside, "someone else's file").unwrap();
    std::fs::hard_link(&outside, root.join("alpha/references/notes.md")).unwrap();
    std::fs::write(root.join("alpha/references/own.md"), "own").unwrap();
    let out = Command::new(bin())
        .args(["check-tree", "--json"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["warnings"],
        serde_json::json!([{"path": "alpha/references/notes.md", "warning": "hard_link", "links": 2}])
    );
    let text = Command::new(bin())
        .arg("check-tree")
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("alpha/references/notes.md"), "{text}");
    assert!(text.contains("hard links"), "{text}");
}

#[test]
fn check_tree_never_prints_control_characters_from_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    std::fs::create_dir_all(root.join("alpha")).unwrap();
    std::fs::write(
        root.join("alpha/SKILL.md"),
        "---\nname: \"\\e]0;owned\\a\\e[2J\"\ndescription: first\n---\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .arg("check-tree")
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !out.stdout.iter().any(|b| *b == 0x1b || *b == 0x07),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\\u{1b}]0;owned"));
}
