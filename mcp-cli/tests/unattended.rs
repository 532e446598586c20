//! `mcp` with an unattended OAuth grant (client credentials): a command gets its token at the
//! token endpoint by itself, with no browser and no prompt; `mcp status` shows the grant;
//! `mcp login` runs the grant at once; a refused grant (HTTP 401 `invalid_client`) exits 3 with
//! one line naming the error, no secret, and no offer of a login.
//!
//! The servers are an in-process fake (MCP server and authorization server in one axum app on
//! 127.0.0.1:0) that accepts the client secret `GOOD_SECRET` or a `private_key_jwt` assertion.

mod support;

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

const TOKEN: &str = "unattended-access-token-7373";
const GOOD_SECRET: &str = "good-client-secret-5150";
const BAD_SECRET: &str = "wrong-client-secret-8086";
/// A P-256 key made for this test only.
const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgaBgmisKPjHQCILAd
+z8n7Vi0XwfLrb5uIgmPjL6WNJyhRANCAARsByJnfocI6mYX7zjJCax+WpTgRqyR
wVl0UZjekBjKbs9nnzOl+lpOcp87gq2+KQEKDrV8F0EX/9Nbl3ZzClFz
-----END PRIVATE KEY-----
";

#[derive(Default)]
struct Seen {
    /// Bodies of the token requests.
    token_requests: Vec<String>,
    /// Requests to the authorization endpoint (a browser's): there must be none.
    authorize_hits: u32,
}

fn start_fake() -> (u16, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (tx, rx) = std::sync::mpsc::channel();
    let shared = seen.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let base = format!("http://127.0.0.1:{port}");
            let meta = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "private_key_jwt"],
            });
            let (s1, s2) = (shared.clone(), shared.clone());
            let app = support::protected::resource_routes(port, TOKEN, "fake-m2m", "machine_tool", meta)
                .route(
                    "/authorize",
                    get(move || async move {
                        s1.lock().unwrap().authorize_hits += 1;
                        StatusCode::BAD_REQUEST
                    }),
                )
                .route("/token", post(move |headers: HeaderMap, body: String| token(s2.clone(), headers, body)));
            tx.send(port).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let port = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    (port, seen)
}

/// The token endpoint: client credentials only, for `svc-client` with the good secret (Basic)
/// or with a client assertion.
async fn token(seen: Arc<Mutex<Seen>>, headers: HeaderMap, body: String) -> Response {
    seen.lock().unwrap().token_requests.push(body.clone());
    let form: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
    assert_eq!(form.get("grant_type").map(String::as_str), Some("client_credentials"), "{body}");
    let basic = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let good_basic = format!("Basic {}", base64_of(&format!("svc-client:{GOOD_SECRET}")));
    let assertion = form.get("client_assertion_type").map(String::as_str)
        == Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        && form.get("client_assertion").is_some_and(|a| a.split('.').count() == 3)
        && form.get("client_id").map(String::as_str) == Some("svc-client");
    if basic != good_basic && !assertion {
        let error = json!({"error": "invalid_client", "error_description": "client authentication failed"});
        return (StatusCode::UNAUTHORIZED, support::protected::json_body(error)).into_response();
    }
    support::protected::json_body(json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}))
}

fn base64_of(text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A config of the server `svc` with the client credentials grant and `oauth` lines.
fn write_config(dir: &std::path::Path, port: u16, oauth: &str) -> std::path::PathBuf {
    let path = dir.join("mcp.toml");
    let text = format!(
        "[[mcp.servers]]\nname = \"svc\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nera = \"legacy\"\n\
         [mcp.servers.oauth]\ngrant = \"client_credentials\"\nclient_id = \"svc-client\"\n{oauth}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `mcp --config CONFIG ARGS` with `SVC_SECRET=secret`, no stdin, and its own token store.
fn run(config: &std::path::Path, auth_dir: &std::path::Path, secret: &str, args: &[&str]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    command
        .arg("--config")
        .arg(config)
        .args(args)
        .env("MCP_AUTH_DIR", auth_dir)
        .env_remove("XDG_CONFIG_HOME")
        .env("SVC_SECRET", secret)
        .env("SVC_KEY", EC_KEY)
        .stdin(Stdio::null());
    let out = support::run_bounded(command, None, Duration::from_secs(60));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn client_credentials_need_no_browser_and_status_shows_the_grant() {
    let (port, seen) = start_fake();
    let dir = tempfile::tempdir().unwrap();
    let auth_dir = dir.path().join("auth");
    let config = write_config(dir.path(), port, "client_secret_env_var = \"SVC_SECRET\"");

    let (code, stdout, stderr) = run(&config, &auth_dir, GOOD_SECRET, &["tools"]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("machine_tool"), "{stdout}");
    assert!(!stderr.contains("Log in now") && !stderr.contains("mcp login"), "{stderr}");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.token_requests.len(), 1, "one grant: {:?}", seen.token_requests);
        assert!(seen.token_requests[0].contains("resource="), "{}", seen.token_requests[0]);
        assert_eq!(seen.authorize_hits, 0, "no browser step");
    }

    let (code, stdout, stderr) = run(&config, &auth_dir, GOOD_SECRET, &["status"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("client credentials (client secret): authorized until"), "{stdout}");
    let (code, stdout, stderr) = run(&config, &auth_dir, GOOD_SECRET, &["--json", "status"]);
    assert_eq!(code, 0, "{stderr}");
    let status: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(status["servers"][0]["grant"], "client_credentials", "{status}");
    assert!(status["servers"][0]["auth"].as_str().unwrap().starts_with("client credentials"), "{status}");

    // `mcp login` runs the grant now, without a browser.
    let (code, _, stderr) = run(&config, &auth_dir, GOOD_SECRET, &["login", "svc"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("logged in to \"svc\" with the client_credentials grant: authorized"), "{stderr}");
    assert_eq!(seen.lock().unwrap().authorize_hits, 0);
    for out in [&stdout, &stderr] {
        assert!(!out.contains(GOOD_SECRET) && !out.contains(TOKEN), "{out}");
    }
}

#[test]
fn private_key_jwt_is_shown_and_used() {
    let (port, seen) = start_fake();
    let dir = tempfile::tempdir().unwrap();
    let auth_dir = dir.path().join("auth");
    let oauth = "private_key_env_var = \"SVC_KEY\"\ntoken_endpoint_auth_method = \"private_key_jwt\"\ndpop = false";
    let config = write_config(dir.path(), port, oauth);
    let (code, stdout, stderr) = run(&config, &auth_dir, BAD_SECRET, &["status"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("client credentials (private_key_jwt): authorized"), "{stdout}");
    let requests = seen.lock().unwrap().token_requests.clone();
    assert!(requests.len() == 1 && requests[0].contains("client_assertion="), "{requests:?}");
    assert!(!stdout.contains("MIGHAgEA") && !stderr.contains("MIGHAgEA"));
}

/// The one line `mcp` prints for an error, checked: it is the only line, names
/// `invalid_client`, and offers no login.
fn assert_refused(code: i32, stdout: &str, stderr: &str) {
    assert_eq!(code, 3, "stdout: {stdout}\nstderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].starts_with("mcp: ") && lines[0].contains("invalid_client"), "{stderr}");
    assert!(!stderr.contains("mcp login") && !stderr.contains("Log in now"), "{stderr}");
    for out in [stdout, stderr] {
        assert!(!out.contains(BAD_SECRET) && !out.contains(GOOD_SECRET), "{out}");
    }
}

#[test]
fn a_refused_grant_exits_3_in_one_line_without_the_secret() {
    let (port, seen) = start_fake();
    let dir = tempfile::tempdir().unwrap();
    let auth_dir = dir.path().join("auth");
    let config = write_config(dir.path(), port, "client_secret_env_var = \"SVC_SECRET\"");

    let (code, stdout, stderr) = run(&config, &auth_dir, BAD_SECRET, &["tools"]);
    assert_refused(code, &stdout, &stderr);
    assert!(stderr.contains("an unattended grant: a browser login would not help"), "{stderr}");
    let (code, stdout, stderr) = run(&config, &auth_dir, BAD_SECRET, &["call", "machine_tool"]);
    assert_refused(code, &stdout, &stderr);
    let (code, stdout, stderr) = run(&config, &auth_dir, BAD_SECRET, &["login", "svc"]);
    assert_refused(code, &stdout, &stderr);
    let seen = seen.lock().unwrap();
    assert!(!seen.token_requests.is_empty() && seen.authorize_hits == 0);
}

#[test]
fn a_bad_grant_is_named_with_the_file_server_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.toml");
    let text = "[[mcp.servers]]\nname = \"svc\"\nurl = \"http://127.0.0.1:9/mcp\"\n[mcp.servers.oauth]\n\
                grant = \"password\"\nclient_secret_env_var = \"SVC_SECRET\"\nclient_id = \"c\"\n";
    std::fs::write(&config, text).unwrap();
    let (code, stdout, stderr) = run(&config, &dir.path().join("auth"), GOOD_SECRET, &["tools"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&config.display().to_string()), "names the file: {stderr}");
    assert!(stderr.contains("server \"svc\": field \"oauth.grant\": unknown grant \"password\""), "{stderr}");
    assert!(stderr.contains("\"client_credentials\""), "names the accepted values: {stderr}");
    assert!(!stderr.contains(GOOD_SECRET) && !stdout.contains(GOOD_SECRET));
}
