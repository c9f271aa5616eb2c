//! The MCP client: connect to any MCP server, over stdio or Streamable HTTP, and use
//! everything it offers.

pub mod error;
pub mod transport;

pub use error::ClientError;
