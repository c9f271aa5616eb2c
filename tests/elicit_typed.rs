//! Typed elicitation: `RequestContext::elicit_as::<T>()` sends `T`'s schema as the form and reads
//! the answer as `T`; `ElicitResult::accept` answers with a typed value on the client side.
//! Both eras, over the in-memory pair: a 2025-11-25 session gets a real request, a 2026-07-28
//! call an input round.
#![cfg(all(feature = "server", feature = "client"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use actix_mcp::client::{Client, ClientBuilder, Lifecycle};
use actix_mcp::protocol::{ElicitRequestParams, ElicitResult};
use actix_mcp::testing::connect;
use actix_mcp::{Elicited, McpError, RequestContext, Server, ToolDef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use common::within;

/// Where to ship the order.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
struct Address {
    /// The street and number.
    street: String,
    /// The city.
    city: String,
    /// Floors up.
    floor: u8,
    /// Anything the courier should know.
    note: Option<String>,
}

/// Not a form: a nested object.
#[derive(Deserialize, JsonSchema)]
struct Nested {
    #[allow(dead_code)]
    address: Address,
}

fn server() -> Server {
    Server::builder("typed-forms", "1.0.0")
        .tool(ToolDef::new("ship", |cx: RequestContext| async move {
            Ok::<_, McpError>(match cx.elicit_as::<Address>("Where to?").await? {
                Elicited::Accepted(a) => format!("{} / {} / {}", a.street, a.city, a.floor),
                Elicited::Declined => "declined".to_owned(),
                Elicited::Cancelled => "cancelled".to_owned(),
            })
        }))
        .tool(ToolDef::new("nested", |cx: RequestContext| async move {
            cx.elicit_as::<Nested>("Nested?").await.map(|_| "answered")
        }))
        .build()
        .unwrap()
}

/// A client that answers every form with `answer`, recording the schemas it was shown.
fn client(
    lifecycle: Lifecycle,
    seen: Arc<Mutex<Vec<Value>>>,
    answer: fn() -> ElicitResult,
) -> ClientBuilder {
    Client::builder("forms", "1.0.0")
        .lifecycle(lifecycle)
        .elicitation(move |params: ElicitRequestParams, _| {
            let seen = seen.clone();
            async move {
                if let ElicitRequestParams::Form(form) = params {
                    seen.lock()
                        .unwrap()
                        .push(serde_json::to_value(&form.requested_schema).unwrap());
                }
                Ok(answer())
            }
        })
}

fn accepted() -> ElicitResult {
    ElicitResult::accept(Address {
        street: "1 Main St".into(),
        city: "Lyon".into(),
        floor: 3,
        note: None,
    })
    .unwrap()
}

fn wrong_shape() -> ElicitResult {
    ElicitResult::accept(json!({"street": "1 Main St"})).unwrap()
}

#[actix_rt::test]
async fn a_typed_form_is_asked_and_read_in_both_eras() {
    let server = server();
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let c = within(connect(&server, client(lifecycle, seen.clone(), accepted)))
            .await
            .unwrap();
        let result = within(c.call_tool("ship", ())).await.unwrap();
        assert!(!result.is_error(), "{lifecycle:?}: {result:?}");
        assert_eq!(result.text_content(), "1 Main St / Lyon / 3");
        // The form is `Address`'s schema, its doc comments as descriptions.
        let schema = seen.lock().unwrap()[0].clone();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["city"]["type"], "string");
        assert_eq!(schema["properties"]["city"]["description"], "The city.");
        assert_eq!(schema["properties"]["floor"]["type"], "integer");
        // An optional field: not required, and a plain string.
        assert_eq!(schema["properties"]["note"]["type"], "string");
        assert_eq!(schema["required"], json!(["street", "city", "floor"]));
        within(c.close()).await;

        let c = within(connect(
            &server,
            client(lifecycle, Arc::default(), ElicitResult::decline),
        ))
        .await
        .unwrap();
        let result = within(c.call_tool("ship", ())).await.unwrap();
        assert_eq!(result.text_content(), "declined");
        within(c.close()).await;
    }
}

#[actix_rt::test]
async fn values_that_are_not_a_t_and_a_t_that_is_not_a_form_are_errors() {
    let server = server();
    let c = within(connect(
        &server,
        client(Lifecycle::V2025, Arc::default(), wrong_shape),
    ))
    .await
    .unwrap();
    let result = within(c.call_tool("ship", ())).await.unwrap();
    assert!(result.is_error(), "{result:?}");
    assert!(
        result.text_content().contains("not a") && result.text_content().contains("Address"),
        "{}",
        result.text_content()
    );

    let seen = Arc::new(Mutex::new(Vec::new()));
    let c = within(connect(
        &server,
        client(Lifecycle::V2025, seen.clone(), accepted),
    ))
    .await
    .unwrap();
    let answer = within(c.call_tool("nested", ())).await;
    // Refused before anything is sent: nothing reached the client's handler.
    assert!(seen.lock().unwrap().is_empty());
    match answer {
        Ok(result) => assert!(result.is_error(), "{result:?}"),
        Err(error) => assert!(
            error.to_string().contains("cannot be an elicitation form"),
            "{error}"
        ),
    }
}

#[test]
fn accept_refuses_values_that_are_not_an_object() {
    assert!(ElicitResult::accept(42).is_err());
    assert!(ElicitResult::accept(json!({"a": 1})).is_ok());
}
