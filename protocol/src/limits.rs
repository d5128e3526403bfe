//! Size limits shared by the server and its clients.

/// Largest text frame accepted from the web app. Chat messages are small; anything larger is a
/// bug or abuse and is refused with `SCHEMA_VALIDATION_FAILED` (the socket stays open).
pub const MAX_WEB_FRAME_BYTES: usize = 64 * 1024;

/// Largest text frame accepted from the extension. A full state sync of a browser with a few
/// hundred tabs stays well under this; large payloads (page text, screenshots) go to R2.
pub const MAX_EXTENSION_FRAME_BYTES: usize = 512 * 1024;

/// Longest user message, in UTF-8 bytes.
pub const MAX_USER_MESSAGE_BYTES: usize = 32 * 1024;

/// Largest body of a poll (`POST /api/extension/poll`): a few frames, each within
/// [`MAX_EXTENSION_FRAME_BYTES`]; the extension sends more in the next poll.
pub const MAX_POLL_BODY_BYTES: usize = 4 * MAX_EXTENSION_FRAME_BYTES;
