//! The client's redirect rules and proxy routes, against servers on 127.0.0.1 (the transports'
//! integration tests cover the rest: sessions, streams, errors, same-origin refusals).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request as AxumRequest;
use axum::response::Response as AxumResponse;
use http_body_util::BodyExt;
use hyper_util::client::proxy::matcher::Matcher;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// A self-signed certificate for 127.0.0.1 and `localhost` (EC P-256, valid until 2126), and
/// its key: no authority vouches for it.
const SELF_SIGNED_CERT: &str = "-----BEGIN CERTIFICATE-----\n\
MIIBmzCCAUGgAwIBAgIUDutQZVz5SaKZM8vbmWUIrMco4swwCgYIKoZIzj0EAwIw\n\
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwNDIwMDA0M1oYDzIxMjYxMTEw\n\
MjAwMDQzWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO\n\
PQMBBwNCAAT3IsF7NK/UPsLVh010iUuk4+L3ggKpRdHr9PC5mLnfp3SmF4JYMtQl\n\
mDuUafXlKnmVKjQDh70NdOte+D/o2I8Ro28wbTAdBgNVHQ4EFgQUeMKthx9DKrmZ\n\
2qetm+8agwOTQE4wHwYDVR0jBBgwFoAUeMKthx9DKrmZ2qetm+8agwOTQE4wDwYD\n\
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI\n\
zj0EAwIDSAAwRQIhAL0qWtZ1bK4oS9oLb5qVURqSF4/loVvne33KAnwQEz5iAiBk\n\
q7ELxESI+gzxdeU5iHAPMSH3DVPSsJHVmX+wdIoqpg==\n\
-----END CERTIFICATE-----";
const SELF_SIGNED_KEY: &str = "-----BEGIN PRIVATE KEY-----\n\
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqGFZr6HWLqYysr0R\n\
ocV+VTXoU6WfGCOHX6QoneGsXi2hRANCAAT3IsF7NK/UPsLVh010iUuk4+L3ggKp\n\
RdHr9PC5mLnfp3SmF4JYMtQlmDuUafXlKnmVKjQDh70NdOte+D/o2I8R\n\
-----END PRIVATE KEY-----";

/// What a test server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    uri: String,
    content_type: Option<String>,
    host: Option<String>,
    proxy_authorization: Option<String>,
    body: Vec<u8>,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// A server on 127.0.0.1 answering every request with `answer(path)`; its address and its log.
async fn server(answer: fn(&str) -> AxumResponse) -> (std::net::SocketAddr, Log) {
    let log: Log = Arc::default();
    let seen = log.clone();
    let app = axum::Router::new().fallback(move |request: AxumRequest| {
        let seen = seen.clone();
        async move {
            let (parts, body) = request.into_parts();
            let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let body = body.collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
            seen.lock().unwrap().push(Seen {
                method: parts.method.to_string(),
                uri: parts.uri.to_string(),
                content_type: header("content-type"),
                host: header("host"),
                proxy_authorization: header("proxy-authorization"),
                body,
            });
            answer(parts.uri.path())
        }
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, log)
}

fn redirect(status: u16, location: &str) -> AxumResponse {
    AxumResponse::builder().status(status).header("location", location).body(Body::empty()).unwrap()
}

fn ok(text: &'static str) -> AxumResponse {
    AxumResponse::builder().status(200).header("content-type", "text/plain").body(Body::from(text)).unwrap()
}

pub(super) fn endpoint(url: &str) -> Endpoint {
    Endpoint::new(url::Url::parse(url).unwrap()).unwrap()
}

fn json_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers
}

pub(super) fn direct() -> Matcher {
    Matcher::builder().build()
}

async fn text(response: Response) -> String {
    String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
}

pub(super) async fn within<F: std::future::Future>(test: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), test).await.expect("the test timed out")
}

#[tokio::test]
async fn a_307_resends_the_request_and_a_303_turns_it_into_a_get_without_a_body() {
    within(async {
        let (addr, log) = server(|path| match path {
            "/a" => redirect(307, "/b"),
            "/b" => redirect(303, "/c"),
            _ => ok("done"),
        })
        .await;
        let client =
            HttpClient::with_proxies(Duration::from_secs(5), &endpoint(&format!("http://{addr}/a")), &direct())
                .unwrap();
        let target = endpoint(&format!("http://{addr}/a"));
        let response = client.send(Method::POST, &target, json_headers, Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(text(response).await, "done");
        let seen = log.lock().unwrap().clone();
        let summary: Vec<(&str, &str, &[u8], Option<&str>)> = seen
            .iter()
            .map(|s| (s.method.as_str(), s.uri.as_str(), s.body.as_slice(), s.content_type.as_deref()))
            .collect();
        assert_eq!(
            summary,
            [
                ("POST", "/a", &b"{}"[..], Some("application/json")),
                ("POST", "/b", &b"{}"[..], Some("application/json")),
                ("GET", "/c", &b""[..], None),
            ]
        );
    })
    .await
}

#[tokio::test]
async fn redirects_stop_after_the_limit_and_at_another_origin() {
    within(async {
        let (addr, log) = server(|_| redirect(308, "/again")).await;
        let target = endpoint(&format!("http://{addr}/loop"));
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &direct()).unwrap();
        let error = client.send(Method::GET, &target, HeaderMap::new, Bytes::new()).await.unwrap_err();
        assert!(matches!(error, SendError::TooManyRedirects), "{error}");
        assert_eq!(log.lock().unwrap().len(), MAX_REDIRECTS + 1, "the first request and every redirect followed");

        // The same host on another port is another origin: refused before anything is sent there.
        let (elsewhere, elsewhere_log) = server(|_| ok("must not be reached")).await;
        let (addr, _) = server(|_| redirect(307, "http://127.0.0.1:9/x")).await;
        let target = endpoint(&format!("http://{addr}/mcp"));
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &direct()).unwrap();
        let error = client.send(Method::POST, &target, json_headers, Bytes::from_static(b"{}")).await.unwrap_err();
        let SendError::CrossOrigin(refused) = &error else { panic!("{error}") };
        assert_eq!(refused.to, "http://127.0.0.1:9/x");
        assert!(error.to_string().contains("same origin"), "{error}");
        assert!(elsewhere_log.lock().unwrap().is_empty(), "{elsewhere} was reached");
    })
    .await
}

#[tokio::test]
async fn a_redirect_without_a_location_or_of_another_kind_is_the_response() {
    within(async {
        let (addr, log) = server(|path| match path {
            "/choices" => AxumResponse::builder()
                .status(300)
                .header("location", "/elsewhere")
                .body(Body::from("pick one"))
                .unwrap(),
            _ => AxumResponse::builder().status(302).body(Body::from("nowhere")).unwrap(),
        })
        .await;
        let target = endpoint(&format!("http://{addr}/mcp"));
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &direct()).unwrap();
        let response = client.send(Method::GET, &target, HeaderMap::new, Bytes::new()).await.unwrap();
        assert_eq!(response.status(), StatusCode::FOUND);
        assert_eq!(content_length(&response), Some(7));
        assert_eq!(text(response).await, "nowhere");
        // A 300 names a choice, not a redirect: it is not followed.
        let target = endpoint(&format!("http://{addr}/choices"));
        let response = client.send(Method::GET, &target, HeaderMap::new, Bytes::new()).await.unwrap();
        assert_eq!(response.status(), StatusCode::MULTIPLE_CHOICES);
        assert_eq!(text(response).await, "pick one");
        let paths: Vec<String> = log.lock().unwrap().iter().map(|s| s.uri.clone()).collect();
        assert_eq!(paths, ["/mcp", "/choices"]);
    })
    .await
}

#[tokio::test]
async fn a_plain_endpoint_goes_through_a_forwarding_proxy_with_its_credentials() {
    within(async {
        let (proxy, log) = server(|_| ok("from the proxy")).await;
        // The endpoint's host does not resolve: only the proxy is ever connected to.
        let target = endpoint("http://mcp.invalid:8080/mcp?x=1");
        let proxies = Matcher::builder().http(format!("http://user:p%40ss@{proxy}")).build();
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &proxies).unwrap();
        assert!(format!("{client:?}").contains("forwarding proxy"), "{client:?}");
        assert!(!format!("{client:?}").contains("p%40ss"), "{client:?}");
        let response = client.send(Method::POST, &target, json_headers, Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(text(response).await, "from the proxy");
        let seen = log.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].uri, "http://mcp.invalid:8080/mcp?x=1", "the request in absolute form");
        assert_eq!(seen[0].proxy_authorization.as_deref(), Some("Basic dXNlcjpwQHNz"));
        assert_eq!(seen[0].body, b"{}");

        // NO_PROXY's hosts go direct.
        let (addr, direct_log) = server(|_| ok("direct")).await;
        let target = endpoint(&format!("http://{addr}/mcp"));
        let proxies = Matcher::builder().http(format!("http://{proxy}")).no("127.0.0.1").build();
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &proxies).unwrap();
        let response = client.send(Method::GET, &target, HeaderMap::new, Bytes::new()).await.unwrap();
        assert_eq!(text(response).await, "direct");
        assert_eq!(direct_log.lock().unwrap().len(), 1);
        assert_eq!(log.lock().unwrap().len(), 1, "the proxy saw nothing more");
    })
    .await
}

#[tokio::test]
async fn an_https_endpoint_asks_the_proxy_for_a_tunnel() {
    within(async {
        // A proxy that reads the CONNECT request and refuses it.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = listener.local_addr().unwrap();
        let asked = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "the client closed before the end of its CONNECT request");
                head.extend_from_slice(&buf[..n]);
            }
            socket.write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n").await.unwrap();
            String::from_utf8(head).unwrap()
        });
        let target = endpoint("https://mcp.invalid/mcp");
        let proxies = Matcher::builder().https(format!("http://user:secret@{proxy}")).build();
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &proxies).unwrap();
        let error = client.send(Method::POST, &target, json_headers, Bytes::from_static(b"{}")).await.unwrap_err();
        let head = asked.await.unwrap();
        assert!(head.starts_with("CONNECT mcp.invalid:443 HTTP/1.1\r\n"), "{head}");
        assert!(head.to_ascii_lowercase().contains("proxy-authorization: basic dxnlcjpzzwnyzxq="), "{head}");
        assert!(matches!(&error, SendError::Http { url, .. } if url == "https://mcp.invalid/mcp"), "{error}");
    })
    .await
}

#[tokio::test]
async fn a_proxy_that_is_not_http_or_https_is_refused_with_a_clear_error() {
    let target = endpoint("http://mcp.invalid/mcp");
    let proxies = Matcher::builder().all("socks5://user:secret@127.0.0.1:1080").build();
    let error = HttpClient::with_proxies(Duration::from_secs(5), &target, &proxies).unwrap_err().to_string();
    assert!(error.contains("socks5://") && error.contains("only http:// and https:// proxies"), "{error}");
    assert!(!error.contains("secret"), "the proxy's password is shown: {error}");
}

#[tokio::test]
async fn an_https_proxy_is_reached_over_tls_for_both_kinds_of_endpoint() {
    within(async {
        for (endpoint_url, route) in [
            ("http://mcp.invalid/mcp", "through a forwarding https proxy"),
            ("https://mcp.invalid/mcp", "through a CONNECT tunnel to an https proxy (TLS)"),
        ] {
            // The proxy speaks TLS with a certificate no authority vouches for: the client must
            // open TLS to it (not send the request in the clear) and refuse the certificate.
            let (proxy, handshake) = self_signed_tls_server().await;
            let target = endpoint(endpoint_url);
            let proxies = Matcher::builder().all(format!("https://user:secret@{proxy}")).build();
            let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &proxies).unwrap();
            assert!(format!("{client:?}").contains(route), "{client:?}");
            let error = client.send(Method::POST, &target, json_headers, Bytes::from_static(b"{}")).await.unwrap_err();
            let error = error.to_string();
            assert!(error.to_ascii_lowercase().contains("certificate"), "{endpoint_url}: {error}");
            assert!(!error.contains("secret"), "the proxy's password is shown: {error}");
            assert!(handshake.await.unwrap().is_err(), "{endpoint_url}: the TLS handshake with the proxy completed");
        }
    })
    .await
}

#[tokio::test]
async fn a_refused_connection_names_its_cause() {
    within(async {
        // A port nothing listens on: bound, then let go.
        let addr = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
        let target = endpoint(&format!("http://{addr}/mcp"));
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &direct()).unwrap();
        let error = client.send(Method::GET, &target, HeaderMap::new, Bytes::new()).await.unwrap_err().to_string();
        assert!(error.to_ascii_lowercase().contains("connection refused"), "{error}");
        assert!(error.ends_with(&format!("(http://{addr}/mcp)")), "the error names the URL: {error}");
    })
    .await
}

/// A TLS server on 127.0.0.1 with [`SELF_SIGNED_CERT`], for one connection: its address, and
/// how its handshake ended.
async fn self_signed_tls_server() -> (std::net::SocketAddr, tokio::task::JoinHandle<Result<(), String>>) {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let cert = CertificateDer::from_pem_slice(SELF_SIGNED_CERT.as_bytes()).unwrap();
    let key = PrivateKeyDer::from_pem_slice(SELF_SIGNED_KEY.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handshake = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        acceptor.accept(socket).await.map(drop).map_err(|e| e.to_string())
    });
    (addr, handshake)
}

#[tokio::test]
async fn an_https_endpoint_speaks_tls_and_refuses_a_certificate_no_authority_vouches_for() {
    within(async {
        let (addr, handshake) = self_signed_tls_server().await;
        let target = endpoint(&format!("https://{addr}/mcp"));
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &direct()).unwrap();
        let error = client.send(Method::POST, &target, json_headers, Bytes::from_static(b"{}")).await.unwrap_err();
        let error = error.to_string();
        assert!(error.to_ascii_lowercase().contains("certificate"), "{error}");
        assert!(handshake.await.unwrap().is_err(), "the TLS handshake completed");
    })
    .await
}

#[tokio::test]
async fn the_host_header_names_the_endpoint_with_its_port_unless_it_is_the_default() {
    within(async {
        let (addr, log) = server(|path| match path {
            "/a" => redirect(307, "/b"),
            _ => ok("done"),
        })
        .await;
        let target = endpoint(&format!("http://{addr}/a"));
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &direct()).unwrap();
        let response = client.send(Method::POST, &target, json_headers, Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(text(response).await, "done");
        let hosts: Vec<Option<String>> = log.lock().unwrap().iter().map(|s| s.host.clone()).collect();
        let expected = Some(addr.to_string());
        assert_eq!(hosts, [expected.clone(), expected], "the first request and the redirected one");
        // A configured Host is kept.
        let configured = || {
            let mut headers = HeaderMap::new();
            headers.insert(HOST, HeaderValue::from_static("virtual.example"));
            headers
        };
        client.send(Method::GET, &target, configured, Bytes::new()).await.unwrap();
        assert_eq!(log.lock().unwrap().last().unwrap().host.as_deref(), Some("virtual.example"));
    })
    .await;
    assert_eq!(endpoint("https://example.org:443/mcp").host, "example.org");
    assert_eq!(endpoint("http://example.org:80/mcp").host, "example.org");
    assert_eq!(endpoint("http://[::1]:8080/mcp").host, "[::1]:8080");
    assert_eq!(endpoint("https://user:pw@example.org:8443/mcp").host, "example.org:8443");
}

#[tokio::test]
async fn a_connection_is_reused_until_it_has_been_idle_for_the_pool_timeout() {
    use axum::extract::ConnectInfo;
    use std::net::SocketAddr;
    within(async {
        let peers: Arc<Mutex<Vec<SocketAddr>>> = Arc::default();
        let seen = peers.clone();
        let app = axum::Router::new().fallback(move |ConnectInfo(peer): ConnectInfo<SocketAddr>| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(peer);
                ok("hello")
            }
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap()
        });
        let target = endpoint(&format!("http://{addr}/mcp"));
        let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &direct()).unwrap();
        for _ in 0..2 {
            let response = client.send(Method::GET, &target, HeaderMap::new, Bytes::new()).await.unwrap();
            assert_eq!(text(response).await, "hello");
            // The connection goes back to the pool on a task of its own once the body is read.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Past the idle timeout (below the 5 s after which common servers close theirs), the
        // connection is not used again: a new one is opened.
        tokio::time::sleep(crate::http_policy::POOL_IDLE_TIMEOUT + Duration::from_millis(600)).await;
        let response = client.send(Method::GET, &target, HeaderMap::new, Bytes::new()).await.unwrap();
        assert_eq!(text(response).await, "hello");
        let peers = peers.lock().unwrap().clone();
        assert_eq!(peers.len(), 3);
        assert_eq!(peers[0], peers[1], "the second request reused the connection");
        assert_ne!(peers[1], peers[2], "a connection idle past the timeout was reused");
    })
    .await
}
