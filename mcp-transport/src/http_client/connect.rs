//! How a client reaches its endpoint's origin: directly (plain TCP, or TLS for `https`), through
//! a forwarding HTTP proxy (plain `http`), or through a `CONNECT` tunnel (`https`); the proxy
//! itself over plain TCP (`http://`) or TLS (`https://`).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::header::HeaderValue;
use http::{Request, Uri};
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::proxy::matcher::Intercept;

use super::Response;
use super::pool::{Opener, Pool, RequestError};
use crate::TransportError;
use crate::redact::redact_url_str;

type Body = Full<Bytes>;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A pool of connections and the way they go. The pool is of one type whatever the route
/// ([`Connector`] and [`Conn`] hide it), so that hyper's HTTP/1.1 machinery is compiled once,
/// not once per route: a host that never speaks HTTP would otherwise still carry (and fault in
/// around what it runs) a copy per route.
#[derive(Clone)]
pub(super) struct Backend {
    pool: Pool<Conn>,
    route: &'static str,
}

impl Backend {
    /// The backend for requests to `uri`'s origin, through `proxy` if it is given; with the
    /// `Proxy-Authorization` every request must carry (a forwarding proxy's credentials).
    pub(super) fn new(
        connect_timeout: Duration,
        uri: &Uri,
        proxy: Option<&Intercept>,
    ) -> Result<(Backend, Option<HeaderValue>), TransportError> {
        let https = uri.scheme_str() == Some("https");
        let mut tcp = HttpConnector::new();
        tcp.set_connect_timeout(Some(connect_timeout));
        tcp.set_nodelay(true);
        let (connector, route, authorization) = match proxy {
            None if !https => (Connector::Plain(tcp), "direct", None),
            None => {
                tcp.enforce_http(false);
                (Connector::Tls(tls(tcp)?), "direct (TLS)", None)
            }
            Some(proxy) => {
                let proxy_over_tls = match proxy.uri().scheme_str() {
                    Some("http") => false,
                    Some("https") => true,
                    _ => {
                        return Err(TransportError::Other(format!(
                            "the proxy {} that the environment names for this server is not supported: only \
                             http:// and https:// proxies are",
                            redact_url_str(&proxy.uri().to_string())
                        )));
                    }
                };
                let authorization = proxy.basic_auth().cloned().map(|mut value| {
                    value.set_sensitive(true);
                    value
                });
                let uri = proxy.uri().clone();
                // The proxy itself is reached over TLS when its URL says https.
                let to_proxy = if proxy_over_tls {
                    tcp.enforce_http(false);
                    Some(tls(tcp.clone())?)
                } else {
                    None
                };
                match (https, to_proxy) {
                    (true, None) => {
                        tcp.enforce_http(false);
                        let route = "through a CONNECT tunnel (TLS)";
                        (Connector::Tunnel(tls(authorized(Tunnel::new(uri, tcp), &authorization))?), route, None)
                    }
                    (true, Some(to_proxy)) => {
                        let route = "through a CONNECT tunnel to an https proxy (TLS)";
                        let tunnel = authorized(Tunnel::new(uri, to_proxy), &authorization);
                        (Connector::TunnelTls(tls(tunnel)?), route, None)
                    }
                    (false, None) => {
                        let forward = Forward { proxy: uri, connector: tcp };
                        (Connector::Forward(forward), "through a forwarding proxy", authorization)
                    }
                    (false, Some(to_proxy)) => {
                        let forward = Forward { proxy: uri, connector: to_proxy };
                        (Connector::ForwardTls(forward), "through a forwarding https proxy", authorization)
                    }
                }
            }
        };
        // A forwarding proxy reads the request's target from its absolute form.
        let absolute_form = matches!(connector, Connector::Forward(_) | Connector::ForwardTls(_));
        let destination = uri.clone();
        let open: Opener<Conn> = Box::new(move || connector.open(destination.clone()));
        let pool = Pool::new(uri, absolute_form, open).ok_or_else(|| {
            TransportError::Other(format!("invalid URL {}: no origin", redact_url_str(&uri.to_string())))
        })?;
        Ok((Backend { pool, route }, authorization))
    }

    /// Send `request` on a pooled connection (a new one if none is idle).
    pub(super) async fn request(&self, request: Request<Body>) -> Result<Response, RequestError> {
        self.pool.request(request).await
    }

    /// How the connections go, for `Debug`.
    pub(super) fn route(&self) -> &'static str {
        self.route
    }
}

/// Opens a connection of one of the routes.
#[derive(Clone)]
pub(super) enum Connector {
    /// Plain TCP to the origin.
    Plain(HttpConnector),
    /// TLS to the origin.
    Tls(HttpsConnector<HttpConnector>),
    /// Plain TCP to a proxy that forwards each request (sent in absolute form).
    Forward(Forward<HttpConnector>),
    /// TLS to a proxy (an `https://` one) that forwards each request.
    ForwardTls(Forward<HttpsConnector<HttpConnector>>),
    /// TLS to the origin through a proxy's `CONNECT` tunnel.
    Tunnel(HttpsConnector<Tunnel<HttpConnector>>),
    /// TLS to the origin through the `CONNECT` tunnel of a proxy reached over TLS.
    TunnelTls(HttpsConnector<Tunnel<HttpsConnector<HttpConnector>>>),
}

/// `connector`'s connection to `destination`, boxed as a [`Conn`].
fn boxed<C>(connector: &C, destination: Uri) -> BoxFuture<'static, Result<Conn, BoxError>>
where
    C: tower_service::Service<Uri> + Clone + Send + 'static,
    C::Response: Io + 'static,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    let mut connector = connector.clone();
    Box::pin(async move {
        futures::future::poll_fn(|cx| connector.poll_ready(cx)).await.map_err(Into::into)?;
        let io = connector.call(destination).await.map_err(Into::into)?;
        Ok(Conn { io: Box::new(io) })
    })
}

impl Connector {
    /// A new connection to `destination` (the origin's URI), by this route: a forwarding
    /// proxy's connections go to the proxy, whatever the destination.
    fn open(&self, destination: Uri) -> BoxFuture<'static, Result<Conn, BoxError>> {
        match self {
            Connector::Plain(c) => boxed(c, destination),
            Connector::Tls(c) => boxed(c, destination),
            Connector::Forward(f) => boxed(&f.connector, f.proxy.clone()),
            Connector::ForwardTls(f) => boxed(&f.connector, f.proxy.clone()),
            Connector::Tunnel(c) => boxed(c, destination),
            Connector::TunnelTls(c) => boxed(c, destination),
        }
    }
}

/// What a connection of any route is.
pub(super) trait Io: hyper::rt::Read + hyper::rt::Write + Send + Unpin {}

impl<T: hyper::rt::Read + hyper::rt::Write + Send + Unpin> Io for T {}

/// A connection of any route (one allocation per connection, not per request).
pub(super) struct Conn {
    io: Box<dyn Io>,
}

impl hyper::rt::Read for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.get_mut().io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Conn {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut *self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut *self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}

/// `tunnel` sending the proxy's credentials with its `CONNECT`, if there are any.
fn authorized<C>(tunnel: Tunnel<C>, authorization: &Option<HeaderValue>) -> Tunnel<C> {
    match authorization {
        Some(authorization) => tunnel.with_auth(authorization.clone()),
        None => tunnel,
    }
}

/// `connector` with TLS on top: rustls with the platform's certificate verifier, HTTP/1.1 only.
fn tls<C>(connector: C) -> Result<HttpsConnector<C>, TransportError> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| TransportError::Other(format!("cannot set up TLS: the platform's certificate verifier: {e}")))?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Other(format!("cannot set up TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only()
        .enable_http1()
        .wrap_connector(connector))
}

/// A forwarding proxy and how to reach it: every connection goes to it, whatever the
/// destination (requests on them are sent in absolute form).
#[derive(Clone)]
pub(super) struct Forward<C> {
    proxy: Uri,
    connector: C,
}
