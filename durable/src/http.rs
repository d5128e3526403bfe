//! Small HTTP helpers shared by the worker and the Durable Objects.

use mimo_protocol::{ErrorCode, ErrorObject};
use serde::Serialize;
use worker::{Headers, Method, Request, RequestInit, Response, Result};

/// A JSON error body `{code, message, retryable}` with the status that fits the code.
pub fn error_response(error: &ErrorObject) -> Result<Response> {
    let status = match error.code {
        ErrorCode::Unauthorized => 401,
        ErrorCode::PermissionDenied => 403,
        ErrorCode::NotFound => 404,
        ErrorCode::SchemaValidationFailed => 400,
        ErrorCode::PluginOffline => 409,
        ErrorCode::InternalError => 500,
        _ => 422,
    };
    Ok(Response::from_json(error)?.with_status(status))
}

/// A request between our own objects. The host is never resolved: a Durable Object stub
/// routes by path alone.
pub fn json_request<T: Serialize>(method: Method, path: &str, body: Option<&T>) -> Result<Request> {
    let mut init = RequestInit::new();
    init.with_method(method);
    if let Some(body) = body {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        init.with_headers(headers)
            .with_body(Some(serde_json::to_string(body)?.into()));
    }
    Request::new_with_init(&format!("https://internal{path}"), &init)
}

/// Milliseconds since the Unix epoch, from the runtime's clock.
pub fn now_ms() -> u64 {
    worker::Date::now().as_millis()
}

/// Reads the body of a response from another object: the value, or the error object it sent.
pub async fn read_json<T: serde::de::DeserializeOwned>(
    mut response: Response,
) -> Result<std::result::Result<T, ErrorObject>> {
    if response.status_code() < 300 {
        Ok(Ok(response.json().await?))
    } else {
        Ok(Err(response.json().await?))
    }
}
