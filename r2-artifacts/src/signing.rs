//! Our own presigned URLs: HMAC-SHA256 over what a URL permits, checked by the Worker.
//!
//! Routes (served by the Worker, no other authentication):
//!
//! - `PUT /artifacts/upload/<artifactId>?kind=…&expires=…&ct=…&max=…&sig=…`
//! - `GET /artifacts/download/<artifactId>?kind=…&expires=…&sig=…`
//!
//! `expires` is the absolute expiry in milliseconds since the Unix epoch; the URL is refused
//! from that instant on (`now_ms >= expires`). `ct` is the content type the upload was granted
//! for and `max` its maximum length in bytes. `kind` completes the R2 key, since the artifact
//! id does not carry it. `sig` is 64 lowercase hex chars.
//!
//! # What is signed
//!
//! The MAC input is a sequence of fields, each written as its byte length (`u32`, big-endian)
//! followed by its bytes, so no field value can be confused with a separator or spill into the
//! next field whatever it contains:
//!
//! - upload: `"mimo-artifact-url-v1"`, `"PUT"`, R2 key, expiry (decimal ms), content type
//!   (exactly as granted), max length (decimal bytes);
//! - download: `"mimo-artifact-url-v1"`, `"GET"`, R2 key, expiry (decimal ms).
//!
//! The R2 key `tasks/<taskId>/<kind>/<artifactId>` binds the task, the kind and the id. The
//! method is signed, so a download URL cannot be replayed as an upload or the reverse.
//!
//! # Keys
//!
//! Sign with [`derive_signing_key`] of the deployment secret, never with the secret itself:
//! the derived key is useless as an API token and an API token is useless as a URL-signing
//! key.
//!
//! # Verification
//!
//! The signature is recomputed and compared with [`constant_time_eq`], the single comparison
//! of secret-dependent bytes in this module. It is checked before the expiry, so
//! [`Error::Expired`] is only ever reported for URLs we really issued.

use std::borrow::Cow;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use mimo_protocol::artifact::ArtifactId;
use mimo_protocol::artifact::ArtifactKind;

use crate::error::Error;

type HmacSha256 = Hmac<Sha256>;

/// Context label of [`derive_signing_key`]. Changing it invalidates every outstanding URL.
pub const SIGNING_KEY_CONTEXT: &[u8] = b"mimo/r2-artifacts/url-signing-key/v1";

/// First field of every signed string, so a future format cannot collide with this one.
pub const CANONICAL_VERSION: &str = "mimo-artifact-url-v1";

/// Path prefix of upload URLs; the artifact id follows.
pub const UPLOAD_PATH_PREFIX: &str = "/artifacts/upload/";

/// Path prefix of download URLs; the artifact id follows.
pub const DOWNLOAD_PATH_PREFIX: &str = "/artifacts/download/";

/// Length of a signature in the query: hex of a 32-byte HMAC-SHA256.
pub const SIGNATURE_HEX_LEN: usize = 64;

/// The HTTP method a URL grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::Display)]
#[strum(serialize_all = "UPPERCASE")]
pub enum Method {
    /// Upload (`PUT`).
    Put,
    /// Download (`GET`).
    Get,
}

impl Method {
    /// The HTTP method name, as signed.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Permission to `PUT` one artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadGrant {
    /// The artifact to write.
    pub artifact_id: ArtifactId,
    /// Its kind (part of the key).
    pub kind: ArtifactKind,
    /// The `Content-Type` the upload was granted for, exactly as signed.
    pub content_type: String,
    /// The most bytes the body may have.
    pub max_length: u64,
    /// Expiry, milliseconds since the Unix epoch (refused at `now_ms >= expires_at_ms`).
    pub expires_at_ms: u64,
}

impl UploadGrant {
    /// The R2 key the upload writes.
    pub fn key(&self) -> String {
        self.artifact_id.object_key(self.kind)
    }

    /// The most body bytes to accept: the signed maximum, and never more than the kind allows
    /// (defence in depth should a grant have been issued without [`crate::check_presign`]).
    pub fn body_limit(&self) -> u64 {
        self.max_length.min(self.kind.max_bytes())
    }
}

/// Permission to `GET` one artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadGrant {
    /// The artifact to read.
    pub artifact_id: ArtifactId,
    /// Its kind (part of the key).
    pub kind: ArtifactKind,
    /// Expiry, milliseconds since the Unix epoch (refused at `now_ms >= expires_at_ms`).
    pub expires_at_ms: u64,
}

impl DownloadGrant {
    /// The R2 key the download reads.
    pub fn key(&self) -> String {
        self.artifact_id.object_key(self.kind)
    }
}

/// A verified grant of either method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// A verified upload URL.
    Upload(UploadGrant),
    /// A verified download URL.
    Download(DownloadGrant),
}

impl Grant {
    /// The R2 key the grant covers.
    pub fn key(&self) -> String {
        match self {
            Grant::Upload(g) => g.key(),
            Grant::Download(g) => g.key(),
        }
    }
}

/// The key our URLs are signed with: HMAC-SHA256(deployment secret, [`SIGNING_KEY_CONTEXT`]).
/// Derived rather than reused so the URL-signing key and the API token it may come from can
/// never stand in for each other.
pub fn derive_signing_key(deployment_secret: &[u8]) -> [u8; 32] {
    let mut mac = new_mac(deployment_secret);
    mac.update(SIGNING_KEY_CONTEXT);
    mac.finalize().into_bytes().into()
}

/// Compares two byte strings in time independent of their contents (via `subtle`); unequal
/// lengths are unequal (lengths are not secret: a signature's length is public).
///
/// This is the one place where a presented signature meets the expected one.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    #[cfg(test)]
    tests::CONSTANT_TIME_CALLS.with(|c| c.set(c.get() + 1));
    a.ct_eq(b).into()
}

/// The signature (64 lowercase hex) of an upload grant.
pub fn sign_upload(signing_key: &[u8], grant: &UploadGrant) -> String {
    sign_fields(
        signing_key,
        Method::Put,
        &grant.key(),
        grant.expires_at_ms,
        Some((&grant.content_type, grant.max_length)),
    )
}

/// The signature (64 lowercase hex) of a download grant.
pub fn sign_download(signing_key: &[u8], grant: &DownloadGrant) -> String {
    sign_fields(
        signing_key,
        Method::Get,
        &grant.key(),
        grant.expires_at_ms,
        None,
    )
}

/// The query string (without `?`) of an upload URL: `kind`, `expires`, `ct`, `max`, `sig`.
pub fn upload_query(signing_key: &[u8], grant: &UploadGrant) -> String {
    form_urlencoded::Serializer::new(String::new())
        .append_pair("kind", grant.kind.as_str())
        .append_pair("expires", &grant.expires_at_ms.to_string())
        .append_pair("ct", &grant.content_type)
        .append_pair("max", &grant.max_length.to_string())
        .append_pair("sig", &sign_upload(signing_key, grant))
        .finish()
}

/// The query string (without `?`) of a download URL: `kind`, `expires`, `sig`.
pub fn download_query(signing_key: &[u8], grant: &DownloadGrant) -> String {
    form_urlencoded::Serializer::new(String::new())
        .append_pair("kind", grant.kind.as_str())
        .append_pair("expires", &grant.expires_at_ms.to_string())
        .append_pair("sig", &sign_download(signing_key, grant))
        .finish()
}

/// Path and query of an upload URL: `/artifacts/upload/<artifactId>?<query>`. Prepend the
/// Worker's origin.
pub fn upload_path(signing_key: &[u8], grant: &UploadGrant) -> String {
    format!(
        "{UPLOAD_PATH_PREFIX}{}?{}",
        grant.artifact_id,
        upload_query(signing_key, grant)
    )
}

/// Path and query of a download URL: `/artifacts/download/<artifactId>?<query>`. Prepend the
/// Worker's origin.
pub fn download_path(signing_key: &[u8], grant: &DownloadGrant) -> String {
    format!(
        "{DOWNLOAD_PATH_PREFIX}{}?{}",
        grant.artifact_id,
        download_query(signing_key, grant)
    )
}

/// Verifies an upload URL for `artifact_id` (from the path) with its raw query string (with or
/// without a leading `?`) at `now_ms`, and returns what it grants.
pub fn verify_upload(
    signing_key: &[u8],
    artifact_id: &ArtifactId,
    query: &str,
    now_ms: u64,
) -> Result<UploadGrant, Error> {
    let q = SignedQuery::parse(query, Method::Put)?;
    let grant = UploadGrant {
        artifact_id: artifact_id.clone(),
        kind: q.kind,
        // Both present: `SignedQuery::parse` requires them for PUT.
        content_type: q.content_type.unwrap_or_default(),
        max_length: q.max_length.unwrap_or_default(),
        expires_at_ms: q.expires_at_ms,
    };
    check(
        &sign_upload(signing_key, &grant),
        &q.signature,
        grant.expires_at_ms,
        now_ms,
    )?;
    Ok(grant)
}

/// Verifies a download URL for `artifact_id` (from the path) with its raw query string (with or
/// without a leading `?`) at `now_ms`, and returns what it grants.
pub fn verify_download(
    signing_key: &[u8],
    artifact_id: &ArtifactId,
    query: &str,
    now_ms: u64,
) -> Result<DownloadGrant, Error> {
    let q = SignedQuery::parse(query, Method::Get)?;
    let grant = DownloadGrant {
        artifact_id: artifact_id.clone(),
        kind: q.kind,
        expires_at_ms: q.expires_at_ms,
    };
    check(
        &sign_download(signing_key, &grant),
        &q.signature,
        grant.expires_at_ms,
        now_ms,
    )?;
    Ok(grant)
}

/// Verifies a URL of either method.
pub fn verify(
    signing_key: &[u8],
    method: Method,
    artifact_id: &ArtifactId,
    query: &str,
    now_ms: u64,
) -> Result<Grant, Error> {
    match method {
        Method::Put => verify_upload(signing_key, artifact_id, query, now_ms).map(Grant::Upload),
        Method::Get => {
            verify_download(signing_key, artifact_id, query, now_ms).map(Grant::Download)
        }
    }
}

/// Signature first (constant time), then expiry.
fn check(expected: &str, presented: &str, expires_at_ms: u64, now_ms: u64) -> Result<(), Error> {
    if !constant_time_eq(expected.as_bytes(), presented.as_bytes()) {
        return Err(Error::BadSignature);
    }
    if now_ms >= expires_at_ms {
        return Err(Error::Expired);
    }
    Ok(())
}

fn new_mac(key: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length; this cannot fail.
    <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes keys of any length")
}

/// HMAC-SHA256 over the length-prefixed fields (see the module docs), as lowercase hex.
fn sign_fields(
    signing_key: &[u8],
    method: Method,
    key: &str,
    expires_at_ms: u64,
    upload: Option<(&str, u64)>,
) -> String {
    let mut mac = new_mac(signing_key);
    let mut field = |bytes: &[u8]| {
        // Keys, content types and decimal numbers are far below 4 GiB; saturating keeps the
        // encoding total anyway.
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        mac.update(&len.to_be_bytes());
        mac.update(bytes);
    };
    field(CANONICAL_VERSION.as_bytes());
    field(method.as_str().as_bytes());
    field(key.as_bytes());
    field(expires_at_ms.to_string().as_bytes());
    if let Some((content_type, max_length)) = upload {
        field(content_type.as_bytes());
        field(max_length.to_string().as_bytes());
    }
    hex::encode(mac.finalize().into_bytes())
}

/// The parameters of a signed query, parsed strictly: each known parameter at most once, no
/// unknown ones, numbers in canonical decimal.
struct SignedQuery {
    kind: ArtifactKind,
    expires_at_ms: u64,
    content_type: Option<String>,
    max_length: Option<u64>,
    signature: String,
}

impl SignedQuery {
    fn parse(query: &str, method: Method) -> Result<Self, Error> {
        use crate::error::Error::Malformed;
        let query = query.strip_prefix('?').unwrap_or(query);
        let mut kind = None;
        let mut expires = None;
        let mut ct = None;
        let mut max = None;
        let mut sig = None;
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            let slot = match (name.as_ref(), method) {
                ("kind", _) => &mut kind,
                ("expires", _) => &mut expires,
                ("sig", _) => &mut sig,
                ("ct", Method::Put) => &mut ct,
                ("max", Method::Put) => &mut max,
                _ => return Err(Malformed("unexpected query parameter")),
            };
            if slot.replace(value).is_some() {
                return Err(Malformed("repeated query parameter"));
            }
        }
        let kind = kind
            .ok_or(Malformed("missing kind"))?
            .parse::<ArtifactKind>()
            .map_err(|_| Malformed("unknown kind"))?;
        let expires_at_ms = parse_decimal(expires.ok_or(Malformed("missing expires"))?)
            .ok_or(Malformed("expires is not a decimal number"))?;
        let signature = sig.ok_or(Malformed("missing sig"))?.into_owned();
        let (content_type, max_length) = match method {
            Method::Put => {
                let ct = ct.ok_or(Malformed("missing ct"))?.into_owned();
                let max = parse_decimal(max.ok_or(Malformed("missing max"))?)
                    .ok_or(Malformed("max is not a decimal number"))?;
                (Some(ct), Some(max))
            }
            Method::Get => (None, None),
        };
        Ok(SignedQuery {
            kind,
            expires_at_ms,
            content_type,
            max_length,
            signature,
        })
    }
}

/// A `u64` in the one spelling we emit: ASCII digits, no sign, no leading zeros (except `0`).
/// One spelling per value keeps "what was signed" and "what is presented" the same string.
fn parse_decimal(s: Cow<'_, str>) -> Option<u64> {
    let canonical = !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_digit())
        && (s.len() == 1 || !s.starts_with('0'));
    if canonical {
        s.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    use super::*;
    use mimo_protocol::artifact::TaskId;

    thread_local! {
        /// How often [`constant_time_eq`] ran on this thread (tests run one per thread).
        pub(crate) static CONSTANT_TIME_CALLS: Cell<usize> = const { Cell::new(0) };
    }

    const SECRET: &[u8] = b"deployment-secret-for-tests";
    const NOW: u64 = 1_700_000_000_000;
    const EXPIRES: u64 = NOW + 900_000;
    const TASK: &str = "3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c";

    fn key() -> [u8; 32] {
        derive_signing_key(SECRET)
    }

    fn id(byte: u8) -> ArtifactId {
        ArtifactId::new(&TaskId::parse(TASK).unwrap(), [byte; 16])
    }

    fn upload() -> UploadGrant {
        UploadGrant {
            artifact_id: id(7),
            kind: ArtifactKind::Screenshot,
            content_type: "image/png".into(),
            max_length: 123_456,
            expires_at_ms: EXPIRES,
        }
    }

    fn download() -> DownloadGrant {
        DownloadGrant {
            artifact_id: id(7),
            kind: ArtifactKind::Html,
            expires_at_ms: EXPIRES,
        }
    }

    /// Replaces one parameter's raw (encoded) value in a query.
    fn with_param(query: &str, name: &str, value: &str) -> String {
        query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((n, _)) if n == name => format!("{n}={value}"),
                _ => p.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("&")
    }

    fn without_param(query: &str, name: &str) -> String {
        query
            .split('&')
            .filter(|p| !p.starts_with(&format!("{name}=")))
            .collect::<Vec<_>>()
            .join("&")
    }

    #[test]
    fn derived_key_differs_from_secret_and_is_stable() {
        let k = derive_signing_key(SECRET);
        assert_eq!(k, derive_signing_key(SECRET));
        assert_ne!(&k[..], SECRET);
        assert_ne!(k, derive_signing_key(b"another secret"));
        // HMAC-SHA256(SECRET, SIGNING_KEY_CONTEXT), computed independently (Python `hmac`).
        assert_eq!(
            hex::encode(k),
            "971bffb362e23f6e642bb1628d860a50826efaeabcb209015f2d1b9888e59ee3"
        );
    }

    #[test]
    fn upload_round_trip() {
        let g = upload();
        let q = upload_query(&key(), &g);
        assert_eq!(
            q,
            format!(
                "kind=screenshot&expires={EXPIRES}&ct=image%2Fpng&max=123456&sig={}",
                sign_upload(&key(), &g)
            )
        );
        assert_eq!(
            verify_upload(&key(), &g.artifact_id, &q, NOW),
            Ok(g.clone())
        );
        assert_eq!(
            verify_upload(&key(), &g.artifact_id, &format!("?{q}"), NOW),
            Ok(g.clone())
        );
        assert_eq!(
            verify(&key(), Method::Put, &g.artifact_id, &q, NOW),
            Ok(Grant::Upload(g.clone()))
        );
        let path = upload_path(&key(), &g);
        assert_eq!(path, format!("/artifacts/upload/{}?{q}", g.artifact_id));
        assert_eq!(
            g.key(),
            format!("tasks/{TASK}/screenshot/{}", g.artifact_id)
        );
    }

    #[test]
    fn content_type_with_parameters_round_trips() {
        let mut g = upload();
        g.kind = ArtifactKind::Readability;
        g.content_type = "text/markdown; charset=utf-8".into();
        let q = upload_query(&key(), &g);
        assert!(q.contains("ct=text%2Fmarkdown%3B+charset%3Dutf-8"), "{q}");
        assert_eq!(verify_upload(&key(), &g.artifact_id, &q, NOW), Ok(g));
    }

    #[test]
    fn download_round_trip() {
        let g = download();
        let q = download_query(&key(), &g);
        assert_eq!(
            q,
            format!(
                "kind=html&expires={EXPIRES}&sig={}",
                sign_download(&key(), &g)
            )
        );
        assert_eq!(
            verify_download(&key(), &g.artifact_id, &q, NOW),
            Ok(g.clone())
        );
        assert_eq!(
            verify(&key(), Method::Get, &g.artifact_id, &q, NOW),
            Ok(Grant::Download(g.clone()))
        );
        assert_eq!(
            download_path(&key(), &g),
            format!("/artifacts/download/{}?{q}", g.artifact_id)
        );
    }

    #[test]
    fn signature_shape() {
        let s = sign_upload(&key(), &upload());
        assert_eq!(s.len(), SIGNATURE_HEX_LEN);
        assert!(s
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        assert_ne!(s, sign_download(&key(), &download()));
    }

    #[test]
    fn expiry_edge() {
        let g = upload();
        let q = upload_query(&key(), &g);
        assert!(verify_upload(&key(), &g.artifact_id, &q, EXPIRES - 1).is_ok());
        assert_eq!(
            verify_upload(&key(), &g.artifact_id, &q, EXPIRES),
            Err(Error::Expired)
        );
        assert_eq!(
            verify_upload(&key(), &g.artifact_id, &q, u64::MAX),
            Err(Error::Expired)
        );
        let d = download();
        let q = download_query(&key(), &d);
        assert!(verify_download(&key(), &d.artifact_id, &q, EXPIRES - 1).is_ok());
        assert_eq!(
            verify_download(&key(), &d.artifact_id, &q, EXPIRES),
            Err(Error::Expired)
        );
    }

    #[test]
    fn tampered_fields_are_bad_signatures() {
        let g = upload();
        let q = upload_query(&key(), &g);
        let bad = Err(Error::BadSignature);

        // Key: another artifact id, same task.
        assert_eq!(verify_upload(&key(), &id(8), &q, NOW), bad);
        // Key: another task.
        let other_task = TaskId::parse("00000000-0000-0000-0000-000000000000").unwrap();
        let other = ArtifactId::new(&other_task, [7; 16]);
        assert_eq!(verify_upload(&key(), &other, &q, NOW), bad);
        // Key: another kind.
        let t = with_param(&q, "kind", "html");
        assert_eq!(verify_upload(&key(), &g.artifact_id, &t, NOW), bad);
        // Content type, including one that only differs by parameters or case.
        for ct in [
            "image%2Fjpeg",
            "image%2FPNG",
            "image%2Fpng%3B+x%3D1",
            "text%2Fhtml",
        ] {
            let t = with_param(&q, "ct", ct);
            assert_eq!(verify_upload(&key(), &g.artifact_id, &t, NOW), bad, "{ct}");
        }
        // Max length, up and down.
        for max in ["123457", "123455", "0", "18446744073709551615"] {
            let t = with_param(&q, "max", max);
            assert_eq!(verify_upload(&key(), &g.artifact_id, &t, NOW), bad, "{max}");
        }
        // Expiry, later and earlier (earlier must not read as Expired: it is forged).
        for exp in [EXPIRES + 1, EXPIRES * 2, NOW - 1] {
            let t = with_param(&q, "expires", &exp.to_string());
            assert_eq!(verify_upload(&key(), &g.artifact_id, &t, NOW), bad, "{exp}");
        }
        // Signature: one character flipped, truncated, extended, uppercase, empty.
        let sig = sign_upload(&key(), &g);
        let flipped = {
            let mut b = sig.clone().into_bytes();
            b[10] = if b[10] == b'0' { b'1' } else { b'0' };
            String::from_utf8(b).unwrap()
        };
        for s in [
            flipped,
            sig[..63].to_owned(),
            format!("{sig}0"),
            sig.to_uppercase(),
            String::new(),
        ] {
            let t = with_param(&q, "sig", &s);
            assert_eq!(verify_upload(&key(), &g.artifact_id, &t, NOW), bad, "{s}");
        }
        // Another signing key (e.g. another deployment, or the raw secret).
        assert_eq!(verify_upload(SECRET, &g.artifact_id, &q, NOW), bad);
        assert_eq!(
            verify_upload(&derive_signing_key(b"x"), &g.artifact_id, &q, NOW),
            bad
        );
    }

    #[test]
    fn tampered_download_fields_are_bad_signatures() {
        let d = download();
        let q = download_query(&key(), &d);
        let bad = Err(Error::BadSignature);
        assert_eq!(verify_download(&key(), &id(9), &q, NOW), bad);
        let t = with_param(&q, "kind", "screenshot");
        assert_eq!(verify_download(&key(), &d.artifact_id, &t, NOW), bad);
        let t = with_param(&q, "expires", &(EXPIRES + 1000).to_string());
        assert_eq!(verify_download(&key(), &d.artifact_id, &t, NOW), bad);
    }

    #[test]
    fn method_is_bound() {
        let bad = Error::BadSignature;
        // An upload URL stripped of its upload parameters does not download.
        let g = upload();
        let q = upload_query(&key(), &g);
        let stripped = without_param(&without_param(&q, "ct"), "max");
        assert_eq!(
            verify_download(&key(), &g.artifact_id, &stripped, NOW),
            Err(bad.clone())
        );
        // A download URL given upload parameters does not upload.
        let d = DownloadGrant {
            artifact_id: g.artifact_id.clone(),
            kind: g.kind,
            expires_at_ms: g.expires_at_ms,
        };
        let q = format!("{}&ct=image%2Fpng&max=123456", download_query(&key(), &d));
        assert_eq!(verify_upload(&key(), &g.artifact_id, &q, NOW), Err(bad));
        // The method field alone changes the MAC.
        let k = key();
        assert_ne!(
            sign_fields(&k, Method::Put, "k", 1, None),
            sign_fields(&k, Method::Get, "k", 1, None)
        );
    }

    #[test]
    fn fields_cannot_shift_into_each_other() {
        // Without length prefixes, moving bytes between adjacent fields could keep the MAC.
        let k = key();
        assert_ne!(
            sign_fields(&k, Method::Put, "a", 12, Some(("3", 4))),
            sign_fields(&k, Method::Put, "a", 1, Some(("23", 4)))
        );
        assert_ne!(
            sign_fields(&k, Method::Put, "a", 1, Some(("x1", 2))),
            sign_fields(&k, Method::Put, "a", 1, Some(("x", 12)))
        );
    }

    #[test]
    fn malformed_queries() {
        let g = upload();
        let q = upload_query(&key(), &g);
        let id = &g.artifact_id;
        let malformed = |query: &str| {
            matches!(
                verify_upload(&key(), id, query, NOW),
                Err(Error::Malformed(_))
            )
        };
        assert!(malformed(""));
        assert!(malformed("?"));
        for p in ["kind", "expires", "ct", "max", "sig"] {
            assert!(malformed(&without_param(&q, p)), "missing {p}");
        }
        assert!(malformed(&format!("{q}&sig=00")), "repeated sig");
        assert!(malformed(&format!("{q}&kind=screenshot")), "repeated kind");
        assert!(malformed(&format!("{q}&x=1")), "unknown parameter");
        assert!(malformed(&with_param(&q, "kind", "video")));
        assert!(malformed(&with_param(&q, "kind", "Screenshot")));
        for n in [
            "",
            "-1",
            "+1",
            "01",
            "1e3",
            "1.0",
            " 1",
            "18446744073709551616",
        ] {
            let enc: String = form_urlencoded::byte_serialize(n.as_bytes()).collect();
            assert!(malformed(&with_param(&q, "expires", &enc)), "expires={n:?}");
            assert!(malformed(&with_param(&q, "max", &enc)), "max={n:?}");
        }
        // A download query must not carry upload parameters.
        let d = download_query(&key(), &download());
        for extra in ["ct=text%2Fhtml", "max=1"] {
            assert!(matches!(
                verify_download(&key(), id, &format!("{d}&{extra}"), NOW),
                Err(Error::Malformed(_))
            ));
        }
        // Garbage never panics.
        for junk in [
            "&&&",
            "=",
            "sig",
            "%",
            "%zz=%zz",
            "kind=%FF%FE",
            "\u{0}=\u{0}",
        ] {
            assert!(verify_upload(&key(), id, junk, NOW).is_err());
            assert!(verify_download(&key(), id, junk, NOW).is_err());
        }
    }

    #[test]
    fn zero_is_a_canonical_number() {
        let mut g = upload();
        g.max_length = 0;
        let q = upload_query(&key(), &g);
        assert!(q.contains("&max=0&"));
        assert_eq!(verify_upload(&key(), &g.artifact_id, &q, NOW), Ok(g));
    }

    #[test]
    fn constant_time_eq_accepts_only_equal_inputs() {
        assert!(constant_time_eq(b"", b""));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"bbc"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(!constant_time_eq(b"ab", b"abc"));
        assert!(!constant_time_eq(b"", b"a"));
    }

    #[test]
    fn verification_goes_through_constant_time_eq() {
        let g = upload();
        let q = upload_query(&key(), &g);
        let calls = || CONSTANT_TIME_CALLS.with(Cell::get);

        let before = calls();
        assert!(verify_upload(&key(), &g.artifact_id, &q, NOW).is_ok());
        assert_eq!(calls(), before + 1);

        let t = with_param(&q, "max", "1");
        assert!(verify_upload(&key(), &g.artifact_id, &t, NOW).is_err());
        assert_eq!(calls(), before + 2);

        // Expired URLs still had their signature compared (and first).
        assert_eq!(
            verify_upload(&key(), &g.artifact_id, &q, EXPIRES),
            Err(Error::Expired)
        );
        assert_eq!(calls(), before + 3);

        let d = download();
        let q = download_query(&key(), &d);
        assert!(verify_download(&key(), &d.artifact_id, &q, NOW).is_ok());
        assert_eq!(calls(), before + 4);
    }
}
