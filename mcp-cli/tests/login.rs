//! `mcp` against a server that asks for OAuth: a command exits 3 naming `mcp login NAME`;
//! `mcp login --no-browser` prints the authorization URL on a line of its own and completes on
//! the loopback listener; the next run uses the stored token; `mcp logout` forgets it.
//!
//! The server is an in-process fake (resource + authorization server in one axum app on
//! 127.0.0.1:0); the redirect is made by the test, as a browser would after the user's consent.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::routing::post;
use serde_json::json;

const TOKEN: &str = "fake-access-token-4242";

#[derive(Default)]
struct Fake {
    port: u16,
    tokens_issued: u32,
}

fn start_fake() -> (u16, Arc<Mutex<Fake>>) {
    let state = Arc::new(Mutex::new(Fake::default()));
    let (tx, rx) = std::sync::mpsc::channel();
    let shared = state.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            shared.lock().unwrap().port = port;
            let base = format!("http://127.0.0.1:{port}");
            let meta = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "response_types_supported": ["code"],
            });
            let s2 = shared.clone();
            let app = support::protected::resource_routes(port, TOKEN, "fake-oauth", "secret_tool", meta)
                .route(
                    "/register",
                    post(|| async {
                        (StatusCode::CREATED, support::protected::json_body(json!({"client_id": "cli-client"})))
                    }),
                )
                .route(
                    "/token",
                    post(move |body: String| {
                        let s2 = s2.clone();
                        async move {
                            assert!(body.contains("code_verifier="), "PKCE verifier sent: {body}");
                            assert!(body.contains("resource="), "resource sent: {body}");
                            s2.lock().unwrap().tokens_issued += 1;
                            support::protected::json_body(
                                json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}),
                            )
                        }
                    }),
                );
            tx.send(port).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let port = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    (port, state)
}

fn mcp_cmd(config: &std::path::Path, auth_dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    command.arg("--config").arg(config).env("MCP_AUTH_DIR", auth_dir).env_remove("XDG_CONFIG_HOME");
    command
}

/// `mcp ARGS`, run to completion (bounded).
fn run(config: &std::path::Path, auth_dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut command = mcp_cmd(config, auth_dir);
    command.args(args);
    support::run_bounded(command, None, Duration::from_secs(60))
}

/// What the browser does after the user's consent: GET the authorization URL's redirect URI
/// with a code and the request's state. Returns the loopback listener's page.
fn redirect_back(authorization: &url::Url) -> String {
    let query: std::collections::HashMap<String, String> = authorization.query_pairs().into_owned().collect();
    let redirect = url::Url::parse(&query["redirect_uri"]).unwrap();
    assert_eq!(redirect.host_str(), Some("127.0.0.1"), "the loopback listener");
    let target = format!("{}?code=the-code&state={}", redirect.path(), query["state"]);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", redirect.port().unwrap())).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(stream, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut page = String::new();
    let _ = stream.read_to_string(&mut page);
    page
}

#[test]
fn login_then_use_then_logout() {
    let (port, fake) = start_fake();
    let dir = tempfile::tempdir().unwrap();
    let auth_dir = dir.path().join("auth");
    let config = dir.path().join("mcp.toml");
    std::fs::write(
        &config,
        format!("[[mcp.servers]]\nname = \"saas\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nera = \"legacy\"\n"),
    )
    .unwrap();

    // Not logged in: exit 3, naming the command to run, without waiting on a browser.
    let out = run(&config, &auth_dir, &["tools"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    assert!(stderr.contains("mcp login saas"), "{stderr}");

    // Log in: the authorization URL is a line of its own on stderr; the test plays the browser.
    let mut login = mcp_cmd(&config, &auth_dir)
        .args(["login", "saas", "--no-browser", "--wait", "60"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(login.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut line = String::new();
    let authorization = loop {
        assert!(Instant::now() < deadline, "no authorization URL printed");
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "stderr closed before the URL");
        if line.trim().starts_with("http://127.0.0.1") && line.contains("/authorize?") {
            break url::Url::parse(line.trim()).unwrap();
        }
    };
    let query: std::collections::HashMap<String, String> = authorization.query_pairs().into_owned().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["client_id"], "cli-client");
    let page = redirect_back(&authorization);
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let status = wait_with_deadline(&mut login, deadline);
    let mut rest = String::new();
    let _ = stderr.read_to_string(&mut rest);
    assert!(status.success(), "login failed: {rest}");
    assert!(rest.contains("logged in to \"saas\""), "{rest}");
    assert!(!rest.contains(TOKEN), "the token is never shown: {rest}");
    let file = auth_dir.join("auth.json");
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    assert_eq!(fake.lock().unwrap().tokens_issued, 1);

    // The next run uses the stored token: no new login, the tool is listed.
    let out = run(&config, &auth_dir, &["tools", "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("secret_tool"), "{stdout}");
    let out = run(&config, &auth_dir, &["status"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("authorized until"), "{stdout}");
    assert_eq!(fake.lock().unwrap().tokens_issued, 1, "no new token");

    // Logout forgets it: the next command needs a login again.
    let out = run(&config, &auth_dir, &["logout", "saas"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&config, &auth_dir, &["tools"]);
    assert_eq!(out.status.code(), Some(3));
}

/// A shell-quoted word.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `mcp ARGS` on a pseudo-terminal (util-linux `script`), with `answer` typed at it.
fn on_terminal(config: &std::path::Path, auth_dir: &std::path::Path, args: &str, answer: &str) -> std::process::Child {
    let inner = format!(
        "/usr/bin/env PATH=/nonexistent MCP_AUTH_DIR={} {} --config {} {args}",
        quoted(&auth_dir.display().to_string()),
        quoted(env!("CARGO_BIN_EXE_mcp")),
        quoted(&config.display().to_string()),
    );
    let mut child = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("util-linux script runs");
    let mut stdin = child.stdin.take().unwrap();
    let answer = answer.to_owned();
    // Typed after the prompt has had time to appear; the pty buffers it anyway.
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        let _ = stdin.write_all(answer.as_bytes());
        std::thread::sleep(Duration::from_secs(30));
    });
    child
}

fn wait_with_deadline(child: &mut std::process::Child, deadline: Instant) -> std::process::ExitStatus {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the command did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_terminal_is_offered_a_login() {
    let (port, fake) = start_fake();
    let dir = tempfile::tempdir().unwrap();
    let auth_dir = dir.path().join("auth");
    let config = dir.path().join("mcp.toml");
    let toml = format!("[[mcp.servers]]\nname = \"saas\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nera = \"legacy\"\n");
    std::fs::write(&config, toml).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);

    // Declined: the offer was made, and the command ends with exit 3.
    let mut declined = on_terminal(&config, &auth_dir, "tools", "n\n");
    let mut shown = String::new();
    let _ = declined.stdout.take().unwrap().read_to_string(&mut shown);
    let status = wait_with_deadline(&mut declined, deadline);
    assert!(shown.contains("requires a login. Log in now? [Y/n]"), "{shown}");
    assert_eq!(status.code(), Some(3), "{shown}");
    assert_eq!(fake.lock().unwrap().tokens_issued, 0);

    // Accepted: the URL is shown, the redirect completes the login, and the command goes on.
    let mut accepted = on_terminal(&config, &auth_dir, "tools", "\n");
    let mut reader = BufReader::new(accepted.stdout.take().unwrap());
    let mut line = String::new();
    let authorization = loop {
        assert!(Instant::now() < deadline, "no authorization URL shown");
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "output ended before the URL");
        let text = line.trim_matches(|c: char| c.is_whitespace() || c.is_control());
        if let Some(at) = text.find("http://127.0.0.1")
            && text.contains("/authorize?")
        {
            break url::Url::parse(&text[at..]).unwrap();
        }
    };
    let page = redirect_back(&authorization);
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    let status = wait_with_deadline(&mut accepted, deadline);
    assert!(status.success(), "{rest}");
    assert!(rest.contains("secret_tool"), "the command went on after the login: {rest}");
    assert_eq!(fake.lock().unwrap().tokens_issued, 1);
}
