//! What the runner's integration tests share: where the binary and the repository are, running
//! the program, its output as text, and the protocol's JSON Schemas. Each test crate uses part of
//! it, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// The `skillspec` binary cargo built for these tests.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_skillspec"))
}

/// The repository's top directory (as written, not resolved).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `skillspec ARGS` in the repository to completion.
pub fn skillspec(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the binary runs")
}

/// stdout then stderr, decoded lossily.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `protocol/NAME` as JSON.
pub fn schema(name: &str) -> Value {
    let path = repo().join("protocol").join(name);
    serde_json::from_slice(&std::fs::read(path).expect("schema exists")).expect("schema is JSON")
}
