//! The browser step of the authorization code flow, pluggable: the flow hands the
//! authorization URL to a [`BrowserStep`] and gets back the redirect's parameters
//! ([`AuthorizationResponse`]).
//!
//! [`LoopbackBrowser`] is the one hosts and `mcp` use: it listens on 127.0.0.1 (an ephemeral
//! port, or a configured one), shows the URL to the user (opening a browser, printing it, or
//! whatever its [`UrlOpener`] does), takes exactly one redirect to its callback path, answers it
//! with a small "you can close this tab" page, and gives up after its timeout. Requests to
//! other paths, and malformed ones, are answered (404, 400) and ignored; each connection's
//! request head is bounded in size and time, and connections are served concurrently, so a
//! silent one cannot hold up the redirect.
//!
//! Openers: [`print_url`] prints the URL; [`open_browser_or_print`] also starts the
//! system browser.

use std::fmt;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::{AuthError, AuthStep};

/// What the authorization server sent back to the redirect URI.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// The authorization code (absent when the server sent an error).
    pub code: Option<crate::Secret>,
    /// The `state` parameter.
    pub state: Option<String>,
    /// The `iss` parameter (RFC 9207).
    pub iss: Option<String>,
    /// The `error` parameter (`access_denied`, ...).
    pub error: Option<String>,
    /// The `error_description` parameter.
    pub error_description: Option<String>,
}

impl fmt::Debug for AuthorizationResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationResponse")
            .field("code", &self.code)
            .field("state", &self.state.as_ref().map(|_| "<redacted>"))
            .field("iss", &self.iss)
            .field("error", &self.error)
            .field("error_description", &self.error_description)
            .finish()
    }
}

impl AuthorizationResponse {
    /// The parameters of a redirect URL's query (unknown ones ignored).
    pub fn from_query(url: &url::Url) -> Self {
        let mut out =
            AuthorizationResponse { code: None, state: None, iss: None, error: None, error_description: None };
        for (k, v) in url.query_pairs() {
            let v = v.into_owned();
            match k.as_ref() {
                "code" if out.code.is_none() => out.code = Some(crate::Secret::new(v)),
                "state" if out.state.is_none() => out.state = Some(v),
                "iss" if out.iss.is_none() => out.iss = Some(v),
                "error" if out.error.is_none() => out.error = Some(v),
                "error_description" if out.error_description.is_none() => out.error_description = Some(v),
                _ => {}
            }
        }
        out
    }
}

/// A browser step about to happen: it knows its redirect URI (needed to register the client and
/// to build the authorization URL) before it is shown the authorization URL.
pub trait PendingRedirect: Send {
    /// The redirect URI to register and to send.
    fn redirect_uri(&self) -> &str;

    /// Show `authorization_url` to the user and wait for the redirect (bounded by the step's own
    /// timeout).
    fn complete(
        self: Box<Self>,
        authorization_url: url::Url,
    ) -> BoxFuture<'static, Result<AuthorizationResponse, AuthError>>;
}

/// The pluggable browser step.
pub trait BrowserStep: Send + Sync + fmt::Debug {
    /// Get ready (bind a listener, say). `preferred` is the redirect URI of an earlier
    /// registration, to reuse when possible.
    fn prepare<'a>(&'a self, preferred: Option<&'a str>) -> BoxFuture<'a, Result<Box<dyn PendingRedirect>, AuthError>>;
}

/// Shows an authorization URL to the user: opens a browser, prints it, or both.
pub type UrlOpener = Arc<dyn Fn(&url::Url) + Send + Sync>;

/// The loopback redirect listener. See the module docs.
#[derive(Clone)]
pub struct LoopbackBrowser {
    /// The port to listen on; `None`: the preferred redirect's port when free, else an
    /// ephemeral one.
    pub port: Option<u16>,
    /// The callback path (default `/callback`).
    pub path: String,
    /// How long to wait for the redirect (default 5 minutes).
    pub timeout: Duration,
    /// Shows the URL.
    pub opener: UrlOpener,
}

impl fmt::Debug for LoopbackBrowser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackBrowser")
            .field("port", &self.port)
            .field("path", &self.path)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackBrowser {
    /// A listener on an ephemeral port that shows the URL with `opener`.
    pub fn new(opener: UrlOpener) -> Self {
        LoopbackBrowser { port: None, path: "/callback".into(), timeout: Duration::from_secs(300), opener }
    }
}

/// Longest request head (request line and headers) the listener reads.
const MAX_HEAD_BYTES: usize = 8 * 1024;

/// How long one connection may take to send its request head: a silent connection is dropped
/// after it, and others are served meanwhile.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Most connections served at once; more wait in the listen backlog.
const MAX_CONNECTIONS: usize = 32;

impl BrowserStep for LoopbackBrowser {
    fn prepare<'a>(&'a self, preferred: Option<&'a str>) -> BoxFuture<'a, Result<Box<dyn PendingRedirect>, AuthError>> {
        async move {
            let preferred = preferred.and_then(loopback_redirect);
            let host = match &preferred {
                Some((host, _)) => *host,
                None => "127.0.0.1",
            };
            let listener = match (self.port, preferred) {
                (Some(port), _) => TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await.map_err(|e| {
                    AuthError::new(
                        AuthStep::Authorization,
                        format!("cannot listen for the redirect on 127.0.0.1 port {port}: {e}"),
                    )
                })?,
                (None, Some((_, port))) => match TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
                    Ok(listener) => listener,
                    Err(e) => {
                        tracing::debug!(port, error = %e, "the preferred redirect port is busy; using another");
                        bind_ephemeral().await?
                    }
                },
                (None, None) => bind_ephemeral().await?,
            };
            let port = listener
                .local_addr()
                .map_err(|e| {
                    AuthError::new(AuthStep::Authorization, format!("cannot read the redirect listener's port: {e}"))
                })?
                .port();
            let pending: Box<dyn PendingRedirect> = Box::new(LoopbackRedirect {
                redirect_uri: format!("http://{host}:{port}{}", self.path),
                listener,
                path: self.path.clone(),
                timeout: self.timeout,
                opener: Arc::clone(&self.opener),
            });
            Ok(pending)
        }
        .boxed()
    }
}

async fn bind_ephemeral() -> Result<TcpListener, AuthError> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.map_err(|e| {
        AuthError::new(AuthStep::Authorization, format!("cannot listen for the redirect on 127.0.0.1: {e}"))
    })
}

/// The host (`127.0.0.1` or `localhost`) and port of a loopback `http` redirect URI.
fn loopback_redirect(uri: &str) -> Option<(&'static str, u16)> {
    let url = url::Url::parse(uri).ok()?;
    if url.scheme() != "http" {
        return None;
    }
    let host = match url.host()? {
        url::Host::Ipv4(ip) if ip == Ipv4Addr::LOCALHOST => "127.0.0.1",
        url::Host::Domain(d) if d.eq_ignore_ascii_case("localhost") => "localhost",
        _ => return None,
    };
    Some((host, url.port()?))
}

/// A bound loopback listener waiting for its one redirect. Dropping it closes the listener.
struct LoopbackRedirect {
    redirect_uri: String,
    listener: TcpListener,
    path: String,
    timeout: Duration,
    opener: UrlOpener,
}

impl PendingRedirect for LoopbackRedirect {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn complete(
        self: Box<Self>,
        authorization_url: url::Url,
    ) -> BoxFuture<'static, Result<AuthorizationResponse, AuthError>> {
        async move {
            let LoopbackRedirect { listener, path, timeout, opener, .. } = *self;
            opener(&authorization_url);
            match tokio::time::timeout(timeout, serve(listener, path)).await {
                Ok(response) => Ok(response),
                Err(_) => Err(AuthError::new(
                    AuthStep::Authorization,
                    format!("no redirect arrived within {timeout:?}; the login was not completed"),
                )),
            }
        }
        .boxed()
    }
}

/// Accept connections, serving several at once, until one brings the redirect.
async fn serve(listener: TcpListener, path: String) -> AuthorizationResponse {
    let mut connections = FuturesUnordered::new();
    loop {
        tokio::select! {
            accepted = listener.accept(), if connections.len() < MAX_CONNECTIONS => match accepted {
                Ok((stream, _)) => connections.push(handle(stream, &path)),
                Err(e) => {
                    // Out of descriptors, say: wait a little rather than spin.
                    tracing::debug!(error = %e, "the redirect listener could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(done) = connections.next(), if !connections.is_empty() => {
                if let Some(response) = done {
                    return response;
                }
            }
        }
    }
}

/// Serve one connection: `Some` when it brought the redirect.
async fn handle(mut stream: TcpStream, path: &str) -> Option<AuthorizationResponse> {
    let served = tokio::time::timeout(CONNECTION_TIMEOUT, async {
        let reply = match read_head(&mut stream).await {
            Ok(head) => answer(&head, path),
            Err(HeadError::TooLarge) => Reply::ignored(431, "Request Header Fields Too Large"),
            Err(HeadError::Closed) => return None,
        };
        let _ = stream.write_all(&reply.bytes).await;
        let _ = stream.shutdown().await;
        reply.response
    })
    .await;
    served.ok().flatten()
}

enum HeadError {
    /// The peer closed (or failed) before the end of its head.
    Closed,
    /// The head is longer than [`MAX_HEAD_BYTES`].
    TooLarge,
}

/// The request head, up to (not including) its blank line.
async fn read_head(stream: &mut TcpStream) -> Result<Vec<u8>, HeadError> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await.map_err(|_| HeadError::Closed)?;
        if n == 0 {
            return Err(HeadError::Closed);
        }
        // Look for the end again from just before the new bytes, in case it straddles them.
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(&chunk[..n]);
        if let Some(end) = memchr::memmem::find(&head[from..], b"\r\n\r\n") {
            let end = from + end;
            if end > MAX_HEAD_BYTES {
                return Err(HeadError::TooLarge);
            }
            head.truncate(end);
            return Ok(head);
        }
        if head.len() > MAX_HEAD_BYTES {
            return Err(HeadError::TooLarge);
        }
    }
}

/// What to send back, and the redirect when this was it.
struct Reply {
    bytes: Vec<u8>,
    response: Option<AuthorizationResponse>,
}

impl Reply {
    fn ignored(status: u16, reason: &str) -> Self {
        tracing::debug!(status, "the redirect listener ignored a request");
        Reply { bytes: http_response(status, reason, "text/plain; charset=utf-8", reason), response: None }
    }
}

/// The reply to a request head.
fn answer(head: &[u8], path: &str) -> Reply {
    let Some((method, target)) = parse_head(head) else {
        return Reply::ignored(400, "Bad Request");
    };
    let (target_path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    if target_path != path {
        return Reply::ignored(404, "Not Found");
    }
    if method != "GET" {
        return Reply::ignored(405, "Method Not Allowed");
    }
    let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
        return Reply::ignored(400, "Bad Request");
    };
    let response = AuthorizationResponse::from_query(&url);
    // A visit without the redirect's parameters (a prefetch, a reload of a bare URL) is not it.
    if query.is_none() || (response.code.is_none() && response.error.is_none()) {
        return Reply::ignored(400, "Bad Request");
    }
    let page = match &response.error {
        None => page("Authorization complete", "<p>Authorization complete. You can close this tab.</p>"),
        Some(error) => page(
            "Authorization failed",
            &format!("<p>Authorization failed: <code>{}</code>.</p><p>You can close this tab.</p>", html_escape(error)),
        ),
    };
    Reply { bytes: http_response(200, "OK", "text/html; charset=utf-8", &page), response: Some(response) }
}

/// The method and target of a well-formed HTTP/1.x request head.
fn parse_head(head: &[u8]) -> Option<(&str, &str)> {
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic());
    if parts.next().is_some()
        || !token(method)
        || !target.starts_with('/')
        || !token(target)
        || !matches!(version, "HTTP/1.0" | "HTTP/1.1")
    {
        return None;
    }
    for line in lines {
        let (name, _) = line.split_once(':')?;
        if !token(name) {
            return None;
        }
    }
    Some((method, target))
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body>{body}</body></html>\n"
    )
}

fn http_response(status: u16, reason: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An opener that prints the URL on stderr, on a line of its own, for the user to open.
pub fn print_url() -> UrlOpener {
    Arc::new(show_url)
}

fn show_url(url: &url::Url) {
    eprintln!("Open this URL in a browser to log in:");
    eprintln!("{url}");
}

/// An opener that starts the system browser (`xdg-open`, or `open` on macOS) and also prints
/// the URL on stderr (the browser may not start, or may start on another display).
pub fn open_browser_or_print() -> UrlOpener {
    Arc::new(|url: &url::Url| {
        spawn_browser(url);
        show_url(url);
    })
}

fn spawn_browser(url: &url::Url) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(unix) {
        "xdg-open"
    } else {
        return;
    };
    let spawned = std::process::Command::new(program)
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match spawned {
        // Reaped in the background: the login must not wait on the browser.
        Ok(mut child) => {
            let _ = std::thread::Builder::new().name("browser-reaper".into()).spawn(move || child.wait());
        }
        Err(e) => tracing::debug!(program, error = %e, "could not start the browser"),
    }
}
