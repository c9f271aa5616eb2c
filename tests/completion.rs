//! `completion/complete` in process: the server's handler, per-argument completers of prompts
//! and templates, references checked, and every answer capped at 100 values.
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used)]

mod common;

use actix_mcp::protocol::{CompleteResult, Completion, PromptMessage, method};
use actix_mcp::{Params, PromptDef, ResourceTemplateDef, Server, ServerBuilder, UriVars};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use common::in_process::{error, result};

fn builder() -> ServerBuilder {
    Server::builder("completion-test", "1.0.0")
}

/// Arguments of the `pick` prompt.
#[derive(Deserialize, JsonSchema)]
struct PickArgs {
    choice: String,
}

#[actix_rt::test]
async fn completion_is_capped_at_100_values_with_has_more() {
    let server = builder()
        .prompt(
            PromptDef::new("pick", |Params(args): Params<PickArgs>| async move {
                PromptMessage::user_text(args.choice)
            })
            .description("Picks a value"),
        )
        .completion(|params, _cx| async move {
            let prefix = params.argument.value;
            Ok(CompleteResult {
                completion: Completion {
                    values: (0..150).map(|i| format!("{prefix}{i}")).collect(),
                    total: None,
                    has_more: None,
                },
                meta: None,
            })
        })
        .build()
        .unwrap();

    let completed = result(
        &server,
        method::COMPLETION_COMPLETE,
        json!({"ref": {"type": "ref/prompt", "name": "pick"},
               "argument": {"name": "choice", "value": "v"}}),
        "CompleteResult",
    )
    .await;
    let completion = &completed["completion"];
    let values = completion["values"].as_array().unwrap();
    assert_eq!(values.len(), 100);
    assert_eq!(values[0], "v0");
    assert_eq!(values[99], "v99");
    assert_eq!(completion["hasMore"], true);
    assert_eq!(completion["total"], 150);

    let err = error(
        &server,
        method::COMPLETION_COMPLETE,
        json!({"ref": {"type": "ref/prompt", "name": "pick"},
               "argument": {"name": "nope", "value": ""}}),
        -32602,
    )
    .await;
    assert_eq!(err["message"], "prompt `pick` has no argument `nope`");
}

/// Arguments of the `translate` prompt.
#[derive(Deserialize, JsonSchema)]
struct TranslateArgs {
    from: String,
    to: String,
}

#[actix_rt::test]
async fn an_argument_with_a_completer_of_its_own_is_completed_by_it() {
    const LANGUAGES: [&str; 4] = ["german", "greek", "english", "french"];
    let languages = |request: actix_mcp::protocol::CompleteRequestParams| async move {
        // The other arguments' values ride along: the source language is not offered again.
        let chosen = request
            .context
            .and_then(|c| c.arguments)
            .and_then(|a| a.get("from").cloned());
        Ok::<_, actix_mcp::McpError>(
            LANGUAGES
                .into_iter()
                .filter(|l| l.starts_with(&request.argument.value))
                .filter(|l| chosen.as_deref() != Some(*l))
                .map(String::from)
                .collect(),
        )
    };
    let server = builder()
        .prompt(
            PromptDef::new("translate", |Params(a): Params<TranslateArgs>| async move {
                PromptMessage::user_text(format!("{} to {}", a.from, a.to))
            })
            .complete("to", languages),
        )
        .resource_template(
            ResourceTemplateDef::new("items://{id}", "item", |UriVars(v): UriVars| async move {
                format!("item {}", v["id"])
            })
            .complete("id", || async {
                (0..150).map(|i| i.to_string()).collect::<Vec<_>>()
            }),
        )
        // Everything else: the server's handler.
        .completion(|params, _cx| async move {
            Ok(CompleteResult {
                completion: Completion {
                    values: vec![format!("global:{}", params.argument.name)],
                    total: None,
                    has_more: None,
                },
                meta: None,
            })
        })
        .build()
        .unwrap();

    let complete = |params: Value| {
        let server = server.clone();
        async move {
            result(
                &server,
                method::COMPLETION_COMPLETE,
                params,
                "CompleteResult",
            )
            .await["completion"]
                .clone()
        }
    };
    let own = complete(json!({"ref": {"type": "ref/prompt", "name": "translate"},
                              "argument": {"name": "to", "value": "g"},
                              "context": {"arguments": {"from": "greek"}}}))
    .await;
    assert_eq!(own["values"], json!(["german"]));
    assert_eq!(own["total"], 1);
    assert_eq!(own["hasMore"], false);

    let global = complete(json!({"ref": {"type": "ref/prompt", "name": "translate"},
                                 "argument": {"name": "from", "value": "g"}}))
    .await;
    assert_eq!(global["values"], json!(["global:from"]));

    // A template's variable, capped at 100 like any answer.
    let template = complete(
        json!({"ref": {"type": "ref/resource", "uri": "items://{id}"},
                                   "argument": {"name": "id", "value": ""}}),
    )
    .await;
    assert_eq!(template["values"].as_array().unwrap().len(), 100);
    assert_eq!(template["hasMore"], true);
    assert_eq!(template["total"], 150);
}

/// The names a completer reads from application state.
struct Names(Vec<&'static str>);

#[actix_rt::test]
async fn a_completer_takes_extractors_and_its_state_is_checked_at_build() {
    let prompt = || {
        PromptDef::new("pick", |Params(args): Params<PickArgs>| async move {
            PromptMessage::user_text(args.choice)
        })
        .complete(
            "choice",
            |request: actix_mcp::protocol::CompleteRequestParams,
             actix_mcp::State(names): actix_mcp::State<Names>| async move {
                let typed = request.argument.value;
                names
                    .0
                    .iter()
                    .filter(|n| n.starts_with(&typed))
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
            },
        )
    };
    // Without the state it reads, the server is refused before any completion runs.
    match builder().prompt(prompt()).build() {
        Err(actix_mcp::BuildError::MissingState { .. }) => {}
        other => panic!(
            "a completer's missing state must fail build(): {:?}",
            other.err()
        ),
    }
    let server = builder()
        .state(Names(vec!["alice", "albert", "bob"]))
        .prompt(prompt())
        .build()
        .unwrap();
    let answer = result(
        &server,
        method::COMPLETION_COMPLETE,
        json!({"ref": {"type": "ref/prompt", "name": "pick"},
               "argument": {"name": "choice", "value": "al"}}),
        "CompleteResult",
    )
    .await;
    assert_eq!(answer["completion"]["values"], json!(["alice", "albert"]));
}
