use serde_json::{json, Value};

use super::*;

mod properties;

// ---------------------------------------------------------------------------------------------
// Recorded-format transcripts
// ---------------------------------------------------------------------------------------------

const OPENAI_TEXT: &str = r#"data: {"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1726000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1726000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,"delta":{"content":"Bonjour"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1726000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,"delta":{"content":", ça va? 🌍"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1726000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1726000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":8,"total_tokens":27,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

"#;

const OPENAI_PARALLEL_TOOLS: &str = r##"data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_Xq1cLk0f","type":"function","function":{"name":"click","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"sel"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ector\": \"#sub"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"mit\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_9ZbWv2Ha","type":"function","function":{"name":"type_text","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"selector\": \"#q\", \"te"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"xt\": \"café crème\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}

data: {"id":"chatcmpl-TooL5","object":"chat.completion.chunk","created":1726000100,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":211,"completion_tokens":52,"total_tokens":263}}

data: [DONE]

"##;

const ANTHROPIC_TEXT_AND_TOOL: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":2}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Je regarde la météo"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" pour vous ☀️."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"locat"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ion\": \"Montréal, Q"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"C\", \"unit\": \"cel"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"sius\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

"#;

const ANTHROPIC_OVERLOADED: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_01Ov3rL0ad","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}

event: error
data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

"#;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn parse_chunks(provider: Provider, chunks: &[&[u8]]) -> Vec<LlmEvent> {
    let mut parser = StreamParser::new(provider);
    let mut events: Vec<LlmEvent> = chunks.iter().flat_map(|c| parser.push(c)).collect();
    events.extend(parser.finish());
    events
}

fn parse(provider: Provider, transcript: &str) -> Vec<LlmEvent> {
    parse_chunks(provider, &[transcript.as_bytes()])
}

/// Parses the transcript whole, one byte at a time and split at every single point, with LF
/// and with CRLF line ends, asserting the events are always the same.
fn parse_every_way(provider: Provider, transcript: &str) -> Vec<LlmEvent> {
    let expected = parse(provider, transcript);
    for text in [transcript.to_owned(), transcript.replace('\n', "\r\n")] {
        let bytes = text.as_bytes();
        let one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(
            parse_chunks(provider, &one_by_one),
            expected,
            "byte by byte"
        );
        for at in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(at);
            assert_eq!(
                parse_chunks(provider, &[head, tail]),
                expected,
                "split at byte {at}"
            );
        }
    }
    expected
}

fn text(s: &str) -> LlmEvent {
    LlmEvent::TextDelta(s.to_owned())
}

fn tool_call(id: &str, name: &str, arguments: Value) -> LlmEvent {
    LlmEvent::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments,
    })
}

fn usage(input_tokens: u64, output_tokens: u64) -> LlmEvent {
    LlmEvent::Usage {
        input_tokens,
        output_tokens,
    }
}

fn done(stop_reason: StopReason) -> LlmEvent {
    LlmEvent::Done { stop_reason }
}

fn single_error(events: &[LlmEvent]) -> &LlmError {
    let errors: Vec<&LlmError> = events
        .iter()
        .filter_map(|event| match event {
            LlmEvent::Error(error) => Some(error),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert!(
        matches!(events.last(), Some(LlmEvent::Error(_))),
        "{events:#?}"
    );
    errors[0]
}

fn openai_chunk(delta: Value, finish_reason: Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-t",
        "object": "chat.completion.chunk",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
    });
    format!("data: {chunk}\n\n")
}

fn openai_arguments_stream(arguments: &str) -> String {
    let opening = json!({"tool_calls": [{
        "index": 0, "id": "call_1", "type": "function",
        "function": {"name": "click", "arguments": arguments},
    }]});
    openai_chunk(opening, Value::Null)
        + &openai_chunk(json!({}), json!("tool_calls"))
        + "data: [DONE]\n\n"
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn body(request: &HttpRequest) -> Value {
    serde_json::from_str(&request.body).expect("body is JSON")
}

// ---------------------------------------------------------------------------------------------
// OpenAI streams
// ---------------------------------------------------------------------------------------------

#[test]
fn openai_text_stream() {
    assert_eq!(
        parse_every_way(Provider::OpenAi, OPENAI_TEXT),
        [
            text("Bonjour"),
            text(", ça va? 🌍"),
            usage(19, 8),
            done(StopReason::EndTurn),
        ]
    );
}

#[test]
fn openai_parallel_tool_calls() {
    assert_eq!(
        parse_every_way(Provider::OpenAi, OPENAI_PARALLEL_TOOLS),
        [
            tool_call("call_Xq1cLk0f", "click", json!({"selector": "#submit"})),
            tool_call(
                "call_9ZbWv2Ha",
                "type_text",
                json!({"selector": "#q", "text": "café crème"})
            ),
            usage(211, 52),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn openai_compatible_uses_the_same_stream_format() {
    assert_eq!(
        parse(Provider::OpenAiCompatible, OPENAI_PARALLEL_TOOLS),
        parse(Provider::OpenAi, OPENAI_PARALLEL_TOOLS)
    );
}

#[test]
fn openai_invalid_tool_arguments_are_retryable_and_name_the_tool() {
    let events = parse(
        Provider::OpenAi,
        &openai_arguments_stream(r##"{"selector": "#a""##),
    );
    let error = single_error(&events);
    assert_eq!(error.kind, LlmErrorKind::InvalidToolArguments);
    assert!(error.retryable);
    assert!(error.message.contains("`click`"), "{}", error.message);
    assert!(error.message.contains("call_1"), "{}", error.message);
    assert!(error.message.contains("JSON"), "{}", error.message);
}

#[test]
fn openai_tool_arguments_must_be_an_object() {
    let events = parse(Provider::OpenAi, &openai_arguments_stream("[1, 2]"));
    assert_eq!(
        single_error(&events).kind,
        LlmErrorKind::InvalidToolArguments
    );
}

#[test]
fn openai_empty_tool_arguments_mean_no_arguments() {
    assert_eq!(
        parse(Provider::OpenAi, &openai_arguments_stream("")),
        [
            tool_call("call_1", "click", json!({})),
            done(StopReason::ToolUse)
        ]
    );
}

#[test]
fn openai_valid_calls_survive_an_invalid_sibling() {
    let opening = json!({"tool_calls": [
        {"index": 0, "id": "call_ok", "function": {"name": "scroll", "arguments": "{}"}},
        {"index": 1, "id": "call_bad", "function": {"name": "click", "arguments": "{\"x\":"}},
    ]});
    let stream = openai_chunk(opening, Value::Null)
        + &openai_chunk(json!({}), json!("tool_calls"))
        + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\n"
        + "data: [DONE]\n\n";
    let events = parse(Provider::OpenAi, &stream);
    assert_eq!(events[0], tool_call("call_ok", "scroll", json!({})));
    assert_eq!(events[1], usage(5, 7));
    assert!(single_error(&events).message.contains("call_bad"));
}

#[test]
fn openai_finish_reasons() {
    let finish = |reason: &str| {
        parse(
            Provider::OpenAi,
            &(openai_chunk(json!({"content": "x"}), json!(reason)) + "data: [DONE]\n\n"),
        )
    };
    assert_eq!(finish("length"), [text("x"), done(StopReason::MaxTokens)]);
    assert_eq!(
        finish("something_new"),
        [text("x"), done(StopReason::Other("something_new".into()))]
    );

    let filtered = finish("content_filter");
    let error = single_error(&filtered);
    assert_eq!(error.kind, LlmErrorKind::ContentFiltered);
    assert!(!error.retryable);
}

#[test]
fn openai_error_object_inside_the_stream() {
    let stream = openai_chunk(json!({"content": "Hi"}), Value::Null)
        + r#"data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#
        + "\n\n";
    let events = parse(Provider::OpenAi, &stream);
    assert_eq!(events[0], text("Hi"));
    let error = single_error(&events);
    assert_eq!(error.kind, LlmErrorKind::Server);
    assert!(error.retryable);
    assert_eq!(
        error.message,
        "The server had an error while processing your request."
    );
}

#[test]
fn openai_done_is_emitted_exactly_once_and_input_after_it_is_ignored() {
    let mut parser = StreamParser::new(Provider::OpenAi);
    let mut events = parser.push(OPENAI_TEXT.as_bytes());
    events.extend(parser.push(OPENAI_TEXT.as_bytes()));
    events.extend(parser.finish());
    events.extend(parser.finish());
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1);
    assert_eq!(events.last(), Some(&done(StopReason::EndTurn)));
}

#[test]
fn openai_stream_cut_before_finish_is_a_retryable_error() {
    let cut = &OPENAI_TEXT[..OPENAI_TEXT.find(r#""finish_reason":"stop""#).unwrap()];
    let events = parse(Provider::OpenAi, cut);
    assert_eq!(events[..2], [text("Bonjour"), text(", ça va? 🌍")]);
    let error = single_error(&events);
    assert_eq!(error.kind, LlmErrorKind::InvalidResponse);
    assert!(error.retryable);
}

#[test]
fn openai_stream_with_finish_reason_but_no_done_still_completes() {
    let cut = &OPENAI_TEXT[..OPENAI_TEXT.find("data: [DONE]").unwrap()];
    assert_eq!(
        parse(Provider::OpenAi, cut).last(),
        Some(&done(StopReason::EndTurn))
    );
}

#[test]
fn openai_tool_calls_without_index_or_id_from_lax_servers() {
    let calls = json!({"tool_calls": [
        {"function": {"name": "scroll", "arguments": {"dy": 300}}},
        {"id": "b", "function": {"name": "wait", "arguments": "{\"ms\""}},
        {"function": {"arguments": ": 50}"}},
    ]});
    let stream = openai_chunk(calls, json!("stop")) + "data: [DONE]\n\n";
    assert_eq!(
        parse(Provider::OpenAiCompatible, &stream),
        [
            tool_call("call_0", "scroll", json!({"dy": 300})),
            tool_call("b", "wait", json!({"ms": 50})),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn non_json_chunk_is_an_invalid_response() {
    let events = parse(Provider::OpenAi, "data: {not json\n\n");
    assert_eq!(single_error(&events).kind, LlmErrorKind::InvalidResponse);
}

// ---------------------------------------------------------------------------------------------
// Anthropic streams
// ---------------------------------------------------------------------------------------------

#[test]
fn anthropic_text_and_tool_use() {
    assert_eq!(
        parse_every_way(Provider::Anthropic, ANTHROPIC_TEXT_AND_TOOL),
        [
            text("Je regarde la météo"),
            text(" pour vous ☀️."),
            tool_call(
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "get_weather",
                json!({"location": "Montréal, QC", "unit": "celsius"})
            ),
            usage(572, 89),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn anthropic_overloaded_mid_stream() {
    let events = parse_every_way(Provider::Anthropic, ANTHROPIC_OVERLOADED);
    assert_eq!(events[0], text("Hel"));
    let error = single_error(&events);
    assert_eq!(error.kind, LlmErrorKind::Overloaded);
    assert!(error.retryable);
    assert_eq!(error.message, "Overloaded");
}

#[test]
fn anthropic_stream_error_types() {
    let kind_of = |error_type: &str, message: &str| {
        let event = json!({"type": "error", "error": {"type": error_type, "message": message}});
        let events = parse(
            Provider::Anthropic,
            &format!("event: error\ndata: {event}\n\n"),
        );
        let error = single_error(&events).clone();
        (error.kind, error.retryable)
    };
    use LlmErrorKind::*;
    assert_eq!(
        kind_of("rate_limit_error", "slow down"),
        (RateLimited, true)
    );
    assert_eq!(
        kind_of("api_error", "Internal server error"),
        (Server, true)
    );
    assert_eq!(
        kind_of("authentication_error", "invalid x-api-key"),
        (Auth, false)
    );
    assert_eq!(kind_of("permission_error", "no access"), (Auth, false));
    assert_eq!(
        kind_of("invalid_request_error", "bad field"),
        (BadRequest, false)
    );
    assert_eq!(
        kind_of(
            "invalid_request_error",
            "prompt is too long: 208310 tokens > 200000 maximum"
        ),
        (ContextTooLong, false)
    );
    assert_eq!(kind_of("brand_new_error", "?"), (Server, true));
}

#[test]
fn anthropic_invalid_tool_input() {
    let stream = ANTHROPIC_TEXT_AND_TOOL.replace(r#"sius\"}"#, r#"sius\""#);
    let events = parse(Provider::Anthropic, &stream);
    let error = single_error(&events);
    assert_eq!(error.kind, LlmErrorKind::InvalidToolArguments);
    assert!(error.retryable);
    assert!(error.message.contains("`get_weather`"), "{}", error.message);
    // Usage is still reported for accounting.
    assert!(events.contains(&usage(572, 89)));
}

#[test]
fn anthropic_tool_use_without_input_deltas_has_empty_arguments() {
    let stream = r#"event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"screenshot","input":{}}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}

event: message_stop
data: {"type":"message_stop"}

"#;
    assert_eq!(
        parse(Provider::Anthropic, stream),
        [
            tool_call("toolu_1", "screenshot", json!({})),
            usage(0, 12),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn anthropic_ignores_thinking_and_unknown_events() {
    let stream = r#"event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: some_future_event
data: {"type":"some_future_event","payload":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":1024}}

event: message_stop
data: {"type":"message_stop"}

"#;
    assert_eq!(
        parse(Provider::Anthropic, stream),
        [usage(0, 1024), done(StopReason::MaxTokens)]
    );
}

#[test]
fn anthropic_stream_cut_before_message_stop_is_a_retryable_error() {
    let cut =
        &ANTHROPIC_TEXT_AND_TOOL[..ANTHROPIC_TEXT_AND_TOOL.find("event: message_stop").unwrap()];
    let events = parse(Provider::Anthropic, cut);
    assert!(events.iter().any(|e| matches!(e, LlmEvent::ToolCall(_))));
    let error = single_error(&events);
    assert_eq!(error.kind, LlmErrorKind::InvalidResponse);
    assert!(error.retryable);
}

/// Seen while writing `sse_openai_mutated_streams_split_anywhere`, which finds it since its
/// streams may number calls up to the largest index: a call there followed by one without an
/// index overflowed `last + 1`. The second call's fragments now go to the same call, whose
/// arguments are then not one JSON object.
#[test]
fn openai_call_without_index_after_the_largest_index_does_not_overflow() {
    let stream = openai_chunk(
        json!({"tool_calls": [{"index": usize::MAX, "id": "a", "function": {"name": "x", "arguments": "{}"}}]}),
        Value::Null,
    ) + &openai_chunk(
        json!({"tool_calls": [{"id": "b", "function": {"name": "y", "arguments": "{}"}}]}),
        Value::Null,
    ) + &openai_chunk(json!({}), json!("tool_calls"))
        + "data: [DONE]\n\n";
    let events = parse(Provider::OpenAi, &stream);
    assert_eq!(
        single_error(&events).kind,
        LlmErrorKind::InvalidToolArguments
    );
}

/// Found by `sse_anthropic_generated_streams_split_anywhere`: the prompt token counts were
/// added with `+`, which panicked (debug) or wrapped (release) on counts a server can send.
#[test]
fn anthropic_token_counts_too_large_to_add_saturate() {
    let stream = concat!(
        "event: message_start\n",
        r#"data: {"type":"message_start","message":{"usage":{"input_tokens":0,"#,
        r#""cache_creation_input_tokens":4016353317634435680,"#,
        r#""cache_read_input_tokens":14430390756075115936,"output_tokens":0}}}"#,
        "\n\nevent: message_delta\n",
        r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":0}}"#,
        "\n\nevent: message_stop\n",
        r#"data: {"type":"message_stop"}"#,
        "\n\n",
    );
    assert_eq!(
        parse(Provider::Anthropic, stream),
        [usage(u64::MAX, 0), done(StopReason::EndTurn)]
    );
}

// ---------------------------------------------------------------------------------------------
// HTTP status classification
// ---------------------------------------------------------------------------------------------

const OPENAI_RATE_LIMIT_BODY: &str = r#"{
    "error": {
        "message": "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s.",
        "type": "tokens",
        "param": null,
        "code": "rate_limit_exceeded"
    }
}"#;

#[test]
fn classify_429_with_retry_after() {
    let error = classify_http_status(Provider::OpenAi, 429, Some("2"), OPENAI_RATE_LIMIT_BODY);
    assert_eq!(error.kind, LlmErrorKind::RateLimited);
    assert!(error.retryable);
    assert_eq!(error.http_status, Some(429));
    assert_eq!(error.retry_after_ms, Some(2000));
    assert!(error.message.starts_with("Rate limit reached for gpt-4o"));

    let fractional = classify_http_status(Provider::Anthropic, 429, Some(" 1.5 "), "");
    assert_eq!(fractional.retry_after_ms, Some(1500));
    let http_date = classify_http_status(
        Provider::Anthropic,
        429,
        Some("Wed, 21 Oct 2015 07:28:00 GMT"),
        "",
    );
    assert_eq!(http_date.retry_after_ms, None);
}

#[test]
fn classify_exhausted_quota_is_not_retryable() {
    let body = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
    let error = classify_http_status(Provider::OpenAi, 429, None, body);
    assert_eq!(error.kind, LlmErrorKind::RateLimited);
    assert!(!error.retryable);
}

#[test]
fn classify_server_errors() {
    for status in [500, 502, 504] {
        let error = classify_http_status(Provider::OpenAi, status, None, "<html>oops</html>");
        assert_eq!(error.kind, LlmErrorKind::Server, "{status}");
        assert!(error.retryable, "{status}");
    }
    for status in [503, 529] {
        let error = classify_http_status(Provider::OpenAi, status, None, "<html>oops</html>");
        assert_eq!(error.kind, LlmErrorKind::Overloaded, "{status}");
        assert!(error.retryable, "{status}");
    }
    let unavailable = classify_http_status(Provider::OpenAi, 503, Some("30"), "");
    assert_eq!(unavailable.message, "OpenAI API error: Service Unavailable");
    assert_eq!(unavailable.retry_after_ms, Some(30_000));

    let overloaded = classify_http_status(
        Provider::Anthropic,
        529,
        None,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    );
    assert_eq!(overloaded.kind, LlmErrorKind::Overloaded);
    assert!(overloaded.retryable);
    assert_eq!(overloaded.message, "Overloaded");
    assert_eq!(overloaded.to_string(), "overloaded: Overloaded (HTTP 529)");
    // Overloaded as the body says, whatever 5xx carries it.
    let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let in_500 = classify_http_status(Provider::Anthropic, 500, None, body);
    assert_eq!(in_500.kind, LlmErrorKind::Overloaded);
}

#[test]
fn classify_auth_errors() {
    let openai = classify_http_status(
        Provider::OpenAi,
        401,
        None,
        r#"{"error":{"message":"Incorrect API key provided: sk-proj-********************abcd.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
    );
    assert_eq!(openai.kind, LlmErrorKind::Auth);
    assert!(!openai.retryable);

    let anthropic = classify_http_status(
        Provider::Anthropic,
        403,
        None,
        r#"{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}"#,
    );
    assert_eq!(anthropic.kind, LlmErrorKind::Auth);
    assert!(!anthropic.retryable);
    assert!(anthropic.message.starts_with("Your API key does not have"));
}

#[test]
fn classify_context_too_long() {
    let openai = classify_http_status(
        Provider::OpenAi,
        400,
        None,
        r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
    );
    assert_eq!(openai.kind, LlmErrorKind::ContextTooLong);
    assert!(!openai.retryable);

    let anthropic = classify_http_status(
        Provider::Anthropic,
        400,
        None,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
    );
    assert_eq!(anthropic.kind, LlmErrorKind::ContextTooLong);

    let too_large = classify_http_status(
        Provider::Anthropic,
        413,
        None,
        r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
    );
    assert_eq!(too_large.kind, LlmErrorKind::ContextTooLong);
}

#[test]
fn classify_other_client_errors() {
    let error = classify_http_status(
        Provider::Anthropic,
        400,
        None,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}"#,
    );
    assert_eq!(error.kind, LlmErrorKind::BadRequest);
    assert!(!error.retryable);
    assert_eq!(error.message, "max_tokens: Field required");

    let filtered = classify_http_status(
        Provider::OpenAiCompatible,
        400,
        None,
        r#"{"error":{"message":"The response was filtered","type":null,"param":"prompt","code":"content_filter"}}"#,
    );
    assert_eq!(filtered.kind, LlmErrorKind::ContentFiltered);

    let bare = classify_http_status(
        Provider::OpenAiCompatible,
        404,
        None,
        r#"{"error":"model \"llama9\" not found, try pulling it first"}"#,
    );
    assert_eq!(bare.kind, LlmErrorKind::BadRequest);
    assert_eq!(
        bare.message,
        "model \"llama9\" not found, try pulling it first"
    );
}

#[test]
fn error_constructors() {
    let network = LlmError::network("connection reset");
    assert_eq!(
        (network.kind, network.retryable),
        (LlmErrorKind::Network, true)
    );
    let timeout = LlmError::timeout(120_000);
    assert_eq!(
        (timeout.kind, timeout.retryable),
        (LlmErrorKind::Timeout, true)
    );
    assert!(timeout.message.contains("120000 ms"));
    let aborted = LlmError::aborted();
    assert_eq!(
        (aborted.kind, aborted.retryable),
        (LlmErrorKind::Aborted, false)
    );
    assert_eq!(aborted.to_string(), "aborted: request aborted");
}

// ---------------------------------------------------------------------------------------------
// Configuration and request building
// ---------------------------------------------------------------------------------------------

const KEY: &str = "sk-test-SECRET-0123456789";

fn browser_tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "click".into(),
        description: "Click an element".into(),
        parameters: json!({
            "type": "object",
            "properties": {"selector": {"type": "string"}},
            "required": ["selector"],
        }),
    }]
}

fn conversation_with_tools() -> Vec<ChatMessage> {
    vec![
        ChatMessage::system("You drive a browser."),
        ChatMessage::system("Be brief."),
        ChatMessage::user("Submit the form"),
        ChatMessage::assistant_with_tool_calls(
            "",
            vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "click".into(),
                    arguments: json!({"selector": "#accept"}),
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "click".into(),
                    arguments: json!({"selector": "#submit"}),
                },
            ],
        ),
        ChatMessage::tool_result("call_a", "clicked"),
        ChatMessage::tool_result("call_b", "clicked"),
        ChatMessage::assistant("Done."),
    ]
}

#[test]
fn provider_names() {
    for (provider, name) in [
        (Provider::OpenAi, "openai"),
        (Provider::Anthropic, "anthropic"),
        (Provider::OpenAiCompatible, "openai_compatible"),
    ] {
        assert_eq!(name.parse::<Provider>(), Ok(provider));
        assert_eq!(provider.to_string(), name);
        assert_eq!(serde_json::to_value(provider).unwrap(), json!(name));
        assert_eq!(
            serde_json::from_value::<Provider>(json!(name)).unwrap(),
            provider
        );
    }
    assert_eq!(" OpenAI ".parse::<Provider>(), Ok(Provider::OpenAi));
    assert!("gemini".parse::<Provider>().is_err());
}

#[test]
fn config_defaults_and_debug_redacts_the_key() {
    let config = LlmConfig::new(Provider::OpenAi, "gpt-4o").with_api_key(KEY);
    assert_eq!(config.base_url, "https://api.openai.com/v1");
    assert_eq!(
        LlmConfig::new(Provider::Anthropic, "claude").base_url,
        "https://api.anthropic.com/v1"
    );
    let debug = format!("{config:?}");
    assert!(!debug.contains(KEY), "{debug}");
    assert!(
        debug.contains("<redacted>") && debug.contains("gpt-4o"),
        "{debug}"
    );

    let request = build_request(&config, &[ChatMessage::user("hi")], &[]);
    let debug = format!("{request:?}");
    assert!(!debug.contains(KEY), "{debug}");
}

#[test]
fn openai_request() {
    let config = LlmConfig::new(Provider::OpenAi, "gpt-4o").with_api_key(KEY);
    let request = build_request(&config, &conversation_with_tools(), &browser_tools());
    assert_eq!(request.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(
        header(&request, "authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(header(&request, "content-type"), Some("application/json"));

    let body = body(&request);
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_completion_tokens"], LlmConfig::DEFAULT_MAX_TOKENS);
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "click",
            "description": "Click an element",
            "parameters": browser_tools()[0].parameters,
        }}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You drive a browser."},
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Submit the form"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function",
                 "function": {"name": "click", "arguments": "{\"selector\":\"#accept\"}"}},
                {"id": "call_b", "type": "function",
                 "function": {"name": "click", "arguments": "{\"selector\":\"#submit\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_a", "content": "clicked"},
            {"role": "tool", "tool_call_id": "call_b", "content": "clicked"},
            {"role": "assistant", "content": "Done."},
        ])
    );
}

#[test]
fn openai_compatible_request_without_key_or_tools() {
    let config = LlmConfig {
        max_tokens: 0,
        ..LlmConfig::new(Provider::OpenAiCompatible, "llama3.1")
            .with_base_url("http://localhost:11434/v1/")
    };
    let request = build_request(&config, &[ChatMessage::user("hi")], &[]);
    assert_eq!(request.url, "http://localhost:11434/v1/chat/completions");
    assert_eq!(header(&request, "authorization"), None);
    let body = body(&request);
    let fields = body.as_object().unwrap();
    for absent in ["tools", "max_tokens", "max_completion_tokens"] {
        assert!(!fields.contains_key(absent), "{absent} in {body}");
    }

    let capped = LlmConfig {
        max_tokens: 256,
        ..config
    };
    let body = self::body(&build_request(&capped, &[ChatMessage::user("hi")], &[]));
    assert_eq!(body["max_tokens"], 256);
}

#[test]
fn anthropic_request() {
    let config = LlmConfig::new(Provider::Anthropic, "claude-sonnet-4-5")
        .with_api_key(KEY)
        .with_base_url("https://gateway.example/anthropic/v1/");
    let request = build_request(&config, &conversation_with_tools(), &browser_tools());
    assert_eq!(request.url, "https://gateway.example/anthropic/v1/messages");
    assert_eq!(header(&request, "x-api-key"), Some(KEY));
    assert_eq!(header(&request, "anthropic-version"), Some("2023-06-01"));
    assert_eq!(header(&request, "content-type"), Some("application/json"));
    assert_eq!(header(&request, "authorization"), None);

    let body = body(&request);
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], LlmConfig::DEFAULT_MAX_TOKENS);
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"], "You drive a browser.\n\nBe brief.");
    assert_eq!(
        body["tools"],
        json!([{
            "name": "click",
            "description": "Click an element",
            "input_schema": browser_tools()[0].parameters,
        }])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Submit the form"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_a", "name": "click", "input": {"selector": "#accept"}},
                {"type": "tool_use", "id": "call_b", "name": "click", "input": {"selector": "#submit"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "clicked"},
                {"type": "tool_result", "tool_use_id": "call_b", "content": "clicked"},
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        ])
    );
}

#[test]
fn anthropic_request_without_system_or_tools() {
    let config = LlmConfig::new(Provider::Anthropic, "claude-haiku-4-5");
    let messages = [
        ChatMessage::user("What is on the page?"),
        ChatMessage::assistant_with_tool_calls(
            "Let me look.",
            vec![ToolCall {
                id: "toolu_1".into(),
                name: "read_page".into(),
                arguments: json!({}),
            }],
        ),
        ChatMessage::tool_result("toolu_1", "<h1>Hello</h1>"),
        ChatMessage::user("Summarize it."),
    ];
    let request = build_request(&config, &messages, &[]);
    assert_eq!(header(&request, "x-api-key"), None);
    let body = body(&request);
    let fields = body.as_object().unwrap();
    assert!(!fields.contains_key("system") && !fields.contains_key("tools"));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "What is on the page?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "read_page", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "<h1>Hello</h1>"},
                {"type": "text", "text": "Summarize it."},
            ]},
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// SSE decoder
// ---------------------------------------------------------------------------------------------

fn sse(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    chunks.iter().flat_map(|c| decoder.push(c)).collect()
}

fn sse_event(event: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: event.map(str::to_owned),
        data: data.to_owned(),
    }
}

#[test]
fn sse_crlf_split_between_cr_and_lf() {
    let expected = [sse_event(Some("a"), "1"), sse_event(None, "2")];
    assert_eq!(
        sse(&[b"event: a\r", b"\ndata: 1\r\n\r", b"\ndata: 2\r\n\r\n"]),
        expected
    );
    // A lone CR is a line end too, and CR followed later by a real LF must not merge lines.
    assert_eq!(sse(&[b"event: a\rdata: 1\r\rdata: 2\n\n"]), expected);
    assert_eq!(
        sse(&[b"event: a\r", b"data: 1\r", b"\r", b"data: 2\r\r"]),
        expected
    );
}

#[test]
fn sse_comments_and_unknown_fields_are_ignored() {
    assert_eq!(
        sse(&[b": keep-alive\n\n:another\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n"]),
        [sse_event(None, "x")]
    );
}

#[test]
fn sse_multi_line_data_and_field_forms() {
    assert_eq!(
        sse(&[b"data: a\ndata:b\ndata:  c\ndata\ndata:\n\n"]),
        [sse_event(None, "a\nb\n c\n\n")]
    );
    // An event with only an `event:` field carries no data and is not dispatched; its type
    // does not leak into the next event.
    assert_eq!(
        sse(&[b"event: lonely\n\ndata: x\n\n"]),
        [sse_event(None, "x")]
    );
    assert_eq!(sse(&[b"data\n\n"]), [sse_event(None, "")]);
}

#[test]
fn sse_utf8_split_inside_a_character() {
    let bytes = "data: é🌍\n\n".as_bytes();
    for at in 0..=bytes.len() {
        let (head, tail) = bytes.split_at(at);
        assert_eq!(
            sse(&[head, tail]),
            [sse_event(None, "é🌍")],
            "split at {at}"
        );
    }
}

#[test]
fn sse_leading_bom_is_stripped() {
    assert_eq!(
        sse(&[b"\xEF\xBB", b"\xBFdata: x\n\n"]),
        [sse_event(None, "x")]
    );
}

#[test]
fn sse_incomplete_final_event_is_discarded() {
    assert_eq!(
        sse(&[b"data: x\n\ndata: partial\n"]),
        [sse_event(None, "x")]
    );
}

// ---------------------------------------------------------------------------------------------
// Images
// ---------------------------------------------------------------------------------------------

/// A tool result, then the page with its screenshot: the shape of a run's next call.
fn page_with_screenshot() -> Vec<ChatMessage> {
    let image = Image::from_bytes("image/jpeg", &[0xFF, 0xD8, 0xFF, 0xE0]).unwrap();
    vec![
        ChatMessage::user("Find the mug"),
        ChatMessage::assistant_with_tool_calls(
            "",
            vec![ToolCall {
                id: "call_1".into(),
                name: "AgentOutput".into(),
                arguments: json!({}),
            }],
        ),
        ChatMessage::tool_result("call_1", "ok"),
        ChatMessage {
            image: Some(image),
            ..ChatMessage::user("<page>…</page>")
        },
    ]
}

#[test]
fn openai_sends_an_image_as_an_image_url_part_after_the_text() {
    let config = LlmConfig::new(Provider::OpenAi, "gpt-4o");
    let body = body(&build_request(&config, &page_with_screenshot(), &[]));
    assert_eq!(
        body["messages"][0],
        json!({"role": "user", "content": "Find the mug"})
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "user", "content": [
            {"type": "text", "text": "<page>…</page>"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4A==", "detail": "auto"}},
        ]})
    );
}

#[test]
fn anthropic_sends_an_image_as_a_base64_block_in_the_same_turn_as_the_tool_result() {
    let config = LlmConfig::new(Provider::Anthropic, "claude-sonnet-4-5");
    let body = body(&build_request(&config, &page_with_screenshot(), &[]));
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "ok"},
            {"type": "text", "text": "<page>…</page>"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4A=="}},
        ]})
    );
}

#[test]
fn images_are_checked_before_they_are_read_and_never_logged() {
    assert!(Image::check("image/png", MAX_IMAGE_BYTES).is_ok());
    let big = Image::check("image/jpeg", MAX_IMAGE_BYTES + 1).unwrap_err();
    assert!(big.contains("over the 1500000 bytes"), "{big}");
    let svg = Image::from_bytes("image/svg+xml", b"<svg/>").unwrap_err();
    assert!(svg.contains("image/svg+xml"), "{svg}");
    let image = Image::from_bytes("image/png", &[7; 3000]).unwrap();
    let logged = format!(
        "{:?}",
        ChatMessage {
            image: Some(image),
            ..ChatMessage::user("x")
        }
    );
    assert!(logged.contains("base64_len: 4000"), "{logged}");
    assert!(
        !logged.contains("BwcH"),
        "the bytes stay out of logs: {logged}"
    );
}

#[test]
fn models_known_to_take_images() {
    for model in [
        "gpt-4o",
        "gpt-4o-mini",
        "GPT-4.1-nano",
        "gpt-5",
        "o3",
        "o4-mini",
        "claude-3-5-sonnet-latest",
        "claude-sonnet-4-5",
        "claude-opus-4-1",
        "claude-haiku-4-5",
        "gemini-2.5-flash",
        "openai/gpt-4o",
        "llava:13b",
        "llama3.2-vision",
        "qwen2.5-vl-7b-instruct",
    ] {
        assert!(model_accepts_images(model), "{model}");
    }
    for model in [
        "gpt-3.5-turbo",
        "gpt-4",
        "o1-mini",
        "o3-mini",
        "llama3.1",
        "deepseek-chat",
        "mistral-large",
        "",
    ] {
        assert!(!model_accepts_images(model), "{model}");
    }
}

#[test]
fn image_tokens_follow_the_larger_of_the_providers_rules() {
    // Anthropic: 1280 × 720 / 750; OpenAI: 6 tiles × 170 + 85 = 1,105.
    assert_eq!(image_tokens(1280, 720), 1229);
    // OpenAI's tiles cost more for a small square: 1 tile.
    assert_eq!(image_tokens(100, 100), 255);
    // A tall full page is brought down to the providers' limits first.
    assert!(image_tokens(1280, 20_000) < 2_000);
    assert_eq!(image_tokens(0, 0), image_tokens(1280, 800), "unknown size");
}

#[test]
fn a_refused_image_is_its_own_error_kind() {
    let openai = classify_http_status(
        Provider::OpenAi,
        400,
        None,
        r#"{"error":{"message":"Invalid content type. image_url is only supported by certain models.","type":"invalid_request_error","param":"messages.[3].content.[1].type","code":null}}"#,
    );
    assert_eq!(openai.kind, LlmErrorKind::ImageRefused);
    assert!(!openai.retryable, "the same request fails the same way");
    let compatible = classify_http_status(
        Provider::OpenAiCompatible,
        500,
        None,
        r#"{"error":"model does not support image input"}"#,
    );
    assert_eq!(
        compatible.kind,
        LlmErrorKind::Server,
        "only a refused request"
    );
    let vllm = classify_http_status(
        Provider::OpenAiCompatible,
        400,
        None,
        r#"{"object":"error","message":"llama3.1 is not a multimodal model","type":"BadRequestError","code":400}"#,
    );
    assert_eq!(vllm.kind, LlmErrorKind::ImageRefused);
    let anthropic = classify_http_status(
        Provider::Anthropic,
        400,
        None,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.2.content.2.image.source.base64: image exceeds 5 MB maximum"}}"#,
    );
    assert_eq!(anthropic.kind, LlmErrorKind::ImageRefused);
}
