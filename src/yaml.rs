//! Safe inspection of untrusted YAML (frontmatter and skill.yml) under the YAML 1.2 core schema.
//!
//! The runtime only needs the top-level keys of one mapping and whether each value is a string.
//! This module walks the `saphyr-parser` event stream and never builds or expands a document, so
//! an alias costs no more than its own event: it is resolved only to the kind of the node its
//! anchor named. The rules are SPEC.md's section "The YAML reader"; in short it rejects:
//!
//! - syntax errors (whatever `saphyr-parser` rejects, plus a compact collection on the line of an
//!   empty implicit key, which it accepts), and a byte order mark inside the document;
//! - more than one document;
//! - duplicate keys in any mapping, where keys are compared by the value the JavaScript `yaml`
//!   package gives them (`1`, `0x1` and `1.0` are the same key; `.nan` never repeats);
//! - collections nested more than [`MAX_NESTING`] deep (the top-level mapping is depth 1);
//! - implicit keys longer than [`MAX_IMPLICIT_KEY`] characters;
//! - an alias inside the very node its anchor names (a recursive, infinite value);
//! - excessive aliasing, counted exactly as the `yaml` package's `maxAliasCount: 100` does
//!   (see [`MAX_ALIAS_COUNT`]), so an alias bomb that the JavaScript runtime refuses is refused
//!   here too, although it would cost this reader nothing.
//!
//! - a `\u`/`\U` escape of a UTF-16 surrogate that is not half of a pair (a pair, as
//!   `json.dumps` writes `"\ud83d\udcb0"`, is the one character it encodes; see
//!   `surrogate_pairs`);
//! - a line of a flow collection or quoted scalar inside a block collection that is not indented
//!   past that collection's entries, except the closing line of the outermost flow collection,
//!   which may stand at their column (`metadata: {` … `}`, as the `yaml` package allows; see
//!   `check_flow_lines`).
//!
//! It accepts a tab between `:` and a scalar value, which YAML 1.2 allows and `saphyr-parser`
//! refuses in part (see `TabSeparators`). Where the text is rewritten for the parser (surrogate
//! pairs, closing lines), positions are mapped back (`Rewrite`) so that lengths and columns are
//! those of the text as written.
//!
//! [`parse_tree`] also keeps the document as a [`Tree`] (for the nested fields the `selection`
//! and `trust` profile reads, SPEC.md `selection.format`): each node once, an alias sharing the
//! node its anchor names (`Rc`), so the tree is never larger than the text and is built only for
//! what passes the same limits.
//!
//! The `conformance` submodule holds the comparison machinery of `.ci/yaml-conformance`.

pub mod conformance;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

/// The deepest nesting of collections that loads: the top-level mapping is depth 1, a list
/// that is the value of a top-level key depth 2, and so on. One more is [`YamlError::TooDeep`].
/// 255 is the most `saphyr-parser` allows for nested flow collections (`[[[…]]]`), so one limit
/// holds for block and flow collections alike; the JavaScript `yaml` package handles this depth
/// too (it fails only from several hundred levels, where its call stack runs out).
pub const MAX_NESTING: usize = 255;

/// The alias budget of the JavaScript `yaml` package (`maxAliasCount`, default 100), applied as
/// it applies it while converting a document: every anchored node has a *count*, 1 when the node
/// is reached plus 1 per alias resolved to it so far, and an *alias weight*, computed when the
/// first alias to it is resolved: 1 for a scalar; for a collection the largest weight among the
/// scalars (1 each) and aliases (their target's count × weight, at that moment) anywhere inside
/// it, 0 when there is none. An alias whose target then has count × weight above this budget
/// makes the document [`YamlError::ExcessiveAliases`].
pub const MAX_ALIAS_COUNT: u64 = 100;

/// The longest implicit key, in characters (Unicode scalar values) from the key's first
/// character to its `:` (YAML 1.2, 7.4.2 and 8.2.2). saphyr-parser enforces it in block
/// mappings; the reader adds it for single pairs in flow sequences (`[key: value]`).
pub const MAX_IMPLICIT_KEY: usize = 1024;

/// The kind of a YAML node as the core schema resolves it; strings keep their value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(String),
    Null,
    Bool,
    Int,
    Float,
    /// A scalar with an explicit tag outside the core schema (for example `!!binary`, `!custom`).
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

/// The document as a tree ([`parse_tree`]): kinds as the core schema resolves them, scalars with
/// their text, and mappings with the pairs whose key is a string. An alias is the very node its
/// anchor names (shared, never copied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tree {
    /// A scalar: its kind, and its text as the parser gives it (quotes and escapes resolved).
    Scalar {
        value: Value,
        text: String,
    },
    Sequence(Vec<Rc<Tree>>),
    /// The pairs whose key is a string, in document order (other keys are left out).
    Mapping(Vec<(String, Rc<Tree>)>),
}

impl Tree {
    /// The value of `key` when this is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Tree> {
        match self {
            Tree::Mapping(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| &**v),
            _ => None,
        }
    }
}

/// A top-level key/value pair whose key is a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: Value,
    /// The value's explicit tag, fully resolved (`tag:yaml.org,2002:int`, `!custom`, `!`); for an
    /// alias, the tag of the node it names.
    pub tag: Option<String>,
}

/// A parsed document: the top-level node's kind, and its key/value pairs when it is a mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub root: Value,
    /// The pairs whose key is a string, in document order.
    pub entries: Vec<Entry>,
    /// How many top-level keys are not strings (numbers, null, collections, tagged scalars).
    pub other_keys: usize,
    /// The whole document as a tree; only from [`parse_tree`].
    pub tree: Option<Rc<Tree>>,
}

impl Document {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|e| e.key == key).map(|e| &e.value)
    }
}

/// Why a text is not acceptable YAML. Lines are 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlError {
    Syntax {
        line: usize,
        message: String,
    },
    /// A U+FEFF byte order mark after the start of the document (YAML 1.2 allows one only
    /// before a document or inside a quoted scalar).
    ByteOrderMark {
        line: usize,
    },
    DuplicateKey {
        line: usize,
        key: String,
    },
    MultipleDocuments {
        line: usize,
    },
    UnknownAlias {
        line: usize,
    },
    TooDeep {
        line: usize,
    },
    RecursiveAlias {
        line: usize,
    },
    ExcessiveAliases {
        line: usize,
    },
    /// A `\u` or `\U` escape of a UTF-16 surrogate that is not the first half of a pair
    /// followed by its second half (`"\ud83d"`, `"\udcb0\ud83d"`): not a character.
    LoneSurrogate {
        line: usize,
    },
}

impl YamlError {
    /// A stable name for the kind of error (used by the conformance tooling).
    pub fn kind(&self) -> &'static str {
        match self {
            YamlError::Syntax { .. } => "syntax",
            YamlError::ByteOrderMark { .. } => "byte_order_mark",
            YamlError::DuplicateKey { .. } => "duplicate_key",
            YamlError::MultipleDocuments { .. } => "multiple_documents",
            YamlError::UnknownAlias { .. } => "unknown_alias",
            YamlError::TooDeep { .. } => "too_deep",
            YamlError::RecursiveAlias { .. } => "recursive_alias",
            YamlError::ExcessiveAliases { .. } => "excessive_aliases",
            YamlError::LoneSurrogate { .. } => "lone_surrogate",
        }
    }

    /// The 1-based line the error was found on.
    pub fn line(&self) -> usize {
        match self {
            YamlError::Syntax { line, .. }
            | YamlError::ByteOrderMark { line }
            | YamlError::DuplicateKey { line, .. }
            | YamlError::MultipleDocuments { line }
            | YamlError::UnknownAlias { line }
            | YamlError::TooDeep { line }
            | YamlError::RecursiveAlias { line }
            | YamlError::ExcessiveAliases { line }
            | YamlError::LoneSurrogate { line } => *line,
        }
    }
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            YamlError::Syntax { line, message } => {
                write!(f, "YAML syntax error at line {line}: {message}")
            }
            YamlError::ByteOrderMark { line } => write!(
                f,
                "a byte order mark (U+FEFF) inside the document at line {line}"
            ),
            YamlError::DuplicateKey { line, key } => {
                write!(f, "duplicate mapping key `{key}` at line {line}")
            }
            YamlError::MultipleDocuments { line } => {
                write!(f, "a second YAML document starts at line {line}")
            }
            YamlError::UnknownAlias { line } => {
                write!(f, "alias to an unknown anchor at line {line}")
            }
            YamlError::TooDeep { line } => write!(
                f,
                "collections nested more than {MAX_NESTING} deep at line {line}"
            ),
            YamlError::RecursiveAlias { line } => {
                write!(f, "alias inside the node its anchor names at line {line}")
            }
            YamlError::ExcessiveAliases { line } => write!(
                f,
                "excessive aliasing at line {line} (alias budget {MAX_ALIAS_COUNT})"
            ),
            YamlError::LoneSurrogate { line } => write!(
                f,
                "a UTF-16 surrogate escape at line {line} is not half of a pair (a `\\uD800`-`\\uDBFF` \
                 escape followed at once by a `\\uDC00`-`\\uDFFF` one): it is not a character"
            ),
        }
    }
}

/// Resolves a plain (unquoted, untagged) scalar by the YAML 1.2 core schema.
pub fn resolve_plain(text: &str) -> Value {
    if is_core_null(text) {
        return Value::Null;
    }
    if is_core_bool(text) {
        return Value::Bool;
    }
    if is_core_int(text) {
        return Value::Int;
    }
    if is_core_float(text) {
        return Value::Float;
    }
    Value::Str(text.to_owned())
}

fn is_core_null(t: &str) -> bool {
    matches!(t, "" | "~" | "null" | "Null" | "NULL")
}

fn is_core_bool(t: &str) -> bool {
    matches!(t, "true" | "True" | "TRUE" | "false" | "False" | "FALSE")
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

/// The tag as one string: `tag:yaml.org,2002:int` for `!!int`, `!custom`, `!` (non-specific).
fn full_tag(t: &Tag) -> String {
    if t.handle == "!" {
        format!("!{}", t.suffix)
    } else {
        format!("{}{}", t.handle, t.suffix)
    }
}

const CORE_PREFIX: &str = "tag:yaml.org,2002:";

/// A scalar's kind, from its explicit tag or (untagged) from its style and text.
fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&str>) -> Value {
    match tag {
        // The non-specific tag `!` resolves a scalar as a string (YAML 1.2, 6.9.1).
        Some("!") => Value::Str(text.to_owned()),
        Some(t) => match t.strip_prefix(CORE_PREFIX) {
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

/// A key's identity for the duplicate check: the value the JavaScript `yaml` package gives the
/// key, compared with `===`. `None` never equals anything (collections, aliases, NaN).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyId {
    Str(String),
    /// The bits of a finite or infinite `f64`; `-0` is stored as `0`.
    Num(u64),
    Bool(bool),
    Null,
}

fn num_id(v: f64) -> Option<KeyId> {
    if v.is_nan() {
        return None;
    }
    let v = if v == 0.0 { 0.0 } else { v };
    Some(KeyId::Num(v.to_bits()))
}

fn parse_int_f64(t: &str) -> f64 {
    let radix_value = |digits: &str, radix: u32| -> f64 {
        match u128::from_str_radix(digits, radix) {
            // Rounds to the nearest double, as JavaScript's parseInt does for these radixes.
            Ok(v) => v as f64,
            Err(_) => digits.chars().fold(0.0, |acc, c| {
                acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
            }),
        }
    };
    if let Some(rest) = t.strip_prefix("0o") {
        return radix_value(rest, 8);
    }
    if let Some(rest) = t.strip_prefix("0x") {
        return radix_value(rest, 16);
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

fn parse_float_f64(t: &str) -> f64 {
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    let negative = t.starts_with('-');
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if unsigned.eq_ignore_ascii_case(".nan") {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// The identity of a scalar key. A core tag whose text does not match its type's pattern (and
/// any tag outside the core schema) leaves the text a string, as in the `yaml` package.
fn scalar_key_id(text: &str, style: ScalarStyle, tag: Option<&str>) -> Option<KeyId> {
    let as_text = || Some(KeyId::Str(text.to_owned()));
    let typed = |name: &str| -> Option<KeyId> {
        match name {
            "null" if is_core_null(text) => Some(KeyId::Null),
            "bool" if is_core_bool(text) => Some(KeyId::Bool(text.starts_with(['t', 'T']))),
            "int" if is_core_int(text) => num_id(parse_int_f64(text)),
            "float" if is_core_float(text) && !is_core_int(text) => num_id(parse_float_f64(text)),
            _ => Some(KeyId::Str(text.to_owned())),
        }
    };
    match tag {
        Some(t) => match t.strip_prefix(CORE_PREFIX) {
            Some(name) => typed(name),
            None => as_text(),
        },
        None if style != ScalarStyle::Plain => as_text(),
        None if is_core_null(text) => typed("null"),
        None if is_core_bool(text) => typed("bool"),
        None if is_core_int(text) => typed("int"),
        None if is_core_float(text) => typed("float"),
        None => as_text(),
    }
}

/// What the walker remembers about an anchored node.
struct Anchor {
    value: Value,
    tag: Option<String>,
    /// The JavaScript rule's count: 1 for the node itself plus 1 per alias resolved to it.
    count: u64,
    /// The alias weight, computed when the first alias to the node is resolved.
    weight: Option<u64>,
    /// A collection whose end has not been reached yet.
    open: bool,
    /// Whether the node is a scalar or holds one anywhere inside.
    has_scalar: bool,
    /// The aliases inside the node: a range of the walker's alias log.
    aliases: std::ops::Range<usize>,
    /// The node as a tree (when the walker builds one).
    tree: Option<Rc<Tree>>,
}

enum FrameKind {
    Mapping {
        seen: HashSet<KeyId>,
        expecting_key: bool,
        /// The pending key of a top-level pair: `Some(key)` when it is a string.
        pending_key: Option<String>,
        top: bool,
    },
    Sequence,
}

struct Frame {
    kind: FrameKind,
    anchor: usize,
    scalars_before: usize,
    aliases_before: usize,
    /// A flow collection (`[…]`, `{…}`) or any collection inside one.
    flow: bool,
    /// The line of the pending key when it is an empty implicit key (`: value`).
    empty_implicit_key_line: Option<usize>,
    /// A single-pair mapping written without `{` or `?` inside a flow sequence (`[k: v]`),
    /// whose key is limited to [`MAX_IMPLICIT_KEY`] characters: its start.
    implicit_pair_start: Option<usize>,
    /// The collection's tree so far (when the walker builds one).
    build: Option<Building>,
    /// The column of its first entry (block collections).
    column: usize,
    /// For a flow collection whose parent is a block collection: the line it opens on and the
    /// parent's column (see [`check_flow_lines`]).
    in_block: Option<(usize, usize)>,
}

/// A collection's tree while its entries arrive.
enum Building {
    Sequence(Vec<Rc<Tree>>),
    /// The pairs so far, and the pending key (`Some(None)`: a key that is not a string).
    Mapping(Vec<(String, Rc<Tree>)>, Option<Option<String>>),
}

/// A node that just completed: its kind, tag, and identity as a key.
struct Node {
    value: Value,
    tag: Option<String>,
    key_id: Option<KeyId>,
    display: String,
    /// Set for an empty plain scalar that is not preceded by an explicit `?` key indicator.
    empty_implicit_line: Option<usize>,
    /// The node as a tree (when the walker builds one).
    tree: Option<Rc<Tree>>,
}

struct Walker {
    anchors: HashMap<usize, Anchor>,
    /// The target anchor of every alias so far, in document order.
    alias_log: Vec<usize>,
    scalars: usize,
    stack: Vec<Frame>,
    root: Option<Value>,
    entries: Vec<Entry>,
    other_keys: usize,
    /// Whether to build the document's [`Tree`].
    build: bool,
    root_tree: Option<Rc<Tree>>,
}

impl Walker {
    /// Resolves an alias under the alias budget and returns the node it names.
    fn alias(&mut self, id: usize, line: usize) -> Result<Node, YamlError> {
        let open = match self.anchors.get(&id) {
            None => return Err(YamlError::UnknownAlias { line }),
            Some(a) => a.open,
        };
        if open {
            return Err(YamlError::RecursiveAlias { line });
        }
        self.alias_log.push(id);
        if let Some(a) = self.anchors.get_mut(&id) {
            a.count = a.count.saturating_add(1);
        }
        let weight = match self.anchors.get(&id).and_then(|a| a.weight) {
            Some(w) => w,
            None => {
                let w = self.weight_of(id);
                if let Some(a) = self.anchors.get_mut(&id) {
                    a.weight = Some(w);
                }
                w
            }
        };
        let Some(anchor) = self.anchors.get_mut(&id) else {
            return Err(YamlError::UnknownAlias { line });
        };
        if anchor.count.saturating_mul(weight) > MAX_ALIAS_COUNT {
            return Err(YamlError::ExcessiveAliases { line });
        }
        Ok(Node {
            value: anchor.value.clone(),
            tag: anchor.tag.clone(),
            key_id: None,
            display: "*alias".to_owned(),
            empty_implicit_line: None,
            tree: anchor.tree.clone(),
        })
    }

    /// The alias weight of a closed anchored node (see [`MAX_ALIAS_COUNT`]).
    fn weight_of(&self, id: usize) -> u64 {
        let Some(anchor) = self.anchors.get(&id) else {
            return 0;
        };
        let mut weight = u64::from(anchor.has_scalar);
        for target in &self.alias_log[anchor.aliases.clone()] {
            if let Some(t) = self.anchors.get(target) {
                weight = weight.max(t.count.saturating_mul(t.weight.unwrap_or(0)));
            }
        }
        weight
    }

    fn open(&mut self, kind: FrameKind, at: Opening, value: Value) -> Result<(), YamlError> {
        let Opening {
            anchor,
            tag,
            line,
            column,
            content_line,
            start,
            empty_span,
            flow_start,
            after_tab,
        } = at;
        if self.stack.len() >= MAX_NESTING {
            return Err(YamlError::TooDeep { line });
        }
        let parent_flow_sequence = self
            .stack
            .last()
            .is_some_and(|f| f.flow && matches!(f.kind, FrameKind::Sequence));
        let flow = flow_start || self.stack.last().is_some_and(|f| f.flow);
        let in_block = self
            .stack
            .last()
            .filter(|f| flow_start && !f.flow)
            .map(|f| (line, f.column));
        let at_implicit_pair =
            parent_flow_sequence && empty_span && matches!(kind, FrameKind::Mapping { .. });
        if !flow {
            // YAML 1.2 allows a block collection on the line of its key only after an explicit
            // `? key` (or inside a `- ` entry); saphyr-parser also lets one follow an empty
            // implicit key (`: a: b`), which the grammar and the yaml package refuse.
            let parent_key_line = self.stack.last().and_then(|f| match f.kind {
                FrameKind::Mapping {
                    expecting_key: false,
                    ..
                } => f.empty_implicit_key_line,
                _ => None,
            });
            if parent_key_line == Some(content_line) {
                return Err(YamlError::Syntax {
                    line,
                    message: "a block collection cannot start on the line of an empty implicit key"
                        .to_owned(),
                });
            }
            // A tab may separate an indicator from a scalar, never from a block collection on
            // the same line (the tab would be indentation).
            if after_tab {
                return Err(YamlError::Syntax {
                    line,
                    message: "a tab cannot separate an indicator from a block collection"
                        .to_owned(),
                });
            }
        }
        if anchor > 0 {
            self.anchors.insert(
                anchor,
                Anchor {
                    value: value.clone(),
                    tag,
                    count: 1,
                    weight: None,
                    open: true,
                    has_scalar: false,
                    aliases: 0..0,
                    tree: None,
                },
            );
        }
        let build = self.build.then(|| match value {
            Value::Sequence => Building::Sequence(Vec::new()),
            _ => Building::Mapping(Vec::new(), None),
        });
        self.stack.push(Frame {
            kind,
            anchor,
            scalars_before: self.scalars,
            aliases_before: self.alias_log.len(),
            flow,
            empty_implicit_key_line: None,
            implicit_pair_start: at_implicit_pair.then_some(start),
            build,
            column,
            in_block,
        });
        Ok(())
    }

    fn close(&mut self, value: Value) -> Node {
        let mut tree = None;
        if let Some(frame) = self.stack.pop() {
            tree = frame.build.map(|b| {
                Rc::new(match b {
                    Building::Sequence(items) => Tree::Sequence(items),
                    Building::Mapping(pairs, _) => Tree::Mapping(pairs),
                })
            });
            if let Some(a) = self.anchors.get_mut(&frame.anchor) {
                a.open = false;
                a.has_scalar = self.scalars > frame.scalars_before;
                a.aliases = frame.aliases_before..self.alias_log.len();
                a.tree = tree.clone();
            }
        }
        let display = if value == Value::Sequence {
            "[…]"
        } else {
            "{…}"
        };
        Node {
            value,
            tag: None,
            key_id: None,
            display: display.to_owned(),
            empty_implicit_line: None,
            tree,
        }
    }

    /// Places a completed node in its parent (or as the root).
    fn place(&mut self, node: Node, line: usize) -> Result<(), YamlError> {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node.value);
            self.root_tree = node.tree;
            return Ok(());
        };
        match (&mut frame.build, node.tree.clone()) {
            (Some(Building::Sequence(items)), Some(tree)) => items.push(tree),
            (Some(Building::Mapping(pairs, pending)), Some(tree)) => match pending.take() {
                None => {
                    *pending = Some(match &node.value {
                        Value::Str(key) => Some(key.clone()),
                        _ => None,
                    })
                }
                Some(Some(key)) => pairs.push((key, tree)),
                Some(None) => {}
            },
            _ => {}
        }
        if matches!(
            frame.kind,
            FrameKind::Mapping {
                expecting_key: true,
                ..
            }
        ) {
            frame.empty_implicit_key_line = node.empty_implicit_line;
        }
        let FrameKind::Mapping {
            seen,
            expecting_key,
            pending_key,
            top,
        } = &mut frame.kind
        else {
            return Ok(());
        };
        if *expecting_key {
            if let Some(id) = node.key_id {
                if !seen.insert(id) {
                    return Err(YamlError::DuplicateKey {
                        line,
                        key: node.display,
                    });
                }
            }
            *expecting_key = false;
            if *top {
                match node.value {
                    Value::Str(s) => *pending_key = Some(s),
                    _ => {
                        *pending_key = None;
                        self.other_keys += 1;
                    }
                }
            }
        } else {
            *expecting_key = true;
            if let Some(key) = pending_key.take() {
                self.entries.push(Entry {
                    key,
                    value: node.value,
                    tag: node.tag,
                });
            }
        }
        Ok(())
    }
}

/// Where a collection opens.
struct Opening {
    anchor: usize,
    tag: Option<String>,
    line: usize,
    /// The column where its span ends: a block collection's first entry (its span covers the
    /// properties before it, possibly on the line above).
    column: usize,
    /// The line of its first entry (after any anchor or tag).
    content_line: usize,
    /// Its first character (of its properties, if any).
    start: usize,
    /// Its span is empty: no `[`, `{`, `?` or properties.
    empty_span: bool,
    /// It opens with `[` or `{`.
    flow_start: bool,
    /// It starts after an indicator and white space with a tab on the same line (see also
    /// [`TabSeparators`]).
    after_tab: bool,
}

/// Character positions (saphyr-parser counts in characters) mapped to byte offsets.
struct Positions<'a> {
    text: &'a str,
    /// Byte offset of every character; `None` for ASCII text, where both are the same.
    offsets: Option<Vec<usize>>,
}

impl<'a> Positions<'a> {
    fn new(text: &'a str) -> Self {
        let offsets = (!text.is_ascii()).then(|| text.char_indices().map(|(i, _)| i).collect());
        Positions { text, offsets }
    }

    fn byte(&self, ch: usize) -> usize {
        match &self.offsets {
            None => ch.min(self.text.len()),
            Some(o) => o.get(ch).copied().unwrap_or(self.text.len()),
        }
    }

    fn char_at(&self, ch: usize) -> Option<char> {
        self.text[self.byte(ch)..].chars().next()
    }

    /// Whether the character at `ch` follows an indicator (`:`, `?`, `-`) on its line with
    /// white space that holds a tab in between.
    fn tab_separated(&self, ch: usize) -> bool {
        let mut saw_tab = false;
        let mut i = ch;
        while i > 0 {
            i -= 1;
            match self.char_at(i) {
                Some('\t') => saw_tab = true,
                Some(' ') => {}
                Some(':' | '?' | '-') => return saw_tab,
                _ => return false,
            }
        }
        false
    }

    fn slice(&self, from: usize, to: usize) -> &'a str {
        let (a, b) = (self.byte(from), self.byte(to));
        if a <= b {
            &self.text[a..b]
        } else {
            ""
        }
    }
}

/// Whether a collection's span opens a flow collection. The span of a flow collection covers its
/// properties, its `[` or `{` and the white space or comment after it; a block collection's span
/// is empty or covers its properties up to its first entry.
fn opens_flow(span: &str) -> bool {
    let mut rest = span;
    loop {
        rest = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        match rest.chars().next() {
            Some('[' | '{') => return true,
            Some('!' | '&') => {
                rest = &rest[rest.find([' ', '\t', '\r', '\n']).unwrap_or(rest.len())..];
            }
            Some('#') => rest = &rest[rest.find('\n').unwrap_or(rest.len())..],
            _ => return false,
        }
    }
}

/// Whether the text between two nodes holds an explicit key indicator: a `?` standing alone
/// (comments, which start at a `#` after white space, are skipped).
fn has_explicit_key_indicator(gap: &str) -> bool {
    gap.lines().any(|line| {
        let mut code = line;
        let mut prev_blank = true;
        for (i, c) in line.char_indices() {
            if c == '#' && prev_blank {
                code = &line[..i];
                break;
            }
            prev_blank = c == ' ' || c == '\t';
        }
        code.split([' ', '\t']).any(|token| token == "?")
    })
}

/// The message saphyr-parser gives for a tab right after a `:` value indicator.
const TAB_AFTER_COLON: &str = "':' must be followed by a valid YAML whitespace";

/// Tabs that separate a `:` value indicator from its value, which YAML 1.2 allows
/// (`key:\tvalue`) but saphyr-parser refuses when the value starts with a letter, digit, `_` or
/// `-` (a guard against tab-indented block collections). Each candidate is a `:` followed by
/// tabs only and then such a character; its first tab is replaced by a space before parsing.
/// Replacing a tab inside a quoted or block scalar would change the value, so a first pass
/// finds the candidates that lie inside a scalar and those are put back.
#[derive(Default)]
struct TabSeparators {
    /// Character positions of the replaced tabs.
    replaced: std::collections::BTreeSet<usize>,
    /// Character position where each replaced run's value starts, by tab position.
    value_start: HashMap<usize, usize>,
    /// The same positions, as a set.
    starts: HashSet<usize>,
}

impl TabSeparators {
    fn find(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let mut out = TabSeparators::default();
        for (i, c) in chars.iter().enumerate() {
            if *c != ':' || chars.get(i + 1) != Some(&'\t') {
                continue;
            }
            let mut j = i + 1;
            while chars.get(j) == Some(&'\t') {
                j += 1;
            }
            if chars
                .get(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            {
                out.replaced.insert(i + 1);
                out.value_start.insert(i + 1, j);
            }
        }
        out
    }

    fn apply(&self, text: &str) -> String {
        text.chars()
            .enumerate()
            .map(|(i, c)| if self.replaced.contains(&i) { ' ' } else { c })
            .collect()
    }

    /// Puts back the tabs at `positions` (they are scalar content, not separators).
    fn keep(&mut self, positions: &[usize]) {
        for p in positions {
            self.replaced.remove(p);
            self.value_start.remove(p);
        }
        self.starts = self.value_start.values().copied().collect();
    }

    /// The replaced tabs that lie inside a quoted or block scalar of `fixed` (parse errors end
    /// the search; the real parse reports them).
    fn inside_scalars(&self, fixed: &str) -> Vec<usize> {
        let mut hits = Vec::new();
        for item in Parser::new_from_str(fixed) {
            let Ok((event, span)) = item else { break };
            if let Event::Scalar(_, style, _, _) = event {
                if style != ScalarStyle::Plain {
                    hits.extend(self.replaced.range(span.start.index()..span.end.index()));
                }
            }
        }
        hits
    }
}

/// Parses `text` as at most one YAML document. An empty stream is a document whose root is null.
pub fn parse(text: &str) -> Result<Document, YamlError> {
    parse_with(text, false)
}

/// [`parse`], keeping the whole document as a [`Tree`] in [`Document::tree`] (aliases shared,
/// never expanded).
pub fn parse_tree(text: &str) -> Result<Document, YamlError> {
    parse_with(text, true)
}

fn parse_with(text: &str, build: bool) -> Result<Document, YamlError> {
    // A last line of only spaces and tabs without a line break: saphyr-parser counts it as one
    // more line of a block scalar even under clip chomping (`|` then `  a` then `  ` gives
    // "a\n\n"); read it as the same line with its break, which it is everywhere else.
    let terminated;
    let text = match text.rsplit('\n').next() {
        Some(last) if !last.is_empty() && last.chars().all(|c| c == ' ' || c == '\t') => {
            terminated = format!("{text}\n");
            terminated.as_str()
        }
        _ => text,
    };
    // Each fix is made only when the plain parse fails the way it answers, and at most once, so
    // a text is parsed at most a few times over.
    let mut fixes = Fixes::default();
    loop {
        let prepared = Prepared::new(text, fixes);
        let result = walk(text, &prepared, build);
        let next = match &result {
            Err(YamlError::Syntax { message, .. }) if message == TAB_AFTER_COLON && !fixes.tabs => {
                Fixes {
                    tabs: true,
                    ..fixes
                }
            }
            Err(YamlError::LoneSurrogate { .. }) if !fixes.surrogates => Fixes {
                surrogates: true,
                ..fixes
            },
            Err(YamlError::Syntax { line, message })
                if message == INVALID_INDENTATION
                    && !fixes.closers
                    && starts_with_closer(text, *line) =>
            {
                Fixes {
                    closers: true,
                    ..fixes
                }
            }
            _ => return result,
        };
        fixes = next;
    }
}

/// saphyr-parser's message for an escape that is not a Unicode scalar value (`\ud83d`).
const INVALID_ESCAPE: &str =
    "while parsing a quoted scalar, found invalid Unicode character escape code";

/// saphyr-parser's message for a token left of the indentation it expects.
const INVALID_INDENTATION: &str = "invalid indentation";

/// The work-arounds `parse_with` has switched on.
#[derive(Debug, Clone, Copy, Default)]
struct Fixes {
    /// Tabs after `:` (see [`TabSeparators`]).
    tabs: bool,
    /// UTF-16 surrogate pairs written as two escapes (see [`surrogate_pairs`]).
    surrogates: bool,
    /// A flow collection's closing line at the indentation of the block collection around it
    /// (see [`closing_lines`]).
    closers: bool,
}

/// One change to the text before parsing, at a character position of the original.
#[derive(Debug, Clone)]
struct Edit {
    at: usize,
    /// How many characters of the original it replaces.
    len: usize,
    with: String,
    kind: EditKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EditKind {
    /// A surrogate pair's two escapes made one `\U` escape.
    Pair,
    /// A space put before the `]` or `}` that starts this line (1-based).
    Closer(usize),
}

/// The way back from the rewritten text's character positions to the original's.
#[derive(Debug, Default)]
struct Rewrite {
    /// After each edit: the rewritten position where it ends, and original minus rewritten
    /// from there on.
    shifts: Vec<(usize, isize)>,
    /// Whether an edit made the text shorter (a surrogate pair), which changes lengths.
    shorter: bool,
}

impl Rewrite {
    /// The original position of the character at rewritten position `at`.
    fn original(&self, at: usize) -> usize {
        let i = self.shifts.partition_point(|(p, _)| *p <= at);
        match i.checked_sub(1).and_then(|i| self.shifts.get(i)) {
            Some((_, delta)) => at.saturating_add_signed(*delta),
            None => at,
        }
    }
}

/// Applies sorted, non-overlapping `edits` to `chars`: the text, the way back, and where each
/// edit starts in the text.
fn apply_edits(chars: &[char], edits: &[Edit]) -> (String, Rewrite, Vec<usize>) {
    let mut text = String::with_capacity(chars.len());
    let mut rewrite = Rewrite::default();
    let mut starts = Vec::with_capacity(edits.len());
    let (mut pos, mut out) = (0usize, 0usize);
    for e in edits {
        let kept = chars.get(pos..e.at).unwrap_or_default();
        text.extend(kept);
        out += kept.len();
        starts.push(out);
        text.push_str(&e.with);
        let written = e.with.chars().count();
        out += written;
        pos = e.at + e.len;
        rewrite.shorter |= written < e.len;
        rewrite.shifts.push((out, pos as isize - out as isize));
    }
    text.extend(chars.get(pos..).unwrap_or_default());
    (text, rewrite, starts)
}

/// The value of a `\uXXXX` or `\UXXXXXXXX` escape whose backslash is at `i`, and where it ends.
fn code_escape(chars: &[char], i: usize) -> Option<(u32, usize)> {
    let digits = match chars.get(i..i + 2)? {
        ['\\', 'u'] => 4,
        ['\\', 'U'] => 8,
        _ => return None,
    };
    let hex = chars.get(i + 2..i + 2 + digits)?;
    let mut value = 0u32;
    for c in hex {
        value = (value << 4) | c.to_digit(16)?;
    }
    Some((value, i + 2 + digits))
}

const HIGH_SURROGATES: std::ops::Range<u32> = 0xD800..0xDC00;
const LOW_SURROGATES: std::ops::Range<u32> = 0xDC00..0xE000;

/// Surrogate pairs written as two escapes (`\ud83d\udcb0`, as JSON writes a character outside
/// the Basic Multilingual Plane), which saphyr-parser refuses escape by escape: each becomes one
/// `\U` escape of the character the pair encodes, followed by what stood between the two (escaped
/// line breaks, which add nothing to the value and keep the lines), written before it.
/// Candidates are found in the
/// whole text; only those inside double-quoted scalars are kept (see [`Prepared::new`]).
// spec: discovery.portable (YAML reader: surrogate escapes)
fn surrogate_pairs(chars: &[char]) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' {
            i += 1;
            continue;
        }
        if let Some((high, end)) =
            code_escape(chars, i).filter(|(v, _)| HIGH_SURROGATES.contains(v))
        {
            // Escaped line breaks, each with the next line's leading white space.
            let mut j = end;
            loop {
                let n = match chars.get(j..j + 3) {
                    Some(['\\', '\n', ..]) => 2,
                    Some(['\\', '\r', '\n']) => 3,
                    _ => break,
                };
                j += n;
                while matches!(chars.get(j), Some(' ' | '\t')) {
                    j += 1;
                }
            }
            if let Some((low, low_end)) =
                code_escape(chars, j).filter(|(v, _)| LOW_SURROGATES.contains(v))
            {
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                // The escaped line breaks first: they take the white space that starts the next
                // line, which must not swallow white space after the pair.
                let between: String = chars[end..j].iter().collect();
                edits.push(Edit {
                    at: i,
                    len: low_end - i,
                    with: format!("{between}\\U{code:08X}"),
                    kind: EditKind::Pair,
                });
                i = low_end;
                continue;
            }
        }
        // A backslash and the character it escapes (so `\\\\u` is no escape of `u`).
        i += 2;
    }
    edits
}

/// Lines that start, after spaces, with `]` or `}`: a space goes before the indicator, because
/// saphyr-parser wants a flow collection's closing line indented past the block collection around
/// it, or not, depending on what the collection holds (it accepts `metadata: {` then `  a: 1` then
/// `}` and refuses the same with `"a": "1"`). The walker then applies one rule to the original
/// lines (see [`check_flow_lines`]). Candidates inside block scalars are dropped (see
/// [`Prepared::new`]).
// spec: discovery.portable (YAML reader: flow collections in block collections)
fn closing_lines(chars: &[char]) -> Vec<Edit> {
    let mut edits = Vec::new();
    let (mut line, mut at_line_start) = (1usize, true);
    let mut i = 0;
    while i < chars.len() {
        if at_line_start {
            let mut j = i;
            while chars.get(j) == Some(&' ') {
                j += 1;
            }
            if matches!(chars.get(j), Some(']' | '}')) {
                edits.push(Edit {
                    at: j,
                    len: 0,
                    with: " ".to_owned(),
                    kind: EditKind::Closer(line),
                });
            }
            at_line_start = false;
        }
        if chars[i] == '\n' {
            line += 1;
            at_line_start = true;
        }
        i += 1;
    }
    edits
}

/// Whether line `n` (1-based) of `text` starts, after spaces and tabs, with `]` or `}`.
fn starts_with_closer(text: &str, n: usize) -> bool {
    text.split('\n')
        .nth(n.saturating_sub(1))
        .is_some_and(|l| l.trim_start_matches([' ', '\t']).starts_with([']', '}']))
}

/// The text as the parser reads it: the original with the edits the [`Fixes`] call for.
struct Prepared {
    text: String,
    tabs: TabSeparators,
    rewrite: Rewrite,
}

impl Prepared {
    fn new(original: &str, fixes: Fixes) -> Self {
        let mut text = original.to_owned();
        let mut rewrite = Rewrite::default();
        if fixes.surrogates || fixes.closers {
            let chars: Vec<char> = original.chars().collect();
            let mut edits = Vec::new();
            if fixes.surrogates {
                edits.extend(surrogate_pairs(&chars));
            }
            if fixes.closers {
                edits.extend(closing_lines(&chars));
            }
            edits.sort_by_key(|e| e.at);
            // A first parse with every candidate applied tells where each one stands: a pair
            // counts only inside a double-quoted scalar (elsewhere a backslash is text), a
            // closing line only outside a block scalar (there a space is content). Candidates
            // after a parse error are kept: the parse fails there anyway.
            let (all, _, starts) = apply_edits(&chars, &edits);
            let probe = if fixes.tabs {
                TabSeparators::find(&all).apply(&all)
            } else {
                all
            };
            let mut quoted = Vec::new();
            let mut block_lines = Vec::new();
            let mut reached = 0usize;
            let mut reached_line = 0usize;
            for item in Parser::new_from_str(&probe) {
                let Ok((event, span)) = item else { break };
                reached = span.end.index();
                reached_line = span.end.line();
                if let Event::Scalar(_, style, _, _) = event {
                    match style {
                        ScalarStyle::DoubleQuoted => {
                            quoted.push(span.start.index()..span.end.index());
                        }
                        ScalarStyle::Literal | ScalarStyle::Folded => {
                            block_lines.push(span.start.line() + 1..span.end.line() + 1);
                        }
                        _ => {}
                    }
                }
            }
            let mut kept = Vec::with_capacity(edits.len());
            for (e, start) in edits.into_iter().zip(starts) {
                let keep = match e.kind {
                    EditKind::Pair => start >= reached || quoted.iter().any(|r| r.contains(&start)),
                    EditKind::Closer(line) => {
                        line > reached_line || !block_lines.iter().any(|r| r.contains(&line))
                    }
                };
                if keep {
                    kept.push(e);
                }
            }
            let (t, r, _) = apply_edits(&chars, &kept);
            text = t;
            rewrite = r;
        }
        let mut tabs = TabSeparators::default();
        if fixes.tabs {
            tabs = TabSeparators::find(&text);
            let inside = tabs.inside_scalars(&tabs.apply(&text));
            tabs.keep(&inside);
            text = tabs.apply(&text);
        }
        Prepared {
            text,
            tabs,
            rewrite,
        }
    }
}

/// When the escape that saphyr-parser refused in the double-quoted scalar opening at `quote` is
/// a surrogate (`\ud83d` alone, or a low one first): the line it is on.
fn lone_surrogate_line(positions: &Positions<'_>, quote: usize, line: usize) -> Option<usize> {
    let chars: Vec<char> = positions.text[positions.byte(quote)..].chars().collect();
    let mut line = line;
    let mut i = 1;
    while let Some(c) = chars.get(i) {
        match c {
            '"' => return None,
            '\n' => line += 1,
            '\\' => {
                if let Some((value, _)) = code_escape(&chars, i) {
                    if (0xD800..0xE000).contains(&value) {
                        return Some(line);
                    }
                    // Another escape that is no character (`\U00110000`): not this error.
                    char::from_u32(value)?;
                }
                if chars.get(i + 1) == Some(&'\n') {
                    line += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The 1024-character limit of an implicit key in a block mapping, counted in the original text
/// when a surrogate pair made the key shorter for saphyr-parser, which counts in the text it
/// reads.
// spec: discovery.portable (YAML reader: implicit key length)
fn check_rewritten_key(
    w: &Walker,
    positions: &Positions<'_>,
    rewrite: &Rewrite,
    start: usize,
    end: usize,
    gap_start: usize,
    line: usize,
) -> Result<(), YamlError> {
    let Some(frame) = w.stack.last() else {
        return Ok(());
    };
    let block_key = !frame.flow
        && matches!(
            frame.kind,
            FrameKind::Mapping {
                expecting_key: true,
                ..
            }
        );
    if !block_key
        || rewrite.original(end) - rewrite.original(start) <= end - start
        || has_explicit_key_indicator(positions.slice(gap_start, start))
    {
        return Ok(());
    }
    let after = positions.slice(end, end.saturating_add(MAX_IMPLICIT_KEY + 1));
    let gap = after
        .chars()
        .take_while(|c| matches!(c, ' ' | '\t'))
        .count();
    if rewrite.original(end + gap) - rewrite.original(start) > MAX_IMPLICIT_KEY {
        return Err(YamlError::Syntax {
            line,
            message: format!(
                "the `:` of an implicit key is more than {MAX_IMPLICIT_KEY} characters after \
                 the key's start"
            ),
        });
    }
    Ok(())
}

/// The same rule for a quoted scalar across lines in a block collection: each line after the
/// first that is not blank is indented by more than `column` spaces (YAML 1.2 and the `yaml`
/// package; saphyr-parser also takes `- "a` then `b"` at the sequence's column).
// spec: discovery.portable (YAML reader: quoted scalars across lines)
fn check_quoted_lines(
    lines: &mut Lines<'_>,
    from: usize,
    to: usize,
    column: usize,
) -> Result<(), YamlError> {
    for n in from + 1..=to {
        let Some((_, text)) = lines.get(n) else {
            break;
        };
        let text = text.strip_suffix('\r').unwrap_or(text);
        let spaces = text.len() - text.trim_start_matches(' ').len();
        if spaces > column || text.trim_start_matches([' ', '\t']).is_empty() {
            continue;
        }
        return Err(YamlError::Syntax {
            line: n,
            message: format!(
                "a line of a quoted scalar is indented {spaces} spaces, not more than the block \
                 collection around it (column {column})"
            ),
        });
    }
    Ok(())
}

/// Where the `]` or `}` of a flow collection whose end event starts at `start` (on `line`) is,
/// and its line: after a trailing comma the event starts at the comma, and white space,
/// line breaks and comments may come before the indicator.
fn closing_indicator(positions: &Positions<'_>, start: usize, line: usize) -> (usize, usize) {
    let (mut at, mut line) = (start, line);
    let mut comment = false;
    while let Some(c) = positions.char_at(at) {
        match c {
            '\n' => {
                line += 1;
                comment = false;
            }
            ']' | '}' if !comment => return (at, line),
            '#' => comment = true,
            _ => {}
        }
        at += 1;
    }
    (start, line)
}

/// The lines of the original text, for the indentation rule of flow collections.
struct Lines<'a> {
    text: &'a str,
    /// Each line's first character position and text (without its `\n`), built when needed.
    lines: Option<Vec<(usize, &'a str)>>,
}

impl<'a> Lines<'a> {
    fn get(&mut self, n: usize) -> Option<(usize, &'a str)> {
        let text = self.text;
        let lines = self.lines.get_or_insert_with(|| {
            let mut at = 0;
            text.split('\n')
                .map(|l| {
                    let start = at;
                    at += l.chars().count() + 1;
                    (start, l)
                })
                .collect()
        });
        lines.get(n.checked_sub(1)?).copied()
    }
}

/// The indentation rule of a flow collection inside a block collection whose entries stand at
/// column `column`: every line after the collection's first (`from`) up to its last (`to`) is
/// indented by more than `column` spaces (YAML 1.2, `s-flow-line-prefix`), except blank lines,
/// comment lines, and the last line when it starts with the collection's own closing indicator
/// (at `closer`), which may stand at `column` itself, as the `yaml` package allows (OpenClaw
/// writes `metadata: {` … `}`).
// spec: discovery.portable (YAML reader: flow collections in block collections)
fn check_flow_lines(
    lines: &mut Lines<'_>,
    from: usize,
    to: usize,
    closer: usize,
    column: usize,
) -> Result<(), YamlError> {
    for n in from + 1..=to {
        let Some((start, text)) = lines.get(n) else {
            break;
        };
        let text = text.strip_suffix('\r').unwrap_or(text);
        let spaces = text.len() - text.trim_start_matches(' ').len();
        let rest = text.trim_start_matches([' ', '\t']);
        if spaces > column || rest.is_empty() || rest.starts_with('#') {
            continue;
        }
        let first = start + (text.chars().count() - rest.chars().count());
        if spaces == column && n == to && first == closer {
            continue;
        }
        return Err(YamlError::Syntax {
            line: n,
            message: format!(
                "a line inside a flow collection is indented {spaces} spaces, not more than \
                 the block collection around it (column {column})"
            ),
        });
    }
    Ok(())
}

/// The reader's error for one of saphyr-parser's.
fn scan_error(e: &saphyr_parser::ScanError, positions: &Positions<'_>) -> YamlError {
    let line = e.marker().line();
    match e.info() {
        // saphyr-parser's own cap: more than 255 nested flow collections.
        "recursion limit exceeded" => YamlError::TooDeep { line },
        "a byte order mark must not appear inside a document" => YamlError::ByteOrderMark { line },
        "while parsing node, found unknown anchor" => YamlError::UnknownAlias { line },
        INVALID_ESCAPE => match lone_surrogate_line(positions, e.marker().index(), line) {
            Some(line) => YamlError::LoneSurrogate { line },
            None => YamlError::Syntax {
                line,
                message: e.info().to_owned(),
            },
        },
        _ => YamlError::Syntax {
            line,
            message: e.info().to_owned(),
        },
    }
}

/// The 1024-character limit of the key of a single pair in a flow sequence (`[key: value]`),
/// which saphyr-parser does not check, when the node ending at `end` is such a key. Counted in
/// the original text.
fn check_flow_pair_key(
    w: &Walker,
    positions: &Positions<'_>,
    rewrite: &Rewrite,
    end: usize,
    line: usize,
) -> Result<(), YamlError> {
    let Some(frame) = w.stack.last() else {
        return Ok(());
    };
    let (
        Some(key_start),
        FrameKind::Mapping {
            expecting_key: true,
            ..
        },
    ) = (frame.implicit_pair_start, &frame.kind)
    else {
        return Ok(());
    };
    // The `:` follows the key after spaces or tabs.
    let after = positions.slice(end, end.saturating_add(MAX_IMPLICIT_KEY + 1));
    let gap = after
        .chars()
        .take_while(|c| matches!(c, ' ' | '\t'))
        .count();
    if rewrite.original(end + gap) - rewrite.original(key_start) > MAX_IMPLICIT_KEY {
        return Err(YamlError::Syntax {
            line,
            message: format!(
                "the `:` of an implicit key in a flow sequence is more than {MAX_IMPLICIT_KEY} \
                 characters after the key's start"
            ),
        });
    }
    Ok(())
}

fn walk(original: &str, prepared: &Prepared, build: bool) -> Result<Document, YamlError> {
    let text = prepared.text.as_str();
    let tabs = &prepared.tabs;
    let rewrite = &prepared.rewrite;
    let positions = Positions::new(text);
    let mut lines = Lines {
        text: original,
        lines: None,
    };
    let mut w = Walker {
        anchors: HashMap::new(),
        alias_log: Vec::new(),
        scalars: 0,
        stack: Vec::new(),
        root: None,
        entries: Vec::new(),
        other_keys: 0,
        build,
        root_tree: None,
    };
    let mut documents = 0usize;
    let mut prev_end = 0usize;

    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| scan_error(&e, &positions))?;
        let line = span.start.line();
        let start = span.start.index();
        let end = span.end.index();
        let gap_start = std::mem::replace(&mut prev_end, span.end.index());
        let opening = |anchor: usize, tag: Option<Cow<'_, Tag>>| Opening {
            anchor,
            tag: tag.as_deref().map(full_tag),
            line,
            column: span.end.col(),
            flow_start: opens_flow(positions.slice(start, end)),
            content_line: span.end.line(),
            start,
            empty_span: start == end,
            after_tab: tabs.starts.contains(&end) || positions.tab_separated(end),
        };
        let node = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError::MultipleDocuments { line });
                }
                None
            }
            Event::Scalar(text, style, anchor, tag) => {
                if matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted)
                    && span.end.line() > line
                {
                    if let Some(column) = w.stack.last().filter(|f| !f.flow).map(|f| f.column) {
                        check_quoted_lines(&mut lines, line, span.end.line(), column)?;
                    }
                }
                let tag = tag.as_deref().map(full_tag);
                let value = resolve_scalar(&text, style, tag.as_deref());
                let key_id = scalar_key_id(&text, style, tag.as_deref());
                w.scalars += 1;
                let tree = w.build.then(|| {
                    Rc::new(Tree::Scalar {
                        value: value.clone(),
                        text: text.to_string(),
                    })
                });
                if anchor > 0 {
                    w.anchors.insert(
                        anchor,
                        Anchor {
                            value: value.clone(),
                            tag: tag.clone(),
                            count: 1,
                            weight: Some(1),
                            open: false,
                            has_scalar: true,
                            aliases: 0..0,
                            tree: tree.clone(),
                        },
                    );
                }
                let empty_implicit_line = (text.is_empty()
                    && style == ScalarStyle::Plain
                    && !has_explicit_key_indicator(positions.slice(gap_start, start)))
                .then_some(line);
                Some(Node {
                    value,
                    tag,
                    key_id,
                    display: text.into_owned(),
                    empty_implicit_line,
                    tree,
                })
            }
            Event::Alias(id) => Some(w.alias(id, line)?),
            Event::SequenceStart(anchor, tag) => {
                w.open(FrameKind::Sequence, opening(anchor, tag), Value::Sequence)?;
                None
            }
            Event::MappingStart(anchor, tag) => {
                let kind = FrameKind::Mapping {
                    seen: HashSet::new(),
                    expecting_key: true,
                    pending_key: None,
                    top: w.stack.is_empty(),
                };
                w.open(kind, opening(anchor, tag), Value::Mapping)?;
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((from, column)) = w.stack.last().and_then(|f| f.in_block) {
                    let (closer, to) = closing_indicator(&positions, start, line);
                    check_flow_lines(&mut lines, from, to, rewrite.original(closer), column)?;
                }
                Some(w.close(if matches!(event, Event::SequenceEnd) {
                    Value::Sequence
                } else {
                    Value::Mapping
                }))
            }
            _ => None,
        };
        if let Some(node) = node {
            check_flow_pair_key(&w, &positions, rewrite, end, line)?;
            if rewrite.shorter {
                check_rewritten_key(&w, &positions, rewrite, start, end, gap_start, line)?;
            }
            w.place(node, line)?;
        }
    }
    Ok(Document {
        root: w.root.unwrap_or(Value::Null),
        entries: w.entries,
        other_keys: w.other_keys,
        tree: w.root_tree,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(text: &str, key: &str) -> Option<Value> {
        parse(text).unwrap().get(key).cloned()
    }

    fn kind(text: &str) -> Result<(), &'static str> {
        parse(text).map(|_| ()).map_err(|e| e.kind())
    }

    /// `key: ` followed by `depth - 1` nested flow sequences: `depth` collections in all.
    fn flow_nesting(depth: usize) -> String {
        format!("key: {}{}\n", "[".repeat(depth - 1), "]".repeat(depth - 1))
    }

    /// The same with compact block sequences (`- - - x`).
    fn block_nesting(depth: usize) -> String {
        format!("key:\n  {}x\n", "- ".repeat(depth - 1))
    }

    #[test]
    fn the_tree_keeps_nested_values_and_shares_aliases() {
        let doc = parse_tree("a: &l [x, 2, 'y']\nb:\n  c: *l\n  d: {e: ~}\n  7: seven\n").unwrap();
        let root = doc.tree.as_deref().unwrap();
        let Some(Tree::Sequence(items)) = root.get("a") else {
            panic!("a list");
        };
        let kinds: Vec<(&Value, &str)> = items
            .iter()
            .map(|i| match &**i {
                Tree::Scalar { value, text } => (value, text.as_str()),
                _ => panic!("scalars"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (&Value::Str("x".into()), "x"),
                (&Value::Int, "2"),
                (&Value::Str("y".into()), "y")
            ]
        );
        let b = root.get("b").unwrap();
        assert_eq!(b.get("c"), root.get("a"));
        assert!(matches!(
            b.get("d").and_then(|d| d.get("e")),
            Some(Tree::Scalar {
                value: Value::Null,
                ..
            })
        ));
        // Only string keys are kept.
        let Tree::Mapping(pairs) = b else {
            panic!("a mapping")
        };
        assert_eq!(pairs.len(), 2);
        // `parse` builds no tree; the same limits hold for both.
        assert!(parse("a: 1").unwrap().tree.is_none());
        assert!(parse_tree(&block_nesting(MAX_NESTING)).is_ok());
        assert!(parse_tree(&block_nesting(MAX_NESTING + 1)).is_err());
    }

    #[test]
    fn core_schema_typing() {
        assert_eq!(top("name: yes", "name"), Some(Value::Str("yes".into())));
        assert_eq!(top("name: on", "name"), Some(Value::Str("on".into())));
        assert_eq!(top("name: 1_000", "name"), Some(Value::Str("1_000".into())));
        assert_eq!(top("name: 0X1F", "name"), Some(Value::Str("0X1F".into())));
        assert_eq!(top("name: 123", "name"), Some(Value::Int));
        assert_eq!(top("name: 017", "name"), Some(Value::Int));
        assert_eq!(top("name: 0o17", "name"), Some(Value::Int));
        assert_eq!(top("name: 0x1F", "name"), Some(Value::Int));
        assert_eq!(top("name: 1.5e3", "name"), Some(Value::Float));
        assert_eq!(top("name: 5.", "name"), Some(Value::Float));
        assert_eq!(top("name: .inf", "name"), Some(Value::Float));
        assert_eq!(top("name: -.INF", "name"), Some(Value::Float));
        assert_eq!(top("name: .NaN", "name"), Some(Value::Float));
        assert_eq!(top("name: -.nan", "name"), Some(Value::Str("-.nan".into())));
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
        assert_eq!(top("name: !!int abc", "name"), Some(Value::Int));
        assert_eq!(top("name: !!float 1", "name"), Some(Value::Float));
        assert_eq!(top("name: !custom x", "name"), Some(Value::Tagged));
        assert_eq!(top("name: !!binary aGk=", "name"), Some(Value::Tagged));
        assert_eq!(top("name: [a]", "name"), Some(Value::Sequence));
        assert_eq!(top("name: {a: 1}", "name"), Some(Value::Mapping));
        assert_eq!(top("name: .", "name"), Some(Value::Str(".".into())));
        assert_eq!(top("name: '-'", "name"), Some(Value::Str("-".into())));
        // A `%YAML 1.1` directive does not bring back YAML 1.1 types.
        assert_eq!(
            top("%YAML 1.1\n---\nname: yes\n", "name"),
            Some(Value::Str("yes".into()))
        );
    }

    #[test]
    fn entries_keep_string_keys_and_count_the_others() {
        let doc = parse("name: a\n1: b\n~: c\n!custom d: e\n'2': f\n*x : g\n").err();
        assert_eq!(doc.map(|e| e.kind()), Some("unknown_alias"));
        let doc = parse("name: &n a\n1: b\n~: c\n!custom d: e\n'2': f\n[x]: g\n*n : h\n").unwrap();
        let keys: Vec<&str> = doc.entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["name", "2", "a"]);
        assert_eq!(doc.other_keys, 4);
        let doc = parse("name: !!int 1\n").unwrap();
        assert_eq!(doc.entries[0].tag.as_deref(), Some("tag:yaml.org,2002:int"));
    }

    #[test]
    fn duplicates_compare_as_the_javascript_package_does() {
        for text in [
            "a: 1\na: 2",
            "m:\n  x: 1\n  x: 2",
            "1: a\n0x1: b",
            "1: a\n1.0: b",
            "0o10: a\n8: b",
            "-0: a\n0: b",
            "true: a\nTrue: b",
            "null: a\n~: b",
            ": a\n: b",
            "'a': 1\n\"a\": 2",
            "!custom a: 1\na: 2",
            "!!float 1: a\n'1': b",
            ".inf: a\n+.inf: b",
        ] {
            assert_eq!(kind(text), Err("duplicate_key"), "{text:?}");
        }
        for text in [
            ".nan: a\n.nan: b",
            "1: a\n'1': b",
            "true: a\n'true': b",
            "[a]: 1\n[a]: 2",
            "s: &s k\n*s : 1\nk: 2",
            "null: a\n'': b",
            "[a: 1, a: 2]",
        ] {
            assert_eq!(kind(text), Ok(()), "{text:?}");
        }
    }

    #[test]
    fn documents_and_syntax() {
        assert_eq!(kind("a: 1\n---\nb: 2"), Err("multiple_documents"));
        assert_eq!(kind("a: 1\n...\n---\n"), Err("multiple_documents"));
        assert_eq!(kind("--- {a: 1}\n...\n"), Ok(()));
        assert_eq!(kind("description: Use when: x"), Err("syntax"));
        assert_eq!(kind("a: *missing"), Err("unknown_alias"));
        assert_eq!(parse("").unwrap().root, Value::Null);
        assert_eq!(parse("# only a comment\n").unwrap().root, Value::Null);
    }

    #[test]
    fn nesting_limit_both_sides() {
        for build in [flow_nesting, block_nesting] {
            let at = build(MAX_NESTING);
            let doc = parse(&at).unwrap();
            assert_eq!(doc.get("key"), Some(&Value::Sequence));
            let over = build(MAX_NESTING + 1);
            assert!(matches!(
                parse(&over),
                Err(YamlError::TooDeep { line: 2 } | YamlError::TooDeep { line: 1 })
            ));
        }
        // A flow root: 255 flow collections is saphyr-parser's own maximum, and ours.
        let root = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert_eq!(parse(&root).unwrap().root, Value::Sequence);
        let root = format!("{}{}", "[".repeat(256), "]".repeat(256));
        assert_eq!(kind(&root), Err("too_deep"));
        // Far deeper input fails the same way, quickly.
        assert_eq!(kind(&flow_nesting(100_000)), Err("too_deep"));
        assert_eq!(kind(&block_nesting(100_000)), Err("too_deep"));
    }

    fn scalar_aliases(n: usize) -> String {
        let mut text = String::from("name: &s weather\n");
        for i in 0..n {
            text.push_str(&format!("k{i}: *s\n"));
        }
        text
    }

    /// `a: &a [x]`, `b: &b [*a × inner]`, then `outer` aliases of `b`.
    fn two_levels(inner: usize, outer: usize) -> String {
        let mut text = format!("a: &a [x]\nb: &b [{}]\n", vec!["*a"; inner].join(", "));
        for i in 0..outer {
            text.push_str(&format!("c{i}: *b\n"));
        }
        text
    }

    #[test]
    fn alias_budget_both_sides() {
        // A scalar: count 1 + n aliases, weight 1; at most 100.
        let doc = parse(&scalar_aliases(99)).unwrap();
        assert_eq!(doc.get("k98"), Some(&Value::Str("weather".into())));
        assert!(matches!(
            parse(&scalar_aliases(100)),
            Err(YamlError::ExcessiveAliases { line: 101 })
        ));
        // Two levels: a has count 11 after ten aliases, so b weighs 11; b's count may reach 9.
        assert_eq!(kind(&two_levels(10, 8)), Ok(()));
        assert_eq!(kind(&two_levels(10, 9)), Err("excessive_aliases"));
        assert_eq!(kind(&two_levels(9, 9)), Ok(()));
        assert_eq!(kind(&two_levels(9, 10)), Err("excessive_aliases"));
        // Collections without scalars weigh 0: aliasing them is free, as in the yaml package.
        let mut text = String::from("e: &e [[], {}]\n");
        for i in 0..500 {
            text.push_str(&format!("k{i}: *e\n"));
        }
        assert_eq!(parse(&text).unwrap().get("k499"), Some(&Value::Sequence));
        // The classic bomb: nine levels of nine.
        let mut bomb = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for w in names.windows(2) {
            let refs = vec![format!("*{}", w[0]); 9].join(", ");
            bomb.push_str(&format!("{0}: &{0} [{refs}]\n", w[1]));
        }
        assert_eq!(kind(&bomb), Err("excessive_aliases"));
        // An alias inside the node its anchor names.
        assert_eq!(kind("m: &m [*m]"), Err("recursive_alias"));
        assert_eq!(kind("m: &m {k: [*m]}"), Err("recursive_alias"));
        // An alias resolves to the kind of the last node with that anchor.
        let doc = parse("a: &x 1\nb: &x two\nname: *x\n").unwrap();
        assert_eq!(doc.get("name"), Some(&Value::Str("two".into())));
    }

    #[test]
    fn implicit_key_length_both_sides() {
        let block = |n: usize| format!("{}: v\n", "k".repeat(n));
        assert_eq!(kind(&block(MAX_IMPLICIT_KEY)), Ok(()));
        assert_eq!(kind(&block(MAX_IMPLICIT_KEY + 1)), Err("syntax"));
        // Characters, not bytes or UTF-16 units.
        let emoji = |n: usize| format!("{}: v\n", "🙂".repeat(n));
        assert_eq!(kind(&emoji(MAX_IMPLICIT_KEY)), Ok(()));
        assert_eq!(kind(&emoji(MAX_IMPLICIT_KEY + 1)), Err("syntax"));
        let pair = |n: usize| format!("k: [{} : v]\n", "k".repeat(n - 1));
        assert_eq!(kind(&pair(MAX_IMPLICIT_KEY)), Ok(()));
        assert_eq!(kind(&pair(MAX_IMPLICIT_KEY + 1)), Err("syntax"));
        // No limit for `{key: value}` nor for explicit `? key` pairs.
        let long = "k".repeat(5000);
        assert_eq!(kind(&format!("k: {{{long}: v}}\n")), Ok(()));
        assert_eq!(kind(&format!("k: [? {long} : v]\n")), Ok(()));
    }

    #[test]
    fn tabs_separate_values_but_not_block_collections() {
        let doc = parse("name:\tweather\ndescription:\t\tx-y\n").unwrap();
        assert_eq!(doc.get("name"), Some(&Value::Str("weather".into())));
        assert_eq!(doc.get("description"), Some(&Value::Str("x-y".into())));
        // Tabs after `:` inside quoted and block scalars stay content.
        let doc = parse(
            "name:\tw\ndescription: \"a:\tb\"\nlit: |\n  c:\td\nsq: 'e:\tf'\nfold: >\n  g:\th\n",
        )
        .unwrap();
        assert_eq!(doc.get("description"), Some(&Value::Str("a:\tb".into())));
        assert_eq!(doc.get("lit"), Some(&Value::Str("c:\td\n".into())));
        assert_eq!(doc.get("sq"), Some(&Value::Str("e:\tf".into())));
        assert_eq!(doc.get("fold"), Some(&Value::Str("g:\th\n".into())));
        // Keys that differ only there are not duplicates.
        assert_eq!(kind("'a:\tb': 1\n'a: b': 2\nc:\td\n"), Ok(()));
        // A tab may not stand for the indentation of a compact block collection.
        assert_eq!(kind("? a\n:\t- b\n"), Err("syntax"));
        assert_eq!(kind("? a\n:\tb: c\n"), Err("syntax"));
        assert_eq!(kind("? a\n:\t? b\n"), Err("syntax"));
        assert_eq!(kind("? a\n: - b\n"), Ok(()));
        // Properties before a block collection on the next line are fine after a tab.
        assert_eq!(kind("k:\t&a\n  b: c\n"), Ok(()));
    }

    #[test]
    fn compact_collection_after_empty_implicit_key() {
        assert_eq!(kind("name: x\n: a: b\n"), Err("syntax"));
        assert_eq!(kind("name: x\n: - a\n"), Err("syntax"));
        assert_eq!(kind("- : a: b\n"), Err("syntax"));
        // After an explicit `?` the same value is a compact mapping.
        assert_eq!(kind("?\n: a: b\n"), Ok(()));
        assert_eq!(kind("? # comment ?\n: a: b\n"), Ok(()));
        assert_eq!(kind("name: x\n: a\n"), Ok(()));
        assert_eq!(kind("name: x\n: [a: b]\n"), Ok(()));
    }

    #[test]
    fn block_scalar_ending_in_a_blank_line_without_a_break() {
        // Clip keeps one line break, keep keeps the blank line, as when the break is there.
        assert_eq!(
            top("d: |\n  Text\n  ", "d"),
            Some(Value::Str("Text\n".into()))
        );
        assert_eq!(
            top("d: |+\n  Text\n  ", "d"),
            Some(Value::Str("Text\n\n".into()))
        );
        assert_eq!(
            top("d: |+\n  Text\n  \n", "d"),
            Some(Value::Str("Text\n\n".into()))
        );
        // A deeper blank line is content.
        assert_eq!(
            top("d: |-\n  Text\n   ", "d"),
            Some(Value::Str("Text\n ".into()))
        );
        assert_eq!(top("d: x\n \t", "d"), Some(Value::Str("x".into())));
    }

    #[test]
    fn byte_order_marks() {
        assert_eq!(kind("\u{feff}name: x\n"), Ok(()));
        assert_eq!(
            top("name: \"\u{feff}x\"\n", "name"),
            Some(Value::Str("\u{feff}x".into()))
        );
        assert_eq!(kind("name: x\u{feff}\n"), Err("byte_order_mark"));
        assert_eq!(kind("name: x # \u{feff}\n"), Err("byte_order_mark"));
    }

    #[test]
    fn flow_openings() {
        for span in ["[", "{ ", "&a [", "!t {  # c\n", "&a !t\t[", "[\n"] {
            assert!(opens_flow(span), "{span:?}");
        }
        for span in ["", "&a\n  ", "!t # [x\n  ", "-"] {
            assert!(!opens_flow(span), "{span:?}");
        }
        assert_eq!(kind("name: x\n:  { lead: x}\n"), Ok(()));
        assert_eq!(kind("name: x\n: &a [a, b]\n"), Ok(()));
    }

    #[test]
    fn surrogate_pairs_make_one_character() {
        // As `json.dumps` writes U+1F4B0; the `\U` forms and an escaped line break between the
        // halves too, as the yaml package reads them.
        for text in [
            "a: \"\\ud83d\\udcb0\"",
            "a: \"\\uD83D\\uDCB0\"",
            "a: \"\\U0000d83d\\U0000dcb0\"",
            "a: \"\\ud83d\\\n   \\udcb0\"",
            "a: \"\\ud83d\\\r\n \\udcb0\"\r\n",
        ] {
            assert_eq!(
                top(text, "a"),
                Some(Value::Str("\u{1f4b0}".into())),
                "{text:?}"
            );
        }
        let doc =
            parse("name: \"x \\ud83d\\udcb0 y \\u00e9\"\nmetadata: {\"e\": \"\\ud83e\\udd16\"}\n")
                .unwrap();
        assert_eq!(
            doc.get("name"),
            Some(&Value::Str("x \u{1f4b0} y \u{e9}".into()))
        );
        let tree = parse_tree(
            "m: {\"e\": \"\\ud83e\\udd16\", \"k\\ud83d\\udcb0\": [\"\\ud83d\\udcb0\"]}\n",
        )
        .unwrap();
        let m = tree.tree.as_deref().and_then(|t| t.get("m")).unwrap();
        assert!(matches!(m.get("e"), Some(Tree::Scalar { text, .. }) if text == "\u{1f916}"));
        assert!(m.get("k\u{1f4b0}").is_some());
        // White space after a pair split by an escaped line break stays.
        assert_eq!(
            top("a: \"Costs \\ud83d\\\n  \\udcb0 money\"", "a"),
            Some(Value::Str("Costs \u{1f4b0} money".into()))
        );
        // Outside double quotes a backslash is text.
        assert_eq!(
            top("a: '\\ud83d\\udcb0'\nb: \"\\ud83d\\udcb0\"", "a"),
            Some(Value::Str("\\ud83d\\udcb0".into()))
        );
        assert_eq!(
            top(
                "a: \\ud83d\\udcb0 # \"\\ud83d\\udcb0\"\nb: \"\\ud83d\\udcb0\"",
                "a"
            ),
            Some(Value::Str("\\ud83d\\udcb0".into()))
        );
        assert_eq!(
            top("a: |\n  \\ud83d\\udcb0\nb: \"\\ud83d\\udcb0\"", "a"),
            Some(Value::Str("\\ud83d\\udcb0\n".into()))
        );
        // After an escaped backslash, `ud83d` is text and the low half stands alone.
        assert_eq!(kind("a: \"\\\\ud83d\\udcb0\""), Err("lone_surrogate"));
    }

    #[test]
    fn lone_surrogates_are_not_characters() {
        for text in [
            "a: \"\\ud83d\"",
            "a: \"\\udcb0\"",
            "a: \"\\udcb0\\ud83d\"",
            "a: \"\\ud83d x\\udcb0\"",
            "a: \"\\ud83d\\ud83d\\udcb0\"",
            "a: \"\\\\\\ud83d\"",
            "a: [\"\\ud83d\\udcb0\", \"\\U0000DFFF\"]",
            "a: \"\\ud83d\n  \\udcb0\"",
        ] {
            assert_eq!(kind(text), Err("lone_surrogate"), "{text:?}");
        }
        assert!(matches!(
            parse("a: 1\nb: \"x\n  \\ud800\"\n"),
            Err(YamlError::LoneSurrogate { line: 3 })
        ));
        // Other escapes that are not characters stay syntax errors.
        assert_eq!(kind("a: \"\\U00110000\""), Err("syntax"));
        // `\\\\ud83d` is a backslash and text.
        assert_eq!(
            top("a: \"\\\\ud83d\"", "a"),
            Some(Value::Str("\\ud83d".into()))
        );
    }

    #[test]
    fn implicit_keys_count_the_escapes_as_written() {
        // `\ud83d\udcb0` is 12 characters of the key, although the parser sees 10.
        let key = |pad: usize| format!("\"{}\\ud83d\\udcb0\": v\n", "k".repeat(pad));
        // The quotes (2) and the escapes (12): 1024 characters up to the `:` with pad 1010.
        assert_eq!(kind(&key(1010)), Ok(()));
        assert_eq!(kind(&key(1011)), Err("syntax"));
        let pair = |pad: usize| format!("s: [\"{}\\ud83d\\udcb0\": v]\n", "k".repeat(pad));
        assert_eq!(kind(&pair(1010)), Ok(()));
        assert_eq!(kind(&pair(1011)), Err("syntax"));
        // Explicit keys and flow mappings have no limit.
        let long = format!("\"{}\\ud83d\\udcb0\"", "k".repeat(2000));
        assert_eq!(kind(&format!("? {long}\n: v\n")), Ok(()));
        assert_eq!(kind(&format!("m: {{{}}}", key(2000).trim_end())), Ok(()));
    }

    #[test]
    fn flow_collections_closing_at_the_block_column() {
        // OpenClaw's style: the closing `}` or `]` at the column of the block mapping.
        for text in [
            "name: x\nmetadata: {\n  \"openclaw\": {\n    \"emoji\": \"x\",\n    \"r\": [\"a\"]\n  }\n}\ndescription: y\n",
            "metadata: {\n  a: 1,\n}\n",
            "metadata: [\n  \"a\",\n  \"b\"\n]\n",
            "metadata: {\r\n  \"a\": \"1\"\r\n}\r\n",
            "k: {\n  a: 1\n} # c\n",
            "k:\n  {\n    \"a\": \"1\"\n}\n",
            "- {\n  \"a\": \"1\"\n}\n",
            "- k: [\n    \"a\"\n  ]\n",
            "m:\n  o: {\n    \"a\": 1\n  }\n",
            "k: &x [\n  \"a\"\n]\nj: *x\n",
            "k: {\n# a comment\n  \"a\": \"1\"\n\n}\n",
            "k: {\n  \"a\": \"\\ud83d\\udcb0\"\n}\n",
            "d: |\n  }\nk: {\n  \"a\": \"1\"\n}\n",
            "k: {\n  \"a\": [1],\n}\n",
            "k: [\n  \"a\",\n  # c\n]\n",
        ] {
            assert_eq!(kind(text), Ok(()), "{text:?}");
        }
        let doc = parse("name: x\nmetadata: {\n  \"a\": \"1\"\n}\ndescription: y\n").unwrap();
        assert_eq!(doc.get("metadata"), Some(&Value::Mapping));
        assert_eq!(doc.get("description"), Some(&Value::Str("y".into())));
        // A block scalar keeps a line that starts with `}` as it is.
        assert_eq!(
            top("d: |\n  a\n  }\nk: {\n  \"a\": \"1\"\n}\n", "d"),
            Some(Value::Str("a\n}\n".into()))
        );
        // Any other line of the collection is indented past the block column, and only the
        // outermost collection's end may stand at it (as in the yaml package).
        for text in [
            "metadata: {\"a\": \"x\",\n\"b\": 2}\n",
            "metadata: {\"a\": 1,\n\"b\": 2}\n",
            "metadata: [\na\n]\n",
            "k: {\n  a: [\n  1\n]\n}\n",
            "k: [\n a, {\n b: 1\n}\n]\n",
            "k: {\n  a: 1\n,b: 2}\n",
            "m:\n  o: {\n    \"a\": 1\n}\n",
            "m:\n  o: {\n    \"a\": 1\n }\n",
            "k: {\n  \"a\": 1\n}, x\n",
            "m:\n  o: {\n    \"a\": 1,\n }\n",
            "m:\n  o: [\n    \"a\",\n    # c\n ]\n",
        ] {
            assert_eq!(kind(text), Err("syntax"), "{text:?}");
        }
        // Quoted scalars across lines follow the same rule, without the closing allowance.
        for text in [
            "- \"a\nb\"\n",
            "- \"a\n\tb\"\n",
            "- - \"a\n  b\"\n",
            "s:\n  - 'a\n  b'\n",
            "- \"a\n\nb\"\n",
        ] {
            assert_eq!(kind(text), Err("syntax"), "{text:?}");
        }
        // The column is the entries', not the properties' on the line above.
        assert_eq!(kind("k: &a\n  x: 'b\n   c'\n  y: [\n    1\n  ]\n"), Ok(()));
        assert_eq!(kind("k: !!map\n  x: 'b\n  c'\n"), Err("syntax"));
        for text in [
            "- \"a\n b\"\n",
            "- \"a\n\n  b\"\n",
            "k: \"a\n \tb\"\n",
            "- k: \"a\n   b\"\n",
        ] {
            assert_eq!(kind(text), Ok(()), "{text:?}");
        }
        // A flow collection at the top has no block column.
        assert_eq!(kind("{\n\"a\": \"1\"\n}\n"), Ok(()));
    }

    #[test]
    fn explicit_key_indicator_detection() {
        assert!(has_explicit_key_indicator("\n? \n"));
        assert!(has_explicit_key_indicator("?"));
        assert!(!has_explicit_key_indicator("\n# ? x\n"));
        assert!(!has_explicit_key_indicator("\n&a?b \n"));
        assert!(has_explicit_key_indicator("\n? # c\n"));
    }
}
