//! Artifact kinds, the content types each accepts and each one's size limit.

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::limits::{
    ATTACHMENT_MAX_BYTES, DOM_INDEX_MAX_BYTES, HTML_MAX_BYTES, READABILITY_MAX_BYTES,
    SCREENSHOT_MAX_BYTES,
};

/// Longest `Content-Type` we sign or accept. Real ones are far shorter; the bound keeps
/// signed URLs and R2 metadata small.
pub const MAX_CONTENT_TYPE_LEN: usize = 200;

/// What an artifact holds. Serialized in snake_case (`"screenshot"`, `"html"`,
/// `"readability"`, `"dom_index"`), which is also the kind segment of the R2 key.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    TS,
    strum::IntoStaticStr,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ArtifactKind {
    /// A PNG, JPEG or WebP capture of the page.
    Screenshot,
    /// An HTML snapshot of the page.
    Html,
    /// Readability text extracted from the page (Markdown or plain text).
    Readability,
    /// A whole DOM index (JSON, gzip-compressed), stored when it is too large for one socket
    /// frame.
    DomIndex,
    /// A file the person attached to the task, for the agent to put into a file input.
    Attachment,
}

impl ArtifactKind {
    /// All kinds, in a fixed order.
    pub const ALL: [ArtifactKind; 5] = [
        ArtifactKind::Screenshot,
        ArtifactKind::Html,
        ArtifactKind::Readability,
        ArtifactKind::DomIndex,
        ArtifactKind::Attachment,
    ];

    /// The wire and key name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The media types (lowercase, without parameters) an upload of this kind may carry.
    pub fn allowed_media_types(self) -> &'static [&'static str] {
        match self {
            ArtifactKind::Screenshot => &["image/png", "image/jpeg", "image/webp"],
            ArtifactKind::Html => &["text/html"],
            ArtifactKind::Readability => &["text/markdown", "text/plain"],
            // Uploaded gzip-compressed: the index's JSON repeats its keys for every element and
            // shrinks to about a tenth, which is most of its upload's time on a big page.
            ArtifactKind::DomIndex => &["application/json", "application/gzip"],
            // Documents and images people send with forms; nothing a browser would run.
            ArtifactKind::Attachment => &[
                "application/pdf",
                "image/png",
                "image/jpeg",
                "image/webp",
                "text/plain",
                "text/csv",
                "application/json",
                "application/zip",
                "application/msword",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                "application/vnd.ms-excel",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                "application/vnd.oasis.opendocument.text",
                "application/vnd.oasis.opendocument.spreadsheet",
            ],
        }
    }

    /// The largest upload of this kind, in bytes. For readability this is the
    /// `READABILITY_TOO_LARGE` threshold itself.
    pub fn max_bytes(self) -> u64 {
        match self {
            ArtifactKind::Screenshot => SCREENSHOT_MAX_BYTES,
            ArtifactKind::Html => HTML_MAX_BYTES,
            ArtifactKind::Readability => READABILITY_MAX_BYTES,
            ArtifactKind::DomIndex => DOM_INDEX_MAX_BYTES,
            ArtifactKind::Attachment => ATTACHMENT_MAX_BYTES,
        }
    }

    /// Whether a `Content-Type` value is acceptable for this kind: its media type (before any
    /// `;` parameters, trimmed, compared case-insensitively) is one of
    /// [`allowed_media_types`](Self::allowed_media_types). Values that could not be a header
    /// (control characters, non-ASCII, over [`MAX_CONTENT_TYPE_LEN`]) are refused whatever
    /// their media type, since the value is signed into URLs and stored as R2 metadata.
    pub fn allows_content_type(self, content_type: &str) -> bool {
        match media_type(content_type) {
            Some(mt) => self
                .allowed_media_types()
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(mt)),
            None => false,
        }
    }
}

/// Longest name of an attached file, in characters.
pub const MAX_FILE_NAME_CHARS: usize = 200;

/// Whether `name` can be an attached file's name: not empty, at most
/// [`MAX_FILE_NAME_CHARS`], no path (`/`, `\\`), no control characters, not `.` or `..`.
pub fn valid_file_name(name: &str) -> bool {
    let trimmed = name.trim();
    !trimmed.is_empty()
        && trimmed == name
        && name.chars().count() <= MAX_FILE_NAME_CHARS
        && name != "."
        && name != ".."
        && !name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control())
}

/// An unknown artifact kind name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown artifact kind")]
pub struct UnknownKind;

impl FromStr for ArtifactKind {
    type Err = UnknownKind;

    /// Exact, lowercase names only: the name is part of signed keys, so there is one spelling.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ArtifactKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or(UnknownKind)
    }
}

/// The media type of a `Content-Type` value: the part before the first `;`, trimmed of spaces
/// and tabs, or `None` if the value is not a plausible header value (empty media type, control
/// or non-ASCII characters, longer than [`MAX_CONTENT_TYPE_LEN`]).
pub fn media_type(content_type: &str) -> Option<&str> {
    if content_type.len() > MAX_CONTENT_TYPE_LEN || !is_header_safe(content_type) {
        return None;
    }
    let mt = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim_matches([' ', '\t']);
    (!mt.is_empty()).then_some(mt)
}

/// Whether two `Content-Type` values name the same media type (parameters ignored, case
/// ignored). Both must be plausible header values.
pub fn same_media_type(a: &str, b: &str) -> bool {
    match (media_type(a), media_type(b)) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => false,
    }
}

/// Visible ASCII, space and tab only: what an HTTP field value may hold without obs-text.
/// Excludes `\r` and `\n`, so a content type can never smuggle a header or a signed-string
/// line.
fn is_header_safe(s: &str) -> bool {
    s.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_is_snake_case() {
        assert_eq!(
            serde_json::to_string(&ArtifactKind::Screenshot).unwrap(),
            "\"screenshot\""
        );
        assert_eq!(
            serde_json::from_str::<ArtifactKind>("\"readability\"").unwrap(),
            ArtifactKind::Readability
        );
        assert!(serde_json::from_str::<ArtifactKind>("\"Screenshot\"").is_err());
        for k in ArtifactKind::ALL {
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.as_str())
            );
            assert_eq!(k.as_str().parse::<ArtifactKind>(), Ok(k));
        }
        assert_eq!("HTML".parse::<ArtifactKind>(), Err(UnknownKind));
        assert_eq!("".parse::<ArtifactKind>(), Err(UnknownKind));
    }

    #[test]
    fn content_types_per_kind() {
        use ArtifactKind::*;
        for ct in ["image/png", "image/jpeg", "image/webp"] {
            assert!(Screenshot.allows_content_type(ct), "{ct}");
            assert!(!Html.allows_content_type(ct), "{ct}");
            assert!(!Readability.allows_content_type(ct), "{ct}");
        }
        assert!(Html.allows_content_type("text/html"));
        assert!(!Screenshot.allows_content_type("text/html"));
        assert!(!Readability.allows_content_type("text/html"));
        assert!(Readability.allows_content_type("text/markdown"));
        assert!(Readability.allows_content_type("text/plain"));
        assert!(!Html.allows_content_type("text/plain"));
        assert!(DomIndex.allows_content_type("application/json; charset=utf-8"));
        assert!(!DomIndex.allows_content_type("text/plain"));
        assert!(!Html.allows_content_type("application/json"));
        for ct in [
            "image/gif",
            "image/svg+xml",
            "application/octet-stream",
            "image/jpg",
        ] {
            for k in ArtifactKind::ALL {
                assert!(!k.allows_content_type(ct), "{k} {ct}");
            }
        }
    }

    #[test]
    fn content_type_parameters_and_case() {
        use ArtifactKind::*;
        assert!(Html.allows_content_type("text/html; charset=utf-8"));
        assert!(Html.allows_content_type("TEXT/HTML;charset=UTF-8"));
        assert!(Html.allows_content_type("  Text/Html  ; charset=\"utf-8\""));
        assert!(Readability.allows_content_type("text/markdown; charset=utf-8; variant=GFM"));
        assert!(Screenshot.allows_content_type("Image/PNG"));
        assert!(Screenshot.allows_content_type("image/png\t"));
    }

    #[test]
    fn implausible_content_types_refused() {
        use ArtifactKind::*;
        assert!(!Html.allows_content_type(""));
        assert!(!Html.allows_content_type("   "));
        assert!(!Html.allows_content_type("; charset=utf-8"));
        assert!(!Html.allows_content_type("text/html\r\nx-evil: 1"));
        assert!(!Html.allows_content_type("text/html; charset=\u{0}"));
        assert!(!Html.allows_content_type("text/html; name=é"));
        assert!(!Html.allows_content_type("text/htmlx"));
        assert!(!Html.allows_content_type("text/ html"));
        let long = format!("text/html; x={}", "a".repeat(MAX_CONTENT_TYPE_LEN));
        assert!(!Html.allows_content_type(&long));
    }

    #[test]
    fn same_media_type_ignores_parameters_and_case() {
        assert!(same_media_type("image/png", "IMAGE/PNG; q=1"));
        assert!(!same_media_type("image/png", "image/jpeg"));
        assert!(!same_media_type("image/png", ""));
        assert!(!same_media_type("image/png\n", "image/png"));
    }

    #[test]
    fn limits_per_kind() {
        assert_eq!(ArtifactKind::Screenshot.max_bytes(), 20 * 1024 * 1024);
        assert_eq!(ArtifactKind::Html.max_bytes(), 20 * 1024 * 1024);
        assert_eq!(
            ArtifactKind::Readability.max_bytes(),
            crate::artifact::READABILITY_MAX_BYTES
        );
        assert_eq!(ArtifactKind::DomIndex.max_bytes(), 20 * 1024 * 1024);
        assert_eq!(ArtifactKind::Attachment.max_bytes(), 10 * 1024 * 1024);
    }

    #[test]
    fn attachments_take_documents_and_images_with_plain_names() {
        use ArtifactKind::*;
        for ct in ["application/pdf", "image/png", "text/csv; charset=utf-8"] {
            assert!(Attachment.allows_content_type(ct), "{ct}");
        }
        for ct in ["text/html", "application/javascript", "image/svg+xml"] {
            assert!(!Attachment.allows_content_type(ct), "{ct}");
        }
        for name in ["contract.pdf", "Signed contract (final).pdf", "été.png"] {
            assert!(valid_file_name(name), "{name}");
        }
        for name in [
            "",
            " a.pdf",
            "../a.pdf",
            "a/b.pdf",
            "a\\b",
            "..",
            "a\nb",
            &"x".repeat(201),
        ] {
            assert!(!valid_file_name(name), "{name:?}");
        }
    }
}
