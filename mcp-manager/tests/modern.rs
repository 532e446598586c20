//! The modern era over an in-memory transport: era negotiation, `_meta` on every request, and
//! multi round-trip requests, with the test playing a scripted server.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::callbacks::{ElicitationHandler, HostCallbacks, RootsProvider};
use mcp_manager::connection::{ConnectionError, ConnectionOptions, EraPreference, McpConnection, single_use_factory};
use mcp_protocol::types::elicitation::{ElicitAction, ElicitParams, ElicitResult};
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::roots::Root;
use mcp_protocol::{Era, ErrorCode, ErrorObject, ProtocolVersion, Request};
use mcp_transport::{MemoryTransport, Transport};
use serde_json::{Value, json};

use test_support::{ScriptedServer, within};

fn discover_result(versions: &[&str]) -> Value {
    json!({
        "supportedVersions": versions,
        "capabilities": {"tools": {}},
        "instructions": "be nice",
        "ttlMs": 60000, "cacheScope": "public", "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-fake", "version": "1.0"}}
    })
}

fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy-fake", "version": "1"}})
}

fn connection(client: MemoryTransport, options: ConnectionOptions) -> McpConnection {
    McpConnection::new(single_use_factory(Arc::new(client)), options)
}

#[tokio::test]
async fn modern_server_is_spoken_to_in_the_modern_era_with_meta_on_every_request() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start(server, |req, _| {
            Some(Ok(match req.method.as_str() {
                "server/discover" => discover_result(&["2025-11-25", "2026-07-28"]),
                "tools/call" => json!({"content": [{"type": "text", "text": "hi"}], "resultType": "complete"}),
                _ => return Some(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no"))),
            }))
        });
        let conn = connection(client, ConnectionOptions::new("modern"));
        let info = conn.connect().await.unwrap();
        assert_eq!(info.protocol_version, ProtocolVersion::V2026_07_28);
        assert_eq!(info.protocol_version.era(), Some(Era::Modern));
        assert_eq!(info.implementation.name, "modern-fake");
        assert_eq!(info.instructions.as_deref(), Some("be nice"));
        let outcome = conn.call_tool("echo", None, Default::default()).await.unwrap();
        assert!(matches!(outcome, Outcome::Complete(r) if r.content[0].as_text() == Some("hi")));
        let seen = seen.requests();
        assert_eq!(seen.iter().map(|(r, _)| r.method.as_str()).collect::<Vec<_>>(), ["server/discover", "tools/call"]);
        for (req, params) in seen.iter() {
            let meta = &params["_meta"];
            assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{}", req.method);
            assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object(), "{}", req.method);
            assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "mcp-stack", "{}", req.method);
        }
        assert!(seen.iter().all(|(r, _)| r.method != "initialize"), "no initialize in the modern era");
    })
    .await
}

#[tokio::test]
async fn legacy_server_gets_the_initialize_handshake_after_the_probe_fails() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start(server, |req, _| match req.method.as_str() {
            "server/discover" => Some(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found"))),
            "initialize" => Some(Ok(initialize_result())),
            "tools/call" => Some(Ok(json!({"content": []}))),
            _ => None,
        });
        let conn = connection(client, ConnectionOptions::new("legacy"));
        let info = conn.connect().await.unwrap();
        assert_eq!(info.protocol_version, ProtocolVersion::V2025_11_25);
        conn.call_tool("echo", None, Default::default()).await.unwrap();
        let seen = seen.requests();
        assert_eq!(
            seen.iter().map(|(r, _)| r.method.as_str()).collect::<Vec<_>>(),
            ["server/discover", "initialize", "tools/call"]
        );
        assert!(seen[2].1.get("_meta").is_none(), "legacy requests carry no modern _meta: {}", seen[2].1);
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_silent_probe_times_out_into_the_legacy_era() {
    let (client, server) = MemoryTransport::pair();
    ScriptedServer::start(server, |req, _| match req.method.as_str() {
        "initialize" => Some(Ok(initialize_result())),
        _ => None,
    });
    let info = connection(client, ConnectionOptions::new("quiet")).connect().await.unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V2025_11_25);
}

#[tokio::test(start_paused = true)]
async fn a_modern_server_too_slow_for_the_probe_is_probed_again_when_it_refuses_initialize() {
    // A modern stdio server that starts slowly (seen: a Python server on a busy machine) answers
    // the first probe after the client gave up on it, then refuses the legacy handshake: the
    // client must settle on the modern era, not fail.
    let (client, server) = MemoryTransport::pair();
    let mut discovers = 0;
    let seen = ScriptedServer::start(server, move |req, _| match req.method.as_str() {
        "server/discover" => {
            discovers += 1;
            (discovers > 1).then(|| Ok(discover_result(&["2026-07-28"])))
        }
        "initialize" => Some(Err(ErrorObject::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
        ))),
        _ => None,
    });
    let info = connection(client, ConnectionOptions::new("slow-modern")).connect().await.unwrap();
    assert_eq!(info.protocol_version.era(), Some(Era::Modern));
    let methods: Vec<String> = seen.requests().iter().map(|(r, _)| r.method.clone()).collect();
    assert_eq!(methods[..3], ["server/discover", "initialize", "server/discover"], "{methods:?}");
}

#[tokio::test(start_paused = true)]
async fn a_silent_probe_and_a_refused_handshake_fail_when_the_second_probe_fails() {
    let (client, server) = MemoryTransport::pair();
    let mut discovers = 0;
    let seen = ScriptedServer::start(server, move |req, _| match req.method.as_str() {
        "server/discover" => {
            discovers += 1;
            (discovers > 1).then(|| Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "broken discovery")))
        }
        "initialize" => Some(Err(ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "modern only"))),
        _ => None,
    });
    // One more probe, no loop: its failure is the connection's error.
    let e = connection(client, ConnectionOptions::new("broken")).connect().await.unwrap_err();
    assert!(e.to_string().contains("broken discovery"), "{e}");
    let methods: Vec<String> = seen.requests().iter().map(|(r, _)| r.method.clone()).collect();
    assert_eq!(methods, ["server/discover", "initialize", "server/discover"]);
}

#[tokio::test]
async fn unsupported_version_with_only_legacy_versions_falls_back_and_unknown_ones_fail() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        ScriptedServer::start(server, |req, _| match req.method.as_str() {
            "server/discover" => Some(Err(ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "unsupported")
                .with_data(json!({"supported": ["2025-06-18"], "requested": "2026-07-28"})))),
            "initialize" => Some(Ok(initialize_result())),
            _ => None,
        });
        let info = connection(client, ConnectionOptions::new("old")).connect().await.unwrap();
        assert_eq!(info.protocol_version.era(), Some(Era::Legacy));

        let (client, server) = MemoryTransport::pair();
        ScriptedServer::start(server, |_, _| {
            Some(Err(ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "unsupported")
                .with_data(json!({"supported": ["2099-01-01"]}))))
        });
        let err = connection(client, ConnectionOptions::new("future")).connect().await.unwrap_err();
        assert!(matches!(err, ConnectionError::NoMutualVersion { .. }), "{err}");
        assert!(err.to_string().contains("2099-01-01") && err.to_string().contains("2026-07-28"), "{err}");
    })
    .await
}

#[tokio::test]
async fn missing_client_capability_is_a_clear_error() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        ScriptedServer::start(server, |_, _| {
            Some(Err(ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "needs sampling")
                .with_data(json!({"requiredCapabilities": {"sampling": {}}}))))
        });
        let err = connection(client, ConnectionOptions::new("picky")).connect().await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ConnectionError::MissingClientCapability { .. }), "{text}");
        assert!(text.contains("sampling") && text.contains("\"picky\""), "{text}");
    })
    .await
}

#[tokio::test]
async fn modern_only_connection_refuses_a_legacy_server() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        ScriptedServer::start(server, |_, _| {
            Some(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found")))
        });
        let mut options = ConnectionOptions::new("strict");
        options.era = EraPreference::Modern;
        let err = connection(client, options).connect().await.unwrap_err();
        assert!(err.to_string().contains("server/discover"), "{err}");
    })
    .await
}

struct Host;

impl ElicitationHandler for Host {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        let asked = match params {
            ElicitParams::Form(f) => f.message,
            _ => "?".into(),
        };
        Box::pin(async move {
            let content = json!({"name": format!("answer to {asked}")});
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: content.as_object().cloned(),
                ..Default::default()
            })
        })
    }
}

impl RootsProvider for Host {
    fn list_roots(&self, _server: &str) -> BoxFuture<'static, Result<Vec<Root>, ErrorObject>> {
        Box::pin(async { Ok(vec![Root::new("file:///work", None)]) })
    }
}

fn host_options(name: &str) -> ConnectionOptions {
    let mut options = ConnectionOptions::new(name);
    let host = Arc::new(Host);
    options.callbacks = HostCallbacks { elicitation: Some(host.clone()), roots: Some(host), ..Default::default() };
    options
}

#[tokio::test]
async fn input_required_is_answered_and_retried_with_a_new_id_and_the_exact_state() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let mut calls = 0;
        let seen = ScriptedServer::start(
            server,
            move |req, params| {
                Some(Ok(match req.method.as_str() {
                    "server/discover" => discover_result(&["2026-07-28"]),
                    "tools/call" => {
                        calls += 1;
                        match calls {
                            1 => json!({
                                "resultType": "input_required",
                                "inputRequests": {
                                    "who": {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}},
                                    "where": {"method": "roots/list"}
                                },
                                "requestState": "opaque-1"
                            }),
                            2 => json!({"resultType": "input_required", "inputRequests": {"again": {"method": "roots/list"}}}),
                            _ => json!({"content": [{"type": "text", "text": params["inputResponses"].to_string()}], "resultType": "complete"}),
                        }
                    }
                    _ => return None,
                }))
            },
        );
        let conn = connection(client, host_options("mrtr"));
        conn.connect().await.unwrap();
        let outcome = conn.call_tool("ask", None, Default::default()).await.unwrap();
        assert!(matches!(outcome, Outcome::Complete(_)), "{outcome:?}");
        let seen = seen.requests();
        let calls: Vec<&(Request, Value)> = seen.iter().filter(|(r, _)| r.method == "tools/call").collect();
        assert_eq!(calls.len(), 3);
        let ids: std::collections::HashSet<_> = calls.iter().map(|(r, _)| r.id.clone()).collect();
        assert_eq!(ids.len(), 3, "every retry has a new id");
        assert!(calls[0].1.get("inputResponses").is_none() && calls[0].1.get("requestState").is_none());
        let second = &calls[1].1;
        assert_eq!(second["requestState"], "opaque-1", "the exact state is sent back");
        assert_eq!(second["inputResponses"]["who"]["action"], "accept");
        assert_eq!(second["inputResponses"]["who"]["content"]["name"], "answer to name?");
        assert_eq!(second["inputResponses"]["where"]["roots"][0]["uri"], "file:///work");
        let third = &calls[2].1;
        assert!(third.get("requestState").is_none(), "no state was given the second time, so none is sent");
        assert_eq!(third["inputResponses"].as_object().unwrap().keys().collect::<Vec<_>>(), ["again"], "answers are never reused");
        assert_eq!(third["name"], "ask");
    })
    .await
}

#[tokio::test]
async fn a_server_that_always_asks_hits_the_round_limit() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start(
            server,
            |req, _| {
                Some(Ok(match req.method.as_str() {
                    "server/discover" => discover_result(&["2026-07-28"]),
                    _ => json!({"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}, "requestState": "s"}),
                }))
            },
        );
        let mut options = host_options("loop");
        options.max_input_rounds = 3;
        let conn = connection(client, options);
        conn.connect().await.unwrap();
        let err = conn.call_tool("ask", None, Default::default()).await.unwrap_err();
        assert!(matches!(err, ConnectionError::TooManyInputRounds { rounds: 3, .. }), "{err}");
        assert!(err.to_string().contains("after 3 rounds of tools/call"), "{err}");
        assert_eq!(seen.requests().iter().filter(|(r, _)| r.method == "tools/call").count(), 4);
    })
    .await
}

/// The conformance suite's `request-metadata` scenario refuses the first request with -32022
/// while listing the very version that was offered; the client retries once with it.
#[tokio::test]
async fn unsupported_version_naming_the_offered_version_is_retried_once() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let mut refused = false;
        let seen = ScriptedServer::start(server, move |req, _| match req.method.as_str() {
            "server/discover" if !refused => {
                refused = true;
                Some(Err(ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
                    .with_data(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"}))))
            }
            "server/discover" => Some(Ok(discover_result(&["2026-07-28"]))),
            _ => None,
        });
        let info = connection(client, ConnectionOptions::new("picky-version")).connect().await.unwrap();
        assert_eq!(info.protocol_version, ProtocolVersion::V2026_07_28);
        let seen = seen.requests();
        assert_eq!(seen.len(), 2, "one retry: {:?}", seen.iter().map(|(r, _)| &r.method).collect::<Vec<_>>());
        assert_eq!(seen[1].1["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    })
    .await
}

/// A tool whose `x-mcp-header` annotations are invalid is left out of the list in the modern
/// era (the conformance suite's `http-invalid-tool-headers`); the others stay usable.
#[tokio::test]
async fn tools_with_invalid_param_header_annotations_are_left_out_in_the_modern_era() {
    within(async {
        let tools = json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
            {"name": "valid_tool", "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}},
            {"name": "invalid_empty", "inputSchema": {"type": "object", "properties": {"v": {"type": "string", "x-mcp-header": ""}}}},
            {"name": "invalid_object", "inputSchema": {"type": "object", "properties": {"v": {"type": "object", "x-mcp-header": "V"}}}},
            {"name": "invalid_number", "inputSchema": {"type": "object", "properties": {"v": {"type": "number", "x-mcp-header": "V"}}}},
            {"name": "invalid_twice", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}}}},
            {"name": "invalid_charset", "inputSchema": {"type": "object", "properties": {"v": {"type": "string", "x-mcp-header": "My Region"}}}}
        ]});
        let (client, server) = MemoryTransport::pair();
        let listed = tools.clone();
        ScriptedServer::start(
            server,
            move |req, _| match req.method.as_str() {
                "server/discover" => Some(Ok(discover_result(&["2026-07-28"]))),
                "tools/list" => Some(Ok(listed.clone())),
                _ => None,
            },
        );
        let conn = connection(client, ConnectionOptions::new("annotated"));
        conn.connect().await.unwrap();
        let names: Vec<String> = conn.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["valid_tool"]);

        // The legacy era has no such annotation: nothing is left out.
        let (client, server) = MemoryTransport::pair();
        ScriptedServer::start(
            server,
            move |req, _| match req.method.as_str() {
                "initialize" => Some(Ok(initialize_result())),
                "tools/list" => Some(Ok(tools.clone())),
                _ => None,
            },
        );
        let mut options = ConnectionOptions::new("legacy-annotated");
        options.era = EraPreference::Legacy;
        let conn = connection(client, options);
        conn.connect().await.unwrap();
        assert_eq!(conn.list_all_tools().await.unwrap().len(), 6);
    })
    .await
}

/// The annotation check runs on every page of a paginated listing, and keeps the order.
#[tokio::test]
async fn invalid_param_header_annotations_are_left_out_on_every_page() {
    within(async {
        let tool = |name: &str, header: &str| {
            json!({"name": name, "inputSchema": {"type": "object", "properties": {"v": {"type": "string", "x-mcp-header": header}}}})
        };
        let first = json!({"resultType": "complete", "nextCursor": "p2",
            "tools": [tool("a_valid", "A"), tool("b_invalid", "B C"), tool("c_valid", "C")]});
        let second = json!({"resultType": "complete", "tools": [tool("d_invalid", ""), tool("e_valid", "E")]});
        let (client, server) = MemoryTransport::pair();
        ScriptedServer::start(
            server,
            move |req, _| match req.method.as_str() {
                "server/discover" => Some(Ok(discover_result(&["2026-07-28"]))),
                "tools/list" if req.params.as_ref().is_some_and(|p| p.get().contains("\"cursor\":\"p2\"")) => {
                    Some(Ok(second.clone()))
                }
                "tools/list" => Some(Ok(first.clone())),
                _ => None,
            },
        );
        let conn = connection(client, ConnectionOptions::new("paged"));
        conn.connect().await.unwrap();
        let names: Vec<String> = conn.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["a_valid", "c_valid", "e_valid"]);
    })
    .await
}

struct Llm;

impl mcp_manager::callbacks::SamplingHandler for Llm {
    fn create_message(
        &self,
        server: &str,
        params: mcp_protocol::types::sampling::CreateMessageParams,
    ) -> BoxFuture<'static, Result<mcp_protocol::types::sampling::CreateMessageResult, ErrorObject>> {
        let text = format!("{server} asked for {} tokens", params.max_tokens);
        Box::pin(
            async move { Ok(mcp_protocol::types::sampling::CreateMessageResult::assistant_text("fake-llm", text)) },
        )
    }
}

#[tokio::test]
async fn a_sampling_input_request_is_answered_by_the_host_llm() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let mut calls = 0;
        let seen = ScriptedServer::start(
            server,
            move |req, params| {
                Some(Ok(match req.method.as_str() {
                    "server/discover" => discover_result(&["2026-07-28"]),
                    "prompts/get" => {
                        calls += 1;
                        if calls == 1 {
                            json!({
                                "resultType": "input_required",
                                "inputRequests": {"llm": {"method": "sampling/createMessage", "params": {
                                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                                    "maxTokens": 7
                                }}},
                                "requestState": "s1"
                            })
                        } else {
                            let said = params["inputResponses"]["llm"]["content"]["text"].clone();
                            json!({"messages": [{"role": "assistant", "content": {"type": "text", "text": said}}], "resultType": "complete"})
                        }
                    }
                    _ => return None,
                }))
            },
        );
        let mut options = ConnectionOptions::new("sampler");
        options.callbacks = HostCallbacks { sampling: Some(Arc::new(Llm)), ..Default::default() };
        let conn = connection(client, options);
        conn.connect().await.unwrap();
        let params = mcp_protocol::types::prompts::GetPromptParams { name: "p".into(), ..Default::default() };
        let prompt = conn.get_prompt(params).await.unwrap().complete().expect("complete after one round");
        let text = serde_json::to_value(&prompt.messages[0].content).unwrap()["text"].clone();
        assert_eq!(text, "sampler asked for 7 tokens");
        let seen = seen.requests();
        let retry = &seen.iter().filter(|(r, _)| r.method == "prompts/get").nth(1).unwrap().1;
        assert_eq!(retry["requestState"], "s1");
        assert_eq!(retry["inputResponses"]["llm"]["model"], "fake-llm");
        assert_eq!(retry["inputResponses"]["llm"]["role"], "assistant");
        // The capability was declared because a sampling handler is present.
        assert!(seen[0].1["_meta"]["io.modelcontextprotocol/clientCapabilities"]["sampling"].is_object());
    })
    .await
}

#[tokio::test]
async fn the_era_verdict_is_cached_for_a_remote_server() {
    within(async {
        // A factory that opens a fresh in-memory "remote" server on every connect.
        let methods: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = methods.clone();
        let factory: mcp_manager::connection::TransportFactory = Arc::new(move || {
            let (client, server) = MemoryTransport::pair();
            let log = log.clone();
            ScriptedServer::start(server, move |req, _| {
                log.lock().unwrap().push(req.method.clone());
                match req.method.as_str() {
                    "server/discover" => Some(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found"))),
                    "initialize" => Some(Ok(initialize_result())),
                    _ => None,
                }
            });
            Box::pin(async move { Ok(Arc::new(client) as Arc<dyn Transport>) })
        });
        let conn = McpConnection::new(factory, ConnectionOptions::new("remote"));
        conn.connect().await.unwrap();
        conn.close().await;
        conn.connect().await.unwrap();
        let methods = methods.lock().unwrap().clone();
        assert_eq!(methods, ["server/discover", "initialize", "initialize"], "the second connect skips the probe");
    })
    .await
}

#[derive(Default)]
struct Counts {
    running: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
    answered: std::sync::atomic::AtomicUsize,
}

/// A roots provider that counts the answers it gives at once.
#[derive(Default)]
struct CountingRoots(Arc<Counts>);

impl RootsProvider for CountingRoots {
    fn list_roots(&self, _server: &str) -> BoxFuture<'static, Result<Vec<Root>, ErrorObject>> {
        use std::sync::atomic::Ordering::SeqCst;
        let counts = self.0.clone();
        let now = counts.running.fetch_add(1, SeqCst) + 1;
        counts.most.fetch_max(now, SeqCst);
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            counts.running.fetch_sub(1, SeqCst);
            counts.answered.fetch_add(1, SeqCst);
            Ok(vec![Root::new("file:///work", None)])
        })
    }
}

/// An `input_required` result with `n` roots/list input requests, then a result that echoes
/// how many answers came back.
fn wide_server(server: MemoryTransport, n: usize) -> ScriptedServer {
    let mut calls = 0;
    ScriptedServer::start(server, move |req, params| {
        Some(Ok(match req.method.as_str() {
            "server/discover" => discover_result(&["2026-07-28"]),
            "tools/call" => {
                calls += 1;
                if calls == 1 {
                    let requests: serde_json::Map<String, Value> =
                        (0..n).map(|i| (format!("r{i}"), json!({"method": "roots/list"}))).collect();
                    json!({"resultType": "input_required", "inputRequests": requests, "requestState": "s"})
                } else {
                    let answers = params["inputResponses"].as_object().map_or(0, |m| m.len());
                    json!({"content": [{"type": "text", "text": answers.to_string()}], "resultType": "complete"})
                }
            }
            _ => return None,
        }))
    })
}

/// A multi round-trip result with 5,000 input requests is refused, naming the server and the
/// count; none of them reaches the host.
#[tokio::test]
async fn a_too_wide_input_round_is_refused() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = wide_server(server, 5000);
        let roots = CountingRoots::default();
        let counts = roots.0.clone();
        let mut options = ConnectionOptions::new("wide");
        options.callbacks = HostCallbacks { roots: Some(Arc::new(roots)), ..Default::default() };
        let conn = connection(client, options);
        conn.connect().await.unwrap();
        let err = conn.call_tool("ask", None, Default::default()).await.unwrap_err();
        assert!(matches!(err, ConnectionError::TooManyInputRequests { count: 5000, .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains("\"wide\"") && text.contains("5000") && text.contains("tools/call"), "{text}");
        assert_eq!(counts.answered.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(seen.requests().iter().filter(|(r, _)| r.method == "tools/call").count(), 1, "no retry");
    })
    .await
}

/// A round within the bound but wider than `max_inbound_requests` is answered in full, with at
/// most that many host callbacks running at once.
#[tokio::test]
async fn input_requests_run_within_the_inbound_limit() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        wide_server(server, 40);
        let roots = CountingRoots::default();
        let counts = roots.0.clone();
        let mut options = ConnectionOptions::new("moderate");
        options.session.max_inbound_requests = 4;
        options.callbacks = HostCallbacks { roots: Some(Arc::new(roots)), ..Default::default() };
        let conn = connection(client, options);
        conn.connect().await.unwrap();
        let outcome = conn.call_tool("ask", None, Default::default()).await.unwrap();
        let Outcome::Complete(result) = outcome else { panic!("expected a complete result, got {outcome:?}") };
        let text = serde_json::to_value(&result.content[0]).unwrap()["text"].clone();
        assert_eq!(text, "40", "every input request was answered");
        let most = counts.most.load(std::sync::atomic::Ordering::SeqCst);
        assert!((1..=4).contains(&most), "{most} host callbacks ran at once (limit 4)");
    })
    .await
}
