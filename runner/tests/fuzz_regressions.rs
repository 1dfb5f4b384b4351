//! Every input the fuzz driver ever found (`runner/tests/fuzz-regressions/<target>/`), and every
//! target's seeds, run through the fuzz targets' checks (`runner/fuzz/targets.rs`): no panic,
//! the time and memory bounds, the oracle.

// The driver's parts (`MAX_INPUT`, `dict`) are the driver's.
#[allow(dead_code)]
#[path = "../fuzz/targets.rs"]
mod targets;

use std::path::Path;

use targets::{Bounds, TARGETS};

#[global_allocator]
static ALLOC: targets::Counting = targets::Counting;

/// One test, not several: the allocation counters are global, and tests run in parallel.
#[test]
fn seeds_and_found_inputs_pass_every_target() {
    the_harness_reports_panics_bounds_and_oracles();
    targets::prepare();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut failures = Vec::new();
    let mut ran = 0usize;
    for target in &TARGETS {
        let mut inputs: Vec<(String, Vec<u8>)> = (target.seeds)()
            .into_iter()
            .enumerate()
            .map(|(i, s)| (format!("seed {i}"), s))
            .collect();
        if let Ok(entries) = std::fs::read_dir(base.join(target.name)) {
            for e in entries.flatten() {
                let bytes = std::fs::read(e.path()).expect("a readable regression input");
                inputs.push((e.path().display().to_string(), bytes));
            }
        }
        for (label, input) in inputs {
            ran += 1;
            if let Err(e) = targets::run(target, &input, Bounds::DEBUG) {
                failures.push(format!("{} {label}: {e}", target.name));
            }
        }
    }
    assert!(ran > TARGETS.len(), "only {ran} inputs ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The checks can fail: a panic, a bound and an oracle each turn into a finding.
fn the_harness_reports_panics_bounds_and_oracles() {
    let panicking = targets::Target {
        name: "panics",
        seeds: Vec::new,
        dict: &[],
        check: |_| panic!("boom"),
    };
    let hungry = targets::Target {
        name: "hungry",
        seeds: Vec::new,
        dict: &[],
        check: |_| {
            let v = vec![1u8; 64 << 20];
            std::hint::black_box(&v);
            Ok(())
        },
    };
    let wrong = targets::Target {
        name: "wrong",
        seeds: Vec::new,
        dict: &[],
        check: |_| Err("the oracle disagrees".into()),
    };
    let e = targets::run(&panicking, b"x", Bounds::DEBUG).unwrap_err();
    assert!(e.contains("panicked: boom"), "{e}");
    let e = targets::run(&hungry, b"x", Bounds::DEBUG).unwrap_err();
    assert!(e.contains("allocated"), "{e}");
    let e = targets::run(&wrong, b"x", Bounds::DEBUG).unwrap_err();
    assert!(e.contains("the oracle disagrees"), "{e}");
}
