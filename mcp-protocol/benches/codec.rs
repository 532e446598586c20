//! Codec throughput on three MCP payloads: a `tools/call` request, a ~30 KB `tools/list` result
//! page and a `tools/call` result holding 8 MiB of text.
//!
//! "Decode" is what a client does with a line: `codec::decode_line`, then typing the payload
//! (`CallToolParams` for the request, `<ListTools as RequestMethod>::decode_result` and
//! `<CallTool as RequestMethod>::decode_result` for the results). "Encode" is the other way:
//! typed value to raw JSON in a message, then `codec::encode_line`.
//!
//! `cargo bench -p mcp-protocol --bench codec -- --measurement-time 3 --warm-up-time 1`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_main};
use mcp_protocol::codec::{self, DecodeLimits, Decoded};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::meta::{JsonObject, Meta};
use mcp_protocol::types::tools::{
    CallTool, CallToolParams, CallToolResult, ListTools, ListToolsResult, Tool, ToolAnnotations,
};
use mcp_protocol::{Message, RequestId, RequestMethod, ResponsePayload};
use serde_json::{Value, json};

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("an object literal"),
    }
}

fn call_request() -> Message {
    let params = CallToolParams {
        name: "search_issues".into(),
        arguments: Some(object(json!({
            "query": "is:open label:bug \"decode error\" in:title",
            "repository": "example/mcp-client",
            "limit": 25,
            "include_closed": false,
            "sort": {"field": "updated", "direction": "desc"},
            "labels": ["bug", "codec", "p1"],
        }))),
        meta: Some(Box::new(Meta::new().with(Meta::PROGRESS_TOKEN, "call-7f3a"))),
        ..Default::default()
    };
    Message::request(RequestId::Number(4711), CallTool::METHOD, Some(&params)).unwrap()
}

fn tool(i: usize) -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": format!("Absolute path of the file or directory tool {i} works on. Relative paths are resolved against the workspace root."),
            },
            "pattern": {
                "type": "string",
                "description": "A glob or regular expression; see the `mode` argument.",
                "default": "**/*",
            },
            "mode": {"type": "string", "enum": ["glob", "regex", "literal"], "default": "glob"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 100},
            "include": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Extensions to include, without the dot.",
            },
            "options": {
                "type": "object",
                "properties": {
                    "case_sensitive": {"type": "boolean", "default": false},
                    "follow_symlinks": {"type": "boolean", "default": false},
                    "timeout_ms": {"type": "number", "minimum": 0},
                },
                "additionalProperties": false,
            },
        },
        "required": ["path"],
        "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#",
    });
    Tool {
        name: format!("workspace_tool_{i:02}"),
        title: Some(format!("Workspace tool #{i}")),
        description: Some(format!(
            "Tool {i}: searches, reads or edits files in the current workspace. Use it when the user \
             asks about code structure, wants a refactoring across files, or needs the contents of a \
             file that is not open yet.\nReturns matching paths with line numbers, \"quoted\" snippets \
             and a summary; large results are paginated."
        )),
        input_schema: object(schema).into(),
        output_schema: i.is_multiple_of(3).then(|| {
            Box::new(object(json!({
                "type": "object",
                "properties": {"matches": {"type": "array", "items": {"type": "object"}}, "truncated": {"type": "boolean"}},
                "required": ["matches"],
            })))
        }),
        annotations: Some(Box::new(ToolAnnotations {
            title: Some(format!("Workspace tool #{i}")),
            read_only_hint: Some(i.is_multiple_of(2)),
            destructive_hint: Some(i.is_multiple_of(5)),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn tools_page() -> ListToolsResult {
    // Grow the page until it reaches ~30 KB on the wire.
    let mut result = ListToolsResult { next_cursor: Some("eyJvZmZzZXQiOjUwfQ==".into()), ..Default::default() };
    while serde_json::to_vec(&result).unwrap().len() < 30 * 1024 {
        let i = result.tools.len();
        result.tools.push(tool(i));
    }
    result
}

fn big_text(bytes: usize) -> String {
    // Source-like text: lines of ~80 characters, a tab and a quote now and then.
    let mut s = String::with_capacity(bytes + 128);
    let mut line = 0usize;
    while s.len() < bytes {
        line += 1;
        match line % 10 {
            0 => s.push_str("\tlet message = \"a quoted \\ string with a backslash\"; // tab-indented line of code  "),
            5 => {
                s.push_str("fn handle(request: Request) -> Result<Response, Error> { /* { braces } and [brackets] */ ")
            }
            _ => s.push_str("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor inc "),
        }
        s.push_str(&format!("{line:>6}\n"));
    }
    s.truncate(bytes);
    s
}

fn big_result() -> CallToolResult {
    CallToolResult { content: vec![ContentBlock::text(big_text(8 * 1024 * 1024))], ..Default::default() }
}

fn line_of(m: &Message) -> Vec<u8> {
    let mut line = codec::encode_line(m);
    line.pop();
    line
}

fn decode_raw_result(line: &[u8], limits: &DecodeLimits) -> mcp_protocol::RawJson {
    match codec::decode_line(line, limits) {
        Ok(Decoded::Single(Message::Response(r))) => match r.payload {
            ResponsePayload::Result(raw) => raw,
            ResponsePayload::Error(e) => panic!("error response: {e}"),
        },
        other => panic!("not a response: {other:?}"),
    }
}

fn bench_call_request(c: &mut Criterion) {
    let limits = DecodeLimits::default();
    let message = call_request();
    let line = line_of(&message);
    let mut g = c.benchmark_group("tools_call_request");
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            let Ok(Decoded::Single(Message::Request(r))) = codec::decode_line(black_box(&line), &limits) else {
                panic!("not a request")
            };
            let params: CallToolParams = serde_json::from_str(r.params.as_ref().unwrap().get()).unwrap();
            black_box((r.id, params))
        })
    });
    let params: CallToolParams = serde_json::from_str(match &message {
        Message::Request(r) => r.params.as_ref().unwrap().get(),
        _ => unreachable!(),
    })
    .unwrap();
    g.bench_function("encode", |b| {
        b.iter(|| {
            let m = Message::request(RequestId::Number(4711), CallTool::METHOD, Some(black_box(&params))).unwrap();
            black_box(codec::encode_line(&m))
        })
    });
    g.finish();
}

fn bench_tools_list(c: &mut Criterion) {
    let limits = DecodeLimits::default();
    let page = tools_page();
    let line = line_of(&Message::response(RequestId::Number(2), &page).unwrap());
    let mut g = c.benchmark_group("tools_list_result_30k");
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            let raw = decode_raw_result(black_box(&line), &limits);
            black_box(<ListTools as RequestMethod>::decode_result(&raw).unwrap())
        })
    });
    g.bench_function("encode", |b| {
        b.iter(|| {
            let m = Message::response(RequestId::Number(2), black_box(&page)).unwrap();
            black_box(codec::encode_line(&m))
        })
    });
    g.finish();
}

fn bench_big_call_result(c: &mut Criterion) {
    let limits = DecodeLimits::default();
    let result = big_result();
    let line = line_of(&Message::response(RequestId::Number(3), &result).unwrap());
    let mut g = c.benchmark_group("tools_call_result_8mib");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            let raw = decode_raw_result(black_box(&line), &limits);
            let outcome = <CallTool as RequestMethod>::decode_result(&raw).unwrap();
            black_box(outcome)
        })
    });
    g.bench_function("decode_line_only", |b| b.iter(|| black_box(decode_raw_result(black_box(&line), &limits))));
    g.bench_function("encode", |b| {
        b.iter(|| {
            let m = Message::response(RequestId::Number(3), black_box(&result)).unwrap();
            black_box(codec::encode_line(&m))
        })
    });
    g.finish();
}

fn sanity_check() {
    // The payloads decode to what was encoded, so the figures measure real work.
    let page = tools_page();
    let line = line_of(&Message::response(RequestId::Number(2), &page).unwrap());
    assert!((30 * 1024..40 * 1024).contains(&line.len()), "tools/list page is {} bytes", line.len());
    let raw = decode_raw_result(&line, &DecodeLimits::default());
    assert_eq!(<ListTools as RequestMethod>::decode_result(&raw).unwrap(), page);

    let result = big_result();
    let line = line_of(&Message::response(RequestId::Number(3), &result).unwrap());
    let raw = decode_raw_result(&line, &DecodeLimits::default());
    let outcome = <CallTool as RequestMethod>::decode_result(&raw).unwrap();
    assert_eq!(outcome.complete().as_ref(), Some(&result));
}

fn benches(c: &mut Criterion) {
    sanity_check();
    bench_call_request(c);
    bench_tools_list(c);
    bench_big_call_result(c);
}

mod group {
    // criterion_group! defines a public function; a private module keeps it out of the docs lint.
    criterion::criterion_group!(codec_benches, super::benches);
}
criterion_main!(group::codec_benches);
