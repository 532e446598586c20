//! A transport written outside `mcp-transport`: the worked example of ARCHITECTURE.md's "How to
//! add a transport" (`mcp-transport/examples/line_transport`, newline-delimited JSON-RPC over any
//! byte stream) keeps the whole `Transport` contract over TCP, skips a line over its limit, and
//! carries an `McpConnection` against a small server written here.

use std::sync::Arc;

use mcp_manager::{
    ConnectionError, ConnectionOptions, McpConnection, RequestOptions, SessionError, single_use_factory,
};
use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::messages::ClientRequest;
use mcp_protocol::types::common::{EmptyResult, Implementation};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::lifecycle::{InitializeResult, ServerCapabilities, ToolsCapability};
use mcp_protocol::types::tools::{CallToolResult, ListToolsResult, Tool};
use mcp_protocol::{DecodeLimits, ErrorCode, ErrorObject, Message, RawJson, Response, codec};
use mcp_transport::{CloseReason, Transport, TransportEvent, TransportKind};
use serde_json::{Value, json};
use test_support::contract::check_transport_contract;
use test_support::within;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

#[path = "../../../mcp-transport/examples/line_transport/transport.rs"]
mod line_transport;

use line_transport::LineTransport;

fn tool(name: &str) -> Tool {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    Tool { name: name.into(), input_schema: schema.as_object().unwrap().clone().into(), ..Default::default() }
}

fn answer(request: ClientRequest) -> Result<RawJson, ErrorObject> {
    let encode = |r: Result<RawJson, serde_json::Error>| {
        r.map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
    };
    match request {
        ClientRequest::Initialize(Some(p)) => encode(to_raw(&InitializeResult {
            protocol_version: p.protocol_version,
            capabilities: ServerCapabilities { tools: Some(ToolsCapability::default()), ..Default::default() },
            server_info: Implementation::new("tcp-test-server", "0.1.0"),
            ..Default::default()
        })),
        ClientRequest::Ping(_) => encode(to_raw(&EmptyResult::default())),
        // Two pages: the connection must follow the cursor.
        ClientRequest::ListTools(p) => {
            let page = match p.and_then(|p| p.cursor).as_deref() {
                None => {
                    ListToolsResult { tools: vec![tool("upper")], next_cursor: Some("2".into()), ..Default::default() }
                }
                Some("2") => ListToolsResult { tools: vec![tool("lower")], ..Default::default() },
                Some(other) => return Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("bad cursor {other}"))),
            };
            encode(to_raw(&page))
        }
        ClientRequest::CallTool(Some(p)) => {
            let text = p.arguments.as_ref().and_then(|a| a.get("text")).and_then(Value::as_str).unwrap_or_default();
            let out = match p.name.as_str() {
                "upper" => text.to_uppercase(),
                "lower" => text.to_lowercase(),
                other => return Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("unknown tool {other}"))),
            };
            encode(to_raw(&CallToolResult { content: vec![ContentBlock::text(out)], ..Default::default() }))
        }
        other => Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, other.method().to_owned())),
    }
}

/// Serve one connection; the `hang-up` tool closes it without answering. Returns every method
/// received, in order.
async fn serve(listener: TcpListener) -> Vec<String> {
    let (stream, _) = listener.accept().await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut seen = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        let message = codec::decode_message(&line).unwrap();
        seen.extend(message.method().map(str::to_owned));
        let Message::Request(request) = message else { continue };
        let typed = ClientRequest::from_request(&request).unwrap();
        if matches!(&typed, ClientRequest::CallTool(Some(p)) if p.name == "hang-up") {
            break;
        }
        let reply = match answer(typed) {
            Ok(raw) => Message::Response(Response::result(request.id, raw)),
            Err(error) => Message::error_response(Some(request.id), error),
        };
        write.write_all(&codec::encode_line(&reply)).await.unwrap();
    }
    seen
}

async fn start() -> (McpConnection, tokio::task::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(serve(listener));
    let transport = LineTransport::connect_tcp(addr).await.unwrap();
    let conn = McpConnection::new(single_use_factory(Arc::new(transport)), ConnectionOptions::new("tcp"));
    (conn, server)
}

fn upper(text: &str) -> Option<mcp_protocol::types::meta::JsonObject> {
    json!({"text": text}).as_object().cloned()
}

#[tokio::test]
async fn connection_runs_over_a_host_written_transport() {
    within(async {
        let (conn, server) = start().await;
        let info = conn.connect().await.unwrap();
        assert_eq!(info.transport, TransportKind::Custom);
        assert_eq!(info.implementation.name, "tcp-test-server");
        let inventory = conn.discover().await.unwrap();
        assert_eq!(inventory.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["upper", "lower"]);
        let outcome = conn.call_tool("upper", upper("shout"), RequestOptions::default()).await.unwrap();
        assert_eq!(outcome.complete().unwrap().content, [ContentBlock::text("SHOUT")]);
        conn.ping().await.unwrap();
        conn.close().await;
        let seen = server.await.unwrap();
        assert_eq!(
            seen,
            [
                "server/discover",
                "initialize",
                "notifications/initialized",
                "tools/list",
                "tools/list",
                "tools/call",
                "ping"
            ],
            "the server saw the handshake, both pages, the call and the ping, then the end of the stream"
        );
        let err = conn.call_tool("upper", upper("x"), RequestOptions::default()).await.unwrap_err();
        assert!(matches!(err, ConnectionError::NotConnected(_)), "{err}");
    })
    .await
}

#[tokio::test]
async fn peer_hanging_up_fails_the_pending_call() {
    within(async {
        let (conn, server) = start().await;
        conn.connect().await.unwrap();
        let session = conn.session().await.unwrap();
        let err = conn.call_tool("hang-up", None, RequestOptions::default()).await.unwrap_err();
        assert!(
            matches!(&err, ConnectionError::Session(SessionError::Closed { reason: CloseReason::PeerClosed, .. })),
            "{err}"
        );
        assert!(err.to_string().contains("peer closed the connection"), "{err}");
        assert!(matches!(session.close_reason(), Some(CloseReason::PeerClosed)));
        assert_eq!(server.await.unwrap().last().map(String::as_str), Some("tools/call"));
        conn.close().await;
    })
    .await
}

/// A client end and a server end of the example transport over one loopback TCP connection.
async fn tcp_pair() -> (LineTransport, LineTransport) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
    let (read, write) = client.unwrap().into_split();
    let client = LineTransport::new(read, write, DecodeLimits::default());
    let (read, write) = accepted.unwrap().0.into_split();
    (client, LineTransport::new(read, write, DecodeLimits::default()))
}

#[tokio::test]
async fn the_example_transport_keeps_the_transport_contract() {
    within(async {
        let (client, server) = tcp_pair().await;
        check_transport_contract(&client, &server).await;
    })
    .await
}

#[tokio::test]
async fn a_line_over_the_limit_is_skipped_and_the_next_one_read() {
    within(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let (read, write) = client.unwrap().into_split();
        let client = LineTransport::new(read, write, DecodeLimits { max_line_bytes: 1024, ..DecodeLimits::default() });
        let mut server = accepted.unwrap().0;
        let long =
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{{\"p\":\"{}\"}}}}\n", "y".repeat(300_000));
        server.write_all(long.as_bytes()).await.unwrap();
        server.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/next\"}\n").await.unwrap();
        let TransportEvent::Message(next) = client.recv().await else { panic!("the line after the long one") };
        assert_eq!(next.method(), Some("notifications/next"));
        drop(server);
        assert!(matches!(client.recv().await, TransportEvent::Closed(CloseReason::PeerClosed)));
    })
    .await
}
