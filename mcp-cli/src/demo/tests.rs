//! The demo server in-process, over an in-memory pipe: framing, errors, cancellation, both eras'
//! handshakes, and a legacy server request answered by hand.

use std::time::Duration;

use mcp_protocol::{Era, ProtocolVersion};
use serde_json::{Value, json};
use test_support::within;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use super::*;

const LIMIT: Duration = Duration::from_secs(10);

struct Client {
    to_server: DuplexStream,
    from_server: BufReader<DuplexStream>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Client {
    fn start() -> Client {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(serve(server_in, server_out));
        Client { to_server: client_out, from_server: BufReader::new(client_in), server }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.to_server.write_all(bytes).await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(LIMIT, self.from_server.read_line(&mut line)).await.expect("a reply").unwrap();
        assert!(n > 0, "the server closed its output");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        self.recv().await
    }
}

fn modern_meta(caps: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}})
}

#[tokio::test]
async fn legacy_handshake_negotiates_the_clients_revision() {
    within(async {
        let mut c = Client::start();
        for (offered, answered) in
            [("2025-03-26", "2025-03-26"), ("2024-11-05", "2024-11-05"), ("2099-01-01", "2025-11-25")]
        {
            let init = c
                .request(
                    1,
                    "initialize",
                    json!({"protocolVersion": offered, "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}),
                )
                .await;
            assert_eq!(init["result"]["protocolVersion"], answered, "{init}");
            assert_eq!(init["result"]["serverInfo"]["name"], "mcp-demo");
            assert!(init["result"].get("resultType").is_none(), "no modern members in the legacy era");
        }
        let tools = c.request(2, "tools/list", json!({})).await;
        assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), tools::NAMES.len());
        assert!(tools["result"].get("ttlMs").is_none());
    })
    .await;
}

#[tokio::test]
async fn modern_requests_carry_and_get_the_modern_members() {
    within(async {
        let mut c = Client::start();
        let discover = c.request(1, "server/discover", json!({"_meta": modern_meta(json!({}))})).await;
        let result = &discover["result"];
        assert_eq!(result["supportedVersions"][0], "2026-07-28", "{discover}");
        assert_eq!(result["resultType"], "complete");
        assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string(), "{result}");
        assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-demo");

        let tools = c.request(2, "tools/list", json!({"_meta": modern_meta(json!({}))})).await;
        assert_eq!(tools["result"]["resultType"], "complete");
        assert!(tools["result"]["ttlMs"].is_u64(), "{tools}");

        let mut meta = modern_meta(json!({}));
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2030-01-01");
        let refused = c.request(3, "tools/list", json!({"_meta": meta})).await;
        assert_eq!(refused["error"]["code"], -32022, "{refused}");
        assert_eq!(refused["error"]["data"]["requested"], "2030-01-01");

        // Without the capability the two-way tools fail with a clear message instead of asking.
        let call = c
            .request(4, "tools/call", json!({"name": "ask_roots", "arguments": {}, "_meta": modern_meta(json!({}))}))
            .await;
        assert_eq!(call["result"]["isError"], true, "{call}");
        assert!(call["result"]["content"][0]["text"].as_str().unwrap().contains("roots capability"));

        // With it, the first call asks for input, and the retry with the answer completes.
        let meta = modern_meta(json!({"roots": {}}));
        let first =
            c.request(5, "tools/call", json!({"name": "ask_roots", "arguments": {}, "_meta": meta.clone()})).await;
        assert_eq!(first["result"]["resultType"], "input_required", "{first}");
        assert_eq!(first["result"]["inputRequests"]["roots"]["method"], "roots/list");
        let state = first["result"]["requestState"].clone();
        let retry = c
            .request(
                6,
                "tools/call",
                json!({"name": "ask_roots", "arguments": {}, "_meta": meta,
                "inputResponses": {"roots": {"roots": [{"uri": "file:///work", "name": "work"}]}},
                "requestState": state}),
            )
            .await;
        assert_eq!(retry["result"]["resultType"], "complete", "{retry}");
        assert!(retry["result"]["content"][0]["text"].as_str().unwrap().contains("file:///work (work)"));
    })
    .await;
}

#[tokio::test]
async fn errors_name_the_problem_and_the_server_goes_on() {
    within(async {
        let mut c = Client::start();
        c.send_raw(b"this is not json\n").await;
        let parse = c.recv().await;
        assert_eq!(parse["error"]["code"], -32700, "{parse}");
        assert!(parse["id"].is_null());

        let unknown = c.request(1, "tools/frobnicate", json!({})).await;
        assert_eq!(unknown["error"]["code"], -32601);
        assert!(unknown["error"]["message"].as_str().unwrap().contains("tools/frobnicate"));

        let no_name = c.request(2, "tools/call", json!({"arguments": {}})).await;
        assert_eq!(no_name["error"]["code"], -32602);
        assert!(no_name["error"]["message"].as_str().unwrap().contains("`name`"), "{no_name}");

        let no_tool = c.request(3, "tools/call", json!({"name": "nope"})).await;
        assert_eq!(no_tool["error"]["code"], -32602);
        assert!(no_tool["error"]["message"].as_str().unwrap().contains("\"nope\""));

        let bad_arg = c.request(4, "tools/call", json!({"name": "add", "arguments": {"a": 1, "b": "x"}})).await;
        assert_eq!(bad_arg["result"]["isError"], true, "argument problems are tool errors: {bad_arg}");
        assert!(bad_arg["result"]["content"][0]["text"].as_str().unwrap().contains("\"b\""));

        let not_found = c.request(5, "resources/read", json!({"uri": "demo://nothing"})).await;
        assert_eq!(not_found["error"]["code"], -32002, "{not_found}");

        let array_params = c.request(6, "tools/list", json!([1, 2])).await;
        assert_eq!(array_params["error"]["code"], -32602);

        let ok = c.request(7, "tools/call", json!({"name": "echo", "arguments": {"text": "still here"}})).await;
        assert_eq!(ok["result"]["content"][0]["text"], "still here");
    })
    .await;
}

#[tokio::test]
async fn a_too_long_line_is_skipped() {
    within(async {
        let mut c = Client::start();
        let mut long = vec![b'x'; MAX_LINE_BYTES + 10];
        long.push(b'\n');
        // The pipe is smaller than the line: write it while reading the answer.
        let line = {
            let Client { to_server, from_server, .. } = &mut c;
            let write = async { to_server.write_all(&long).await.unwrap() };
            let read = async {
                let mut line = String::new();
                from_server.read_line(&mut line).await.unwrap();
                line
            };
            tokio::join!(write, read).1
        };
        let error: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(error["error"]["code"], -32700, "{error}");
        assert!(error["error"]["message"].as_str().unwrap().contains("exceeds the limit"));
        let ok = c.request(1, "ping", json!({})).await;
        assert_eq!(ok["result"], json!({}));
    })
    .await;
}

#[tokio::test]
async fn cancelled_requests_are_not_answered() {
    within(async {
        let mut c = Client::start();
        c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"duration_ms": 60000, "steps": 2}}}))
            .await;
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})).await;
        // The next answer is the ping's: the slow call was stopped and never answers.
        let ping = c.request(2, "ping", json!({})).await;
        assert_eq!(ping["id"], 2, "{ping}");
    })
    .await;
}

#[tokio::test]
async fn legacy_server_requests_reach_the_client() {
    within(async {
        let mut c = Client::start();
        c.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
            "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
        c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "summarize", "arguments": {"text": "A long story."}}}))
            .await;
        let ask = c.recv().await;
        assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
        let prompt = ask["params"]["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(prompt.contains("A long story."), "{prompt}");
        c.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"role": "assistant",
            "content": {"type": "text", "text": "Short."}, "model": "test-llm"}}))
            .await;
        let result = c.recv().await;
        assert_eq!(result["id"], 1);
        assert_eq!(result["result"]["content"][0]["text"], "Short.");
    })
    .await;
}

#[tokio::test]
async fn the_server_ends_with_its_input() {
    within(async {
        let mut c = Client::start();
        // A last request without a newline still counts, and is answered before the end.
        c.send_raw(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#).await;
        c.to_server.shutdown().await.unwrap();
        let Client { to_server, mut from_server, server } = c;
        drop(to_server);
        let mut line = String::new();
        from_server.read_line(&mut line).await.unwrap();
        assert!(line.contains("\"id\":9"), "{line}");
        let ended = tokio::time::timeout(LIMIT, server).await.expect("the server ended");
        ended.unwrap().unwrap();
    })
    .await;
}

#[tokio::test]
async fn read_line_bounds_and_keeps_the_last_line() {
    let input: &[u8] = b"short\nthis one is far too long\n\nlast";
    let mut reader = BufReader::with_capacity(4, input);
    let mut buf = Vec::new();
    assert_eq!(read_line(&mut reader, &mut buf, 10).await.unwrap(), Line::Complete);
    assert_eq!(buf, b"short");
    assert_eq!(read_line(&mut reader, &mut buf, 10).await.unwrap(), Line::TooLong(24));
    assert!(buf.is_empty());
    assert_eq!(read_line(&mut reader, &mut buf, 10).await.unwrap(), Line::Complete);
    assert!(buf.is_empty());
    assert_eq!(read_line(&mut reader, &mut buf, 10).await.unwrap(), Line::Complete);
    assert_eq!(buf, b"last");
    assert_eq!(read_line(&mut reader, &mut buf, 10).await.unwrap(), Line::End);
}

/// A step of ARCHITECTURE.md's "How to add a protocol revision": the demo server offers every
/// revision `mcp_protocol` knows in `server/discover`, and answers `initialize` with each legacy
/// one as offered.
#[tokio::test]
async fn the_demo_server_speaks_every_known_revision() {
    within(async {
        let mut c = Client::start();
        let discover = c.request(1, "server/discover", json!({"_meta": modern_meta(json!({}))})).await;
        let supported: Vec<&str> = discover["result"]["supportedVersions"]
            .as_array()
            .expect("supportedVersions")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for version in &ProtocolVersion::KNOWN {
            assert!(supported.contains(&version.as_str()), "server/discover offers {version}: {discover}");
        }
        for version in ProtocolVersion::KNOWN.iter().filter(|v| v.era() == Some(Era::Legacy)) {
            let init = c
                .request(
                    2,
                    "initialize",
                    json!({"protocolVersion": version.as_str(), "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}),
                )
                .await;
            assert_eq!(init["result"]["protocolVersion"], version.as_str(), "{init}");
        }
    })
    .await
}
