//! The loopback redirect listener ([`LoopbackBrowser`]): the one redirect it waits for, the
//! requests it ignores, its timeout and its choice of port.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_transport::auth::AuthStep;
use mcp_transport::auth::browser::{AuthorizationResponse, BrowserStep, LoopbackBrowser, UrlOpener};
use test_support::within;

/// One scripted step of the fake browser.
#[derive(Clone)]
enum Step {
    /// Send these bytes on a new connection and read the reply to its end.
    Send(String),
    /// Open a connection and send nothing (kept open until the script ends).
    Silent,
}

/// The authorization URL, which carries the redirect URI as the real flow's does.
fn authorization_url(redirect_uri: &str) -> url::Url {
    url::Url::parse_with_params("http://as.example/authorize", [("redirect_uri", redirect_uri)]).unwrap()
}

fn get(target: &str) -> Step {
    Step::Send(format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: test\r\n\r\n"))
}

/// An opener that plays `script` against the redirect URI of the authorization URL, on a thread
/// of its own, and sends each reply it read on the returned channel.
fn scripted(script: Vec<Step>) -> (UrlOpener, mpsc::Receiver<String>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let opener: UrlOpener = Arc::new(move |url: &url::Url| {
        let redirect = url.query_pairs().find(|(k, _)| k == "redirect_uri").map(|(_, v)| v.into_owned()).unwrap();
        let redirect = url::Url::parse(&redirect).unwrap();
        let addr = format!("127.0.0.1:{}", redirect.port().unwrap());
        let path = redirect.path().to_owned();
        let script = script.clone();
        let tx = tx.lock().unwrap().clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for step in script {
                let mut stream = TcpStream::connect(&addr).unwrap();
                stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
                match step {
                    Step::Silent => held.push(stream),
                    Step::Send(text) => {
                        let text = text.replace("{path}", &path);
                        stream.write_all(text.as_bytes()).unwrap();
                        let mut reply = String::new();
                        let _ = stream.read_to_string(&mut reply);
                        let _ = tx.send(reply);
                    }
                }
            }
        });
    });
    (opener, rx)
}

async fn run(browser: LoopbackBrowser) -> Result<AuthorizationResponse, mcp_transport::auth::AuthError> {
    let pending = browser.prepare(None).await?;
    let url = authorization_url(pending.redirect_uri());
    pending.complete(url).await
}

fn status(reply: &str) -> &str {
    reply.lines().next().unwrap_or_default()
}

#[tokio::test]
async fn the_redirect_is_returned_and_answered() {
    within(async {
        let (opener, replies) = scripted(vec![get("{path}?code=abc&state=xyz&iss=http%3A%2F%2Fas")]);
        let browser = LoopbackBrowser::new(opener);
        let pending = browser.prepare(None).await.unwrap();
        let uri = pending.redirect_uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"), "{uri}");
        let response = pending.complete(authorization_url(&uri)).await.unwrap();
        assert_eq!(response.code.as_ref().map(|c| c.expose()), Some("abc"));
        assert_eq!(response.state.as_deref(), Some("xyz"));
        assert_eq!(response.iss.as_deref(), Some("http://as"));
        assert_eq!(response.error, None);

        let reply = replies.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(status(&reply), "HTTP/1.1 200 OK");
        assert!(reply.contains("Content-Type: text/html; charset=utf-8"), "{reply}");
        assert!(reply.contains("Connection: close"), "{reply}");
        assert!(reply.contains("Authorization complete. You can close this tab."), "{reply}");
        assert!(!reply.contains("abc") && !reply.contains("xyz"), "{reply}");

        // One-shot: the listener is closed once the redirect is taken.
        let port = url::Url::parse(&uri).unwrap().port().unwrap();
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    })
    .await;
}

#[tokio::test]
async fn other_paths_and_malformed_requests_are_ignored() {
    within(async {
        let (opener, replies) = scripted(vec![
            get("/favicon.ico"),
            Step::Send("this is not http\r\n\r\n".into()),
            Step::Send("GET {path}?code=abc HTTP/1.1\r\nno colon here\r\n\r\n".into()),
            Step::Send("POST {path}?code=abc HTTP/1.1\r\n\r\n".into()),
            get("{path}"),
            get("{path}?foo=bar"),
            get("{path}-other?code=abc"),
            Step::Send(format!("GET {{path}}?code=abc HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(9000))),
            get("{path}?code=real&state=s1"),
        ]);
        let response = run(LoopbackBrowser::new(opener)).await.unwrap();
        assert_eq!(response.code.as_ref().map(|c| c.expose()), Some("real"));
        assert_eq!(response.state.as_deref(), Some("s1"));

        let statuses: Vec<String> =
            (0..9).map(|_| status(&replies.recv_timeout(Duration::from_secs(10)).unwrap()).to_owned()).collect();
        assert_eq!(
            statuses,
            [
                "HTTP/1.1 404 Not Found",
                "HTTP/1.1 400 Bad Request",
                "HTTP/1.1 400 Bad Request",
                "HTTP/1.1 405 Method Not Allowed",
                "HTTP/1.1 400 Bad Request",
                "HTTP/1.1 400 Bad Request",
                "HTTP/1.1 404 Not Found",
                "HTTP/1.1 431 Request Header Fields Too Large",
                "HTTP/1.1 200 OK",
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn the_head_may_arrive_in_pieces() {
    within(async {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let opener: UrlOpener = Arc::new(move |url: &url::Url| {
            let redirect = url.query_pairs().find(|(k, _)| k == "redirect_uri").unwrap().1.into_owned();
            let port = url::Url::parse(&redirect).unwrap().port().unwrap();
            let tx = tx.lock().unwrap().clone();
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
                stream.set_nodelay(true).unwrap();
                for piece in ["GET /callback?co", "de=abc HTTP/1.1\r", "\nHost: x\r\n\r", "\n"] {
                    stream.write_all(piece.as_bytes()).unwrap();
                    std::thread::sleep(Duration::from_millis(30));
                }
                let mut reply = String::new();
                let _ = stream.read_to_string(&mut reply);
                let _ = tx.send(reply);
            });
        });
        let response = run(LoopbackBrowser::new(opener)).await.unwrap();
        assert_eq!(response.code.as_ref().map(|c| c.expose()), Some("abc"));
        assert_eq!(status(&rx.recv_timeout(Duration::from_secs(10)).unwrap()), "HTTP/1.1 200 OK");
    })
    .await;
}

#[tokio::test]
async fn a_silent_connection_does_not_hold_up_the_redirect() {
    within(async {
        let (opener, _replies) = scripted(vec![Step::Silent, Step::Silent, get("{path}?code=abc&state=xyz")]);
        let mut browser = LoopbackBrowser::new(opener);
        // Far shorter than the per-connection read bound: only concurrent serving passes.
        browser.timeout = Duration::from_secs(3);
        let response = run(browser).await.unwrap();
        assert_eq!(response.code.as_ref().map(|c| c.expose()), Some("abc"));
    })
    .await;
}

#[tokio::test]
async fn no_redirect_times_out() {
    within(async {
        let opened = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&opened);
        let opener: UrlOpener = Arc::new(move |url: &url::Url| *seen.lock().unwrap() = Some(url.clone()));
        let mut browser = LoopbackBrowser::new(opener);
        browser.timeout = Duration::from_millis(300);
        let started = std::time::Instant::now();
        let err = run(browser).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(err.step, AuthStep::Authorization);
        assert!(err.message.contains("no redirect arrived within 300ms"), "{err}");
        assert!(err.message.contains("the login was not completed"), "{err}");
        assert!(opened.lock().unwrap().is_some(), "the opener was called");
    })
    .await;
}

#[tokio::test]
async fn an_error_redirect_is_returned_with_a_page_that_hides_the_rest() {
    within(async {
        let (opener, replies) =
            scripted(vec![get("{path}?error=access_denied&state=st4te-value&error_description=no%3Cb%3E")]);
        let response = run(LoopbackBrowser::new(opener)).await.unwrap();
        assert_eq!(response.error.as_deref(), Some("access_denied"));
        assert_eq!(response.code, None);
        assert_eq!(response.state.as_deref(), Some("st4te-value"));
        let reply = replies.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(status(&reply), "HTTP/1.1 200 OK");
        assert!(reply.contains("access_denied"), "{reply}");
        assert!(!reply.contains("st4te-value"), "{reply}");
        assert!(!reply.contains("Authorization complete"), "{reply}");
    })
    .await;
}

#[tokio::test]
async fn the_error_code_is_html_escaped() {
    within(async {
        let (opener, replies) = scripted(vec![get("{path}?error=%3Cscript%3Ealert(1)%3C/script%3E&code=c0de-value")]);
        let response = run(LoopbackBrowser::new(opener)).await.unwrap();
        assert_eq!(response.error.as_deref(), Some("<script>alert(1)</script>"));
        let reply = replies.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(reply.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{reply}");
        assert!(!reply.contains("<script>"), "{reply}");
        assert!(!reply.contains("c0de-value"), "{reply}");
    })
    .await;
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn nothing() -> UrlOpener {
    Arc::new(|_: &url::Url| {})
}

#[tokio::test]
async fn the_preferred_port_is_reused_when_free() {
    within(async {
        let browser = LoopbackBrowser::new(nothing());
        let port = free_port();
        let preferred = format!("http://127.0.0.1:{port}/callback");
        let pending = browser.prepare(Some(&preferred)).await.unwrap();
        assert_eq!(pending.redirect_uri(), preferred);

        let port = free_port();
        let pending = browser.prepare(Some(&format!("http://localhost:{port}/old-path"))).await.unwrap();
        assert_eq!(pending.redirect_uri(), format!("http://localhost:{port}/callback"), "localhost is kept");
        drop(pending);
        // Dropped without completing: the port is free again.
        std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_busy_preferred_port_falls_back_to_another() {
    within(async {
        let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = busy.local_addr().unwrap().port();
        let browser = LoopbackBrowser::new(nothing());
        let pending = browser.prepare(Some(&format!("http://127.0.0.1:{port}/callback"))).await.unwrap();
        let uri = url::Url::parse(pending.redirect_uri()).unwrap();
        assert_eq!(uri.host_str(), Some("127.0.0.1"));
        assert_ne!(uri.port(), Some(port));
        assert_eq!(uri.path(), "/callback");

        // Not a loopback http URI: not preferred at all.
        for other in ["https://127.0.0.1:1/callback", "http://example.com:1/callback", "not a url"] {
            let pending = browser.prepare(Some(other)).await.unwrap();
            assert!(pending.redirect_uri().starts_with("http://127.0.0.1:"), "{other}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_configured_port_is_used_and_a_busy_one_is_an_error() {
    within(async {
        let port = free_port();
        let mut browser = LoopbackBrowser::new(nothing());
        browser.port = Some(port);
        browser.path = "/cb".into();
        let pending = browser.prepare(Some("http://127.0.0.1:1/callback")).await.unwrap();
        assert_eq!(pending.redirect_uri(), format!("http://127.0.0.1:{port}/cb"));

        // Still held by `pending`: busy now.
        let err = browser.prepare(None).await.err().unwrap();
        assert_eq!(err.step, AuthStep::Authorization);
        assert!(err.message.contains(&format!("port {port}")), "{err}");
        drop(pending);
    })
    .await;
}

#[test]
fn debug_hides_code_and_state() {
    let url =
        url::Url::parse("http://127.0.0.1/callback?code=c0de-value&state=st4te-value&iss=http%3A%2F%2Fas").unwrap();
    let response = AuthorizationResponse::from_query(&url);
    let shown = format!("{response:?}");
    assert!(!shown.contains("c0de-value") && !shown.contains("st4te-value"), "{shown}");
    assert!(shown.contains("http://as"), "{shown}");
}

#[test]
fn the_openers_can_be_made() {
    // Only constructed: calling them would print, or start a browser.
    let _ = mcp_transport::auth::browser::print_url();
    let _ = mcp_transport::auth::browser::open_browser_or_print();
}
