//! The artifact routes: presign and look up (token-authenticated API), and the signed-URL
//! upload and download (the signature is the authentication). The decisions come from
//! `mimo_r2_artifacts`; this file moves requests, records and bytes.

use futures_util::StreamExt;
use mimo_agent::selection;
use mimo_durable::{
    error_response, now_ms, random_bytes, ArtifactGrant, ArtifactRecord, ArtifactStored,
    ClientObject, Refusable, TaskClient, ARTIFACTS,
};
use mimo_protocol::artifact::{valid_file_name, MAX_FILE_NAME_CHARS};
use mimo_protocol::{ErrorCode, ErrorObject};
use mimo_r2_artifacts::Error as ArtifactError;
use mimo_r2_artifacts::{
    authorize, check_upload, derive_signing_key, grant_download, grant_upload, store, ArtifactId,
    ArtifactKind, DownloadResponse, Grant, PresignRequest, PresignResponse, R2Config, UrlSigner,
    DEFAULT_DOWNLOAD_EXPIRY_SECS, DEFAULT_UPLOAD_EXPIRY_SECS,
};
use worker::{Env, Request, Response, Result};

use crate::{number_setting, var};

/// Refuses an extension (`for_client`) an artifact of a task that is not bound to it.
pub(crate) async fn check_binding(
    env: &Env,
    task_id: &str,
    for_client: Option<&str>,
) -> Result<Option<ErrorObject>> {
    let Some(client_id) = for_client else {
        return Ok(None);
    };
    // The client's own object keeps a copy of its tasks' bindings: an upload's check does not
    // reach the deployment's directory.
    let answer = async {
        ClientObject::named(env, client_id)?
            .is_bound(client_id, task_id)
            .await
    };
    // A client its object refuses (one it does not know) is bound to nothing.
    let bound = answer.await.refusal()?.unwrap_or(false);
    Ok(selection::may_act_for(bound.then_some(client_id), client_id, task_id).err())
}

/// An attachment is a file the person gives the task: named, and never made by an extension.
/// (An extension may store HTML, its page snapshots: what guards its readers is the download's
/// headers, see `mimo_r2_artifacts::download_headers`, not who uploaded it.)
fn check_attachment(request: &PresignRequest, for_client: Option<&str>) -> Option<ErrorObject> {
    if request.kind != ArtifactKind::Attachment {
        return None;
    }
    if for_client.is_some() {
        return Some(ErrorObject::new(
            ErrorCode::PermissionDenied,
            "attachments are the person's files: an extension cannot add one",
        ));
    }
    match request.name.as_deref() {
        Some(name) if valid_file_name(name) => None,
        _ => Some(ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            format!(
                "an attachment needs its file's name: 1 to {MAX_FILE_NAME_CHARS} characters, no path, no control characters"
            ),
        )),
    }
}

/// `POST /api/artifacts/presign`; `for_client` is the extension asking, if one is.
pub async fn presign(mut req: Request, env: &Env, for_client: Option<&str>) -> Result<Response> {
    let body = req.text().await?;
    let request: PresignRequest = match serde_json::from_str(&body) {
        Ok(request) => request,
        Err(e) => {
            return error_response(&ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                format!("presign body does not match the protocol: {e}"),
            ))
        }
    };
    if let Some(refusal) = check_binding(env, request.task_id.as_str(), for_client).await? {
        return error_response(&refusal);
    }
    if let Some(refusal) = check_attachment(&request, for_client) {
        return error_response(&refusal);
    }
    let now = now_ms();
    let expiry_secs = number_setting(env, "MIMO_ARTIFACT_UPLOAD_EXPIRY_SECS")
        .unwrap_or(DEFAULT_UPLOAD_EXPIRY_SECS);
    let grant = match grant_upload(&request, random_bytes()?, now, expiry_secs) {
        Ok(grant) => grant,
        Err(refusal) => return refuse(&refusal),
    };
    let record = ArtifactGrant {
        artifact_id: grant.artifact_id.to_string(),
        kind: grant.kind.as_str().to_owned(),
        key: grant.key(),
        content_type: grant.content_type.clone(),
        max_length: grant.max_length,
        action_id: request.action_id.clone(),
        name: request.name.clone(),
    };
    let task = TaskClient::new(env, request.task_id.as_str())?;
    if let Err(failure) = task.artifact_granted(&record).await {
        return failure.respond();
    }
    let signer = signer(env, &req)?;
    let unsigned = |e: ArtifactError| worker::Error::RustError(e.to_string());
    let upload_url = signer.upload_url(&grant, now).map_err(unsigned)?;
    let download = grant_download(
        grant.artifact_id.clone(),
        grant.kind,
        now,
        DEFAULT_DOWNLOAD_EXPIRY_SECS,
    );
    let download_url = signer
        .download_url(&download, Some(&grant.content_type), now)
        .map_err(unsigned)?;
    Response::from_json(&PresignResponse {
        artifact_id: grant.artifact_id,
        upload_url,
        download_url,
        expires_at: grant.expires_at_ms,
    })
}

/// `GET /api/artifacts/{artifactId}`: a fresh download URL for a stored artifact.
pub async fn lookup(
    req: &Request,
    env: &Env,
    artifact_id: &str,
    for_client: Option<&str>,
) -> Result<Response> {
    let Ok(id) = ArtifactId::parse(artifact_id) else {
        return error_response(&unknown_artifact());
    };
    if let Some(refusal) = check_binding(env, id.task_id_str(), for_client).await? {
        return error_response(&refusal);
    }
    let Some(record) = record(env, &id).await? else {
        return error_response(&unknown_artifact());
    };
    let stored = record.stored_at.is_some() || confirm_direct_upload(env, &id, &record).await?;
    let kind: Option<ArtifactKind> = record.kind.parse().ok();
    let (true, Some(kind)) = (stored, kind) else {
        // Asked again, it may be there: an observation's captures are stored just after the
        // step that took them (`browser_observe`'s `waitStored`).
        return error_response(&ErrorObject {
            retryable: true,
            ..ErrorObject::new(
                ErrorCode::NotFound,
                "the artifact was granted but its upload has not completed",
            )
        });
    };
    let now = now_ms();
    let grant = grant_download(id.clone(), kind, now, DEFAULT_DOWNLOAD_EXPIRY_SECS);
    let download_url = signer(env, req)?
        .download_url(&grant, Some(&record.content_type), now)
        .map_err(|e| worker::Error::RustError(e.to_string()))?;
    Response::from_json(&DownloadResponse {
        artifact_id: id,
        kind,
        download_url,
        expires_at: grant.expires_at_ms,
    })
}

/// A refused upload's body up to this size is read before answering (and an API request's
/// body up to it is read before routing).
pub(crate) const DRAIN_LIMIT_BYTES: u64 = 256 * 1024;

/// `PUT /artifacts/upload/…` and `GET /artifacts/download/…` (and any other method on them).
pub async fn signed(mut req: Request, env: &Env) -> Result<Response> {
    let response = serve_signed(&mut req, env).await?;
    if response.status_code() >= 400 {
        drain_small_body(&mut req).await?;
    }
    Ok(response)
}

/// A refusal comes before the body is read. Answering with it unread makes the runtime close the
/// connection after the answer, without saying so, and a client that keeps connections alive then
/// sends its next request into a closed socket. A small body (declared, or chunked without a
/// length) is read and dropped first so the connection stays usable; a large one is left unread.
async fn drain_small_body(req: &mut Request) -> Result<()> {
    let declared = req
        .headers()
        .get("content-length")?
        .and_then(|l| l.parse::<u64>().ok());
    if declared.is_some_and(|l| l > DRAIN_LIMIT_BYTES) {
        return Ok(());
    }
    let Ok(mut body) = req.stream() else {
        return Ok(()); // no body at all
    };
    let mut read = 0u64;
    while let Some(Ok(chunk)) = body.next().await {
        read += chunk.len() as u64;
        if read > DRAIN_LIMIT_BYTES {
            break;
        }
    }
    Ok(())
}

async fn serve_signed(req: &mut Request, env: &Env) -> Result<Response> {
    let url = req.url()?;
    let method = req.method().to_string();
    let grant = match authorize(
        &signing_key(env)?,
        &method,
        url.path(),
        url.query().unwrap_or(""),
        now_ms(),
    ) {
        Ok(grant) => grant,
        Err(refusal) => return refuse(&refusal),
    };
    let bucket = env.bucket(ARTIFACTS)?;
    match grant {
        Grant::Download(grant) => {
            match store::serve(&bucket, &grant.key(), &grant.artifact_id, req.headers()).await? {
                Some(response) => Ok(response),
                None => error_response(&unknown_artifact()),
            }
        }
        Grant::Upload(grant) => {
            let content_type = req.headers().get("content-type")?;
            let Some(length) = req
                .headers()
                .get("content-length")?
                .and_then(|l| l.parse::<u64>().ok())
            else {
                return error_response(&ErrorObject::new(
                    ErrorCode::LengthRequired,
                    "send Content-Length: the upload's length is part of what was signed",
                ));
            };
            if let Err(refusal) = check_upload(&grant, content_type.as_deref(), Some(length)) {
                return refuse(&refusal);
            }
            // Only an artifact this task granted may be stored: a deleted task's URLs die with it.
            let Some(granted) = record(env, &grant.artifact_id).await? else {
                return error_response(&unknown_artifact());
            };
            // An upload URL is used once: refused before its body is read when the task knows
            // the artifact is stored (the conditional put below decides for uploads that race).
            if granted.stored_at.is_some() {
                return refuse(&ArtifactError::AlreadyStored);
            }
            let content_type = content_type.unwrap_or_default();
            let object = match store::put_streaming(
                &bucket,
                &grant.key(),
                &content_type,
                req.stream()?,
                length,
            )
            .await
            {
                Ok(Some(object)) => object,
                Ok(None) => return refuse(&ArtifactError::AlreadyStored),
                Err(e) => {
                    return error_response(&ErrorObject::new(
                        ErrorCode::UploadIncomplete,
                        format!(
                            "the upload broke off before its declared {length} bytes arrived, \
                             so nothing was stored ({e}); send it again"
                        ),
                    ))
                }
            };
            let stored = ArtifactStored {
                artifact_id: grant.artifact_id.to_string(),
                size: object.size,
                sha256: object.sha256.clone(),
            };
            let task = TaskClient::new(env, grant.artifact_id.task_id_str())?;
            if let Err(failure) = task.artifact_stored(&stored).await {
                // The task went away while the bytes streamed (or could not be told): keep no
                // unlisted object.
                bucket.delete(grant.key()).await?;
                return failure.respond();
            }
            Ok(Response::from_json(&stored)?.with_status(201))
        }
    }
}

async fn record(env: &Env, id: &ArtifactId) -> Result<Option<ArtifactRecord>> {
    let task = TaskClient::new(env, id.task_id_str())?;
    Ok(task.artifact(id.as_str()).await.refusal()?.ok())
}

/// With R2 presigned URLs the upload bypasses the Worker, so completion is learned here: the
/// object exists in R2 (with its size), and the record is updated.
async fn confirm_direct_upload(
    env: &Env,
    id: &ArtifactId,
    record: &ArtifactRecord,
) -> Result<bool> {
    let Some(object) = env.bucket(ARTIFACTS)?.head(record.key.clone()).await? else {
        return Ok(false);
    };
    let stored = ArtifactStored {
        artifact_id: id.to_string(),
        size: object.size(),
        // R2 computed no SHA-256 for a direct upload; its MD5 etag is what there is.
        sha256: String::new(),
    };
    let task = TaskClient::new(env, id.task_id_str())?;
    Ok(task.artifact_stored(&stored).await.refusal()?.is_ok())
}

fn unknown_artifact() -> ErrorObject {
    ErrorObject::new(ErrorCode::NotFound, "no such artifact")
}

/// A refusal as an error response; a 405 names the method the route takes.
fn refuse(refusal: &ArtifactError) -> Result<Response> {
    let mut response = error_response(&ErrorObject::from(refusal))?;
    if let ArtifactError::MethodNotAllowed { allow } = refusal {
        response.headers_mut().set("allow", allow)?;
    }
    Ok(response)
}

/// The key our signed URLs are made with: from `MIMO_ARTIFACT_SIGNING_SECRET`, else derived
/// from the deployment token (so a deployment works with one secret, and the token itself never
/// signs anything).
fn signing_key(env: &Env) -> Result<[u8; 32]> {
    let secret = var(env, "MIMO_ARTIFACT_SIGNING_SECRET")
        .or_else(|| var(env, "MIMO_API_TOKEN"))
        .ok_or_else(|| worker::Error::RustError("no secret to sign artifact URLs with".into()))?;
    Ok(derive_signing_key(secret.as_bytes()))
}

/// R2's own presigned URLs when R2 API credentials are configured (uploads then go straight to
/// R2); otherwise our signed URLs on this Worker's origin.
fn signer(env: &Env, req: &Request) -> Result<UrlSigner> {
    let r2 = (
        var(env, "MIMO_R2_ACCOUNT_ID"),
        var(env, "MIMO_R2_ACCESS_KEY_ID"),
        var(env, "MIMO_R2_SECRET_ACCESS_KEY"),
    );
    if let (Some(account), Some(access_key), Some(secret)) = r2 {
        let bucket = var(env, "MIMO_R2_BUCKET").unwrap_or_else(|| "mimo-artifacts".into());
        let invalid = |e| worker::Error::RustError(format!("R2 configuration: {e}"));
        let mut config = R2Config::new(&account, &bucket, &access_key, &secret).map_err(invalid)?;
        // Another S3 endpoint; a path means this Worker's own origin (Miniflare serves its R2
        // emulation's S3 API at /cdn-cgi/local/r2/s3).
        if let Some(endpoint) = var(env, "MIMO_R2_S3_ENDPOINT") {
            let endpoint = match endpoint.starts_with('/') {
                true => format!("{}{endpoint}", req.url()?.origin().ascii_serialization()),
                false => endpoint,
            };
            config = config.with_endpoint(&endpoint).map_err(invalid)?;
        }
        return Ok(UrlSigner::R2(config));
    }
    let url = req.url()?;
    Ok(UrlSigner::Worker {
        signing_key: signing_key(env)?,
        origin: url.origin().ascii_serialization(),
    })
}
