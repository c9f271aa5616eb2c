//! One message through a real server in process (`Server::handle_json`, as a stateless request
//! with no transport): never panics, finishes within the bound, and answers every request
//! exactly once with a well-formed response to its id, every refused message with the error
//! `parse_message` gives, and nothing else. The server (`actix_mcp_fuzz::server`) has tools,
//! prompts, resources, templates, completion, tasks, a custom method and multi round-trip
//! tools; the seeds include 2026-07-28 requests carrying their `_meta`.

#![no_main]

use std::sync::OnceLock;

use actix_mcp::Server;
use actix_mcp_actors::dev::{Incoming, parse_message};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(actix_mcp_fuzz::server)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let answer = actix_mcp_fuzz::block_on(server().handle_json(text));
    match parse_message(text.as_bytes()) {
        Err(rejection) => {
            assert_eq!(answer.as_deref(), Some(&*rejection.to_frame().json));
        }
        Ok(Incoming::Notification(_) | Incoming::Response(_)) => {
            assert_eq!(answer, None, "only requests are answered");
        }
        Ok(Incoming::Request(request)) => {
            let answer = answer.unwrap_or_else(|| panic!("no answer to {}", request.method));
            let response = match parse_message(answer.as_bytes()) {
                Ok(Incoming::Response(response)) => response,
                other => panic!("the answer {answer} parsed as {other:?}"),
            };
            assert_eq!(response.id, request.id, "{answer}");
            let value: Value = serde_json::from_str(&answer).expect("the answer is JSON");
            match response.outcome {
                Ok(result) => assert!(result.is_object(), "a result is an object: {answer}"),
                Err(error) => {
                    assert!(value["error"]["code"].is_i64(), "{answer}");
                    assert!(!error.message.is_empty(), "an error says why: {answer}");
                }
            }
        }
    }
});
