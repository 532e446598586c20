//! OAuth 2.1 against real peers: this stack's `OAuthClient` authorizing a streamable HTTP
//! connection to MCP servers protected by authorization servers no one here wrote.
//!
//! - `oidc_provider_*`: [oidc-provider] (`tests/peers/oauth/oidc-as.mjs`, on the system `node`)
//!   is the authorization server: open dynamic registration, resource indicators, PKCE S256
//!   required, JWT access tokens for the MCP server's audience (30 s), refresh tokens, and its
//!   own development login and consent pages, which the test's browser step
//!   ([`tests::oauth_peers::HttpBrowser`]) clicks through over HTTP. The resource server is
//!   FastMCP (`tests/peers/oauth/protected_server.py`): protected resource metadata naming the
//!   provider, 401 with a `resource_metadata` challenge, JWTs checked against the provider's
//!   JWKS, issuer, audience and scope. Three runs share one `MemoryStore`: the first registers
//!   and logs in; the second (a new `OAuthClient`) uses the stored token with no registration
//!   and no browser step; the third (a refresh margin larger than the token's life) refreshes
//!   before its first request, again without the browser.
//! - `fastmcp_in_memory_*`: FastMCP's `InMemoryOAuthProvider`
//!   (`tests/peers/oauth/fastmcp_oauth_server.py`) is both the authorization server and the
//!   resource server; its authorize endpoint approves at once. Once in the legacy era (2025-11-25)
//!   and once in the modern era (2026-07-28), each with a second run and a forced refresh.
//!
//! Same contract as the other peer tests: `cargo xtask test` (or `cargo xtask peers`) provisions
//! `target/peers/` and runs this file with `MCP_PEERS_DIR` set and `MCP_REQUIRE_PEERS=1`; without
//! `MCP_PEERS_DIR` each test says it skipped and passes. Servers listen on free ports of
//! 127.0.0.1 only, in process groups of their own, stopped at the end (killed if a test fails).
//! Tokens are never printed (they are compared, not shown).
//!
//! [oidc-provider]: https://github.com/panva/node-oidc-provider

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_manager::connection::EraPreference;
use mcp_manager::{ConnectionOptions, McpConnection, RequestOptions, TransportFactory};
use mcp_protocol::ProtocolVersion;
use mcp_transport::auth::oauth::{OAuthClient, OAuthSettings};
use mcp_transport::auth::store::{MemoryStore, StoredCredentials, TokenStore};
use mcp_transport::{StreamableHttpConfig, StreamableHttpTransport, Transport};
use serde_json::json;
use tests::oauth_peers::{HttpBrowser, OidcPeers, start_oidc_peers};
use tests::peers::{HttpPeer, call, free_port, peer, repo_peer_file, texts};

/// Each test's whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(120);

/// The user who signs in at oidc-provider's login page.
const USER: &str = "ada";

/// The redirect URI the browser step registers (never listened on: the redirect is read from the
/// authorization server's answer).
const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oidc_provider_authorizes_fastmcp_resource_server_then_reuses_and_refreshes() {
    let Some(oidc) = peer("npm/node_modules/oidc-provider/lib/index.js") else { return };
    let Some(python) = peer("venv/bin/python") else { return };
    let node_modules = oidc.ancestors().nth(3).expect("node_modules").to_path_buf();
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, oidc_provider(&node_modules, &python))
        .await
        .unwrap_or_else(|_| panic!("oidc-provider: the test timed out"));
    println!("oidc-provider: passed in {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_in_memory_provider_legacy_era() {
    fastmcp_case(EraPreference::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_in_memory_provider_modern_era() {
    fastmcp_case(EraPreference::Modern).await;
}

async fn oidc_provider(node_modules: &Path, python: &Path) {
    let OidcPeers { provider, server, issuer, resource } = start_oidc_peers(node_modules, python).await;
    provider.assert_loopback_only();
    server.assert_loopback_only();
    assert_eq!(server.url("/mcp"), resource);

    // Without a token: 401 and a challenge naming the protected resource metadata.
    let refused = reqwest::Client::new()
        .post(&resource)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .expect("an unauthenticated POST");
    assert_eq!(refused.status(), 401);
    let challenge = refused.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(
        challenge.starts_with("Bearer") && challenge.contains("resource_metadata="),
        "the challenge: {challenge:?}"
    );

    let store = Arc::new(MemoryStore::new());
    let browser = Arc::new(HttpBrowser::new(USER, REDIRECT_URI));

    // First run: discovery, registration, login and consent, code exchange.
    let first = oauth_client(&resource, &store, &browser, Duration::from_secs(5));
    let resource_key = first.resource().to_owned();
    let conn = connection(&resource, first, EraPreference::Auto, None);
    let info = conn.connect().await.expect("connect with OAuth (first run)");
    println!("first run: connected, protocol {}", info.protocol_version);
    let who = call(&conn, "whoami", json!({}), RequestOptions::default()).await;
    let (key, creds) = stored(&*store, &resource_key);
    assert_eq!(key.issuer, issuer, "the credentials are kept under the provider's issuer");
    let client_id = creds.client.as_ref().expect("a registration is stored").client_id.clone();
    assert_eq!(texts(&who), [format!("sub={USER} client={client_id}").as_str()]);
    let sum = call(&conn, "add", json!({"a": 40, "b": 2}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["42"]);
    conn.close().await;
    assert_eq!(browser.calls(), 1, "one browser step in the first run");
    assert_eq!(provider.output_count_at_least("event: registration_create.success", 1).await, 1, "one registration");
    let first_tokens = creds.tokens.expect("tokens are stored");
    assert!(first_tokens.refresh_token.is_some(), "a refresh token was issued");
    assert!(first_tokens.scopes.iter().any(|s| s == "mcp:tools"), "granted: {:?}", first_tokens.scopes);

    // Second run, a new client on the same store: the stored token, nothing else.
    let second = oauth_client(&resource, &store, &browser, Duration::from_secs(5));
    let conn = connection(&resource, second, EraPreference::Auto, None);
    conn.connect().await.expect("connect with OAuth (second run)");
    let sum = call(&conn, "add", json!({"a": 1, "b": 2}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["3"]);
    conn.close().await;
    assert_eq!(browser.calls(), 1, "the second run needed no browser step");
    assert_eq!(provider.output_count("event: registration_create.success"), 1, "no new registration");
    let (_, creds) = stored(&*store, &resource_key);
    assert_eq!(creds.client.expect("registration").client_id, client_id, "the same client id");
    let tokens = creds.tokens.expect("tokens");
    assert!(tokens.access_token.expose() == first_tokens.access_token.expose(), "the second run kept the token");

    // Third run, after the token expired (its entry says so): the client refreshes it.
    expire(&*store, &resource_key);
    let third = oauth_client(&resource, &store, &browser, Duration::from_secs(5));
    let conn = connection(&resource, third, EraPreference::Auto, None);
    conn.connect().await.expect("connect with OAuth (third run)");
    let who = call(&conn, "whoami", json!({}), RequestOptions::default()).await;
    assert_eq!(texts(&who), [format!("sub={USER} client={client_id}").as_str()]);
    conn.close().await;
    assert_eq!(browser.calls(), 1, "a refresh needs no browser step");
    assert_eq!(provider.output_count("event: registration_create.success"), 1, "no new registration");
    assert!(
        provider.output_count_at_least("event: grant.success refresh_token", 1).await >= 1,
        "the provider saw a refresh"
    );
    let (_, creds) = stored(&*store, &resource_key);
    let refreshed = creds.tokens.expect("tokens");
    assert!(refreshed.access_token.expose() != first_tokens.access_token.expose(), "the access token was refreshed");
    println!("refresh grants seen by the provider: {}", provider.output_count("event: grant.success refresh_token"));

    server.stop().await;
    provider.stop().await;
}

async fn fastmcp_case(era: EraPreference) {
    let Some(python) = peer("venv/bin/python") else { return };
    let label = format!("FastMCP in-memory OAuth, era {era:?}");
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, fastmcp(&python, era))
        .await
        .unwrap_or_else(|_| panic!("{label}: the test timed out"));
    println!("{label}: passed in {:?}", started.elapsed());
}

async fn fastmcp(python: &Path, era: EraPreference) {
    let port = free_port();
    let script = repo_peer_file("oauth/fastmcp_oauth_server.py").display().to_string();
    let args = [script, "--port".into(), port.to_string()];
    let server = HttpPeer::start("fastmcp-oauth", python, &args, &[], port).await;
    server.assert_loopback_only();
    let url = server.url("/mcp");
    let (version, want) = match era {
        EraPreference::Legacy => (Some(ProtocolVersion::LATEST_LEGACY), ProtocolVersion::LATEST_LEGACY),
        _ => (None, ProtocolVersion::LATEST_MODERN),
    };

    let store = Arc::new(MemoryStore::new());
    let browser = Arc::new(HttpBrowser::new(USER, REDIRECT_URI));
    let first = oauth_client(&url, &store, &browser, Duration::from_secs(5));
    let resource_key = first.resource().to_owned();
    let conn = connection(&url, first, era, version.clone());
    let info = conn.connect().await.expect("connect with OAuth (first run)");
    println!("first run: connected, protocol {}", info.protocol_version);
    assert_eq!(info.protocol_version, want, "era {era:?}");
    let (_, creds) = stored(&*store, &resource_key);
    let client_id = creds.client.as_ref().expect("a registration is stored").client_id.clone();
    let who = call(&conn, "whoami", json!({}), RequestOptions::default()).await;
    assert_eq!(texts(&who), [format!("client={client_id}").as_str()]);
    let sum = call(&conn, "add", json!({"a": 40, "b": 2}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["42"]);
    conn.close().await;
    assert_eq!(browser.calls(), 1, "one browser step in the first run");
    let first_token = creds.tokens.expect("tokens are stored").access_token;

    // Second run on the same store: no browser step, the same registration.
    let second = oauth_client(&url, &store, &browser, Duration::from_secs(5));
    let conn = connection(&url, second, era, version.clone());
    let info = conn.connect().await.expect("connect with OAuth (second run)");
    assert_eq!(info.protocol_version, want, "era {era:?}");
    let sum = call(&conn, "add", json!({"a": 1, "b": 2}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["3"]);
    conn.close().await;
    assert_eq!(browser.calls(), 1, "the second run needed no browser step");
    let (_, creds) = stored(&*store, &resource_key);
    assert_eq!(creds.client.expect("registration").client_id, client_id, "the same client id");

    // After the token expired (its entry says so): refreshed before the first request.
    expire(&*store, &resource_key);
    let third = oauth_client(&url, &store, &browser, Duration::from_secs(5));
    let conn = connection(&url, third, era, version);
    conn.connect().await.expect("connect with OAuth (third run)");
    let who = call(&conn, "whoami", json!({}), RequestOptions::default()).await;
    assert_eq!(texts(&who), [format!("client={client_id}").as_str()]);
    conn.close().await;
    assert_eq!(browser.calls(), 1, "a refresh needs no browser step");
    let (_, creds) = stored(&*store, &resource_key);
    let refreshed = creds.tokens.expect("tokens").access_token;
    assert!(refreshed.expose() != first_token.expose(), "the access token was refreshed");

    server.stop().await;
}

/// Mark the stored access token of `resource` as expired, as time passing would.
fn expire(store: &dyn TokenStore, resource: &str) {
    let (key, mut creds) = stored(store, resource);
    let tokens = creds.tokens.as_mut().expect("tokens are stored");
    tokens.expires_at = Some(mcp_transport::auth::store::now_secs() - 1);
    store.save(&key, &creds).expect("the store takes the entry");
}

/// An OAuth client of `url` with the test's store and browser step.
fn oauth_client(
    url: &str,
    store: &Arc<MemoryStore>,
    browser: &Arc<HttpBrowser>,
    refresh_margin: Duration,
) -> Arc<OAuthClient> {
    let settings = OAuthSettings {
        client_name: "mcp-stack-peer-tests".into(),
        browser: Some(browser.clone()),
        store: store.clone(),
        http_timeout: Duration::from_secs(10),
        refresh_margin,
        ..OAuthSettings::default()
    };
    Arc::new(OAuthClient::new("oauth-peer", url, settings).expect("an OAuth client"))
}

/// A connection over streamable HTTP to `url`, authorized by `oauth`.
fn connection(
    url: &str,
    oauth: Arc<OAuthClient>,
    era: EraPreference,
    protocol_version: Option<ProtocolVersion>,
) -> McpConnection {
    let mut config = StreamableHttpConfig::new("oauth-peer", url);
    config.authorization = Some(oauth);
    let factory: TransportFactory = Arc::new(move || {
        let config = config.clone();
        Box::pin(async move { Ok(Arc::new(StreamableHttpTransport::new(config)?) as Arc<dyn Transport>) })
    });
    let mut options = ConnectionOptions::new("oauth-peer");
    options.era = era;
    if let Some(version) = protocol_version {
        options.protocol_version = version;
    }
    McpConnection::new(factory, options)
}

/// The one stored entry of `resource`.
fn stored(store: &dyn TokenStore, resource: &str) -> (mcp_transport::auth::store::CredentialKey, StoredCredentials) {
    let mut entries = store.entries(resource).expect("the store answers");
    assert_eq!(entries.len(), 1, "one stored entry for {resource}");
    entries.remove(0)
}
