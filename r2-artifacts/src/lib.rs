//! Mimo's artifact store logic: screenshots, HTML snapshots and readability text kept in R2.
//!
//! Pure code apart from `store` (feature `r2`) — no clock, no randomness: the Worker passes the
//! time (`Date.now()`) and random bytes (`crypto.getRandomValues`) in, and moves the bytes.
//! Everything here is unit-tested natively and builds for `wasm32-unknown-unknown`.
//!
//! - `mimo_protocol::artifact` (re-exported): every size and time limit, including the
//!   readability thresholds ([`readability_disposition`]); [`ArtifactKind`], its content types
//!   and size limit; task ids, artifact ids (`<taskId>.<32 hex>`) and R2 keys
//!   (`tasks/<taskId>/<kind>/<artifactId>`); the presign API's bodies.
//! - [`signing`]: our own HMAC-SHA256 presigned URLs, verified in constant time.
//! - [`sigv4`]: R2's own (S3 SigV4) presigned URLs, signed by `rusty-s3`, for deployments with
//!   R2 API credentials.
//! - [`http`]: which request is refused with which status (403, 404, 405, 413, 415), and the
//!   headers a download is served with.
//! - [`presign`]: the presign API's bodies, grants, and the configured [`UrlSigner`].
//! - [`archive`]: zip archives written as a stream, objects read into them as they go (the
//!   evidence export).
//! - [`Error`]: the one error type: a refusal with its status and code, a URL that could not
//!   be presigned, an archive that ended early.
//! - `store` (feature `r2`): streaming R2 reads and writes, the crate's only I/O.

pub mod archive;
mod error;
pub mod http;
pub mod presign;
pub mod signing;
pub mod sigv4;
#[cfg(feature = "r2")]
pub mod store;

pub use error::Error;
pub use http::{authorize, check_presign, check_streamed_length, check_upload, download_headers};
// The wire side of artifacts (kinds, limits, ids and keys, the presign bodies) is
// `mimo_protocol::artifact`; re-exported so that callers find all of artifacts here.
pub use mimo_protocol::artifact::{
    media_type, parse_object_key, readability_disposition, same_media_type, task_prefix,
    ArtifactId, ArtifactKind, DownloadResponse, IdError, PresignRequest, PresignResponse,
    ReadabilityDisposition, TaskId, DEFAULT_DOWNLOAD_EXPIRY_SECS, DEFAULT_UPLOAD_EXPIRY_SECS,
    DOM_INDEX_MAX_BYTES, HTML_MAX_BYTES, PRESIGN_MAX_EXPIRY_SECS, PRESIGN_MIN_EXPIRY_SECS,
    READABILITY_INLINE_LIMIT_BYTES, READABILITY_MAX_BYTES, SCREENSHOT_MAX_BYTES,
};
pub use presign::{grant_download, grant_upload, UrlSigner};
pub use signing::{
    constant_time_eq, derive_signing_key, download_path, download_query, sign_download,
    sign_upload, upload_path, upload_query, verify, verify_download, verify_upload, DownloadGrant,
    Grant, Method, UploadGrant,
};
pub use sigv4::R2Config;
