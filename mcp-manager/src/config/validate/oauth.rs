//! The `oauth` table of a server, interpolated and checked: the client and its secret, the
//! grant (authorization code, client credentials, workload identity, enterprise) and what it
//! needs, the private key (loaded here, so that a bad key is a problem of the config), the token
//! endpoint authentication method and DPoP.
//!
//! Keys of a grant other than the chosen one are problems, and so is a grant without what it
//! needs. No problem shows a secret: neither a key, nor a client secret, nor a variable's value.

use std::path::{Path, PathBuf};

use mcp_transport::Secret;
use mcp_transport::auth::jose::{SigningAlgorithm, SigningKey};
use mcp_transport::auth::oauth::DpopPolicy;

use super::{Context, Problems, expand_text, variable};
use crate::config::model::{ClientKey, CredentialConfig, EnterpriseConfig, GrantConfig, OAuthConfig};
use crate::config::node::Text;
use crate::config::raw::{OAUTH_SNAKE, RawCredential, RawOAuth, SecretSource};

/// The grants `grant` accepts.
const GRANTS: &str = "\"authorization_code\", \"client_credentials\", \"workload_identity\" or \"enterprise\"";
/// The methods `token_endpoint_auth_method` accepts.
const AUTH_METHODS: [&str; 4] = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"];

/// The key of a field (`oauth.grant` -> `grant`).
fn key(field: &str) -> &str {
    field.rsplit('.').next().unwrap_or(field)
}

/// The OAuth settings, interpolated and checked.
pub(super) fn oauth_config(raw: &RawOAuth, cx: &Context<'_>, out: &mut Problems) -> OAuthConfig {
    let spelling = raw.spelling.unwrap_or(&OAUTH_SNAKE);
    let field = |k: &str| format!("{}{k}", raw.prefix);
    let expand = |text: &Text, out: &mut Problems| expand_text(text, cx, out);
    let mut config = OAuthConfig {
        client_id: raw.client_id.as_ref().map(|t| expand(t, out)).filter(|v| !v.trim().is_empty()),
        ..OAuthConfig::default()
    };
    config.client_secret = secret(raw.client_secret.as_ref(), "the client secret", cx, out);
    if config.client_secret.is_some()
        && config.client_id.is_none()
        && let Some(SecretSource::Value(t) | SecretSource::EnvVar(t)) = &raw.client_secret
    {
        out.push(&t.field, "a client secret needs a client id");
    }
    config.scopes =
        raw.scopes.as_ref().map(|v| v.iter().map(|t| expand(t, out)).filter(|s| !s.trim().is_empty()).collect());
    if let Some((field, n)) = &raw.redirect_port {
        if n.fract() == 0.0 && (1.0..=65535.0).contains(n) {
            config.redirect_port = u16::try_from(*n as u32).ok();
        } else {
            out.push(field, format!("{n} is not a port (1 to 65535)"));
        }
    }
    if let Some(text) = &raw.client_metadata_url {
        let value = expand(text, out);
        match url::Url::parse(value.trim()) {
            Ok(u) if u.scheme() == "https" && u.path() != "/" => {
                config.client_metadata_url = Some(value.trim().to_owned())
            }
            _ => out.push(&text.field, "a client metadata document URL must be an https URL with a path"),
        }
    }
    config.dpop = match raw.dpop {
        None => DpopPolicy::Auto,
        Some(true) => DpopPolicy::Always,
        Some(false) => DpopPolicy::Never,
    };
    config.client_key = client_key(raw, cx, out);
    if let Some(text) = &raw.token_endpoint_auth_method {
        let method = text.value.trim();
        if !AUTH_METHODS.contains(&method) {
            out.push(
                &text.field,
                format!("unknown method {method:?}: expected {}", AUTH_METHODS.map(|m| format!("{m:?}")).join(", ")),
            );
        } else if method == "private_key_jwt" && config.client_key.is_none() {
            let keys = format!("{:?} or {:?}", spelling.private_key_file, spelling.private_key_env_var);
            out.push(&text.field, format!("\"private_key_jwt\" needs a private key ({keys})"));
        } else if method.starts_with("client_secret") && config.client_secret.is_none() {
            out.push(&text.field, format!("{method:?} needs a client secret"));
        } else {
            config.token_endpoint_auth_method = Some(method.to_owned());
        }
    }

    let Some(grant) = grant_name(raw, out) else { return config };
    // The keys only some grants use: each must belong to the chosen grant.
    let unattended_keys =
        [raw.private_key.as_ref().map(source_field), raw.token_endpoint_auth_method.as_ref().map(|t| t.field.clone())];
    let mut foreign: Vec<String> = Vec::new();
    if grant == "authorization_code" {
        foreign.extend(unattended_keys.into_iter().flatten());
    }
    if grant != "workload_identity" {
        foreign.extend(raw.workload_token.fields());
    }
    if grant != "enterprise" {
        foreign.extend(raw.id_token.fields());
        foreign.extend(raw.idp_token_endpoint.iter().chain(&raw.idp_client_id).map(|t| t.field.clone()));
        foreign.extend(raw.idp_client_secret.as_ref().map(source_field));
    }
    for f in &foreign {
        out.push(f, format!("{} is set but grant is {grant}", key(f)));
    }
    let needs_client_id = |out: &mut Problems| {
        if config.client_id.is_none() {
            out.push(&field(spelling.client_id), format!("missing (grant {grant} needs a client id)"));
        }
    };
    config.grant = match grant {
        "client_credentials" => {
            needs_client_id(out);
            if config.client_secret.is_none() && config.client_key.is_none() && raw.private_key.is_none() {
                out.push(
                    &field(spelling.client_secret),
                    format!(
                        "missing (grant client_credentials needs a client secret ({:?} or {:?}) or a private key ({:?} or {:?}))",
                        spelling.client_secret,
                        spelling.client_secret_env_var,
                        spelling.private_key_file,
                        spelling.private_key_env_var
                    ),
                );
            }
            GrantConfig::ClientCredentials
        }
        "workload_identity" => {
            let names =
                [spelling.workload_token_file, spelling.workload_token_command, spelling.workload_token_env_var];
            let what = "the workload identity token";
            match credential(&raw.workload_token, &field(names[0]), names, what, cx, out) {
                Some(token) => GrantConfig::WorkloadIdentity { token },
                None => GrantConfig::AuthorizationCode,
            }
        }
        "enterprise" => {
            needs_client_id(out);
            let endpoint = match &raw.idp_token_endpoint {
                None => {
                    out.push(
                        &field(spelling.idp_token_endpoint),
                        "missing (grant enterprise needs the identity provider's token endpoint)",
                    );
                    None
                }
                Some(text) => {
                    let value = expand(text, out).trim().to_owned();
                    match url::Url::parse(&value) {
                        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Some(value),
                        _ => {
                            out.push(&text.field, "not an http or https URL");
                            None
                        }
                    }
                }
            };
            let idp_client_id = raw.idp_client_id.as_ref().map(|t| expand(t, out)).filter(|v| !v.trim().is_empty());
            let idp_secret = secret(raw.idp_client_secret.as_ref(), "the identity provider's client secret", cx, out);
            if idp_secret.is_some()
                && idp_client_id.is_none()
                && let Some(s) = &raw.idp_client_secret
            {
                out.push(&source_field(s), format!("a client secret needs {:?}", spelling.idp_client_id));
            }
            let names = [spelling.id_token_file, spelling.id_token_command, spelling.id_token_env_var];
            let id_token = credential(&raw.id_token, &field(names[0]), names, "the ID token", cx, out);
            match (endpoint, id_token) {
                (Some(token_endpoint), Some(id_token)) => GrantConfig::Enterprise(EnterpriseConfig {
                    token_endpoint,
                    client_id: idp_client_id,
                    client_secret: idp_secret,
                    id_token,
                }),
                _ => GrantConfig::AuthorizationCode,
            }
        }
        _ => GrantConfig::AuthorizationCode,
    };
    config
}

/// The grant's name, checked; `None` after reporting an unknown one.
fn grant_name(raw: &RawOAuth, out: &mut Problems) -> Option<&'static str> {
    let Some(text) = &raw.grant else { return Some("authorization_code") };
    match text.value.trim().to_ascii_lowercase().as_str() {
        "authorization_code" => Some("authorization_code"),
        "client_credentials" => Some("client_credentials"),
        "workload_identity" => Some("workload_identity"),
        "enterprise" => Some("enterprise"),
        _ => {
            out.push(&text.field, format!("unknown grant {:?}: expected {GRANTS}", text.value));
            None
        }
    }
}

fn source_field(source: &SecretSource) -> String {
    match source {
        SecretSource::Value(t) | SecretSource::EnvVar(t) => t.field.clone(),
    }
}

/// A secret given as a value or as a variable's name; `what` says what it is in problems.
fn secret(source: Option<&SecretSource>, what: &str, cx: &Context<'_>, out: &mut Problems) -> Option<Secret> {
    match source? {
        SecretSource::Value(text) => Some(Secret::new(expand_text(text, cx, out))),
        SecretSource::EnvVar(var) => match variable(&var.value, cx) {
            Ok(value) => Some(Secret::new(value)),
            Err(message) => {
                out.push(&var.field, format!("{message} ({what} comes from it)"));
                None
            }
        },
    }
}

/// `path` resolved against the config's folder when it is relative.
fn resolve(path: &str, cx: &Context<'_>) -> PathBuf {
    match cx.base_dir {
        Some(base) if Path::new(path).is_relative() => base.join(path),
        _ => PathBuf::from(path),
    }
}

/// The private key, loaded and checked (and its algorithm, when one is named).
fn client_key(raw: &RawOAuth, cx: &Context<'_>, out: &mut Problems) -> Option<ClientKey> {
    let algorithm = match &raw.signing_algorithm {
        None => None,
        Some(text) if raw.private_key.is_none() => {
            out.push(&text.field, "a signing algorithm needs a private key");
            return None;
        }
        Some(text) => match text.value.parse::<SigningAlgorithm>() {
            Ok(a) => Some(a),
            Err(message) => {
                out.push(&text.field, message);
                return None;
            }
        },
    };
    let (field, pem) = match raw.private_key.as_ref()? {
        SecretSource::Value(file) => {
            let path = resolve(&expand_text(file, cx, out), cx);
            let Some(read) = cx.read_file else {
                out.push(&file.field, "key files are read only when the configuration is loaded from a file");
                return None;
            };
            match read(&path) {
                // The error names the file and the reason, never what it holds.
                Ok(text) => (&file.field, Secret::new(text)),
                Err(e) => {
                    out.push(&file.field, format!("cannot read {}: {}", path.display(), e.kind()));
                    return None;
                }
            }
        }
        SecretSource::EnvVar(var) => match variable(&var.value, cx) {
            Ok(value) => (&var.field, Secret::new(value)),
            Err(message) => {
                out.push(&var.field, format!("{message} (the private key comes from it)"));
                return None;
            }
        },
    };
    match SigningKey::from_pem(pem.expose(), algorithm) {
        Ok(key) => Some(ClientKey(key)),
        Err(e) => {
            // `KeyError` never holds key material.
            out.push(field, format!("not a usable private key: {e}"));
            None
        }
    }
}

/// Exactly one of a credential's file, command and variable; `missing` is the field a missing
/// one is reported on.
fn credential(
    raw: &RawCredential,
    missing: &str,
    names: [&str; 3],
    what: &str,
    cx: &Context<'_>,
    out: &mut Problems,
) -> Option<CredentialConfig> {
    let given = raw.fields();
    if given.is_empty() {
        let names = names.map(|n| format!("{n:?}"));
        out.push(missing, format!("missing ({what} needs one of {}, {} or {})", names[0], names[1], names[2]));
        return None;
    }
    if given.len() > 1 {
        out.push(
            &given[1],
            format!(
                "give only one of {}",
                given.iter().map(|f| format!("{:?}", key(f))).collect::<Vec<_>>().join(", ")
            ),
        );
        return None;
    }
    if let Some(file) = &raw.file {
        let path = expand_text(file, cx, out);
        if path.trim().is_empty() {
            out.push(&file.field, "blank");
            return None;
        }
        return Some(CredentialConfig::File(resolve(path.trim(), cx)));
    }
    if let Some((field, argv)) = &raw.command {
        let argv: Vec<String> = argv.iter().map(|t| expand_text(t, cx, out)).collect();
        if argv.first().is_none_or(|p| p.trim().is_empty()) {
            out.push(
                field,
                "needs a program (an array of strings: the program and its arguments, run without a shell)",
            );
            return None;
        }
        return Some(CredentialConfig::Command(argv));
    }
    let var = raw.env_var.as_ref()?;
    match variable(&var.value, cx) {
        Ok(value) => {
            mcp_transport::redact::remember_secret(&value);
            Some(CredentialConfig::Value(Secret::new(value)))
        }
        Err(message) => {
            out.push(&var.field, format!("{message} ({what} comes from it)"));
            None
        }
    }
}
