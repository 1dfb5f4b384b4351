//! The fuzz driver, on a stable toolchain: `cargo run --release -p skillspec --example fuzz --
//! [--seconds N] [--target NAME] [--seed N]` (`.ci/fuzz N` runs it). proptest generates the
//! inputs (a target's seeds with a list of mutations: bytes set, ranges deleted or repeated,
//! dictionary tokens and other seeds spliced in; sometimes plain random bytes) and shrinks a
//! finding to a small input; the targets and their oracles are `runner/fuzz/targets.rs`. The
//! time is shared equally between the targets. A finding is written to
//! `runner/tests/fuzz-regressions/<target>/` (commit it: `cargo test` runs every file there)
//! and the driver exits 1; usage errors exit 2.

// `Bounds::DEBUG` is the regression test's.
#[allow(dead_code)]
#[path = "../fuzz/targets.rs"]
mod targets;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use targets::{Bounds, Target, MAX_INPUT, TARGETS};

#[global_allocator]
static ALLOC: targets::Counting = targets::Counting;

#[derive(Debug, Clone)]
enum Mutation {
    Set(Index, u8),
    Delete(Index, Index),
    Repeat(Index, Index, u8),
    Token(Index, String),
    Splice(Index, Vec<u8>),
    Bytes(Index, Vec<u8>),
}

fn apply(mut data: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let at = |i: &Index, len: usize| i.index(len + 1);
        match m {
            Mutation::Set(i, b) if !data.is_empty() => {
                let n = data.len();
                data[i.index(n)] = *b;
            }
            Mutation::Set(..) => {}
            Mutation::Delete(i, j) => {
                let (a, b) = (at(i, data.len()), at(j, data.len()));
                data.drain(a.min(b)..a.max(b));
            }
            Mutation::Repeat(i, j, times) => {
                let (a, b) = (at(i, data.len()), at(j, data.len()));
                let piece = data[a.min(b)..a.max(b)].to_vec();
                let mut at_end = a.max(b);
                for _ in 0..(*times % 16) {
                    data.splice(at_end..at_end, piece.iter().copied());
                    at_end += piece.len();
                    if data.len() > MAX_INPUT {
                        break;
                    }
                }
            }
            Mutation::Token(i, t) => {
                let p = at(i, data.len());
                data.splice(p..p, t.bytes());
            }
            Mutation::Splice(i, other) | Mutation::Bytes(i, other) => {
                let p = at(i, data.len());
                data.splice(p..p, other.iter().copied());
            }
        }
        data.truncate(MAX_INPUT);
    }
    data
}

fn inputs(target: &Target) -> BoxedStrategy<Vec<u8>> {
    let seeds = (target.seeds)();
    let dict: Vec<String> = target.dict.iter().map(|s| s.to_string()).collect();
    let pieces: Vec<Vec<u8>> = seeds
        .iter()
        .flat_map(|s| s.split(|b| *b == b'\n').map(<[u8]>::to_vec))
        .filter(|p| !p.is_empty())
        .collect();
    let mutation = prop_oneof![
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Mutation::Delete(i, j)),
        1 => (any::<Index>(), any::<Index>(), any::<u8>()).prop_map(|(i, j, n)| Mutation::Repeat(i, j, n)),
        4 => (any::<Index>(), prop::sample::select(dict)).prop_map(|(i, t)| Mutation::Token(i, t)),
        2 => (any::<Index>(), prop::sample::select(pieces)).prop_map(|(i, p)| Mutation::Splice(i, p)),
        2 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..6)).prop_map(|(i, b)| Mutation::Bytes(i, b)),
    ];
    prop_oneof![
        9 => (prop::sample::select(seeds), prop::collection::vec(mutation, 0..12))
            .prop_map(|(seed, ms)| apply(seed, &ms)),
        1 => prop::collection::vec(any::<u8>(), 0..512),
    ]
    .boxed()
}

struct Args {
    seconds: f64,
    target: Option<String>,
    seed: u64,
}

fn usage(message: &str) -> ! {
    eprintln!("fuzz: {message}");
    eprintln!("usage: fuzz [--seconds N] [--target NAME] [--seed N]");
    eprintln!(
        "targets: {}",
        TARGETS
            .iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
            .join(", ")
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        seconds: 120.0,
        target: None,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--seconds" => {
                args.seconds = value()
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .unwrap_or_else(|| usage("--seconds needs a positive number"))
            }
            "--target" => args.target = Some(value()),
            "--seed" => {
                args.seed = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--seed needs a whole number"))
            }
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    args
}

fn regression_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(target)
}

fn main() {
    let args = parse_args();
    let chosen: Vec<&Target> = TARGETS
        .iter()
        .filter(|t| args.target.as_deref().is_none_or(|n| n == t.name))
        .collect();
    if chosen.is_empty() {
        usage(&format!(
            "no target named `{}`",
            args.target.unwrap_or_default()
        ));
    }
    // Findings are reported once, by the driver; panics inside targets are caught and counted.
    std::panic::set_hook(Box::new(|_| {}));
    targets::prepare();
    let slice = Duration::from_secs_f64(args.seconds / chosen.len() as f64);
    println!(
        "fuzz: {} target(s), {:.0} s each, seed {}",
        chosen.len(),
        slice.as_secs_f64(),
        args.seed
    );
    let mut failed = false;
    for target in chosen {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&args.seed.to_le_bytes());
        seed[8..16].copy_from_slice(&(target.name.len() as u64).to_le_bytes());
        seed[16..16 + target.name.len().min(16)]
            .copy_from_slice(&target.name.as_bytes()[..target.name.len().min(16)]);
        let mut batch = 0u64;
        let config = Config {
            cases: 512,
            failure_persistence: None,
            max_shrink_iters: 20_000,
            ..Config::default()
        };
        let strategy = inputs(target);
        let start = Instant::now();
        let mut runs = 0u64;
        let slowest = std::cell::Cell::new(Duration::ZERO);
        let mut found = false;
        while start.elapsed() < slice {
            // A fresh runner per batch (a runner counts its successes), seeded by the seed, the
            // target and the batch number.
            batch += 1;
            seed[24..].copy_from_slice(&batch.to_le_bytes());
            let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
            let mut runner = TestRunner::new_with_rng(config.clone(), rng);
            let result = runner.run(&strategy, |input| {
                let t = Instant::now();
                let r = targets::run(target, &input, Bounds::RELEASE);
                slowest.set(slowest.get().max(t.elapsed()));
                r.map_err(TestCaseError::fail)
            });
            match result {
                Ok(()) => runs += u64::from(config.cases),
                Err(TestError::Fail(reason, input)) => {
                    let dir = regression_dir(target.name);
                    let name = format!("crash-{:016x}", fnv(&input));
                    let saved = std::fs::create_dir_all(&dir)
                        .and_then(|()| std::fs::write(dir.join(&name), &input));
                    println!(
                        "{:<18} FINDING after about {runs} inputs: {reason}",
                        target.name
                    );
                    println!(
                        "    input ({} bytes): {:?}",
                        input.len(),
                        String::from_utf8_lossy(&input)
                    );
                    match saved {
                        Ok(()) => println!("    saved as {}", dir.join(&name).display()),
                        Err(e) => println!("    could not save it under {}: {e}", dir.display()),
                    }
                    found = true;
                    break;
                }
                Err(TestError::Abort(why)) => {
                    println!("{:<18} aborted: {why}", target.name);
                    found = true;
                    break;
                }
            }
        }
        failed |= found;
        if !found {
            println!(
                "{:<18} {runs:>9} inputs in {:>5.1} s, slowest input {:.1} ms (wall), no finding",
                target.name,
                start.elapsed().as_secs_f64(),
                slowest.get().as_secs_f64() * 1e3
            );
        }
    }
    std::process::exit(i32::from(failed));
}

/// FNV-1a, for a stable file name per input.
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}
