//! Profile `selection` (SPEC.md, "Profile `selection` and `trust`"): the activation fields a
//! skill's frontmatter carries, the portable pattern subset, the deterministic score of a skill
//! against a message, and the walk that picks the active skills within the limits.
//!
//! Everything here is pure: it reads text that was already loaded (through [`crate::yaml`]'s
//! tree, under the reader's limits) and never touches the file system. Gating and trust live in
//! [`crate::trust`], the runtime state in [`crate::profile`].
//!
//! A profile module (layer 3): it uses the primitives `yaml`, `config` (the limits) and `rules`
//! (the caps).

use regex::{Regex, RegexBuilder};
use unicode_general_category::{get_general_category, GeneralCategory};

pub use crate::config::{Limits, DEFAULT_MAX_ACTIVE, DEFAULT_MAX_CONTEXT_TOKENS};
use crate::rules::{rules, SPEC};
use crate::yaml::{self, Tree, Value};

/// Points for a keyword equal to a word of the message.
pub const KEYWORD_WORD_POINTS: u32 = 10;
/// Points for a keyword found in the message only as a substring.
pub const KEYWORD_SUBSTRING_POINTS: u32 = 5;
/// The most keyword points a skill gets.
pub const KEYWORD_CAP: u32 = SPEC.selection.keyword_cap;
/// Points for each tag found in the message.
pub const TAG_POINTS: u32 = 3;
/// The most tag points a skill gets.
pub const TAG_CAP: u32 = SPEC.selection.tag_cap;
/// Points for each pattern that matches the message.
pub const PATTERN_POINTS: u32 = 20;
/// The most pattern points a skill gets.
pub const PATTERN_CAP: u32 = SPEC.selection.pattern_cap;

/// Keywords, exclude keywords and tags shorter than this many UTF-8 bytes are dropped.
pub const MIN_TERM_BYTES: usize = 3;
/// At most this many keywords count (the first ones, after short ones are dropped).
pub const MAX_KEYWORDS: usize = 20;
/// At most this many exclude keywords count.
pub const MAX_EXCLUDES: usize = 20;
/// At most this many tags count.
pub const MAX_TAGS: usize = 10;
/// At most this many patterns count (the first ones, before unportable ones are ignored).
pub const MAX_PATTERNS: usize = 5;
/// A pattern longer than this many UTF-8 bytes is outside the portable subset.
pub const MAX_PATTERN_BYTES: usize = 256;
/// The largest count of a counted repetition (`{n}`, `{n,}`, `{n,m}`) in the portable subset.
pub const MAX_REPEAT: u32 = 100;
/// The heaviest pattern of the portable subset (its weight, [`check_pattern`]): what one pattern
/// may cost an engine stays bounded however its atoms and counts combine.
pub const MAX_PATTERN_WEIGHT: u64 = 1000;
/// The most the patterns kept in one scan weigh together ([`PatternBudget`]). Every kept pattern
/// weighs at least 1, so this also caps the number of patterns of a scan.
pub const MAX_SCAN_PATTERN_WEIGHT: u64 = 10_000;
/// Backstop: the engine refuses to compile a pattern whose automaton exceeds this many bytes
/// (every pattern of the subset within [`MAX_PATTERN_WEIGHT`] stays under 2 MiB).
pub const REGEX_SIZE_LIMIT: usize = 4 << 20;
/// Backstop: the engine's lazy DFA cache of one pattern holds at most this many bytes.
pub const REGEX_DFA_SIZE_LIMIT: usize = 1 << 20;

/// The declared prompt cost of a skill that declares none.
pub const DEFAULT_SKILL_TOKENS: u64 = 2000;
/// The largest `max_context_tokens` a skill may declare (2^53 − 1, exact in every JSON reader).
pub const MAX_DECLARED_TOKENS: u64 = (1 << 53) - 1;

/// What selects a skill: its `activation` fields, as the rules keep them.
#[derive(Debug, Clone)]
pub struct Activation {
    /// Folded (ASCII), at least [`MIN_TERM_BYTES`], at most [`MAX_KEYWORDS`].
    pub keywords: Vec<String>,
    /// Folded, at least [`MIN_TERM_BYTES`], at most [`MAX_EXCLUDES`].
    pub exclude_keywords: Vec<String>,
    /// Folded, at least [`MIN_TERM_BYTES`], at most [`MAX_TAGS`].
    pub tags: Vec<String>,
    /// The portable ones among the first [`MAX_PATTERNS`] patterns, with their weights, in
    /// order: what [`Activation::compile_patterns`] compiles within a scan's budget.
    pub portable_patterns: Vec<(String, u64)>,
    /// The patterns that count: those of `portable_patterns` that fit the scan's budget,
    /// compiled (empty until [`Activation::compile_patterns`]).
    pub patterns: Vec<Regex>,
    /// The declared prompt cost (`max_context_tokens`), [`DEFAULT_SKILL_TOKENS`] when absent.
    pub max_context_tokens: u64,
}

impl Default for Activation {
    fn default() -> Self {
        Activation {
            keywords: Vec::new(),
            exclude_keywords: Vec::new(),
            tags: Vec::new(),
            portable_patterns: Vec::new(),
            patterns: Vec::new(),
            max_context_tokens: DEFAULT_SKILL_TOKENS,
        }
    }
}

/// What is left of one scan's pattern weight (SPEC.md `selection.score.patterns`): the patterns
/// of a scan are charged in load order, and one that no longer fits is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatternBudget {
    left: u64,
}

impl PatternBudget {
    /// The budget of one scan: [`MAX_SCAN_PATTERN_WEIGHT`].
    pub fn for_scan() -> PatternBudget {
        PatternBudget {
            left: MAX_SCAN_PATTERN_WEIGHT,
        }
    }

    /// What is left.
    pub fn left(&self) -> u64 {
        self.left
    }
}

impl Activation {
    /// Compiles the portable patterns, in order, while they fit `budget`: a pattern heavier
    /// than what is left is ignored (a later, lighter one may still fit), and so is one the
    /// engine refuses at its size limits (the backstop; it is not charged).
    // spec: selection.score.patterns
    pub fn compile_patterns(&mut self, budget: &mut PatternBudget) {
        self.patterns.clear();
        for (text, weight) in &self.portable_patterns {
            if *weight > budget.left {
                continue;
            }
            if let Ok(re) = build_regex(text) {
                budget.left -= weight;
                self.patterns.push(re);
            }
        }
    }
}

/// What a skill needs to be selectable (`metadata.openclaw.requires`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    /// Commands that must be found on the runtime's `PATH`.
    pub bins: Vec<String>,
    /// Environment variables that must be set to a non-empty value.
    pub env: Vec<String>,
    /// Absolute paths that must exist (a configuration file the skill's commands read).
    pub config: Vec<String>,
}

/// The fields of the profile read from one skill's frontmatter.
#[derive(Debug, Clone, Default)]
pub struct Fields {
    pub activation: Activation,
    pub requires: Requirements,
}

/// Folds ASCII letters to lowercase and leaves every other character as it is (SPEC.md
/// `selection.score.keywords`: Unicode lowercasing is not the same in every language).
pub fn fold(text: &str) -> String {
    text.to_ascii_lowercase()
}

/// The value at `key` of a mapping, `None` when absent or null.
fn present<'t>(map: &'t Tree, key: &str) -> Option<&'t Tree> {
    map.get(key).filter(|v| {
        !matches!(
            v,
            Tree::Scalar {
                value: Value::Null,
                ..
            }
        )
    })
}

/// A list of strings (absent or null: empty); anything else is an error naming `what`.
fn strings(map: &Tree, key: &str, what: &str) -> Result<Vec<String>, String> {
    match present(map, key) {
        None => Ok(Vec::new()),
        Some(Tree::Sequence(items)) => items
            .iter()
            .map(|item| match &**item {
                Tree::Scalar {
                    value: Value::Str(s),
                    ..
                } => Ok(s.clone()),
                _ => Err(format!("`{what}` has an item that is not a string")),
            })
            .collect(),
        Some(_) => Err(format!("`{what}` is not a list of strings")),
    }
}

/// A mapping (absent or null: `None`); anything else is an error naming `what`.
fn mapping<'t>(map: &'t Tree, key: &str, what: &str) -> Result<Option<&'t Tree>, String> {
    match present(map, key) {
        None => Ok(None),
        Some(m @ Tree::Mapping(_)) => Ok(Some(m)),
        Some(_) => Err(format!("`{what}` is not a mapping")),
    }
}

/// The value of a core-schema integer's text (`17`, `+5`, `0o17`, `0x1F`), when it fits.
fn int_value(text: &str) -> Option<i128> {
    if let Some(rest) = text.strip_prefix("0o") {
        return i128::from_str_radix(rest, 8).ok();
    }
    if let Some(rest) = text.strip_prefix("0x") {
        return i128::from_str_radix(rest, 16).ok();
    }
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.is_empty()
        || !digits
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    digits.parse().ok()
}

/// Keeps the terms of at least [`MIN_TERM_BYTES`] bytes, the first `max` of them, folded.
fn terms(list: Vec<String>, max: usize) -> Vec<String> {
    list.into_iter()
        .filter(|t| t.len() >= MIN_TERM_BYTES)
        .take(max)
        .map(|t| fold(&t))
        .collect()
}

/// Reads the profile's fields from a portable skill's frontmatter text (SPEC.md
/// `selection.format`). An error is a reason to skip the skill as `malformed`.
// spec: selection.format (the profile's fields and their types)
pub fn read_fields(frontmatter: &str) -> Result<Fields, String> {
    let doc = yaml::parse_tree(frontmatter).map_err(|e| format!("frontmatter: {e}"))?;
    let Some(root) = doc.tree.as_deref() else {
        return Ok(Fields::default());
    };
    let mut fields = Fields::default();
    if let Some(activation) = mapping(root, "activation", "activation")? {
        let a = &mut fields.activation;
        a.keywords = terms(
            strings(activation, "keywords", "activation.keywords")?,
            MAX_KEYWORDS,
        );
        a.exclude_keywords = terms(
            strings(
                activation,
                "exclude_keywords",
                "activation.exclude_keywords",
            )?,
            MAX_EXCLUDES,
        );
        a.tags = terms(strings(activation, "tags", "activation.tags")?, MAX_TAGS);
        a.portable_patterns = strings(activation, "patterns", "activation.patterns")?
            .into_iter()
            .take(MAX_PATTERNS)
            .filter_map(|p| check_pattern(&p).ok().map(|w| (p, w)))
            .collect();
        if let Some(tokens) = present(activation, "max_context_tokens") {
            a.max_context_tokens = match tokens {
                Tree::Scalar {
                    value: Value::Int,
                    text,
                } => int_value(text)
                    .and_then(|v| u64::try_from(v).ok())
                    .filter(|v| *v <= MAX_DECLARED_TOKENS)
                    .ok_or_else(|| {
                        format!(
                            "`activation.max_context_tokens` is not an integer from 0 to {MAX_DECLARED_TOKENS}"
                        )
                    })?,
                _ => return Err("`activation.max_context_tokens` is not an integer".into()),
            };
        }
    }
    // `metadata` itself may be anything (SPEC.md `discovery.portable.extra-keys`); only a
    // mapping can carry requirements, and then every level on the way must be readable.
    if let Some(metadata @ Tree::Mapping(_)) = present(root, "metadata") {
        if let Some(openclaw) = mapping(metadata, "openclaw", "metadata.openclaw")? {
            if let Some(requires) = mapping(openclaw, "requires", "metadata.openclaw.requires")? {
                fields.requires.bins =
                    strings(requires, "bins", "metadata.openclaw.requires.bins")?;
                fields.requires.env = strings(requires, "env", "metadata.openclaw.requires.env")?;
                fields.requires.config =
                    strings(requires, "config", "metadata.openclaw.requires.config")?;
            }
        }
    }
    Ok(fields)
}

/// Compiles a pattern of the portable subset (SPEC.md `selection.score.patterns`): checked
/// against the subset, then compiled with `.` matching every character (Rust `(?s)`, JavaScript
/// flags `su`, Python `re.DOTALL`). The error says why a pattern is ignored.
pub fn compile_pattern(pattern: &str) -> Result<Regex, String> {
    check_pattern(pattern)?;
    build_regex(pattern)
}

/// Builds a checked pattern with the engine's size limits as a backstop.
fn build_regex(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .dot_matches_new_line(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| format!("pattern does not compile: {e}"))
}

/// Checks that `pattern` is in the portable subset: the grammar SPEC.md gives under
/// `selection.score.patterns`, which Rust's `regex`, JavaScript (flags `su`) and Python's `re`
/// (`re.DOTALL`) all read the same way, within [`MAX_PATTERN_WEIGHT`]. Returns its weight: the
/// atoms it holds once counted repetitions are written out (at least 1).
pub fn check_pattern(pattern: &str) -> Result<u64, String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "longer than {MAX_PATTERN_BYTES} bytes ({} bytes)",
            pattern.len()
        ));
    }
    let mut p = PatternParser {
        chars: pattern.chars().collect(),
        at: 0,
    };
    let whole = p.alternation()?;
    if let Some(c) = p.peek() {
        return Err(format!("unexpected `{c}` at character {}", p.at));
    }
    // spec: selection.score.patterns (the weight budget)
    let weight = (steps().weight)(whole.weight);
    if weight > MAX_PATTERN_WEIGHT {
        return Err(format!(
            "weighs {weight}, more than {MAX_PATTERN_WEIGHT} (atoms with counted repetitions written out)"
        ));
    }
    Ok(weight)
}

/// What the reader learned of a part of a pattern: whether a counted repetition occurs inside,
/// and its weight (SPEC.md `selection.score.patterns`).
#[derive(Debug, Clone, Copy, Default)]
struct Part {
    counted: bool,
    weight: u64,
}

impl Part {
    fn atom(weight: u64) -> Part {
        Part {
            counted: false,
            weight,
        }
    }

    /// Two parts side by side (a sequence) or as alternatives: both weigh.
    fn and(self, other: Part) -> Part {
        Part {
            counted: self.counted || other.counted,
            weight: self.weight.saturating_add(other.weight),
        }
    }
}

/// A recursive-descent reader of the portable subset.
struct PatternParser {
    chars: Vec<char>,
    at: usize,
}

/// Characters that must be escaped to be literal outside a class (JavaScript's
/// `SyntaxCharacter`); they are the only ones an escape may name there.
const SYNTAX: &str = "^$\\.*+?()[]{}|";

impl PatternParser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += usize::from(c.is_some());
        c
    }

    /// Alternatives separated by `|`: each weighs (the automaton holds every branch).
    fn alternation(&mut self) -> Result<Part, String> {
        let mut part = self.sequence()?;
        while self.peek() == Some('|') {
            self.bump();
            part = part.and(self.sequence()?);
        }
        Ok(part)
    }

    fn sequence(&mut self) -> Result<Part, String> {
        let mut part = Part::default();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            part = part.and(self.term()?);
        }
        Ok(part)
    }

    /// One term: `^` and every atom weigh 1, a class weighs its items, a group its inside; a
    /// quantifier multiplies.
    fn term(&mut self) -> Result<Part, String> {
        let start = self.at;
        let inner = match self.bump() {
            Some('^') => {
                if self.peek().is_some_and(|c| "*+?{".contains(c)) {
                    return Err("a quantifier after `^`".into());
                }
                return Ok(Part::atom(1));
            }
            Some('(') => {
                if self.peek() == Some('?') {
                    if self.peek_at(1) != Some(':') {
                        return Err(format!(
                            "`(?` other than `(?:` at character {start} (flags, lookaround and named groups are not portable)"
                        ));
                    }
                    self.at += 2;
                }
                let inside = self.alternation()?;
                if self.bump() != Some(')') {
                    return Err(format!("the group at character {start} is not closed"));
                }
                inside
            }
            Some('[') => Part::atom(self.class(start)?),
            Some('\\') => {
                self.escape(SYNTAX)?;
                Part::atom(1)
            }
            Some('.') => Part::atom(1),
            Some(c @ ('*' | '+' | '?' | '{')) => {
                return Err(format!("`{c}` at character {start} repeats nothing"))
            }
            Some(c @ (']' | '}' | '$' | ')')) => {
                return Err(format!(
                    "`{c}` at character {start} must be escaped (`$` is not portable)"
                ))
            }
            Some(c) if c.is_control() => {
                return Err(format!(
                    "a control character at character {start} (write \\t, \\n or \\r)"
                ))
            }
            Some(_) => Part::atom(1),
            None => return Err("unexpected end".into()),
        };
        self.quantifier(inner)
    }

    /// An optional quantifier after an atom: `*`, `+` and `?` keep its weight, a counted
    /// repetition multiplies it by the largest count it writes (at least 1).
    fn quantifier(&mut self, inner: Part) -> Result<Part, String> {
        let start = self.at;
        let times = match self.peek() {
            Some('*' | '+' | '?') => {
                self.bump();
                None
            }
            Some('{') => {
                self.bump();
                let low = self.number()?;
                let high = if self.peek() == Some(',') {
                    self.bump();
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(self.number()?)
                    }
                } else {
                    Some(low)
                };
                if self.bump() != Some('}') {
                    return Err(format!(
                        "the counted repetition at character {start} is not `{{n}}`, `{{n,}}` or `{{n,m}}`"
                    ));
                }
                if high.is_some_and(|h| h < low) {
                    return Err(format!(
                        "the counted repetition at character {start} has n > m"
                    ));
                }
                if inner.counted {
                    return Err(format!(
                        "a counted repetition at character {start} of a group holding another one"
                    ));
                }
                Some(high.unwrap_or(low).max(1))
            }
            _ => return Ok(inner),
        };
        if self.peek() == Some('?') {
            self.bump();
        }
        if self.peek().is_some_and(|c| "*+?{".contains(c)) {
            return Err(format!("two quantifiers in a row at character {}", self.at));
        }
        Ok(match times {
            None => inner,
            Some(n) => Part {
                counted: true,
                weight: inner.weight.saturating_mul(u64::from(n)),
            },
        })
    }

    fn number(&mut self) -> Result<u32, String> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
        let digits: String = self.chars[start..self.at].iter().collect();
        digits
            .parse::<u32>()
            .ok()
            .filter(|n| *n <= MAX_REPEAT)
            .ok_or_else(|| {
                format!("a repetition count at character {start} is not a number from 0 to {MAX_REPEAT}")
            })
    }

    /// After a `\`: one of `extra`, or `t`, `n`, `r`.
    fn escape(&mut self, extra: &str) -> Result<char, String> {
        let at = self.at;
        match self.bump() {
            Some(c) if extra.contains(c) => Ok(c),
            Some('t') => Ok('\t'),
            Some('n') => Ok('\n'),
            Some('r') => Ok('\r'),
            Some(c) => Err(format!(
                "the escape `\\{c}` at character {at} is not portable"
            )),
            None => Err("a pattern ends with `\\`".into()),
        }
    }

    /// A class after its `[`; returns its weight, the number of its items (a character or a
    /// range each).
    fn class(&mut self, start: usize) -> Result<u64, String> {
        if self.peek() == Some('^') {
            self.bump();
        }
        let mut first = true;
        let mut previous: Option<char> = None;
        let mut items = 0u64;
        loop {
            let c = match self.peek() {
                None => return Err(format!("the class at character {start} is not closed")),
                Some(']') if first => {
                    return Err(format!(
                        "the class at character {start} is empty (write `\\]` for a bracket)"
                    ))
                }
                Some(']') => {
                    self.bump();
                    return Ok(items);
                }
                Some(_) => self.class_char(first, &mut previous)?,
            };
            first = false;
            items += 1;
            if previous == Some('-') && self.peek() == Some('-') {
                return Err(format!("`--` in the class at character {start}"));
            }
            // A range: `-` between two characters (not before the closing `]`).
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']') {
                self.bump();
                if self.peek() == Some('-') {
                    return Err(format!("`--` in the class at character {start}"));
                }
                let mut none = None;
                let end = self.class_char(false, &mut none)?;
                if end < c {
                    return Err(format!(
                        "the range `{c}-{end}` in the class at character {start} is reversed"
                    ));
                }
                previous = None;
            }
        }
    }

    /// One character of a class (a literal or an escape); `previous` is the last unescaped
    /// literal, to refuse `&&`, `~~` and `||` (set operators in Rust, warnings in Python).
    fn class_char(&mut self, first: bool, previous: &mut Option<char>) -> Result<char, String> {
        let at = self.at;
        let c = match self.bump() {
            Some('\\') => {
                *previous = None;
                return self.escape("^$\\.*+?()[]{}|-");
            }
            Some('[') => {
                return Err(format!(
                    "`[` at character {at} inside a class must be escaped"
                ))
            }
            Some('-') if !(first || self.peek() == Some(']')) => {
                return Err(format!(
                    "`-` at character {at} is a literal only first or last in a class (or `\\-`)"
                ))
            }
            Some(c) if c.is_control() => {
                return Err(format!(
                    "a control character at character {at} (write \\t, \\n or \\r)"
                ))
            }
            Some(c) => c,
            None => return Err("unexpected end".into()),
        };
        if matches!(c, '&' | '~' | '|') && *previous == Some(c) {
            return Err(format!("`{c}{c}` at character {} in a class", at - 1));
        }
        *previous = Some(c);
        Ok(c)
    }
}

/// A skill's score against one message, by rule (each already capped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Score {
    pub keywords: u32,
    pub tags: u32,
    pub patterns: u32,
    /// An exclude keyword occurs in the message: the skill scores 0.
    pub vetoed: bool,
}

impl Score {
    /// The total: 0 when vetoed, else the sum of the capped parts.
    pub fn total(&self) -> u32 {
        if self.vetoed {
            0
        } else {
            self.keywords + self.tags + self.patterns
        }
    }
}

/// Letters and digits (general categories L and N) are what a word keeps at its ends.
fn is_letter_or_digit(c: char) -> bool {
    use GeneralCategory as G;
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
            | G::DecimalNumber
            | G::LetterNumber
            | G::OtherNumber
    )
}

/// The words of a folded message: split on white space (Unicode `White_Space`), each trimmed
/// at both ends of characters that are neither letters nor digits.
pub fn words(folded: &str) -> Vec<&str> {
    folded
        .split(char::is_whitespace)
        .map(|w| w.trim_matches(|c: char| !is_letter_or_digit(c)))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Scores `activation` against `message` (SPEC.md `selection.score.*`).
pub fn score(activation: &Activation, message: &str) -> Score {
    let folded = fold(message);
    if (steps().vetoes)(activation, &folded) {
        return Score {
            vetoed: true,
            ..Score::default()
        };
    }
    let words = words(&folded);
    let keywords: u32 = activation
        .keywords
        .iter()
        .map(|k| {
            if words.contains(&k.as_str()) {
                KEYWORD_WORD_POINTS
            } else if folded.contains(k.as_str()) {
                KEYWORD_SUBSTRING_POINTS
            } else {
                0
            }
        })
        .sum();
    let tags = TAG_POINTS
        * activation
            .tags
            .iter()
            .filter(|t| folded.contains(t.as_str()))
            .count() as u32;
    let patterns = PATTERN_POINTS
        * activation
            .patterns
            .iter()
            .filter(|p| p.is_match(message))
            .count() as u32;
    let caps = &rules().selection;
    Score {
        // spec: selection.score.keywords (capped at 30)
        keywords: keywords.min(caps.keyword_cap),
        // spec: selection.score.tags (capped at 15)
        tags: tags.min(caps.tag_cap),
        patterns: patterns.min(caps.pattern_cap),
        vetoed: false,
    }
}

/// Whether an exclude keyword occurs in the folded message.
// spec: selection.score.exclude
fn excluded(activation: &Activation, folded: &str) -> bool {
    activation
        .exclude_keywords
        .iter()
        .any(|e| folded.contains(e.as_str()))
}

/// What a skill costs of the budget: its declared tokens, or the estimate of its body (a token
/// per 4 UTF-8 bytes, rounded down) when that is more, and at least 1 (SPEC.md
/// `selection.budget`).
pub fn cost(declared: u64, body_bytes: usize) -> u64 {
    declared.max(body_bytes as u64 / 4).max(1)
}

/// One skill that may be selected.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The skill's name (its id), which breaks score ties by its bytes.
    pub name: &'a str,
    pub activation: &'a Activation,
    /// The bytes of the body that would enter the prompt.
    pub body_bytes: usize,
    /// False for a gated skill: it never scores, takes no slot and no budget.
    pub selectable: bool,
}

/// A selected skill: its index among the candidates, and its score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected {
    pub index: usize,
    pub score: u32,
}

/// Selects the active skills for `message` (SPEC.md `selection.order`, `selection.budget`):
/// the selectable candidates scoring above 0, by score (highest first) then by the bytes of
/// their names; each taken while it fits what is left of the budget (one that does not is
/// passed over, later ones may still fit) until `max_active` are taken.
pub fn select(candidates: &[Candidate<'_>], message: &str, limits: Limits) -> Vec<Selected> {
    if message.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<Selected> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.selectable)
        .map(|(index, c)| Selected {
            index,
            score: score(c.activation, message).total(),
        })
        .filter(|s| s.score > 0)
        .collect();
    let steps = steps();
    // spec: selection.order (score, highest first, then the bytes of the names)
    scored.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| (steps.by_name)(candidates[a.index].name, candidates[b.index].name))
    });
    (steps.take)(candidates, scored, limits)
}

/// Names compared by their bytes.
fn name_bytes(a: &str, b: &str) -> std::cmp::Ordering {
    a.as_bytes().cmp(b.as_bytes())
}

/// The walk over the ordered candidates: each taken while it fits what is left of the budget,
/// one that does not passed over, until `max_active` are taken.
// spec: selection.budget
fn take_within_budget(
    candidates: &[Candidate<'_>],
    scored: Vec<Selected>,
    limits: Limits,
) -> Vec<Selected> {
    let mut left = limits.max_context_tokens;
    let mut taken = Vec::new();
    for s in scored {
        if taken.len() as u64 >= limits.max_active {
            break;
        }
        let c = &candidates[s.index];
        let cost = cost(c.activation.max_context_tokens, c.body_bytes);
        if cost <= left {
            left -= cost;
            taken.push(s);
        }
    }
    taken
}

/// A pattern's weight: its atoms with counted repetitions written out, at least 1.
fn at_least_one(weight: u64) -> u64 {
    weight.max(1)
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// A pattern's weight from the atoms the reader counted.
    weight: fn(u64) -> u64,
    /// Whether the message vetoes a skill.
    vetoes: fn(&Activation, &str) -> bool,
    /// How equal scores are ordered.
    by_name: fn(&str, &str) -> std::cmp::Ordering,
    /// The walk that takes the active skills.
    take: fn(&[Candidate<'_>], Vec<Selected>, Limits) -> Vec<Selected>,
}

const STEPS: Steps = Steps {
    weight: at_least_one,
    vetoes: excluded,
    by_name: name_bytes,
    take: take_within_budget,
};

steps_in_force!();

/// The defects of this module (see `crate::mutants`); the keyword cap's is `rules`'.
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::SelectionPatternWeightUnbounded) => &UNWEIGHED,
            Some(Mutant::SelectionVetoIgnored) => &NO_VETO,
            Some(Mutant::SelectionTieByNameReversed) => &TIES_REVERSED,
            Some(Mutant::SelectionBudgetStopsWalk) => &BUDGET_STOPS,
            _ => &STEPS,
        }
    }

    const UNWEIGHED: Steps = Steps {
        weight: |_| 0,
        ..STEPS
    };
    const NO_VETO: Steps = Steps {
        vetoes: |_, _| false,
        ..STEPS
    };
    const TIES_REVERSED: Steps = Steps {
        by_name: |a, b| name_bytes(a, b).reverse(),
        ..STEPS
    };
    const BUDGET_STOPS: Steps = Steps {
        take: take_until_over_budget,
        ..STEPS
    };

    /// `selection-budget-stops-walk`.
    fn take_until_over_budget(
        candidates: &[Candidate<'_>],
        scored: Vec<Selected>,
        limits: Limits,
    ) -> Vec<Selected> {
        let mut left = limits.max_context_tokens;
        let mut taken = Vec::new();
        for s in scored {
            if taken.len() as u64 >= limits.max_active {
                break;
            }
            let c = &candidates[s.index];
            let cost = cost(c.activation.max_context_tokens, c.body_bytes);
            if cost > left {
                break;
            }
            left -= cost;
            taken.push(s);
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(yaml: &str) -> Result<Fields, String> {
        read_fields(yaml)
    }

    fn activation(yaml: &str) -> Activation {
        let mut a = fields(yaml).unwrap().activation;
        a.compile_patterns(&mut PatternBudget::for_scan());
        a
    }

    #[test]
    fn fields_are_read_with_their_types() {
        let f = fields(
            "name: x\nactivation:\n  keywords: [Deploy, ab, release]\n  tags: [ops]\n  patterns: ['deploy to.*prod']\n  max_context_tokens: 0x10\nmetadata:\n  openclaw:\n    requires:\n      bins: [docker]\n      env: [KUBECONFIG]\n      config: [/etc/vale.ini]\n",
        )
        .unwrap();
        assert_eq!(f.activation.keywords, ["deploy", "release"]);
        assert_eq!(f.activation.tags, ["ops"]);
        assert_eq!(f.activation.portable_patterns.len(), 1);
        assert_eq!(f.activation.max_context_tokens, 16);
        assert_eq!(f.requires.bins, ["docker"]);
        assert_eq!(f.requires.env, ["KUBECONFIG"]);
        assert_eq!(f.requires.config, ["/etc/vale.ini"]);
        // Aliases resolve to the anchored node.
        let f = fields("k: &k [alpha, beta]\nactivation:\n  keywords: *k\n").unwrap();
        assert_eq!(f.activation.keywords, ["alpha", "beta"]);
        // Absent and null are the defaults; metadata that is not a mapping carries nothing.
        let f = fields("activation:\n  keywords:\nmetadata: free text\n").unwrap();
        assert!(f.activation.keywords.is_empty());
        assert_eq!(f.activation.max_context_tokens, DEFAULT_SKILL_TOKENS);
        assert_eq!(f.requires, Requirements::default());
    }

    #[test]
    fn wrong_types_are_malformed() {
        for bad in [
            "activation: [deploy]",
            "activation:\n  keywords: deploy",
            "activation:\n  keywords: [1]",
            "activation:\n  tags: [[x]]",
            "activation:\n  max_context_tokens: -1",
            "activation:\n  max_context_tokens: 1.5",
            "activation:\n  max_context_tokens: '10'",
            "activation:\n  max_context_tokens: 9007199254740992",
            "metadata:\n  openclaw: yes",
            "metadata:\n  openclaw:\n    requires: [docker]",
            "metadata:\n  openclaw:\n    requires:\n      bins: docker",
            "metadata:\n  openclaw:\n    requires:\n      env: [{a: b}]",
            "metadata:\n  openclaw:\n    requires:\n      config: /etc/vale.ini",
            "metadata:\n  openclaw:\n    requires:\n      config: [1]",
        ] {
            assert!(fields(bad).is_err(), "{bad}");
        }
        assert_eq!(
            activation("activation:\n  max_context_tokens: 9007199254740991").max_context_tokens,
            MAX_DECLARED_TOKENS
        );
    }

    #[test]
    fn limits_drop_short_terms_then_keep_the_first() {
        let many: Vec<String> = (0..25).map(|i| format!("kw{i:02}")).collect();
        let a = activation(&format!(
            "activation:\n  keywords: [a, é, {}]\n  tags: [{}]\n  patterns: [a, b, '(?i)c', d, e, f]\n",
            many.join(", "),
            many.join(", ")
        ));
        assert_eq!(a.keywords.len(), MAX_KEYWORDS);
        assert_eq!(a.keywords[0], "kw00");
        assert_eq!(a.tags.len(), MAX_TAGS);
        // Five kept, the unportable third ignored, the sixth never counted.
        assert_eq!(a.patterns.len(), 4);
        assert!(a.patterns.iter().all(|p| p.as_str() != "f"));
    }

    #[test]
    fn the_portable_subset() {
        for good in [
            "",
            "deploy to.*production",
            "^deploy",
            "(?:a|b)+?c",
            "[A-Za-z0-9_]{2,5}",
            "x{3}y{0,}z?",
            "[-a]",
            "[a-]",
            "[^\\]\\-]",
            "\\$\\^\\.\\(\\)\\[\\]\\{\\}\\|\\*\\+\\?\\\\",
            "a\\tb\\nc\\r",
            "(a{100})*",
            "déploie, s'il te plaît",
            "[&~|]",
        ] {
            assert!(check_pattern(good).is_ok(), "{good:?}");
            assert!(compile_pattern(good).is_ok(), "{good:?}");
        }
        for bad in [
            "(?i)deploy",
            "\\bwrite\\b",
            "\\d+",
            "\\w",
            "\\s",
            "end$",
            "(?=a)",
            "(?P<n>a)",
            "(a)\\1",
            "a{,3}",
            "a{101}",
            "a{3,2}",
            "(a{2}){2}",
            "a**",
            "a*+",
            "^*",
            "*a",
            "[]a]",
            "[a[b]]",
            "[a-c-e]",
            "[a&&b]",
            "[a--b]",
            "[--a]",
            "[z-a]",
            "a}",
            "a]",
            "(a",
            "a)",
            "\\-",
            "\\/",
            "a\u{7}b",
            "\\",
        ] {
            assert!(check_pattern(bad).is_err(), "{bad:?}");
        }
        assert!(check_pattern(&"a".repeat(MAX_PATTERN_BYTES)).is_ok());
        assert!(check_pattern(&"a".repeat(MAX_PATTERN_BYTES + 1)).is_err());
    }

    #[test]
    fn pattern_weights() {
        for (pattern, weight) in [
            ("", 1),
            ("^", 1),
            ("deploy", 6),
            ("a|bc", 3),
            ("(?:a|b)+?c", 3),
            ("[A-Za-z0-9_]{2,5}", 20),
            ("[^a-]", 2),
            ("x{3}y{0,}z?", 5),
            ("a{0}", 1),
            ("(a{100})*", 100),
            ("\\.\\*", 2),
            ("é€😀", 3),
        ] {
            assert_eq!(check_pattern(pattern), Ok(weight), "{pattern:?}");
        }
        let inside = "(.|b){100}".repeat(5);
        assert_eq!(check_pattern(&inside), Ok(MAX_PATTERN_WEIGHT));
        assert!(compile_pattern(&inside).is_ok());
        assert!(check_pattern(&format!("{inside}b")).is_err());
        // The issue's pattern: 24 times (.|b){100}, 240 bytes, weighs 4800.
        assert!(check_pattern(&"(.|b){100}".repeat(24)).is_err());
        assert!(check_pattern(&"[a-c]{100}".repeat(10)).is_ok());
        assert!(check_pattern(&"[a-cx]{100}".repeat(10)).is_err());
    }

    #[test]
    fn the_heaviest_patterns_compile_under_the_backstop() {
        // Unicode classes and `.` are the largest automata per atom; at the weight limit they
        // still compile under REGEX_SIZE_LIMIT (measured: below 2 MiB).
        for unit in [
            ".{100}",
            "[^é]{100}",
            "[^😀]{100}",
            "[^ः]{100}",
            "(.|[^é]){50}",
        ] {
            let pattern = unit.repeat(10);
            assert_eq!(check_pattern(&pattern), Ok(MAX_PATTERN_WEIGHT), "{pattern}");
            assert!(compile_pattern(&pattern).is_ok(), "{pattern}");
        }
    }

    #[test]
    fn the_scan_budget_passes_over_what_does_not_fit() {
        let heavy = format!("'{}'", "y{100}".repeat(10));
        let mut budget = PatternBudget::for_scan();
        let mut a = fields(&format!(
            "activation:\n  patterns: [{heavy}, {heavy}, {heavy}, {heavy}, {heavy}]\n"
        ))
        .unwrap()
        .activation;
        a.compile_patterns(&mut budget);
        assert_eq!(a.patterns.len(), 5);
        a.compile_patterns(&mut budget);
        assert_eq!((a.patterns.len(), budget.left()), (5, 0));
        let mut small = fields("activation:\n  patterns: [ab, c]\n")
            .unwrap()
            .activation;
        budget = PatternBudget { left: 1 };
        small.compile_patterns(&mut budget);
        let kept: Vec<&str> = small.patterns.iter().map(Regex::as_str).collect();
        assert_eq!((kept, budget.left()), (vec!["c"], 0));
    }

    #[test]
    fn dot_matches_every_character_and_patterns_are_case_sensitive() {
        let re = compile_pattern("deploy to.*production").unwrap();
        assert!(re.is_match("please deploy to\nproduction"));
        assert!(!re.is_match("Deploy to production"));
        let one = compile_pattern("^.x").unwrap();
        assert!(one.is_match("éx") && one.is_match("\nx") && !one.is_match("e\u{301}x"));
    }

    #[test]
    fn keyword_points_and_cap() {
        let a = activation("activation:\n  keywords: [deploy, release, ship, stage]\n");
        assert_eq!(score(&a, "Deploy now!").keywords, 10);
        assert_eq!(score(&a, "redeploying").keywords, 5);
        assert_eq!(score(&a, "deploy release ship").keywords, 30);
        assert_eq!(score(&a, "deploy release ship stage").keywords, 30);
        assert_eq!(score(&a, "«deploy»").keywords, 10);
        assert_eq!(score(&a, "deploy-now").keywords, 5);
        // ASCII folding only.
        let a = activation("activation:\n  keywords: [école]\n");
        assert_eq!(score(&a, "ÉCOLE").total(), 0);
        assert_eq!(score(&a, "École").total(), 0);
        assert_eq!(score(&a, "(école!)").keywords, 10);
        assert_eq!(score(&a, "l'école").keywords, 5);
    }

    #[test]
    fn tags_patterns_and_the_veto() {
        let a = activation(
            "activation:\n  keywords: [deploy]\n  tags: [ops, infra, cloud, prod, kube, helm]\n  patterns: [dep, loy, 'to p']\n  exclude_keywords: [rollback]\n",
        );
        let s = score(&a, "deploy to prod: ops infra cloud kube helm");
        assert_eq!((s.keywords, s.tags, s.patterns), (10, 15, 40));
        assert_eq!(s.total(), 65);
        let s = score(&a, "deploy to prod, then ROLLBACK");
        assert!(s.vetoed);
        assert_eq!(s.total(), 0);
    }

    #[test]
    fn selection_orders_ties_by_name_and_walks_the_budget() {
        let a = activation("activation:\n  keywords: [deploy]\n  max_context_tokens: 2000\n");
        let small = activation("activation:\n  keywords: [deploy]\n  max_context_tokens: 100\n");
        let cand = |name, activation, selectable| Candidate {
            name,
            activation,
            body_bytes: 10,
            selectable,
        };
        let cands = [
            cand("zeta", &a, true),
            cand("alpha", &a, true),
            cand("beta", &a, true),
            cand("tiny", &small, true),
            cand("gated", &small, false),
        ];
        let got: Vec<&str> = select(&cands, "deploy", Limits::default())
            .iter()
            .map(|s| cands[s.index].name)
            .collect();
        // alpha and beta fill 4000; zeta does not fit; tiny does not fit either (0 left).
        assert_eq!(got, ["alpha", "beta"]);
        let got: Vec<&str> = select(
            &cands,
            "deploy",
            Limits {
                max_active: 3,
                max_context_tokens: 4100,
            },
        )
        .iter()
        .map(|s| cands[s.index].name)
        .collect();
        assert_eq!(got, ["alpha", "beta", "tiny"]);
        assert!(select(&cands, "", Limits::default()).is_empty());
        assert_eq!(cost(0, 0), 1);
        assert_eq!(cost(10, 400), 100);
        assert_eq!(cost(2000, 400), 2000);
    }
}
