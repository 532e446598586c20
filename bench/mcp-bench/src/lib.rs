//! The benchmark clients and servers of `cargo xtask bench`, and what they share.
//!
//! The binaries: `bench-client` (this stack's `McpConnection`, stdio or streamable HTTP),
//! `bench-host` (the host path: `McpManager` + `McpToolProvider` + `ToolRegistry::invoke`),
//! `bench-raw-client` (a hand-written client with no library, the server's ceiling),
//! `bench-server` (our server, both eras, over stdio or `--http PORT`) and `bench-manager` (one
//! manager over many servers). The official SDK's client and a server built on it live in
//! `bench/rmcp`, a cargo workspace of its own.
//!
//! - [`cli`]: the command line every bench client takes (workload, era, target).
//! - [`workloads`]: the W1, W2 and W5 loops, over any [`workloads::Caller`], so that the
//!   connection path and the host path run exactly the same calls.
//! - [`measure`]: wall clock and CPU time, percentiles, peak memory, the JSON report.
//! - [`catalog`]: what our servers list and answer (the generated tools, `echo`, `big`).
//!
//! ```
//! // Every call of W1, W2 and W5 sends a distinct text of the same length.
//! assert_ne!(mcp_bench::workloads::echo_text(1), mcp_bench::workloads::echo_text(2));
//! assert_eq!(mcp_bench::workloads::echo_text(1).len(), mcp_bench::workloads::echo_text(99_999).len());
//! ```

pub mod catalog;
pub mod cli;
pub mod measure;
pub mod workloads;

/// A workload's failure, printed by the client.
pub type Failure = String;
