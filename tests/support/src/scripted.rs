//! [`ScriptedServer`]: an MCP server played by a script on the far end of an in-memory pair.
//!
//! The script sees each request with its decoded params and answers it (`Some(reply)`), or
//! leaves it unanswered (`None`: the test may [`reply`](ScriptedServer::reply) later, or never).
//! Everything the server receives or sends of its own is kept in order as [`Event`]s, which the
//! test reads ([`requests_of`](ScriptedServer::requests_of), [`count`](ScriptedServer::count),
//! [`events`](ScriptedServer::events)) or waits for ([`nth`](ScriptedServer::nth),
//! [`until`](ScriptedServer::until)). The server can also send notifications and requests of
//! its own: from the test ([`notify`](ScriptedServer::notify), [`ask`](ScriptedServer::ask),
//! [`send`](ScriptedServer::send)) or from the script, through its [`Outbox`], whose messages go
//! out after the script's reply.
//!
//! The server runs as a task until its transport ends (the client closed or dropped its end);
//! dropping the [`ScriptedServer`] handle does not stop it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_protocol::{Message, Request, RequestId, Response};
use mcp_transport::{MemoryTransport, Transport, TransportEvent};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

pub use crate::messages::Reply;
use crate::messages::{self, params_of};

/// What the script is shown.
#[derive(Debug)]
pub enum Got<'a> {
    /// A request, with its params decoded (`Value::Null` without params).
    Request(&'a Request, &'a Value),
    /// The client's answer to a request the server sent.
    Answer(&'a Response),
}

/// What the server received, or sent of its own, in order.
#[derive(Debug, Clone)]
pub enum Event {
    /// A request it received, its params decoded, and when (on Tokio's clock, paused or not).
    Request {
        /// The request.
        request: Request,
        /// Its params (`Value::Null` without params).
        params: Value,
        /// When it arrived.
        at: Instant,
    },
    /// A notification it received.
    Notification {
        /// Its method.
        method: String,
        /// Its params (`Value::Null` without params).
        params: Value,
    },
    /// The client's answer to a request the server sent.
    Answer(Response),
    /// A message the server sent of its own (not a reply to a request).
    Sent(Message),
}

impl Event {
    /// The method of a request, notification or sent message.
    pub fn method(&self) -> Option<&str> {
        match self {
            Event::Request { request, .. } => Some(&request.method),
            Event::Notification { method, .. } => Some(method),
            Event::Answer(_) => None,
            Event::Sent(message) => message.method(),
        }
    }
}

/// Where a script (or anyone holding a clone) queues messages the server sends of its own:
/// notifications, requests, late replies. They go out after the reply being made.
#[derive(Debug, Clone)]
pub struct Outbox(mpsc::UnboundedSender<Message>);

impl Outbox {
    /// Queue `message`; it is dropped when the server has ended.
    pub fn send(&self, message: Message) {
        let _ = self.0.send(message);
    }

    /// Queue a notification of `method` with `params` (`Value::Null`: without params).
    pub fn notify(&self, method: &str, params: Value) {
        self.send(messages::notification(method, params));
    }

    /// Queue the late reply to request `id`.
    pub fn reply(&self, id: &RequestId, reply: Reply) {
        self.send(messages::response(id, reply));
    }
}

/// A script that answers requests given their params, boxed: what a helper that builds scripts
/// returns for [`ScriptedServer::start`].
pub type Script = Box<dyn FnMut(&Request, &Value) -> Option<Reply> + Send>;

type FullScript = Box<dyn FnMut(Got<'_>, &Outbox) -> Option<Reply> + Send>;

struct Shared {
    events: Mutex<Vec<Event>>,
    /// Bumped after every event (after the reply, for a request), to wake those who wait.
    changed: watch::Sender<u64>,
    /// The requests sent by [`ScriptedServer::ask`], waiting for their answers.
    asks: Mutex<HashMap<RequestId, oneshot::Sender<Response>>>,
    next_id: AtomicI64,
}

impl Shared {
    fn events(&self) -> MutexGuard<'_, Vec<Event>> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, event: Event) {
        self.events().push(event);
    }

    fn wake(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Send a message of the server's own, recorded first.
    async fn send(&self, transport: &MemoryTransport, message: Message) -> bool {
        self.record(Event::Sent(message.clone()));
        self.wake();
        transport.send(message).await.is_ok()
    }
}

/// A scripted MCP server on the far end of an in-memory transport pair (see the module docs).
pub struct ScriptedServer {
    transport: Arc<MemoryTransport>,
    shared: Arc<Shared>,
    outbox: Outbox,
}

impl ScriptedServer {
    /// Serve `transport` (the server's end of a pair) with `script`, which answers each request
    /// given its params.
    pub fn start<S>(transport: MemoryTransport, mut script: S) -> ScriptedServer
    where
        S: FnMut(&Request, &Value) -> Option<Reply> + Send + 'static,
    {
        ScriptedServer::start_with(transport, move |got, _| match got {
            Got::Request(request, params) => script(request, params),
            Got::Answer(_) => None,
        })
    }

    /// Serve `transport` with a script that also sees the client's answers to the server's own
    /// requests, and may queue messages on the [`Outbox`] (sent after its reply).
    pub fn start_with<S>(transport: MemoryTransport, script: S) -> ScriptedServer
    where
        S: FnMut(Got<'_>, &Outbox) -> Option<Reply> + Send + 'static,
    {
        let transport = Arc::new(transport);
        let shared = Arc::new(Shared {
            events: Mutex::default(),
            changed: watch::Sender::new(0),
            asks: Mutex::default(),
            next_id: AtomicI64::new(1),
        });
        let (queue, queued) = mpsc::unbounded_channel();
        let outbox = Outbox(queue);
        tokio::spawn(serve(transport.clone(), shared.clone(), Box::new(script), outbox.clone(), queued));
        ScriptedServer { transport, shared, outbox }
    }

    /// Everything so far, in order.
    pub fn events(&self) -> Vec<Event> {
        self.shared.events().clone()
    }

    /// Every request received so far, with its params.
    pub fn requests(&self) -> Vec<(Request, Value)> {
        self.shared
            .events()
            .iter()
            .filter_map(|e| match e {
                Event::Request { request, params, .. } => Some((request.clone(), params.clone())),
                _ => None,
            })
            .collect()
    }

    /// The params of every `method` request received so far.
    pub fn requests_of(&self, method: &str) -> Vec<Value> {
        self.timed_requests_of(method).into_iter().map(|(params, _)| params).collect()
    }

    /// The params of every `method` request received so far, with when it arrived.
    pub fn timed_requests_of(&self, method: &str) -> Vec<(Value, Instant)> {
        self.shared
            .events()
            .iter()
            .filter_map(|e| match e {
                Event::Request { request, params, at } if request.method == method => Some((params.clone(), *at)),
                _ => None,
            })
            .collect()
    }

    /// The `name` of every `tools/call` received so far, in order.
    pub fn called_tools(&self) -> Vec<String> {
        self.requests_of("tools/call").iter().map(|p| p["name"].as_str().unwrap_or_default().to_owned()).collect()
    }

    /// How many `method` requests arrived so far.
    pub fn count(&self, method: &str) -> usize {
        self.shared
            .events()
            .iter()
            .filter(|e| matches!(e, Event::Request { request, .. } if request.method == method))
            .count()
    }

    /// The methods of the notifications received so far, in order.
    pub fn notifications(&self) -> Vec<String> {
        self.shared
            .events()
            .iter()
            .filter_map(|e| match e {
                Event::Notification { method, .. } => Some(method.clone()),
                _ => None,
            })
            .collect()
    }

    /// The client's answers to the server's own requests so far.
    pub fn answers(&self) -> Vec<Response> {
        self.shared
            .events()
            .iter()
            .filter_map(|e| match e {
                Event::Answer(response) => Some(response.clone()),
                _ => None,
            })
            .collect()
    }

    /// Wait until `condition` holds for the events so far. It is checked again after each event
    /// (for a request, once its scripted reply is sent). The test's hang guard bounds the wait.
    pub async fn until(&self, condition: impl Fn(&[Event]) -> bool) {
        let mut changed = self.shared.changed.subscribe();
        // The sender lives in `self`: the wait ends only when the condition holds.
        let _ = changed.wait_for(|_| condition(&self.shared.events())).await;
    }

    /// The `n`-th `method` request (from 1) with its params, once it has arrived (and its
    /// scripted reply, if any, is sent).
    pub async fn nth(&self, method: &str, n: usize) -> (Request, Value) {
        self.until(|events| {
            events.iter().filter(|e| matches!(e, Event::Request { request, .. } if request.method == method)).count()
                >= n
        })
        .await;
        self.requests().into_iter().filter(|(r, _)| r.method == method).nth(n - 1).expect("it arrived")
    }

    /// Wait until the server has ended: its transport ended (the client closed or dropped its
    /// end) and nothing more will be recorded.
    pub async fn ended(&self) {
        self.outbox.0.closed().await;
    }

    /// A handle to queue messages, as the script's own [`Outbox`].
    pub fn outbox(&self) -> Outbox {
        self.outbox.clone()
    }

    /// Send a message of the server's own now (recorded as [`Event::Sent`]). Panics when the
    /// transport has ended.
    pub async fn send(&self, message: Message) {
        assert!(self.shared.send(&self.transport, message).await, "the scripted server's transport has ended");
    }

    /// Send a notification of `method` with `params` (`Value::Null`: without params).
    pub async fn notify(&self, method: &str, params: Value) {
        self.send(messages::notification(method, params)).await;
    }

    /// Answer request `id` now (for a request the script left unanswered).
    pub async fn reply(&self, id: &RequestId, reply: Reply) {
        let sent = self.transport.send(messages::response(id, reply)).await;
        assert!(sent.is_ok(), "the scripted server's transport has ended");
    }

    /// Send a request of `method` to the client and wait for its answer: the result decoded, or
    /// the client's error. Panics when the transport ends first.
    pub async fn ask(&self, method: &str, params: Value) -> Reply {
        let id = RequestId::String(format!("scripted-{}", self.shared.next_id.fetch_add(1, Ordering::Relaxed)));
        let (answered, answer) = oneshot::channel();
        self.shared.asks.lock().unwrap_or_else(|p| p.into_inner()).insert(id.clone(), answered);
        self.send(messages::request(id, method, params)).await;
        let response = answer.await.expect("the scripted server's transport ended before the client answered");
        response.into_result().map(|raw| serde_json::from_str(raw.get()).unwrap_or(Value::Null))
    }
}

/// The server's loop: until the transport ends, answer and record what arrives, and send what
/// is queued on the outbox.
async fn serve(
    transport: Arc<MemoryTransport>,
    shared: Arc<Shared>,
    mut script: FullScript,
    outbox: Outbox,
    mut queued: mpsc::UnboundedReceiver<Message>,
) {
    loop {
        let event = tokio::select! {
            event = transport.recv() => event,
            Some(message) = queued.recv() => {
                if !shared.send(&transport, message).await {
                    return;
                }
                continue;
            }
        };
        let reply = match event {
            TransportEvent::Message(Message::Request(request)) => {
                let params = params_of(&request);
                shared.record(Event::Request { request: request.clone(), params: params.clone(), at: Instant::now() });
                script(Got::Request(&request, &params), &outbox).map(|reply| messages::response(&request.id, reply))
            }
            TransportEvent::Message(Message::Notification(notification)) => {
                let params = notification
                    .params
                    .as_ref()
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                shared.record(Event::Notification { method: notification.method, params });
                None
            }
            TransportEvent::Message(Message::Response(response)) => {
                shared.record(Event::Answer(response.clone()));
                let asked = response
                    .id
                    .as_ref()
                    .and_then(|id| shared.asks.lock().unwrap_or_else(|p| p.into_inner()).remove(id));
                match asked {
                    Some(waiter) => {
                        let _ = waiter.send(response);
                    }
                    None => {
                        script(Got::Answer(&response), &outbox);
                    }
                }
                None
            }
            // A memory transport fails no single request; anything else is its end.
            _ => return,
        };
        if let Some(reply) = reply
            && transport.send(reply).await.is_err()
        {
            return;
        }
        shared.wake();
        // What the script queued goes out after its reply.
        while let Ok(message) = queued.try_recv() {
            if !shared.send(&transport, message).await {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
