//! A JSON Schema validator sized to answer formats (`answer_format.rs`): the part of JSON Schema
//! (2020-12) that describes data to hand back, and nothing else, so that the Worker does not
//! carry a general validator (most of its size was one).
//!
//! Supported: `type` (one or a list; `integer` is a number without a fraction, `1.0` too),
//! `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (numbers),
//! `multipleOf`, `minLength`, `maxLength` (in characters), `pattern` (regex-lite's syntax,
//! unanchored as in JSON Schema; `\d`, `\w` and `\b` are ASCII and `\s` is any of ECMA-262's
//! white space and line ends, as in the ECMA-262 expressions JSON Schema's are; no look-around,
//! backreferences or Unicode classes `\p{…}`), `items` (one schema for every item), `minItems`,
//! `maxItems`, `uniqueItems`, `properties`, `required`, `additionalProperties` (a boolean or a
//! schema), `minProperties`, `maxProperties`, `allOf`, `anyOf`, `oneOf`, `not`, `$ref` to a
//! schema within this one (`#`, `#/$defs/…`, `#/definitions/…`, any JSON pointer), `$defs` and
//! `definitions`, OpenAPI's `nullable: true` (null is also accepted), and the annotations
//! (`title`, `description`, `format`, `default`, `examples`, `$schema`, `$comment`, `$id` at the
//! top, …), which are ignored as a 2020-12 validator ignores them.
//!
//! Anything else is refused when the schema is given ([`check`]), never silently ignored: a
//! format that says more than is checked would let answers through that do not match it.
//! Equality (`enum`, `const`, `uniqueItems`) compares numbers by value (`1` equals `1.0`).
//! Mismatches name where in the data (a JSON pointer) and what is wrong, in the words of the
//! `jsonschema` crate this replaces.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;

use regex_lite::Regex;
use serde_json::{Map, Number, Value};

/// What an answer format may use besides its annotations, as the refusal lists them.
const SUPPORTED: &str = "type, enum, const, minimum, maximum, exclusiveMinimum, \
                         exclusiveMaximum, multipleOf, minLength, maxLength, pattern, items, \
                         minItems, maxItems, uniqueItems, properties, required, \
                         additionalProperties, minProperties, maxProperties, allOf, anyOf, oneOf, \
                         not, $ref, $defs, definitions, nullable";

/// Keywords that describe the data without constraining it: accepted and ignored (`format` is
/// an annotation in 2020-12 unless a validator is asked to assert it).
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
];

const TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// How many schema-and-value checks one answer may take: a schema's `anyOf`s nested through
/// `$ref`s could otherwise take exponential time on a small answer.
const MAX_STEPS: usize = 250_000;
/// How deep the checks may nest: data depth (at most 128, serde_json's limit when parsing) plus
/// `$ref` and `allOf`/`anyOf`/`oneOf`/`not` hops.
const MAX_DEPTH: usize = 512;
/// The most a `pattern` may compile to.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// ECMA-262's `\s` (its WhiteSpace and LineTerminator), as the inside of a class. regex-lite's
/// `\s` is ASCII's; an answer copied from a page is often spaced with a no-break space
/// (`12\u{a0}€`, `12\u{202f}%`). (ECMA-262's `\d` and `\w` are ASCII, as regex-lite's are.)
const ECMA_SPACE: &str =
    r"\t-\r\x20\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// Every character but those: `\S` inside a class, where a negated class cannot go.
const ECMA_NON_SPACE: &str = concat!(
    r"\x00-\x08\x0E-\x1F\x21-\x{9F}\x{A1}-\x{167F}\x{1681}-\x{1FFF}\x{200B}-\x{2027}",
    r"\x{202A}-\x{202E}\x{2030}-\x{205E}\x{2060}-\x{2FFF}\x{3001}-\x{FEFE}\x{FF00}-\x{10FFFF}"
);

/// Why a schema cannot be an answer format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// It is not a valid JSON Schema: a keyword's value is of the wrong kind.
    Invalid(String),
    /// It is valid, but uses something this validator does not check.
    Unsupported(String),
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::Invalid(why) | SchemaError::Unsupported(why) => f.write_str(why),
        }
    }
}

/// One way the data does not match: where (a JSON pointer into the data, `""` for the whole of
/// it) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub path: String,
    pub message: String,
}

/// Whether `schema` can be used: every keyword known and of the right kind, every `$ref`
/// pointing to a schema within it, and no `$ref` that leads back to itself without going into
/// the data (it would never end).
pub fn check(schema: &Value) -> Result<(), SchemaError> {
    let mut checker = Checker {
        path: Vec::new(),
        nodes: Vec::new(),
        addresses: HashSet::new(),
        refs: Vec::new(),
    };
    checker.schema(schema, true)?;
    for (at, reference) in &checker.refs {
        let target = resolve(schema, reference).ok_or_else(|| {
            SchemaError::Unsupported(format!(
                "at {at}/$ref: {reference:?} does not point to a schema within this one (only \
                 \"#\" and \"#/…\" JSON pointers, such as \"#/$defs/name\", are supported)"
            ))
        })?;
        if !checker.addresses.contains(&address(target)) {
            return Err(SchemaError::Invalid(format!(
                "at {at}/$ref: {reference:?} points to something that is not a schema"
            )));
        }
    }
    let mut state = HashMap::new();
    for (node, at) in &checker.nodes {
        if let Some(at) = in_place_loop(schema, node, at, &mut state) {
            return Err(SchemaError::Unsupported(format!(
                "at {}: its $ref leads back to the same place without going into the data, so \
                 checking an answer would never end",
                shown(&at)
            )));
        }
    }
    Ok(())
}

/// Every way `data` does not match `schema` (which [`check`] accepts), in the order found.
pub fn validate(schema: &Value, data: &Value) -> Vec<Mismatch> {
    let mut validator = Validator {
        root: schema,
        path: Vec::new(),
        errors: Vec::new(),
        steps: 0,
        depth: 0,
        over: false,
        patterns: HashMap::new(),
    };
    validator.node(schema, data);
    if validator.over {
        validator.errors.push(Mismatch {
            path: String::new(),
            message: "the answer format is too complex to check this data against (its \
                      anyOf/oneOf and $ref nest too deeply or too many times)"
                .into(),
        });
    }
    validator.errors
}

fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

/// `segments` as a JSON pointer (`""` for none).
fn pointer(segments: &[String]) -> String {
    segments
        .iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// A JSON pointer as shown in messages: `/` for the whole.
pub fn shown(at: &str) -> &str {
    if at.is_empty() {
        "/"
    } else {
        at
    }
}

/// The schema `reference` names within `root`: `#` or a `#/…` JSON pointer (percent-decoded).
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    if !fragment.starts_with('/') {
        return None;
    }
    root.pointer(&percent_decode(fragment)?)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The schemas that apply to the same value as `node` (`allOf`, `anyOf`, `oneOf`, `not`, the
/// `$ref` target), each with its path (`at` is `node`'s).
fn in_place<'a>(root: &'a Value, node: &'a Value, at: &str) -> Vec<(&'a Value, String)> {
    let mut next = Vec::new();
    let Value::Object(map) = node else {
        return next;
    };
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = map.get(key) {
            for (i, sub) in list.iter().enumerate() {
                next.push((sub, format!("{at}/{key}/{i}")));
            }
        }
    }
    if let Some(sub) = map.get("not") {
        next.push((sub, format!("{at}/not")));
    }
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        next.push((target, format!("{at}/$ref")));
    }
    next
}

/// Where a cycle of schemas that apply to the same value (through `$ref`) closes, if one goes
/// through `node`. `state`: `false` while on the current path, `true` once done.
fn in_place_loop<'a>(
    root: &'a Value,
    node: &'a Value,
    at: &str,
    state: &mut HashMap<usize, bool>,
) -> Option<String> {
    match state.get(&address(node)) {
        Some(false) => return Some(at.to_owned()),
        Some(true) => return None,
        None => {}
    }
    state.insert(address(node), false);
    let found = in_place(root, node, at)
        .into_iter()
        .find_map(|(sub, sub_at)| in_place_loop(root, sub, &sub_at, state));
    state.insert(address(node), true);
    found
}

/// Walks a schema, checking each keyword; collects every subschema (by address, with its path)
/// and every `$ref`.
struct Checker<'a> {
    path: Vec<String>,
    /// Every subschema, in the order met, with its path.
    nodes: Vec<(&'a Value, String)>,
    addresses: HashSet<usize>,
    refs: Vec<(String, String)>,
}

impl<'a> Checker<'a> {
    fn at(&self) -> String {
        pointer(&self.path)
    }

    fn invalid(&self, keyword: &str, what: &str) -> SchemaError {
        let mut path = self.path.clone();
        path.push(keyword.into());
        SchemaError::Invalid(format!("at {}: {keyword} must be {what}", pointer(&path)))
    }

    fn schema(&mut self, schema: &'a Value, top: bool) -> Result<(), SchemaError> {
        self.nodes.push((schema, self.at()));
        self.addresses.insert(address(schema));
        let map = match schema {
            Value::Bool(_) => return Ok(()),
            Value::Object(map) => map,
            _ => {
                return Err(SchemaError::Invalid(format!(
                    "at {}: a schema must be an object or a boolean, not {schema}",
                    shown(&self.at())
                )))
            }
        };
        for (keyword, value) in map {
            self.keyword(keyword, value, top)?;
        }
        Ok(())
    }

    fn sub(&mut self, segments: &[&str], schema: &'a Value) -> Result<(), SchemaError> {
        let depth = self.path.len();
        self.path.extend(segments.iter().map(|s| (*s).to_owned()));
        let result = self.schema(schema, false);
        self.path.truncate(depth);
        result
    }

    fn keyword(&mut self, keyword: &str, value: &'a Value, top: bool) -> Result<(), SchemaError> {
        match keyword {
            "type" => {
                let names: Vec<&Value> = match value {
                    Value::Array(names) if !names.is_empty() => names.iter().collect(),
                    Value::Array(_) => {
                        return Err(self.invalid(keyword, "a type name or a non-empty list of them"))
                    }
                    one => vec![one],
                };
                for name in names {
                    if !name.as_str().is_some_and(|n| TYPES.contains(&n)) {
                        return Err(self.invalid(
                            keyword,
                            &format!(
                                "one of \"null\", \"boolean\", \"object\", \"array\", \"number\", \
                                 \"string\", \"integer\" or a list of them, not {name}"
                            ),
                        ));
                    }
                }
            }
            "enum" if !value.is_array() => return Err(self.invalid(keyword, "a list of values")),
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum"
                if !value.is_number() =>
            {
                return Err(self.invalid(keyword, "a number"))
            }
            "multipleOf" if !value.as_f64().is_some_and(|n| n > 0.0) => {
                return Err(self.invalid(keyword, "a number above 0"))
            }
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties"
                if count(value).is_none() =>
            {
                return Err(self.invalid(keyword, "a whole number, 0 or more"))
            }
            "pattern" => {
                let Some(pattern) = value.as_str() else {
                    return Err(self.invalid(keyword, "a string (a regular expression)"));
                };
                if let Err(error) = compile(pattern) {
                    return Err(SchemaError::Unsupported(format!(
                        "at {}/pattern: {pattern:?} cannot be used: {error}",
                        pointer(&self.path)
                    )));
                }
            }
            "uniqueItems" | "nullable" if !value.is_boolean() => {
                return Err(self.invalid(keyword, "true or false"))
            }
            "required" => {
                if !value
                    .as_array()
                    .is_some_and(|names| names.iter().all(Value::is_string))
                {
                    return Err(self.invalid(keyword, "a list of property names"));
                }
            }
            "properties" | "$defs" | "definitions" => {
                let Some(map) = value.as_object() else {
                    return Err(self.invalid(keyword, "an object of schemas"));
                };
                for (name, sub) in map {
                    self.sub(&[keyword, name], sub)?;
                }
            }
            "items" if value.is_array() => {
                return Err(SchemaError::Unsupported(format!(
                    "at {}/items: a list of schemas (a tuple) is not supported; give one schema \
                     that every item matches",
                    pointer(&self.path)
                )))
            }
            "items" | "additionalProperties" | "not" => self.sub(&[keyword], value)?,
            "allOf" | "anyOf" | "oneOf" => {
                let Some(list) = value.as_array().filter(|l| !l.is_empty()) else {
                    return Err(self.invalid(keyword, "a non-empty list of schemas"));
                };
                for (i, sub) in list.iter().enumerate() {
                    self.sub(&[keyword, &i.to_string()], sub)?;
                }
            }
            "$ref" => {
                let Some(reference) = value.as_str() else {
                    return Err(self.invalid(keyword, "a string"));
                };
                self.refs.push((self.at(), reference.to_owned()));
            }
            "$id" if top => {}
            "enum" | "const" | "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum"
            | "multipleOf" | "minLength" | "maxLength" | "minItems" | "maxItems"
            | "minProperties" | "maxProperties" | "uniqueItems" | "nullable" => {}
            _ if ANNOTATIONS.contains(&keyword) => {}
            _ => {
                return Err(SchemaError::Unsupported(format!(
                    "at {}: the keyword {keyword:?} is not supported; answer formats may use \
                     {SUPPORTED}, and annotations such as title, description and format",
                    shown(&self.at())
                )))
            }
        }
        Ok(())
    }
}

/// A non-negative whole number (`2.0` counts, as in JSON Schema).
fn count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n < 1.8e19)
            .map(|n| n as u64)
    })
}

fn compile(pattern: &str) -> Result<Regex, String> {
    regex_lite::RegexBuilder::new(&ecma_spaces(pattern))
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            // A syntax error may be several lines (the pattern, a caret, then `error: …`).
            let text = e.to_string();
            let last = text.lines().last().unwrap_or_default().trim();
            last.strip_prefix("error: ").unwrap_or(last).to_owned()
        })
}

/// `pattern` with ECMA-262's `\s` and `\S` ([`ECMA_SPACE`]) for regex-lite's ASCII ones.
fn ecma_spaces(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains("\\s") && !pattern.contains("\\S") {
        return Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 64);
    // How deep in `[…]` classes, and whether the next character is the first of one (where a
    // `]`, after an optional `^`, is a literal).
    let (mut depth, mut first) = (0usize, false);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        let was_first = std::mem::take(&mut first);
        match c {
            '\\' => match chars.next() {
                Some('s') if depth > 0 => out.push_str(ECMA_SPACE),
                Some('S') if depth > 0 => out.push_str(ECMA_NON_SPACE),
                Some('s') => out.push_str(&format!("[{ECMA_SPACE}]")),
                Some('S') => out.push_str(&format!("[^{ECMA_SPACE}]")),
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            // A POSIX class (`[[:alpha:]]`) inside a class, copied whole.
            '[' if depth > 0 && chars.peek() == Some(&':') => {
                out.push('[');
                while let Some(c) = chars.next() {
                    out.push(c);
                    if c == ':' && chars.peek() == Some(&']') {
                        out.push(chars.next().unwrap_or(']'));
                        break;
                    }
                }
            }
            '[' => {
                out.push('[');
                depth += 1;
                first = true;
            }
            '^' if was_first => {
                out.push('^');
                first = true;
            }
            ']' if depth > 0 && !was_first => {
                out.push(']');
                depth -= 1;
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn integer(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn compare(a: &Number, b: &Number) -> std::cmp::Ordering {
    match (integer(a), integer(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => {
            let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal)
        }
    }
}

fn is_integer(n: &Number) -> bool {
    integer(n).is_some()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

fn is_multiple(n: &Number, of: &Number) -> bool {
    if let (Some(n), Some(of)) = (integer(n), integer(of)) {
        return of != 0 && n % of == 0;
    }
    let (n, of) = (n.as_f64().unwrap_or(0.0), of.as_f64().unwrap_or(1.0));
    let quotient = n / of;
    // Decimal steps such as 0.01 are not exact in binary: allow the rounding error.
    quotient.is_finite() && (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
}

/// JSON equality with numbers compared by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b).is_eq(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn has_type(name: &str, data: &Value) -> bool {
    match (name, data) {
        ("integer", Value::Number(n)) => is_integer(n),
        ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("null", Value::Null)
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        _ => false,
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

struct Validator<'a> {
    root: &'a Value,
    path: Vec<String>,
    errors: Vec<Mismatch>,
    steps: usize,
    depth: usize,
    /// The step or depth limit was reached: the result is incomplete.
    over: bool,
    patterns: HashMap<&'a str, Option<Regex>>,
}

impl<'a> Validator<'a> {
    fn fail(&mut self, message: String) {
        self.errors.push(Mismatch {
            path: pointer(&self.path),
            message,
        });
    }

    /// Whether `data` matches `schema`, its mismatches not kept.
    fn matches(&mut self, schema: &'a Value, data: &Value) -> bool {
        let before = self.errors.len();
        self.node(schema, data);
        let matched = self.errors.len() == before;
        self.errors.truncate(before);
        matched && !self.over
    }

    fn at(&mut self, segment: String, schema: &'a Value, data: &Value) {
        self.path.push(segment);
        self.node(schema, data);
        self.path.pop();
    }

    fn node(&mut self, schema: &'a Value, data: &Value) {
        self.steps += 1;
        if self.over || self.steps > MAX_STEPS || self.depth >= MAX_DEPTH {
            self.over = true;
            return;
        }
        self.depth += 1;
        match schema {
            Value::Bool(false) => self.fail(format!("False schema does not allow {data}")),
            Value::Object(map) => self.keywords(map, data),
            _ => {}
        }
        self.depth -= 1;
    }

    fn keywords(&mut self, schema: &'a Map<String, Value>, data: &Value) {
        if data.is_null() && schema.get("nullable") == Some(&Value::Bool(true)) {
            return;
        }
        match schema.get("type") {
            Some(Value::String(name)) if !has_type(name, data) => {
                self.fail(format!("{data} is not of type \"{name}\""));
            }
            Some(Value::Array(names))
                if !names
                    .iter()
                    .any(|n| has_type(n.as_str().unwrap_or_default(), data)) =>
            {
                let names: Vec<String> = names.iter().map(Value::to_string).collect();
                self.fail(format!("{data} is not of types {}", names.join(", ")));
            }
            _ => {}
        }
        if let Some(Value::Array(options)) = schema.get("enum") {
            if !options.iter().any(|o| same(o, data)) {
                self.fail(enum_message(data, options));
            }
        }
        if let Some(expected) = schema.get("const") {
            if !same(expected, data) {
                self.fail(format!("{expected} was expected"));
            }
        }
        match data {
            Value::Number(n) => self.number(schema, n, data),
            Value::String(s) => self.string(schema, s, data),
            Value::Array(items) => self.array(schema, items, data),
            Value::Object(object) => self.object(schema, object, data),
            _ => {}
        }
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for sub in all {
                self.node(sub, data);
            }
        }
        if let Some(Value::Array(any)) = schema.get("anyOf") {
            if !any.iter().any(|sub| self.matches(sub, data)) && !self.over {
                self.fail(format!(
                    "{data} is not valid under any of the schemas listed in the 'anyOf' keyword"
                ));
            }
        }
        if let Some(Value::Array(one)) = schema.get("oneOf") {
            let mut matched = 0;
            for sub in one {
                if self.matches(sub, data) {
                    matched += 1;
                }
            }
            if self.over {
            } else if matched == 0 {
                self.fail(format!(
                    "{data} is not valid under any of the schemas listed in the 'oneOf' keyword"
                ));
            } else if matched > 1 {
                self.fail(format!(
                    "{data} is valid under more than one of the schemas listed in the 'oneOf' \
                     keyword"
                ));
            }
        }
        if let Some(not) = schema.get("not") {
            if self.matches(not, data) {
                self.fail(format!("{not} is not allowed for {data}"));
            }
        }
        if let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve(self.root, r))
        {
            self.node(target, data);
        }
    }

    fn number(&mut self, schema: &Map<String, Value>, n: &Number, data: &Value) {
        use std::cmp::Ordering::{Greater, Less};
        let limit = |key: &str| schema.get(key).and_then(|v| v.as_number());
        if let Some(min) = limit("minimum") {
            if compare(n, min) == Less {
                self.fail(format!("{data} is less than the minimum of {min}"));
            }
        }
        if let Some(max) = limit("maximum") {
            if compare(n, max) == Greater {
                self.fail(format!("{data} is greater than the maximum of {max}"));
            }
        }
        if let Some(min) = limit("exclusiveMinimum") {
            if compare(n, min) != Greater {
                self.fail(format!(
                    "{data} is less than or equal to the minimum of {min}"
                ));
            }
        }
        if let Some(max) = limit("exclusiveMaximum") {
            if compare(n, max) != Less {
                self.fail(format!(
                    "{data} is greater than or equal to the maximum of {max}"
                ));
            }
        }
        if let Some(of) = limit("multipleOf") {
            if !is_multiple(n, of) {
                self.fail(format!("{data} is not a multiple of {of}"));
            }
        }
    }

    fn string(&mut self, schema: &'a Map<String, Value>, s: &str, data: &Value) {
        let length = s.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(count) {
            if length < min {
                self.fail(format!(
                    "{data} is shorter than {}",
                    plural(min, "character", "characters")
                ));
            }
        }
        if let Some(max) = schema.get("maxLength").and_then(count) {
            if length > max {
                self.fail(format!(
                    "{data} is longer than {}",
                    plural(max, "character", "characters")
                ));
            }
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            let regex = self
                .patterns
                .entry(pattern)
                .or_insert_with(|| compile(pattern).ok());
            if regex.as_ref().is_some_and(|r| !r.is_match(s)) {
                self.fail(format!("{data} does not match \"{pattern}\""));
            }
        }
    }

    fn array(&mut self, schema: &'a Map<String, Value>, items: &[Value], data: &Value) {
        let length = items.len() as u64;
        if let Some(min) = schema.get("minItems").and_then(count) {
            if length < min {
                self.fail(format!(
                    "{data} has less than {}",
                    plural(min, "item", "items")
                ));
            }
        }
        if let Some(max) = schema.get("maxItems").and_then(count) {
            if length > max {
                self.fail(format!(
                    "{data} has more than {}",
                    plural(max, "item", "items")
                ));
            }
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            let mut unique = true;
            'pairs: for (i, a) in items.iter().enumerate() {
                for b in &items[i + 1..] {
                    self.steps += 1;
                    if same(a, b) {
                        unique = false;
                        break 'pairs;
                    }
                }
            }
            if !unique {
                self.fail(format!("{data} has non-unique elements"));
            }
        }
        if let Some(each) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                self.at(i.to_string(), each, item);
            }
        }
    }

    fn object(
        &mut self,
        schema: &'a Map<String, Value>,
        object: &Map<String, Value>,
        data: &Value,
    ) {
        let length = object.len() as u64;
        if let Some(min) = schema.get("minProperties").and_then(count) {
            if length < min {
                self.fail(format!(
                    "{data} has less than {}",
                    plural(min, "property", "properties")
                ));
            }
        }
        if let Some(max) = schema.get("maxProperties").and_then(count) {
            if length > max {
                self.fail(format!(
                    "{data} has more than {}",
                    plural(max, "property", "properties")
                ));
            }
        }
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    self.fail(format!("{} is a required property", Value::from(name)));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(properties) = properties {
            for (name, sub) in properties {
                if let Some(value) = object.get(name) {
                    self.at(name.clone(), sub, value);
                }
            }
        }
        if let Some(additional) = schema.get("additionalProperties") {
            let extra: Vec<&String> = object
                .keys()
                .filter(|k| !properties.is_some_and(|p| p.contains_key(*k)))
                .collect();
            if additional == &Value::Bool(false) {
                if !extra.is_empty() {
                    let names: Vec<String> = extra.iter().map(|k| format!("'{k}'")).collect();
                    self.fail(format!(
                        "Additional properties are not allowed ({} {} unexpected)",
                        names.join(", "),
                        if extra.len() == 1 { "was" } else { "were" }
                    ));
                }
            } else {
                for name in extra {
                    self.at(name.clone(), additional, &object[name]);
                }
            }
        }
    }
}

/// `data is not one of a, b or c` (the first 3 options, then how many more).
fn enum_message(data: &Value, options: &[Value]) -> String {
    const SHOWN: usize = 3;
    let shown: Vec<String> = options.iter().take(SHOWN).map(Value::to_string).collect();
    let list = match shown.len() {
        0 => "the options (there are none)".to_owned(),
        1 => shown[0].clone(),
        n if options.len() <= SHOWN => {
            format!("{} or {}", shown[..n - 1].join(", "), shown[n - 1])
        }
        _ => format!(
            "{} or {}",
            shown.join(", "),
            plural(
                (options.len() - SHOWN) as u64,
                "other candidate",
                "other candidates"
            )
        ),
    };
    format!("{data} is not one of {list}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The mismatches as `at <path>: <message>`, as the model is told them.
    fn errors(schema: Value, data: Value) -> Vec<String> {
        check(&schema).unwrap_or_else(|e| panic!("{schema} refused: {e}"));
        validate(&schema, &data)
            .into_iter()
            .map(|m| format!("at {}: {}", shown(&m.path), m.message))
            .collect()
    }

    fn ok(schema: Value, data: Value) {
        let found = errors(schema.clone(), data.clone());
        assert!(found.is_empty(), "{data} against {schema}: {found:?}");
    }

    fn one(schema: Value, data: Value) -> String {
        let found = errors(schema.clone(), data.clone());
        assert_eq!(found.len(), 1, "{data} against {schema}: {found:?}");
        found.into_iter().next().unwrap()
    }

    fn invalid(schema: Value) -> String {
        match check(&schema) {
            Err(SchemaError::Invalid(why)) => why,
            other => panic!("{schema}: {other:?}"),
        }
    }

    fn unsupported(schema: Value) -> String {
        match check(&schema) {
            Err(SchemaError::Unsupported(why)) => why,
            other => panic!("{schema}: {other:?}"),
        }
    }

    #[test]
    fn type_one_or_several_and_integers_are_numbers_without_a_fraction() {
        ok(json!({ "type": "string" }), json!("a"));
        ok(json!({ "type": "number" }), json!(1));
        ok(json!({ "type": "number" }), json!(1.5));
        ok(json!({ "type": "integer" }), json!(3));
        ok(json!({ "type": "integer" }), json!(3.0));
        ok(json!({ "type": "integer" }), json!(-7));
        ok(json!({ "type": "boolean" }), json!(false));
        ok(json!({ "type": "null" }), json!(null));
        ok(json!({ "type": "array" }), json!([]));
        ok(json!({ "type": "object" }), json!({}));
        assert_eq!(
            one(json!({ "type": "integer" }), json!(3.5)),
            "at /: 3.5 is not of type \"integer\""
        );
        assert_eq!(
            one(json!({ "type": "number" }), json!("12 €")),
            "at /: \"12 €\" is not of type \"number\""
        );
        assert_eq!(
            one(json!({ "type": "object" }), json!([1])),
            "at /: [1] is not of type \"object\""
        );
        ok(json!({ "type": ["string", "null"] }), json!(null));
        ok(json!({ "type": ["string", "null"] }), json!("x"));
        assert_eq!(
            one(json!({ "type": ["string", "null"] }), json!(4)),
            "at /: 4 is not of types \"string\", \"null\""
        );
        assert!(invalid(json!({ "type": "thing" })).contains("at /type"));
        assert!(invalid(json!({ "type": [] })).contains("non-empty"));
        assert!(invalid(json!({ "type": ["string", 3] })).contains("not 3"));
    }

    #[test]
    fn enum_and_const_compare_numbers_by_value() {
        let colours = json!({ "enum": ["red", "green", null, 1] });
        ok(colours.clone(), json!("red"));
        ok(colours.clone(), json!(null));
        ok(colours.clone(), json!(1.0));
        assert_eq!(
            one(colours, json!("blue")),
            "at /: \"blue\" is not one of \"red\", \"green\", null or 1 other candidate"
        );
        assert_eq!(
            one(json!({ "enum": ["a", "b"] }), json!("c")),
            "at /: \"c\" is not one of \"a\" or \"b\""
        );
        assert_eq!(
            one(json!({ "enum": ["a", "b", "c"] }), json!("d")),
            "at /: \"d\" is not one of \"a\", \"b\" or \"c\""
        );
        ok(
            json!({ "enum": [{ "a": [1, 2], "b": 1 }] }),
            json!({ "b": 1.0, "a": [1, 2.0] }),
        );
        ok(json!({ "const": 2 }), json!(2.0));
        ok(json!({ "const": { "x": [true] } }), json!({ "x": [true] }));
        assert_eq!(
            one(json!({ "const": "EUR" }), json!("USD")),
            "at /: \"EUR\" was expected"
        );
        assert_eq!(
            one(json!({ "const": 1 }), json!("1")),
            "at /: 1 was expected"
        );
        assert!(invalid(json!({ "enum": "red" })).contains("at /enum"));
    }

    #[test]
    fn numeric_limits_and_multiples() {
        let range = json!({ "minimum": 1, "maximum": 5 });
        ok(range.clone(), json!(1));
        ok(range.clone(), json!(5.0));
        ok(
            range.clone(),
            json!("not a number: limits apply to numbers only"),
        );
        assert_eq!(
            one(range.clone(), json!(0.5)),
            "at /: 0.5 is less than the minimum of 1"
        );
        assert_eq!(
            one(range, json!(6)),
            "at /: 6 is greater than the maximum of 5"
        );
        let open = json!({ "exclusiveMinimum": 0, "exclusiveMaximum": 10.5 });
        ok(open.clone(), json!(0.001));
        ok(open.clone(), json!(10));
        assert_eq!(
            one(open.clone(), json!(0)),
            "at /: 0 is less than or equal to the minimum of 0"
        );
        assert_eq!(
            one(open, json!(10.5)),
            "at /: 10.5 is greater than or equal to the maximum of 10.5"
        );
        // Whole numbers beyond f64's exact range compare exactly.
        ok(
            json!({ "maximum": 9007199254740993u64 }),
            json!(9007199254740993u64),
        );
        assert_eq!(
            errors(
                json!({ "maximum": 9007199254740992u64 }),
                json!(9007199254740993u64)
            )
            .len(),
            1
        );
        ok(json!({ "multipleOf": 0.01 }), json!(12.34));
        ok(json!({ "multipleOf": 5 }), json!(-15));
        ok(json!({ "multipleOf": 0.5 }), json!(3));
        assert_eq!(
            one(json!({ "multipleOf": 5 }), json!(7)),
            "at /: 7 is not a multiple of 5"
        );
        assert_eq!(
            errors(json!({ "multipleOf": 0.01 }), json!(12.345)).len(),
            1
        );
        assert!(
            invalid(json!({ "minimum": "1" })).contains("at /minimum: minimum must be a number")
        );
        assert!(invalid(json!({ "multipleOf": 0 })).contains("above 0"));
        // Draft 4's boolean exclusiveMinimum is not 2020-12's.
        assert!(invalid(json!({ "minimum": 0, "exclusiveMinimum": true })).contains("a number"));
    }

    #[test]
    fn ecma_spaces_are_unicodes_but_next_line_and_the_byte_order_mark() {
        let ranges = |class: &str| -> Vec<(char, char)> {
            let hir = regex_syntax::parse(&format!("[{class}]")).unwrap();
            let regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(class)) =
                hir.kind()
            else {
                panic!("not a class");
            };
            class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect()
        };
        let (space, other) = (ranges(ECMA_SPACE), ranges(ECMA_NON_SPACE));
        let within = |ranges: &[(char, char)], c| ranges.iter().any(|&(a, b)| a <= c && c <= b);
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let ecma = (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}';
            assert_eq!(within(&space, c), ecma, "{c:?}");
            assert_eq!(within(&other, c), !ecma, "{c:?}");
        }
    }

    #[test]
    fn string_length_in_characters_and_patterns() {
        let code = json!({ "minLength": 2, "maxLength": 3 });
        ok(code.clone(), json!("€€€"));
        ok(code.clone(), json!(12345));
        assert_eq!(
            one(code.clone(), json!("a")),
            "at /: \"a\" is shorter than 2 characters"
        );
        assert_eq!(
            one(code, json!("abcd")),
            "at /: \"abcd\" is longer than 3 characters"
        );
        assert_eq!(
            one(json!({ "minLength": 1 }), json!("")),
            "at /: \"\" is shorter than 1 character"
        );
        let digits = json!({ "pattern": "\\d+ €$" });
        ok(digits.clone(), json!("price: 12 €"));
        assert_eq!(
            one(digits, json!("12 $")),
            "at /: \"12 $\" does not match \"\\d+ €$\""
        );
        ok(json!({ "pattern": "^[A-Z]{3}$" }), json!("EUR"));
        assert_eq!(
            errors(json!({ "pattern": "^[A-Z]{3}$" }), json!("EURO")).len(),
            1
        );
        // ECMA-262's `\d` and `\w` are ASCII; its `\s` is Unicode's spaces and line ends.
        let price = json!({ "pattern": "^\\d+,\\d\\d\\s€$" });
        for spaced in [
            "12,50 €",
            "12,50\u{a0}€",
            "12,50\u{202f}€",
            "12,50\u{feff}€",
        ] {
            ok(price.clone(), json!(spaced));
        }
        for not in ["12,50€", "١٢,٥٠ €", "12,50\u{200b}€", "12,50\u{85}€"] {
            assert_eq!(errors(price.clone(), json!(not)).len(), 1, "{not:?}");
        }
        assert_eq!(errors(json!({ "pattern": "^\\w+$" }), json!("é")).len(), 1);
        ok(json!({ "pattern": "^caf\\b" }), json!("café"));
        ok(json!({ "pattern": "^[\\s\\d]+$" }), json!("1\u{a0}2 3"));
        ok(json!({ "pattern": "^[^\\s]+$" }), json!("ab€"));
        assert_eq!(
            errors(json!({ "pattern": "^[^\\s]+$" }), json!("a\u{2003}")).len(),
            1
        );
        ok(json!({ "pattern": "^\\S+$" }), json!("é€"));
        assert_eq!(
            errors(json!({ "pattern": "^\\S+$" }), json!("a\u{a0}b")).len(),
            1
        );
        ok(json!({ "pattern": "^[\\S]+$" }), json!("é€"));
        assert_eq!(
            errors(json!({ "pattern": "^[a\\S]+$" }), json!("a\u{3000}")).len(),
            1
        );
        ok(json!({ "pattern": "^[]\\s]+$" }), json!("] ]"));
        ok(json!({ "pattern": "^[^]\\s]+$" }), json!("ab"));
        ok(json!({ "pattern": "^[[:alpha:]\\s]+$" }), json!("a\u{a0}b"));
        ok(json!({ "pattern": "^\\\\s$" }), json!("\\s"));
        let unicode = unsupported(json!({ "pattern": "^\\p{L}+$" }));
        assert!(unicode.contains("cannot be used: "), "{unicode}");
        let lookahead = unsupported(json!({ "properties": { "a": { "pattern": "(?=x)" } } }));
        assert!(
            lookahead
                .starts_with("at /properties/a/pattern: \"(?=x)\" cannot be used: look-around"),
            "{lookahead}"
        );
        assert!(invalid(json!({ "pattern": 3 })).contains("at /pattern"));
        assert!(invalid(json!({ "minLength": -1 })).contains("0 or more"));
        assert!(invalid(json!({ "maxLength": 1.5 })).contains("0 or more"));
        ok(json!({ "maxLength": 2.0 }), json!("ab"));
    }

    #[test]
    fn arrays_items_counts_and_uniqueness() {
        let prices =
            json!({ "type": "array", "items": { "type": "number" }, "minItems": 1, "maxItems": 3 });
        ok(prices.clone(), json!([1, 2.5]));
        assert_eq!(
            one(prices.clone(), json!([])),
            "at /: [] has less than 1 item"
        );
        assert_eq!(
            one(prices.clone(), json!([1, 2, 3, 4])),
            "at /: [1,2,3,4] has more than 3 items"
        );
        assert_eq!(
            errors(prices, json!([1, "2", true])),
            [
                "at /1: \"2\" is not of type \"number\"",
                "at /2: true is not of type \"number\""
            ]
        );
        let unique = json!({ "uniqueItems": true });
        ok(unique.clone(), json!([1, "1", [1], { "a": 1 }, { "a": 2 }]));
        assert_eq!(
            one(unique.clone(), json!([1, 2, 1.0])),
            "at /: [1,2,1.0] has non-unique elements"
        );
        assert_eq!(
            errors(unique, json!([{ "a": 1, "b": 2 }, { "b": 2, "a": 1 }])).len(),
            1
        );
        ok(json!({ "uniqueItems": false }), json!([1, 1]));
        ok(json!({ "items": false }), json!([]));
        assert_eq!(
            one(json!({ "items": false }), json!([1])),
            "at /0: False schema does not allow 1"
        );
        assert!(unsupported(json!({ "items": [{ "type": "string" }] })).contains("tuple"));
        assert!(invalid(json!({ "uniqueItems": "yes" })).contains("true or false"));
    }

    #[test]
    fn objects_properties_required_and_additional_properties() {
        let product = json!({
            "type": "object",
            "properties": { "name": { "type": "string" }, "price": { "type": "number" } },
            "required": ["name", "price"],
            "additionalProperties": false
        });
        ok(product.clone(), json!({ "name": "Mug", "price": 12 }));
        assert_eq!(
            errors(
                product.clone(),
                json!({ "price": "12", "colour": "blue", "size": 1 })
            ),
            [
                "at /: \"name\" is a required property",
                "at /price: \"12\" is not of type \"number\"",
                "at /: Additional properties are not allowed ('colour', 'size' were unexpected)"
            ]
        );
        assert_eq!(
            one(
                product,
                json!({ "name": "Mug", "price": 1, "colour": "blue" })
            ),
            "at /: Additional properties are not allowed ('colour' was unexpected)"
        );
        let counts = json!({ "additionalProperties": { "type": "integer" } });
        ok(counts.clone(), json!({ "mugs": 2, "cups": 0 }));
        assert_eq!(
            one(counts, json!({ "mugs": 2, "a/b~c": "x" })),
            "at /a~1b~0c: \"x\" is not of type \"integer\""
        );
        let size = json!({ "minProperties": 1, "maxProperties": 2 });
        ok(size.clone(), json!({ "a": 1 }));
        assert_eq!(
            one(size.clone(), json!({})),
            "at /: {} has less than 1 property"
        );
        assert_eq!(
            one(size, json!({ "a": 1, "b": 2, "c": 3 })),
            "at /: {\"a\":1,\"b\":2,\"c\":3} has more than 2 properties"
        );
        // Object keywords apply to objects only.
        ok(
            json!({ "required": ["a"], "properties": { "a": false } }),
            json!([1]),
        );
        assert!(invalid(json!({ "required": "name" })).contains("list of property names"));
        assert!(invalid(json!({ "properties": [] })).contains("an object of schemas"));
        assert!(invalid(json!({ "properties": { "a": 1 } })).contains("at /properties/a"));
        assert!(
            invalid(json!({ "additionalProperties": "no" })).contains("at /additionalProperties")
        );
    }

    #[test]
    fn all_any_one_of_and_not() {
        let both = json!({ "allOf": [{ "minimum": 1 }, { "multipleOf": 2 }] });
        ok(both.clone(), json!(4));
        assert_eq!(errors(both, json!(-1)).len(), 2);
        let price =
            json!({ "anyOf": [{ "type": "number" }, { "type": "string", "pattern": "^\\d+$" }] });
        ok(price.clone(), json!(3));
        ok(price.clone(), json!("3"));
        assert_eq!(
            one(price, json!("three")),
            "at /: \"three\" is not valid under any of the schemas listed in the 'anyOf' keyword"
        );
        let exactly = json!({ "oneOf": [{ "type": "integer" }, { "minimum": 10 }] });
        ok(exactly.clone(), json!(3));
        ok(exactly.clone(), json!(10.5));
        assert_eq!(
            one(exactly.clone(), json!(12)),
            "at /: 12 is valid under more than one of the schemas listed in the 'oneOf' keyword"
        );
        assert_eq!(
            one(exactly, json!(2.5)),
            "at /: 2.5 is not valid under any of the schemas listed in the 'oneOf' keyword"
        );
        let not_empty = json!({ "not": { "const": "" } });
        ok(not_empty.clone(), json!("x"));
        assert_eq!(
            one(not_empty, json!("")),
            "at /: {\"const\":\"\"} is not allowed for \"\""
        );
        assert!(invalid(json!({ "anyOf": [] })).contains("non-empty list"));
        assert!(invalid(json!({ "oneOf": {} })).contains("at /oneOf"));
        assert!(invalid(json!({ "allOf": [{ "type": 1 }] })).contains("at /allOf/0/type"));
    }

    #[test]
    fn nullable_in_every_way_it_is_written() {
        for schema in [
            json!({ "type": ["number", "null"] }),
            json!({ "anyOf": [{ "type": "number" }, { "type": "null" }] }),
            json!({ "oneOf": [{ "type": "number" }, { "type": "null" }] }),
            json!({ "type": "number", "nullable": true }),
        ] {
            ok(schema.clone(), json!(null));
            ok(schema.clone(), json!(2));
            assert_eq!(errors(schema, json!("2")).len(), 1);
        }
        assert_eq!(
            one(json!({ "type": "number", "nullable": false }), json!(null)),
            "at /: null is not of type \"number\""
        );
        assert!(invalid(json!({ "nullable": "yes" })).contains("true or false"));
    }

    #[test]
    fn refs_within_the_schema_and_recursion_through_the_data() {
        // As pydantic writes a list of models.
        let pydantic = json!({
            "$defs": {
                "Product": {
                    "title": "Product",
                    "type": "object",
                    "properties": {
                        "name": { "title": "Name", "type": "string" },
                        "price": { "anyOf": [{ "type": "number" }, { "type": "null" }], "default": null }
                    },
                    "required": ["name"]
                }
            },
            "title": "Products",
            "type": "object",
            "properties": { "items": { "type": "array", "items": { "$ref": "#/$defs/Product" } } },
            "required": ["items"]
        });
        ok(
            pydantic.clone(),
            json!({ "items": [{ "name": "Mug", "price": null }] }),
        );
        assert_eq!(
            errors(
                pydantic,
                json!({ "items": [{ "name": "Mug" }, { "price": 1 }] })
            ),
            ["at /items/1: \"name\" is a required property"]
        );
        let tree = json!({
            "type": "object",
            "properties": { "children": { "type": "array", "items": { "$ref": "#" } } }
        });
        ok(tree.clone(), json!({ "children": [{ "children": [{}] }] }));
        assert_eq!(
            one(tree, json!({ "children": [{ "children": [3] }] })),
            "at /children/0/children/0: 3 is not of type \"object\""
        );
        let old = json!({
            "definitions": { "money amount": { "type": "number" } },
            "properties": { "total": { "$ref": "#/definitions/money%20amount" } }
        });
        ok(old.clone(), json!({ "total": 3 }));
        assert_eq!(errors(old, json!({ "total": "3" })).len(), 1);
        // $ref's siblings apply too (2020-12).
        assert_eq!(
            errors(
                json!({ "$defs": { "n": { "type": "number" } }, "$ref": "#/$defs/n", "minimum": 5 }),
                json!(1)
            ),
            ["at /: 1 is less than the minimum of 5"]
        );
    }

    #[test]
    fn refs_that_cannot_be_followed_are_refused() {
        let missing = unsupported(json!({ "properties": { "a": { "$ref": "#/$defs/nothing" } } }));
        assert!(
            missing.starts_with("at /properties/a/$ref: \"#/$defs/nothing\" does not point"),
            "{missing}"
        );
        assert!(
            unsupported(json!({ "$ref": "https://example.com/product.json" }))
                .contains("does not point")
        );
        assert!(unsupported(json!({ "$ref": "#anchor" })).contains("does not point"));
        assert!(
            invalid(json!({ "required": ["a"], "$ref": "#/required" })).contains("not a schema")
        );
        assert!(invalid(json!({ "$ref": 3 })).contains("at /$ref"));
        for looping in [
            json!({ "$ref": "#" }),
            json!({ "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "allOf": [{ "$ref": "#/$defs/a" }] } } }),
            json!({ "anyOf": [{ "type": "null" }, { "$ref": "#" }] }),
            json!({ "properties": { "x": { "not": { "$ref": "#/properties/x" } } } }),
        ] {
            let why = unsupported(looping.clone());
            assert!(
                why.contains("leads back to the same place"),
                "{looping}: {why}"
            );
        }
    }

    #[test]
    fn annotations_are_ignored_and_format_is_not_asserted() {
        let annotated = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.com/contact.json",
            "$comment": "for the shop",
            "title": "Contact",
            "description": "Who to write to",
            "type": "object",
            "properties": {
                "email": { "type": "string", "format": "email", "examples": ["a@b.c"] },
                "since": { "type": "string", "format": "date", "default": "2024-01-01", "readOnly": true, "deprecated": false }
            }
        });
        ok(
            annotated,
            json!({ "email": "not an address", "since": "yesterday" }),
        );
        ok(json!(true), json!({ "anything": 1 }));
        assert_eq!(
            one(json!(false), json!(1)),
            "at /: False schema does not allow 1"
        );
    }

    #[test]
    fn keywords_beyond_the_subset_are_refused_naming_what_is_supported() {
        for (schema, at, keyword) in [
            (
                json!({ "prefixItems": [{ "type": "string" }] }),
                "/",
                "prefixItems",
            ),
            (
                json!({ "properties": { "a": { "patternProperties": {} } } }),
                "/properties/a",
                "patternProperties",
            ),
            (
                json!({ "if": { "type": "string" }, "then": { "minLength": 1 } }),
                "/",
                "if",
            ),
            (
                json!({ "items": { "contains": { "const": 1 } } }),
                "/items",
                "contains",
            ),
            (
                json!({ "propertyNames": { "maxLength": 3 } }),
                "/",
                "propertyNames",
            ),
            (
                json!({ "dependentRequired": { "a": ["b"] } }),
                "/",
                "dependentRequired",
            ),
            (
                json!({ "unevaluatedProperties": false }),
                "/",
                "unevaluatedProperties",
            ),
            (
                json!({ "$defs": { "a": { "$anchor": "a" } } }),
                "/$defs/a",
                "$anchor",
            ),
            (
                json!({ "properties": { "a": { "$id": "a.json" } } }),
                "/properties/a",
                "$id",
            ),
            (json!({ "x-order": 1 }), "/", "x-order"),
            (json!({ "requried": ["name"] }), "/", "requried"),
        ] {
            let why = unsupported(schema.clone());
            assert!(
                why.starts_with(&format!(
                    "at {at}: the keyword \"{keyword}\" is not supported"
                )),
                "{schema}: {why}"
            );
            assert!(why.contains("additionalProperties"), "{why}");
        }
        assert!(
            invalid(json!({ "properties": { "a": "string" } })).contains("an object or a boolean")
        );
    }

    #[test]
    fn a_schema_too_costly_for_the_data_stops_with_a_mismatch() {
        // Each level tries its next level twice: 2^40 checks if nothing stopped it.
        let mut defs = Map::new();
        for level in 0..40 {
            let next = json!({ "$ref": format!("#/$defs/l{}", level + 1) });
            defs.insert(
                format!("l{level}"),
                json!({ "anyOf": [{ "allOf": [next.clone(), { "type": "string" }] }, next] }),
            );
        }
        defs.insert("l40".into(), json!({ "type": "number" }));
        let schema = json!({ "$defs": defs, "$ref": "#/$defs/l0" });
        let found = errors(schema, json!("x"));
        assert!(
            found.last().unwrap().contains("too complex to check"),
            "{found:?}"
        );
    }

    #[test]
    fn deep_data_is_checked_without_running_out_of_stack() {
        // As deep as serde_json parses (127 levels), through a $ref and an anyOf at each level.
        let schema = json!({ "type": "array", "items": { "anyOf": [{ "$ref": "#" }] } });
        let text = format!("{}\"x\"{}", "[".repeat(126), "]".repeat(126));
        let wrong: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(errors(schema.clone(), wrong).len(), 1);
        let text = format!("{}{}", "[".repeat(127), "]".repeat(127));
        ok(schema, serde_json::from_str(&text).unwrap());
    }
}
