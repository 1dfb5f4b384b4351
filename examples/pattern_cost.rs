//! Measures what hostile activation patterns cost the reference runtime (issue #14, item 2a;
//! SPEC.md `selection.score.patterns`, its pattern budget).
//!
//! `pattern_cost load N [--times K]` writes N installed skills, each with five copies of the
//! pattern `(.|b){100}` repeated K times (default 24: the 240-byte pattern, weight 4800;
//! 5 is the heaviest the weight budget admits, 1000), into a temporary directory and starts a
//! runtime on them (the scan compiles the patterns it keeps). `pattern_cost select N [--times K]`
//! does the same, then selects once over a 4,096-byte message.
//! Run it under `/usr/bin/time -v` for the peak memory; it prints the wall time of each phase
//! and how many patterns were kept. Exit 2 on a usage or file system error.

use std::process::ExitCode;
use std::time::Instant;

use skillspec_reference::trust::SkillDirs;
use skillspec_reference::{Config, Runtime};

/// The pattern of the issue: `(.|b){100}` repeated `times` times.
fn hostile(times: usize) -> String {
    "(.|b){100}".repeat(times)
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("pattern_cost: {msg}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: pattern_cost load|select N [--times K]";
    let mode = args.first().ok_or(usage)?.clone();
    let count: usize = args
        .get(1)
        .and_then(|n| n.parse().ok())
        .filter(|n| (1..=1000).contains(n))
        .ok_or(usage)?;
    let times: usize = match args.get(2).map(String::as_str) {
        Some("--times") => args
            .get(3)
            .and_then(|n| n.parse().ok())
            .filter(|n| (1..=25).contains(n))
            .ok_or(usage)?,
        Some(_) => return Err(usage.into()),
        None => 24,
    };
    if mode != "load" && mode != "select" {
        return Err(usage.into());
    }
    let tmp = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let installed = tmp.path().join("installed");
    let pattern = hostile(times);
    for i in 0..count {
        let dir = installed.join(format!("s{i:04}"));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let patterns: Vec<String> = (0..5).map(|_| format!("'{pattern}'")).collect();
        let text = format!(
            "---\nname: s{i:04}\ndescription: d\nactivation:\n  patterns: [{}]\n---\nBody\n",
            patterns.join(", ")
        );
        std::fs::write(dir.join("SKILL.md"), text).map_err(|e| format!("write: {e}"))?;
    }
    let config = Config {
        skill_dirs: Some(SkillDirs {
            installed: Some(installed),
            ..SkillDirs::default()
        }),
        ..Config::default()
    };
    let start = Instant::now();
    let mut rt = Runtime::start(config);
    let kept: usize = rt.profile().map_or(0, |p| {
        p.scan()
            .skills
            .iter()
            .map(|s| s.fields.activation.patterns.len())
            .sum()
    });
    println!(
        "load: {count} skills, pattern of {} bytes, {kept} patterns kept, {:.3} s",
        pattern.len(),
        start.elapsed().as_secs_f64()
    );
    if mode == "select" {
        let message = "a".repeat(4096);
        let start = Instant::now();
        let selected = rt.select(&message, &[]).map_or(0, |s| s.selected.len());
        println!(
            "select: 4096-byte message, {selected} selected, {:.3} s",
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
