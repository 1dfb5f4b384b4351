//! Unit tests of dialect `agentskills` (temporary directories only): the format rules here, the
//! scan in `scan`, the catalog and activation in `catalog`; the shared helpers below.

mod catalog;
mod scan;

use super::*;
use std::path::Path;

/// A SKILL.md with this frontmatter block and a body.
fn md(frontmatter: &str) -> String {
    format!("---\n{frontmatter}\n---\n\n# Body\n\nDo things.\n")
}

/// A SKILL.md with a name and a description.
fn named(name: &str, description: &str) -> String {
    md(&format!("name: {name}\ndescription: {description}"))
}

/// Writes `text` as `rel/SKILL.md` below `root`.
fn write_skill(root: &Path, rel: &str, text: &str) {
    let dir = root.join(rel);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

fn check(dir: &str, frontmatter: &str) -> Validation {
    validate_text(dir.as_bytes(), md(frontmatter).as_bytes())
}

fn clauses(v: &Validation) -> Vec<&'static str> {
    v.problems.iter().map(|p| p.clause).collect()
}

fn problem<'a>(v: &'a Validation, clause: &str) -> &'a Problem {
    v.problems
        .iter()
        .find(|p| p.clause == clause)
        .unwrap_or_else(|| panic!("no {clause} in {:?}", v.problems))
}

#[test]
fn a_minimal_skill_is_valid_and_reads_back() {
    let v = check("pdf", "name: pdf\ndescription: Extracts text from PDFs.");
    assert!(v.valid() && v.problems.is_empty(), "{:?}", v.problems);
    let p = v.properties.unwrap();
    assert_eq!(p.name.as_deref(), Some("pdf"));
    assert_eq!(p.description.as_deref(), Some("Extracts text from PDFs."));
    assert_eq!(p.license, None);
    // Unknown keys and an empty body are no problem.
    let v = validate_text(
        b"pdf",
        b"---\nname: pdf\ndescription: d\nx-custom: [1]\n---\n",
    );
    assert!(v.problems.is_empty(), "{:?}", v.problems);
}

#[test]
fn every_name_rule_fails_and_passes() {
    let a64 = "a".repeat(64);
    let a65 = "a".repeat(65);
    let cases: &[(&str, &str, &[&str])] = &[
        ("pdf-tools", "pdf-tools", &[]),
        ("a1-b2", "a1-b2", &[]),
        (&a64, &a64, &[]),
        (&a65, &a65, &["agentskills.name.length"]),
        (
            "x",
            "''",
            &[
                "agentskills.name.length",
                "agentskills.name.matches-directory",
            ],
        ),
        ("Upper", "Upper", &["agentskills.name.charset"]),
        ("café", "café", &["agentskills.name.charset"]),
        ("技能", "技能", &["agentskills.name.charset"]),
        ("name²", "name²", &["agentskills.name.charset"]),
        ("a_b", "a_b", &["agentskills.name.charset"]),
        ("-a", "-a", &["agentskills.name.hyphen-edges"]),
        ("a-", "a-", &["agentskills.name.hyphen-edges"]),
        ("a--b", "a--b", &["agentskills.name.no-double-hyphen"]),
        ("pdf", "pdf-tools", &["agentskills.name.matches-directory"]),
        ("PDF", "pdf", &["agentskills.name.matches-directory"]),
        ("123", "123", &["agentskills.name.required"]),
        ("123", "\"123\"", &[]),
        ("x", "[x]", &["agentskills.name.required"]),
        (
            "x",
            "-A--",
            &[
                "agentskills.name.charset",
                "agentskills.name.hyphen-edges",
                "agentskills.name.no-double-hyphen",
                "agentskills.name.matches-directory",
            ],
        ),
    ];
    for (dir, name, expected) in cases {
        let v = check(dir, &format!("name: {name}\ndescription: d"));
        assert_eq!(clauses(&v), *expected, "{dir} / {name}");
        assert_eq!(v.valid(), expected.is_empty());
    }
    let v = check("x", "description: d");
    assert_eq!(clauses(&v), ["agentskills.name.required"]);
    // NFC and NFD spellings of one name are different bytes.
    let v = check("cafe\u{301}", "name: café\ndescription: d");
    assert!(clauses(&v).contains(&"agentskills.name.matches-directory"));
}

#[test]
fn every_description_rule_fails_and_passes() {
    let d1024 = "d".repeat(1024);
    let d1025 = "d".repeat(1025);
    let cases: &[(&str, &[&str])] = &[
        ("description: Does X. Use when Y.", &[]),
        (&format!("description: {d1024}"), &[]),
        (
            &format!("description: {d1025}"),
            &["agentskills.description.length"],
        ),
        ("description: ''", &["agentskills.description.required"]),
        (
            "description: '   \t'",
            &["agentskills.description.required"],
        ),
        (
            "description: \"\\u3000\"",
            &["agentskills.description.required"],
        ),
        ("description:", &["agentskills.description.required"]),
        ("description: 12", &["agentskills.description.required"]),
        ("other: x", &["agentskills.description.required"]),
    ];
    for (field, expected) in cases {
        let v = check("s", &format!("name: s\n{field}"));
        assert_eq!(clauses(&v), *expected, "{field}");
    }
    let long = check("s", &format!("name: s\ndescription: {d1025}"));
    let p = problem(&long, "agentskills.description.length");
    assert_eq!(p.hint, "shorten the description to 1024 characters");
    assert!(p.message.contains("1025"), "{}", p.message);
    // Characters, not bytes: 1024 three-byte characters are allowed.
    let wide = check("s", &format!("name: s\ndescription: {}", "技".repeat(1024)));
    assert!(wide.valid());
}

#[test]
fn the_optional_fields_rules_fail_and_pass() {
    let c500 = "c".repeat(500);
    let c501 = "c".repeat(501);
    let cases: &[(&str, &[&str])] = &[
        ("compatibility: Requires git", &[]),
        (&format!("compatibility: {c500}"), &[]),
        (
            &format!("compatibility: {c501}"),
            &["agentskills.compatibility.length"],
        ),
        ("compatibility: ''", &["agentskills.compatibility.length"]),
        ("compatibility: [a]", &["agentskills.compatibility.length"]),
        ("metadata:\n  author: me\n  version: \"1.0\"", &[]),
        ("metadata:\n  \"1\": a", &[]),
        (
            "metadata:\n  version: 1.0",
            &["agentskills.metadata.string-map"],
        ),
        (
            "metadata:\n  tags: [a, b]",
            &["agentskills.metadata.string-map"],
        ),
        (
            "metadata:\n  nested:\n    k: v",
            &["agentskills.metadata.string-map"],
        ),
        ("metadata: [a]", &["agentskills.metadata.string-map"]),
        ("metadata: text", &["agentskills.metadata.string-map"]),
        ("metadata:\n  1: a", &["agentskills.metadata.string-map"]),
        (
            "metadata: {a: b, 2: c}",
            &["agentskills.metadata.string-map"],
        ),
        ("allowed-tools: Bash(git:*) Read", &[]),
        (
            "allowed-tools: [Read, Bash]",
            &["agentskills.allowed-tools.string"],
        ),
        ("license: Apache-2.0", &[]),
        ("license: {name: MIT}", &["agentskills.license.text"]),
    ];
    for (field, expected) in cases {
        let v = check("s", &format!("name: s\ndescription: d\n{field}"));
        assert_eq!(clauses(&v), *expected, "{field}");
    }
    // The license rule is a SHOULD: the skill stays valid.
    let v = check("s", "name: s\ndescription: d\nlicense: [MIT]");
    assert!(v.valid() && !v.problems[0].must);
    let v = check("s", "name: s\ndescription: d\nmetadata:\n  version: 1.0");
    let p = problem(&v, "agentskills.metadata.string-map");
    assert_eq!(p.hint, "quote the value: version: \"1.0\"");
    assert_eq!(p.line, Some(4));
}

#[test]
fn the_frontmatter_is_read_by_the_crate_s_rules() {
    let fm = "agentskills.skill.frontmatter";
    let bad: &[&[u8]] = &[
        b"no frontmatter\n",
        b"---\nname: s\ndescription: d\n",
        b"---\nname: s\n...\n",
        b"---\n- a\n- b\n---\n",
        b"---\njust text\n---\n",
        b"---\n---\nbody\n",
        b"---\nname: [s\n---\n",
        b"---\nname: s\nname: t\n---\n",
        b"---\nname: s\ndescription: \xff\n---\n",
        b" ---\nname: s\ndescription: d\n---\n",
    ];
    for text in bad {
        let v = validate_text(b"s", text);
        assert_eq!(clauses(&v), [fm], "{}", String::from_utf8_lossy(text));
        assert_eq!(v.problems[0].line, Some(1));
        assert!(v.properties.is_none());
    }
    // A byte order mark, CRLF lines and trailing blanks on delimiter lines are fine.
    let v = validate_text(
        b"s",
        b"\xef\xbb\xbf--- \r\nname: s\r\ndescription: d\r\n---\t\r\nB\r\n",
    );
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    // `---` inside a line is text: the description keeps it.
    let v = validate_text(b"s", b"---\nname: s\ndescription: a---b\n---\nbody\n");
    assert!(v.valid());
    assert_eq!(v.properties.unwrap().description.as_deref(), Some("a---b"));
    // A value with `: ` is not YAML: the hint says what to quote.
    let v = validate_text(b"s", b"---\nname: s\ndescription: Use when: x\n---\n");
    let p = problem(&v, fm);
    assert!(
        p.hint.starts_with("quote a value that contains `: `"),
        "{}",
        p.hint
    );
    assert!(p.message.contains("line 3 of SKILL.md"), "{}", p.message);
}

/// `description: #1 tool` reads as null (a YAML comment): the fix says so and how to quote it.
#[test]
fn a_value_starting_with_a_hash_is_hinted_as_a_comment() {
    let v = check("s", "name: s\ndescription: #1 tool for \"x\"");
    let p = problem(&v, "agentskills.description.required");
    assert_eq!(p.line, Some(3));
    assert_eq!(
        p.hint,
        "`#` after `description:` starts a YAML comment, so `description` is empty; quote the whole value: description: \"#1 tool for \\\"x\\\"\""
    );
    let v = check("s", "name: s\ndescription: 5");
    assert!(!problem(&v, "agentskills.description.required")
        .hint
        .contains('#'));
}

#[test]
fn lines_point_at_the_key_and_messages_escape_controls() {
    let text = "\u{feff}---\n# comment\nname: Bad\ndescription: d\n---\n";
    let v = validate_text(b"Bad", text.as_bytes());
    assert_eq!(problem(&v, "agentskills.name.charset").line, Some(3));
    let v = validate_text(b"s", b"---\nname: s\n\"description\" : ''\n---\n");
    assert_eq!(
        problem(&v, "agentskills.description.required").line,
        Some(3)
    );
    let v = validate_text(b"s", b"---\nname: s\n---\n");
    assert_eq!(
        problem(&v, "agentskills.description.required").line,
        Some(1)
    );
    let v = check("s", "name: \"a\\x1bb\"\ndescription: d");
    let p = problem(&v, "agentskills.name.charset");
    assert!(p.message.contains("a\\u{1b}b"), "{}", p.message);
    assert!(!p.message.contains('\u{1b}'));
    let p = problem(&v, "agentskills.name.matches-directory");
    assert_eq!(
        p.hint,
        "rename the directory or the name so that they match"
    );
}

#[test]
fn properties_render_values_as_read() {
    let v = check(
        "s",
        "name: s\ndescription: >\n  folded\n  text\nlicense: MIT\ncompatibility: git\n\
         allowed-tools: [Read, 2]\nmetadata:\n  author: me\n  tags: [a, b]",
    );
    let p = v.properties.unwrap();
    assert_eq!(p.description.as_deref(), Some("folded text\n"));
    assert_eq!(p.allowed_tools.as_deref(), Some("[\"Read\", 2]"));
    assert_eq!(p.metadata.get("author").map(String::as_str), Some("me"));
    assert_eq!(
        p.metadata.get("tags").map(String::as_str),
        Some("[\"a\", \"b\"]")
    );
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["allowed-tools"], "[\"Read\", 2]");
    assert_eq!(json["license"], "MIT");
    let bare = check("s", "name: s\ndescription: d").properties.unwrap();
    let json = serde_json::to_value(&bare).unwrap();
    assert_eq!(json, serde_json::json!({"name": "s", "description": "d"}));
    let p = check("s", "name: 1.0\ndescription: d").properties.unwrap();
    assert_eq!(p.name.as_deref(), Some("1.0"));
}

#[test]
fn validate_dir_reads_only_a_regular_skill_md() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_skill(root, "good", &named("good", "d"));
    let v = validate_dir(&root.join("good"));
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    // The directory itself through a link: its name is the link's.
    std::os::unix::fs::symlink(root.join("good"), root.join("alias")).unwrap();
    let v = validate_dir(&root.join("alias"));
    assert_eq!(clauses(&v), ["agentskills.name.matches-directory"]);
    let v = validate_dir(&root.join("good/"));
    assert!(v.valid());

    let skill_md = "agentskills.skill.skill-md";
    std::fs::create_dir(root.join("lower")).unwrap();
    std::fs::write(root.join("lower/skill.md"), named("lower", "d")).unwrap();
    let v = validate_dir(&root.join("lower"));
    assert_eq!(clauses(&v), [skill_md]);
    assert_eq!(v.problems[0].hint, "rename `skill.md` to `SKILL.md`");
    assert_eq!(v.problems[0].line, None);
    std::fs::create_dir(root.join("link")).unwrap();
    std::os::unix::fs::symlink(root.join("good/SKILL.md"), root.join("link/SKILL.md")).unwrap();
    std::fs::create_dir_all(root.join("dir/SKILL.md")).unwrap();
    std::fs::create_dir(root.join("fifo")).unwrap();
    mkfifo(&root.join("fifo/SKILL.md"));
    write_skill(
        root,
        "big",
        &format!("{}{}", named("big", "d"), "x".repeat(262_144)),
    );
    write_skill(root, "exact", &{
        let head = named("exact", "d");
        format!("{head}{}", "x".repeat(262_144 - head.len()))
    });
    for d in ["link", "dir", "fifo", "big", "missing"] {
        let v = validate_dir(&root.join(d));
        assert_eq!(clauses(&v), [skill_md], "{d}");
    }
    assert!(validate_dir(&root.join("big")).problems[0]
        .message
        .contains("262144"));
    assert!(validate_dir(&root.join("exact")).valid());
}

/// A FIFO at `path`.
fn mkfifo(path: &Path) {
    use rustix::fs::{FileType, Mode, CWD};
    rustix::fs::mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
}
