//! Authorization of the HTTP transports: the one seam both HTTP transports ask for credentials
//! and tell about refusals.
//!
//! - [`Authorization`]: what a transport asks before each request ([`Authorization::credentials`])
//!   and tells when the server answered 401 or 403 ([`Authorization::rejected`]). The transport
//!   retries a refused request once when the provider says the credentials changed.
//! - [`StaticBearer`]: a fixed bearer token (what `bearer_token` configures).
//! - [`oauth::OAuthClient`]: the MCP authorization flow (OAuth 2.1 authorization code with PKCE,
//!   protected resource metadata, authorization server discovery, client registration, refresh
//!   and scope step-up).
//! - [`store`]: where registrations and tokens are kept ([`store::TokenStore`], in memory or in a
//!   0600 file); [`browser`]: the pluggable browser step ([`browser::BrowserStep`]) and the
//!   loopback redirect listener.
//! - [`jose`]: the JWTs the client signs (`private_key_jwt` assertions, DPoP proofs) and its
//!   keys ([`jose::SigningKey`], [`jose::DpopKey`]).
//! - [`AuthError`]: a failed authorization, naming its [`AuthStep`]. Secrets never appear in it.

pub mod browser;
mod challenge;
pub mod jose;
pub mod oauth;
pub mod store;

use std::fmt;

use futures::FutureExt;
use futures::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};

pub use challenge::Challenge;

pub use crate::error::{AuthError, AuthStep};

use crate::Secret;

/// The request a transport is about to send, for providers whose credentials depend on it
/// (DPoP proofs name the method and URL).
#[derive(Debug, Clone, Copy)]
pub struct RequestInfo<'a> {
    /// The HTTP method.
    pub method: &'a reqwest::Method,
    /// The URL.
    pub url: &'a url::Url,
}

/// Headers to add to one request, and the generation of the credentials they carry.
#[derive(Clone, Default)]
pub struct Credentials {
    /// The headers (usually `Authorization`). Values are marked sensitive.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Which credentials these are: a provider bumps it whenever its token changes, so that a
    /// refusal of old credentials is answered by a retry with the new ones, not a new flow.
    pub generation: u64,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("header_names", &self.headers.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>())
            .field("generation", &self.generation)
            .finish()
    }
}

impl Credentials {
    /// No headers.
    pub fn none(generation: u64) -> Self {
        Credentials { headers: Vec::new(), generation }
    }

    /// `Authorization: DPoP <token>` and the `DPoP` proof, marked sensitive (RFC 9449 §7.1).
    pub fn dpop(token: &Secret, proof: &str, generation: u64) -> Result<Self, AuthError> {
        let invalid = || AuthError::new(AuthStep::Token, "the DPoP-bound access token is not a valid header value");
        let mut value = HeaderValue::from_str(&format!("DPoP {}", token.expose().trim())).map_err(|_| invalid())?;
        value.set_sensitive(true);
        let mut proof = HeaderValue::from_str(proof).map_err(|_| invalid())?;
        proof.set_sensitive(true);
        Ok(Credentials {
            headers: vec![(reqwest::header::AUTHORIZATION, value), (HeaderName::from_static("dpop"), proof)],
            generation,
        })
    }

    /// `Authorization: Bearer <token>`, marked sensitive.
    pub fn bearer(token: &Secret, generation: u64) -> Result<Self, AuthError> {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose().trim()))
            .map_err(|_| AuthError::new(AuthStep::Token, "the access token is not a valid header value"))?;
        value.set_sensitive(true);
        Ok(Credentials { headers: vec![(reqwest::header::AUTHORIZATION, value)], generation })
    }
}

/// A refusal by the server: HTTP 401 or 403, with its `WWW-Authenticate` challenges.
#[derive(Debug, Clone)]
pub struct Rejection {
    /// 401 or 403.
    pub status: u16,
    /// The `Bearer` (or `DPoP`) challenge of the `WWW-Authenticate` headers, if any.
    pub challenge: Option<Challenge>,
    /// The `DPoP` challenge, if any (RFC 9449 §7.1: `use_dpop_nonce`, `invalid_dpop_proof`).
    pub dpop: Option<Challenge>,
    /// The `DPoP-Nonce` header (RFC 9449 §9), if any.
    pub dpop_nonce: Option<String>,
    /// The generation of the credentials the refused request carried.
    pub generation: u64,
    /// How many times this request was already retried after a refusal.
    pub attempt: u32,
}

/// What the transport does after a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// New credentials are available: send the request again (once).
    Retry,
    /// Nothing changed: report the refusal as it is.
    GiveUp,
}

/// The seam between the HTTP transports and whatever authorizes their requests.
///
/// The transport calls [`credentials`](Authorization::credentials) before every request and
/// [`rejected`](Authorization::rejected) when the server answers 401, or 403 with a
/// `WWW-Authenticate` challenge. Both may take as long as the provider needs (a refresh, a
/// login); the provider bounds its own steps.
pub trait Authorization: Send + Sync + fmt::Debug {
    /// The headers for `request` (none: send it without credentials), and their generation.
    fn credentials<'a>(&'a self, request: RequestInfo<'a>) -> BoxFuture<'a, Result<Credentials, AuthError>>;

    /// The server refused a request. [`Verdict::Retry`] when new credentials are available;
    /// an error when obtaining them failed (it fails the request).
    fn rejected<'a>(&'a self, rejection: &'a Rejection) -> BoxFuture<'a, Result<Verdict, AuthError>>;
}

/// A fixed bearer token.
#[derive(Debug, Clone)]
pub struct StaticBearer(pub Secret);

impl Authorization for StaticBearer {
    fn credentials<'a>(&'a self, _: RequestInfo<'a>) -> BoxFuture<'a, Result<Credentials, AuthError>> {
        futures::future::ready(Credentials::bearer(&self.0, 0)).boxed()
    }

    fn rejected<'a>(&'a self, _: &'a Rejection) -> BoxFuture<'a, Result<Verdict, AuthError>> {
        futures::future::ready(Ok(Verdict::GiveUp)).boxed()
    }
}

/// Most sends of one request: the first, and the retries after refusals.
const MAX_SENDS: u32 = 3;

/// Send one request through `send` (which builds it with the given headers and sends it),
/// with the credentials of `auth`; on 401, or 403 with a challenge, ask `auth` and send again
/// when it has new credentials. A failed authorization fails the request with
/// [`TransportError::Auth`](crate::TransportError::Auth).
pub(crate) async fn send_authorized<F, Fut, B>(
    auth: Option<&std::sync::Arc<dyn Authorization>>,
    method: &reqwest::Method,
    url: &url::Url,
    mut send: F,
) -> Result<http::Response<B>, crate::TransportError>
where
    F: FnMut(Vec<(HeaderName, HeaderValue)>) -> Fut,
    Fut: std::future::Future<Output = Result<http::Response<B>, crate::TransportError>>,
{
    let Some(auth) = auth else { return send(Vec::new()).await };
    let mut attempt = 0;
    loop {
        let credentials = auth.credentials(RequestInfo { method, url }).await.map_err(crate::TransportError::Auth)?;
        let generation = credentials.generation;
        let response = send(credentials.headers).await?;
        let status = response.status().as_u16();
        if status != 401 && status != 403 {
            return Ok(response);
        }
        let values = response.headers().get_all(reqwest::header::WWW_AUTHENTICATE);
        let texts: Vec<&str> = values.iter().filter_map(|v| v.to_str().ok()).collect();
        let challenge = Challenge::pick(texts.iter().copied());
        if status == 403 && challenge.is_none() {
            return Ok(response);
        }
        let dpop = texts.iter().flat_map(|t| challenge::parse(t)).find(|c| c.scheme == "dpop");
        let dpop_nonce =
            response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok()).map(|v| v.trim().to_owned());
        // The provider hears of the last refusal too, so that it can name it (an
        // `AuthStep::Refused` error) rather than leave a bare 401 or 403.
        let rejection = Rejection { status, challenge, dpop, dpop_nonce, generation, attempt };
        match auth.rejected(&rejection).await.map_err(crate::TransportError::Auth)? {
            Verdict::Retry if attempt + 1 < MAX_SENDS => attempt += 1,
            Verdict::Retry | Verdict::GiveUp => return Ok(response),
        }
    }
}
