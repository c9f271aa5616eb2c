//! Transports: stdio (newline-delimited JSON) and Streamable HTTP on actix-web.
//!
//! | transport | server | entry point |
//! | --- | --- | --- |
//! | stdio | yes | [`Server::serve_stdio`](crate::Server::serve_stdio), [`Server::serve_io`](crate::Server::serve_io) |
//! | Streamable HTTP | yes | [`Server::http`](crate::Server::http), [`Server::serve`](crate::Server::serve) |

pub mod http;
pub(crate) mod lines;
pub mod stdio;
