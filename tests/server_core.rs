//! The server core in process: [`Server::handle_json`] runs each request through the runtime's
//! `InFlight` and `ToolCall` actors without a transport. Every message the server answers is
//! validated against the MCP schema (its envelope and its result type).
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_mcp::protocol::method;
use actix_mcp::{
    BuildError, ExceptionReport, Json, Params, RequestContext, RequestEvent, ResourceDef,
    ResourceHandler, ResourceTemplateDef, ResourceTemplateHandler, Server, ServerBuilder, ToolDef,
    ToolHandler, UriVars,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use common::in_process::{call_tool, error, result, send};

/// Arguments of the echo tool.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    message: String,
}

fn echo_tool(name: &str) -> actix_mcp::ToolDef {
    ToolDef::new(name, |Params(args): Params<EchoArgs>| async move {
        args.message
    })
    .description("Echoes its message")
}

fn builder() -> ServerBuilder {
    Server::builder("core-test", "1.0.0")
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn schema_validation_is_not_vacuous() {
    let bad = json!({"content": "not an array"});
    let outcome = std::panic::catch_unwind(|| common::assert_valid("CallToolResult", &bad));
    assert!(
        outcome.is_err(),
        "a malformed CallToolResult must be refused"
    );
    common::assert_valid(
        "CallToolResult",
        &json!({"content": [{"type": "text", "text": "ok"}]}),
    );
}

#[actix_rt::test]
async fn tools_list_pages_through_every_tool_and_refuses_a_bad_cursor() {
    let mut b = builder().page_size(2);
    for i in 0..5 {
        b = b.tool(echo_tool(&format!("t{i}")));
    }
    let server = b.build().unwrap();

    let mut seen = Vec::new();
    let mut pages = Vec::new();
    let mut params = json!({});
    loop {
        let page = result(&server, method::TOOLS_LIST, params, "ListToolsResult").await;
        let names = names(&page, "tools");
        pages.push(names.len());
        seen.extend(names);
        match page.get("nextCursor") {
            Some(cursor) => params = json!({"cursor": cursor}),
            None => break,
        }
    }
    assert_eq!(pages, [2, 2, 1]);
    assert_eq!(seen, ["t0", "t1", "t2", "t3", "t4"]);

    let err = error(
        &server,
        method::TOOLS_LIST,
        json!({"cursor": "not-a-cursor"}),
        -32602,
    )
    .await;
    assert_eq!(err["message"], "invalid cursor: \"not-a-cursor\"");
}

#[actix_rt::test]
async fn define_tool_at_run_time_lists_and_calls_it() {
    let server = builder().tool(echo_tool("first")).build().unwrap();
    server.define_tool(echo_tool("late")).unwrap();

    let list = result(&server, method::TOOLS_LIST, json!({}), "ListToolsResult").await;
    assert_eq!(names(&list, "tools"), ["first", "late"]);
    let called = call_tool(&server, "late", json!({"message": "added later"})).await;
    assert_eq!(
        called,
        json!({"content": [{"type": "text", "text": "added later"}]})
    );

    assert!(server.remove_tool("late"));
    let err = error(
        &server,
        method::TOOLS_CALL,
        json!({"name": "late", "arguments": {"message": "x"}}),
        -32602,
    )
    .await;
    assert_eq!(err["message"], "unknown tool: late");
}

/// Arguments of the custom `add` method.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[actix_rt::test]
async fn custom_methods_answer_and_cannot_shadow_protocol_methods() {
    let server = builder()
        .custom_method("add", |Params(args): Params<AddArgs>| async move {
            json!({"sum": args.a + args.b})
        })
        .build()
        .unwrap();
    let response = send(
        &server,
        json!({"jsonrpc": "2.0", "id": 7, "method": "add", "params": {"a": 2, "b": 40}}),
    )
    .await;
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 7, "result": {"sum": 42}})
    );
    let err = error(&server, "add", json!({"a": "two"}), -32602).await;
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid arguments"),
        "{err}"
    );
    error(&server, "subtract", json!({}), -32601).await;

    let refused = builder()
        .custom_method("tools/list", || async { json!({}) })
        .build()
        .unwrap_err();
    assert_eq!(
        refused,
        BuildError::MethodAlreadyDefined("tools/list".into())
    );
}

fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "core-test-client", "version": "1"},
    })
}

#[actix_rt::test]
async fn a_pinned_protocol_version_is_answered_whatever_the_client_asks() {
    let server = builder()
        .protocol_version("2024-11-05")
        .tool(echo_tool("echo"))
        .build()
        .unwrap();
    let init = result(
        &server,
        method::INITIALIZE,
        initialize_params("2025-11-25"),
        "InitializeResult",
    )
    .await;
    assert_eq!(init["protocolVersion"], "2024-11-05");
    assert_eq!(
        init["serverInfo"],
        json!({"name": "core-test", "version": "1.0.0"})
    );

    let refused = builder()
        .protocol_version("2099-01-01")
        .build()
        .unwrap_err();
    assert_eq!(
        refused,
        BuildError::UnsupportedProtocolVersion("2099-01-01".into())
    );
}

#[actix_rt::test]
async fn a_panicking_tool_is_reported_and_answered_with_a_generic_error() {
    let reports: Arc<Mutex<Vec<ExceptionReport>>> = Arc::default();
    let sink = reports.clone();
    let server = builder()
        .exception_reporter(move |report| sink.lock().unwrap().push(report.clone()))
        .tool(
            ToolDef::new("explode", |Params(args): Params<EchoArgs>| async move {
                if !args.message.is_empty() {
                    panic!("boom: {}", args.message);
                }
                args.message
            })
            .description("Panics"),
        )
        .build()
        .unwrap();

    let called = call_tool(&server, "explode", json!({"message": "secret detail"})).await;
    assert_eq!(
        called,
        json!({
            "content": [{"type": "text", "text": "tool `explode` failed with an internal error"}],
            "isError": true,
        })
    );
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].message, "boom: secret detail");
    assert!(reports[0].panicked);
    assert_eq!(
        reports[0].site,
        actix_mcp::ErrorSite::Tool {
            name: "explode".into(),
            arguments: json!({"message": "secret detail"}),
        }
    );
}

#[actix_rt::test]
async fn around_request_sees_method_tool_arguments_and_duration() {
    let events: Arc<Mutex<Vec<RequestEvent>>> = Arc::default();
    let sink = events.clone();
    let server = builder()
        .around_request(move |event| sink.lock().unwrap().push(event.clone()))
        .tool(
            ToolDef::new("nap", |Params(args): Params<EchoArgs>| async move {
                tokio::time::sleep(Duration::from_millis(30)).await;
                args.message
            })
            .description("Sleeps 30 ms, then echoes"),
        )
        .build()
        .unwrap();

    call_tool(&server, "nap", json!({"message": "zz"})).await;
    error(
        &server,
        method::TOOLS_CALL,
        json!({"name": "missing", "arguments": {}}),
        -32602,
    )
    .await;

    let bad = call_tool(&server, "nap", json!({"message": 5})).await;
    assert_eq!(bad["isError"], true);

    let events = events.lock().unwrap();
    assert_eq!(events.len(), 3, "{events:?}");
    let ok = &events[0];
    assert_eq!(ok.method, "tools/call");
    assert_eq!(ok.tool_name.as_deref(), Some("nap"));
    assert_eq!(ok.tool_arguments, Some(json!({"message": "zz"})));
    assert_eq!(ok.error, None);
    assert!(
        ok.duration >= Duration::from_millis(30),
        "{:?}",
        ok.duration
    );
    assert!(ok.duration < common::WAIT, "{:?}", ok.duration);
    let failed = &events[1];
    assert_eq!(failed.tool_name.as_deref(), Some("missing"));
    assert_eq!(failed.error.as_deref(), Some("-32602"));
    // A tool failure the model sees is still a failure to the hook.
    let is_error = &events[2];
    assert_eq!(is_error.tool_arguments, Some(json!({"message": 5})));
    assert_eq!(is_error.error.as_deref(), Some("isError"));
}

/// Arguments of the `stats` tool.
#[derive(Deserialize, JsonSchema)]
struct StatsArgs {
    values: Vec<f64>,
}

/// Output of the `stats` tool.
#[derive(Serialize, JsonSchema)]
struct StatsOutput {
    count: usize,
    sum: f64,
}

struct Stats;

impl ToolHandler for Stats {
    type Args = StatsArgs;
    type Output = Json<StatsOutput>;

    fn name(&self) -> String {
        "stats".into()
    }

    fn description(&self) -> Option<String> {
        Some("Counts and sums numbers".into())
    }

    async fn call(&self, args: StatsArgs, _cx: RequestContext) -> Json<StatsOutput> {
        Json(StatsOutput {
            count: args.values.len(),
            sum: args.values.iter().sum(),
        })
    }
}

#[actix_rt::test]
async fn a_tool_with_json_output_declares_its_schema_and_returns_structured_content() {
    let server = builder().tool(Stats).build().unwrap();
    let list = result(&server, method::TOOLS_LIST, json!({}), "ListToolsResult").await;
    let definition = &list["tools"][0];
    assert_eq!(definition["name"], "stats");
    assert_eq!(definition["description"], "Counts and sums numbers");
    let output = &definition["outputSchema"];
    assert_eq!(output["type"], "object");
    assert_eq!(output["required"], json!(["count", "sum"]));
    assert_eq!(output["properties"]["sum"]["type"], "number");
    assert_eq!(definition["inputSchema"]["required"], json!(["values"]));

    let called = call_tool(&server, "stats", json!({"values": [1.0, 2.0, 3.5]})).await;
    assert_eq!(called["structuredContent"], json!({"count": 3, "sum": 6.5}));
    let text = called["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"count": 3, "sum": 6.5})
    );
    assert_eq!(called.get("isError"), None);
}

#[actix_rt::test]
async fn a_resource_template_reads_with_its_variables() {
    let server = builder()
        .resource_template(
            ResourceTemplateDef::new(
                "test://template/{id}/data",
                "data",
                |UriVars(vars): UriVars| async move { format!("data for {}", vars["id"]) },
            )
            .mime_type("text/plain"),
        )
        .resource_template(ResourceTemplateDef::new(
            "test://item/{id}",
            "item",
            |UriVars(vars): UriVars| async move { format!("item {}", vars["id"]) },
        ))
        .build()
        .unwrap();

    let list = result(
        &server,
        method::RESOURCES_TEMPLATES_LIST,
        json!({}),
        "ListResourceTemplatesResult",
    )
    .await;
    assert_eq!(
        list["resourceTemplates"],
        json!([{"uriTemplate": "test://template/{id}/data", "name": "data",
                "mimeType": "text/plain"},
               {"uriTemplate": "test://item/{id}", "name": "item"}])
    );

    let read = result(
        &server,
        method::RESOURCES_READ,
        json!({"uri": "test://template/42/data"}),
        "ReadResourceResult",
    )
    .await;
    assert_eq!(
        read,
        json!({"contents": [{"uri": "test://template/42/data", "mimeType": "text/plain",
                             "text": "data for 42"}]})
    );

    // A variable at the very end of the uri (this once panicked while matching).
    let read = result(
        &server,
        method::RESOURCES_READ,
        json!({"uri": "test://item/7"}),
        "ReadResourceResult",
    )
    .await;
    assert_eq!(
        read,
        json!({"contents": [{"uri": "test://item/7", "text": "item 7"}]})
    );

    let err = error(
        &server,
        method::RESOURCES_READ,
        json!({"uri": "test://elsewhere/42"}),
        -32002,
    )
    .await;
    assert_eq!(err["data"], json!({"uri": "test://elsewhere/42"}));
}

#[actix_rt::test]
async fn a_resource_listed_under_a_templates_pattern_is_read_by_the_template() {
    let server = builder()
        .resource_template(
            ResourceTemplateDef::new(
                "notes://{id}",
                "note",
                |UriVars(vars): UriVars| async move { format!("note {}", vars["id"]) },
            )
            .mime_type("text/markdown"),
        )
        .build()
        .unwrap();
    // Listed at run time without a handler of its own, as an application lists what it made.
    server
        .define_resource(actix_mcp::protocol::Resource::new(
            "notes://1",
            "first note",
        ))
        .unwrap();
    // And one with its own handler, which comes first.
    server
        .define_resource(ResourceDef::new("notes://2", "second note", || async {
            "its own"
        }))
        .unwrap();

    let list = result(
        &server,
        method::RESOURCES_LIST,
        json!({}),
        "ListResourcesResult",
    )
    .await;
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["notes://1", "notes://2"]);
    let read = result(
        &server,
        method::RESOURCES_READ,
        json!({"uri": "notes://1"}),
        "ReadResourceResult",
    )
    .await;
    assert_eq!(
        read,
        json!({"contents": [{"uri": "notes://1", "mimeType": "text/markdown", "text": "note 1"}]})
    );
    let read = result(
        &server,
        method::RESOURCES_READ,
        json!({"uri": "notes://2"}),
        "ReadResourceResult",
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "its own");
}

#[actix_rt::test]
async fn a_tool_past_its_timeout_answers_is_error() {
    let server = builder()
        .tool(
            ToolDef::new("slow", |_cx: RequestContext| async move {
                tokio::time::sleep(Duration::from_secs(10)).await;
                "woke up"
            })
            .description("Sleeps ten seconds")
            .timeout(Duration::from_millis(50)),
        )
        .build()
        .unwrap();

    let started = Instant::now();
    let called = call_tool(&server, "slow", json!({})).await;
    assert_eq!(
        called,
        json!({
            "content": [{"type": "text", "text": "tool `slow` timed out after 50 ms"}],
            "isError": true,
        })
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// A resource written as a type.
struct Readme;

impl ResourceHandler for Readme {
    type Output = &'static str;
    fn uri(&self) -> String {
        "file:///readme.txt".into()
    }
    fn name(&self) -> String {
        "readme".into()
    }
    fn mime_type(&self) -> Option<String> {
        Some("text/plain".into())
    }
    async fn read(&self, _cx: RequestContext) -> &'static str {
        "read me"
    }
}

/// A resource template written as a type.
struct Item;

impl ResourceTemplateHandler for Item {
    type Output = String;
    fn uri_template(&self) -> String {
        "test://item/{id}".into()
    }
    fn name(&self) -> String {
        "item".into()
    }
    fn description(&self) -> Option<String> {
        Some("An item".into())
    }
    async fn read(&self, vars: UriVars, _cx: RequestContext) -> String {
        format!("item {}", vars.get("id").unwrap_or_default())
    }
}

#[actix_rt::test]
async fn resources_and_templates_written_as_types_are_listed_and_read() {
    let server = builder()
        .resource(Readme)
        .resource_template(ResourceTemplateDef::from(Item).title("Items"))
        .build()
        .unwrap();
    let list = result(
        &server,
        method::RESOURCES_LIST,
        json!({}),
        "ListResourcesResult",
    )
    .await;
    assert_eq!(
        list["resources"],
        json!([{"uri": "file:///readme.txt", "name": "readme", "mimeType": "text/plain"}])
    );
    let templates = result(
        &server,
        method::RESOURCES_TEMPLATES_LIST,
        json!({}),
        "ListResourceTemplatesResult",
    )
    .await;
    assert_eq!(
        templates["resourceTemplates"],
        json!([{"uriTemplate": "test://item/{id}", "name": "item", "title": "Items",
                "description": "An item"}])
    );
    for (uri, text) in [
        ("file:///readme.txt", "read me"),
        ("test://item/7", "item 7"),
    ] {
        let read = result(
            &server,
            method::RESOURCES_READ,
            json!({"uri": uri}),
            "ReadResourceResult",
        )
        .await;
        assert_eq!(read["contents"][0]["text"], text, "{read}");
    }
}

#[actix_rt::test]
async fn define_resource_refuses_an_invalid_scope_as_the_builder_does() {
    let bad = || {
        ResourceDef::new("test://secret", "secret", || async { "s" })
            .required_scopes(["not a token"])
    };
    let refused = builder().resource(bad()).build();
    assert!(
        matches!(refused, Err(BuildError::InvalidScope { .. })),
        "{:?}",
        refused.err()
    );
    let server = builder()
        .resource(ResourceDef::new("test://base", "base", || async { "b" }))
        .build()
        .unwrap();
    let defined = server.define_resource(bad());
    assert!(
        matches!(defined, Err(BuildError::InvalidScope { .. })),
        "{defined:?}"
    );
    let list = result(
        &server,
        method::RESOURCES_LIST,
        json!({}),
        "ListResourcesResult",
    )
    .await;
    assert_eq!(
        names(&list, "resources"),
        ["base"],
        "a refused one is not served"
    );
    server
        .define_resource(ResourceDef::new("test://public", "public", || async {
            "p"
        }))
        .unwrap();
    let list = result(
        &server,
        method::RESOURCES_LIST,
        json!({}),
        "ListResourcesResult",
    )
    .await;
    assert_eq!(names(&list, "resources"), ["base", "public"]);
}
