//! Character classes for regex-lite patterns that must mean what the `regex` crate's Unicode
//! `\d` and `\s` meant (regex-lite's are ASCII): a number on a page or in a command may be
//! written in other digits (Arabic-Indic `٣`, Devanagari `३`, fullwidth `３`), and text
//! copied from a page is often spaced with a no-break space.
//!
//! Each is the inside of a bracketed class: `[{DIGIT}]`, `[^{SPACE}'"]` (with no literal space,
//! which verbose mode, `(?x)`, would drop).

/// Unicode's decimal digits (general category Nd, Unicode 16): what `\d` is in the `regex`
/// crate.
pub(crate) const DIGIT: &str = concat!(
    r"0-9\x{660}-\x{669}\x{6F0}-\x{6F9}\x{7C0}-\x{7C9}\x{966}-\x{96F}\x{9E6}-\x{9EF}",
    r"\x{A66}-\x{A6F}\x{AE6}-\x{AEF}\x{B66}-\x{B6F}\x{BE6}-\x{BEF}\x{C66}-\x{C6F}",
    r"\x{CE6}-\x{CEF}\x{D66}-\x{D6F}\x{DE6}-\x{DEF}\x{E50}-\x{E59}\x{ED0}-\x{ED9}",
    r"\x{F20}-\x{F29}\x{1040}-\x{1049}\x{1090}-\x{1099}\x{17E0}-\x{17E9}",
    r"\x{1810}-\x{1819}\x{1946}-\x{194F}\x{19D0}-\x{19D9}\x{1A80}-\x{1A89}",
    r"\x{1A90}-\x{1A99}\x{1B50}-\x{1B59}\x{1BB0}-\x{1BB9}\x{1C40}-\x{1C49}",
    r"\x{1C50}-\x{1C59}\x{A620}-\x{A629}\x{A8D0}-\x{A8D9}\x{A900}-\x{A909}",
    r"\x{A9D0}-\x{A9D9}\x{A9F0}-\x{A9F9}\x{AA50}-\x{AA59}\x{ABF0}-\x{ABF9}",
    r"\x{FF10}-\x{FF19}\x{104A0}-\x{104A9}\x{10D30}-\x{10D39}\x{10D40}-\x{10D49}",
    r"\x{11066}-\x{1106F}\x{110F0}-\x{110F9}\x{11136}-\x{1113F}\x{111D0}-\x{111D9}",
    r"\x{112F0}-\x{112F9}\x{11450}-\x{11459}\x{114D0}-\x{114D9}\x{11650}-\x{11659}",
    r"\x{116C0}-\x{116C9}\x{116D0}-\x{116E3}\x{11730}-\x{11739}\x{118E0}-\x{118E9}",
    r"\x{11950}-\x{11959}\x{11BF0}-\x{11BF9}\x{11C50}-\x{11C59}\x{11D50}-\x{11D59}",
    r"\x{11DA0}-\x{11DA9}\x{11F50}-\x{11F59}\x{16130}-\x{16139}\x{16A60}-\x{16A69}",
    r"\x{16AC0}-\x{16AC9}\x{16B50}-\x{16B59}\x{16D70}-\x{16D79}\x{1CCF0}-\x{1CCF9}",
    r"\x{1D7CE}-\x{1D7FF}\x{1E140}-\x{1E149}\x{1E2F0}-\x{1E2F9}\x{1E4F0}-\x{1E4F9}",
    r"\x{1E5F1}-\x{1E5FA}\x{1E950}-\x{1E959}\x{1FBF0}-\x{1FBF9}",
);

/// Unicode's White_Space (what `\s` is in the `regex` crate, and `char::is_whitespace`).
pub(crate) const SPACE: &str =
    r"\t-\r\x20\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}";

/// The two letters other than ASCII's that Unicode's case folding makes ASCII ones: `ſ` (long
/// s) and `K` (Kelvin sign). The `regex` crate's `(?i)[a-z]` took them; a host name written
/// with them is an ASCII one to the URL parser (`ſite.test` is `site.test`).
pub(crate) const FOLDS_TO_ASCII: &str = r"\x{17F}\x{212A}";

#[cfg(test)]
mod tests {
    use regex_lite::Regex;
    use regex_syntax::hir::{Class, HirKind};

    use super::*;

    /// The ranges of a class as regex-syntax reads it (`\d` as the `regex` crate did).
    fn ranges(class: &str) -> Vec<(char, char)> {
        let hir = regex_syntax::parse(class).unwrap();
        let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
            panic!("{class} is not a class");
        };
        class
            .ranges()
            .iter()
            .map(|r| (r.start(), r.end()))
            .collect()
    }

    #[test]
    fn the_classes_are_the_regex_crates_unicode_ones() {
        assert_eq!(ranges(&format!("[{DIGIT}]")), ranges(r"\d"));
        let space = ranges(&format!("[{SPACE}]"));
        assert_eq!(space, ranges(r"\s"));
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let listed = space.iter().any(|&(a, b)| a <= c && c <= b);
            assert_eq!(listed, c.is_whitespace(), "{c:?}");
        }
        assert_eq!(
            ranges(&format!("[a-zA-Z{FOLDS_TO_ASCII}]")),
            ranges("(?i)[a-z]")
        );
    }

    #[test]
    fn regex_lite_reads_the_classes_as_regex_syntax_does() {
        for (class, verbose) in [
            (DIGIT, false),
            (SPACE, false),
            (SPACE, true),
            (FOLDS_TO_ASCII, false),
        ] {
            let flags = if verbose { "(?x)" } else { "" };
            let lite = Regex::new(&format!("{flags}^[{class}]$")).unwrap();
            for (start, end) in ranges(&format!("[{class}]")) {
                for c in [start, end] {
                    assert!(lite.is_match(c.encode_utf8(&mut [0; 4])), "{c:?}");
                }
                for c in [start as u32 - 1, end as u32 + 1]
                    .into_iter()
                    .filter_map(char::from_u32)
                {
                    let listed = ranges(&format!("[{class}]"))
                        .iter()
                        .any(|&(a, b)| a <= c && c <= b);
                    assert_eq!(lite.is_match(c.encode_utf8(&mut [0; 4])), listed, "{c:?}");
                }
            }
        }
        let digits = Regex::new(&format!("^[{DIGIT}]+$")).unwrap();
        assert!(digits.is_match("0٣३３𝟗"));
        assert!(!digits.is_match("²") && !digits.is_match("½") && !digits.is_match("a"));
    }
}
