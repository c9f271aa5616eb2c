//! `parse_message` on arbitrary bytes: never panics; whatever it accepts survives a round trip
//! through the frames this side sends (parsed again, it is the same message); whatever it
//! refuses is answered with an error frame that is itself valid JSON-RPC, carrying the id it
//! could read. Parsed keeping `_meta` as text, the same bytes get the same verdict and, with
//! `_meta` put back, the same message.

#![no_main]

use actix_mcp_actors::{
    RequestId,
    dev::{Frame, Incoming, parse_message, parse_message_keeping_meta},
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let plain = parse_message(data);
    match (&plain, parse_message_keeping_meta(data)) {
        (Ok(plain), Ok(kept)) => {
            let kept = match kept {
                Incoming::Request(mut request) => {
                    if let Some(meta) = &request.meta {
                        assert!(meta.get().starts_with('{'), "{} kept", meta.get());
                    }
                    request.inline_meta();
                    Incoming::Request(request)
                }
                other => other,
            };
            assert_same(plain, &kept);
        }
        (Err(plain), Err(kept)) => {
            assert_eq!(plain.error.code, kept.error.code);
            assert_eq!(plain.id, kept.id);
        }
        (plain, kept) => panic!("{plain:?} but, keeping _meta, {kept:?}"),
    }
    match plain {
        Ok(message) => {
            let frame = match &message {
                Incoming::Request(r) => Frame::request(&r.id, &r.method, r.params.as_ref()),
                Incoming::Notification(n) => Frame::notification(&n.method, n.params.as_ref()),
                Incoming::Response(r) => Frame::response(&r.id, &r.outcome),
            };
            let again = parse_message(frame.json.as_bytes())
                .unwrap_or_else(|rejection| panic!("{} refused: {rejection:?}", frame.json));
            assert_same(&message, &again);
        }
        Err(rejection) => {
            let frame = rejection.to_frame();
            let value: Value = serde_json::from_str(&frame.json).expect("an error frame is JSON");
            assert_eq!(value["jsonrpc"], "2.0");
            assert_eq!(value["error"]["code"], rejection.error.code.0);
            assert!(value["error"]["message"].is_string());
            match &rejection.id {
                // An id it could read comes back as a response to that id.
                Some(id) => match parse_message(frame.json.as_bytes()) {
                    Ok(Incoming::Response(response)) => {
                        assert_eq!(&response.id, id);
                        assert_eq!(response.outcome, Err(rejection.error.clone()));
                    }
                    other => panic!("{} parsed as {other:?}", frame.json),
                },
                None => assert_eq!(value["id"], Value::Null),
            }
        }
    }
});

fn assert_same(first: &Incoming, second: &Incoming) {
    match (first, second) {
        (Incoming::Request(a), Incoming::Request(b)) => {
            assert_id(&a.id, &b.id);
            assert_eq!(a.method, b.method);
            assert_eq!(a.params, b.params);
        }
        (Incoming::Notification(a), Incoming::Notification(b)) => {
            assert_eq!(a.method, b.method);
            assert_eq!(a.params, b.params);
        }
        (Incoming::Response(a), Incoming::Response(b)) => {
            assert_id(&a.id, &b.id);
            assert_eq!(a.outcome, b.outcome);
        }
        _ => panic!("{first:?} came back as {second:?}"),
    }
}

fn assert_id(a: &RequestId, b: &RequestId) {
    assert_eq!(a, b);
}
