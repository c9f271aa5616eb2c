//! The Streamable HTTP endpoint (`McpHttp::configure`) in process, through
//! `actix_web::test`: a short script of requests, each with its method, path, headers and
//! body from the input, against one of three endpoints (SSE answers, JSON answers, stateless)
//! set up once on this thread's actix system. Every request is answered within the bound and
//! nothing panics.
//!
//! Input format (text): an optional first line `@json` or `@stateless` picks the endpoint;
//! then requests separated by a line `~~~`. A request is `METHOD [path]`, header lines
//! `Name: value`, a blank line, and the body. The value `$SESSION` stands for the session id
//! of the last answer that carried one, so a script can initialize, then use its session.

#![no_main]

use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use actix_mcp::transport::http::McpHttp;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{App, test};
use futures::future::{LocalBoxFuture, poll_fn};
use libfuzzer_sys::fuzz_target;

type Call = Rc<
    dyn Fn(
        actix_http::Request,
    ) -> LocalBoxFuture<'static, Result<ServiceResponse, actix_web::Error>>,
>;

struct Endpoint {
    mcp: McpHttp,
    call: Call,
}

thread_local! {
    // Leaked: dropped at exit, after actix-web's own thread locals, it would panic.
    static ENDPOINTS: &'static [Endpoint] = actix_mcp_fuzz::block_on(async {
        let server = actix_mcp_fuzz::server();
        let mut endpoints = Vec::new();
        for mcp in [
            server.http("/mcp"),
            server.http("/mcp").json_response(true).capture_headers(true),
            server.http("/mcp").stateless(true),
        ] {
            let mcp = mcp.build().expect("the endpoint's settings agree");
            let service = test::init_service(App::new().configure(mcp.configure())).await;
            let service = Rc::new(service);
            let call: Call = Rc::new(move |request| {
                let service = service.clone();
                Box::pin(async move { service.call(request).await })
            });
            endpoints.push(Endpoint { mcp, call });
        }
        Vec::leak(endpoints)
    });
}

/// The longest an SSE answer may stay quiet before the script moves on (and drops it).
const QUIET: Duration = Duration::from_millis(20);

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (endpoint, script) = match text.split_once('\n') {
        Some(("@json", rest)) => (1, rest),
        Some(("@stateless", rest)) => (2, rest),
        _ => (0, &*text),
    };
    ENDPOINTS.with(|endpoints| {
        let endpoint = &endpoints[endpoint];
        actix_mcp_fuzz::block_on(async {
            run(&endpoint.call, script).await;
            // Every input starts afresh.
            endpoint.mcp.close_all_sessions();
        });
    });
});

async fn run(call: &Call, script: &str) {
    let mut session: Option<HeaderValue> = None;
    for part in script.split("\n~~~\n").take(8) {
        let (head, body) = part.split_once("\n\n").unwrap_or((part, ""));
        let mut lines = head.lines();
        let mut request_line = lines.next().unwrap_or_default().split_whitespace();
        let method = request_line
            .next()
            .and_then(|m| Method::from_bytes(m.as_bytes()).ok())
            .unwrap_or(Method::POST);
        let path = request_line
            .next()
            .filter(|p| p.parse::<actix_web::http::Uri>().is_ok())
            .unwrap_or("/mcp");
        let mut request = test::TestRequest::default().method(method).uri(path);
        for line in lines.take(16) {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let Ok(name) = HeaderName::from_bytes(name.trim().as_bytes()) else {
                continue;
            };
            let value = match value.trim() {
                "$SESSION" => match &session {
                    Some(id) => id.clone(),
                    None => continue,
                },
                other => match HeaderValue::from_str(other) {
                    Ok(value) => value,
                    Err(_) => continue,
                },
            };
            request = request.append_header((name, value));
        }
        let request = request.set_payload(body.to_owned()).to_request();
        let Ok(response) = call(request).await else {
            continue;
        };
        if let Some(id) = response.headers().get("mcp-session-id") {
            session = Some(id.clone());
        }
        drain(response.into_body()).await;
    }
}

/// Reads the body until it ends or stays quiet for [`QUIET`] (an SSE stream left open).
async fn drain(body: impl MessageBody + Unpin) {
    let mut body = body;
    loop {
        let next = poll_fn(|cx| Pin::new(&mut body).poll_next(cx));
        match tokio::time::timeout(QUIET, next).await {
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(_)) | None) | Err(_) => return,
        }
    }
}
