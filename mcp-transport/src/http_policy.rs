//! The policy every HTTP client of the workspace follows: the transports' own client
//! (`http_client`, on hyper's HTTP/1.1 connections) applies it itself; the others (the authorization client, the
//! host's LLM client) build their `reqwest` client with [`client_builder`].
//!
//! - Redirects are followed only within the origin (scheme, host and port) of the request's
//!   first URL, at most [`MAX_REDIRECTS`] times. A redirect to another origin fails the request
//!   with a [`CrossOriginRedirect`] error: otherwise the custom headers (`X-Api-Key`),
//!   `Mcp-Session-Id`, `Mcp-Param-*` and the JSON-RPC body would all be sent to the other
//!   origin (reqwest only strips `Authorization` and cookies), and a legacy server's `endpoint`
//!   check would be defeated.
//! - [`PlainHttpWarning`]: a warning, once per client, when credentials would travel over plain
//!   `http` to a host that is not loopback.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::TransportError;
use crate::redact::{looks_secret, redact_url, redact_url_str};

/// Most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 10;

/// How long a kept-alive connection may stay idle in a client's pool before it is closed instead
/// of reused. Below the 5 s after which common servers (uvicorn, Node's `http`, Apache) close an
/// idle connection themselves: a request sent on a connection the server is closing at that very
/// moment fails ("connection closed before message completed"), which a client polling a task
/// every 5 s, the poll interval such servers suggest, would otherwise hit.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// Why a redirect was refused: it led to another origin than the request's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrossOriginRedirect {
    /// The URL first requested, redacted.
    pub from: String,
    /// Where the server redirected to, redacted.
    pub to: String,
}

impl std::fmt::Display for CrossOriginRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refused a redirect from {} to {}: redirects are only followed within the same origin (scheme, host \
             and port)",
            self.from, self.to
        )
    }
}

impl std::error::Error for CrossOriginRedirect {}

/// The redirect policy of [`client_builder`]: follow at most [`MAX_REDIRECTS`] redirects, all
/// on the origin of the first URL; fail with [`CrossOriginRedirect`] otherwise.
pub fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first().cloned() else { return attempt.follow() };
        if attempt.url().origin() != first.origin() {
            let error = CrossOriginRedirect { from: redact_url(&first), to: redact_url(attempt.url()) };
            return attempt.error(error);
        }
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!("too many redirects (more than {MAX_REDIRECTS})"));
        }
        attempt.follow()
    })
}

/// A `reqwest` client builder with the workspace's policy ([`redirect_policy`]) and
/// `connect_timeout`. Every HTTP client of the workspace starts from it.
///
/// Retries are off: reqwest's default policy retries only HTTP/2 protocol refusals, which an
/// HTTP/1.1 client (the workspace builds reqwest without HTTP/2) never gets, yet it copies every
/// request (its headers, its extensions and a handle on its body) before sending it, in case it
/// has to. A host that turns reqwest's `http2` feature on sees such a refusal as a failed request.
/// Idle connections are closed after [`POOL_IDLE_TIMEOUT`].
pub fn client_builder(connect_timeout: Duration) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(redirect_policy())
        .retry(reqwest::retry::never().max_retries_per_request(0))
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
}

/// Whether `host` is a loopback host: `localhost` (and `*.localhost`), `127.0.0.0/8` or `::1`.
pub fn is_loopback_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// Whether sending credentials to `url` exposes them on the network: the scheme is plain `http`
/// and the host is not loopback ([`is_loopback_host`]).
pub fn exposes_credentials(url: &url::Url) -> bool {
    url.scheme() == "http" && url.host().is_some_and(|host| !is_loopback_host(&host))
}

/// Warns once, for one client, when credentials would go over plain `http` to a host that is
/// not loopback ([`exposes_credentials`]).
#[derive(Debug, Default)]
pub struct PlainHttpWarning {
    warned: AtomicBool,
}

impl PlainHttpWarning {
    /// A warning not given yet.
    pub fn new() -> Self {
        PlainHttpWarning::default()
    }

    /// Note a request to `url` that carries credentials when `has_credentials` holds: the first
    /// time they would be exposed, log a warning naming `server` and return true; afterwards (or
    /// when nothing is exposed) return false.
    pub fn check(&self, server: &str, url: &url::Url, has_credentials: bool) -> bool {
        if !has_credentials || !exposes_credentials(url) || self.warned.swap(true, Ordering::AcqRel) {
            return false;
        }
        tracing::warn!(
            server,
            url = %redact_url(url),
            "credentials (a bearer token or an authorization header) are sent over plain http to a host that is \
             not loopback: anyone on the network path can read them; use https"
        );
        true
    }
}

/// Whether configured headers carry credentials: a bearer token, or a header whose name looks
/// secret (`Authorization`, `X-Api-Key`, cookies, ...).
pub fn carries_credentials<'a>(has_bearer: bool, header_names: impl IntoIterator<Item = &'a str>) -> bool {
    has_bearer || header_names.into_iter().any(looks_secret)
}

/// Parse and check an endpoint URL (http or https only). Errors show the URL redacted.
pub(crate) fn parse_url(url: &str) -> Result<url::Url, TransportError> {
    let parsed = url::Url::parse(url.trim())
        .map_err(|e| TransportError::Other(format!("invalid URL {:?}: {e}", redact_url_str(url))))?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        other => Err(TransportError::Other(format!(
            "unsupported URL scheme {other:?} in {} (expected http or https)",
            redact_url(&parsed)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A keep-alive HTTP server that answers every request with `ok` and counts the connections
    /// it accepted.
    async fn counting_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = socket.read(&mut buf).await {
                        if n == 0 || head.len() > 64 * 1024 {
                            return;
                        }
                        head.extend_from_slice(&buf[..n]);
                        if head.windows(4).any(|w| w == b"\r\n\r\n") {
                            head.clear();
                            let reply = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                            if socket.write_all(reply).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        (url, accepted)
    }

    #[tokio::test]
    async fn idle_connections_are_reused_for_a_while_then_closed_before_servers_close_them() {
        let run = async {
            let (url, accepted) = counting_server().await;
            let client = client_builder(Duration::from_secs(5)).build().unwrap();
            for _ in 0..3 {
                assert_eq!(client.get(&url).send().await.unwrap().text().await.unwrap(), "ok");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            assert_eq!(accepted.load(Ordering::SeqCst), 1, "one kept-alive connection for quick requests");
            tokio::time::sleep(POOL_IDLE_TIMEOUT + Duration::from_millis(500)).await;
            assert_eq!(client.get(&url).send().await.unwrap().text().await.unwrap(), "ok");
            assert_eq!(accepted.load(Ordering::SeqCst), 2, "a connection idle for longer is not reused");
            assert!(POOL_IDLE_TIMEOUT < Duration::from_secs(5), "below common servers' keep-alive");
        };
        tokio::time::timeout(Duration::from_secs(30), run).await.expect("the test finishes");
    }

    fn url(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    #[test]
    fn plain_http_to_a_remote_host_exposes_credentials() {
        for exposed in
            ["http://example.com/mcp", "http://10.0.0.1:8080/", "http://[2001:db8::1]/", "http://localhostx/"]
        {
            assert!(exposes_credentials(&url(exposed)), "{exposed}");
        }
        for safe in [
            "https://example.com/mcp",
            "http://localhost:3000/mcp",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://127.0.0.1:1/",
            "http://127.8.9.10/",
            "http://[::1]:80/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert!(!exposes_credentials(&url(safe)), "{safe}");
        }
    }

    #[test]
    fn the_warning_is_given_once() {
        let warning = PlainHttpWarning::new();
        let remote = url("http://example.com/mcp");
        assert!(!warning.check("s", &remote, false), "no credentials, no warning");
        assert!(!warning.check("s", &url("http://127.0.0.1/"), true), "loopback");
        assert!(!warning.check("s", &url("https://example.com/"), true), "https");
        assert!(warning.check("s", &remote, true), "the first exposure warns");
        assert!(!warning.check("s", &remote, true), "only once");
        assert!(PlainHttpWarning::new().check("s", &remote, true), "once per client, not per process");
    }

    #[test]
    fn credentials_are_recognised() {
        assert!(carries_credentials(true, []));
        assert!(carries_credentials(false, ["Accept", "X-Api-Key"]));
        assert!(carries_credentials(false, ["authorization"]));
        assert!(!carries_credentials(false, ["Accept", "X-Client"]));
    }

    #[test]
    fn urls_are_checked_and_redacted() {
        assert!(parse_url("ftp://x/").is_err());
        let u = parse_url("https://user:pw@h:8443/mcp?token=abc#f").unwrap();
        assert_eq!(redact_url(&u), "https://redacted:redacted@h:8443/mcp?token=redacted");
        for bad in ["ftp://user:pw@h/x?token=abc", "http://user:pw@[bad/x?token=abc"] {
            let e = parse_url(bad).unwrap_err().to_string();
            assert!(!e.contains("pw") && !e.contains("abc") && !e.contains("user"), "{e}");
        }
    }
}
