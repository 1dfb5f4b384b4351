//! The closed list of optional features a case can require and an implementation can declare.
//! A case requiring a feature the implementation does not declare is reported UNSUPPORTED.

use serde::{Deserialize, Serialize};

/// An optional capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Feature {
    /// The trading blocklist applies to helper names and identifier-like arguments (`run.trading`).
    TradingGuard,
    /// Replay mode refuses helpers before spawning (`run.replay`).
    ReplayGuard,
    /// Identical calls within one turn are reused (`tools.turn-reuse`).
    TurnReuse,
    /// Discovery reports why each skipped path was skipped, with the suite's reason codes. Without
    /// it, cases still run and `skipped` expectations are left unchecked.
    SkipReport,
    /// The runtime can act as if on another platform (`config.platform`, for `run.platform`).
    PlatformEmulation,
    /// Skill selection by activation criteria (profile `selection`).
    Selection,
    /// Trust levels and tool attenuation (profile `trust`).
    Trust,
    /// Human-in-the-loop script confirmation (profile `hitl`).
    Hitl,
}

impl Feature {
    pub const ALL: [Feature; 8] = [
        Feature::TradingGuard,
        Feature::ReplayGuard,
        Feature::TurnReuse,
        Feature::SkipReport,
        Feature::PlatformEmulation,
        Feature::Selection,
        Feature::Trust,
        Feature::Hitl,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Feature::TradingGuard => "trading-guard",
            Feature::ReplayGuard => "replay-guard",
            Feature::TurnReuse => "turn-reuse",
            Feature::SkipReport => "skip-report",
            Feature::PlatformEmulation => "platform-emulation",
            Feature::Selection => "selection",
            Feature::Trust => "trust",
            Feature::Hitl => "hitl",
        }
    }

    pub fn parse(s: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
