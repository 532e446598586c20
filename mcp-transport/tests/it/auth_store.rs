//! The token stores: [`MemoryStore`] and [`FileStore`] (round trips, removal, file modes,
//! corrupt files, concurrent writers, secrets kept out of `Debug`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_transport::Secret;
use mcp_transport::auth::AuthStep;
use mcp_transport::auth::store::{
    ClientRegistration, CredentialKey, Endpoints, FileStore, MemoryStore, StoredCredentials, TokenStore, Tokens,
};

/// A fresh directory under the system temp dir, removed on drop.
struct TestDir(PathBuf);

impl TestDir {
    fn new(name: &str) -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-auth-store-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        TestDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn key(resource: &str, issuer: &str) -> CredentialKey {
    CredentialKey { resource: resource.into(), issuer: issuer.into() }
}

fn creds(token: &str, updated_at: u64) -> StoredCredentials {
    StoredCredentials {
        client: Some(ClientRegistration {
            client_id: "client-1".into(),
            client_secret: Some(Secret::new(format!("client-secret-{token}"))),
            token_endpoint_auth_method: Some("client_secret_basic".into()),
            redirect_uris: vec!["http://127.0.0.1:8765/callback".into()],
            source: "dynamic".into(),
            client_secret_expires_at: None,
        }),
        tokens: Some(Tokens {
            access_token: Secret::new(format!("access-{token}")),
            token_type: "Bearer".into(),
            refresh_token: Some(Secret::new(format!("refresh-{token}"))),
            expires_at: Some(1_900_000_000),
            issued_at: None,
            scopes: vec!["mcp:read".into()],
        }),
        endpoints: Endpoints {
            authorization_endpoint: Some("https://as.example/authorize".into()),
            token_endpoint: Some("https://as.example/token".into()),
            token_endpoint_auth_methods_supported: vec!["client_secret_basic".into()],
        },
        resource: None,
        dpop_key: Some(Secret::new(format!("dpop-key-{token}"))),
        updated_at,
    }
}

/// The behaviour both stores share.
fn check_round_trip(store: &dyn TokenStore) {
    let a1 = key("https://a.example/mcp", "https://as1.example");
    let a2 = key("https://a.example/mcp", "https://as2.example");
    let a3 = key("https://a.example/mcp", "https://as3.example");
    let b = key("https://b.example/mcp", "https://as1.example");
    assert!(store.entries(&a1.resource).unwrap().is_empty());
    assert_eq!(store.load(&a1).unwrap(), None);

    store.save(&a1, &creds("a1", 10)).unwrap();
    store.save(&a2, &creds("a2", 30)).unwrap();
    store.save(&a3, &creds("a3", 20)).unwrap();
    store.save(&b, &creds("b", 5)).unwrap();

    let entries = store.entries(&a1.resource).unwrap();
    let issuers: Vec<&str> = entries.iter().map(|(k, _)| k.issuer.as_str()).collect();
    assert_eq!(issuers, ["https://as2.example", "https://as3.example", "https://as1.example"], "newest first");
    assert_eq!(store.load(&a2).unwrap(), Some(creds("a2", 30)));
    assert_eq!(store.load(&b).unwrap(), Some(creds("b", 5)));

    // A save replaces the entry of its key.
    store.save(&a1, &creds("a1-new", 40)).unwrap();
    assert_eq!(store.load(&a1).unwrap(), Some(creds("a1-new", 40)));
    assert_eq!(store.entries(&a1.resource).unwrap()[0].0, a1);
    assert_eq!(store.entries(&a1.resource).unwrap().len(), 3);

    // Removing one resource leaves the others.
    assert_eq!(store.remove(&a1.resource).unwrap(), 3);
    assert!(store.entries(&a1.resource).unwrap().is_empty());
    assert_eq!(store.load(&b).unwrap(), Some(creds("b", 5)));
    assert_eq!(store.remove(&a1.resource).unwrap(), 0);
}

#[test]
fn memory_store_round_trip() {
    check_round_trip(&MemoryStore::new());
}

#[test]
fn file_store_round_trip() {
    let dir = TestDir::new("round-trip");
    let store = FileStore::new(dir.path().join("auth.json"));
    check_round_trip(&store);
    // Another instance (another run) sees what the first wrote.
    let again = FileStore::new(dir.path().join("auth.json"));
    assert_eq!(again.load(&key("https://b.example/mcp", "https://as1.example")).unwrap(), Some(creds("b", 5)));
}

#[test]
fn file_store_missing_file_is_empty_and_creates_nothing() {
    let dir = TestDir::new("missing");
    let store = FileStore::new(dir.path().join("sub").join("auth.json"));
    assert!(store.entries("https://a.example/mcp").unwrap().is_empty());
    assert_eq!(store.remove("https://a.example/mcp").unwrap(), 0);
    assert!(!dir.path().exists());
}

#[test]
fn file_store_layout() {
    let dir = TestDir::new("layout");
    let path = dir.path().join("auth.json");
    let store = FileStore::new(&path);
    store.save(&key("https://a.example/mcp", "https://as.example"), &creds("t", 7)).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["entries"][0]["key"]["resource"], "https://a.example/mcp");
    assert_eq!(json["entries"][0]["key"]["issuer"], "https://as.example");
    assert_eq!(json["entries"][0]["value"]["tokens"]["access_token"], "access-t");
    assert_eq!(json["entries"][0]["value"]["updated_at"], 7);
    // No temporary file is left behind.
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["auth.json", "auth.json.lock"]);
}

#[cfg(unix)]
#[test]
fn file_store_modes() {
    use std::os::unix::fs::PermissionsExt;

    let dir = TestDir::new("modes");
    let path = dir.path().join("nested").join("auth.json");
    let store = FileStore::new(&path);
    store.save(&key("r", "i"), &creds("t", 1)).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700, "the created directory");
    assert_eq!(mode(&dir.path().join("nested").join("auth.json.lock")), 0o600);

    // An older file with other bits ends up 0600 after the next save.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    store.save(&key("r", "i2"), &creds("t2", 2)).unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(store.entries("r").unwrap().len(), 2);
}

#[test]
fn file_store_corrupt_file_is_an_error_and_left_alone() {
    let dir = TestDir::new("corrupt");
    std::fs::create_dir_all(dir.path()).unwrap();
    let path = dir.path().join("auth.json");
    for (text, problem) in [
        ("{this is not json", "not valid JSON"),
        (r#"{"version":2,"entries":[]}"#, "version 2"),
        ("[1,2]", "not a JSON object"),
    ] {
        std::fs::write(&path, text).unwrap();
        let store = FileStore::new(&path);
        let read = store.entries("r").unwrap_err();
        assert_eq!(read.step, AuthStep::Store);
        assert!(read.message.contains(&path.display().to_string()), "{read}");
        assert!(read.message.contains(problem), "{read}");

        let saved = store.save(&key("r", "i"), &creds("t", 1)).unwrap_err();
        assert_eq!(saved.step, AuthStep::Store);
        assert_eq!(saved.message, read.message, "save fails with the same error");
        let removed = store.remove("r").unwrap_err();
        assert_eq!(removed.message, read.message);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "the file is untouched");
    }
}

#[test]
fn file_store_refuses_a_huge_file() {
    let dir = TestDir::new("huge");
    std::fs::create_dir_all(dir.path()).unwrap();
    let path = dir.path().join("auth.json");
    let huge = format!("{{\"version\":1,\"entries\":[],\"pad\":\"{}\"}}", "x".repeat(5 * 1024 * 1024));
    std::fs::write(&path, &huge).unwrap();
    let store = FileStore::new(&path);
    let err = store.entries("r").unwrap_err();
    assert_eq!(err.step, AuthStep::Store);
    assert!(err.message.contains("larger than 4 MiB"), "{err}");
    assert!(store.save(&key("r", "i"), &creds("t", 1)).is_err());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), huge.len() as u64);
}

#[test]
fn file_store_concurrent_saves_all_survive() {
    const THREADS: usize = 16;
    const SAVES: usize = 4;
    let dir = TestDir::new("concurrent");
    let path = Arc::new(dir.path().join("auth.json"));
    let barrier = Arc::new(std::sync::Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let path = Arc::clone(&path);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                // Its own instance, as another process would have.
                let store = FileStore::new(path.as_path());
                barrier.wait();
                for s in 0..SAVES {
                    let resource = format!("https://r{}.example/mcp", t % 4);
                    store.save(&key(&resource, &format!("https://as-{t}-{s}.example")), &creds("c", 1)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let store = FileStore::new(path.as_path());
    let total: usize = (0..4).map(|r| store.entries(&format!("https://r{r}.example/mcp")).unwrap().len()).sum();
    assert_eq!(total, THREADS * SAVES);
}

#[test]
fn debug_shows_no_secret_while_the_file_holds_them() {
    let dir = TestDir::new("debug");
    let path = dir.path().join("auth.json");
    let value = creds("sekrit-token-value", 1);
    let store = FileStore::new(&path);
    store.save(&key("r", "i"), &value).unwrap();

    let secrets = [
        "access-sekrit-token-value",
        "refresh-sekrit-token-value",
        "client-secret-sekrit-token-value",
        "dpop-key-sekrit-token-value",
    ];
    let file = std::fs::read_to_string(&path).unwrap();
    for secret in secrets {
        assert!(file.contains(secret), "the file keeps {secret}");
    }
    let loaded = store.load(&key("r", "i")).unwrap();
    let shown = [
        format!("{value:?}"),
        format!("{loaded:?}"),
        format!("{:?}", value.tokens),
        format!("{:?}", value.client),
        format!("{:?}", store.entries("r").unwrap()),
        format!("{store:?}"),
    ];
    for text in &shown {
        assert!(!text.contains("sekrit"), "{text}");
    }
    assert!(shown[0].contains("client-1"), "non-secret fields still show: {}", shown[0]);
}
