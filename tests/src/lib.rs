//! Cross-crate integration tests and the support they share:
//!
//! - [`chaos`]: support for the chaos soak test: settings, a seeded generator, memory sampling
//!   and process-group scans.
//! - [`fake`]: the scriptable fake MCP server run by the `fake-mcp-server` binary. Tests in this
//!   crate find it with `env!("CARGO_BIN_EXE_fake-mcp-server")`.
//! - [`support`]: helpers for tests: a capturing `tracing` subscriber, and a stdio factory that
//!   records the processes it spawned.
//! - [`peers`]: helpers for the interop tests against real peers: finding the provisioned peers,
//!   HTTP servers in their own process group on a loopback port, recording host callbacks.
//! - [`oauth_peers`]: the browser part of an OAuth authorization done over HTTP (clicking
//!   through a real authorization server's login and consent pages), as a `BrowserStep`.
//!
//! ```
//! use serde_json::json;
//!
//! // The arguments object of a call, and a free loopback port for a peer to listen on.
//! let arguments = tests::peers::args(json!({"text": "hi"})).expect("an object");
//! assert_eq!(arguments["text"], "hi");
//! assert_ne!(tests::peers::free_port(), 0);
//! ```

pub mod chaos;
pub mod fake;
pub mod fake_llm;
pub mod oauth_peers;
pub mod peers;
pub mod support;
