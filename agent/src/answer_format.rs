//! Structured answers: the person (or a script) gives a JSON Schema with the request, the model
//! answers with `done {data}`, and the data is checked here against the schema before the run
//! may end. A wrong answer goes back to the model with what is wrong, a bounded number of times.

use serde_json::Value;

use crate::json_schema::{self, SchemaError};

/// Largest answer schema, serialized.
pub const MAX_SCHEMA_BYTES: usize = 16 * 1024;
/// How many answers that do not match the schema the model may give before the run ends with
/// what it has (marked partial).
pub const MAX_ANSWER_ATTEMPTS: u32 = 3;
/// How many of an answer's mismatches the model is told at once.
const SHOWN_ERRORS: usize = 6;

/// Why `schema` cannot be an answer format, or `None` when it can.
pub fn schema_problem(schema: &Value) -> Option<String> {
    let size = schema.to_string().len();
    if size > MAX_SCHEMA_BYTES {
        return Some(format!(
            "answerSchema is {size} bytes, over the limit of {MAX_SCHEMA_BYTES}"
        ));
    }
    if !schema.is_object() && !schema.is_boolean() {
        return Some("answerSchema must be a JSON Schema object".into());
    }
    match json_schema::check(schema) {
        Ok(()) => None,
        Err(SchemaError::Invalid(why)) => {
            Some(format!("answerSchema is not a valid JSON Schema: {why}"))
        }
        Err(SchemaError::Unsupported(why)) => Some(format!("answerSchema cannot be used: {why}")),
    }
}

/// What is wrong with `data` as an answer in the format `schema`, or `None` when it matches.
pub fn mismatch(schema: &Value, data: Option<&Value>) -> Option<String> {
    let Some(data) = data else {
        return Some(
            "done has no data: the user asked for the answer in a format (<answer_format>); put \
             it in done's data"
                .into(),
        );
    };
    // Checked when the request arrived; a schema that is refused now (one stored before the
    // validator changed) is not the model's fault, so its answer stands.
    if json_schema::check(schema).is_err() {
        return None;
    }
    let errors: Vec<String> = json_schema::validate(schema, data)
        .into_iter()
        .map(|e| format!("at {}: {}", json_schema::shown(&e.path), e.message))
        .collect();
    if errors.is_empty() {
        return None;
    }
    let mut text = format!(
        "done's data does not match the answer format ({} problem{}): {}",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" },
        errors
            .iter()
            .take(SHOWN_ERRORS)
            .map(|e| crate::text::cut(e, 300))
            .collect::<Vec<_>>()
            .join("; ")
    );
    if errors.len() > SHOWN_ERRORS {
        text.push_str(&format!("; and {} more", errors.len() - SHOWN_ERRORS));
    }
    text.push_str(". Fix the data and call done again.");
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn products() -> Value {
        json!({
            "type": "object",
            "properties": {
                "products": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string" },
                            "price": { "type": "number" }
                        },
                        "required": ["name", "price"]
                    }
                }
            },
            "required": ["products"]
        })
    }

    #[test]
    fn a_usable_schema_passes_and_broken_ones_say_why() {
        assert_eq!(schema_problem(&products()), None);
        let wrong_type = schema_problem(&json!({ "type": "thing" })).unwrap();
        assert!(
            wrong_type.contains("not a valid JSON Schema"),
            "{wrong_type}"
        );
        assert!(schema_problem(&json!("a string")).is_some());
        // A keyword the validator does not check is refused, not ignored.
        let unsupported = schema_problem(&json!({ "items": { "prefixItems": [] } })).unwrap();
        assert!(
            unsupported.starts_with(
                "answerSchema cannot be used: at /items: the keyword \"prefixItems\" is not supported"
            ),
            "{unsupported}"
        );
        let huge = json!({ "description": "x".repeat(MAX_SCHEMA_BYTES) });
        assert!(schema_problem(&huge).unwrap().contains("over the limit"));
    }

    #[test]
    fn matching_data_is_accepted() {
        let data = json!({ "products": [{ "name": "Mug", "price": 12.5 }] });
        assert_eq!(mismatch(&products(), Some(&data)), None);
    }

    #[test]
    fn mismatches_name_where_and_what() {
        let data = json!({ "products": [{ "name": "Mug", "price": "12 €" }, { "price": 3 }] });
        let why = mismatch(&products(), Some(&data)).unwrap();
        assert!(why.contains("2 problems"), "{why}");
        assert!(why.contains("/products/0/price"), "{why}");
        assert!(why.contains("\"name\" is a required property"), "{why}");
        assert!(why.ends_with("call done again."), "{why}");
        let missing = mismatch(&products(), None).unwrap();
        assert!(missing.contains("done has no data"), "{missing}");
    }

    #[test]
    fn many_mismatches_are_counted_not_all_listed() {
        let rows: Vec<Value> = (0..20).map(|i| json!({ "name": i, "price": 1 })).collect();
        let why = mismatch(&products(), Some(&json!({ "products": rows }))).unwrap();
        assert!(why.contains("20 problems"), "{why}");
        assert!(why.contains("and 14 more"), "{why}");
    }
}
