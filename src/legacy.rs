//! The legacy `skill.yml` line-based parser, used when skill.yml is not strict YAML.
//!
//! Defined precisely in SPEC.md (`discovery.legacy.fallback`): the text is split on `\n`; each
//! line is trimmed of white space ([`crate::frontmatter::is_space`], so CR and indentation
//! vanish); blank lines and lines whose
//! first character is `#` are skipped; the key is the text before the first `:`, trimmed, and a
//! line with no `:` or with `:` first is skipped; the value is the rest of the line trimmed, with
//! one pair of matching surrounding `"` or `'` removed; an inline `# comment` stays part of the
//! value; a later duplicate key replaces an earlier one.
//!
//! [`plain_metadata`] is a shortcut for the commonest `skill.yml`, a few `key: value` lines, which
//! gives what the strict YAML reader would (`discovery.legacy.yaml`) without running it, and
//! declines every text where that is not certain.

use crate::frontmatter::is_space;

/// Name and description of a `skill.yml` made only of lines `key: value` (and empty lines, and
/// lines starting with `#`), where the strict YAML reader is certain to read a mapping of string
/// values equal to the text after each `: `, with trailing spaces removed; `None` (the caller
/// runs the strict reader) for every other text. Certain because each line is printable ASCII
/// with no tab or CR; a key is a lowercase word (`[a-z][a-z0-9_-]*`, at most 64 bytes, at column
/// 0, never repeated) followed by `:` and at least one space; a value starts with an ASCII letter
/// (no indicator, number, sign or `.`), is none of the core schema's null and boolean words, and
/// holds no `:` and no `#` (no nested mapping, no comment). The tests compare it with the strict
/// reader on every text it accepts.
// spec: discovery.legacy.yaml
pub fn plain_metadata(text: &str) -> Option<(Option<String>, Option<String>)> {
    let (mut name, mut description) = (None, None);
    let mut keys: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        if line.is_empty() || line.starts_with('#') {
            if !line.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                return None;
            }
            continue;
        }
        let (key, rest) = line.split_once(':')?;
        let word = key.len() <= 64
            && key.starts_with(|c: char| c.is_ascii_lowercase())
            && key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        let value = rest.strip_prefix(' ')?.trim_matches(' ');
        let plain = value.starts_with(|c: char| c.is_ascii_alphabetic())
            && value
                .bytes()
                .all(|b| (0x20..0x7f).contains(&b) && b != b':' && b != b'#')
            && !matches!(
                value,
                "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
            );
        if !word || !plain || keys.contains(&key) {
            return None;
        }
        keys.push(key);
        match key {
            "name" => name = Some(value.to_owned()),
            "description" => description = Some(value.to_owned()),
            _ => {}
        }
    }
    if keys.is_empty() {
        return None;
    }
    Some((name, description))
}

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
    use crate::yaml::{self, Value};

    /// What the strict reader gives for `text` when it reads a mapping: (name, description), a
    /// value that is not a string being absent.
    fn strict(text: &str) -> Option<(Option<String>, Option<String>)> {
        let doc = yaml::parse(text).ok()?;
        if doc.root != Value::Mapping {
            return None;
        }
        let get = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
        Some((get("name"), get("description")))
    }

    /// Wherever the shortcut answers, the strict reader reads a mapping and answers the same.
    fn agrees(text: &str) -> bool {
        match plain_metadata(text) {
            None => false,
            Some(fast) => {
                assert_eq!(Some(fast), strict(text), "the shortcut differs on {text:?}");
                true
            }
        }
    }

    #[test]
    fn the_shortcut_takes_plain_key_value_lines() {
        for text in [
            "name: skill 1\ndescription: Legacy guide number 1 for the bench\ncategory: bench\n",
            "name: a\n",
            "name: a",
            "# a comment\n\nname: one two  \ndescription: It's \"fine\", [really] {ok} & *so* !\n",
            "description:    spaced out\nother_key-2: x\n",
            "name: nullable\ndescription: Truest\n",
        ] {
            assert!(agrees(text), "declined {text:?}");
        }
    }

    #[test]
    fn the_shortcut_declines_what_it_cannot_be_sure_of() {
        for text in [
            "",
            "\n\n",
            "# only a comment\n",
            "name: true\n",
            "name: Null\n",
            "name: 'quoted'\n",
            "name: \"quoted\"\n",
            "name: 1.0\n",
            "name: .inf\n",
            "name: -dash\n",
            "name: Use when: x\n",
            "name: a # comment\n",
            "name: a\r\n",
            "name:\ta\n",
            "name:a\n",
            "name:\n",
            "name: \n",
            " name: a\n",
            "name: a\n  continued\n",
            "name: a\nname: b\n",
            "Name: a\n",
            "---\nname: a\n",
            "name: caf\u{e9}\n",
            "name: a\n# caf\u{e9}\n",
            "name: |\n  block\n",
            "- name: a\n",
        ] {
            assert_eq!(plain_metadata(text), None, "took {text:?}");
        }
    }

    /// xorshift64*: the same texts on every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        }

        /// The first of `list` 7 times in 8, else any of it.
        fn mostly_first(&mut self, list: &[&'static str]) -> &'static str {
            if self.below(8) == 0 {
                list[self.below(list.len())]
            } else {
                list[0]
            }
        }
    }

    /// Texts built from fragments that sit near every edge of the rules: the shortcut must agree
    /// with the strict reader on each one it takes, and take a good share of them.
    #[test]
    fn the_shortcut_agrees_with_the_strict_reader_on_generated_texts() {
        const KEYS: [&str; 10] = [
            "name",
            "description",
            "category",
            "null",
            "true",
            "a-b",
            "x_1",
            "Name",
            "n\u{e9}",
            "#k",
        ];
        const SEPARATORS: [&str; 6] = [": ", ":", ":  ", " : ", ":\t", ": \t"];
        const VALUES: [&str; 32] = [
            "skill one",
            "true",
            "True",
            "TRUE",
            "null",
            "yes",
            "no",
            "a: b",
            "a #b",
            "a#b",
            "x:y",
            "'q'",
            "\"q\"",
            "1.0",
            ".inf",
            "-a",
            "a  ",
            "caf\u{e9}",
            "[a]",
            "a,b",
            "{a",
            "&a",
            "*a",
            "!a",
            "|",
            ">",
            "%a",
            "@a",
            "`a",
            "a\u{feff}",
            "Use it",
            "a\\b",
        ];
        const PREFIXES: [&str; 5] = ["", "", "", " ", "\t"];
        const ENDS: [&str; 5] = ["\n", "\n", "\n", "\r\n", "\n\n"];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut taken = 0;
        let total = 20_000;
        for _ in 0..total {
            let mut text = String::new();
            for _ in 0..1 + rng.below(4) {
                if rng.below(8) == 0 {
                    text.push_str("# note: x\n");
                }
                text.push_str(rng.mostly_first(&PREFIXES));
                let key = if rng.below(2) == 0 {
                    KEYS[rng.below(3)]
                } else {
                    rng.mostly_first(&KEYS[3..])
                };
                text.push_str(key);
                text.push_str(rng.mostly_first(&SEPARATORS));
                text.push_str(rng.mostly_first(&VALUES));
                text.push_str(rng.mostly_first(&ENDS));
            }
            if rng.below(4) == 0 {
                text.pop();
            }
            taken += usize::from(agrees(&text));
        }
        assert!(
            taken > total / 5,
            "the shortcut took only {taken} of {total}"
        );
    }

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
