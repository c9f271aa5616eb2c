//! The client's bounded SSE decoder (what reads every SSE answer of the HTTP transport), fed
//! the input in chunks whose boundaries the first byte picks. It never panics and never
//! buffers much more than its frame limit; and under that limit, where the chunk boundaries
//! fall changes nothing: chunked, the events are those of the input decoded whole.

#![no_main]

use actix_mcp::__fuzz::sse_decode;
use libfuzzer_sys::fuzz_target;

/// The data limit of the small decoder, whose frame limit is `2 * SMALL + 4096`.
const SMALL: usize = 64;

fuzz_target!(|data: &[u8]| {
    let chunks = actix_mcp_fuzz::chunked(data);
    let longest = chunks.iter().map(|c| c.len()).max().unwrap_or(0);

    let (_, most) = sse_decode(SMALL, &chunks);
    let frame_limit = 2 * SMALL + 4096;
    assert!(
        most <= frame_limit + longest,
        "buffered {most} bytes; the frame limit is {frame_limit}"
    );

    let body = data.get(1..).unwrap_or_default();
    let large = 1 << 20;
    let (whole, _) = sse_decode(large, &[body]);
    let (pieces, _) = sse_decode(large, &chunks);
    assert_eq!(whole, pieces, "chunk boundaries changed the events");
});
