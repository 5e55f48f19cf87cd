//! The MCP layer: maps MCP requests onto [`crate::dispatch::call_tool`] and holds no tool
//! logic of its own.
//!
//! - [`catalog`]: the tool list with JSON schemas generated from the argument types.
//! - [`listing`]: which of those tools `tools/list` shows a session (`--tools`, bundles loaded).
//! - [`server`]: the rmcp `ServerHandler`, one instance per MCP session.
//! - [`http`]: streamable HTTP on 127.0.0.1 with bearer token and Origin/Host checks.
//! - [`relay`]: `nova mcp`, the stdio command agents run, relaying to the hub's unix socket.

pub mod catalog;
pub mod http;
pub mod listing;
pub mod relay;
pub mod server;

/// Most bytes in one JSON-RPC line from an agent (stdio relay and unix socket): tool arguments
/// are small; anything bigger is a broken or hostile client.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// Most bytes in one HTTP request body (`POST /mcp`); the same bound as a line.
pub const MAX_BODY_BYTES: usize = MAX_LINE_BYTES;
