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
            // Then the exposure the defect opens (`""` for none).
            let (clause, opens) = rest.strip_suffix("\",")?.split_once("\", \"")?;
            assert!(
                opens.is_empty()
                    || skillspec_runner::cases::exposure::Exposure::parse(opens).is_some(),
                "{name} opens the unknown exposure {opens}"
            );
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
    let names = catalogue();
    let found = names_in(&bytes, &names);
    assert!(
        found.is_empty(),
        "the program holds the mutant names {found:?}"
    );
    // The scan sees a name that is there: the long option `step-timeout`.
    let option = [("step-timeout".to_owned(), String::new())];
    assert_eq!(names_in(&bytes, &option), ["step-timeout"]);
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

/// Which of `names` (each made of `a-z`, `0-9` and `-`) occur in `bytes`: one pass over the runs
/// of those bytes (a debug binary is hundreds of MB; a window search per name took minutes).
#[cfg(not(feature = "mutants"))]
fn names_in<'a>(bytes: &[u8], names: &'a [(String, String)]) -> Vec<&'a str> {
    let name_byte = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
    assert!(names.iter().all(|(n, _)| n.bytes().all(|b| name_byte(&b))));
    let shortest = names.iter().map(|(n, _)| n.len()).min().unwrap_or(0);
    let mut found: Vec<&str> = Vec::new();
    for run in bytes
        .split(|b| !name_byte(b))
        .filter(|r| r.len() >= shortest)
    {
        for (name, _) in names {
            if !found.contains(&name.as_str())
                && run.windows(name.len()).any(|w| w == name.as_bytes())
            {
                found.push(name);
            }
        }
    }
    found
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
