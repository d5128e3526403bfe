//! The presign API: request and response bodies, making grants, and turning grants into URLs
//! with whichever signer the deployment is configured for.
//!
//! `POST /api/artifacts/presign` body → [`PresignRequest`] → [`grant_upload`] →
//! [`UrlSigner::upload_url`] → [`PresignResponse`]. `GET /api/artifacts/{artifactId}` →
//! (find the object's kind) → [`grant_download`] → [`UrlSigner::download_url`] →
//! [`DownloadResponse`].

use crate::error::Error;
use crate::http::{check_presign, download_headers};
use crate::signing::{download_path, upload_path, DownloadGrant, UploadGrant};
use crate::sigv4::R2Config;
use mimo_protocol::artifact::{
    clamp_expiry_secs, ArtifactId, ArtifactKind, PresignRequest, ARTIFACT_RANDOM_BYTES,
};

/// Checks a presign request (415, 413) and makes its upload grant: a new artifact id from
/// `random` (16 bytes from a CSPRNG), the declared length as the signed maximum, and an
/// expiry `expiry_secs` after `now_ms` (clamped to 1 s – 7 days).
pub fn grant_upload(
    request: &PresignRequest,
    random: [u8; ARTIFACT_RANDOM_BYTES],
    now_ms: u64,
    expiry_secs: u64,
) -> Result<UploadGrant, Error> {
    check_presign(request.kind, &request.content_type, request.content_length)?;
    Ok(UploadGrant {
        artifact_id: ArtifactId::new(&request.task_id, random),
        kind: request.kind,
        content_type: request.content_type.clone(),
        max_length: request.content_length,
        expires_at_ms: now_ms.saturating_add(clamp_expiry_secs(expiry_secs) * 1000),
    })
}

/// A download grant for a stored artifact, expiring `expiry_secs` after `now_ms` (clamped to
/// 1 s – 7 days).
pub fn grant_download(
    artifact_id: ArtifactId,
    kind: ArtifactKind,
    now_ms: u64,
    expiry_secs: u64,
) -> DownloadGrant {
    DownloadGrant {
        artifact_id,
        kind,
        expires_at_ms: now_ms.saturating_add(clamp_expiry_secs(expiry_secs) * 1000),
    }
}

/// Who signs the URLs, chosen by configuration: R2's own SigV4 URLs when R2 API credentials
/// are configured, otherwise our HMAC URLs served by the Worker.
#[derive(Debug, Clone)]
pub enum UrlSigner {
    /// Our signed URLs under the Worker's `origin` (e.g. `https://mimo.example.workers.dev`,
    /// no trailing slash), signed with a key from [`crate::derive_signing_key`].
    Worker {
        /// Derived signing key.
        signing_key: [u8; 32],
        /// Scheme and host of the Worker.
        origin: String,
    },
    /// R2 presigned URLs (the upload goes straight to R2; the Worker's upload route is not
    /// involved, so its 413/415 checks happen only at presign time, and R2 enforces the signed
    /// `Content-Type` and exact `Content-Length` with a 403).
    R2(R2Config),
}

impl UrlSigner {
    /// The upload URL of a grant made at `now_ms`.
    pub fn upload_url(&self, grant: &UploadGrant, now_ms: u64) -> Result<String, Error> {
        match self {
            UrlSigner::Worker {
                signing_key,
                origin,
            } => Ok(format!(
                "{}{}",
                origin.trim_end_matches('/'),
                upload_path(signing_key, grant)
            )),
            UrlSigner::R2(r2) => {
                let (now_s, ttl) = sigv4_times(now_ms, grant.expires_at_ms);
                r2.presign_put(
                    &grant.key(),
                    &grant.content_type,
                    Some(grant.max_length),
                    now_s,
                    ttl,
                )
            }
        }
    }

    /// The download URL of a grant made at `now_ms`, for an artifact stored as
    /// `stored_content_type`. R2's own URL makes R2 answer with the type and disposition of
    /// [`crate::download_headers`] (the Worker's route sets all of its headers itself).
    pub fn download_url(
        &self,
        grant: &DownloadGrant,
        stored_content_type: Option<&str>,
        now_ms: u64,
    ) -> Result<String, Error> {
        match self {
            UrlSigner::Worker {
                signing_key,
                origin,
            } => Ok(format!(
                "{}{}",
                origin.trim_end_matches('/'),
                download_path(signing_key, grant)
            )),
            UrlSigner::R2(r2) => {
                let (now_s, ttl) = sigv4_times(now_ms, grant.expires_at_ms);
                let headers = download_headers(&grant.artifact_id, stored_content_type);
                let header = |name: &str| {
                    headers
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map_or("", |(_, v)| v.as_str())
                };
                r2.presign_get(
                    &grant.key(),
                    header("content-type"),
                    header("content-disposition"),
                    now_s,
                    ttl,
                )
            }
        }
    }
}

/// SigV4 signing time (whole seconds, rounded down) and lifetime (whole seconds, rounded down)
/// such that the R2 URL never outlives `expires_at_ms`. A lifetime under 1 s is left for
/// the signer to refuse.
fn sigv4_times(now_ms: u64, expires_at_ms: u64) -> (u64, u64) {
    let now_s = now_ms / 1000;
    let ttl = (expires_at_ms / 1000).saturating_sub(now_s);
    (now_s, ttl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::authorize;
    use crate::signing::{derive_signing_key, Grant};
    use mimo_protocol::artifact::{
        DownloadResponse, PresignResponse, TaskId, READABILITY_MAX_BYTES,
    };

    const TASK: &str = "3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c";
    const NOW: u64 = 1_700_000_000_123;

    fn request(kind: ArtifactKind, ct: &str, len: u64) -> PresignRequest {
        PresignRequest {
            task_id: TaskId::parse(TASK).unwrap(),
            kind,
            content_type: ct.into(),
            content_length: len,
            action_id: None,
            name: None,
        }
    }

    #[test]
    fn request_json() {
        let r: PresignRequest = serde_json::from_str(&format!(
            r#"{{"taskId":"{TASK}","kind":"screenshot","contentType":"image/png","contentLength":42,"actionId":"a1"}}"#
        ))
        .unwrap();
        assert_eq!(r.kind, ArtifactKind::Screenshot);
        assert_eq!(r.content_length, 42);
        assert_eq!(r.action_id.as_deref(), Some("a1"));
        let r: PresignRequest = serde_json::from_str(&format!(
            r#"{{"taskId":"{TASK}","kind":"html","contentType":"text/html","contentLength":1}}"#
        ))
        .unwrap();
        assert_eq!(r.action_id, None);
        for bad in [
            r#"{"taskId":"nope","kind":"html","contentType":"text/html","contentLength":1}"#,
            &format!(
                r#"{{"taskId":"{TASK}","kind":"video","contentType":"text/html","contentLength":1}}"#
            ),
            &format!(
                r#"{{"taskId":"{TASK}","kind":"html","contentType":"text/html","contentLength":-1}}"#
            ),
            &format!(r#"{{"taskId":"{TASK}","kind":"html","contentType":"text/html"}}"#),
        ] {
            assert!(
                serde_json::from_str::<PresignRequest>(bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn response_json() {
        let id = ArtifactId::new(&TaskId::parse(TASK).unwrap(), [0xab; 16]);
        let v = serde_json::to_value(PresignResponse {
            artifact_id: id.clone(),
            upload_url: "u".into(),
            download_url: "d".into(),
            expires_at: 5,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"artifactId": id.as_str(), "uploadUrl": "u", "downloadUrl": "d", "expiresAt": 5})
        );
        let v = serde_json::to_value(DownloadResponse {
            artifact_id: id.clone(),
            kind: ArtifactKind::Html,
            download_url: "d".into(),
            expires_at: 6,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"artifactId": id.as_str(), "kind": "html", "downloadUrl": "d", "expiresAt": 6})
        );
    }

    #[test]
    fn grants() {
        let g = grant_upload(
            &request(ArtifactKind::Screenshot, "image/png", 42),
            [3; 16],
            NOW,
            60,
        )
        .unwrap();
        assert_eq!(g.artifact_id.task_id_str(), TASK);
        assert_eq!(g.max_length, 42);
        assert_eq!(g.expires_at_ms, NOW + 60_000);
        let g = grant_upload(
            &request(ArtifactKind::Screenshot, "image/png", 42),
            [3; 16],
            NOW,
            0,
        )
        .unwrap();
        assert_eq!(g.expires_at_ms, NOW + 1_000);
        let r = grant_upload(
            &request(
                ArtifactKind::Readability,
                "text/markdown",
                READABILITY_MAX_BYTES + 1,
            ),
            [3; 16],
            NOW,
            60,
        )
        .unwrap_err();
        assert_eq!(r.code().as_str(), "READABILITY_TOO_LARGE");
        let r = grant_upload(
            &request(ArtifactKind::Html, "image/png", 1),
            [3; 16],
            NOW,
            60,
        )
        .unwrap_err();
        assert_eq!(r.status(), 415);
        let d = grant_download(g.artifact_id.clone(), ArtifactKind::Html, NOW, 10_000_000);
        assert_eq!(d.expires_at_ms, NOW + 604_800_000);
    }

    #[test]
    fn worker_signer_urls_authorize() {
        let key = derive_signing_key(b"s");
        let signer = UrlSigner::Worker {
            signing_key: key,
            origin: "https://mimo.example/".into(),
        };
        let g = grant_upload(
            &request(ArtifactKind::Html, "text/html", 9),
            [4; 16],
            NOW,
            60,
        )
        .unwrap();
        let url = signer.upload_url(&g, NOW).unwrap();
        let rest = url
            .strip_prefix("https://mimo.example/artifacts/upload/")
            .unwrap();
        let (path, query) = url["https://mimo.example".len()..].split_once('?').unwrap();
        assert!(rest.starts_with(g.artifact_id.as_str()));
        assert_eq!(
            authorize(&key, "PUT", path, query, NOW),
            Ok(Grant::Upload(g.clone()))
        );

        let d = grant_download(g.artifact_id.clone(), g.kind, NOW, 60);
        let url = signer.download_url(&d, None, NOW).unwrap();
        let (path, query) = url["https://mimo.example".len()..].split_once('?').unwrap();
        assert_eq!(
            authorize(&key, "GET", path, query, NOW),
            Ok(Grant::Download(d))
        );
    }

    #[test]
    fn r2_signer_urls() {
        let r2 = R2Config::new("0123456789abcdef0123456789abcdef", "bucket", "AK", "SK").unwrap();
        let signer = UrlSigner::R2(r2);
        let g = grant_upload(
            &request(ArtifactKind::Screenshot, "image/webp", 77),
            [5; 16],
            NOW,
            900,
        )
        .unwrap();
        let url = signer.upload_url(&g, NOW).unwrap();
        assert!(url.starts_with(&format!(
            "https://0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com/bucket/{}?",
            g.key()
        )));
        assert!(url.contains("&X-Amz-Expires=900&"), "{url}");
        assert!(url.contains(
            "&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost%3Bif-none-match&"
        ));
        let d = grant_download(g.artifact_id.clone(), g.kind, NOW, 300);
        let url = signer.download_url(&d, Some("image/webp"), NOW).unwrap();
        assert!(url.contains("&X-Amz-Expires=300&"), "{url}");
        assert!(url.contains("&X-Amz-SignedHeaders=host&"));
        assert!(url.contains("response-content-type=image%2Fwebp"), "{url}");
        assert!(url.contains("response-content-disposition=inline"), "{url}");
        // An HTML snapshot is a download R2 serves as an attachment, never a page.
        let html = grant_download(g.artifact_id.clone(), ArtifactKind::Html, NOW, 300);
        let url = signer
            .download_url(&html, Some("text/html; charset=utf-8"), NOW)
            .unwrap();
        assert!(
            url.contains("response-content-disposition=attachment%3B%20filename%3D%22"),
            "{url}"
        );
    }

    #[test]
    fn sigv4_times_never_outlive_the_grant() {
        assert_eq!(sigv4_times(1_000, 61_000), (1, 60));
        assert_eq!(sigv4_times(1_999, 61_999), (1, 60));
        assert_eq!(sigv4_times(1_500, 61_499), (1, 60));
        assert_eq!(sigv4_times(5_000, 1_000), (5, 0));
    }
}
