//! `mcp --config` against a real authorization server: oidc-provider (`tests/peers/oauth/oidc-as.mjs`)
//! protecting a FastMCP resource server (`tests/peers/oauth/protected_server.py`) that checks the
//! JWTs it issues. `mcp login NAME --no-browser` prints the authorization URL on stderr; the test
//! clicks through oidc-provider's login and consent pages over HTTP
//! ([`tests::oauth_peers::click_through`]) and hands the final redirect to `mcp`'s loopback
//! listener, as the user's browser would. Then `mcp call` uses the stored token, and a second
//! call reuses the stored registration and token: no new registration, no new code exchange.
//!
//! Same contract as the other peer tests (`cargo xtask test` provisions and sets
//! `MCP_PEERS_DIR`; without it the test says it skipped).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tests::oauth_peers::{OidcPeers, click_through, start_oidc_peers};
use tests::peers::peer;

const USER: &str = "grace";

fn mcp(config: &Path, auth_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    command.arg("--config").arg(config).env("MCP_AUTH_DIR", auth_dir).env_remove("XDG_CONFIG_HOME");
    command
}

/// `mcp login oidc --no-browser`, completed by clicking through oidc-provider.
async fn login(config: &Path, auth_dir: &Path) {
    let mut child = mcp(config, auth_dir)
        .args(["login", "oidc", "--no-browser", "--wait", "90"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp starts");
    let stderr = child.stderr.take().unwrap();
    // The URL is read on a thread: a blocking read must not hold up the runtime.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let reader = std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut line = String::new();
        let mut tx = Some(tx);
        let mut rest = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 0 {
            let text = line.trim();
            if text.starts_with("http://127.0.0.1") && (text.contains("/auth?") || text.contains("/authorize?")) {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(text.to_owned());
                }
            } else {
                rest.push_str(&line);
            }
            line.clear();
        }
        rest
    });
    let url = tokio::time::timeout(Duration::from_secs(60), rx).await.expect("an authorization URL in time");
    let url = url::Url::parse(&url.expect("mcp printed the authorization URL")).unwrap();
    let redirect =
        click_through(&url, USER, Duration::from_secs(10)).await.expect("the click-through ends at the redirect");
    assert_eq!(redirect.host_str(), Some("127.0.0.1"), "the loopback listener");
    let target = match redirect.query() {
        Some(q) => format!("{}?{q}", redirect.path()),
        None => redirect.path().to_owned(),
    };
    let port = redirect.port().expect("a port");
    let page = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(stream, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
        let mut page = String::new();
        let _ = stream.read_to_string(&mut page);
        page
    })
    .await
    .unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "the listener's page: {page}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "mcp login did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let rest = reader.join().unwrap();
    assert!(status.success(), "mcp login failed: {rest}");
    assert!(rest.contains("logged in to \"oidc\""), "{rest}");
}

fn call(config: &Path, auth_dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = mcp(config, auth_dir);
    command.args(args);
    let out = support::run_bounded(command, None, Duration::from_secs(60));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_logs_in_at_oidc_provider_and_reuses_the_login() {
    let Some(oidc) = peer("npm/node_modules/oidc-provider/lib/index.js") else { return };
    let Some(python) = peer("venv/bin/python") else { return };
    let node_modules = oidc.ancestors().nth(3).expect("node_modules").to_path_buf();
    tokio::time::timeout(Duration::from_secs(150), run(&node_modules, &python)).await.expect("the test timed out");
}

async fn run(node_modules: &Path, python: &Path) {
    let OidcPeers { provider, server, resource, .. } = start_oidc_peers(node_modules, python).await;

    let dir = tempfile::tempdir().unwrap();
    let auth_dir = dir.path().join("auth");
    let config = dir.path().join("mcp.toml");
    std::fs::write(&config, format!("[[mcp.servers]]\nname = \"oidc\"\nurl = \"{resource}\"\n")).unwrap();

    // Before the login: exit 3, naming the command.
    let (code, _, stderr) = call(&config, &auth_dir, &["call", "add", "a=40", "b=2"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("mcp login oidc"), "{stderr}");

    login(&config, &auth_dir).await;
    assert_eq!(provider.output_count("event: registration_create.success"), 1, "one registration");
    let exchanges = provider.output_count("event: grant.success authorization_code");
    assert_eq!(exchanges, 1, "one code exchange");

    // The stored token is used, by this run and the next one.
    let (code, stdout, stderr) = call(&config, &auth_dir, &["call", "add", "a=40", "b=2"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("42"), "{stdout}");
    let (code, stdout, stderr) = call(&config, &auth_dir, &["call", "whoami"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&format!("sub={USER}")), "{stdout}");
    let (code, stdout, _) = call(&config, &auth_dir, &["status"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("authorized until"), "{stdout}");
    assert_eq!(provider.output_count("event: registration_create.success"), 1, "no new registration");
    assert_eq!(provider.output_count("event: grant.success authorization_code"), 1, "no new login");

    server.stop().await;
    provider.stop().await;
}
