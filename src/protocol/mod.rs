//! Typed MCP protocol model.
