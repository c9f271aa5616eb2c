//! The client side of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance client --command ...`): the suite starts a mock server
//! per scenario and runs this program with the server's URL as its last argument and the
//! scenario's name in `MCP_CONFORMANCE_SCENARIO`.
//!
//! Run by `tests/conformance/run-client.sh` (or `run.sh --client`; see the client section of
//! `tests/conformance/SCENARIOS.md`); by hand:
//! `MCP_CONFORMANCE_SCENARIO=tools_call cargo run --example conformance_client -- http://127.0.0.1:PORT/mcp`
//!
//! Exit status: 0 when the scenario's steps completed, 1 when one failed (the error on
//! stderr), 2 on a missing URL or an unknown scenario (the `auth/*` scenarios: no OAuth yet).

use std::process::ExitCode;

use actix_mcp::client::transport::HttpTransport;
use actix_mcp::client::{Client, ClientBuilder, ClientError, fill_elicitation_defaults};
use actix_mcp::protocol::{ElicitAction, ElicitRequestParams, ElicitResult};
use serde_json::json;

fn builder() -> ClientBuilder {
    Client::builder("actix-mcp-conformance-client", env!("CARGO_PKG_VERSION"))
}

/// `initialize`: connect, list the tools, close.
async fn initialize(url: &str) -> Result<(), ClientError> {
    let client = builder().connect(HttpTransport::new(url)).await?;
    client.tools().await?;
    client.close().await;
    Ok(())
}

/// `tools_call`: list the tools and call `add_numbers`.
async fn tools_call(url: &str) -> Result<(), ClientError> {
    let client = builder().connect(HttpTransport::new(url)).await?;
    client.tools().await?;
    let result = client
        .call_tool("add_numbers", json!({"a": 2, "b": 3}))
        .await?;
    eprintln!("add_numbers: {}", result.text_content());
    client.close().await;
    Ok(())
}

/// `elicitation-sep1034-client-defaults`: accept the form with every field the user left
/// out filled from the schema's defaults.
async fn elicitation_defaults(url: &str) -> Result<(), ClientError> {
    let client = builder()
        .elicitation(|params: ElicitRequestParams, _| async move {
            let mut result = ElicitResult::new(ElicitAction::Accept);
            fill_elicitation_defaults(&params, &mut result);
            Ok(result)
        })
        .connect(HttpTransport::new(url))
        .await?;
    client.tools().await?;
    client
        .call_tool("test_client_elicitation_defaults", ())
        .await?;
    client.close().await;
    Ok(())
}

/// `sse-retry`: the server closes the answer's stream early; the transport resumes it with
/// `Last-Event-ID` after the advertised `retry`.
async fn sse_retry(url: &str) -> Result<(), ClientError> {
    let client = builder().connect(HttpTransport::new(url)).await?;
    client.tools().await?;
    client.call_tool("test_reconnection", ()).await?;
    client.close().await;
    Ok(())
}

/// `json-schema-2020-12-preservation`: hand the focal tool's input schema back verbatim.
async fn schema_preservation(url: &str) -> Result<(), ClientError> {
    let client = builder().connect(HttpTransport::new(url)).await?;
    let tools = client.tools().await?;
    let schema = tools
        .iter()
        .find(|tool| tool.name == "json_schema_2020_12_tool")
        .map(|tool| tool.input_schema.clone())
        .ok_or_else(|| ClientError::Protocol("the focal tool is missing".into()))?;
    client
        .call_tool("json_schema_echo", json!({ "schema": schema }))
        .await?;
    client.close().await;
    Ok(())
}

#[actix_rt::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: conformance_client <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let outcome = match scenario.as_str() {
        "initialize" => initialize(&url).await,
        "tools_call" => tools_call(&url).await,
        "elicitation-sep1034-client-defaults" => elicitation_defaults(&url).await,
        "sse-retry" => sse_retry(&url).await,
        "json-schema-2020-12-preservation" => schema_preservation(&url).await,
        other => {
            eprintln!("unknown scenario {other:?}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{scenario}: {err}");
            ExitCode::from(1)
        }
    }
}
