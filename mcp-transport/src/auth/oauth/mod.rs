//! The MCP authorization flow (OAuth 2.1), as an [`Authorization`] provider: [`OAuthClient`].
//!
//! - Before a request: the stored access token, refreshed first when it expires within a
//!   minute (single-flight: concurrent requests wait for one refresh).
//! - On 401: discovery ([`discovery`]: protected resource metadata, then the authorization
//!   server's metadata, with the 2025-03-26 fallback), then a refresh when the issuer is the same
//!   and a refresh token is kept, else the authorization code flow: registration
//!   (`registration`), the browser step, the code exchange (`token`). A rejected refresh
//!   token leads back to the code flow; a changed issuer to a new registration.
//! - On 403 `insufficient_scope`: the code flow again with the union of the token's scopes and
//!   the challenged ones, unless the token already had them (no loop).
//! - Credentials are kept per (resource, issuer) in the [`TokenStore`]. Without a
//!   [`BrowserStep`] (an unattended run) a needed login is an [`AuthStep::LoginRequired`] error.
//! - Unattended grants ([`Grant`]: client credentials, workload identity, enterprise-managed)
//!   replace the code flow and the browser: see [`grant`].
//! - DPoP (RFC 9449, [`DpopPolicy`]): when the authorization server advertises it (or the
//!   settings ask for it), token requests and MCP requests carry fresh proofs of a key kept
//!   with the tokens, and each server's nonce is honoured (one retry per nonce).

pub mod discovery;
mod dpop;
pub mod grant;
mod http;
mod registration;
mod token;
mod unattended;

pub use dpop::DpopPolicy;
pub use grant::{CredentialProvider, CredentialSource, EnterpriseSettings, Grant};

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use url::Url;

use self::discovery::Discovered;
use self::http::AuthHttp;
use self::token::TokenClient;
use super::browser::BrowserStep;
use super::jose::{DpopKey, NonceFrom, SigningKey};
use super::store::{ClientRegistration, CredentialKey, MemoryStore, StoredCredentials, TokenStore, Tokens, now_secs};
use super::{AuthError, AuthStep, Authorization, Challenge, Credentials, Rejection, RequestInfo, Verdict};
use crate::Secret;
use crate::redact::redact_url;

/// How the OAuth client registers, what it asks for, and where it keeps what it gets.
#[derive(Clone)]
pub struct OAuthSettings {
    /// A client id registered beforehand.
    pub client_id: Option<String>,
    /// Its secret, for a confidential client.
    pub client_secret: Option<Secret>,
    /// The https URL of this client's metadata document, used as the client id where the
    /// authorization server accepts one.
    pub client_metadata_url: Option<String>,
    /// The name given in a dynamic registration.
    pub client_name: String,
    /// The client's home page, given in a dynamic registration.
    pub client_uri: Option<String>,
    /// Scopes to ask for instead of the ones the server names.
    pub scopes: Option<Vec<String>>,
    /// How tokens are obtained (default: the authorization code flow).
    pub grant: Grant,
    /// The client's private key, for `private_key_jwt` client authentication (RFC 7523).
    pub client_key: Option<SigningKey>,
    /// The token endpoint authentication method to use (`client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt`, `none`) instead of the one chosen from the
    /// client's credentials and the server's metadata.
    pub token_endpoint_auth_method: Option<String>,
    /// Whether tokens are DPoP-bound (default: when the authorization server offers it).
    pub dpop: DpopPolicy,
    /// The browser step; `None`: a login that is needed fails with [`AuthStep::LoginRequired`].
    pub browser: Option<Arc<dyn BrowserStep>>,
    /// Where registrations and tokens are kept.
    pub store: Arc<dyn TokenStore>,
    /// How long one HTTP exchange of the flow may take (default 30 s).
    pub http_timeout: Duration,
    /// How long before its expiry a token is refreshed (default 60 s).
    pub refresh_margin: Duration,
}

impl Default for OAuthSettings {
    fn default() -> Self {
        OAuthSettings {
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            client_name: "mcp-client".into(),
            client_uri: None,
            scopes: None,
            grant: Grant::AuthorizationCode,
            client_key: None,
            token_endpoint_auth_method: None,
            dpop: DpopPolicy::Auto,
            browser: None,
            store: Arc::new(MemoryStore::new()),
            http_timeout: Duration::from_secs(30),
            refresh_margin: Duration::from_secs(60),
        }
    }
}

impl fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_name", &self.client_name)
            .field("scopes", &self.scopes)
            .field("grant", &self.grant)
            .field("client_key", &self.client_key)
            .field("token_endpoint_auth_method", &self.token_endpoint_auth_method)
            .field("dpop", &self.dpop)
            .field("browser", &self.browser)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// What the store knows of a server's authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthState {
    /// No tokens are kept.
    None,
    /// A token is kept; `expires_at` in seconds since the epoch, when known.
    Authorized {
        /// The issuer.
        issuer: String,
        /// When the access token expires.
        expires_at: Option<u64>,
        /// Whether it can be refreshed.
        refreshable: bool,
        /// The scopes granted.
        scopes: Vec<String>,
    },
    /// The kept token has expired.
    Expired {
        /// The issuer.
        issuer: String,
        /// Whether a refresh token is kept.
        refreshable: bool,
    },
}

#[derive(Default)]
struct State {
    loaded: bool,
    generation: u64,
    current: Option<(CredentialKey, StoredCredentials)>,
    /// The DPoP key of an entry, loaded or made once (its nonces live with it).
    dpop: Option<(CredentialKey, Arc<DpopKey>, Secret)>,
}

/// The OAuth 2.1 client of one MCP server. See the module docs.
pub struct OAuthClient {
    name: String,
    server: Url,
    resource_key: String,
    settings: OAuthSettings,
    /// Built on first use (see [`OAuthClient::http`]); an error is kept as its message.
    http: OnceLock<Result<AuthHttp, String>>,
    state: Mutex<State>,
    flight: tokio::sync::Mutex<()>,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthClient")
            .field("name", &self.name)
            .field("server", &redact_url(&self.server))
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut out = a.to_vec();
    for s in b {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

impl OAuthClient {
    /// The client of the MCP server `name` at `server_url`.
    pub fn new(name: impl Into<String>, server_url: &str, settings: OAuthSettings) -> Result<Self, AuthError> {
        let server = crate::http_policy::parse_url(server_url)
            .map_err(|e| AuthError::new(AuthStep::Discovery, e.to_string()))?;
        Ok(OAuthClient {
            name: name.into(),
            resource_key: discovery::canonical_resource(&server),
            server,
            http: OnceLock::new(),
            settings,
            state: Mutex::new(State::default()),
            flight: tokio::sync::Mutex::new(()),
        })
    }

    /// The HTTP client of the authorization flow, built the first time the flow needs one: a
    /// server that never asks for authorization, or whose stored tokens are still good, costs
    /// none (building one loads the platform's root certificates: about 6 ms, per server, at
    /// every host start). A client that cannot be built fails the step that needed it.
    fn http(&self) -> Result<&AuthHttp, AuthError> {
        let built = self.http.get_or_init(|| {
            crate::http_policy::client_builder(Duration::from_secs(10))
                .build()
                .map(|client| AuthHttp { client, timeout: self.settings.http_timeout, dpop: None })
                .map_err(|e| crate::redact::describe(&e))
        });
        built.as_ref().map_err(|e| AuthError::new(AuthStep::Discovery, format!("the authorization HTTP client: {e}")))
    }

    /// Whether the authorization HTTP client was built (tests: it is built only when needed).
    #[cfg(test)]
    pub(crate) fn http_built(&self) -> bool {
        self.http.get().is_some()
    }

    /// The key of this server in the store: its canonical URL.
    pub fn resource(&self) -> &str {
        &self.resource_key
    }

    /// Load the newest stored entry of this resource, once.
    fn ensure_loaded(&self) -> Result<(), AuthError> {
        if lock(&self.state).loaded {
            return Ok(());
        }
        let newest = self.settings.store.entries(&self.resource_key)?.into_iter().next();
        let mut state = lock(&self.state);
        if !state.loaded {
            state.loaded = true;
            state.current = newest;
        }
        Ok(())
    }

    fn snapshot(&self) -> (u64, Option<(CredentialKey, StoredCredentials)>) {
        let state = lock(&self.state);
        (state.generation, state.current.clone())
    }

    /// Keep `creds` as the current credentials, in memory and in the store.
    fn keep(&self, key: CredentialKey, mut creds: StoredCredentials) -> Result<u64, AuthError> {
        creds.updated_at = now_secs();
        self.settings.store.save(&key, &creds)?;
        let mut state = lock(&self.state);
        state.generation += 1;
        state.current = Some((key, creds));
        Ok(state.generation)
    }

    /// Whether `tokens` expire within the refresh margin, which is at most half their lifetime
    /// (a token that lives 30 s is used for 15 s, not renewed at every request, nor unused).
    fn expiring(&self, tokens: &Tokens) -> bool {
        let Some(expires_at) = tokens.expires_at else { return false };
        let mut margin = self.settings.refresh_margin.as_secs();
        if let Some(issued_at) = tokens.issued_at {
            margin = margin.min(expires_at.saturating_sub(issued_at) / 2);
        }
        expires_at <= now_secs().saturating_add(margin)
    }

    /// Refresh the current tokens. `Ok(false)`: the grant was refused and the tokens dropped.
    async fn refresh(&self, key: &CredentialKey, mut creds: StoredCredentials) -> Result<bool, AuthError> {
        let (Some(tokens), Some(client)) = (creds.tokens.clone(), creds.client.clone()) else { return Ok(false) };
        let Some(refresh_token) = tokens.refresh_token.clone() else { return Ok(false) };
        let Some(token_endpoint) = creds.endpoints.token_endpoint.clone() else { return Ok(false) };
        let dpop = if creds.dpop_key.is_some() || tokens.token_type.eq_ignore_ascii_case("dpop") {
            Some(self.dpop_key(key, &mut creds)?)
        } else {
            None
        };
        let http = self.http()?.with_dpop(dpop);
        let tc = TokenClient {
            http: &http,
            client: &client,
            authorization_endpoint: None,
            token_endpoint: &token_endpoint,
            auth_methods: &creds.endpoints.token_endpoint_auth_methods_supported,
            resource: &creds.resource_indicator(&self.resource_key),
        };
        match tc.refresh(&refresh_token, &tokens.scopes).await {
            Ok(new) => {
                tracing::debug!(server = %self.name, "refreshed the access token");
                creds.tokens = Some(new);
                self.keep(key.clone(), creds)?;
                Ok(true)
            }
            Err(f) if f.grant_refused() => {
                tracing::info!(server = %self.name, "the refresh token was refused; a new authorization is needed");
                creds.tokens = None;
                self.keep(key.clone(), creds)?;
                Ok(false)
            }
            Err(f) => Err(f.into_error("refreshing the access token")),
        }
    }

    fn scopes_for(&self, challenge: Option<&Challenge>, found: &Discovered) -> Vec<String> {
        let base = self
            .settings
            .scopes
            .clone()
            .or_else(|| challenge.and_then(Challenge::scopes))
            .or_else(|| found.resource.as_ref().and_then(|r| r.scopes_supported.clone()))
            .unwrap_or_default();
        // A refresh token is for a person's login; unattended grants simply run again.
        if self.settings.grant.is_unattended() { base } else { with_offline_access(base, found) }
    }

    /// The code flow with `scopes`, at the server `found` names. Returns the new generation.
    async fn authorize(&self, found: &Discovered, scopes: Vec<String>) -> Result<u64, AuthError> {
        let server = &found.server;
        let issuer = server.issuer.clone();
        let s256 = server.code_challenge_methods_supported.as_deref().is_some_and(|m| m.iter().any(|m| m == "S256"));
        if !s256 && !found.defaulted {
            return Err(AuthError::new(
                AuthStep::Authorization,
                format!("the authorization server {issuer} does not advertise PKCE with S256: refusing to authorize"),
            ));
        }
        let Some(browser) = self.settings.browser.clone() else {
            return Err(AuthError::new(
                AuthStep::LoginRequired,
                format!("{} requires a login at {issuer}, and this run cannot open a browser", self.name),
            ));
        };
        let key = CredentialKey { resource: self.resource_key.clone(), issuer: issuer.clone() };
        let stored = self.settings.store.load(&key)?.unwrap_or_default();
        let preferred = stored.client.as_ref().and_then(|c| c.redirect_uris.first().cloned());
        let pending = browser.prepare(preferred.as_deref()).await?;
        let redirect_uri = pending.redirect_uri().to_owned();
        let client =
            registration::client_for(self.http()?, &self.settings, server, stored.client.as_ref(), &redirect_uri)
                .await?;
        let (mut creds, http) = self.new_entry(&key, found, Some(client.clone()), &stored)?;
        if stored.client.as_ref() != Some(&client) {
            // Kept at once: a registration is reused even when this authorization fails.
            creds.updated_at = now_secs();
            self.settings.store.save(&key, &creds)?;
        }
        let Some(token_endpoint) = server.token_endpoint.clone() else {
            return Err(AuthError::new(AuthStep::Discovery, format!("{issuer} names no token endpoint")));
        };
        let tc = TokenClient {
            http: &http,
            client: &client,
            authorization_endpoint: server.authorization_endpoint.as_deref(),
            token_endpoint: &token_endpoint,
            auth_methods: server.token_endpoint_auth_methods_supported.as_deref().unwrap_or_default(),
            resource: &found.resource_indicator,
        };
        let code = tc.authorization_url(&redirect_uri, &scopes)?;
        tracing::info!(server = %self.name, %issuer, scopes = %scopes.join(" "), "authorization needed: starting the browser step");
        let response = pending.complete(code.url.clone()).await?;
        let tokens = tc
            .exchange(code, &redirect_uri, response, &issuer, server.authorization_response_iss_parameter_supported)
            .await?;
        creds.tokens = Some(tokens);
        self.keep(key, creds)
    }

    /// A new entry of `key` for `found`'s server and `client`, keeping the stored DPoP key, and
    /// the HTTP client of its token requests (proving that key when DPoP is used).
    fn new_entry(
        &self,
        key: &CredentialKey,
        found: &Discovered,
        client: Option<ClientRegistration>,
        stored: &StoredCredentials,
    ) -> Result<(StoredCredentials, AuthHttp), AuthError> {
        let mut creds = StoredCredentials {
            client,
            tokens: None,
            endpoints: found.server.endpoints(),
            resource: Some(found.resource_indicator.clone()),
            dpop_key: stored.dpop_key.clone(),
            updated_at: 0,
        };
        let dpop = if self.wants_dpop(found) { Some(self.dpop_key(key, &mut creds)?) } else { None };
        Ok((creds, self.http()?.with_dpop(dpop)))
    }

    /// Run the whole flow now, whatever is stored: what `mcp login` does. The server is asked
    /// first (an unauthenticated POST), so that its challenge's scope and metadata URL are used.
    pub async fn login(&self) -> Result<AuthState, AuthError> {
        let _flight = self.flight.lock().await;
        let (challenge, dpop_challenged) = self.probe().await;
        let mut found = discovery::discover(self.http()?, &self.server, challenge.as_ref()).await?;
        found.resource_dpop |= dpop_challenged;
        let scopes = self.scopes_for(challenge.as_ref(), &found);
        self.obtain(&found, scopes).await?;
        self.state()
    }

    /// New tokens from `found`'s authorization server for `scopes`: the configured unattended
    /// grant, else the code flow.
    async fn obtain(&self, found: &Discovered, scopes: Vec<String>) -> Result<u64, AuthError> {
        if self.settings.grant.is_unattended() {
            self.unattended(found, scopes).await
        } else {
            self.authorize(found, scopes).await
        }
    }

    /// The challenge of an unauthenticated request, if the server answers with one, and
    /// whether a `DPoP` challenge was among them.
    async fn probe(&self) -> (Option<Challenge>, bool) {
        let body = br#"{"jsonrpc":"2.0","id":"mcp-auth-probe","method":"ping"}"#.to_vec();
        // Without a client no challenge is heard; the discovery that follows reports why.
        let Ok(http) = self.http() else { return (None, false) };
        let request = http
            .client
            .post(self.server.clone())
            .header(reqwest::header::ACCEPT, "application/json, text/event-stream")
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let Ok(Ok(response)) = tokio::time::timeout(self.settings.http_timeout, request.send()).await else {
            return (None, false);
        };
        let values: Vec<&str> = response
            .headers()
            .get_all(reqwest::header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let dpop = values.iter().flat_map(|v| super::challenge::parse(v)).any(|c| c.scheme == "dpop");
        (Challenge::pick(values), dpop)
    }

    /// Forget every registration and token of this server. Returns how many entries went.
    pub fn logout(&self) -> Result<usize, AuthError> {
        let removed = self.settings.store.remove(&self.resource_key)?;
        let mut state = lock(&self.state);
        state.current = None;
        state.dpop = None;
        state.loaded = true;
        state.generation += 1;
        Ok(removed)
    }

    /// What the store knows of this server's authorization.
    pub fn state(&self) -> Result<AuthState, AuthError> {
        let newest =
            self.settings.store.entries(&self.resource_key)?.into_iter().find_map(|(k, c)| Some((k, c.tokens?)));
        let Some((key, tokens)) = newest else { return Ok(AuthState::None) };
        let refreshable = tokens.refresh_token.is_some();
        Ok(match tokens.expires_at {
            Some(t) if t <= now_secs() => AuthState::Expired { issuer: key.issuer, refreshable },
            expires_at => AuthState::Authorized { issuer: key.issuer, expires_at, refreshable, scopes: tokens.scopes },
        })
    }

    /// The header(s) carrying `tokens` on `request`: a bearer token, or a DPoP-bound token and
    /// a fresh proof.
    fn present(
        &self,
        key: &CredentialKey,
        creds: &StoredCredentials,
        tokens: &Tokens,
        request: RequestInfo<'_>,
        generation: u64,
    ) -> Result<Credentials, AuthError> {
        if !tokens.token_type.eq_ignore_ascii_case("dpop") {
            return Credentials::bearer(&tokens.access_token, generation);
        }
        let dpop = self.dpop_key(key, &mut creds.clone())?;
        let proof =
            dpop.proof(request.method.as_str(), request.url, NonceFrom::ResourceServer, Some(&tokens.access_token))?;
        Credentials::dpop(&tokens.access_token, &proof, generation)
    }

    /// The current tokens on `request`, if any.
    fn present_current(&self, request: RequestInfo<'_>) -> Result<Credentials, AuthError> {
        let (generation, current) = self.snapshot();
        match current {
            Some((key, creds)) => match creds.tokens.clone() {
                Some(t) => self.present(&key, &creds, &t, request, generation),
                None => Ok(Credentials::none(generation)),
            },
            None => Ok(Credentials::none(generation)),
        }
    }

    async fn credentials_now(&self, request: RequestInfo<'_>) -> Result<Credentials, AuthError> {
        self.ensure_loaded()?;
        let (generation, current) = self.snapshot();
        let Some((key, creds)) = current else { return Ok(Credentials::none(generation)) };
        let Some(tokens) = creds.tokens.clone() else { return Ok(Credentials::none(generation)) };
        if !self.expiring(&tokens) {
            return self.present(&key, &creds, &tokens, request, generation);
        }
        if tokens.refresh_token.is_none() {
            if self.settings.grant.is_unattended() && creds.endpoints.token_endpoint.is_some() {
                return self.regrant(key, creds, tokens, request, generation).await;
            }
            // Expired and not refreshable: send nothing, the server's challenge starts the flow.
            return Ok(Credentials::none(generation));
        }
        let _flight = self.flight.lock().await;
        let (now_generation, now_current) = self.snapshot();
        if now_generation == generation {
            if let Err(e) = self.refresh(&key, creds.clone()).await {
                tracing::warn!(server = %self.name, error = %e, "could not refresh the access token; sending the old one");
                return self.present(&key, &creds, &tokens, request, generation);
            }
        } else if now_current.and_then(|(_, c)| c.tokens).is_none() {
            return Ok(Credentials::none(now_generation));
        }
        self.present_current(request)
    }

    /// Run the unattended grant again before the token expires, at the endpoints kept with it
    /// (no discovery). When that fails the old token is sent while it is valid, else none: the
    /// server's challenge then starts the whole flow.
    async fn regrant(
        &self,
        key: CredentialKey,
        creds: StoredCredentials,
        tokens: Tokens,
        request: RequestInfo<'_>,
        generation: u64,
    ) -> Result<Credentials, AuthError> {
        let _flight = self.flight.lock().await;
        if self.snapshot().0 == generation {
            let server = discovery::ServerMetadata {
                issuer: key.issuer.clone(),
                token_endpoint: creds.endpoints.token_endpoint.clone(),
                token_endpoint_auth_methods_supported: Some(
                    creds.endpoints.token_endpoint_auth_methods_supported.clone(),
                ),
                dpop_signing_alg_values_supported: creds.dpop_key.is_some().then(|| vec!["ES256".to_owned()]),
                ..Default::default()
            };
            let found = Discovered {
                resource: None,
                resource_indicator: creds.resource_indicator(&self.resource_key),
                server,
                defaulted: false,
                // DPoP stays on for a token that was bound.
                resource_dpop: creds.dpop_key.is_some(),
            };
            if let Err(e) = self.unattended(&found, tokens.scopes.clone()).await {
                tracing::warn!(server = %self.name, error = %e, "could not renew the expiring token");
                let valid = tokens.expires_at.is_some_and(|t| t > now_secs());
                return if valid {
                    self.present(&key, &creds, &tokens, request, generation)
                } else {
                    Ok(Credentials::none(generation))
                };
            }
        }
        self.present_current(request)
    }

    async fn rejected_now(&self, rejection: &Rejection) -> Result<Verdict, AuthError> {
        if let Some(verdict) = self.dpop_rejected(rejection) {
            return Ok(verdict);
        }
        let challenge = rejection.challenge.as_ref();
        let step_up = rejection.status == 403 || challenge.and_then(Challenge::error) == Some("insufficient_scope");
        if rejection.status == 403 && challenge.and_then(Challenge::error) != Some("insufficient_scope") {
            return Ok(Verdict::GiveUp);
        }
        let _flight = self.flight.lock().await;
        self.ensure_loaded()?;
        let (generation, current) = self.snapshot();
        if generation != rejection.generation {
            return Ok(Verdict::Retry);
        }
        let held = current.as_ref().and_then(|(_, c)| c.tokens.clone());
        if rejection.attempt >= 2 || (rejection.attempt >= 1 && !step_up) {
            return Err(AuthError::new(
                AuthStep::Refused,
                format!("{} refused the new credentials (HTTP {})", self.name, rejection.status),
            ));
        }
        if step_up {
            let challenged = challenge.and_then(Challenge::scopes).unwrap_or_default();
            let had = held.as_ref().map(|t| t.scopes.clone()).unwrap_or_default();
            if held.is_some() && challenged.iter().all(|s| had.contains(s)) {
                return Err(AuthError::new(
                    AuthStep::Refused,
                    format!(
                        "{} asks for the scope {:?}, which the current token already has: not authorizing again",
                        self.name,
                        challenged.join(" ")
                    ),
                ));
            }
            let mut found = discovery::discover(self.http()?, &self.server, challenge).await?;
            found.resource_dpop |= rejection.dpop.is_some();
            let scopes = union(&had, &challenged);
            let scopes = if self.settings.grant.is_unattended() { scopes } else { with_offline_access(scopes, &found) };
            self.obtain(&found, scopes).await?;
            return Ok(Verdict::Retry);
        }
        let mut found = discovery::discover(self.http()?, &self.server, challenge).await?;
        found.resource_dpop |= rejection.dpop.is_some();
        // The entry of the discovered issuer is refreshed when it can be, even when this run
        // started from another issuer's (the newest entry is picked by the second it was written).
        let key = CredentialKey { resource: self.resource_key.clone(), issuer: found.server.issuer.clone() };
        let kept = match current {
            Some((current_key, creds)) if current_key == key => Some(creds),
            _ => self.settings.store.load(&key)?,
        };
        if let Some(creds) = kept
            && creds.tokens.is_some()
            && self.refresh(&key, creds).await?
        {
            return Ok(Verdict::Retry);
        }
        let scopes = self.scopes_for(challenge, &found);
        self.obtain(&found, scopes).await?;
        Ok(Verdict::Retry)
    }
}

/// `scopes`, with `offline_access` added when the authorization server lists it (and some
/// scope is asked for at all).
fn with_offline_access(mut scopes: Vec<String>, found: &Discovered) -> Vec<String> {
    let offered = found.server.scopes_supported.as_deref().unwrap_or_default();
    if !scopes.is_empty()
        && offered.iter().any(|s| s == "offline_access")
        && !scopes.iter().any(|s| s == "offline_access")
    {
        scopes.push("offline_access".into());
    }
    scopes
}

impl Authorization for OAuthClient {
    fn credentials<'a>(&'a self, request: RequestInfo<'a>) -> BoxFuture<'a, Result<Credentials, AuthError>> {
        self.credentials_now(request).boxed()
    }

    fn rejected<'a>(&'a self, rejection: &'a Rejection) -> BoxFuture<'a, Result<Verdict, AuthError>> {
        self.rejected_now(rejection).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_authorization_http_client_is_built_only_when_the_flow_needs_it() {
        // Nothing listens on port 9 of the loopback: every request is refused at once.
        let client = OAuthClient::new("s", "http://127.0.0.1:9/mcp", OAuthSettings::default()).unwrap();
        assert!(!client.http_built(), "built with the client");
        // Reading the stored credentials (there are none) is no HTTP either.
        client.ensure_loaded().unwrap();
        assert!(!client.http_built(), "built to read the store");
        // A login probes the server and looks for its metadata: then it is built (and the login
        // fails, nobody being there).
        let login = tokio::time::timeout(Duration::from_secs(30), client.login()).await.expect("the login ends");
        assert!(login.is_err(), "{login:?}");
        assert!(client.http_built(), "not built for a login");
    }
}
