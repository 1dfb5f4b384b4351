//! The fuzz targets, shared by the fuzz driver (`runner/examples/fuzz.rs`, `.ci/fuzz`) and the
//! regression test (`runner/tests/fuzz_regressions.rs`, under `cargo test`).
//!
//! Each target takes arbitrary bytes and checks, for every input: it never panics, it stays
//! within a time and a memory bound ([`Bounds`], memory counted by the [`Counting`] allocator
//! that both programs install), and it satisfies an oracle where one exists: an accepted path
//! never reads outside the skill directory; frontmatter, YAML, legacy lines, policies and
//! protocol responses print and parse back to what they were; error messages name their file
//! and a line that exists.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::os::unix::fs::symlink;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{json, Value};
use skillspec_reference::policy::Policy;
use skillspec_reference::skill_path::{validate, PathScope};
use skillspec_reference::yaml::{self, Document, Tree, Value as YValue};
use skillspec_reference::{frontmatter, legacy, Config, ErrorCode, Runtime};
use skillspec_runner::cases::parse_case;
use skillspec_runner::implementations::adapter::decode_response;
use skillspec_runner::protocol::features::split_declared;
use skillspec_runner::protocol::{Response, StepOutcome, WireStep};

// ---------------------------------------------------------------------------------------------
// Memory accounting

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting the bytes live now and the most live since the last reset.
pub struct Counting;

fn grew(n: usize) {
    let now = CURRENT.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrank(n: usize) {
    CURRENT.fetch_sub(n, Ordering::Relaxed);
}

// SAFETY: every method forwards its arguments unchanged to `System`, whose `GlobalAlloc` contract
// is therefore met exactly as the caller meets ours; the only other thing done is updating two
// atomic counters, which neither allocates nor touches the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

/// The CPU time this thread has used (wall time would count other processes on a busy machine).
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` to the valid, exclusively borrowed `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// The per-input limits: CPU time, and heap bytes above what was live before the input
/// (`memory_fixed` plus `memory_per_byte` per input byte).
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub time: Duration,
    pub memory_fixed: usize,
    pub memory_per_byte: usize,
}

impl Bounds {
    /// For an optimised build (the fuzz driver).
    pub const RELEASE: Bounds = Bounds {
        time: Duration::from_secs(1),
        memory_fixed: 16 << 20,
        memory_per_byte: 64,
    };
    /// For the unoptimised test build (the regression test): the same memory, more time.
    pub const DEBUG: Bounds = Bounds {
        time: Duration::from_secs(20),
        ..Bounds::RELEASE
    };
}

/// The longest input the driver generates (mutations that grow past it are cut).
pub const MAX_INPUT: usize = 64 << 10;

// ---------------------------------------------------------------------------------------------
// Targets

/// One fuzz target.
pub struct Target {
    pub name: &'static str,
    /// Valid and nearly valid inputs the driver mutates.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Tokens the driver splices in.
    pub dict: &'static [&'static str],
    /// The check of one input: `Err` is a finding (the oracle failed).
    pub check: fn(&[u8]) -> Result<(), String>,
}

pub const TARGETS: [Target; 6] = [
    Target {
        name: "path",
        seeds: path_seeds,
        dict: &[
            "references/",
            "scripts/",
            "SKILL.md",
            "..",
            ".",
            "/",
            "//",
            "\\",
            ":",
            ".md",
            ".py",
            ".MD",
            "out/",
            "up.md",
            "abs/",
            "secret.md",
            "\u{0}",
            "\u{85}",
            "\u{2215}",
            "\u{ff0e}",
            "%2e%2e",
            "sub/",
            "a.md",
        ],
        check: check_path,
    },
    Target {
        name: "frontmatter-yaml",
        seeds: yaml_seeds,
        dict: &[
            "---\n",
            "\n",
            ": ",
            "- ",
            "&a ",
            "*a",
            "!!str ",
            "!x ",
            "? ",
            "[",
            "]",
            "{",
            "}",
            ",",
            "\"",
            "'",
            "|\n",
            ">-\n",
            "#",
            "  ",
            "\t",
            "\r\n",
            "\u{feff}",
            "name",
            "0x1",
            ".nan",
            "~",
            "\\u0041",
            "...\n",
            "%YAML 1.2\n",
            "<<: *a\n",
        ],
        check: check_yaml,
    },
    Target {
        name: "legacy",
        seeds: legacy_seeds,
        dict: &[
            "name",
            "description",
            ":",
            ": ",
            "\n",
            "\r\n",
            "#",
            "\"",
            "'",
            " ",
            "\t",
            "\u{feff}",
            "\u{85}",
            "\u{a0}",
        ],
        check: check_legacy,
    },
    Target {
        name: "policy",
        seeds: policy_seeds,
        dict: &[
            "[",
            "]",
            "{",
            "}",
            ",",
            ":",
            "\"skill\"",
            "\"script\"",
            "\"sha256\"",
            "\"a\"",
            "\"scripts/x.py\"",
            H,
            "\"\\u0000\"",
            "null",
            "1",
            "\"x\":1",
            "\\\"",
        ],
        check: check_policy,
    },
    Target {
        name: "case-file",
        seeds: case_seeds,
        dict: &[
            "id: ",
            "summary: ",
            "clauses: ",
            "tree:\n",
            "steps:\n",
            "  - ",
            "read: ",
            "run: ",
            "discover: {}\n",
            "expect:\n",
            "error: ",
            "config:\n",
            "copy: ",
            "$repeat: ",
            "\n",
            "    ",
            "{",
            "}",
            "[",
            "]",
            "&a ",
            "*a",
            "!!binary ",
            "symlink: ",
            "size: ",
            "preconditions: ",
            "..",
            "/",
            "18446744073709551616",
        ],
        check: check_case_file,
    },
    Target {
        name: "adapter-response",
        seeds: response_seeds,
        dict: &[
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"type\"",
            "\"step_result\"",
            "\"started\"",
            "\"error\"",
            "\"seq\"",
            "\"index\"",
            "\"result\"",
            "\"ok\"",
            "true",
            "false",
            "null",
            "\"loaded\"",
            "\"offered\"",
            "\"value\"",
            "\"code\"",
            "\"selected\"",
            "1e999",
            "-1",
            "18446744073709551616",
            "\"\\ud800\"",
            "\u{ff}",
        ],
        check: check_response,
    },
];

/// Runs `target` on `input` under `bounds`: a panic, a bound passed or an oracle failure is an
/// `Err` saying which.
pub fn run(target: &Target, input: &[u8], bounds: Bounds) -> Result<(), String> {
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let start = thread_cpu_time();
    let outcome = catch_unwind(AssertUnwindSafe(|| (target.check)(input)));
    let took = thread_cpu_time().saturating_sub(start);
    let grew = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    match outcome {
        Err(payload) => {
            let what = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            return Err(format!("panicked: {what}"));
        }
        Ok(Err(oracle)) => return Err(format!("oracle: {oracle}")),
        Ok(Ok(())) => {}
    }
    if took > bounds.time {
        return Err(format!(
            "took {:.3} s of CPU time, more than the bound of {:.3} s",
            took.as_secs_f64(),
            bounds.time.as_secs_f64()
        ));
    }
    let limit = bounds.memory_fixed + bounds.memory_per_byte * input.len();
    if grew > limit {
        return Err(format!(
            "allocated {grew} bytes at peak for a {}-byte input, more than the bound of {limit}",
            input.len()
        ));
    }
    Ok(())
}

/// Builds what a target keeps between inputs (the path target's skills tree), outside any
/// measurement.
pub fn prepare() {
    with_tree(|_| ());
}

fn ensure(cond: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(what())
    }
}

fn text(input: &[u8]) -> String {
    String::from_utf8_lossy(input).into_owned()
}

/// How many lines `text` has for YAML, where `\r\n`, `\r` and `\n` each end a line.
fn yaml_lines(text: &str) -> usize {
    text.replace("\r\n", "\n").matches(['\r', '\n']).count() + 1
}

// --- path --------------------------------------------------------------------------------------

const CANARY: &str = "OUTSIDE-CANARY-7f3a";

fn path_seeds() -> Vec<Vec<u8>> {
    [
        "SKILL.md",
        "references/a.md",
        "references/sub/b.md",
        "references/out/secret.md",
        "references/up.md",
        "references/abs/secret.md",
        "references/../../../outside/secret.md",
        "scripts/x.py",
        "scripts/../references/a.md",
        "/etc/hostname",
        "references\\a.md",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

thread_local! {
    static TREE: RefCell<Option<(tempfile::TempDir, Runtime)>> = const { RefCell::new(None) };
}

/// A skill `alpha` whose references include links out of it (to a directory, to a file, by an
/// absolute path), and a canary file outside it.
fn with_tree<T>(f: impl FnOnce(&mut Runtime) -> T) -> T {
    TREE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let (_, rt) = slot.get_or_insert_with(|| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let root = dir.path();
            let skill = root.join("skills/alpha");
            let build = || -> std::io::Result<()> {
                std::fs::create_dir_all(skill.join("references/sub"))?;
                std::fs::create_dir_all(skill.join("scripts"))?;
                std::fs::create_dir_all(root.join("outside"))?;
                std::fs::write(
                    skill.join("SKILL.md"),
                    "---\nname: alpha\ndescription: d\n---\nBody\n",
                )?;
                std::fs::write(skill.join("references/a.md"), "inside a")?;
                std::fs::write(skill.join("references/sub/b.md"), "inside b")?;
                std::fs::write(skill.join("scripts/x.py"), "print('x')\n")?;
                std::fs::write(root.join("outside/secret.md"), CANARY)?;
                std::fs::write(root.join("outside/x.py"), CANARY)?;
                symlink("../../../outside", skill.join("references/out"))?;
                symlink("../../../outside/secret.md", skill.join("references/up.md"))?;
                symlink(root.join("outside"), skill.join("references/abs"))?;
                symlink("../../../outside", skill.join("scripts/out"))?;
                Ok(())
            };
            build().expect("the path target's tree");
            let rt = Runtime::start(Config {
                skills_root: Some(root.join("skills")),
                ..Config::default()
            });
            (dir, rt)
        });
        f(rt)
    })
}

fn check_path(input: &[u8]) -> Result<(), String> {
    let path = text(input);
    for scope in [
        PathScope::Reference,
        PathScope::Script,
        PathScope::HitlScript,
        PathScope::HitlFile,
    ] {
        let Ok(segments) = validate(&path, scope) else {
            continue;
        };
        ensure(segments.join("/") == path, || {
            format!("{scope:?}: segments {segments:?} do not rebuild {path:?}")
        })?;
        ensure(
            !path.starts_with('/')
                && !path.contains(['\\', ':'])
                && !path.chars().any(char::is_control),
            || format!("{scope:?}: accepted {path:?}, which has a forbidden character"),
        )?;
        // Lexically, the path stays below the skill directory at every step.
        let mut depth = 0i64;
        for s in &segments {
            ensure(!s.is_empty() && *s != "." && *s != "..", || {
                format!("{scope:?}: accepted {path:?} with the segment {s:?}")
            })?;
            depth += 1;
        }
        ensure(
            Path::new("skill")
                .join(&path)
                .components()
                .skip(1)
                .all(|c| matches!(c, std::path::Component::Normal(_))),
            || format!("{scope:?}: {path:?} has a component that is not a plain name"),
        )?;
        let first_ok = match scope {
            PathScope::Reference => path == "SKILL.md" || segments[0] == "references",
            PathScope::Script => segments[0] == "scripts",
            // Profile hitl: a `.py` anywhere in the skill; a file below references/ or assets/.
            PathScope::HitlScript => path.ends_with(".py"),
            PathScope::HitlFile => {
                segments.len() >= 2 && matches!(segments[0], "references" | "assets")
            }
        };
        ensure(first_ok && depth >= 1, || {
            format!("{scope:?}: accepted {path:?} outside the tool's directories")
        })?;
    }
    // On a real tree with links out of the skill: whatever the validator says, the canary
    // outside never comes back, and what it rejects the tool rejects as invalid_path.
    with_tree(|rt| {
        // Each input is a turn of its own: one long turn would keep every earlier call for reuse
        // (SPEC `tools.turn-reuse`), so the kept calls, not this input, would fill the memory
        // bound after some 130,000 calls (a finding of CI's fuzz run: 131,072 kept calls of
        // 136 bytes each).
        rt.new_turn();
        let read = rt.call(
            "skill_read_reference",
            &json!({"skill": "alpha", "path": path}),
        );
        let run = rt.call(
            "skill_run_script",
            &json!({"skill": "alpha", "script": path}),
        );
        for (scope, tool, result) in [
            (PathScope::Reference, "skill_read_reference", &read),
            (PathScope::Script, "skill_run_script", &run),
        ] {
            let shown = format!("{result:?}");
            ensure(!shown.contains(CANARY), || {
                format!("{tool} of {path:?} read outside the skill directory: {shown}")
            })?;
            if validate(&path, scope).is_err() {
                ensure(
                    matches!(result, Err(e) if e.code == ErrorCode::InvalidPath),
                    || {
                        format!(
                            "{tool} of the invalid {path:?} did not answer invalid_path: {shown}"
                        )
                    },
                )?;
            }
        }
        ensure(run.is_err(), || {
            format!("skill_run_script of {path:?} ran without any allowlist: {run:?}")
        })
    })
}

// --- frontmatter and YAML ----------------------------------------------------------------------

fn yaml_seeds() -> Vec<Vec<u8>> {
    [
        "---\nname: alpha\ndescription: first\n---\nBody\n",
        "\u{feff}--- \r\nname: a\r\n---\t\r\nBody",
        "---\nname: &a x\ndescription: *a\nlist: [1, 2, {k: v}]\n---\n",
        "---\nname: \"q\\u0041\"\ndescription: |\n  block\n  text\n---\nb",
        "---\n? complex\n: value\n1: one\n0x1: dup\n---\n",
        "---\na: &x [*x]\n---\n",
        "---\nname: !!str 5\ndescription: !custom y\nmeta:\n  deep:\n    - a\n---\n",
        "---\nname: a\nname: b\n---\n",
        "---\n- not\n- a map\n---\n",
        "---\nname: 'it''s'\ndescription: >-\n  folded\n  lines\n...\n---\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

/// A YAML double-quoted scalar for `s`, escaping everything but printable ASCII.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// A YAML text whose top-level entries read back as `doc`'s (explicit keys: no length limit).
fn print_entries(doc: &Document) -> String {
    let mut out = String::new();
    for e in &doc.entries {
        let value = match &e.value {
            YValue::Str(s) => quoted(s),
            YValue::Null => "null".into(),
            YValue::Bool => "true".into(),
            YValue::Int => "1".into(),
            YValue::Float => "1.5".into(),
            YValue::Tagged => "!x a".into(),
            YValue::Sequence => "[]".into(),
            YValue::Mapping => "{}".into(),
        };
        out.push_str(&format!("? {}\n: {value}\n", quoted(&e.key)));
    }
    out
}

fn check_yaml(input: &[u8]) -> Result<(), String> {
    let text = text(input);
    let lines = yaml_lines(&text);
    let Ok(split) = frontmatter::split(&text) else {
        return check_yaml_text(&text, lines);
    };
    // Frontmatter and body are pieces of the text, and put back together they split the same.
    ensure(
        split.frontmatter.is_empty() || split.frontmatter.ends_with('\n'),
        || format!("frontmatter {:?} does not end a line", split.frontmatter),
    )?;
    ensure(split.body.trim() == split.body, || {
        format!("body {:?} is not trimmed", split.body)
    })?;
    let again = format!("---\n{}---\n{}", split.frontmatter, split.body);
    let resplit = frontmatter::split(&again).map_err(|e| format!("re-split failed: {e}"))?;
    ensure(
        resplit.frontmatter == split.frontmatter && resplit.body == split.body,
        || format!("split of {again:?} is not {split:?}"),
    )?;
    check_yaml_text(split.frontmatter, lines)
}

fn check_yaml_text(text: &str, lines: usize) -> Result<(), String> {
    let plain = yaml::parse(text);
    let full = yaml::parse_tree(text);
    match (&plain, &full) {
        (Err(a), Err(b)) => {
            ensure(a == b, || {
                format!("parse and parse_tree disagree: {a:?} / {b:?}")
            })?;
            return ensure(a.line() <= lines + 1, || {
                format!("error {a:?} names line {} of {lines}", a.line())
            });
        }
        (Ok(a), Ok(b)) => ensure(
            a.root == b.root && a.entries == b.entries && a.other_keys == b.other_keys,
            || format!("parse and parse_tree disagree: {a:?} / {b:?}"),
        )?,
        _ => {
            return Err(format!(
                "parse and parse_tree disagree: {plain:?} / {full:?}"
            ))
        }
    }
    let Ok(doc) = full else { return Ok(()) };
    // The tree agrees with the entries.
    if let Some(tree) = &doc.tree {
        for e in &doc.entries {
            if let YValue::Str(s) = &e.value {
                let ok = matches!(tree.get(&e.key), Some(Tree::Scalar { value: YValue::Str(t), .. }) if t == s);
                ensure(ok, || {
                    format!("the tree's `{}` is not the string {s:?}", e.key)
                })?;
            }
        }
    }
    // Printed and read again, the top-level entries are the same.
    if doc.root == YValue::Mapping && !doc.entries.is_empty() {
        let printed = print_entries(&doc);
        let back = yaml::parse(&printed)
            .map_err(|e| format!("the printed entries do not parse: {e:?}\n{printed}"))?;
        let pairs = |d: &Document| -> Vec<(String, YValue)> {
            d.entries
                .iter()
                .map(|e| (e.key.clone(), e.value.clone()))
                .collect()
        };
        ensure(pairs(&back) == pairs(&doc), || {
            format!(
                "round trip changed the entries: {:?} -> {:?}",
                pairs(&doc),
                pairs(&back)
            )
        })?;
    }
    Ok(())
}

// --- legacy lines ------------------------------------------------------------------------------

fn legacy_seeds() -> Vec<Vec<u8>> {
    [
        "name: alpha\ndescription: first\n",
        "  name: \"quoted\"  \r\nname: b\n# name: hidden\n: nokey\n",
        "description: Use when: x\nname:foo\nname: 'single'\nx: \"mismatch'\n",
        "name: x\u{feff}\u{85}\n  name \t: spaced  \n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

fn check_legacy(input: &[u8]) -> Result<(), String> {
    let text = text(input);
    let pairs = legacy::parse_lines(&text);
    for (i, (k, _)) in pairs.iter().enumerate() {
        ensure(
            !k.is_empty() && !k.contains(':') && !k.starts_with('#'),
            || format!("key {k:?} cannot come from a line"),
        )?;
        ensure(pairs[..i].iter().all(|(o, _)| o != k), || {
            format!("key {k:?} appears twice")
        })?;
    }
    // Printed as `key: "value"` lines, the pairs read back unchanged.
    let printed: String = pairs
        .iter()
        .map(|(k, v)| format!("{k}: \"{v}\"\n"))
        .collect();
    let back = legacy::parse_lines(&printed);
    ensure(back == pairs, || {
        format!("round trip changed {pairs:?} into {back:?}")
    })
}

// --- policy ------------------------------------------------------------------------------------

const H: &str = "\"ab0000000000000000000000000000000000000000000000000000000000000c\"";

fn policy_seeds() -> Vec<Vec<u8>> {
    let e = |skill: &str, script: &str| {
        format!(r#"{{"skill":"{skill}","script":"{script}","sha256":{H}}}"#)
    };
    [
        "[]".to_owned(),
        format!("[{}]", e("a", "scripts/x.py")),
        format!("[{},{}]", e("a", "scripts/x.py"), e("b", "scripts/y.py")),
        format!("[{},{}]", e("a", "scripts/x.py"), e("a", "scripts/x.py")),
        r#"[{"skill":"a","script":"s","sha256":"AB"}]"#.to_owned(),
        "{}".to_owned(),
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

fn check_policy(input: &[u8]) -> Result<(), String> {
    let text = text(input);
    let policy = Policy::parse(Some(&text));
    let raw: Option<Vec<Value>> = serde_json::from_str(&text).ok();
    match &policy {
        Policy::Valid(entries) => {
            for (i, e) in entries.iter().enumerate() {
                ensure(
                    e.sha256.len() == 64
                        && e.sha256
                            .bytes()
                            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                    || format!("entry {i} approved with the digest {:?}", e.sha256),
                )?;
                ensure(
                    entries[..i]
                        .iter()
                        .all(|o| (&o.skill, &o.script) != (&e.skill, &e.script)),
                    || format!("entry {i} is a duplicate, yet the policy is valid"),
                )?;
                ensure(policy.approves(&e.skill, &e.script, &e.sha256), || {
                    format!("entry {i} is listed but not approved")
                })?;
                let mut other = e.sha256.clone();
                other.replace_range(0..1, if other.starts_with('0') { "1" } else { "0" });
                let listed = entries
                    .iter()
                    .any(|o| o.skill == e.skill && o.script == e.script && o.sha256 == other);
                ensure(
                    listed || !policy.approves(&e.skill, &e.script, &other),
                    || format!("entry {i} approves a digest it does not list"),
                )?;
            }
            // Printed and read again, the policy is the same.
            let printed = serde_json::to_string(
                &entries
                    .iter()
                    .map(|e| json!({"skill": e.skill, "script": e.script, "sha256": e.sha256}))
                    .collect::<Vec<_>>(),
            )
            .map_err(|e| e.to_string())?;
            let back = Policy::parse(Some(&printed));
            ensure(back == policy, || {
                format!("round trip changed the policy: {back:?}")
            })?;
            ensure(raw.is_some_and(|r| r.len() == entries.len()), || {
                "a valid policy that is not a JSON array of its entries".to_owned()
            })
        }
        Policy::Invalid(why) => {
            ensure(!why.is_empty(), || {
                "an invalid policy without a reason".into()
            })?;
            // Nothing is approved, whatever the entries that did parse say.
            for v in raw.iter().flatten() {
                let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
                ensure(
                    !policy.approves(field("skill"), field("script"), field("sha256")),
                    || format!("an invalid policy approves {v}"),
                )?;
                ensure(policy.approved_scripts(field("skill")).is_empty(), || {
                    format!("an invalid policy lists scripts for {v}")
                })?;
            }
            Ok(())
        }
        Policy::Unset => Err("a policy text parsed as unset".into()),
    }
}

// --- case files --------------------------------------------------------------------------------

fn case_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut dirs = vec![skillspec_runner::default_cases_dir()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                if let Ok(bytes) = std::fs::read(&p) {
                    out.push(bytes);
                }
            }
        }
    }
    out.sort();
    if out.is_empty() {
        out.push(b"id: a.b\nsummary: s\nclauses: [read.path.backslash]\nsteps: []\n".to_vec());
    }
    out
}

fn check_case_file(input: &[u8]) -> Result<(), String> {
    let text = text(input);
    let file = Path::new("fuzz/read/case.yaml");
    let lines = yaml_lines(&text);
    match parse_case(file, Some("read"), &text) {
        Ok(case) => {
            let again = parse_case(file, Some("read"), &text)
                .map_err(|e| format!("the same text failed the second time: {e}"))?;
            ensure(again == case, || "the same text parsed differently".into())
        }
        Err(e) => {
            ensure(e.file == file, || format!("the error names {:?}", e.file))?;
            ensure(!e.message.trim().is_empty(), || {
                "an empty error message".into()
            })?;
            ensure(e.line.is_none_or(|l| l >= 1 && l <= lines + 1), || {
                format!(
                    "the error names line {:?} of {lines}: {}",
                    e.line, e.message
                )
            })
        }
    }
}

// --- adapter responses -------------------------------------------------------------------------

fn response_seeds() -> Vec<Vec<u8>> {
    [
        r#"{"type":"started","protocol_version":2,"implementation":{"name":"x","version":"1","language":"py","features":[]}}"#,
        r#"{"type":"case_started","seq":1}"#,
        r#"{"type":"case_ended","seq":1}"#,
        r#"{"type":"error","seq":null,"message":"no"}"#,
        r#"{"type":"step_result","seq":1,"index":0,"result":{"loaded":[{"id":"a","format":"portable","name":"a","description":"d","body":"b"}],"skipped":[{"path":"x","reason":"duplicate"}]}}"#,
        r#"{"type":"step_result","seq":1,"index":1,"result":{"offered":["skill_read_reference"]}}"#,
        r#"{"type":"step_result","seq":1,"index":2,"result":{"text":"p","baseline":"b"}}"#,
        r#"{"type":"step_result","seq":1,"index":3,"result":{"ok":true,"value":{"content":"x"}}}"#,
        r#"{"type":"step_result","seq":1,"index":4,"result":{"ok":false,"error":{"code":"not_found","message":"m"}}}"#,
        r#"{"type":"step_result","seq":1,"index":5,"result":{}}"#,
        r#"{"type":"step_result","seq":1,"index":6,"result":{"selected":[{"name":"a","score":3,"trust":"trusted"}],"tool_ceiling":["t"]}}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

fn check_response(input: &[u8]) -> Result<(), String> {
    let response = match decode_response(input.to_vec()) {
        Ok(r) => r,
        Err(message) => {
            return ensure(!message.to_string().is_empty(), || {
                "an empty decode error".into()
            });
        }
    };
    // A decoded message, sent again, decodes to itself; but feature names this runner does not
    // know are kept apart (`unknown_features`, for the run header's warning) and never sent, so
    // they are compared apart: each must really be unknown.
    let mut response = response;
    if let Response::Started { implementation, .. } = &mut response {
        for name in std::mem::take(&mut implementation.unknown_features) {
            let (known, _) = split_declared(vec![name.clone()]);
            ensure(known.is_empty(), || {
                format!("the known feature `{name}` was set apart as unknown")
            })?;
        }
    }
    let wire = serde_json::to_vec(&response).map_err(|e| e.to_string())?;
    let back = decode_response(wire).map_err(|e| format!("re-encoded message rejected: {e}"))?;
    ensure(back == response, || {
        format!("round trip changed {response:?} into {back:?}")
    })?;
    // A refused step has no result to parse (PROTOCOL.md, "Refusals").
    let Response::StepResult {
        result: Some(result),
        ..
    } = response
    else {
        return Ok(());
    };
    let steps = [
        WireStep::Discover,
        WireStep::Tools,
        WireStep::Prompt,
        WireStep::Call {
            tool: "skill_read_reference".into(),
            args: Value::Null,
        },
        WireStep::NewTurn,
        WireStep::Select {
            message: String::new(),
            tools: Vec::new(),
        },
    ];
    for step in &steps {
        match StepOutcome::from_wire(step, result.clone()) {
            Ok(outcome) => {
                let again = StepOutcome::from_wire(step, outcome.to_wire())
                    .map_err(|e| format!("{}: re-encoded result rejected: {e}", step.op_name()))?;
                ensure(again == outcome, || {
                    format!("{}: round trip changed {outcome:?}", step.op_name())
                })?;
            }
            Err(message) => ensure(message.to_string().contains(step.op_name()), || {
                format!(
                    "a `{}` result error that does not name the step: {message}",
                    step.op_name()
                )
            })?,
        }
    }
    Ok(())
}
