//! Splitting a portable SKILL.md into its YAML frontmatter and Markdown body.
//!
//! The rules (SPEC.md, `discovery.portable` and `discovery.malformed`): one optional UTF-8 byte
//! order mark; the first line is `---` (trailing spaces and tabs allowed, LF or CRLF); the
//! frontmatter ends at the next line that is `---` in the same sense (`...` does not close it);
//! the body is everything after the closing line, trimmed of surrounding white space.

/// Why a SKILL.md has no usable frontmatter block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontmatterError {
    /// The first line is not a `---` delimiter.
    Missing,
    /// No closing `---` line.
    Unterminated,
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FrontmatterError::Missing => "SKILL.md does not start with a `---` frontmatter line",
            FrontmatterError::Unterminated => "frontmatter has no closing `---` line",
        })
    }
}

/// A SKILL.md split at its delimiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    pub frontmatter: &'a str,
    pub body: &'a str,
}

/// Whether a line (without its `\n`) is a delimiter: `---`, then spaces and tabs, then at most
/// the `\r` of a CRLF line end. A `\r` anywhere else (`---\r \n`) is not a line end.
// spec: discovery.portable (the delimiter line)
fn is_delimiter(line: &str) -> bool {
    let line = line.strip_suffix('\r').unwrap_or(line);
    line.trim_end_matches([' ', '\t']) == "---"
}

/// White space in the sense of SPEC.md (`discovery.portable.non-string`): the Unicode
/// `White_Space` characters (what Rust's `char::is_whitespace` tests, including U+0085 NEL) and
/// U+FEFF (ZERO WIDTH NO-BREAK SPACE, the byte order mark, which JavaScript's `trim` also
/// removes). The information separators U+001C–U+001F are not white space here (Python's
/// `str.isspace` says they are; Unicode and JavaScript say they are not).
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// Whether `s` is empty or only white space (see [`is_space`]).
pub fn is_blank(s: &str) -> bool {
    s.chars().all(is_space)
}

/// Strips one leading UTF-8 byte order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Splits `text` into frontmatter and body.
// spec: discovery.portable (the delimiters)
// spec: discovery.portable.body (the body, trimmed)
pub fn split(text: &str) -> Result<Split<'_>, FrontmatterError> {
    let text = strip_bom(text);
    let (first, rest) = match text.split_once('\n') {
        Some((first, rest)) => (first, rest),
        None => (text, ""),
    };
    if !is_delimiter(first) {
        return Err(FrontmatterError::Missing);
    }
    let mut offset = 0;
    while offset <= rest.len() {
        let line_end = rest[offset..].find('\n').map(|i| offset + i);
        let line = &rest[offset..line_end.unwrap_or(rest.len())];
        if is_delimiter(line) {
            let body_start = line_end.map_or(rest.len(), |e| e + 1);
            return Ok(Split {
                frontmatter: &rest[..offset],
                body: rest[body_start..].trim(),
            });
        }
        match line_end {
            Some(e) => offset = e + 1,
            None => break,
        }
    }
    Err(FrontmatterError::Unterminated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters() {
        let s = split("---\nname: a\n---\n\nBody\n").unwrap();
        assert_eq!(s.frontmatter, "name: a\n");
        assert_eq!(s.body, "Body");
        let s = split("\u{feff}--- \r\nname: a\r\n---\t\r\nBody").unwrap();
        assert_eq!(s.frontmatter, "name: a\r\n");
        assert_eq!(s.body, "Body");
        assert_eq!(split("---\nname: a\n---").unwrap().body, "");
        assert_eq!(split("---\n---\n").unwrap().frontmatter, "");
        assert_eq!(
            split("---\nname: a\n...\n"),
            Err(FrontmatterError::Unterminated)
        );
        assert_eq!(split("name: a\n---\n"), Err(FrontmatterError::Missing));
        assert_eq!(split(" ---\n---\n"), Err(FrontmatterError::Missing));
        assert_eq!(split("----\n---\n"), Err(FrontmatterError::Missing));
        assert_eq!(split(""), Err(FrontmatterError::Missing));
        // A CR is a line end only right before the LF.
        assert_eq!(
            split("---\r \nname: a\n---\n"),
            Err(FrontmatterError::Missing)
        );
        assert_eq!(
            split("---\r\r\nname: a\n---\n"),
            Err(FrontmatterError::Missing)
        );
        assert_eq!(
            split("---\nname: a\n---\r\t\nBody"),
            Err(FrontmatterError::Unterminated)
        );
        assert_eq!(split("---\t \r\nname: a\n--- \r").unwrap().body, "");
    }

    #[test]
    fn blank_values() {
        for blank in [
            "",
            " \t\r\n",
            "\u{feff}",
            "\u{85}",
            "\u{a0}\u{3000}",
            "\u{2028}\u{205f}",
        ] {
            assert!(is_blank(blank), "{blank:?}");
        }
        for text in ["\u{1c}", "\u{1f}", "\u{200b}", "\u{180e}", " x ", "\u{0}"] {
            assert!(!is_blank(text), "{text:?}");
        }
    }
}
