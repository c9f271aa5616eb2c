//! Entry points for the fuzz targets of `tests/fuzz` into code that is not public (feature
//! `fuzzing`). Not part of the API: don't rely on anything here.

use std::io;

use serde_json::Value;
use tokio::io::{AsyncRead, BufReader};

use crate::server::mrtr::seal::{Binding, Payload, StateKeys};
use crate::transport::lines::{Line, read_line};

/// Decodes `chunks`, arriving one after the other, with the client's bounded SSE decoder (data
/// limit `max`): one line per event, oversized or unreadable event, and the most bytes the
/// decoder's buffer ever held.
pub fn sse_decode(max: usize, chunks: &[&[u8]]) -> (Vec<String>, usize) {
    crate::client::transport::fuzz_sse_decode(max, chunks)
}

/// Reads `reader` to its end with the newline-delimited JSON framing of the stdio transports
/// (lines of at most `max` bytes): each line, or `None` for one over the limit.
///
/// # Errors
/// When `reader` fails.
pub async fn read_lines<R: AsyncRead + Unpin>(
    reader: R,
    max: usize,
) -> io::Result<Vec<Option<Vec<u8>>>> {
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    let mut lines = Vec::new();
    loop {
        match read_line(&mut reader, &mut buf, max).await? {
            Line::Eof => return Ok(lines),
            Line::TooLong => lines.push(None),
            Line::Data => lines.push(Some(buf.clone())),
        }
    }
}

/// The `requestState` sealer and opener under one fixed key, bound to one request.
#[derive(Debug)]
pub struct SealFixture {
    keys: StateKeys,
    binding: Binding,
}

impl SealFixture {
    /// States sealed with `key` (named `id`) for the request `method` with `params`.
    pub fn new(id: &str, key: &[u8; 32], method: &str, params: &Value) -> Self {
        let mut keys = StateKeys::default();
        keys.set_current(id.to_owned(), key, false);
        Self {
            keys,
            binding: Binding::of(method, Some(params), None),
        }
    }

    /// Seals a state carrying the handler's `state` and `round`.
    pub fn seal(&self, state: Option<String>, round: u32) -> String {
        let payload = Payload {
            state,
            round,
            ..Payload::default()
        };
        self.keys.seal(&self.binding, payload)
    }

    /// Opens `text`: the handler's state and round, or why it was refused.
    ///
    /// # Errors
    /// The refusal, as the client would read it.
    pub fn open(&self, text: &str) -> Result<(Option<String>, u32), String> {
        self.keys
            .open(&self.binding, text)
            .map(|payload| (payload.state, payload.round))
            .map_err(|err| err.to_string())
    }
}
