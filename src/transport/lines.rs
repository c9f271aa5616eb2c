//! Newline-delimited JSON: reading one bounded line at a time (the stdio framing, used by
//! the server's stdio transport and the client's stdio and child-process transports).

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// What [`read_line`] found.
pub(crate) enum Line {
    /// A line, in the buffer (without its newline).
    Data,
    /// A line longer than the limit; it was skipped and the buffer is empty.
    TooLong,
    /// The end of the input.
    Eof,
}

/// Reads one line into `buf` (without its newline), never holding more than `max` bytes.
pub(crate) async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Data
            });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if done.is_some() {
            return Ok(if too_long { Line::TooLong } else { Line::Data });
        }
    }
}
