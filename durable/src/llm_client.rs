//! Performs an LLM call: the request is built and the stream parsed by `mimo_agent::llm`; this
//! file only moves bytes and enforces the time budget.

use futures_util::StreamExt;
use mimo_agent::llm::{self, LlmConfig, LlmError, LlmEvent, StreamParser};
use std::time::Duration;
use worker::{AbortController, Fetch, Headers, Method, Request, RequestInit};

use crate::deadline::with_deadline;

/// Streams one completion, handing each event to `on_event` until it returns `false` (the turn
/// was stopped) or the stream ends. A stream that ends always ends with exactly one terminal
/// event (`Done` or `Error`), including on timeout and network failure.
pub async fn stream_completion(
    config: &LlmConfig,
    messages: &[llm::ChatMessage],
    tools: &[llm::ToolSpec],
    mut on_event: impl FnMut(LlmEvent) -> bool,
) {
    let controller = AbortController::default();
    let budget = Duration::from_millis(config.timeout_ms);
    let deadline = worker::Date::now().as_millis() + config.timeout_ms;
    let response = match with_deadline(send(config, messages, tools, &controller), budget).await {
        Some(Ok(response)) => response,
        Some(Err(error)) => {
            on_event(LlmEvent::Error(error));
            return;
        }
        None => {
            controller.abort();
            on_event(LlmEvent::Error(LlmError::timeout(config.timeout_ms)));
            return;
        }
    };
    let mut response = response;
    if response.status_code() >= 300 {
        let retry_after = response.headers().get("retry-after").ok().flatten();
        // Its error body is read within what is left of the call's budget, like its stream.
        let left = deadline.saturating_sub(worker::Date::now().as_millis());
        let body = match with_deadline(response.text(), Duration::from_millis(left)).await {
            Some(Ok(body)) => body,
            Some(Err(e)) => format!("(the error body could not be read: {e})"),
            None => {
                controller.abort();
                format!(
                    "(the error body did not come within {} s)",
                    config.timeout_ms / 1000
                )
            }
        };
        on_event(LlmEvent::Error(llm::classify_http_status(
            config.provider,
            response.status_code(),
            retry_after.as_deref(),
            &body,
        )));
        return;
    }
    let mut body = match response.stream() {
        Ok(body) => body,
        Err(e) => {
            on_event(LlmEvent::Error(LlmError::network(format!(
                "response has no body: {e}"
            ))));
            return;
        }
    };
    let mut parser = StreamParser::new(config.provider);
    loop {
        let left = deadline.saturating_sub(worker::Date::now().as_millis());
        let events = match with_deadline(body.next(), Duration::from_millis(left)).await {
            None => vec![LlmEvent::Error(LlmError::timeout(config.timeout_ms))],
            Some(None) => {
                let mut events = parser.finish();
                if !events.iter().any(LlmEvent::is_terminal) {
                    events.push(LlmEvent::Error(LlmError::network(
                        "the stream ended without a result",
                    )));
                }
                events
            }
            Some(Some(Ok(bytes))) => parser.push(&bytes),
            Some(Some(Err(e))) => vec![LlmEvent::Error(LlmError::network(e.to_string()))],
        };
        for event in events {
            let terminal = event.is_terminal();
            // Stop when the turn is over either way; aborting also frees the connection.
            if !on_event(event) || terminal {
                controller.abort();
                return;
            }
        }
    }
}

async fn send(
    config: &LlmConfig,
    messages: &[llm::ChatMessage],
    tools: &[llm::ToolSpec],
    controller: &AbortController,
) -> Result<worker::Response, LlmError> {
    let http = llm::build_request(config, messages, tools);
    let headers = Headers::new();
    for (name, value) in &http.headers {
        headers
            .set(name, value)
            .map_err(|e| LlmError::network(e.to_string()))?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(http.body.into()));
    let request =
        Request::new_with_init(&http.url, &init).map_err(|e| LlmError::network(e.to_string()))?;
    Fetch::Request(request)
        .send_with_signal(&controller.signal())
        .await
        .map_err(|e| LlmError::network(format!("could not reach {}: {e}", http.url)))
}
