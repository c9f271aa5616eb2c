//! Transports: stdio (newline-delimited JSON) and Streamable HTTP on actix-web.
//!
//! | transport | server | entry point |
//! | --- | --- | --- |
//! | stdio | yes | [`Server::serve_stdio`](crate::Server::serve_stdio), [`Server::serve_io`](crate::Server::serve_io) |
//! | Streamable HTTP | yes | [`Server::http`](crate::Server::http), [`Server::serve`](crate::Server::serve) |

#[cfg(feature = "http")]
pub mod http;
pub(crate) mod lines;
#[cfg(any(feature = "http", feature = "client-http"))]
pub(crate) mod media;
#[cfg(feature = "server")]
pub mod stdio;

/// The reason a draining server gives the requests it cancels.
#[cfg(feature = "server")]
pub const SHUTDOWN_REASON: &str = "server shutting down";

/// Resolves when the process is asked to stop: SIGTERM or SIGINT (Ctrl-C) on Unix, Ctrl-C
/// elsewhere. What [`McpHttp::serve`](http::McpHttp::serve) and
/// [`Server::serve_stdio`](crate::Server::serve_stdio) drain on. Must run inside an actix or
/// tokio runtime. If a handler cannot be installed, the future never resolves on that signal.
#[cfg(feature = "server")]
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use actix_rt::signal::unix::{SignalKind, signal};
        let term = async {
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    term.recv().await;
                }
                Err(err) => {
                    tracing::warn!(%err, "cannot listen for SIGTERM");
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::select! {
            () = term => {}
            Ok(()) = actix_rt::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        if actix_rt::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
