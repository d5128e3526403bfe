//! Every size and time limit of the artifact store, in one place.
//!
//! The readability thresholds are the ones the design names (inline under 256 KiB of UTF-8,
//! artifact only from 256 KiB, `READABILITY_TOO_LARGE` over 2 MiB). Nothing else in the
//! workspace should repeat these numbers: import them from here.

use serde::{Deserialize, Serialize};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// Readability text strictly shorter than this (UTF-8 bytes) is inlined in the action result
/// (and also stored as an artifact).
pub const READABILITY_INLINE_LIMIT_BYTES: u64 = 256 * KIB;

/// Readability text longer than this (UTF-8 bytes) is refused with `READABILITY_TOO_LARGE`.
/// It is also the upload limit of the readability kind: one constant for both, so they cannot
/// drift apart.
pub const READABILITY_MAX_BYTES: u64 = 2 * MIB;

/// Largest screenshot upload.
pub const SCREENSHOT_MAX_BYTES: u64 = 20 * MIB;
/// The largest file a person attaches to a task (for `browser_upload_file`).
pub const ATTACHMENT_MAX_BYTES: u64 = 10 * MIB;

/// Largest HTML snapshot upload.
pub const HTML_MAX_BYTES: u64 = 20 * MIB;

/// Largest DOM index upload (the whole `browser_dom_index` result as JSON, stored when it does
/// not fit in one socket frame). A 10,000-element page makes about 2 MiB; the HTML limit bounds
/// the page an index is taken of, and its index is smaller than its HTML.
pub const DOM_INDEX_MAX_BYTES: u64 = 20 * MIB;

/// Shortest lifetime of a presigned URL (ours or R2's), in seconds. SigV4 refuses 0.
pub const PRESIGN_MIN_EXPIRY_SECS: u64 = 1;

/// Longest lifetime of a presigned URL (ours or R2's), in seconds: 7 days, the SigV4 maximum.
pub const PRESIGN_MAX_EXPIRY_SECS: u64 = 7 * 24 * 60 * 60;

/// Default lifetime of an upload URL: long enough for a slow upload of a large screenshot to
/// start, short enough that a leaked URL is soon useless.
pub const DEFAULT_UPLOAD_EXPIRY_SECS: u64 = 15 * 60;

/// Default lifetime of a download URL handed to the web app.
pub const DEFAULT_DOWNLOAD_EXPIRY_SECS: u64 = 5 * 60;

/// What to do with readability text of a given size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadabilityDisposition {
    /// Under [`READABILITY_INLINE_LIMIT_BYTES`]: the text goes in the action result and is also
    /// stored as an artifact.
    Inline,
    /// From [`READABILITY_INLINE_LIMIT_BYTES`] up to and including [`READABILITY_MAX_BYTES`]:
    /// only the artifact id is returned, with `truncated=true`.
    ArtifactOnly,
    /// Over [`READABILITY_MAX_BYTES`]: refused with `READABILITY_TOO_LARGE`.
    TooLarge,
}

impl ReadabilityDisposition {
    /// The `truncated` flag of the action result.
    pub fn truncated(self) -> bool {
        matches!(self, ReadabilityDisposition::ArtifactOnly)
    }

    /// Whether the text is stored as an artifact at all.
    pub fn stored(self) -> bool {
        !matches!(self, ReadabilityDisposition::TooLarge)
    }
}

/// Classifies readability text by its length in UTF-8 bytes (`str::len`, not chars).
///
/// `len < 256 KiB` → [`Inline`](ReadabilityDisposition::Inline);
/// `256 KiB <= len <= 2 MiB` → [`ArtifactOnly`](ReadabilityDisposition::ArtifactOnly);
/// `len > 2 MiB` → [`TooLarge`](ReadabilityDisposition::TooLarge).
pub fn readability_disposition(utf8_len: usize) -> ReadabilityDisposition {
    // usize → u64 never loses information on the targets we build (32- and 64-bit).
    let len = utf8_len as u64;
    if len < READABILITY_INLINE_LIMIT_BYTES {
        ReadabilityDisposition::Inline
    } else if len <= READABILITY_MAX_BYTES {
        ReadabilityDisposition::ArtifactOnly
    } else {
        ReadabilityDisposition::TooLarge
    }
}

/// A presigned-URL lifetime outside [`PRESIGN_MIN_EXPIRY_SECS`]..=[`PRESIGN_MAX_EXPIRY_SECS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("presigned URL lifetime {0} s is outside {PRESIGN_MIN_EXPIRY_SECS}..={PRESIGN_MAX_EXPIRY_SECS} s")]
pub struct ExpiryOutOfRange(pub u64);

/// Checks a presigned-URL lifetime against the 1 s – 7 days bounds.
pub fn check_expiry_secs(secs: u64) -> Result<u64, ExpiryOutOfRange> {
    if (PRESIGN_MIN_EXPIRY_SECS..=PRESIGN_MAX_EXPIRY_SECS).contains(&secs) {
        Ok(secs)
    } else {
        Err(ExpiryOutOfRange(secs))
    }
}

/// Clamps a presigned-URL lifetime into the 1 s – 7 days bounds (for callers that prefer a
/// usable URL over an error, e.g. a configured TTL).
pub fn clamp_expiry_secs(secs: u64) -> u64 {
    secs.clamp(PRESIGN_MIN_EXPIRY_SECS, PRESIGN_MAX_EXPIRY_SECS)
}

/// The absolute expiry (milliseconds since the Unix epoch) of a URL issued at `now_ms` that
/// lives `expiry_secs` seconds, after checking the bounds.
pub fn expires_at_ms(now_ms: u64, expiry_secs: u64) -> Result<u64, ExpiryOutOfRange> {
    let secs = check_expiry_secs(expiry_secs)?;
    Ok(now_ms.saturating_add(secs * 1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INLINE: usize = READABILITY_INLINE_LIMIT_BYTES as usize;
    const MAX: usize = READABILITY_MAX_BYTES as usize;

    #[test]
    fn thresholds_are_the_designed_numbers() {
        assert_eq!(READABILITY_INLINE_LIMIT_BYTES, 262_144);
        assert_eq!(READABILITY_MAX_BYTES, 2_097_152);
        assert_eq!(SCREENSHOT_MAX_BYTES, 20 * 1024 * 1024);
        assert_eq!(HTML_MAX_BYTES, 20 * 1024 * 1024);
    }

    #[test]
    fn readability_edges() {
        use ReadabilityDisposition::*;
        assert_eq!(readability_disposition(0), Inline);
        assert_eq!(readability_disposition(INLINE - 1), Inline);
        assert_eq!(readability_disposition(INLINE), ArtifactOnly);
        assert_eq!(readability_disposition(INLINE + 1), ArtifactOnly);
        assert_eq!(readability_disposition(MAX - 1), ArtifactOnly);
        assert_eq!(readability_disposition(MAX), ArtifactOnly);
        assert_eq!(readability_disposition(MAX + 1), TooLarge);
        assert_eq!(readability_disposition(usize::MAX), TooLarge);
    }

    #[test]
    fn readability_flags() {
        use ReadabilityDisposition::*;
        assert!(!Inline.truncated() && Inline.stored());
        assert!(ArtifactOnly.truncated() && ArtifactOnly.stored());
        assert!(!TooLarge.truncated() && !TooLarge.stored());
    }

    #[test]
    fn readability_counts_utf8_bytes_not_chars() {
        // 'é' is two UTF-8 bytes: half as many chars as the limit already reach it.
        let text = "é".repeat(INLINE / 2);
        assert_eq!(text.chars().count(), INLINE / 2);
        assert_eq!(
            readability_disposition(text.len()),
            ReadabilityDisposition::ArtifactOnly
        );
    }

    #[test]
    fn expiry_bounds() {
        assert_eq!(check_expiry_secs(0), Err(ExpiryOutOfRange(0)));
        assert_eq!(check_expiry_secs(1), Ok(1));
        assert_eq!(check_expiry_secs(604_800), Ok(604_800));
        assert_eq!(check_expiry_secs(604_801), Err(ExpiryOutOfRange(604_801)));
        assert_eq!(clamp_expiry_secs(0), 1);
        assert_eq!(clamp_expiry_secs(10), 10);
        assert_eq!(clamp_expiry_secs(u64::MAX), 604_800);
        assert_eq!(expires_at_ms(1_000, 60), Ok(61_000));
        assert!(expires_at_ms(1_000, 0).is_err());
        assert_eq!(expires_at_ms(u64::MAX - 5, 1), Ok(u64::MAX));
    }
}
