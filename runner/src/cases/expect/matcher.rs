//! Matchers: a plain value compared exactly, or a mapping of operations (`equals`, `contains`,
//! `starts_with`, `length`, `present`, ...) that must all hold.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::*;

/// How one value is checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// Equal to this JSON value.
    Exact(Value),
    /// Every listed operation holds.
    Ops(Box<MatchOps>),
}

/// The operations of a matcher mapping, e.g. `{contains: "x", length: 3}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MatchOps {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// Substring of a string, or element of a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<OneOrMany>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<OneOrMany>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_with: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_with: Option<String>,
    /// Bytes of a string (UTF-8), or elements of a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
    /// Whether the field is there at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present: Option<bool>,
}

/// One value or a list of them.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(untagged)]
pub enum OneOrMany {
    Many(Vec<Value>),
    One(Value),
}

impl OneOrMany {
    pub(super) fn items(&self) -> Vec<&Value> {
        match self {
            OneOrMany::Many(v) => v.iter().collect(),
            OneOrMany::One(v) => vec![v],
        }
    }
}

pub(super) const OP_KEYS: [&str; 7] = [
    "equals",
    "contains",
    "not_contains",
    "starts_with",
    "ends_with",
    "length",
    "present",
];

impl Matcher {
    /// A mapping whose keys are all matcher operations is a matcher; anything else is an exact value.
    pub fn from_value(v: Value) -> Result<Matcher, String> {
        match &v {
            Value::Object(m)
                if !m.is_empty() && m.keys().all(|k| OP_KEYS.contains(&k.as_str())) =>
            {
                serde_json::from_value(v)
                    .map(Matcher::Ops)
                    .map_err(|e| e.to_string())
            }
            _ => Ok(Matcher::Exact(v)),
        }
    }

    /// Checks `actual` (`None` when the field is missing); returns what failed.
    pub fn check(&self, actual: Option<&Value>) -> Result<(), String> {
        match self {
            Matcher::Exact(want) => match actual {
                Some(a) if a == want => Ok(()),
                _ => Err(format!("equal to {}", show(want))),
            },
            Matcher::Ops(ops) => {
                if let Some(present) = ops.present {
                    if actual.is_some() != present {
                        return Err(if present {
                            "present".into()
                        } else {
                            "absent".into()
                        });
                    }
                }
                let Some(a) = actual else {
                    return if ops.present == Some(false) {
                        Ok(())
                    } else {
                        Err("present".into())
                    };
                };
                if let Some(want) = &ops.equals {
                    if a != want {
                        return Err(format!("equal to {}", show(want)));
                    }
                }
                for item in ops.contains.iter().flat_map(OneOrMany::items) {
                    if !contains(a, item) {
                        return Err(format!("containing {}", show(item)));
                    }
                }
                for item in ops.not_contains.iter().flat_map(OneOrMany::items) {
                    if contains(a, item) {
                        return Err(format!("not containing {}", show(item)));
                    }
                }
                if let Some(p) = &ops.starts_with {
                    if !a.as_str().is_some_and(|s| s.starts_with(p.as_str())) {
                        return Err(format!("starting with {}", show(&Value::from(p.clone()))));
                    }
                }
                if let Some(p) = &ops.ends_with {
                    if !a.as_str().is_some_and(|s| s.ends_with(p.as_str())) {
                        return Err(format!("ending with {}", show(&Value::from(p.clone()))));
                    }
                }
                if let Some(n) = ops.length {
                    let len = match a {
                        Value::String(s) => Some(s.len() as u64),
                        Value::Array(v) => Some(v.len() as u64),
                        _ => None,
                    };
                    if len != Some(n) {
                        return Err(format!("of length {n}"));
                    }
                }
                Ok(())
            }
        }
    }
}

impl Matcher {
    /// This matcher with `{root}` in its texts replaced by `root`.
    pub fn with_root(&self, root: &str) -> Matcher {
        match self {
            Matcher::Exact(v) => Matcher::Exact(value_with_root(v, root)),
            Matcher::Ops(ops) => {
                let many = |o: &Option<OneOrMany>| {
                    o.as_ref().map(|o| match o {
                        OneOrMany::Many(v) => {
                            OneOrMany::Many(v.iter().map(|i| value_with_root(i, root)).collect())
                        }
                        OneOrMany::One(v) => OneOrMany::One(value_with_root(v, root)),
                    })
                };
                Matcher::Ops(Box::new(MatchOps {
                    equals: ops.equals.as_ref().map(|v| value_with_root(v, root)),
                    contains: many(&ops.contains),
                    not_contains: many(&ops.not_contains),
                    starts_with: ops.starts_with.as_ref().map(|t| t.replace("{root}", root)),
                    ends_with: ops.ends_with.as_ref().map(|t| t.replace("{root}", root)),
                    length: ops.length,
                    present: ops.present,
                }))
            }
        }
    }
}

impl<'de> Deserialize<'de> for Matcher {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Matcher::from_value(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

pub(super) fn contains(haystack: &Value, needle: &Value) -> bool {
    match (haystack, needle) {
        (Value::String(h), Value::String(n)) => h.contains(n.as_str()),
        (Value::Array(items), n) => items.contains(n),
        _ => false,
    }
}
