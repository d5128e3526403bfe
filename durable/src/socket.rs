//! What both objects do with their hibernatable sockets.

use mimo_protocol::{parse_frame, ErrorCode, ErrorObject};
use serde::de::DeserializeOwned;
use worker::{WebSocket, WebSocketIncomingMessage};

/// Parses one incoming frame; every way it can be wrong is a `SCHEMA_VALIDATION_FAILED`.
pub fn parse_message<T: DeserializeOwned>(
    message: WebSocketIncomingMessage,
    max_bytes: usize,
) -> Result<T, ErrorObject> {
    match message {
        WebSocketIncomingMessage::String(text) => parse_frame(&text, max_bytes),
        WebSocketIncomingMessage::Binary(_) => Err(ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            "binary frames are not part of the protocol; send JSON text",
        )),
    }
}

/// Completes the close handshake the peer started, which frees the socket. Codes 1005 and 1006
/// (no status, abnormal closure) are never sent on the wire, so they are answered with 1000.
pub fn finish_close(ws: &WebSocket, code: usize) {
    let code = match u16::try_from(code) {
        Ok(1005 | 1006) | Err(_) => 1000,
        Ok(code) => code,
    };
    // The socket may already be gone; there is nothing left to do then.
    let _ = ws.close(Some(code), Some("bye"));
}
