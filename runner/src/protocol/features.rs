//! The closed list of optional features a case can require and an implementation can declare.
//! A case requiring a feature the implementation does not declare is reported UNSUPPORTED, so a
//! feature may only make optional what the seeds make optional (SPEC.md "Optional features"):
//! the trading and replay guards and turn reuse were features once and are mandatory now.
//!
//! Declarations from an adapter are read leniently ([`split_declared`]): a name this runner does
//! not know is ignored (and the run header warns), so adapters and runners of different
//! versions still talk.

use serde::{Deserialize, Serialize};

/// An optional capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Feature {
    /// The host has an operator tool allowlist (`config.tool_allowlist`) that can remove tools.
    ToolAllowlist,
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

/// Names that were features and are mandatory behaviour now (SPEC.md "Optional features").
pub const REMOVED: [&str; 3] = ["trading-guard", "replay-guard", "turn-reuse"];

impl Feature {
    pub const ALL: [Feature; 6] = [
        Feature::ToolAllowlist,
        Feature::SkipReport,
        Feature::PlatformEmulation,
        Feature::Selection,
        Feature::Trust,
        Feature::Hitl,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Feature::ToolAllowlist => "tool-allowlist",
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

/// Splits an implementation's declared names into the features this runner knows (each once,
/// in declaration order) and the names it does not know (ignored by the run).
pub fn split_declared(names: Vec<String>) -> (Vec<Feature>, Vec<String>) {
    let mut known = Vec::new();
    let mut unknown = Vec::new();
    for name in names {
        match Feature::parse(&name) {
            Some(f) if !known.contains(&f) => known.push(f),
            Some(_) => {}
            None if !unknown.contains(&name) => unknown.push(name),
            None => {}
        }
    }
    (known, unknown)
}

/// The warning for declared names this runner does not know; `None` when there are none.
pub fn unknown_warning(unknown: &[String]) -> Option<String> {
    if unknown.is_empty() {
        return None;
    }
    let why = |n: &String| {
        if REMOVED.contains(&n.as_str()) {
            format!("`{n}` (no longer optional: its cases always run)")
        } else {
            format!("`{n}`")
        }
    };
    Some(format!(
        "warning: the implementation declares feature(s) this runner does not know, ignored: {}",
        unknown.iter().map(why).collect::<Vec<_>>().join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_removed_ones_are_unknown() {
        for f in Feature::ALL {
            assert_eq!(Feature::parse(f.as_str()), Some(f));
            assert_eq!(
                serde_json::to_value(f).unwrap(),
                serde_json::Value::from(f.as_str())
            );
        }
        for name in REMOVED {
            assert_eq!(Feature::parse(name), None);
        }
    }

    #[test]
    fn declarations_are_split_leniently() {
        let names = [
            "skip-report",
            "trading-guard",
            "skip-report",
            "warp-drive",
            "hitl",
        ]
        .map(String::from)
        .to_vec();
        let (known, unknown) = split_declared(names);
        assert_eq!(known, [Feature::SkipReport, Feature::Hitl]);
        assert_eq!(unknown, ["trading-guard", "warp-drive"]);
        let w = unknown_warning(&unknown).unwrap();
        assert!(w.contains("`trading-guard` (no longer optional"), "{w}");
        assert!(
            w.contains("`warp-drive`") && !w.contains("`warp-drive` (no"),
            "{w}"
        );
        assert_eq!(unknown_warning(&[]), None);
    }
}
