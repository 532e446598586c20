//! Extension point: a transport of the host's own. `mcp_transport::Transport` moves JSON-RPC
//! messages; the manager opens a server through whatever transport plan the host gives
//! (`ManagerBuilder::transport`). Here the transport wraps the stdio one and counts the messages
//! each way, the shape of a host that records, meters or tunnels its MCP traffic.
//!
//! ```text
//! cargo build -p mcp-cli && cargo run -p mcp-manager --example custom_transport [-- path/to/mcp]
//! ```
//!
//! Exits 0 only if a tool call went through the custom transport.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use mcp_manager::{McpManager, RequestOptions, ServerConfig, TransportFactory, TransportPlan};
use mcp_protocol::{Message, RequestId};
use mcp_transport::{CancelHandling, StdioTransport, Transport, TransportError, TransportEvent, TransportKind};
use serde_json::json;

/// Messages each way, shared by every connection the transport makes.
#[derive(Default)]
struct Traffic {
    sent: AtomicUsize,
    received: AtomicUsize,
}

/// A transport that counts what passes through another one.
struct Counting {
    inner: Arc<dyn Transport>,
    traffic: Arc<Traffic>,
}

impl Transport for Counting {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        self.traffic.sent.fetch_add(1, Ordering::Relaxed);
        self.inner.send(message)
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        Box::pin(async move {
            let event = self.inner.recv().await;
            if matches!(event, TransportEvent::Message(_)) {
                self.traffic.received.fetch_add(1, Ordering::Relaxed);
            }
            event
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.inner.close()
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Custom
    }

    // What the wrapped transport knows, passed on: the server's stderr and process for the
    // status, and its own way of cancelling.
    fn diagnostics_tail(&self) -> Vec<String> {
        self.inner.diagnostics_tail()
    }

    fn process_id(&self) -> Option<u32> {
        self.inner.process_id()
    }

    fn cancel_request(&self, id: &RequestId) -> CancelHandling {
        self.inner.cancel_request(id)
    }
}

/// A factory that opens `server` over stdio, wrapped in [`Counting`]; called once per
/// connection (and again on every reconnection).
fn counting_factory(server: &ServerConfig, traffic: Arc<Traffic>) -> Option<TransportFactory> {
    let stdio = server.stdio_config()?;
    Some(Arc::new(move || {
        let (stdio, traffic) = (stdio.clone(), traffic.clone());
        Box::pin(async move {
            let inner: Arc<dyn Transport> = Arc::new(StdioTransport::spawn(stdio)?);
            Ok(Arc::new(Counting { inner, traffic }) as Arc<dyn Transport>)
        })
    }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let traffic = Arc::new(Traffic::default());
    let counted = traffic.clone();
    let manager = McpManager::builder()
        .server(common::demo_server())
        .transport(move |server| counting_factory(server, counted.clone()).map(TransportPlan::single))
        .start()
        .await?;
    let status = &manager.status()[0];
    println!("demo: {} over {}", status.state, status.transport);

    let arguments = json!({"a": 2, "b": 3}).as_object().cloned();
    let sum = manager.execute_tool("add", arguments, RequestOptions::default()).await;
    manager.close().await;

    let (sent, received) = (traffic.sent.load(Ordering::Relaxed), traffic.received.load(Ordering::Relaxed));
    println!(
        "add(2, 3) = {}; {sent} messages sent and {received} received through the custom transport",
        sum.history_text()
    );
    common::check(status.transport == "custom", "the server was reached through the custom transport")?;
    common::check(sum.success && sum.history_text().ends_with("= 5"), "the tool call went through it")?;
    common::check(sent >= 2 && received >= 2, "messages went both ways")?;
    Ok(())
}
