//! The trading guard's blocklist (SPEC.md `run.trading`): what `skill_run_script` refuses with
//! `blocked_tool` unless the operator allows trading.
//!
//! This module owns the list — the source runtime's 19 case-insensitive patterns ([`PATTERNS`])
//! and its 12 exact names ([`EXACT_NAMES`]) — and how a text is turned into the tokens the list is
//! matched against: [`fold`] (NFKD, marks and format characters dropped, the Cyrillic and Greek
//! look-alikes of [`LOOK_ALIKES`] replaced) and [`tokens`] (maximal runs of ASCII letters, digits,
//! `_` and `-`, leading `-` removed). [`check`] applies both to an argument,
//! [`check_helper_name`] to a helper's file name without `.py`.
//!
//! A primitive: it uses no other module of the crate. `run_script` applies the guard.

use std::sync::OnceLock;

use regex::RegexSet;
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::UnicodeNormalization;

/// The patterns, verbatim from the source runtime, each matched case-insensitively anywhere in a
/// token (`^` and `$` anchor at the token's start and end).
pub const PATTERNS: [&str; 19] = [
    r"create[_-]?order",
    r"place[_-]?order",
    r"market[_-]?order",
    r"limit[_-]?order",
    r"cancel[_-]?order",
    r"cancel[_-]?all",
    r"execute[_-]?trade",
    r"submit[_-]?trade",
    r"[_-]buy[_-]|[_-]sell[_-]|^buy[_-]|^sell[_-]",
    r"wallet[_-]?balance",
    r"get[_-]?balance$",
    r"private[_-]?key",
    r"configure[_-]?wallet",
    r"approve[_-]?contract",
    r"approve[_-]?set",
    r"ctf[_-]?(split|merge|redeem)",
    r"withdraw|deposit",
    r"transfer[_-]?funds",
    r"sign[_-]?transaction",
];

/// The exact names of earlier versions of the source runtime; a token equal to one, ignoring
/// ASCII case, is blocked.
pub const EXACT_NAMES: [&str; 12] = [
    "polymarket_configure",
    "polymarket_create_order",
    "polymarket_market_order",
    "polymarket_cancel_order",
    "polymarket_cancel_all_orders",
    "polymarket_ctf_split",
    "polymarket_ctf_merge",
    "polymarket_ctf_redeem",
    "polymarket_approve_set",
    "polymarket_get_balance",
    "polymarket_get_orders",
    "polymarket_get_user_trades",
];

/// Cyrillic and Greek letters drawn like Latin ones, and dashes drawn like `-`, with the ASCII
/// character each folds to (after NFKD, so U+2011 arrives as U+2010).
pub const LOOK_ALIKES: [(char, char); 50] = [
    ('\u{0430}', 'a'),
    ('\u{0410}', 'A'),
    ('\u{03B1}', 'a'),
    ('\u{0391}', 'A'),
    ('\u{0412}', 'B'),
    ('\u{0392}', 'B'),
    ('\u{0441}', 'c'),
    ('\u{0421}', 'C'),
    ('\u{0501}', 'd'),
    ('\u{0435}', 'e'),
    ('\u{0415}', 'E'),
    ('\u{0395}', 'E'),
    ('\u{04BB}', 'h'),
    ('\u{041D}', 'H'),
    ('\u{0397}', 'H'),
    ('\u{0456}', 'i'),
    ('\u{0406}', 'I'),
    ('\u{03B9}', 'i'),
    ('\u{0399}', 'I'),
    ('\u{0458}', 'j'),
    ('\u{0408}', 'J'),
    ('\u{041A}', 'K'),
    ('\u{039A}', 'K'),
    ('\u{041C}', 'M'),
    ('\u{039C}', 'M'),
    ('\u{039D}', 'N'),
    ('\u{043E}', 'o'),
    ('\u{041E}', 'O'),
    ('\u{03BF}', 'o'),
    ('\u{039F}', 'O'),
    ('\u{0440}', 'p'),
    ('\u{0420}', 'P'),
    ('\u{03C1}', 'p'),
    ('\u{03A1}', 'P'),
    ('\u{051B}', 'q'),
    ('\u{0455}', 's'),
    ('\u{0405}', 'S'),
    ('\u{0422}', 'T'),
    ('\u{03A4}', 'T'),
    ('\u{03C5}', 'u'),
    ('\u{03BD}', 'v'),
    ('\u{051D}', 'w'),
    ('\u{0445}', 'x'),
    ('\u{0425}', 'X'),
    ('\u{03A7}', 'X'),
    ('\u{0443}', 'y'),
    ('\u{04AE}', 'Y'),
    ('\u{03B3}', 'y'),
    ('\u{03A5}', 'Y'),
    ('\u{0396}', 'Z'),
];

/// Dashes folded to `-` (U+2011 NON-BREAKING HYPHEN decomposes to U+2010 under NFKD).
pub const DASH_LOOK_ALIKES: [char; 4] = ['\u{2010}', '\u{2012}', '\u{2013}', '\u{2212}'];

fn set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| {
        // The patterns are constants covered by the tests; they always compile.
        RegexSet::new(PATTERNS.iter().map(|p| format!("(?i){p}")))
            .unwrap_or_else(|_| RegexSet::empty())
    })
}

/// The rule of the list that blocks a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Pattern(&'static str),
    ExactName(&'static str),
}

/// A blocked token and the rule that blocks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    pub token: String,
    pub rule: Rule,
}

impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.rule {
            Rule::Pattern(p) => write!(f, "`{}` matches the pattern `{p}`", self.token),
            Rule::ExactName(n) => write!(f, "`{}` is the blocked name `{n}`", self.token),
        }
    }
}

fn is_dropped(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
            | GeneralCategory::Format
    )
}

fn look_alike(c: char) -> char {
    if DASH_LOOK_ALIKES.contains(&c) {
        return '-';
    }
    LOOK_ALIKES
        .iter()
        .find(|(from, _)| *from == c)
        .map_or(c, |(_, to)| *to)
}

/// The text the guard looks at: NFKD, without marks (General Category M) and format characters
/// (Cf), with every look-alike replaced by its ASCII character.
pub fn fold(text: &str) -> String {
    text.nfkd()
        .filter(|c| !is_dropped(*c))
        .map(look_alike)
        .collect()
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The tokens of `text`: the maximal runs of ASCII letters, digits, `_` and `-` of its folded
/// form, each without its leading `-`; empty ones dropped.
// spec: run.trading (fold, then split)
pub fn tokens(text: &str) -> Vec<String> {
    (steps().fold)(text)
        .split(|c: char| !is_token_char(c))
        .map(|t| t.trim_start_matches('-'))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The rule that blocks `token` (one token, as [`tokens`] gives it), if any: the first matching
/// pattern, else an exact name.
pub fn blocked_token(token: &str) -> Option<Rule> {
    (steps().blocked_token)(token)
}

/// [`blocked_token`]: the patterns and the names, both ignoring ASCII case.
fn blocked_ignoring_case(token: &str) -> Option<Rule> {
    if let Some(i) = set().matches(token).iter().next() {
        return Some(Rule::Pattern(PATTERNS[i]));
    }
    EXACT_NAMES
        .iter()
        .find(|n| n.eq_ignore_ascii_case(token))
        .map(|n| Rule::ExactName(n))
}

/// The first blocked token of an argument, if any.
pub fn check(text: &str) -> Option<Blocked> {
    tokens(text)
        .into_iter()
        .find_map(|token| blocked_token(&token).map(|rule| Blocked { token, rule }))
}

/// The first blocked token of a helper's file name, checked without its `.py` extension.
pub fn check_helper_name(file_name: &str) -> Option<Blocked> {
    check(file_name.strip_suffix(".py").unwrap_or(file_name))
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// What a text becomes before it is cut into tokens.
    fold: fn(&str) -> String,
    /// The rule that blocks a token.
    blocked_token: fn(&str) -> Option<Rule>,
}

const STEPS: Steps = Steps {
    fold,
    blocked_token: blocked_ignoring_case,
};

steps_in_force!();

/// The defects of this module (see `crate::mutants`); what the guard checks and when are
/// `rules`'.
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::TradingNoFold) => &NO_FOLD,
            Some(Mutant::TradingCaseSensitive) => &CASE_SENSITIVE,
            _ => &STEPS,
        }
    }

    const NO_FOLD: Steps = Steps {
        fold: str::to_owned,
        ..STEPS
    };
    const CASE_SENSITIVE: Steps = Steps {
        blocked_token: blocked_case_sensitively,
        ..STEPS
    };

    /// `trading-case-sensitive`: the list matched case-sensitively.
    fn blocked_case_sensitively(token: &str) -> Option<Rule> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One entry of the blocklist in SPEC.md: `- **P1** `pattern` — blocked: ...; runs: ...`.
    struct SpecEntry {
        id: String,
        text: String,
        blocked: Vec<String>,
        runs: Vec<String>,
    }

    fn spec() -> String {
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/SPEC.md")).unwrap()
    }

    fn code_spans(s: &str) -> Vec<String> {
        s.split('`').skip(1).step_by(2).map(str::to_owned).collect()
    }

    /// The `- **P..**` and `- **E..**` entries of SPEC.md, continuation lines joined.
    fn spec_entries(prefix: &str) -> Vec<SpecEntry> {
        let spec = spec();
        let mut items: Vec<String> = Vec::new();
        let mut open = false;
        for line in spec.lines() {
            let head = line.strip_prefix(&format!("- **{prefix}"));
            if head.is_some_and(|h| h.starts_with(|c: char| c.is_ascii_digit())) {
                items.push(line.to_owned());
                open = true;
            } else if open && line.starts_with("  ") {
                if let Some(last) = items.last_mut() {
                    last.push(' ');
                    last.push_str(line.trim());
                }
            } else {
                open = false;
            }
        }
        items
            .iter()
            .map(|item| {
                let rest = item.strip_prefix("- **").unwrap();
                let (id, rest) = rest.split_once("** ").unwrap();
                let (head, examples) = rest.split_once(" — blocked: ").unwrap();
                let (blocked, runs) = examples.split_once("; runs: ").unwrap();
                SpecEntry {
                    id: id.to_owned(),
                    text: code_spans(head).remove(0),
                    blocked: code_spans(blocked),
                    runs: code_spans(runs),
                }
            })
            .collect()
    }

    fn check_example(example: &str) -> Option<Blocked> {
        if example.ends_with(".py") {
            check_helper_name(example)
        } else {
            check(example)
        }
    }

    /// SPEC.md lists exactly these patterns and exact names, in this order, and each entry's
    /// examples behave as it says.
    #[test]
    fn spec_lists_the_same_blocklist() {
        let patterns = spec_entries("P");
        let listed: Vec<&str> = patterns.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(listed, PATTERNS);
        let exact = spec_entries("E");
        let listed: Vec<&str> = exact.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(listed, EXACT_NAMES);
        for (i, e) in patterns.iter().enumerate() {
            assert_eq!(e.id, format!("P{}", i + 1));
        }
        for (i, e) in exact.iter().enumerate() {
            assert_eq!(e.id, format!("E{}", i + 1));
        }
        for e in patterns.iter().chain(&exact) {
            assert!(!e.blocked.is_empty() && !e.runs.is_empty(), "{}", e.id);
            for b in &e.blocked {
                let hit = check_example(b).unwrap_or_else(|| panic!("{}: {b} runs", e.id));
                let expected = if e.id.starts_with('P') {
                    Rule::Pattern(PATTERNS.iter().find(|p| **p == e.text).unwrap())
                } else {
                    Rule::ExactName(EXACT_NAMES.iter().find(|n| **n == e.text).unwrap())
                };
                // An exact name may also be caught by a pattern first; a pattern's example is
                // caught by that pattern.
                if e.id.starts_with('P') {
                    assert_eq!(hit.rule, expected, "{}: {b}", e.id);
                }
            }
            for r in &e.runs {
                assert_eq!(check_example(r), None, "{}: {r}", e.id);
            }
        }
        // The exact-name examples are blocked by the exact name where no pattern catches it.
        for (name, example) in [
            ("polymarket_configure", "polymarket_configure"),
            ("polymarket_get_orders", "polymarket_get_orders"),
            ("polymarket_get_user_trades", "Polymarket_Get_User_Trades"),
        ] {
            assert_eq!(blocked_token(example), Some(Rule::ExactName(name)));
        }
    }

    /// Every entry has a blocked and a near-miss case in spec-cases/run that uses its examples.
    #[test]
    fn every_entry_has_its_cases() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/spec-cases/run");
        let files: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read_to_string(e.path()).unwrap(),
                )
            })
            .collect();
        let texts = |prefix: &str, kind: &str| -> String {
            files
                .iter()
                .filter(|(n, _)| n.starts_with(prefix) && n.contains(kind))
                .map(|(_, t)| t.as_str())
                .collect()
        };
        let mut entries: Vec<(String, SpecEntry)> = Vec::new();
        for (i, e) in spec_entries("P").into_iter().enumerate() {
            entries.push((format!("trading-pattern-{:02}-", i + 1), e));
        }
        for e in spec_entries("E") {
            entries.push((format!("trading-exact-{}-", e.text.replace('_', "-")), e));
        }
        for (prefix, e) in &entries {
            let blocked = texts(prefix, "blocked");
            let near = texts(prefix, "near-miss");
            assert!(!blocked.is_empty(), "no {prefix}*blocked.yaml");
            assert!(!near.is_empty(), "no {prefix}*near-miss.yaml");
            for b in &e.blocked {
                assert!(blocked.contains(b.as_str()), "{prefix}: {b} has no case");
            }
            for r in &e.runs {
                assert!(near.contains(r.as_str()), "{prefix}: {r} has no case");
            }
        }
    }

    /// The look-alike table of SPEC.md names exactly the code points of `LOOK_ALIKES` and
    /// `DASH_LOOK_ALIKES` (plus U+2011, which NFKD turns into U+2010).
    #[test]
    fn spec_lists_the_same_look_alikes() {
        let spec = spec();
        let start = spec.find("Look-alikes (").unwrap();
        let end = start + spec[start..].find("Decisions, with their reasons").unwrap();
        let listed: std::collections::BTreeSet<u32> = spec[start..end]
            .split("U+")
            .skip(1)
            .map(|s| u32::from_str_radix(&s[..4], 16).unwrap())
            .collect();
        let mut ours: std::collections::BTreeSet<u32> =
            LOOK_ALIKES.iter().map(|(c, _)| *c as u32).collect();
        ours.extend(DASH_LOOK_ALIKES.iter().map(|c| *c as u32));
        ours.insert(0x2011);
        assert_eq!(listed, ours);
        assert_eq!(fold("\u{2011}"), "-");
        for (from, to) in LOOK_ALIKES {
            assert!(to.is_ascii_alphabetic());
            assert_eq!(fold(&from.to_string()), to.to_string(), "{from}");
            // The row naming the code point has the ASCII character in its first cell.
            let row = spec[start..end]
                .lines()
                .find(|l| l.contains(&format!("U+{:04X}", from as u32)))
                .unwrap();
            let first = row.split('|').nth(1).unwrap_or_default();
            assert!(first.contains(&format!("`{to}`")), "{row}");
        }
        for dash in DASH_LOOK_ALIKES {
            let row = spec[start..end]
                .lines()
                .find(|l| l.contains(&format!("U+{:04X}", dash as u32)))
                .unwrap();
            assert!(row.starts_with("| `-` |"), "{row}");
        }
    }

    #[test]
    fn tokens_as_the_spec_shows() {
        let cases: [(&str, &[&str]); 13] = [
            ("--place-order", &["place-order"]),
            ("--op=place_order", &["op", "place_order"]),
            ("--withdraw=all", &["withdraw", "all"]),
            ("please withdraw now", &["please", "withdraw", "now"]),
            ("get_balance.json", &["get_balance", "json"]),
            ("ｗｉｔｈｄｒａｗ", &["withdraw"]),
            ("withdr\u{0430}w", &["withdraw"]),
            ("with\u{200B}draw", &["withdraw"]),
            ("Zürich", &["Zurich"]),
            ("São Paulo", &["Sao", "Paulo"]),
            ("Москва", &["Moc", "a"]),
            ("東京", &[]),
            ("2024", &["2024"]),
        ];
        for (text, expected) in cases {
            assert_eq!(tokens(text), expected, "{text}");
        }
        assert_eq!(tokens("--"), Vec::<String>::new());
        assert_eq!(tokens("a--b"), ["a--b"]);
    }

    #[test]
    fn checks() {
        assert_eq!(set().len(), PATTERNS.len());
        for blocked in [
            "place_order",
            "PLACE-ORDER",
            "withdraw",
            "sell_all",
            "x-buy-y",
            "get_balance",
            "privatekey",
            "cancelAll",
            "--side=buy_now",
            "𝐰𝐢𝐭𝐡𝐝𝐫𝐚𝐰",
            "wíthdräw",
            "withdra\u{0300}w",
            "place\u{00AD}order",
            "place\u{2010}order",
            "place\u{2011}order",
            "pl\u{03B1}ce_\u{03BF}rder",
            "https://example.invalid/api/place_order?id=1",
        ] {
            assert!(check(blocked).is_some(), "{blocked}");
        }
        for allowed in [
            "espn_fetch",
            "scoreboard",
            "buyer",
            "bestseller",
            "buy",
            "quick-buy",
            "--side=buy",
            "buy now",
            "balance_sheet_stats",
            "get_balances",
            "order_of_play",
            "Zürich",
            "São Paulo",
            "Kraków",
            "Αθήνα",
            "",
        ] {
            assert_eq!(check(allowed), None, "{allowed}");
        }
        assert!(check_helper_name("get_balance.py").is_some());
        assert!(check_helper_name("buy_.py").is_some());
        assert_eq!(check_helper_name("buy.py"), None);
        assert_eq!(
            check("--tool=Polymarket_Get_User_Trades")
                .unwrap()
                .to_string(),
            "`Polymarket_Get_User_Trades` is the blocked name `polymarket_get_user_trades`"
        );
        assert_eq!(
            check("--op=place_order").unwrap().to_string(),
            "`place_order` matches the pattern `place[_-]?order`"
        );
    }
}
