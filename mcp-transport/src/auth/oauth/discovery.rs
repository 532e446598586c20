//! Discovery: the protected resource metadata (RFC 9728) of the MCP server, and the metadata
//! of its authorization server (RFC 8414, OpenID Connect Discovery), in the order the MCP
//! authorization spec gives, with the 2025-03-26 fallback for servers that publish neither.

use serde::Deserialize;
use url::Url;

use super::http::AuthHttp;
use crate::auth::store::Endpoints;
use crate::auth::{AuthError, AuthStep, Challenge};
use crate::redact::redact_url;

/// The protected resource metadata (the members the flow reads).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ResourceMetadata {
    /// The resource identifier.
    #[serde(default)]
    pub resource: Option<String>,
    /// The authorization servers' issuers.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes the resource knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// RFC 9728: the DPoP proof algorithms the resource accepts.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// RFC 9728: the resource takes DPoP-bound tokens only.
    #[serde(default)]
    pub dpop_bound_access_tokens_required: bool,
}

impl ResourceMetadata {
    /// Whether the resource says it takes DPoP-bound tokens.
    pub fn offers_dpop(&self) -> bool {
        self.dpop_bound_access_tokens_required || self.dpop_signing_alg_values_supported.is_some()
    }
}

/// An authorization server's metadata (the members the flow reads).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServerMetadata {
    /// The issuer.
    #[serde(default)]
    pub issuer: String,
    /// The authorization endpoint.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// The token endpoint.
    #[serde(default)]
    pub token_endpoint: Option<String>,
    /// The dynamic client registration endpoint.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// The scopes it knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// The PKCE methods.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// The token endpoint's client authentication methods.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Client ID metadata documents accepted as client ids.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: the `iss` parameter is sent on authorization responses.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// RFC 9449: the DPoP proof algorithms it accepts (it issues DPoP-bound tokens).
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// The grant types it supports.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// The endpoints to keep in the store.
    pub(crate) fn endpoints(&self) -> Endpoints {
        Endpoints {
            authorization_endpoint: self.authorization_endpoint.clone(),
            token_endpoint: self.token_endpoint.clone(),
            token_endpoint_auth_methods_supported: self
                .token_endpoint_auth_methods_supported
                .clone()
                .unwrap_or_default(),
        }
    }
}

/// What discovery found.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The protected resource metadata, when the server publishes it.
    pub resource: Option<ResourceMetadata>,
    /// The resource indicator to send (RFC 8707): the metadata's `resource`, else the server's
    /// canonical URL.
    pub resource_indicator: String,
    /// The authorization server's metadata.
    pub server: ServerMetadata,
    /// Whether the metadata was made up from the 2025-03-26 default endpoints.
    pub defaulted: bool,
    /// Whether the resource server takes DPoP-bound tokens: its challenge used the `DPoP`
    /// scheme, or its metadata says so. A resource that challenges with `Bearer` only gets
    /// bearer tokens even from an authorization server that offers DPoP.
    pub resource_dpop: bool,
}

/// The canonical URI of an MCP server (lowercase scheme and host, no fragment, no default
/// port, no trailing slash on a non-root path).
pub fn canonical_resource(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    let mut s = url.to_string();
    // The root path's slash too: `https://host/` is `https://host`.
    if url.query().is_none() && s.ends_with('/') {
        s.pop();
    }
    s
}

fn discovery(message: String) -> AuthError {
    AuthError::new(AuthStep::Discovery, message)
}

/// `origin` joined with `path` (which starts with `/`).
fn at_origin(base: &Url, path: &str) -> Option<Url> {
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.set_path(path);
    Some(url)
}

/// The candidate URLs of the protected resource metadata of `server`.
fn resource_metadata_urls(server: &Url, challenge: Option<&Challenge>) -> Vec<Url> {
    // A URL the server named is the only one tried (the well-known ones may belong to another
    // resource of the same origin).
    if let Some(hinted) = challenge.and_then(Challenge::resource_metadata)
        && let Ok(url) = server.join(hinted)
        && matches!(url.scheme(), "http" | "https")
    {
        return vec![url];
    }
    let mut urls = Vec::new();
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.extend(at_origin(server, &format!("/.well-known/oauth-protected-resource{path}")));
    }
    urls.extend(at_origin(server, "/.well-known/oauth-protected-resource"));
    urls.dedup();
    urls
}

/// The candidate metadata URLs of the authorization server `issuer`.
fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        [
            at_origin(issuer, "/.well-known/oauth-authorization-server"),
            at_origin(issuer, "/.well-known/openid-configuration"),
        ]
        .into_iter()
        .flatten()
        .collect()
    } else {
        [
            at_origin(issuer, &format!("/.well-known/oauth-authorization-server{path}")),
            at_origin(issuer, &format!("/.well-known/openid-configuration{path}")),
            at_origin(issuer, &format!("{path}/.well-known/openid-configuration")),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// Fetch the first document of `urls` that answers 200 with a JSON object. A 4xx moves to the
/// next URL; a 5xx or a network failure too, but is reported when nothing answers (a server
/// error is no proof that the document does not exist).
async fn first_document<T: serde::de::DeserializeOwned>(
    http: &AuthHttp,
    urls: &[Url],
    what: &str,
) -> Result<Option<(Url, T)>, AuthError> {
    let mut failures = Vec::new();
    for url in urls {
        match http.get_json(url).await {
            Ok(answer) if answer.status == 200 => {
                let value = answer
                    .json()
                    .filter(serde_json::Value::is_object)
                    .ok_or_else(|| discovery(format!("the {what} at {} is not a JSON object", redact_url(url))))?;
                let doc = serde_json::from_value(value)
                    .map_err(|e| discovery(format!("the {what} at {} is invalid: {e}", redact_url(url))))?;
                return Ok(Some((url.clone(), doc)));
            }
            Ok(answer) if answer.status >= 500 => {
                failures.push(format!("{}: HTTP {}", redact_url(url), answer.status));
            }
            Ok(answer) => tracing::debug!(url = %redact_url(url), status = answer.status, "no {what} here"),
            Err(e) => failures.push(format!("{}: {e}", redact_url(url))),
        }
    }
    if failures.len() == urls.len() && !failures.is_empty() {
        return Err(discovery(format!("could not fetch the {what}: {}", failures.join("; "))));
    }
    Ok(None)
}

/// Whether the protected resource `declared` may stand for the server at `server`: the same
/// origin, and the server's path within the declared one (RFC 9728 §3.3, as the MCP SDKs read it).
fn resource_covers(declared: &str, server: &Url) -> bool {
    let Ok(declared) = Url::parse(declared) else { return false };
    if declared.origin() != server.origin() {
        return false;
    }
    let want = declared.path().trim_end_matches('/');
    let have = server.path().trim_end_matches('/');
    have == want || want.is_empty() || have.starts_with(&format!("{want}/"))
}

/// Discover the authorization server of the MCP server at `server`.
pub(crate) async fn discover(
    http: &AuthHttp,
    server: &Url,
    challenge: Option<&Challenge>,
) -> Result<Discovered, AuthError> {
    let canonical = canonical_resource(server);
    let prm: Option<(Url, ResourceMetadata)> =
        first_document(http, &resource_metadata_urls(server, challenge), "protected resource metadata").await?;
    let challenged_dpop = challenge.is_some_and(|c| c.scheme == "dpop");
    let Some((prm_url, prm)) = prm else {
        let mut found = legacy_discovery(http, server, canonical).await?;
        found.resource_dpop = challenged_dpop;
        return Ok(found);
    };
    let resource_indicator = match prm.resource.as_deref() {
        Some(declared) if resource_covers(declared, server) => declared.to_owned(),
        Some(declared) => {
            return Err(discovery(format!(
                "the protected resource metadata at {} names the resource {declared:?}, which is not this server ({canonical})",
                redact_url(&prm_url)
            )));
        }
        None => canonical,
    };
    let Some(issuer) = prm.authorization_servers.first() else {
        return Err(discovery(format!(
            "the protected resource metadata at {} names no authorization server",
            redact_url(&prm_url)
        )));
    };
    let issuer_url = Url::parse(issuer)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| discovery(format!("the authorization server {issuer:?} is not an http(s) URL")))?;
    let found: Option<(Url, ServerMetadata)> =
        first_document(http, &server_metadata_urls(&issuer_url), "authorization server metadata").await?;
    let Some((meta_url, server_meta)) = found else {
        return Err(discovery(format!("the authorization server {issuer} publishes no metadata")));
    };
    if server_meta.issuer != *issuer {
        return Err(discovery(format!(
            "the metadata at {} names the issuer {:?}, not {issuer:?} it was fetched for",
            redact_url(&meta_url),
            server_meta.issuer
        )));
    }
    let resource_dpop = prm.offers_dpop() || challenged_dpop;
    Ok(Discovered { resource: Some(prm), resource_indicator, server: server_meta, defaulted: false, resource_dpop })
}

/// The 2025-03-26 procedure: no protected resource metadata, the authorization server is the
/// MCP server's origin, with its metadata at the origin or, failing that, the default endpoints.
async fn legacy_discovery(http: &AuthHttp, server: &Url, canonical: String) -> Result<Discovered, AuthError> {
    let origin = server.origin().ascii_serialization();
    let urls: Vec<Url> = at_origin(server, "/.well-known/oauth-authorization-server").into_iter().collect();
    let found: Option<(Url, ServerMetadata)> = first_document(http, &urls, "authorization server metadata").await?;
    if let Some((_, meta)) = found {
        return Ok(Discovered {
            resource: None,
            resource_indicator: canonical,
            server: meta,
            defaulted: false,
            resource_dpop: false,
        });
    }
    let endpoint = |p: &str| at_origin(server, p).map(|u| u.to_string());
    let server_meta = ServerMetadata {
        issuer: origin,
        authorization_endpoint: endpoint("/authorize"),
        token_endpoint: endpoint("/token"),
        registration_endpoint: endpoint("/register"),
        ..ServerMetadata::default()
    };
    Ok(Discovered {
        resource: None,
        resource_indicator: canonical,
        server: server_meta,
        defaulted: true,
        resource_dpop: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn candidate_urls_follow_the_spec_order() {
        let server = u("https://mcp.example.com/tenant/mcp?x=1");
        let got: Vec<String> = resource_metadata_urls(&server, None).iter().map(Url::to_string).collect();
        assert_eq!(
            got,
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource"
            ]
        );
        let got: Vec<String> =
            server_metadata_urls(&u("https://auth.example.com/tenant1")).iter().map(Url::to_string).collect();
        assert_eq!(
            got,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        let got: Vec<String> =
            server_metadata_urls(&u("https://auth.example.com/")).iter().map(Url::to_string).collect();
        assert_eq!(
            got,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn canonical_and_covering_resources() {
        assert_eq!(canonical_resource(&u("HTTPS://MCP.Example.com:443/mcp/#frag")), "https://mcp.example.com/mcp");
        assert_eq!(canonical_resource(&u("http://127.0.0.1:9/")), "http://127.0.0.1:9");
        let server = u("http://127.0.0.1:9/api/mcp");
        assert!(resource_covers("http://127.0.0.1:9/api/mcp", &server));
        assert!(resource_covers("http://127.0.0.1:9/api", &server));
        assert!(resource_covers("http://127.0.0.1:9", &server));
        assert!(!resource_covers("http://127.0.0.1:9/ap", &server));
        assert!(!resource_covers("http://127.0.0.1:10/api/mcp", &server));
        assert!(!resource_covers("https://evil.example.com/api/mcp", &server));
    }
}
