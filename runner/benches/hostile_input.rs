//! `cargo bench`: the reference on hostile input, as ratios against a baseline measured in the
//! same run.
//!
//! - discovery: a root with 200 ordinary skills (baseline) against the same root plus a symlink
//!   loop, a 10,000-level directory chain, a FIFO named SKILL.md and a 4 GiB sparse SKILL.md;
//! - helper output: a helper printing one line (baseline) against one offering 8 GiB of output,
//!   cut at the 256 KiB cap; with the growth of this process's peak RSS.
//!
//! The trees are built with the suite's own fixture code (`fixture::materialize`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use skillspec_reference::discovery::discover;
use skillspec_reference::process::{run_limited, HelperCommand};
use skillspec_runner::cases::fixture::{self, Tree};

fn tree(entries: Map<String, Value>) -> Tree {
    Tree::from_yaml(&entries).expect("a valid tree")
}

fn ordinary_skills(n: usize) -> Map<String, Value> {
    (0..n)
        .map(|i| {
            let text = format!("---\nname: skill {i}\ndescription: ordinary\n---\nBody {i}\n");
            (
                format!("group{}/skill-{i:03}/SKILL.md", i % 10),
                Value::from(text),
            )
        })
        .collect()
}

fn hostile() -> Map<String, Value> {
    let mut m = ordinary_skills(200);
    m.insert("loop".into(), json!({"symlink": ".."}));
    m.insert("fifo/SKILL.md".into(), json!({"fifo": true}));
    m.insert(
        "sparse/SKILL.md".into(),
        json!({"size": 4u64 << 30, "sparse": true}),
    );
    m.insert(
        "deep".into(),
        json!({"deep": {"levels": 10_000, "name": "d"}}),
    );
    m
}

fn time<T>(iterations: u32, mut f: impl FnMut() -> T) -> Duration {
    let start = Instant::now();
    for _ in 0..iterations {
        std::hint::black_box(f());
    }
    start.elapsed() / iterations
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn sh(script: &str) -> HelperCommand {
    let mut c = HelperCommand::new("/bin/sh");
    c.arg("-c").arg(script).env("PATH", "/usr/bin:/bin");
    c
}

fn main() {
    let (base, attacked) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (plain_tree, hostile_tree) = (tree(ordinary_skills(200)), tree(hostile()));
    fixture::materialize(base.path(), &plain_tree, Path::new("/nonexistent")).unwrap();
    fixture::materialize(attacked.path(), &hostile_tree, Path::new("/nonexistent")).unwrap();

    let baseline = time(20, || discover(base.path()).unwrap());
    let hostile_time = time(20, || discover(attacked.path()).unwrap());
    assert_eq!(discover(attacked.path()).unwrap().loaded.len(), 200);
    println!(
        "discovery, 200 skills:             {:>10.3} ms (baseline)",
        baseline.as_secs_f64() * 1e3
    );
    println!(
        "discovery, 200 skills + hostile:   {:>10.3} ms  ratio {:.2}x",
        hostile_time.as_secs_f64() * 1e3,
        hostile_time.as_secs_f64() / baseline.as_secs_f64()
    );

    let small = time(10, || {
        run_limited(&sh("echo one line"), b"", Duration::from_secs(30), 262_144).unwrap()
    });
    let rss_before = peak_rss_kib();
    let flood = time(10, || {
        run_limited(
            &sh("head -c 8589934592 /dev/zero"),
            b"",
            Duration::from_secs(30),
            262_144,
        )
        .unwrap()
    });
    let rss_growth = peak_rss_kib().saturating_sub(rss_before);
    println!(
        "helper, one line of output:        {:>10.3} ms (baseline)",
        small.as_secs_f64() * 1e3
    );
    println!(
        "helper, 8 GiB offered, cut at cap: {:>10.3} ms  ratio {:.2}x, peak RSS growth {} KiB",
        flood.as_secs_f64() * 1e3,
        flood.as_secs_f64() / small.as_secs_f64(),
        rss_growth
    );
    // The suite's own teardown: any depth, a few descriptors.
    fixture::remove_root(attacked.path(), None).unwrap();
}
