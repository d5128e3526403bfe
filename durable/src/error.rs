//! The one error type of the shells, in pingora's shape: what kind of failure it is, its
//! source, and whether trying again may help — with one conversion to the wire, and the
//! reading of another object's answer into it.

use mimo_protocol::{ErrorCode, ErrorObject};
use worker::Response;

use crate::http::error_response;

/// Why one part of the deployment did not get what it asked another for (or its storage).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The other part refused, with a wire error: an unknown task, an offline extension, a
    /// wrong pairing code. Its code says what, and whether to try again.
    #[error("{0}")]
    Refused(ErrorObject),
    /// The runtime failed underneath: a fetch between objects, storage, a socket.
    #[error("the runtime failed: {0}")]
    Runtime(#[source] worker::Error),
}

/// What a call to another part (an object, a service) comes back with: the value, or why not.
pub type Reply<T> = Result<T, Failure>;

impl Failure {
    /// The failure as the response to the request that met it: a refusal is answered with its
    /// error object; a runtime failure is the request's own failure (the runtime answers it).
    pub fn respond(self) -> worker::Result<Response> {
        match self {
            Failure::Refused(error) => error_response(&error),
            Failure::Runtime(e) => Err(e),
        }
    }
}

impl From<worker::Error> for Failure {
    fn from(e: worker::Error) -> Self {
        Failure::Runtime(e)
    }
}

impl From<ErrorObject> for Failure {
    fn from(error: ErrorObject) -> Self {
        Failure::Refused(error)
    }
}

impl From<&Failure> for ErrorObject {
    /// The one wire form: a refusal as it is, a runtime failure as a retryable
    /// `INTERNAL_ERROR` that says what failed.
    fn from(failure: &Failure) -> Self {
        match failure {
            Failure::Refused(error) => error.clone(),
            Failure::Runtime(e) => ErrorObject::new(ErrorCode::InternalError, e.to_string()),
        }
    }
}

/// Where a refusal is data for someone — the task learning that no extension could be bound, a
/// caller told why it is not let in — and only a runtime failure ends the request.
pub trait Refusable<T> {
    /// The value or the refusal; a runtime failure as `Err`.
    fn refusal(self) -> worker::Result<Result<T, ErrorObject>>;
}

impl<T> Refusable<T> for Reply<T> {
    fn refusal(self) -> worker::Result<Result<T, ErrorObject>> {
        match self {
            Ok(value) => Ok(Ok(value)),
            Err(Failure::Refused(error)) => Ok(Err(error)),
            Err(Failure::Runtime(e)) => Err(e),
        }
    }
}

/// Whether another object's answer was a success, or the error object it sent.
pub async fn read_outcome(response: Response) -> Reply<()> {
    if response.status_code() < 300 {
        Ok(())
    } else {
        Err(Failure::Refused(error_of(response).await))
    }
}

/// Reads the body of a response from another object: the value, or the error object it sent.
pub async fn read_json<T: serde::de::DeserializeOwned>(mut response: Response) -> Reply<T> {
    if response.status_code() < 300 {
        Ok(response.json().await?)
    } else {
        Err(Failure::Refused(error_of(response).await))
    }
}

/// The error object of a failed answer; one that is not one (a runtime's own error page) is
/// kept as the message of an `INTERNAL_ERROR`, never dropped.
async fn error_of(mut response: Response) -> ErrorObject {
    let status = response.status_code();
    let body = match response.text().await {
        Ok(body) => body,
        Err(e) => return ErrorObject::new(ErrorCode::InternalError, format!("{status}: {e}")),
    };
    serde_json::from_str(&body).unwrap_or_else(|_| {
        let shown: String = body.chars().take(500).collect();
        ErrorObject::new(ErrorCode::InternalError, format!("{status}: {shown}"))
    })
}
