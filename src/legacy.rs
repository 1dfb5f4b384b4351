//! The legacy `skill.yml` line-based parser, used when skill.yml is not strict YAML.
//!
//! Defined precisely in SPEC.md (`discovery.legacy.fallback`): the text is split on `\n`; each
//! line is trimmed of white space ([`crate::frontmatter::is_space`], so CR and indentation
//! vanish); blank lines and lines whose
//! first character is `#` are skipped; the key is the text before the first `:`, trimmed, and a
//! line with no `:` or with `:` first is skipped; the value is the rest of the line trimmed, with
//! one pair of matching surrounding `"` or `'` removed; an inline `# comment` stays part of the
//! value; a later duplicate key replaces an earlier one.

use crate::frontmatter::is_space;

/// Parses `text` line by line into key/value pairs (later duplicates replace earlier ones,
/// keeping the position of the first).
// spec: discovery.legacy.fallback
pub fn parse_lines(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for raw in text.split('\n') {
        let line = raw.trim_matches(is_space);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(colon) = line.find(':') else {
            continue;
        };
        if colon == 0 {
            continue;
        }
        let key = line[..colon].trim_matches(is_space).to_owned();
        let value = unquote(line[colon + 1..].trim_matches(is_space)).to_owned();
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => out.push((key, value)),
        }
    }
    out
}

fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(text: &str, key: &str) -> Option<String> {
        parse_lines(text)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    #[test]
    fn line_rules() {
        assert_eq!(
            get("description: Use when: x", "description").as_deref(),
            Some("Use when: x")
        );
        assert_eq!(get("name:foo", "name").as_deref(), Some("foo"));
        assert_eq!(
            get("  name: \"quoted\"  \r", "name").as_deref(),
            Some("quoted")
        );
        assert_eq!(get("name: 'single'", "name").as_deref(), Some("single"));
        assert_eq!(
            get("name: \"mismatch'", "name").as_deref(),
            Some("\"mismatch'")
        );
        assert_eq!(
            get("name: a # not a comment", "name").as_deref(),
            Some("a # not a comment")
        );
        assert_eq!(get("# name: hidden", "name"), None);
        assert_eq!(get(": nokey", ""), None);
        assert_eq!(get("name: a\nname: b", "name").as_deref(), Some("b"));
        assert_eq!(get("name: \"\"", "name").as_deref(), Some(""));
        assert_eq!(
            get("  name \t: spaced  ", "name").as_deref(),
            Some("spaced")
        );
        assert_eq!(get("name: x\u{feff}\u{85}", "name").as_deref(), Some("x"));
        assert_eq!(get("name: \"", "name").as_deref(), Some("\""));
    }
}
