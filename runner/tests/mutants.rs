//! The mutants of the reference (`src/mutants.rs`): without the cargo feature `mutants` the
//! program holds neither a mutant nor the `mutants` command; with it, every mutant names a real
//! clause and the command refuses unknown names.

use std::process::Command;

/// The mutant names, read from the catalogue's source (`Variant = "name", "clause",`).
fn catalogue() -> Vec<(String, String)> {
    let source = include_str!("../../src/mutants.rs");
    source
        .lines()
        .filter_map(|l| {
            let (_, rest) = l.trim().split_once(" = \"")?;
            let (name, rest) = rest.split_once("\", \"")?;
            let clause = rest.strip_suffix("\",")?;
            Some((name.to_owned(), clause.to_owned()))
        })
        .collect()
}

#[test]
fn the_catalogue_has_forty_or_more_distinct_mutants_on_real_clauses() {
    let all = catalogue();
    assert!(all.len() >= 40, "{} mutants", all.len());
    let mut names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "duplicate mutant names");
    for (name, clause) in &all {
        assert!(
            skillspec_runner::cases::clauses::lookup(clause).is_some(),
            "{name} cites the unknown clause {clause}"
        );
    }
}

#[cfg(not(feature = "mutants"))]
#[test]
fn a_normal_build_holds_no_mutant() {
    let exe = env!("CARGO_BIN_EXE_skillspec");
    let bytes = std::fs::read(exe).unwrap();
    for (name, _) in catalogue() {
        assert!(
            !bytes.windows(name.len()).any(|w| w == name.as_bytes()),
            "the program holds the mutant name {name}"
        );
    }
    let out = Command::new(exe)
        .args(["mutants", "--list"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "`mutants` is not a command here"
    );
}

#[cfg(feature = "mutants")]
#[test]
fn the_command_lists_every_mutant_and_refuses_unknown_ones() {
    let exe = env!("CARGO_BIN_EXE_skillspec");
    let out = Command::new(exe)
        .args(["mutants", "--list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let listed = String::from_utf8(out.stdout).unwrap();
    for (name, clause) in catalogue() {
        assert!(
            listed.lines().any(|l| l
                .split_whitespace()
                .take(2)
                .eq([name.as_str(), clause.as_str()])),
            "{name} is not listed with {clause}"
        );
    }
    let out = Command::new(exe)
        .args(["mutants", "--only", "no-such-mutant"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-mutant"));
}
