//! Health endpoints, mounted beside the MCP endpoint by
//! [`McpHttp::health`](super::McpHttp::health):
//!
//! | path | answer |
//! | --- | --- |
//! | `GET /healthz` (liveness) | 200 `{"status":"ok"}` while the process serves HTTP, draining or not |
//! | `GET /readyz` (readiness) | 200 `{"status":"ready"}`; 503 `{"status":"draining"}` once a drain began; 503 `{"status":"unready","failed":{name: reason}}` when a [`ReadinessCheck`] fails or does not answer within [`READINESS_TIMEOUT`], or the session store of a cluster does not answer its ping |
//!
//! Neither checks `Host` or `Origin` (probes come from orchestrators, by address) and neither
//! tells anything about sessions or clients.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::HttpShared;

/// How long `/readyz` waits for each [`ReadinessCheck`]; one slower is failed.
pub const READINESS_TIMEOUT: Duration = Duration::from_secs(1);

/// The name under which `/readyz` reports the session store of a
/// [cluster](super::McpHttpBuilder::cluster) (pinged on every probe) when it fails.
pub const CLUSTER_STORE_CHECK: &str = "clusterSessionStore";

/// A dependency `/readyz` asks about: a store, a database, an upstream. `Err` (with a short
/// reason, shown in the answer) makes the endpoint unready.
///
/// Implemented for closures returning a future:
///
/// ```
/// # fn demo(server: actix_mcp::Server) -> Result<(), actix_mcp::transport::http::HttpConfigError> {
/// let mcp = server
///     .http("/mcp")
///     .readiness_check("store", || async {
///         // e.g. a PING to the store with a client of your own
///         Ok::<(), String>(())
///     })
///     .build()?;
/// # let _ = mcp;
/// # Ok(()) }
/// ```
pub trait ReadinessCheck: Send + Sync + 'static {
    /// Checks the dependency; `/readyz` gives it [`READINESS_TIMEOUT`].
    fn check(&self) -> BoxFuture<'static, Result<(), String>>;
}

impl<F, Fut> ReadinessCheck for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    fn check(&self) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(self())
    }
}

/// A named check, as configured.
#[derive(Clone)]
pub(super) struct NamedCheck {
    pub(super) name: Arc<str>,
    pub(super) check: Arc<dyn ReadinessCheck>,
}

impl std::fmt::Debug for NamedCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

fn status(builder: &mut actix_web::HttpResponseBuilder, body: &Value) -> HttpResponse {
    builder
        .content_type(super::respond::APPLICATION_JSON)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(body.to_string())
}

/// `GET /healthz`.
pub(super) async fn liveness() -> HttpResponse {
    status(&mut HttpResponse::Ok(), &json!({ "status": "ok" }))
}

/// Runs every check (at once, each within [`READINESS_TIMEOUT`]): the reasons of those that
/// failed, by name.
pub(super) async fn failed_checks(checks: &[NamedCheck]) -> Map<String, Value> {
    let runs = checks.iter().map(|named| async move {
        let outcome = match tokio::time::timeout(READINESS_TIMEOUT, named.check.check()).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "no answer within {} ms",
                READINESS_TIMEOUT.as_millis()
            )),
        };
        (named.name.clone(), outcome)
    });
    futures::future::join_all(runs)
        .await
        .into_iter()
        .filter_map(|(name, outcome)| outcome.err().map(|err| (name.to_string(), err.into())))
        .collect()
}

/// `GET /readyz`.
pub(super) async fn readiness(shared: web::Data<HttpShared>) -> HttpResponse {
    if shared.drain.is_draining() {
        return status(
            &mut HttpResponse::ServiceUnavailable(),
            &json!({ "status": "draining" }),
        );
    }
    let mut failed = failed_checks(&shared.config.readiness).await;
    if let Some(node) = shared.node() {
        // A node of a cluster cannot serve while the store it shares sessions in is down.
        let pinged = tokio::time::timeout(READINESS_TIMEOUT, node.store().ping()).await;
        let error = match pinged {
            Ok(Ok(())) => None,
            Ok(Err(err)) => Some(err.to_string()),
            Err(_) => Some(format!(
                "no answer within {} ms",
                READINESS_TIMEOUT.as_millis()
            )),
        };
        if let Some(error) = error {
            failed.insert(CLUSTER_STORE_CHECK.to_owned(), error.into());
        }
    }
    if failed.is_empty() {
        status(&mut HttpResponse::Ok(), &json!({ "status": "ready" }))
    } else {
        tracing::warn!(?failed, "not ready");
        status(
            &mut HttpResponse::ServiceUnavailable(),
            &json!({ "status": "unready", "failed": failed }),
        )
    }
}
