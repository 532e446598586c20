//! Client registration, in the spec's order: credentials registered beforehand (from config),
//! a client ID metadata document (an https URL as the client id) when the authorization server
//! accepts one, dynamic client registration (RFC 7591) otherwise. A dynamic registration is kept
//! in the token store and reused while its redirect URI still fits.

use serde_json::{Value, json};

use super::OAuthSettings;
use super::discovery::ServerMetadata;
use super::http::AuthHttp;
use crate::Secret;
use crate::auth::store::{ClientRegistration, now_secs};
use crate::auth::{AuthError, AuthStep};
use crate::redact::{redact_url, remember_secret};

fn registration(message: String) -> AuthError {
    AuthError::new(AuthStep::Registration, message)
}

/// The token endpoint authentication method to ask for in a dynamic registration: `none` (a
/// native client keeps no secret) when the server takes it, else a secret method it takes.
fn requested_method(server: &ServerMetadata) -> &'static str {
    let supported = server.token_endpoint_auth_methods_supported.as_deref().unwrap_or_default();
    for method in ["none", "client_secret_basic", "client_secret_post"] {
        if supported.iter().any(|m| m == method) {
            return method;
        }
    }
    if supported.is_empty() { "none" } else { "client_secret_basic" }
}

/// Whether a registration from the store can be used with `redirect_uri` and is still valid.
fn reusable(client: &ClientRegistration, redirect_uri: &str) -> bool {
    let unexpired = client.client_secret_expires_at.is_none_or(|t| t == 0 || t > now_secs() + 60);
    let fits = client.source != "dynamic" || client.redirect_uris.iter().any(|r| r == redirect_uri);
    unexpired && fits
}

/// The client to use with `server`: the configured one, a stored one, a metadata document, or
/// a new dynamic registration.
pub(crate) async fn client_for(
    http: &AuthHttp,
    settings: &OAuthSettings,
    server: &ServerMetadata,
    stored: Option<&ClientRegistration>,
    redirect_uri: &str,
) -> Result<ClientRegistration, AuthError> {
    if let Some(client_id) = settings.client_id.as_deref().filter(|c| !c.is_empty()) {
        return Ok(ClientRegistration {
            client_id: client_id.to_owned(),
            client_secret: settings.client_secret.clone(),
            token_endpoint_auth_method: None,
            redirect_uris: vec![redirect_uri.to_owned()],
            source: "preregistered".into(),
            client_secret_expires_at: None,
        });
    }
    if let Some(url) = settings.client_metadata_url.as_deref().filter(|_| server.client_id_metadata_document_supported)
    {
        return Ok(ClientRegistration {
            client_id: url.to_owned(),
            client_secret: None,
            token_endpoint_auth_method: Some("none".into()),
            redirect_uris: vec![redirect_uri.to_owned()],
            source: "cimd".into(),
            client_secret_expires_at: None,
        });
    }
    if let Some(client) = stored.filter(|c| c.source == "dynamic" && reusable(c, redirect_uri)) {
        return Ok(client.clone());
    }
    let Some(endpoint) = server.registration_endpoint.as_deref() else {
        let hint = if settings.client_metadata_url.is_none() && server.client_id_metadata_document_supported {
            " (it accepts client ID metadata documents: configure one)"
        } else {
            ""
        };
        return Err(registration(format!(
            "the authorization server {} offers no dynamic client registration and no client id is configured{hint}",
            server.issuer
        )));
    };
    register(http, settings, server, endpoint, redirect_uri).await
}

/// Dynamic client registration (RFC 7591).
async fn register(
    http: &AuthHttp,
    settings: &OAuthSettings,
    server: &ServerMetadata,
    endpoint: &str,
    redirect_uri: &str,
) -> Result<ClientRegistration, AuthError> {
    let url = url::Url::parse(endpoint)
        .map_err(|e| registration(format!("the registration endpoint {endpoint:?} is not a URL: {e}")))?;
    let method = requested_method(server);
    let mut body = json!({
        "client_name": settings.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    });
    if let Some(uri) = &settings.client_uri {
        body["client_uri"] = Value::String(uri.clone());
    }
    let answer = http
        .post_json(&url, &body)
        .await
        .map_err(|e| registration(format!("registering at {}: {e}", redact_url(&url))))?;
    if !(200..300).contains(&answer.status) {
        let detail = answer
            .json()
            .and_then(|v| {
                let error = v.get("error")?.as_str()?.to_owned();
                let description = v.get("error_description").and_then(Value::as_str).unwrap_or("");
                Some(format!("{error} {description}").trim().to_owned())
            })
            .unwrap_or_else(|| "no OAuth error in the answer".into());
        return Err(registration(format!(
            "the registration endpoint {} answered HTTP {}: {detail}",
            redact_url(&url),
            answer.status
        )));
    }
    let value = answer.json().unwrap_or(Value::Null);
    let Some(client_id) = value.get("client_id").and_then(Value::as_str).filter(|c| !c.is_empty()) else {
        return Err(registration(format!("the registration at {} returned no client_id", redact_url(&url))));
    };
    let client_secret = value.get("client_secret").and_then(Value::as_str).filter(|s| !s.is_empty()).map(|s| {
        remember_secret(s);
        Secret::new(s)
    });
    let registered_uris: Vec<String> = value
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .filter(|v: &Vec<String>| !v.is_empty())
        .unwrap_or_else(|| vec![redirect_uri.to_owned()]);
    tracing::info!(issuer = %server.issuer, client_id, "registered a new OAuth client");
    Ok(ClientRegistration {
        client_id: client_id.to_owned(),
        client_secret,
        token_endpoint_auth_method: value
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or(Some(method.to_owned())),
        redirect_uris: registered_uris,
        source: "dynamic".into(),
        client_secret_expires_at: value.get("client_secret_expires_at").and_then(Value::as_u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_for_a_method_the_server_takes() {
        let mut server = ServerMetadata::default();
        assert_eq!(requested_method(&server), "none");
        server.token_endpoint_auth_methods_supported = Some(vec!["client_secret_post".into()]);
        assert_eq!(requested_method(&server), "client_secret_post");
        server.token_endpoint_auth_methods_supported = Some(vec!["client_secret_basic".into(), "none".into()]);
        assert_eq!(requested_method(&server), "none");
    }

    #[test]
    fn a_dynamic_registration_is_reused_only_for_its_redirect() {
        let client = ClientRegistration {
            client_id: "c".into(),
            client_secret: None,
            token_endpoint_auth_method: None,
            redirect_uris: vec!["http://127.0.0.1:5/callback".into()],
            source: "dynamic".into(),
            client_secret_expires_at: None,
        };
        assert!(reusable(&client, "http://127.0.0.1:5/callback"));
        assert!(!reusable(&client, "http://127.0.0.1:6/callback"));
        let expired = ClientRegistration { client_secret_expires_at: Some(5), ..client };
        assert!(!reusable(&expired, "http://127.0.0.1:5/callback"));
    }
}
