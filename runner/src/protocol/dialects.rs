//! The dialects an implementation may claim (SPEC.md, "Dialects"; PROTOCOL.md, "Dialects"): the
//! closed list of rule sets the suite knows ([`DIALECTS`], each with its version and modes) and
//! the reading of `started.implementation.dialects` ([`claims`]). A dialect is data here: a name,
//! a version, its modes; its clauses live in `cases::clauses`, its cases in `spec-cases/`. The
//! runner never branches on a dialect's name.

use serde::{Deserialize, Serialize};

/// One rule set of the suite.
#[derive(Debug, PartialEq, Eq)]
pub struct Dialect {
    /// The name an implementation claims (`agentskills`).
    pub name: &'static str,
    /// The version of the rule set the suite's cases pin.
    pub version: &'static str,
    /// What it is, for reports.
    pub title: &'static str,
    /// The modes an implementation of the dialect declares one of (none: no modes).
    pub modes: &'static [&'static str],
    /// The need an UNSUPPORTED case of this dialect reports: `dialect NAME VERSION`.
    pub need: &'static str,
    /// For each mode, the need an UNSUPPORTED case written for that mode reports.
    pub mode_needs: &'static [&'static str],
}

/// The dialect of an implementation that claims none.
pub const DEFAULT: &str = "portable-skills";

/// Every dialect of the suite.
pub const DIALECTS: &[Dialect] = &[
    Dialect {
        name: "portable-skills",
        version: "1",
        title: "Portable Skills",
        modes: &[],
        need: "dialect portable-skills 1",
        mode_needs: &[],
    },
    Dialect {
        name: "agentskills",
        version: "2026-08",
        title: "the open Agent Skills standard (agentskills.io)",
        modes: &["strict", "lenient"],
        need: "dialect agentskills 2026-08",
        mode_needs: &["mode strict", "mode lenient"],
    },
];

/// The dialect named `name`.
pub fn lookup(name: &str) -> Option<&'static Dialect> {
    DIALECTS.iter().find(|d| d.name == name)
}

impl Dialect {
    /// The mode named `mode`, as the static word of this dialect.
    pub fn mode(&self, mode: &str) -> Option<&'static str> {
        self.modes.iter().copied().find(|m| *m == mode)
    }

    /// The need of a case written for `mode`.
    pub fn mode_need(&self, mode: &str) -> Option<&'static str> {
        self.modes
            .iter()
            .position(|m| *m == mode)
            .and_then(|i| self.mode_needs.get(i).copied())
    }
}

/// One dialect an implementation claims, as sent: `{"name","version","mode"?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

impl Claim {
    /// Whether this claim covers cases of `dialect` (same name and version).
    pub fn covers(&self, dialect: &Dialect) -> bool {
        self.name == dialect.name && self.version == dialect.version
    }

    /// `agentskills 2026-08 (lenient)`.
    pub fn label(&self) -> String {
        match &self.mode {
            Some(m) => format!("{} {} ({m})", self.name, self.version),
            None => format!("{} {}", self.name, self.version),
        }
    }
}

/// The claim of an implementation that declares no dialect.
pub fn default_claims() -> Vec<Claim> {
    vec![Claim {
        name: DEFAULT.into(),
        version: "1".into(),
        mode: None,
    }]
}

/// Reads `dialects` as sent (absent: `portable-skills`). Each claim names a dialect once; for a
/// dialect the suite knows, a mode is given exactly when it has modes, and is one of them. A
/// name or version the suite does not know is kept (its cases do not exist here, so nothing runs
/// for it) and shown in the report.
pub fn claims(sent: Option<Vec<Claim>>) -> Result<Vec<Claim>, String> {
    let Some(sent) = sent else {
        return Ok(default_claims());
    };
    if sent.is_empty() {
        return Err("`dialects` must not be empty (leave it out to claim portable-skills)".into());
    }
    let mut out: Vec<Claim> = Vec::new();
    for c in sent {
        if c.name.is_empty() || c.name.len() > 64 || c.version.is_empty() || c.version.len() > 64 {
            return Err(format!(
                "a dialect claim needs a name and a version of 1 to 64 bytes, got {}",
                c.label().escape_debug()
            ));
        }
        if out.iter().any(|o| o.name == c.name) {
            return Err(format!(
                "dialect `{}` is claimed twice",
                c.name.escape_debug()
            ));
        }
        if let Some(d) = lookup(&c.name) {
            match (&c.mode, d.modes.is_empty()) {
                (None, false) => {
                    return Err(format!(
                        "dialect `{}` needs a `mode`: one of {}",
                        d.name,
                        d.modes.join(", ")
                    ))
                }
                (Some(m), false) if d.mode(m).is_none() => {
                    return Err(format!(
                        "dialect `{}` has no mode `{}` (its modes: {})",
                        d.name,
                        m.escape_debug(),
                        d.modes.join(", ")
                    ))
                }
                (Some(_), true) => {
                    return Err(format!("dialect `{}` has no modes", d.name));
                }
                _ => {}
            }
        }
        out.push(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(name: &str, version: &str, mode: Option<&str>) -> Claim {
        Claim {
            name: name.into(),
            version: version.into(),
            mode: mode.map(str::to_owned),
        }
    }

    #[test]
    fn no_claim_is_portable_skills() {
        let c = claims(None).unwrap();
        assert_eq!(c.len(), 1);
        assert!(c[0].covers(lookup("portable-skills").unwrap()));
    }

    #[test]
    fn modes_are_checked_against_the_dialect() {
        assert!(claims(Some(vec![claim("agentskills", "2026-08", Some("strict"))])).is_ok());
        for bad in [
            vec![claim("agentskills", "2026-08", None)],
            vec![claim("agentskills", "2026-08", Some("loose"))],
            vec![claim("portable-skills", "1", Some("strict"))],
            vec![
                claim("agentskills", "2026-08", Some("strict")),
                claim("agentskills", "2026-08", Some("lenient")),
            ],
            vec![claim("", "1", None)],
            vec![],
        ] {
            assert!(claims(Some(bad.clone())).is_err(), "{bad:?}");
        }
        // An unknown dialect or version is kept; it covers no dialect of the suite.
        let kept = claims(Some(vec![claim("agentskills", "2025-01", Some("strict"))])).unwrap();
        assert!(!kept[0].covers(lookup("agentskills").unwrap()));
    }

    #[test]
    fn every_mode_has_its_need() {
        for d in DIALECTS {
            assert_eq!(d.modes.len(), d.mode_needs.len(), "{}", d.name);
            assert_eq!(d.need, format!("dialect {} {}", d.name, d.version));
            for m in d.modes {
                assert_eq!(d.mode_need(m).unwrap(), format!("mode {m}"));
            }
        }
    }
}
