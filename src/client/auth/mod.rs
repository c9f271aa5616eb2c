//! Authorization building blocks for the OAuth extensions MCP defines on top of the core
//! authorization-code flow: DPoP-bound tokens ([`dpop`]), `private_key_jwt` client assertions
//! ([`assertion`]), and the grants that need no browser — client credentials, token exchange
//! for an ID-JAG, the JWT-bearer grant ([`grants`]).
//!
//! Spec: <https://github.com/modelcontextprotocol/ext-auth>

pub mod assertion;
pub mod dpop;
pub mod grants;
