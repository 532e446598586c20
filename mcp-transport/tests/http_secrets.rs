//! Secrets never show: not in the `Debug` output of the configs, nor in the errors of the HTTP
//! transports (URLs with credentials or secret query values, header values, bearer tokens,
//! remembered secrets in stdio arguments).

mod http_support;

use std::time::Duration;

use http_support::*;
use mcp_transport::redact::{describe, remember_secret};
use mcp_transport::{
    Secret, SseConfig, SseTransport, StdioConfig, StreamableHttpConfig, StreamableHttpTransport, Transport,
};
use test_support::within;

const SECRETS: [&str; 6] =
    ["userinfo-name", "userinfo-pass", "query-secret", "header-secret", "bearer-secret", "env-secret"];

fn assert_clean(shown: &str) {
    for secret in SECRETS {
        assert!(!shown.contains(secret), "{secret:?} shows in {shown}");
    }
}

/// A URL carrying secrets, on a port where nothing listens.
fn secret_url(path: &str) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("http://userinfo-name:userinfo-pass@127.0.0.1:{port}{path}?api_key=query-secret&mode=x")
}

#[test]
fn http_configs_show_no_secret() {
    let mut http = StreamableHttpConfig::new("s", secret_url("/mcp"));
    http.headers.push(("X-Api-Key".into(), "header-secret".into()));
    http.bearer_token = Some(Secret::new("bearer-secret"));
    let shown = format!("{http:?}");
    assert_clean(&shown);
    assert!(shown.contains("api_key=redacted") && shown.contains("mode=redacted"), "names stay: {shown}");

    let mut sse = SseConfig::new("s", secret_url("/sse"));
    sse.headers.push(("Authorization".into(), "Basic header-secret".into()));
    sse.bearer_token = Some(Secret::new("bearer-secret"));
    assert_clean(&format!("{sse:?}"));
}

#[test]
fn stdio_config_shows_no_secret() {
    remember_secret("env-secret");
    let mut config = StdioConfig::new(
        "s",
        "server",
        [
            "--token=bearer-secret",
            "--api-key",
            "header-secret",
            "--from-env=prefix-env-secret",
            "https://userinfo-name:userinfo-pass@h/x?k=query-secret",
        ],
    );
    config.env.insert("TOKEN".into(), "env-secret".into());
    let shown = format!("{config:?}");
    assert_clean(&shown);
    assert!(shown.contains("--token=<redacted>") && shown.contains("TOKEN"), "{shown}");
}

#[tokio::test]
async fn url_errors_show_no_secret() {
    within(async {
        for bad in [
            "ftp://userinfo-name:userinfo-pass@h/x?api_key=query-secret",
            "http://userinfo-name:userinfo-pass@[bad/x?api_key=query-secret",
        ] {
            let error = StreamableHttpTransport::new(StreamableHttpConfig::new("s", bad)).unwrap_err();
            assert_clean(&format!("{error} {error:?}"));
            let error = SseTransport::connect(SseConfig::new("s", bad)).await.unwrap_err();
            assert_clean(&format!("{error} {error:?}"));
        }
    })
    .await;
}

#[tokio::test]
async fn network_errors_show_no_secret() {
    within(async {
        let mut http = config(&secret_url("/mcp"));
        http.headers.push(("X-Api-Key".into(), "header-secret".into()));
        http.bearer_token = Some(Secret::new("bearer-secret"));
        let transport = StreamableHttpTransport::new(http).unwrap();
        transport.send(initialize(0)).await.unwrap();
        let error = next_failure_error(&transport, 0).await;
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("HTTP request failed"), "{shown}");
        assert_clean(&shown);

        let mut sse = SseConfig::new("s", secret_url("/sse"));
        sse.connect_timeout = Duration::from_secs(5);
        sse.bearer_token = Some(Secret::new("bearer-secret"));
        let error = SseTransport::connect(sse).await.unwrap_err();
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("opening the SSE stream failed"), "{shown}");
        assert_clean(&shown);

        // The one description of a reqwest error names the URL, redacted.
        let error = reqwest::Client::new().get(secret_url("/x")).send().await.unwrap_err();
        assert!(error.to_string().contains("query-secret"), "reqwest shows the URL: {error}");
        let shown = describe(&error);
        assert_clean(&shown);
        assert!(shown.contains("127.0.0.1") && shown.contains("api_key=redacted"), "{shown}");
    })
    .await;
}
