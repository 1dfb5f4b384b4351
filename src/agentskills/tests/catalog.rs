//! The prompt, the tools offered, and activation.

use super::*;

fn one(root: &Path, name: &str, description: &str) -> Catalog {
    write_skill(root, name, &named(name, description));
    discover(
        &Roots {
            project: Some(root.to_path_buf()),
            user: None,
        },
        Mode::Lenient,
    )
}

#[test]
fn no_skill_no_prompt_no_tool() {
    let empty = Catalog::default();
    assert_eq!(prompt(&empty), "");
    assert!(offered_tools(&empty).is_empty());
}

#[test]
fn the_prompt_is_the_instructions_and_the_catalog_escaped_without_bodies() {
    let tmp = tempfile::tempdir().unwrap();
    let c = one(tmp.path(), "pdf", "\"Reads <PDF> & 'more'\"");
    assert_eq!(offered_tools(&c), ["activate_skill"]);
    let location = tmp.path().join("pdf/SKILL.md");
    let expected = format!(
        "## Skills\n\
         \n\
         The following skills provide specialized instructions for specific tasks.\n\
         When a task matches a skill's description, call the activate_skill tool with the skill's \
         name to load its full instructions.\n\
         When a skill references relative paths, resolve them against the skill's directory (the \
         parent of its SKILL.md).\n\
         \n\
         <available_skills>\n\
         \x20 <skill>\n\
         \x20   <name>pdf</name>\n\
         \x20   <description>Reads &lt;PDF&gt; &amp; &apos;more&apos;</description>\n\
         \x20   <location>{}</location>\n\
         \x20 </skill>\n\
         </available_skills>\n",
        location.display()
    );
    assert_eq!(prompt(&c), expected);
    assert!(!prompt(&c).contains("Do things."));
    let mut quoted = c.clone();
    quoted.skills[0].name = "a\"b".into();
    assert!(prompt(&quoted).contains("<name>a&quot;b</name>"));
}

#[test]
fn activation_returns_the_body_and_lists_resources_without_reading_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let c = one(root, "pdf", "d");
    let dir = root.join("pdf");
    for (rel, content) in [
        ("references/x.md", "SECRET-REFERENCE"),
        ("scripts/run.py", "SECRET-SCRIPT"),
        ("a-b.txt", "x"),
        ("a/b.txt", "x"),
        ("skill.md", "x"),
        ("l1/l2/l3/four.txt", "x"),
        ("l1/l2/l3/l4/five.txt", "x"),
    ] {
        std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
        std::fs::write(dir.join(rel), content).unwrap();
    }
    std::os::unix::fs::symlink(dir.join("a-b.txt"), dir.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(root, dir.join("linked-dir")).unwrap();
    mkfifo(&dir.join("fifo"));
    let content = activate(&c, "pdf").unwrap();
    let expected = format!(
        "<skill_content name=\"pdf\">\n\
         # Body\n\nDo things.\n\
         \n\
         Skill directory: {}\n\
         Relative paths in this skill are relative to the skill directory.\n\
         \n\
         <skill_resources>\n\
         \x20 <file>a-b.txt</file>\n\
         \x20 <file>a/b.txt</file>\n\
         \x20 <file>l1/l2/l3/four.txt</file>\n\
         \x20 <file>references/x.md</file>\n\
         \x20 <file>scripts/run.py</file>\n\
         \x20 <file>skill.md</file>\n\
         </skill_resources>\n\
         </skill_content>\n",
        dir.display()
    );
    assert_eq!(content, expected);
    assert!(!content.contains("SECRET"));
    assert_eq!(activate(&c, "PDF"), Err(ActivateError::UnknownSkill));
    assert_eq!(activate(&c, "pd"), Err(ActivateError::UnknownSkill));
    assert_eq!(
        activate(&Catalog::default(), "pdf"),
        Err(ActivateError::UnknownSkill)
    );
}

#[test]
fn a_skill_without_other_files_has_no_resources_block_and_files_listed_late_appear() {
    let tmp = tempfile::tempdir().unwrap();
    let c = one(tmp.path(), "bare", "d");
    let content = activate(&c, "bare").unwrap();
    assert!(!content.contains("skill_resources"), "{content}");
    assert!(content.ends_with("relative to the skill directory.\n</skill_content>\n"));
    std::fs::write(tmp.path().join("bare/late.md"), "x").unwrap();
    assert!(activate(&c, "bare")
        .unwrap()
        .contains("<file>late.md</file>"));
}

#[test]
fn the_listing_is_capped_at_one_hundred_files() {
    let tmp = tempfile::tempdir().unwrap();
    let c = one(tmp.path(), "many", "d");
    let refs = tmp.path().join("many/refs");
    std::fs::create_dir(&refs).unwrap();
    for i in 0..150 {
        std::fs::write(refs.join(format!("f{i:03}.md")), "x").unwrap();
    }
    std::fs::write(tmp.path().join("many/<&>.md"), "x").unwrap();
    let content = activate(&c, "many").unwrap();
    let files: Vec<&str> = content
        .lines()
        .filter(|l| l.starts_with("  <file>"))
        .collect();
    assert_eq!(files.len(), 100);
    assert_eq!(files[0], "  <file>&lt;&amp;&gt;.md</file>");
    assert_eq!(files[99], "  <file>refs/f098.md</file>");
    assert!(content.contains("  <!-- listing capped at 100 files -->\n</skill_resources>\n"));
    // Exactly one hundred: no cap line.
    std::fs::remove_file(tmp.path().join("many/<&>.md")).unwrap();
    for i in 100..150 {
        std::fs::remove_file(refs.join(format!("f{i:03}.md"))).unwrap();
    }
    assert!(!activate(&c, "many").unwrap().contains("capped"));
}

#[test]
fn modes_and_scopes_have_their_words() {
    assert_eq!(Mode::parse("strict"), Some(Mode::Strict));
    assert_eq!(Mode::parse("lenient").map(Mode::as_str), Some("lenient"));
    assert_eq!(Mode::parse("Strict"), None);
    assert_eq!(Scope::User.as_str(), "user");
    assert_eq!(VERSION, "2026-08");
}
