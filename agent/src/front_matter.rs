//! The front matter of a `SKILL.md`, read without a YAML library: the little YAML skill files
//! are written in, and a refusal naming the line of anything else. (serde-saphyr, a whole YAML
//! reader, cost the Worker about 370 KB of wasm, 145 KiB gzipped, for this.)
//!
//! Read:
//! - `key: value` lines at the left margin, each key once;
//! - a value that is plain text (`description: File an expense`, up to a ` #` comment), text in
//!   single quotes (`'it''s'`) or in double quotes with YAML's escapes (`"a\tb \u00e9"`);
//! - a list on the key's line (`[a, 'b', "c"]`), or one item a line below it (`  - a`);
//! - no value (`key:`, `~`, `null`);
//! - under a key given no value, indented `key: value` lines (Agent Skills' `metadata`; no key
//!   a skill reads takes them);
//! - comments (`# …`) and blank lines anywhere.
//!
//! Refused: a mapping nested deeper, or on one line (`{…}`); a list in a list; anchors and
//! aliases (`&a`, `*a`); tags (`!!str`); block text (`|`, `>`) and a value continued on the next
//! line; a key given twice; tabs in indentation; a quote left open, or followed by more text;
//! `key: value` inside a plain value (`risk: Note: …`: quote it); control characters.
//!
//! Lines count from 1 at the first line after the opening `---`.

/// One `key: value` of the front matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    /// Its line, counted from the first line after the opening `---`.
    pub line: usize,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `key:`, `key: ~`, `key: null`.
    Null,
    Text(Scalar),
    List(Vec<Scalar>),
    /// Indented `key: value` lines below the key.
    Map(Vec<Entry>),
}

/// A text value, or an item of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scalar {
    pub text: String,
    /// Written without quotes, so that YAML reads `3`, `true` or `~` as a number, a boolean or
    /// null rather than text.
    pub plain: bool,
    pub line: usize,
}

impl Scalar {
    /// What YAML (its core schema) reads a plain value as when not as text: "null", "a
    /// boolean" or "a number".
    fn typed(&self) -> Option<&'static str> {
        if !self.plain {
            return None;
        }
        let t = self.text.as_str();
        if matches!(t, "" | "~" | "null" | "Null" | "NULL") {
            return Some("null");
        }
        if matches!(t, "true" | "True" | "TRUE" | "false" | "False" | "FALSE") {
            return Some("a boolean");
        }
        is_number(t).then_some("a number")
    }
}

/// Whether YAML's core schema reads `t` as an integer or a float.
fn is_number(t: &str) -> bool {
    let digits = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(hex) = t.strip_prefix("0x") {
        return digits(hex, 16);
    }
    if let Some(octal) = t.strip_prefix("0o") {
        return digits(octal, 8);
    }
    if matches!(t, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['-', '+']).unwrap_or(e))),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let is_digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    (!whole.is_empty() || !fraction.is_empty())
        && is_digits(whole)
        && is_digits(fraction)
        && exponent.is_none_or(|e| digits(e, 10))
}

impl Entry {
    /// The value as text. A plain `3` or `true` is the text as written; no value is refused.
    pub fn text(&self) -> Result<String, String> {
        match &self.value {
            Value::Text(scalar) => Ok(scalar.text.clone()),
            Value::Null => Err(format!("line {}: `{}` has no value", self.line, self.key)),
            Value::List(_) | Value::Map(_) => Err(format!(
                "line {}: `{}` must be text, on its line",
                self.line, self.key
            )),
        }
    }

    /// The value as a list of texts: one text is a list of one, no value an empty list. An
    /// item YAML reads as a number, a boolean or null is refused (quoted, it is text).
    pub fn texts(&self) -> Result<Vec<String>, String> {
        let items = match &self.value {
            Value::Null => return Ok(Vec::new()),
            Value::Text(scalar) => std::slice::from_ref(scalar),
            Value::List(items) => items.as_slice(),
            Value::Map(_) => {
                return Err(format!(
                    "line {}: `{}` must be text or a list, not `key: value` lines",
                    self.line, self.key
                ))
            }
        };
        items
            .iter()
            .map(|item| match item.typed() {
                None => Ok(item.text.clone()),
                Some(_) if item.text.is_empty() => Err(format!(
                    "line {}: an empty item in `{}`",
                    item.line, self.key
                )),
                Some(what) => Err(format!(
                    "line {}: `{}` in `{}` is {what}, not text; quote it to mean the text",
                    item.line, item.text, self.key
                )),
            })
            .collect()
    }
}

/// One line that is neither blank nor a comment.
struct Line<'a> {
    number: usize,
    /// Spaces before its text.
    indent: usize,
    /// Without the indentation and trailing blanks.
    text: &'a str,
}

/// Reads `yaml`, the text between the two `---` lines. The error says which line and why.
pub fn read(yaml: &str) -> Result<Vec<Entry>, String> {
    let mut lines = Vec::new();
    for (i, raw) in yaml.lines().enumerate() {
        let number = i + 1;
        if let Some(c) = raw.chars().find(|c| c.is_control() && *c != '\t') {
            return Err(format!(
                "line {number}: a control character (U+{:04X}); write it as an escape in \
                 double quotes",
                u32::from(c)
            ));
        }
        let text = raw.trim_start_matches([' ', '\t']);
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let indentation = &raw[..raw.len() - text.len()];
        if indentation.contains('\t') {
            return Err(format!(
                "line {number}: a tab in its indentation; indent with spaces"
            ));
        }
        lines.push(Line {
            number,
            indent: indentation.len(),
            text: text.trim_end_matches([' ', '\t']),
        });
    }
    // The margin's mapping takes every line, or says why not.
    mapping(&lines, &mut 0, 0)
}

/// The `key: value` lines indented by `indent` from `lines[*at]` on.
fn mapping(lines: &[Line], at: &mut usize, indent: usize) -> Result<Vec<Entry>, String> {
    let mut entries: Vec<Entry> = Vec::new();
    // Whether the last key's value was on the lines below it.
    let mut below_last = false;
    while let Some(line) = lines.get(*at) {
        if line.indent < indent {
            break;
        }
        if line.indent > indent && below_last {
            return Err(format!(
                "line {}: indented, but not lined up with the lines above it",
                line.number
            ));
        }
        if line.indent > indent {
            return Err(format!(
                "line {}: indented under a value given on its key's line; a value must be on \
                 one line (for text over several lines, use double quotes and \\n)",
                line.number
            ));
        }
        *at += 1;
        let (key, rest) = key_value(line)?;
        if let Some(first) = entries.iter().find(|e| e.key == key) {
            return Err(format!(
                "line {}: `{key}` is given twice (first on line {})",
                line.number, first.line
            ));
        }
        below_last = rest.is_empty();
        let value = if rest.is_empty() {
            below(lines, at, indent)?
        } else {
            inline(rest, line.number)?
        };
        entries.push(Entry {
            key,
            line: line.number,
            value,
        });
    }
    Ok(entries)
}

/// The key and the rest of a `key: value` line (empty when only a comment follows).
fn key_value<'a>(line: &Line<'a>) -> Result<(String, &'a str), String> {
    let text = line.text;
    let n = line.number;
    if is_item(text) {
        return Err(format!(
            "line {n}: a list item where a key was expected; a list goes below its key \
             (`sites:`, then `  - …`)"
        ));
    }
    if text.starts_with(['"', '\'']) {
        return Err(format!(
            "line {n}: a quoted key; write keys plainly (`name: …`)"
        ));
    }
    let colon = text
        .char_indices()
        .find(|&(i, c)| c == ':' && text[i + 1..].chars().next().is_none_or(is_blank))
        .map(|(i, _)| i);
    let key = colon.map(|i| text[..i].trim_end());
    match (colon, key) {
        (Some(colon), Some(key))
            if !key.is_empty()
                && !key.starts_with(INDICATORS)
                && !key.contains(" #")
                && !key.contains("\t#") =>
        {
            let rest = text[colon + 1..].trim_start_matches([' ', '\t']);
            let rest = if rest.starts_with('#') { "" } else { rest };
            Ok((key.to_owned(), rest))
        }
        _ => Err(format!("line {n}: `{}` is not `key: value`", shown(text))),
    }
}

/// Characters that do not begin a plain key or value (`-` only when a blank follows).
const INDICATORS: &[char] = &[
    '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
];

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Whether a line (without its indentation) is an item of a block list.
fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ") || text.starts_with("-\t")
}

/// The value of a key given none on its line: the list or the `key: value` lines below it, or
/// none.
fn below(lines: &[Line], at: &mut usize, indent: usize) -> Result<Value, String> {
    let Some(next) = lines.get(*at) else {
        return Ok(Value::Null);
    };
    // YAML lets a list's items line up with its key.
    if is_item(next.text) && next.indent >= indent {
        return list(lines, at, next.indent);
    }
    if next.indent <= indent {
        return Ok(Value::Null);
    }
    if indent > 0 {
        return Err(format!(
            "line {}: `key: value` lines nested more than one level",
            next.number
        ));
    }
    mapping(lines, at, next.indent).map(Value::Map)
}

/// The items of a block list, each `- ` indented by `indent`.
fn list(lines: &[Line], at: &mut usize, indent: usize) -> Result<Value, String> {
    let mut items = Vec::new();
    while let Some(line) = lines.get(*at) {
        if line.indent > indent {
            return Err(format!(
                "line {}: indented under a list item; each item must be on one line, the \
                 items lined up",
                line.number
            ));
        }
        if line.indent < indent || !is_item(line.text) {
            break;
        }
        *at += 1;
        let rest = line.text[1..].trim_start_matches([' ', '\t']);
        let rest = if rest.starts_with('#') { "" } else { rest };
        let n = line.number;
        if is_item(rest) || rest.starts_with(['[', '{']) {
            return Err(format!("line {n}: a list or a mapping inside a list"));
        }
        let (item, tail) = scalar(rest, n, false)?;
        end_of_line(tail, n)?;
        items.push(item);
    }
    Ok(Value::List(items))
}

/// The value on a key's line.
fn inline(rest: &str, n: usize) -> Result<Value, String> {
    if rest.starts_with('[') {
        return flow_list(rest, n);
    }
    if rest.starts_with('{') {
        return Err(format!(
            "line {n}: a `{{…}}` mapping; write its `key: value` lines below the key, indented"
        ));
    }
    if is_item(rest) {
        return Err(format!(
            "line {n}: a list item on its key's line; put each item on a line of its own below \
             the key (`  - …`), or write `[a, b]`"
        ));
    }
    let (scalar, tail) = scalar(rest, n, false)?;
    end_of_line(tail, n)?;
    Ok(if scalar.typed() == Some("null") {
        Value::Null
    } else {
        Value::Text(scalar)
    })
}

/// A list on one line: `[a, 'b', "c"]`.
fn flow_list(text: &str, n: usize) -> Result<Value, String> {
    let unclosed = || format!("line {n}: the list's `[` is not closed on its line");
    let mut rest = &text[1..];
    let mut items = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        if let Some(tail) = rest.strip_prefix(']') {
            end_of_line(tail, n)?;
            return Ok(Value::List(items));
        }
        if rest.is_empty() || rest.starts_with('#') {
            return Err(unclosed());
        }
        if rest.starts_with(',') {
            return Err(format!("line {n}: an empty item in the list"));
        }
        if rest.starts_with(['[', '{']) {
            return Err(format!("line {n}: a list or a mapping inside a list"));
        }
        let (item, tail) = scalar(rest, n, true)?;
        items.push(item);
        rest = tail.trim_start_matches([' ', '\t']);
        if let Some(tail) = rest.strip_prefix(',') {
            rest = tail;
        } else if rest.is_empty() || rest.starts_with('#') {
            return Err(unclosed());
        } else if !rest.starts_with(']') {
            return Err(format!(
                "line {n}: `{}` after an item of the list, where `,` or `]` was expected",
                shown(rest)
            ));
        }
    }
}

/// The scalar `text` begins with, and the text after it. In a `[…]` list (`in_list`), a plain
/// scalar ends at `,` or `]`; elsewhere at the end of the line or a comment.
fn scalar(text: &str, n: usize, in_list: bool) -> Result<(Scalar, &str), String> {
    if text.starts_with(['\'', '"']) {
        let (unquoted, tail) = quoted(text, n)?;
        if !(tail.is_empty() || tail.starts_with(is_blank) || in_list) {
            return Err(format!(
                "line {n}: `{}` after the closing quote",
                shown(tail)
            ));
        }
        let scalar = Scalar {
            text: unquoted,
            plain: false,
            line: n,
        };
        return Ok((scalar, tail));
    }
    let mut chars = text.chars();
    if let Some(first) = chars.next() {
        let why = match first {
            '&' => "an anchor (`&name`)".to_owned(),
            '*' => "an alias (`*name`); a site beginning with `*` must be quoted".to_owned(),
            '!' => "a tag (`!…`)".to_owned(),
            '|' | '>' => "block text (`|`, `>`); write the value on its key's line (in double \
                           quotes, with \\n for a line break)"
                .to_owned(),
            // `?` and `:` begin a plain value when a character other than a blank follows.
            '?' | ':' if chars.next().is_some_and(|c| !is_blank(c)) => String::new(),
            _ if INDICATORS.contains(&first) => format!("`{first}`"),
            _ => String::new(),
        };
        if !why.is_empty() {
            return Err(format!(
                "line {n}: `{}` begins with {why}; to mean the text, quote it",
                shown(text)
            ));
        }
    }
    // A plain scalar: up to a comment (a `#` after a blank), or in a list up to `,` or `]`.
    let mut end = text.len();
    let mut previous = ' ';
    for (i, c) in text.char_indices() {
        if (c == '#' && is_blank(previous)) || (in_list && matches!(c, ',' | ']')) {
            end = i;
            break;
        }
        previous = c;
    }
    let plain = text[..end].trim_end_matches([' ', '\t']);
    let mapping = plain
        .char_indices()
        .any(|(i, c)| c == ':' && plain[i + 1..].chars().next().is_none_or(is_blank));
    if mapping {
        return Err(format!(
            "line {n}: `{}` reads as `key: value` inside a value; to mean the text, quote it",
            shown(plain)
        ));
    }
    if in_list && plain.contains(['[', '{', '}']) {
        return Err(format!(
            "line {n}: `{}` in a `[…]` list holds a bracket; to mean the text, quote it",
            shown(plain)
        ));
    }
    let scalar = Scalar {
        text: plain.to_owned(),
        plain: true,
        line: n,
    };
    Ok((scalar, &text[plain.len()..]))
}

/// What may follow a value on its line: blanks, then a comment.
fn end_of_line(tail: &str, n: usize) -> Result<(), String> {
    let rest = tail.trim_start_matches([' ', '\t']);
    if rest.is_empty() || (rest.starts_with('#') && rest.len() < tail.len()) {
        Ok(())
    } else {
        Err(format!("line {n}: `{}` after the value", shown(rest)))
    }
}

/// The text of a quoted scalar at the start of `text` (`'…'` or `"…"`), and what follows it.
fn quoted(text: &str, n: usize) -> Result<(String, &str), String> {
    let double = text.starts_with('"');
    let mut out = String::new();
    let mut chars = text.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' if !double => {
                if text[i + 1..].starts_with('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Ok((out, &text[i + 1..]));
                }
            }
            '"' if double => return Ok((out, &text[i + 1..])),
            '\\' if double => {
                let Some((_, escape)) = chars.next() else {
                    break;
                };
                let hex_digits = match escape {
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    _ => 0,
                };
                if hex_digits > 0 {
                    let hex: String = chars.by_ref().take(hex_digits).map(|(_, c)| c).collect();
                    let code = (hex.len() == hex_digits
                        && hex.chars().all(|c| c.is_ascii_hexdigit()))
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32);
                    out.push(code.ok_or_else(|| {
                        format!(
                            "line {n}: `\\{escape}{hex}` is not a character's code ({hex_digits} hex digits)"
                        )
                    })?);
                    continue;
                }
                out.push(match escape {
                    '0' => '\0',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    't' | '\t' => '\t',
                    'n' => '\n',
                    'v' => '\u{b}',
                    'f' => '\u{c}',
                    'r' => '\r',
                    'e' => '\u{1b}',
                    ' ' => ' ',
                    '"' => '"',
                    '/' => '/',
                    '\\' => '\\',
                    'N' => '\u{85}',
                    '_' => '\u{a0}',
                    'L' => '\u{2028}',
                    'P' => '\u{2029}',
                    other => {
                        return Err(format!(
                            "line {n}: `\\{other}` is not an escape of double quotes (those are \
                             \\\\ \\\" \\n \\t \\r \\0 \\xHH \\uHHHH and YAML's others)"
                        ))
                    }
                });
            }
            c => out.push(c),
        }
    }
    let quote = if double { '"' } else { '\'' };
    Err(format!(
        "line {n}: the quote `{quote}` is not closed on its line (a value must be on one line)"
    ))
}

/// `text` for an error message: at most 40 characters.
fn shown(text: &str) -> String {
    if text.chars().count() <= 40 {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(40).collect::<String>())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use mimo_proptest::{apply_to_str, cases, text, text_edits};
    use proptest::collection::{btree_map, vec};
    use proptest::prelude::*;

    use super::*;

    /// A value as the tests compare it (without lines).
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Shape {
        Null,
        Text(String),
        List(Vec<String>),
        Map(Vec<(String, Shape)>),
    }

    fn shape(value: &Value) -> Shape {
        match value {
            Value::Null => Shape::Null,
            Value::Text(s) => Shape::Text(s.text.clone()),
            Value::List(items) => Shape::List(items.iter().map(|s| s.text.clone()).collect()),
            Value::Map(entries) => Shape::Map(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), shape(&e.value)))
                    .collect(),
            ),
        }
    }

    fn shapes(yaml: &str) -> Vec<(String, Shape)> {
        read(yaml)
            .unwrap_or_else(|e| panic!("{yaml:?}: {e}"))
            .iter()
            .map(|e| (e.key.clone(), shape(&e.value)))
            .collect()
    }

    fn one(yaml: &str) -> Shape {
        let mut all = shapes(yaml);
        assert_eq!(all.len(), 1, "{yaml:?}");
        all.remove(0).1
    }

    fn t(s: &str) -> Shape {
        Shape::Text(s.into())
    }

    fn l(items: &[&str]) -> Shape {
        Shape::List(items.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn plain_values_end_at_a_comment_and_keep_the_rest() {
        assert_eq!(one("a: File an expense."), t("File an expense."));
        assert_eq!(one("a:   spaced out  \t"), t("spaced out"));
        assert_eq!(one("a:\ttabbed"), t("tabbed"));
        assert_eq!(one("a: text # a comment"), t("text"));
        assert_eq!(one("a: C#, not a comment"), t("C#, not a comment"));
        assert_eq!(
            one("a: https://x.test/a:b?c=d#e"),
            t("https://x.test/a:b?c=d#e")
        );
        assert_eq!(
            one("a: it's \"fine\" [really], {ok}"),
            t("it's \"fine\" [really], {ok}")
        );
        assert_eq!(one("a: -1 and ?x and :y"), t("-1 and ?x and :y"));
        assert_eq!(one("a b: spaces in a key"), t("spaces in a key"));
        assert_eq!(one("allowed-tools: Read, Grep"), t("Read, Grep"));
        assert_eq!(
            one("a : the key ends before the blank"),
            t("the key ends before the blank")
        );
    }

    #[test]
    fn quoted_values_are_read_with_their_escapes() {
        assert_eq!(one("a: 'it''s # not a comment'"), t("it's # not a comment"));
        assert_eq!(one("a: ''"), t(""));
        assert_eq!(one("a: '\\n stays'  # comment"), t("\\n stays"));
        assert_eq!(
            one(r#"a: "q\" b\\ s\/ \t\n\r\0\a\b\v\f\e\ \_\N\L\P""#),
            t("q\" b\\ s/ \t\n\r\0\u{7}\u{8}\u{b}\u{c}\u{1b} \u{a0}\u{85}\u{2028}\u{2029}")
        );
        assert_eq!(
            one(r#"a: "\x41\u00e9\U0001F600 'single' #not""#),
            t("Aé😀 'single' #not")
        );
        assert_eq!(one("a: \"a\ttab\""), t("a\ttab"));
        // Quoted, what YAML would read as null, a number or a boolean is text.
        assert_eq!(one("a: '~'"), t("~"));
        assert_eq!(one("a: \"null\""), t("null"));
    }

    #[test]
    fn lists_are_read_on_one_line_or_an_item_a_line() {
        assert_eq!(one("a: []"), l(&[]));
        assert_eq!(one("a: [x]"), l(&["x"]));
        assert_eq!(
            one("a: [ x , 'y, z', \"w]\", http://127.0.0.1:*/shop/*, ]  # c"),
            l(&["x", "y, z", "w]", "http://127.0.0.1:*/shop/*"])
        );
        assert_eq!(one("a: [C#, a#b]"), l(&["C#", "a#b"]));
        let block =
            "a:  # the list\n  - x\n\n  # a comment\n  - 'y' # c\n  - \"z\"\n  - a, b [c]\nb: next";
        assert_eq!(
            shapes(block),
            [
                ("a".into(), l(&["x", "y", "z", "a, b [c]"])),
                ("b".into(), t("next"))
            ]
        );
        // Items may line up with their key.
        assert_eq!(
            shapes("a:\n- x\n-\ty\nb: c"),
            [("a".into(), l(&["x", "y"])), ("b".into(), t("c"))]
        );
        // An empty item is read, and refused as text (see `texts`).
        assert_eq!(one("a:\n  -\n  - # c"), l(&["", ""]));
    }

    #[test]
    fn no_value_blank_lines_and_comments() {
        assert_eq!(one("a:"), Shape::Null);
        assert_eq!(one("a: ~"), Shape::Null);
        assert_eq!(one("a: null # nothing"), Shape::Null);
        assert_eq!(one("a: # nothing"), Shape::Null);
        assert!(shapes("").is_empty());
        assert!(shapes("# only\n\n  # comments\n\t\n").is_empty());
        assert_eq!(
            shapes("# head\na: 1\n\n   \nb:\n# between\nc: 2\n"),
            [
                ("a".into(), t("1")),
                ("b".into(), Shape::Null),
                ("c".into(), t("2"))
            ]
        );
        assert_eq!(shapes("a: x\r\nb: [y]\r\n").len(), 2);
    }

    #[test]
    fn indented_key_value_lines_are_read_one_level_deep() {
        let metadata = "metadata:\n  author: me\n  version: \"1.0\"\n  tags: [a, b]\n  list:\n  - c\n  empty:\nname: x";
        assert_eq!(
            shapes(metadata),
            [
                (
                    "metadata".into(),
                    Shape::Map(vec![
                        ("author".into(), t("me")),
                        ("version".into(), t("1.0")),
                        ("tags".into(), l(&["a", "b"])),
                        ("list".into(), l(&["c"])),
                        ("empty".into(), Shape::Null),
                    ])
                ),
                ("name".into(), t("x")),
            ]
        );
    }

    #[test]
    fn text_and_texts_take_a_value_as_a_skill_field_does() {
        let entry = |yaml: &str| read(yaml).unwrap().remove(0);
        assert_eq!(entry("a: 3").text().unwrap(), "3");
        assert_eq!(entry("a: true").text().unwrap(), "true");
        assert_eq!(entry("a: 'x'").text().unwrap(), "x");
        assert_eq!(entry("a:").text().unwrap_err(), "line 1: `a` has no value");
        assert!(entry("a: [x]").text().unwrap_err().contains("must be text"));
        assert!(entry("a:\n  b: c")
            .text()
            .unwrap_err()
            .contains("must be text"));
        assert_eq!(entry("a: x").texts().unwrap(), ["x"]);
        assert_eq!(entry("a: ~").texts().unwrap(), Vec::<String>::new());
        assert_eq!(entry("a: [x, '3']").texts().unwrap(), ["x", "3"]);
        assert!(entry("a:\n  b: c")
            .texts()
            .unwrap_err()
            .contains("not `key: value` lines"));
        for (yaml, says) in [
            ("a: 3", "line 1: `3` in `a` is a number, not text; quote it"),
            ("a: [x, 1.5e3]", "`1.5e3` in `a` is a number"),
            ("a:\n  - x\n  - 0x1F", "line 3: `0x1F` in `a` is a number"),
            ("a: [-.inf]", "is a number"),
            ("a: [TRUE]", "is a boolean"),
            ("a: [x, ~]", "`~` in `a` is null"),
            ("a:\n  - x\n  -", "line 3: an empty item in `a`"),
        ] {
            let error = entry(yaml).texts().unwrap_err();
            assert!(error.contains(says), "{yaml:?}: {error}");
        }
        // Numbers as YAML's core schema has them, and what only looks like one.
        for number in [
            "0", "-12", "+3", "1.", ".5", "1e5", "2.5E-3", "0o17", "0xfF", ".NaN", "+.Inf",
        ] {
            assert!(is_number(number), "{number}");
        }
        for text in [
            "", ".", "-", "1_000", "0x", "0b1", "1e", "e5", "1.2.3", "12a", "-0x1", ".nan1",
        ] {
            assert!(!is_number(text), "{text}");
        }
    }

    /// `yaml` is refused on line `line`, saying `says`.
    #[track_caller]
    fn refused(yaml: &str, line: usize, says: &str) {
        let error = read(yaml).expect_err(yaml);
        assert!(
            error.starts_with(&format!("line {line}: ")) && error.contains(says),
            "{yaml:?}: {error}"
        );
    }

    #[test]
    fn what_is_not_read_is_refused_naming_its_line() {
        // Mappings nested deeper or on one line; lists in lists.
        refused("a:\n  b:\n    c: d", 3, "nested more than one level");
        refused("a: {b: c}", 1, "a `{…}` mapping");
        refused("a:\n  - - x", 2, "a list or a mapping inside a list");
        refused("a:\n  - [x]", 2, "inside a list");
        refused("a: [x, [y]]", 1, "inside a list");
        refused("a: [{y: z}]", 1, "inside a list");
        refused(
            "a:\n  - k: v",
            2,
            "reads as `key: value` inside a value; to mean the text, quote it",
        );
        refused(
            "x: y\nrisk: Note: careful",
            2,
            "`Note: careful` reads as `key: value`",
        );
        refused("a: ends with a colon:", 1, "reads as `key: value`");
        refused("a: [k: v]", 1, "reads as `key: value`");
        // Anchors, aliases, tags, block text.
        refused("a: &anchor x", 1, "begins with an anchor");
        refused("a: *anchor", 1, "begins with an alias");
        refused(
            "a: [*.example.com]",
            1,
            "a site beginning with `*` must be quoted",
        );
        refused("a:\n  - *.example.com", 2, "alias");
        refused("a: !!str x", 1, "begins with a tag");
        refused("a: |\n  text", 1, "block text");
        refused("a: >-\n  text", 1, "block text");
        // Values over several lines.
        refused("a: one\n  two", 2, "a value must be on one line");
        refused(
            "a: 'one\n  two'",
            1,
            "the quote `'` is not closed on its line",
        );
        refused("a: \"one\\\n  two\"", 1, "the quote `\"` is not closed");
        refused(
            "a: [x,\n  y]",
            1,
            "the list's `[` is not closed on its line",
        );
        refused("a: [x # y]", 1, "not closed");
        refused("a:\n  - x\n    y", 3, "indented under a list item");
        refused("a:\n  - x\n   - y", 3, "indented under a list item");
        refused("a:\n  - x\n - y", 3, "not lined up");
        refused("a:\n  b: c\n d: e", 3, "not lined up");
        refused("a:\n    b: c\n  d: e", 3, "not lined up");
        refused("a:\n  - x\n- y", 3, "a list item where a key was expected");
        // Keys: twice, quoted, missing, a list instead.
        refused(
            "a: x\nb: y\na: z",
            3,
            "`a` is given twice (first on line 1)",
        );
        refused(
            "m:\n  k: 1\n  k: 2",
            3,
            "`k` is given twice (first on line 2)",
        );
        refused("'a': x", 1, "a quoted key");
        refused("just text", 1, "`just text` is not `key: value`");
        refused("a:b", 1, "is not `key: value`");
        refused("? a\n: b", 1, "is not `key: value`");
        refused("%YAML 1.2", 1, "is not `key: value`");
        refused("...", 1, "is not `key: value`");
        refused("[a]: b", 1, "is not `key: value`");
        refused("a #b: c", 1, "is not `key: value`");
        refused("- x", 1, "a list item where a key was expected");
        refused("a: - x", 1, "a list item on its key's line");
        // Tabs, quotes, escapes, controls.
        refused("a:\n\t- x", 2, "a tab in its indentation");
        refused("a:\n  \tb: c", 2, "a tab in its indentation");
        refused("a: 'x' y", 1, "`y` after the value");
        refused("a: 'x'y", 1, "`y` after the closing quote");
        refused("a: \"x\"#c", 1, "`#c` after the closing quote");
        refused("a: [x]#c", 1, "`#c` after the value");
        refused("a: [x] y", 1, "`y` after the value");
        refused(
            "a: ['x' y]",
            1,
            "`y]` after an item of the list, where `,` or `]` was expected",
        );
        refused("a: [x, , y]", 1, "an empty item in the list");
        refused("a: \"\\q\"", 1, "`\\q` is not an escape of double quotes");
        refused("a: \"\\x4\"", 1, "is not a character's code");
        refused("a: \"\\uD800\"", 1, "`\\uD800` is not a character's code");
        refused("a: \"\\UFFFFFFFF\"", 1, "not a character's code");
        refused("a: \"x\\", 1, "not closed");
        refused("a: x\nb: y\u{7}", 2, "a control character (U+0007)");
        refused("a: x\rb: y", 1, "a control character (U+000D)");
        // Other characters that begin no plain value.
        for first in ["]", "}", ",", "%", "@", "`", "?", ": x", "| x", "> x"] {
            refused(&format!("a: {first}"), 1, "; to mean the text, quote it");
        }
    }

    #[test]
    fn long_text_is_cut_in_a_message() {
        let error = read(&"y".repeat(60)).unwrap_err();
        assert_eq!(
            error,
            format!("line 1: `{}…` is not `key: value`", "y".repeat(40))
        );
    }

    // -----------------------------------------------------------------------------------------
    // Writing front matter the way people do, in each style, for the round trips
    // -----------------------------------------------------------------------------------------

    /// Whether `s` reads back as itself written plainly (`in_list`: as an item of `[…]`).
    fn plain_reads_back(s: &str, in_list: bool) -> bool {
        let scalar = Scalar {
            text: s.to_owned(),
            plain: true,
            line: 0,
        };
        let first = s.chars().next();
        !s.is_empty()
            && s.trim_matches([' ', '\t']) == s
            && !s.chars().any(char::is_control)
            && first.is_some_and(|c| !INDICATORS.contains(&c))
            && !is_item(s)
            && !s.contains(": ")
            && !s.contains(":\t")
            && !s.ends_with(':')
            && !s.contains(" #")
            && !s.contains("\t#")
            && !(in_list && s.contains([',', '[', ']', '{', '}']))
            && scalar.typed().is_none()
    }

    /// `s` written plainly, in single or in double quotes, as `style` asks when it can be.
    pub(crate) fn scalar_written(s: &str, style: u8, in_list: bool) -> String {
        match style % 3 {
            0 if plain_reads_back(s, in_list) => s.to_owned(),
            1 if !s.chars().any(|c| c.is_control() && c != '\t') => {
                format!("'{}'", s.replace('\'', "''"))
            }
            _ => {
                let mut out = String::from("\"");
                for c in s.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\t' => out.push_str("\\t"),
                        c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
                        c => out.push(c),
                    }
                }
                out.push('"');
                out
            }
        }
    }

    /// `key:` and `items` as a `[…]` list or an item a line (`indent` spaces in), as `style`
    /// asks; a comment after it when `comment`.
    pub(crate) fn list_written(key: &str, items: &[String], style: u8, comment: bool) -> String {
        let note = if comment { "  # note" } else { "" };
        // An empty list written as items a line is no value.
        if style.is_multiple_of(2) || items.is_empty() {
            let items: Vec<String> = items
                .iter()
                .enumerate()
                .map(|(i, s)| scalar_written(s, style / 2 + i as u8, true))
                .collect();
            format!("{key}: [{}]{note}\n", items.join(", "))
        } else {
            let indent = " ".repeat(usize::from(style / 2 % 3) * 2);
            let mut out = format!("{key}:{note}\n");
            for (i, item) in items.iter().enumerate() {
                let item = scalar_written(item, style / 2 + i as u8, false);
                out.push_str(&format!("{indent}- {item}\n"));
                if comment {
                    out.push_str(&format!("{indent}  # about {i}\n\n"));
                }
            }
            out
        }
    }

    /// A value that reads back as itself: no value, a text, a list.
    fn shape_strategy() -> impl Strategy<Value = Shape> {
        prop_oneof![
            Just(Shape::Null),
            text().prop_map(Shape::Text),
            vec(text(), 0..4).prop_map(Shape::List),
        ]
    }

    /// What a front matter of `entries` says, written in the styles `styles` picks.
    fn written(entries: &[(String, Shape)], styles: &[u8]) -> String {
        let mut out = String::from("# written\n");
        for (i, (key, value)) in entries.iter().enumerate() {
            let style = styles[i % styles.len()];
            let comment = style.is_multiple_of(5);
            let note = if comment { " # note" } else { "" };
            match value {
                Shape::Null => out.push_str(&format!("{key}:{note}\n")),
                Shape::Text(s) => out.push_str(&format!(
                    "{key}: {}{note}\n",
                    scalar_written(s, style, false)
                )),
                Shape::List(items) => out.push_str(&list_written(key, items, style, comment)),
                Shape::Map(_) => unreachable!("not generated"),
            }
        }
        out
    }

    /// Text of the pieces YAML is made of, to drop in anywhere.
    const YAML_TOKENS: &[&str] = &[
        ":",
        ": ",
        "- ",
        "\n",
        "\n  - ",
        "\n  ",
        "'",
        "''",
        "\"",
        "\\",
        "\\u00e9",
        "\\x",
        "[",
        "]",
        "{",
        "}",
        ",",
        "#",
        " #",
        "&a ",
        "*a",
        "!!str ",
        "|",
        ">",
        "\t",
        "\r\n",
        "~",
        "null",
        "3",
        "key: value",
        "\u{feff}",
        "\u{85}",
    ];

    proptest! {
        // Each property runs in well under a second natively; `make fuzz` raises the count.
        #![proptest_config(cases(256))]

        #[test]
        fn front_matter_written_in_any_style_reads_back(
            entries in btree_map("[a-z][a-z0-9_-]{0,8}", shape_strategy(), 0..6),
            styles in vec(any::<u8>(), 1..8),
            crlf in any::<bool>(),
        ) {
            let entries: Vec<(String, Shape)> = entries.into_iter().collect();
            let mut yaml = written(&entries, &styles);
            if crlf {
                yaml = yaml.replace('\n', "\r\n");
            }
            let read = read(&yaml).map_err(|e| TestCaseError::fail(format!("{yaml:?}: {e}")))?;
            let read: Vec<(String, Shape)> =
                read.iter().map(|e| (e.key.clone(), shape(&e.value))).collect();
            // A plain `~` is no value, but one is only written plainly when it is not.
            prop_assert_eq!(read, entries, "{:?}", yaml);
        }

        #[test]
        fn front_matter_edited_anywhere_is_read_or_refused_naming_a_line(
            entries in btree_map("[a-z][a-z0-9_-]{0,8}", shape_strategy(), 1..5),
            styles in vec(any::<u8>(), 1..8),
            edits in text_edits(YAML_TOKENS, 6),
        ) {
            let entries: Vec<(String, Shape)> = entries.into_iter().collect();
            let yaml = apply_to_str(&written(&entries, &styles), &edits);
            match read(&yaml) {
                Ok(entries) => {
                    for entry in &entries {
                        let _ = (entry.text(), entry.texts());
                    }
                }
                Err(error) => {
                    let line: usize = error
                        .strip_prefix("line ")
                        .and_then(|e| e.split(':').next())
                        .and_then(|n| n.parse().ok())
                        .ok_or_else(|| TestCaseError::fail(format!("no line in {error}")))?;
                    prop_assert!((1..=yaml.lines().count()).contains(&line), "{error} in {yaml:?}");
                }
            }
        }
    }
}
