//! The scan: depth, skipped directories, bounds, links and FIFOs, modes, collisions.

use super::*;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn project(root: &Path) -> Roots {
    Roots {
        project: Some(root.to_path_buf()),
        user: None,
    }
}

fn names(c: &Catalog) -> Vec<&str> {
    c.skills.iter().map(|s| s.name.as_str()).collect()
}

fn has(c: &Catalog, clause: &str) -> bool {
    c.diagnostics.iter().any(|d| d.clause == clause)
}

#[test]
fn the_walk_finds_skills_down_to_depth_four_and_skips_what_it_should() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for rel in [
        "a",
        "group/b",
        "d1/d2/d3/c",
        "d1/d2/d3/d4/e",
        ".git/g",
        "node_modules/n",
    ] {
        let name = rel.rsplit('/').next().unwrap();
        write_skill(root, rel, &named(name, "d"));
    }
    // Not descended into: a skill directory's subdirectories.
    write_skill(root, "a/inner", &named("inner", "d"));
    // Not a skill: SKILL.md in the root itself, a directory with only skill.md or README.md.
    std::fs::write(root.join("SKILL.md"), named("root", "d")).unwrap();
    std::fs::create_dir(root.join("lower")).unwrap();
    std::fs::write(root.join("lower/skill.md"), named("lower", "d")).unwrap();
    std::fs::create_dir(root.join("readme")).unwrap();
    std::fs::write(root.join("readme/README.md"), "# x").unwrap();
    for mode in [Mode::Strict, Mode::Lenient] {
        let c = discover(&project(root), mode);
        assert_eq!(names(&c), ["a", "b", "c"], "{mode:?}");
    }
    let c = discover(&project(root), Mode::Strict);
    let a = &c.skills[0];
    assert_eq!(a.location, root.join("a/SKILL.md"));
    assert_eq!(a.directory, root.join("a"));
    assert!(a.location.is_absolute());
    assert_eq!(a.body, "# Body\n\nDo things.");
    assert_eq!(a.scope, Scope::Project);
    assert_eq!(a.description, "d");
}

/// A temporary directory for a tree of thousands of directories: in memory (`/dev/shm`) where
/// there is one, since creating and removing them on a disk can take many seconds.
fn big_tempdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    match shm.is_dir() {
        true => tempfile::tempdir_in(shm)
            .or_else(|_| tempfile::tempdir())
            .unwrap(),
        false => tempfile::tempdir().unwrap(),
    }
}

/// Creates a chain of `levels` directories `d/d/d/...` below `root` (too long a path for
/// `create_dir_all`) with a skill at its bottom.
fn deep_chain(root: &Path, levels: usize) {
    use rustix::fs::{Mode as Perm, OFlags, CWD};
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut fd = rustix::fs::openat(CWD, root, dir_flags, Perm::empty()).unwrap();
    for _ in 0..levels {
        rustix::fs::mkdirat(&fd, "d", Perm::from_raw_mode(0o755)).unwrap();
        fd = rustix::fs::openat(&fd, "d", dir_flags, Perm::empty()).unwrap();
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC;
    let file = rustix::fs::openat(&fd, "SKILL.md", flags, Perm::from_raw_mode(0o644)).unwrap();
    std::io::Write::write_all(&mut std::fs::File::from(file), named("d", "d").as_bytes()).unwrap();
}

/// Removes what [`deep_chain`] made, bottom up, holding two descriptors at a time.
fn remove_chain(root: &Path, levels: usize) {
    use rustix::fs::{AtFlags, Mode as Perm, OFlags, CWD};
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut fd = rustix::fs::openat(CWD, root, dir_flags, Perm::empty()).unwrap();
    for _ in 0..levels {
        fd = rustix::fs::openat(&fd, "d", dir_flags, Perm::empty()).unwrap();
    }
    rustix::fs::unlinkat(&fd, "SKILL.md", AtFlags::empty()).unwrap();
    for _ in 0..levels {
        let parent = rustix::fs::openat(&fd, "..", dir_flags, Perm::empty()).unwrap();
        rustix::fs::unlinkat(&parent, "d", AtFlags::REMOVEDIR).unwrap();
        fd = parent;
    }
}

#[test]
fn a_very_deep_chain_ends_fast() {
    let tmp = big_tempdir();
    deep_chain(tmp.path(), 10_000);
    write_skill(tmp.path(), "z", &named("z", "d"));
    let start = Instant::now();
    let c = discover(&project(tmp.path()), Mode::Lenient);
    let took = start.elapsed();
    assert_eq!(names(&c), ["z"]);
    assert!(took < Duration::from_millis(500), "{took:?}");
    remove_chain(tmp.path(), 10_000);
}

#[test]
fn a_wide_scope_stops_at_the_bound() {
    let tmp = big_tempdir();
    for i in 0..3000 {
        let name = format!("s{i:04}");
        write_skill(tmp.path(), &name, &named(&name, "d"));
    }
    let start = Instant::now();
    let c = discover(&project(tmp.path()), Mode::Strict);
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(c.skills.len(), MAX_SCAN_DIRS);
    assert_eq!(c.skills.last().map(|s| s.name.as_str()), Some("s1999"));
    let bound: Vec<_> = c
        .diagnostics
        .iter()
        .filter(|d| d.clause == "agentskills.discovery.bounds")
        .collect();
    assert_eq!(bound.len(), 1);
    // Exactly the bound: no diagnostic.
    let tmp = big_tempdir();
    for i in 0..MAX_SCAN_DIRS {
        std::fs::create_dir(tmp.path().join(format!("e{i}"))).unwrap();
    }
    assert!(!has(
        &discover(&project(tmp.path()), Mode::Strict),
        "agentskills.discovery.bounds"
    ));
}

#[test]
fn links_below_a_root_are_never_followed_but_the_root_may_be_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, outside) = (tmp.path().join("root"), tmp.path().join("outside"));
    write_skill(&outside, "ext", &named("ext", "d"));
    write_skill(&outside, "file", &named("file", "d"));
    write_skill(&root, "real", &named("real", "d"));
    std::os::unix::fs::symlink(outside.join("ext"), root.join("ext")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("all")).unwrap();
    std::fs::create_dir(root.join("file")).unwrap();
    std::os::unix::fs::symlink(outside.join("file/SKILL.md"), root.join("file/SKILL.md")).unwrap();
    let c = discover(&project(&root), Mode::Lenient);
    assert_eq!(names(&c), ["real"]);
    assert!(has(&c, "agentskills.skill.skill-md"));
    // The configured root through a link: followed, and `location` spells it as configured.
    let link = tmp.path().join("root-link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    let c = discover(&project(&link), Mode::Strict);
    assert_eq!(c.skills[0].location, link.join("real/SKILL.md"));
}

#[test]
fn a_fifo_named_skill_md_is_never_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    std::fs::create_dir(root.join("fifo")).unwrap();
    let fifo = root.join("fifo/SKILL.md");
    mkfifo(&fifo);
    write_skill(&root, "plain", &named("plain", "d"));
    // A writer blocks in its open until something opens the FIFO for reading.
    let (released, writer) = mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let opened = std::fs::OpenOptions::new().write(true).open(&path);
        let _ = released.send(opened.is_ok());
    });
    std::thread::sleep(Duration::from_millis(100));
    let (tx, rx) = mpsc::channel();
    let scanned = root.clone();
    std::thread::spawn(move || {
        let _ = tx.send(discover(&project(&scanned), Mode::Lenient));
        let _ = tx.send(discover(&project(&scanned), Mode::Strict));
    });
    for _ in 0..2 {
        let c = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(names(&c), ["plain"]);
    }
    assert!(validate_dir(&root.join("fifo")).problems[0]
        .message
        .contains("not a regular"));
    assert!(
        writer.recv_timeout(Duration::from_millis(200)).is_err(),
        "the FIFO's writer was released: something opened it"
    );
    let _reader = std::fs::File::open(&fifo).unwrap();
    assert_eq!(writer.recv_timeout(Duration::from_secs(5)), Ok(true));
}

#[test]
fn the_project_shadows_the_user_and_the_first_found_wins_in_a_scope() {
    let tmp = tempfile::tempdir().unwrap();
    let (p, u) = (tmp.path().join("p"), tmp.path().join("u"));
    write_skill(&p, "both", &named("both", "from the project"));
    write_skill(&u, "both", &named("both", "from the user"));
    write_skill(&u, "mine", &named("mine", "d"));
    write_skill(&p, "one/dup", &named("dup", "first"));
    write_skill(&p, "two/dup", &named("dup", "second"));
    let roots = Roots {
        project: Some(p.clone()),
        user: Some(u.clone()),
    };
    for mode in [Mode::Strict, Mode::Lenient] {
        let c = discover(&roots, mode);
        assert_eq!(names(&c), ["both", "dup", "mine"]);
        assert_eq!(c.skills[0].description, "from the project");
        assert_eq!(c.skills[1].description, "first");
        assert_eq!(c.skills[2].scope, Scope::User);
        let warnings: Vec<_> = c
            .diagnostics
            .iter()
            .filter(|d| d.clause == "agentskills.collision.warning")
            .map(|d| d.path.clone())
            .collect();
        assert_eq!(
            warnings,
            [p.join("two/dup/SKILL.md"), u.join("both/SKILL.md")]
        );
    }
}

#[test]
fn lenient_loads_cosmetic_problems_and_strict_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_skill(root, "mismatch", &named("other-name", "d"));
    write_skill(root, "Upper", &named("Upper", "d"));
    write_skill(root, "long", &named(&"l".repeat(65), "d"));
    write_skill(
        root,
        "compat",
        &md("name: compat\ndescription: d\ncompatibility: ''"),
    );
    write_skill(root, "nodesc", &md("name: nodesc"));
    write_skill(root, "blank", &md("name: blank\ndescription: '  '"));
    write_skill(root, "numname", &md("name: 7\ndescription: d"));
    write_skill(root, "broken", &md("name: [broken\ndescription: d"));
    write_skill(
        root,
        "colon",
        &md("name: colon\ndescription: Use when: it's needed"),
    );
    write_skill(root, "ok", &named("ok", "d"));
    let strict = discover(&project(root), Mode::Strict);
    assert_eq!(names(&strict), ["ok"]);
    let lenient = discover(&project(root), Mode::Lenient);
    let long = "l".repeat(65);
    assert_eq!(
        names(&lenient),
        [
            "Upper",
            "colon",
            "compat",
            long.as_str(),
            "ok",
            "other-name"
        ]
    );
    let colon = &lenient.skills[1];
    assert_eq!(colon.description, "Use when: it's needed");
    assert_eq!(colon.location, root.join("colon/SKILL.md"));
    for clause in [
        "agentskills.name.matches-directory",
        "agentskills.name.charset",
        "agentskills.name.length",
        "agentskills.compatibility.length",
        "agentskills.description.required",
        "agentskills.name.required",
        "agentskills.skill.frontmatter",
        "agentskills.parse.colon-fallback",
    ] {
        assert!(has(&lenient, clause), "{clause}");
    }
    assert!(!has(&strict, "agentskills.parse.colon-fallback"));
}

#[test]
fn missing_or_absent_roots_contribute_nothing() {
    assert!(discover(&Roots::default(), Mode::Strict).skills.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    let c = discover(
        &Roots {
            project: Some(tmp.path().join("absent")),
            user: Some(tmp.path().to_path_buf()),
        },
        Mode::Strict,
    );
    assert!(c.skills.is_empty());
    assert!(has(&c, "agentskills.discovery.scopes"));
}

#[test]
fn skills_are_sorted_by_the_bytes_of_their_names() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["b", "B", "a", "a-b", "a0"] {
        write_skill(tmp.path(), name, &named(name, "d"));
    }
    let c = discover(&project(tmp.path()), Mode::Lenient);
    assert_eq!(names(&c), ["B", "a", "a-b", "a0", "b"]);
}
