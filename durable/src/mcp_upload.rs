//! `browser_file_upload`'s file, stored as an attachment of the session's task before the step
//! that puts it into the page: granted, written to R2 and listed as the web app's uploads are —
//! the same kinds and size limit — so the person finds it among the task's files, and the
//! extension fetches it as it fetches theirs.

use mimo_agent::mcp::tools::{self, GivenFile};
use mimo_agent::mcp::BrowserTool;
use mimo_protocol::artifact::{ArtifactKind, PresignRequest, TaskId};
use mimo_protocol::mcp::CallToolResult;
use mimo_protocol::ErrorObject;
use mimo_r2_artifacts::{grant_upload, store};
use worker::{Env, Result};

use crate::clients::{ArtifactGrant, ArtifactStored, TaskClient};
use crate::error::Refusable;
use crate::http::{now_ms, random_bytes};
use crate::ARTIFACTS;

/// How long the grant of a file stored at once stays open (it is written right after).
const GRANT_SECS: u64 = 60;

/// Stores `file` among the files of task `task_id`: the step that puts it into the file field
/// `click_id`, or the tool's answer saying why it was not stored.
pub async fn store_given(
    env: &Env,
    task_id: &str,
    click_id: u32,
    file: GivenFile,
) -> Result<std::result::Result<BrowserTool, CallToolResult>> {
    let not_stored = |why: &str| Ok(Err(CallToolResult::error(format!("Not done: {why}"))));
    let Ok(task_ref) = TaskId::parse(task_id) else {
        return not_stored("the session's task cannot keep files");
    };
    let request = PresignRequest {
        task_id: task_ref,
        kind: ArtifactKind::Attachment,
        content_type: file.content_type.clone(),
        content_length: file.bytes.len() as u64,
        action_id: None,
        name: Some(file.name.clone()),
    };
    let grant = match grant_upload(&request, random_bytes()?, now_ms(), GRANT_SECS) {
        Ok(grant) => grant,
        Err(refusal) => return not_stored(&ErrorObject::from(&refusal).message),
    };
    let artifact_id = grant.artifact_id.to_string();
    let task = TaskClient::new(env, task_id)?;
    let record = ArtifactGrant {
        artifact_id: artifact_id.clone(),
        kind: grant.kind.as_str().to_owned(),
        key: grant.key(),
        content_type: file.content_type.clone(),
        max_length: grant.max_length,
        action_id: None,
        name: Some(file.name.clone()),
    };
    if let Err(error) = task.artifact_granted(&record).await.refusal()? {
        return Ok(Err(tools::refused(&error)));
    }
    let bucket = env.bucket(ARTIFACTS)?;
    let Some(object) =
        store::put_bytes(&bucket, &grant.key(), &file.content_type, file.bytes).await?
    else {
        return not_stored("the file's place was taken; send it again");
    };
    let stored = ArtifactStored {
        artifact_id: artifact_id.clone(),
        size: object.size,
        sha256: object.sha256,
    };
    if let Err(error) = task.artifact_stored(&stored).await.refusal()? {
        bucket.delete(grant.key()).await?;
        return Ok(Err(tools::refused(&error)));
    }
    Ok(Ok(BrowserTool::UploadFile {
        click_id,
        artifact_id,
        name: file.name,
        content_type: file.content_type,
    }))
}
