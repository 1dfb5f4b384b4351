//! Deliberate defects of the reference ("mutants"), to prove that the suite catches the bugs real
//! runtimes ship: `skillspec mutants` runs the whole suite once per mutant and requires every one
//! to be killed (some case fails). This module owns the catalogue only ([`Mutant`]: a name, the
//! SPEC.md clause it breaks, what it does) and the choice of this process's mutant ([`activate`],
//! [`active`], [`chosen`]). It imports nothing of the crate.
//!
//! It exists only with the cargo feature `mutants` (`lib.rs` declares it under that feature), so
//! a normal build holds neither the names nor the descriptions, nor any defective code. The
//! defects themselves live beside the code they break, in `#[cfg(feature = "mutants")] mod
//! mutated` submodules that choose, at one dispatch point each, what the production code reads:
//! - the limits and check orders of [`crate::rules::Rules`] (`rules::mutated`);
//! - the file access of the walks, [`crate::safe_fs::FileAccess`] (`safe_fs::mutated`): the
//!   symlink and FIFO defects;
//! - the replaceable steps of a module (its `Steps` table of functions), each defective twin
//!   beside the function it breaks (`discovery::mutated`, `run_script::mutated`, ...).
//!
//! At most one mutant is chosen per process, at run time, by [`activate`]; nothing is active
//! until then, and the production code never asks which one is.

use std::sync::OnceLock;

macro_rules! catalogue {
    ($( $variant:ident = $name:literal, $clause:literal, $opens:literal, $what:literal; )*) => {
        /// One deliberate defect of the reference.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Mutant {
            $( $variant, )*
        }

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

            /// The exposure the defect opens, for a defect of a safety rule (a word of the
            /// runner's closed list: `outside-content`, `code-ran`, ...): the suite must kill it
            /// by an unsafe verdict naming that exposure. `None` for a defect that crosses no
            /// boundary (a limit off by one, an order, a wording).
            pub fn opens(self) -> Option<&'static str> {
                match self { $( Mutant::$variant => Some($opens).filter(|w: &&str| !w.is_empty()), )* }
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
    DiscoveryFollowsDirSymlink = "discovery-follows-dir-symlink", "discovery.symlink.dir", "outside-content",
        "the scan follows a symlink to a directory and loads the skills behind it";
    DiscoveryFollowsSkillMdSymlink = "discovery-follows-skill-md-symlink", "discovery.symlink.skill-md", "outside-content",
        "a SKILL.md that is a symlink is read through the link";
    DiscoveryFollowsSkillYmlSymlink = "discovery-follows-skill-yml-symlink", "discovery.symlink.skill-yml", "outside-content",
        "a skill.yml that is a symlink is read through the link";
    DiscoveryDepthOffByOne = "discovery-depth-off-by-one", "discovery.depth", "",
        "directories at depth 9 are still examined (depth compared with > 9 instead of > 8)";
    DiscoveryGuideCapExclusive = "discovery-guide-cap-exclusive", "discovery.size", "",
        "a SKILL.md of exactly 262144 bytes is too large (the cap is exclusive)";
    DiscoveryDuplicateKeepsFirst = "discovery-duplicate-keeps-first", "discovery.duplicate", "",
        "of skill directories sharing a name, the first by path is kept instead of all dropped";
    DiscoveryOrderCaseInsensitive = "discovery-order-case-insensitive", "discovery.order", "",
        "guides are sorted case-insensitively (as a locale collation would) instead of by bytes";
    DiscoveryIdControlAllowed = "discovery-id-control-allowed", "discovery.id", "",
        "a directory name with a control character or backtick is accepted as a skill id";
    // Reads.
    ReadChecksLeafOnly = "read-checks-leaf-only", "read.realpath", "outside-content",
        "only the last path component is checked for a symlink; directories on the path are followed";
    ReadFollowsLeafSymlink = "read-follows-leaf-symlink", "read.realpath", "outside-content",
        "a reference file that is a symlink is read through the link";
    ReadDotDotAfterNormalise = "read-dotdot-after-normalise", "read.path.segments", "outside-content",
        "`..` is resolved by normalising after the scope check instead of refusing the path";
    ReadBackslashAllowed = "read-backslash-allowed", "read.path.backslash", "",
        "a backslash is an ordinary character of a path";
    ReadExtensionCaseInsensitive = "read-extension-case-insensitive", "read.extension", "",
        "extensions are compared case-insensitively (`.MD` is read)";
    ReadCapExclusive = "read-cap-exclusive", "read.size", "",
        "a reference of exactly 262144 bytes is too large (the cap is exclusive)";
    ReadOpensFifo = "read-opens-fifo", "read.regular-file", "unbounded",
        "the leaf is opened (blocking, without looking first) before its type is checked, so a FIFO hangs the call";
    ReadNotUtf8Lossy = "read-not-utf8-lossy", "read.utf8", "",
        "bytes that are not UTF-8 are replaced instead of refusing with not_text";
    ReadPathBeforeSkill = "read-path-before-skill", "read.errors", "",
        "the path is validated before the skill id (invalid_path wins over unknown_skill)";
    // Tools and prompt.
    ToolsWithoutGuides = "tools-without-guides", "tools.registration", "",
        "the skill tools are registered even when no guide loaded";
    ToolsDisallowedCallable = "tools-disallowed-callable", "tools.pipeline", "removed-tool",
        "a tool the operator's allowlist removed is not offered but still runs when called";
    TurnReuseAcrossTurns = "turn-reuse-across-turns", "tools.turn-reuse", "",
        "a new turn does not forget earlier calls: results are cached for the runtime's life";
    PromptMentionsRemovedTool = "prompt-mentions-removed-tool", "prompt.filtered", "",
        "the prompt describes both skill tools even when the allowlist removed one";
    PromptNameNotOneLine = "prompt-name-not-one-line", "prompt.section", "prompt-forgery",
        "a guide name is put into its heading verbatim, newlines included";
    // Running helpers: input and path.
    RunArgsControlAllowed = "run-args-control-allowed", "run.input.args", "code-ran",
        "arguments with control characters are passed on";
    RunArgsLimitOffByOne = "run-args-limit-off-by-one", "run.input.args", "code-ran",
        "33 arguments are accepted (the limit is compared with > 33)";
    RunChecksLeafOnly = "run-checks-leaf-only", "run.path", "code-ran",
        "only the helper file is checked for a symlink; directories on its path are followed";
    // Guards and approval.
    TradingNameOnly = "trading-name-only", "run.trading", "code-ran",
        "the trading guard checks the helper's name but never its arguments";
    TradingArgsOnly = "trading-args-only", "run.trading", "code-ran",
        "the trading guard checks the arguments but never the helper's name";
    TradingCaseSensitive = "trading-case-sensitive", "run.trading", "code-ran",
        "the trading patterns and names are matched case-sensitively";
    TradingNoFold = "trading-no-fold", "run.trading", "code-ran",
        "arguments are not folded (look-alike letters and marks pass the guard)";
    ReplayCaseInsensitiveOff = "replay-case-insensitive-off", "run.replay", "code-ran",
        "any capitalisation of `off` (`OFF`, `Off`) turns the replay guard off";
    ReplayAfterApproval = "replay-after-approval", "run.order", "",
        "the replay guard is checked after approval instead of before it";
    TradingAfterApproval = "trading-after-approval", "run.order", "",
        "the trading guard is checked after approval instead of before it";
    HashOnceCached = "hash-once-cached", "policy.edited", "code-ran",
        "a helper's hash is computed at its first call and cached: a file changed after approval still runs";
    PolicyUppercaseHex = "policy-uppercase-hex", "policy.format", "code-ran",
        "uppercase hex digits are accepted in policy hashes and compared case-insensitively";
    PolicySkipsBadEntry = "policy-skips-bad-entry", "policy.malformed", "code-ran",
        "a malformed policy entry is ignored and the others still approve (instead of denying all)";
    PolicyDuplicateFirstWins = "policy-duplicate-first-wins", "policy.duplicate", "code-ran",
        "a skill and script listed twice approve by either entry instead of making the policy malformed";
    ApprovalIgnored = "approval-skipped", "run.approval", "code-ran",
        "every helper runs: the policy is parsed and the helper hashed, but no verdict refuses it";
    HashOfPrefix = "hash-compared-on-prefix", "run.approval", "code-ran",
        "the helper's hash and the policy's are compared on their first 4 hex digits only";
    PolicySkillCaseInsensitive = "policy-skill-case-insensitive", "run.approval", "code-ran",
        "the policy's skill id is compared case-insensitively";
    // Execution.
    RunFromDisk = "run-from-disk", "run.exec", "code-ran",
        "the interpreter is given the helper's path and reads it from disk instead of running the hashed bytes";
    InterpreterPathFromSkillDir = "interpreter-path-from-skill-dir", "run.exec", "code-ran",
        "the interpreter is looked up in PATH at call time with relative entries taken from the skill directory";
    CwdByPath = "cwd-by-path", "run.exec", "outside-content",
        "the working directory is entered by the configured root path and skill path, not by the checked descriptor";
    InheritedDescriptorLeak = "inherited-descriptor-leak", "run.exec", "secret",
        "descriptors above 2 are not closed before the interpreter starts: the helper inherits the runtime's pipes";
    IsolationKeepsScriptDir = "isolation-keeps-script-dir", "run.isolation", "code-ran",
        "the helper's directory stays on sys.path (the interpreter runs without -I)";
    EnvLeaksHome = "env-leaks-home", "run.env", "secret",
        "HOME is passed to the helper";
    EnvLeaksCredential = "env-leaks-credential", "run.env", "secret",
        "one credential variable (GITHUB_TOKEN) is passed to the helper";
    KillChildOnly = "kill-child-only", "run.process-group", "code-ran",
        "at the end of a run only the helper itself is killed, not its group or descendants";
    KillGroupOnly = "kill-group-only", "run.process-group", "code-ran",
        "the helper's process group is killed, but descendants that left the group are not tracked";
    OutputCapTruncates = "output-cap-truncates", "run.output-cap", "",
        "at the output cap the output is truncated and the call succeeds instead of failing with output_limit";
    OutputCapExclusive = "output-cap-exclusive", "run.output-cap", "",
        "output of exactly 262144 bytes is already over the cap";
    TimeoutSettingLenient = "timeout-setting-lenient", "run.timeout", "",
        "SKILL_SCRIPT_TIMEOUT_MS is trimmed and parsed leniently (` 500` is 500 ms, not the default)";
    FailureTailBytes = "failure-tail-bytes", "run.failure", "",
        "script_failed carries the last 4000 bytes of stderr instead of the last 4000 characters";
    // Profile `selection` and `trust`.
    SelectionKeywordCapOff = "selection-keyword-cap-off", "selection.score.keywords", "",
        "keyword points are not capped at 30";
    SelectionTieByNameReversed = "selection-tie-by-name-reversed", "selection.order", "",
        "skills with equal scores are ordered by name descending";
    SelectionVetoIgnored = "selection-veto-ignored", "selection.score.exclude", "",
        "an exclude keyword in the message does not veto the skill";
    SelectionBudgetStopsWalk = "selection-budget-stops-walk", "selection.budget", "",
        "the first skill that does not fit the budget stops the walk instead of being skipped";
    SelectionPatternWeightUnbounded = "selection-pattern-weight-unbounded", "selection.score.patterns", "",
        "patterns are neither weighed nor charged to the scan's budget (only the 256-byte limit holds)";
    SelectionGatingIgnored = "selection-gating-ignored", "selection.gating", "",
        "a skill whose requirements are not met is still selected";
    TrustShadowingReversed = "trust-shadowing-reversed", "trust.levels", "",
        "later directories shadow earlier ones (installed wins over user)";
    TrustShadowingSkillDirsOnly = "trust-shadowing-skill-dirs-only", "trust.levels", "code-ran",
        "only skill directories shadow: a user symlink or file of the name lets the installed skill load";
    TrustCeilingIgnoresInstalled = "trust-ceiling-ignores-installed", "trust.attenuation", "removed-tool",
        "the tool ceiling is lowered only when every active skill is installed, not when any is";
    TrustCeilingNotApplied = "trust-ceiling-not-applied", "trust.attenuation", "removed-tool",
        "the tool ceiling is only reported: the runtime still offers and runs skill_install and skill_remove";
    ArchiveLinkAccepted = "archive-link-accepted", "skills.lifecycle", "code-ran",
        "an archive entry that is a symlink is accepted (extracted as a file) instead of refusing the archive";
    // Profile `hitl`.
    HitlInvisibleArgsAllowed = "hitl-invisible-args-allowed", "hitl.confirm", "code-ran",
        "run_skill_script asks about and runs a call whose skill, script or arguments hold bidirectional or zero-width characters";
    // Dialect agentskills.
    AsNameUppercaseAllowed = "as-name-uppercase-allowed", "agentskills.name.charset", "",
        "a name with uppercase ASCII letters passes the charset rule";
    AsNameLengthExclusive = "as-name-length-exclusive", "agentskills.name.length", "",
        "a name of exactly 64 characters is too long (the limit is exclusive)";
    AsNameEdgeHyphenAllowed = "as-name-edge-hyphen-allowed", "agentskills.name.hyphen-edges", "",
        "a name may start or end with a hyphen";
    AsNameDoubleHyphenAllowed = "as-name-double-hyphen-allowed", "agentskills.name.no-double-hyphen", "",
        "a name may hold consecutive hyphens";
    AsNameDirCaseInsensitive = "as-name-dir-case-insensitive", "agentskills.name.matches-directory", "",
        "the name is compared with its directory's name ASCII case-insensitively";
    AsDescriptionWhitespaceAccepted = "as-description-whitespace-accepted", "agentskills.description.required", "",
        "a description of white space only counts as given (only an empty one is missing)";
    AsDescription1025Accepted = "as-description-1025-accepted", "agentskills.description.length", "",
        "a description of 1025 characters is accepted (the limit is compared with > 1025)";
    AsCompatibilityEmptyAccepted = "as-compatibility-empty-accepted", "agentskills.compatibility.length", "",
        "an empty compatibility string is accepted";
    AsMetadataNumberAccepted = "as-metadata-number-accepted", "agentskills.metadata.string-map", "",
        "metadata values that are numbers, booleans or null are accepted as strings";
    AsAllowedToolsListAccepted = "as-allowed-tools-list-accepted", "agentskills.allowed-tools.string", "",
        "allowed-tools written as a YAML list is accepted";
    AsDashesMidLineClose = "as-dashes-mid-line-close", "agentskills.parse.delimiters", "",
        "the first `---` anywhere after the opening line closes the frontmatter, as skills-ref does";
    AsUserShadowsProject = "as-user-shadows-project", "agentskills.collision.project-over-user", "",
        "a user-level skill shadows the project-level skill of the same name";
    AsEmptyCatalogShown = "as-empty-catalog-shown", "agentskills.catalog.empty-omitted", "",
        "with no skill loaded the prompt still holds the instructions and an empty <available_skills> block";
    AsBodyInCatalog = "as-body-in-catalog", "agentskills.disclosure.catalog", "",
        "each catalog entry carries the skill's body";
    AsResourcesInlined = "as-resources-inlined", "agentskills.disclosure.resources-on-demand", "",
        "activation appends the content of every file it lists";
    AsLenientSkipsMismatch = "as-lenient-skips-mismatch", "agentskills.lenient.name-mismatch", "",
        "a lenient client skips a skill whose name differs from its directory's";
    AsNodeModulesScanned = "as-node-modules-scanned", "agentskills.discovery.skip-dirs", "",
        "node_modules is walked like any other directory";
    AsLowercaseSkillMd = "as-lowercase-skill-md", "agentskills.skill.skill-md", "",
        "a file named skill.md (in any case) is taken for SKILL.md";
}

static ACTIVE: OnceLock<Mutant> = OnceLock::new();

/// The mutant of this process, once [`activate`] chose one.
#[inline]
pub fn chosen() -> Option<Mutant> {
    ACTIVE.get().copied()
}

/// Whether `m` is the mutant of this process (set once by [`activate`]).
#[inline]
pub fn active(m: Mutant) -> bool {
    chosen() == Some(m)
}

/// Makes `m` the mutant of this process, for the rest of its life. Fails when another one was
/// already chosen.
pub fn activate(m: Mutant) -> Result<(), Mutant> {
    ACTIVE.set(m)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        let mut names: Vec<&str> = Mutant::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names.len(), 82);
        for m in Mutant::ALL {
            assert_eq!(Mutant::parse(m.name()), Some(*m));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Mutant::ALL.len());
    }
}
