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
pub fn parsed_size_estimate(bytes: &[u8]) -> usize {
    let mut tokens = 0usize;
    let mut containers = 0usize;
    let mut string_bytes = 0usize;
    let mut in_string = false;
    let mut escaped = false;
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
    tokens
        .saturating_mul(BYTES_PER_TOKEN)
        .saturating_add(string_bytes)
        .saturating_add(bytes.len())
        .saturating_add(containers.min(MAX_DEPTH) * NESTING_ALLOWANCE)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            parsed_size_estimate(quoted.as_bytes()),
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
