//! Small HTTP helpers shared by the worker and the Durable Objects.

use mimo_protocol::{ErrorCode, ErrorObject};
use serde::Serialize;
use worker::{Env, Headers, Method, Request, RequestInit, Response, Result, Url};

/// A JSON error body `{code, message, retryable}` with the status that fits the code.
/// The value of `name` in `url`'s query, decoded (the first, when it is given twice).
pub fn query_param(url: &Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

pub fn error_response(error: &ErrorObject) -> Result<Response> {
    let status = match error.code {
        ErrorCode::Unauthorized => 401,
        ErrorCode::PermissionDenied | ErrorCode::ConfirmationRequired => 403,
        ErrorCode::NotFound => 404,
        ErrorCode::SchemaValidationFailed | ErrorCode::UploadIncomplete => 400,
        ErrorCode::PluginOffline => 409,
        ErrorCode::InternalError => 500,
        ErrorCode::MethodNotAllowed => 405,
        ErrorCode::PayloadTooLarge | ErrorCode::ReadabilityTooLarge => 413,
        ErrorCode::UnsupportedMediaType => 415,
        ErrorCode::LengthRequired => 411,
        ErrorCode::RateLimited => 429,
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

/// A request's JSON body, or why it is not one (`SCHEMA_VALIDATION_FAILED`).
pub async fn read_body<T: serde::de::DeserializeOwned>(
    req: &mut Request,
) -> std::result::Result<T, ErrorObject> {
    let body = req.text().await.map_err(|e| {
        ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            format!("unreadable body: {e}"),
        )
    })?;
    serde_json::from_str(&body).map_err(|e| {
        ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            format!("malformed body: {e}"),
        )
    })
}

/// What the deployment token is now, as a short digest: a socket ticket and a web app's socket
/// are tagged with it when made, and refused or closed once the token changed (rotated with
/// `wrangler secret put`, a Durable Object may wake under the new one with sockets opened
/// under the old).
pub fn token_generation(env: &Env) -> String {
    let token = env
        .secret("MIMO_API_TOKEN")
        .map(|s| s.to_string())
        .unwrap_or_default();
    mimo_agent::credentials::digest(&token)[..16].to_owned()
}

/// Milliseconds since the Unix epoch, from the runtime's clock.
pub fn now_ms() -> u64 {
    worker::Date::now().as_millis()
}

/// Bytes from the runtime's CSPRNG (`crypto.getRandomValues`).
pub fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    use worker::js_sys::{global, Function, Reflect, Uint8Array};
    use worker::wasm_bindgen::JsCast;
    let array = Uint8Array::new_with_length(N as u32);
    let crypto = Reflect::get(&global(), &"crypto".into())?;
    let get_random_values: Function =
        Reflect::get(&crypto, &"getRandomValues".into())?.dyn_into()?;
    get_random_values.call1(&crypto, &array)?;
    let mut bytes = [0u8; N];
    array.copy_to(&mut bytes);
    Ok(bytes)
}
