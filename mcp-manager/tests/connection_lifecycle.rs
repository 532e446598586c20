//! A connection's requests go to the session that is open now: to none once it is closed
//! (`NotConnected`), to none once its session has ended (`Closed`, with the reason), and to the
//! new server's after a reconnect. Requests read the open session without the connection's
//! lock; these are the moments where what they read must change.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_manager::connection::{ConnectionError, ConnectionOptions, McpConnection, TransportFactory};
use mcp_manager::session::{RequestOptions, SessionError};
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::tools::CallToolResult;
use mcp_protocol::{ErrorCode, ErrorObject};
use mcp_transport::{MemoryTransport, Transport};
use serde_json::json;
use test_support::messages::initialize_result;
use test_support::{ScriptedServer, within};

/// A factory that starts a new scripted server on every connect; its `echo` tool answers with
/// the number of the server (1 for the first). Also how many it started.
fn numbered_servers() -> (TransportFactory, Arc<AtomicUsize>) {
    let started = Arc::new(AtomicUsize::new(0));
    let count = started.clone();
    let factory: TransportFactory = Arc::new(move || {
        let number = started.fetch_add(1, Ordering::SeqCst) + 1;
        let (client, server) = MemoryTransport::pair();
        ScriptedServer::start(server, move |req, _| match req.method.as_str() {
            // A legacy server: the modern era's probe is not a method it knows.
            "server/discover" => Some(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found"))),
            "initialize" => Some(Ok(initialize_result("numbered", json!({"tools": {}})))),
            "tools/call" => Some(Ok(json!({"content": [{"type": "text", "text": format!("server {number}")}]}))),
            _ => None,
        });
        Box::pin(async move { Ok(Arc::new(client) as Arc<dyn Transport>) })
    });
    (factory, count)
}

/// The text of a call of `echo`, or the error.
async fn echo(conn: &McpConnection) -> Result<String, ConnectionError> {
    match conn.call_tool("echo", None, RequestOptions::default()).await? {
        Outcome::Complete(CallToolResult { content, .. }) => {
            Ok(content.first().and_then(|block| block.as_text()).unwrap_or_default().to_owned())
        }
        other => panic!("not a complete result: {other:?}"),
    }
}

#[tokio::test]
async fn requests_follow_the_open_session_through_close_end_and_reconnect() {
    within(async {
        let (factory, started) = numbered_servers();
        let conn = McpConnection::new(factory, ConnectionOptions::new("numbered"));
        assert!(matches!(echo(&conn).await, Err(ConnectionError::NotConnected(_))), "before the first connect");

        conn.connect().await.unwrap();
        assert_eq!(echo(&conn).await.unwrap(), "server 1");

        conn.close().await;
        let closed = echo(&conn).await;
        assert!(matches!(closed, Err(ConnectionError::NotConnected(_))), "after close: {closed:?}");

        conn.connect().await.unwrap();
        assert_eq!(echo(&conn).await.unwrap(), "server 2", "the reconnected session's server");

        // The session ends under the connection (as when a server exits): requests say so, with
        // the reason, until the next connect.
        conn.session().await.unwrap().close().await;
        let ended = echo(&conn).await;
        assert!(
            matches!(ended, Err(ConnectionError::Session(SessionError::Closed { .. }))),
            "after the session ended: {ended:?}"
        );
        assert!(matches!(conn.session().await, Err(ConnectionError::Session(SessionError::Closed { .. }))));

        conn.connect().await.unwrap();
        assert_eq!(echo(&conn).await.unwrap(), "server 3");
        assert_eq!(started.load(Ordering::SeqCst), 3, "one server for each connect");
        conn.close().await;
    })
    .await
}
