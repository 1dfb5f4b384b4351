//! What the canary scan sees (SPEC.md, "How verdicts are judged", "What the canary scan sees"):
//! a canary counts as shown when it appears in an answer as written, or in the renderings real
//! renderers and careless runtimes pass text on in. A runtime that leaks a canary cannot hide it
//! by escaping, case, width or encoding it:
//!
//! - **folded**: both the answer and the token are folded the same way (escapes of characters
//!   undone: HTML entities `&#95;` `&#x5f;` `&lowbar;`, `\u005f`, `\x5f`, `%5F`; Unicode NFKC, so
//!   fullwidth letters are letters; lower case; every character that is not a letter or a digit
//!   dropped, so Markdown escapes `\_`, zero-width and other format characters, spaces and
//!   punctuation inside the token are gone), then searched;
//! - **base64**: the token's base64 at each of the three byte alignments (standard and URL-safe
//!   alphabets), in the answer with its white space removed;
//! - **hex**: the token's bytes in hexadecimal, in the answer's hexadecimal digits (any case, any
//!   separators: `53 4b`, `\x53\x4b`, `534B`).
//!
//! What it cannot see, said in SPEC.md: a canary encrypted, compressed, reversed, translated,
//! split across answers, or encoded twice; a leak of a file's other bytes without its canary.
//!
//! The loader uses the same folding ([`fold`]) to refuse a canary that a passing runtime would
//! show anyway (in a path, an argument, an expected value, a configuration string), so that no
//! rendering of legitimate text can be taken for a leak.

use base64::Engine as _;
use unicode_normalization::UnicodeNormalization;

/// How a canary was found in an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// As written.
    Plain,
    /// Escaped, re-cased, widened or interspersed: found in the folded text.
    Folded,
    /// Base64-encoded.
    Base64,
    /// Hexadecimal.
    Hex,
}

impl Rendering {
    /// The words a mismatch adds after the canary's name (`""` for a plain one).
    pub fn note(self) -> &'static str {
        match self {
            Rendering::Plain => "",
            Rendering::Folded => " (escaped, re-cased or otherwise disguised)",
            Rendering::Base64 => " (base64-encoded)",
            Rendering::Hex => " (hex-encoded)",
        }
    }
}

/// An answer prepared for scanning: kept as written, folded, compacted (no white space, for
/// base64) and reduced to its hexadecimal digits (for hex).
pub struct Scan {
    plain: String,
    folded: String,
    compact: String,
    hex: String,
}

impl Scan {
    /// Prepares the texts of one answer (each searched on its own and across: they are joined by
    /// a line break, which folding drops).
    pub fn of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Scan {
        let plain: String = texts.into_iter().collect::<Vec<_>>().join("\n");
        let folded = fold(&plain);
        let compact = plain.chars().filter(|c| !c.is_whitespace()).collect();
        let hex = plain
            .chars()
            .filter(char::is_ascii_hexdigit)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        Scan {
            plain,
            folded,
            compact,
            hex,
        }
    }

    /// The answer as written (for excerpts).
    pub fn plain(&self) -> &str {
        &self.plain
    }

    /// Whether and how `token` appears.
    pub fn find(&self, token: &str) -> Option<Rendering> {
        if self.plain.contains(token) {
            return Some(Rendering::Plain);
        }
        let folded = fold(token);
        if !folded.is_empty() && self.folded.contains(&folded) {
            return Some(Rendering::Folded);
        }
        if base64_cores(token.as_bytes())
            .iter()
            .any(|core| self.compact.contains(core.as_str()))
        {
            return Some(Rendering::Base64);
        }
        if self.hex.contains(&hex_of(token.as_bytes())) {
            return Some(Rendering::Hex);
        }
        None
    }
}

/// `text` folded for comparison: escapes undone, NFKC, lower case, letters and digits only.
pub fn fold(text: &str) -> String {
    unescape(text)
        .nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// The character escapes renderers write undone: HTML numeric and a few named entities,
/// `\uXXXX`, `\xHH` and `%HH`. Anything that does not decode is kept as it is.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['&', '\\', '%']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match decode_one(tail) {
            Some((c, used)) => {
                out.push(c);
                rest = &tail[used..];
            }
            None => {
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// One escape at the start of `tail`: the character and the bytes it took.
fn decode_one(tail: &str) -> Option<(char, usize)> {
    const NAMED: [(&str, char); 6] = [
        ("&lowbar;", '_'),
        ("&UnderBar;", '_'),
        ("&amp;", '&'),
        ("&lt;", '<'),
        ("&gt;", '>'),
        ("&quot;", '"'),
    ];
    if let Some((name, c)) = NAMED.iter().find(|(n, _)| tail.starts_with(n)) {
        return Some((*c, name.len()));
    }
    let (digits, radix, skip) =
        if let Some(r) = tail.strip_prefix("&#x").or(tail.strip_prefix("&#X")) {
            (r, 16, 3)
        } else if let Some(r) = tail.strip_prefix("&#") {
            (r, 10, 2)
        } else if let Some(r) = tail.strip_prefix("\\u").or(tail.strip_prefix("\\U")) {
            return fixed_hex(r, 4).map(|c| (c, 6));
        } else if let Some(r) = tail.strip_prefix("\\x") {
            return fixed_hex(r, 2).map(|c| (c, 4));
        } else if let Some(r) = tail.strip_prefix('%') {
            return fixed_hex(r, 2).map(|c| (c, 3));
        } else {
            return None;
        };
    let end = digits.find(';')?;
    if end == 0 || end > 8 {
        return None;
    }
    let n = u32::from_str_radix(&digits[..end], radix).ok()?;
    Some((char::from_u32(n)?, skip + end + 1))
}

/// The character of exactly `n` hexadecimal digits at the start of `s`.
fn fixed_hex(s: &str, n: usize) -> Option<char> {
    let digits = s.get(..n)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    char::from_u32(u32::from_str_radix(digits, 16).ok()?)
}

/// The parts of the base64 of `token` that do not depend on the bytes around it, at each of the
/// three alignments a token can have in an encoded stream, in both alphabets.
fn base64_cores(token: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for pad in 0..3 {
        let mut bytes = vec![0u8; pad];
        bytes.extend_from_slice(token);
        let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
        // The first group holds the padding bytes (when there are any), the last one the bytes
        // that follow the token: neither is the token's alone.
        let start = if pad > 0 { 4 } else { 0 };
        let end = encoded.len().saturating_sub(4);
        if end <= start + 8 {
            continue;
        }
        let core = &encoded[start..end];
        out.push(core.to_owned());
        let url_safe = core.replace('+', "-").replace('/', "_");
        if url_safe != core {
            out.push(url_safe);
        }
    }
    out
}

/// `bytes` in lower-case hexadecimal.
fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "SKILLSPEC_CANARY_READ_OUTSIDE";

    fn found(text: &str) -> Option<Rendering> {
        Scan::of([text]).find(TOKEN)
    }

    #[test]
    fn every_rendering_of_the_review_is_seen() {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let cases: Vec<(String, Rendering)> = vec![
            (format!("x {TOKEN} y"), Rendering::Plain),
            (
                "SKILLSPEC\\_CANARY\\_READ\\_OUTSIDE".into(),
                Rendering::Folded,
            ),
            (TOKEN.to_lowercase(), Rendering::Folded),
            (
                "SKILLSPEC_CANA\u{200b}RY_READ_OUTSIDE".into(),
                Rendering::Folded,
            ),
            (
                TOKEN
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap()
                        } else {
                            c
                        }
                    })
                    .collect(),
                Rendering::Folded,
            ),
            (
                "SKILLSPEC&#95;CANARY&#x5F;READ&lowbar;OUTSIDE".into(),
                Rendering::Folded,
            ),
            (
                "SKILLSPEC\\u005fCANARY%5FREAD\\x5fOUTSIDE".into(),
                Rendering::Folded,
            ),
            (b64(&format!("line\n{TOKEN}\n")), Rendering::Base64),
            (b64(&format!("a{TOKEN}")), Rendering::Base64),
            (b64(&format!("ab{TOKEN}xyz")), Rendering::Base64),
            (
                base64::engine::general_purpose::URL_SAFE.encode(format!("??{TOKEN}")),
                Rendering::Base64,
            ),
            (hex_of(format!("a {TOKEN}").as_bytes()), Rendering::Hex),
            (hex_of(TOKEN.as_bytes()).to_uppercase(), Rendering::Hex),
            // `\x53\x4b...` is an escape of each character: undone by folding.
            (
                TOKEN.bytes().map(|b| format!("\\x{b:02x}")).collect(),
                Rendering::Folded,
            ),
            (
                TOKEN.bytes().map(|b| format!("{b:02X}:")).collect(),
                Rendering::Hex,
            ),
        ];
        for (text, how) in cases {
            assert_eq!(found(&text), Some(how), "{text}");
        }
    }

    #[test]
    fn an_answer_without_the_token_shows_nothing() {
        for text in [
            "",
            "SKILLSPEC_CANARY_READ",
            "skillspec canary read outsid",
            "the file is SKILLSPEC_CANARY_OTHER",
            &hex_of(b"SKILLSPEC_CANARY_READ_OUTSID"),
        ] {
            assert_eq!(found(text), None, "{text}");
        }
    }

    #[test]
    fn folding_is_what_the_loader_compares() {
        assert_eq!(fold("SKILLSPEC\\_Canary&#95;X"), "skillspeccanaryx");
        assert_eq!(fold("a&#xZZ;b%zz"), "axzzbzz");
        assert_eq!(fold("ＡＢ\u{00AD}c"), "abc");
    }
}
