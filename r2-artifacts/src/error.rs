//! The crate's one error type: why a request for an artifact is refused (with its HTTP status
//! and error code), why a URL could not be presigned, why an archive stream ended early.

use mimo_protocol::artifact::{ArtifactKind, ExpiryOutOfRange, READABILITY_MAX_BYTES};
use mimo_protocol::{ErrorCode, ErrorObject};

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// 404: not an artifact route, or an id that cannot exist.
    #[error("no such artifact route")]
    NotFound,
    /// 405: the route exists but takes another method; send `Allow: <allow>`.
    #[error("method not allowed; use {allow}")]
    MethodNotAllowed {
        /// The one method the route takes.
        allow: &'static str,
    },
    /// 403: the signature is genuine but the URL has expired. (The three refusals of a signed
    /// URL are one status to the client; the distinction is for logs and tests.)
    #[error("signed URL has expired")]
    Expired,
    /// 403: the signature does not match what the URL claims (tampered or forged).
    #[error("signature does not match")]
    BadSignature,
    /// 403: the query is not one we issue: a parameter missing, repeated, unknown or unparsable.
    #[error("malformed signed URL: {0}")]
    Malformed(&'static str),
    /// 403: the upload URL was used already: an artifact is stored once, never replaced.
    #[error("this upload URL was used already: a stored artifact is never replaced")]
    AlreadyStored,
    /// 413: the body is (or is declared) longer than `limit`.
    #[error("{kind} artifact is over {limit} bytes")]
    PayloadTooLarge {
        /// The artifact's kind.
        kind: ArtifactKind,
        /// The most bytes that were allowed.
        limit: u64,
    },
    /// 415: the content type is missing, not allowed for the kind, or not the one granted.
    #[error(
        "content type not allowed for a {kind} artifact (allowed: {})",
        kind.allowed_media_types().join(", ")
    )]
    UnsupportedMediaType {
        /// The artifact's kind.
        kind: ArtifactKind,
    },
    /// Presigning: the lifetime is outside 1 s – 7 days.
    #[error(transparent)]
    Expiry(#[from] ExpiryOutOfRange),
    /// Presigning: the time is past what `X-Amz-Date` can write.
    #[error("time is past 9999-12-31T23:59:59Z")]
    TimeOutOfRange,
    /// Presigning: a configuration value is unusable; the text says which.
    #[error("invalid R2 configuration: {0}")]
    InvalidConfig(&'static str),
    /// Presigning: the object key is unusable; the text says why.
    #[error("invalid object key: {0}")]
    InvalidKey(&'static str),
    /// Presigning: a signed header's value is unusable; the text says why.
    #[error("invalid signed header: {0}")]
    InvalidHeader(&'static str),
    /// An archive: writing the format failed.
    #[error("writing the zip archive: {0}")]
    Zip(String),
    /// An archive: opening or reading an object for it failed.
    #[error("reading an object for the archive: {0}")]
    Source(String),
}

impl Error {
    /// The HTTP status of the response that says so (500: the deployment's own failure).
    pub fn status(&self) -> u16 {
        match self {
            Error::NotFound => 404,
            Error::MethodNotAllowed { .. } => 405,
            Error::Expired | Error::BadSignature | Error::Malformed(_) | Error::AlreadyStored => {
                403
            }
            Error::PayloadTooLarge { .. } => 413,
            Error::UnsupportedMediaType { .. } => 415,
            _ => 500,
        }
    }

    /// A stable machine-readable code for the error body. Readability text over the kind's
    /// limit is `READABILITY_TOO_LARGE`, the code the design names.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NotFound => ErrorCode::NotFound,
            Error::MethodNotAllowed { .. } => ErrorCode::MethodNotAllowed,
            Error::Expired | Error::BadSignature | Error::Malformed(_) | Error::AlreadyStored => {
                ErrorCode::PermissionDenied
            }
            Error::PayloadTooLarge {
                kind: ArtifactKind::Readability,
                limit: READABILITY_MAX_BYTES,
            } => ErrorCode::ReadabilityTooLarge,
            Error::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            Error::UnsupportedMediaType { .. } => ErrorCode::UnsupportedMediaType,
            _ => ErrorCode::InternalError,
        }
    }
}

impl From<&Error> for ErrorObject {
    /// The error as the error body of its response.
    fn from(error: &Error) -> Self {
        ErrorObject::new(error.code(), error.to_string())
    }
}

impl From<zip::result::ZipError> for Error {
    fn from(e: zip::result::ZipError) -> Self {
        Error::Zip(e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Zip(e.to_string())
    }
}
