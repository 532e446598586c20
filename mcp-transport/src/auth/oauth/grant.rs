//! The grants of unattended clients, which need no browser: client credentials (RFC 6749
//! §4.4, the MCP client-credentials extension), the JWT bearer grant with a workload identity
//! token (RFC 7523, SEP-1933), and enterprise-managed authorization (SEP-990: an RFC 8693 token
//! exchange of the user's ID token at the enterprise identity provider for an ID-JAG, then the
//! JWT bearer grant with it at the MCP authorization server).
//!
//! Every request is a form POST through `AuthHttp::send_token` (bounded, under a timeout, with
//! a DPoP proof when the client uses DPoP). The client authenticates with `private_key_jwt`
//! (RFC 7523 §2.2) when it has a key, else with its secret (Basic or in the body), else it only
//! names itself.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;

use super::http::{AuthHttp, HttpFailure};
use super::token::TokenFailure;
use crate::Secret;
use crate::auth::jose::{SigningKey, client_assertion};
use crate::auth::store::{Tokens, now_secs};
use crate::auth::{AuthError, AuthStep};
use crate::redact::remember_secret;

/// `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of the token exchange (RFC 8693).
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an identity assertion authorization grant (SEP-990).
pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The token type of an OpenID Connect ID token.
pub const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
/// `client_assertion_type` of `private_key_jwt`.
pub const JWT_CLIENT_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A host callback that supplies a credential (an ID token, a workload token) when a grant
/// needs one.
pub trait CredentialProvider: Send + Sync + fmt::Debug {
    /// The current credential; an error message says why there is none.
    fn credential(&self) -> BoxFuture<'_, Result<Secret, String>>;
}

/// Where a credential the client presents comes from. It is read again for every grant:
/// platforms rotate mounted tokens, and ID tokens expire.
#[derive(Clone)]
pub enum CredentialSource {
    /// A value given directly (from the environment, say).
    Value(Secret),
    /// A file (a projected service account token, say), read whole and trimmed.
    File(PathBuf),
    /// A command and its arguments, run without a shell; its standard output, trimmed.
    Command(Vec<String>),
    /// The host's callback.
    Host(Arc<dyn CredentialProvider>),
}

impl fmt::Debug for CredentialSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialSource::Value(_) => f.write_str("Value(<redacted>)"),
            CredentialSource::File(p) => f.debug_tuple("File").field(p).finish(),
            CredentialSource::Command(c) => {
                f.debug_tuple("Command").field(&c.first().map(String::as_str).unwrap_or_default()).finish()
            }
            CredentialSource::Host(h) => f.debug_tuple("Host").field(h).finish(),
        }
    }
}

/// Largest credential read from a file or a command.
const MAX_CREDENTIAL_BYTES: usize = 64 * 1024;

impl CredentialSource {
    /// Where it comes from, for messages (never the value).
    pub fn describe(&self) -> String {
        match self {
            CredentialSource::Value(_) => "the configured value".into(),
            CredentialSource::File(p) => format!("the file {}", p.display()),
            CredentialSource::Command(c) => {
                format!("the command {:?}", c.first().map(String::as_str).unwrap_or_default())
            }
            CredentialSource::Host(_) => "the host's callback".into(),
        }
    }

    /// Read the credential now, within `timeout`.
    pub async fn read(&self, what: &str, timeout: Duration) -> Result<Secret, AuthError> {
        let fail =
            |m: String| AuthError::new(AuthStep::Token, format!("reading the {what} from {}: {m}", self.describe()));
        let text = match self {
            CredentialSource::Value(v) => v.expose().to_owned(),
            CredentialSource::File(path) => {
                let read =
                    tokio::time::timeout(timeout, tokio::fs::read(path)).await.map_err(|_| fail("timed out".into()))?;
                let bytes = read.map_err(|e| fail(e.kind().to_string()))?;
                if bytes.len() > MAX_CREDENTIAL_BYTES {
                    return Err(fail(format!("it is larger than {MAX_CREDENTIAL_BYTES} bytes")));
                }
                String::from_utf8(bytes).map_err(|_| fail("it is not UTF-8 text".into()))?
            }
            CredentialSource::Command(argv) => run_command(argv, timeout).await.map_err(fail)?,
            CredentialSource::Host(provider) => tokio::time::timeout(timeout, provider.credential())
                .await
                .map_err(|_| fail("timed out".into()))?
                .map_err(fail)?
                .expose()
                .to_owned(),
        };
        let text = text.trim();
        if text.is_empty() {
            return Err(fail("it is empty".into()));
        }
        remember_secret(text);
        Ok(Secret::new(text.to_owned()))
    }
}

/// Run `argv` (no shell), killed when `timeout` passes; its stdout, bounded.
async fn run_command(argv: &[String], timeout: Duration) -> Result<String, String> {
    let Some((program, args)) = argv.split_first() else { return Err("no command is given".into()) };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("it could not be started: {}", e.kind()))?;
    let mut stdout = child.stdout.take().ok_or("no standard output")?;
    let work = async {
        use tokio::io::AsyncReadExt;
        let mut out = Vec::new();
        (&mut stdout).take(MAX_CREDENTIAL_BYTES as u64 + 1).read_to_end(&mut out).await.map_err(|e| e.to_string())?;
        if out.len() > MAX_CREDENTIAL_BYTES {
            return Err(format!("it printed more than {MAX_CREDENTIAL_BYTES} bytes"));
        }
        let status = child.wait().await.map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("it exited with {status}"));
        }
        String::from_utf8(out).map_err(|_| "it printed text that is not UTF-8".to_owned())
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(format!("it did not finish within {timeout:?}")),
    }
}

/// The enterprise identity provider of enterprise-managed authorization (SEP-990).
#[derive(Clone, Debug)]
pub struct EnterpriseSettings {
    /// The identity provider's token endpoint (where the ID token is exchanged).
    pub token_endpoint: String,
    /// This client's id at the identity provider.
    pub client_id: Option<String>,
    /// Its secret there.
    pub client_secret: Option<Secret>,
    /// The user's ID token, issued by the identity provider: from the host, never guessed.
    pub id_token: CredentialSource,
}

/// How the client obtains tokens.
#[derive(Clone, Debug, Default)]
pub enum Grant {
    /// The authorization code flow with PKCE: a person logs in in a browser.
    #[default]
    AuthorizationCode,
    /// Client credentials: the client authorizes as itself (a secret or a private key).
    ClientCredentials,
    /// The JWT bearer grant with a workload identity token (SEP-1933).
    WorkloadIdentity {
        /// Where the workload token comes from.
        token: CredentialSource,
    },
    /// Enterprise-managed authorization (SEP-990).
    Enterprise(EnterpriseSettings),
}

impl Grant {
    /// Its name, as `mcp status` shows it.
    pub fn name(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::WorkloadIdentity { .. } => "workload_identity",
            Grant::Enterprise(_) => "enterprise",
        }
    }

    /// Whether it runs unattended (no browser, no person).
    pub fn is_unattended(&self) -> bool {
        !matches!(self, Grant::AuthorizationCode)
    }
}

/// How a client authenticates at a token endpoint.
pub(crate) enum ClientAuth<'a> {
    /// It only names itself (`client_id` in the body), or not even that.
    None(Option<&'a str>),
    /// `client_secret_basic`.
    Basic(&'a str, &'a Secret),
    /// `client_secret_post`.
    Post(&'a str, &'a Secret),
    /// `private_key_jwt`, the assertion's audience being the authorization server's issuer.
    PrivateKeyJwt { client_id: &'a str, key: &'a SigningKey, audience: &'a str },
}

impl ClientAuth<'_> {
    /// Its name, as the metadata spells it.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            ClientAuth::None(_) => "none",
            ClientAuth::Basic(..) => "client_secret_basic",
            ClientAuth::Post(..) => "client_secret_post",
            ClientAuth::PrivateKeyJwt { .. } => "private_key_jwt",
        }
    }
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    issued_token_type: Option<String>,
}

#[derive(Deserialize)]
struct ErrorAnswer {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// A token endpoint's answer to a grant: the tokens, and the type of the issued token (token
/// exchange).
pub(crate) struct Granted {
    pub(crate) tokens: Tokens,
    pub(crate) issued_token_type: Option<String>,
}

/// Form-encode `pairs` (`application/x-www-form-urlencoded`).
fn form(pairs: &[(&str, &str)]) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    out.finish()
}

/// POST a grant to `endpoint` with `params`, authenticating as `auth`; the scopes granted
/// default to `requested`.
pub(crate) async fn request(
    http: &AuthHttp,
    endpoint: &str,
    auth: &ClientAuth<'_>,
    params: &[(&str, &str)],
    requested: &[String],
) -> Result<Granted, TokenFailure> {
    let failed = |m: String| TokenFailure::Failed(AuthError::new(AuthStep::Token, m));
    let url =
        url::Url::parse(endpoint).map_err(|e| failed(format!("the token endpoint {endpoint:?} is not a URL: {e}")))?;
    // Built again for each send: a client assertion (its jti) is good for one request only.
    let build = || -> Result<reqwest::Request, HttpFailure> {
        let mut pairs: Vec<(&str, &str)> = params.to_vec();
        let assertion;
        let mut request = http.client.post(url.clone()).header(reqwest::header::ACCEPT, "application/json");
        match auth {
            ClientAuth::None(Some(id)) => pairs.push(("client_id", id)),
            ClientAuth::None(None) => {}
            ClientAuth::Basic(id, secret) => {
                // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
                let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                request = request.basic_auth(enc(id), Some(enc(secret.expose())));
            }
            ClientAuth::Post(id, secret) => {
                pairs.push(("client_id", id));
                pairs.push(("client_secret", secret.expose()));
            }
            ClientAuth::PrivateKeyJwt { client_id, key, audience } => {
                assertion = client_assertion(key, client_id, audience).map_err(|e| HttpFailure(e.message))?;
                pairs.push(("client_id", client_id));
                pairs.push(("client_assertion_type", JWT_CLIENT_ASSERTION));
                pairs.push(("client_assertion", assertion.expose()));
            }
        }
        request
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form(&pairs))
            .build()
            .map_err(|e| HttpFailure(format!("the token request cannot be built: {}", crate::redact::describe(&e))))
    };
    let answer = http.send_token(build).await.map_err(|HttpFailure(m)| failed(m))?;
    if !(200..300).contains(&answer.status) {
        return Err(match serde_json::from_slice::<ErrorAnswer>(&answer.body) {
            Ok(e) => TokenFailure::Refused { error: e.error, description: e.error_description },
            Err(_) => failed(format!("the token endpoint answered HTTP {}", answer.status)),
        });
    }
    // The body holds tokens: name only where parsing failed.
    let parsed: TokenAnswer = serde_json::from_slice(&answer.body).map_err(|e| {
        failed(format!(
            "the token endpoint's answer is not a token response (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    remember_secret(&parsed.access_token);
    if let Some(r) = &parsed.refresh_token {
        remember_secret(r);
    }
    let expires_in = parsed.expires_in.as_ref().and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()));
    let scopes = match parsed.scope.as_deref().map(str::split_ascii_whitespace) {
        Some(s) => {
            let granted: Vec<String> = s.map(str::to_owned).collect();
            if granted.is_empty() { requested.to_vec() } else { granted }
        }
        None => requested.to_vec(),
    };
    Ok(Granted {
        tokens: Tokens {
            access_token: Secret::new(parsed.access_token),
            token_type: parsed.token_type.unwrap_or_else(|| "Bearer".into()),
            refresh_token: parsed.refresh_token.map(Secret::new),
            expires_at: expires_in.map(|d| now_secs().saturating_add(d)),
            issued_at: Some(now_secs()),
            scopes,
        },
        issued_token_type: parsed.issued_token_type,
    })
}
