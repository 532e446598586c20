//! The hand-written client over stdio: the server is a child process, requests are lines written
//! to its stdin, replies lines read from its stdout.

use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_bench::Failure;
use mcp_bench::measure::Stopwatch;
use mcp_bench::workloads::{W1_CALLS, W2_CALLS, W2_IN_FLIGHT};
use mcp_protocol::types::meta::JsonObject;
use memchr::memmem;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{
    INITIALIZED, VERSION, W3_TOOLS, big_text, check_big, check_echo, excerpt, initialize_body, list_body, page_tools,
    w1_report, warm_up_and_measured,
};

/// The longest reply line read (W4's is a little over 8 MiB).
const MAX_LINE: u64 = 64 * 1024 * 1024;

/// Run `workload` against a server spawned as `command args`.
pub(crate) async fn run(workload: &str, command: &str, args: &[String]) -> Result<JsonObject, Failure> {
    let watch = Stopwatch::start();
    let mut server = Server::spawn(command, args)?;
    let report = match server.handshake().await {
        Ok(()) => match workload {
            "w1" => w1(&mut server).await,
            "w2" => w2(&mut server).await,
            "w3" => w3(&mut server, watch).await,
            _ => w4(&mut server).await,
        },
        Err(e) => Err(e),
    };
    server.close().await;
    report
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

/// A request body as a line.
fn line(body: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(body.len() + 1);
    line.extend_from_slice(body.as_bytes());
    line.push(b'\n');
    line
}

impl Server {
    fn spawn(command: &str, args: &[String]) -> Result<Server, Failure> {
        let mut child = Command::new(command)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("spawn {command}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().ok_or("no stdout")?);
        Ok(Server { child, stdin, stdout, line: Vec::new() })
    }

    async fn send(&mut self, line: &[u8]) -> Result<(), Failure> {
        self.stdin.write_all(line).await.map_err(|e| format!("writing to the server: {e}"))
    }

    /// The next line the server writes.
    async fn recv(&mut self) -> Result<&[u8], Failure> {
        self.line.clear();
        let n = (&mut self.stdout)
            .take(MAX_LINE)
            .read_until(b'\n', &mut self.line)
            .await
            .map_err(|e| format!("reading from the server: {e}"))?;
        if n == 0 {
            return Err("the server closed its stdout".into());
        }
        if self.line.last() != Some(&b'\n') {
            return Err(format!("a reply line longer than {MAX_LINE} bytes, or cut short"));
        }
        Ok(&self.line)
    }

    async fn round_trip(&mut self, line: &[u8]) -> Result<&[u8], Failure> {
        self.send(line).await?;
        self.recv().await
    }

    async fn handshake(&mut self) -> Result<(), Failure> {
        let reply = self.round_trip(&line(&initialize_body())).await?;
        if memmem::find(reply, format!(r#""protocolVersion":"{VERSION}""#).as_bytes()).is_none() {
            return Err(format!("initialize got {}", excerpt(reply)));
        }
        self.send(&line(INITIALIZED)).await
    }

    /// End stdin, then wait for the server to exit (killed if it takes long).
    async fn close(self) {
        let Server { mut child, stdin, .. } = self;
        drop(stdin);
        if tokio::time::timeout(Duration::from_secs(5), child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

async fn w1(server: &mut Server) -> Result<JsonObject, Failure> {
    let (warm_up, calls) = warm_up_and_measured(W1_CALLS);
    let lines: Vec<Vec<u8>> = calls.iter().map(|c| line(&c.body)).collect();
    for call in &warm_up {
        check_echo(server.round_trip(&line(&call.body)).await?, call)?;
    }
    let mut latencies = Vec::with_capacity(W1_CALLS);
    let watch = Stopwatch::start();
    for (call, line) in calls.iter().zip(&lines) {
        let started = Instant::now();
        check_echo(server.round_trip(line).await?, call)?;
        latencies.push(started.elapsed());
    }
    Ok(w1_report(&watch, latencies))
}

/// W2 pipelined: [`W2_IN_FLIGHT`] requests written, then one more for each reply read.
async fn w2(server: &mut Server) -> Result<JsonObject, Failure> {
    let (warm_up, calls) = warm_up_and_measured(W2_CALLS);
    let lines: Vec<Vec<u8>> = calls.iter().map(|c| line(&c.body)).collect();
    for call in &warm_up {
        check_echo(server.round_trip(&line(&call.body)).await?, call)?;
    }
    let first_id = calls[0].id;
    let mut answered = vec![false; W2_CALLS];
    let watch = Stopwatch::start();
    let mut sent = 0;
    while sent < W2_IN_FLIGHT.min(W2_CALLS) {
        server.send(&lines[sent]).await?;
        sent += 1;
    }
    for _ in 0..W2_CALLS {
        let reply = server.recv().await?;
        let index = super::reply_id(reply)
            .and_then(|id| id.checked_sub(first_id))
            .filter(|&i| i < W2_CALLS && !answered[i])
            .ok_or_else(|| format!("an unexpected reply: {}", excerpt(reply)))?;
        check_echo(reply, &calls[index])?;
        answered[index] = true;
        if sent < W2_CALLS {
            server.send(&lines[sent]).await?;
            sent += 1;
        }
    }
    let mut report = JsonObject::new();
    watch.record(&mut report);
    Ok(report)
}

async fn w3(server: &mut Server, watch: Stopwatch) -> Result<JsonObject, Failure> {
    let (mut tools, mut pages, mut cursor) = (0, 0, None::<String>);
    loop {
        pages += 1;
        let reply = server.round_trip(&line(&list_body(pages, cursor.as_deref()))).await?;
        let (n, next) = page_tools(reply)?;
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

async fn w4(server: &mut Server) -> Result<JsonObject, Failure> {
    let request = line(&super::call_body(1, "big", None));
    let watch = Stopwatch::start();
    let text = big_text(server.round_trip(&request).await?)?;
    let mut report = JsonObject::new();
    watch.record(&mut report);
    let bytes = check_big(text)?;
    report.insert("bytes".into(), json!(bytes));
    Ok(report)
}
