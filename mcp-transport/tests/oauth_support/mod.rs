//! An in-process fake for the OAuth flow tests: one axum app on 127.0.0.1:0 that is both a
//! protected MCP resource (POST /mcp) and two authorization servers (issuer `http://127.0.0.1:P`
//! and `http://127.0.0.1:P/as2`), with counters the tests assert on, and a browser step that
//! answers the authorization URL itself. The same resource is also served over the legacy
//! HTTP+SSE transport (GET /sse, POST /messages), with the same token checks.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_transport::auth::AuthError;
use mcp_transport::auth::browser::{AuthorizationResponse, BrowserStep, PendingRedirect};
use mcp_transport::auth::oauth::{OAuthClient, OAuthSettings};
use mcp_transport::auth::store::MemoryStore;
use mcp_transport::auth::store::TokenStore;
use mcp_transport::{Secret, StreamableHttpTransport, Transport, TransportError, TransportEvent};
use serde_json::{Value, json};

/// What the browser step does with the authorization URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowserMode {
    /// Redirect back with a code, the request's state and the issuer.
    Approve,
    /// Redirect back with a state that is not the request's.
    WrongState,
    /// Redirect back with `error=access_denied`.
    Deny,
}

/// A token or code the fake issued: for which issuer, with which scopes.
#[derive(Debug, Clone)]
pub struct Grant {
    pub issuer: String,
    pub scopes: Vec<String>,
}

/// The fake's state and knobs.
#[derive(Debug)]
pub struct FakeState {
    pub base: String,
    /// Which issuer the protected resource metadata names: 1 (the origin) or 2 (`/as2`).
    pub active_as: u8,
    /// Status of the protected resource metadata (200: the document).
    pub prm_status: u16,
    /// The scopes the protected resource metadata lists.
    pub prm_scopes: Vec<String>,
    /// Whether the first authorization server's metadata answers 404.
    pub as_metadata_missing: bool,
    /// Registration answers 400 invalid_client_metadata.
    pub refuse_register: bool,
    /// The code exchange answers 400 invalid_grant.
    pub refuse_code: bool,
    /// The refresh answers 400 invalid_grant.
    pub refuse_refresh: bool,
    /// Registrations return a client secret, and only client_secret_basic is advertised.
    pub confidential: bool,
    /// `expires_in` of tokens from a code exchange, and from a refresh.
    pub code_expires_in: u64,
    pub refresh_expires_in: u64,
    /// tools/call needs this scope (403 insufficient_scope without it).
    pub call_requires: Option<String>,
    /// tools/call is always answered 403 insufficient_scope for this scope.
    pub call_always_403: Option<String>,
    pub browser_mode: BrowserMode,

    /// Counters.
    pub registrations: Vec<String>,
    pub authorizations: Vec<Vec<String>>,
    pub code_exchanges: usize,
    pub refreshes: usize,
    pub mcp_401: usize,
    /// Basic client authentication headers seen at the token endpoint.
    pub basic_auth_seen: usize,

    /// Every secret the fake handed out (tokens, codes, client secrets).
    pub issued_secrets: Vec<String>,
    next: usize,
    access: HashMap<String, Grant>,
    refresh: HashMap<String, Grant>,
    codes: HashMap<String, Grant>,
    /// The open legacy SSE stream, where POST /messages answers go.
    sse: Option<tokio::sync::mpsc::UnboundedSender<String>>,
    /// GET /sse requests refused with 401.
    pub sse_401: usize,
}

impl FakeState {
    fn issuer(&self, n: u8) -> String {
        if n == 1 { self.base.clone() } else { format!("{}/as2", self.base) }
    }

    fn secret(&mut self, kind: &str) -> String {
        self.next += 1;
        let s = format!("{kind}-s3cr3t-{}-{}", self.next, self.base.len() * 7919 + self.next * 31);
        self.issued_secrets.push(s.clone());
        s
    }

    /// Panic when `text` holds a secret the fake handed out.
    pub fn assert_clean(&self, text: &str) {
        for secret in &self.issued_secrets {
            assert!(!text.contains(secret.as_str()), "a secret ({secret}) shows in: {text}");
        }
    }

    /// Forget every access token: the resource refuses them all.
    pub fn revoke_access(&mut self) {
        self.access.clear();
    }
}

/// A running fake.
#[derive(Clone)]
pub struct Fake {
    pub port: u16,
    state: Arc<Mutex<FakeState>>,
}

impl Fake {
    pub async fn start() -> Fake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(FakeState {
            base: format!("http://127.0.0.1:{port}"),
            active_as: 1,
            prm_status: 200,
            prm_scopes: vec!["read".into()],
            as_metadata_missing: false,
            refuse_register: false,
            refuse_code: false,
            refuse_refresh: false,
            confidential: false,
            code_expires_in: 3600,
            refresh_expires_in: 3600,
            call_requires: None,
            call_always_403: None,
            browser_mode: BrowserMode::Approve,
            registrations: Vec::new(),
            authorizations: Vec::new(),
            code_exchanges: 0,
            refreshes: 0,
            mcp_401: 0,
            basic_auth_seen: 0,
            issued_secrets: Vec::new(),
            next: 0,
            access: HashMap::new(),
            refresh: HashMap::new(),
            codes: HashMap::new(),
            sse: None,
            sse_401: 0,
        }));
        let fake = Fake { port, state };
        let app = axum::Router::new().fallback(handle).with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        fake
    }

    /// Read or change the state.
    pub fn with<R>(&self, f: impl FnOnce(&mut FakeState) -> R) -> R {
        f(&mut self.state.lock().unwrap())
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn issuer(&self, n: u8) -> String {
        self.with(|s| s.issuer(n))
    }

    /// A client of this fake's MCP endpoint, with the test browser step.
    pub fn client(&self, store: Arc<dyn TokenStore>, tweak: impl FnOnce(&mut OAuthSettings)) -> Arc<OAuthClient> {
        let mut settings = OAuthSettings {
            browser: Some(Arc::new(TestBrowser { fake: self.clone() })),
            store,
            http_timeout: Duration::from_secs(5),
            ..OAuthSettings::default()
        };
        tweak(&mut settings);
        Arc::new(OAuthClient::new("fake", &self.url("/mcp"), settings).unwrap())
    }

    /// A transport to the MCP endpoint authorized by `client`.
    pub fn transport(&self, client: &Arc<OAuthClient>) -> StreamableHttpTransport {
        let mut config = crate::http_support::config(&self.url("/mcp"));
        config.authorization = Some(client.clone());
        StreamableHttpTransport::new(config).unwrap()
    }

    /// The browser step: the user approves (or not) at the authorization URL.
    fn authorize(&self, url: &url::Url) -> AuthorizationResponse {
        let q: HashMap<String, String> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        assert_eq!(q.get("code_challenge_method").map(String::as_str), Some("S256"), "PKCE S256");
        assert!(q.contains_key("code_challenge"));
        assert_eq!(q.get("resource"), Some(&self.url("/mcp")), "resource indicator");
        let mut s = self.state.lock().unwrap();
        let issuer = if url.path().starts_with("/as2/") { s.issuer(2) } else { s.issuer(1) };
        let scopes: Vec<String> = q.get("scope").map(|v| v.split(' ').map(str::to_owned).collect()).unwrap_or_default();
        s.authorizations.push(scopes.clone());
        let code = s.secret("code");
        s.codes.insert(code.clone(), Grant { issuer: issuer.clone(), scopes });
        let state = q.get("state").cloned();
        // The client's own secrets count too: its state never shows either.
        s.issued_secrets.extend(state.clone());
        match s.browser_mode {
            BrowserMode::Approve => AuthorizationResponse {
                code: Some(Secret::new(code)),
                state,
                iss: Some(issuer),
                error: None,
                error_description: None,
            },
            BrowserMode::WrongState => AuthorizationResponse {
                code: Some(Secret::new(code)),
                state: Some("not-the-state".into()),
                iss: Some(issuer),
                error: None,
                error_description: None,
            },
            BrowserMode::Deny => AuthorizationResponse {
                code: None,
                state,
                iss: Some(issuer),
                error: Some("access_denied".into()),
                error_description: Some("the user said no".into()),
            },
        }
    }
}

/// A browser step that hands the authorization URL to the fake instead of a person.
#[derive(Clone)]
pub struct TestBrowser {
    fake: Fake,
}

impl std::fmt::Debug for TestBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TestBrowser")
    }
}

struct Pending {
    fake: Fake,
}

const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

impl PendingRedirect for Pending {
    fn redirect_uri(&self) -> &str {
        REDIRECT_URI
    }

    fn complete(self: Box<Self>, url: url::Url) -> BoxFuture<'static, Result<AuthorizationResponse, AuthError>> {
        let fake = self.fake.clone();
        async move { Ok(fake.authorize(&url)) }.boxed()
    }
}

impl BrowserStep for TestBrowser {
    fn prepare<'a>(&'a self, _: Option<&'a str>) -> BoxFuture<'a, Result<Box<dyn PendingRedirect>, AuthError>> {
        let fake = self.fake.clone();
        async move { Ok(Box::new(Pending { fake }) as Box<dyn PendingRedirect>) }.boxed()
    }
}

fn json_response(status: u16, headers: &[(&str, &str)], body: &Value) -> Response {
    let mut builder =
        Response::builder().status(StatusCode::from_u16(status).unwrap()).header("content-type", "application/json");
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

fn empty(status: u16) -> Response {
    Response::builder().status(StatusCode::from_u16(status).unwrap()).body(Body::empty()).unwrap()
}

fn as_metadata(s: &FakeState, n: u8) -> Value {
    let issuer = s.issuer(n);
    let methods = if s.confidential { json!(["client_secret_basic"]) } else { json!(["none"]) };
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "scopes_supported": ["read", "write"],
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": methods,
        "authorization_response_iss_parameter_supported": true,
    })
}

async fn handle(State(fake): State<Fake>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let mut s = fake.state.lock().unwrap();
    let path = uri.path().to_owned();
    match (method.as_str(), path.as_str()) {
        ("POST", "/mcp") => mcp(&mut s, &headers, &body),
        ("GET", "/sse") => sse_stream(&mut s, &headers),
        ("POST", "/messages") => {
            let answer = mcp(&mut s, &headers, &body);
            if answer.status() != StatusCode::OK {
                return answer;
            }
            // The answer goes on the stream; the body is a complete `Full` body, read at once.
            let sender = s.sse.clone();
            let bytes =
                futures::executor::block_on(axum::body::to_bytes(answer.into_body(), 1 << 20)).unwrap_or_default();
            if let Some(sender) = sender {
                let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
            }
            empty(202)
        }
        ("GET", "/mcp") => empty(405),
        ("DELETE", "/mcp") => empty(200),
        ("GET", "/.well-known/oauth-protected-resource/mcp") => {
            if s.prm_status != 200 {
                return json_response(s.prm_status, &[], &json!({"error": "server_error"}));
            }
            let issuer = s.issuer(s.active_as);
            json_response(
                200,
                &[],
                &json!({
                    "resource": format!("{}/mcp", s.base),
                    "authorization_servers": [issuer],
                    "scopes_supported": s.prm_scopes,
                }),
            )
        }
        ("GET", "/.well-known/oauth-authorization-server") if !s.as_metadata_missing => {
            json_response(200, &[], &as_metadata(&s, 1))
        }
        ("GET", "/.well-known/oauth-authorization-server/as2") => json_response(200, &[], &as_metadata(&s, 2)),
        ("POST", "/register") => register(&mut s, 1, &body),
        ("POST", "/as2/register") => register(&mut s, 2, &body),
        ("POST", "/token") => token(&mut s, 1, &headers, &body),
        ("POST", "/as2/token") => token(&mut s, 2, &headers, &body),
        _ => empty(404),
    }
}

/// GET /sse: with a valid token, a stream that announces `/messages` and then carries the
/// answers to what is POSTed there.
fn sse_stream(s: &mut FakeState, headers: &HeaderMap) -> Response {
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let active = s.issuer(s.active_as);
    if bearer.and_then(|t| s.access.get(&t).cloned()).is_none_or(|g| g.issuer != active) {
        s.sse_401 += 1;
        let challenge = format!("Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"", s.base);
        return json_response(401, &[("www-authenticate", challenge.as_str())], &json!({"error": "unauthorized"}));
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    s.sse = Some(tx);
    let first =
        futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from("event: endpoint\ndata: /messages\n\n")) });
    let rest = futures::stream::unfold(rx, |mut rx| async move {
        let data = rx.recv().await?;
        Some((Ok(Bytes::from(format!("event: message\ndata: {data}\n\n"))), rx))
    });
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures::StreamExt::chain(first, rest)))
        .unwrap()
}

fn mcp(s: &mut FakeState, headers: &HeaderMap, body: &[u8]) -> Response {
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let active = s.issuer(s.active_as);
    let grant = bearer.and_then(|t| s.access.get(&t).cloned()).filter(|g| g.issuer == active);
    let prm = format!("{}/.well-known/oauth-protected-resource/mcp", s.base);
    let Some(grant) = grant else {
        s.mcp_401 += 1;
        let challenge = format!("Bearer resource_metadata=\"{prm}\"");
        return json_response(401, &[("www-authenticate", challenge.as_str())], &json!({"error": "unauthorized"}));
    };
    let msg: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let Some(id) = msg.get("id").cloned() else { return empty(202) };
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}
        }),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "tools/call" => {
            let missing = s
                .call_always_403
                .clone()
                .or_else(|| s.call_requires.clone().filter(|needed| !grant.scopes.iter().any(|have| have == needed)));
            if let Some(scope) = missing {
                let challenge =
                    format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{prm}\"");
                return json_response(
                    403,
                    &[("www-authenticate", challenge.as_str())],
                    &json!({"error": "insufficient_scope"}),
                );
            }
            json!({"content": [{"type": "text", "text": msg["params"]["arguments"].to_string()}]})
        }
        _ => json!({}),
    };
    json_response(200, &[], &json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn register(s: &mut FakeState, n: u8, body: &[u8]) -> Response {
    let issuer = s.issuer(n);
    s.registrations.push(issuer);
    if s.refuse_register {
        return json_response(400, &[], &json!({"error": "invalid_client_metadata", "error_description": "no"}));
    }
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let client_id = format!("client-{n}-{}", s.registrations.len());
    let mut answer = json!({
        "client_id": client_id,
        "redirect_uris": request["redirect_uris"],
        "token_endpoint_auth_method": "none",
    });
    if s.confidential {
        let secret = s.secret("client-secret");
        answer["client_secret"] = json!(secret);
        answer["token_endpoint_auth_method"] = json!("client_secret_basic");
    }
    json_response(201, &[], &answer)
}

fn token_error(error: &str) -> Response {
    json_response(400, &[], &json!({"error": error}))
}

fn token(s: &mut FakeState, n: u8, headers: &HeaderMap, body: &[u8]) -> Response {
    let issuer = s.issuer(n);
    let form: HashMap<String, String> = url::form_urlencoded::parse(body).into_owned().collect();
    if headers.get("authorization").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("Basic ")) {
        s.basic_auth_seen += 1;
    }
    let (grant, expires_in) = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            s.code_exchanges += 1;
            if s.refuse_code {
                return token_error("invalid_grant");
            }
            let Some(grant) = form.get("code").and_then(|c| s.codes.remove(c)) else {
                return token_error("invalid_grant");
            };
            let verifier = form.get("code_verifier").cloned();
            assert!(verifier.is_some(), "PKCE verifier sent");
            // The PKCE verifier is a secret of the client's: it must not show anywhere either.
            s.issued_secrets.extend(verifier);
            (grant, s.code_expires_in)
        }
        Some("refresh_token") => {
            s.refreshes += 1;
            if s.refuse_refresh {
                return token_error("invalid_grant");
            }
            let Some(grant) = form.get("refresh_token").and_then(|r| s.refresh.get(r).cloned()) else {
                return token_error("invalid_grant");
            };
            (grant, s.refresh_expires_in)
        }
        _ => return token_error("unsupported_grant_type"),
    };
    if grant.issuer != issuer {
        return token_error("invalid_grant");
    }
    let access = s.secret("access");
    let refresh = s.secret("refresh");
    s.access.insert(access.clone(), grant.clone());
    s.refresh.insert(refresh.clone(), grant.clone());
    json_response(
        200,
        &[("cache-control", "no-store")],
        &json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": expires_in,
            "refresh_token": refresh,
            "scope": grant.scopes.join(" "),
        }),
    )
}

pub fn store() -> Arc<MemoryStore> {
    Arc::new(MemoryStore::new())
}

/// Send `n` tools/call requests (ids `first..first + n`) at once and collect their outcomes.
pub async fn calls(t: &StreamableHttpTransport, first: i64, n: i64) -> Vec<Result<(), TransportError>> {
    let sends = (first..first + n).map(|id| {
        t.send(crate::http_support::request(id, "tools/call", json!({"name": "echo", "arguments": {"n": id}})))
    });
    for sent in futures::future::join_all(sends).await {
        sent.unwrap();
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while out.len() < n as usize {
        let (id, outcome) = match crate::http_support::next_event(t).await {
            TransportEvent::Message(mcp_protocol::Message::Response(r)) => {
                let id = r.id.clone().unwrap();
                (id, r.into_result().map(|_| ()).map_err(|e| TransportError::Other(format!("{e:?}"))))
            }
            TransportEvent::RequestFailed { id, error } => (id, Err(error)),
            other => panic!("unexpected event {other:?}"),
        };
        assert!(seen.insert(id), "one outcome per request");
        out.push(outcome);
    }
    out
}

/// One tools/call.
pub async fn call(t: &StreamableHttpTransport, id: i64) -> Result<(), TransportError> {
    calls(t, id, 1).await.pop().unwrap()
}

/// The authorization error of a failed request; no secret of `fake` shows in it.
pub fn auth_error(fake: &Fake, outcome: Result<(), TransportError>) -> AuthError {
    let e = match outcome {
        Err(TransportError::Auth(e)) => e,
        other => panic!("expected an authorization error, got {other:?}"),
    };
    fake.with(|s| s.assert_clean(&format!("{e} {e:?} {}", TransportError::Auth(e.clone()))));
    e
}
