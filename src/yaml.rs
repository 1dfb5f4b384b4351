//! Safe inspection of untrusted YAML (frontmatter and skill.yml) under the YAML 1.2 core schema.
//!
//! The runtime only needs the top-level keys of one mapping and whether each value is a string.
//! This module walks the `saphyr-parser` event stream and never builds or expands a document, so
//! alias bombs ("billion laughs") cost nothing: an alias is resolved only to the kind of the node
//! its anchor named. It rejects what the JavaScript `yaml` package rejects by default: syntax
//! errors, duplicate mapping keys, and more than one document.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

/// The kind of a YAML node as the core schema resolves it; strings keep their value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(String),
    Null,
    Bool,
    Int,
    Float,
    /// A scalar with an explicit tag other than `!!str` (for example `!!binary`, `!custom`).
    Tagged,
    Sequence,
    Mapping,
}

impl Value {
    /// The value as a string when it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A parsed document: the top-level node's kind, and its key/value pairs when it is a mapping
/// (keys that are strings only, in document order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub root: Value,
    pub entries: Vec<(String, Value)>,
}

impl Document {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Why a text is not acceptable YAML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlError {
    Syntax { line: usize, message: String },
    DuplicateKey { key: String },
    MultipleDocuments,
    UnknownAlias,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            YamlError::Syntax { line, message } => {
                write!(f, "YAML syntax error at line {line}: {message}")
            }
            YamlError::DuplicateKey { key } => write!(f, "duplicate mapping key `{key}`"),
            YamlError::MultipleDocuments => write!(f, "more than one YAML document"),
            YamlError::UnknownAlias => write!(f, "alias to an unknown anchor"),
        }
    }
}

/// Resolves a plain (unquoted, untagged) scalar by the YAML 1.2 core schema.
pub fn resolve_plain(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return Value::Bool,
        _ => {}
    }
    if is_core_int(text) {
        return Value::Int;
    }
    if is_core_float(text) {
        return Value::Float;
    }
    Value::Str(text.to_owned())
}

fn is_core_int(t: &str) -> bool {
    let digits = |s: &str, ok: fn(u8) -> bool| !s.is_empty() && s.bytes().all(ok);
    if let Some(rest) = t.strip_prefix("0o") {
        return digits(rest, |b| (b'0'..=b'7').contains(&b));
    }
    if let Some(rest) = t.strip_prefix("0x") {
        return digits(rest, |b| b.is_ascii_hexdigit());
    }
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    digits(unsigned, |b| b.is_ascii_digit())
}

fn is_core_float(t: &str) -> bool {
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(t, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    // [0-9]+ ( . [0-9]* )? | . [0-9]+   then optional exponent
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            let int_ok = int.bytes().all(|b| b.is_ascii_digit());
            let frac_ok = frac.bytes().all(|b| b.is_ascii_digit());
            int_ok && frac_ok && !(int.is_empty() && frac.is_empty())
        }
        None => !mantissa.is_empty() && mantissa.bytes().all(|b| b.is_ascii_digit()),
    };
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
        }
    };
    mantissa_ok && exponent_ok
}

/// The core-schema type name of a tag (`!!str` or `!<tag:yaml.org,2002:str>` → `str`).
fn core_tag_name(t: &Tag) -> Option<&str> {
    if t.is_yaml_core_schema() {
        return Some(&t.suffix);
    }
    if t.handle.is_empty() {
        return t.suffix.strip_prefix("tag:yaml.org,2002:");
    }
    None
}

/// The non-specific tag `!` (the parser reports it with an empty handle and the suffix `!`).
fn is_non_specific(t: &Tag) -> bool {
    (t.handle.is_empty() && t.suffix == "!") || (t.handle == "!" && t.suffix.is_empty())
}

fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    match tag {
        // The non-specific tag `!` resolves a scalar as a string (YAML 1.2, 6.9.1).
        Some(t) if is_non_specific(t) => Value::Str(text.to_owned()),
        Some(t) => match core_tag_name(t) {
            Some("str") => Value::Str(text.to_owned()),
            Some("null") => Value::Null,
            Some("bool") => Value::Bool,
            Some("int") => Value::Int,
            Some("float") => Value::Float,
            _ => Value::Tagged,
        },
        None => match style {
            ScalarStyle::Plain => resolve_plain(text),
            _ => Value::Str(text.to_owned()),
        },
    }
}

/// A key's identity for the duplicate check: its resolved kind and text.
fn key_identity(value: &Value, raw: &str) -> String {
    match value {
        Value::Str(s) => format!("s:{s}"),
        other => format!("{other:?}:{raw}"),
    }
}

enum Frame {
    Mapping {
        seen: HashSet<String>,
        expecting_key: bool,
        pending_key: Option<Option<String>>,
        top: bool,
    },
    Sequence,
}

/// Parses `text` as at most one YAML document. An empty stream is a document whose root is null.
pub fn parse(text: &str) -> Result<Document, YamlError> {
    let mut anchors: HashMap<usize, Value> = HashMap::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut documents = 0usize;
    let mut root: Option<Value> = None;
    let mut entries: Vec<(String, Value)> = Vec::new();

    for item in Parser::new_from_str(text) {
        let (event, _span) = item.map_err(|e| YamlError::Syntax {
            line: e.marker().line(),
            message: e.info().to_owned(),
        })?;
        // A node that completes here: its kind plus (for scalars) its raw text.
        let completed: Option<(Value, Cow<'_, str>)> = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError::MultipleDocuments);
                }
                None
            }
            Event::Scalar(text, style, anchor, tag) => {
                let value = resolve_scalar(&text, style, tag.as_deref());
                if anchor > 0 {
                    anchors.insert(anchor, value.clone());
                }
                Some((value, text))
            }
            Event::Alias(id) => {
                let value = anchors.get(&id).cloned().ok_or(YamlError::UnknownAlias)?;
                Some((value, Cow::Borrowed("*alias")))
            }
            Event::SequenceStart(anchor, _) => {
                if anchor > 0 {
                    anchors.insert(anchor, Value::Sequence);
                }
                stack.push(Frame::Sequence);
                None
            }
            Event::MappingStart(anchor, _) => {
                if anchor > 0 {
                    anchors.insert(anchor, Value::Mapping);
                }
                let top = stack.is_empty();
                stack.push(Frame::Mapping {
                    seen: HashSet::new(),
                    expecting_key: true,
                    pending_key: None,
                    top,
                });
                None
            }
            Event::SequenceEnd => {
                let _ = stack.pop();
                Some((Value::Sequence, Cow::Borrowed("[]")))
            }
            Event::MappingEnd => {
                let _ = stack.pop();
                Some((Value::Mapping, Cow::Borrowed("{}")))
            }
            _ => None,
        };
        let Some((value, raw)) = completed else {
            continue;
        };
        match stack.last_mut() {
            None => root = Some(value),
            Some(Frame::Sequence) => {}
            Some(Frame::Mapping {
                seen,
                expecting_key,
                pending_key,
                top,
            }) => {
                if *expecting_key {
                    let identity = key_identity(&value, &raw);
                    let display = match &value {
                        Value::Str(s) => s.clone(),
                        _ => raw.to_string(),
                    };
                    let is_scalar_key = !matches!(value, Value::Sequence | Value::Mapping);
                    if is_scalar_key && !seen.insert(identity) {
                        return Err(YamlError::DuplicateKey { key: display });
                    }
                    *pending_key = Some(value.as_str().map(str::to_owned));
                    *expecting_key = false;
                } else {
                    if *top {
                        if let Some(Some(key)) = pending_key.take() {
                            entries.push((key, value));
                        }
                    }
                    *pending_key = None;
                    *expecting_key = true;
                }
            }
        }
    }
    Ok(Document {
        root: root.unwrap_or(Value::Null),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(text: &str, key: &str) -> Option<Value> {
        parse(text).unwrap().get(key).cloned()
    }

    #[test]
    fn core_schema_typing() {
        assert_eq!(top("name: yes", "name"), Some(Value::Str("yes".into())));
        assert_eq!(top("name: 123", "name"), Some(Value::Int));
        assert_eq!(top("name: 0x1F", "name"), Some(Value::Int));
        assert_eq!(top("name: 1.5e3", "name"), Some(Value::Float));
        assert_eq!(top("name: .inf", "name"), Some(Value::Float));
        assert_eq!(top("name: 1.2.3", "name"), Some(Value::Str("1.2.3".into())));
        assert_eq!(top("name: null", "name"), Some(Value::Null));
        assert_eq!(top("name:", "name"), Some(Value::Null));
        assert_eq!(top("name: ~", "name"), Some(Value::Null));
        assert_eq!(top("name: True", "name"), Some(Value::Bool));
        assert_eq!(top("name: '123'", "name"), Some(Value::Str("123".into())));
        assert_eq!(
            top("name: !!str 123", "name"),
            Some(Value::Str("123".into()))
        );
        assert_eq!(top("name: ! 123", "name"), Some(Value::Str("123".into())));
        assert_eq!(
            top("name: !<tag:yaml.org,2002:str> 1", "name"),
            Some(Value::Str("1".into()))
        );
        assert_eq!(top("name: !!int 1", "name"), Some(Value::Int));
        assert_eq!(top("name: !custom x", "name"), Some(Value::Tagged));
        assert_eq!(top("name: [a]", "name"), Some(Value::Sequence));
        assert_eq!(top("name: {a: 1}", "name"), Some(Value::Mapping));
        assert_eq!(top("name: .", "name"), Some(Value::Str(".".into())));
        assert_eq!(top("name: '-'", "name"), Some(Value::Str("-".into())));
    }

    #[test]
    fn duplicates_and_documents_are_errors() {
        assert!(matches!(
            parse("a: 1\na: 2"),
            Err(YamlError::DuplicateKey { .. })
        ));
        assert!(matches!(
            parse("m:\n  x: 1\n  x: 2"),
            Err(YamlError::DuplicateKey { .. })
        ));
        assert!(matches!(
            parse("a: 1\n---\nb: 2"),
            Err(YamlError::MultipleDocuments)
        ));
        assert!(matches!(
            parse("description: Use when: x"),
            Err(YamlError::Syntax { .. })
        ));
    }

    #[test]
    fn aliases_resolve_to_kind_without_expansion() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for i in 0..40 {
            let prev = if i == 0 {
                "a".to_string()
            } else {
                format!("k{}", i - 1)
            };
            bomb.push_str(&format!(
                "k{i}: &k{i} [*{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        bomb.push_str("s: &s hello\nname: *s\n");
        let doc = parse(&bomb).unwrap();
        assert_eq!(doc.get("name"), Some(&Value::Str("hello".into())));
        assert_eq!(doc.get("k39"), Some(&Value::Sequence));
    }

    #[test]
    fn empty_stream_is_null() {
        assert_eq!(parse("").unwrap().root, Value::Null);
        assert_eq!(parse("# only a comment\n").unwrap().root, Value::Null);
    }
}
