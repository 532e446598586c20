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
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// When it was issued (seconds since the epoch), if known: a token is renewed early by at
    /// most half its lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<u64>,
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
    /// The client's DPoP private key (PKCS#8 DER, base64url), when its tokens are DPoP-bound:
    /// kept with the tokens, which are useless without it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "secret_opt")]
    pub dpop_key: Option<Secret>,
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
    v.sort_by_key(|e| std::cmp::Reverse(e.1.updated_at));
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
    dir_from(std::env::var_os("MCP_AUTH_DIR"), std::env::var_os("XDG_CONFIG_HOME"), std::env::var_os("HOME"))
}

/// [`default_dir`] given the values of `MCP_AUTH_DIR`, `XDG_CONFIG_HOME` and `HOME`: a pure
/// function, so that tests need not set process-wide variables.
fn dir_from(
    mcp_auth_dir: Option<OsString>,
    xdg_config_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    if let Some(dir) = mcp_auth_dir.filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // The XDG base directory spec says a relative value is invalid and must be ignored.
    if let Some(dir) = xdg_config_home.map(PathBuf::from).filter(|d| d.is_absolute()) {
        return Some(dir.join("mcp"));
    }
    home.filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".config").join("mcp"))
}

fn store_error(what: &str, path: &Path, e: impl std::fmt::Display) -> AuthError {
    AuthError::new(AuthStep::Store, format!("{what} {}: {e}", path.display()))
}

/// Largest store file read (or written): a bigger one is an error, not an allocation.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The layout of the file; another version is refused rather than overwritten.
const FILE_VERSION: u64 = 1;

/// The file as written.
#[derive(Serialize)]
struct FileOut<'a> {
    version: u64,
    entries: &'a [FileEntry],
}

/// The file as read, once its version is known to be [`FILE_VERSION`].
#[derive(Deserialize)]
struct FileIn {
    #[serde(default)]
    entries: Vec<FileEntry>,
}

#[derive(Serialize, Deserialize)]
struct FileEntry {
    key: CredentialKey,
    value: StoredCredentials,
}

/// A serde_json error without the values it may quote (a value of the file can be a secret):
/// its category and position only.
fn json_problem(e: &serde_json::Error) -> String {
    let what = match e.classify() {
        serde_json::error::Category::Io => "it could not be read",
        serde_json::error::Category::Syntax => "it is not valid JSON",
        serde_json::error::Category::Data => "it does not have the expected fields",
        serde_json::error::Category::Eof => "it ends before its JSON does",
    };
    format!("{what} (line {}, column {})", e.line(), e.column())
}

/// The entries of the file's text. Errors are plain sentences; the caller names the path.
fn parse_file(bytes: &[u8]) -> Result<Vec<FileEntry>, String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| json_problem(&e))?;
    let Some(object) = value.as_object() else {
        return Err("it is not a JSON object".into());
    };
    match object.get("version") {
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(FILE_VERSION) => {}
        Some(serde_json::Value::Number(n)) => {
            return Err(format!("it has version {n}; this program reads version {FILE_VERSION}"));
        }
        Some(_) => return Err("its version is not a number".into()),
        None => return Err("it has no version".into()),
    }
    let file: FileIn = serde_json::from_value(value).map_err(|e| json_problem(&e))?;
    Ok(file.entries)
}

impl FileStore {
    /// The sibling lock file (`auth.json.lock` next to `auth.json`).
    fn lock_path(&self) -> PathBuf {
        let mut name = self.path.file_name().map(OsString::from).unwrap_or_else(|| OsString::from("auth.json"));
        name.push(".lock");
        self.path.with_file_name(name)
    }

    fn dir(&self) -> &Path {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        }
    }

    /// Open (creating it) the lock file.
    fn open_lock(&self) -> std::io::Result<File> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options.open(self.lock_path())
    }

    /// Every entry of the file; none when it does not exist.
    fn read_all(&self) -> Result<Vec<FileEntry>, AuthError> {
        let file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(store_error("cannot open", &self.path, e)),
        };
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| store_error("cannot read", &self.path, e))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(store_error(
                "cannot use",
                &self.path,
                format!("it is larger than {} MiB", MAX_FILE_BYTES / (1024 * 1024)),
            ));
        }
        parse_file(&bytes).map_err(|problem| store_error("cannot use", &self.path, problem))
    }

    /// Replace the file with `entries`: a temporary file (0600) in the same directory, synced,
    /// then renamed over it. The caller holds the exclusive lock.
    fn write_all(&self, entries: &[FileEntry]) -> Result<(), AuthError> {
        let text = serde_json::to_vec_pretty(&FileOut { version: FILE_VERSION, entries })
            .map_err(|e| store_error("cannot write", &self.path, json_problem(&e)))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(store_error(
                "cannot write",
                &self.path,
                format!("it would be larger than {} MiB", MAX_FILE_BYTES / (1024 * 1024)),
            ));
        }
        let temp =
            TempFile::create(&self.path).map_err(|e| store_error("cannot create a file next to", &self.path, e))?;
        let mut file = temp.file.as_ref().ok_or_else(|| store_error("cannot write", &self.path, "no file"))?;
        file.write_all(&text).map_err(|e| store_error("cannot write", &temp.path, e))?;
        file.sync_all().map_err(|e| store_error("cannot sync", &temp.path, e))?;
        temp.persist(&self.path).map_err(|e| store_error("cannot replace", &self.path, e))?;
        // The rename is durable once the directory is synced; a failure here loses nothing
        // that was there before.
        if let Ok(dir) = File::open(self.dir()) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// Read, change and write the file under the exclusive lock, so that concurrent writers
    /// (threads or processes) each see the others' entries.
    fn update<T>(&self, change: impl FnOnce(&mut Vec<FileEntry>) -> (T, bool)) -> Result<T, AuthError> {
        create_dir(self.dir()).map_err(|e| store_error("cannot create the directory of", &self.path, e))?;
        let lock = self.open_lock().map_err(|e| store_error("cannot open the lock file of", &self.path, e))?;
        lock.lock().map_err(|e| store_error("cannot lock", &self.path, e))?;
        let mut entries = self.read_all()?;
        let (out, changed) = change(&mut entries);
        if changed {
            self.write_all(&entries)?;
        }
        drop(lock);
        Ok(out)
    }
}

fn create_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// A temporary file next to the store file, removed unless renamed over it.
struct TempFile {
    path: PathBuf,
    file: Option<File>,
}

impl TempFile {
    fn create(target: &Path) -> std::io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "auth.json".into());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = target.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(&path)?;
        let temp = TempFile { path, file: Some(file) };
        // The umask can only take bits away; set them exactly all the same.
        #[cfg(unix)]
        if let Some(f) = &temp.file {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(temp)
    }

    fn persist(mut self, target: &Path) -> std::io::Result<()> {
        drop(self.file.take());
        std::fs::rename(&self.path, target)?;
        self.path = PathBuf::new();
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl TokenStore for FileStore {
    fn entries(&self, resource: &str) -> Result<Vec<(CredentialKey, StoredCredentials)>, AuthError> {
        // A shared lock keeps a read from overlapping a writer's read-modify-write. Writers
        // rename whole files, so a store whose lock file cannot be made (a read-only
        // directory) is still read consistently without it.
        let lock = match self.open_lock() {
            Ok(lock) => {
                lock.lock_shared().map_err(|e| store_error("cannot lock", &self.path, e))?;
                Some(lock)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) if matches!(e.kind(), ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem) => None,
            Err(e) => return Err(store_error("cannot open the lock file of", &self.path, e)),
        };
        let entries = self.read_all()?;
        drop(lock);
        Ok(newest_first(entries.into_iter().filter(|e| e.key.resource == resource).map(|e| (e.key, e.value)).collect()))
    }

    fn save(&self, key: &CredentialKey, value: &StoredCredentials) -> Result<(), AuthError> {
        self.update(|entries| {
            match entries.iter_mut().find(|e| &e.key == key) {
                Some(e) => e.value = value.clone(),
                None => entries.push(FileEntry { key: key.clone(), value: value.clone() }),
            }
            ((), true)
        })
    }

    fn remove(&self, resource: &str) -> Result<usize, AuthError> {
        if !self.path.exists() {
            return Ok(0);
        }
        self.update(|entries| {
            let before = entries.len();
            entries.retain(|e| e.key.resource != resource);
            let removed = before - entries.len();
            (removed, removed > 0)
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn mcp_auth_dir_wins() {
        assert_eq!(dir_from(os("/a"), os("/x"), os("/h")), Some(PathBuf::from("/a")));
    }

    #[test]
    fn xdg_config_home_then_home() {
        assert_eq!(dir_from(None, os("/x"), os("/h")), Some(PathBuf::from("/x/mcp")));
        assert_eq!(dir_from(os(""), os("/x"), os("/h")), Some(PathBuf::from("/x/mcp")));
        assert_eq!(dir_from(None, None, os("/h")), Some(PathBuf::from("/h/.config/mcp")));
        // Empty or relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
        assert_eq!(dir_from(None, os(""), os("/h")), Some(PathBuf::from("/h/.config/mcp")));
        assert_eq!(dir_from(None, os("rel"), os("/h")), Some(PathBuf::from("/h/.config/mcp")));
        assert_eq!(dir_from(None, None, None), None);
        assert_eq!(dir_from(None, None, os("")), None);
    }

    #[test]
    fn for_user_is_auth_json_in_default_dir() {
        let expected = default_dir().map(|d| d.join("auth.json"));
        assert_eq!(FileStore::for_user().map(|s| s.path().to_owned()), expected);
    }

    #[test]
    fn parse_problems_are_named_without_quoting_values() {
        assert!(parse_file(br#"{"version":1,"entries":[]}"#).is_ok_and(|e| e.is_empty()));
        assert!(parse_file(br#"{"version":1}"#).is_ok_and(|e| e.is_empty()));
        let problem = |text: &str| parse_file(text.as_bytes()).err().unwrap_or_default();
        assert!(problem("{not json").contains("not valid JSON"));
        assert!(problem(r#"{"version":1"#).contains("ends before"));
        assert!(problem("[]").contains("not a JSON object"));
        assert!(problem("{}").contains("no version"));
        assert!(problem(r#"{"version":2,"entries":[]}"#).contains("version 2"));
        assert!(problem(r#"{"version":"1"}"#).contains("not a number"));
        // A value of the wrong type is not quoted: it could be a secret.
        let p = problem(
            r#"{"version":1,"entries":[{"key":{"resource":"r","issuer":"i"},"value":{"updated_at":"hunter2-secret"}}]}"#,
        );
        assert!(p.contains("expected fields"), "{p}");
        assert!(!p.contains("hunter2"), "{p}");
    }

    #[test]
    fn lock_file_is_a_sibling() {
        assert_eq!(FileStore::new("/d/auth.json").lock_path(), PathBuf::from("/d/auth.json.lock"));
    }
}
