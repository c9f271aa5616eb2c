//! Prompts, resources and resource templates over the same application state, and what a
//! client reads of them (in memory: `actix_mcp::testing::connect`).
//!
//! Run: `cargo run --features client --example prompts_and_resources`

use std::collections::BTreeMap;

use actix_mcp::client::Client;
use actix_mcp::prelude::*;
use actix_mcp::{ResourceDef, ResourceTemplateDef, UriVars};
use schemars::JsonSchema;
use serde::Deserialize;

/// The application's notes, by id: shared by every handler below through `State`.
struct Notes(BTreeMap<&'static str, &'static str>);

/// Arguments of the `review` prompt.
#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// Id of the note to review.
    id: String,
}

#[actix::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let notes = Notes(BTreeMap::from([
        ("groceries", "eggs, flour"),
        ("todo", "write docs"),
    ]));
    let server = Server::builder("notes", "1.0.0")
        .state(notes)
        // A fixed resource: the list of notes.
        .resource(ResourceDef::new(
            "notes://index",
            "index",
            |State(notes): State<Notes>| async move {
                notes.0.keys().copied().collect::<Vec<_>>().join("\n")
            },
        ))
        // A template: every `notes://{id}` URI, read with the variables it matched.
        .resource_template(
            ResourceTemplateDef::new(
                "notes://{id}",
                "note",
                |vars: UriVars, State(notes): State<Notes>| async move {
                    let id = vars.get("id").unwrap_or_default();
                    notes
                        .0
                        .get(id)
                        .map(|text| text.to_string())
                        .ok_or_else(|| McpError::resource_not_found(&format!("notes://{id}")))
                },
            )
            .mime_type("text/plain"),
        )
        // A prompt with typed arguments that embeds a note.
        .prompt(PromptDef::new(
            "review",
            |Params(args): Params<ReviewArgs>, State(notes): State<Notes>| async move {
                let text = notes
                    .0
                    .get(args.id.as_str())
                    .copied()
                    .unwrap_or("(no such note)");
                PromptMessage::user_text(format!(
                    "Review this note and suggest one improvement:\n{text}"
                ))
            },
        ))
        .build()?;

    let client = actix_mcp::testing::connect(&server, Client::builder("reader", "1.0.0")).await?;
    println!(
        "index: {:?}",
        client.read_resource("notes://index").await?.text_content()
    );
    println!(
        "todo: {:?}",
        client.read_resource("notes://todo").await?.text_content()
    );
    let missing = client.read_resource("notes://nope").await;
    println!(
        "nope: {}",
        missing.err().map_or("read?!".into(), |err| err.to_string())
    );
    for message in client
        .get_prompt("review", [("id", "groceries")])
        .await?
        .messages
    {
        println!(
            "prompt {:?}: {}",
            message.role,
            message.content.as_text().unwrap_or_default()
        );
    }
    client.close().await;
    Ok(())
}
