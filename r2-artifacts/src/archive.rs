//! Zip archives written as a stream (a task's evidence export): entry by entry, each stored
//! object's bytes passed on as they are read, so neither the archive nor an object is ever held
//! whole in memory. Only as much is produced as the reader takes: the stream is pulled.
//!
//! The `zip` crate writes the format. Its stream mode (`ZipWriter::new_stream`) needs no
//! seeking: every entry's CRC and sizes follow its data in a data descriptor, and the central
//! directory comes last. Entries are stored, not compressed: screenshots are JPEG or PNG
//! already, and the text beside them is small. Entries are not marked large (zip64 sizes):
//! objects are at most 20 MiB each, far below zip's 4 GiB an entry; an archive past 4 GiB in
//! all gets zip64 end records from the crate.
//!
//! After the entries comes `SHA256SUMS` (the `sha256sum -c` format) over every byte written,
//! and, when stored objects were gone by the time they were read (past their retention, say),
//! `MISSING.txt` naming them: an archive says what it lacks rather than failing.

use crate::error::Error;
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::rc::Rc;

use futures_util::stream::{self, Stream, StreamExt};
use mimo_protocol::time::UtcDateTime;
use sha2::{Digest, Sha256};
use zip::write::{SimpleFileOptions, StreamWriter};
use zip::{CompressionMethod, DateTime, ZipWriter};

/// The name of the checksum entry written after the others.
pub const SUMS: &str = "SHA256SUMS";
/// The name of the entry listing what could not be read.
pub const MISSING: &str = "MISSING.txt";

/// One entry of an archive: its bytes at hand, or an object to read when its turn comes.
pub struct Entry<K> {
    /// Its path in the archive (`/`-separated).
    pub name: String,
    pub body: Body<K>,
}

pub enum Body<K> {
    Bytes(Vec<u8>),
    /// An object, opened by the archive's `open` when it is written.
    Object(K),
}

/// Where the zip writer puts its bytes; the stream hands them on after each write.
#[derive(Clone, Default)]
struct Output(Rc<RefCell<Vec<u8>>>);

impl Output {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

type Chunks<S> = Pin<Box<S>>;

struct Writer<K, O, S> {
    /// Taken when the archive is complete (finishing it consumes the writer).
    zip: Option<ZipWriter<StreamWriter<Output>>>,
    output: Output,
    options: SimpleFileOptions,
    entries: std::vec::IntoIter<Entry<K>>,
    open: O,
    /// The object being copied: its name, its bytes still to come, their digest so far.
    current: Option<(String, Chunks<S>, Sha256)>,
    sums: String,
    missing: Vec<String>,
    /// The closing entries and the central directory were written, or the stream failed.
    ended: bool,
}

impl<K, O, S> Writer<K, O, S> {
    fn zip(&mut self) -> Result<&mut ZipWriter<StreamWriter<Output>>, zip::result::ZipError> {
        self.zip
            .as_mut()
            .ok_or(zip::result::ZipError::InvalidArchive(
                "the archive is complete".into(),
            ))
    }

    fn start(&mut self, name: &str) -> Result<(), zip::result::ZipError> {
        let options = self.options;
        self.zip()?.start_file(name, options)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), zip::result::ZipError> {
        Ok(self.zip()?.write_all(bytes)?)
    }

    fn summed(&mut self, name: &str, digest: Sha256) {
        self.sums
            .push_str(&format!("{}  {name}\n", hex::encode(digest.finalize())));
    }

    fn whole(&mut self, name: &str, bytes: &[u8]) -> Result<(), zip::result::ZipError> {
        self.start(name)?;
        self.write(bytes)?;
        self.summed(name, Sha256::new_with_prefix(bytes));
        Ok(())
    }

    /// `SHA256SUMS`, `MISSING.txt` when something was, and the central directory.
    fn close(&mut self) -> Result<(), zip::result::ZipError> {
        let sums = std::mem::take(&mut self.sums);
        self.start(SUMS)?;
        self.write(sums.as_bytes())?;
        if !self.missing.is_empty() {
            let mut text = String::from(
                "These files were not in storage when the archive was written \
                 (deleted after their retention period, or never uploaded):\n",
            );
            for name in &self.missing {
                text.push_str(&format!("{name}\n"));
            }
            self.start(MISSING)?;
            self.write(text.as_bytes())?;
        }
        match self.zip.take() {
            Some(zip) => zip.finish().map(drop),
            None => Ok(()),
        }
    }
}

/// The archive of `entries`, every entry dated `modified_ms` (ms since the Unix epoch), as a
/// stream of chunks. `open` opens an object when its turn comes: `Ok(None)` when it is not
/// there (it is then left out and named in `MISSING.txt`), else its bytes as a stream. A
/// failure ends the stream with an error, so a reader never takes a cut archive for whole.
pub fn zip_stream<K, O, F, S, E>(
    entries: Vec<Entry<K>>,
    modified_ms: u64,
    open: O,
) -> impl Stream<Item = Result<Vec<u8>, Error>>
where
    O: FnMut(K) -> F,
    F: Future<Output = Result<Option<S>, E>>,
    S: Stream<Item = Result<Vec<u8>, E>>,
    E: fmt::Display,
{
    let output = Output::default();
    let writer = Writer {
        zip: Some(ZipWriter::new_stream(output.clone())),
        output,
        options: SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .last_modified_time(zip_time(modified_ms))
            .unix_permissions(0o644),
        entries: entries.into_iter(),
        open,
        current: None,
        sums: String::new(),
        missing: Vec::new(),
        ended: false,
    };
    stream::unfold(writer, |mut w| async move {
        if w.ended {
            return None;
        }
        let step = next_chunk(&mut w).await;
        if step.is_err() {
            w.ended = true;
        }
        Some((step, w))
    })
}

/// Writes on until there are bytes to hand on (or the archive is complete: then the last ones).
async fn next_chunk<K, O, F, S, E>(w: &mut Writer<K, O, S>) -> Result<Vec<u8>, Error>
where
    O: FnMut(K) -> F,
    F: Future<Output = Result<Option<S>, E>>,
    S: Stream<Item = Result<Vec<u8>, E>>,
    E: fmt::Display,
{
    loop {
        if let Some((_, chunks, digest)) = w.current.as_mut() {
            match chunks.next().await {
                Some(Ok(chunk)) => {
                    digest.update(&chunk);
                    w.write(&chunk)?;
                }
                Some(Err(e)) => return Err(Error::Source(e.to_string())),
                None => {
                    let (name, _, digest) = w.current.take().expect("current");
                    w.summed(&name, digest);
                }
            }
        } else {
            match w.entries.next() {
                Some(Entry {
                    name,
                    body: Body::Bytes(bytes),
                }) => w.whole(&name, &bytes)?,
                Some(Entry {
                    name,
                    body: Body::Object(key),
                }) => match (w.open)(key)
                    .await
                    .map_err(|e| Error::Source(e.to_string()))?
                {
                    Some(chunks) => {
                        w.start(&name)?;
                        w.current = Some((name, Box::pin(chunks), Sha256::new()));
                    }
                    None => w.missing.push(name),
                },
                None => {
                    w.close()?;
                    w.ended = true;
                    return Ok(w.output.take());
                }
            }
        }
        let bytes = w.output.take();
        if !bytes.is_empty() {
            return Ok(bytes);
        }
    }
}

/// A zip entry's time (UTC; zip has no zones) for `ms` since the Unix epoch; zip cannot date
/// before 1980, and such a time becomes the format's earliest.
fn zip_time(ms: u64) -> DateTime {
    let t = UtcDateTime::from_unix_ms(ms);
    DateTime::from_date_and_time(
        u16::try_from(t.year).unwrap_or(0),
        t.month,
        t.day,
        t.hour,
        t.minute,
        t.second,
    )
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use std::io::{Cursor, Read};

    type Chunked = stream::Iter<std::vec::IntoIter<Result<Vec<u8>, String>>>;

    /// The whole archive of `entries`, whose objects are `objects` (name → chunks).
    fn archive(
        entries: Vec<Entry<&'static str>>,
        objects: &[(&'static str, Vec<&'static [u8]>)],
    ) -> Vec<Result<Vec<u8>, String>> {
        let objects = objects.to_vec();
        let open = move |key: &'static str| {
            let found = objects.iter().find(|(k, _)| *k == key).map(|(_, chunks)| {
                let chunks: Vec<Result<Vec<u8>, String>> =
                    chunks.iter().map(|c| Ok(c.to_vec())).collect();
                stream::iter(chunks)
            });
            std::future::ready(Ok::<Option<Chunked>, String>(found))
        };
        zip_stream(entries, 1_764_000_000_000, open)
            .map(|chunk| chunk.map_err(|e| e.to_string()))
            .collect::<Vec<_>>()
            .now_or_never()
            .expect("every source is ready")
    }

    fn read(archive: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut zip = zip::ZipArchive::new(Cursor::new(archive)).expect("a valid zip");
        (0..zip.len())
            .map(|i| {
                let mut file = zip.by_index(i).unwrap();
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).unwrap();
                (file.name().unwrap().into_owned(), bytes)
            })
            .collect()
    }

    fn bytes(name: &str, text: &str) -> Entry<&'static str> {
        Entry {
            name: name.into(),
            body: Body::Bytes(text.as_bytes().to_vec()),
        }
    }

    fn object(name: &str, key: &'static str) -> Entry<&'static str> {
        Entry {
            name: name.into(),
            body: Body::Object(key),
        }
    }

    #[test]
    fn entries_are_written_one_by_one_with_their_checksums_and_read_back_whole() {
        let chunks = archive(
            vec![
                bytes("audit.jsonl", "{\"step\":1}\n"),
                object("screenshots/a.jpg", "a"),
                object("screenshots/b.png", "b"),
            ],
            &[
                ("a", vec![b"\xff\xd8jpeg ", b"in three ", b"chunks"]),
                ("b", vec![b"\x89PNG"]),
            ],
        );
        let chunks: Vec<Vec<u8>> = chunks.into_iter().map(Result::unwrap).collect();
        // Streamed: an object's chunks come out as they go in, not gathered.
        assert!(chunks.len() >= 6, "{} chunks", chunks.len());
        assert!(chunks.iter().any(|c| c.as_slice() == b"in three "));
        let files = read(&chunks.concat());
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "audit.jsonl",
                "screenshots/a.jpg",
                "screenshots/b.png",
                SUMS
            ]
        );
        assert_eq!(files[1].1, b"\xff\xd8jpeg in three chunks");
        assert_eq!(files[2].1, b"\x89PNG");
        let sums = String::from_utf8(files[3].1.clone()).unwrap();
        let jpeg = hex::encode(Sha256::digest(b"\xff\xd8jpeg in three chunks"));
        assert!(
            sums.contains(&format!("{jpeg}  screenshots/a.jpg\n")),
            "{sums}"
        );
        assert_eq!(sums.lines().count(), 3);

        let mut zip = zip::ZipArchive::new(Cursor::new(chunks.concat())).unwrap();
        let entry = zip.by_index(1).unwrap();
        assert_eq!(entry.compression(), CompressionMethod::Stored);
        let modified = entry.last_modified().unwrap();
        // 1_764_000_000_000 ms is 2025-11-24 16:00:00 UTC.
        assert_eq!(
            (
                modified.year(),
                modified.month(),
                modified.day(),
                modified.hour()
            ),
            (2025, 11, 24, 16)
        );
    }

    #[test]
    fn an_object_that_is_gone_is_left_out_and_named() {
        let chunks = archive(
            vec![
                object("screenshots/gone.jpg", "gone"),
                object("screenshots/kept.jpg", "kept"),
            ],
            &[("kept", vec![b"kept"])],
        );
        let archive: Vec<u8> = chunks
            .into_iter()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
            .concat();
        let files = read(&archive);
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["screenshots/kept.jpg", SUMS, MISSING]);
        let missing = String::from_utf8(files[2].1.clone()).unwrap();
        assert!(missing.ends_with("\nscreenshots/gone.jpg\n"), "{missing}");
    }

    #[test]
    fn a_failed_read_ends_the_stream_with_the_error() {
        let open = |_: ()| {
            let chunks: Vec<Result<Vec<u8>, String>> =
                vec![Ok(b"part".to_vec()), Err("R2: connection reset".into())];
            std::future::ready(Ok::<_, String>(Some(stream::iter(chunks))))
        };
        let items: Vec<_> = zip_stream(
            vec![Entry {
                name: "screenshots/x.jpg".into(),
                body: Body::Object(()),
            }],
            0,
            open,
        )
        .collect::<Vec<_>>()
        .now_or_never()
        .unwrap();
        let last = items.last().unwrap().as_ref().unwrap_err();
        assert_eq!(
            last.to_string(),
            "reading an object for the archive: R2: connection reset"
        );
        assert!(items[..items.len() - 1].iter().all(Result::is_ok));
    }

    #[test]
    fn times_before_1980_take_the_formats_earliest() {
        assert_eq!(zip_time(0), DateTime::default());
        let t = zip_time(1_700_000_000_000);
        assert_eq!((t.year(), t.month(), t.day()), (2023, 11, 14));
    }
}
