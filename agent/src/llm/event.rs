//! What a model's stream yields, and the pieces each provider's stream protocol is built from.

use std::fmt;

use serde_json::{Map, Value};

use super::error::{LlmError, LlmErrorKind};
use super::message::ToolCall;
use super::sse::SseEvent;

/// Something the model produced, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmEvent {
    TextDelta(String),
    /// A complete call with parsed arguments. Act on calls only once the turn ends in `Done`.
    ToolCall(ToolCall),
    /// Token counts for the whole turn; a later `Usage` supersedes an earlier one.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    Done {
        stop_reason: StopReason,
    },
    Error(LlmError),
}

impl LlmEvent {
    /// `Done` and `Error` end the stream: each stream yields exactly one of them, last.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Error(_))
    }
}

/// Why the model stopped. Content filtering is reported as an [`LlmErrorKind::ContentFiltered`]
/// error instead, since the turn's output cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    /// A provider-specific reason, verbatim.
    Other(String),
}

/// One provider's stream protocol, fed with decoded SSE events.
pub(crate) trait ProviderStream: fmt::Debug {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<LlmEvent>);
    /// Called at the end of the body if no terminal event was emitted; must emit one.
    fn finish(&mut self, out: &mut Vec<LlmEvent>);
}

/// Turns finished tool-call fragments into events and decides how the turn ends.
///
/// Bad arguments are held back until the end of the turn, so that the other calls and the usage
/// are still reported.
#[derive(Debug, Default)]
pub(crate) struct ToolCallTracker {
    emitted_any: bool,
    failures: Vec<String>,
}

impl ToolCallTracker {
    pub(crate) fn complete(
        &mut self,
        id: String,
        name: String,
        raw_arguments: &str,
        out: &mut Vec<LlmEvent>,
    ) {
        if name.is_empty() {
            self.failures
                .push(format!("tool call `{id}` has no tool name"));
            return;
        }
        match parse_arguments(raw_arguments) {
            Ok(arguments) => {
                self.emitted_any = true;
                out.push(LlmEvent::ToolCall(ToolCall {
                    id,
                    name,
                    arguments,
                }));
            }
            Err(reason) => self.failures.push(format!(
                "arguments of tool `{name}` (call `{id}`) are invalid: {reason}"
            )),
        }
    }

    /// The terminal event, given the provider's stop reason, or `None` if it sent none.
    pub(crate) fn end_turn(&mut self, stop: Option<Result<StopReason, LlmError>>) -> LlmEvent {
        match stop {
            Some(Err(error)) => LlmEvent::Error(error),
            _ if !self.failures.is_empty() => LlmEvent::Error(LlmError::new(
                LlmErrorKind::InvalidToolArguments,
                self.failures.join("; "),
            )),
            // Some compatible servers report tool calls with a plain "stop".
            None | Some(Ok(StopReason::EndTurn)) if self.emitted_any => LlmEvent::Done {
                stop_reason: StopReason::ToolUse,
            },
            None => LlmEvent::Done {
                stop_reason: StopReason::EndTurn,
            },
            Some(Ok(stop_reason)) => LlmEvent::Done { stop_reason },
        }
    }
}

/// Models signal "no arguments" with an empty string as often as with `{}`.
fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str(raw) {
        Ok(Value::Object(arguments)) => Ok(Value::Object(arguments)),
        Ok(_) => Err("expected a JSON object".to_owned()),
        Err(error) => Err(format!("not valid JSON ({error})")),
    }
}
