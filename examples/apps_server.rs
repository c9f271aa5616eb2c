//! An MCP App (the `io.modelcontextprotocol/ui` extension): a tool, `weather`, whose results a
//! host renders in an HTML view, `ui://weather/dashboard`, served over Streamable HTTP.
//!
//! Run: `cargo run --example apps_server -- --port 8080`, then connect a host
//! that renders MCP Apps to `http://127.0.0.1:8080/mcp`. A host that does not gets the tool's
//! text; the tool's structured content is what the view draws.

use actix_mcp::prelude::*;
use actix_mcp::protocol::apps::{UiCsp, UiToolMeta, UiVisibility};
use actix_mcp::server::apps::{AppView, Apps};
use clap::Parser;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The view: it draws the `structuredContent` of the tool result the host hands it.
const DASHBOARD: &str = r#"<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>Weather</title></head>
<body>
<h1 id="city">Weather</h1>
<p id="conditions">Waiting for the forecast…</p>
<script>
window.addEventListener("message", (event) => {
  const message = event.data;
  if (message && message.method === "ui/notifications/tool-result") {
    const forecast = message.params.structuredContent || {};
    document.getElementById("city").textContent = forecast.city;
    document.getElementById("conditions").textContent =
      forecast.conditions + ", " + forecast.temperature + "°C";
  }
});
window.parent.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/initialize",
  params: { appInfo: { name: "weather-dashboard", version: "1.0.0" }, appCapabilities: {} } }, "*");
</script>
</body>
</html>
"#;

#[derive(Parser)]
struct Cli {
    /// The port to listen on (loopback).
    #[arg(long, default_value_t = 8080)]
    port: u16,
}

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// The city.
    city: String,
}

/// The server: the view, the tool that links to it, and an app-only tool the view may call.
fn server() -> Result<Server, actix_mcp::BuildError> {
    let apps = Apps::new().view(
        AppView::new("ui://weather/dashboard", "Weather dashboard", DASHBOARD)
            .description("Today's weather for a city")
            .csp(UiCsp::default())
            .prefers_border(true),
    );
    Server::builder("weather-app", env!("CARGO_PKG_VERSION"))
        .extension(apps.extension())
        .tool(
            ToolDef::new(
                "weather",
                |Params(args): Params<WeatherArgs>, cx: RequestContext| async move {
                    let forecast =
                        json!({"city": args.city, "conditions": "sunny", "temperature": 21});
                    let text = if cx.client_supports_apps() {
                        format!("Today's weather for {} is on the dashboard.", args.city)
                    } else {
                        format!("{}: sunny, 21°C", args.city)
                    };
                    let mut result = CallToolResult::text(text);
                    result.structured_content = Some(forecast);
                    result
                },
            )
            .description("Today's weather for a city, rendered on a dashboard")
            .ui(UiToolMeta {
                resource_uri: Some("ui://weather/dashboard".into()),
                visibility: None,
            }),
        )
        .tool(
            ToolDef::new("refresh", || async { "refreshed" })
                .description("Refreshes the dashboard (for the view only)")
                .ui(UiToolMeta {
                    resource_uri: Some("ui://weather/dashboard".into()),
                    visibility: Some(vec![UiVisibility::App]),
                }),
        )
        .build()
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let mcp = server()
        .map_err(std::io::Error::other)?
        .http("/mcp")
        .build()
        .map_err(std::io::Error::other)?;
    actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
        .bind(("127.0.0.1", cli.port))?
        .run()
        .await
}
