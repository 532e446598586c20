//! `cargo run -p mcp-transport --example line_transport -- HOST:PORT`: open a [`LineTransport`]
//! to an MCP server that speaks newline-delimited JSON-RPC over TCP (for instance the built-in
//! demo server behind `socat TCP-LISTEN:9000,reuseaddr,fork EXEC:'mcp serve-demo'`), send
//! `initialize`, and print who answered.

mod transport;

use mcp_protocol::types::lifecycle::{InitializeParams, InitializeResult};
use mcp_protocol::{Message, ProtocolVersion, RequestId};
use mcp_transport::{Transport, TransportEvent};
use transport::LineTransport;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(addr) = std::env::args().nth(1).and_then(|a| a.parse().ok()) else {
        eprintln!("usage: line_transport HOST:PORT (an MCP server speaking JSON-RPC lines over TCP)");
        std::process::exit(2);
    };
    if let Err(e) = run(addr).await {
        eprintln!("line_transport: {e}");
        std::process::exit(1);
    }
}

async fn run(addr: std::net::SocketAddr) -> Result<(), String> {
    let transport = LineTransport::connect_tcp(addr).await.map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let params = InitializeParams {
        protocol_version: ProtocolVersion::LATEST_LEGACY.as_str().to_owned(),
        client_info: mcp_protocol::types::common::Implementation::new("line-transport-example", "0.1.0"),
        ..Default::default()
    };
    let request = Message::request(RequestId::Number(1), "initialize", Some(&params)).map_err(|e| e.to_string())?;
    transport.send(request).await.map_err(|e| e.to_string())?;
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), transport.recv())
        .await
        .map_err(|_| "no answer within 10 s".to_owned())?;
    let TransportEvent::Message(Message::Response(response)) = answer else {
        return Err(format!("expected the answer to initialize, got {answer:?}"));
    };
    let result = response.into_result().map_err(|e| format!("the server refused initialize: {e}"))?;
    let result: InitializeResult = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    println!("{} {} speaks {}", result.server_info.name, result.server_info.version, result.protocol_version);
    transport.close().await;
    Ok(())
}
