//! One file per tool: each takes its typed arguments and returns its data or an error.

pub(crate) mod bash;
pub(crate) mod edit;
pub(crate) mod read;
pub(crate) mod write;

use std::fs::File;
use std::io::Read;

use mimo_protocol::bridge::MAX_BRIDGE_READ_BYTES;
use mimo_protocol::{ErrorCode, ErrorObject};

/// A failed file operation, as the tool's error.
pub(crate) fn io_error(what: &str, rel: &str, e: std::io::Error) -> ErrorObject {
    ErrorObject::new(ErrorCode::ETool, format!("cannot {what} {rel}: {e}"))
}

/// An opened file's text: `E_TOOL` when it is not UTF-8 or over [`MAX_BRIDGE_READ_BYTES`]
/// (checked before reading, and again while reading, in case it grows meanwhile).
pub(crate) fn read_text(file: &mut File, rel: &str) -> Result<String, ErrorObject> {
    let too_large = || {
        ErrorObject::new(
            ErrorCode::ETool,
            format!(
                "{rel} is larger than {} MiB, the most the bridge reads; look into it with a \
                 command instead (e.g. `head`, `tail` or `grep`, if allowed)",
                MAX_BRIDGE_READ_BYTES / (1024 * 1024)
            ),
        )
    };
    let size = file.metadata().map_err(|e| io_error("read", rel, e))?.len();
    if size > MAX_BRIDGE_READ_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_BRIDGE_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", rel, e))?;
    if bytes.len() as u64 > MAX_BRIDGE_READ_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map_err(|_| ErrorObject::new(ErrorCode::ETool, format!("{rel} is not UTF-8 text")))
}

/// Replaces an opened file's content.
pub(crate) fn rewrite(file: &mut File, rel: &str, content: &str) -> Result<(), ErrorObject> {
    use std::io::{Seek, SeekFrom, Write};
    file.set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| file.write_all(content.as_bytes()))
        .map_err(|e| io_error("write", rel, e))
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
