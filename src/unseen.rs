//! Characters a reader does not see: what the `hitl` profile refuses in the text of a question
//! (`hitl.confirm`: what the human reads is what runs), and what the runner escapes wherever it
//! prints text from outside (a skill's name, an adapter's message).
//!
//! One predicate, [`is_unseen`]: a format character (General Category Cf), the line and
//! paragraph separators (Zl, Zp), or a default-ignorable code point of another category
//! (Unicode's `Default_Ignorable_Code_Point`, DerivedCoreProperties.txt): the Hangul fillers
//! U+115F, U+1160, U+3164 and U+FFA0, which are letters (Lo) that render as nothing; the
//! combining grapheme joiner U+034F, the variation selectors and the Khmer and Mongolian
//! inherent vowels and selectors (Mn), which change nothing visible on their own; and the
//! unassigned code points the standard reserves as ignorable (U+2065, U+FFF0 to U+FFF8, the
//! plane-14 block U+E0000 to U+E0FFF). A renderer shows none of them, so two texts differing
//! only in them read the same.

use unicode_general_category::{get_general_category, GeneralCategory as G};

/// The default-ignorable code points outside General Category Cf, as inclusive ranges (Unicode
/// 16.0, DerivedCoreProperties.txt, `Default_Ignorable_Code_Point`; the Cf members of that
/// property are covered by the category, U+180E among them).
const IGNORABLE_NOT_FORMAT: &[(char, char)] = &[
    ('\u{034f}', '\u{034f}'),   // COMBINING GRAPHEME JOINER (Mn)
    ('\u{115f}', '\u{1160}'),   // HANGUL CHOSEONG and JUNGSEONG FILLER (Lo)
    ('\u{17b4}', '\u{17b5}'),   // KHMER VOWEL INHERENT AQ, AA (Mn)
    ('\u{180b}', '\u{180d}'),   // MONGOLIAN FREE VARIATION SELECTORS ONE to THREE (Mn)
    ('\u{180f}', '\u{180f}'),   // MONGOLIAN FREE VARIATION SELECTOR FOUR (Mn)
    ('\u{2065}', '\u{2065}'),   // unassigned, reserved as ignorable
    ('\u{3164}', '\u{3164}'),   // HANGUL FILLER (Lo)
    ('\u{fe00}', '\u{fe0f}'),   // VARIATION SELECTORS 1 to 16 (Mn)
    ('\u{ffa0}', '\u{ffa0}'),   // HALFWIDTH HANGUL FILLER (Lo)
    ('\u{fff0}', '\u{fff8}'),   // unassigned, reserved as ignorable
    ('\u{e0000}', '\u{e0fff}'), // tags (Cf), VARIATION SELECTORS 17 to 256 (Mn), reserved
];

/// Whether `c` is invisible text: a format character (Cf), a line or paragraph separator
/// (U+2028, U+2029), or another default-ignorable code point (see the module's documentation).
/// Control characters (Cc) are not included: callers treat those by their own rule.
pub fn is_unseen(c: char) -> bool {
    matches!(
        get_general_category(c),
        G::Format | G::LineSeparator | G::ParagraphSeparator
    ) || IGNORABLE_NOT_FORMAT
        .iter()
        .any(|&(first, last)| (first..=last).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_of_every_kind_are_unseen() {
        for c in [
            '\u{00ad}',
            '\u{061c}',
            '\u{180e}',
            '\u{200b}',
            '\u{200d}',
            '\u{200f}',
            '\u{202e}',
            '\u{2060}',
            '\u{2064}',
            '\u{2066}',
            '\u{2069}',
            '\u{feff}',
            '\u{e0041}',
            '\u{2028}',
            '\u{2029}',
            '\u{034f}',
            '\u{115f}',
            '\u{1160}',
            '\u{3164}',
            '\u{ffa0}',
            '\u{fe0f}',
            '\u{fe00}',
            '\u{180b}',
            '\u{17b4}',
            '\u{2065}',
            '\u{fff0}',
            '\u{e0100}',
            '\u{e01ef}',
        ] {
            assert!(is_unseen(c), "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn visible_text_is_seen() {
        for c in [
            'a',
            ' ',
            '\u{00a0}',
            'é',
            '\u{0301}',
            '日',
            'ש',
            '\u{1161}',
            '\u{3165}',
            '\u{fe10}',
            '\u{2800}',
            '\u{1f600}',
            '\u{ffa1}',
            '\u{fffc}',
            '\u{fffd}',
            '\n',
            '\u{7f}',
        ] {
            assert!(!is_unseen(c), "U+{:04X}", u32::from(c));
        }
    }
}
