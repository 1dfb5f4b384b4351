//! The runner's layers, checked from its source text (issue #16): the top-level modules of
//! `runner/src` import each other without a cycle, so that they form layers that point one way
//! (protocol, then cases and implementations, then execution, ..., then commands), and every
//! module file opens with a `//!` account of what it owns.
//!
//! A module's imports are the `crate::NAME` paths (also `crate::{a, b::c}`) in its files
//! (`src/NAME.rs` and everything under `src/NAME/`), test code included, NAME being a module
//! `lib.rs` declares. Comments and the contents of string literals are blanked first, so a doc
//! link or a message that names a module counts for nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `text` with comments and the contents of string and character literals replaced by spaces.
fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = c.clone();
    let wipe = |from: usize, to: usize, out: &mut Vec<char>| {
        for ch in out.iter_mut().take(to.min(c.len())).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if c[i] == '/' && next == Some('/') {
            let end = c[i..]
                .iter()
                .position(|&x| x == '\n')
                .map_or(c.len(), |p| i + p);
            wipe(i, end, &mut out);
            i = end;
        } else if c[i] == '/' && next == Some('*') {
            let end = (i + 2..c.len().saturating_sub(1))
                .find(|&j| c[j] == '*' && c[j + 1] == '/')
                .map_or(c.len(), |j| j + 2);
            wipe(i, end, &mut out);
            i = end;
        } else if c[i] == 'r' && matches!(next, Some('"') | Some('#')) && !ident_before {
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            let start = j + 1;
            let end = (start..c.len())
                .find(|&k| c[k] == '"' && (0..hashes).all(|h| c.get(k + 1 + h) == Some(&'#')))
                .unwrap_or(c.len());
            wipe(start, end, &mut out);
            i = end + 1 + hashes;
        } else if c[i] == '"' {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            wipe(i + 1, k, &mut out);
            i = k + 1;
        } else if c[i] == '\'' && next == Some('\\') {
            let end = (i + 2..c.len()).find(|&k| c[k] == '\'').unwrap_or(c.len());
            wipe(i + 1, end, &mut out);
            i = end + 1;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            wipe(i + 1, i + 2, &mut out);
            i += 3;
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

/// The top-level modules `lib.rs` declares.
fn declared_modules() -> BTreeSet<String> {
    let lib = blank(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
    lib.lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("pub ").unwrap_or(l.trim());
            l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn module_files(m: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let single = src().join(format!("{m}.rs"));
    if single.is_file() {
        files.push(single);
    }
    rust_files(&src().join(m), &mut files);
    files
}

/// The declared modules `code` names through `crate::`.
fn references(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            continue;
        }
        let rest = code[at + "crate::".len()..].trim_start();
        let names: Vec<String> = match rest.strip_prefix('{') {
            Some(group) => {
                let mut depth = 0;
                let mut items = vec![String::new()];
                for ch in group.chars() {
                    match ch {
                        '}' if depth == 0 => break,
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => items.push(String::new()),
                        _ if depth == 0 => items.last_mut().unwrap().push(ch),
                        _ => {}
                    }
                }
                items.iter().map(|i| ident(i)).collect()
            }
            None => vec![ident(rest)],
        };
        out.extend(names.into_iter().filter(|n| modules.contains(n)));
    }
    out
}

fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let modules = declared_modules();
    modules
        .iter()
        .map(|m| {
            let mut deps = BTreeSet::new();
            for f in module_files(m) {
                deps.extend(references(
                    &blank(&std::fs::read_to_string(&f).unwrap()),
                    &modules,
                ));
            }
            deps.remove(m);
            (m.clone(), deps)
        })
        .collect()
}

/// The layers, bottom up (a module's layer is one above its highest import), and the modules
/// left over because they lie on a cycle.
fn layers(graph: &BTreeMap<String, BTreeSet<String>>) -> (Vec<Vec<String>>, Vec<String>) {
    let mut level: BTreeMap<&String, usize> = BTreeMap::new();
    let mut changed = true;
    while changed {
        changed = false;
        for (m, deps) in graph {
            if !level.contains_key(m) && deps.iter().all(|d| level.contains_key(d)) {
                let l = deps.iter().map(|d| level[d] + 1).max().unwrap_or(0);
                level.insert(m, l);
                changed = true;
            }
        }
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, l) in &level {
        if out.len() <= *l {
            out.resize(l + 1, Vec::new());
        }
        out[*l].push((*m).clone());
    }
    let stuck = graph
        .keys()
        .filter(|m| !level.contains_key(m))
        .cloned()
        .collect();
    (out, stuck)
}

fn describe(graph: &BTreeMap<String, BTreeSet<String>>) -> String {
    let (layers, stuck) = layers(graph);
    let mut text = String::from("runner modules, layers bottom up:\n");
    for (i, layer) in layers.iter().enumerate() {
        let shown: Vec<String> = layer
            .iter()
            .map(|m| {
                let deps: Vec<&str> = graph[m].iter().map(String::as_str).collect();
                format!("{m} ({})", deps.join(" "))
            })
            .collect();
        text.push_str(&format!("  {i}: {}\n", shown.join(", ")));
    }
    for m in stuck {
        let deps: Vec<&str> = graph[&m].iter().map(String::as_str).collect();
        text.push_str(&format!(
            "  on or above a cycle: {m} ({})\n",
            deps.join(" ")
        ));
    }
    text
}

#[test]
fn the_runner_has_no_import_cycle() {
    let graph = module_graph();
    let text = describe(&graph);
    println!("{text}");
    let (_, stuck) = layers(&graph);
    assert!(
        stuck.is_empty(),
        "the top-level modules import each other in a cycle:\n{text}"
    );
}

#[test]
fn the_layers_are_the_documented_ones() {
    let graph = module_graph();
    let (layers, _) = layers(&graph);
    let layer_of = |m: &str| layers.iter().position(|l| l.iter().any(|x| x == m));
    // The protocol is below everything that runs or judges cases, the commands on top.
    let order = ["protocol", "cases", "execution", "reports", "commands"];
    for w in order.windows(2) {
        assert!(
            layer_of(w[0]) < layer_of(w[1]),
            "{} must lie below {}:\n{}",
            w[0],
            w[1],
            describe(&graph)
        );
    }
    assert!(layer_of("implementations") < layer_of("execution"));
    assert_eq!(
        graph["protocol"].iter().collect::<Vec<_>>(),
        ["embedded"],
        "the protocol layer may use the embedded schemas only"
    );
}

#[test]
fn the_cycle_check_can_fail() {
    let modules: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let code = blank("use crate::{b, c::x}; // crate::a\nlet s = \"crate::a\";");
    assert_eq!(
        references(&code, &modules),
        ["b", "c"].map(String::from).into()
    );
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"])]
            .into_iter()
            .map(|(m, d)| (m.to_owned(), d.into_iter().map(String::from).collect()))
            .collect();
    let (_, stuck) = layers(&graph);
    assert_eq!(stuck, ["a", "b", "c"]);
}

#[test]
fn every_module_file_says_what_it_owns() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let silent: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        silent.is_empty(),
        "module files without a `//!` opening: {silent:?}"
    );
}
