//! Where client registrations and tokens are kept between requests and between runs.
//!
//! A [`TokenStore`] maps a [`CredentialKey`] (the protected resource and the authorization
//! server's issuer) to [`StoredCredentials`]: the client registration used with that issuer
//! and the tokens it issued for that resource. [`MemoryStore`] keeps them for the life of the
//! process; [`FileStore`] keeps every entry of a user in one JSON file (mode 0600, written
//! atomically, shared safely by concurrent processes).
//!
//! Secrets stay [`Secret`]s here too: `Debug` never shows them; only the file holds them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{AuthError, AuthStep};
use crate::Secret;

/// Which credentials: those for `resource` issued by `issuer`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CredentialKey {
    /// The protected resource (the MCP server's canonical URL).
    pub resource: String,
    /// The authorization server's issuer.
    pub issuer: String,
}

/// A client registration with one authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The client id (an https URL for a client ID metadata document).
    pub client_id: String,
    /// The client secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "secret_opt")]
    pub client_secret: Option<Secret>,
    /// How the client authenticates at the token endpoint (`none`, `client_secret_basic`,
    /// `client_secret_post`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The redirect URIs registered.
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    /// How it was obtained: `preregistered`, `cimd` or `dynamic`.
    pub source: String,
    /// When the client secret expires (seconds since the epoch), if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<u64>,
}

/// Tokens issued for a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The access token.
    #[serde(with = "secret")]
    pub access_token: Secret,
    /// The token type (`Bearer`).
    #[serde(default = "bearer")]
    pub token_type: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "secret_opt")]
    pub refresh_token: Option<Secret>,
    /// When the access token expires (seconds since the epoch), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (or, when the server did not say, requested).
    #[serde(default)]
    pub scopes: Vec<String>,
}

fn bearer() -> String {
    "Bearer".into()
}

/// The endpoints of the authorization server, kept so that a refresh in a later run needs no
/// discovery.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Endpoints {
    /// The authorization endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// The token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The token endpoint's client authentication methods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_endpoint_auth_methods_supported: Vec<String>,
}

/// What is kept for one [`CredentialKey`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StoredCredentials {
    /// The registration with the issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
    /// The tokens, once authorized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// The issuer's endpoints.
    #[serde(default)]
    pub endpoints: Endpoints,
    /// The resource indicator the tokens were issued for (RFC 8707), when it differs from
    /// the key's resource or was learnt from the protected resource metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// When this entry was last written (seconds since the epoch): the newest entry of a
    /// resource is the one used before discovery.
    #[serde(default)]
    pub updated_at: u64,
}

impl StoredCredentials {
    /// The resource indicator to send: the one kept, else `default`.
    pub fn resource_indicator(&self, default: &str) -> String {
        self.resource.clone().unwrap_or_else(|| default.to_owned())
    }
}

/// Seconds since the epoch, now.
pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A place to keep credentials. Calls are short and blocking (a file, a keychain); callers on
/// an async runtime run them where blocking is allowed.
pub trait TokenStore: Send + Sync + std::fmt::Debug {
    /// Every entry of `resource`, the most recently updated first.
    fn entries(&self, resource: &str) -> Result<Vec<(CredentialKey, StoredCredentials)>, AuthError>;

    /// The entry of `key`.
    fn load(&self, key: &CredentialKey) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.entries(&key.resource)?.into_iter().find(|(k, _)| k == key).map(|(_, v)| v))
    }

    /// Write the entry of `key` (replacing it).
    fn save(&self, key: &CredentialKey, value: &StoredCredentials) -> Result<(), AuthError>;

    /// Forget every entry of `resource` (a logout). Returns how many were removed.
    fn remove(&self, resource: &str) -> Result<usize, AuthError>;
}

/// Credentials kept in memory, for the life of the store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: Mutex<BTreeMap<CredentialKey, StoredCredentials>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn newest_first(mut v: Vec<(CredentialKey, StoredCredentials)>) -> Vec<(CredentialKey, StoredCredentials)> {
    v.sort_by(|a, b| b.1.updated_at.cmp(&a.1.updated_at));
    v
}

impl TokenStore for MemoryStore {
    fn entries(&self, resource: &str) -> Result<Vec<(CredentialKey, StoredCredentials)>, AuthError> {
        let entries = lock(&self.entries);
        Ok(newest_first(
            entries.iter().filter(|(k, _)| k.resource == resource).map(|(k, v)| (k.clone(), v.clone())).collect(),
        ))
    }

    fn save(&self, key: &CredentialKey, value: &StoredCredentials) -> Result<(), AuthError> {
        lock(&self.entries).insert(key.clone(), value.clone());
        Ok(())
    }

    fn remove(&self, resource: &str) -> Result<usize, AuthError> {
        let mut entries = lock(&self.entries);
        let before = entries.len();
        entries.retain(|k, _| k.resource != resource);
        Ok(before - entries.len())
    }
}

/// Every credential of a user in one JSON file. See the module docs.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// A store in the file at `path` (created on the first save, with its directory).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore { path: path.into() }
    }

    /// The store of this user: `$MCP_AUTH_DIR/auth.json` when that variable is set, else
    /// `auth.json` in the platform's config directory (`$XDG_CONFIG_HOME/mcp/` or
    /// `~/.config/mcp/` on Linux). `None` when there is no home directory.
    pub fn for_user() -> Option<Self> {
        default_dir().map(|d| FileStore::new(d.join("auth.json")))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Where the user's file store lives (see [`FileStore::for_user`]).
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MCP_AUTH_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("mcp"));
    }
    std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".config").join("mcp"))
}

fn store_error(what: &str, path: &Path, e: impl std::fmt::Display) -> AuthError {
    AuthError::new(AuthStep::Store, format!("{what} {}: {e}", path.display()))
}

mod secret {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::Secret;

    pub(super) fn serialize<S: Serializer>(s: &Secret, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(s.expose())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Secret, D::Error> {
        String::deserialize(de).map(Secret::new)
    }
}

mod secret_opt {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::Secret;

    pub(super) fn serialize<S: Serializer>(s: &Option<Secret>, ser: S) -> Result<S::Ok, S::Error> {
        match s {
            Some(s) => ser.serialize_some(s.expose()),
            None => ser.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Secret>, D::Error> {
        Option::<String>::deserialize(de).map(|s| s.map(Secret::new))
    }
}
