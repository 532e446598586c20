//! What the mcp-manager integration tests share: a scripted server on the far end of an
//! in-memory transport.

use std::sync::{Arc, Mutex};

use mcp_protocol::{ErrorObject, Message, Request, Response};
use mcp_transport::{MemoryTransport, Transport, TransportEvent};
use serde_json::Value;

/// A scripted answer: a result, an error, or (`None` from the script) no answer at all.
pub type Reply = Result<Value, ErrorObject>;
/// The script: what to answer to a request, given its decoded params.
pub type Script = Box<dyn FnMut(&Request, &Value) -> Option<Reply> + Send>;
/// Every request the server got, with its params, in order.
pub type Seen = Arc<Mutex<Vec<(Request, Value)>>>;

/// Serve the other end of the pair with `script`; every request is recorded with its params.
pub fn serve(server: MemoryTransport, mut script: Script) -> Seen {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let request = match server.recv().await {
                TransportEvent::Message(Message::Request(r)) => r,
                TransportEvent::Message(_) => continue,
                _ => return,
            };
            let params: Value =
                request.params.as_ref().map(|p| serde_json::from_str(p.get()).unwrap()).unwrap_or(Value::Null);
            log.lock().unwrap().push((request.clone(), params.clone()));
            let Some(reply) = script(&request, &params) else { continue };
            let message = match reply {
                Ok(v) => Message::Response(Response::result(
                    request.id.clone(),
                    serde_json::value::to_raw_value(&v).unwrap(),
                )),
                Err(e) => Message::Response(Response::error(Some(request.id.clone()), e)),
            };
            if server.send(message).await.is_err() {
                return;
            }
        }
    });
    seen
}
