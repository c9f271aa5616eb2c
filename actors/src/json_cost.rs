//! What a JSON text will cost in memory once parsed into a `serde_json::Value` tree, estimated
//! from its bytes before parsing.
//!
//! A tree costs far more than its text: every value is a 72-byte `Value` (with `serde_json`'s
//! `preserve_order`, which keeps object members in order and which this crate turns on), every
//! array a vector that grows by doubling, every object an ordered map with its index. Measured:
//! 4 MB of `[1,1,…]` holds 189 MB once parsed (47×), 4 MB of `[{"a":1},…]` 230 MB (57×), 4 MB
//! of `[[1],[1],…]` 382 MB (96×), while a 4 MB string holds 4 MB. Counting the structural
//! tokens (`{`, `[`, `,`, `:` and string starts) outside strings bounds it: at most
//! [`BYTES_PER_TOKEN`] per token plus the string bytes themselves, and an allowance for nesting.
//! One pass over the bytes, no allocation, so a transport can refuse a message before it builds
//! the tree.

/// The most a parsed tree holds per structural token, string contents aside. The costliest
/// shape, measured (`actors/tests/json_cost.rs` checks the bound on the costliest shapes):
/// arrays of one-element arrays, 191 bytes a token (four 72-byte slots for one value), before
/// the last doubling of the outer array, which 224 covers. (Without `preserve_order` a `Value`
/// is 32 bytes and the costliest shape is an array of one-member objects, 169 bytes a token.)
pub const BYTES_PER_TOKEN: usize = 224;

/// What a level of nesting may add past [`BYTES_PER_TOKEN`]: an array nested in a one-element
/// array holds four slots for its one `[` (288 bytes, 64 over the bound). Counted for each
/// `[` and `{` up to 128, the most levels `serde_json` parses.
const NESTING_ALLOWANCE: usize = 2 * size_of::<serde_json::Value>();

/// The deepest nesting `serde_json` parses.
const MAX_DEPTH: usize = 128;

/// An upper bound of the memory `bytes` holds once parsed into a `serde_json::Value` tree.
/// Not a validator: invalid JSON gets an estimate too (its parse fails anyway).
///
/// A text of at most 16 KiB is first bounded by a count that does not tell strings apart
/// (every structural byte a token, every two quotes a string), four times cheaper than the scan
/// that does: when that bound is at most 32 KiB, it is the estimate, at most that many bytes
/// above the scan's. Other texts get the scan's.
pub fn parsed_size_estimate(bytes: &[u8]) -> usize {
    if bytes.len() <= QUICK_LIMIT / 2 {
        let bound = quick_bound(bytes);
        if bound <= QUICK_LIMIT {
            return bound;
        }
    }
    scan_estimate(bytes)
}

/// The largest estimate [`quick_bound`] may give in place of the scan's.
const QUICK_LIMIT: usize = 32 * 1024;

/// A bound of [`scan_estimate`] from counts over the whole text, strings included: every
/// structural byte is taken for a token, and every pair of quotes for a string (a string has
/// two unescaped quotes, or one when the text ends in it; escaped quotes only add to the
/// count). Counted sixteen bytes at a time into one-byte counters per lane, summed before
/// they can wrap, so that it compiles to vector operations.
fn quick_bound(bytes: &[u8]) -> usize {
    let (mut structural, mut quotes, mut open) = (0usize, 0usize, 0usize);
    for round in bytes.chunks(LANES * usize::from(u8::MAX)) {
        let mut counts = [[0u8; LANES]; 3];
        let mut blocks = round.chunks_exact(LANES);
        for block in &mut blocks {
            let mut whole = [0; LANES];
            whole.copy_from_slice(block);
            count_lanes(&whole, &mut counts);
        }
        let rest = blocks.remainder();
        if !rest.is_empty() {
            // Zeros count as nothing.
            let mut last = [0; LANES];
            last[..rest.len()].copy_from_slice(rest);
            count_lanes(&last, &mut counts);
        }
        let [s, q, o] = counts.map(|lanes| lanes.iter().map(|&c| usize::from(c)).sum::<usize>());
        structural += s;
        quotes += q;
        open += o;
    }
    // String bytes are at most the text's length.
    (structural + quotes.div_ceil(2))
        .saturating_mul(BYTES_PER_TOKEN)
        .saturating_add(2 * bytes.len())
        .saturating_add(open.min(MAX_DEPTH) * NESTING_ALLOWANCE)
}

/// Bytes a lane of [`quick_bound`] counts at a time.
const LANES: usize = 16;

/// Adds a block's structural bytes, quotes and container openings to its lanes' counts.
#[inline(always)]
fn count_lanes(block: &[u8; LANES], [structural, quotes, open]: &mut [[u8; LANES]; 3]) {
    for (i, &byte) in block.iter().enumerate() {
        let (is_structural, opens) = structure(byte);
        structural[i] += u8::from(is_structural);
        quotes[i] += u8::from(byte == b'"');
        open[i] += u8::from(opens);
    }
}

/// The estimate from a scan that tells strings apart: structure inside a string costs
/// nothing.
fn scan_estimate(bytes: &[u8]) -> usize {
    let mut scan = Scan::default();
    let mut blocks = bytes.chunks_exact(BLOCK);
    for block in &mut blocks {
        let mut whole = [0; BLOCK];
        whole.copy_from_slice(block);
        scan.block(&whole, u64::MAX);
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        let mut last = [b' '; BLOCK];
        last[..rest.len()].copy_from_slice(rest);
        scan.block(&last, (1 << rest.len()) - 1);
    }
    scan.tokens
        .saturating_mul(BYTES_PER_TOKEN)
        .saturating_add(scan.string_bytes)
        .saturating_add(bytes.len())
        .saturating_add(scan.containers.min(MAX_DEPTH) * NESTING_ALLOWANCE)
}

/// Bytes read at a time: one bit of a `u64` for each.
const BLOCK: usize = 64;

/// The odd positions of a block.
const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;

/// Counting over a text a block at a time, without a branch per byte: each block's bytes of
/// each kind become a bit mask, strings are told from their quotes with a prefix XOR, and the
/// counts are population counts. What a block leaves open (a string, an escape) is carried to
/// the next.
#[derive(Default)]
struct Scan {
    tokens: usize,
    containers: usize,
    string_bytes: usize,
    /// All ones when the last block ended inside a string.
    in_string: u64,
    /// 1 when the last block ended with a backslash that escapes the next byte.
    escaped: u64,
}

impl Scan {
    /// Counts one block; `valid` has a bit for each byte of the text (the last block is
    /// padded).
    fn block(&mut self, block: &[u8; BLOCK], valid: u64) {
        let [quote, backslash, structural, open] = masks(block);
        let escaped = self.escaped_bytes(backslash);
        let quote = quote & !escaped;
        // A string's bytes, from its opening quote to the byte before its closing one.
        let in_string = prefix_xor(quote) ^ self.in_string;
        self.in_string = 0u64.wrapping_sub(in_string >> 63);
        let (in_string, quote) = (in_string & valid, quote & valid);
        let outside = !in_string & valid;
        let opening = quote & in_string;
        let closing = quote & outside;
        self.tokens += count(structural & outside) + count(opening);
        self.containers += count(open & outside);
        // A string's bytes after its opening quote, its closing quote included.
        self.string_bytes += count(in_string) - count(opening) + count(closing);
    }

    /// The bytes a backslash escapes: the byte after each backslash that is not escaped
    /// itself. A run of backslashes escapes its every second byte, and the byte after it when
    /// the run is odd. The subtraction finds each run's end and parity at once: adding a
    /// run's start to it carries past its end.
    fn escaped_bytes(&mut self, backslash: u64) -> u64 {
        if backslash == 0 {
            return std::mem::take(&mut self.escaped);
        }
        // The backslashes that escape something, if their runs start at an even position.
        let escaping = backslash & !self.escaped;
        let codes = ((escaping << 1) | ODD).wrapping_sub(escaping) ^ ODD;
        let escaped = codes ^ (backslash | self.escaped);
        self.escaped = (codes & backslash) >> 63;
        escaped
    }
}

/// One bit a byte, for each kind: quotes, backslashes, the bytes counted as structure
/// (`{`, `[`, `,` and `:`), and those that open a container (`{` and `[`). Built a byte a
/// flag, then eight flags a word, so that both compile to vector and word operations.
fn masks(block: &[u8; BLOCK]) -> [u64; 4] {
    let mut flags = [[0u8; BLOCK]; 4];
    for (i, &byte) in block.iter().enumerate() {
        let (structural, open) = structure(byte);
        flags[0][i] = u8::from(byte == b'"');
        flags[1][i] = u8::from(byte == b'\\');
        flags[2][i] = u8::from(structural);
        flags[3][i] = u8::from(open);
    }
    flags.map(|flags| {
        let mut mask = 0;
        for (word, bytes) in flags.chunks_exact(8).enumerate() {
            let mut eight = [0; 8];
            eight.copy_from_slice(bytes);
            // Eight bytes of 0 or 1 into eight bits: each lands in the top byte, in order.
            let bits = u64::from_le_bytes(eight).wrapping_mul(0x0102_0408_1020_4080) >> 56;
            mask |= bits << (word * 8);
        }
        mask
    })
}

/// Whether `byte` counts as structure (`{`, `[`, `,` or `:`), and whether it opens a container
/// (`{` or `[`), without a branch: both counts of this module read bytes this way.
#[inline(always)]
fn structure(byte: u8) -> (bool, bool) {
    // `[` and `{` differ in one bit only.
    let open = (byte | 0x20) == b'{';
    (open | (byte == b',') | (byte == b':'), open)
}

/// Each bit the XOR of it and every bit below it: set from an opening quote up to the byte
/// before the closing one.
fn prefix_xor(mut bits: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        bits ^= bits << shift;
    }
    bits
}

fn count(bits: u64) -> usize {
    bits.count_ones() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate a byte at a time, as the definition reads: what the block scan must equal
    /// on any text whose backslashes are all in strings (as in any JSON text).
    fn reference(bytes: &[u8]) -> usize {
        let (mut tokens, mut containers, mut string_bytes) = (0usize, 0usize, 0usize);
        let (mut in_string, mut escaped) = (false, false);
        for &byte in bytes {
            if in_string {
                string_bytes += 1;
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                }
            } else {
                match byte {
                    b'"' => {
                        in_string = true;
                        tokens += 1;
                    }
                    b'{' | b'[' => {
                        tokens += 1;
                        containers += 1;
                    }
                    b',' | b':' => tokens += 1,
                    _ => {}
                }
            }
        }
        tokens * BYTES_PER_TOKEN
            + string_bytes
            + bytes.len()
            + containers.min(MAX_DEPTH) * NESTING_ALLOWANCE
    }

    /// A text of JSON's pieces, its strings full of what a scan could mistake (quotes and
    /// backslashes escaped, runs of escaped backslashes, structure), from a small generator.
    fn text(seed: u64, len: usize) -> Vec<u8> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out = Vec::new();
        while out.len() < len {
            match next() % 6 {
                0 => out.extend_from_slice(b"{"),
                1 => out.extend_from_slice(b"[1,"),
                2 => out.extend_from_slice(b"}],:"),
                _ => {
                    out.push(b'"');
                    for _ in 0..next() % 40 {
                        match next() % 8 {
                            0 => out.extend_from_slice(b"\\\""),
                            1 => {
                                let run = usize::try_from(next() % 5).unwrap_or(0);
                                out.extend(std::iter::repeat_n(b'\\', 2 * run));
                            }
                            2 => out.extend_from_slice(b"\\u00e9"),
                            3 => out.extend_from_slice(b"{[,:"),
                            _ => out.push(b'a'),
                        }
                    }
                    // A string left open at the end now and then.
                    if next() % 50 != 0 || out.len() < len {
                        out.push(b'"');
                    }
                }
            }
        }
        out
    }

    #[test]
    fn the_block_scan_counts_as_the_byte_scan() {
        for seed in 0..2000 {
            let len = usize::try_from(seed % 400).unwrap_or(0);
            let text = text(seed * 0x9E37_79B9, len);
            assert_eq!(
                scan_estimate(&text),
                reference(&text),
                "{}",
                String::from_utf8_lossy(&text)
            );
            // Every cut of it too: blocks end anywhere, in a string, an escape or a run.
            let cut = usize::try_from(seed).unwrap_or(0) % (text.len() + 1);
            assert_eq!(scan_estimate(&text[..cut]), reference(&text[..cut]));
        }
        // Anything at all gets an estimate, at least its length.
        for seed in 0..200u64 {
            let bytes: Vec<u8> = (0..seed * 3).map(|i| ((i * seed) % 251) as u8).collect();
            assert!(parsed_size_estimate(&bytes) >= bytes.len());
        }
    }

    #[test]
    fn the_quick_bound_is_never_below_the_scan() {
        for seed in 0..2000 {
            let len = usize::try_from(seed % 400).unwrap_or(0);
            let text = text(seed * 0x9E37_79B9, len);
            let cut = usize::try_from(seed).unwrap_or(0) % (text.len() + 1);
            for text in [&text[..], &text[..cut]] {
                let (quick, scan) = (quick_bound(text), scan_estimate(text));
                assert!(
                    quick >= scan,
                    "{quick} < {scan}: {}",
                    String::from_utf8_lossy(text)
                );
                // The estimate is the quick bound only while that is small.
                let expected = if quick <= QUICK_LIMIT { quick } else { scan };
                assert_eq!(parsed_size_estimate(text), expected);
            }
        }
        // Over several rounds of lane counts, the counts are those of a byte at a time.
        let long = text(7, 12_000);
        let count = |pick: fn(u8) -> bool| long.iter().filter(|&&b| pick(b)).count();
        let structural = count(|b| matches!(b, b'{' | b'[' | b',' | b':'));
        let (quotes, open) = (count(|b| b == b'"'), count(|b| matches!(b, b'{' | b'[')));
        assert_eq!(
            quick_bound(&long),
            (structural + quotes.div_ceil(2)) * BYTES_PER_TOKEN
                + 2 * long.len()
                + open.min(MAX_DEPTH) * NESTING_ALLOWANCE
        );
        // A long text, or a short one whose strings are full of structure, is scanned.
        let long = format!("\"{}\"", "x".repeat(QUICK_LIMIT));
        assert_eq!(
            parsed_size_estimate(long.as_bytes()),
            scan_estimate(long.as_bytes())
        );
        let commas = format!("\"{}\"", ",".repeat(1000));
        assert!(quick_bound(commas.as_bytes()) > QUICK_LIMIT);
        assert_eq!(
            parsed_size_estimate(commas.as_bytes()),
            scan_estimate(commas.as_bytes())
        );
        // A request of the usual size is bounded closely.
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}"#;
        assert!(quick_bound(call) <= scan_estimate(call) + BYTES_PER_TOKEN);
    }

    #[test]
    fn structure_costs_far_more_than_strings() {
        let ints = format!("[{}1]", "1,".repeat(1000));
        assert!(parsed_size_estimate(ints.as_bytes()) >= 1000 * BYTES_PER_TOKEN);
        let text = format!("\"{}\"", "x".repeat(20_000));
        let estimate = parsed_size_estimate(text.as_bytes());
        assert!(estimate < 3 * text.len(), "{estimate}");
    }

    #[test]
    fn structural_bytes_inside_strings_are_not_counted() {
        let quoted = r#"{"a":"[{,:}]\"[,"}"#;
        // `{`, `"a"`, `:` and the string: four tokens; 13 bytes after the opening quotes.
        assert_eq!(
            scan_estimate(quoted.as_bytes()),
            4 * BYTES_PER_TOKEN + 13 + quoted.len() + NESTING_ALLOWANCE
        );
    }

    #[test]
    fn the_estimate_bounds_what_a_parse_holds() {
        // The shapes measured in the module docs, small: a tree never holds more than the
        // estimate (checked here on the vector sizes a parse allocates).
        for json in [
            format!("[{}1]", "1,".repeat(5000)),
            format!("[{}{{}}]", "{},".repeat(5000)),
            format!("[{}{{\"a\":1}}]", "{\"a\":1},".repeat(2000)),
        ] {
            let value: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            let items = value.as_array().map_or(0, Vec::len);
            let tree = items * std::mem::size_of::<serde_json::Value>();
            assert!(parsed_size_estimate(json.as_bytes()) > tree);
        }
    }
}
