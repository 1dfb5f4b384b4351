//! Validation of the path text a model passes to the skill tools, before any filesystem access.
//!
//! SPEC.md `read.path.*`, `read.scope`, `read.extension` and `run.path`: a path is relative,
//! `/`-separated, without empty, `.` or `..` segments, without `\`, `:` or control characters; a
//! reference path is `SKILL.md` or lies under `references/` and ends in an allowed extension; a
//! script path lies under `scripts/` and ends in `.py`. Extensions are case-sensitive.
//!
//! A primitive: it uses no other module of the crate.

/// Which tool the path is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathScope {
    /// `SKILL.md` or `references/**` with a text extension.
    Reference,
    /// `scripts/**/*.py`.
    Script,
    /// Profile `hitl`, `run_skill_script`: any `**/*.py` inside the skill directory (SPEC.md
    /// `hitl.fence`, `hitl.python-only`).
    HitlScript,
    /// Profile `hitl`, `read_skill_file`: `references/**` or `assets/**`, any extension (SPEC.md
    /// `hitl.read-file`).
    HitlFile,
}

/// Extensions `skill_read_reference` accepts.
pub const REFERENCE_EXTENSIONS: [&str; 5] = [".md", ".txt", ".json", ".yaml", ".yml"];

/// Why a path text is rejected; every variant maps to `invalid_path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRule {
    Empty,
    Absolute,
    Backslash,
    Colon,
    Control,
    BadSegment,
    OutOfScope,
    Extension,
}

impl PathRule {
    pub fn explain(self) -> &'static str {
        match self {
            PathRule::Empty => "the path is empty",
            PathRule::Absolute => "the path must be relative",
            PathRule::Backslash => "backslashes are not allowed",
            PathRule::Colon => "`:` is not allowed",
            PathRule::Control => "control characters are not allowed",
            PathRule::BadSegment => "empty, `.` and `..` segments are not allowed",
            PathRule::OutOfScope => "the path is outside the files this tool may open",
            PathRule::Extension => "the file extension is not allowed",
        }
    }
}

/// Checks `path` and returns its segments.
pub fn validate(path: &str, scope: PathScope) -> Result<Vec<&str>, PathRule> {
    (steps().validate)(path, scope)
}

/// [`validate`]: the characters, the segments, then the scope.
fn check(path: &str, scope: PathScope) -> Result<Vec<&str>, PathRule> {
    check_characters(path)?;
    let segments = segments(path)?;
    check_scope(&segments, scope)?;
    Ok(segments)
}

/// The rules on the text as a whole.
fn check_characters(path: &str) -> Result<(), PathRule> {
    if path.is_empty() {
        return Err(PathRule::Empty);
    }
    // spec: read.path.relative
    if path.starts_with('/') {
        return Err(PathRule::Absolute);
    }
    // spec: read.path.backslash
    if path.contains('\\') {
        return Err(PathRule::Backslash);
    }
    // spec: read.path.colon
    if path.contains(':') {
        return Err(PathRule::Colon);
    }
    // spec: read.path.control
    if path.chars().any(char::is_control) {
        return Err(PathRule::Control);
    }
    Ok(())
}

/// The `/`-separated segments, none of them empty, `.` or `..`.
// spec: read.path.segments
fn segments(path: &str) -> Result<Vec<&str>, PathRule> {
    let segments: Vec<&str> = path.split('/').collect();
    if segments
        .iter()
        .any(|s| s.is_empty() || *s == "." || *s == "..")
    {
        return Err(PathRule::BadSegment);
    }
    Ok(segments)
}

/// Whether the file name `last` ends in the extension `ext` with something before it.
// spec: read.extension (case-sensitively)
fn has_extension(last: &str, ext: &str) -> bool {
    last.len() > ext.len() && last.ends_with(ext)
}

/// The scope and the extension of the tool the path is for.
fn check_scope(segments: &[&str], scope: PathScope) -> Result<(), PathRule> {
    let last = segments.last().copied().unwrap_or_default();
    match scope {
        // spec: read.scope
        PathScope::Reference => {
            let in_scope =
                segments == ["SKILL.md"] || (segments.len() >= 2 && segments[0] == "references");
            if !in_scope {
                return Err(PathRule::OutOfScope);
            }
            let has_extension = steps().has_extension;
            if !REFERENCE_EXTENSIONS
                .iter()
                .any(|ext| has_extension(last, ext))
            {
                return Err(PathRule::Extension);
            }
        }
        // spec: run.path (`scripts/**/*.py`)
        PathScope::Script => {
            if !(segments.len() >= 2 && segments[0] == "scripts") {
                return Err(PathRule::OutOfScope);
            }
            if !(last.len() > 3 && last.ends_with(".py")) {
                return Err(PathRule::Extension);
            }
        }
        // spec: hitl.python-only
        PathScope::HitlScript => {
            if !(last.len() > 3 && last.ends_with(".py")) {
                return Err(PathRule::Extension);
            }
        }
        // spec: hitl.read-file (`references/**` or `assets/**`)
        PathScope::HitlFile => {
            if !(segments.len() >= 2 && matches!(segments[0], "references" | "assets")) {
                return Err(PathRule::OutOfScope);
            }
        }
    }
    Ok(())
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// The whole check.
    validate: fn(&str, PathScope) -> Result<Vec<&str>, PathRule>,
    /// How an extension is compared.
    has_extension: fn(&str, &str) -> bool,
}

const STEPS: Steps = Steps {
    validate: check,
    has_extension,
};

steps_in_force!();

/// The defects of this module (see `crate::mutants`).
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::ReadBackslashAllowed) => &BACKSLASH_ALLOWED,
            Some(Mutant::ReadDotDotAfterNormalise) => &NORMALISED,
            Some(Mutant::ReadExtensionCaseInsensitive) => &EXTENSION_ANY_CASE,
            _ => &STEPS,
        }
    }

    const BACKSLASH_ALLOWED: Steps = Steps {
        validate: check_allowing_backslash,
        ..STEPS
    };
    const NORMALISED: Steps = Steps {
        validate: check_then_normalise,
        ..STEPS
    };
    const EXTENSION_ANY_CASE: Steps = Steps {
        has_extension: has_extension_any_case,
        ..STEPS
    };

    /// `read-backslash-allowed`: a backslash is checked as an ordinary character.
    fn check_allowing_backslash(path: &str, scope: PathScope) -> Result<Vec<&str>, PathRule> {
        check_characters(&path.replace('\\', "_"))?;
        let segments = segments(path)?;
        check_scope(&segments, scope)?;
        Ok(segments)
    }

    /// `read-dotdot-after-normalise`: the segments are not checked; the scope is, then `.` and
    /// `..` are resolved.
    fn check_then_normalise(path: &str, scope: PathScope) -> Result<Vec<&str>, PathRule> {
        check_characters(path)?;
        let segments: Vec<&str> = path.split('/').collect();
        check_scope(&segments, scope)?;
        let mut out: Vec<&str> = Vec::new();
        for s in segments {
            match s {
                "" | "." => {}
                ".." if out.last().is_some_and(|l| *l != "..") => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        Ok(out)
    }

    /// `read-extension-case-insensitive`.
    fn has_extension_any_case(last: &str, ext: &str) -> bool {
        last.len() > ext.len() && last.to_ascii_lowercase().ends_with(ext)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathScope::*;

    #[test]
    fn rules() {
        assert!(validate("SKILL.md", Reference).is_ok());
        assert!(validate("references/a/b.json", Reference).is_ok());
        assert!(validate("references/100%.md", Reference).is_ok());
        assert!(validate("references/café.md", Reference).is_ok());
        assert_eq!(
            validate("references/SKILL.md", Reference).map(|s| s.len()),
            Ok(2)
        );
        assert_eq!(validate("", Reference), Err(PathRule::Empty));
        assert_eq!(validate("/etc/x.md", Reference), Err(PathRule::Absolute));
        assert_eq!(
            validate("references\\x.md", Reference),
            Err(PathRule::Backslash)
        );
        assert_eq!(validate("http://x/a.md", Reference), Err(PathRule::Colon));
        assert_eq!(
            validate("references/a\u{0}.md", Reference),
            Err(PathRule::Control)
        );
        assert_eq!(
            validate("references/a\u{85}.md", Reference),
            Err(PathRule::Control)
        );
        assert_eq!(
            validate("references/../SKILL.md", Reference),
            Err(PathRule::BadSegment)
        );
        assert_eq!(
            validate("references//a.md", Reference),
            Err(PathRule::BadSegment)
        );
        assert_eq!(
            validate("references/a.md/", Reference),
            Err(PathRule::BadSegment)
        );
        assert_eq!(validate("./SKILL.md", Reference), Err(PathRule::BadSegment));
        assert_eq!(validate("skill.yml", Reference), Err(PathRule::OutOfScope));
        assert_eq!(validate("references", Reference), Err(PathRule::OutOfScope));
        assert_eq!(
            validate("scripts/a.md", Reference),
            Err(PathRule::OutOfScope)
        );
        assert_eq!(
            validate("references/a.MD", Reference),
            Err(PathRule::Extension)
        );
        assert_eq!(
            validate("references/.md", Reference),
            Err(PathRule::Extension)
        );
        assert!(validate("scripts/a.py", Script).is_ok());
        assert!(validate("scripts/x/y/a.py", Script).is_ok());
        assert_eq!(validate("scripts/a.sh", Script), Err(PathRule::Extension));
        assert_eq!(
            validate("references/a.py", Script),
            Err(PathRule::OutOfScope)
        );
        assert!(validate("tool.py", HitlScript).is_ok());
        assert!(validate("scripts/a/b.py", HitlScript).is_ok());
        for bad in ["x.sh", "x.PY", "x.pyc", ".py", "scripts/x"] {
            assert_eq!(validate(bad, HitlScript), Err(PathRule::Extension), "{bad}");
        }
        assert_eq!(
            validate("../other/x.py", HitlScript),
            Err(PathRule::BadSegment)
        );
        assert!(validate("assets/t/a.html", HitlFile).is_ok());
        assert!(validate("references/data.csv", HitlFile).is_ok());
        for bad in ["SKILL.md", "scripts/x.py", "references", "assetsx/a"] {
            assert_eq!(validate(bad, HitlFile), Err(PathRule::OutOfScope), "{bad}");
        }
    }
}
