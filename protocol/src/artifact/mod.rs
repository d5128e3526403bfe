//! Artifacts as they travel: kinds and their limits, task and artifact ids and R2 keys, and the
//! presign API's bodies. The signing, authorization and storage logic is `mimo-r2-artifacts`.

mod key;
mod kind;
mod limits;

pub use key::*;
pub use kind::*;
pub use limits::*;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A file the person attached to the task (an `attachment` artifact): the model sees its name,
/// type and size, never its bytes, and `upload_file` puts it into a file input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub artifact_id: String,
    pub name: String,
    pub content_type: String,
    #[ts(type = "number")]
    pub size: u64,
}

/// Body of `POST /api/artifacts/presign`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PresignRequest {
    /// The task the artifact belongs to (canonical lowercase UUID; refused at parse time
    /// otherwise).
    #[ts(type = "string")]
    pub task_id: TaskId,
    /// What the artifact holds.
    pub kind: ArtifactKind,
    /// The `Content-Type` the upload will send.
    pub content_type: String,
    /// The exact number of bytes the upload will send (also the signed maximum).
    #[ts(type = "number")]
    pub content_length: u64,
    /// The action that produced the artifact, if any (for the caller's records; not signed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub action_id: Option<String>,
    /// The file's name, for an attachment (required there; see `valid_file_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
}

/// Response of `POST /api/artifacts/presign`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PresignResponse {
    /// The new artifact's id.
    #[ts(type = "string")]
    pub artifact_id: ArtifactId,
    /// Where to `PUT` the body.
    pub upload_url: String,
    /// Where to `GET` it once stored (404 until then), so an uploader needs no third request:
    /// an upload to this Worker's URL is stored when its `PUT` answers 201; one straight to R2
    /// (200) is confirmed by `GET /api/artifacts/{artifactId}`, which also signs a fresh URL.
    pub download_url: String,
    /// When the URL stops working, milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub expires_at: u64,
}

/// Response of `GET /api/artifacts/{artifactId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DownloadResponse {
    /// The artifact's id.
    #[ts(type = "string")]
    pub artifact_id: ArtifactId,
    /// The artifact's kind.
    pub kind: ArtifactKind,
    /// Where to `GET` the body.
    pub download_url: String,
    /// When the URL stops working, milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub expires_at: u64,
}
