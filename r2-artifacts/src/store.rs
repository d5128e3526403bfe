//! R2 reads and writes (feature `r2`), the only I/O in this crate: bodies are streamed
//! through, never held whole in memory.

use std::cell::RefCell;
use std::rc::Rc;

use crate::http::download_headers;
use futures_util::StreamExt;
use mimo_protocol::artifact::ArtifactId;
use sha2::{Digest, Sha256};
use worker::{
    Bucket, ByteStream, Conditional, Data, FixedLengthStream, Headers, HttpMetadata, Range,
    Response, ResponseBody,
};

/// What R2 holds after a successful upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    pub size: u64,
    /// Hex SHA-256 of the body, computed while it streamed through.
    pub sha256: String,
}

/// Streams `body` into R2 under `key`, unless an object is there already (`Ok(None)`: stored
/// evidence is never replaced, and R2 decides that atomically, so two uploads racing to one
/// key store one of them). `length` is the declared `Content-Length`: a body of any other length
/// fails the put, and R2 then keeps nothing (a put is all or nothing), so an interrupted upload
/// never leaves half an object.
pub async fn put_streaming(
    bucket: &Bucket,
    key: &str,
    content_type: &str,
    body: ByteStream,
    length: u64,
) -> worker::Result<Option<StoredObject>> {
    let hasher = Rc::new(RefCell::new(Sha256::new()));
    let hashing = Rc::clone(&hasher);
    let body = body.map(move |chunk| {
        if let Ok(bytes) = &chunk {
            hashing.borrow_mut().update(bytes);
        }
        chunk
    });
    let data = Data::Stream(FixedLengthStream::wrap(body, length));
    if !put_new(bucket, key, content_type, data).await? {
        return Ok(None);
    }
    let digest = hasher.borrow_mut().finalize_reset();
    Ok(Some(StoredObject {
        size: length,
        sha256: hex::encode(digest),
    }))
}

/// Writes `bytes` (held already: a file that came inside a request) into R2 under `key`, unless
/// an object is there already (`Ok(None)`), as [`put_streaming`] does.
pub async fn put_bytes(
    bucket: &Bucket,
    key: &str,
    content_type: &str,
    bytes: Vec<u8>,
) -> worker::Result<Option<StoredObject>> {
    let stored = StoredObject {
        size: bytes.len() as u64,
        sha256: hex::encode(Sha256::digest(&bytes)),
    };
    Ok(put_new(bucket, key, content_type, Data::Bytes(bytes))
        .await?
        .then_some(stored))
}

/// Puts `data` under `key` only if nothing is there: whether it was put.
async fn put_new(
    bucket: &Bucket,
    key: &str,
    content_type: &str,
    data: Data,
) -> worker::Result<bool> {
    let metadata = HttpMetadata {
        content_type: Some(content_type.to_owned()),
        ..HttpMetadata::default()
    };
    let put = bucket
        .put(key, data)
        .http_metadata(metadata)
        .only_if(Conditional {
            etag_does_not_match: Some("*".to_owned()),
            ..Conditional::default()
        })
        .execute()
        .await?;
    Ok(put.is_some())
}

/// A parsed `Range: bytes=…` header (a single range; multiple ranges are served whole).
fn parse_range(header: &str) -> Option<Range> {
    let spec = header.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (start, end) = spec.split_once('-')?;
    let (start, end) = (start.trim(), end.trim());
    match (start.parse::<u64>().ok(), end.parse::<u64>().ok()) {
        (Some(offset), Some(last)) if last >= offset => Some(Range::OffsetWithLength {
            offset,
            length: last - offset + 1,
        }),
        (Some(offset), None) if end.is_empty() => Some(Range::OffsetToEnd { offset }),
        (None, Some(suffix)) if start.is_empty() && suffix > 0 => Some(Range::Suffix { suffix }),
        _ => None,
    }
}

/// Serves the object under `key` (artifact `artifact_id`) as an HTTP response: the headers of
/// [`download_headers`] (type, disposition, sandbox, nosniff) on every answer, `Content-Length`,
/// `ETag`, `Accept-Ranges`; a `Range` request gets `206` with `Content-Range` (`416` when it cannot be
/// satisfied); a matching `If-None-Match` gets `304`. `None` when there is no such object.
pub async fn serve(
    bucket: &Bucket,
    key: &str,
    artifact_id: &ArtifactId,
    request_headers: &Headers,
) -> worker::Result<Option<Response>> {
    let Some(head) = bucket.head(key).await? else {
        return Ok(None);
    };
    let etag = head.http_etag();
    let size = head.size();
    let headers = Headers::new();
    for (name, value) in download_headers(artifact_id, head.http_metadata().content_type.as_deref())
    {
        headers.set(name, &value)?;
    }
    headers.set("etag", &etag)?;
    headers.set("accept-ranges", "bytes")?;
    if let Some(tags) = request_headers.get("if-none-match")? {
        if tags.split(',').any(|t| t.trim() == etag || t.trim() == "*") {
            return Ok(Some(
                Response::empty()?.with_status(304).with_headers(headers),
            ));
        }
    }
    let range = request_headers
        .get("range")?
        .as_deref()
        .and_then(parse_range);
    let (first, last) = match &range {
        None => (0, size.saturating_sub(1)),
        Some(Range::OffsetWithLength { offset, length }) => {
            (*offset, (offset + length - 1).min(size.saturating_sub(1)))
        }
        Some(Range::OffsetToEnd { offset }) => (*offset, size.saturating_sub(1)),
        Some(Range::Suffix { suffix }) => (size.saturating_sub(*suffix), size.saturating_sub(1)),
        Some(Range::Prefix { length }) => (0, (length - 1).min(size.saturating_sub(1))),
    };
    if range.is_some() && (first >= size || size == 0) {
        headers.set("content-range", &format!("bytes */{size}"))?;
        return Ok(Some(
            Response::empty()?.with_status(416).with_headers(headers),
        ));
    }
    let mut get = bucket.get(key).only_if(Conditional {
        etag_matches: Some(head.etag()),
        ..Conditional::default()
    });
    if range.is_some() {
        get = get.range(Range::OffsetWithLength {
            offset: first,
            length: last - first + 1,
        });
    }
    // Between the head and the get the object may have been replaced: the etag condition
    // makes that a miss rather than a mix of two versions' metadata and bytes.
    let Some(object) = get.execute().await? else {
        return Ok(None);
    };
    let Some(body) = object.body() else {
        return Ok(None);
    };
    headers.set("content-length", &(last + 1 - first).to_string())?;
    let status = if range.is_some() {
        headers.set("content-range", &format!("bytes {first}-{last}/{size}"))?;
        206
    } else {
        200
    };
    let body: ResponseBody = body.response_body()?;
    Ok(Some(
        Response::from_body(body)?
            .with_status(status)
            .with_headers(headers),
    ))
}

/// Deletes every object whose key starts with `prefix`; returns how many there were.
pub async fn delete_prefix(bucket: &Bucket, prefix: &str) -> worker::Result<usize> {
    let mut deleted = 0;
    loop {
        let page = bucket.list().prefix(prefix).limit(1000).execute().await?;
        let keys: Vec<String> = page.objects().iter().map(|o| o.key()).collect();
        if keys.is_empty() {
            return Ok(deleted);
        }
        deleted += keys.len();
        bucket.delete_multiple(keys).await?;
        if !page.truncated() {
            return Ok(deleted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_headers() {
        assert_eq!(
            parse_range("bytes=0-99"),
            Some(Range::OffsetWithLength {
                offset: 0,
                length: 100
            })
        );
        assert_eq!(
            parse_range("bytes=100-"),
            Some(Range::OffsetToEnd { offset: 100 })
        );
        assert_eq!(parse_range("bytes=-50"), Some(Range::Suffix { suffix: 50 }));
        for bad in [
            "bytes=9-3",
            "bytes=",
            "bytes=-0",
            "items=0-1",
            "bytes=0-1,5-6",
            "bytes=a-b",
        ] {
            assert_eq!(parse_range(bad), None, "{bad}");
        }
    }
}
