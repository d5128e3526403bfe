use mimo_protocol::{ErrorCode, ErrorObject};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::config::Provider;

pub use mimo_protocol::LlmErrorKind;

/// A failed model call. Messages come from the provider or from this crate, never from the
/// config, so they are safe to log and to show the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}{}", http_status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
pub struct LlmError {
    pub kind: LlmErrorKind,
    pub message: String,
    pub retryable: bool,
    pub http_status: Option<u16>,
    /// How long the provider asked us to wait before retrying.
    pub retry_after_ms: Option<u64>,
}

impl LlmError {
    /// An error whose retryability follows its kind.
    pub fn new(kind: LlmErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            retryable: kind.is_retryable(),
            http_status: None,
            retry_after_ms: None,
        }
    }

    pub fn network(message: impl Into<String>) -> Self {
        Self::new(LlmErrorKind::Network, message)
    }

    pub fn timeout(timeout_ms: u64) -> Self {
        Self::new(
            LlmErrorKind::Timeout,
            format!("no complete response within {timeout_ms} ms"),
        )
    }

    pub fn aborted() -> Self {
        Self::new(LlmErrorKind::Aborted, "request aborted")
    }

    pub(crate) fn invalid_response(message: impl Into<String>) -> Self {
        Self::new(LlmErrorKind::InvalidResponse, message)
    }

    /// An error reported inside a successful (2xx) stream.
    pub(crate) fn from_stream_error(error: &ApiError) -> Self {
        let mut err = Self::new(
            error.kind().unwrap_or(LlmErrorKind::Server),
            error
                .message()
                .unwrap_or("provider reported an error mid-stream"),
        );
        err.retryable &= !error.is_quota_exhausted();
        err
    }
}

impl From<&LlmError> for ErrorObject {
    /// The one wire form of a failed model call: `LLM_ERROR`, saying how it failed.
    fn from(error: &LlmError) -> Self {
        ErrorObject {
            code: ErrorCode::LlmError,
            message: format!("The language model failed: {error}"),
            retryable: error.retryable,
        }
    }
}

/// Classifies a non-2xx response from `provider`, given its `retry-after` header and body.
pub fn classify_http_status(
    provider: Provider,
    status: u16,
    retry_after_header: Option<&str>,
    body: &str,
) -> LlmError {
    use LlmErrorKind::*;

    let api_error = ApiError::parse_body(body);
    let status_kind = match status {
        401 | 403 => Auth,
        408 => Timeout,
        413 => ContextTooLong,
        429 => RateLimited,
        400..=499 => BadRequest,
        503 | 529 => Overloaded,
        500..=599 => Server,
        _ => InvalidResponse,
    };
    // The status is authoritative except that a generic 4xx hides a few conditions that need
    // their own handling and are only told apart by the body.
    let kind = match (status_kind, api_error.kind()) {
        (BadRequest, Some(refined @ (ContextTooLong | ContentFiltered | ImageRefused))) => refined,
        (Server, Some(Overloaded)) => Overloaded,
        (kind, _) => kind,
    };
    let message = match api_error.message() {
        Some(message) => message.to_owned(),
        None => format!(
            "{} API error: {}",
            provider_label(provider),
            reason_phrase(status)
        ),
    };
    LlmError {
        retryable: kind.is_retryable() && !api_error.is_quota_exhausted(),
        http_status: Some(status),
        retry_after_ms: retry_after_header.and_then(parse_retry_after),
        ..LlmError::new(kind, message)
    }
}

/// `Retry-After` in (possibly fractional) seconds. The HTTP-date form is ignored because this
/// crate has no clock to subtract from.
fn parse_retry_after(value: &str) -> Option<u64> {
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).ceil() as u64)
}

fn provider_label(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAi => "OpenAI",
        Provider::Anthropic => "Anthropic",
        Provider::OpenAiCompatible => "OpenAI-compatible",
    }
}

fn reason_phrase(status: u16) -> String {
    let phrase = match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => return format!("HTTP status {status}"),
    };
    phrase.to_owned()
}

/// The error object of either provider: OpenAI `{"message", "type", "code"}`, Anthropic
/// `{"type", "message"}`, or the bare message string some compatible servers send instead.
#[derive(Debug, Default, Deserialize)]
#[serde(from = "ApiErrorRepr")]
pub(crate) struct ApiError {
    message: Option<String>,
    error_type: Option<String>,
    /// Usually a string, but some compatible servers send numbers.
    code: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ApiErrorRepr {
    Object {
        message: Option<String>,
        #[serde(rename = "type")]
        error_type: Option<String>,
        code: Option<Value>,
    },
    Text(String),
}

impl From<ApiErrorRepr> for ApiError {
    fn from(repr: ApiErrorRepr) -> Self {
        match repr {
            ApiErrorRepr::Object {
                message,
                error_type,
                code,
            } => Self {
                message,
                error_type,
                code,
            },
            ApiErrorRepr::Text(message) => Self {
                message: Some(message),
                ..Self::default()
            },
        }
    }
}

/// An error response body: the `{"error": …}` envelope of both providers, or the top-level
/// `{"message": …}` of some compatible servers.
#[derive(Deserialize)]
struct ErrorBody {
    error: Option<ApiError>,
    message: Option<String>,
}

impl ApiError {
    fn parse_body(body: &str) -> Self {
        match serde_json::from_str(body) {
            Ok(ErrorBody {
                error: Some(error), ..
            }) => error,
            Ok(ErrorBody { message, .. }) => Self {
                message,
                ..Self::default()
            },
            Err(_) => Self::default(),
        }
    }

    pub(crate) fn message(&self) -> Option<&str> {
        self.message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
    }

    /// Most specific label first: OpenAI's `code` refines its `type`.
    fn labels(&self) -> impl Iterator<Item = &str> {
        let code = self.code.as_ref().and_then(Value::as_str);
        code.into_iter().chain(self.error_type.as_deref())
    }

    fn kind(&self) -> Option<LlmErrorKind> {
        use LlmErrorKind::*;

        let kind = self.labels().find_map(|label| match label {
            "context_length_exceeded" | "request_too_large" => Some(ContextTooLong),
            "content_filter" | "content_policy_violation" => Some(ContentFiltered),
            "rate_limit_error" | "rate_limit_exceeded" | "insufficient_quota" => Some(RateLimited),
            "overloaded_error" => Some(Overloaded),
            "api_error" | "server_error" => Some(Server),
            "timeout_error" => Some(Timeout),
            "authentication_error" | "permission_error" | "invalid_api_key" => Some(Auth),
            "invalid_request_error" | "not_found_error" => Some(BadRequest),
            _ => None,
        });
        // Anthropic and most compatible servers report an overlong prompt, and a model that
        // takes no images, only in prose.
        match kind {
            None | Some(BadRequest) if self.message().is_some_and(mentions_context_overflow) => {
                Some(ContextTooLong)
            }
            None | Some(BadRequest) if self.message().is_some_and(mentions_images) => {
                Some(ImageRefused)
            }
            kind => kind,
        }
    }

    /// An exhausted billing quota answers with 429 like a rate limit, but waiting won't help.
    fn is_quota_exhausted(&self) -> bool {
        self.labels().any(|label| label == "insufficient_quota")
    }
}

fn mentions_context_overflow(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "prompt is too long",
        "context length",
        "context window",
        "too many tokens",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}

/// A refused request that names images: OpenAI's "image_url is only supported by certain
/// models", "does not support image input", "is not a multimodal model", "vision is not
/// supported", Anthropic's "Could not process image".
fn mentions_images(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    ["image", "vision", "multimodal", "multi-modal"]
        .iter()
        .any(|needle| message.contains(needle))
}
