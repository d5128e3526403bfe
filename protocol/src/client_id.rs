//! The id of an extension (or of a script polling as one): the one rule of what an id may be,
//! checked wherever an id comes from outside — the registry's routes, the worker's socket
//! route, the credentials that pairing issues.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, ErrorObject};

/// The most characters of a client id.
const MAX_LEN: usize = 128;

/// A client id: 1–128 characters of letters, digits, `-` or `_`, so it fits a socket tag, a
/// URL and a log line as it is. Serialized as the bare string, and read back through
/// [`ClientId::parse`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ClientId(String);

impl TryFrom<String> for ClientId {
    type Error = ErrorObject;

    fn try_from(id: String) -> Result<ClientId, ErrorObject> {
        ClientId::parse(&id)
    }
}

impl From<ClientId> for String {
    fn from(id: ClientId) -> String {
        id.0
    }
}

impl ClientId {
    /// `id` as a client id, or the `SCHEMA_VALIDATION_FAILED` that says what one is.
    pub fn parse(id: &str) -> Result<ClientId, ErrorObject> {
        let valid = (1..=MAX_LEN).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if valid {
            Ok(ClientId(id.to_owned()))
        } else {
            Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                "clientId must be 1–128 characters of letters, digits, '-' or '_'",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ClientId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_digits_dash_and_underscore_up_to_128_are_an_id() {
        for id in ["a", "ext-0123abcdef", "script-task_1", &"x".repeat(128)] {
            assert_eq!(ClientId::parse(id).unwrap().as_str(), id);
        }
    }

    #[test]
    fn anything_else_is_refused_naming_the_rule() {
        for id in ["", &"x".repeat(129), "a b", "a/b", "a:b", "é", "a.b"] {
            let error = ClientId::parse(id).unwrap_err();
            assert_eq!(error.code, ErrorCode::SchemaValidationFailed, "{id:?}");
            assert!(error.message.contains("1–128 characters"), "{id:?}");
        }
    }

    #[test]
    fn it_travels_as_the_bare_string() {
        let id = ClientId::parse("ext-1").unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"ext-1\"");
        assert_eq!(serde_json::from_str::<ClientId>("\"ext-1\"").unwrap(), id);
        assert!(serde_json::from_str::<ClientId>("\"a b\"").is_err());
    }
}
