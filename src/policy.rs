//! The operator's script allowlist (`SPORTSCLAW_SKILL_SCRIPT_ALLOWLIST`).
//!
//! SPEC.md `policy.*`: a JSON array of objects with exactly the string keys `skill`, `script` and
//! `sha256` (64 lowercase hex digits). Anything else — bad JSON, not an array, a missing, extra,
//! repeated or non-string key, a bad hash, a duplicate skill + script — makes the whole policy
//! invalid, and an invalid or unset policy approves nothing.
//!
//! A primitive: it uses no other module of the crate.

use serde::Deserialize;

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
        (steps().parse)(text)
    }

    /// Whether this exact skill + script + hash is approved.
    // spec: run.approval (skill, script and hash must match one entry exactly)
    // spec: policy.only-source (nothing but an entry of the allowlist approves)
    pub fn approves(&self, skill: &str, script: &str, sha256: &str) -> bool {
        let steps = steps();
        match self {
            Policy::Valid(entries) => entries.iter().any(|e| {
                (steps.same_skill)(&e.skill, skill)
                    && e.script == script
                    && (steps.same_hash)(&e.sha256, sha256)
            }),
            _ => false,
        }
    }

    /// The approved scripts of `skill`, sorted (empty unless the policy is valid).
    // spec: run.not-approved (`approved_scripts`)
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

/// The policy a text is: valid only when every entry is.
// spec: policy.malformed (one bad entry invalidates the whole policy)
fn parse_strictly(text: &str) -> Policy {
    let entries: Vec<Approval> = match serde_json::from_str(text) {
        Ok(entries) => entries,
        Err(e) => {
            return Policy::Invalid(format!(
                "not a JSON array of {{skill, script, sha256}} objects: {e}"
            ))
        }
    };
    match (steps().check_entries)(&entries) {
        Ok(()) => Policy::Valid(entries),
        Err(why) => Policy::Invalid(why),
    }
}

/// Every hash is well-formed and no skill + script is listed twice.
fn check_entries(entries: &[Approval]) -> Result<(), String> {
    let hex_ok = steps().hex_ok;
    for (i, e) in entries.iter().enumerate() {
        if !hex_ok(&e.sha256) {
            return Err(format!("entry {i}: sha256 must be 64 lowercase hex digits"));
        }
        // spec: policy.duplicate
        if entries[..i]
            .iter()
            .any(|o| o.skill == e.skill && o.script == e.script)
        {
            return Err(format!(
                "entry {i}: {} {} is listed twice",
                e.skill, e.script
            ));
        }
    }
    Ok(())
}

/// 64 lowercase hex digits.
// spec: policy.format
fn hex_ok(sha256: &str) -> bool {
    sha256.len() == 64
        && sha256
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Text compared byte for byte (a skill id, a hash).
fn same(a: &str, b: &str) -> bool {
    a == b
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// The policy a (set) allowlist text is.
    parse: fn(&str) -> Policy,
    /// The checks across the entries of a well-formed array.
    check_entries: fn(&[Approval]) -> Result<(), String>,
    /// Whether a hash is well-formed.
    hex_ok: fn(&str) -> bool,
    /// Whether an entry's skill id is the called one.
    same_skill: fn(&str, &str) -> bool,
    /// Whether an entry's hash is the helper's.
    same_hash: fn(&str, &str) -> bool,
}

const STEPS: Steps = Steps {
    parse: parse_strictly,
    check_entries,
    hex_ok,
    same_skill: same,
    same_hash: same,
};

steps_in_force!();

/// The defects of this module (see `crate::mutants`).
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::PolicySkipsBadEntry) => &SKIPS_BAD_ENTRY,
            Some(Mutant::PolicyDuplicateFirstWins) => &DUPLICATES_ALLOWED,
            Some(Mutant::PolicyUppercaseHex) => &ANY_CASE_HEX,
            Some(Mutant::PolicySkillCaseInsensitive) => &ANY_CASE_SKILL,
            Some(Mutant::HashOfPrefix) => &HASH_PREFIX,
            _ => &STEPS,
        }
    }

    const SKIPS_BAD_ENTRY: Steps = Steps {
        parse: parse_skipping_bad_entries,
        ..STEPS
    };
    const DUPLICATES_ALLOWED: Steps = Steps {
        check_entries: check_hashes_only,
        ..STEPS
    };
    const ANY_CASE_HEX: Steps = Steps {
        hex_ok: hex_ok_any_case,
        same_hash: same_ignoring_ascii_case,
        ..STEPS
    };
    const ANY_CASE_SKILL: Steps = Steps {
        same_skill: same_ignoring_ascii_case,
        ..STEPS
    };
    const HASH_PREFIX: Steps = Steps {
        same_hash: |a, b| a.get(..4).is_some() && a.get(..4) == b.get(..4),
        ..STEPS
    };

    /// `policy-skips-bad-entry`: of an array, the entries that read are kept.
    fn parse_skipping_bad_entries(text: &str) -> Policy {
        match serde_json::from_str::<Vec<serde_json::Value>>(text) {
            Ok(values) => Policy::Valid(
                values
                    .into_iter()
                    .filter_map(|v| serde_json::from_value::<Approval>(v).ok())
                    .filter(|e| hex_ok(&e.sha256))
                    .collect(),
            ),
            Err(_) => parse_strictly(text),
        }
    }

    /// `policy-duplicate-first-wins`: only the hashes are checked.
    fn check_hashes_only(entries: &[Approval]) -> Result<(), String> {
        match entries.iter().position(|e| !hex_ok(&e.sha256)) {
            Some(i) => Err(format!("entry {i}: sha256 must be 64 lowercase hex digits")),
            None => Ok(()),
        }
    }

    /// `policy-uppercase-hex`: uppercase digits are well-formed too.
    fn hex_ok_any_case(sha256: &str) -> bool {
        sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit())
    }

    /// `policy-uppercase-hex`, `policy-skill-case-insensitive`.
    fn same_ignoring_ascii_case(a: &str, b: &str) -> bool {
        a.eq_ignore_ascii_case(b)
    }
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
