//! OpenAI Chat Completions, also spoken by OpenAI-compatible servers.

use std::collections::BTreeMap;
use std::mem;

use serde::Deserialize;
use serde_json::{json, Value};

use super::config::{LlmConfig, Provider};
use super::error::{ApiError, LlmError, LlmErrorKind};
use super::event::{LlmEvent, ProviderStream, StopReason, ToolCallTracker};
use super::http::{endpoint, header, HttpRequest};
use super::message::{ChatMessage, Role, ToolSpec};
use super::sse::SseEvent;

pub(crate) fn build_request(
    config: &LlmConfig,
    messages: &[ChatMessage],
    tools: &[ToolSpec],
) -> HttpRequest {
    let mut body = json!({
        "model": config.model,
        "messages": messages.iter().map(message_json).collect::<Value>(),
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if config.max_tokens > 0 {
        // OpenAI's reasoning models reject the legacy `max_tokens`, which is all that many
        // compatible servers understand.
        let field = match config.provider {
            Provider::OpenAi => "max_completion_tokens",
            _ => "max_tokens",
        };
        body[field] = json!(config.max_tokens);
    }
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
    }

    let mut headers = vec![
        header("content-type", "application/json"),
        header("accept", "text/event-stream"),
    ];
    if let Some(key) = &config.api_key {
        headers.push(header("authorization", format!("Bearer {key}")));
    }
    HttpRequest {
        url: endpoint(&config.base_url, "chat/completions"),
        headers,
        body: body.to_string(),
    }
}

fn message_json(message: &ChatMessage) -> Value {
    let mut json = json!({ "role": message.role, "content": message.content });
    match message.role {
        Role::Assistant if !message.tool_calls.is_empty() => {
            if message.content.is_empty() {
                json["content"] = Value::Null;
            }
            json["tool_calls"] = message
                .tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments.to_string() },
                    })
                })
                .collect();
        }
        Role::Tool => {
            json["tool_call_id"] = json!(message.tool_call_id.as_deref().unwrap_or_default());
        }
        Role::User => {
            if let Some(image) = &message.image {
                json["content"] = json!([
                    { "type": "text", "text": message.content },
                    {
                        "type": "image_url",
                        "image_url": { "url": image.data_url(), "detail": "auto" },
                    },
                ]);
            }
        }
        _ => {}
    }
    json
}

/// Stream state of one response.
#[derive(Debug, Default)]
pub(crate) struct OpenAiStream {
    /// Calls being streamed, by the provider's `index`, so they come out in the model's order.
    pending: BTreeMap<usize, PendingCall>,
    tools: ToolCallTracker,
    /// Set by `finish_reason`; the turn still waits for the usage chunk and `[DONE]`.
    stop: Option<Result<StopReason, LlmError>>,
}

#[derive(Debug, Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Deserialize)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<Usage>,
    error: Option<ApiError>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<ToolCallFragment>>,
}

#[derive(Deserialize)]
struct ToolCallFragment {
    index: Option<usize>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    /// A JSON text split across chunks, or a whole object from some compatible servers.
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl ProviderStream for OpenAiStream {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<LlmEvent>) {
        if event.data.trim() == "[DONE]" {
            self.end_turn(out);
            return;
        }
        let chunk: Chunk = match serde_json::from_str(&event.data) {
            Ok(chunk) => chunk,
            Err(error) => {
                out.push(LlmEvent::Error(LlmError::invalid_response(format!(
                    "malformed stream chunk: {error}"
                ))));
                return;
            }
        };
        if let Some(error) = chunk.error {
            out.push(LlmEvent::Error(LlmError::from_stream_error(&error)));
            return;
        }
        // Only one completion is ever requested.
        if let Some(choice) = chunk.choices.into_iter().flatten().next() {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                    out.push(LlmEvent::TextDelta(text));
                }
                for fragment in delta.tool_calls.into_iter().flatten() {
                    self.accumulate(fragment);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.flush_tool_calls(out);
                self.stop = Some(stop_reason(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            out.push(LlmEvent::Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            });
        }
    }

    fn finish(&mut self, out: &mut Vec<LlmEvent>) {
        // A stop reason without `[DONE]` is a complete answer from a lax compatible server.
        if self.stop.is_some() {
            self.end_turn(out);
        } else {
            out.push(LlmEvent::Error(LlmError::invalid_response(
                "stream ended before [DONE]",
            )));
        }
    }
}

impl OpenAiStream {
    fn accumulate(&mut self, fragment: ToolCallFragment) {
        let index = fragment.index.unwrap_or_else(|| {
            // Servers that omit `index` send calls one after another: an id opens the next one.
            // Past the largest index (a server's nonsense) it goes to the last call instead of
            // overflowing.
            let last = self.pending.keys().next_back().copied();
            match (last, fragment.id.is_some()) {
                (Some(last), false) => last,
                (last, _) => last.map_or(0, |last| last.saturating_add(1)),
            }
        });
        let call = self.pending.entry(index).or_default();
        if let Some(id) = fragment.id {
            call.id = id;
        }
        let Some(function) = fragment.function else {
            return;
        };
        if let Some(name) = function.name {
            call.name = name;
        }
        match function.arguments {
            Some(Value::String(part)) => call.arguments.push_str(&part),
            Some(Value::Null) | None => {}
            Some(whole) => call.arguments = whole.to_string(),
        }
    }

    fn flush_tool_calls(&mut self, out: &mut Vec<LlmEvent>) {
        for (index, call) in mem::take(&mut self.pending) {
            // Tool results are matched by id, which a few compatible servers leave out.
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            self.tools.complete(id, call.name, &call.arguments, out);
        }
    }

    fn end_turn(&mut self, out: &mut Vec<LlmEvent>) {
        self.flush_tool_calls(out);
        out.push(self.tools.end_turn(self.stop.take()));
    }
}

fn stop_reason(finish_reason: &str) -> Result<StopReason, LlmError> {
    match finish_reason {
        "stop" => Ok(StopReason::EndTurn),
        "tool_calls" | "function_call" => Ok(StopReason::ToolUse),
        "length" => Ok(StopReason::MaxTokens),
        "content_filter" => Err(LlmError::new(
            LlmErrorKind::ContentFiltered,
            "the provider's content filter withheld the response",
        )),
        other => Ok(StopReason::Other(other.to_owned())),
    }
}
