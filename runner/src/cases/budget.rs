//! The budget of one case: how much its tree and `write` steps may make the runner create, and
//! how many bytes its `$repeat`s may expand to, checked while the case loads and before
//! anything is allocated or written (spec-cases/README.md, "Budgets"). A case over a budget is
//! refused with exit 2, naming its file, line and id.
//!
//! - bytes: at most [`MAX_CASE_BYTES`] of file contents in the tree and all `write` steps
//!   together (text, base64, `size`, tar archives; a `copy:` at [`MAX_READ`], the most the runner
//!   copies, since the fixtures directory is a run's choice), plus the `$repeat` expansions;
//!   a sparse file, a directory, a link, a FIFO or a socket write no bytes;
//! - entries: at most [`MAX_CASE_ENTRIES`] path components over all entries (an entry counts
//!   itself and each directory its path names, every time, so the count bounds what the runner
//!   creates and what the loader keeps);
//! - `deep` levels: at most [`MAX_CASE_DEEP_LEVELS`] over all `deep` chains;
//! - `$repeat`: at most [`MAX_REPEAT_PER_CASE`] bytes over all expansions.
//!
//!
//! All cases of a run together hold at most [`MAX_SUITE_HELD`] bytes in memory ([`held`]).
//!
//! [`MAX_READ`]: crate::cases::fixture::MAX_READ

use serde_json::Value;

use crate::cases::fixture::{EntryKind, Tree};
use crate::cases::{Action, Case};
use crate::protocol::WireStep;

/// File contents a case's tree and `write` steps may make, with its `$repeat`s (512 MiB).
pub const MAX_CASE_BYTES: u64 = 512 * 1024 * 1024;

/// Path components a case's entries may have in all (10,000).
pub const MAX_CASE_ENTRIES: u64 = 10_000;

/// Levels all `deep` chains of a case may have together (100,000, one chain at its cap).
pub const MAX_CASE_DEEP_LEVELS: u64 = 100_000;

/// All `$repeat` expansions of one case together are at most this many bytes (16 MiB).
pub const MAX_REPEAT_PER_CASE: u64 = 16 * 1024 * 1024;

/// File contents and argument text all the cases of one run may hold in memory together (1 GiB).
/// A loaded case keeps the bytes of its text, base64, padded text and tar entries and its
/// expanded arguments until the run ends; `size` and `copy` files are made when the case runs.
pub const MAX_SUITE_HELD: u64 = 1024 * 1024 * 1024;

/// The bytes `case` holds in memory: its file entries' contents (tree and `write` steps) and
/// the text of its implementation steps' arguments.
pub fn held(case: &Case) -> u64 {
    fn text(v: &Value) -> u64 {
        match v {
            Value::String(s) => s.len() as u64,
            Value::Array(items) => items.iter().map(text).sum(),
            Value::Object(m) => m.iter().map(|(k, v)| k.len() as u64 + text(v)).sum(),
            _ => 0,
        }
    }
    let tree = |t: &Tree| -> u64 {
        t.entries
            .iter()
            .map(|e| match &e.kind {
                EntryKind::File(bytes) | EntryKind::Tar { bytes, .. } => bytes.len() as u64,
                _ => 0,
            })
            .sum()
    };
    let steps: u64 = case
        .steps
        .iter()
        .map(|s| match &s.action {
            Action::Write(t) => tree(t),
            Action::Implementation(WireStep::Call { args, .. }) => text(args),
            Action::Implementation(WireStep::Select { message, .. }) => message.len() as u64,
            _ => 0,
        })
        .sum();
    tree(&case.tree) + steps
}

/// What one case has used of its budgets so far.
#[derive(Debug, Clone, Default)]
pub struct Budget {
    /// The case's id, for messages (empty: a tree parsed outside a case).
    case: String,
    bytes: u64,
    entries: u64,
    levels: u64,
    repeated: u64,
}

impl Budget {
    /// A fresh budget for the case `id`.
    pub fn for_case(id: &str) -> Budget {
        Budget {
            case: id.to_owned(),
            ..Budget::default()
        }
    }

    fn who(&self) -> String {
        if self.case.is_empty() {
            "the case".into()
        } else {
            format!("case `{}`", self.case)
        }
    }

    /// Charges `n` bytes of file contents, before they are made.
    pub fn bytes(&mut self, n: u64) -> Result<(), String> {
        let total = self.bytes.saturating_add(n);
        // spec-cases/README.md "Budgets": bytes per case.
        if total > MAX_CASE_BYTES {
            return Err(format!(
                "{} would make {total} bytes of files and `$repeat` text, more than its budget of {} MiB ({MAX_CASE_BYTES} bytes) for the tree, the `write` steps and the `$repeat`s together",
                self.who(),
                MAX_CASE_BYTES >> 20
            ));
        }
        self.bytes = total;
        Ok(())
    }

    /// Charges the entry at `path` (one per component of the path).
    pub fn entry(&mut self, path: &[u8]) -> Result<(), String> {
        let components = 1 + path.iter().filter(|b| **b == b'/').count() as u64;
        let total = self.entries.saturating_add(components);
        // spec-cases/README.md "Budgets": entries per case.
        if total > MAX_CASE_ENTRIES {
            return Err(format!(
                "{} would make {total} entries, more than its budget of {MAX_CASE_ENTRIES} entries for the tree and the `write` steps together (each entry counts once per component of its path)",
                self.who()
            ));
        }
        self.entries = total;
        Ok(())
    }

    /// Charges a `deep` chain of `levels` levels.
    pub fn deep(&mut self, levels: u64) -> Result<(), String> {
        let total = self.levels.saturating_add(levels);
        // spec-cases/README.md "Budgets": `deep` levels per case.
        if total > MAX_CASE_DEEP_LEVELS {
            return Err(format!(
                "{} would make {total} `deep` levels, more than its budget of {MAX_CASE_DEEP_LEVELS} `deep` levels for the tree and the `write` steps together",
                self.who()
            ));
        }
        self.levels = total;
        Ok(())
    }

    /// Charges a `$repeat` expansion of `n` bytes, to the `$repeat` budget and to the bytes.
    pub fn repeat(&mut self, n: u64) -> Result<(), String> {
        let total = self.repeated.saturating_add(n);
        if total > MAX_REPEAT_PER_CASE {
            return Err(format!(
                "`$repeat` would make {n} bytes here, and all `$repeat`s of a case together make at most {} MiB ({} bytes are left)",
                MAX_REPEAT_PER_CASE >> 20,
                MAX_REPEAT_PER_CASE - self.repeated
            ));
        }
        self.bytes(n)?;
        self.repeated = total;
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::cases::{parse_case, CaseError};

    const MIB64: u64 = 64 * 1024 * 1024;

    fn parse(tree: &str, steps: &str) -> Result<Case, CaseError> {
        let text = format!(
            "id: t.budget\nsummary: A case.\nclauses: [discovery.portable]\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: b\\n---\\n\"\n{tree}steps:\n  - discover:\n    expect:\n      loaded: [a]\n{steps}"
        );
        parse_case(Path::new("t.yaml"), Some("t"), &text)
    }

    /// `n` entries `f0`, `f1`, ... of `entry`.
    fn many(n: usize, entry: &str) -> String {
        (0..n).map(|i| format!("  f{i}: {entry}\n")).collect()
    }

    fn refused(r: Result<Case, CaseError>, line: usize, words: &str) {
        let Err(e) = r else {
            panic!("accepted over the budget (`{words}`)")
        };
        assert_eq!(e.line, Some(line), "{}", e.message);
        assert!(e.message.contains(words), "{}", e.message);
        assert!(
            e.message.contains("`t.budget`"),
            "names the case: {}",
            e.message
        );
    }

    /// Seven 64 MiB files and one that leaves `free` bytes of the 512 MiB (SKILL.md has 31).
    fn filled(free: u64) -> String {
        let last = MIB64 - 31 - free;
        format!("{}  last: {{size: {last}}}\n", many(7, "{size: 67108864}"))
    }

    #[test]
    fn bytes_of_every_kind_of_content_count_to_one_budget() {
        for (entry, cost) in [
            ("abc", 3),
            ("{text: abc, mode: 0o600}", 3),
            ("{base64: eHl6}", 3),
            ("{text: x, size: 1000}", 1000),
            ("{size: 1000, fill: b}", 1000),
            // A header and a padded block for `a`, then the two zero blocks.
            ("{tar: {a: x}}", 2048),
        ] {
            parse(&format!("{}  e: {entry}\n", filled(cost)), "").expect(entry);
            let over = format!("{}  e: {entry}\n", filled(cost - 1));
            refused(parse(&over, ""), 5, "512 MiB");
        }
        // Sparse files, directories and links write no bytes.
        let free = "  s: {size: 4294967296, sparse: true}\n  d: {dir: true}\n  l: {symlink: x}\n";
        parse(&format!("{}{free}", filled(0)), "").expect("no bytes");
        // A copy counts as the 64 MiB the runner copies at most.
        let copies = |n| {
            format!(
                "{}  last: {{size: {}}}\n",
                many(n, "{copy: helpers/echo_args.py}"),
                MIB64 - 31
            )
        };
        parse(&copies(7), "").expect("7 copies and 64 MiB");
        refused(parse(&copies(8), ""), 5, "512 MiB");
        // `write` steps and `$repeat` expansions are added to the tree's bytes; the step is
        // on line 10 + the 8 lines of the tree.
        let write = "  - write: {g: abc}\n";
        parse(&filled(3), write).expect("the write fits");
        refused(parse(&filled(2), write), 18, "512 MiB");
        let read = "  - read: {skill: a, path: {$repeat: x, times: 2, then: z}}\n";
        parse(&filled(3), read).expect("the expansion fits");
        refused(parse(&filled(2), read), 18, "512 MiB");
    }

    #[test]
    fn the_640_gib_case_is_refused_at_once() {
        // Nothing of a `size` file is made at load: refusing it takes the time of parsing the
        // YAML (about 0.3 s in a debug build).
        let started = std::time::Instant::now();
        refused(parse(&many(10_000, "{size: 67108864}"), ""), 5, "512 MiB");
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
        // Padded text is made at load, but only up to the budget (7 x 64 MiB here).
        refused(
            parse(&many(10_000, "{text: x, size: 67108864}"), ""),
            5,
            "512 MiB",
        );
    }

    #[test]
    fn entries_count_every_component_of_their_paths() {
        // 1 SKILL.md path of 3 components, then 9,997 single-component entries: 10,000.
        parse(&many(9_997, "x"), "").expect("exactly at the budget");
        refused(parse(&many(9_998, "x"), ""), 5, "10000 entries");
        // Directories a path names count too (each time), and so do `write` steps and sparse
        // files.
        let nested = |n: usize| -> String { (0..n).map(|i| format!("  d{i}/e/f: x\n")).collect() };
        parse(&format!("{}  z: x\n", nested(3_332)), "").expect("3 + 3 * 3,332 + 1");
        refused(
            parse(&format!("{}  z/y: x\n", nested(3_332)), ""),
            5,
            "10000 entries",
        );
        refused(
            parse(
                &many(9_997, "{size: 1, sparse: true}"),
                "  - write: {g: x}\n",
            ),
            10 + 9_997,
            "10000 entries",
        );
    }

    #[test]
    fn deep_levels_are_budgeted_per_case() {
        let chains = |levels: &[u32]| -> String {
            levels
                .iter()
                .enumerate()
                .map(|(i, l)| format!("  c{i}: {{deep: {{levels: {l}, name: d}}}}\n"))
                .collect()
        };
        parse(&chains(&[50_000, 50_000]), "").expect("exactly at the budget");
        refused(
            parse(&chains(&[50_000, 50_001]), ""),
            5,
            "100000 `deep` levels",
        );
        let write = "  - write: {w: {deep: {levels: 1, name: d}}}\n";
        refused(
            parse(&chains(&[100_000]), write),
            11,
            "100000 `deep` levels",
        );
    }

    #[test]
    fn all_cases_of_a_run_hold_a_bounded_amount_in_memory() {
        let source = |id: &str, tree: &str| {
            crate::cases::CaseSource {
            file: format!("{id}.yaml").into(),
            area: Some("t".into()),
            text: Ok(format!(
                "id: t.{id}\nsummary: A case.\nclauses: [discovery.portable]\ntree:\n  skills/a/SKILL.md: \"---\\nname: a\\ndescription: b\\n---\\n\"\n{tree}steps:\n  - discover:\n    expect:\n      loaded: [a]\n  - read: {{skill: a, path: {{$repeat: x, times: 1000}}}}\n"
            )),
        }
        };
        // 31 bytes of SKILL.md, 1000 of padded text, 1000 + 4 ("path") + 5 ("skill") + 1 of
        // arguments: 2041 bytes per case; sized and sparse files are not held.
        let tree = "  p: {text: x, size: 1000}\n  s: {size: 100000}\n  z: {size: 100000000, sparse: true}\n";
        let load = |n: usize, limit: u64| {
            crate::cases::load::assemble_within(
                "t".into(),
                (0..n).map(|i| source(&format!("c{i}"), tree)),
                Vec::new(),
                "empty",
                limit,
            )
        };
        let suite = load(3, 3 * 2041).expect("three cases fit");
        assert_eq!(held(&suite.cases[0]), 2041);
        let errors = load(4, 3 * 2041).expect_err("the fourth does not");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].file, std::path::Path::new("c3.yaml"));
        assert!(
            errors[0].message.contains("case `t.c3` holds 2041 bytes"),
            "{}",
            errors[0].message
        );
    }

    /// What an already loaded case uses of the bytes, entries and `deep` budgets of its tree and
    /// `write` steps (not of `$repeat`).
    fn usage(case: &Case) -> Budget {
        let mut b = Budget::default();
        let trees =
            std::iter::once(&case.tree).chain(case.steps.iter().filter_map(|s| match &s.action {
                Action::Write(t) => Some(t),
                _ => None,
            }));
        for e in trees.flat_map(|t| &t.entries) {
            b.entry(&e.path).unwrap();
            b.bytes(match &e.kind {
                EntryKind::File(bytes) | EntryKind::Tar { bytes, .. } => bytes.len() as u64,
                EntryKind::Sized { size, .. } => *size,
                EntryKind::Copy(_) => crate::cases::fixture::MAX_READ,
                _ => 0,
            })
            .unwrap();
            if let EntryKind::Deep { levels, .. } = &e.kind {
                b.deep(u64::from(*levels)).unwrap();
            }
        }
        b
    }

    #[test]
    fn the_embedded_suite_fits_its_budgets_with_headroom() {
        // The source tree's cases, which the binary embeds (`crate::suite::load_embedded`).
        let suite = crate::cases::load_dir(&crate::default_cases_dir()).expect("the suite loads");
        let most = |f: fn(&Budget) -> u64| {
            suite
                .cases
                .iter()
                .map(|c| (f(&usage(c)), c.id.as_str()))
                .max()
                .unwrap()
        };
        let (bytes, entries, levels) = (most(|b| b.bytes), most(|b| b.entries), most(|b| b.levels));
        let held: u64 = suite.cases.iter().map(held).sum();
        println!(
            "most bytes {bytes:?}, entries {entries:?}, deep levels {levels:?}; held in all {held}"
        );
        assert!(bytes.0 <= MAX_CASE_BYTES / 4, "{bytes:?}");
        assert!(entries.0 <= MAX_CASE_ENTRIES / 100, "{entries:?}");
        assert!(levels.0 <= MAX_CASE_DEEP_LEVELS / 10, "{levels:?}");
        assert!(held <= MAX_SUITE_HELD / 50, "{held}");
    }

    #[test]
    fn paths_are_at_most_4096_bytes() {
        let path = |n: usize| format!("  ? \"{}\"\n  : x\n", "a/".repeat(n / 2) + "b");
        parse(&path(4095), "").expect("4095 bytes");
        let Err(e) = parse(&path(4097), "") else {
            panic!("accepted a path of 4097 bytes")
        };
        assert!(e.message.contains("4096 bytes"), "{}", e.message);
    }
}
