//! Completion: a completer per prompt argument or template variable, which sees what is typed
//! so far and the arguments already chosen; and a client asking for suggestions (in memory).
//!
//! Run: `cargo run --features client --example completion`

use actix_mcp::client::Client;
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CompleteRequestParams, CompletionArgument, CompletionContext, Reference,
};
use actix_mcp::{ResourceTemplateDef, UriVars};
use schemars::JsonSchema;
use serde::Deserialize;

const LANGUAGES: [&str; 4] = ["english", "esperanto", "french", "german"];

/// Arguments of the `translate` prompt.
#[derive(Deserialize, JsonSchema)]
struct TranslateArgs {
    /// The target language.
    language: String,
    /// A regional variant of it.
    dialect: Option<String>,
}

/// The choices that start with what the user typed.
fn matching(choices: &[&str], typed: &str) -> Vec<String> {
    choices
        .iter()
        .filter(|c| c.starts_with(typed))
        .map(|c| c.to_string())
        .collect()
}

#[actix::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let translate = PromptDef::new(
        "translate",
        |Params(args): Params<TranslateArgs>| async move {
            let dialect = args.dialect.map(|d| format!(" ({d})")).unwrap_or_default();
            PromptMessage::user_text(format!("Translate into {}{dialect}.", args.language))
        },
    )
    .complete("language", |request: CompleteRequestParams| async move {
        matching(&LANGUAGES, &request.argument.value)
    })
    // The dialects offered depend on the language already chosen (the request's context).
    .complete("dialect", |request: CompleteRequestParams| async move {
        let chosen = request
            .context
            .and_then(|c| c.arguments)
            .and_then(|a| a.get("language").cloned());
        let dialects: &[&str] = match chosen.as_deref() {
            Some("english") => &["american", "australian", "british"],
            Some("french") => &["belgian", "canadian", "swiss"],
            _ => &[],
        };
        matching(dialects, &request.argument.value)
    });
    let docs = ResourceTemplateDef::new("docs://{topic}", "docs", |vars: UriVars| async move {
        format!("All about {}.", vars.get("topic").unwrap_or_default())
    })
    .complete("topic", |request: CompleteRequestParams| async move {
        matching(
            &["actors", "mailboxes", "supervision"],
            &request.argument.value,
        )
    });
    let server = Server::builder("completion", "1.0.0")
        .prompt(translate)
        .resource_template(docs)
        .build()?;

    let client = actix_mcp::testing::connect(&server, Client::builder("typist", "1.0.0")).await?;
    let ask = async |reference: Reference,
                     name: &str,
                     typed: &str,
                     context: Option<CompletionContext>| {
        let result = client
            .complete(reference, CompletionArgument::new(name, typed), context)
            .await?;
        println!("{name} {typed:?}: {}", result.completion.values.join(", "));
        Ok::<_, actix_mcp::client::ClientError>(())
    };
    ask(Reference::prompt("translate"), "language", "e", None).await?;
    let english = CompletionContext {
        arguments: Some([("language".to_owned(), "english".to_owned())].into()),
    };
    ask(
        Reference::prompt("translate"),
        "dialect",
        "a",
        Some(english),
    )
    .await?;
    ask(Reference::resource("docs://{topic}"), "topic", "m", None).await?;
    client.close().await;
    Ok(())
}
