//! The HTTP decisions of the artifact routes, as pure functions: which request is refused and
//! with which status. The Worker routes only move bytes.
//!
//! - `POST /api/artifacts/presign` → [`check_presign`] (413, 415) before a grant is made;
//! - `PUT /artifacts/upload/<id>?…` → [`authorize`] (404, 405, 403) then [`check_upload`]
//!   (415, 413) before streaming, and [`UploadGrant::body_limit`] while streaming (413);
//! - `GET /artifacts/download/<id>?…` → [`authorize`] (404, 405, 403), answered with
//!   [`download_headers`];
//! - an upload to an artifact already stored → [`Error::AlreadyStored`] (403).

use crate::error::Error;
use crate::signing::{
    verify, Grant, Method, UploadGrant, DOWNLOAD_PATH_PREFIX, UPLOAD_PATH_PREFIX,
};
use mimo_protocol::artifact::ArtifactId;
use mimo_protocol::artifact::{media_type, same_media_type, ArtifactKind};

/// Checks a presign request: the content type must be allowed for the kind (415) and the
/// declared length must not exceed the kind's limit (413).
pub fn check_presign(
    kind: ArtifactKind,
    content_type: &str,
    content_length: u64,
) -> Result<(), Error> {
    if !kind.allows_content_type(content_type) {
        return Err(Error::UnsupportedMediaType { kind });
    }
    if content_length > kind.max_bytes() {
        return Err(Error::PayloadTooLarge {
            kind,
            limit: kind.max_bytes(),
        });
    }
    Ok(())
}

/// Authorizes a request to one of our signed-URL routes, from its method (`"PUT"`, `"GET"`,
/// …), path (`/artifacts/upload/<id>` or `/artifacts/download/<id>`) and raw query string
/// (without or with the leading `?`; pass `""` if there is none). Checks, in order: the route
/// (404), the method (405), the artifact id (404), the signature and expiry (403).
pub fn authorize(
    signing_key: &[u8],
    http_method: &str,
    path: &str,
    query: &str,
    now_ms: u64,
) -> Result<Grant, Error> {
    let (method, id) = if let Some(id) = path.strip_prefix(UPLOAD_PATH_PREFIX) {
        (Method::Put, id)
    } else if let Some(id) = path.strip_prefix(DOWNLOAD_PATH_PREFIX) {
        (Method::Get, id)
    } else {
        return Err(Error::NotFound);
    };
    if http_method != method.as_str() {
        return Err(Error::MethodNotAllowed {
            allow: method.as_str(),
        });
    }
    let id = ArtifactId::parse(id).map_err(|_| Error::NotFound)?;
    verify(signing_key, method, &id, query, now_ms)
}

/// Checks an authorized upload's headers before reading the body, and returns the most body
/// bytes to accept (count them while streaming: a body past this is a 413 too, since
/// `Content-Length` may be absent or, behind some proxies, not enforced).
///
/// `Content-Type` must be present, allowed for the kind and the same media type as granted
/// (parameters and case aside) → else 415. A declared `Content-Length` over the signed maximum
/// or the kind's limit → 413.
pub fn check_upload(
    grant: &UploadGrant,
    content_type: Option<&str>,
    content_length: Option<u64>,
) -> Result<u64, Error> {
    let kind = grant.kind;
    let type_ok = content_type
        .is_some_and(|ct| kind.allows_content_type(ct) && same_media_type(ct, &grant.content_type));
    if !type_ok {
        return Err(Error::UnsupportedMediaType { kind });
    }
    let limit = grant.body_limit();
    if content_length.is_some_and(|len| len > limit) {
        return Err(Error::PayloadTooLarge { kind, limit });
    }
    Ok(limit)
}

/// The refusal for a streamed body that turned out longer than `limit` (from
/// [`check_upload`]) once `received` bytes were read; `Ok` while within it.
pub fn check_streamed_length(grant: &UploadGrant, received: u64) -> Result<(), Error> {
    let limit = grant.body_limit();
    if received > limit {
        Err(Error::PayloadTooLarge {
            kind: grant.kind,
            limit,
        })
    } else {
        Ok(())
    }
}

/// The only media types a download shows in the browser (`inline`): images, which run nothing.
const INLINE_MEDIA_TYPES: [&str; 3] = ["image/png", "image/jpeg", "image/webp"];

/// The headers of every artifact download (the signed-URL route is on the web app's own origin,
/// where a document that ran would read the deployment token), from the stored object's
/// `Content-Type`:
///
/// - an image (PNG, JPEG, WebP) is `inline`, with exactly its media type (no parameters);
/// - anything else — an HTML snapshot above all — is an `attachment` (a browser saves it and
///   never renders it on this origin), with its stored type, or `application/octet-stream`;
/// - all of them `Content-Security-Policy: sandbox` (a unique origin, no scripts, should one
///   be rendered after all) and `X-Content-Type-Options: nosniff` (the type is never guessed).
pub fn download_headers(
    artifact_id: &ArtifactId,
    stored_content_type: Option<&str>,
) -> Vec<(&'static str, String)> {
    let media = stored_content_type
        .and_then(media_type)
        .map(str::to_ascii_lowercase);
    let inline = media
        .as_deref()
        .filter(|mt| INLINE_MEDIA_TYPES.contains(mt))
        .map(str::to_owned);
    let (content_type, disposition) = match inline {
        Some(image) => (image, "inline".to_owned()),
        None => {
            let name = artifact_id.as_str().replace('.', "-");
            let name = match media.as_deref().and_then(file_extension) {
                Some(ext) => format!("{name}.{ext}"),
                None => name,
            };
            let content_type = match (media, stored_content_type) {
                (Some(_), Some(stored)) => stored.to_owned(),
                _ => "application/octet-stream".to_owned(),
            };
            (content_type, format!("attachment; filename=\"{name}\""))
        }
    };
    vec![
        ("content-type", content_type),
        ("content-disposition", disposition),
        (
            "content-security-policy",
            "sandbox; default-src 'none'".to_owned(),
        ),
        ("x-content-type-options", "nosniff".to_owned()),
    ]
}

/// The file name extension a saved download gets, for the media types artifacts are stored as.
fn file_extension(media_type: &str) -> Option<&'static str> {
    Some(match media_type {
        "text/html" => "html",
        "text/markdown" => "md",
        "text/plain" => "txt",
        "text/csv" => "csv",
        "application/json" => "json",
        "application/pdf" => "pdf",
        "application/zip" => "zip",
        // Only a DOM index is stored compressed.
        "application/gzip" => "json.gz",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing::{derive_signing_key, download_path, upload_path, DownloadGrant};
    use mimo_protocol::artifact::TaskId;
    use mimo_protocol::artifact::{HTML_MAX_BYTES, READABILITY_MAX_BYTES, SCREENSHOT_MAX_BYTES};

    const NOW: u64 = 1_700_000_000_000;
    const TASK: &str = "3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c";

    fn key() -> [u8; 32] {
        derive_signing_key(b"secret")
    }

    fn grant(kind: ArtifactKind, ct: &str, max: u64) -> UploadGrant {
        UploadGrant {
            artifact_id: ArtifactId::new(&TaskId::parse(TASK).unwrap(), [1; 16]),
            kind,
            content_type: ct.into(),
            max_length: max,
            expires_at_ms: NOW + 60_000,
        }
    }

    fn split(path_and_query: &str) -> (&str, &str) {
        path_and_query.split_once('?').unwrap()
    }

    #[test]
    fn statuses() {
        assert_eq!(Error::NotFound.status(), 404);
        assert_eq!(Error::MethodNotAllowed { allow: "PUT" }.status(), 405);
        assert_eq!(Error::Expired.status(), 403);
        assert_eq!(Error::BadSignature.status(), 403);
        assert_eq!(Error::Malformed("x").status(), 403);
        let k = ArtifactKind::Html;
        assert_eq!(Error::PayloadTooLarge { kind: k, limit: 1 }.status(), 413);
        assert_eq!(Error::UnsupportedMediaType { kind: k }.status(), 415);
    }

    #[test]
    fn presign_checks() {
        use ArtifactKind::*;
        assert_eq!(check_presign(Screenshot, "image/png", 0), Ok(()));
        assert_eq!(
            check_presign(Screenshot, "image/webp", SCREENSHOT_MAX_BYTES),
            Ok(())
        );
        let r = check_presign(Screenshot, "image/png", SCREENSHOT_MAX_BYTES + 1).unwrap_err();
        assert_eq!((r.status(), r.code().as_str()), (413, "PAYLOAD_TOO_LARGE"));
        assert_eq!(
            check_presign(Html, "text/html; charset=utf-8", HTML_MAX_BYTES),
            Ok(())
        );
        let r = check_presign(Html, "image/png", 10).unwrap_err();
        assert_eq!(
            (r.status(), r.code().as_str()),
            (415, "UNSUPPORTED_MEDIA_TYPE")
        );
        assert_eq!(
            check_presign(Readability, "text/markdown", READABILITY_MAX_BYTES),
            Ok(())
        );
        let r = check_presign(Readability, "text/plain", READABILITY_MAX_BYTES + 1).unwrap_err();
        assert_eq!(
            (r.status(), r.code().as_str()),
            (413, "READABILITY_TOO_LARGE")
        );
        // Content type is judged first: a wrong type is 415 whatever the size.
        assert_eq!(
            check_presign(Html, "text/plain", u64::MAX)
                .unwrap_err()
                .status(),
            415
        );
    }

    #[test]
    fn authorize_upload_and_download() {
        let g = grant(ArtifactKind::Screenshot, "image/png", 1000);
        let pq = upload_path(&key(), &g);
        let (path, query) = split(&pq);
        assert_eq!(
            authorize(&key(), "PUT", path, query, NOW),
            Ok(Grant::Upload(g.clone()))
        );
        let d = DownloadGrant {
            artifact_id: g.artifact_id.clone(),
            kind: g.kind,
            expires_at_ms: g.expires_at_ms,
        };
        let pq = download_path(&key(), &d);
        let (path, query) = split(&pq);
        assert_eq!(
            authorize(&key(), "GET", path, query, NOW),
            Ok(Grant::Download(d))
        );
    }

    #[test]
    fn authorize_refusals() {
        let g = grant(ArtifactKind::Screenshot, "image/png", 1000);
        let pq = upload_path(&key(), &g);
        let (path, query) = split(&pq);
        for m in ["GET", "POST", "HEAD", "OPTIONS", "put"] {
            assert_eq!(
                authorize(&key(), m, path, query, NOW),
                Err(Error::MethodNotAllowed { allow: "PUT" }),
                "{m}"
            );
        }
        let dpath = path.replace("/upload/", "/download/");
        assert_eq!(
            authorize(&key(), "PUT", &dpath, query, NOW),
            Err(Error::MethodNotAllowed { allow: "GET" })
        );
        // The upload query on the download route (with the right method) is malformed there.
        assert!(matches!(
            authorize(&key(), "GET", &dpath, query, NOW),
            Err(Error::Malformed(_))
        ));
        for p in [
            "/artifacts/other/x",
            "/api/artifacts/presign",
            "/",
            "/artifacts/upload",
        ] {
            assert_eq!(
                authorize(&key(), "PUT", p, query, NOW),
                Err(Error::NotFound),
                "{p}"
            );
        }
        for bad_id in [
            "",
            "x",
            &format!("{}/x", g.artifact_id),
            &g.artifact_id.as_str().to_uppercase(),
        ] {
            let p = format!("/artifacts/upload/{bad_id}");
            assert_eq!(
                authorize(&key(), "PUT", &p, query, NOW),
                Err(Error::NotFound),
                "{p}"
            );
        }
        assert_eq!(
            authorize(&key(), "PUT", path, query, g.expires_at_ms),
            Err(Error::Expired)
        );
        assert_eq!(
            authorize(&derive_signing_key(b"other"), "PUT", path, query, NOW),
            Err(Error::BadSignature)
        );
        assert!(matches!(
            authorize(&key(), "PUT", path, "", NOW),
            Err(Error::Malformed(_))
        ));
    }

    #[test]
    fn upload_header_checks() {
        let g = grant(ArtifactKind::Screenshot, "image/png", 1000);
        assert_eq!(check_upload(&g, Some("image/png"), Some(1000)), Ok(1000));
        assert_eq!(check_upload(&g, Some("IMAGE/PNG; x=y"), None), Ok(1000));
        assert_eq!(check_upload(&g, Some("image/png"), Some(0)), Ok(1000));
        let too_large = Error::PayloadTooLarge {
            kind: ArtifactKind::Screenshot,
            limit: 1000,
        };
        assert_eq!(
            check_upload(&g, Some("image/png"), Some(1001)),
            Err(too_large.clone())
        );
        let unsupported = Err(Error::UnsupportedMediaType {
            kind: ArtifactKind::Screenshot,
        });
        assert_eq!(check_upload(&g, None, Some(1)), unsupported);
        assert_eq!(check_upload(&g, Some(""), Some(1)), unsupported);
        // Allowed for the kind but not the type granted.
        assert_eq!(check_upload(&g, Some("image/jpeg"), Some(1)), unsupported);
        assert_eq!(check_upload(&g, Some("text/html"), Some(1)), unsupported);
        // 415 is judged before 413.
        assert_eq!(
            check_upload(&g, Some("text/html"), Some(u64::MAX)),
            unsupported
        );

        assert_eq!(check_streamed_length(&g, 1000), Ok(()));
        assert_eq!(check_streamed_length(&g, 1001), Err(too_large));
    }

    #[test]
    fn kind_limit_caps_a_larger_signed_maximum() {
        // A grant made without check_presign still cannot exceed the kind's limit.
        let g = grant(ArtifactKind::Readability, "text/markdown", u64::MAX);
        assert_eq!(g.body_limit(), READABILITY_MAX_BYTES);
        let r =
            check_upload(&g, Some("text/markdown"), Some(READABILITY_MAX_BYTES + 1)).unwrap_err();
        assert_eq!(
            (r.status(), r.code().as_str()),
            (413, "READABILITY_TOO_LARGE")
        );
        assert_eq!(
            check_upload(&g, Some("text/markdown"), Some(READABILITY_MAX_BYTES)),
            Ok(READABILITY_MAX_BYTES)
        );
        // Under the kind's limit but over the signed maximum: a plain 413.
        let g = grant(ArtifactKind::Readability, "text/markdown", 10);
        let r = check_streamed_length(&g, 11).unwrap_err();
        assert_eq!((r.status(), r.code().as_str()), (413, "PAYLOAD_TOO_LARGE"));
    }
    #[test]
    fn downloads_are_inline_only_for_images() {
        let id = ArtifactId::new(&TaskId::parse(TASK).unwrap(), [0xab; 16]);
        let headers = |ct: Option<&str>| {
            download_headers(&id, ct)
                .into_iter()
                .collect::<std::collections::HashMap<_, _>>()
        };
        let name = id.as_str().replace('.', "-");
        for (stored, served) in [
            ("image/png", "image/png"),
            ("IMAGE/JPEG; q=1", "image/jpeg"),
            (" image/webp ", "image/webp"),
        ] {
            let h = headers(Some(stored));
            assert_eq!(h["content-type"], served, "{stored}");
            assert_eq!(h["content-disposition"], "inline", "{stored}");
        }
        for (stored, disposition) in [
            (
                "text/html; charset=utf-8",
                format!("attachment; filename=\"{name}.html\""),
            ),
            (
                "text/markdown",
                format!("attachment; filename=\"{name}.md\""),
            ),
            (
                "application/json",
                format!("attachment; filename=\"{name}.json\""),
            ),
            (
                "application/gzip",
                format!("attachment; filename=\"{name}.json.gz\""),
            ),
            (
                "application/pdf",
                format!("attachment; filename=\"{name}.pdf\""),
            ),
            (
                "application/msword",
                format!("attachment; filename=\"{name}\""),
            ),
            // Images a browser would run (SVG) are never among the inline ones.
            ("image/svg+xml", format!("attachment; filename=\"{name}\"")),
        ] {
            let h = headers(Some(stored));
            assert_eq!(h["content-type"], stored);
            assert_eq!(h["content-disposition"], disposition);
        }
        for stored in [None, Some(""), Some("text/html\r\nx: y")] {
            let h = headers(stored);
            assert_eq!(h["content-type"], "application/octet-stream", "{stored:?}");
            assert_eq!(
                h["content-disposition"],
                format!("attachment; filename=\"{name}\"")
            );
        }
        for stored in [Some("image/png"), Some("text/html"), None] {
            let h = headers(stored);
            assert_eq!(h["content-security-policy"], "sandbox; default-src 'none'");
            assert_eq!(h["x-content-type-options"], "nosniff");
        }
    }

    #[test]
    fn a_used_upload_url_is_forbidden() {
        let r = Error::AlreadyStored;
        assert_eq!((r.status(), r.code().as_str()), (403, "PERMISSION_DENIED"));
    }
}
