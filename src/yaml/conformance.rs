//! Comparison machinery of `.ci/yaml-conformance`: the reader's decision on a text, in the JSON
//! shape the JavaScript side also writes, and the comparison of two sets of decisions with the
//! reviewed list of accepted differences ([`ACCEPTED`], mirrored in SPEC.md "The YAML reader").
//!
//! A *decision* says whether a text is accepted as one YAML document and, when its root is a
//! mapping, the kind (`string`, `null`, `bool`, `number`, `tagged`, `sequence`, `mapping`,
//! `other`) of every top-level value with a string key, and the string values themselves.
//! `theirs` is either the YAML test suite's expectation (side [`Side::Suite`]) or what the
//! JavaScript `yaml` package does (side [`Side::Js`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{parse, Value};

/// One input text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    pub id: String,
    pub text: String,
}

/// One top-level pair of a mapping root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryDecision {
    pub key: String,
    /// The key's explicit tag (only the JavaScript side reports it; it may make a key a string
    /// there that is not one here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_tag: Option<String>,
    pub kind: String,
    /// The value when `kind` is `string`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The value's explicit tag, fully resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// What one side decided about one text. Absent fields are unknown to that side.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub id: String,
    pub accepted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// The error message, for people (never compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The 1-based line of the error (the reader's side only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_line: Option<usize>,
    /// How many documents the stream holds (the suite reports it; the reader accepts one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The pairs with a string key, when the root is a mapping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryDecision>>,
    /// How many top-level keys are not strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_keys: Option<usize>,
}

/// The comparison's name for a value kind.
pub fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Str(_) => "string",
        Value::Null => "null",
        Value::Bool => "bool",
        Value::Int | Value::Float => "number",
        Value::Tagged => "tagged",
        Value::Sequence => "sequence",
        Value::Mapping => "mapping",
    }
}

/// The reference reader's decision on `text`.
pub fn decide(id: &str, text: &str) -> Decision {
    match parse(text) {
        Err(e) => Decision {
            id: id.to_owned(),
            accepted: false,
            error_kind: Some(e.kind().to_owned()),
            error: Some(e.to_string()),
            error_line: Some(e.line()),
            ..Decision::default()
        },
        Ok(doc) => {
            let mapping = doc.root == Value::Mapping;
            Decision {
                id: id.to_owned(),
                accepted: true,
                root: Some(kind_name(&doc.root).to_owned()),
                entries: mapping.then(|| {
                    doc.entries
                        .iter()
                        .map(|e| EntryDecision {
                            key: e.key.clone(),
                            key_tag: None,
                            kind: kind_name(&e.value).to_owned(),
                            value: e.value.as_str().map(str::to_owned),
                            tag: e.tag.clone(),
                        })
                        .collect()
                }),
                other_keys: mapping.then_some(doc.other_keys),
                ..Decision::default()
            }
        }
    }
}

/// Whose decisions `theirs` are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The YAML test suite's expectations (`fail`, the number of documents, `json`).
    Suite,
    /// The JavaScript `yaml` package (`parseDocument`, then `toJS` as `YAML.parse` does).
    Js,
}

impl std::str::FromStr for Side {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "suite" => Ok(Side::Suite),
            "js" => Ok(Side::Js),
            other => Err(format!("unknown side `{other}` (expected `suite` or `js`)")),
        }
    }
}

/// A reviewed class of differences between the reader and the other side.
pub struct AcceptedClass {
    pub id: &'static str,
    pub reason: &'static str,
}

/// Every accepted difference class; SPEC.md ("The YAML reader") states the same decisions.
pub const ACCEPTED: &[AcceptedClass] = &[
    AcceptedClass {
        id: "multi-document",
        reason: "a stream of several documents is valid YAML, but frontmatter and skill.yml must \
                 be one document (the yaml package's parseDocument refuses them too)",
    },
    AcceptedClass {
        id: "non-core-tag",
        reason: "a scalar with a tag outside the core schema (`!custom`, `!local`) is not a \
                 string: the tag says it is something else; the yaml package and the suite's \
                 JSON keep its text as a string",
    },
    AcceptedClass {
        id: "core-tag-mismatch",
        reason: "a core tag decides the kind (`!!int abc`, `!!float 1`, `!!bool yes` are not \
                 strings); the yaml package falls back to a string with a warning when the text \
                 does not match the tag's pattern",
    },
    AcceptedClass {
        id: "duplicate-key",
        reason: "the suite checks syntax only; a mapping that repeats a key (here two empty \
                 keys) is not a valid YAML 1.2 mapping, and the yaml package refuses it too",
    },
    AcceptedClass {
        id: "byte-order-mark",
        reason: "YAML 1.2 allows U+FEFF only before a document or inside a quoted scalar; the \
                 yaml package also takes it as content of plain and block scalars and comments",
    },
    AcceptedClass {
        id: "indented-empty-key",
        reason: "a line `  : value` indented deeper than its mapping is neither an entry nor a \
                 continuation in the YAML 1.2 grammar; the yaml package takes it as an entry \
                 with an empty key",
    },
    AcceptedClass {
        id: "properties-before-compact-key",
        reason: "an anchor or tag followed on the same line by an explicit key (`: !!bool ? x`) \
                 would put properties on a compact block mapping, which the YAML 1.2 grammar \
                 does not allow; the yaml package accepts it",
    },
    AcceptedClass {
        id: "block-scalar-comment",
        reason: "saphyr-parser refuses a comment line right after the header of a block scalar \
                 with an indentation indicator when the comment is indented less than the \
                 content (`a: |2` then ` # c`); YAML 1.2 reads it as a trailing comment of an \
                 empty scalar; the reader keeps the parser's refusal (see SPEC.md)",
    },
    AcceptedClass {
        id: "block-scalar-blank-lines",
        reason: "a block scalar whose lines hold only white space: the parser keeps a line deeper \
                 than the indentation as content (as YAML 1.2 and PyYAML do) and reads a last \
                 blank line without a break as a line; the yaml package differs there, only in \
                 spaces and line breaks",
    },
    AcceptedClass {
        id: "tagged-empty-key",
        reason: "an empty key with a tag or anchor opening a nested block mapping (`m:` then \
                 `  !!str : x`) carries that property itself, as YAML 1.2 says; the yaml package \
                 gives it to the mapping and takes the key as null, so its duplicate-key \
                 verdict can differ",
    },
    AcceptedClass {
        id: "key-length-utf16",
        reason: "the 1024-character limit of implicit keys counts characters (Unicode scalar \
                 values) as YAML 1.2 says; the yaml package counts UTF-16 code units, so a key \
                 with characters outside the BMP reaches its limit sooner",
    },
    AcceptedClass {
        id: "yaml-1.1-directive",
        reason: "a `%YAML 1.1` directive does not switch the reader to YAML 1.1 types (`yes`, \
                 `017`, `<<` merges): every skill is read with the 1.2 core schema; the yaml \
                 package switches",
    },
    AcceptedClass {
        id: "js-differs-from-suite",
        reason: "on this YAML test suite input the yaml package itself disagrees with the \
                 suite, and the reader agrees with the suite",
    },
    AcceptedClass {
        id: "lone-surrogate",
        reason: "a `\\u` escape of a UTF-16 surrogate that is not half of a pair (`\\ud83d` \
                 alone, or a low one first) is not a character: YAML 1.2 escapes are Unicode \
                 scalar values, a Rust string cannot hold it, and replacing it by U+FFFD would \
                 change the text silently; the yaml package keeps the lone UTF-16 code unit in \
                 its JavaScript string",
    },
    AcceptedClass {
        id: "flow-comment-column-0",
        reason: "a comment line at column 0 inside a flow collection is a comment, as YAML 1.2 \
                 allows at any indentation; the yaml package refuses one that follows a value \
                 of a flow mapping without a comma (`{` then `  \"a\": 1` then `# c` then `}`), \
                 reporting a comment not separated by white space, and accepts it elsewhere",
    },
    AcceptedClass {
        id: "nesting-limit",
        reason: "collections nested more than 255 deep are refused (a fixed, stated limit); the \
                 yaml package has none short of its call stack",
    },
    AcceptedClass {
        id: "recursive-alias",
        reason: "an alias inside the node its anchor names has no finite value; the yaml \
                 package builds a cyclic object",
    },
];

/// One difference between two decisions on the same text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// What differs, for people.
    pub what: String,
    /// The accepted class it belongs to, if any.
    pub class: Option<&'static str>,
}

fn kinds_agree(ours: &str, theirs: &str) -> bool {
    ours == theirs
        || (ours == "tagged" && !matches!(theirs, "string" | "tagged"))
        || (theirs == "tagged" && !matches!(ours, "string" | "tagged"))
}

fn is_core_tag(tag: &str) -> bool {
    tag.starts_with(super::CORE_PREFIX)
}

/// The class of a key that is a string on the other side only because of its tag.
fn tagged_key_class(tag: Option<&str>) -> Option<&'static str> {
    match tag {
        None | Some("!") | Some("tag:yaml.org,2002:str") => None,
        Some(t) if is_core_tag(t) => Some("core-tag-mismatch"),
        Some(_) => Some("non-core-tag"),
    }
}

/// Whether a line of `text` is a `%YAML 1.1` directive.
fn has_yaml_11_directive(text: &str) -> bool {
    text.lines().any(|l| {
        l.strip_prefix("%YAML").is_some_and(|rest| {
            rest.starts_with([' ', '\t']) && rest.trim_start().starts_with("1.1")
        })
    })
}

/// Whether line `n` (1-based) of `text` is an empty implicit key indented deeper than column 0
/// (`  : value`).
fn is_indented_empty_key(text: &str, n: usize) -> bool {
    let Some(line) = text.split('\n').nth(n.saturating_sub(1)) else {
        return false;
    };
    let rest = line.trim_start_matches([' ', '\t']);
    rest.len() < line.len()
        && rest
            .strip_prefix(':')
            .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t', '\r']))
}

/// Whether an indented line starts with a tag or anchor followed by `:` (an empty key with a
/// property, in a nested block mapping).
fn has_tagged_empty_key(text: &str) -> bool {
    text.lines().any(|line| {
        let rest = line.trim_start_matches(' ');
        let mut tokens = rest.split([' ', '\t']).filter(|t| !t.is_empty());
        rest.len() < line.len()
            && tokens.next().is_some_and(|t| t.starts_with(['!', '&']))
            && tokens.next().is_some_and(|t| t == ":")
    })
}

/// Whether the yaml package refused a comment line that starts at column 0 (inside a flow
/// mapping, after a value without a comma), which it reports as a comment not separated by white
/// space.
fn is_column_0_comment_error(text: &str, theirs: &Decision) -> bool {
    let Some(rest) = theirs.error.as_deref().and_then(|e| {
        e.strip_prefix(
            "Comments must be separated from other tokens by white space characters at line ",
        )
    }) else {
        return false;
    };
    let Some((line, column)) = rest.split_once(", column ") else {
        return false;
    };
    let Ok(n) = line.parse::<usize>() else {
        return false;
    };
    column.trim_end_matches(':') == "1"
        && text
            .split('\n')
            .nth(n.saturating_sub(1))
            .is_some_and(|l| l.starts_with('#'))
}

/// Whether two strings are the same once spaces and line breaks are removed.
fn only_blank_lines_differ(a: Option<&str>, b: Option<&str>) -> bool {
    let strip = |s: &str| {
        s.chars()
            .filter(|c| !matches!(c, ' ' | '\n'))
            .collect::<String>()
    };
    matches!((a, b), (Some(a), Some(b)) if strip(a) == strip(b))
}

/// The class of a syntax error of ours that the yaml package does not report.
fn syntax_class(text: &str, ours: &Decision) -> Option<&'static str> {
    let n = ours.error_line?;
    let line = text.split('\n').nth(n.checked_sub(1)?)?;
    let message = ours.error.as_deref().unwrap_or("");
    if is_indented_empty_key(text, n) {
        return Some("indented-empty-key");
    }
    if message.contains("wrongly indented line in block scalar")
        && line.trim_start_matches([' ', '\t']).starts_with('#')
    {
        return Some("block-scalar-comment");
    }
    if message.contains("mapping keys are not allowed in this context") {
        let tokens: Vec<&str> = line.split([' ', '\t']).filter(|t| !t.is_empty()).collect();
        let property_then_key = tokens
            .windows(2)
            .any(|w| w[0].starts_with(['!', '&']) && w[1] == "?");
        if property_then_key {
            return Some("properties-before-compact-key");
        }
    }
    None
}

/// The class of a kind difference between our value and theirs.
fn kind_class(side: Side, ours: &str, our_tag: Option<&str>, theirs: &str) -> Option<&'static str> {
    match (ours, theirs) {
        ("tagged", "string") => Some("non-core-tag"),
        ("null" | "bool" | "number", "string")
            if side == Side::Js && our_tag.is_some_and(is_core_tag) =>
        {
            Some("core-tag-mismatch")
        }
        _ => None,
    }
}

fn show(d: &Decision) -> String {
    match (&d.accepted, &d.error_kind) {
        (true, _) => match d.documents {
            Some(n) => format!("accepted ({n} documents)"),
            None => "accepted".to_owned(),
        },
        (false, Some(k)) => match &d.error {
            Some(e) => format!("rejected ({k}: {e})"),
            None => format!("rejected ({k})"),
        },
        (false, None) => "rejected".to_owned(),
    }
}

/// Lists the differences between our decision and theirs on `text`, each with its accepted
/// class when it has one.
pub fn compare(side: Side, text: &str, ours: &Decision, theirs: &Decision) -> Vec<Difference> {
    let mut out = Vec::new();
    // In a document that asks for YAML 1.1 the yaml package resolves everything differently.
    let yaml_11 = side == Side::Js && has_yaml_11_directive(text);
    let mut diff = |what: String, class: Option<&'static str>| {
        let class = class.or(yaml_11.then_some("yaml-1.1-directive"));
        out.push(Difference { what, class });
    };
    if ours.accepted != theirs.accepted {
        let class = if theirs.accepted {
            match (side, ours.error_kind.as_deref()) {
                (Side::Suite, Some("multiple_documents")) if theirs.documents > Some(1) => {
                    Some("multi-document")
                }
                (Side::Suite, Some("duplicate_key")) => Some("duplicate-key"),
                (_, Some("recursive_alias")) => Some("recursive-alias"),
                (Side::Js, Some("too_deep")) => Some("nesting-limit"),
                (Side::Js, Some("byte_order_mark")) => Some("byte-order-mark"),
                (Side::Js, Some("lone_surrogate")) => Some("lone-surrogate"),
                (Side::Js, Some("syntax")) => syntax_class(text, ours),
                (Side::Js, Some("duplicate_key")) if has_tagged_empty_key(text) => {
                    Some("tagged-empty-key")
                }
                _ => None,
            }
        } else if side == Side::Js && theirs.error_kind.as_deref() == Some("KEY_OVER_1024_CHARS") {
            Some("key-length-utf16")
        } else if side == Side::Js && is_column_0_comment_error(text, theirs) {
            Some("flow-comment-column-0")
        } else if side == Side::Js
            && theirs.error_kind.as_deref() == Some("DUPLICATE_KEY")
            && has_tagged_empty_key(text)
        {
            Some("tagged-empty-key")
        } else {
            None
        };
        diff(
            format!("ours {}, theirs {}", show(ours), show(theirs)),
            class,
        );
        return out;
    }
    if !ours.accepted {
        return out;
    }
    if let (Some(o), Some(t)) = (&ours.root, &theirs.root) {
        if !kinds_agree(o, t) {
            diff(
                format!("root: ours {o}, theirs {t}"),
                kind_class(side, o, None, t),
            );
            return out;
        }
    }
    let (Some(our_entries), Some(their_entries)) = (&ours.entries, &theirs.entries) else {
        return out;
    };
    let mine: BTreeMap<&str, &EntryDecision> =
        our_entries.iter().map(|e| (e.key.as_str(), e)).collect();
    let yours: BTreeMap<&str, &EntryDecision> =
        their_entries.iter().map(|e| (e.key.as_str(), e)).collect();
    // Keys that are strings on their side only.
    let their_only: Vec<(&str, &EntryDecision)> = yours
        .iter()
        .filter(|(key, _)| !mine.contains_key(*key))
        .map(|(k, e)| (*k, *e))
        .collect();
    // Their string keys (counting repeats, such as two aliases of one tagged scalar) that are
    // not strings here because of their tag.
    let explained_keys = their_entries
        .iter()
        .filter(|e| {
            !mine.contains_key(e.key.as_str()) && tagged_key_class(e.key_tag.as_deref()).is_some()
        })
        .count();
    for (key, e) in &their_only {
        match (side, tagged_key_class(e.key_tag.as_deref())) {
            (_, Some(class)) => {
                diff(
                    format!("key `{key}`: a string key only on their side"),
                    Some(class),
                );
            }
            // The suite's JSON writes every key as a string: a number or null key of ours
            // is one of their string keys (counted below).
            (Side::Suite, None) => {}
            (Side::Js, None) => diff(format!("key `{key}`: only theirs"), None),
        }
    }
    let our_other = ours.other_keys.unwrap_or(0);
    match side {
        Side::Suite => {
            let unexplained = their_only
                .iter()
                .filter(|(_, e)| tagged_key_class(e.key_tag.as_deref()).is_none())
                .count();
            if unexplained > our_other {
                diff(
                    format!(
                        "{unexplained} key(s) only theirs, but ours has {our_other} non-string key(s)"
                    ),
                    None,
                );
            }
        }
        Side::Js => {
            if let Some(t) = theirs.other_keys {
                if our_other != t + explained_keys {
                    diff(
                        format!("non-string keys: ours {our_other}, theirs {t}"),
                        None,
                    );
                }
            }
        }
    }
    for (key, o) in &mine {
        let Some(t) = yours.get(key) else {
            diff(format!("key `{key}`: only ours"), None);
            continue;
        };
        if !kinds_agree(&o.kind, &t.kind) {
            diff(
                format!("key `{key}`: ours {}, theirs {}", o.kind, t.kind),
                kind_class(side, &o.kind, o.tag.as_deref(), &t.kind),
            );
        } else if o.value != t.value {
            let class = (side == Side::Js
                && text.contains(['|', '>'])
                && only_blank_lines_differ(o.value.as_deref(), t.value.as_deref()))
            .then_some("block-scalar-blank-lines");
            diff(
                format!("key `{key}`: ours {:?}, theirs {:?}", o.value, t.value),
                class,
            );
        }
    }
    out
}

/// The counts of one comparison run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    pub run: usize,
    pub agreed: usize,
    /// Of the agreements, how many both sides accept (the rest both refuse).
    pub agreed_accepted: usize,
    /// Texts whose differences are all accepted, by class (a text may count in several).
    pub accepted: BTreeMap<&'static str, usize>,
    pub accepted_texts: usize,
    /// Texts with at least one unexpected difference: id, text, differences.
    pub unexpected: Vec<(String, String, Vec<Difference>)>,
}

/// Decides every input and compares with `theirs` (one decision per input, same ids, any
/// order). Missing or extra decisions, duplicate ids and an empty input are errors: the run
/// must never pass vacuously.
///
/// With `suite` (the suite's expectations for the same inputs), a difference from the yaml
/// package on an input where the reader agrees with the suite exactly is of the class
/// `js-differs-from-suite`.
pub fn run(
    side: Side,
    inputs: &[Input],
    theirs: &[Decision],
    suite: Option<&[Decision]>,
) -> Result<Tally, String> {
    if inputs.is_empty() {
        return Err("no inputs: the comparison would pass vacuously".to_owned());
    }
    let by_id = index(theirs, "their decisions")?;
    let suite_by_id = match suite {
        Some(s) => {
            let map = index(s, "the suite's decisions")?;
            if map.len() != inputs.len() {
                return Err(format!(
                    "{} inputs but {} suite decisions",
                    inputs.len(),
                    map.len()
                ));
            }
            Some(map)
        }
        None => None,
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut tally = Tally::default();
    for input in inputs {
        if !seen.insert(input.id.as_str()) {
            return Err(format!("the inputs repeat the id `{}`", input.id));
        }
        let Some(t) = by_id.get(input.id.as_str()) else {
            return Err(format!("no decision of theirs for `{}`", input.id));
        };
        let ours = decide(&input.id, &input.text);
        let mut diffs = compare(side, &input.text, &ours, t);
        if let Some(suite) = &suite_by_id {
            let expected = suite
                .get(input.id.as_str())
                .ok_or_else(|| format!("no suite decision for `{}`", input.id))?;
            if compare(Side::Suite, &input.text, &ours, expected).is_empty() {
                for d in &mut diffs {
                    d.class = d.class.or(Some("js-differs-from-suite"));
                }
            }
        }
        tally.run += 1;
        if diffs.is_empty() {
            tally.agreed += 1;
            tally.agreed_accepted += usize::from(ours.accepted);
        } else if diffs.iter().all(|d| d.class.is_some()) {
            tally.accepted_texts += 1;
            let classes: std::collections::BTreeSet<&'static str> =
                diffs.iter().filter_map(|d| d.class).collect();
            for c in classes {
                *tally.accepted.entry(c).or_default() += 1;
            }
        } else {
            tally
                .unexpected
                .push((input.id.clone(), input.text.clone(), diffs));
        }
    }
    if seen.len() != by_id.len() {
        return Err(format!(
            "{} decisions of theirs have no input",
            by_id.len() - seen.len()
        ));
    }
    Ok(tally)
}

fn index<'a>(
    decisions: &'a [Decision],
    what: &str,
) -> Result<BTreeMap<&'a str, &'a Decision>, String> {
    let mut map = BTreeMap::new();
    for d in decisions {
        if map.insert(d.id.as_str(), d).is_some() {
            return Err(format!("{what} repeat the id `{}`", d.id));
        }
    }
    Ok(map)
}

/// Parses JSON lines (blank lines skipped), naming the source and line in errors.
pub fn read_json_lines<T: serde::de::DeserializeOwned>(
    text: &str,
    source: &str,
) -> Result<Vec<T>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(line).map_err(|e| format!("{source}:{}: {e}", i + 1))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(id: &str, text: &str) -> Input {
        Input {
            id: id.into(),
            text: text.into(),
        }
    }

    fn js(line: &str) -> Decision {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn decisions_have_the_shared_shape() {
        let d = decide("x", "name: Weather\nversion: 2\n!custom t: x\n");
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "id": "x", "accepted": true, "root": "mapping", "other_keys": 1,
                "entries": [
                    {"key": "name", "kind": "string", "value": "Weather"},
                    {"key": "version", "kind": "number"}
                ]
            })
        );
        let d = decide("y", "a: 1\na: 2\n");
        assert_eq!(d.error_kind.as_deref(), Some("duplicate_key"));
        assert_eq!(d.error_line, Some(2));
        assert!(!d.accepted);
    }

    #[test]
    fn a_run_counts_agreements_accepted_and_unexpected_differences() {
        let inputs = [
            input("same", "name: a\n"),
            input("tag", "name: !custom a\n"),
            input("bom", "name: a\u{feff}\n"),
            input("wrong", "name: yes\n"),
            input("both-reject", "a: b: c\n"),
        ];
        let theirs = [
            js(
                r#"{"id":"same","accepted":true,"root":"mapping","other_keys":0,"entries":[{"key":"name","kind":"string","value":"a"}]}"#,
            ),
            js(
                r#"{"id":"tag","accepted":true,"root":"mapping","other_keys":0,"entries":[{"key":"name","kind":"string","value":"a","tag":"!custom"}]}"#,
            ),
            js(
                r#"{"id":"bom","accepted":true,"root":"mapping","other_keys":0,"entries":[{"key":"name","kind":"string","value":"a\ufeff"}]}"#,
            ),
            js(
                r#"{"id":"wrong","accepted":true,"root":"mapping","other_keys":0,"entries":[{"key":"name","kind":"bool"}]}"#,
            ),
            js(r#"{"id":"both-reject","accepted":false,"error_kind":"BLOCK_AS_IMPLICIT_KEY"}"#),
        ];
        let tally = run(Side::Js, &inputs, &theirs, None).unwrap();
        assert_eq!(tally.run, 5);
        assert_eq!(tally.agreed, 2);
        assert_eq!(tally.agreed_accepted, 1);
        assert_eq!(tally.accepted_texts, 2);
        assert_eq!(tally.accepted.get("non-core-tag"), Some(&1));
        assert_eq!(tally.accepted.get("byte-order-mark"), Some(&1));
        assert_eq!(tally.unexpected.len(), 1);
        let (id, _, diffs) = &tally.unexpected[0];
        assert_eq!(id, "wrong");
        assert_eq!(diffs[0].class, None);
        assert!(
            diffs[0].what.contains("ours string, theirs bool"),
            "{diffs:?}"
        );
    }

    #[test]
    fn lone_surrogates_and_column_0_comments_are_classed() {
        let inputs = [
            input("lone", "a: \"\\ud83d\"\n"),
            input("comment", "m: {\n  \"a\": 1\n# c\n}\n"),
            input("indented", "m: {\n  \"a\": 1\n  # c\n}\n"),
        ];
        let theirs = [
            js(
                r#"{"id":"lone","accepted":true,"root":"mapping","other_keys":0,"entries":[{"key":"a","kind":"string","value":"\ufffd"}]}"#,
            ),
            js(
                r#"{"id":"comment","accepted":false,"error_kind":"MISSING_CHAR","error":"Comments must be separated from other tokens by white space characters at line 3, column 1:"}"#,
            ),
            js(
                r#"{"id":"indented","accepted":false,"error_kind":"MISSING_CHAR","error":"Comments must be separated from other tokens by white space characters at line 3, column 3:"}"#,
            ),
        ];
        let tally = run(Side::Js, &inputs, &theirs, None).unwrap();
        assert_eq!(tally.accepted.get("lone-surrogate"), Some(&1));
        assert_eq!(tally.accepted.get("flow-comment-column-0"), Some(&1));
        // Only a comment at column 0 is the decided difference.
        assert_eq!(tally.unexpected.len(), 1);
        assert_eq!(tally.unexpected[0].0, "indented");
    }

    #[test]
    fn the_suite_side_reads_documents_and_json_keys() {
        let inputs = [
            input("multi", "a: 1\n---\nb: 2\n"),
            input("keys", "1: x\nname: y\n"),
            input("fail", "a: [\n"),
        ];
        let suite = [
            js(r#"{"id":"multi","accepted":true,"documents":2}"#),
            js(
                r#"{"id":"keys","accepted":true,"documents":1,"root":"mapping","entries":[{"key":"1","kind":"string","value":"x"},{"key":"name","kind":"string","value":"y"}]}"#,
            ),
            js(r#"{"id":"fail","accepted":false,"error_kind":"suite_fail"}"#),
        ];
        let tally = run(Side::Suite, &inputs, &suite, None).unwrap();
        assert_eq!((tally.agreed, tally.accepted_texts), (2, 1));
        assert_eq!(tally.accepted.get("multi-document"), Some(&1));
        assert!(tally.unexpected.is_empty());
        // A suite answer that a valid text fails is unexpected.
        let wrong = [
            js(r#"{"id":"multi","accepted":true,"documents":2}"#),
            js(r#"{"id":"keys","accepted":false,"error_kind":"suite_fail"}"#),
            js(r#"{"id":"fail","accepted":false,"error_kind":"suite_fail"}"#),
        ];
        let tally = run(Side::Suite, &inputs, &wrong, None).unwrap();
        assert_eq!(tally.unexpected.len(), 1);
    }

    #[test]
    fn the_suite_breaks_ties_with_the_javascript_side() {
        let inputs = [input("SF5V", "%YAML 1.2\n%YAML 1.2\n---\n")];
        let js_side = [js(r#"{"id":"SF5V","accepted":true,"root":"null"}"#)];
        let suite = [js(
            r#"{"id":"SF5V","accepted":false,"error_kind":"suite_fail"}"#,
        )];
        let without = run(Side::Js, &inputs, &js_side, None).unwrap();
        assert_eq!(without.unexpected.len(), 1);
        let with = run(Side::Js, &inputs, &js_side, Some(&suite)).unwrap();
        assert_eq!(with.accepted.get("js-differs-from-suite"), Some(&1));
    }

    #[test]
    fn missing_data_is_an_error_never_a_pass() {
        let one = [input("a", "x: 1\n")];
        let dec = [js(r#"{"id":"a","accepted":true}"#)];
        assert!(run(Side::Js, &[], &[], None).is_err());
        assert!(run(Side::Js, &one, &[], None).is_err());
        let extra = [dec[0].clone(), js(r#"{"id":"b","accepted":true}"#)];
        assert!(run(Side::Js, &one, &extra, None).is_err());
        let twice = [dec[0].clone(), dec[0].clone()];
        assert!(run(Side::Js, &one, &twice, None).is_err());
        assert!(read_json_lines::<Decision>("{\"id\":1}\n", "f.jsonl")
            .unwrap_err()
            .starts_with("f.jsonl:1:"));
    }

    #[test]
    fn every_class_the_comparison_can_name_is_listed() {
        let listed: Vec<&str> = ACCEPTED.iter().map(|c| c.id).collect();
        let source = include_str!("conformance.rs");
        for (i, _) in source.match_indices("Some(\"") {
            let rest = &source[i + 6..];
            let name = &rest[..rest.find('"').unwrap_or(0)];
            if name.contains('-') && !name.contains(' ') {
                assert!(listed.contains(&name), "class `{name}` is not in ACCEPTED");
            }
        }
        // SPEC.md's section "The YAML reader" names every class.
        let spec = include_str!("../../SPEC.md");
        let start = spec.find("### The YAML reader").unwrap_or(spec.len());
        let section = &spec[start..];
        let section = &section[..section.find("### `").unwrap_or(section.len())];
        for c in ACCEPTED {
            assert!(!c.reason.is_empty());
            assert!(
                section.contains(&format!("`{}`", c.id)),
                "SPEC.md \"The YAML reader\" does not name `{}`",
                c.id
            );
        }
    }
}
