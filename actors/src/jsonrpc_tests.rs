//! Tests of the JSON-RPC envelope's parse.

use super::*;

fn reject(input: &str) -> Rejection {
    match parse(input.as_bytes()) {
        Err(rejection) => rejection,
        Ok(msg) => panic!("{input} parsed as {msg:?}"),
    }
}

#[test]
fn parses_each_message_kind() {
    assert!(
        matches!(parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Ok(Incoming::Request(r)) if r.id == RequestId::Number(1))
    );
    assert!(
        matches!(parse(br#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#), Ok(Incoming::Request(r)) if r.id == RequestId::from("a"))
    );
    assert!(matches!(
        parse(br#"{"jsonrpc":"2.0","method":"n"}"#),
        Ok(Incoming::Notification(_))
    ));
    assert!(
        matches!(parse(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#), Ok(Incoming::Response(r)) if r.outcome.is_ok())
    );
    assert!(
        matches!(parse(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#), Ok(Incoming::Response(r)) if r.outcome.is_err())
    );
}

fn split(input: &str) -> Request {
    match parse_keeping_meta(input.as_bytes()) {
        Ok(Incoming::Request(request)) => request,
        other => panic!("{input} parsed as {other:?}"),
    }
}

#[test]
fn keeps_an_object_meta_as_text_and_the_rest_in_order() {
    let request = split(
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"b":1,"_meta":{"k": [1, {"n":2}]},"a":{"c":3}}}"#,
    );
    assert_eq!(
        request.meta.as_deref().map(RawValue::get),
        Some(r#"{"k": [1, {"n":2}]}"#)
    );
    let params = request.params.clone().unwrap_or_default();
    assert_eq!(params.to_string(), r#"{"b":1,"a":{"c":3}}"#);
    let [k, missing] = raw_members(
        request.meta.as_deref().unwrap_or_else(|| unreachable!()),
        ["k", "z"],
    );
    assert_eq!(k.map(RawValue::get), Some(r#"[1, {"n":2}]"#));
    assert!(missing.is_none());
    // Put back, it reads as a parse into a value would have left it.
    let mut inlined = request;
    inlined.inline_meta();
    assert!(inlined.meta.is_none());
    assert_eq!(
        inlined.params.map(|p| p.to_string()),
        Some(r#"{"b":1,"a":{"c":3},"_meta":{"k":[1,{"n":2}]}}"#.to_owned())
    );
}

#[test]
fn a_meta_that_is_not_an_object_stays_for_the_params_checks() {
    let request = split(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"s"}}"#);
    assert!(request.meta.is_none());
    assert_eq!(
        request.params.map(|p| p.to_string()),
        Some(r#"{"_meta":"s"}"#.to_owned())
    );
    // The last `_meta` counts, whichever its kind, as in a parse into a value.
    let request =
        split(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":1},"_meta":7}}"#);
    assert!(request.meta.is_none());
    assert_eq!(
        request.params.map(|p| p.to_string()),
        Some(r#"{"_meta":7}"#.to_owned())
    );
    let request =
        split(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":7,"\u005fmeta":{"a":1}}}"#);
    assert_eq!(
        request.meta.as_deref().map(RawValue::get),
        Some(r#"{"a":1}"#)
    );
    assert_eq!(request.params.map(|p| p.to_string()), Some("{}".to_owned()));
}

#[test]
fn keeping_meta_changes_no_verdict_and_no_notification() {
    for input in [
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"p"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{}},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":}}}"#,
        // What reading text does not check, a parse into a value refuses.
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":"\ud800"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"\udc00":1}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":[1e400]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"\ud800x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1e400]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":["\udfff"]}"#,
        // The first fault counts, as a parse into a value meets them.
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":"\ud800"}},"params":{}}"#,
    ] {
        let kept = parse_keeping_meta(input.as_bytes())
            .err()
            .map(|r| r.error.code);
        let plain = parse(input.as_bytes()).err().map(|r| r.error.code);
        assert!(kept.is_some(), "{input}");
        assert_eq!(kept, plain, "{input}");
    }
    let Ok(Incoming::Notification(notification)) =
        parse_keeping_meta(br#"{"jsonrpc":"2.0","method":"n","params":{"_meta":{"a":1}}}"#)
    else {
        panic!("not a notification");
    };
    assert_eq!(
        notification.params.map(|p| p.to_string()),
        Some(r#"{"_meta":{"a":1}}"#.to_owned())
    );
    let request = split(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#);
    assert!(request.params.is_none() && request.meta.is_none());
}

#[test]
fn a_meta_nests_as_deep_as_a_value_may() {
    for depth in MAX_META_NESTING - 2..MAX_META_NESTING + 3 {
        for meta in [
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
            format!(
                "{{\"a\":{}{}}}",
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            ),
        ] {
            let input =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{meta}}}}}"#);
            let kept = parse_keeping_meta(input.as_bytes())
                .err()
                .map(|r| r.error.code);
            let plain = parse(input.as_bytes()).err().map(|r| r.error.code);
            assert_eq!(kept, plain, "{depth}: {meta}");
            assert_eq!(plain.is_some(), depth > MAX_META_NESTING, "{depth}");
        }
    }
}

#[test]
fn only_text_that_may_be_refused_is_checked_as_a_value() {
    for (text, doubtful) in [
        (r#"{"v":"2026-07-28","n":[1,-2.5,true,false,null]}"#, false),
        (r#"{"e":"name","E":10}"#, false),
        (r#"{"a":"\n"}"#, true),
        (r#"{"a":1e5}"#, true),
        (r#"{"a":2.5E-3}"#, true),
        (r#"{"a":"v1e"}"#, true),
    ] {
        assert_eq!(may_be_refused(text.as_bytes()), doubtful, "{text}");
    }
    let long = format!(r#"{{"a":"{}"}}"#, "x".repeat(2 * MAX_META_NESTING));
    assert!(may_be_refused(long.as_bytes()));
    assert!(!may_be_refused(b""));
}

#[test]
fn reads_members_the_last_one_winning_escapes_and_all() {
    let object: Box<RawValue> =
        serde_json::from_str(r#"{"a":1,"\u0062":"x\ny","a":2}"#).unwrap_or_else(|e| panic!("{e}"));
    let [a, b] = raw_members(&object, ["a", "b"]);
    assert_eq!(a.map(RawValue::get), Some("2"));
    assert_eq!(b.and_then(raw_str).as_deref(), Some("x\ny"));
    let array: Box<RawValue> = serde_json::from_str("[1]").unwrap_or_else(|e| panic!("{e}"));
    let [a] = raw_members(&array, ["a"]);
    assert!(a.is_none());
}

#[test]
fn reads_text_and_refuses_bytes_that_are_not_utf8_wherever_they_are() {
    let text =
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"é":"ü\u00e9","_meta":{"k":"ß"}}}"#;
    let Ok(Incoming::Request(plain)) = parse(text.as_bytes()) else {
        panic!("refused");
    };
    assert_eq!(
        plain.params.as_ref().map(|p| p["é"].clone()),
        Some("üé".into())
    );
    assert_eq!(
        split(text).meta.map(|m| m.get().to_owned()),
        Some(r#"{"k":"ß"}"#.into())
    );
    for bad in [
        &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\xff\"}"[..],
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"\xc3\":1}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"_meta\":{\"a\":\"\xed\xa0\x80\"}}}",
    ] {
        for rejection in [parse(bad), parse_keeping_meta(bad)] {
            let code = rejection.err().map(|r| r.error.code);
            assert_eq!(code, Some(ErrorCode::PARSE_ERROR), "{bad:?}");
        }
    }
}

#[test]
fn refuses_bad_input_with_the_named_code() {
    assert_eq!(reject("{nope").error.code, ErrorCode::PARSE_ERROR);
    assert_eq!(reject("").error.code, ErrorCode::PARSE_ERROR);
    assert_eq!(reject("[]").error.code, ErrorCode::INVALID_REQUEST);
    assert_eq!(reject("42").error.code, ErrorCode::INVALID_REQUEST);
    assert_eq!(
        reject(r#"{"id":1,"method":"x"}"#).error.code,
        ErrorCode::INVALID_REQUEST
    );
    assert_eq!(
        reject(r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#).id,
        Some(RequestId::Number(1))
    );
    assert_eq!(
        reject(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#)
            .error
            .code,
        ErrorCode::INVALID_REQUEST
    );
    assert_eq!(
        reject(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#)
            .error
            .code,
        ErrorCode::INVALID_REQUEST
    );
    assert_eq!(
        reject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#)
            .error
            .code,
        ErrorCode::INVALID_REQUEST
    );
    let long_method = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"{}"}}"#,
        "m".repeat(1 << 20)
    );
    let rejection = reject(&long_method);
    assert_eq!(rejection.error.code, ErrorCode::INVALID_REQUEST);
    assert_eq!(rejection.id, Some(RequestId::from(3)));
    assert!(
        rejection.error.message.len() < 100,
        "the name is not echoed"
    );
    let long_id = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
        "i".repeat(300)
    );
    let rejection = reject(&long_id);
    assert_eq!(rejection.error.code, ErrorCode::INVALID_REQUEST);
    assert_eq!(rejection.id, None);
    for method in ["5", "null", "true", "[1,[2]]", r#"{"a":{"b":1}}"#] {
        let wrong = reject(&format!(r#"{{"jsonrpc":"2.0","id":4,"method":{method}}}"#));
        assert_eq!(wrong.id, Some(RequestId::Number(4)), "{method}");
        assert_eq!(wrong.error.code, ErrorCode::INVALID_REQUEST, "{method}");
    }
    let positional = reject(r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":[1,2]}"#);
    assert_eq!(positional.error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(positional.id, Some(RequestId::from(7)));
    assert_eq!(
        reject(r#"{"jsonrpc":"2.0","id":1}"#).error.code,
        ErrorCode::INVALID_REQUEST
    );
    assert_eq!(
        reject(r#"{"jsonrpc":"2.0","method":5}"#).error.code,
        ErrorCode::INVALID_REQUEST
    );
}

#[test]
fn frames_are_exact() {
    let id = RequestId::Number(7);
    assert_eq!(
        &*Frame::result(&id, &serde_json::json!({})).json,
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#
    );
    assert_eq!(
        &*Frame::error(None, &ErrorObject::new(ErrorCode::PARSE_ERROR, "bad")).json,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
    );
    assert_eq!(
        &*Frame::notification::<Value>("notifications/initialized", None).json,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
}

#[test]
fn frames_written_in_turn_or_one_inside_another_are_each_whole() {
    /// A value whose serialisation makes a frame of its own.
    struct Nested;
    impl Serialize for Nested {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let inner = Frame::notification("inner", Some(&serde_json::json!({"n": 1})));
            serializer.serialize_str(&inner.json)
        }
    }
    let id = RequestId::Number(1);
    let outer = Frame::result(&id, &Nested);
    let text: Value = serde_json::from_str(&outer.json).unwrap_or_default();
    assert_eq!(
        text["result"],
        r#"{"jsonrpc":"2.0","method":"inner","params":{"n":1}}"#
    );
    // A large frame, then a small one: nothing of the first is left in the second.
    let large = "x".repeat(200_000);
    assert_eq!(
        *Frame::result(&id, &large).json,
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":"{large}"}}"#)
    );
    assert_eq!(
        &*Frame::result(&id, &1).json,
        r#"{"jsonrpc":"2.0","id":1,"result":1}"#
    );
    // What cannot be serialised is answered as an internal error, whole.
    let keys: std::collections::HashMap<Vec<u8>, u8> = [(vec![1], 1)].into();
    let failed: Value = serde_json::from_str(&Frame::result(&id, &keys).json).unwrap_or_default();
    assert_eq!(failed["error"]["code"], -32603);
}
