//! Anthropic Messages API.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::config::LlmConfig;
use super::error::{ApiError, LlmError, LlmErrorKind};
use super::event::{LlmEvent, ProviderStream, StopReason, ToolCallTracker};
use super::http::{endpoint, header, HttpRequest};
use super::image::Image;
use super::message::{ChatMessage, Role, ToolSpec};
use super::sse::SseEvent;

const API_VERSION: &str = "2023-06-01";

pub(crate) fn build_request(
    config: &LlmConfig,
    messages: &[ChatMessage],
    tools: &[ToolSpec],
) -> HttpRequest {
    let system = messages
        .iter()
        .filter(|message| message.role == Role::System)
        .map(|message| message.content.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut body = json!({
        "model": config.model,
        "max_tokens": config.max_tokens,
        "stream": true,
        "messages": turns(messages),
    });
    if !system.is_empty() {
        body["system"] = json!(system);
    }
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
    }

    let mut headers = vec![
        header("content-type", "application/json"),
        header("accept", "text/event-stream"),
        header("anthropic-version", API_VERSION),
    ];
    if let Some(key) = &config.api_key {
        headers.push(header("x-api-key", key));
    }
    HttpRequest {
        url: endpoint(&config.base_url, "messages"),
        headers,
        body: body.to_string(),
    }
}

/// The `messages` array. Anthropic requires user and assistant turns to alternate, so messages
/// that map to the same role in a row (typically several tool results) share one turn.
fn turns(messages: &[ChatMessage]) -> Value {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks): (_, Vec<Value>) = match message.role {
            Role::System => continue,
            Role::User => (
                "user",
                text_block(&message.content)
                    .into_iter()
                    .chain(message.image.iter().map(image_block))
                    .collect(),
            ),
            Role::Assistant => (
                "assistant",
                text_block(&message.content)
                    .into_iter()
                    .chain(message.tool_calls.iter().map(|call| {
                        json!({
                            "type": "tool_use",
                            "id": call.id,
                            "name": call.name,
                            "input": call.arguments,
                        })
                    }))
                    .collect(),
            ),
            Role::Tool => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                    "content": message.content,
                })],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// Anthropic rejects empty text blocks.
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({ "type": "text", "text": text }))
}

fn image_block(image: &Image) -> Value {
    json!({
        "type": "image",
        "source": { "type": "base64", "media_type": image.media_type, "data": image.data },
    })
}

/// Stream state of one response.
#[derive(Debug, Default)]
pub(crate) struct AnthropicStream {
    /// Open `tool_use` blocks by content-block index.
    tool_blocks: HashMap<usize, ToolBlock>,
    tools: ToolCallTracker,
    input_tokens: u64,
    output_tokens: u64,
    stop: Option<Result<StopReason, LlmError>>,
}

#[derive(Debug)]
struct ToolBlock {
    id: String,
    name: String,
    partial_json: String,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: ContentBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDelta,
        usage: Option<Usage>,
    },
    MessageStop,
    Error {
        error: ApiError,
    },
    /// `ping`, and event types newer than this code, which Anthropic's versioning policy says
    /// clients must ignore.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageStart {
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    /// Thinking and server-tool blocks, which are not part of the turn's output.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl Usage {
    /// Counts are cumulative, so later events overwrite earlier ones. Cached prompt tokens are
    /// counted as input, matching what OpenAI's `prompt_tokens` includes. The sum saturates:
    /// counts come from the wire, and absurd ones must not overflow.
    fn apply(&self, input_tokens: &mut u64, output_tokens: &mut u64) {
        if let Some(input) = self.input_tokens {
            *input_tokens = input
                .saturating_add(self.cache_creation_input_tokens.unwrap_or(0))
                .saturating_add(self.cache_read_input_tokens.unwrap_or(0));
        }
        if let Some(output) = self.output_tokens {
            *output_tokens = output;
        }
    }
}

impl ProviderStream for AnthropicStream {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<LlmEvent>) {
        // The data's `type` repeats the SSE event name, so it alone drives decoding.
        let event: Event = match serde_json::from_str(&event.data) {
            Ok(event) => event,
            Err(error) => {
                out.push(LlmEvent::Error(LlmError::invalid_response(format!(
                    "malformed stream event: {error}"
                ))));
                return;
            }
        };
        match event {
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    usage.apply(&mut self.input_tokens, &mut self.output_tokens);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => match content_block {
                ContentBlock::Text { text } => push_text(text, out),
                ContentBlock::ToolUse { id, name } => {
                    self.tool_blocks.insert(
                        index,
                        ToolBlock {
                            id,
                            name,
                            partial_json: String::new(),
                        },
                    );
                }
                ContentBlock::Other => {}
            },
            Event::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => push_text(text, out),
                BlockDelta::InputJsonDelta { partial_json } => {
                    // Server-tool blocks stream input too; only our own tool calls are tracked.
                    if let Some(block) = self.tool_blocks.get_mut(&index) {
                        block.partial_json.push_str(&partial_json);
                    }
                }
                BlockDelta::Other => {}
            },
            Event::ContentBlockStop { index } => {
                if let Some(block) = self.tool_blocks.remove(&index) {
                    self.tools
                        .complete(block.id, block.name, &block.partial_json, out);
                }
            }
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop = Some(stop_reason(&reason));
                }
                if let Some(usage) = usage {
                    usage.apply(&mut self.input_tokens, &mut self.output_tokens);
                }
            }
            Event::MessageStop => {
                out.push(LlmEvent::Usage {
                    input_tokens: self.input_tokens,
                    output_tokens: self.output_tokens,
                });
                out.push(self.tools.end_turn(self.stop.take()));
            }
            Event::Error { error } => {
                out.push(LlmEvent::Error(LlmError::from_stream_error(&error)));
            }
            Event::Other => {}
        }
    }

    fn finish(&mut self, out: &mut Vec<LlmEvent>) {
        out.push(LlmEvent::Error(LlmError::invalid_response(
            "stream ended before message_stop",
        )));
    }
}

fn push_text(text: String, out: &mut Vec<LlmEvent>) {
    if !text.is_empty() {
        out.push(LlmEvent::TextDelta(text));
    }
}

fn stop_reason(reason: &str) -> Result<StopReason, LlmError> {
    match reason {
        "end_turn" => Ok(StopReason::EndTurn),
        "tool_use" => Ok(StopReason::ToolUse),
        "max_tokens" => Ok(StopReason::MaxTokens),
        "refusal" => Err(LlmError::new(
            LlmErrorKind::ContentFiltered,
            "the model declined to respond (refusal)",
        )),
        other => Ok(StopReason::Other(other.to_owned())),
    }
}
