//! S3 Signature Version 4 query presigning, for real R2 presigned URLs.
//!
//! A small signer of our own rather than a crate: it needs only HMAC-SHA256 and SHA-256, builds
//! for `wasm32-unknown-unknown` without a clock or randomness (the time is passed in as Unix
//! seconds and formatted here), and is checked against AWS's published vectors (the S3
//! presigned-URL example and the SigV4 signing-key derivation example).
//!
//! [`presign`] is general over method, host, path, region, service and extra signed headers, so
//! it reproduces AWS's own example; [`R2Config`] fixes the R2 specifics:
//!
//! - path-style URL `https://<account_id>.r2.cloudflarestorage.com/<bucket>/<key>`;
//! - region `auto`, service `s3`;
//! - payload hash `UNSIGNED-PAYLOAD` in the canonical request (the body is not signed and no
//!   `X-Amz-Content-Sha256` parameter is added, as in AWS's example);
//! - `GET` signs only `host`; `PUT` also signs `content-type` and, when given,
//!   `content-length`, so R2 itself refuses (403 `SignatureDoesNotMatch`) an upload with
//!   another content type or size than the one granted;
//! - lifetime 1 s – 7 days ([`crate::limits::check_expiry_secs`]).

use std::fmt;
use std::fmt::Write as _;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::limits::{check_expiry_secs, ExpiryOutOfRange};

type HmacSha256 = Hmac<Sha256>;

/// The SigV4 algorithm name.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// Payload hash of a presigned request whose body is not signed.
pub const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";
/// R2's SigV4 region.
pub const R2_REGION: &str = "auto";
/// The S3 service name.
pub const S3_SERVICE: &str = "s3";
/// Domain of R2's S3-compatible endpoints, after the account id.
pub const R2_ENDPOINT_DOMAIN: &str = "r2.cloudflarestorage.com";
/// First Unix second that would need a five-digit year (10000-01-01T00:00:00Z).
const YEAR_10000_UNIX_SECONDS: u64 = 253_402_300_800;

/// Why a URL could not be presigned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigV4Error {
    /// The lifetime is outside 1 s – 7 days.
    Expiry(ExpiryOutOfRange),
    /// The time cannot be written as `YYYYMMDD'T'HHMMSS'Z'` (year 10000 or later).
    TimeOutOfRange,
    /// A configuration value is unusable; the text says which.
    InvalidConfig(&'static str),
    /// An extra signed header is unusable; the text says why.
    InvalidHeader(&'static str),
}

impl fmt::Display for SigV4Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SigV4Error::Expiry(e) => e.fmt(f),
            SigV4Error::TimeOutOfRange => f.write_str("time is past year 9999"),
            SigV4Error::InvalidConfig(why) => write!(f, "invalid R2 configuration: {why}"),
            SigV4Error::InvalidHeader(why) => write!(f, "invalid signed header: {why}"),
        }
    }
}

impl std::error::Error for SigV4Error {}

impl From<ExpiryOutOfRange> for SigV4Error {
    fn from(e: ExpiryOutOfRange) -> Self {
        SigV4Error::Expiry(e)
    }
}

/// Everything a SigV4 presigned URL depends on.
#[derive(Clone, Copy)]
pub struct PresignInput<'a> {
    /// HTTP method, e.g. `GET` or `PUT`.
    pub method: &'a str,
    /// Host the request goes to (signed as the `host` header), e.g.
    /// `examplebucket.s3.amazonaws.com`.
    pub host: &'a str,
    /// Absolute path, not yet encoded, e.g. `/bucket/tasks/…`. Each segment is URI-encoded,
    /// slashes are kept.
    pub path: &'a str,
    /// SigV4 region (`auto` for R2).
    pub region: &'a str,
    /// SigV4 service (`s3`).
    pub service: &'a str,
    /// Access key id.
    pub access_key_id: &'a str,
    /// Secret access key.
    pub secret_access_key: &'a str,
    /// Signing time, Unix seconds.
    pub unix_seconds: u64,
    /// Lifetime in seconds (1 – 604800).
    pub expires_secs: u64,
    /// Headers to sign besides `host` (the request must then send exactly these values).
    /// Names are matched case-insensitively; values are trimmed and inner runs of spaces
    /// collapsed, as SigV4 prescribes.
    pub extra_signed_headers: &'a [(&'a str, &'a str)],
}

impl fmt::Debug for PresignInput<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PresignInput")
            .field("method", &self.method)
            .field("host", &self.host)
            .field("path", &self.path)
            .field("region", &self.region)
            .field("service", &self.service)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field("unix_seconds", &self.unix_seconds)
            .field("expires_secs", &self.expires_secs)
            .field("extra_signed_headers", &self.extra_signed_headers)
            .finish()
    }
}

/// The intermediate results of presigning, for tests and debugging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Presigned {
    /// The full URL to hand out.
    pub url: String,
    /// The canonical request that was hashed.
    pub canonical_request: String,
    /// The string that was signed.
    pub string_to_sign: String,
    /// The signature (64 lowercase hex).
    pub signature: String,
}

/// Presigns a request and returns the URL.
pub fn presign(input: &PresignInput<'_>) -> Result<String, SigV4Error> {
    presign_detailed(input).map(|p| p.url)
}

/// Presigns a request and returns the URL with its intermediate strings.
pub fn presign_detailed(input: &PresignInput<'_>) -> Result<Presigned, SigV4Error> {
    let expires = check_expiry_secs(input.expires_secs)?;
    let (date, amz_date) = amz_dates(input.unix_seconds)?;
    if !input.path.starts_with('/') {
        return Err(SigV4Error::InvalidConfig("path must start with '/'"));
    }

    // Canonical headers: host plus the extras, lowercase names, sorted, no duplicates.
    let mut headers: Vec<(String, String)> =
        Vec::with_capacity(1 + input.extra_signed_headers.len());
    headers.push(("host".to_owned(), input.host.to_owned()));
    for (name, value) in input.extra_signed_headers {
        let name = name.to_ascii_lowercase();
        if name.is_empty() || !name.bytes().all(is_token_char) {
            return Err(SigV4Error::InvalidHeader("name is not an HTTP token"));
        }
        if value
            .bytes()
            .any(|b| b != b'\t' && !(0x20..0x7f).contains(&b))
        {
            return Err(SigV4Error::InvalidHeader(
                "value has control or non-ASCII bytes",
            ));
        }
        headers.push((name, canonical_header_value(value)));
    }
    headers.sort();
    if headers.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(SigV4Error::InvalidHeader("header signed twice"));
    }
    let signed_headers = headers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let canonical_headers: String = headers.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();

    let scope = format!("{date}/{}/{}/aws4_request", input.region, input.service);
    let credential = format!("{}/{scope}", input.access_key_id);
    // Already in sorted order of their (encoded) names, as the canonical query requires.
    let params = [
        ("X-Amz-Algorithm", ALGORITHM.to_owned()),
        ("X-Amz-Credential", credential),
        ("X-Amz-Date", amz_date.clone()),
        ("X-Amz-Expires", expires.to_string()),
        ("X-Amz-SignedHeaders", signed_headers.clone()),
    ];
    let canonical_query = params
        .iter()
        .map(|(k, v)| format!("{}={}", uri_encode(k, true), uri_encode(v, true)))
        .collect::<Vec<_>>()
        .join("&");
    let canonical_uri = uri_encode(input.path, false);

    let canonical_request = format!(
        "{}\n{canonical_uri}\n{canonical_query}\n{canonical_headers}\n{signed_headers}\n{UNSIGNED_PAYLOAD}",
        input.method
    );
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex::encode(Sha256::digest(canonical_request.as_bytes()))
    );
    let key = signing_key(input.secret_access_key, &date, input.region, input.service);
    let signature = hex::encode(hmac(&key, string_to_sign.as_bytes()));
    let url = format!(
        "https://{}{canonical_uri}?{canonical_query}&X-Amz-Signature={signature}",
        input.host
    );
    Ok(Presigned {
        url,
        canonical_request,
        string_to_sign,
        signature,
    })
}

/// The SigV4 signing key: HMAC chain over `"AWS4" + secret`, date (`YYYYMMDD`), region,
/// service and `aws4_request`.
pub fn signing_key(secret_access_key: &str, date: &str, region: &str, service: &str) -> [u8; 32] {
    let k_secret = format!("AWS4{secret_access_key}");
    let k_date = hmac(k_secret.as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

/// `(YYYYMMDD, YYYYMMDD'T'HHMMSS'Z')` of a Unix time, in UTC.
pub fn amz_dates(unix_seconds: u64) -> Result<(String, String), SigV4Error> {
    if unix_seconds >= YEAR_10000_UNIX_SECONDS {
        return Err(SigV4Error::TimeOutOfRange);
    }
    let (y, m, d) = civil_from_days(unix_seconds / 86_400);
    let secs = unix_seconds % 86_400;
    let date = format!("{y:04}{m:02}{d:02}");
    let datetime = format!(
        "{date}T{:02}{:02}{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    );
    Ok((date, datetime))
}

/// Year, month (1–12) and day (1–31) of a count of days since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, restricted to non-negative days, which is all Unix seconds as `u64` give).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March-based
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// SigV4 `UriEncode`: unreserved characters (`A–Z a–z 0–9 - _ . ~`) as they are, everything
/// else as `%XX` with uppercase hex; `/` too when `encode_slash`, otherwise kept (paths).
pub fn uri_encode(s: &str, encode_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~');
        if unreserved || (b == b'/' && !encode_slash) {
            out.push(b as char);
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Trimmed, with inner runs of spaces and tabs collapsed to one space.
fn canonical_header_value(v: &str) -> String {
    v.split([' ', '\t'])
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// RFC 9110 `tchar`.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// R2's S3 API credentials and bucket, from configuration (e.g. Worker secrets
/// `R2_ACCOUNT_ID`, `R2_ACCESS_KEY_ID`, `R2_SECRET_ACCESS_KEY` and the bucket name). When they
/// are configured the Worker can hand out R2's own presigned URLs instead of ours.
#[derive(Clone, PartialEq, Eq)]
pub struct R2Config {
    account_id: String,
    bucket: String,
    access_key_id: String,
    secret_access_key: String,
    /// Another S3 endpoint than R2's, as `(scheme, host, path prefix)`: Miniflare serves a
    /// local S3 API for its R2 emulation at `http://<host>/cdn-cgi/local/r2/s3`.
    endpoint: Option<(String, String, String)>,
}

impl fmt::Debug for R2Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("R2Config")
            .field("account_id", &self.account_id)
            .field("bucket", &self.bucket)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .finish()
    }
}

impl R2Config {
    /// Validates and builds a configuration. The account id and access key id must be ASCII
    /// alphanumeric (they end up in a host name and in the credential scope); the bucket must
    /// follow R2's naming rules (3–63 lowercase letters, digits and `-`, not starting or ending
    /// with `-`); the secret must not be empty.
    pub fn new(
        account_id: &str,
        bucket: &str,
        access_key_id: &str,
        secret_access_key: &str,
    ) -> Result<Self, SigV4Error> {
        let alnum = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric());
        if !alnum(account_id) {
            return Err(SigV4Error::InvalidConfig(
                "account id must be ASCII alphanumeric",
            ));
        }
        if !alnum(access_key_id) {
            return Err(SigV4Error::InvalidConfig(
                "access key id must be ASCII alphanumeric",
            ));
        }
        let bucket_ok = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !bucket.starts_with('-')
            && !bucket.ends_with('-');
        if !bucket_ok {
            return Err(SigV4Error::InvalidConfig(
                "bucket must be 3-63 of a-z, 0-9 and '-'",
            ));
        }
        if secret_access_key.is_empty() {
            return Err(SigV4Error::InvalidConfig("secret access key is empty"));
        }
        Ok(R2Config {
            account_id: account_id.to_owned(),
            bucket: bucket.to_owned(),
            access_key_id: access_key_id.to_owned(),
            secret_access_key: secret_access_key.to_owned(),
            endpoint: None,
        })
    }

    /// Uses another S3-compatible endpoint, `http(s)://host[:port][/prefix]`; requests go to
    /// (and are signed for) `<prefix>/<bucket>/<key>` on that host.
    pub fn with_endpoint(mut self, endpoint: &str) -> Result<Self, SigV4Error> {
        let (scheme, rest) = endpoint
            .split_once("://")
            .filter(|(scheme, _)| matches!(*scheme, "http" | "https"))
            .ok_or(SigV4Error::InvalidConfig(
                "endpoint must start with http:// or https://",
            ))?;
        let (host, prefix) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
        let host_ok = !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
        if !host_ok || prefix.contains(['?', '#']) {
            return Err(SigV4Error::InvalidConfig(
                "endpoint must be scheme://host[:port][/path]",
            ));
        }
        let prefix = prefix.trim_end_matches('/');
        let prefix = if prefix.is_empty() {
            String::new()
        } else {
            format!("/{prefix}")
        };
        self.endpoint = Some((scheme.to_owned(), host.to_owned(), prefix));
        Ok(self)
    }

    /// The S3 endpoint host: `<account_id>.r2.cloudflarestorage.com`, or the configured
    /// endpoint's.
    pub fn host(&self) -> String {
        match &self.endpoint {
            Some((_, host, _)) => host.clone(),
            None => format!("{}.{R2_ENDPOINT_DOMAIN}", self.account_id),
        }
    }

    /// The bucket name.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// A presigned `GET` of `key` (signs `host` only).
    pub fn presign_get(
        &self,
        key: &str,
        unix_seconds: u64,
        expires_secs: u64,
    ) -> Result<String, SigV4Error> {
        self.presign("GET", key, unix_seconds, expires_secs, &[])
    }

    /// A presigned `PUT` of `key`. Signs `content-type` (the upload must send exactly this
    /// `Content-Type`, whitespace aside) and, when `content_length` is given, `content-length`
    /// (the body must be exactly that long — without it R2 cannot bound the size at all).
    pub fn presign_put(
        &self,
        key: &str,
        content_type: &str,
        content_length: Option<u64>,
        unix_seconds: u64,
        expires_secs: u64,
    ) -> Result<String, SigV4Error> {
        let length = content_length.map(|l| l.to_string());
        let mut headers = vec![("content-type", content_type)];
        if let Some(length) = length.as_deref() {
            headers.push(("content-length", length));
        }
        self.presign("PUT", key, unix_seconds, expires_secs, &headers)
    }

    fn presign(
        &self,
        method: &str,
        key: &str,
        unix_seconds: u64,
        expires_secs: u64,
        extra_signed_headers: &[(&str, &str)],
    ) -> Result<String, SigV4Error> {
        if key.is_empty() {
            return Err(SigV4Error::InvalidConfig("object key is empty"));
        }
        let host = self.host();
        let prefix = self
            .endpoint
            .as_ref()
            .map_or("", |(_, _, prefix)| prefix.as_str());
        let path = format!("{prefix}/{}/{key}", self.bucket);
        let url = presign(&PresignInput {
            method,
            host: &host,
            path: &path,
            region: R2_REGION,
            service: S3_SERVICE,
            access_key_id: &self.access_key_id,
            secret_access_key: &self.secret_access_key,
            unix_seconds,
            expires_secs,
            extra_signed_headers,
        })?;
        Ok(match &self.endpoint {
            // The scheme is not signed: a plain-HTTP endpoint (a local one) gets the same URL.
            Some((scheme, _, _)) if scheme != "https" => {
                format!("{scheme}://{}", &url["https://".len()..])
            }
            _ => url,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's S3 presigned-URL example ("Authenticating Requests: Using Query Parameters").
    const AWS_ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
    const AWS_S3_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    /// 2013-05-24T00:00:00Z.
    const AWS_S3_TIME: u64 = 1_369_353_600;

    fn aws_example() -> PresignInput<'static> {
        PresignInput {
            method: "GET",
            host: "examplebucket.s3.amazonaws.com",
            path: "/test.txt",
            region: "us-east-1",
            service: "s3",
            access_key_id: AWS_ACCESS_KEY,
            secret_access_key: AWS_S3_SECRET,
            unix_seconds: AWS_S3_TIME,
            expires_secs: 86_400,
            extra_signed_headers: &[],
        }
    }

    #[test]
    fn aws_s3_presigned_url_example() {
        let p = presign_detailed(&aws_example()).unwrap();
        assert_eq!(
            p.canonical_request,
            "GET\n/test.txt\n\
             X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\n\
             host:examplebucket.s3.amazonaws.com\n\
             \n\
             host\n\
             UNSIGNED-PAYLOAD"
        );
        assert_eq!(
            p.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n\
             3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04"
        );
        assert_eq!(
            p.signature,
            "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
        );
        assert_eq!(
            p.url,
            "https://examplebucket.s3.amazonaws.com/test.txt\
             ?X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request\
             &X-Amz-Date=20130524T000000Z\
             &X-Amz-Expires=86400\
             &X-Amz-SignedHeaders=host\
             &X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
        );
        assert_eq!(presign(&aws_example()).unwrap(), p.url);
    }

    #[test]
    fn aws_signing_key_derivation_example() {
        // SigV4 documentation: the signing key of the IAM example, and the signature of its
        // published string to sign.
        let key = signing_key(
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "20150830",
            "us-east-1",
            "iam",
        );
        assert_eq!(
            hex::encode(key),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"
        );
        let string_to_sign = "AWS4-HMAC-SHA256\n20150830T123600Z\n\
             20150830/us-east-1/iam/aws4_request\n\
             f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59";
        assert_eq!(
            hex::encode(hmac(&key, string_to_sign.as_bytes())),
            "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
    }

    #[test]
    fn dates() {
        let d = |s| amz_dates(s).unwrap();
        assert_eq!(d(0), ("19700101".into(), "19700101T000000Z".into()));
        assert_eq!(
            d(AWS_S3_TIME),
            ("20130524".into(), "20130524T000000Z".into())
        );
        // 2015-08-30T12:36:00Z, the SigV4 documentation's time.
        assert_eq!(d(1_440_938_160).1, "20150830T123600Z");
        // Leap days, century rules, end of day, end of year.
        assert_eq!(d(951_782_400).1, "20000229T000000Z");
        assert_eq!(d(951_868_799).1, "20000229T235959Z");
        assert_eq!(d(4_107_542_400).1, "21000301T000000Z"); // 2100 is not a leap year
        assert_eq!(d(1_709_164_800).1, "20240229T000000Z");
        assert_eq!(d(1_735_689_599).1, "20241231T235959Z");
        assert_eq!(d(1_735_689_600).1, "20250101T000000Z");
        assert_eq!(d(YEAR_10000_UNIX_SECONDS - 1).1, "99991231T235959Z");
        assert_eq!(
            amz_dates(YEAR_10000_UNIX_SECONDS),
            Err(SigV4Error::TimeOutOfRange)
        );
        assert_eq!(amz_dates(u64::MAX), Err(SigV4Error::TimeOutOfRange));
    }

    #[test]
    fn civil_from_days_matches_a_day_by_day_walk() {
        // Walk every day from 1970 to 2400 and compare with a naive calendar.
        let (mut y, mut m, mut d) = (1970u64, 1u64, 1u64);
        for days in 0..(430 * 366) {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let month_len = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            d += 1;
            if d > month_len {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn uri_encoding() {
        assert_eq!(uri_encode("AZaz09-_.~", true), "AZaz09-_.~");
        assert_eq!(uri_encode("a b/c+d=é", true), "a%20b%2Fc%2Bd%3D%C3%A9");
        assert_eq!(uri_encode("/a b/c", false), "/a%20b/c");
    }

    #[test]
    fn expiry_bounds() {
        let mut i = aws_example();
        i.expires_secs = 0;
        assert!(matches!(presign(&i), Err(SigV4Error::Expiry(_))));
        i.expires_secs = 604_801;
        assert!(matches!(presign(&i), Err(SigV4Error::Expiry(_))));
        i.expires_secs = 1;
        assert!(presign(&i).unwrap().contains("&X-Amz-Expires=1&"));
        i.expires_secs = 604_800;
        assert!(presign(&i).unwrap().contains("&X-Amz-Expires=604800&"));
    }

    #[test]
    fn extra_headers_are_signed_sorted_and_canonical() {
        let mut i = aws_example();
        i.method = "PUT";
        i.extra_signed_headers = &[
            ("Content-Type", "  text/plain;   charset=utf-8 "),
            ("content-length", "5"),
        ];
        let p = presign_detailed(&i).unwrap();
        assert!(p
            .url
            .contains("&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&"));
        assert!(p.canonical_request.contains(
            "\ncontent-length:5\ncontent-type:text/plain; charset=utf-8\nhost:examplebucket.s3.amazonaws.com\n\ncontent-length;content-type;host\n"
        ));
        // Whitespace differences do not change the signature; values do.
        let mut j = i;
        j.extra_signed_headers = &[
            ("content-length", "5"),
            ("content-type", "text/plain; charset=utf-8"),
        ];
        assert_eq!(presign(&i).unwrap(), presign(&j).unwrap());
        j.extra_signed_headers = &[
            ("content-length", "6"),
            ("content-type", "text/plain; charset=utf-8"),
        ];
        assert_ne!(presign(&i).unwrap(), presign(&j).unwrap());

        for bad in [
            &[("host", "evil")][..],
            &[("x", "1"), ("X", "2")][..],
            &[("bad name", "1")][..],
            &[("", "1")][..],
            &[("x", "a\nb")][..],
        ] {
            i.extra_signed_headers = bad;
            assert!(
                matches!(presign(&i), Err(SigV4Error::InvalidHeader(_))),
                "{bad:?}"
            );
        }
    }

    const ACCOUNT: &str = "0123456789abcdef0123456789abcdef";
    const KEY: &str = "tasks/3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c/screenshot/3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c.07070707070707070707070707070707";

    fn r2() -> R2Config {
        R2Config::new(
            ACCOUNT,
            "mimo-artifacts",
            "AKIAIOSFODNN7EXAMPLE",
            AWS_S3_SECRET,
        )
        .unwrap()
    }

    #[test]
    fn r2_get() {
        let url = r2().presign_get(KEY, 1_700_000_000, 300).unwrap();
        let prefix = format!(
            "https://{ACCOUNT}.r2.cloudflarestorage.com/mimo-artifacts/{KEY}\
             ?X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20231114%2Fauto%2Fs3%2Faws4_request\
             &X-Amz-Date=20231114T221320Z\
             &X-Amz-Expires=300\
             &X-Amz-SignedHeaders=host\
             &X-Amz-Signature="
        );
        assert!(url.starts_with(&prefix), "{url}");
        // Independently computed (Python hashlib/hmac implementation of SigV4).
        assert_eq!(&url[prefix.len()..], R2_GET_SIGNATURE);
    }

    #[test]
    fn r2_put_binds_content_type_and_length() {
        let url = r2()
            .presign_put(KEY, "image/png", Some(12_345), 1_700_000_000, 900)
            .unwrap();
        let prefix = format!(
            "https://{ACCOUNT}.r2.cloudflarestorage.com/mimo-artifacts/{KEY}\
             ?X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20231114%2Fauto%2Fs3%2Faws4_request\
             &X-Amz-Date=20231114T221320Z\
             &X-Amz-Expires=900\
             &X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost\
             &X-Amz-Signature="
        );
        assert!(url.starts_with(&prefix), "{url}");
        assert_eq!(&url[prefix.len()..], R2_PUT_SIGNATURE);

        let without_length = r2()
            .presign_put(KEY, "image/png", None, 1_700_000_000, 900)
            .unwrap();
        assert!(without_length.contains("&X-Amz-SignedHeaders=content-type%3Bhost&"));
    }

    /// Computed with an independent Python implementation (hashlib + hmac) of SigV4 for the
    /// inputs of `r2_get` and `r2_put_binds_content_type_and_length`.
    const R2_GET_SIGNATURE: &str =
        "f639ec45796202f2c4317b928fd5146781cf234a8bb0b73f387f16f1448f0856";
    const R2_PUT_SIGNATURE: &str =
        "2afd7a8b77de68258da6e829f646934c52dcc72930d43c3f02de3005de738e71";

    #[test]
    fn r2_config_validation() {
        let ok = |a: &str, b: &str, k: &str, s: &str| R2Config::new(a, b, k, s).is_ok();
        assert!(ok(ACCOUNT, "abc", "K1", "s"));
        assert!(!ok("", "abc", "K1", "s"));
        assert!(!ok("acc.evil.com/", "abc", "K1", "s"));
        assert!(!ok(ACCOUNT, "ab", "K1", "s"));
        assert!(!ok(ACCOUNT, "Bucket", "K1", "s"));
        assert!(!ok(ACCOUNT, "-abc", "K1", "s"));
        assert!(!ok(ACCOUNT, "abc-", "K1", "s"));
        assert!(!ok(ACCOUNT, &"a".repeat(64), "K1", "s"));
        assert!(!ok(ACCOUNT, "abc", "K/1", "s"));
        assert!(!ok(ACCOUNT, "abc", "", "s"));
        assert!(!ok(ACCOUNT, "abc", "K1", ""));
        assert_eq!(r2().host(), format!("{ACCOUNT}.r2.cloudflarestorage.com"));
        let local = r2()
            .with_endpoint("http://127.0.0.1:8787/cdn-cgi/local/r2/s3/")
            .unwrap();
        assert_eq!(local.host(), "127.0.0.1:8787");
        let url = local.presign_get(KEY, 1_700_000_000, 300).unwrap();
        assert!(url.starts_with(&format!(
            "http://127.0.0.1:8787/cdn-cgi/local/r2/s3/mimo-artifacts/{KEY}?X-Amz-"
        )));
        // Signed for the endpoint's host and the whole path, prefix included.
        let signed = presign(&PresignInput {
            method: "GET",
            host: "127.0.0.1:8787",
            path: &format!("/cdn-cgi/local/r2/s3/mimo-artifacts/{KEY}"),
            region: R2_REGION,
            service: S3_SERVICE,
            access_key_id: "AKIAIOSFODNN7EXAMPLE",
            secret_access_key: AWS_S3_SECRET,
            unix_seconds: 1_700_000_000,
            expires_secs: 300,
            extra_signed_headers: &[],
        })
        .unwrap();
        assert_eq!(
            url.split_once('?').unwrap().1,
            signed.split_once('?').unwrap().1
        );
        for bad in ["ftp://x", "127.0.0.1:8787", "http://", "http://h/p?q"] {
            assert!(r2().with_endpoint(bad).is_err(), "{bad}");
        }
        assert_eq!(r2().bucket(), "mimo-artifacts");
        assert!(r2().presign_get("", 0, 1).is_err());
    }

    #[test]
    fn debug_redacts_secrets() {
        let dbg = format!("{:?}", r2());
        assert!(!dbg.contains(AWS_S3_SECRET), "{dbg}");
        assert!(dbg.contains("<redacted>"));
        let dbg = format!("{:?}", aws_example());
        assert!(!dbg.contains(AWS_S3_SECRET), "{dbg}");
    }
}
