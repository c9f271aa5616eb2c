//! `examples/apps_server.rs`: a host that renders MCP Apps gets the view of `weather` and its
//! content security, and the tool's structured content; a host that does not gets text.

use actix_mcp::client::transport::HttpTransport;
use actix_mcp::client::{Client, ClientExtension};
use actix_mcp::protocol::apps::{APP_MIME_TYPE, UiVisibility};
use serde_json::json;

use super::serve;
use crate::common::within;

#[tokio::test]
async fn the_weather_app_renders_for_hosts_that_can() {
    let served = serve("apps_server", &["--port", "{port}"]).await;
    for renders in [true, false] {
        let mut builder = Client::builder("host", "1.0.0");
        if renders {
            builder = builder.extension(ClientExtension::apps());
        }
        let client = within(builder.connect(HttpTransport::new(&served.url)))
            .await
            .unwrap();
        let tools = within(client.tools()).await.unwrap();
        let weather = tools.iter().find(|t| t.name == "weather").unwrap();
        let view = weather.ui().unwrap().resource_uri.unwrap();
        assert_eq!(view, "ui://weather/dashboard");
        let refresh = tools.iter().find(|t| t.name == "refresh").unwrap();
        assert!(!refresh.ui().unwrap().visible_to(UiVisibility::Model));
        let read = within(client.read_resource(&view)).await.unwrap();
        let contents = serde_json::to_value(&read.contents[0]).unwrap();
        assert_eq!(contents["mimeType"], APP_MIME_TYPE);
        assert!(
            contents["text"]
                .as_str()
                .unwrap()
                .contains("ui/notifications/tool-result")
        );
        assert_eq!(contents["_meta"]["ui"]["prefersBorder"], true);
        let result = within(client.call_tool("weather", json!({"city": "Lyon"})))
            .await
            .unwrap();
        assert_eq!(result.structured_content.as_ref().unwrap()["city"], "Lyon");
        assert_eq!(
            result.text_content().contains("dashboard"),
            renders,
            "{}",
            result.text_content()
        );
        within(client.close()).await;
    }
}
