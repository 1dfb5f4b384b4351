//! Hostile case files against the `skillspec run` program: whatever a case's tree, `write` and
//! `remove` steps, hashes and `$repeat`s say, the runner acts only inside the case root. What it
//! cannot do safely is refused when the case is loaded (exit 2, naming the file and line); a link
//! met at run time is an ERROR of that case. Each test plants an "outside" canary directory next
//! to the cases and checks that its files, contents and modes are unchanged afterwards.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run printed and how it ended.
struct Run {
    code: Option<i32>,
    text: String,
}

/// A temporary directory with a `cases` directory and an `outside` canary.
struct Sandbox {
    tmp: tempfile::TempDir,
    cases: PathBuf,
    outside: PathBuf,
}

/// Kind, permission bits and contents (or link target) of every entry below a directory.
type Snapshot = BTreeMap<PathBuf, (&'static str, u32, Vec<u8>)>;

fn snapshot(dir: &Path) -> Snapshot {
    fn visit(base: &Path, dir: &Path, out: &mut Snapshot) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("the canary is readable")
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let rel = path.strip_prefix(base).unwrap().to_path_buf();
            let mode = meta.permissions().mode() & 0o7777;
            let ft = meta.file_type();
            if ft.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    rel,
                    (
                        "symlink",
                        mode,
                        target.into_os_string().into_encoded_bytes(),
                    ),
                );
            } else if ft.is_dir() {
                out.insert(rel, ("dir", mode, Vec::new()));
                visit(base, &path, out);
            } else {
                out.insert(rel, ("file", mode, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Snapshot::new();
    let top = std::fs::symlink_metadata(dir).expect("the canary exists");
    out.insert(
        PathBuf::new(),
        ("dir", top.permissions().mode() & 0o7777, Vec::new()),
    );
    visit(dir, dir, &mut out);
    out
}

fn sandbox() -> Sandbox {
    let tmp = tempfile::tempdir().unwrap();
    let cases = tmp.path().join("cases");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::create_dir_all(outside.join("chain/d/d/d")).unwrap();
    std::fs::write(outside.join("keep.txt"), "precious\n").unwrap();
    std::fs::write(outside.join("sub/inner.txt"), "inner\n").unwrap();
    let chmod = |p: &str, mode: u32| {
        std::fs::set_permissions(outside.join(p), std::fs::Permissions::from_mode(mode)).unwrap()
    };
    chmod("keep.txt", 0o640);
    chmod("sub/inner.txt", 0o600);
    chmod("sub", 0o750);
    chmod("", 0o755);
    Sandbox {
        tmp,
        cases,
        outside,
    }
}

const SKILL: &str = "  skills/alpha/SKILL.md: \"---\\nname: alpha\\ndescription: a\\n---\\n\"\n";

impl Sandbox {
    /// Writes `cases/NAME.yaml`; `OUT` in `body` is the canary's absolute path.
    fn case(&self, name: &str, body: &str) {
        let text = body.replace("OUT", self.outside.to_str().unwrap());
        std::fs::write(self.cases.join(format!("{name}.yaml")), text).unwrap();
    }

    /// Runs the suite in `cases`, killing it when it takes longer than `limit` or its peak
    /// memory passes 1 GiB.
    fn run(&self, limit: Duration) -> Run {
        let (out, err) = (
            self.tmp.path().join("stdout"),
            self.tmp.path().join("stderr"),
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_skillspec"))
            .args(["run", "--cases", self.cases.to_str().unwrap()])
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("the binary runs");
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            let peak_kib = std::fs::read_to_string(format!("/proc/{}/status", child.id()))
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or(0);
            if peak_kib > 1 << 20 || started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the run was stopped after {:?} with a peak of {peak_kib} KiB",
                    started.elapsed()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Run {
            code: status.code(),
            text: format!(
                "{}{}",
                std::fs::read_to_string(out).unwrap(),
                std::fs::read_to_string(err).unwrap()
            ),
        }
    }
}

const LIMIT: Duration = Duration::from_secs(60);

/// Every file is refused when loading with the message at `file:line:`, and nothing ran.
fn assert_refused(run: &Run, expected: &[(&str, usize, &str)]) {
    assert_eq!(run.code, Some(2), "{}", run.text);
    for (file, line, words) in expected {
        let at = format!("{file}.yaml:{line}: ");
        let found = run
            .text
            .lines()
            .any(|l| l.contains(&at) && l.contains(words));
        assert!(found, "no `{at}...{words}` in:\n{}", run.text);
    }
    assert!(run.text.contains("nothing was run"), "{}", run.text);
}

#[test]
fn tree_entries_below_a_symlink_and_modes_on_symlinks_are_refused_at_load() {
    let s = sandbox();
    let before = snapshot(&s.outside);
    let head = |id: &str| {
        format!("id: hostile.{id}\nsummary: s.\nclauses: [discovery.portable]\ntree:\n{SKILL}")
    };
    let tail = "steps:\n  - discover:\n    expect: {loaded: [alpha]}\n";
    for (name, entries) in [
        ("file", "  out: {symlink: \"OUT\"}\n  out/new.txt: x\n"),
        ("nested", "  out/sub/new: x\n  out: {symlink: \"OUT\"}\n"),
        ("fifo", "  out: {symlink: \"OUT\"}\n  out/p: {fifo: true}\n"),
        (
            "socket",
            "  out: {symlink: \"OUT\"}\n  out/s: {socket: true}\n",
        ),
        (
            "dir",
            "  out: {symlink: \"OUT\"}\n  out/d: {dir: true, mode: 0o777}\n",
        ),
        (
            "deep",
            "  out: {symlink: \"OUT\"}\n  out/c: {deep: {levels: 3, name: d}}\n",
        ),
        (
            "sized",
            "  out: {symlink: \"OUT\"}\n  out/keep.txt: {size: 5}\n",
        ),
        ("link", "  out: {symlink: \"OUT\"}\n  out/l: {symlink: x}\n"),
        (
            "hardlink",
            "  out: {symlink: \"OUT\"}\n  h: {hardlink: out/keep.txt}\n",
        ),
        (
            "mode-file",
            "  l: {symlink: \"OUT/keep.txt\", mode: 0o777}\n",
        ),
        ("mode-dir", "  l: {symlink: \"OUT/sub\", mode: \"0000\"}\n"),
    ] {
        s.case(name, &format!("{}{entries}{tail}", head(name)));
    }
    let run = s.run(LIMIT);
    assert_refused(
        &run,
        &[
            ("file", 5, "`out/new.txt`"),
            ("nested", 5, "`out/sub/new`"),
            ("fifo", 5, "`out/p`"),
            ("socket", 5, "`out/s`"),
            ("dir", 5, "`out/d`"),
            ("deep", 5, "`out/c`"),
            ("sized", 5, "`out/keep.txt`"),
            ("link", 5, "`out/l`"),
            ("hardlink", 5, "`out/keep.txt`"),
            ("mode-file", 5, "symlink"),
            ("mode-dir", 5, "symlink"),
        ],
    );
    assert_eq!(snapshot(&s.outside), before);
}

#[test]
fn writes_removes_and_file_checks_through_a_symlink_entry_are_refused_at_load() {
    let s = sandbox();
    let before = snapshot(&s.outside);
    let head = |id: &str| {
        format!(
            "id: hostile.{id}\nsummary: s.\nclauses: [discovery.portable]\ntree:\n{SKILL}  out: {{symlink: \"OUT\"}}\n  h: \"mine\\n\"\nsteps:\n  - discover:\n    expect: {{loaded: [alpha]}}\n"
        )
    };
    s.case(
        "write",
        &format!(
            "{}  - write: {{out/new.txt: x, out/keep.txt: {{size: 3}}}}\n",
            head("write")
        ),
    );
    s.case(
        "remove",
        &format!("{}  - remove: [out/keep.txt]\n", head("remove")),
    );
    s.case(
        "remove-dir",
        &format!("{}  - remove: [h, out/sub]\n", head("remove-dir")),
    );
    s.case(
        "files",
        &format!(
            "{}  - discover:\n    expect:\n      files: {{exists: [out/keep.txt]}}\n",
            head("files")
        ),
    );
    // A link made by an earlier `write` step counts as well.
    s.case(
        "later",
        &format!(
            "{}  - write: {{w: {{symlink: \"OUT\"}}}}\n  - write:\n      w/keep.txt: pwned\n",
            head("later")
        ),
    );
    // A hard link whose source lies through the link, then rewritten in place.
    s.case(
        "hardlink",
        &format!(
            "{}  - write: {{h: {{hardlink: out/keep.txt}}}}\n  - write: {{h: pwned}}\n",
            head("hardlink")
        ),
    );
    let run = s.run(LIMIT);
    assert_refused(
        &run,
        &[
            ("write", 11, "`out/new.txt`"),
            ("remove", 11, "`out/keep.txt`"),
            ("remove-dir", 11, "`out/sub`"),
            ("files", 11, "`out/keep.txt`"),
            ("later", 12, "`w/keep.txt`"),
            ("hardlink", 11, "`out/keep.txt`"),
        ],
    );
    assert_eq!(snapshot(&s.outside), before);
}

/// A helper that, when run, plants `plant` → `TARGET` in the case root (after moving away what
/// was there), so that the runner meets a link its case file never mentioned.
fn planting_case(id: &str, target: &str, plant: &str, after: &str) -> String {
    format!(
        r#"id: hostile.{id}
summary: s.
clauses: [run.approval]
tree:
{SKILL}  skills/alpha/scripts/x.py: |
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    plant = os.path.join(root, "{plant}")
    if os.path.lexists(plant):
        os.rename(plant, plant + "-moved")
    os.symlink("{target}", plant)
    print("planted")
  skills/alpha/box/chain: {{deep: {{levels: 3, name: d}}}}
  skills/ro: {{dir: true, mode: 0o500}}
  skills/none: {{dir: true, mode: "0000"}}
config:
  script_allowlist:
    - {{skill: alpha, script: scripts/x.py, sha256_of: skills/alpha/scripts/x.py}}
steps:
  - run: {{skill: alpha, script: scripts/x.py}}
    expect:
      ok: {{exit_code: 0, stdout: "planted\n"}}
{after}"#
    )
}

#[test]
fn links_planted_at_run_time_are_case_errors_never_followed() {
    let s = sandbox();
    let before = snapshot(&s.outside);
    s.case(
        "write-through",
        &planting_case(
            "write-through",
            "OUT",
            "plant",
            "  - write: {plant/new.txt: x}\n",
        ),
    );
    s.case(
        "write-deep",
        &planting_case(
            "write-deep",
            "OUT",
            "plant",
            "  - write: {plant/sub/inner.txt: {text: x, replace: true}}\n",
        ),
    );
    s.case(
        "mode-through",
        &planting_case(
            "mode-through",
            "OUT",
            "plant",
            "  - write: {plant/sub: {dir: true, mode: 0o777}}\n",
        ),
    );
    s.case(
        "remove-through",
        &planting_case(
            "remove-through",
            "OUT",
            "plant",
            "  - remove: [plant/keep.txt]\n",
        ),
    );
    s.case(
        "hardlink-through",
        &planting_case(
            "hardlink-through",
            "OUT",
            "plant",
            "  - write: {mine: {hardlink: plant/keep.txt}}\n  - write: {mine: pwned}\n",
        ),
    );
    s.case(
        "files-through",
        &planting_case(
            "files-through",
            "OUT",
            "plant",
            "  - discover:\n    expect:\n      files: {exists: [plant/keep.txt]}\n",
        ),
    );
    let run = s.run(LIMIT);
    assert_eq!(run.code, Some(1), "{}", run.text);
    for id in [
        "write-through",
        "write-deep",
        "mode-through",
        "remove-through",
        "hardlink-through",
    ] {
        let at = format!("ERROR hostile.{id} ");
        assert!(run.text.contains(&at), "no `{at}` in:\n{}", run.text);
    }
    assert!(
        run.text.lines().any(|l| l == "FAIL hostile.files-through"),
        "{}",
        run.text
    );
    assert!(
        run.text
            .contains("not checked: `plant` is a symlink, and the runner never follows links"),
        "{}",
        run.text
    );
    assert_eq!(snapshot(&s.outside), before);
}

#[test]
fn writes_replace_a_planted_link_instead_of_writing_through_it() {
    let s = sandbox();
    let before = snapshot(&s.outside);
    for (id, entry) in [
        ("sized", "{size: 3}"),
        ("sparse", "{size: 4096, sparse: true}"),
        ("text", "pwned"),
        ("replace", "{text: pwned, replace: true}"),
        ("copy", "{copy: helpers/echo_args.py}"),
        ("fifo", "{fifo: true}"),
        ("socket", "{socket: true}"),
        ("dir", "{dir: true}"),
    ] {
        s.case(
            id,
            &planting_case(
                id,
                "OUT/keep.txt",
                "plant",
                &format!(
                    "  - write: {{plant: {entry}}}\n  - discover:\n    expect:\n      files: {{exists: [plant]}}\n"
                ),
            ),
        );
    }
    let run = s.run(LIMIT);
    assert_eq!(snapshot(&s.outside), before, "{}", run.text);
    assert_eq!(run.code, Some(0), "{}", run.text);
}

#[test]
fn cleanup_never_follows_a_planted_link_out_of_the_case_root() {
    let s = sandbox();
    let before = snapshot(&s.outside);
    // The helper swaps the directory holding a `deep` chain for a link to the canary, which has
    // a `chain/d/d/d` of its own; cleanup removes the case's chain and never the canary's.
    s.case(
        "cleanup",
        &planting_case(
            "cleanup",
            "OUT",
            "skills/alpha/box",
            "  - discover:\n    expect:\n      files: {exists: [skills]}\n",
        ),
    );
    // A link to the canary next to directories the case made read-only and unsearchable.
    s.case(
        "modes",
        &format!(
            "id: hostile.modes\nsummary: s.\nclauses: [discovery.portable]\ntree:\n{SKILL}  skills/x: {{symlink: \"OUT\"}}\n  skills/y: {{symlink: \"OUT/sub\"}}\n  skills/ro: {{dir: true, mode: 0o500}}\n  skills/ro/f: x\n  skills/none: {{dir: true, mode: \"0000\"}}\nsteps:\n  - discover:\n    expect: {{loaded: [alpha]}}\n"
        ),
    );
    let run = s.run(LIMIT);
    assert_eq!(run.code, Some(0), "{}", run.text);
    assert_eq!(snapshot(&s.outside), before);
}

fn hash_case(id: &str, entry: &str, config: &str) -> String {
    format!(
        "id: hostile.{id}\nsummary: s.\nclauses: [run.approval]\ntree:\n{SKILL}  skills/alpha/scripts/x.py: {entry}\nconfig:\n{config}steps:\n  - run: {{skill: alpha, script: scripts/x.py}}\n    expect: {{ok: {{exit_code: 0}}}}\n"
    )
}

const HASH_ENTRY: &str =
    "  script_allowlist:\n    - {skill: alpha, script: scripts/x.py, sha256_of: skills/alpha/scripts/x.py}\n";
const HASH_RAW: &str = "  script_allowlist: '[{\"skill\":\"alpha\",\"script\":\"scripts/x.py\",\"sha256\":\"{sha256:skills/alpha/scripts/x.py}\"}]'\n";

#[test]
fn hashing_a_link_to_dev_zero_is_refused_quickly_in_bounded_memory() {
    let s = sandbox();
    s.case(
        "zero",
        &hash_case("zero", "{symlink: /dev/zero}", HASH_ENTRY),
    );
    s.case(
        "zero-raw",
        &hash_case("zero-raw", "{symlink: /dev/zero}", HASH_RAW),
    );
    // `run` stops the program past 1 GiB of peak memory or 30 seconds.
    let run = s.run(Duration::from_secs(30));
    assert_refused(
        &run,
        &[
            ("zero", 8, "`skills/alpha/scripts/x.py` is a symlink entry"),
            (
                "zero-raw",
                8,
                "`skills/alpha/scripts/x.py` is a symlink entry",
            ),
        ],
    );
}

#[test]
fn hashes_of_links_fifos_and_other_non_files_are_refused_at_load() {
    let s = sandbox();
    let before = snapshot(&s.outside);
    let case = hash_case;
    s.case(
        "outside",
        &case("outside", "{symlink: \"OUT/keep.txt\"}", HASH_ENTRY),
    );
    s.case("fifo", &case("fifo", "{fifo: true}", HASH_RAW));
    s.case("socket", &case("socket", "{socket: true}", HASH_ENTRY));
    s.case("dir", &case("dir", "{dir: true}", HASH_ENTRY));
    s.case(
        "huge",
        &case("huge", "{size: 17179869184, sparse: true}", HASH_ENTRY),
    );
    s.case(
        "missing",
        &case(
            "missing",
            "\"print(1)\\n\"",
            "  script_allowlist:\n    - {skill: alpha, script: scripts/x.py, sha256_of: skills/alpha/scripts/y.py}\n",
        ),
    );
    s.case(
        "env",
        &case(
            "env",
            "\"print(1)\\n\"",
            "  env: {H: \"{sha256:skills/alpha/scripts/x.py/../../../../../dev/zero}\"}\n",
        ),
    );
    let run = s.run(Duration::from_secs(30));
    assert_refused(
        &run,
        &[
            (
                "outside",
                8,
                "`skills/alpha/scripts/x.py` is a symlink entry",
            ),
            (
                "fifo",
                8,
                "`skills/alpha/scripts/x.py` is not a regular file",
            ),
            (
                "socket",
                8,
                "`skills/alpha/scripts/x.py` is not a regular file",
            ),
            ("dir", 8, "`skills/alpha/scripts/x.py` is a directory"),
            ("huge", 8, "more than the 64 MiB"),
            (
                "missing",
                8,
                "`skills/alpha/scripts/y.py` is not an entry of the tree",
            ),
            ("env", 8, ".."),
        ],
    );
    assert_eq!(snapshot(&s.outside), before);
}

#[test]
fn repeat_expansions_are_bounded_per_value_and_per_case() {
    let s = sandbox();
    let head = |id: &str| {
        format!("id: hostile.{id}\nsummary: s.\nclauses: [discovery.portable]\ntree:\n{SKILL}steps:\n  - discover:\n    expect: {{loaded: [alpha]}}\n")
    };
    let long = "x".repeat(100_000);
    s.case(
        "value",
        &format!(
            "{}  - read: {{skill: alpha, path: {{$repeat: {long}, times: 1000000}}}}\n",
            head("value")
        ),
    );
    // 17 MiB in total from 8.5 MiB each: each value is fine, the case is not.
    let half = "y".repeat(1 << 20);
    s.case(
        "total",
        &format!(
            "{h}  - read: {{skill: alpha, path: {{$repeat: {half}, times: 8, then: abc}}}}\n  - call: {{tool: skill_read_reference, args: {{skill: alpha, path: {{$repeat: {half}, times: 9}}}}}}\n",
            h = head("total")
        ),
    );
    let run = s.run(LIMIT);
    assert_refused(
        &run,
        &[("value", 9, "`$repeat`"), ("total", 10, "`$repeat`")],
    );
}

/// Case files over a case's budgets (512 MiB of file contents, 10,000 path components, 100,000
/// `deep` levels, 4096-byte paths) are refused when they load: exit 2, naming the file, the line
/// and the case, in bounded time and memory, before any case root is made. The 640 GiB case of
/// the issue (10,000 files of 64 MiB) is one of them, written and padded.
#[test]
fn cases_over_their_budgets_are_refused_at_load_before_anything_is_written() {
    let s = sandbox();
    let head = |id: &str| {
        format!("id: hostile.{id}\nsummary: s.\nclauses: [discovery.portable]\ntree:\n{SKILL}")
    };
    let tail = "steps:\n  - discover:\n    expect: {loaded: [alpha]}\n";
    let many = |n: usize, entry: &str| -> String {
        (0..n).map(|i| format!("  f{i}: {entry}\n")).collect()
    };
    for (name, entries) in [
        ("sized", many(10_000, "{size: 67108864}")),
        ("padded", many(10_000, "{text: x, size: 67108864}")),
        ("entries", many(10_000, "{dir: true}")),
        ("deep", many(2, "{deep: {levels: 60000, name: d}}")),
        ("path", format!("  ? \"{}b\"\n  : x\n", "a/".repeat(30_000))),
    ] {
        s.case(name, &format!("{}{entries}{tail}", head(name)));
    }
    // Within the budgets, but writes push it over: refused at the `write` step's line.
    s.case(
        "write",
        &format!(
            "{}{}{tail}  - write: {{g: {{size: 67108864}}}}\n",
            head("write"),
            many(7, "{size: 67108864}")
        ),
    );
    let started = Instant::now();
    let run = s.run(LIMIT);
    let took = started.elapsed();
    assert_refused(
        &run,
        &[
            ("sized", 5, "case `hostile.sized` would make"),
            ("padded", 5, "512 MiB"),
            ("entries", 5, "10000 entries"),
            ("deep", 5, "100000 `deep` levels"),
            ("path", 5, "at most 4096 bytes"),
            ("write", 16, "case `hostile.write` would make"),
        ],
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

/// A case exactly at its entry budget loads and runs: SKILL.md (`skills/alpha/SKILL.md`, 3
/// components) and 9,997 one-byte files make 10,000 path components; a 512 MiB sparse file adds
/// one more entry but writes nothing, so it needs the budget's last component: it replaces one
/// file. (Bytes and `deep` levels at their budgets: the unit tests of `cases::budget`.)
#[test]
fn a_case_at_its_entry_budget_loads_and_runs() {
    let s = sandbox();
    let entries: String = (0..9_996).map(|i| format!("  f{i}: x\n")).collect();
    s.case(
        "at",
        &format!("id: hostile.at\nsummary: s.\nclauses: [discovery.portable]\ntree:\n{SKILL}{entries}  big: {{size: 536870912, sparse: true}}\nsteps:\n  - discover:\n    expect: {{loaded: [alpha]}}\n"),
    );
    let run = s.run(LIMIT);
    assert_eq!(run.code, Some(0), "{}", run.text);
}
