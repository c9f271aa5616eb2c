//! Tool boxes: modules that each export their tools, prompts, resources, templates and state
//! as one [`ToolBox`], merged into a server; collisions between boxes, or between a box and the
//! server, are errors of `build()`, as is a handler reading state that nobody registered.
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used)]

mod common;

use actix_mcp::protocol::method;
use actix_mcp::{BuildError, Server, ToolBox, ToolDef};
use serde_json::{Value, json};

use common::in_process::{call_tool, result};

/// One module of an application: notes, with their store.
mod notes {
    use std::sync::Mutex;

    use actix_mcp::prelude::*;
    use actix_mcp::protocol::{GetPromptResult, PromptMessage};
    use actix_mcp::{ToolBox, ToolDef};
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Default)]
    pub struct Store(pub Mutex<Vec<String>>);

    #[derive(Deserialize, JsonSchema)]
    pub struct Add {
        pub text: String,
    }

    pub fn toolbox() -> ToolBox {
        ToolBox::new()
            .state(Store::default())
            .tool(ToolDef::new(
                "add_note",
                |State(store): State<Store>, Params(add): Params<Add>| async move {
                    let mut notes = store.0.lock().unwrap();
                    notes.push(add.text);
                    format!("{} notes", notes.len())
                },
            ))
            .prompt(PromptDef::new(
                "summarize_notes",
                |State(store): State<Store>| async move {
                    let notes = store.0.lock().unwrap().join("; ");
                    GetPromptResult::new(vec![PromptMessage::user_text(format!(
                        "Summarize: {notes}"
                    ))])
                },
            ))
            .resource(ResourceDef::new(
                "notes://all",
                "all notes",
                |State(store): State<Store>| async move { store.0.lock().unwrap().join("\n") },
            ))
    }
}

/// Another module: a counter of its own, and a box nested in it.
mod counter {
    use std::sync::atomic::{AtomicU64, Ordering};

    use actix_mcp::prelude::*;
    use actix_mcp::{ToolBox, ToolDef};

    #[derive(Default)]
    pub struct Hits(pub AtomicU64);

    pub fn toolbox() -> ToolBox {
        let inner = ToolBox::new().tool(ToolDef::new(
            "reset",
            |State(hits): State<Hits>| async move {
                hits.0.store(0, Ordering::Relaxed);
                "reset"
            },
        ));
        ToolBox::new()
            .state(Hits::default())
            .tool(ToolDef::new("hit", |State(hits): State<Hits>| async move {
                (hits.0.fetch_add(1, Ordering::Relaxed) + 1).to_string()
            }))
            .merge(inner)
    }
}

/// Calls a tool that must succeed; the text it answered.
async fn call(server: &Server, name: &str, arguments: Value) -> String {
    let result = call_tool(server, name, arguments).await;
    assert_ne!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

#[actix_rt::test]
async fn boxes_from_two_modules_serve_beside_the_servers_own_tools() {
    let server = Server::builder("boxes", "1.0.0")
        .toolbox(notes::toolbox())
        .toolbox(counter::toolbox())
        .tool(ToolDef::new("ping", || async { "pong" }))
        .build()
        .unwrap();

    let list = result(&server, method::TOOLS_LIST, json!({}), "ListToolsResult").await;
    let mut names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["add_note", "hit", "ping", "reset"]);

    // Each box's handlers read the state it brought.
    assert_eq!(
        call(&server, "add_note", json!({"text": "one"})).await,
        "1 notes"
    );
    assert_eq!(
        call(&server, "add_note", json!({"text": "two"})).await,
        "2 notes"
    );
    assert_eq!(call(&server, "hit", json!({})).await, "1");
    assert_eq!(call(&server, "hit", json!({})).await, "2");
    assert_eq!(call(&server, "reset", json!({})).await, "reset");
    assert_eq!(call(&server, "hit", json!({})).await, "1");
    assert_eq!(call(&server, "ping", json!({})).await, "pong");

    let prompt = result(
        &server,
        method::PROMPTS_GET,
        json!({"name": "summarize_notes"}),
        "GetPromptResult",
    )
    .await;
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Summarize: one; two"
    );
    let read = result(
        &server,
        method::RESOURCES_READ,
        json!({"uri": "notes://all"}),
        "ReadResourceResult",
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "one\ntwo");
}

fn duplicate(result: Result<Server, BuildError>) -> (&'static str, String) {
    match result {
        Err(BuildError::Duplicate { kind, name }) => (kind, name),
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("built despite a collision"),
    }
}

#[test]
fn a_name_or_a_state_type_registered_twice_is_a_build_error() {
    // The same box twice: its state type comes first.
    let (kind, name) = duplicate(
        Server::builder("boxes", "1.0.0")
            .toolbox(counter::toolbox())
            .toolbox(counter::toolbox())
            .build(),
    );
    assert_eq!(kind, "state");
    assert!(name.ends_with("counter::Hits"), "{name}");

    // A box's tool against the server's own.
    let (kind, name) = duplicate(
        Server::builder("boxes", "1.0.0")
            .tool(ToolDef::new("hit", || async { "mine" }))
            .toolbox(counter::toolbox())
            .build(),
    );
    assert_eq!((kind, name.as_str()), ("tool", "hit"));

    // Two boxes with one tool name, and no state.
    let one = ToolBox::new().tool(ToolDef::new("same", || async { "a" }));
    let two = ToolBox::new().tool(ToolDef::new("same", || async { "b" }));
    let (kind, name) = duplicate(
        Server::builder("boxes", "1.0.0")
            .toolbox(one.clone())
            .toolbox(two.clone())
            .build(),
    );
    assert_eq!((kind, name.as_str()), ("tool", "same"));
    // Merged into one box first: the same error.
    let (kind, name) = duplicate(
        Server::builder("boxes", "1.0.0")
            .toolbox(one.merge(two))
            .build(),
    );
    assert_eq!((kind, name.as_str()), ("tool", "same"));

    // The server's state against a box's.
    let (kind, _) = duplicate(
        Server::builder("boxes", "1.0.0")
            .state(notes::Store::default())
            .toolbox(notes::toolbox())
            .build(),
    );
    assert_eq!(kind, "state");
}

/// State nobody registers.
struct Unregistered;

#[test]
fn a_handler_reading_state_never_registered_is_a_build_error() {
    use actix_mcp::{PromptDef, ResourceDef, ResourceTemplateDef, State};

    let missing = |result: Result<Server, BuildError>| match result {
        Err(BuildError::MissingState { kind, name, state }) => {
            assert!(state.ends_with("Unregistered"), "{state}");
            (kind, name)
        }
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("built without the state"),
    };
    let tool = || ToolDef::new("reads", |State(_): State<Unregistered>| async { "ok" });
    assert_eq!(
        missing(Server::builder("s", "1").tool(tool()).build()),
        ("tool", "reads".to_owned())
    );
    assert_eq!(
        missing(
            Server::builder("s", "1")
                .prompt(PromptDef::new("p", |State(_): State<Unregistered>| async {
                    "text".to_owned()
                }))
                .build()
        ),
        ("prompt", "p".to_owned())
    );
    assert_eq!(
        missing(
            Server::builder("s", "1")
                .resource(ResourceDef::new(
                    "test://r",
                    "r",
                    |State(_): State<Unregistered>| async { "text" }
                ))
                .build()
        ),
        ("resource", "test://r".to_owned())
    );
    assert_eq!(
        missing(
            Server::builder("s", "1")
                .resource_template(ResourceTemplateDef::new(
                    "test://t/{id}",
                    "t",
                    |State(_): State<Unregistered>| async { "text" }
                ))
                .build()
        ),
        ("resource template", "test://t/{id}".to_owned())
    );

    // Registered by the server, or by a box: it builds.
    assert!(
        Server::builder("s", "1")
            .state(Unregistered)
            .tool(tool())
            .build()
            .is_ok()
    );
    assert!(
        Server::builder("s", "1")
            .toolbox(ToolBox::new().state(Unregistered).tool(tool()))
            .build()
            .is_ok()
    );

    // At run time too.
    let server = Server::builder("s", "1").build().unwrap();
    match server.define_tool(tool()) {
        Err(BuildError::MissingState { kind: "tool", .. }) => {}
        other => panic!("defined without its state: {other:?}"),
    }
}
