//! The hand-written client over streamable HTTP: HTTP/1.1 on keep-alive TCP connections, every
//! request's bytes (head and body) formatted before the clock starts, replies framed by
//! `Content-Length` or chunked encoding; a `text/event-stream` reply gives its `data:` line.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mcp_bench::Failure;
use mcp_bench::measure::Stopwatch;
use mcp_bench::workloads::{W1_CALLS, W2_CALLS, W2_IN_FLIGHT};
use mcp_protocol::types::meta::JsonObject;
use memchr::memmem;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{
    EchoCall, INITIALIZED, VERSION, W3_TOOLS, big_text, check_big, check_echo, excerpt, initialize_body, list_body,
    page_tools, w1_report, warm_up_and_measured,
};

/// The longest response head, and the longest body, read.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Run `workload` against the streamable HTTP endpoint `url`.
pub(crate) async fn run(workload: &str, url: &str) -> Result<JsonObject, Failure> {
    let watch = Stopwatch::start();
    let mut endpoint = Endpoint::parse(url)?;
    let mut conn = Conn::open(&endpoint.addr).await?;
    endpoint.handshake(&mut conn).await?;
    match workload {
        "w1" => w1(&endpoint, &mut conn).await,
        "w2" => w2(&endpoint, &mut conn).await,
        "w3" => w3(&endpoint, &mut conn, watch).await,
        _ => w4(&endpoint, &mut conn).await,
    }
}

/// Where the requests go, and the session the server gave.
struct Endpoint {
    /// `host:port`.
    addr: String,
    path: String,
    session: Option<String>,
    /// After the handshake, requests say the revision.
    initialized: bool,
}

impl Endpoint {
    fn parse(url: &str) -> Result<Endpoint, Failure> {
        let rest = url.strip_prefix("http://").ok_or_else(|| format!("not an http:// URL: {url}"))?;
        let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if addr.is_empty() {
            return Err(format!("no host in {url}"));
        }
        let path = if path.is_empty() { "/" } else { path };
        Ok(Endpoint { addr: addr.to_owned(), path: path.to_owned(), session: None, initialized: false })
    }

    /// The bytes of a POST of `body`.
    fn request(&self, body: &str) -> Vec<u8> {
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.addr,
            body.len()
        );
        if let Some(session) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
        }
        if self.initialized {
            head.push_str(&format!("MCP-Protocol-Version: {VERSION}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        bytes
    }

    async fn handshake(&mut self, conn: &mut Conn) -> Result<(), Failure> {
        let reply = conn.round_trip(&self.request(&initialize_body())).await?;
        if reply.status != 200
            || memmem::find(reply.body(), format!(r#""protocolVersion":"{VERSION}""#).as_bytes()).is_none()
        {
            return Err(format!("initialize got {} {}", reply.status, excerpt(reply.body())));
        }
        self.session = reply.session;
        self.initialized = true;
        let reply = conn.round_trip(&self.request(INITIALIZED)).await?;
        if !(200..300).contains(&reply.status) {
            return Err(format!("notifications/initialized got {}", reply.status));
        }
        Ok(())
    }
}

/// A response: its status, the session id it gave, and its body (`bytes[start..]`).
struct Reply {
    status: u16,
    session: Option<String>,
    bytes: Vec<u8>,
    start: usize,
}

impl Reply {
    fn body(&self) -> &[u8] {
        &self.bytes[self.start..]
    }
}

/// One keep-alive connection and what it has read past the last response.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: &str) -> Result<Conn, Failure> {
        let stream = TcpStream::connect(addr).await.map_err(|e| format!("connect {addr}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
        Ok(Conn { stream, buf: Vec::with_capacity(16 * 1024) })
    }

    /// Read more into the buffer; an error at the end of the stream.
    async fn fill(&mut self) -> Result<(), Failure> {
        if self.buf.capacity() == self.buf.len() {
            self.buf.reserve(16 * 1024);
        }
        match self.stream.read_buf(&mut self.buf).await {
            Ok(0) => Err("the server closed the connection".into()),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("reading the response: {e}")),
        }
    }

    async fn round_trip(&mut self, request: &[u8]) -> Result<Reply, Failure> {
        self.stream.write_all(request).await.map_err(|e| format!("sending the request: {e}"))?;
        let head_end = loop {
            if let Some(at) = memmem::find(&self.buf, b"\r\n\r\n") {
                break at + 4;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(format!("a response head over {MAX_HEAD} bytes"));
            }
            self.fill().await?;
        };
        let head = Head::parse(&self.buf[..head_end])?;
        let mut reply = match head.length {
            Some(length) if length > MAX_BODY => return Err(format!("a body of {length} bytes")),
            Some(length) => {
                self.buf.reserve((head_end + length).saturating_sub(self.buf.len()));
                while self.buf.len() < head_end + length {
                    self.fill().await?;
                }
                let rest = self.buf.split_off(head_end + length);
                let bytes = std::mem::replace(&mut self.buf, rest);
                Reply { status: head.status, session: head.session, bytes, start: head_end }
            }
            None if head.chunked => {
                self.buf.drain(..head_end);
                let bytes = self.chunked_body().await?;
                Reply { status: head.status, session: head.session, bytes, start: 0 }
            }
            None => {
                self.buf.drain(..head_end);
                Reply { status: head.status, session: head.session, bytes: Vec::new(), start: 0 }
            }
        };
        if head.event_stream {
            let data = sse_data(reply.body()).ok_or_else(|| format!("no data in {}", excerpt(reply.body())))?;
            (reply.bytes, reply.start) = (data, 0);
        }
        Ok(reply)
    }

    /// A chunked body, from the start of the buffer.
    async fn chunked_body(&mut self) -> Result<Vec<u8>, Failure> {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(at) = memmem::find(&self.buf, b"\r\n") {
                    break at;
                }
                self.fill().await?;
            };
            let size_text = std::str::from_utf8(&self.buf[..line_end]).unwrap_or("");
            let size_text = size_text.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_text, 16).map_err(|_| format!("a bad chunk size {size_text:?}"))?;
            if body.len() + size > MAX_BODY {
                return Err(format!("a chunked body over {MAX_BODY} bytes"));
            }
            // The chunk, then its CRLF (the last chunk's CRLF ends the body: no trailers here).
            while self.buf.len() < line_end + 2 + size + 2 {
                self.fill().await?;
            }
            body.extend_from_slice(&self.buf[line_end + 2..line_end + 2 + size]);
            self.buf.drain(..line_end + 2 + size + 2);
            if size == 0 {
                return Ok(body);
            }
        }
    }
}

/// What the client needs of a response head.
#[derive(Debug)]
struct Head {
    status: u16,
    length: Option<usize>,
    chunked: bool,
    event_stream: bool,
    session: Option<String>,
}

impl Head {
    fn parse(head: &[u8]) -> Result<Head, Failure> {
        let text = std::str::from_utf8(head).map_err(|_| "a response head that is not UTF-8".to_owned())?;
        let mut lines = text.split("\r\n");
        let status_line = lines.next().unwrap_or("");
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("a bad status line {status_line:?}"))?;
        let mut head = Head { status, length: None, chunked: false, event_stream: false, session: None };
        for line in lines {
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => head.length = Some(value.parse().map_err(|_| format!("Content-Length {value:?}"))?),
                "transfer-encoding" => head.chunked = value.eq_ignore_ascii_case("chunked"),
                "content-type" => head.event_stream = value.starts_with("text/event-stream"),
                "mcp-session-id" => head.session = Some(value.to_owned()),
                _ => {}
            }
        }
        Ok(head)
    }
}

/// The first `data:` line of an event stream that holds a JSON-RPC message.
fn sse_data(body: &[u8]) -> Option<Vec<u8>> {
    body.split(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .map(|data| data.strip_prefix(b" ").unwrap_or(data))
        .map(|data| data.strip_suffix(b"\r").unwrap_or(data))
        .find(|data| memmem::find(data, b"\"jsonrpc\"").is_some())
        .map(<[u8]>::to_vec)
}

/// POST `request` and check the echo reply.
async fn echo(conn: &mut Conn, request: &[u8], call: &EchoCall) -> Result<(), Failure> {
    let reply = conn.round_trip(request).await?;
    if reply.status != 200 {
        return Err(format!("call {} got HTTP {}", call.id, reply.status));
    }
    check_echo(reply.body(), call)
}

async fn w1(endpoint: &Endpoint, conn: &mut Conn) -> Result<JsonObject, Failure> {
    let (warm_up, calls) = warm_up_and_measured(W1_CALLS);
    let requests: Vec<Vec<u8>> = calls.iter().map(|c| endpoint.request(&c.body)).collect();
    for call in &warm_up {
        echo(conn, &endpoint.request(&call.body), call).await?;
    }
    let mut latencies = Vec::with_capacity(W1_CALLS);
    let watch = Stopwatch::start();
    for (call, request) in calls.iter().zip(&requests) {
        let started = Instant::now();
        echo(conn, request, call).await?;
        latencies.push(started.elapsed());
    }
    Ok(w1_report(&watch, latencies))
}

/// W2: [`W2_IN_FLIGHT`] keep-alive connections, each making one call at a time.
async fn w2(endpoint: &Endpoint, conn: &mut Conn) -> Result<JsonObject, Failure> {
    let (warm_up, calls) = warm_up_and_measured(W2_CALLS);
    let requests: Vec<Vec<u8>> = calls.iter().map(|c| endpoint.request(&c.body)).collect();
    let work = Arc::new((calls, requests, AtomicUsize::new(0)));
    for call in &warm_up {
        echo(conn, &endpoint.request(&call.body), call).await?;
    }
    let mut conns = Vec::with_capacity(W2_IN_FLIGHT);
    for _ in 0..W2_IN_FLIGHT {
        conns.push(Conn::open(&endpoint.addr).await?);
    }
    let watch = Stopwatch::start();
    let mut workers = tokio::task::JoinSet::new();
    for mut conn in conns {
        let work = work.clone();
        workers.spawn(async move {
            let (calls, requests, next) = &*work;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls.len() {
                    return Ok::<(), Failure>(());
                }
                echo(&mut conn, &requests[i], &calls[i]).await?;
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.map_err(|e| format!("a worker failed: {e}"))??;
    }
    let mut report = JsonObject::new();
    watch.record(&mut report);
    Ok(report)
}

async fn w3(endpoint: &Endpoint, conn: &mut Conn, watch: Stopwatch) -> Result<JsonObject, Failure> {
    let (mut tools, mut pages, mut cursor) = (0, 0, None::<String>);
    loop {
        pages += 1;
        let reply = conn.round_trip(&endpoint.request(&list_body(pages, cursor.as_deref()))).await?;
        let (n, next) = page_tools(reply.body())?;
        tools += n;
        match next {
            Some(next) if pages < 1000 => cursor = Some(next),
            Some(_) => return Err("more than 1000 pages".into()),
            None => break,
        }
    }
    let mut report = JsonObject::new();
    watch.record(&mut report);
    if tools != W3_TOOLS {
        return Err(format!("listed {tools} tools in {pages} pages, expected {W3_TOOLS}"));
    }
    report.insert("tools".into(), json!(tools));
    report.insert("pages".into(), json!(pages));
    Ok(report)
}

async fn w4(endpoint: &Endpoint, conn: &mut Conn) -> Result<JsonObject, Failure> {
    let request = endpoint.request(&super::call_body(1, "big", None));
    let watch = Stopwatch::start();
    let reply = conn.round_trip(&request).await?;
    let text = big_text(reply.body())?;
    let mut report = JsonObject::new();
    watch.record(&mut report);
    let bytes = check_big(text)?;
    report.insert("bytes".into(), json!(bytes));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_address_and_path() {
        let e = Endpoint::parse("http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!((e.addr.as_str(), e.path.as_str()), ("127.0.0.1:8080", "/mcp"));
        assert_eq!(Endpoint::parse("http://127.0.0.1:8080").unwrap().path, "/");
        assert!(Endpoint::parse("https://example.com/mcp").is_err());
        assert!(Endpoint::parse("http:///mcp").is_err());
    }

    #[test]
    fn heads_give_status_framing_and_session() {
        let head = Head::parse(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 12\r\nMcp-Session-Id: 7\r\n\r\n",
        )
        .unwrap();
        assert_eq!((head.status, head.length, head.chunked, head.event_stream), (200, Some(12), false, false));
        assert_eq!(head.session.as_deref(), Some("7"));
        let head =
            Head::parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n")
                .unwrap();
        assert!(head.chunked && head.event_stream && head.length.is_none());
        assert!(Head::parse(b"garbage\r\n\r\n").is_err());
        assert!(Head::parse(b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n").unwrap_err().contains("lots"));
    }

    #[test]
    fn an_event_stream_gives_its_json_rpc_data_line() {
        let body = b"id: 1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\r\n\r\n";
        assert_eq!(sse_data(body).unwrap(), br#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
        assert_eq!(sse_data(b"data:\n\n: comment\n"), None);
    }

    #[test]
    fn requests_carry_the_session_and_revision_after_the_handshake() {
        let mut e = Endpoint::parse("http://127.0.0.1:1/mcp").unwrap();
        let before = String::from_utf8(e.request("{}")).unwrap();
        assert!(
            before.starts_with("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\n")
                && before.ends_with("Content-Length: 2\r\n\r\n{}")
        );
        assert!(!before.contains("Mcp-Session-Id") && !before.contains("MCP-Protocol-Version"));
        (e.session, e.initialized) = (Some("abc".into()), true);
        let after = String::from_utf8(e.request("{}")).unwrap();
        assert!(after.contains("Mcp-Session-Id: abc\r\n") && after.contains("MCP-Protocol-Version: 2025-11-25\r\n"));
    }
}
