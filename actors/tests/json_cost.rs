//! `parsed_size_estimate` bounds what a parse really holds: each shape of JSON that costs the
//! most per structural token, parsed under dhat's counting allocator, holds at most its
//! estimate.

use actix_mcp_actors::dev::parsed_size_estimate;

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

/// The bytes a `serde_json::Value` parsed from `text` holds.
fn parsed_bytes(text: &str) -> u64 {
    let before = dhat::HeapStats::get().curr_bytes;
    let value: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
    let held = dhat::HeapStats::get().curr_bytes - before;
    drop(value);
    u64::try_from(held).expect("a usize fits in a u64")
}

#[test]
fn the_estimate_bounds_the_parsed_tree_of_the_costliest_shapes() {
    let n = 20_000;
    let repeat = |item: &str, last: &str| format!("[{}{last}]", format!("{item},").repeat(n));
    let shapes = [
        ("numbers", repeat("1", "1")),
        ("one-member objects", repeat(r#"{"a":1}"#, r#"{"a":1}"#)),
        (
            "two-member objects",
            repeat(r#"{"a":1,"b":2}"#, r#"{"a":1,"b":2}"#),
        ),
        ("one-element arrays", repeat("[1]", "[1]")),
        ("objects of objects", repeat(r#"{"a":{}}"#, r#"{"a":{}}"#)),
        ("objects of arrays", repeat(r#"{"a":[]}"#, r#"{"a":[]}"#)),
        ("empty objects", repeat("{}", "{}")),
        ("empty arrays", repeat("[]", "[]")),
        ("strings", repeat(r#""x""#, r#""x""#)),
        (
            "a wide object",
            format!(
                "{{{}\"z\":1}}",
                (0..n)
                    .map(|i| format!("\"k{i}\":{{\"a\":1}},"))
                    .collect::<String>()
            ),
        ),
        (
            "deep arrays",
            format!("{}1{}", "[".repeat(120), "]".repeat(120)),
        ),
        (
            "deep objects",
            format!("{}1{}", r#"{"a":"#.repeat(120), "}".repeat(120)),
        ),
    ];
    let _profiler = dhat::Profiler::builder().testing().build();
    let mut closest = 0.0f64;
    for (shape, text) in shapes {
        let held = parsed_bytes(&text);
        let estimate = parsed_size_estimate(text.as_bytes()) as u64;
        assert!(
            held <= estimate,
            "{shape}: the parsed tree holds {held} bytes, more than the estimate of {estimate}"
        );
        closest = closest.max(held as f64 / estimate as f64);
    }
    // Nor is the bound loose: the costliest shape comes near it.
    assert!(
        closest > 0.6,
        "at most {closest:.2} of the estimate is held"
    );
}
