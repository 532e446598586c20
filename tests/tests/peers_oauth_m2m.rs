//! Machine-to-machine OAuth with DPoP against real peers: this stack's `OAuthClient`, with the
//! client credentials grant, `private_key_jwt` and DPoP-bound tokens, authorizing a streamable
//! HTTP connection to a Python SDK server that checks the binding.
//!
//! - The authorization server is [oidc-provider] (`tests/peers/oauth/oidc-m2m.mjs`, on the
//!   system `node`): one static client, `mcp-m2m`, allowed the client credentials grant only and
//!   authenticated by `private_key_jwt` (ES256) against the public JWK of a key this test makes;
//!   DPoP with a nonce required at the token endpoint; JWT access tokens for the MCP server's
//!   audience, bound to the proof's key (`cnf.jkt`).
//! - The resource server is the Python `mcp` SDK's `MCPServer` behind an ASGI guard
//!   (`tests/peers/oauth/dpop_server.py`) that verifies the token against the provider's JWKS
//!   and the DPoP proof (signature, `jkt`, `htm`, `htu`, `iat`, `ath`, its own nonce, and a `jti`
//!   never seen before), logging one `event:` line per verdict.
//! - Between the client and the resource server sits a small recording proxy of this test
//!   ([`Proxy`]): it keeps the `Authorization` and `DPoP` headers of the client's last POST, so
//!   that the test can replay them, and, when told, replaces the client's fresh proof by the
//!   recorded one (a real replay, which the server refuses and the client must recover from).
//!
//! What it checks: a tool call succeeds with a `DPoP` token (both nonce dances done on the way);
//! a replayed proof, the token as `Bearer`, and the token as `DPoP` with no proof are each
//! refused with 401 and the right `DPoP` error; the client's next calls succeed, after the
//! server refused its (replayed) proof and after the server changed its nonce, with no new
//! grant; a client with a key the provider does not know fails with `invalid_client`, and the
//! error shows neither key nor token; the client's `tracing` output (captured by a subscriber of
//! this test) shows no token, proof or key.
//!
//! Two more cases pin what these peers once showed of the client:
//! - the token request sent again with the provider's DPoP nonce carries a new
//!   `private_key_jwt` assertion (oidc-provider refuses a second use of one as `invalid_client`),
//!   so the first grant succeeds even in the legacy era, where no fallback could mask it;
//! - a token that lives no longer than the refresh margin (60 s by default) and has no refresh
//!   token, as unattended grants issue, is used (for half its life), not withheld.
//!
//! Same contract as the other peer tests: `cargo xtask test` (or `cargo xtask peers`) provisions
//! `target/peers/` and runs this file with `MCP_PEERS_DIR` set and `MCP_REQUIRE_PEERS=1`; without
//! `MCP_PEERS_DIR` the test says it skipped and passes. Everything listens on 127.0.0.1 only;
//! the servers run in process groups of their own, stopped at the end (killed if the test
//! fails). Tokens, proofs and keys are never printed.
//!
//! [oidc-provider]: https://github.com/panva/node-oidc-provider

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use mcp_manager::connection::{ConnectionError, EraPreference};
use mcp_manager::session::SessionError;
use mcp_manager::{ConnectionOptions, McpConnection, RequestOptions, TransportFactory};
use mcp_transport::auth::jose::SigningKey;
use mcp_transport::auth::oauth::{DpopPolicy, Grant, OAuthClient, OAuthSettings};
use mcp_transport::auth::store::{MemoryStore, StoredCredentials, TokenStore};
use mcp_transport::{StreamableHttpConfig, StreamableHttpTransport, Transport, TransportError};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use serde_json::json;
use tests::peers::{HttpPeer, call, free_port, peer, repo_peer_file, texts};

/// The whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(120);

/// The client id the provider knows.
const CLIENT_ID: &str = "mcp-m2m";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oidc_provider_client_credentials_with_dpop_against_a_python_server_that_checks_the_binding() {
    run("oidc-provider m2m with DPoP", m2m).await;
}

/// The provider answers the first token request `use_dpop_nonce`; the client must send it
/// again with the nonce *and a new client assertion* (RFC 7523 §3: an assertion's `jti` is used
/// once; oidc-provider refuses a second use as `invalid_client`). In the legacy era nothing
/// masks a failure: the first grant must succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_request_sent_again_with_the_providers_nonce_has_a_new_client_assertion() {
    run("oidc-provider m2m, the first grant", first_grant).await;
}

/// A token whose whole life is within the client's refresh margin (60 s by default), with no
/// refresh token, as an unattended grant gets: the client must still use it (or run the grant
/// again), not send nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_credentials_token_shorter_lived_than_the_refresh_margin_is_used() {
    run("oidc-provider m2m, a 30 s token", short_lived).await;
}

/// Run `case` with the provisioned peers, under the test's timeout (skipped without peers).
async fn run<F, Fut>(label: &str, case: F)
where
    F: FnOnce(PathBuf, PathBuf) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let Some(oidc) = peer("npm/node_modules/oidc-provider/lib/index.js") else { return };
    let Some(python) = peer("venv/bin/python") else { return };
    let node_modules = oidc.ancestors().nth(3).expect("node_modules").to_path_buf();
    capture_logs();
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, case(node_modules, python))
        .await
        .unwrap_or_else(|_| panic!("{label}: the test timed out"));
    println!("{label}: passed in {:?}", started.elapsed());
}

/// The running peers of one case: the provider, the resource server, and the proxy in front.
struct Peers {
    dir: tempfile::TempDir,
    key: SigningKey,
    pem: String,
    issuer: String,
    provider: HttpPeer,
    server: HttpPeer,
    proxy: Proxy,
}

impl Peers {
    /// A client key, oidc-provider knowing its public JWK and issuing tokens valid `ttl` seconds,
    /// the DPoP-checking server, and the proxy, whose URL is the resource's (the server is told
    /// it is reached there).
    async fn start(node_modules: &Path, python: &Path, ttl: u64) -> Peers {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (key, pem) = client_key(dir.path(), "client.pem");
        let jwks = dir.path().join("client-jwks.json");
        let public = serde_json::to_value(key.public_jwk()).expect("the public JWK");
        assert!(public.get("d").is_none(), "the JWK given to the provider is public");
        std::fs::write(&jwks, json!({ "keys": [public] }).to_string()).expect("write the client's JWKS");

        let proxy = Proxy::bind().await;
        let as_port = free_port();
        let rs_port = free_port();
        let issuer = format!("http://127.0.0.1:{as_port}");
        let script = repo_peer_file("oauth/oidc-m2m.mjs").display().to_string();
        let args = [
            script,
            as_port.to_string(),
            proxy.url("/mcp"),
            node_modules.display().to_string(),
            CLIENT_ID.into(),
            jwks.display().to_string(),
            ttl.to_string(),
        ];
        let provider = HttpPeer::start("oidc-provider", Path::new("node"), &args, &[], as_port).await;
        provider.assert_loopback_only();
        let script = repo_peer_file("oauth/dpop_server.py").display().to_string();
        let args = [
            script,
            "--port".into(),
            rs_port.to_string(),
            "--issuer".into(),
            issuer.clone(),
            "--public-url".into(),
            proxy.url(""),
        ];
        let server = HttpPeer::start("dpop-server", python, &args, &[], rs_port).await;
        server.assert_loopback_only();
        let proxy = proxy.serve(server.url(""));
        Peers { dir, key, pem, issuer, provider, server, proxy }
    }

    async fn stop(self) {
        self.server.stop().await;
        self.provider.stop().await;
        self.proxy.stop().await;
    }
}

async fn m2m(node_modules: PathBuf, python: PathBuf) {
    let peers = Peers::start(&node_modules, &python, 300).await;
    let Peers { ref dir, ref key, ref pem, ref issuer, ref provider, ref server, ref proxy } = peers;
    let resource = proxy.url("/mcp");
    let direct = server.url("/mcp");

    // Without a token: 401 and a DPoP challenge naming the protected resource metadata.
    let refused = raw_post(&direct, HeaderMap::new()).await;
    assert_eq!(refused.0, 401);
    assert!(
        refused.1.starts_with("DPoP ") && refused.1.contains("resource_metadata=") && !refused.1.contains("error="),
        "the challenge: {:?}",
        refused.1
    );

    // The client: discovery, the client credentials grant with private_key_jwt and a DPoP proof
    // (and the provider's nonce), then the tool call with a proof (and the server's nonce).
    let store = Arc::new(MemoryStore::new());
    let oauth = oauth_client(&resource, &store, key.clone());
    let resource_key = oauth.resource().to_owned();
    let conn = connection(&resource, oauth);
    let info = conn.connect().await.expect("connect with client credentials and DPoP");
    println!("connected, protocol {}", info.protocol_version);
    let sum = call(&conn, "add", json!({"a": 40, "b": 2}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["42"]);
    let (stored_key, creds) = stored(&*store, &resource_key);
    assert_eq!(&stored_key.issuer, issuer, "the credentials are kept under the provider's issuer");
    let tokens = creds.tokens.clone().expect("a token is stored");
    assert!(tokens.token_type.eq_ignore_ascii_case("dpop"), "the token type: {:?}", tokens.token_type);
    assert!(tokens.scopes.iter().any(|s| s == "mcp:tools"), "granted: {:?}", tokens.scopes);
    let thumbprint = dpop_thumbprint(&creds);
    assert_ne!(thumbprint, key.thumbprint(), "the DPoP key is not the client authentication key");
    let verified = format!("event: dpop_verified client_id={CLIENT_ID} jkt={thumbprint}");
    assert!(
        server.output_count_at_least(&verified, 1).await >= 1,
        "the server verified a DPoP request bound to the client's key"
    );
    assert_eq!(
        provider.output_count_at_least("event: grant.success client_credentials dpop", 1).await,
        1,
        "one DPoP-bound grant"
    );
    assert!(
        provider.output_count_at_least("event: grant.error use_dpop_nonce", 1).await >= 1,
        "the provider's nonce was asked for"
    );
    assert!(server.output_count_at_least("event: use_dpop_nonce", 1).await >= 1, "the server's nonce was asked for");
    assert_eq!(server.output_count("event: bearer_refused"), 0);

    // The test replays the client's last proof, as it was: refused as a replay.
    let (authorization, proof_text) = proxy.last_post().expect("the proxy saw the client's DPoP requests");
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, authorization.clone());
    headers.insert("dpop", proof_text.clone());
    let (status, challenge) = raw_post(&direct, headers).await;
    assert_eq!(status, 401, "a replayed proof is refused");
    assert!(challenge.starts_with("DPoP ") && challenge.contains(r#"error="invalid_dpop_proof""#), "{challenge:?}");
    assert_eq!(server.output_count_at_least("event: replayed_proof", 1).await, 1);

    // The token alone, as a bearer token: refused.
    let token = authorization.to_str().expect("ascii").strip_prefix("DPoP ").expect("the DPoP scheme").to_owned();
    assert!(token == tokens.access_token.expose(), "the client sent the stored token");
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, sensitive(&format!("Bearer {token}")));
    let (status, challenge) = raw_post(&direct, headers).await;
    assert_eq!(status, 401, "a DPoP-bound token used as a bearer token is refused");
    assert!(challenge.starts_with("DPoP ") && challenge.contains(r#"error="invalid_token""#), "{challenge:?}");
    assert_eq!(server.output_count_at_least("event: bearer_refused", 1).await, 1);

    // The token with the DPoP scheme and no proof: refused.
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, sensitive(&format!("DPoP {token}")));
    let (status, challenge) = raw_post(&direct, headers).await;
    assert_eq!(status, 401, "a DPoP token without its proof is refused");
    assert!(challenge.contains(r#"error="invalid_dpop_proof""#), "{challenge:?}");
    assert_eq!(server.output_count_at_least("event: missing_proof", 1).await, 1);

    // The client goes on with fresh proofs.
    let echo = call(&conn, "echo", json!({"text": "after the refusals"}), RequestOptions::default()).await;
    assert_eq!(texts(&echo), ["after the refusals"]);

    // The proxy swaps the client's fresh proof for its previous one: the server refuses the
    // replay, and the client sends again with a fresh proof.
    let replays = server.output_count("event: replayed_proof");
    proxy.replay_next();
    let sum = call(&conn, "add", json!({"a": 1, "b": 2}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["3"]);
    assert_eq!(proxy.replayed(), 1, "the proxy replayed one proof");
    assert_eq!(
        server.output_count_at_least("event: replayed_proof", replays + 1).await,
        replays + 1,
        "the server refused the replay"
    );

    // The server changes its nonce: the client's proof with the old one is refused with
    // `use_dpop_nonce`, and it sends again with the new one.
    let nonce_refusals = server.output_count("event: use_dpop_nonce");
    let rotated = reqwest::Client::new()
        .post(server.url("/test/rotate-nonce"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .expect("rotate the server's nonce");
    assert_eq!(rotated.status(), 200);
    let echo = call(&conn, "echo", json!({"text": "new nonce"}), RequestOptions::default()).await;
    assert_eq!(texts(&echo), ["new nonce"]);
    assert_eq!(
        server.output_count_at_least("event: use_dpop_nonce", nonce_refusals + 1).await,
        nonce_refusals + 1,
        "one nonce refusal, then success"
    );
    conn.close().await;

    // No new grant was needed for any of it, and the client's requests were never bearer ones.
    assert_eq!(provider.output_count_at_least("event: grant.success", 1).await, 1, "one grant in all");
    assert_eq!(server.output_count("event: bearer_refused"), 1, "only the test's own bearer request");
    let (_, after) = stored(&*store, &resource_key);
    assert!(after.tokens.expect("tokens").access_token.expose() == token, "the same token throughout");
    let dpop_key = after.dpop_key.expect("the DPoP key").expose().to_owned();

    // A client whose key the provider does not know: invalid_client, and nothing secret shown.
    let (wrong, wrong_pem) = client_key(dir.path(), "wrong.pem");
    let wrong_store = Arc::new(MemoryStore::new());
    let conn = connection(&resource, oauth_client(&resource, &wrong_store, wrong));
    let error = conn.connect().await.expect_err("a client with an unknown key is refused");
    let auth = auth_error(&error).unwrap_or_else(|| panic!("expected an authorization error, got {error:?}"));
    let shown = format!("{error} {error:?} {auth} {auth:?}");
    assert!(shown.contains("invalid_client"), "the error names invalid_client: {shown}");
    for (what, secret) in [("the wrong key", &wrong_pem), ("the client key", pem)] {
        for line in secret.lines().filter(|l| !l.starts_with("-----")) {
            assert!(!shown.contains(line), "{what}'s PEM shows in the error");
        }
    }
    assert!(!shown.contains(&token), "the access token shows in the error");
    assert!(
        provider.output_count_at_least("event: grant.error invalid_client", 1).await >= 1,
        "the provider refused the client"
    );
    assert!(wrong_store.entries(&resource_key).expect("the store answers").iter().all(|(_, c)| c.tokens.is_none()));
    conn.close().await;

    // Nothing secret in the client's logs: no token, no proof, no key.
    let logs = captured_logs();
    assert!(logs.contains("requesting a token"), "the client's logs were captured");
    let proof = proof_text.to_str().expect("ascii").to_owned();
    for (what, secret) in [("the access token", token.as_str()), ("a DPoP proof", &proof), ("the DPoP key", &dpop_key)]
    {
        assert!(!logs.contains(secret), "{what} shows in the client's logs");
    }
    for line in pem.lines().chain(wrong_pem.lines()).filter(|l| !l.starts_with("-----")) {
        assert!(!logs.contains(line), "a private key shows in the client's logs");
    }
    peers.stop().await;
}

async fn first_grant(node_modules: PathBuf, python: PathBuf) {
    let peers = Peers::start(&node_modules, &python, 300).await;
    let resource = peers.proxy.url("/mcp");
    let store = Arc::new(MemoryStore::new());
    let mut options = ConnectionOptions::new("m2m-peer");
    options.era = EraPreference::Legacy;
    let conn = connection_with(&resource, oauth_client(&resource, &store, peers.key.clone()), options);
    let connected = conn.connect().await;
    println!(
        "provider: {} nonce refusal(s), {} replayed assertion(s), {} grant(s)",
        peers.provider.output_count("event: grant.error use_dpop_nonce"),
        peers.provider.output_count("client assertion tokens must only be used once"),
        peers.provider.output_count("event: grant.success"),
    );
    connected.expect("connect in the legacy era with client credentials and DPoP");
    assert_eq!(peers.provider.output_count("event: grant.error invalid_client"), 0, "no assertion was refused");
    assert_eq!(peers.provider.output_count_at_least("event: grant.success", 1).await, 1, "one grant");
    let sum = call(&conn, "add", json!({"a": 2, "b": 3}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["5"]);
    conn.close().await;
    peers.stop().await;
}

async fn short_lived(node_modules: PathBuf, python: PathBuf) {
    let peers = Peers::start(&node_modules, &python, 30).await;
    let resource = peers.proxy.url("/mcp");
    let store = Arc::new(MemoryStore::new());
    let conn = connection(&resource, oauth_client(&resource, &store, peers.key.clone()));
    let connected = conn.connect().await;
    println!(
        "server: {} request(s) with no token, {} verified; provider: {} grant(s)",
        peers.server.output_count("event: no_token"),
        peers.server.output_count("event: dpop_verified"),
        peers.provider.output_count("event: grant.success")
    );
    connected.expect("connect with a 30 s token");
    let sum = call(&conn, "add", json!({"a": 2, "b": 2}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["4"]);
    conn.close().await;
    peers.stop().await;
}

/// A new ES256 key, written as a PKCS#8 PEM file in `dir` and read back with
/// [`SigningKey::from_pem`]; returns the key and its PEM text.
fn client_key(dir: &Path, name: &str) -> (SigningKey, String) {
    let (_, der) = SigningKey::generate_es256().expect("an ES256 key");
    let body = STANDARD.encode(der);
    let lines: Vec<&str> = body.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).expect("base64")).collect();
    let pem = format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n"));
    let path = dir.join(name);
    std::fs::write(&path, &pem).expect("write the key");
    let text = std::fs::read_to_string(&path).expect("read the key");
    (SigningKey::from_pem(&text, None).expect("the PEM key"), pem)
}

/// The JWK thumbprint of the DPoP key kept with the tokens.
fn dpop_thumbprint(creds: &StoredCredentials) -> String {
    let kept = creds.dpop_key.as_ref().expect("the DPoP key is kept with the tokens");
    let der = URL_SAFE_NO_PAD.decode(kept.expose().trim()).expect("base64url");
    SigningKey::from_es256_pkcs8(&der).expect("a P-256 key").thumbprint()
}

fn sensitive(value: &str) -> HeaderValue {
    let mut value = HeaderValue::from_str(value).expect("a header value");
    value.set_sensitive(true);
    value
}

/// POST a JSON-RPC ping to `url` with `headers`: the status and the `WWW-Authenticate` value.
async fn raw_post(url: &str, headers: HeaderMap) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(url)
        .headers(headers)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .expect("a raw POST");
    let challenge = response.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    (response.status().as_u16(), challenge.to_owned())
}

/// The authorization error inside a connection error, if that is what it is.
fn auth_error(error: &ConnectionError) -> Option<&mcp_transport::auth::AuthError> {
    match error {
        ConnectionError::Transport { error: TransportError::Auth(e), .. }
        | ConnectionError::Session(SessionError::Transport { error: TransportError::Auth(e), .. }) => Some(e),
        _ => None,
    }
}

/// An unattended OAuth client of `url`: the client credentials grant, `private_key_jwt` with
/// `key`, DPoP when the provider offers it.
fn oauth_client(url: &str, store: &Arc<MemoryStore>, key: SigningKey) -> Arc<OAuthClient> {
    let settings = OAuthSettings {
        client_name: "mcp-stack-peer-tests".into(),
        client_id: Some(CLIENT_ID.into()),
        client_key: Some(key),
        grant: Grant::ClientCredentials,
        dpop: DpopPolicy::Auto,
        store: store.clone(),
        http_timeout: Duration::from_secs(10),
        ..OAuthSettings::default()
    };
    Arc::new(OAuthClient::new("m2m-peer", url, settings).expect("an OAuth client"))
}

/// A connection over streamable HTTP to `url`, authorized by `oauth`, in the default (auto) era.
fn connection(url: &str, oauth: Arc<OAuthClient>) -> McpConnection {
    connection_with(url, oauth, ConnectionOptions::new("m2m-peer"))
}

/// A connection over streamable HTTP to `url`, authorized by `oauth`, with `options`.
fn connection_with(url: &str, oauth: Arc<OAuthClient>, options: ConnectionOptions) -> McpConnection {
    let mut config = StreamableHttpConfig::new("m2m-peer", url);
    config.authorization = Some(oauth);
    let factory: TransportFactory = Arc::new(move || {
        let config = config.clone();
        Box::pin(async move { Ok(Arc::new(StreamableHttpTransport::new(config)?) as Arc<dyn Transport>) })
    });
    McpConnection::new(factory, options)
}

/// The one stored entry of `resource`.
fn stored(store: &dyn TokenStore, resource: &str) -> (mcp_transport::auth::store::CredentialKey, StoredCredentials) {
    let mut entries = store.entries(resource).expect("the store answers");
    assert_eq!(entries.len(), 1, "one stored entry for {resource}");
    entries.remove(0)
}

// ---------------------------------------------------------------------------------------------
// The recording proxy

/// What the proxy remembers and is told.
#[derive(Default)]
struct Recording {
    /// The `Authorization` and `DPoP` headers of the client's last POST that carried a proof.
    last_post: Mutex<Option<(HeaderValue, HeaderValue)>>,
    /// Replace the next POST's proof (and token) by the recorded ones.
    replay_next: AtomicBool,
    /// How many proofs were replayed.
    replayed: AtomicUsize,
}

struct ProxyState {
    upstream: String,
    client: reqwest::Client,
    recording: Arc<Recording>,
}

/// A reverse proxy on 127.0.0.1 in front of the resource server: requests and answers pass as
/// they are (bodies streamed), and the client's DPoP headers are recorded.
struct Proxy {
    listener: Option<tokio::net::TcpListener>,
    port: u16,
    recording: Arc<Recording>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    async fn bind() -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let port = listener.local_addr().expect("the proxy's address").port();
        Proxy { listener: Some(listener), port, recording: Arc::default(), task: None }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Start forwarding to `upstream` (`http://127.0.0.1:PORT`).
    fn serve(mut self, upstream: String) -> Proxy {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("the proxy's client");
        let state = Arc::new(ProxyState { upstream, client, recording: self.recording.clone() });
        let app = axum::Router::new().fallback(forward).with_state(state);
        let listener = self.listener.take().expect("not serving yet");
        self.task = Some(tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        }));
        self
    }

    fn last_post(&self) -> Option<(HeaderValue, HeaderValue)> {
        self.recording.last_post.lock().unwrap().clone()
    }

    fn replay_next(&self) {
        self.recording.replay_next.store(true, Ordering::SeqCst);
    }

    fn replayed(&self) -> usize {
        self.recording.replayed.load(Ordering::SeqCst)
    }

    async fn stop(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// Headers that belong to one connection, not to the message.
const HOP_BY_HOP: [&str; 5] = ["host", "connection", "transfer-encoding", "content-length", "keep-alive"];

async fn forward(State(state): State<Arc<ProxyState>>, request: axum::extract::Request) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let bad_gateway =
        |what: String| axum::response::Response::builder().status(502).body(Body::from(what)).expect("a 502 response");
    let Ok(body) = axum::body::to_bytes(body, 16 << 20).await else {
        return bad_gateway("the request body could not be read".into());
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut headers = parts.headers.clone();
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
    if parts.method == reqwest::Method::POST && headers.contains_key("dpop") {
        let recording = &state.recording;
        let mut last = recording.last_post.lock().unwrap();
        match last.clone() {
            Some((authorization, proof)) if recording.replay_next.swap(false, Ordering::SeqCst) => {
                headers.insert(AUTHORIZATION, authorization);
                headers.insert("dpop", proof);
                recording.replayed.fetch_add(1, Ordering::SeqCst);
            }
            _ => {
                if let (Some(a), Some(d)) = (headers.get(AUTHORIZATION), headers.get("dpop")) {
                    *last = Some((a.clone(), d.clone()));
                }
            }
        }
    }
    let sent = state
        .client
        .request(parts.method, format!("{}{path}", state.upstream))
        .headers(headers)
        .body(body)
        .send()
        .await;
    let response = match sent {
        Ok(response) => response,
        Err(e) => return bad_gateway(format!("upstream: {e}")),
    };
    let mut answer = axum::response::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            answer = answer.header(name, value);
        }
    }
    answer.body(Body::from_stream(response.bytes_stream())).unwrap_or_else(|e| bad_gateway(e.to_string()))
}

// ---------------------------------------------------------------------------------------------
// The client's logs

/// Everything logged through `tracing` in this test binary (DEBUG and above): each event's
/// target and fields, and each span's fields.
static LOGS: Mutex<String> = Mutex::new(String::new());

/// Install [`Capture`] as the global subscriber (once).
fn capture_logs() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        tracing::subscriber::set_global_default(Capture(AtomicU64::new(1))).expect("no other subscriber");
    });
}

fn captured_logs() -> String {
    LOGS.lock().unwrap().clone()
}

struct Capture(AtomicU64);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let _ = write!(self.0, " {}={value}", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::DEBUG
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut fields = Fields(format!("span {}:", span.metadata().name()));
        span.record(&mut fields);
        LOGS.lock().unwrap().push_str(&(fields.0 + "\n"));
        tracing::span::Id::from_u64(self.0.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut fields = Fields("span record:".into());
        values.record(&mut fields);
        LOGS.lock().unwrap().push_str(&(fields.0 + "\n"));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let metadata = event.metadata();
        let mut fields = Fields(format!("{} {}:", metadata.level(), metadata.target()));
        event.record(&mut fields);
        LOGS.lock().unwrap().push_str(&(fields.0 + "\n"));
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}
