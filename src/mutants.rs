//! Deliberate defects of the reference ("mutants"), to prove that the suite catches the bugs real
//! runtimes ship: `skillspec mutants` runs the whole suite once per mutant and requires every one
//! to be killed (some case fails). This module owns the catalogue ([`Mutant`]: a name, the SPEC.md
//! clause it breaks, what it does) and the switch the reference's code asks ([`active`]).
//!
//! Without the cargo feature `mutants` (every normal build), [`active`] is a `const fn` returning
//! `false`, so every `if mutants::active(..)` branch is removed by the optimiser, and neither the
//! names nor the descriptions of the catalogue are compiled in. With the feature, at most one
//! mutant is chosen per process, at run time, by [`activate`]; nothing is active until then.

#[cfg(feature = "mutants")]
use std::sync::OnceLock;

macro_rules! catalogue {
    ($( $variant:ident = $name:literal, $clause:literal, $what:literal; )*) => {
        /// One deliberate defect of the reference.
        #[derive(Clone, Copy, PartialEq, Eq)]
        #[cfg_attr(feature = "mutants", derive(Debug))]
        pub enum Mutant {
            $( $variant, )*
        }

        #[cfg(feature = "mutants")]
        impl Mutant {
            /// Every mutant, in catalogue order.
            pub const ALL: &'static [Mutant] = &[$( Mutant::$variant, )*];

            /// The mutant's stable name (what `skillspec mutants --only` takes).
            pub fn name(self) -> &'static str {
                match self { $( Mutant::$variant => $name, )* }
            }

            /// The SPEC.md clause id whose rule the defect breaks.
            pub fn clause(self) -> &'static str {
                match self { $( Mutant::$variant => $clause, )* }
            }

            /// What the defect does, in one sentence.
            pub fn description(self) -> &'static str {
                match self { $( Mutant::$variant => $what, )* }
            }

            /// The mutant with this name.
            pub fn parse(name: &str) -> Option<Mutant> {
                Mutant::ALL.iter().copied().find(|m| m.name() == name)
            }
        }
    };
}

catalogue! {
    // Discovery.
    DiscoveryFollowsDirSymlink = "discovery-follows-dir-symlink", "discovery.symlink.dir",
        "the scan follows a symlink to a directory and loads the skills behind it";
    DiscoveryFollowsSkillMdSymlink = "discovery-follows-skill-md-symlink", "discovery.symlink.skill-md",
        "a SKILL.md that is a symlink is read through the link";
    DiscoveryFollowsSkillYmlSymlink = "discovery-follows-skill-yml-symlink", "discovery.symlink.skill-yml",
        "a skill.yml that is a symlink is read through the link";
    DiscoveryDepthOffByOne = "discovery-depth-off-by-one", "discovery.depth",
        "directories at depth 9 are still examined (depth compared with > 9 instead of > 8)";
    DiscoveryGuideCapExclusive = "discovery-guide-cap-exclusive", "discovery.size",
        "a SKILL.md of exactly 262144 bytes is too large (the cap is exclusive)";
    DiscoveryDuplicateKeepsFirst = "discovery-duplicate-keeps-first", "discovery.duplicate",
        "of skill directories sharing a name, the first by path is kept instead of all dropped";
    DiscoveryOrderCaseInsensitive = "discovery-order-case-insensitive", "discovery.order",
        "guides are sorted case-insensitively (as a locale collation would) instead of by bytes";
    DiscoveryIdControlAllowed = "discovery-id-control-allowed", "discovery.id",
        "a directory name with a control character or backtick is accepted as a skill id";
    // Reads.
    ReadChecksLeafOnly = "read-checks-leaf-only", "read.realpath",
        "only the last path component is checked for a symlink; directories on the path are followed";
    ReadFollowsLeafSymlink = "read-follows-leaf-symlink", "read.realpath",
        "a reference file that is a symlink is read through the link";
    ReadDotDotAfterNormalise = "read-dotdot-after-normalise", "read.path.segments",
        "`..` is resolved by normalising after the scope check instead of refusing the path";
    ReadBackslashAllowed = "read-backslash-allowed", "read.path.backslash",
        "a backslash is an ordinary character of a path";
    ReadExtensionCaseInsensitive = "read-extension-case-insensitive", "read.extension",
        "extensions are compared case-insensitively (`.MD` is read)";
    ReadCapExclusive = "read-cap-exclusive", "read.size",
        "a reference of exactly 262144 bytes is too large (the cap is exclusive)";
    ReadOpensFifo = "read-opens-fifo", "read.regular-file",
        "the leaf is opened (blocking, without looking first) before its type is checked, so a FIFO hangs the call";
    ReadNotUtf8Lossy = "read-not-utf8-lossy", "read.utf8",
        "bytes that are not UTF-8 are replaced instead of refusing with not_text";
    ReadPathBeforeSkill = "read-path-before-skill", "read.errors",
        "the path is validated before the skill id (invalid_path wins over unknown_skill)";
    // Tools and prompt.
    ToolsWithoutGuides = "tools-without-guides", "tools.registration",
        "the skill tools are registered even when no guide loaded";
    ToolsDisallowedCallable = "tools-disallowed-callable", "tools.pipeline",
        "a tool the operator's allowlist removed is not offered but still runs when called";
    TurnReuseAcrossTurns = "turn-reuse-across-turns", "tools.turn-reuse",
        "a new turn does not forget earlier calls: results are cached for the runtime's life";
    PromptMentionsRemovedTool = "prompt-mentions-removed-tool", "prompt.filtered",
        "the prompt describes both skill tools even when the allowlist removed one";
    PromptNameNotOneLine = "prompt-name-not-one-line", "prompt.section",
        "a guide name is put into its heading verbatim, newlines included";
    // Running helpers: input and path.
    RunArgsControlAllowed = "run-args-control-allowed", "run.input.args",
        "arguments with control characters are passed on";
    RunArgsLimitOffByOne = "run-args-limit-off-by-one", "run.input.args",
        "33 arguments are accepted (the limit is compared with > 33)";
    RunChecksLeafOnly = "run-checks-leaf-only", "run.path",
        "only the helper file is checked for a symlink; directories on its path are followed";
    // Guards and approval.
    TradingNameOnly = "trading-name-only", "run.trading",
        "the trading guard checks the helper's name but never its arguments";
    TradingArgsOnly = "trading-args-only", "run.trading",
        "the trading guard checks the arguments but never the helper's name";
    TradingCaseSensitive = "trading-case-sensitive", "run.trading",
        "the trading patterns and names are matched case-sensitively";
    TradingNoFold = "trading-no-fold", "run.trading",
        "arguments are not folded (look-alike letters and marks pass the guard)";
    ReplayCaseInsensitiveOff = "replay-case-insensitive-off", "run.replay",
        "any capitalisation of `off` (`OFF`, `Off`) turns the replay guard off";
    ReplayAfterApproval = "replay-after-approval", "run.order",
        "the replay guard is checked after approval instead of before it";
    TradingAfterApproval = "trading-after-approval", "run.order",
        "the trading guard is checked after approval instead of before it";
    HashOnceCached = "hash-once-cached", "policy.edited",
        "a helper's hash is computed at its first call and cached: a file changed after approval still runs";
    PolicyUppercaseHex = "policy-uppercase-hex", "policy.format",
        "uppercase hex digits are accepted in policy hashes and compared case-insensitively";
    PolicySkipsBadEntry = "policy-skips-bad-entry", "policy.malformed",
        "a malformed policy entry is ignored and the others still approve (instead of denying all)";
    PolicyDuplicateFirstWins = "policy-duplicate-first-wins", "policy.duplicate",
        "a skill and script listed twice approve by either entry instead of making the policy malformed";
    PolicySkillCaseInsensitive = "policy-skill-case-insensitive", "run.approval",
        "the policy's skill id is compared case-insensitively";
    // Execution.
    RunFromDisk = "run-from-disk", "run.exec",
        "the interpreter is given the helper's path and reads it from disk instead of running the hashed bytes";
    InterpreterPathFromSkillDir = "interpreter-path-from-skill-dir", "run.exec",
        "the interpreter is looked up in PATH at call time with relative entries taken from the skill directory";
    CwdByPath = "cwd-by-path", "run.exec",
        "the working directory is entered by the configured root path and skill path, not by the checked descriptor";
    InheritedDescriptorLeak = "inherited-descriptor-leak", "run.exec",
        "descriptors above 2 are not closed before the interpreter starts: the helper inherits the runtime's pipes";
    IsolationKeepsScriptDir = "isolation-keeps-script-dir", "run.isolation",
        "the helper's directory stays on sys.path (the interpreter runs without -I)";
    EnvLeaksHome = "env-leaks-home", "run.env",
        "HOME is passed to the helper";
    EnvLeaksCredential = "env-leaks-credential", "run.env",
        "one credential variable (GITHUB_TOKEN) is passed to the helper";
    KillChildOnly = "kill-child-only", "run.process-group",
        "at the end of a run only the helper itself is killed, not its group or descendants";
    KillGroupOnly = "kill-group-only", "run.process-group",
        "the helper's process group is killed, but descendants that left the group are not tracked";
    OutputCapTruncates = "output-cap-truncates", "run.output-cap",
        "at the output cap the output is truncated and the call succeeds instead of failing with output_limit";
    OutputCapExclusive = "output-cap-exclusive", "run.output-cap",
        "output of exactly 262144 bytes is already over the cap";
    TimeoutSettingLenient = "timeout-setting-lenient", "run.timeout",
        "SKILL_SCRIPT_TIMEOUT_MS is trimmed and parsed leniently (` 500` is 500 ms, not the default)";
    FailureTailBytes = "failure-tail-bytes", "run.failure",
        "script_failed carries the last 4000 bytes of stderr instead of the last 4000 characters";
    // Profile `selection` and `trust`.
    SelectionKeywordCapOff = "selection-keyword-cap-off", "selection.score.keywords",
        "keyword points are not capped at 30";
    SelectionTieByNameReversed = "selection-tie-by-name-reversed", "selection.order",
        "skills with equal scores are ordered by name descending";
    SelectionVetoIgnored = "selection-veto-ignored", "selection.score.exclude",
        "an exclude keyword in the message does not veto the skill";
    SelectionBudgetStopsWalk = "selection-budget-stops-walk", "selection.budget",
        "the first skill that does not fit the budget stops the walk instead of being skipped";
    SelectionPatternWeightUnbounded = "selection-pattern-weight-unbounded", "selection.score.patterns",
        "patterns are neither weighed nor charged to the scan's budget (only the 256-byte limit holds)";
    SelectionGatingIgnored = "selection-gating-ignored", "selection.gating",
        "a skill whose requirements are not met is still selected";
    TrustShadowingReversed = "trust-shadowing-reversed", "trust.levels",
        "later directories shadow earlier ones (installed wins over user)";
    TrustShadowingSkillDirsOnly = "trust-shadowing-skill-dirs-only", "trust.levels",
        "only skill directories shadow: a user symlink or file of the name lets the installed skill load";
    TrustCeilingIgnoresInstalled = "trust-ceiling-ignores-installed", "trust.attenuation",
        "the tool ceiling is lowered only when every active skill is installed, not when any is";
    TrustCeilingNotApplied = "trust-ceiling-not-applied", "trust.attenuation",
        "the tool ceiling is only reported: the runtime still offers and runs skill_install and skill_remove";
    ArchiveLinkAccepted = "archive-link-accepted", "skills.lifecycle",
        "an archive entry that is a symlink is accepted (extracted as a file) instead of refusing the archive";
    // Profile `hitl`.
    HitlInvisibleArgsAllowed = "hitl-invisible-args-allowed", "hitl.confirm",
        "run_skill_script asks about and runs a call whose skill, script or arguments hold bidirectional or zero-width characters";
}

#[cfg(feature = "mutants")]
static ACTIVE: OnceLock<Mutant> = OnceLock::new();

/// Whether `m` is the mutant of this process. Always `false` without the feature `mutants`.
#[cfg(not(feature = "mutants"))]
#[inline(always)]
pub const fn active(_m: Mutant) -> bool {
    false
}

/// Whether `m` is the mutant of this process (set once by [`activate`]).
#[cfg(feature = "mutants")]
#[inline]
pub fn active(m: Mutant) -> bool {
    ACTIVE.get() == Some(&m)
}

/// Makes `m` the mutant of this process, for the rest of its life. Fails when another one was
/// already chosen.
#[cfg(feature = "mutants")]
pub fn activate(m: Mutant) -> Result<(), Mutant> {
    ACTIVE.set(m)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The defective code the hooks call. Plain functions, compiled in every build but called only
// behind `active(..)` (so removed from normal builds as dead code); each is the "obvious" way a
// runtime does the thing, which is exactly what makes it wrong.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::discovery::Guide;
use crate::safe_fs::{self, DirError, LeafError};
use crate::tools::{ErrorCode, ToolError};

/// Opens the directory `name` of `dir`, following a symlink.
pub fn open_dir_following(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, DirError> {
    rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::NOENT => DirError::NotFound,
        Errno::NOTDIR => DirError::NotDirectory,
        e => DirError::Unreadable(e.to_string()),
    })
}

/// Opens and reads `name` of `dir` under `cap`, following a symlink (non-blocking).
pub fn read_following(dir: BorrowedFd<'_>, name: &OsStr, cap: u64) -> Result<Vec<u8>, LeafError> {
    let fd = rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::NOENT => LeafError::NotFound,
        e => LeafError::Unreadable(e.to_string()),
    })?;
    let st = rfs::fstat(&fd).map_err(|e| LeafError::Unreadable(e.to_string()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(LeafError::NotRegular);
    }
    safe_fs::read_capped(&fd, cap)
}

/// [`crate::read_reference::open_parent`] that checks only the skill directory: the directories
/// on the path below it are opened following symlinks.
pub fn open_parent_following(
    root: &OwnedFd,
    guide: &Guide,
    segments: &[&str],
) -> Result<(OwnedFd, OwnedFd), ToolError> {
    let not_found = |_| ToolError::new(ErrorCode::NotFound, "no such file");
    let skill_dir = safe_fs::open_dir_chain(root.as_fd(), &guide.components).map_err(not_found)?;
    let mut dir = rustix::io::fcntl_dupfd_cloexec(&skill_dir, 0)
        .map_err(|e| ToolError::new(ErrorCode::NotFound, e.to_string()))?;
    for s in &segments[..segments.len().saturating_sub(1)] {
        dir = open_dir_following(dir.as_fd(), OsStr::new(s)).map_err(not_found)?;
    }
    Ok((skill_dir, dir))
}

/// A successful read's result.
pub fn read_result(
    skill: &str,
    path: &str,
    content: std::borrow::Cow<'_, str>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    out.insert("skill".into(), skill.into());
    out.insert("path".into(), path.into());
    out.insert("content".into(), content.into_owned().into());
    out
}

/// Resolves `.` and `..` segments (a `..` above the start is kept).
pub fn normalise<'a>(segments: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = Vec::new();
    for s in segments {
        match *s {
            "" | "." => {}
            ".." if out.last().is_some_and(|l| *l != "..") => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Opens `name` (blocking, not following a link) and only then checks that it is a regular file.
pub fn open_then_check(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, LeafError> {
    let fd = rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::NOENT => LeafError::NotFound,
        Errno::LOOP => LeafError::Symlink,
        Errno::NXIO | Errno::OPNOTSUPP => LeafError::NotRegular,
        e => LeafError::Unreadable(e.to_string()),
    })?;
    let st = rfs::fstat(&fd).map_err(|e| LeafError::Unreadable(e.to_string()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(LeafError::NotRegular);
    }
    Ok(fd)
}

/// The trading list matched case-sensitively.
pub fn blocked_case_sensitively(token: &str) -> Option<crate::trading::Rule> {
    use crate::trading::{Rule, EXACT_NAMES, PATTERNS};
    if let Some(p) = PATTERNS
        .iter()
        .find(|p| regex::Regex::new(p).is_ok_and(|r| r.is_match(token)))
    {
        return Some(Rule::Pattern(p));
    }
    EXACT_NAMES
        .iter()
        .find(|n| **n == token)
        .map(|n| Rule::ExactName(n))
}

/// The last `n` bytes of `text` (moved forward to a character boundary).
pub fn tail_bytes(text: &str, n: usize) -> &str {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The digest first computed for this helper (keyed by the root's real path, skill and script)
/// for the rest of the process.
pub fn first_digest(root: &Path, skill: &str, script: &str, digest: String) -> String {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static CACHE: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);
    let key = format!("{}\0{skill}\0{script}", root.display());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert(digest)
        .clone()
}

/// Looks a bare interpreter name up in `PATH` the way a spawn in the skill directory does: a
/// relative entry (`.`, an empty one) is taken from the skill directory.
pub fn lookup_from(skill_dir: &Path, name: &Path, path: Option<&String>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if name.as_os_str().as_bytes().contains(&b'/') {
        return None;
    }
    path?.split(':').find_map(|entry| {
        let candidate = skill_dir.join(entry).join(name);
        std::fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .then_some(candidate)
    })
}

/// The skill directory opened by path from the configured skills root (following links).
pub fn open_by_configured_path(config: &crate::Config, components: &[Vec<u8>]) -> Option<OwnedFd> {
    let mut path = config.skills_root.clone()?;
    for c in components {
        path.push(OsStr::from_bytes(c));
    }
    rfs::open(
        &path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

/// The bootstrap without the line that drops the working and helper directories from `sys.path`.
pub fn bootstrap_keeping_path(bootstrap: &str) -> String {
    bootstrap
        .lines()
        .filter(|l| !l.starts_with("sys.path[:]"))
        .collect::<Vec<_>>()
        .join("\n")
}
