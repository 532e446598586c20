//! The authorization code grant with PKCE, and refresh, through the `oauth2` crate: the
//! authorization URL (with `state`, the S256 challenge, `scope` and `resource`), the checks of
//! the redirect (`state`, RFC 9207 `iss`), the code exchange and the refresh, each request
//! carrying the resource indicator (RFC 8707) and authenticating the client the way its
//! registration and the server's metadata say.

use oauth2::basic::{BasicClient, BasicErrorResponseType, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, PkceCodeVerifier,
    RedirectUrl, RefreshToken, RequestTokenError, Scope, StandardErrorResponse, TokenResponse, TokenUrl,
};

use super::http::{AuthHttp, HttpFailure};
use crate::Secret;
use crate::auth::browser::AuthorizationResponse;
use crate::auth::store::{ClientRegistration, Tokens, now_secs};
use crate::auth::{AuthError, AuthStep};
use crate::redact::remember_secret;

/// How the client authenticates at the token endpoint, from its registration, else the
/// server's list (`supported`), else the OAuth default for the secret it has.
pub(crate) fn auth_type(client: &ClientRegistration, supported: &[String]) -> (AuthType, bool) {
    let has_secret = client.client_secret.is_some();
    let method = client.token_endpoint_auth_method.clone().unwrap_or_else(|| {
        let takes = |m: &str| supported.iter().any(|s| s == m);
        if has_secret && (takes("client_secret_basic") || supported.is_empty()) {
            "client_secret_basic".into()
        } else if has_secret && takes("client_secret_post") {
            "client_secret_post".into()
        } else {
            "none".into()
        }
    });
    match method.as_str() {
        "client_secret_post" => (AuthType::RequestBody, has_secret),
        "none" => (AuthType::RequestBody, false),
        _ => (AuthType::BasicAuth, has_secret),
    }
}

/// A prepared authorization request: the URL to open, and what checking its redirect and
/// exchanging its code need.
pub(crate) struct PendingCode {
    pub(crate) url: url::Url,
    state: CsrfToken,
    verifier: PkceCodeVerifier,
    pub(crate) scopes: Vec<String>,
}

/// The endpoints and client of one authorization server.
pub(crate) struct TokenClient<'a> {
    pub(crate) http: &'a AuthHttp,
    pub(crate) client: &'a ClientRegistration,
    pub(crate) authorization_endpoint: Option<&'a str>,
    pub(crate) token_endpoint: &'a str,
    pub(crate) auth_methods: &'a [String],
    pub(crate) resource: &'a str,
}

fn token_error(message: String) -> AuthError {
    AuthError::new(AuthStep::Token, message)
}

/// Why a token request failed: the server's OAuth error, or no usable answer.
pub(crate) enum TokenFailure {
    /// The server answered with an OAuth error (`invalid_grant`, ...).
    Refused { error: String, description: Option<String> },
    /// No usable answer.
    Failed(AuthError),
}

impl TokenFailure {
    pub(crate) fn into_error(self, what: &str) -> AuthError {
        match self {
            TokenFailure::Refused { error, description } => {
                let description = description.map(|d| format!(": {d}")).unwrap_or_default();
                token_error(format!("{what}: the token endpoint refused with {error}{description}"))
            }
            TokenFailure::Failed(e) => AuthError::new(e.step, format!("{what}: {}", e.message)),
        }
    }

    /// Whether the grant itself was refused (an expired or revoked refresh token).
    pub(crate) fn grant_refused(&self) -> bool {
        matches!(self, TokenFailure::Refused { error, .. } if error == "invalid_grant" || error == "invalid_client" || error == "unauthorized_client")
    }
}

impl TokenClient<'_> {
    fn oauth_client(
        &self,
        redirect_uri: Option<&str>,
    ) -> Result<
        BasicClient<
            oauth2::EndpointMaybeSet,
            oauth2::EndpointNotSet,
            oauth2::EndpointNotSet,
            oauth2::EndpointNotSet,
            oauth2::EndpointSet,
        >,
        AuthError,
    > {
        let token_url = TokenUrl::new(self.token_endpoint.to_owned())
            .map_err(|e| token_error(format!("the token endpoint {:?} is not a URL: {e}", self.token_endpoint)))?;
        let auth_url = match self.authorization_endpoint {
            Some(a) => Some(AuthUrl::new(a.to_owned()).map_err(|e| {
                AuthError::new(AuthStep::Authorization, format!("the authorization endpoint {a:?} is not a URL: {e}"))
            })?),
            None => None,
        };
        let (auth_type, send_secret) = auth_type(self.client, self.auth_methods);
        let mut client = BasicClient::new(ClientId::new(self.client.client_id.clone()))
            .set_auth_uri_option(auth_url)
            .set_token_uri(token_url)
            .set_auth_type(auth_type);
        if send_secret && let Some(secret) = &self.client.client_secret {
            client = client.set_client_secret(ClientSecret::new(secret.expose().to_owned()));
        }
        if let Some(uri) = redirect_uri {
            client =
                client.set_redirect_uri(RedirectUrl::new(uri.to_owned()).map_err(|e| {
                    AuthError::new(AuthStep::Authorization, format!("the redirect URI is not a URL: {e}"))
                })?);
        }
        Ok(client)
    }

    /// The authorization URL for `scopes` (none: the parameter is omitted).
    pub(crate) fn authorization_url(&self, redirect_uri: &str, scopes: &[String]) -> Result<PendingCode, AuthError> {
        let client = self.oauth_client(Some(redirect_uri))?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let request = client
            .authorize_url(CsrfToken::new_random)
            .map_err(|e| AuthError::new(AuthStep::Authorization, format!("no authorization endpoint: {e}")))?
            .set_pkce_challenge(challenge)
            .add_scopes(scopes.iter().map(|s| Scope::new(s.clone())))
            .add_extra_param("resource", self.resource.to_owned());
        let (url, state) = request.url();
        Ok(PendingCode { url, state, verifier, scopes: scopes.to_vec() })
    }

    /// Check the redirect against `pending` and the server's `iss` rules, then exchange its code.
    pub(crate) async fn exchange(
        &self,
        pending: PendingCode,
        redirect_uri: &str,
        response: AuthorizationResponse,
        issuer: &str,
        iss_required: bool,
    ) -> Result<Tokens, AuthError> {
        let authz = |m: String| AuthError::new(AuthStep::Authorization, m);
        if let Some(error) = &response.error {
            let description = response.error_description.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
            return Err(authz(format!("the authorization server answered {error}{description}")));
        }
        if response.state.as_deref() != Some(pending.state.secret().as_str()) {
            return Err(authz("the redirect's state does not match the request's: refused".into()));
        }
        // RFC 9207: compared as strings, exactly as the metadata names the issuer.
        match (&response.iss, iss_required) {
            (Some(iss), _) if iss != issuer => {
                return Err(authz(format!(
                    "the redirect names the issuer {iss:?}, not {issuer:?}: refused (RFC 9207)"
                )));
            }
            (None, true) => {
                return Err(authz(format!(
                    "the redirect carries no iss, although {issuer} says it sends one: refused (RFC 9207)"
                )));
            }
            _ => {}
        }
        let Some(code) = response.code else { return Err(authz("the redirect carries no code".into())) };
        let client = self.oauth_client(Some(redirect_uri))?;
        let mut request = client
            .exchange_code(AuthorizationCode::new(code.expose().to_owned()))
            .set_pkce_verifier(pending.verifier)
            .add_extra_param("resource", self.resource.to_owned());
        if let Some(client_id) = self.client_id_in_body() {
            request = request.add_extra_param("client_id", client_id);
        }
        let result = request.request_async(self.http).await;
        tokens(result, &pending.scopes, None).map_err(|f| f.into_error("exchanging the authorization code"))
    }

    /// Refresh `refresh_token`.
    pub(crate) async fn refresh(&self, refresh_token: &Secret, scopes: &[String]) -> Result<Tokens, TokenFailure> {
        let client = self.oauth_client(None).map_err(TokenFailure::Failed)?;
        let token = RefreshToken::new(refresh_token.expose().to_owned());
        let mut request = client.exchange_refresh_token(&token).add_extra_param("resource", self.resource.to_owned());
        if let Some(client_id) = self.client_id_in_body() {
            request = request.add_extra_param("client_id", client_id);
        }
        let result = request.request_async(self.http).await;
        tokens(result, scopes, Some(refresh_token))
    }

    /// The client id to repeat in the body of a token request that authenticates with HTTP Basic
    /// (`oauth2` sends it only in the `Authorization` header then). RFC 6749 allows it there;
    /// the `mcp` Python SDK's token endpoint (FastMCP's too) refuses a request without it
    /// ("Missing client_id") even when the header names the client.
    fn client_id_in_body(&self) -> Option<String> {
        let (auth_type, send_secret) = auth_type(self.client, self.auth_methods);
        (matches!(auth_type, AuthType::BasicAuth) && send_secret).then(|| self.client.client_id.clone())
    }
}

type TokenResult =
    Result<BasicTokenResponse, RequestTokenError<HttpFailure, StandardErrorResponse<BasicErrorResponseType>>>;

/// The tokens of a token response; the scopes are the granted ones, else the requested ones.
fn tokens(result: TokenResult, requested: &[String], old_refresh: Option<&Secret>) -> Result<Tokens, TokenFailure> {
    let response = result.map_err(|e| match e {
        RequestTokenError::ServerResponse(r) => {
            TokenFailure::Refused { error: r.error().to_string(), description: r.error_description().cloned() }
        }
        RequestTokenError::Request(e) => TokenFailure::Failed(token_error(e.to_string())),
        // The body may hold a token: name only where parsing failed.
        RequestTokenError::Parse(e, _) => TokenFailure::Failed(token_error(format!(
            "the token endpoint's answer is not a token response (at {})",
            e.path()
        ))),
        RequestTokenError::Other(m) => TokenFailure::Failed(token_error(m)),
    })?;
    let access = response.access_token().secret().clone();
    remember_secret(&access);
    let refresh = response.refresh_token().map(|r| r.secret().clone());
    if let Some(r) = &refresh {
        remember_secret(r);
    }
    let scopes = match response.scopes() {
        Some(s) if !s.is_empty() => s.iter().map(|s| s.to_string()).collect(),
        _ => requested.to_vec(),
    };
    Ok(Tokens {
        access_token: Secret::new(access),
        token_type: response.token_type().as_ref().to_owned(),
        // A refresh that returns no new refresh token keeps the old one (RFC 6749 §6).
        refresh_token: refresh.map(Secret::new).or_else(|| old_refresh.cloned()),
        expires_at: response.expires_in().map(|d| now_secs().saturating_add(d.as_secs())),
        issued_at: Some(now_secs()),
        scopes,
    })
}
