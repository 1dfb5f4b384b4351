//! The protocol's schemas (`protocol/response.schema.json`, `protocol/step-result.schema.json`,
//! as embedded), checked one definition at a time, so that an error names the field at fault
//! (`skillspec smoke` checks every answer of an adapter with them).
//!
//! The checker ([`Schema`]) knows the part of JSON Schema (2020-12) that the protocol's schemas
//! use, by hand: `type`, `const`, `enum`, `minimum`, `maximum`, `properties`, `required`,
//! `additionalProperties`, `maxProperties`, `items`, `oneOf` and `$ref` to `#/$defs/NAME` (the one
//! reference to another file, the `result` of a `step_result`, is checked separately, against
//! step-result.schema.json). A schema that uses any other keyword is refused when it loads, so a
//! schema edit cannot be silently ignored; the tests check that this agrees with the
//! `jsonschema` crate. (That crate as a dependency of the program grew the release binary from
//! 8.4 to 12.5 MB.)
//!
//! Clauses: PROTOCOL.md, the messages and each operation's result.

use serde_json::Value;

use crate::protocol::WireStep;

/// Why a schema cannot be checked here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// The file is not embedded in this program.
    NotEmbedded(&'static str),
    /// The file is not JSON.
    NotJson { path: &'static str, error: String },
    /// The schema is not one this checker can follow (`at` is its JSON pointer).
    Unsupported {
        path: &'static str,
        at: String,
        why: Unsupported,
    },
}

/// What a schema does that the checker cannot follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsupported {
    /// A schema that is neither an object nor a boolean.
    NotASchema,
    /// A keyword outside the checked subset.
    Keyword(String),
    /// A `$ref` to somewhere else than `#/$defs/NAME` or step-result.schema.json.
    Reference(String),
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaError::NotEmbedded(path) => write!(f, "{path} is not embedded"),
            SchemaError::NotJson { path, error } => write!(f, "{path}: {error}"),
            SchemaError::Unsupported { path, at, why } => {
                if !path.is_empty() {
                    write!(f, "{path}: ")?;
                }
                match why {
                    Unsupported::NotASchema => {
                        write!(f, "{at}: a schema must be an object or a boolean")
                    }
                    Unsupported::Keyword(key) => write!(
                        f,
                        "{at}: the keyword `{key}` is not checked by `skillspec smoke` (runner/src/protocol/schema.rs): teach it there"
                    ),
                    Unsupported::Reference(r) => {
                        write!(f, "{at}: cannot follow the reference `{r}`")
                    }
                }
            }
        }
    }
}

impl std::error::Error for SchemaError {}

/// The protocol's two schema documents.
pub struct Schemas {
    pub response: Schema,
    pub result: Schema,
}

impl Schemas {
    /// The embedded schemas, loaded and checked for keywords this checker does not know.
    pub fn load() -> Result<Schemas, SchemaError> {
        let doc = |path: &'static str| -> Result<Schema, SchemaError> {
            let f = crate::embedded::file(path).ok_or(SchemaError::NotEmbedded(path))?;
            let v = serde_json::from_slice(f.bytes).map_err(|e| SchemaError::NotJson {
                path,
                error: e.to_string(),
            })?;
            Schema::new(v).map_err(|e| match e {
                SchemaError::Unsupported { at, why, .. } => {
                    SchemaError::Unsupported { path, at, why }
                }
                other => other,
            })
        };
        Ok(Schemas {
            response: doc("protocol/response.schema.json")?,
            result: doc("protocol/step-result.schema.json")?,
        })
    }

    /// Why `v` is not a valid answer of type `kind` (its `result` is checked on its own).
    pub fn response_errors(&self, kind: &str, v: &Value) -> Vec<String> {
        self.response.errors(kind, v)
    }

    /// Why `result` is not a valid result of `step`.
    pub fn result_errors(&self, step: &WireStep, result: &Value) -> Vec<String> {
        let def = match step {
            WireStep::Discover => "discover",
            WireStep::Tools => "tools",
            WireStep::Prompt => "prompt",
            WireStep::NewTurn => "new_turn",
            WireStep::Select { .. } => "select",
            WireStep::Validate { .. } => "validate",
            WireStep::Call { .. } => match result.get("ok") {
                Some(Value::Bool(true)) => "call_ok",
                Some(Value::Bool(false)) => "call_error",
                _ => {
                    return vec![format!(
                        "a `call` result is {{\"ok\": true, \"value\": {{..}}}} or {{\"ok\": false, \"error\": {{\"code\": ..}}}}; got {}",
                        bounded_json(result)
                    )]
                }
            },
        };
        self.result.errors(def, result)
    }
}

/// Keywords that are understood (the annotations among them are ignored).
const KNOWN: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "$ref",
    "title",
    "description",
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "properties",
    "required",
    "additionalProperties",
    "maxProperties",
    "items",
    "oneOf",
];
/// The one reference to another schema file (checked separately).
const EXTERNAL: &str = "step-result.schema.json";
/// Errors reported per check, at most.
const MAX_ERRORS: usize = 5;

/// A loaded schema document.
pub struct Schema {
    root: Value,
}

impl Schema {
    /// Loads `root`, refusing any keyword this checker does not know.
    pub fn new(root: Value) -> Result<Schema, SchemaError> {
        keywords(&root, "")?;
        Ok(Schema { root })
    }

    /// Why `instance` does not match the definition `#/$defs/{def}` (empty when it does).
    pub fn errors(&self, def: &str, instance: &Value) -> Vec<String> {
        let mut out = Vec::new();
        match self.root.pointer(&format!("/$defs/{def}")) {
            Some(schema) => self.check(schema, instance, "", &mut out),
            None => out.push(format!("the schema has no definition `{def}`")),
        }
        out.truncate(MAX_ERRORS);
        out
    }

    fn check(&self, schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
        let here = if at.is_empty() { "/" } else { at };
        let obj = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                out.push(format!("at {here}: nothing is allowed here"));
                return;
            }
            Value::Object(o) => o,
            _ => return,
        };
        if let Some(Value::String(r)) = obj.get("$ref") {
            if let Some(def) = r.strip_prefix("#/$defs/") {
                match self.root.pointer(&format!("/$defs/{def}")) {
                    Some(target) => self.check(target, v, at, out),
                    None => out.push(format!("at {here}: the schema refers to a missing `{r}`")),
                }
            }
        }
        if let Some(t) = obj.get("type") {
            let allowed: Vec<&str> = match t {
                Value::String(s) => vec![s.as_str()],
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !allowed.iter().any(|t| is_type(v, t)) {
                out.push(format!(
                    "at {here}: expected {}, got {}",
                    allowed.join(" or "),
                    describe(v)
                ));
                return;
            }
        }
        if let Some(c) = obj.get("const") {
            if c != v {
                out.push(format!("at {here}: must be {c}, got {}", short(v)));
            }
        }
        if let Some(Value::Array(options)) = obj.get("enum") {
            if !options.contains(v) {
                let list: Vec<String> = options.iter().map(Value::to_string).collect();
                out.push(format!(
                    "at {here}: must be one of {}, got {}",
                    list.join(", "),
                    short(v)
                ));
            }
        }
        if let (Some(min), Some(n)) = (obj.get("minimum").and_then(Value::as_f64), v.as_f64()) {
            if n < min {
                out.push(format!("at {here}: must be at least {min}, got {n}"));
            }
        }
        if let (Some(max), Some(n)) = (obj.get("maximum").and_then(Value::as_f64), v.as_f64()) {
            if n > max {
                out.push(format!("at {here}: must be at most {max}, got {n}"));
            }
        }
        if let Value::Object(map) = v {
            let props = obj.get("properties").and_then(Value::as_object);
            if let Some(Value::Array(required)) = obj.get("required") {
                for key in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(key) {
                        out.push(format!("at {here}: `{key}` is required and missing"));
                    }
                }
            }
            if let Some(max) = obj.get("maxProperties").and_then(Value::as_u64) {
                if map.len() as u64 > max {
                    out.push(format!(
                        "at {here}: at most {max} field(s) allowed, got {}",
                        map.len()
                    ));
                }
            }
            for (key, value) in map {
                let path = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match props.and_then(|p| p.get(key)) {
                    Some(sub) => self.check(sub, value, &path, out),
                    None => match obj.get("additionalProperties") {
                        Some(Value::Bool(false)) => {
                            out.push(format!("at {here}: `{key}` is not allowed here"))
                        }
                        Some(sub) => self.check(sub, value, &path, out),
                        None => {}
                    },
                }
            }
        }
        if let (Some(items), Value::Array(list)) = (obj.get("items"), v) {
            for (i, item) in list.iter().enumerate() {
                self.check(items, item, &format!("{at}/{i}"), out);
            }
        }
        if let Some(Value::Array(alternatives)) = obj.get("oneOf") {
            let results: Vec<Vec<String>> = alternatives
                .iter()
                .map(|alt| {
                    let mut e = Vec::new();
                    self.check(alt, v, at, &mut e);
                    e
                })
                .collect();
            let matching = results.iter().filter(|e| e.is_empty()).count();
            if matching != 1 {
                out.push(format!(
                    "at {here}: must match exactly one of {} alternatives, matches {matching}",
                    alternatives.len()
                ));
            }
        }
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

fn describe(v: &Value) -> String {
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("{kind} ({})", short(v))
}

fn short(v: &Value) -> String {
    bounded_json(v)
}

fn unsupported(at: String, why: Unsupported) -> SchemaError {
    SchemaError::Unsupported { path: "", at, why }
}

/// Refuses keywords outside [`KNOWN`] and references this checker cannot follow.
fn keywords(schema: &Value, at: &str) -> Result<(), SchemaError> {
    let Value::Object(obj) = schema else {
        return match schema {
            Value::Bool(_) => Ok(()),
            _ => Err(unsupported(at.to_owned(), Unsupported::NotASchema)),
        };
    };
    for (key, value) in obj {
        let here = format!("{at}/{key}");
        if !KNOWN.contains(&key.as_str()) {
            return Err(unsupported(here, Unsupported::Keyword(key.clone())));
        }
        match key.as_str() {
            "properties" | "$defs" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    keywords(sub, &format!("{here}/{name}"))?;
                }
            }
            "items" | "additionalProperties" => keywords(value, &here)?,
            "oneOf" => {
                for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                    keywords(sub, &format!("{here}/{i}"))?;
                }
            }
            "$ref" => {
                let r = value.as_str().unwrap_or_default();
                if !(r.starts_with("#/$defs/") || r == EXTERNAL) {
                    return Err(unsupported(here, Unsupported::Reference(r.to_owned())));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `v` as compact JSON, at most 300 bytes (then cut, with the size).
pub fn bounded_json(v: &Value) -> String {
    let text = v.to_string();
    if text.len() <= 300 {
        return text;
    }
    let mut cut = 300;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &text[..cut], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schemas_catch_wrong_shapes() {
        let s = Schemas::load().expect("the embedded schemas compile");
        assert!(s
            .response_errors("case_started", &json!({"type": "case_started", "seq": 1}))
            .is_empty());
        let e = s.response_errors("case_started", &json!({"type": "case_started"}));
        assert!(e.iter().any(|e| e.contains("seq")), "{e:?}");
        assert!(s
            .result_errors(&WireStep::Discover, &json!({"loaded": [{"id": "a"}]}))
            .is_empty());
        let e = s.result_errors(&WireStep::Discover, &json!({"skills": ["a"]}));
        assert_eq!(
            e,
            [
                "at /: `loaded` is required and missing",
                "at /: `skills` is not allowed here"
            ]
        );
        let e = s.result_errors(&WireStep::Discover, &json!({"loaded": [{"id": 7}]}));
        assert_eq!(e, ["at /loaded/0/id: expected string, got a number (7)"]);
        let call = WireStep::Call {
            tool: "x".into(),
            args: json!({}),
        };
        let e = s.result_errors(&call, &json!({"ok": "yes"}));
        assert!(e[0].contains("\"ok\": true"), "{e:?}");
        let e = s.result_errors(&call, &json!({"ok": false, "error": {}}));
        assert!(e.iter().any(|e| e.contains("code")), "{e:?}");
    }

    /// The hand-written checker agrees with the `jsonschema` crate on valid and invalid
    /// messages of every definition.
    #[test]
    fn the_shape_checker_agrees_with_jsonschema() {
        let doc = |path: &str| -> Value {
            serde_json::from_slice(crate::embedded::file(path).unwrap().bytes).unwrap()
        };
        let reference = |mut d: Value, def: &str| {
            d.as_object_mut().unwrap().remove("oneOf");
            d["$ref"] = json!(format!("#/$defs/{def}"));
            if let Some(r) = d.pointer_mut("/$defs/step_result/properties/result") {
                *r = json!({});
            }
            jsonschema::validator_for(&d).unwrap()
        };
        let samples: &[(&str, &str, Value)] = &[
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a", "version": "1"}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 1, "implementation": {"name": "a", "version": "1"}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a"}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a", "version": "1", "features": ["x", 3]}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a", "version": "1", "language": null, "process_per_case": true}}),
            ),
            (
                "response",
                "started",
                json!({"type": "started", "protocol_version": 2, "implementation": {"name": "a", "version": "1", "extra": 1}}),
            ),
            (
                "response",
                "case_started",
                json!({"type": "case_started", "seq": 3}),
            ),
            (
                "response",
                "case_started",
                json!({"type": "case_started", "seq": -1}),
            ),
            (
                "response",
                "case_started",
                json!({"type": "case_started", "seq": 1.5}),
            ),
            (
                "response",
                "case_started",
                json!({"type": "case_started", "seq": "1"}),
            ),
            ("response", "case_started", json!({"type": "case_started"})),
            (
                "response",
                "step_result",
                json!({"type": "step_result", "seq": 1, "index": 0, "result": {"anything": 1}}),
            ),
            (
                "response",
                "step_result",
                json!({"type": "step_result", "seq": 1, "result": {}}),
            ),
            (
                "response",
                "case_ended",
                json!({"type": "case_ended", "seq": 1, "more": true}),
            ),
            (
                "response",
                "error",
                json!({"type": "error", "seq": 1, "message": "no"}),
            ),
            ("response", "error", json!({"type": "error", "message": 5})),
            (
                "response",
                "error",
                json!({"type": "error", "seq": null, "message": "no"}),
            ),
            (
                "result",
                "discover",
                json!({"loaded": [{"id": "a", "format": "portable"}]}),
            ),
            (
                "result",
                "discover",
                json!({"loaded": [{"id": "a", "format": "other"}]}),
            ),
            ("result", "discover", json!({"loaded": [{"name": "a"}]})),
            (
                "result",
                "discover",
                json!({"loaded": [], "skipped": [{"path": "x", "reason": "symlink"}]}),
            ),
            (
                "result",
                "discover",
                json!({"loaded": [], "skipped": [{"path": "x"}]}),
            ),
            ("result", "discover", json!({"skills": ["a"]})),
            (
                "result",
                "tools",
                json!({"offered": ["skill_read_reference"]}),
            ),
            (
                "result",
                "tools",
                json!({"offered": "skill_read_reference"}),
            ),
            ("result", "prompt", json!({"text": "a", "baseline": "b"})),
            ("result", "prompt", json!({"text": "a"})),
            (
                "result",
                "call_ok",
                json!({"ok": true, "value": {"content": "x"}}),
            ),
            ("result", "call_ok", json!({"ok": true, "value": "x"})),
            (
                "result",
                "call_error",
                json!({"ok": false, "error": {"code": "not_found"}}),
            ),
            (
                "result",
                "call_error",
                json!({"ok": false, "error": {"message": "x"}}),
            ),
            (
                "result",
                "call_error",
                json!({"ok": false, "error": {"code": 3}}),
            ),
            ("result", "new_turn", json!({})),
            ("result", "new_turn", json!({"x": 1})),
            ("result", "new_turn", json!([])),
        ];
        let s = Schemas::load().unwrap();
        let (mut valid, mut invalid) = (0, 0);
        for (doc_name, def, instance) in samples {
            let (mine, theirs) = match *doc_name {
                "response" => (
                    s.response.errors(def, instance),
                    reference(doc("protocol/response.schema.json"), def),
                ),
                _ => (
                    s.result.errors(def, instance),
                    reference(doc("protocol/step-result.schema.json"), def),
                ),
            };
            let expected = theirs.is_valid(instance);
            assert_eq!(mine.is_empty(), expected, "{def} {instance}: {mine:?}");
            if expected {
                valid += 1;
            } else {
                invalid += 1;
            }
        }
        assert!(
            valid >= 10 && invalid >= 15,
            "{valid} valid, {invalid} invalid samples"
        );
    }

    #[test]
    fn the_shape_checker_refuses_keywords_it_does_not_know() {
        let err = Schema::new(json!({"$defs": {"a": {"properties": {"x": {"pattern": "^a"}}}}}))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("/$defs/a/properties/x/pattern") && err.contains("`pattern`"),
            "{err}"
        );
        assert!(Schema::new(json!({"$ref": "other.json"})).is_err());
        let ok =
            Schema::new(json!({"$defs": {"a": {"type": "integer", "minimum": 0, "maximum": 9}}}))
                .unwrap();
        assert!(ok.errors("a", &json!(3)).is_empty());
        assert_eq!(
            ok.errors("a", &json!(-1)),
            ["at /: must be at least 0, got -1"]
        );
        assert_eq!(
            ok.errors("a", &json!(10)),
            ["at /: must be at most 9, got 10"]
        );
        assert_eq!(
            ok.errors("b", &json!(1)),
            ["the schema has no definition `b`"]
        );
    }
}
