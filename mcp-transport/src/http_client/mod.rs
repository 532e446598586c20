//! The HTTP client of the MCP transports: hyper's HTTP/1.1 connections to the origin of one
//! endpoint, kept alive in a pool of their own, with the workspace's redirect policy
//! ([`crate::http_policy`]).
//!
//! - [`HttpClient`]: one per transport. It keeps connections alive in `pool` (closed after
//!   [`POOL_IDLE_TIMEOUT`](crate::http_policy::POOL_IDLE_TIMEOUT) idle), sets `TCP_NODELAY`,
//!   speaks TLS (rustls, the platform's verifier) only to an `https` endpoint, and goes through
//!   the proxy the environment names for the endpoint (`HTTP_PROXY`, `HTTPS_PROXY`,
//!   `ALL_PROXY`, `NO_PROXY`, as curl reads them): a plain `http` endpoint through an HTTP proxy
//!   that forwards the request, an `https` one through a `CONNECT` tunnel; an `https://` proxy
//!   is itself reached over TLS, a SOCKS one is refused.
//! - [`Endpoint`]: a URL parsed once, both as the `url::Url` that errors and redirects read and
//!   as the `http::Uri` every request is sent to, so that a request converts no URL.
//! - [`HttpClient::send`]: redirects are followed within the endpoint's origin, at most
//!   [`MAX_REDIRECTS`](crate::http_policy::MAX_REDIRECTS) times (307 and 308 resend the request,
//!   301, 302 and 303 turn it into a `GET` without a body, as browsers and curl do; any other
//!   status is the response); a redirect to another origin fails the request with a
//!   [`CrossOriginRedirect`].
//!
//! Why not `reqwest`, which the authorization client and the host's LLM client use: for each
//! request it parses its URL twice more (to follow redirects and to report the final URL), and
//! passes through retry, redirect and decompression layers the transports do not use; over
//! streamable HTTP that was a quarter of the client's instructions per call.

mod connect;
mod pool;
#[cfg(test)]
mod pool_tests;
#[cfg(test)]
mod tests;

use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderMap, HeaderValue, LOCATION, PROXY_AUTHORIZATION};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::Full;

use crate::TransportError;
use crate::http_policy::{CrossOriginRedirect, MAX_REDIRECTS};
use crate::redact::{describe_error, redact_url};

/// The body of a response: hyper's, read in chunks as they arrive; read to its end, it gives
/// its connection back to the pool.
pub(crate) use pool::ResponseBody;

/// A response, its body not read yet.
pub(crate) type Response = http::Response<ResponseBody>;

/// A URL parsed once for every request to it.
#[derive(Clone)]
pub(crate) struct Endpoint {
    /// As errors name it (redacted) and redirects resolve against it.
    pub(crate) url: url::Url,
    /// As requests are sent to it.
    uri: Uri,
    /// Its `Host` header (`host[:port]`, the port when it is not the scheme's): made once, not
    /// formatted for every request.
    host: HeaderValue,
}

impl Endpoint {
    /// `url` as an endpoint; an error when it is no valid request target.
    pub(crate) fn new(url: url::Url) -> Result<Self, TransportError> {
        let invalid =
            |e: &dyn std::fmt::Display| TransportError::Other(format!("invalid URL {}: {e}", redact_url(&url)));
        let uri = url.as_str().parse::<Uri>().map_err(|e| invalid(&e))?;
        let host = match (uri.host(), url.port()) {
            (Some(host), Some(port)) => HeaderValue::try_from(format!("{host}:{port}")),
            (Some(host), None) => HeaderValue::try_from(host),
            (None, _) => return Err(invalid(&"no host")),
        }
        .map_err(|e| invalid(&e))?;
        Ok(Endpoint { url, uri, host })
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redact_url(&self.url))
    }
}

/// Why a request got no response.
#[derive(Debug)]
pub(crate) enum SendError {
    /// A redirect led to another origin.
    CrossOrigin(CrossOriginRedirect),
    /// More than [`MAX_REDIRECTS`] redirects.
    TooManyRedirects,
    /// A redirect's `Location` is no URL.
    BadLocation(String),
    /// The request to `url` (redacted) failed: no connection, or it broke before the
    /// response's headers.
    Http { error: pool::RequestError, url: String },
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::CrossOrigin(e) => e.fmt(f),
            SendError::TooManyRedirects => write!(f, "too many redirects (more than {MAX_REDIRECTS})"),
            SendError::BadLocation(why) => write!(f, "invalid redirect: {why}"),
            // The error and its causes ("cannot connect: tcp connect error: Connection refused"),
            // secrets masked, and where the request went.
            SendError::Http { error, url } => write!(f, "{} ({url})", describe_error(error)),
        }
    }
}

impl std::error::Error for SendError {}

/// The HTTP client of one transport. See the module docs.
#[derive(Clone)]
pub(crate) struct HttpClient {
    backend: connect::Backend,
    /// The `Proxy-Authorization` of a forwarding proxy, sent with every request.
    proxy_authorization: Option<HeaderValue>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient").field("route", &self.backend.route()).finish_non_exhaustive()
    }
}

impl HttpClient {
    /// The client for requests to `endpoint`'s origin, through the proxy the environment names
    /// for it, if any.
    pub(crate) fn new(connect_timeout: Duration, endpoint: &Endpoint) -> Result<Self, TransportError> {
        let proxies = hyper_util::client::proxy::matcher::Matcher::from_env();
        Self::with_proxies(connect_timeout, endpoint, &proxies)
    }

    /// [`HttpClient::new`] with the proxy rules `proxies` instead of the environment's.
    pub(crate) fn with_proxies(
        connect_timeout: Duration,
        endpoint: &Endpoint,
        proxies: &hyper_util::client::proxy::matcher::Matcher,
    ) -> Result<Self, TransportError> {
        let proxy = proxies.intercept(&endpoint.uri);
        let (backend, proxy_authorization) = connect::Backend::new(connect_timeout, &endpoint.uri, proxy.as_ref())?;
        Ok(HttpClient { backend, proxy_authorization })
    }

    /// Send a request to `endpoint` and wait for its response's headers (the caller bounds the
    /// wait). `headers` makes the request's headers; it is called again for each redirect
    /// followed, which resends `body` (307, 308) or drops it (301, 302, 303). See the module
    /// docs for the redirect policy.
    pub(crate) async fn send(
        &self,
        method: Method,
        endpoint: &Endpoint,
        headers: impl Fn() -> HeaderMap,
        body: Bytes,
    ) -> Result<Response, SendError> {
        let (mut method, mut body, mut uri) = (method, body, endpoint.uri.clone());
        let mut current: Option<url::Url> = None;
        let (mut followed, mut body_dropped) = (0, false);
        loop {
            let mut request = Request::new(Full::new(body.clone()));
            *request.method_mut() = method.clone();
            *request.uri_mut() = uri;
            *request.headers_mut() = headers();
            if body_dropped {
                // A redirect that turned the request into a GET: no body, nothing to describe.
                request.headers_mut().remove(CONTENT_TYPE);
                request.headers_mut().remove(CONTENT_LENGTH);
            }
            // Same origin, same host, whatever redirects were followed; a configured one is kept.
            if !request.headers().contains_key(HOST) {
                request.headers_mut().insert(HOST, endpoint.host.clone());
            }
            if let Some(value) = &self.proxy_authorization {
                request.headers_mut().insert(PROXY_AUTHORIZATION, value.clone());
            }
            let response = match self.backend.request(request).await {
                Ok(response) => response,
                Err(error) => {
                    let url = redact_url(current.as_ref().unwrap_or(&endpoint.url));
                    return Err(SendError::Http { error, url });
                }
            };
            let status = response.status();
            // The redirects a client follows (as reqwest and browsers do); any other status,
            // 300 and 304 among them, is the response.
            if !matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308) {
                return Ok(response);
            }
            // A redirect without a usable Location is the response itself, as in a browser.
            let Some(location) = response.headers().get(LOCATION).and_then(|v| v.to_str().ok()) else {
                return Ok(response);
            };
            let from = current.as_ref().unwrap_or(&endpoint.url);
            let next = from.join(location.trim()).map_err(|e| {
                SendError::BadLocation(format!("{e} in the Location of a {status} from {}", redact_url(from)))
            })?;
            if next.origin() != endpoint.url.origin() {
                return Err(SendError::CrossOrigin(CrossOriginRedirect {
                    from: redact_url(&endpoint.url),
                    to: redact_url(&next),
                }));
            }
            followed += 1;
            if followed > MAX_REDIRECTS {
                return Err(SendError::TooManyRedirects);
            }
            if matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND | StatusCode::SEE_OTHER)
                && method != Method::HEAD
            {
                method = Method::GET;
                body = Bytes::new();
                body_dropped = true;
            }
            uri = next
                .as_str()
                .parse::<Uri>()
                .map_err(|e| SendError::BadLocation(format!("{e}: {}", redact_url(&next))))?;
            tracing::debug!(to = %redact_url(&next), %status, "following a redirect within the origin");
            current = Some(next);
        }
    }
}

/// The length a response's body announces (`Content-Length`), if it does.
pub(crate) fn content_length(response: &http::Response<impl http_body::Body>) -> Option<u64> {
    http_body::Body::size_hint(response.body()).exact().or_else(|| {
        response.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok())
    })
}
