//! One file per tool: each takes its typed arguments and returns its data or an error.

pub(crate) mod bash;
pub(crate) mod edit;
pub(crate) mod read;
pub(crate) mod write;

use mimo_protocol::{ErrorCode, ErrorObject};

/// A failed file operation, as the tool's error.
pub(crate) fn io_error(what: &str, rel: &str, e: std::io::Error) -> ErrorObject {
    ErrorObject::new(ErrorCode::ETool, format!("cannot {what} {rel}: {e}"))
}

/// A file's text, or `E_TOOL` when it is not UTF-8.
pub(crate) fn read_text(path: &std::path::Path, rel: &str) -> Result<String, ErrorObject> {
    let bytes = std::fs::read(path).map_err(|e| io_error("read", rel, e))?;
    String::from_utf8(bytes)
        .map_err(|_| ErrorObject::new(ErrorCode::ETool, format!("{rel} is not UTF-8 text")))
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
