//! `bench-server`: a minimal, fast stdio MCP server (legacy era, and the modern
//! one with `--modern`) for `cargo xtask bench stdio`,
//! built on `mcp_protocol`. Both benchmark clients (ours and the official SDK's) talk to it, so
//! it does as little as it can: one synchronous loop, no artificial delays, large answers
//! (`tools/list` pages, the `big` text) written straight out as JSON text rather than built as
//! values, and stdout buffered and flushed only when no request is waiting in stdin (a burst of
//! requests is answered with one write).
//!
//! It answers `initialize` (with the client's revision if it is a legacy one), `ping`,
//! `tools/list` (N generated tools over pages of P, cursors `page-K`) and `tools/call` for two
//! tools: `echo {text}` returns `text` as one text block, and `big` returns one text block of
//! M MiB of `x`. Notifications are ignored; other requests get METHOD_NOT_FOUND. It exits when
//! stdin ends.
//!
//! Flags: `--tools N` (default 10002), `--page-size P` (default 100), `--big-mib M` (default 8),
//! and `--modern`: also speak the modern era (2026-07-28), that is, answer `server/discover` with
//! a `DiscoverResult` (modern and legacy revisions) and put `"resultType":"complete"` in the
//! results of `ping`, `tools/list` and `tools/call` (the `_meta` that modern requests carry in
//! their params is ignored). Without it, `server/discover` gets METHOD_NOT_FOUND, as a legacy
//! server answers it, and clients fall back to `initialize`.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::exit;

use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::types::common::{Implementation, ResultType};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::lifecycle::{Initialize, InitializeResult, ServerCapabilities, ToolsCapability};
use mcp_protocol::types::tools::{CallTool, CallToolResult, ListTools};
use mcp_protocol::{
    DecodeLimits, Era, ErrorCode, ErrorObject, Message, ProtocolVersion, RawJson, Request, RequestId, RequestMethod,
    codec,
};
use serde_json::json;
use serde_json::value::RawValue;

struct Config {
    tools: usize,
    page_size: usize,
    big_mib: usize,
    /// Speak the modern era too (`--modern`).
    modern: bool,
}

fn parse_args() -> Result<Config, String> {
    let mut config = Config { tools: 10_002, page_size: 100, big_mib: 8, modern: false };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--modern" {
            config.modern = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let n: usize = value.parse().map_err(|_| format!("{flag}: not a number: {value:?}"))?;
        match flag.as_str() {
            "--tools" => config.tools = n,
            "--page-size" => config.page_size = n.max(1),
            "--big-mib" => config.big_mib = n,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(config)
}

fn main() {
    let config = match parse_args() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("bench-server: {e}");
            exit(2);
        }
    };
    let mut server = Server::new(config);
    let mut stdin = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = Vec::new();
    loop {
        // Flush before a read that may block: every complete request read so far is answered.
        if !stdin.buffer().contains(&b'\n') && out.flush().is_err() {
            exit(0);
        }
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("bench-server: stdin failed: {e}");
                exit(1);
            }
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let written = match codec::decode_line(&line, &DecodeLimits::default()) {
            Ok(decoded) => decoded.into_messages().into_iter().try_for_each(|m| match m {
                Ok(Message::Request(request)) => server.answer(request, &mut out),
                Ok(_) => Ok(()), // notifications and responses need no answer
                Err(e) => {
                    eprintln!("bench-server: dropped a bad batch element: {e}");
                    Ok(())
                }
            }),
            Err(e) => {
                let error = ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string());
                out.write_all(&codec::encode_line(&Message::error_response(None, error)))
            }
        };
        if written.is_err() {
            exit(0); // the client went away
        }
    }
    let _ = out.flush();
}

struct Server {
    config: Config,
    /// One MiB of `x`, for the `big` tool's answer (made on first use).
    chunk: Vec<u8>,
}

fn internal(e: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string())
}

fn write_error(out: &mut impl Write, id: &RequestId, error: ErrorObject) -> io::Result<()> {
    out.write_all(&codec::encode_line(&Message::error_response(Some(id.clone()), error)))
}

impl Server {
    fn new(config: Config) -> Server {
        Server { config, chunk: Vec::new() }
    }

    fn answer(&mut self, request: Request, out: &mut impl Write) -> io::Result<()> {
        let result = match request.method.as_str() {
            "initialize" => self.initialize(&request),
            "server/discover" if self.config.modern => Ok(discover()),
            "ping" if self.config.modern => {
                Ok(to_raw(&json!({"resultType": "complete"})).expect("a ping result encodes"))
            }
            "ping" => Ok(to_raw(&json!({})).expect("{} encodes")),
            "tools/list" => return self.list(&request, out),
            "tools/call" => return self.call(&request, out),
            other => Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: {other}"))),
        };
        match result {
            Ok(raw) => write_result(out, &request.id, |out| out.write_all(raw.get().as_bytes())),
            Err(error) => write_error(out, &request.id, error),
        }
    }

    fn initialize(&self, request: &Request) -> Result<RawJson, ErrorObject> {
        let params = params::<Initialize, ErrorObject>(request)?;
        let offered = ProtocolVersion::parse(&params.protocol_version);
        let version = if offered.era() == Some(Era::Legacy) { offered } else { ProtocolVersion::LATEST_LEGACY };
        to_raw(&InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: ServerCapabilities { tools: Some(ToolsCapability::default()), ..Default::default() },
            server_info: Implementation::new("bench-server", "1.0.0"),
            ..Default::default()
        })
        .map_err(internal)
    }

    /// `,"resultType":"complete"` in the modern era, nothing in the legacy one: the tail of a
    /// result written as JSON text.
    fn result_type(&self) -> &'static [u8] {
        if self.config.modern { br#","resultType":"complete""# } else { b"" }
    }

    /// A page of `tools/list`, written straight out as JSON text: building 10,002 `Tool` values
    /// and encoding them would make the server, not the client, dominate the listing workload.
    fn list(&self, request: &Request, out: &mut impl Write) -> io::Result<()> {
        let cursor = params::<ListTools, ErrorObject>(request).ok().and_then(|p| p.cursor);
        let size = self.config.page_size;
        let pages = self.config.tools.div_ceil(size).max(1);
        let page = match cursor {
            None => Some(0),
            Some(c) => c.strip_prefix("page-").and_then(|k| k.parse::<usize>().ok()).filter(|&k| k < pages),
        };
        let Some(page) = page else {
            return write_error(out, &request.id, ErrorObject::new(ErrorCode::INVALID_PARAMS, "unknown cursor"));
        };
        let tools = page * size..((page + 1) * size).min(self.config.tools);
        write_result(out, &request.id, |out| {
            out.write_all(br#"{"tools":["#)?;
            for i in tools.clone() {
                if i != tools.start {
                    out.write_all(b",")?;
                }
                write_tool(out, i)?;
            }
            out.write_all(b"]")?;
            if page + 1 < pages {
                write!(out, r#","nextCursor":"page-{}""#, page + 1)?;
            }
            out.write_all(self.result_type())?;
            out.write_all(b"}")
        })
    }

    fn call(&mut self, request: &Request, out: &mut impl Write) -> io::Result<()> {
        let params = match params::<CallTool, ErrorObject>(request) {
            Ok(p) => p,
            Err(error) => return write_error(out, &request.id, error),
        };
        match params.name.as_str() {
            "echo" => {
                let arguments = params.arguments.as_ref();
                let text = arguments.and_then(|a| a.get("text")).and_then(|t| t.as_str()).unwrap_or("");
                let result_type = self.config.modern.then_some(ResultType::Complete);
                let result =
                    CallToolResult { content: vec![ContentBlock::text(text)], result_type, ..Default::default() };
                match to_raw(&result) {
                    Ok(raw) => write_result(out, &request.id, |out| out.write_all(raw.get().as_bytes())),
                    Err(e) => write_error(out, &request.id, internal(e)),
                }
            }
            "big" => {
                if self.chunk.is_empty() {
                    self.chunk = vec![b'x'; 1024 * 1024];
                }
                let (chunk, mib, tail) = (&self.chunk, self.config.big_mib, self.result_type());
                write_result(out, &request.id, |out| {
                    out.write_all(br#"{"content":[{"type":"text","text":""#)?;
                    for _ in 0..mib {
                        out.write_all(chunk)?;
                    }
                    out.write_all(br#""}]"#)?;
                    out.write_all(tail)?;
                    out.write_all(b"}")
                })
            }
            other => {
                let error = ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("unknown tool {other:?}"));
                write_error(out, &request.id, error)
            }
        }
    }
}

/// The modern era's `server/discover` result: 2026-07-28 and the latest legacy revision, tools.
fn discover() -> RawJson {
    let result = json!({
        "supportedVersions": ["2026-07-28", "2025-11-25"],
        "capabilities": {"tools": {}},
        "ttlMs": 0,
        "cacheScope": "public",
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bench-server", "version": "1"}}
    });
    to_raw(&result).expect("the discover result encodes")
}

/// Tool number `i` as JSON text.
fn write_tool(out: &mut impl Write, i: usize) -> io::Result<()> {
    write!(
        out,
        concat!(
            r#"{{"name":"tool-{i:05}","description":"Generated tool number {i}: takes a query and a limit, "#,
            r#"returns matches.","inputSchema":{{"type":"object","properties":{{"query":{{"type":"string","#,
            r#""description":"What to look for"}},"limit":{{"type":"integer","minimum":1,"maximum":100}}}},"#,
            r#""required":["query"]}}}}"#
        ),
        i = i
    )
}

/// The typed params of a request to method `M`; a missing or invalid `params` is INVALID_PARAMS.
fn params<M: RequestMethod, E: From<ErrorObject>>(request: &Request) -> Result<M::Params, E> {
    let raw = request.params.as_deref().map_or("{}", RawValue::get);
    serde_json::from_str(raw)
        .map_err(|e| ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {e}")).into())
}

/// One result line; `result` writes the result's JSON text.
fn write_result<W: Write>(
    out: &mut W,
    id: &RequestId,
    result: impl FnOnce(&mut W) -> io::Result<()>,
) -> io::Result<()> {
    let id = serde_json::to_string(id).map_err(io::Error::other)?;
    out.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
    out.write_all(id.as_bytes())?;
    out.write_all(br#","result":"#)?;
    result(out)?;
    out.write_all(
        b"}
",
    )
}
