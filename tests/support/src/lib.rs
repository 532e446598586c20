//! Test scaffolding that every crate's tests share, so that a test states what it checks and
//! not how to drive a peer.
//!
//! - [`within`], [`within_for`] and [`within_named`]: every async test runs under a hang guard.
//! - [`process`]: process checks that read `/proc` (state, gone, a pid printed by a script).
//! - [`scripted`] (feature `mcp`, on by default): [`ScriptedServer`], a server on the far end
//!   of an in-memory transport pair that answers requests with a script, records everything it
//!   receives, and can reply late, notify and ask the client.
//! - [`messages`] (feature `mcp`): builders for the replies and notifications scripts send.
//! - [`contract`] (feature `mcp`): [`check_transport_contract`](contract::check_transport_contract),
//!   the `Transport` contract checked on a connected pair, for every new transport's tests.
//! - [`spans`] (feature `mcp`): [`SpanCapture`](spans::SpanCapture), the `tracing` spans a
//!   test's code closed, with their fields and parents.
//! - [`stdio`] (feature `mcp`): stdio test servers written as `sh` scripts, among them a pipe
//!   that reads slowly.
//!
//! It is a dev-dependency only: its own dependencies are `tokio` and, for the MCP parts,
//! `mcp-protocol`, `mcp-transport` and `tracing` (never a crate above them), so the integration tests of
//! `mcp-transport`, `mcp-manager`, `host-bridge`, `mcp-cli` and the `tests` crate can all use it,
//! and `tool-system`'s tests use it without the `mcp` feature.
//!
//! A connection test is about ten lines:
//!
//! ```
//! # #[cfg(feature = "mcp")]
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use mcp_protocol::{Message, RequestId};
//! use mcp_transport::{MemoryTransport, Transport, TransportEvent};
//! use serde_json::json;
//! use test_support::{ScriptedServer, messages, within};
//!
//! within(async {
//!     let (client, server) = MemoryTransport::pair();
//!     let server = ScriptedServer::start(server, |request, _params| match request.method.as_str() {
//!         "ping" => Some(Ok(json!({}))),
//!         other => Some(Err(messages::method_not_found(other))),
//!     });
//!     client.send(Message::request::<()>(RequestId::Number(1), "ping", None).unwrap()).await.unwrap();
//!     let TransportEvent::Message(Message::Response(answer)) = client.recv().await else { panic!() };
//!     assert!(answer.into_result().is_ok());
//!     assert_eq!(server.count("ping"), 1);
//! })
//! .await;
//! # });
//! ```

use std::future::Future;
use std::time::Duration;

#[cfg(feature = "mcp")]
pub mod contract;
#[cfg(feature = "mcp")]
pub mod messages;
pub mod process;
#[cfg(feature = "mcp")]
pub mod scripted;
#[cfg(feature = "mcp")]
pub mod spans;
#[cfg(feature = "mcp")]
pub mod stdio;

#[cfg(feature = "mcp")]
pub use scripted::{Event, Got, Outbox, Reply, Script, ScriptedServer};

/// How long [`within`] lets a test run: far longer than any test needs, short enough that a hang
/// fails the run instead of stalling it.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(60);

/// Run `future` to its end, or panic with "test timed out" after [`DEFAULT_LIMIT`]. Under paused
/// Tokio time the limit is virtual time: a test that sleeps longer needs [`within_for`].
pub async fn within<F: Future>(future: F) -> F::Output {
    within_for(DEFAULT_LIMIT, future).await
}

/// [`within`] with a limit of its own.
pub async fn within_for<F: Future>(limit: Duration, future: F) -> F::Output {
    tokio::time::timeout(limit, future).await.unwrap_or_else(|_| panic!("test timed out after {limit:?}"))
}

/// [`within`] for one step of a test: a hang panics naming `what`.
pub async fn within_named<F: Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(DEFAULT_LIMIT, future).await.unwrap_or_else(|_| panic!("test timed out: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn within_returns_what_the_future_returns() {
        assert_eq!(within(async { 42 }).await, 42);
        assert_eq!(within_named("step", async { "done" }).await, "done");
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "test timed out after 5s")]
    async fn a_hang_fails_at_the_limit() {
        within_for(Duration::from_secs(5), std::future::pending::<()>()).await;
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "test timed out: the handshake")]
    async fn a_named_hang_says_which_step() {
        within_named("the handshake", std::future::pending::<()>()).await;
    }
}
