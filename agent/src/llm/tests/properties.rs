//! Property tests of the LLM stream parsers (OpenAI Chat Completions and Anthropic Messages).
//!
//! The body of a streamed response arrives in chunks split anywhere, even inside a line or a
//! character. Whatever the bytes and however they are split:
//! - the events are those of the whole body at once;
//! - exactly one terminal event (`Done` or `Error`) comes, last;
//! - nothing panics.
//!
//! For valid streams, recorded or generated, the events are also the expected ones: the text,
//! each tool call with exactly the arguments the model sent, the usage, the stop reason.
//!
//! The test names start with the `make fuzz` target that runs them longer: `sse_openai`,
//! `sse_anthropic`, `sse_decoder`, `tool_arguments`.

use mimo_proptest::{
    apply, apply_to_str, cases, edits, json_object, json_value, text as any_text, text_edits,
    tweaked, JSON_TOKENS,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use serde_json::{json, Map, Value};

use super::*;

/// Every line end SSE allows.
const LINE_ENDS: &[&str] = &["\n", "\r\n", "\r"];

/// Byte strings that change what an event stream means when dropped in anywhere: line ends,
/// field names, a comment, a BOM, the end marker, JSON punctuation, and broken UTF-8.
const SSE_TOKENS: &[&[u8]] = &[
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"data: ",
    b"data:",
    b"event: ",
    b"event: error\n",
    b": ping\n",
    b"id: 1\n",
    b"\xEF\xBB\xBF",
    b"[DONE]",
    b"data: [DONE]\n\n",
    b"{",
    b"}",
    b"\"",
    b",",
    b":",
    b"\\",
    b"null",
    b"18446744073709551615",
    b"\xC3",
    b"\xFF",
    b"\xF0\x9F",
];

fn sse_pieces() -> impl Strategy<Value = Vec<u8>> + Clone {
    prop_oneof![
        select(SSE_TOKENS).prop_map(<[u8]>::to_vec),
        any_text().prop_map(String::into_bytes),
        vec(any::<u8>(), 1..4),
    ]
}

/// `bytes` cut at the given points (any number of them, anywhere, repeats included).
fn split<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
    at.sort_unstable();
    let mut chunks = Vec::with_capacity(at.len() + 1);
    let mut start = 0;
    for end in at {
        chunks.push(&bytes[start..end]);
        start = end;
    }
    chunks.push(&bytes[start..]);
    chunks
}

fn cuts() -> impl Strategy<Value = Vec<Index>> {
    vec(any::<Index>(), 0..16)
}

/// The events of `body` parsed whole, after checking that they are the same however the body
/// is split, and that they end with exactly one terminal event.
fn events_split_anywhere(
    provider: Provider,
    body: &[u8],
    cuts: &[Index],
) -> Result<Vec<LlmEvent>, TestCaseError> {
    let whole = parse_chunks(provider, &[body]);
    let terminal = whole.iter().filter(|e| e.is_terminal()).count();
    prop_assert_eq!(terminal, 1, "{:#?}", whole);
    prop_assert!(whole.last().is_some_and(LlmEvent::is_terminal));
    prop_assert_eq!(&parse_chunks(provider, &split(body, cuts)), &whole);
    Ok(whole)
}

// ---------------------------------------------------------------------------------------------
// Generated model turns, written as each provider streams them
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Turn {
    texts: Vec<String>,
    calls: Vec<Call>,
    /// OpenAI: the index of the first call (the others follow it), anywhere up to the largest.
    first_index: usize,
    input_tokens: u64,
    cache_creation_tokens: u64,
    cache_read_tokens: u64,
    output_tokens: u64,
}

#[derive(Debug, Clone)]
struct Call {
    id: String,
    name: String,
    arguments: Map<String, Value>,
    /// Where the arguments' JSON text is cut into the deltas the provider sends.
    cuts: Vec<Index>,
    /// OpenAI: sent without `index`, as some compatible servers do (its id opens it).
    without_index: bool,
}

impl Call {
    /// The arguments' JSON text in pieces, cut between characters (each delta is a JSON
    /// string, so whole characters).
    fn fragments(&self) -> Vec<String> {
        let chars: Vec<char> = Value::Object(self.arguments.clone())
            .to_string()
            .chars()
            .collect();
        let mut at: Vec<usize> = self.cuts.iter().map(|c| c.index(chars.len() + 1)).collect();
        at.sort_unstable();
        at.push(chars.len());
        let mut start = 0;
        at.into_iter()
            .map(|end| {
                let piece = chars[start..end].iter().collect();
                start = end;
                piece
            })
            .collect()
    }
}

/// Up to this many tool calls in a turn.
const MAX_CALLS: usize = 3;

/// A model turn. Its OpenAI calls are numbered from `first_index` up; a valid stream never
/// numbers them past the largest index, but one to mutate (`valid` false) may.
fn turn(valid: bool) -> impl Strategy<Value = Turn> {
    let call = (
        "[A-Za-z0-9_]{1,12}",
        "[A-Za-z_]{1,12}",
        json_object(json_value()),
        vec(any::<Index>(), 0..6),
        any::<bool>(),
    )
        .prop_map(|(id, name, arguments, cuts, without_index)| Call {
            id,
            name,
            arguments,
            cuts,
            without_index,
        });
    let first_index = prop_oneof![Just(0), any::<usize>(), Just(usize::MAX)].prop_map(move |i| {
        if valid {
            i.min(usize::MAX - (MAX_CALLS - 1))
        } else {
            i
        }
    });
    (
        vec(any_text(), 0..4),
        vec(call, 0..=MAX_CALLS),
        first_index,
        any::<[u64; 4]>(),
    )
        .prop_map(
            |(texts, calls, first_index, [input, creation, read, output])| Turn {
                texts,
                calls,
                first_index,
                input_tokens: input,
                cache_creation_tokens: creation,
                cache_read_tokens: read,
                output_tokens: output,
            },
        )
}

impl Turn {
    /// What the parser must report for this turn. Anthropic counts cached prompt tokens as
    /// input; OpenAI's `prompt_tokens` already includes them.
    fn expected(&self, input_tokens: u64) -> Vec<LlmEvent> {
        let texts = self.texts.iter().filter(|t| !t.is_empty()).map(|t| text(t));
        let calls = self
            .calls
            .iter()
            .map(|c| tool_call(&c.id, &c.name, Value::Object(c.arguments.clone())));
        let stop = if self.calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        };
        texts
            .chain(calls)
            .chain([usage(input_tokens, self.output_tokens), done(stop)])
            .collect()
    }

    fn openai(&self) -> String {
        let mut body: String = self
            .texts
            .iter()
            .map(|t| openai_chunk(json!({ "content": t }), Value::Null))
            .collect();
        for (i, call) in self.calls.iter().enumerate() {
            // A call without an index is numbered one past the last, so the calls stay in
            // order whichever of them carry one.
            let indexed = |mut fragment: Value| {
                if !call.without_index {
                    fragment["index"] = json!(self.first_index.saturating_add(i));
                }
                json!({ "tool_calls": [fragment] })
            };
            let opening = json!({"id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": ""}});
            body += &openai_chunk(indexed(opening), Value::Null);
            for fragment in call.fragments() {
                let delta = json!({"function": {"arguments": fragment}});
                body += &openai_chunk(indexed(delta), Value::Null);
            }
        }
        let finish = if self.calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        body += &openai_chunk(json!({}), json!(finish));
        let usage = json!({"choices": [], "usage": {
            "prompt_tokens": self.input_tokens, "completion_tokens": self.output_tokens}});
        body + &format!("data: {usage}\n\ndata: [DONE]\n\n")
    }

    fn anthropic(&self) -> String {
        let event = |data: Value| {
            format!(
                "event: {}\ndata: {data}\n\n",
                data["type"].as_str().unwrap()
            )
        };
        let mut body = event(json!({"type": "message_start", "message": {"usage": {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_tokens,
            "cache_read_input_tokens": self.cache_read_tokens,
            "output_tokens": 1,
        }}}));
        for (index, t) in self.texts.iter().enumerate() {
            body += &event(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}));
            body += &event(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": t}}));
            body += &event(json!({"type": "content_block_stop", "index": index}));
        }
        for (i, call) in self.calls.iter().enumerate() {
            let index = self.texts.len() + i;
            body += &event(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}));
            for fragment in call.fragments() {
                body += &event(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": fragment}}));
            }
            body += &event(json!({"type": "content_block_stop", "index": index}));
        }
        let stop = if self.calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        body += &event(
            json!({"type": "message_delta", "delta": {"stop_reason": stop},
            "usage": {"output_tokens": self.output_tokens}}),
        );
        body + &event(json!({"type": "message_stop"}))
    }

    /// The input tokens Anthropic's stream reports: every kind of prompt token, and never
    /// more than a `u64` holds.
    fn anthropic_input_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_creation_tokens)
            .saturating_add(self.cache_read_tokens)
    }
}

/// A generated valid body mutated: its bytes edited anywhere, or its events' JSON tweaked
/// (members replaced by any value, or removed) so that decoding gets past the syntax.
fn mutated(body: String) -> impl Strategy<Value = Vec<u8>> {
    // Each event as the text before its data (`event: …` and `data: `) and its data as JSON:
    // one array of all of them is tweaked, so mutations can span events.
    let (heads, data): (Vec<String>, Vec<Value>) = body
        .split_terminator("\n\n")
        .map(|event| {
            // The first `data: ` is the field: an `event:` line before it never holds one.
            let (head, data) = event.split_once("data: ").expect("every event has data");
            let data = serde_json::from_str(data).unwrap_or_else(|_| Value::from(data));
            (format!("{head}data: "), data)
        })
        .unzip();
    let bytes = body.into_bytes();
    prop_oneof![
        edits(sse_pieces(), 6).prop_map(move |edits| apply(&bytes, &edits)),
        tweaked(Value::Array(data), 3).prop_map(move |data| {
            let Value::Array(data) = data else {
                return Vec::new();
            };
            let data = data.iter().map(|d| match d {
                // Data that is not JSON (`[DONE]`) is written as it was.
                Value::String(raw) if raw == "[DONE]" => raw.clone(),
                d => d.to_string(),
            });
            heads
                .iter()
                .zip(data)
                .map(|(head, data)| format!("{head}{data}\n\n"))
                .collect::<String>()
                .into_bytes()
        }),
    ]
}

/// Bytes that have little to do with an event stream, or a lot.
fn soup() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..128),
        vec(sse_pieces(), 0..32).prop_map(|pieces| pieces.concat()),
        vec(json_value(), 0..6).prop_map(|values| {
            values
                .iter()
                .map(|v| format!("data: {v}\n\n"))
                .collect::<String>()
                .into_bytes()
        }),
    ]
}

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

fn recorded(provider: Provider) -> &'static [&'static str] {
    match provider {
        Provider::Anthropic => &[ANTHROPIC_TEXT_AND_TOOL, ANTHROPIC_OVERLOADED],
        _ => &[OPENAI_TEXT, OPENAI_PARALLEL_TOOLS],
    }
}

/// A recorded stream, with any line ends, split at any points, gives the events it gives with
/// `\n` line ends read whole.
fn recorded_stream_split_anywhere(
    provider: Provider,
    which: Index,
    line_end: &str,
    cuts: &[Index],
) -> Result<(), TestCaseError> {
    let transcript = which.get(recorded(provider));
    let body = transcript.replace('\n', line_end);
    let events = events_split_anywhere(provider, body.as_bytes(), cuts)?;
    prop_assert_eq!(events, parse(provider, transcript));
    Ok(())
}

proptest! {
    // Each property runs in about a second natively; `make fuzz` raises the count.
    #![proptest_config(cases(128))]

    #[test]
    fn sse_openai_recorded_streams_split_anywhere(
        which in any::<Index>(), line_end in select(LINE_ENDS), cuts in cuts(),
    ) {
        recorded_stream_split_anywhere(Provider::OpenAi, which, line_end, &cuts)?;
    }

    #[test]
    fn sse_openai_generated_streams_split_anywhere(turn in turn(true), cuts in cuts()) {
        let events = events_split_anywhere(Provider::OpenAi, turn.openai().as_bytes(), &cuts)?;
        prop_assert_eq!(events, turn.expected(turn.input_tokens));
    }

    #[test]
    fn sse_openai_mutated_streams_split_anywhere(
        body in turn(false).prop_flat_map(|t| mutated(t.openai())), cuts in cuts(),
    ) {
        events_split_anywhere(Provider::OpenAi, &body, &cuts)?;
    }

    #[test]
    fn sse_openai_any_bytes_split_anywhere(body in soup(), cuts in cuts()) {
        events_split_anywhere(Provider::OpenAi, &body, &cuts)?;
    }

    #[test]
    fn sse_anthropic_recorded_streams_split_anywhere(
        which in any::<Index>(), line_end in select(LINE_ENDS), cuts in cuts(),
    ) {
        recorded_stream_split_anywhere(Provider::Anthropic, which, line_end, &cuts)?;
    }

    #[test]
    fn sse_anthropic_generated_streams_split_anywhere(turn in turn(true), cuts in cuts()) {
        let body = turn.anthropic();
        let events = events_split_anywhere(Provider::Anthropic, body.as_bytes(), &cuts)?;
        prop_assert_eq!(events, turn.expected(turn.anthropic_input_tokens()));
    }

    #[test]
    fn sse_anthropic_mutated_streams_split_anywhere(
        body in turn(false).prop_flat_map(|t| mutated(t.anthropic())), cuts in cuts(),
    ) {
        events_split_anywhere(Provider::Anthropic, &body, &cuts)?;
    }

    #[test]
    fn sse_anthropic_any_bytes_split_anywhere(body in soup(), cuts in cuts()) {
        events_split_anywhere(Provider::Anthropic, &body, &cuts)?;
    }

    /// The decoder alone: chunking never shows, and no dispatched event holds a line end
    /// other than the `\n` joining its data lines.
    #[test]
    fn sse_decoder_split_anywhere(body in soup(), cuts in cuts()) {
        let whole = sse(&[&body[..]]);
        prop_assert_eq!(&sse(&split(&body, &cuts)), &whole);
        for event in &whole {
            prop_assert!(!event.data.contains('\r'), "{:?}", event);
            prop_assert!(!event.event.as_deref().unwrap_or("").contains(['\r', '\n']), "{:?}", event);
        }
    }

    /// Whatever text a model streams as a call's arguments, the call comes out with a JSON
    /// object (none: `{}`) or the turn ends in a retryable `InvalidToolArguments` error.
    #[test]
    fn tool_arguments_from_the_stream_are_an_object_or_refused(
        arguments in prop_oneof![
            any_text(),
            json_value().prop_map(|v| v.to_string()),
            (json_object(json_value()), text_edits(JSON_TOKENS, 3)).prop_map(|(object, edits)| {
                apply_to_str(&Value::Object(object).to_string(), &edits)
            }),
        ],
    ) {
        let events = parse(Provider::OpenAi, &openai_arguments_stream(&arguments));
        match serde_json::from_str::<Value>(&arguments) {
            _ if arguments.trim().is_empty() => {
                prop_assert_eq!(events, [tool_call("call_1", "click", json!({})), done(StopReason::ToolUse)]);
            }
            Ok(object @ Value::Object(_)) => {
                prop_assert_eq!(events, [tool_call("call_1", "click", object), done(StopReason::ToolUse)]);
            }
            _ => {
                let error = single_error(&events);
                prop_assert_eq!(error.kind, LlmErrorKind::InvalidToolArguments);
                prop_assert!(error.retryable);
            }
        }
    }

    /// Error responses: any status, `Retry-After` and body give an error of that status.
    #[test]
    fn sse_error_responses_are_classified(
        status in any::<u16>(),
        retry_after in proptest::option::of(prop_oneof![any_text(), any::<f64>().prop_map(|f| f.to_string())]),
        body in prop_oneof![
            any_text(),
            json_value().prop_map(|v| v.to_string()),
            json_value().prop_map(|v| json!({"error": v}).to_string()),
        ],
    ) {
        for provider in [Provider::OpenAi, Provider::Anthropic] {
            let error = classify_http_status(provider, status, retry_after.as_deref(), &body);
            prop_assert_eq!(error.http_status, Some(status));
            prop_assert!(!error.message.is_empty());
        }
    }
}
