//! The trading blocklist (SPEC.md `run.trading`): case-insensitive patterns for order placement
//! and cancellation, trades, buying and selling, balances, private keys, wallets, contract
//! approvals, withdrawals, deposits, transfers and signing. Applied to tool names by the host and,
//! inside `skill_run_script`, to the helper's file name without `.py` and to every
//! identifier-like argument with its leading dashes removed.

use std::sync::OnceLock;

use regex::RegexSet;

/// The patterns, each matched case-insensitively anywhere in the checked text.
pub const PATTERNS: [&str; 19] = [
    r"create[_-]?order",
    r"place[_-]?order",
    r"market[_-]?order",
    r"limit[_-]?order",
    r"cancel[_-]?order",
    r"cancel[_-]?all",
    r"execute[_-]?trade",
    r"submit[_-]?trade",
    r"(^|[_-])(buy|sell)([_-]|$)",
    r"wallet[_-]?balance",
    r"get[_-]?balances?$",
    r"private[_-]?key",
    r"configure[_-]?wallet",
    r"approve[_-]?contract",
    r"approve[_-]?set",
    r"ctf[_-]?(split|merge|redeem)",
    r"withdraw|deposit",
    r"transfer[_-]?funds",
    r"sign[_-]?transaction",
];

fn set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| {
        RegexSet::new(PATTERNS.iter().map(|p| format!("(?i){p}")))
            .unwrap_or_else(|_| RegexSet::empty())
    })
}

/// Whether `name` is a blocked trading name.
pub fn is_blocked(name: &str) -> bool {
    set().is_match(name)
}

/// An argument is identifier-like when, after removing leading `-`, it is an ASCII letter
/// followed by ASCII letters, digits, `_` or `-`. Returns that identifier.
pub fn identifier(arg: &str) -> Option<&str> {
    let id = arg.trim_start_matches('-');
    let mut chars = id.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    .then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC.md lists exactly these patterns, in this order.
    #[test]
    fn spec_lists_the_same_patterns() {
        let spec =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/SPEC.md")).unwrap();
        let listed: Vec<&str> = spec
            .lines()
            .filter_map(|l| l.strip_prefix("| `").and_then(|l| l.strip_suffix("` |")))
            .collect();
        assert_eq!(listed, PATTERNS);
    }

    #[test]
    fn blocklist() {
        assert_eq!(set().len(), PATTERNS.len());
        for blocked in [
            "place_order",
            "PLACE-ORDER",
            "withdraw",
            "buy",
            "sell_all",
            "quick-buy",
            "get_balance",
            "privatekey",
            "cancelAll",
        ] {
            assert!(is_blocked(blocked), "{blocked}");
        }
        for allowed in [
            "espn_fetch",
            "scoreboard",
            "buyer",
            "bestseller",
            "balance_sheet_stats",
            "order_of_play",
        ] {
            assert!(!is_blocked(allowed), "{allowed}");
        }
        assert_eq!(identifier("--place-order"), Some("place-order"));
        assert_eq!(identifier("scoreboard"), Some("scoreboard"));
        assert_eq!(identifier("--side=buy"), None);
        assert_eq!(identifier("2024"), None);
        assert_eq!(identifier("hello world"), None);
        assert_eq!(identifier("--"), None);
    }
}
