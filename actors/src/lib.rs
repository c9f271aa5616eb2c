//! Actor runtime for actix-mcp.
