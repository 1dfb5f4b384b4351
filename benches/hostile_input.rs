//! `cargo bench`: the reference on hostile input, as ratios against a baseline measured in the
//! same run.
//!
//! - discovery: a root with 200 ordinary skills (baseline) against the same root plus a symlink
//!   loop, a 10,000-level directory chain, a FIFO named SKILL.md and a 4 GiB sparse SKILL.md;
//! - helper output: a helper printing one line (baseline) against one offering 8 GiB of output,
//!   cut at the 256 KiB cap; with the growth of this process's peak RSS.

use std::os::fd::AsFd;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rustix::fs::{mkdirat, openat, Mode, OFlags};
use skillspec_reference::discovery::discover;
use skillspec_reference::process::run_limited;

fn ordinary_skills(root: &Path, n: usize) {
    for i in 0..n {
        let dir = root.join(format!("group{}/skill-{i:03}", i % 10));
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: skill {i}\ndescription: ordinary\n---\nBody {i}\n"),
        )
        .unwrap();
    }
}

fn hostile_additions(root: &Path) {
    std::os::unix::fs::symlink("..", root.join("loop")).unwrap();
    std::fs::create_dir_all(root.join("fifo")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("fifo/SKILL.md"),
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("sparse")).unwrap();
    std::fs::File::create(root.join("sparse/SKILL.md"))
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    std::fs::create_dir_all(root.join("deep")).unwrap();
    let flags = OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(root.join("deep"), flags, Mode::empty()).unwrap();
    for _ in 0..10_000 {
        mkdirat(dir.as_fd(), "d", Mode::from_raw_mode(0o755)).unwrap();
        dir = openat(dir.as_fd(), "d", flags, Mode::empty()).unwrap();
    }
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

fn main() {
    let base = tempfile::tempdir().unwrap();
    let hostile = tempfile::tempdir().unwrap();
    ordinary_skills(base.path(), 200);
    ordinary_skills(hostile.path(), 200);
    hostile_additions(hostile.path());

    let baseline = time(20, || discover(base.path()).unwrap());
    let attacked = time(20, || discover(hostile.path()).unwrap());
    let found = discover(hostile.path()).unwrap();
    assert_eq!(found.loaded.len(), 200);
    println!(
        "discovery, 200 skills:             {:>10.3} ms (baseline)",
        baseline.as_secs_f64() * 1e3
    );
    println!(
        "discovery, 200 skills + hostile:   {:>10.3} ms  ratio {:.2}x",
        attacked.as_secs_f64() * 1e3,
        attacked.as_secs_f64() / baseline.as_secs_f64()
    );

    let sh = |script: &str| {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    };
    let small = time(10, || {
        run_limited(
            sh("echo one line"),
            Vec::new(),
            Duration::from_secs(30),
            262_144,
        )
        .unwrap()
    });
    let rss_before = peak_rss_kib();
    let flood = time(10, || {
        run_limited(
            sh("head -c 8589934592 /dev/zero"),
            Vec::new(),
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
    // The chain is removed bottom-up with one descriptor at a time (tempfile would need 10,000).
    let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(hostile.path().join("deep"), flags, Mode::empty()).unwrap();
    let mut depth = 0;
    while let Ok(next) = openat(dir.as_fd(), "d", flags, Mode::empty()) {
        dir = next;
        depth += 1;
    }
    for _ in 0..depth {
        let parent = openat(dir.as_fd(), "..", flags, Mode::empty()).unwrap();
        rustix::fs::unlinkat(parent.as_fd(), "d", rustix::fs::AtFlags::REMOVEDIR).unwrap();
        dir = parent;
    }
}
