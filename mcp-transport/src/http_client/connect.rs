//! How a client reaches its endpoint's origin: directly (plain TCP, or TLS for `https`), through
//! a forwarding HTTP proxy (plain `http`), or through a `CONNECT` tunnel (`https`).

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
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connect, Connected, Connection, HttpConnector};
use hyper_util::client::proxy::matcher::Intercept;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};

use super::Response;
use crate::TransportError;
use crate::http_policy::POOL_IDLE_TIMEOUT;
use crate::redact::redact_url_str;

type Body = Full<Bytes>;

/// A pooled client and the way its connections go.
#[derive(Clone)]
pub(super) enum Backend {
    /// Plain TCP to the origin.
    Plain(Client<HttpConnector, Body>),
    /// TLS to the origin.
    Tls(Client<HttpsConnector<HttpConnector>, Body>),
    /// Plain TCP to a proxy that forwards each request (sent in absolute form).
    Forward(Client<Forward, Body>),
    /// TLS to the origin through a proxy's `CONNECT` tunnel.
    Tunnel(Client<HttpsConnector<Tunnel<HttpConnector>>, Body>),
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
        let Some(proxy) = proxy else {
            if !https {
                return Ok((Backend::Plain(pooled(tcp)), None));
            }
            tcp.enforce_http(false);
            return Ok((Backend::Tls(pooled(tls(tcp)?)), None));
        };
        if proxy.uri().scheme_str() != Some("http") {
            return Err(TransportError::Other(format!(
                "the proxy {} that the environment names for this server is not supported: only http:// proxies are",
                redact_url_str(&proxy.uri().to_string())
            )));
        }
        let authorization = proxy.basic_auth().cloned().map(|mut value| {
            value.set_sensitive(true);
            value
        });
        if !https {
            let forward = Forward { proxy: proxy.uri().clone(), tcp };
            return Ok((Backend::Forward(pooled(forward)), authorization));
        }
        tcp.enforce_http(false);
        let mut tunnel = Tunnel::new(proxy.uri().clone(), tcp);
        if let Some(authorization) = authorization {
            tunnel = tunnel.with_auth(authorization);
        }
        Ok((Backend::Tunnel(pooled(tls(tunnel)?)), None))
    }

    /// Send `request` on a pooled connection (a new one if none is idle).
    pub(super) async fn request(&self, request: Request<Body>) -> Result<Response, hyper_util::client::legacy::Error> {
        match self {
            Backend::Plain(client) => client.request(request).await,
            Backend::Tls(client) => client.request(request).await,
            Backend::Forward(client) => client.request(request).await,
            Backend::Tunnel(client) => client.request(request).await,
        }
    }

    /// How the connections go, for `Debug`.
    pub(super) fn route(&self) -> &'static str {
        match self {
            Backend::Plain(_) => "direct",
            Backend::Tls(_) => "direct (TLS)",
            Backend::Forward(_) => "through a forwarding proxy",
            Backend::Tunnel(_) => "through a CONNECT tunnel (TLS)",
        }
    }
}

/// A pooled HTTP/1.1 client on `connector`: idle connections are closed after
/// [`POOL_IDLE_TIMEOUT`].
fn pooled<C: Connect + Clone + Send + Sync + 'static>(connector: C) -> Client<C, Body> {
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .pool_timer(TokioTimer::new())
        .build(connector)
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

/// Connects to a forwarding proxy, whatever the destination; the connection says it is
/// proxied, so that requests on it are sent in absolute form.
#[derive(Clone)]
pub(super) struct Forward {
    proxy: Uri,
    tcp: HttpConnector,
}

impl tower_service::Service<Uri> for Forward {
    type Response = Proxied<TokioIo<tokio::net::TcpStream>>;
    type Error = <HttpConnector as tower_service::Service<Uri>>::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.tcp.poll_ready(cx)
    }

    fn call(&mut self, _destination: Uri) -> Self::Future {
        let connecting = self.tcp.call(self.proxy.clone());
        Box::pin(async move { connecting.await.map(Proxied) })
    }
}

/// A connection to a forwarding proxy.
pub(super) struct Proxied<T>(T);

impl<T: Connection> Connection for Proxied<T> {
    fn connected(&self) -> Connected {
        self.0.connected().proxy(true)
    }
}

impl<T: hyper::rt::Read + Unpin> hyper::rt::Read for Proxied<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl<T: hyper::rt::Write + Unpin> hyper::rt::Write for Proxied<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }
}
