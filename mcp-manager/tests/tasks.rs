//! Tool calls that run as tasks, against scripted in-memory servers of both eras: the poll
//! interval respected and clamped, status pushes, input asked for mid-task and answered, failed
//! and cancelled tasks, the deadline and a dropped call sending `tasks/cancel`, and hostile
//! servers (a task that never ends, an unknown status, a huge poll interval).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::RequestOptions;
use mcp_manager::callbacks::{ElicitationHandler, HostCallbacks};
use mcp_manager::connection::tasks::{MAX_POLL_INTERVAL, MIN_POLL_INTERVAL, result_task_id};
use mcp_manager::connection::{
    ConnectionError, ConnectionOptions, EraPreference, McpConnection, TaskError, TaskMode, TaskOptions, TaskUpdate,
    single_use_factory,
};
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::tasks::TaskState;
use mcp_protocol::types::tools::CallToolResult;
use mcp_protocol::{ErrorObject, Message, Request, RequestId, ResponsePayload};
use mcp_transport::MemoryTransport;
use serde_json::{Value, json};
use test_support::{Event, Got, ScriptedServer, within};
use tokio::time::Instant;

fn methods(seen: &ScriptedServer, method: &str) -> Vec<(Value, Instant)> {
    seen.timed_requests_of(method)
}

/// Wait (on the test's clock, at most 20 s) until the fake has seen `method`.
async fn until_seen(seen: &ScriptedServer, method: &str) {
    let arrived = seen
        .until(|events| events.iter().any(|e| matches!(e, Event::Request { request, .. } if request.method == method)));
    tokio::time::timeout(Duration::from_secs(20), arrived)
        .await
        .unwrap_or_else(|_| panic!("the server never got {method}"));
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or_default()
}

// ---- the legacy era (2025-11-25) ----

fn legacy_task(id: &str, status: &str, poll: Option<u64>) -> Value {
    let mut t = json!({"taskId": id, "status": status, "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000});
    if let Some(ms) = poll {
        t["pollInterval"] = json!(ms);
    }
    t
}

/// The handshake and the listing of a legacy server whose tool `research` has `support`.
fn legacy_base(request: &Request, support: &str) -> Option<Result<Value, ErrorObject>> {
    Some(Ok(match request.method.as_str() {
        "initialize" => json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "tasks-fake", "version": "1"},
            "capabilities": {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}}),
        "tools/list" => json!({"tools": [{"name": "research", "inputSchema": {"type": "object"},
            "execution": {"taskSupport": support}}]}),
        "tasks/cancel" => legacy_task("t1", "cancelled", None),
        _ => return None,
    }))
}

fn legacy_options(name: &str, callbacks: HostCallbacks) -> ConnectionOptions {
    let mut options = ConnectionOptions::new(name);
    options.era = EraPreference::Legacy;
    options.callbacks = callbacks;
    options
}

fn connection(client: MemoryTransport, options: ConnectionOptions) -> McpConnection {
    McpConnection::new(single_use_factory(Arc::new(client)), options)
}

fn observer() -> (TaskOptions, Arc<Mutex<Vec<TaskUpdate>>>) {
    let updates: Arc<Mutex<Vec<TaskUpdate>>> = Arc::default();
    let log = updates.clone();
    let options = TaskOptions {
        observer: Some(Arc::new(move |u: &TaskUpdate| log.lock().unwrap().push(u.clone()))),
        ..Default::default()
    };
    (options, updates)
}

/// A required tool is called with `task`; `tasks/get` is polled no sooner than the server's
/// `pollInterval`, more slowly while nothing changes; `tasks/result` gives the result, which
/// names its task; the observer sees each change.
#[tokio::test(start_paused = true)]
async fn a_required_tool_runs_as_a_task_polled_at_the_servers_interval() {
    let (client, server) = MemoryTransport::pair();
    let mut polls = 0;
    let seen = ScriptedServer::start_with(server, move |got, _| {
        let Got::Request(req, params) = got else { return None };
        if let Some(r) = legacy_base(req, "required") {
            return Some(r);
        }
        Some(Ok(match req.method.as_str() {
            "tools/call" => json!({"task": legacy_task("t1", "working", Some(500))}),
            "tasks/get" => {
                polls += 1;
                let status = if polls < 3 { "working" } else { "completed" };
                legacy_task(params["taskId"].as_str().unwrap(), status, Some(500))
            }
            "tasks/result" => json!({"content": [{"type": "text", "text": "# Report"}]}),
            _ => return None,
        }))
    });
    let conn = connection(client, legacy_options("legacy", HostCallbacks::default()));
    conn.connect().await.unwrap();
    let (task, updates) = observer();
    let started = Instant::now();
    let outcome = conn.call_tool_with("research", None, RequestOptions::default(), task).await.unwrap();
    let Outcome::Complete(result) = outcome else { panic!("{outcome:?}") };
    assert_eq!(text(&result), "# Report");
    assert_eq!(result_task_id(&result).as_deref(), Some("t1"));
    let calls = methods(&seen, "tools/call");
    assert!(calls[0].0["task"].is_object(), "asked for a task: {:?}", calls[0].0);
    let gets: Vec<Duration> = methods(&seen, "tasks/get").iter().map(|(_, t)| *t - started).collect();
    let ms = Duration::from_millis;
    // 500 ms, then half as long again while nothing changes (750 ms, then 1125 ms).
    assert_eq!(gets, [ms(500), ms(1250), ms(2375)], "polls follow the server's interval");
    assert_eq!(methods(&seen, "tasks/result").len(), 1);
    assert!(methods(&seen, "tasks/cancel").is_empty(), "a finished task is not cancelled");
    let updates = updates.lock().unwrap();
    assert!(updates[0].first && updates[0].task.status == TaskState::Working);
    assert_eq!(updates.last().unwrap().task.status, TaskState::Completed);
    assert_eq!(updates.len(), 2, "one report per change: {updates:?}");
}

/// An optional tool is a task only when the host asks for one.
#[tokio::test]
async fn an_optional_tool_is_a_task_only_when_asked() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start_with(server, move |got, _| {
            let Got::Request(req, params) = got else { return None };
            if let Some(r) = legacy_base(req, "optional") {
                return Some(r);
            }
            Some(Ok(match req.method.as_str() {
                "tools/call" if params.get("task").is_some() => {
                    json!({"task": legacy_task("t1", "completed", None)})
                }
                "tools/call" => json!({"content": [{"type": "text", "text": "direct"}]}),
                "tasks/result" => json!({"content": [{"type": "text", "text": "as a task"}]}),
                _ => return None,
            }))
        });
        let conn = connection(client, legacy_options("optional", HostCallbacks::default()));
        conn.connect().await.unwrap();
        let direct = conn.call_tool("research", None, RequestOptions::default()).await.unwrap();
        assert_eq!(text(&direct.complete().unwrap()), "direct");
        let asked = TaskOptions { mode: Some(TaskMode::Always), ..Default::default() };
        let tasked = conn.call_tool_with("research", None, RequestOptions::default(), asked).await.unwrap();
        assert_eq!(text(&tasked.complete().unwrap()), "as a task");
        let calls = methods(&seen, "tools/call");
        assert!(calls[0].0.get("task").is_none() && calls[1].0["task"].is_object(), "{calls:?}");
    })
    .await
}

/// A server that does not declare task-augmented `tools/call` gets plain calls, even of a tool
/// whose `taskSupport` says `required` and with a host that asks for tasks: the capability is
/// the gate (2025-11-25), and the listing the client holds does not open it.
#[tokio::test]
async fn no_task_without_the_servers_tool_call_tasks_capability() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start_with(server, move |got, _| {
            let Got::Request(req, _) = got else { return None };
            Some(Ok(match req.method.as_str() {
                "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "no-tasks", "version": "1"}}),
                "tools/list" => json!({"tools": [{"name": "research", "inputSchema": {"type": "object"},
                    "execution": {"taskSupport": "required"}}]}),
                "tools/call" => json!({"content": [{"type": "text", "text": "direct"}]}),
                _ => return None,
            }))
        });
        let conn = connection(client, legacy_options("no-tasks", HostCallbacks::default()));
        conn.connect().await.unwrap();
        let listed = conn.inventory().await.unwrap();
        assert_eq!(listed.tools[0].execution.as_ref().unwrap().task_support.as_deref(), Some("required"));
        for mode in [None, Some(TaskMode::Always)] {
            let options = TaskOptions { mode, ..Default::default() };
            let outcome = conn.call_tool_with("research", None, RequestOptions::default(), options).await.unwrap();
            assert_eq!(text(&outcome.complete().unwrap()), "direct");
        }
        let calls = methods(&seen, "tools/call");
        assert_eq!(calls.len(), 2);
        assert!(calls.iter().all(|(params, _)| params.get("task").is_none()), "a task was asked for: {calls:?}");
    })
    .await
}

/// A poll interval of 0 is raised to the minimum, a huge one cut to the maximum.
#[tokio::test(start_paused = true)]
async fn the_poll_interval_is_clamped() {
    for (asked, expected) in [(0u64, MIN_POLL_INTERVAL), (u64::MAX, MAX_POLL_INTERVAL)] {
        let (client, server) = MemoryTransport::pair();
        let mut polls = 0;
        let seen = ScriptedServer::start_with(server, move |got, _| {
            let Got::Request(req, _) = got else { return None };
            if let Some(r) = legacy_base(req, "required") {
                return Some(r);
            }
            Some(Ok(match req.method.as_str() {
                "tools/call" => json!({"task": legacy_task("t1", "working", Some(asked))}),
                "tasks/get" => {
                    polls += 1;
                    legacy_task("t1", if polls < 2 { "working" } else { "completed" }, Some(asked))
                }
                "tasks/result" => json!({"content": [{"type": "text", "text": "ok"}]}),
                _ => return None,
            }))
        });
        let conn = connection(client, legacy_options("clamped", HostCallbacks::default()));
        conn.connect().await.unwrap();
        let started = Instant::now();
        let options = RequestOptions { timeout: Some(Duration::from_secs(600)), ..Default::default() };
        conn.call_tool("research", None, options).await.unwrap();
        let first = methods(&seen, "tasks/get")[0].1 - started;
        assert_eq!(first, expected, "pollInterval {asked}");
    }
}

/// A status pushed with `notifications/tasks/status` ends the wait at once: no poll at the
/// (clamped, 30 s) interval.
#[tokio::test(start_paused = true)]
async fn a_status_notification_wakes_the_call() {
    let (client, server) = MemoryTransport::pair();
    let seen = ScriptedServer::start_with(server, move |got, out| {
        let Got::Request(req, _) = got else { return None };
        if let Some(r) = legacy_base(req, "required") {
            return Some(r);
        }
        Some(Ok(match req.method.as_str() {
            "tools/call" => {
                let push = legacy_task("t1", "completed", Some(60_000));
                out.send(Message::notification("notifications/tasks/status", Some(&push)).unwrap());
                json!({"task": legacy_task("t1", "working", Some(60_000))})
            }
            "tasks/result" => json!({"content": [{"type": "text", "text": "pushed"}]}),
            _ => return None,
        }))
    });
    let conn = connection(client, legacy_options("pushed", HostCallbacks::default()));
    conn.connect().await.unwrap();
    let started = Instant::now();
    let result = conn.call_tool("research", None, RequestOptions::default()).await.unwrap().complete().unwrap();
    assert_eq!(text(&result), "pushed");
    assert!(started.elapsed() < MAX_POLL_INTERVAL, "woken by the push after {:?}", started.elapsed());
    assert!(methods(&seen, "tasks/get").is_empty(), "no poll was needed");
}

/// Answers every form with a fixed interpretation, and counts the questions.
struct Asker(Arc<Mutex<Vec<String>>>);

impl ElicitationHandler for Asker {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        self.0.lock().unwrap().push(params.message().unwrap_or_default().to_owned());
        Box::pin(
            async move { Ok(ElicitResult::accept(json!({"interpretation": "snake"}).as_object().cloned().unwrap())) },
        )
    }
}

/// `input_required`: the client opens `tasks/result`, on which the server asks its question
/// (`elicitation/create`); the host's handler answers it and the result comes back on
/// `tasks/result`.
#[tokio::test]
async fn legacy_input_required_is_answered_through_tasks_result() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let mut result_id: Option<RequestId> = None;
        let seen = ScriptedServer::start_with(server, move |got, out| {
            let (req, _) = match got {
                Got::Request(req, params) => (req, params),
                Got::Answer(answer) => {
                    let ResponsePayload::Result(raw) = &answer.payload else { panic!("{answer:?}") };
                    let answer: Value = serde_json::from_str(raw.get()).unwrap();
                    let chosen = answer["content"]["interpretation"].as_str().unwrap().to_owned();
                    let result = json!({"content": [{"type": "text", "text": format!("about the {chosen}")}]});
                    out.send(Message::response(result_id.take().unwrap(), &result).unwrap());
                    return None;
                }
            };
            if let Some(r) = legacy_base(req, "required") {
                return Some(r);
            }
            Some(Ok(match req.method.as_str() {
                "tools/call" => json!({"task": legacy_task("t1", "working", Some(100))}),
                "tasks/get" => legacy_task("t1", "input_required", Some(100)),
                "tasks/result" => {
                    result_id = Some(req.id.clone());
                    let ask = json!({"mode": "form", "message": "Which python?", "requestedSchema": {"type": "object",
                            "properties": {"interpretation": {"type": "string"}}},
                            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}});
                    out.send(
                        Message::request(RequestId::String("e1".into()), "elicitation/create", Some(&ask)).unwrap(),
                    );
                    return None;
                }
                _ => return None,
            }))
        });
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let callbacks = HostCallbacks { elicitation: Some(Arc::new(Asker(asked.clone()))), ..Default::default() };
        let conn = connection(client, legacy_options("asks", callbacks));
        conn.connect().await.unwrap();
        let result = conn.call_tool("research", None, RequestOptions::default()).await.unwrap().complete().unwrap();
        assert_eq!(text(&result), "about the snake");
        assert_eq!(*asked.lock().unwrap(), ["Which python?"]);
        assert_eq!(methods(&seen, "tasks/result").len(), 1);
    })
    .await
}

/// A failed task whose `tasks/result` is a JSON-RPC error is a `TaskError::Failed` with it;
/// a cancelled one is `TaskError::Cancelled`.
#[tokio::test]
async fn legacy_failed_and_cancelled_tasks_are_errors() {
    within(async {
        for (status, want_failed) in [("failed", true), ("cancelled", false)] {
            let (client, server) = MemoryTransport::pair();
            ScriptedServer::start_with(server, move |got, _| {
                let Got::Request(req, _) = got else { return None };
                if let Some(r) = legacy_base(req, "required") {
                    return Some(r);
                }
                match req.method.as_str() {
                    "tools/call" => Some(Ok(json!({"task": legacy_task("t1", status, None)}))),
                    "tasks/result" => {
                        Some(Err(ErrorObject::new(mcp_protocol::ErrorCode::INTERNAL_ERROR, "rate limit")))
                    }
                    _ => None,
                }
            });
            let conn = connection(client, legacy_options("fails", HostCallbacks::default()));
            conn.connect().await.unwrap();
            let err = conn.call_tool("research", None, RequestOptions::default()).await.unwrap_err();
            let message = err.to_string();
            match (&err, want_failed) {
                (ConnectionError::Task(TaskError::Failed { task_id, error, .. }), true) => {
                    assert_eq!(task_id, "t1");
                    assert_eq!(error.as_ref().unwrap().message, "rate limit");
                    assert!(message.contains("\"fails\"") && message.contains("rate limit"), "{message}");
                }
                (ConnectionError::Task(TaskError::Cancelled { task_id, .. }), false) => assert_eq!(task_id, "t1"),
                _ => panic!("{status}: {err:?}"),
            }
        }
    })
    .await
}

/// A task that stays `working` forever: the call fails at its deadline, not before or after,
/// naming the task, and `tasks/cancel` is sent.
#[tokio::test(start_paused = true)]
async fn a_task_that_never_ends_times_out_and_is_cancelled() {
    let (client, server) = MemoryTransport::pair();
    let seen = ScriptedServer::start_with(server, move |got, _| {
        let Got::Request(req, _) = got else { return None };
        if let Some(r) = legacy_base(req, "required") {
            return Some(r);
        }
        Some(Ok(match req.method.as_str() {
            "tools/call" => json!({"task": legacy_task("t1", "working", Some(100))}),
            "tasks/get" => legacy_task("t1", "working", Some(100)),
            _ => return None,
        }))
    });
    let conn = connection(client, legacy_options("forever", HostCallbacks::default()));
    conn.connect().await.unwrap();
    let started = Instant::now();
    let timeout = Duration::from_secs(3);
    let err = conn
        .call_tool("research", None, RequestOptions { timeout: Some(timeout), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(started.elapsed(), timeout, "ends at the deadline");
    let ConnectionError::Task(TaskError::Timeout { task_id, status, .. }) = &err else { panic!("{err:?}") };
    assert_eq!((task_id.as_str(), status.as_str()), ("t1", "working"));
    assert!(err.to_string().contains("tasks/cancel was sent"), "{err}");
    until_seen(&seen, "tasks/cancel").await;
    assert_eq!(methods(&seen, "tasks/cancel")[0].0["taskId"], "t1");
    let polls = methods(&seen, "tasks/get").len();
    assert!((3..=30).contains(&polls), "polls bounded by the deadline: {polls}");
}

/// The host drops the call while the task runs: `tasks/cancel` is sent.
#[tokio::test]
async fn a_dropped_call_cancels_its_task() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start_with(server, move |got, _| {
            let Got::Request(req, _) = got else { return None };
            if let Some(r) = legacy_base(req, "required") {
                return Some(r);
            }
            Some(Ok(match req.method.as_str() {
                "tools/call" => json!({"task": legacy_task("t1", "working", Some(100))}),
                "tasks/get" => legacy_task("t1", "working", Some(100)),
                _ => return None,
            }))
        });
        let conn = Arc::new(connection(client, legacy_options("dropped", HostCallbacks::default())));
        conn.connect().await.unwrap();
        let c = conn.clone();
        let call = tokio::spawn(async move { c.call_tool("research", None, RequestOptions::default()).await });
        until_seen(&seen, "tasks/get").await;
        assert!(methods(&seen, "tasks/cancel").is_empty());
        call.abort();
        until_seen(&seen, "tasks/cancel").await;
    })
    .await
}

/// A status this client does not know is not terminal: the task is followed on, and the
/// observer sees the status as it came.
#[tokio::test(start_paused = true)]
async fn an_unknown_status_is_followed_on() {
    let (client, server) = MemoryTransport::pair();
    let mut polls = 0;
    ScriptedServer::start_with(server, move |got, _| {
        let Got::Request(req, _) = got else { return None };
        if let Some(r) = legacy_base(req, "required") {
            return Some(r);
        }
        Some(Ok(match req.method.as_str() {
            "tools/call" => json!({"task": legacy_task("t1", "paused", Some(100))}),
            "tasks/get" => {
                polls += 1;
                legacy_task("t1", if polls < 2 { "paused" } else { "completed" }, Some(100))
            }
            "tasks/result" => json!({"content": [{"type": "text", "text": "resumed"}]}),
            _ => return None,
        }))
    });
    let conn = connection(client, legacy_options("odd", HostCallbacks::default()));
    conn.connect().await.unwrap();
    let (task, updates) = observer();
    let result = conn.call_tool_with("research", None, RequestOptions::default(), task).await.unwrap();
    assert_eq!(text(&result.complete().unwrap()), "resumed");
    assert_eq!(updates.lock().unwrap()[0].task.status, TaskState::Unknown("paused".into()));
}

#[path = "tasks/modern.rs"]
mod modern;
