//! LLM gateway logic without I/O, so it runs unchanged natively and on Workers.
//!
//! A caller drives one model turn like this:
//! 1. [`build_request`] and `POST` the resulting [`HttpRequest`];
//! 2. on a non-2xx status, turn the response into an error with [`classify_http_status`];
//! 3. otherwise feed the body chunks to [`StreamParser::push`] as they arrive and call
//!    [`StreamParser::finish`] at the end. The [`LlmEvent`]s end with exactly one `Done` or
//!    `Error`.

mod anthropic;
mod config;
mod error;
mod event;
mod http;
mod image;
mod message;
mod openai;
mod price;
mod request;
mod sse;
mod stream;
#[cfg(test)]
mod tests;

pub use config::{LlmConfig, Provider, UnknownProvider};
pub use error::{classify_http_status, LlmError, LlmErrorKind};
pub use event::{LlmEvent, StopReason};
pub use http::HttpRequest;
pub use image::{image_tokens, model_accepts_images, Image, MAX_IMAGE_BYTES};
pub use message::{ChatMessage, Role, ToolCall, ToolSpec};
pub use price::{known_price, Price};
pub use request::build_request;
pub use sse::{SseDecoder, SseEvent};
pub use stream::StreamParser;
