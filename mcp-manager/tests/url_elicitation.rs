//! URL elicitation required (-32042) in both eras, and server requests without params, against
//! scripted in-memory servers that can also send notifications and requests of their own.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::callbacks::{ElicitationHandler, HostCallbacks, NotificationSink, SamplingHandler};
use mcp_manager::connection::{
    ConnectionError, ConnectionOptions, EraPreference, MAX_URL_ELICITATION_RETRIES, MAX_URL_ELICITATIONS_PER_ERROR,
    McpConnection, single_use_factory,
};
use mcp_manager::{RequestOptions, SessionError};
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult};
use mcp_protocol::{ErrorCode, ErrorObject, Message, Request, RequestId};
use mcp_transport::MemoryTransport;
use serde_json::{Value, json};
use test_support::{Event, Script, ScriptedServer, within};
use tokio::sync::mpsc;

fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy-fake", "version": "1"}})
}

fn discover_result() -> Value {
    json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-fake", "version": "1"}}})
}

fn url_required(elicitations: Value) -> ErrorObject {
    ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, "authorization required")
        .with_data(json!({"elicitations": elicitations}))
}

fn ok_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "resultType": "complete"})
}

/// What the user does with a URL.
#[derive(Clone, Copy, PartialEq)]
enum User {
    /// Accept, and (for the legacy fakes) "open" the URL: the fake then completes it.
    Accept,
    Decline,
}

/// The host's elicitation handler: answers URLs as `user` does, records what it was shown, and
/// for every accepted URL tells `opened` (the fake server completes it from there).
struct UrlHost {
    user: User,
    url_mode: bool,
    asked: Mutex<Vec<(String, Option<String>)>>,
    opened: Option<mpsc::UnboundedSender<String>>,
}

impl UrlHost {
    fn new(user: User) -> Self {
        UrlHost { user, url_mode: true, asked: Mutex::default(), opened: None }
    }
}

impl ElicitationHandler for UrlHost {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        let ElicitParams::Url(url) = params else {
            return Box::pin(async { Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, "not a URL")) });
        };
        self.asked.lock().unwrap().push((url.url.clone(), url.elicitation_id.clone()));
        if self.user == User::Accept
            && let Some(opened) = &self.opened
        {
            let _ = opened.send(url.elicitation_id.clone().unwrap_or_default());
        }
        let user = self.user;
        Box::pin(async move {
            Ok(match user {
                User::Accept => ElicitResult {
                    action: mcp_protocol::types::elicitation::ElicitAction::Accept,
                    ..Default::default()
                },
                User::Decline => ElicitResult::decline(),
            })
        })
    }

    fn supports_url(&self) -> bool {
        self.url_mode
    }
}

/// Records the elicitation completions the host's sink receives.
#[derive(Default)]
struct Sink(Mutex<Vec<String>>);

impl NotificationSink for Sink {
    fn on_notification(&self, _server: &str, notification: &ServerNotification) {
        if let ServerNotification::ElicitationComplete(Some(done)) = notification {
            self.0.lock().unwrap().push(done.elicitation_id.clone());
        }
    }
}

fn options(name: &str, era: EraPreference, host: Arc<UrlHost>, sink: Option<Arc<Sink>>) -> ConnectionOptions {
    let mut options = ConnectionOptions::new(name);
    options.era = era;
    options.callbacks = HostCallbacks {
        elicitation: Some(host),
        notifications: sink.map(|s| s as Arc<dyn NotificationSink>),
        ..Default::default()
    };
    options
}

fn connection(client: MemoryTransport, options: ConnectionOptions) -> McpConnection {
    McpConnection::new(single_use_factory(Arc::new(client)), options)
}

fn tool_calls(log: &ScriptedServer) -> usize {
    log.count("tools/call")
}

/// A legacy server that needs the user at a URL until it completed elicitation `e1`.
fn legacy_authorizer(done: Arc<Mutex<bool>>) -> Script {
    Box::new(move |req, _| match req.method.as_str() {
        "initialize" => Some(Ok(initialize_result())),
        "tools/call" if *done.lock().unwrap() => Some(Ok(ok_result("authorized"))),
        "tools/call" => Some(Err(url_required(json!([{"mode": "url", "message": "Sign in to the demo",
            "url": "https://auth.example/authorize?s=1", "elicitationId": "e1"}])))),
        _ => None,
    })
}

/// Legacy era: the URL reaches the host, the elicitation id is waited for, the server's
/// completion reaches both the call and the host's sink, and the retry succeeds.
#[tokio::test]
async fn a_completed_url_elicitation_retries_the_call_in_the_legacy_era() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let done = Arc::new(Mutex::new(false));
        let log = ScriptedServer::start(server, legacy_authorizer(done.clone()));
        let push = log.outbox();
        // The user "opens" the URL: the server completes the elicitation some time later.
        let (opened, mut opens) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(id) = opens.recv().await {
                tokio::time::sleep(Duration::from_millis(50)).await;
                *done.lock().unwrap() = true;
                let params = json!({"elicitationId": id});
                push.send(Message::notification("notifications/elicitation/complete", Some(&params)).unwrap());
            }
        });
        let host = Arc::new(UrlHost { opened: Some(opened), ..UrlHost::new(User::Accept) });
        let sink = Arc::new(Sink::default());
        let conn = connection(client, options("auth", EraPreference::Legacy, host.clone(), Some(sink.clone())));
        conn.connect().await.unwrap();
        let outcome = conn.call_tool("files", None, Default::default()).await.unwrap();
        let Outcome::Complete(result) = outcome else { panic!("{outcome:?}") };
        assert_eq!(result.content[0].as_text(), Some("authorized"));
        assert_eq!(
            *host.asked.lock().unwrap(),
            [("https://auth.example/authorize?s=1".to_owned(), Some("e1".to_owned()))]
        );
        assert_eq!(*sink.0.lock().unwrap(), ["e1"], "the host's sink still gets the completion");
        let order: Vec<&str> = log
            .events()
            .iter()
            .filter_map(|e| match e {
                Event::Request { request, .. } if request.method == "tools/call" => Some("call"),
                Event::Sent(m) if m.method() == Some("notifications/elicitation/complete") => Some("complete"),
                _ => None,
            })
            .collect();
        assert_eq!(order, ["call", "complete", "call"], "retried once, after the completion");
    })
    .await
}

/// The user declines the URL: the call fails with that reason and is not retried.
#[tokio::test]
async fn a_declined_url_elicitation_fails_the_call() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let log = ScriptedServer::start(server, legacy_authorizer(Arc::default()));
        let host = Arc::new(UrlHost::new(User::Decline));
        let conn = connection(client, options("auth", EraPreference::Legacy, host.clone(), None));
        conn.connect().await.unwrap();
        let err = conn.call_tool("files", None, Default::default()).await.unwrap_err();
        assert!(matches!(&err, ConnectionError::UrlElicitationFailed { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("\"auth\"")
                && text.contains("https://auth.example/authorize?s=1")
                && text.contains("declined"),
            "{text}"
        );
        assert_eq!(tool_calls(&log), 1, "no retry");
    })
    .await
}

/// Without URL mode, the host is asked nothing and the call fails with the server's error.
#[tokio::test]
async fn without_url_mode_the_servers_error_is_the_result() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let log = ScriptedServer::start(server, legacy_authorizer(Arc::default()));
        let host = Arc::new(UrlHost { url_mode: false, ..UrlHost::new(User::Accept) });
        let conn = connection(client, options("auth", EraPreference::Legacy, host.clone(), None));
        conn.connect().await.unwrap();
        let err = conn.call_tool("files", None, Default::default()).await.unwrap_err();
        let ConnectionError::Session(SessionError::Rpc { error, .. }) = &err else { panic!("{err}") };
        assert_eq!(error.code, ErrorCode::URL_ELICITATION_REQUIRED);
        assert!(err.to_string().contains("authorization required"), "{err}");
        assert!(host.asked.lock().unwrap().is_empty());
        assert_eq!(tool_calls(&log), 1);
    })
    .await
}

/// The user accepted, but the server never says the elicitation is complete: the call fails at
/// its deadline with a timeout that names the elicitation id.
#[tokio::test(start_paused = true)]
async fn a_url_elicitation_never_completed_times_out_at_the_calls_deadline() {
    let (client, server) = MemoryTransport::pair();
    let log = ScriptedServer::start(server, legacy_authorizer(Arc::default()));
    let host = Arc::new(UrlHost::new(User::Accept));
    let conn = connection(client, options("auth", EraPreference::Legacy, host.clone(), None));
    conn.connect().await.unwrap();
    let options = RequestOptions { timeout: Some(Duration::from_secs(30)), ..Default::default() };
    let err = conn.call_tool("files", None, options).await.unwrap_err();
    let ConnectionError::UrlElicitationTimeout { elicitation_ids, after, .. } = &err else { panic!("{err}") };
    assert_eq!(elicitation_ids, &["e1"]);
    assert_eq!(*after, Duration::from_secs(30));
    let text = err.to_string();
    assert!(
        text.contains("\"auth\"") && text.contains("timed out") && text.contains("notifications/elicitation/complete"),
        "{text}"
    );
    assert_eq!(tool_calls(&log), 1);
}

/// Modern era: the URL has no elicitation id (the revision has neither ids nor the completion
/// notification), so the handler's accept is enough and the call is retried at once.
#[tokio::test]
async fn modern_era_url_elicitations_retry_after_the_accept() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let mut calls = 0;
        let log = ScriptedServer::start(server, move |req, _| match req.method.as_str() {
            "server/discover" => Some(Ok(discover_result())),
            "tools/call" => {
                calls += 1;
                Some(if calls == 1 {
                    Err(url_required(json!([{"mode": "url", "message": "Sign in", "url": "https://auth.example/m"}])))
                } else {
                    Ok(ok_result("modern authorized"))
                })
            }
            _ => None,
        });
        let host = Arc::new(UrlHost::new(User::Accept));
        let conn = connection(client, options("modern-auth", EraPreference::Auto, host.clone(), None));
        conn.connect().await.unwrap();
        let Outcome::Complete(result) = conn.call_tool("files", None, Default::default()).await.unwrap() else {
            panic!()
        };
        assert_eq!(result.content[0].as_text(), Some("modern authorized"));
        assert_eq!(*host.asked.lock().unwrap(), [("https://auth.example/m".to_owned(), None)]);
        assert_eq!(tool_calls(&log), 2);
    })
    .await
}

/// A server that answers -32042 forever is retried a bounded number of times; an error with too
/// many URLs asks the user nothing.
#[tokio::test]
async fn url_elicitation_retries_and_elicitations_are_bounded() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let log = ScriptedServer::start(
            server,
            |req, _| match req.method.as_str() {
                "server/discover" => Some(Ok(discover_result())),
                "tools/call" => Some(Err(url_required(json!([{"mode": "url", "message": "again", "url": "https://a.example"}])))),
                _ => None,
            },
        );
        let host = Arc::new(UrlHost::new(User::Accept));
        let conn = connection(client, options("greedy", EraPreference::Auto, host.clone(), None));
        conn.connect().await.unwrap();
        let err = conn.call_tool("files", None, Default::default()).await.unwrap_err();
        assert!(matches!(&err, ConnectionError::UrlElicitationStillRequired { retries, .. } if *retries == MAX_URL_ELICITATION_RETRIES), "{err}");
        assert_eq!(tool_calls(&log), MAX_URL_ELICITATION_RETRIES + 1);
        assert_eq!(host.asked.lock().unwrap().len(), MAX_URL_ELICITATION_RETRIES);

        let (client, server) = MemoryTransport::pair();
        let many: Vec<Value> = (0..MAX_URL_ELICITATIONS_PER_ERROR + 1)
            .map(|i| json!({"mode": "url", "message": "m", "url": format!("https://a.example/{i}"), "elicitationId": i.to_string()}))
            .collect();
        let log = ScriptedServer::start(
            server,
            move |req, _| match req.method.as_str() {
                "initialize" => Some(Ok(initialize_result())),
                "tools/call" => Some(Err(url_required(Value::from(many.clone())))),
                _ => None,
            },
        );
        let host = Arc::new(UrlHost::new(User::Accept));
        let conn = connection(client, options("wide", EraPreference::Legacy, host.clone(), None));
        conn.connect().await.unwrap();
        let err = conn.call_tool("files", None, Default::default()).await.unwrap_err();
        assert!(matches!(&err, ConnectionError::TooManyUrlElicitations { count, .. } if *count == MAX_URL_ELICITATIONS_PER_ERROR + 1), "{err}");
        assert!(host.asked.lock().unwrap().is_empty());
        assert_eq!(tool_calls(&log), 1);
    })
    .await
}

struct Llm;

impl SamplingHandler for Llm {
    fn create_message(
        &self,
        _server: &str,
        _params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async { Ok(CreateMessageResult::assistant_text("m", "t")) })
    }
}

/// `sampling/createMessage` without params is invalid params (-32602) for a host that samples,
/// and method not found (-32601) only for one that does not.
#[tokio::test]
async fn sampling_without_params_is_invalid_params() {
    within(async {
        for (sampling, want) in [(true, ErrorCode::INVALID_PARAMS), (false, ErrorCode::METHOD_NOT_FOUND)] {
            let (client, server) = MemoryTransport::pair();
            let log = ScriptedServer::start(server, |req, _| match req.method.as_str() {
                "initialize" => Some(Ok(initialize_result())),
                _ => None,
            });
            let mut options = ConnectionOptions::new("asker");
            options.era = EraPreference::Legacy;
            if sampling {
                options.callbacks.sampling = Some(Arc::new(Llm));
            }
            let conn = connection(client, options);
            conn.connect().await.unwrap();
            let request = Message::Request(Request {
                id: RequestId::Number(900),
                method: "sampling/createMessage".into(),
                params: None,
            });
            log.outbox().send(request);
            log.until(|events| events.iter().any(|e| matches!(e, Event::Answer(_)))).await;
            let error = log.answers().remove(0).into_result().expect_err("an error");
            assert_eq!(error.code, want, "sampling handler: {sampling}: {error}");
        }
    })
    .await
}
