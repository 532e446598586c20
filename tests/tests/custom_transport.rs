//! A host can bring its own transport: this file implements `mcp_transport::Transport` over TCP
//! (newline-delimited JSON-RPC framed with `mcp_protocol::codec`), outside `mcp-transport`, and
//! runs an `McpConnection` over it against a small server written here.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
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
use mcp_transport::{CloseReason, Transport, TransportError, TransportEvent, TransportKind};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

const LIMIT: Duration = Duration::from_secs(20);

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(LIMIT, f).await.expect("test timed out")
}

/// Newline-delimited JSON-RPC over a TCP connection.
struct TcpTransport {
    writer: tokio::sync::Mutex<Option<OwnedWriteHalf>>,
    events: tokio::sync::Mutex<mpsc::Receiver<TransportEvent>>,
    reader: AbortHandle,
    end: Mutex<Option<CloseReason>>,
}

impl TcpTransport {
    async fn connect(addr: std::net::SocketAddr) -> std::io::Result<TcpTransport> {
        let (read, write) = TcpStream::connect(addr).await?.into_split();
        let (tx, rx) = mpsc::channel(16);
        let reader = tokio::spawn(read_messages(read, tx)).abort_handle();
        Ok(TcpTransport {
            writer: tokio::sync::Mutex::new(Some(write)),
            events: tokio::sync::Mutex::new(rx),
            reader,
            end: Mutex::new(None),
        })
    }

    fn end_reason(&self) -> CloseReason {
        self.end.lock().unwrap().clone().unwrap_or(CloseReason::Closed)
    }
}

/// The reader task: lines become messages; whatever is not JSON-RPC is dropped.
async fn read_messages(read: OwnedReadHalf, tx: mpsc::Sender<TransportEvent>) {
    let mut lines = BufReader::new(read).lines();
    let reason = loop {
        match lines.next_line().await {
            Ok(Some(line)) => match codec::decode_line(line.as_bytes(), &DecodeLimits::default()) {
                Ok(decoded) => {
                    for message in decoded.into_messages().into_iter().flatten() {
                        if tx.send(TransportEvent::Message(message)).await.is_err() {
                            return;
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "dropped a line that is not JSON-RPC"),
            },
            Ok(None) => break CloseReason::PeerClosed,
            Err(e) => break CloseReason::Io(Arc::new(e)),
        }
    };
    let _ = tx.send(TransportEvent::Closed(reason)).await;
}

impl Transport for TcpTransport {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        async move {
            let mut writer = self.writer.lock().await;
            let Some(w) = writer.as_mut() else { return Err(TransportError::Closed(self.end_reason())) };
            w.write_all(&codec::encode_line(&message)).await.map_err(TransportError::from)
        }
        .boxed()
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        async move {
            if let Some(reason) = self.end.lock().unwrap().clone() {
                return TransportEvent::Closed(reason);
            }
            match self.events.lock().await.recv().await {
                Some(TransportEvent::Closed(reason)) => {
                    let reason = self.end.lock().unwrap().get_or_insert(reason).clone();
                    TransportEvent::Closed(reason)
                }
                Some(event) => event,
                None => TransportEvent::Closed(self.end_reason()),
            }
        }
        .boxed()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        async move {
            self.end.lock().unwrap().get_or_insert(CloseReason::Closed);
            if let Some(mut w) = self.writer.lock().await.take() {
                let _ = w.shutdown().await;
            }
            self.reader.abort();
        }
        .boxed()
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Custom
    }
}

impl Drop for TcpTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn tool(name: &str) -> Tool {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    Tool { name: name.into(), input_schema: schema.as_object().unwrap().clone(), ..Default::default() }
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
    let transport = TcpTransport::connect(addr).await.unwrap();
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
