//! Profile `trust` (SPEC.md, "Profile `selection` and `trust`"): the trust directories and the
//! level each gives its skills, the scan of all of them with shadowing, gating on required
//! commands and variables, and the tool ceiling the active skills' lowest trust sets.
//!
//! Each directory is scanned with the core discovery rules ([`crate::discovery`]); the
//! profile's fields are read on top ([`crate::selection::read_fields`]).
//!
//! A profile module (layer 3): it uses `discovery`, `selection`, `safe_fs`, `interpreter` and
//! `config`.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::path::PathBuf;

use serde::Serialize;

pub use crate::config::SkillDirs;
use crate::discovery::{self, Guide, GuideFormat, Skip, SkipReason};
use crate::safe_fs;
use crate::selection::{self, Fields, PatternBudget};

/// How far a skill is trusted; the order matters: `Installed < Trusted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// Installed from a registry: with one active, only read-only tools remain.
    Installed,
    /// Placed by the user (user or workspace directory): every tool.
    Trusted,
}

impl Trust {
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Installed => "installed",
            Trust::Trusted => "trusted",
        }
    }
}

/// The three directories of the profile, in load order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DirRole {
    User,
    Workspace,
    Installed,
}

impl DirRole {
    /// Load order: a name present in an earlier directory shadows it in later ones.
    pub const ORDER: [DirRole; 3] = [DirRole::User, DirRole::Workspace, DirRole::Installed];

    /// The prefix of this directory's paths in skip reports.
    pub fn label(self) -> &'static str {
        match self {
            DirRole::User => "user",
            DirRole::Workspace => "workspace",
            DirRole::Installed => "installed",
        }
    }

    /// The trust level of the skills in this directory; nothing in a skill changes it.
    pub fn trust(self) -> Trust {
        match self {
            DirRole::User | DirRole::Workspace => Trust::Trusted,
            DirRole::Installed => Trust::Installed,
        }
    }
}

impl SkillDirs {
    pub fn get(&self, role: DirRole) -> Option<&PathBuf> {
        match role {
            DirRole::User => self.user.as_ref(),
            DirRole::Workspace => self.workspace.as_ref(),
            DirRole::Installed => self.installed.as_ref(),
        }
    }
}

/// The tools that stay available while an Installed skill is active (SPEC.md
/// `trust.attenuation`): only tools that read, reviewed one by one; any other name is removed.
pub const READ_ONLY_TOOLS: [&str; 8] = [
    "memory_search",
    "memory_read",
    "memory_tree",
    "time",
    "echo",
    "json",
    "skill_list",
    "skill_search",
];

/// The tools of `tools` that remain available when skills of these trust levels are active:
/// all of them when none is Installed, else only the read-only ones.
// spec: trust.attenuation (the lowest trust among the active skills sets the ceiling)
pub fn ceiling(tools: &[String], active: impl IntoIterator<Item = Trust>) -> Vec<String> {
    let trusts: Vec<Trust> = active.into_iter().collect();
    match (steps().deciding)(&trusts) {
        Some(Trust::Installed) => tools
            .iter()
            .filter(|t| READ_ONLY_TOOLS.contains(&t.as_str()))
            .cloned()
            .collect(),
        _ => tools.to_vec(),
    }
}

/// Whether the requirements hold in the runtime's environment `env` (SPEC.md
/// `selection.gating`): every command is a bare name found as an executable regular file in an
/// absolute entry of `PATH` (the lookup of [`crate::interpreter::resolve`]), every variable
/// is set to a non-empty value, and every configuration path is absolute and exists.
pub fn requirements_met(req: &selection::Requirements, env: &BTreeMap<String, String>) -> bool {
    let path = env.get("PATH").map(OsStr::new);
    let bins = req.bins.iter().all(|b| {
        !b.is_empty()
            && !b.contains('/')
            && crate::interpreter::resolve(OsStr::new(b), path).is_ok()
    });
    let vars = req
        .env
        .iter()
        .all(|v| env.get(v).is_some_and(|value| !value.is_empty()));
    bins && vars && req.config.iter().all(|c| config_exists(c))
}

/// A `requires.config` entry names an absolute path that exists: one `stat` following links,
/// any type of file; nothing is opened or read. A relative or empty entry is never found.
// spec: selection.gating (a configuration path is absolute and exists)
fn config_exists(entry: &str) -> bool {
    entry.starts_with('/') && std::fs::metadata(entry).is_ok()
}

/// One loaded skill of the profile.
#[derive(Debug, Clone)]
pub struct ProfileSkill {
    pub guide: Guide,
    pub role: DirRole,
    pub trust: Trust,
    pub fields: Fields,
    /// A requirement is missing: the skill is listed but never selected.
    pub gated: bool,
}

/// The result of scanning every configured directory.
#[derive(Debug, Clone, Default)]
pub struct ProfileScan {
    /// One skill per name, sorted by the bytes of the name.
    pub skills: Vec<ProfileSkill>,
    /// What did not load, with paths prefixed by the directory's label (`installed/x`).
    pub skipped: Vec<Skip>,
    /// Every entry name met in any directory (skill directories, symlinks, files...): what
    /// shadows later directories and makes `skill_install` of that name `exists`.
    pub present: BTreeSet<Vec<u8>>,
}

impl ProfileScan {
    pub fn skill(&self, name: &str) -> Option<&ProfileSkill> {
        self.skills.iter().find(|s| s.guide.id == name)
    }
}

fn prefixed(role: DirRole, path: &str) -> String {
    if path.is_empty() {
        role.label().to_owned()
    } else {
        format!("{}/{path}", role.label())
    }
}

/// Scans the configured directories in load order (SPEC.md `trust.levels`): each with the core
/// discovery rules; a name present in an earlier directory (any entry the scan met there: a
/// skill directory loaded or not, a symlink, a file...) shadows the same name in later ones; the profile's fields are read, the
/// patterns compiled within one [`PatternBudget`] in load order, and gating is checked against
/// `env`. A directory that cannot be opened gives no skills.
pub fn scan(dirs: &SkillDirs, env: &BTreeMap<String, String>) -> ProfileScan {
    let mut out = ProfileScan::default();
    let mut budget = PatternBudget::for_scan();
    for role in (steps().load_order)() {
        let Some(dir) = dirs.get(role).filter(|d| d.is_absolute()) else {
            continue;
        };
        let Ok(fd) = safe_fs::open_root(dir) else {
            continue;
        };
        let found = discovery::discover_in_keeping_frontmatter(fd.as_fd());
        for skip in &found.skipped {
            out.skipped.push(Skip {
                path: prefixed(role, &skip.path),
                ..skip.clone()
            });
        }
        for mut guide in found.loaded {
            let path = prefixed(role, &guide.path);
            // spec: trust.levels (any entry of the name in an earlier directory shadows)
            if out.present.contains(guide.id.as_bytes()) {
                out.skipped.push(Skip {
                    path,
                    reason: SkipReason::Shadowed,
                    detail: format!(
                        "an entry named `{}` is present in an earlier directory",
                        guide.id
                    ),
                });
                continue;
            }
            let mut fields = match (guide.format, guide.frontmatter.take()) {
                (GuideFormat::Portable, Some(text)) => match selection::read_fields(&text) {
                    Ok(f) => f,
                    Err(why) => {
                        out.skipped.push(Skip {
                            path,
                            reason: SkipReason::Malformed,
                            detail: why,
                        });
                        continue;
                    }
                },
                _ => Fields::default(),
            };
            // Load order (directory, then the bytes of the names: `found.loaded` is sorted),
            // gated skills included: what is kept never depends on the environment.
            fields.activation.compile_patterns(&mut budget);
            let gated = !requirements_met(&fields.requires, env);
            out.skills.push(ProfileSkill {
                guide,
                role,
                trust: role.trust(),
                fields,
                gated,
            });
        }
        out.present.extend(found.names_present);
    }
    out.skills
        .sort_by(|a, b| a.guide.id.as_bytes().cmp(b.guide.id.as_bytes()));
    out.skipped
        .sort_by(|a, b| a.path.cmp(&b.path).then(a.reason.cmp(&b.reason)));
    out
}

/// The trust that sets the ceiling: the lowest of the active skills' (none without one).
fn lowest(trusts: &[Trust]) -> Option<Trust> {
    trusts.iter().min().copied()
}

/// The order the directories load in: user, workspace, installed.
fn load_order() -> [DirRole; 3] {
    DirRole::ORDER
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// The trust level that decides the ceiling.
    deciding: fn(&[Trust]) -> Option<Trust>,
    /// The order in which the directories load (and shadow).
    load_order: fn() -> [DirRole; 3],
}

const STEPS: Steps = Steps {
    deciding: lowest,
    load_order,
};

steps_in_force!();

/// The defects of this module (see `crate::mutants`); the shadowing by skill directories only is
/// `discovery`'s.
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::TrustCeilingIgnoresInstalled) => &HIGHEST_DECIDES,
            Some(Mutant::TrustShadowingReversed) => &REVERSED,
            _ => &STEPS,
        }
    }

    /// `trust-ceiling-ignores-installed`: the highest trust decides.
    const HIGHEST_DECIDES: Steps = Steps {
        deciding: |trusts| trusts.iter().max().copied(),
        ..STEPS
    };
    /// `trust-shadowing-reversed`.
    const REVERSED: Steps = Steps {
        load_order: || [DirRole::Installed, DirRole::Workspace, DirRole::User],
        ..STEPS
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn skill(dir: &std::path::Path, name: &str, extra: &str) {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(
            dir.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n{extra}---\nBody\n"),
        )
        .unwrap();
    }

    #[test]
    fn the_ceiling_keeps_only_read_only_tools_under_an_installed_skill() {
        let tools: Vec<String> = [
            "shell",
            "memory_read",
            "skill_list",
            "skill_install",
            "Time",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(ceiling(&tools, []), tools);
        assert_eq!(ceiling(&tools, [Trust::Trusted, Trust::Trusted]), tools);
        assert_eq!(
            ceiling(&tools, [Trust::Trusted, Trust::Installed]),
            ["memory_read", "skill_list"]
        );
    }

    #[test]
    fn gating_looks_up_bare_names_on_absolute_path_entries_and_non_empty_variables() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("docker"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(bin.join("docker"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::write(bin.join("kubectl"), "not executable").unwrap();
        let env: BTreeMap<String, String> = [
            ("PATH".to_owned(), format!(".:{}", bin.display())),
            ("SET".to_owned(), "x".to_owned()),
            ("EMPTY".to_owned(), String::new()),
        ]
        .into();
        let req = |bins: &[&str], vars: &[&str]| selection::Requirements {
            bins: bins.iter().map(|s| s.to_string()).collect(),
            env: vars.iter().map(|s| s.to_string()).collect(),
            config: Vec::new(),
        };
        assert!(requirements_met(&req(&["docker"], &["SET"]), &env));
        assert!(!requirements_met(&req(&["kubectl"], &[]), &env));
        assert!(!requirements_met(&req(&["missing"], &[]), &env));
        let abs = bin.join("docker").display().to_string();
        assert!(!requirements_met(&req(&[&abs], &[]), &env));
        assert!(!requirements_met(&req(&[""], &[]), &env));
        assert!(!requirements_met(&req(&[], &["EMPTY"]), &env));
        assert!(!requirements_met(&req(&[], &["UNSET"]), &env));
        let config = |paths: &[&str]| selection::Requirements {
            config: paths.iter().map(|s| s.to_string()).collect(),
            ..selection::Requirements::default()
        };
        let docker = bin.join("docker").display().to_string();
        let dir = bin.display().to_string();
        assert!(requirements_met(
            &config(&[&docker, &dir, "/dev/null"]),
            &env
        ));
        let missing = bin.join("missing.toml").display().to_string();
        assert!(!requirements_met(&config(&[&docker, &missing]), &env));
        // Relative (whatever the working directory holds) and empty entries are never found.
        assert!(!requirements_met(&config(&["."]), &env));
        assert!(!requirements_met(&config(&[""]), &env));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&missing, &link).unwrap();
        assert!(!requirements_met(
            &config(&[&link.display().to_string()]),
            &env
        ));
        std::fs::write(&missing, "").unwrap();
        assert!(requirements_met(
            &config(&[&link.display().to_string()]),
            &env
        ));
    }

    #[test]
    fn any_entry_of_an_earlier_directory_shadows() {
        let tmp = tempfile::tempdir().unwrap();
        let (user, ws, inst) = (
            tmp.path().join("user"),
            tmp.path().join("ws"),
            tmp.path().join("installed"),
        );
        skill(&tmp.path().join("elsewhere"), "deploy", "");
        std::fs::create_dir_all(user.join("group")).unwrap();
        std::os::unix::fs::symlink("../elsewhere/deploy", user.join("deploy")).unwrap();
        std::fs::write(user.join("notes"), "a file").unwrap();
        std::os::unix::fs::symlink("/nowhere", user.join("group/tools")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            ws.join("pipe"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        for name in ["deploy", "notes", "tools", "group", "pipe", "other"] {
            skill(&inst, name, "");
        }
        let dirs = SkillDirs {
            user: Some(user),
            workspace: Some(ws),
            installed: Some(inst),
        };
        let s = scan(&dirs, &BTreeMap::new());
        let loaded: Vec<&str> = s.skills.iter().map(|k| k.guide.id.as_str()).collect();
        assert_eq!(loaded, ["other"]);
        let shadowed: Vec<&str> = s
            .skipped
            .iter()
            .filter(|k| k.reason == SkipReason::Shadowed)
            .map(|k| k.path.as_str())
            .collect();
        assert_eq!(
            shadowed,
            [
                "installed/deploy",
                "installed/group",
                "installed/notes",
                "installed/pipe",
                "installed/tools"
            ]
        );
    }

    #[test]
    fn earlier_directories_shadow_later_ones_even_when_their_skill_does_not_load() {
        let tmp = tempfile::tempdir().unwrap();
        let (user, inst) = (tmp.path().join("user"), tmp.path().join("installed"));
        skill(&user, "deploy", "");
        skill(&inst, "deploy", "");
        skill(&inst, "notes", "");
        // A user skill that does not load still shadows the installed one of that name.
        std::fs::create_dir_all(user.join("broken")).unwrap();
        std::fs::write(user.join("broken/SKILL.md"), "no frontmatter").unwrap();
        skill(&inst, "broken", "");
        skill(&user, "typed", "activation:\n  keywords: deploy\n");
        let dirs = SkillDirs {
            user: Some(user),
            workspace: Some(tmp.path().join("missing")),
            installed: Some(inst),
        };
        let s = scan(&dirs, &BTreeMap::new());
        let got: Vec<(&str, Trust)> = s
            .skills
            .iter()
            .map(|k| (k.guide.id.as_str(), k.trust))
            .collect();
        assert_eq!(
            got,
            [("deploy", Trust::Trusted), ("notes", Trust::Installed)]
        );
        let skipped: Vec<(&str, SkipReason)> = s
            .skipped
            .iter()
            .map(|k| (k.path.as_str(), k.reason))
            .collect();
        assert_eq!(
            skipped,
            [
                ("installed/broken", SkipReason::Shadowed),
                ("installed/deploy", SkipReason::Shadowed),
                ("user/broken", SkipReason::Malformed),
                ("user/typed", SkipReason::Malformed),
            ]
        );
    }
}
