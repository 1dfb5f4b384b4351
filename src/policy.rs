//! The operator's script allowlist (`SPORTSCLAW_SKILL_SCRIPT_ALLOWLIST`).
//!
//! SPEC.md `policy.*`: a JSON array of objects with exactly the string keys `skill`, `script` and
//! `sha256` (64 lowercase hex digits). Anything else — bad JSON, not an array, a missing, extra,
//! repeated or non-string key, a bad hash, a duplicate skill + script — makes the whole policy
//! invalid, and an invalid or unset policy approves nothing.

use serde::Deserialize;

use crate::mutants::{active, Mutant};

/// One approval: this exact helper of this skill, with these bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub skill: String,
    pub script: String,
    pub sha256: String,
}

/// Strict reading of one entry: a JSON object (never an array read by position) with each of
/// the three keys exactly once, string values, and nothing else.
impl<'de> Deserialize<'de> for Approval {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entry;
        impl<'de> serde::de::Visitor<'de> for Entry {
            type Value = Approval;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object with exactly `skill`, `script` and `sha256`")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Approval, A::Error> {
                use serde::de::Error;
                let mut fields: [Option<String>; 3] = [None, None, None];
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "skill" => 0,
                        "script" => 1,
                        "sha256" => 2,
                        other => return Err(A::Error::custom(format!("unexpected key `{other}`"))),
                    };
                    if fields[slot].is_some() {
                        return Err(A::Error::custom(format!("key `{key}` appears twice")));
                    }
                    fields[slot] = Some(map.next_value::<String>()?);
                }
                let [Some(skill), Some(script), Some(sha256)] = fields else {
                    return Err(A::Error::custom(
                        "`skill`, `script` and `sha256` are all required",
                    ));
                };
                Ok(Approval {
                    skill,
                    script,
                    sha256,
                })
            }
        }
        d.deserialize_map(Entry)
    }
}

/// A parsed policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// No allowlist configured.
    Unset,
    /// The allowlist could not be accepted; the reason is for operators only.
    Invalid(String),
    Valid(Vec<Approval>),
}

impl Policy {
    /// Parses the raw allowlist text.
    pub fn parse(raw: Option<&str>) -> Policy {
        let Some(text) = raw else {
            return Policy::Unset;
        };
        if active(Mutant::PolicySkipsBadEntry) {
            if let Ok(values) = serde_json::from_str::<Vec<serde_json::Value>>(text) {
                let kept = values
                    .into_iter()
                    .filter_map(|v| serde_json::from_value(v).ok());
                return Policy::Valid(kept.filter(|e: &Approval| hex_ok(&e.sha256)).collect());
            }
        }
        let entries: Vec<Approval> = match serde_json::from_str(text) {
            Ok(entries) => entries,
            Err(e) => {
                return Policy::Invalid(format!(
                    "not a JSON array of {{skill, script, sha256}} objects: {e}"
                ))
            }
        };
        for (i, e) in entries.iter().enumerate() {
            if !hex_ok(&e.sha256) {
                return Policy::Invalid(format!(
                    "entry {i}: sha256 must be 64 lowercase hex digits"
                ));
            }
            if entries[..i]
                .iter()
                .any(|o| o.skill == e.skill && o.script == e.script)
                && !active(Mutant::PolicyDuplicateFirstWins)
            {
                return Policy::Invalid(format!(
                    "entry {i}: {} {} is listed twice",
                    e.skill, e.script
                ));
            }
        }
        Policy::Valid(entries)
    }

    /// Whether this exact skill + script + hash is approved.
    pub fn approves(&self, skill: &str, script: &str, sha256: &str) -> bool {
        match self {
            Policy::Valid(entries) => entries.iter().any(|e| {
                let same_skill = e.skill == skill
                    || (active(Mutant::PolicySkillCaseInsensitive)
                        && e.skill.eq_ignore_ascii_case(skill));
                let same_hash = e.sha256 == sha256
                    || (active(Mutant::PolicyUppercaseHex)
                        && e.sha256.eq_ignore_ascii_case(sha256));
                same_skill && e.script == script && same_hash
            }),
            _ => false,
        }
    }

    /// The approved scripts of `skill`, sorted (empty unless the policy is valid).
    pub fn approved_scripts(&self, skill: &str) -> Vec<String> {
        let mut out: Vec<String> = match self {
            Policy::Valid(entries) => entries
                .iter()
                .filter(|e| e.skill == skill)
                .map(|e| e.script.clone())
                .collect(),
            _ => Vec::new(),
        };
        out.sort();
        out
    }
}

/// 64 lowercase hex digits.
fn hex_ok(sha256: &str) -> bool {
    sha256.len() == 64
        && sha256.bytes().all(|b| {
            b.is_ascii_digit()
                || (b'a'..=b'f').contains(&b)
                || (active(Mutant::PolicyUppercaseHex) && (b'A'..=b'F').contains(&b))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "ab0000000000000000000000000000000000000000000000000000000000000c";

    #[test]
    fn parsing() {
        assert_eq!(Policy::parse(None), Policy::Unset);
        let ok = format!(r#"[{{"skill":"a","script":"scripts/x.py","sha256":"{H}"}}]"#);
        assert!(Policy::parse(Some(&ok)).approves("a", "scripts/x.py", H));
        assert!(matches!(Policy::parse(Some("[]")), Policy::Valid(v) if v.is_empty()));
        for bad in [
            "".to_owned(),
            "{}".to_owned(),
            "not json".to_owned(),
            format!(
                r#"[{{"skill":"a","script":"s","sha256":"{}"}}]"#,
                H.to_uppercase()
            ),
            format!(r#"[{{"skill":"a","script":"s","sha256":"{H}","x":1}}]"#),
            r#"[{"skill":"a","script":"s"}]"#.to_owned(),
            format!(r#"[{{"skill":"a","skill":"a","script":"s","sha256":"{H}"}}]"#),
            format!(r#"[{{"skill":1,"script":"s","sha256":"{H}"}}]"#),
            format!(r#"[["a","s","{H}"]]"#),
            format!(
                r#"[{{"skill":"a","script":"s","sha256":"{H}"}},{{"skill":"a","script":"s","sha256":"{H}"}}]"#
            ),
            format!(r#"[{{"skill":"a","script":"s","sha256":"{}"}}]"#, &H[1..]),
        ] {
            assert!(
                matches!(Policy::parse(Some(&bad)), Policy::Invalid(_)),
                "{bad}"
            );
        }
    }
}
