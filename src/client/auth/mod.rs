//! Authorization building blocks for the OAuth extensions MCP defines on top of the core
//! authorization-code flow: DPoP-bound tokens ([`dpop`]) and `private_key_jwt` client
//! assertions ([`assertion`]).
//!
//! Spec: <https://github.com/modelcontextprotocol/ext-auth>

pub mod assertion;
pub mod dpop;
