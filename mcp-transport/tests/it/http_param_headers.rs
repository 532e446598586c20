//! Custom headers from tool parameters (2026-07-28, SEP-2243): the transport reads the
//! `x-mcp-header` annotations of the tools it carried in `tools/list` answers and mirrors the
//! annotated arguments of a modern `tools/call` into `Mcp-Param-*` headers. Found missing by the
//! conformance suite's `http-custom-headers` scenario.

use crate::http_support::*;
use mcp_transport::{StreamableHttpTransport, Transport};
use serde_json::json;
use test_support::within;

#[tokio::test]
async fn annotated_arguments_of_a_modern_tool_call_become_mcp_param_headers() {
    within(async {
        let server = Server::start(|req| match req.rpc_method() {
            Some("tools/list") => json_response(
                200,
                &[],
                &result_for(
                    req,
                    json!({"resultType": "complete", "tools": [
                        {"name": "route", "inputSchema": {"type": "object", "properties": {
                            "region": {"type": "string", "x-mcp-header": "Region"},
                            "priority": {"type": "integer", "x-mcp-header": "Priority"},
                            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                            "greeting": {"type": "string", "x-mcp-header": "Greeting"},
                            "query": {"type": "string"}
                        }}},
                        {"name": "broken", "inputSchema": {"type": "object", "properties": {
                            "data": {"type": "object", "x-mcp-header": "Data"}
                        }}}
                    ]}),
                ),
            ),
            _ => json_response(200, &[], &result_for(req, json!({"resultType": "complete", "content": []}))),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        t.send(request(1, "tools/list", json!({"_meta": meta}))).await.unwrap();
        next_message(&t).await;
        let arguments =
            json!({"region": "us-west1", "priority": 42, "verbose": null, "greeting": "Hello, 世界", "query": "q"});
        t.send(request(2, "tools/call", json!({"name": "route", "arguments": arguments, "_meta": meta})))
            .await
            .unwrap();
        next_message(&t).await;
        t.send(request(3, "tools/call", json!({"name": "broken", "arguments": {"data": {}}, "_meta": meta})))
            .await
            .unwrap();
        next_message(&t).await;

        let log = server.log();
        let call = &log[1];
        assert_eq!(call.header_values("mcp-param-region"), ["us-west1"]);
        assert_eq!(call.header_values("mcp-param-priority"), ["42"]);
        assert_eq!(call.header_values("mcp-param-greeting"), ["=?base64?SGVsbG8sIOS4lueVjA==?="]);
        assert!(call.header("mcp-param-verbose").is_none(), "a null argument sends no header");
        assert!(call.header("mcp-param-query").is_none(), "an unannotated argument sends no header");
        assert!(log[2].header("mcp-param-data").is_none(), "a tool with invalid annotations gets none");
    })
    .await;
}

#[tokio::test]
async fn legacy_tool_calls_carry_no_param_headers() {
    within(async {
        let server = Server::start(|req| match req.rpc_method() {
            Some("tools/list") => json_response(
                200,
                &[],
                &result_for(
                    req,
                    json!({"tools": [
                        {"name": "route", "inputSchema": {"type": "object", "properties": {
                            "region": {"type": "string", "x-mcp-header": "Region"}
                        }}}
                    ]}),
                ),
            ),
            _ => json_response(200, &[], &result_for(req, json!({"content": []}))),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(1, "tools/list", json!({}))).await.unwrap();
        next_message(&t).await;
        t.send(request(2, "tools/call", json!({"name": "route", "arguments": {"region": "eu"}}))).await.unwrap();
        next_message(&t).await;
        assert!(server.log()[1].header("mcp-param-region").is_none());
    })
    .await;
}
