//! `bench-server`: our minimal, fast MCP server for `cargo xtask bench`, built on
//! `mcp_protocol`, speaking both eras, over stdio or (with `--http PORT`) streamable HTTP. Every
//! benchmark client (ours, the host path, rmcp's and the hand-written one) talks to it, so it does
//! as little as it can: no artificial delays, results written straight out as JSON text (see
//! [`mcp_bench::catalog`]). Over stdio it is one synchronous loop whose stdout is flushed only
//! when no request is waiting in stdin (a burst of requests is answered with one write); over
//! HTTP see [`http`].
//!
//! It answers `initialize` (with the client's revision if it is a legacy one, else the latest
//! legacy one), `server/discover` (2026-07-28 and the legacy revisions), `ping`, `tools/list` and
//! `tools/call` as the catalog says. A legacy session (over stdio: one that began with
//! `initialize`; over HTTP: a request with a legacy `MCP-Protocol-Version`, or none) gets legacy
//! results; a modern one gets `"resultType":"complete"` in every result (the `_meta` that modern
//! requests carry is not checked). Notifications are ignored; other requests get
//! METHOD_NOT_FOUND. Over stdio it exits when stdin ends.
//!
//! Flags: those of [`Catalog::from_flags`] (`--tools N`, `--page-size P`, `--big-mib M`,
//! `--prefix P`), and `--http PORT` (0: any free port; the bound port is then the first line of
//! stdout), the same as rmcp's bench server (`bench/rmcp/server`).

mod http;

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::exit;

use mcp_bench::catalog::{Catalog, Tool, big_chunk};
use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::types::common::Implementation;
use mcp_protocol::types::lifecycle::{Initialize, InitializeResult, ServerCapabilities, ToolsCapability};
use mcp_protocol::types::tools::{CallTool, ListTools};
use mcp_protocol::{
    DecodeLimits, Era, ErrorCode, ErrorObject, Message, ProtocolVersion, RawJson, Request, RequestId, RequestMethod,
    codec,
};
use serde_json::json;

const USAGE: &str = "usage: bench-server [--tools N] [--page-size P] [--big-mib M] [--prefix P] [--http PORT]";

fn main() {
    let (catalog, rest) = Catalog::from_flags(std::env::args().skip(1)).unwrap_or_else(|e| fail_usage(&e));
    let responder = Responder { catalog, chunk: big_chunk() };
    match rest.as_slice() {
        [] => serve_stdio(&responder),
        [flag, port] if flag == "--http" => match port.parse::<u16>() {
            Ok(port) => http::serve(responder, port),
            Err(_) => fail_usage(&format!("--http: not a port: {port:?}")),
        },
        _ => fail_usage(&format!("unknown flags {rest:?}")),
    }
}

fn fail_usage(message: &str) -> ! {
    eprintln!("bench-server: {message}\n{USAGE}");
    exit(2);
}

/// Answer newline-delimited JSON-RPC on stdin until it ends.
fn serve_stdio(responder: &Responder) {
    let mut stdin = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let (mut line, mut legacy) = (Vec::new(), false);
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
                Ok(Message::Request(request)) => {
                    legacy |= request.method == "initialize";
                    responder.answer(&request, legacy, &mut out)
                }
                Ok(_) => Ok(()), // notifications and responses need no answer
                Err(e) => {
                    eprintln!("bench-server: dropped a bad batch element: {e}");
                    Ok(())
                }
            }),
            Err(e) => out.write_all(&parse_error(&e)),
        };
        if written.is_err() {
            exit(0); // the client went away
        }
    }
    let _ = out.flush();
}

/// The error line for input that is not JSON-RPC.
fn parse_error(e: &impl std::fmt::Display) -> Vec<u8> {
    let error = ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string());
    codec::encode_line(&Message::error_response(None, error))
}

/// What both transports answer with.
struct Responder {
    catalog: Catalog,
    /// A MiB of `x`, for `big`.
    chunk: Vec<u8>,
}

fn internal(e: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string())
}

fn write_error(out: &mut impl Write, id: &RequestId, error: ErrorObject) -> io::Result<()> {
    out.write_all(&codec::encode_line(&Message::error_response(Some(id.clone()), error)))
}

impl Responder {
    /// Write the response to `request` as one line; `legacy`: the session is a legacy one.
    fn answer(&self, request: &Request, legacy: bool, out: &mut impl Write) -> io::Result<()> {
        // The tail of a result written as JSON text.
        let tail: &[u8] = if legacy { b"" } else { br#","resultType":"complete""# };
        let result = match request.method.as_str() {
            "initialize" => initialize(request),
            "server/discover" => Ok(discover()),
            "ping" if legacy => Ok(to_raw(&json!({})).expect("{} encodes")),
            "ping" => Ok(to_raw(&json!({"resultType": "complete"})).expect("a ping result encodes")),
            "tools/list" => return self.list(request, tail, out),
            "tools/call" => return self.call(request, tail, out),
            other => Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: {other}"))),
        };
        match result {
            Ok(raw) => write_result(out, &request.id, |out| out.write_all(raw.get().as_bytes())),
            Err(error) => write_error(out, &request.id, error),
        }
    }

    fn list(&self, request: &Request, tail: &[u8], out: &mut impl Write) -> io::Result<()> {
        let cursor = params::<ListTools>(request).ok().and_then(|p| p.cursor);
        let Some(page) = self.catalog.page_of(cursor.as_deref()) else {
            return write_error(out, &request.id, ErrorObject::new(ErrorCode::INVALID_PARAMS, "unknown cursor"));
        };
        write_result(out, &request.id, |out| self.catalog.write_page(out, page, tail))
    }

    fn call(&self, request: &Request, tail: &[u8], out: &mut impl Write) -> io::Result<()> {
        let params = match params::<CallTool>(request) {
            Ok(p) => p,
            Err(error) => return write_error(out, &request.id, error),
        };
        match self.catalog.tool(&params.name) {
            Some(Tool::Echo) => {
                let arguments = params.arguments.as_ref();
                let text = arguments.and_then(|a| a.get("text")).and_then(|t| t.as_str()).unwrap_or("");
                write_result(out, &request.id, |out| write_text_result(out, text, tail))
            }
            Some(Tool::Big) => write_result(out, &request.id, |out| self.catalog.write_big(out, &self.chunk, tail)),
            Some(Tool::Generated) => write_result(out, &request.id, |out| write_text_result(out, "no results", tail)),
            None => {
                let error = ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("unknown tool {:?}", params.name));
                write_error(out, &request.id, error)
            }
        }
    }
}

fn initialize(request: &Request) -> Result<RawJson, ErrorObject> {
    let params = params::<Initialize>(request)?;
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

/// A `tools/call` result of one text block.
fn write_text_result(out: &mut impl Write, text: &str, tail: &[u8]) -> io::Result<()> {
    out.write_all(br#"{"content":[{"type":"text","text":"#)?;
    serde_json::to_writer(&mut *out, text).map_err(io::Error::other)?;
    out.write_all(b"}]")?;
    out.write_all(tail)?;
    out.write_all(b"}")
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

/// The typed params of a request to method `M`; a missing or invalid `params` is INVALID_PARAMS.
fn params<M: RequestMethod>(request: &Request) -> Result<M::Params, ErrorObject> {
    let raw = request.params.as_ref().map_or("{}", mcp_protocol::RawJson::get);
    serde_json::from_str(raw).map_err(|e| ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {e}")))
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
    out.write_all(b"}\n")
}
