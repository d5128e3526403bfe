//! Error codes and the error object that travels on every wire.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Every error code Mimo reports. Browser-side codes come from the design (seed 000 §5.1,
/// seed 002 §5.2.1); then the server's own failures; the `E_*` codes last are the local
/// bridge's answers (seed 004 §7), kept here so that a bridge error travels on as the same
/// [`ErrorObject`] (the coordinator and the model see one kind of error everywhere).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    TS,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumIter,
)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    PluginOffline,
    PluginTimeoutAck,
    PluginTimeoutExec,
    PagePrepFailed,
    CdpUnavailable,
    InvalidTaskTab,
    TaskTabClosed,
    InvalidTarget,
    TargetNotFound,
    TargetNotInteractable,
    /// The element is not what the step was rated on: since the page was read, its form sends
    /// elsewhere, it leads to another site, it holds other fields. Nothing was done; the step
    /// is chosen and rated again on the page as it is now (not retried as it was).
    TargetChanged,
    ReadabilityTooLarge,
    SchemaValidationFailed,
    PermissionDenied,
    ConfirmationRequired,
    Timeout,
    /// The LLM provider failed; the message says how (rate limit, auth, context, …).
    LlmError,
    /// Missing or wrong deployment token.
    Unauthorized,
    /// Unknown task, extension or route.
    NotFound,
    /// A bug or an infrastructure failure on the server.
    InternalError,
    /// The route exists but takes another HTTP method.
    MethodNotAllowed,
    /// A body over the signed or the kind's size limit (readability text over its limit is
    /// `READABILITY_TOO_LARGE`).
    PayloadTooLarge,
    /// A content type that the artifact kind does not allow, or not the one signed.
    UnsupportedMediaType,
    /// An upload without `Content-Length`: the length is signed and must be declared.
    LengthRequired,
    /// The task was stopped before the action ended.
    Canceled,
    /// The agent used its step limit without finishing (`MIMO_AGENT_MAX_STEPS`).
    StepLimitExceeded,
    /// The agent chose the same action on an unchanged page too many times in a row
    /// (`MIMO_AGENT_MAX_REPEATS`): it was going round in circles.
    LoopDetected,
    /// The run used its token or cost budget (`MIMO_AGENT_MAX_TOKENS`, `MIMO_AGENT_MAX_COST`).
    BudgetExceeded,
    /// The tab was still loading a page when a page-changing action arrived, and did not finish
    /// in time (seed 002 §5.2.1): retryable once the load ends.
    NavigationInProgress,
    /// Too many failed authentications from this client: refused until the window ends.
    RateLimited,
    /// An upload's body ended before its declared length (or broke off): nothing was stored.
    UploadIncomplete,
    /// Bridge: a malformed frame or tool arguments.
    EArgs,
    /// Bridge: an unknown tool, or the tool failed (file not found, edit text not found or not
    /// unique, not UTF-8, over the 2 MiB it reads).
    ETool,
    /// Bridge: a path outside the bridge's root (absolute, `..`, or through a symlink), a
    /// protected location written without the person's confirmation (`.git/`, shell startup
    /// files), a file that is no regular file or has several hard links, or one changed between
    /// the check and the open.
    EPath,
    /// Bridge: a command not allowed (not in `--allow`, or `--strict`), an interpreter or a
    /// form that runs another program without a pattern allowing it, with shell operators, or
    /// whose program was not found.
    ECmd,
    /// Bridge: as many invocations running as it allows (`--max-concurrent`); retry later.
    EBusy,
    /// Bridge: a `bash` command ran out of time and was killed.
    ETimeout,
}
via_json_value!(ErrorCode);

impl ErrorCode {
    /// Whether retrying the same request may succeed (seed 000 §5.1 retry classes).
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::PluginOffline
                | ErrorCode::NavigationInProgress
                | ErrorCode::RateLimited
                | ErrorCode::UploadIncomplete
                | ErrorCode::EBusy
                | ErrorCode::PluginTimeoutAck
                | ErrorCode::PluginTimeoutExec
                | ErrorCode::PagePrepFailed
                | ErrorCode::CdpUnavailable
                | ErrorCode::InternalError
        )
    }

    /// The wire name, e.g. `PLUGIN_OFFLINE`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How a model call failed, at the granularity the agent reacts to (the gateway classifies
/// each provider's answer into one); the web app is told it with each retried call.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    TS,
    strum::IntoStaticStr,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum LlmErrorKind {
    Network,
    Timeout,
    RateLimited,
    /// The provider is overloaded (HTTP 503 or 529, Anthropic's `overloaded_error`).
    Overloaded,
    Server,
    Auth,
    /// The prompt is longer than the model's context window.
    ContextTooLong,
    ContentFiltered,
    BadRequest,
    InvalidResponse,
    /// The model produced tool arguments that are not a JSON object; telling it so and
    /// retrying usually works.
    InvalidToolArguments,
    /// The model answered without calling a tool although one was required.
    NoToolCall,
    /// The model or endpoint does not take the image sent (a text-only model, or an image it
    /// cannot read): the same request without it may succeed.
    ImageRefused,
    Aborted,
}

impl LlmErrorKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether sending the same request again may succeed.
    pub fn is_retryable(self) -> bool {
        match self {
            Self::Network
            | Self::Timeout
            | Self::RateLimited
            | Self::Overloaded
            | Self::Server
            | Self::InvalidResponse
            | Self::InvalidToolArguments
            | Self::NoToolCall => true,
            Self::Auth
            | Self::ContextTooLong
            | Self::ContentFiltered
            | Self::BadRequest
            | Self::ImageRefused
            | Self::Aborted => false,
        }
    }
}

/// `{code, message, retryable}`: the error object of every wire message and HTTP error body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ErrorObject {
    pub code: ErrorCode,
    pub message: String,
    pub retryable: bool,
}

impl ErrorObject {
    /// An error whose retry class is the code's default.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: code.retryable(),
        }
    }

    /// The extension needed for a browser task is not connected.
    pub fn plugin_offline() -> Self {
        Self::new(
            ErrorCode::PluginOffline,
            "No Mimo extension is online. Open Chrome with the Mimo extension installed and paired \
             (\"Pair a browser\" in the web app, then this server's URL and the code in its \
             options page), and try again.",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::IntoEnumIterator;

    #[test]
    fn every_code_is_named_as_on_the_wire() {
        for code in ErrorCode::iter() {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
        assert_eq!(ErrorCode::RateLimited.as_str(), "RATE_LIMITED");
        assert_eq!(ErrorCode::EArgs.as_str(), "E_ARGS");
        assert_eq!(ErrorCode::ETimeout.as_str(), "E_TIMEOUT");
    }
}
