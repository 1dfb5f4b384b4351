//! The limits and check orders of SPEC.md as one value: [`Rules`], plain data, whose spec values
//! are [`SPEC`]. The modules that enforce a rule read it through [`rules`] (and name their own
//! public constants after it: `discovery::MAX_DEPTH` is `SPEC.discovery.max_depth`), so a limit
//! or an order is written down once, here.
//!
//! Without the cargo feature `mutants` (every normal build), [`rules`] returns [`SPEC`] and the
//! optimiser folds every read into the constant. With the feature, a mutant that moves a limit or
//! an order (`discovery-depth-off-by-one`, `trading-after-approval`, `env-leaks-home`, ...)
//! replaces the value: `mod mutated` below is the only place that knows which.
//!
//! Clauses whose numbers live here: `discovery.depth`, `discovery.size`, `read.size`,
//! `read.errors` (the order of the checks), `run.input.args`, `run.approval` (the 1 MiB helper),
//! `run.trading` (what the guard looks at), `run.order`, `run.env`, `run.output-cap`,
//! `run.failure`, `run.process-group` (what is killed), `run.exec` (the descriptors closed),
//! `selection.score.keywords`, `selection.score.tags` and `selection.score.patterns` (the caps).

/// Every limit and check order the reference enforces from this table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub discovery: DiscoveryRules,
    pub read: ReadRules,
    pub run: RunRules,
    pub helper: HelperRules,
    pub selection: SelectionRules,
}

/// The walk and the guide files (SPEC.md `discovery.depth`, `discovery.size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscoveryRules {
    /// Directories deeper than this many levels below the root are not examined.
    pub max_depth: usize,
    /// The largest SKILL.md or skill.yml that loads, in bytes (inclusive).
    pub max_guide_bytes: u64,
}

/// `skill_read_reference` (SPEC.md `read.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRules {
    /// The largest reference file that can be read, in bytes (inclusive).
    pub max_bytes: u64,
    /// The order of the two checks between the arguments and the walk: the first that fails
    /// decides (`read.errors`: an unknown skill with a bad path is `unknown_skill`).
    pub order: [ReadCheck; 2],
}

/// A check of `skill_read_reference` whose order [`ReadRules::order`] fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadCheck {
    /// `skill` names a loaded guide (`unknown_skill`).
    Skill,
    /// The path text (`invalid_path`).
    PathText,
}

/// `skill_run_script` (SPEC.md `run.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunRules {
    /// At most this many arguments.
    pub max_args: usize,
    /// Each argument is at most this many UTF-8 bytes.
    pub max_arg_bytes: usize,
    /// A helper larger than this is never read whole and never runs.
    pub max_helper_bytes: u64,
    /// What the trading guard looks at, in order.
    pub trading_checks: &'static [TradingCheck],
    /// The guards checked after the path and before approval, in order (`run.order`).
    pub before_approval: &'static [Guard],
    /// The guards checked after approval (none: every guard comes first).
    pub after_approval: &'static [Guard],
    /// The only variables a helper inherits from the runtime's environment (`run.env`).
    pub passed_env: &'static [&'static str],
    /// stdout and stderr together, in bytes (`run.output-cap`).
    pub output_cap: usize,
    /// `script_failed` carries this many characters (Unicode scalar values) of the end of
    /// stderr (`run.failure`).
    pub stderr_tail_chars: usize,
}

/// What the trading guard checks (SPEC.md `run.trading`, "What is checked").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TradingCheck {
    /// The helper's file name without `.py`.
    HelperName,
    /// Every argument.
    Arguments,
}

/// A mandatory guard of `skill_run_script`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// The trading blocklist (`blocked_tool`).
    Trading,
    /// The replay guard (`replay_blocked`).
    Replay,
}

/// The helper's process (SPEC.md `run.exec`, "Descriptors"; `run.process-group`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelperRules {
    /// Every descriptor above 2 is closed before the interpreter starts.
    pub close_inherited_descriptors: bool,
    /// The helper's process group is killed at every ending, not only the helper.
    pub kill_group: bool,
    /// Every descendant of the helper is tracked (a child subreaper) and killed.
    pub kill_descendants: bool,
}

/// The score of profile `selection` (SPEC.md `selection.score.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectionRules {
    /// The most keyword points a skill gets.
    pub keyword_cap: u32,
    /// The most tag points a skill gets.
    pub tag_cap: u32,
    /// The most pattern points a skill gets.
    pub pattern_cap: u32,
}

/// The variables of SPEC.md `run.env`.
pub const PASSED_ENV: [&str; 9] = [
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SYSTEMROOT",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// The rules of SPEC.md.
pub const SPEC: Rules = Rules {
    discovery: DiscoveryRules {
        max_depth: 8,
        max_guide_bytes: 262_144,
    },
    read: ReadRules {
        max_bytes: 262_144,
        order: [ReadCheck::Skill, ReadCheck::PathText],
    },
    run: RunRules {
        max_args: 32,
        max_arg_bytes: 4096,
        max_helper_bytes: 1024 * 1024,
        trading_checks: &[TradingCheck::HelperName, TradingCheck::Arguments],
        before_approval: &[Guard::Trading, Guard::Replay],
        after_approval: &[],
        passed_env: &PASSED_ENV,
        output_cap: 262_144,
        stderr_tail_chars: 4000,
    },
    helper: HelperRules {
        close_inherited_descriptors: true,
        kill_group: true,
        kill_descendants: true,
    },
    selection: SelectionRules {
        keyword_cap: 30,
        tag_cap: 15,
        pattern_cap: 40,
    },
};

/// The rules in force: [`SPEC`].
#[cfg(not(feature = "mutants"))]
#[inline(always)]
pub fn rules() -> &'static Rules {
    &SPEC
}

/// The rules in force: [`SPEC`], or what this process's mutant made of them.
#[cfg(feature = "mutants")]
pub use mutated::rules;

/// The mutants that move a limit or an order: each is [`SPEC`] with one thing changed.
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub fn rules() -> &'static Rules {
        match chosen() {
            Some(Mutant::DiscoveryDepthOffByOne) => &DEPTH_NINE,
            Some(Mutant::DiscoveryGuideCapExclusive) => &GUIDE_CAP_EXCLUSIVE,
            Some(Mutant::ReadCapExclusive) => &READ_CAP_EXCLUSIVE,
            Some(Mutant::ReadPathBeforeSkill) => &PATH_BEFORE_SKILL,
            Some(Mutant::RunArgsLimitOffByOne) => &THIRTY_THREE_ARGS,
            Some(Mutant::TradingNameOnly) => &TRADING_NAME_ONLY,
            Some(Mutant::TradingArgsOnly) => &TRADING_ARGS_ONLY,
            Some(Mutant::TradingAfterApproval) => &TRADING_AFTER_APPROVAL,
            Some(Mutant::ReplayAfterApproval) => &REPLAY_AFTER_APPROVAL,
            Some(Mutant::EnvLeaksHome) => &ENV_WITH_HOME,
            Some(Mutant::EnvLeaksCredential) => &ENV_WITH_TOKEN,
            Some(Mutant::OutputCapExclusive) => &OUTPUT_CAP_EXCLUSIVE,
            Some(Mutant::InheritedDescriptorLeak) => &DESCRIPTORS_LEAK,
            Some(Mutant::KillChildOnly) => &KILL_CHILD_ONLY,
            Some(Mutant::KillGroupOnly) => &KILL_GROUP_ONLY,
            Some(Mutant::SelectionKeywordCapOff) => &NO_KEYWORD_CAP,
            _ => &SPEC,
        }
    }

    const DEPTH_NINE: Rules = Rules {
        discovery: DiscoveryRules {
            max_depth: 9,
            ..SPEC.discovery
        },
        ..SPEC
    };
    const GUIDE_CAP_EXCLUSIVE: Rules = Rules {
        discovery: DiscoveryRules {
            max_guide_bytes: SPEC.discovery.max_guide_bytes - 1,
            ..SPEC.discovery
        },
        ..SPEC
    };
    const READ_CAP_EXCLUSIVE: Rules = Rules {
        read: ReadRules {
            max_bytes: SPEC.read.max_bytes - 1,
            ..SPEC.read
        },
        ..SPEC
    };
    const PATH_BEFORE_SKILL: Rules = Rules {
        read: ReadRules {
            order: [ReadCheck::PathText, ReadCheck::Skill],
            ..SPEC.read
        },
        ..SPEC
    };
    const THIRTY_THREE_ARGS: Rules = Rules {
        run: RunRules {
            max_args: SPEC.run.max_args + 1,
            ..SPEC.run
        },
        ..SPEC
    };
    const TRADING_NAME_ONLY: Rules = Rules {
        run: RunRules {
            trading_checks: &[TradingCheck::HelperName],
            ..SPEC.run
        },
        ..SPEC
    };
    const TRADING_ARGS_ONLY: Rules = Rules {
        run: RunRules {
            trading_checks: &[TradingCheck::Arguments],
            ..SPEC.run
        },
        ..SPEC
    };
    const TRADING_AFTER_APPROVAL: Rules = Rules {
        run: RunRules {
            before_approval: &[Guard::Replay],
            after_approval: &[Guard::Trading],
            ..SPEC.run
        },
        ..SPEC
    };
    const REPLAY_AFTER_APPROVAL: Rules = Rules {
        run: RunRules {
            before_approval: &[Guard::Trading],
            after_approval: &[Guard::Replay],
            ..SPEC.run
        },
        ..SPEC
    };
    const ENV_WITH_HOME: Rules = Rules {
        run: RunRules {
            passed_env: &[
                "PATH",
                "LANG",
                "LC_ALL",
                "LC_CTYPE",
                "TZ",
                "TMPDIR",
                "SYSTEMROOT",
                "SSL_CERT_FILE",
                "SSL_CERT_DIR",
                "HOME",
            ],
            ..SPEC.run
        },
        ..SPEC
    };
    const ENV_WITH_TOKEN: Rules = Rules {
        run: RunRules {
            passed_env: &[
                "PATH",
                "LANG",
                "LC_ALL",
                "LC_CTYPE",
                "TZ",
                "TMPDIR",
                "SYSTEMROOT",
                "SSL_CERT_FILE",
                "SSL_CERT_DIR",
                "GITHUB_TOKEN",
            ],
            ..SPEC.run
        },
        ..SPEC
    };
    const OUTPUT_CAP_EXCLUSIVE: Rules = Rules {
        run: RunRules {
            output_cap: SPEC.run.output_cap - 1,
            ..SPEC.run
        },
        ..SPEC
    };
    const DESCRIPTORS_LEAK: Rules = Rules {
        helper: HelperRules {
            close_inherited_descriptors: false,
            ..SPEC.helper
        },
        ..SPEC
    };
    const KILL_CHILD_ONLY: Rules = Rules {
        helper: HelperRules {
            kill_group: false,
            kill_descendants: false,
            ..SPEC.helper
        },
        ..SPEC
    };
    const KILL_GROUP_ONLY: Rules = Rules {
        helper: HelperRules {
            kill_descendants: false,
            ..SPEC.helper
        },
        ..SPEC
    };
    const NO_KEYWORD_CAP: Rules = Rules {
        selection: SelectionRules {
            keyword_cap: u32::MAX,
            ..SPEC.selection
        },
        ..SPEC
    };
}
