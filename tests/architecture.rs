//! The shape of the code, checked from its text (issue #16): the top-level modules of a crate
//! form layers that point one way (no import cycle), no production function is longer than
//! [`MAX_FN_LINES`] lines, and every MUST clause of SPEC.md's clause index is marked with a
//! `// spec: <clause-id>` comment where its rule is enforced.
//!
//! Both crates are read and held to every rule: the reference crate (`src/`) and the runner
//! crate (`runner/src`; `runner/tests/architecture.rs` checks its layers' documented order too).
//!
//! The reading is lexical, not a Rust parser: comments and the contents of string and character
//! literals are blanked first, so a brace or a `crate::` inside them counts for nothing.
//! - A module's imports are the `crate::NAME` paths (also inside `use crate::{a, b::c}`) in its
//!   files (`src/NAME.rs` and everything under `src/NAME/`), NAME being a module `lib.rs`
//!   declares. Doc links are comments and do not count.
//! - A function is `fn NAME` with a body; its length runs from the line of `fn` to the line of
//!   the closing brace. Items under `#[cfg(test)]` are tests and exempt.
//! - A marker is a line comment that starts with `spec: ID[, ID...]`, followed by anything;
//!   markers under `#[cfg(test)]` do not count. `// spec: PROTOCOL.md ...` cites the protocol document, not a
//!   clause id, and is left alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The longest a production function may be, in lines.
const MAX_FN_LINES: usize = 150;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// ------------------------------------------------------------------------------------------
// Lexing: the code of a file with comments and literal contents blanked (same length, same
// lines), and the line ranges of its `#[cfg(test)]` items.

/// `src` with every comment and the contents of every string and character literal replaced
/// by spaces (newlines kept), so that what remains is code only.
fn blank(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<char> = c.clone();
    let mut i = 0;
    let blank_range = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in out.iter_mut().take(to).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            let end = c[i..]
                .iter()
                .position(|&x| x == '\n')
                .map_or(c.len(), |p| i + p);
            blank_range(&mut out, i, end);
            i = end;
        } else if c[i] == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank_range(&mut out, i, j);
            i = j;
        } else if c[i] == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&c, i) {
            // A raw string: r"..." or r#"..."# (also br"...").
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
            let mut k = start;
            loop {
                if k >= c.len() {
                    break;
                }
                if c[k] == '"' && (0..hashes).all(|h| c.get(k + 1 + h) == Some(&'#')) {
                    break;
                }
                k += 1;
            }
            blank_range(&mut out, start, k);
            i = k + 1 + hashes;
        } else if c[i] == '"' {
            let start = i + 1;
            let mut k = start;
            while k < c.len() && c[k] != '"' {
                if c[k] == '\\' {
                    k += 1;
                }
                k += 1;
            }
            blank_range(&mut out, start, k.min(c.len()));
            i = k + 1;
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                let mut k = i + 2;
                while k < c.len() && c[k] != '\'' {
                    k += 1;
                }
                blank_range(&mut out, i + 1, k);
                i = k + 1;
            } else if c.get(i + 2) == Some(&'\'') {
                blank_range(&mut out, i + 1, i + 2);
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

fn ident_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// Whether the character before `i` continues an identifier (so `c[i]` does not start a token),
/// ignoring a `b` prefix of a byte string.
fn ident_before(c: &[char], i: usize) -> bool {
    match i.checked_sub(1).map(|p| c[p]) {
        Some('b') => i >= 2 && ident_char(c[i - 2]),
        Some(p) => ident_char(p),
        None => false,
    }
}

/// The 1-based line of the character offset `at`.
fn line_of(code: &[char], at: usize) -> usize {
    code[..at].iter().filter(|&&c| c == '\n').count() + 1
}

/// The offset of the brace that closes the one at `open`.
fn matching_brace(code: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &ch) in code.iter().enumerate().skip(open) {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first `{` or `;` from `from` on outside parentheses and brackets.
fn body_or_end(code: &[char], from: usize) -> Option<(usize, char)> {
    let mut depth = 0i32;
    for (j, &ch) in code.iter().enumerate().skip(from) {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '{' | ';' if depth == 0 => return Some((j, ch)),
            _ => {}
        }
    }
    None
}

/// The line ranges (inclusive) of the items under `#[cfg(test)]`.
fn test_ranges(code: &[char]) -> Vec<(usize, usize)> {
    let text: String = code.iter().collect();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = text[from..].find("#[cfg(test)]") {
        let at_byte = from + p;
        let at = text[..at_byte].chars().count();
        let after = at + "#[cfg(test)]".chars().count();
        if let Some((j, '{')) = body_or_end(code, after) {
            if let Some(end) = matching_brace(code, j) {
                out.push((line_of(code, at), line_of(code, end)));
            }
        }
        from = at_byte + "#[cfg(test)]".len();
    }
    out
}

fn in_ranges(ranges: &[(usize, usize)], line: usize) -> bool {
    ranges.iter().any(|(a, b)| (*a..=*b).contains(&line))
}

/// One source file, read and lexed.
struct Source {
    path: PathBuf,
    raw: String,
    code: Vec<char>,
    tests: Vec<(usize, usize)>,
}

impl Source {
    fn read(path: &Path) -> Source {
        let raw = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let code: Vec<char> = blank(&raw).chars().collect();
        let tests = test_ranges(&code);
        Source {
            path: path.to_owned(),
            raw,
            code,
            tests,
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

// ------------------------------------------------------------------------------------------
// The module graph.

/// The top-level modules `lib.rs` declares (`mod x;`, `pub mod x;`, under any attribute).
fn declared_modules(src: &Path) -> Vec<String> {
    let lib = Source::read(&src.join("lib.rs"));
    let code: String = lib.code.iter().collect();
    let mut out = Vec::new();
    for line in code.lines() {
        let words: Vec<&str> = line
            .split(|c: char| !(ident_char(c) || c == ';'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(i) = words.iter().position(|w| *w == "mod") {
            if let Some(name) = words.get(i + 1) {
                if let Some(name) = name.strip_suffix(';') {
                    out.push(name.to_owned());
                }
            }
        }
    }
    out.sort();
    out
}

/// The top-level module names `code` refers to through `crate::`.
fn crate_references(code: &[char], modules: &BTreeSet<String>) -> BTreeSet<String> {
    let text: String = code.iter().collect();
    let mut out = BTreeSet::new();
    let mut from = 0;
    while let Some(p) = text[from..].find("crate::") {
        let at = from + p;
        from = at + "crate::".len();
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| ident_char(c) || c == '$') {
            continue;
        }
        let rest = &text[from..];
        let rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c, d::{e, f}}`: the names at the group's own level.
            let mut depth = 0;
            let mut item = String::new();
            let mut items = Vec::new();
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => items.push(std::mem::take(&mut item)),
                    _ if depth == 0 => item.push(ch),
                    _ => {}
                }
            }
            items.push(item);
            for it in items {
                let name: String = it.trim().chars().take_while(|c| ident_char(*c)).collect();
                if modules.contains(&name) {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| ident_char(*c)).collect();
            if modules.contains(&name) {
                out.insert(name);
            }
        }
    }
    out
}

/// For every top-level module of the crate whose sources are in `src`, the other top-level
/// modules it refers to.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = declared_modules(src).into_iter().collect();
    let mut graph = BTreeMap::new();
    for m in &modules {
        let mut files = Vec::new();
        let single = src.join(format!("{m}.rs"));
        if single.is_file() {
            files.push(single);
        }
        rust_files(&src.join(m), &mut files);
        let mut deps = BTreeSet::new();
        for f in files {
            deps.extend(crate_references(&Source::read(&f).code, &modules));
        }
        deps.remove(m);
        graph.insert(m.clone(), deps);
    }
    graph
}

/// The modules that lie on an import cycle, one cycle (strongly connected component) per entry.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability by repeated search: fine for a few dozen modules.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = vec![from];
        while let Some(m) = stack.pop() {
            for d in graph.get(m).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    stack.push(d);
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if done.contains(m) || !reachable[m].contains(m) {
            continue;
        }
        let component: Vec<String> = graph
            .keys()
            .filter(|o| reachable[m].contains(*o) && reachable[*o].contains(m))
            .cloned()
            .collect();
        done.extend(component.iter().cloned());
        out.push(component);
    }
    out
}

/// The layers, bottom up: a module's layer is one above the highest of its imports (0 without
/// any). Modules on a cycle are left out.
fn layers(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let on_cycle: BTreeSet<String> = cycles(graph).into_iter().flatten().collect();
    let mut level: BTreeMap<String, usize> = BTreeMap::new();
    let mut changed = true;
    while changed {
        changed = false;
        for (m, deps) in graph {
            if on_cycle.contains(m) || level.contains_key(m) {
                continue;
            }
            if deps.iter().any(|d| on_cycle.contains(d)) {
                continue;
            }
            if deps.iter().all(|d| level.contains_key(d)) {
                let l = deps.iter().map(|d| level[d] + 1).max().unwrap_or(0);
                level.insert(m.clone(), l);
                changed = true;
            }
        }
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, l) in level {
        if out.len() <= l {
            out.resize(l + 1, Vec::new());
        }
        out[l].push(m);
    }
    out
}

fn describe(crate_name: &str, graph: &BTreeMap<String, BTreeSet<String>>) -> String {
    let mut text = format!("module graph of {crate_name}, layers bottom up:\n");
    for (i, layer) in layers(graph).iter().enumerate() {
        let shown: Vec<String> = layer
            .iter()
            .map(|m| {
                let deps: Vec<&str> = graph[m].iter().map(String::as_str).collect();
                if deps.is_empty() {
                    m.clone()
                } else {
                    format!("{m} ({})", deps.join(" "))
                }
            })
            .collect();
        text.push_str(&format!("  {i}: {}\n", shown.join(", ")));
    }
    let layered: BTreeSet<String> = layers(graph).into_iter().flatten().collect();
    for (m, deps) in graph.iter().filter(|(m, _)| !layered.contains(*m)) {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        text.push_str(&format!("  not layered: {m} ({})\n", deps.join(" ")));
    }
    for c in cycles(graph) {
        text.push_str(&format!("  cycle: {}\n", c.join(" ")));
    }
    text
}

fn check_layers(crate_name: &str, src: &Path) -> Result<String, String> {
    let graph = module_graph(src);
    let text = describe(crate_name, &graph);
    if cycles(&graph).is_empty() {
        Ok(text)
    } else {
        Err(text)
    }
}

#[test]
fn the_reference_has_no_import_cycle() {
    match check_layers("skillspec-reference", &repo().join("src")) {
        Ok(text) => println!("{text}"),
        Err(text) => panic!("the top-level modules import each other in a cycle:\n{text}"),
    }
}

/// The reference's layers as `src/lib.rs` describes them, bottom up: the catalogue of mutants
/// (only with the feature), configuration and primitives, the tools, the profiles, the runtime.
const REFERENCE_LAYERS: &[&[&str]] = &[
    &["mutants"],
    &[
        "config",
        "frontmatter",
        "interpreter",
        "legacy",
        "policy",
        "process",
        "rules",
        "safe_fs",
        "skill_path",
        "tools",
        "trading",
        "unseen",
        "yaml",
    ],
    &[
        "agentskills",
        "discovery",
        "prompt",
        "read_reference",
        "run_script",
    ],
    &["hitl", "lifecycle", "profile", "selection", "trust"],
    &["runtime"],
];

/// Every module of the reference is in one of [`REFERENCE_LAYERS`] and imports only from its own
/// layer or those below.
#[test]
fn the_reference_imports_only_downwards() {
    let graph = module_graph(&repo().join("src"));
    let layer_of = |m: &str| REFERENCE_LAYERS.iter().position(|l| l.contains(&m));
    let mut bad = Vec::new();
    for (m, deps) in &graph {
        let Some(own) = layer_of(m) else {
            bad.push(format!("  `{m}` is in no layer of REFERENCE_LAYERS"));
            continue;
        };
        for d in deps {
            if layer_of(d).is_none_or(|l| l > own) {
                bad.push(format!("  `{m}` (layer {own}) imports `{d}` from above"));
            }
        }
    }
    for (i, layer) in REFERENCE_LAYERS.iter().enumerate() {
        println!("  layer {i}: {}", layer.join(", "));
    }
    assert!(bad.is_empty(), "imports that point up:\n{}", bad.join("\n"));
}

/// The checker itself: a cycle is found, and a layered graph is not one.
#[test]
fn the_cycle_check_can_fail() {
    let g = |edges: &[(&str, &str)]| {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            graph
                .entry(a.to_string())
                .or_default()
                .insert(b.to_string());
            graph.entry(b.to_string()).or_default();
        }
        graph
    };
    let layered = g(&[("runtime", "tools"), ("tools", "fs"), ("runtime", "fs")]);
    assert!(cycles(&layered).is_empty());
    assert_eq!(
        layers(&layered),
        [
            vec!["fs".to_owned()],
            vec!["tools".into()],
            vec!["runtime".into()]
        ]
    );
    let cyclic = g(&[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]);
    assert_eq!(cycles(&cyclic), [vec!["a", "b", "c"]]);
    let modules: BTreeSet<String> = ["config", "discovery", "safe_fs"].map(String::from).into();
    let code: Vec<char> = blank(
        "use crate::{config::Config, safe_fs::{self, X}};\n/// [`crate::discovery`]\nlet s = \"crate::discovery\";\n",
    )
    .chars()
    .collect();
    assert_eq!(
        crate_references(&code, &modules),
        ["config", "safe_fs"].map(String::from).into()
    );
}

/// The runner's graph, printed (`--nocapture`): no cycle.
#[test]
fn the_runner_has_no_import_cycle() {
    match check_layers("skillspec (runner)", &repo().join("runner/src")) {
        Ok(text) => println!("{text}"),
        Err(text) => panic!("the top-level modules import each other in a cycle:\n{text}"),
    }
}

/// The runner's layers lie in the order `runner/src/lib.rs` documents: the protocol below
/// everything that runs or judges cases, the case format and the implementations below the suite
/// loop, the reports above it, the commands on top.
#[test]
fn the_runner_layers_are_the_documented_ones() {
    let graph = module_graph(&repo().join("runner/src"));
    let layers = layers(&graph);
    let layer_of = |m: &str| {
        layers
            .iter()
            .position(|l| l.iter().any(|x| x == m))
            .unwrap_or_else(|| panic!("`{m}` is not layered:\n{}", describe("runner", &graph)))
    };
    let order = [
        ["protocol", "cases"],
        ["protocol", "implementations"],
        ["cases", "execution"],
        ["implementations", "execution"],
        ["execution", "reports"],
        ["reports", "commands"],
        ["smoke", "commands"],
    ];
    for [below, above] in order {
        assert!(
            layer_of(below) < layer_of(above),
            "`{below}` must lie below `{above}`:\n{}",
            describe("runner", &graph)
        );
    }
    let protocol: Vec<&str> = graph["protocol"].iter().map(String::as_str).collect();
    assert_eq!(
        protocol,
        ["embedded"],
        "the protocol layer may read the embedded schemas, nothing else of the runner"
    );
}

/// The runner prints to stdout only through `runner/src/output.rs` (its `out!`/`outln!`), never
/// with `print!`/`println!`, which panic when stdout's reader went away (`skillspec run -v |
/// head`, issue #18). Tests may print.
#[test]
fn the_runner_prints_only_through_its_output_module() {
    let mut files = Vec::new();
    rust_files(&repo().join("runner/src"), &mut files);
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("output.rs")) {
        let source = Source::read(f);
        let text: String = source.code.iter().collect();
        for name in ["print!", "println!"] {
            for (byte, _) in text.match_indices(name) {
                let before = text[..byte].chars().last();
                let at = text[..byte].chars().count();
                let line = line_of(&source.code, at);
                let macro_call = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                if macro_call && !in_ranges(&source.tests, line) {
                    found.push(format!("{}:{line}: {name}", f.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "stdout written around runner/src/output.rs: {found:?}"
    );
}

/// Every file of the runner opens with a `//!` account of what it owns.
#[test]
fn every_runner_file_says_what_it_owns() {
    let mut files = Vec::new();
    rust_files(&repo().join("runner/src"), &mut files);
    let silent: Vec<String> = files
        .iter()
        .filter(|f| {
            !fs::read_to_string(f)
                .unwrap_or_default()
                .trim_start()
                .starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        silent.is_empty(),
        "files without a `//!` opening: {silent:?}"
    );
}

// ------------------------------------------------------------------------------------------
// Mutants beside the code.

/// The line ranges of the `mod mutated { ... }` blocks of a file.
fn mutated_blocks(code: &[char]) -> Vec<(usize, usize)> {
    blocks_of(code, "mod mutated")
}

/// The line ranges of the braced bodies that follow `head` in `code`.
fn blocks_of(code: &[char], head: &str) -> Vec<(usize, usize)> {
    let text: String = code.iter().collect();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = text[from..].find(head) {
        let at_byte = from + p;
        let at = text[..at_byte].chars().count();
        if let Some((open, '{')) = body_or_end(code, at) {
            if let Some(close) = matching_brace(code, open) {
                out.push((line_of(code, at), line_of(code, close)));
            }
        }
        from = at_byte + head.len();
    }
    out
}

/// No production code of the reference knows the mutants: the catalogue (`src/mutants.rs`) is
/// named only inside `mod mutated` blocks, and the feature `mutants` selects whole items at a
/// module's top level (a `mod mutated`, its `use`, the other `steps()`, written once in
/// `steps_in_force!`), never code inside a function.
#[test]
fn mutants_live_beside_the_code_not_inside_it() {
    let root = repo();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("src/mutants.rs")) {
        let s = Source::read(f);
        let shown = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        // A module's defects may also be a file of their own, `mutated.rs`: all of it is the block.
        let blocks = if f.file_name().is_some_and(|n| n == "mutated.rs") {
            vec![(1, s.code.iter().filter(|c| **c == '\n').count() + 1)]
        } else {
            mutated_blocks(&s.code)
        };
        // `steps_in_force!` (src/lib.rs) expands, at a module's top level, to the two whole
        // items a feature selects between.
        let whole_items = [
            blocks.clone(),
            blocks_of(&s.code, "macro_rules! steps_in_force"),
        ]
        .concat();
        for (n, line) in s.code.iter().collect::<String>().lines().enumerate() {
            let raw = s.raw.lines().nth(n).unwrap_or_default();
            if line.contains("mutants::") && !in_ranges(&blocks, n + 1) {
                bad.push(format!(
                    "  {shown}:{}: names the catalogue outside `mod mutated`",
                    n + 1
                ));
            }
            if line.trim_start().starts_with('#')
                && raw.contains("feature = \"mutants\"")
                && !raw.starts_with("#[cfg(")
                && !in_ranges(&whole_items, n + 1)
            {
                bad.push(format!(
                    "  {shown}:{}: a `mutants` cfg inside an item",
                    n + 1
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "mutant code inside production code:\n{}",
        bad.join("\n")
    );
}

// ------------------------------------------------------------------------------------------
// Function length.

/// Every function with a body outside `#[cfg(test)]` items: (file, line, name, lines).
fn functions(src: &Path) -> Vec<(PathBuf, usize, String, usize)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = Vec::new();
    for f in files {
        let s = Source::read(&f);
        let code = &s.code;
        let mut i = 0;
        while i + 2 < code.len() {
            let starts = code[i] == 'f'
                && code[i + 1] == 'n'
                && code[i + 2].is_whitespace()
                && (i == 0 || !ident_char(code[i - 1]));
            if !starts {
                i += 1;
                continue;
            }
            let name: String = code[i + 3..]
                .iter()
                .skip_while(|c| c.is_whitespace())
                .take_while(|c| ident_char(**c))
                .collect();
            let line = line_of(code, i);
            if let Some((open, '{')) = body_or_end(code, i + 3) {
                if let Some(close) = matching_brace(code, open) {
                    let lines = line_of(code, close) - line + 1;
                    if !in_ranges(&s.tests, line) {
                        out.push((s.path.clone(), line, name, lines));
                    }
                }
            }
            i += 3;
        }
    }
    out
}

fn long_functions(src: &Path) -> Vec<String> {
    let root = repo();
    functions(src)
        .into_iter()
        .filter(|(_, _, _, n)| *n > MAX_FN_LINES)
        .map(|(f, line, name, n)| {
            let shown = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
            format!("  {shown}:{line} `{name}`: {n} lines")
        })
        .collect()
}

#[test]
fn no_function_of_the_reference_is_too_long() {
    let long = long_functions(&repo().join("src"));
    assert!(
        long.is_empty(),
        "production functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// The length count itself: a function's lines run from `fn` to its closing brace, braces in
/// strings and comments do not count, and test items are exempt.
#[test]
fn the_length_count_can_fail() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..160)
        .map(|i| format!("    let _x{i} = \"}}\"; // }}\n"))
        .collect();
    fs::write(
        dir.path().join("a.rs"),
        format!("fn long() {{\n{body}}}\nfn short() -> u8 {{ b'{{' }}\n#[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}    }}\n}}\n"),
    )
    .unwrap();
    let found = functions(dir.path());
    let names: Vec<(&str, usize)> = found.iter().map(|(_, _, n, l)| (n.as_str(), *l)).collect();
    assert_eq!(names, [("long", 162), ("short", 1)]);
}

#[test]
fn no_function_of_the_runner_is_too_long() {
    let long = long_functions(&repo().join("runner/src"));
    println!(
        "runner functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
    assert!(long.is_empty());
}

// ------------------------------------------------------------------------------------------
// Clause markers.

/// SPEC.md's clause indexes, every dialect's: (id, level) in order.
fn clause_index() -> Vec<(String, String)> {
    let spec = fs::read_to_string(repo().join("SPEC.md")).unwrap();
    let table = |heading: &str| -> String {
        let after = spec
            .split(heading)
            .nth(1)
            .unwrap_or_else(|| panic!("SPEC.md has {heading:?}"));
        after
            .lines()
            .take_while(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let index = table("\n## Clause index\n")
        + "\n"
        + &table("\n### Clause index of dialect `agentskills`\n");
    index
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let id = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let level = cells.get(2)?;
            Some((id.to_owned(), level.to_string()))
        })
        .collect()
}

/// Every `// spec:` marker outside test items: (file, line, the ids it names).
fn markers(dirs: &[PathBuf]) -> Vec<(PathBuf, usize, Vec<String>)> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut files = Vec::new();
        rust_files(dir, &mut files);
        for f in files {
            let s = Source::read(&f);
            for (n, line) in s.raw.lines().enumerate() {
                let Some((before, rest)) = line.split_once("// spec: ") else {
                    continue;
                };
                // The marker starts a line comment (not text inside another comment).
                if before.contains("//") || before.ends_with('/') {
                    continue;
                }
                if in_ranges(&s.tests, n + 1) || rest.starts_with("PROTOCOL.md") {
                    continue;
                }
                let ids: Vec<String> = rest
                    .split(' ')
                    .map_while(|w| {
                        let id = w.strip_suffix(',').unwrap_or(w);
                        let keep = !id.is_empty()
                            && id.chars().all(|c| {
                                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-'
                            });
                        keep.then(|| (id.to_owned(), w.ends_with(',')))
                    })
                    .scan(true, |more, (id, comma)| {
                        let take = *more;
                        *more = comma;
                        take.then_some(id)
                    })
                    .collect();
                out.push((f.clone(), n + 1, ids));
            }
        }
    }
    out
}

#[test]
fn every_must_clause_is_marked_where_it_is_enforced() {
    let index = clause_index();
    assert!(index.len() > 80, "read {} clauses of SPEC.md", index.len());
    let known: BTreeSet<&str> = index.iter().map(|(id, _)| id.as_str()).collect();
    let root = repo();
    let found = markers(&[root.join("src"), root.join("runner/src")]);
    let mut marked: BTreeSet<String> = BTreeSet::new();
    let mut bad = Vec::new();
    for (f, line, ids) in &found {
        let shown = f.strip_prefix(&root).unwrap_or(f).display();
        if ids.is_empty() {
            bad.push(format!("  {shown}:{line}: a marker without a clause id"));
        }
        if ids.len() > 1 {
            bad.push(format!(
                "  {shown}:{line}: one clause per marker, so that `grep 'spec: <id>'` finds each"
            ));
        }
        for id in ids {
            if !known.contains(id.as_str()) {
                bad.push(format!(
                    "  {shown}:{line}: `{id}` is not a clause of SPEC.md"
                ));
            }
            marked.insert(id.clone());
        }
    }
    assert!(bad.is_empty(), "bad markers:\n{}", bad.join("\n"));
    let unmarked: Vec<&str> = index
        .iter()
        .filter(|(id, level)| level == "MUST" && !marked.contains(id))
        .map(|(id, _)| id.as_str())
        .collect();
    assert!(
        unmarked.is_empty(),
        "MUST clauses without a `// spec: <id>` marker in src/ or runner/src/: {}",
        unmarked.join(", ")
    );
}

/// The markers the reference holds, per clause: where `grep 'spec: <id>'` leads.
#[test]
fn the_marker_reading_can_fail() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.rs"),
        "// spec: run.order, run.trading (guards first)\nlet x = 1; // spec: read.size\n// spec: PROTOCOL.md \"Refusals\"\n// spec: Nothing\n//! a `// spec: <id>` comment\n/// spec: read.scope\n#[cfg(test)]\nmod tests {\n    // spec: read.utf8\n}\n",
    )
    .unwrap();
    let found: Vec<(usize, Vec<String>)> = markers(&[dir.path().to_owned()])
        .into_iter()
        .map(|(_, l, ids)| (l, ids))
        .collect();
    assert_eq!(
        found,
        [
            (1, vec!["run.order".to_owned(), "run.trading".into()]),
            (2, vec!["read.size".into()]),
            (4, vec![]),
        ]
    );
}
