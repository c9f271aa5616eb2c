//! MCP Apps (`io.modelcontextprotocol/ui`) on the server, with our client as the host, in
//! memory (the stdio framing) and over HTTP, in both eras: the view listed and read with its
//! MIME type and `_meta.ui`; tools linked to it with their visibility; the client's declaration
//! seen by the tool; what the build refuses.
#![cfg(all(feature = "server", feature = "client-http", feature = "http"))]
#![allow(clippy::unwrap_used)]

mod common;

use actix_mcp::client::transport::HttpTransport;
use actix_mcp::client::{Client, ClientExtension, Lifecycle};
use actix_mcp::protocol::ResourceContents;
use actix_mcp::protocol::apps::{
    APP_MIME_TYPE, UI_EXTENSION, UiCsp, UiPermissions, UiToolMeta, UiVisibility,
};
use actix_mcp::server::apps::{AppView, Apps};
use actix_mcp::{BuildError, RequestContext, Server, ToolDef};
use serde_json::json;

use common::within;

const VIEW: &str = "ui://demo/view";

fn server() -> Server {
    Server::builder("apps-test", "1.0.0")
        .extension(
            Apps::new()
                .view(
                    AppView::new(
                        VIEW,
                        "Demo view",
                        "<!DOCTYPE html><html><body>hi</body></html>",
                    )
                    .description("A demo")
                    .csp(UiCsp {
                        connect_domains: vec!["https://api.example.com".into()],
                        resource_domains: vec!["https://cdn.example.com".into()],
                        ..UiCsp::default()
                    })
                    .permissions(UiPermissions {
                        clipboard_write: Some(Default::default()),
                        ..UiPermissions::default()
                    })
                    .prefers_border(true),
                )
                .extension(),
        )
        .tool(
            ToolDef::new("show", |cx: RequestContext| async move {
                format!("renders views: {}", cx.client_supports_apps())
            })
            .description("Shows the demo view")
            .ui(UiToolMeta {
                resource_uri: Some(VIEW.into()),
                visibility: None,
            }),
        )
        .tool(
            ToolDef::new("refresh", || async { "ok" })
                .description("For the view only")
                .ui(UiToolMeta {
                    resource_uri: Some(VIEW.into()),
                    visibility: Some(vec![UiVisibility::App]),
                }),
        )
        .build()
        .unwrap()
}

async fn check_host(client: &Client, declared: bool) {
    assert!(client.server_extension(UI_EXTENSION).is_some());
    let tools = within(client.tools()).await.unwrap();
    let show = tools.iter().find(|t| t.name == "show").unwrap();
    let ui = show.ui().unwrap();
    assert_eq!(ui.resource_uri.as_deref(), Some(VIEW));
    assert!(ui.visible_to(UiVisibility::Model) && ui.visible_to(UiVisibility::App));
    let refresh = tools
        .iter()
        .find(|t| t.name == "refresh")
        .unwrap()
        .ui()
        .unwrap();
    assert!(!refresh.visible_to(UiVisibility::Model));
    assert!(refresh.visible_to(UiVisibility::App));

    let listed = within(client.resources()).await.unwrap();
    let view = listed.iter().find(|r| r.uri == VIEW).unwrap();
    assert_eq!(view.mime_type.as_deref(), Some(APP_MIME_TYPE));
    let read = within(client.read_resource(VIEW)).await.unwrap();
    let ResourceContents::Text(contents) = &read.contents[0] else {
        panic!("a text view: {read:?}")
    };
    assert_eq!(contents.mime_type.as_deref(), Some(APP_MIME_TYPE));
    assert!(contents.text.starts_with("<!DOCTYPE html>"));
    let meta = serde_json::to_value(&contents.meta).unwrap();
    assert_eq!(
        meta["ui"],
        json!({"csp": {"connectDomains": ["https://api.example.com"],
                       "resourceDomains": ["https://cdn.example.com"]},
               "permissions": {"clipboardWrite": {}}, "prefersBorder": true})
    );
    let shown = within(client.call_tool("show", json!({}))).await.unwrap();
    assert_eq!(shown.text_content(), format!("renders views: {declared}"));
}

#[actix_rt::test]
async fn a_host_sees_the_view_and_the_tools_linked_to_it_in_both_eras() {
    let server = server();
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        for declared in [true, false] {
            let mut builder = Client::builder("host", "1.0.0").lifecycle(lifecycle);
            if declared {
                builder = builder.extension(ClientExtension::apps());
            }
            let client = within(actix_mcp::testing::connect(&server, builder))
                .await
                .unwrap();
            check_host(&client, declared).await;
            within(client.close()).await;
        }
    }
}

#[actix_rt::test]
async fn a_host_over_http() {
    let running = common::http::spawn(server().http("/mcp"), 1);
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let client = within(
            Client::builder("host", "1.0.0")
                .lifecycle(lifecycle)
                .extension(ClientExtension::apps())
                .connect(HttpTransport::new(&running.url)),
        )
        .await
        .unwrap();
        check_host(&client, true).await;
        within(client.close()).await;
    }
}

#[test]
fn the_build_refuses_bad_views_and_dangling_links() {
    let html = "<!DOCTYPE html><html></html>";
    let refused = |apps: Apps| {
        Server::builder("x", "1")
            .extension(apps.extension())
            .build()
            .expect_err("refused")
    };
    assert!(matches!(
        refused(Apps::new().view(AppView::new("https://x/view", "v", html))),
        BuildError::InvalidName { .. }
    ));
    assert!(matches!(
        refused(
            Apps::new()
                .view(AppView::new(VIEW, "v", html))
                .view(AppView::new(VIEW, "w", html))
        ),
        BuildError::Duplicate { .. }
    ));
    let dangling = Server::builder("x", "1")
        .extension(Apps::new().view(AppView::new(VIEW, "v", html)).extension())
        .tool(
            ToolDef::new("t", || async { "x" })
                .description("T")
                .ui(UiToolMeta {
                    resource_uri: Some("ui://demo/missing".into()),
                    visibility: None,
                }),
        )
        .build()
        .expect_err("refused");
    assert!(
        dangling.to_string().contains("ui://demo/missing"),
        "{dangling}"
    );
}
