//! actix-mcp: a Model Context Protocol SDK built on actix and actix-web.

pub mod protocol;
