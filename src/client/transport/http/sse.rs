//! A size-bounded SSE decoder over `russe`.

use bytes::{Buf as _, BytesMut};
use tokio_util::codec::Decoder as _;

/// What [`SseDecoder`] found.
pub(super) enum Decoded {
    /// An event.
    Event(russe::Event),
    /// An event over the size limit (skipped), with its id when it was read whole.
    Oversized { id: Option<String> },
    /// An event that could not be decoded (not UTF-8), skipped.
    Unreadable(String),
}

/// The SSE decoder of `russe`, bounded: an event whose data exceeds `max` bytes, or whose
/// frame grows past [`SseDecoder::frame_limit`] before it ends, is reported and skipped without
/// buffering it whole.
pub(super) struct SseDecoder {
    inner: russe::Decoder,
    max: usize,
    /// Inside an oversized frame: dropping bytes until its blank line.
    skipping: bool,
}

impl SseDecoder {
    pub(super) fn new(max: usize) -> Self {
        Self {
            inner: russe::Decoder::default(),
            max,
            skipping: false,
        }
    }

    /// The most bytes one frame may buffer: twice the data limit (field names and line breaks
    /// of many short `data` lines), plus room for `id`, `event` and `retry`.
    pub(super) fn frame_limit(&self) -> usize {
        self.max.saturating_mul(2).saturating_add(4096)
    }

    pub(super) fn decode(&mut self, buf: &mut BytesMut) -> Option<Decoded> {
        if self.skipping {
            match blank_line_end(buf) {
                Some(end) => {
                    buf.advance(end);
                    self.skipping = false;
                    self.inner = russe::Decoder::default();
                }
                None => {
                    // Keep the last byte: it may start the blank line.
                    buf.advance(buf.len().saturating_sub(1));
                    return None;
                }
            }
        }
        let before = buf.len();
        match self.inner.decode(buf) {
            Ok(Some(russe::Event::Message(message))) if message.data.len() > self.max => {
                Some(Decoded::Oversized {
                    id: message.id.map(|id| id.to_string()),
                })
            }
            Ok(Some(event)) => Some(Decoded::Event(event)),
            Ok(None) if buf.len() > self.frame_limit() => {
                self.skipping = true;
                Some(Decoded::Oversized { id: None })
            }
            Ok(None) => None,
            Err(err) => {
                if buf.len() == before {
                    // Nothing was consumed: drop the input rather than fail on it forever.
                    buf.clear();
                }
                Some(Decoded::Unreadable(err.to_string()))
            }
        }
    }
}

/// Where the first blank line (an event's end) in `buf` ends: `\n\n`, `\r\r`, `\r\n\r\n` or
/// a mix.
pub(super) fn blank_line_end(buf: &[u8]) -> Option<usize> {
    let at = buf
        .windows(2)
        .position(|pair| matches!(pair, [b'\n', b'\n'] | [b'\r', b'\r'] | [b'\n', b'\r']))?;
    let mut end = at + 2;
    if buf[at + 1] == b'\r' && buf.get(end) == Some(&b'\n') {
        end += 1;
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    pub(super) fn decode_all(decoder: &mut SseDecoder, buf: &mut BytesMut) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(decoded) = decoder.decode(buf) {
            out.push(match decoded {
                Decoded::Event(russe::Event::Message(m)) => format!("data:{}", m.data),
                Decoded::Event(russe::Event::Retry(r)) => format!("retry:{}", r.as_millis()),
                Decoded::Event(russe::Event::Comment(c)) => format!("comment:{c}"),
                Decoded::Oversized { id } => format!("oversized:{id:?}"),
                Decoded::Unreadable(_) => "unreadable".into(),
            });
        }
        out
    }

    #[test]
    pub(super) fn events_under_the_limit_pass_and_larger_ones_are_skipped() {
        let mut decoder = SseDecoder::new(8);
        let mut buf =
            BytesMut::from("retry: 200\n\nid: 1\ndata: \n\nid: 2\ndata: 123456789\n\ndata: ok\n\n");
        assert_eq!(
            decode_all(&mut decoder, &mut buf),
            ["retry:200", "data:", "oversized:Some(\"2\")", "data:ok"]
        );
    }

    #[test]
    pub(super) fn an_oversized_frame_is_skipped_chunk_by_chunk_without_buffering_it() {
        let mut decoder = SseDecoder::new(8);
        let limit = decoder.frame_limit();
        let mut buf = BytesMut::from(&b"data: "[..]);
        buf.extend(std::iter::repeat_n(b'x', limit));
        assert_eq!(decode_all(&mut decoder, &mut buf), ["oversized:None"]);
        assert!(buf.len() <= 1, "{} bytes kept", buf.len());
        // More of the same event, then its end split across chunks, then a good event.
        buf.extend_from_slice(&[b'x'; 100]);
        assert!(decode_all(&mut decoder, &mut buf).is_empty());
        buf.extend_from_slice(b"x\r\n");
        assert!(decode_all(&mut decoder, &mut buf).is_empty());
        buf.extend_from_slice(b"\r\ndata: ok\r\n\r\n");
        assert_eq!(decode_all(&mut decoder, &mut buf), ["data:ok"]);
    }

    #[test]
    pub(super) fn an_event_that_is_not_utf8_is_reported_and_the_stream_goes_on() {
        let mut decoder = SseDecoder::new(64);
        let mut buf = BytesMut::from(&b"data: \xff\xfe\n\ndata: ok\n\n"[..]);
        assert_eq!(
            decode_all(&mut decoder, &mut buf),
            ["unreadable", "data:ok"]
        );
    }

    #[test]
    pub(super) fn blank_lines_of_every_line_ending_end_an_event() {
        assert_eq!(blank_line_end(b"ab\n\ncd"), Some(4));
        assert_eq!(blank_line_end(b"ab\r\rcd"), Some(4));
        assert_eq!(blank_line_end(b"ab\r\n\r\ncd"), Some(6));
        assert_eq!(blank_line_end(b"ab\r\ncd"), None);
    }
}
