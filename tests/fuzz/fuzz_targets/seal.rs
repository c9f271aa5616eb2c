//! The `requestState` opener under a fixed key, for a fixed request. The first byte picks
//! what the rest is: an arbitrary state to open (it never panics and never opens: only the
//! server can seal), or a handler state to seal plus edits to the sealed text (the state opens
//! untouched, and no edited text that differs from it ever opens).

#![no_main]

use std::sync::OnceLock;

use actix_mcp::__fuzz::SealFixture;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fn fixture() -> &'static SealFixture {
    static FIXTURE: OnceLock<SealFixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        SealFixture::new(
            "fuzz",
            &actix_mcp_fuzz::STATE_KEY,
            "tools/call",
            &json!({"name": "confirm", "arguments": {"n": 1}}),
        )
    })
}

const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let fixture = fixture();
    if mode % 2 == 0 {
        let text = String::from_utf8_lossy(rest);
        if let Ok(opened) = fixture.open(&text) {
            panic!("a state nobody sealed opened: {text:?} -> {opened:?}");
        }
        return;
    }
    // The handler's state, then the edits: (position, operation, byte) triples.
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let state = String::from_utf8_lossy(&rest[..split]).into_owned();
    let edits = rest.get(split + 1..).unwrap_or_default();
    let round = u32::from(mode);
    let sealed = fixture.seal(Some(state.clone()), round);
    assert_eq!(fixture.open(&sealed), Ok((Some(state), round)));

    let mut text = sealed.clone().into_bytes();
    for edit in edits.chunks(3) {
        let [at, op, byte] = *edit else { break };
        let at = usize::from(at) * text.len().max(1) / 256;
        let replacement = BASE64URL[usize::from(byte) % BASE64URL.len()];
        match op % 4 {
            0 if at < text.len() => text[at] = replacement,
            1 => text.insert(at.min(text.len()), replacement),
            2 if at < text.len() => {
                text.remove(at);
            }
            3 if at < text.len() => text[at] = byte,
            _ => {}
        }
    }
    let edited = String::from_utf8_lossy(&text);
    if edited != sealed
        && let Ok(opened) = fixture.open(&edited)
    {
        panic!("an edited state opened: {sealed:?} edited to {edited:?} -> {opened:?}");
    }
});
