//! The unattended grants in the OAuth client's flow: after discovery, instead of the browser,
//! the configured [`Grant`] runs at the authorization server's token endpoint. A refused grant
//! is an error at once: no retry, and no switch to another grant (SEP-1933).

use super::discovery::Discovered;
use super::grant::{self, ClientAuth, Grant, ID_JAG, ID_TOKEN, JWT_BEARER, TOKEN_EXCHANGE};
use super::token::TokenFailure;
use super::{OAuthClient, lock};
use crate::auth::store::{ClientRegistration, CredentialKey};
use crate::auth::{AuthError, AuthStep};

fn token_error(message: String) -> AuthError {
    AuthError::new(AuthStep::Token, message)
}

impl OAuthClient {
    /// How this client authenticates at a token endpoint whose metadata lists `supported`,
    /// for an authorization server whose issuer is `issuer`.
    fn client_auth<'a>(&'a self, client_id: &'a str, issuer: &'a str, supported: &[String]) -> ClientAuth<'a> {
        let takes = |m: &str| supported.is_empty() || supported.iter().any(|s| s == m);
        let forced = self.settings.token_endpoint_auth_method.as_deref();
        let secret = self.settings.client_secret.as_ref();
        match (forced, &self.settings.client_key, secret) {
            (Some("none"), ..) => ClientAuth::None(Some(client_id)),
            (Some("client_secret_post"), _, Some(s)) => ClientAuth::Post(client_id, s),
            (Some("client_secret_basic"), _, Some(s)) => ClientAuth::Basic(client_id, s),
            (None | Some("private_key_jwt"), Some(key), _) => {
                ClientAuth::PrivateKeyJwt { client_id, key, audience: issuer }
            }
            (_, _, Some(s)) if !takes("client_secret_basic") && takes("client_secret_post") => {
                ClientAuth::Post(client_id, s)
            }
            (_, _, Some(s)) => ClientAuth::Basic(client_id, s),
            _ => ClientAuth::None(Some(client_id)),
        }
    }

    /// Run the unattended grant at `found`'s authorization server for `scopes`, keep the
    /// tokens, and return the new generation.
    pub(super) async fn unattended(&self, found: &Discovered, scopes: Vec<String>) -> Result<u64, AuthError> {
        let server = &found.server;
        let issuer = server.issuer.clone();
        let grant_name = self.settings.grant.name();
        let Some(token_endpoint) = server.token_endpoint.clone() else {
            return Err(AuthError::new(AuthStep::Discovery, format!("{issuer} names no token endpoint")));
        };
        let client_id = self.settings.client_id.clone().filter(|c| !c.is_empty());
        let needs_id = matches!(self.settings.grant, Grant::ClientCredentials | Grant::Enterprise(_));
        if needs_id && client_id.is_none() {
            return Err(AuthError::new(
                AuthStep::Registration,
                format!("the {grant_name} grant needs a client id registered with {issuer}, and none is configured"),
            ));
        }
        let key = CredentialKey { resource: self.resource_key.clone(), issuer: issuer.clone() };
        let stored = self.settings.store.load(&key)?.unwrap_or_default();
        let client = client_id.clone().map(|client_id| ClientRegistration {
            client_id,
            client_secret: None,
            token_endpoint_auth_method: None,
            redirect_uris: Vec::new(),
            source: "preregistered".into(),
            client_secret_expires_at: None,
        });
        let (mut creds, http) = self.new_entry(&key, found, client, &stored)?;
        let supported = server.token_endpoint_auth_methods_supported.clone().unwrap_or_default();
        let auth = match client_id.as_deref() {
            Some(id) => self.client_auth(id, &issuer, &supported),
            None => ClientAuth::None(None),
        };
        let scope = scopes.join(" ");
        let resource = found.resource_indicator.as_str();
        let mut params: Vec<(&str, &str)> = Vec::new();
        let assertion;
        match &self.settings.grant {
            Grant::AuthorizationCode => {
                return Err(token_error("the authorization code flow is not an unattended grant".into()));
            }
            Grant::ClientCredentials => params.push(("grant_type", "client_credentials")),
            Grant::WorkloadIdentity { token } => {
                assertion = token.read("workload identity token", self.settings.http_timeout).await?;
                params.extend([("grant_type", JWT_BEARER), ("assertion", assertion.expose())]);
            }
            Grant::Enterprise(enterprise) => {
                assertion = self.identity_assertion(enterprise, &issuer, resource, &scope).await?;
                params.extend([("grant_type", JWT_BEARER), ("assertion", assertion.expose())]);
            }
        }
        if !scope.is_empty() {
            params.push(("scope", &scope));
        }
        params.push(("resource", resource));
        tracing::info!(server = %self.name, %issuer, grant = grant_name, auth = auth.method(), scopes = %scope, "requesting a token");
        let granted = grant::request(&http, &token_endpoint, &auth, &params, &scopes)
            .await
            .map_err(|f| refused(f, &format!("the {grant_name} grant at {issuer}")))?;
        creds.tokens = Some(granted.tokens);
        let generation = self.keep(key, creds)?;
        lock(&self.state).loaded = true;
        Ok(generation)
    }

    /// SEP-990: exchange the user's ID token at the identity provider for an identity
    /// assertion authorization grant (an ID-JAG) for the authorization server `audience` and
    /// the MCP server `resource`.
    async fn identity_assertion(
        &self,
        enterprise: &grant::EnterpriseSettings,
        audience: &str,
        resource: &str,
        scope: &str,
    ) -> Result<crate::Secret, AuthError> {
        let id_token = enterprise.id_token.read("ID token", self.settings.http_timeout).await?;
        let idp_auth = match (enterprise.client_id.as_deref(), enterprise.client_secret.as_ref()) {
            (Some(id), Some(secret)) => ClientAuth::Post(id, secret),
            (Some(id), None) => ClientAuth::None(Some(id)),
            (None, _) => ClientAuth::None(None),
        };
        let mut params = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("subject_token", id_token.expose()),
            ("subject_token_type", ID_TOKEN),
            ("audience", audience),
            ("resource", resource),
        ];
        if !scope.is_empty() {
            params.push(("scope", scope));
        }
        // The identity provider is not the MCP server's authorization server: no DPoP there.
        let http = self.http()?.with_dpop(None);
        let granted = grant::request(&http, &enterprise.token_endpoint, &idp_auth, &params, &[])
            .await
            .map_err(|f| refused(f, "the token exchange at the identity provider"))?;
        match granted.issued_token_type.as_deref() {
            Some(ID_JAG) => Ok(granted.tokens.access_token),
            other => Err(token_error(format!(
                "the identity provider issued {}, not an identity assertion grant ({ID_JAG})",
                other.map(|t| format!("a token of type {t:?}")).unwrap_or_else(|| "a token of no stated type".into())
            ))),
        }
    }
}

/// The error of a failed grant: the server's refusal (not retried) or why there was no answer.
fn refused(failure: TokenFailure, what: &str) -> AuthError {
    match failure {
        TokenFailure::Refused { error, description } => {
            let description = description.map(|d| format!(" ({d})")).unwrap_or_default();
            token_error(format!("{what} was refused: {error}{description}; not retrying"))
        }
        TokenFailure::Failed(e) => AuthError::new(e.step, format!("{what}: {}", e.message)),
    }
}
