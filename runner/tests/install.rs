//! Installed anywhere: a copy of the `skillspec` binary, run from an empty directory with its own
//! `HOME` and `TMPDIR` (and, where a mount namespace can be had, with the source tree hidden under
//! an empty tmpfs), runs the embedded suite, exports it byte for byte, and names no path into the
//! source tree. And `skillspec smoke` against adapters broken in one way each.

mod common;
use common::text;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use skillspec_runner::suite::VERSION;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository exists")
}

/// A copied binary and the directories it is run with, all temporary.
struct Installed {
    _tmp: tempfile::TempDir,
    bin: PathBuf,
    work: PathBuf,
    home: PathBuf,
    tmpdir: PathBuf,
}

fn install() -> Installed {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    assert!(
        !root.starts_with(repo()),
        "the temporary directory must be outside the repository"
    );
    let (bindir, work, home, tmpdir) = (
        root.join("bin"),
        root.join("work"),
        root.join("home"),
        root.join("tmp"),
    );
    for d in [&bindir, &work, &home, &tmpdir] {
        std::fs::create_dir(d).unwrap();
    }
    let bin = bindir.join("skillspec");
    std::fs::copy(env!("CARGO_BIN_EXE_skillspec"), &bin).unwrap();
    Installed {
        _tmp: tmp,
        bin,
        work,
        home,
        tmpdir,
    }
}

impl Installed {
    /// `program args` run from the empty work directory with a clean environment (`PATH` for
    /// python3, and the temporary `HOME` and `TMPDIR`).
    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(program);
        c.args(args)
            .current_dir(&self.work)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmpdir);
        c
    }

    fn skillspec(&self, args: &[&str]) -> Output {
        // The binary was copied a moment ago: another test thread that forks while holding its
        // write descriptor (until that child's exec closes it) makes exec fail with ETXTBSY.
        // That race is the test harness's, not the program's: try again.
        let mut tries = 0;
        loop {
            match self.command(&self.bin, args).output() {
                Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                result => return result.expect("the installed copy runs"),
            }
        }
    }

    /// The same, inside a new mount namespace where the repository is an empty tmpfs. `None`
    /// when no such namespace can be had here (no `unshare`, or user namespaces refused).
    fn skillspec_without_repo(&self, args: &[&str]) -> Option<Output> {
        let script = r#"repo="$1"; shift
mount -t tmpfs none "$repo" || exit 97
[ -e "$repo/SPEC.md" ] && exit 98
echo "repository hidden" >&2
exec "$@""#;
        let mut full = vec![
            "--user",
            "--map-root-user",
            "--mount",
            "/bin/sh",
            "-c",
            script,
            "sh",
        ];
        let repo = repo().display().to_string();
        let bin = self.bin.display().to_string();
        full.push(&repo);
        full.push(&bin);
        full.extend_from_slice(args);
        let out = self.command(Path::new("unshare"), &full).output().ok()?;
        if !String::from_utf8_lossy(&out.stderr).contains("repository hidden") {
            eprintln!(
                "no mount namespace here, so the repository stays visible: {}",
                text(&out).trim()
            );
            return None;
        }
        eprintln!(
            "ran with the repository hidden: skillspec {}",
            args.join(" ")
        );
        Some(out)
    }

    /// Entries left in the private `TMPDIR`.
    fn leftovers(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.tmpdir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }
}

fn check_embedded_run(i: &Installed, out: &Output, report: &Path) {
    let t = text(out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.lines()
            .find(|l| !l.starts_with("partition "))
            .is_some_and(|l| l.contains(&format!("from the embedded suite {VERSION} against"))),
        "the run header names the embedded suite: {t}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["suite"],
        serde_json::json!({"version": VERSION, "source": "embedded"})
    );
    assert_eq!(report["cases_dir"], "embedded:spec-cases");
    let cases = report["cases"].as_array().unwrap();
    assert!(cases.len() > 50, "{} cases", cases.len());
    assert!(cases.iter().all(|c| c["file"]
        .as_str()
        .is_some_and(|f| f.starts_with("embedded:spec-cases/"))));
    // Some cases copy fixtures: they came from the embedded ones, and the copy is gone.
    assert!(
        t.contains("\nresult: ok. 0 unsafe; 0 permissive; 0 safe but different;"),
        "{t}"
    );
    assert_eq!(
        i.leftovers(),
        Vec::<PathBuf>::new(),
        "the run left temporary files behind"
    );
}

#[test]
fn an_installed_binary_runs_the_embedded_suite_from_anywhere() {
    let i = install();
    let report = i.work.join("report");
    // One slice of the suite (a third, by id hash); `.ci/run` runs an installed binary on the
    // whole suite from an empty directory.
    let args = [
        "run",
        "--partition",
        "1/3",
        "--report",
        report.to_str().unwrap(),
    ];
    let out = match i.skillspec_without_repo(&args) {
        Some(out) => out,
        None => i.skillspec(&args),
    };
    check_embedded_run(&i, &out, &report);

    // Through the adapter protocol too (one area, to keep the test short).
    let adapter = format!("{} adapter", i.bin.display());
    let report = i.work.join("report-adapter");
    let args = [
        "run",
        "--adapter",
        &adapter,
        "--filter",
        "read.*",
        "--report",
        report.to_str().unwrap(),
    ];
    let out = match i.skillspec_without_repo(&args) {
        Some(out) => out,
        None => i.skillspec(&args),
    };
    check_embedded_run(&i, &out, &report);
}

#[test]
fn an_explicit_cases_directory_is_used_and_named() {
    let i = install();
    let export = i.work.join("suite");
    let out = i.skillspec(&["export", export.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cases = export.join("spec-cases");
    let report_dir = i.work.join("report");
    let out = i.skillspec(&[
        "run",
        "--cases",
        cases.to_str().unwrap(),
        "--filter",
        "run.exec.*",
        "--report",
        report_dir.to_str().unwrap(),
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.lines()
            .next()
            .is_some_and(|l| l.contains(&format!("from {} (suite {VERSION})", cases.display()))),
        "{t}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["suite"],
        serde_json::json!({"version": VERSION, "source": "directory"})
    );
    // Without a SUITE_VERSION beside it, a directory has no version.
    std::fs::remove_file(export.join("SUITE_VERSION")).unwrap();
    let out = i.skillspec(&[
        "run",
        "--cases",
        cases.to_str().unwrap(),
        "--filter",
        "read.errors.*",
        "--report",
        report_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["suite"]["version"], serde_json::Value::Null);
    // A ./spec-cases in the working directory is not picked up silently.
    std::fs::rename(&cases, i.work.join("spec-cases")).unwrap();
    let out = i.skillspec(&["run", "--filter", "read.errors.unknown-skill"]);
    let t = text(&out);
    assert!(t.contains("from the embedded suite"), "{t}");
    assert!(t.contains("./spec-cases is not used"), "{t}");
}

/// The files the build script embeds, as they are in the repository.
fn repository_files() -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "__pycache__" || name.ends_with(".pyc") {
                continue;
            }
            let path = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap();
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let root = repo();
    let mut out = Vec::new();
    for d in ["spec-cases", "fixtures", "protocol"] {
        walk(&root, &root.join(d), &mut out);
    }
    for f in [
        "SPEC.md",
        "PROTOCOL.md",
        "SUITE_VERSION",
        "reports/report.schema.json",
    ] {
        out.push(f.into());
    }
    out.sort();
    out
}

#[test]
fn export_writes_the_repository_files_byte_for_byte() {
    use std::os::unix::fs::PermissionsExt;
    let i = install();
    let dest = i.work.join("exported");
    let out = i.skillspec(&["export", dest.to_str().unwrap()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let expected = repository_files();
    assert!(expected.len() > 100);
    assert!(
        t.contains(&format!(
            "wrote {} files of suite {VERSION}",
            expected.len()
        )),
        "{t}"
    );
    let mut exported = Vec::new();
    let mut stack = vec![dest.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                exported.push(
                    path.strip_prefix(&dest)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    exported.sort();
    assert_eq!(exported, expected, "exactly the repository's files");
    let root = repo();
    for rel in &expected {
        let (a, b) = (root.join(rel), dest.join(rel));
        assert!(
            std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
            "{rel} differs from the repository's"
        );
        let exec = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o100 != 0;
        assert_eq!(exec(&a), exec(&b), "{rel}: execute bit");
    }

    // Nothing is overwritten without --force, and nothing at all is written then.
    std::fs::write(dest.join("SPEC.md"), "mine").unwrap();
    std::fs::remove_file(dest.join("PROTOCOL.md")).unwrap();
    let out = i.skillspec(&["export", dest.to_str().unwrap()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("--force") && t.contains("nothing was written"),
        "{t}"
    );
    assert_eq!(std::fs::read(dest.join("SPEC.md")).unwrap(), b"mine");
    assert!(!dest.join("PROTOCOL.md").exists());
    let out = i.skillspec(&["export", "--force", dest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read(dest.join("SPEC.md")).unwrap(),
        std::fs::read(root.join("SPEC.md")).unwrap()
    );
    assert!(dest.join("PROTOCOL.md").is_file());
}

#[test]
fn the_binary_names_no_directory_of_the_source_tree() {
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_skillspec")).unwrap();
    let contains = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    let old_fallback = skillspec_runner::default_cases_dir();
    let root = repo();
    for needle in [
        old_fallback.display().to_string(),
        skillspec_runner::default_fixtures_dir()
            .display()
            .to_string(),
        root.join("spec-cases").display().to_string(),
        root.join("fixtures").display().to_string(),
    ] {
        assert!(!contains(&needle), "the binary holds the path {needle}");
    }
}

#[test]
fn version_names_runner_suite_and_protocol() {
    let i = install();
    let out = i.skillspec(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!(
            "skillspec {} (suite {VERSION}, protocol {})",
            env!("CARGO_PKG_VERSION"),
            skillspec_runner::protocol::PROTOCOL_VERSION
        )
    );
    let file = std::fs::read_to_string(repo().join("SUITE_VERSION")).unwrap();
    assert_eq!(file.trim(), VERSION);
}

// ---- smoke ----

/// A Python adapter that forwards to `skillspec adapter` and breaks the protocol in one way.
const PROXY: &str = r#"import json, subprocess, sys, time
skillspec, mode = sys.argv[1], sys.argv[2]
if mode == "exits":
    sys.stderr.write("my_adapter: cannot import my_runtime\n")
    sys.exit(4)
if mode == "silent":
    time.sleep(30)
    sys.exit(0)
if mode == "slow":
    time.sleep(2.3)
inner = subprocess.Popen([skillspec, "adapter"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for raw in sys.stdin:
    request = json.loads(raw)
    inner.stdin.write(raw.encode())
    inner.stdin.flush()
    if request["type"] == "stop":
        break
    answer = json.loads(inner.stdout.readline())
    if mode == "logs" and request["type"] == "case_start":
        print("INFO my_runtime: loading skills from", request["root"], flush=True)
    if mode == "version" and answer["type"] == "started":
        answer["protocol_version"] = 1
    if mode == "seq" and answer["type"] == "case_started":
        answer["seq"] += 1
    if mode == "index" and answer["type"] == "step_result":
        answer["index"] += 1
    if mode == "shape" and answer["type"] == "step_result" and "loaded" in answer["result"]:
        answer["result"] = {"skills": [g["id"] for g in answer["result"]["loaded"]]}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
inner.stdin.close()
inner.wait()
"#;

/// Smoke with a generous timeout (a loaded machine must not turn a slow answer into a missing
/// one); the adapter that never answers gets 2 s.
fn smoke(i: &Installed, mode: &str) -> (Option<i32>, String) {
    smoke_within(i, mode, if mode == "silent" { "2" } else { "20" })
}

fn smoke_within(i: &Installed, mode: &str, timeout: &str) -> (Option<i32>, String) {
    let proxy = i.work.join("proxy.py");
    std::fs::write(&proxy, PROXY).unwrap();
    let cmd = format!("python3 {} {} {mode}", proxy.display(), i.bin.display());
    let out = i.skillspec(&["smoke", "--timeout", timeout, "--adapter", &cmd]);
    (out.status.code(), text(&out))
}

#[test]
fn smoke_says_an_adapter_that_works_looks_good() {
    let i = install();
    let cmd = format!("{} adapter", i.bin.display());
    let out = i.skillspec(&["smoke", "--adapter", &cmd]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert_eq!(t.matches(" pass\n").count(), 5, "{t}");
    assert!(t.contains("process_per_case: no"), "{t}");
    assert!(!t.contains("problem") && !t.contains("warning"), "{t}");
    assert!(
        t.trim_end().ends_with(&format!(
            "looks good: run `skillspec run --adapter '{cmd}'`"
        )),
        "{t}"
    );

    let cmd = format!("{} adapter --process-per-case", i.bin.display());
    let out = i.skillspec(&["smoke", "--adapter", &cmd]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("process_per_case: yes") && t.contains("(5 start(s)"),
        "{t}"
    );
    assert!(i.leftovers().is_empty(), "{:?}", i.leftovers());
}

#[test]
fn smoke_diagnoses_an_adapter_that_never_answers() {
    let i = install();
    let (code, t) = smoke(&i, "silent");
    assert_eq!(code, Some(3), "{t}");
    assert!(
        t.contains("no handshake: nothing on stdout within 2 s after `start` (the process is still running)"),
        "{t}"
    );
    assert!(t.contains("flush stdout"), "{t}");
    assert!(t.contains("not usable: fix the 1 problem(s)"), "{t}");
}

#[test]
fn smoke_diagnoses_an_adapter_that_exits() {
    let i = install();
    let (code, t) = smoke(&i, "exits");
    assert_eq!(code, Some(3), "{t}");
    assert!(
        t.contains("no handshake: the adapter exited before answering `start`"),
        "{t}"
    );
    assert!(t.contains("exit status 4"), "{t}");
    assert!(t.contains("| my_adapter: cannot import my_runtime"), "{t}");

    let out = i.skillspec(&["smoke", "--adapter", "no-such-adapter-command"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(
        t.contains("exit status 127: /bin/sh did not find the command"),
        "{t}"
    );
}

#[test]
fn smoke_diagnoses_logging_on_stdout() {
    let i = install();
    let (code, t) = smoke(&i, "logs");
    assert_eq!(code, Some(3), "{t}");
    assert!(t.contains("stdout is polluted"), "{t}");
    assert!(t.contains("\"INFO my_runtime: loading skills from "), "{t}");
    assert!(
        t.contains("your runtime or adapter prints to stdout; log to stderr"),
        "{t}"
    );
    // The pollution is skipped, so the cases themselves still ran and passed.
    assert_eq!(t.matches(" pass\n").count(), 5, "{t}");
}

#[test]
fn smoke_diagnoses_the_wrong_protocol_version() {
    let i = install();
    let (code, t) = smoke(&i, "version");
    assert_eq!(code, Some(3), "{t}");
    assert!(
        t.contains("wrong protocol_version: the adapter answered 1, this runner speaks 2"),
        "{t}"
    );
    assert!(t.contains("fix the 1 problem(s)"), "{t}");
}

#[test]
fn smoke_diagnoses_a_wrong_seq_or_index() {
    let i = install();
    let (code, t) = smoke(&i, "seq");
    assert_eq!(code, Some(3), "{t}");
    assert!(
        t.contains("wrong `seq`: the answer must echo the request's `seq` (seen 5 times)"),
        "{t}"
    );
    assert!(
        t.contains("`case_start` seq 1 was answered with `seq` 2"),
        "{t}"
    );
    let (code, t) = smoke(&i, "index");
    assert_eq!(code, Some(3), "{t}");
    assert!(t.contains("wrong `index`"), "{t}");
    assert!(
        t.contains("(op `discover`) was answered with `index` 1"),
        "{t}"
    );
}

#[test]
fn smoke_diagnoses_a_result_of_the_wrong_shape() {
    let i = install();
    let (code, t) = smoke(&i, "shape");
    assert_eq!(code, Some(3), "{t}");
    assert!(
        t.contains("a step result does not match protocol/step-result.schema.json"),
        "{t}"
    );
    assert!(t.contains("at /: `skills` is not allowed here"), "{t}");
    assert!(t.contains("at /: `loaded` is required and missing"), "{t}");
}

#[test]
fn smoke_warns_of_a_slow_start_but_accepts_it() {
    let i = install();
    let (code, t) = smoke(&i, "slow");
    assert_eq!(code, Some(0), "{t}");
    // The adapter sleeps 2.3 s before it starts: at least that, however loaded the machine.
    let took: f64 = t
        .split("warning 1: slow start: the handshake took ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no slow-start warning: {t}"));
    assert!(took >= 2.3, "{t}");
    assert!(t.contains("s (more than 2 s)"), "{t}");
    assert!(t.contains("looks good"), "{t}");
}
