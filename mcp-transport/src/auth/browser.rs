//! The browser step of the authorization code flow, pluggable: the flow hands the
//! authorization URL to a [`BrowserStep`] and gets back the redirect's parameters
//! ([`AuthorizationResponse`]).
//!
//! [`LoopbackBrowser`] is the one hosts and `mcp` use: it listens on 127.0.0.1 (an ephemeral
//! port, or a configured one), shows the URL to the user (opening a browser, printing it, or
//! whatever its [`UrlOpener`] does), takes exactly one redirect to its callback path, answers it
//! with a small "you can close this tab" page, and gives up after its timeout.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::{AuthError, AuthStep};

/// What the authorization server sent back to the redirect URI.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// The authorization code (absent when the server sent an error).
    pub code: Option<crate::Secret>,
    /// The `state` parameter.
    pub state: Option<String>,
    /// The `iss` parameter (RFC 9207).
    pub iss: Option<String>,
    /// The `error` parameter (`access_denied`, ...).
    pub error: Option<String>,
    /// The `error_description` parameter.
    pub error_description: Option<String>,
}

impl fmt::Debug for AuthorizationResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationResponse")
            .field("code", &self.code)
            .field("state", &self.state.as_ref().map(|_| "<redacted>"))
            .field("iss", &self.iss)
            .field("error", &self.error)
            .field("error_description", &self.error_description)
            .finish()
    }
}

impl AuthorizationResponse {
    /// The parameters of a redirect URL's query (unknown ones ignored).
    pub fn from_query(url: &url::Url) -> Self {
        let mut out =
            AuthorizationResponse { code: None, state: None, iss: None, error: None, error_description: None };
        for (k, v) in url.query_pairs() {
            let v = v.into_owned();
            match k.as_ref() {
                "code" if out.code.is_none() => out.code = Some(crate::Secret::new(v)),
                "state" if out.state.is_none() => out.state = Some(v),
                "iss" if out.iss.is_none() => out.iss = Some(v),
                "error" if out.error.is_none() => out.error = Some(v),
                "error_description" if out.error_description.is_none() => out.error_description = Some(v),
                _ => {}
            }
        }
        out
    }
}

/// A browser step about to happen: it knows its redirect URI (needed to register the client and
/// to build the authorization URL) before it is shown the authorization URL.
pub trait PendingRedirect: Send {
    /// The redirect URI to register and to send.
    fn redirect_uri(&self) -> &str;

    /// Show `authorization_url` to the user and wait for the redirect (bounded by the step's own
    /// timeout).
    fn complete(
        self: Box<Self>,
        authorization_url: url::Url,
    ) -> BoxFuture<'static, Result<AuthorizationResponse, AuthError>>;
}

/// The pluggable browser step.
pub trait BrowserStep: Send + Sync + fmt::Debug {
    /// Get ready (bind a listener, say). `preferred` is the redirect URI of an earlier
    /// registration, to reuse when possible.
    fn prepare<'a>(&'a self, preferred: Option<&'a str>) -> BoxFuture<'a, Result<Box<dyn PendingRedirect>, AuthError>>;
}

/// Shows an authorization URL to the user: opens a browser, prints it, or both.
pub type UrlOpener = Arc<dyn Fn(&url::Url) + Send + Sync>;

/// The loopback redirect listener. See the module docs.
#[derive(Clone)]
pub struct LoopbackBrowser {
    /// The port to listen on; `None`: the preferred redirect's port when free, else an
    /// ephemeral one.
    pub port: Option<u16>,
    /// The callback path (default `/callback`).
    pub path: String,
    /// How long to wait for the redirect (default 5 minutes).
    pub timeout: Duration,
    /// Shows the URL.
    pub opener: UrlOpener,
}

impl fmt::Debug for LoopbackBrowser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackBrowser")
            .field("port", &self.port)
            .field("path", &self.path)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackBrowser {
    /// A listener on an ephemeral port that shows the URL with `opener`.
    pub fn new(opener: UrlOpener) -> Self {
        LoopbackBrowser { port: None, path: "/callback".into(), timeout: Duration::from_secs(300), opener }
    }
}

#[allow(dead_code)]
fn not_yet() -> AuthError {
    AuthError::new(AuthStep::Authorization, "the loopback listener is not implemented")
}
