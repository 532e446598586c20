//! The tasks extension of 2026-07-28: task handles, `tasks/get` with inlined payloads, input
//! answered with `tasks/update` (each key once), pushes on `subscriptions/listen`, failures and
//! the deadline.

use super::*;

fn discover() -> Value {
    json!({
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "ext-tasks-fake", "version": "1.0"}}
    })
}

fn task(status: &str, poll: u64) -> Value {
    json!({"taskId": "m1", "status": status, "createdAt": "2026-07-28T10:30:00Z",
        "lastUpdatedAt": "2026-07-28T10:30:00Z", "ttlMs": null, "pollIntervalMs": poll})
}

fn handle() -> Value {
    let mut t = task("working", 100);
    t["resultType"] = json!("task");
    t
}

fn modern_base(request: &Request) -> Option<Result<Value, ErrorObject>> {
    Some(Ok(match request.method.as_str() {
        "server/discover" => discover(),
        "tools/list" => {
            json!({"tools": [{"name": "research", "inputSchema": {"type": "object"}}], "resultType": "complete"})
        }
        "tasks/cancel" => json!({"resultType": "complete"}),
        _ => return None,
    }))
}

fn modern_connection(client: MemoryTransport, callbacks: HostCallbacks) -> McpConnection {
    let mut options = ConnectionOptions::new("modern");
    options.callbacks = callbacks;
    options.era = EraPreference::Modern;
    connection(client, options)
}

/// The server asks for input in `tasks/get`, and asks again (the same key) before it has
/// processed the answer: the host is asked once, `tasks/update` carries the answer, and the
/// result inlined in the completed task is the call's. The call declared the extension.
#[tokio::test]
async fn input_requests_of_a_task_are_answered_once_with_tasks_update() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let mut answer: Option<String> = None;
        let mut polls_after_answer = 0;
        let seen = ScriptedServer::start_with(server, move |got, _| {
            let Got::Request(req, params) = got else { return None };
            if let Some(r) = modern_base(req) {
                return Some(r);
            }
            Some(Ok(match req.method.as_str() {
                "tools/call" => handle(),
                "tasks/update" => {
                    answer = params["inputResponses"]["q"]["content"]["interpretation"].as_str().map(str::to_owned);
                    json!({"resultType": "complete"})
                }
                "tasks/get" => {
                    let ask = || {
                        let mut t = task("input_required", 100);
                        t["inputRequests"] = json!({"q": {"method": "elicitation/create", "params": {"mode": "form",
                                "message": "Which python?", "requestedSchema": {"type": "object", "properties": {}}}}});
                        t["resultType"] = json!("complete");
                        t
                    };
                    match &answer {
                        None => ask(),
                        // Eventually consistent: the first poll after the update still asks.
                        Some(_) if polls_after_answer == 0 => {
                            polls_after_answer += 1;
                            ask()
                        }
                        Some(chosen) => {
                            let mut t = task("completed", 100);
                            t["result"] = json!({"content": [{"type": "text", "text": format!("about the {chosen}")}]});
                            t
                        }
                    }
                }
                _ => return None,
            }))
        });
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let callbacks = HostCallbacks { elicitation: Some(Arc::new(Asker(asked.clone()))), ..Default::default() };
        let conn = modern_connection(client, callbacks);
        conn.connect().await.unwrap();
        let result = conn.call_tool("research", None, RequestOptions::default()).await.unwrap().complete().unwrap();
        assert_eq!(text(&result), "about the snake");
        assert_eq!(result_task_id(&result).as_deref(), Some("m1"));
        assert_eq!(asked.lock().unwrap().len(), 1, "asked once: {:?}", asked.lock().unwrap());
        assert_eq!(methods(&seen, "tasks/update").len(), 1);
        let call = &methods(&seen, "tools/call")[0].0;
        let caps = &call["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert!(caps["extensions"]["io.modelcontextprotocol/tasks"].is_object(), "{call}");
        assert!(call.get("task").is_none(), "the server decides: {call}");
        let listen = methods(&seen, "subscriptions/listen");
        assert!(
            listen.iter().any(|(p, _)| p["notifications"]["taskIds"] == json!(["m1"])),
            "a listen for the task: {listen:?}"
        );
    })
    .await
}

/// An extension is in use only when both sides declare it: the `server/discover` probe declares
/// the tasks extension, and after a server that does not advertise it, no request does (the
/// client's other capabilities still go with every request).
#[tokio::test]
async fn the_tasks_extension_is_declared_only_to_a_server_that_advertises_it() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start_with(server, move |got, _| {
            let Got::Request(req, _) = got else { return None };
            Some(Ok(match req.method.as_str() {
                "server/discover" => {
                    let mut plain = discover();
                    plain["capabilities"] = json!({"tools": {}, "extensions": {"io.example/other": {}}});
                    plain
                }
                "tools/call" => json!({"content": [{"type": "text", "text": "done"}], "resultType": "complete"}),
                _ => return modern_base(req),
            }))
        });
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let callbacks = HostCallbacks { elicitation: Some(Arc::new(Asker(asked))), ..Default::default() };
        let conn = modern_connection(client, callbacks);
        conn.connect().await.unwrap();
        let result = conn.call_tool("research", None, RequestOptions::default()).await.unwrap().complete().unwrap();
        assert_eq!(text(&result), "done");
        let caps = |params: &Value| params["_meta"]["io.modelcontextprotocol/clientCapabilities"].clone();
        let probe = &methods(&seen, "server/discover")[0].0;
        assert!(caps(probe)["extensions"]["io.modelcontextprotocol/tasks"].is_object(), "{probe}");
        let call = &methods(&seen, "tools/call")[0].0;
        assert!(caps(call)["elicitation"].is_object(), "the other capabilities stay: {call}");
        assert!(caps(call)["extensions"].get("io.modelcontextprotocol/tasks").is_none(), "{call}");
        assert_eq!(call["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{call}");
    })
    .await
}

/// A `notifications/tasks` push on the task's listen brings the result: no poll is needed.
#[tokio::test(start_paused = true)]
async fn a_pushed_task_notification_brings_the_result() {
    let (client, server) = MemoryTransport::pair();
    let seen = ScriptedServer::start_with(server, move |got, out| {
        let Got::Request(req, params) = got else { return None };
        if let Some(r) = modern_base(req) {
            return Some(r);
        }
        match req.method.as_str() {
            "tools/call" => {
                let mut t = handle();
                t["pollIntervalMs"] = json!(60_000);
                Some(Ok(t))
            }
            "subscriptions/listen" if params["notifications"]["taskIds"] == json!(["m1"]) => {
                let mut done = task("completed", 60_000);
                done["result"] = json!({"content": [{"type": "text", "text": "pushed"}]});
                out.send(Message::notification("notifications/tasks", Some(&done)).unwrap());
                None
            }
            _ => None,
        }
    });
    let conn = modern_connection(client, HostCallbacks::default());
    conn.connect().await.unwrap();
    let started = Instant::now();
    let result = conn.call_tool("research", None, RequestOptions::default()).await.unwrap().complete().unwrap();
    assert_eq!(text(&result), "pushed");
    assert!(started.elapsed() < MAX_POLL_INTERVAL, "{:?}", started.elapsed());
    assert!(methods(&seen, "tasks/get").is_empty());
}

/// A failed task carries the JSON-RPC error; it is a `TaskError::Failed` with it.
#[tokio::test]
async fn a_failed_task_is_an_error_with_the_servers_error() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        ScriptedServer::start_with(server, move |got, _| {
            let Got::Request(req, _) = got else { return None };
            if let Some(r) = modern_base(req) {
                return Some(r);
            }
            Some(Ok(match req.method.as_str() {
                "tools/call" => handle(),
                "tasks/get" => {
                    let mut t = task("failed", 100);
                    t["error"] = json!({"code": -32603, "message": "API rate limit exceeded"});
                    t
                }
                _ => return None,
            }))
        });
        let conn = modern_connection(client, HostCallbacks::default());
        conn.connect().await.unwrap();
        let err = conn.call_tool("research", None, RequestOptions::default()).await.unwrap_err();
        let ConnectionError::Task(TaskError::Failed { error: Some(error), task_id, .. }) = &err else {
            panic!("{err:?}")
        };
        assert_eq!((error.code.0, task_id.as_str()), (-32603, "m1"));
        assert!(err.to_string().contains("API rate limit exceeded"), "{err}");
    })
    .await
}

/// The deadline passes while the task works: the call fails naming the task, `tasks/cancel`
/// (not `notifications/cancelled`) is sent, and the host can still ask for the task's state.
#[tokio::test(start_paused = true)]
async fn the_deadline_cancels_a_modern_task() {
    let (client, server) = MemoryTransport::pair();
    let seen = ScriptedServer::start_with(server, move |got, _| {
        let Got::Request(req, _) = got else { return None };
        if let Some(r) = modern_base(req) {
            return Some(r);
        }
        Some(Ok(match req.method.as_str() {
            "tools/call" => handle(),
            "tasks/get" => task("working", 100),
            _ => return None,
        }))
    });
    let conn = modern_connection(client, HostCallbacks::default());
    conn.connect().await.unwrap();
    let timeout = Duration::from_secs(2);
    let err = conn
        .call_tool("research", None, RequestOptions { timeout: Some(timeout), ..Default::default() })
        .await
        .unwrap_err();
    let ConnectionError::Task(TaskError::Timeout { task_id, .. }) = &err else { panic!("{err:?}") };
    assert_eq!(task_id, "m1");
    until_seen(&seen, "tasks/cancel").await;
    assert_eq!(methods(&seen, "tasks/cancel")[0].0["taskId"], "m1");
    let state = conn.get_task("m1").await.unwrap();
    assert_eq!(state.status, TaskState::Working);
    assert_eq!(state.poll_interval, Some(100));
    assert!(conn.list_tasks(None).await.is_err(), "no tasks/list in the extension");
}

/// Progress while `tools/call` has not answered yet moves the deadline that the task it then
/// starts is followed under: the request's rounds and the task share the call's one deadline.
/// Here the call's 2 s timeout would have passed before the task handle came (at 3.5 s) but for
/// the progress at 1.5 s and 3 s.
#[tokio::test(start_paused = true)]
async fn progress_before_the_task_handle_extends_the_deadline_of_the_task() {
    let (client, server) = MemoryTransport::pair();
    let seen = ScriptedServer::start_with(server, move |got, out| {
        let Got::Request(req, params) = got else { return None };
        if let Some(r) = modern_base(req) {
            return Some(r);
        }
        match req.method.as_str() {
            "tools/call" => {
                let token = params["_meta"]["progressToken"].clone();
                let (id, out) = (req.id.clone(), out.clone());
                tokio::spawn(async move {
                    for step in 1..=2 {
                        tokio::time::sleep(Duration::from_millis(1500)).await;
                        out.notify("notifications/progress", json!({"progressToken": token, "progress": step}));
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    out.reply(&id, Ok(handle()));
                });
                None
            }
            "tasks/get" => {
                let mut done = task("completed", 100);
                done["result"] = json!({"content": [{"type": "text", "text": "worth the wait"}]});
                Some(Ok(done))
            }
            _ => None,
        }
    });
    let conn = modern_connection(client, HostCallbacks::default());
    conn.connect().await.unwrap();
    let reports = Arc::new(Mutex::new(0));
    let counted = reports.clone();
    let options = RequestOptions {
        timeout: Some(Duration::from_secs(2)),
        progress: Some(Arc::new(move |_| *counted.lock().unwrap() += 1)),
    };
    let started = Instant::now();
    let result = conn.call_tool("research", None, options).await.unwrap().complete().unwrap();
    assert_eq!(text(&result), "worth the wait");
    assert_eq!(*reports.lock().unwrap(), 2, "both progress reports reached the host");
    assert!(started.elapsed() >= Duration::from_millis(3500), "{:?}", started.elapsed());
    assert_eq!(methods(&seen, "tasks/get").len(), 1, "the task was followed, not timed out");
    assert!(methods(&seen, "tasks/cancel").is_empty());
}
