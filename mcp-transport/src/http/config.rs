//! Configuration of the HTTP transports: endpoint, headers, bearer token, limits and the resume
//! policy.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use crate::TransportError;
use crate::auth::{Authorization, StaticBearer};
use crate::redact::Secret;

/// Default largest JSON body or SSE event accepted: 32 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How a broken SSE stream is resumed: with `Last-Event-ID`, after the server's `retry` delay
/// or an exponential backoff, a bounded number of times in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePolicy {
    /// Most reconnection attempts in a row without a message before giving up (default 5).
    pub max_retries: u32,
    /// First delay when the server gave no `retry` (default 500 ms); doubled on each attempt.
    pub initial_backoff: Duration,
    /// Longest delay between attempts, also capping the server's `retry` (default 30 s).
    pub max_backoff: Duration,
}

impl Default for ResumePolicy {
    fn default() -> Self {
        ResumePolicy {
            max_retries: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl ResumePolicy {
    /// The delay before attempt `attempt` (0-based): the server's `retry` (or the initial
    /// backoff), doubled per attempt, capped at the maximum.
    pub fn delay(&self, server_retry: Option<Duration>, attempt: u32) -> Duration {
        let base = server_retry.unwrap_or(self.initial_backoff);
        base.saturating_mul(1u32 << attempt.min(16)).min(self.max_backoff)
    }
}

/// How to reach a streamable HTTP server (revisions 2025-03-26 and later).
#[derive(Clone)]
pub struct StreamableHttpConfig {
    /// The server's name, used in logs and errors.
    pub name: String,
    /// The MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    pub url: String,
    /// Extra headers sent with every request. Values are never logged.
    pub headers: Vec<(String, String)>,
    /// A bearer token, sent as `Authorization: Bearer <token>`. It replaces any configured
    /// `Authorization` header (names compare case-insensitively).
    pub bearer_token: Option<Secret>,
    /// What authorizes the requests (OAuth, say); it takes precedence over `bearer_token`, and
    /// replaces any configured `Authorization` header.
    pub authorization: Option<Arc<dyn Authorization>>,
    /// How long establishing a connection may take (default 10 s).
    pub connect_timeout: Duration,
    /// How long a response may stay silent: waiting for response headers, and between two
    /// chunks of a body or SSE stream (default 300 s). An idle SSE stream is then resumed.
    pub read_timeout: Duration,
    /// Largest JSON body, and largest single SSE event, accepted (default 32 MiB).
    pub max_body_bytes: usize,
    /// How broken SSE streams are resumed.
    pub resume: ResumePolicy,
}

impl StreamableHttpConfig {
    /// A config for `url` with the defaults.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        StreamableHttpConfig {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            bearer_token: None,
            authorization: None,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(300),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            resume: ResumePolicy::default(),
        }
    }
}

impl fmt::Debug for StreamableHttpConfig {
    // Header values may hold secrets: show only their names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamableHttpConfig")
            .field("name", &self.name)
            .field("url", &crate::redact::redact_url_str(&self.url))
            .field("header_names", &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("bearer_token", &self.bearer_token)
            .field("authorization", &self.authorization)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("resume", &self.resume)
            .finish()
    }
}

/// The provider of a transport's credentials: the configured one, else a static bearer token.
pub(crate) fn authorization_of(
    authorization: Option<&Arc<dyn Authorization>>,
    bearer: Option<&Secret>,
) -> Option<Arc<dyn Authorization>> {
    authorization.cloned().or_else(|| bearer.map(|b| Arc::new(StaticBearer(b.clone())) as Arc<dyn Authorization>))
}

/// The configured headers as a map, every value marked sensitive. With a provider of
/// credentials (`authorized`), a configured `Authorization` header is dropped: the provider's
/// replaces it instead of adding a second one.
pub(crate) fn build_headers(headers: &[(String, String)], authorized: bool) -> Result<HeaderMap, TransportError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if authorized && name.trim().eq_ignore_ascii_case(AUTHORIZATION.as_str()) {
            continue;
        }
        let header = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| TransportError::Other(format!("invalid header name {name:?}")))?;
        let mut value = HeaderValue::from_str(value.trim())
            .map_err(|_| TransportError::Other(format!("invalid value for header {name:?}")))?;
        value.set_sensitive(true);
        map.append(header, value);
    }
    Ok(map)
}

/// Whether the headers of a transport carry credentials (a bearer token, an `Authorization`
/// header or another secret-looking header), for [`crate::http_policy::PlainHttpWarning`].
pub(crate) fn has_credentials(headers: &HeaderMap) -> bool {
    crate::http_policy::carries_credentials(false, headers.keys().map(HeaderName::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_is_never_shown() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?} {s}"), "Secret(<redacted>) <redacted>");
        let mut config = StreamableHttpConfig::new("x", "http://h/mcp");
        config.bearer_token = Some(s);
        config.headers.push(("X-Api-Key".into(), "also-secret".into()));
        let shown = format!("{config:?}");
        assert!(!shown.contains("hunter2") && !shown.contains("also-secret"), "{shown}");
    }

    #[test]
    fn a_provider_replaces_authorization_in_any_case() {
        let headers = vec![("AUTHORIZATION".into(), "Basic abc".into()), ("X-Other".into(), "1".into())];
        let map = build_headers(&headers, true).unwrap();
        assert!(map.get(AUTHORIZATION).is_none());
        assert_eq!(map.get("x-other").unwrap(), "1");
        let map = build_headers(&headers, false).unwrap();
        assert_eq!(map.get(AUTHORIZATION).unwrap(), "Basic abc");
        assert!(authorization_of(None, None).is_none());
        assert!(authorization_of(None, Some(&Secret::new("tok"))).is_some());
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = ResumePolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
        };
        assert_eq!(p.delay(None, 0), Duration::from_millis(100));
        assert_eq!(p.delay(None, 2), Duration::from_millis(400));
        assert_eq!(p.delay(None, 10), Duration::from_secs(1));
        assert_eq!(p.delay(Some(Duration::from_millis(30)), 1), Duration::from_millis(60));
        assert_eq!(p.delay(Some(Duration::from_secs(3600)), 0), Duration::from_secs(1));
    }
}
