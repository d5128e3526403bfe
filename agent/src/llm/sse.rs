//! Incremental Server-Sent Events decoder following the WHATWG HTML "event stream" rules.

use std::borrow::Cow;
use std::mem;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type, `message`.
    pub event: Option<String>,
    /// All `data:` lines of the event joined with `\n`.
    pub data: String,
}

/// Turns body chunks, split anywhere, into [`SseEvent`]s.
///
/// Per the spec, an event still incomplete when the body ends is discarded, so there is no
/// `finish`: callers detect truncation from the absence of the protocol's terminator.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the current line. Decoding waits for the line end because CR and LF never occur
    /// inside a multi-byte UTF-8 sequence, so a complete line is always decodable on its own.
    line: Vec<u8>,
    /// The previous chunk ended in CR; an LF opening this one completes the same line break.
    after_cr: bool,
    seen_first_line: bool,
    event: String,
    data: String,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in bytes {
            if mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\r' | b'\n' => {
                    self.after_cr = byte == b'\r';
                    let line = mem::take(&mut self.line);
                    events.extend(self.process_line(&line));
                }
                _ => self.line.push(byte),
            }
        }
        events
    }

    fn process_line(&mut self, raw: &[u8]) -> Option<SseEvent> {
        let mut line = String::from_utf8_lossy(raw);
        if !mem::replace(&mut self.seen_first_line, true) {
            if let Some(rest) = line.strip_prefix('\u{feff}') {
                line = Cow::Owned(rest.to_owned());
            }
        }
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            // `id` and `retry` only serve reconnection, which model streams do not support.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = mem::take(&mut self.event);
        let mut data = mem::take(&mut self.data);
        // A data buffer that is empty (not merely an empty line of data) means no `data:` field.
        data.pop()?;
        Some(SseEvent {
            event: (!event.is_empty()).then_some(event),
            data,
        })
    }
}
