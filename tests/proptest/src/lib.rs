//! What the property tests of several crates share: inputs shaped to reach parsers' corners
//! (short strings full of JSON- and URL-significant characters, arbitrary JSON values) and
//! mutations of valid inputs (insert, delete, replace at any position).
//!
//! Only ever a dev-dependency.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;
use serde_json::{Map, Number, Value};

/// The configuration of a property: `cases` cases, few enough that `cargo test` stays quick.
/// The `proptest!` macro applies `PROPTEST_CASES` over it, which is how `make fuzz` runs the
/// same properties for much longer. No regression files are written: a failure found becomes
/// a regular unit test with the minimal input instead.
pub fn cases(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// A short string: either any Unicode at all, or one dense in the characters that matter to
/// JSON, query strings and paths (quotes, escapes, brackets, separators, `%`, `+`, `/`, `.`,
/// controls, a BOM, the replacement character, a multi-byte letter, an emoji).
pub fn text() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        "(?s).{0,12}",
        r#"[a-z0-9 "\\{}\[\]:,=&?%+/.\-_\x00-\x1f\x7f\u{a0}\u{2028}\u{feff}\u{fffd}é😀]{0,12}"#,
    ]
}

/// Any JSON value, a few levels deep. Numbers are finite (JSON has no others), and often at
/// the edges of the integer types; objects and arrays hold up to four members.
pub fn json_value() -> impl Strategy<Value = Value> + Clone {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        proptest::sample::select(vec![
            Value::from(0),
            Value::from(-1),
            Value::from(u64::from(u32::MAX)),
            Value::from(u64::from(u32::MAX) + 1),
            Value::from(u64::MAX),
            Value::from(i64::MIN),
            Value::from(-0.0),
        ]),
        any::<f64>().prop_filter_map("JSON numbers are finite", |f| {
            Number::from_f64(f).map(Value::Number)
        }),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            json_object(inner).prop_map(Value::Object),
        ]
    })
}

/// A JSON object whose members' values come from `values`.
pub fn json_object(
    values: impl Strategy<Value = Value>,
) -> impl Strategy<Value = Map<String, Value>> {
    btree_map(text(), values, 0..4).prop_map(|members| members.into_iter().collect())
}

/// `value` with one to `max` members somewhere replaced by any JSON value, or removed.
/// Mutated this way, a valid message gets past the JSON syntax into every field's type check.
pub fn tweaked(value: Value, max: usize) -> impl Strategy<Value = Value> {
    (1..=max).prop_flat_map(move |n| {
        (0..n).fold(Just(value.clone()).boxed(), |tweaked, _| {
            tweaked.prop_flat_map(tweak).boxed()
        })
    })
}

/// `value` with one member somewhere (at most eight levels down) replaced by any JSON value, or
/// removed.
fn tweak(value: Value) -> impl Strategy<Value = Value> {
    (
        vec(any::<Index>(), 1..9),
        proptest::option::of(json_value()),
    )
        .prop_map(move |(path, replacement)| {
            let mut value = value.clone();
            let mut node = &mut value;
            for (depth, at) in path.iter().enumerate() {
                let children = match node {
                    Value::Object(members) => members.len(),
                    Value::Array(items) => items.len(),
                    _ => 0,
                };
                if children == 0 {
                    break;
                }
                let i = at.index(children);
                if depth + 1 == path.len() && replacement.is_none() {
                    match node {
                        Value::Object(members) => {
                            let key = members.keys().nth(i).cloned().unwrap_or_default();
                            members.remove(&key);
                        }
                        Value::Array(items) => {
                            items.remove(i);
                        }
                        _ => unreachable!("only containers have children"),
                    }
                    return value;
                }
                node = match node {
                    Value::Object(members) => members.values_mut().nth(i).expect("in range"),
                    Value::Array(items) => &mut items[i],
                    _ => unreachable!("only containers have children"),
                };
            }
            if let Some(replacement) = replacement {
                *node = replacement;
            }
            value
        })
}

/// One change to a sequence (of bytes or chars) at a position chosen relative to its length.
#[derive(Debug, Clone)]
pub enum Edit<T> {
    Insert(Index, Vec<T>),
    /// Removes up to this many items.
    Delete(Index, usize),
    /// Replaces one item by these.
    Replace(Index, Vec<T>),
}

/// One to `max` edits whose inserted pieces come from `piece`.
pub fn edits<T: Clone + std::fmt::Debug>(
    piece: impl Strategy<Value = Vec<T>> + Clone,
    max: usize,
) -> impl Strategy<Value = Vec<Edit<T>>> {
    let edit = prop_oneof![
        (any::<Index>(), piece.clone()).prop_map(|(at, p)| Edit::Insert(at, p)),
        (any::<Index>(), 1..4usize).prop_map(|(at, n)| Edit::Delete(at, n)),
        (any::<Index>(), piece).prop_map(|(at, p)| Edit::Replace(at, p)),
    ];
    vec(edit, 1..=max)
}

/// `items` with the edits applied in order. Every edit changes something unless the sequence is
/// empty (only an insertion applies then) or a replacement happens to be the same.
pub fn apply<T: Clone>(items: &[T], edits: &[Edit<T>]) -> Vec<T> {
    let mut items = items.to_vec();
    for edit in edits {
        match edit {
            Edit::Insert(at, piece) => {
                let at = at.index(items.len() + 1);
                items.splice(at..at, piece.iter().cloned());
            }
            Edit::Delete(_, _) | Edit::Replace(_, _) if items.is_empty() => {}
            Edit::Delete(at, n) => {
                let at = at.index(items.len());
                items.drain(at..(at + n).min(items.len()));
            }
            Edit::Replace(at, piece) => {
                let at = at.index(items.len());
                items.splice(at..=at, piece.iter().cloned());
            }
        }
    }
    items
}

/// Edits of text, inserting pieces from [`text`] or single tokens from `tokens`.
pub fn text_edits(
    tokens: &'static [&'static str],
    max: usize,
) -> impl Strategy<Value = Vec<Edit<char>>> {
    let piece = prop_oneof![
        text(),
        proptest::sample::select(tokens).prop_map(str::to_owned),
    ]
    .prop_map(|s| s.chars().collect::<Vec<char>>());
    edits(piece, max)
}

/// `text` with the edits applied at character positions (so the result is valid UTF-8, as a
/// WebSocket text frame or a URL the runtime decoded always is).
pub fn apply_to_str(text: &str, edits: &[Edit<char>]) -> String {
    apply(&text.chars().collect::<Vec<_>>(), edits)
        .into_iter()
        .collect()
}

/// Tokens that change what JSON text means when dropped in anywhere.
pub const JSON_TOKENS: &[&str] = &[
    "\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    "1e999",
    "-0",
    "18446744073709551616",
    "\\",
    "\\u0000",
    "\\ud800",
    "\\n",
    " ",
    "{}",
    "[]",
    "\"\"",
];

#[cfg(test)]
mod tests {
    use super::*;

    proptest! {
        #[test]
        fn edits_apply_anywhere_and_change_lengths_as_said(
            items in vec(any::<u8>(), 0..8),
            edits in edits(vec(any::<u8>(), 0..3), 4),
        ) {
            let mut expected = items.len();
            for edit in &edits {
                expected = match edit {
                    Edit::Insert(_, piece) => expected + piece.len(),
                    Edit::Delete(_, _) | Edit::Replace(_, _) if expected == 0 => 0,
                    Edit::Delete(at, n) => expected - (*n).min(expected - at.index(expected)),
                    Edit::Replace(_, piece) => expected - 1 + piece.len(),
                };
            }
            prop_assert_eq!(apply(&items, &edits).len(), expected);
        }
    }
}
