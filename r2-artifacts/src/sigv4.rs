//! R2's own presigned URLs: S3 Signature Version 4 query presigning (AWS, "Authenticating
//! Requests: Using Query Parameters"). Written out here rather than taken from `rusty-s3`,
//! whose signing time is a `jiff` timestamp: jiff's formatting and error texts were 70 KB of the
//! worker's code for the one date SigV4 writes. rusty-s3 stays as a test dependency,
//! and a property test checks that both sign every URL alike.
//!
//! - path-style URL `https://<account_id>.r2.cloudflarestorage.com/<bucket>/<key>`, or
//!   `<endpoint>/<bucket>/<key>` on another S3 endpoint ([`R2Config::with_endpoint`]);
//! - region `auto`, service `s3`, payload hash `UNSIGNED-PAYLOAD`;
//! - `GET` signs only `host`, and the `response-content-type` and
//!   `response-content-disposition` R2 answers with (an artifact is a download, not a page);
//!   `PUT` also signs `content-type`, when given `content-length`, and `if-none-match: *`, so
//!   R2 itself refuses (403 `SignatureDoesNotMatch`) an upload with another content type or size
//!   than the one granted, or without the condition, and stores it only where nothing is yet
//!   (412 `PreconditionFailed`): a URL uploads once and can never overwrite evidence;
//! - the signing time is passed in as Unix seconds (no clock on wasm32), up to the end of year
//!   9999 (`X-Amz-Date` has four digits for the year), and the lifetime must be 1 s – 7 days
//!   ([`mimo_protocol::artifact::check_expiry_secs`]);
//! - object keys with `.` or `..` segments are refused (a URL would resolve them away), as are
//!   `Content-Type` values that cannot be sent as a header.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use url::Url;

use mimo_protocol::artifact::check_expiry_secs;

use crate::error::Error;
use mimo_protocol::time::UtcDateTime;

/// R2's SigV4 region.
const R2_REGION: &str = "auto";

/// The last second `X-Amz-Date` can write: 9999-12-31T23:59:59Z.
const LAST_SIGNABLE_SECOND: u64 = 253_402_300_799;

/// R2's S3 API credentials and bucket, from configuration (e.g. Worker secrets
/// `R2_ACCOUNT_ID`, `R2_ACCESS_KEY_ID`, `R2_SECRET_ACCESS_KEY` and the bucket name). When they
/// are configured the Worker can hand out R2's own presigned URLs instead of ours. `Debug`
/// leaves the secret out.
#[derive(Clone, PartialEq, Eq)]
pub struct R2Config {
    /// `scheme://host[:port]`, as a URL writes it.
    origin: String,
    /// The `host` header a client sends to `origin` (the port only when not the default).
    host: String,
    /// The path up to the bucket's objects: `[/prefix]/<bucket>` (path-style URLs).
    base: String,
    bucket: String,
    /// `auto` for R2; another only to reproduce AWS's published examples in the tests.
    region: &'static str,
    access_key_id: String,
    secret_access_key: String,
}

impl fmt::Debug for R2Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("R2Config")
            .field("origin", &self.origin)
            .field("base", &self.base)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

impl R2Config {
    /// Validates and builds a configuration. The account id must be lowercase ASCII letters and
    /// digits (it ends up in a host name, which a URL writes in lowercase) and the access key id
    /// ASCII alphanumeric (it ends up in the credential scope); the bucket must
    /// follow R2's naming rules (3–63 lowercase letters, digits and `-`, not starting or ending
    /// with `-`); the secret must not be empty.
    pub fn new(
        account_id: &str,
        bucket: &str,
        access_key_id: &str,
        secret_access_key: &str,
    ) -> Result<Self, Error> {
        let alnum = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric());
        if !alnum(account_id) || account_id.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(Error::InvalidConfig(
                "account id must be lowercase ASCII letters and digits",
            ));
        }
        if !alnum(access_key_id) {
            return Err(Error::InvalidConfig(
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
            return Err(Error::InvalidConfig(
                "bucket must be 3-63 of a-z, 0-9 and '-'",
            ));
        }
        if secret_access_key.is_empty() {
            return Err(Error::InvalidConfig("secret access key is empty"));
        }
        let host = format!("{account_id}.r2.cloudflarestorage.com");
        Ok(R2Config {
            origin: format!("https://{host}"),
            host,
            base: format!("/{bucket}"),
            bucket: bucket.to_owned(),
            region: R2_REGION,
            access_key_id: access_key_id.to_owned(),
            secret_access_key: secret_access_key.to_owned(),
        })
    }

    /// Uses another S3-compatible endpoint, `http(s)://host[:port][/prefix]`; requests go to
    /// (and are signed for) `<prefix>/<bucket>/<key>` on that host. Miniflare serves a local
    /// S3 API for its R2 emulation at `http://<host>/cdn-cgi/local/r2/s3`. The host must be
    /// written as a URL writes it (lowercase, no default port) and the prefix must be made of
    /// `A–Z a–z 0–9 - _ . ~ /` without `.` or `..` segments, so that the URL handed out is
    /// the one given, unchanged.
    pub fn with_endpoint(mut self, endpoint: &str) -> Result<Self, Error> {
        const NOT_CANONICAL: Error =
            Error::InvalidConfig("endpoint must be written as a URL writes it");
        let (scheme, rest) = endpoint
            .split_once("://")
            .filter(|(scheme, _)| matches!(*scheme, "http" | "https"))
            .ok_or(Error::InvalidConfig(
                "endpoint must start with http:// or https://",
            ))?;
        let (host, prefix) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
        let host_ok = !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
        let prefix_ok = prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.~/".contains(&b));
        if !host_ok || !prefix_ok {
            return Err(Error::InvalidConfig(
                "endpoint must be scheme://host[:port][/path]",
            ));
        }
        let prefix = prefix.trim_end_matches('/');
        let endpoint = format!("{scheme}://{host}/{prefix}");
        let url = Url::parse(&endpoint).map_err(|_| NOT_CANONICAL)?;
        if url.as_str().trim_end_matches('/') != endpoint.trim_end_matches('/') {
            return Err(NOT_CANONICAL);
        }
        self.origin = format!("{scheme}://{host}");
        self.host = host.to_owned();
        self.base = if prefix.is_empty() {
            format!("/{}", self.bucket)
        } else {
            format!("/{prefix}/{}", self.bucket)
        };
        Ok(self)
    }

    /// A presigned `GET` of `key` (signs `host`) that R2 answers with `content_type` and
    /// `disposition` (see [`crate::download_headers`]) whatever the object's metadata says.
    pub fn presign_get(
        &self,
        key: &str,
        content_type: &str,
        disposition: &str,
        unix_seconds: u64,
        expires_secs: u64,
    ) -> Result<String, Error> {
        let query = [
            ("response-content-type", content_type),
            ("response-content-disposition", disposition),
        ];
        self.presign("GET", key, &query, &[], unix_seconds, expires_secs)
    }

    /// A presigned `PUT` of `key`. Signs `content-type` (the upload must send exactly this
    /// `Content-Type`, whitespace aside), when `content_length` is given `content-length` (the
    /// body must be exactly that long — without it R2 cannot bound the size at all), and
    /// `if-none-match: *` (the upload must send it: R2 stores it only if the key is free).
    pub fn presign_put(
        &self,
        key: &str,
        content_type: &str,
        content_length: Option<u64>,
        unix_seconds: u64,
        expires_secs: u64,
    ) -> Result<String, Error> {
        if content_type
            .bytes()
            .any(|b| b != b'\t' && !(0x20..0x7f).contains(&b))
        {
            return Err(Error::InvalidHeader(
                "content type has control or non-ASCII bytes",
            ));
        }
        let length = content_length.map(|length| length.to_string());
        let mut headers = vec![("content-type", content_type), ("if-none-match", "*")];
        if let Some(length) = &length {
            headers.push(("content-length", length));
        }
        self.presign("PUT", key, &[], &headers, unix_seconds, expires_secs)
    }

    /// The URL of `method` on `key` with `query`, signing `host` and `headers` (lowercase
    /// names) at `unix_seconds` for `expires_secs`.
    fn presign(
        &self,
        method: &str,
        key: &str,
        query: &[(&str, &str)],
        headers: &[(&str, &str)],
        unix_seconds: u64,
        expires_secs: u64,
    ) -> Result<String, Error> {
        let expires = check_expiry_secs(expires_secs)?;
        if unix_seconds > LAST_SIGNABLE_SECOND {
            return Err(Error::TimeOutOfRange);
        }
        let path = format!("{}/{}", self.base, uri_encode(checked_key(key)?, false));
        let region = self.region;
        let amz_date = UtcDateTime::from_unix_ms(unix_seconds * 1000).iso8601_basic();
        let scope = format!("{}/{region}/s3/aws4_request", &amz_date[..8]);

        let mut headers: Vec<(&str, String)> = headers
            .iter()
            .map(|(name, value)| (*name, collapse_spaces(value)))
            .chain([("host", self.host.clone())])
            .collect();
        headers.sort();
        let signed_headers = headers
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(";");
        let canonical_headers: String = headers
            .iter()
            .map(|(name, value)| format!("{name}:{value}\n"))
            .collect();

        let credential = format!("{}/{scope}", self.access_key_id);
        let expires = expires.to_string();
        let mut params: Vec<(String, String)> = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Credential", &credential),
            ("X-Amz-Date", &amz_date),
            ("X-Amz-Expires", &expires),
            ("X-Amz-SignedHeaders", &signed_headers),
        ]
        .iter()
        .chain(query)
        .map(|(name, value)| (uri_encode(name, true), uri_encode(value, true)))
        .collect();
        params.sort();
        let canonical_query = params
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("&");

        let canonical_request = format!(
            "{method}\n{path}\n{canonical_query}\n{canonical_headers}\n{signed_headers}\nUNSIGNED-PAYLOAD"
        );
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
            hex::encode(Sha256::digest(canonical_request.as_bytes()))
        );
        let mut key = format!("AWS4{}", self.secret_access_key).into_bytes();
        for part in [&amz_date[..8], region, "s3", "aws4_request"] {
            key = hmac(&key, part.as_bytes());
        }
        let signature = hex::encode(hmac(&key, string_to_sign.as_bytes()));
        Ok(format!(
            "{}{path}?{canonical_query}&X-Amz-Signature={signature}",
            self.origin
        ))
    }
}

fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

/// SigV4's URI encoding: every byte but `A–Z a–z 0–9 - _ . ~` as `%XY`, and `/` too unless
/// `slash` is false (an object key's path keeps its `/`).
fn uri_encode(s: &str, slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || (b == b'/' && !slash) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A header value as SigV4 signs it: trimmed, each run of spaces and tabs one space.
fn collapse_spaces(value: &str) -> String {
    value
        .split([' ', '\t'])
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `key`, unless a URL would change it: empty (the bucket's URL), or with a `.` or `..` segment
/// (resolved away).
fn checked_key(key: &str) -> Result<&str, Error> {
    if key.is_empty() {
        return Err(Error::InvalidKey("empty"));
    }
    if key.split('/').any(|segment| matches!(segment, "." | "..")) {
        return Err(Error::InvalidKey("has a '.' or '..' segment"));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's S3 presigned-URL example ("Authenticating Requests: Using Query Parameters").
    const AWS_ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
    const AWS_S3_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    /// 2013-05-24T00:00:00Z.
    const AWS_S3_TIME: u64 = 1_369_353_600;

    #[test]
    fn aws_s3_presigned_url_example() {
        // The example's bucket is addressed virtual-host style in us-east-1; the signature
        // covers its canonical request
        //   GET\n/test.txt\nX-Amz-Algorithm=…&X-Amz-SignedHeaders=host\n
        //   host:examplebucket.s3.amazonaws.com\n\nhost\nUNSIGNED-PAYLOAD
        // and the string to sign
        //   AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n
        //   3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04
        let example = R2Config {
            origin: "https://examplebucket.s3.amazonaws.com".into(),
            host: "examplebucket.s3.amazonaws.com".into(),
            base: String::new(),
            bucket: "examplebucket".into(),
            region: "us-east-1",
            access_key_id: AWS_ACCESS_KEY.into(),
            secret_access_key: AWS_S3_SECRET.into(),
        };
        assert_eq!(
            example
                .presign("GET", "test.txt", &[], &[], AWS_S3_TIME, 86_400)
                .unwrap(),
            "https://examplebucket.s3.amazonaws.com/test.txt\
             ?X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request\
             &X-Amz-Date=20130524T000000Z\
             &X-Amz-Expires=86400\
             &X-Amz-SignedHeaders=host\
             &X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
        );
    }

    const ACCOUNT: &str = "0123456789abcdef0123456789abcdef";
    const KEY: &str = "tasks/3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c/screenshot/3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c.07070707070707070707070707070707";

    /// A download of a PNG, shown inline.
    fn get(
        config: &R2Config,
        key: &str,
        unix_seconds: u64,
        expires_secs: u64,
    ) -> Result<String, Error> {
        config.presign_get(key, "image/png", "inline", unix_seconds, expires_secs)
    }

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
        let url = get(&r2(), KEY, 1_700_000_000, 300).unwrap();
        let prefix = format!(
            "https://{ACCOUNT}.r2.cloudflarestorage.com/mimo-artifacts/{KEY}\
             ?X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20231114%2Fauto%2Fs3%2Faws4_request\
             &X-Amz-Date=20231114T221320Z\
             &X-Amz-Expires=300\
             &X-Amz-SignedHeaders=host\
             &response-content-disposition=inline\
             &response-content-type=image%2Fpng\
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
             &X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost%3Bif-none-match\
             &X-Amz-Signature="
        );
        assert!(url.starts_with(&prefix), "{url}");
        assert_eq!(&url[prefix.len()..], R2_PUT_SIGNATURE);

        let without_length = r2()
            .presign_put(KEY, "image/png", None, 1_700_000_000, 900)
            .unwrap();
        assert!(
            without_length.contains("&X-Amz-SignedHeaders=content-type%3Bhost%3Bif-none-match&")
        );
    }

    /// Computed with an independent Python implementation (hashlib + hmac) of SigV4 for the
    /// inputs of `r2_get` and `r2_put_binds_content_type_and_length`.
    const R2_GET_SIGNATURE: &str =
        "6e6a5c3909e20c2b978d4b5654ebdbc8f4fa225100030f1253bcb5d890de0105";
    const R2_PUT_SIGNATURE: &str =
        "3b7d5b90a4bd343e88fc3ecdea73d75b077adec49a2a02ec219efbef184d83c4";

    #[test]
    fn content_type_whitespace_is_not_signed_its_value_is() {
        let put = |ct| r2().presign_put(KEY, ct, Some(5), 1_700_000_000, 900);
        let canonical = put("text/plain; charset=utf-8").unwrap();
        assert_eq!(put("  text/plain;   charset=utf-8 ").unwrap(), canonical);
        assert_eq!(put("text/plain;\tcharset=utf-8").unwrap(), canonical);
        assert_ne!(put("text/plain; charset=utf-16").unwrap(), canonical);
        for bad in ["text/plain\n", "text/plain; x=é", "a\rb"] {
            assert!(matches!(put(bad), Err(Error::InvalidHeader(_))), "{bad:?}");
        }
    }

    #[test]
    fn times_and_expiries() {
        let get = |time, expires| get(&r2(), KEY, time, expires);
        let date = |time| {
            let url = get(time, 1).unwrap();
            url.split("&X-Amz-Date=").nth(1).unwrap()[..16].to_owned()
        };
        assert_eq!(date(0), "19700101T000000Z");
        assert_eq!(date(951_868_799), "20000229T235959Z");
        assert_eq!(date(4_107_542_400), "21000301T000000Z"); // 2100 is not a leap year
        assert_eq!(date(1_735_689_599), "20241231T235959Z");
        // The last second a four-digit year writes; later ones cannot be signed.
        assert_eq!(date(253_402_300_799), "99991231T235959Z");
        assert_eq!(get(253_402_300_800, 1), Err(Error::TimeOutOfRange));
        assert_eq!(get(u64::MAX, 1), Err(Error::TimeOutOfRange));

        assert!(matches!(get(0, 0), Err(Error::Expiry(_))));
        assert!(matches!(get(0, 604_801), Err(Error::Expiry(_))));
        assert!(get(0, 604_800).unwrap().contains("&X-Amz-Expires=604800&"));
    }

    #[test]
    fn keys_are_uri_encoded_and_refused_when_a_url_would_change_them() {
        let url = get(&r2(), "a b/c+d=é~_.-", 0, 1).unwrap();
        assert!(
            url.contains("/mimo-artifacts/a%20b/c%2Bd%3D%C3%A9~_.-?"),
            "{url}"
        );
        for bad in ["", ".", "..", "a/./b", "a/../b", "a/.."] {
            assert!(
                matches!(get(&r2(), bad, 0, 1), Err(Error::InvalidKey(_))),
                "{bad}"
            );
        }
        assert!(get(&r2(), "a/.b/..c", 0, 1).is_ok());
    }

    #[test]
    fn r2_config_validation() {
        let ok = |a: &str, b: &str, k: &str, s: &str| R2Config::new(a, b, k, s).is_ok();
        assert!(ok(ACCOUNT, "abc", "K1", "s"));
        assert!(!ok("", "abc", "K1", "s"));
        assert!(!ok("acc.evil.com/", "abc", "K1", "s"));
        assert!(!ok("ABC", "abc", "K1", "s"));
        assert!(!ok(ACCOUNT, "ab", "K1", "s"));
        assert!(!ok(ACCOUNT, "Bucket", "K1", "s"));
        assert!(!ok(ACCOUNT, "-abc", "K1", "s"));
        assert!(!ok(ACCOUNT, "abc-", "K1", "s"));
        assert!(!ok(ACCOUNT, &"a".repeat(64), "K1", "s"));
        assert!(!ok(ACCOUNT, "abc", "K/1", "s"));
        assert!(!ok(ACCOUNT, "abc", "", "s"));
        assert!(!ok(ACCOUNT, "abc", "K1", ""));
        for bad in [
            "ftp://x",
            "127.0.0.1:8787",
            "http://",
            "http://h/p?q",
            "http://h/p#f",
            "http://u@h/",
            "http://H/",
            "http://h:80/",
            "https://h:443",
            "http://127.1/",
            "http://h/a/../b",
            "http://h/a%20b",
            "http://h/a:b",
        ] {
            assert!(r2().with_endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn other_endpoints_are_signed_for_their_host_and_whole_path() {
        // Computed with an independent Python SigV4 (hashlib + hmac; it reproduces AWS's
        // example): the plain-HTTP scheme is not signed, the prefix is.
        let local = r2()
            .with_endpoint("http://127.0.0.1:8787/cdn-cgi/local/r2/s3/")
            .unwrap();
        assert_eq!(
            get(&local, KEY, 1_700_000_000, 300).unwrap(),
            format!(
                "http://127.0.0.1:8787/cdn-cgi/local/r2/s3/mimo-artifacts/{KEY}\
                 ?X-Amz-Algorithm=AWS4-HMAC-SHA256\
                 &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20231114%2Fauto%2Fs3%2Faws4_request\
                 &X-Amz-Date=20231114T221320Z\
                 &X-Amz-Expires=300\
                 &X-Amz-SignedHeaders=host\
                 &response-content-disposition=inline\
                 &response-content-type=image%2Fpng\
                 &X-Amz-Signature={LOCAL_GET_SIGNATURE}"
            )
        );
        let https = r2().with_endpoint("https://s3.example:8443").unwrap();
        let url = get(&https, KEY, 1_700_000_000, 300).unwrap();
        assert!(
            url.starts_with(&format!("https://s3.example:8443/mimo-artifacts/{KEY}?")),
            "{url}"
        );
    }

    const LOCAL_GET_SIGNATURE: &str =
        "046af13c39db3d66e79df34b924be7a1fe98a7635dac36234b3be02334a4ebd8";

    #[test]
    fn debug_redacts_secrets() {
        let dbg = format!("{:?}", r2());
        assert!(!dbg.contains(AWS_S3_SECRET), "{dbg}");
        assert!(dbg.contains("AKIAIOSFODNN7EXAMPLE"), "{dbg}");
    }

    /// rusty-s3's presigning of what `config` presigns, at `endpoint` (path style, `auto`).
    mod reference {
        use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};
        use std::time::Duration;

        pub fn sign(
            endpoint: &str,
            bucket: &str,
            action: impl FnOnce(&Bucket, &Credentials) -> String,
        ) -> String {
            let bucket = Bucket::new(
                endpoint.parse().unwrap(),
                UrlStyle::Path,
                bucket.to_owned(),
                "auto",
            )
            .unwrap();
            action(
                &bucket,
                &Credentials::new(super::AWS_ACCESS_KEY, super::AWS_S3_SECRET),
            )
        }

        pub fn at<'a>(action: &impl S3Action<'a>, unix_seconds: u64, expires: u64) -> String {
            let time = jiff::Timestamp::from_second(unix_seconds as i64).unwrap();
            action
                .sign_with_time(Duration::from_secs(expires), &time)
                .into()
        }
    }

    use rusty_s3::S3Action;

    proptest::proptest! {
        #![proptest_config(mimo_proptest::cases(256))]

        /// Every URL is signed as rusty-s3 signs it: keys of any characters, any content type
        /// and disposition, with and without a length, at any time and lifetime, on R2 and on
        /// another endpoint.
        #[test]
        fn signs_as_rusty_s3_does(
            key in "[a-zA-Z0-9 /+=%&?#~_.\\-é漢😀]{1,40}",
            content_type in "[ -~\t]{0,40}",
            disposition in "[ -~]{0,40}",
            length in proptest::option::of(0u64..u64::MAX),
            unix_seconds in 0u64..253_402_207_200,
            expires in 1u64..=604_800,
            local in proptest::bool::ANY,
        ) {
            proptest::prop_assume!(!key.split('/').any(|s| s == "." || s == ".."));
            let (config, endpoint) = if local {
                (r2().with_endpoint("http://127.0.0.1:8787/cdn-cgi/local/r2/s3").unwrap(),
                 "http://127.0.0.1:8787/cdn-cgi/local/r2/s3")
            } else {
                (r2(), "https://0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com")
            };
            let get = config
                .presign_get(&key, &content_type, &disposition, unix_seconds, expires)
                .unwrap();
            let expected = reference::sign(endpoint, "mimo-artifacts", |bucket, credentials| {
                let mut action = bucket.get_object(Some(credentials), &key);
                let query = action.query_mut();
                query.insert("response-content-type", content_type.clone());
                query.insert("response-content-disposition", disposition.clone());
                reference::at(&action, unix_seconds, expires)
            });
            proptest::prop_assert_eq!(get, expected);

            let put = config
                .presign_put(&key, &content_type, length, unix_seconds, expires)
                .unwrap();
            let expected = reference::sign(endpoint, "mimo-artifacts", |bucket, credentials| {
                let mut action = bucket.put_object(Some(credentials), &key);
                let headers = action.headers_mut();
                headers.insert("content-type", content_type.clone());
                if let Some(length) = length {
                    headers.insert("content-length", length.to_string());
                }
                headers.insert("if-none-match", "*");
                reference::at(&action, unix_seconds, expires)
            });
            proptest::prop_assert_eq!(put, expected);
        }
    }
}
