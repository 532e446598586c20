//! The unattended grants in the `oauth` settings of remote servers (client credentials,
//! workload identity, enterprise), the private key, the token endpoint authentication method
//! and DPoP: each key in reference TOML and in JSON, what it plans (`OAuthSettings`), the
//! problems that name the field, and that no secret shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_manager::config::{ConfigFormat, GrantConfig, McpConfig, ParseOptions, ServerConfig};
use mcp_transport::auth::browser::{BrowserStep, LoopbackBrowser, print_url};
use mcp_transport::auth::jose::SigningAlgorithm;
use mcp_transport::auth::oauth::{CredentialSource, DpopPolicy, Grant, OAuthSettings};
use mcp_transport::auth::store::MemoryStore;

/// A P-256 key made for these tests only.
const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgaBgmisKPjHQCILAd
+z8n7Vi0XwfLrb5uIgmPjL6WNJyhRANCAARsByJnfocI6mYX7zjJCax+WpTgRqyR
wVl0UZjekBjKbs9nnzOl+lpOcp87gq2+KQEKDrV8F0EX/9Nbl3ZzClFz
-----END PRIVATE KEY-----
";
/// A line of the key's body, which must never show.
const KEY_BODY: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgaBgmisKPjHQCILAd";

/// Parses `text` as `source` (a path: its folder is the base folder) with `env`; files are read
/// from `files` (path -> content), as if they were on disk.
fn parse_files(
    text: &str,
    source: &str,
    env: &[(&str, &str)],
    files: &[(&str, &str)],
) -> Result<McpConfig, mcp_manager::config::ConfigError> {
    let env: BTreeMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let files: BTreeMap<PathBuf, String> = files.iter().map(|(p, c)| (PathBuf::from(p), c.to_string())).collect();
    let read = move |p: &Path| files.get(p).cloned().ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound));
    let base = Path::new(source).parent().unwrap();
    let options = ParseOptions { base_dir: Some(base), read_file: Some(&read), ..ParseOptions::new(source, &env) };
    McpConfig::parse_with(text, &options)
}

fn parse(text: &str, source: &str, env: &[(&str, &str)]) -> Result<McpConfig, String> {
    parse_files(text, source, env, &[]).map_err(|e| e.to_string())
}

/// The settings of server `s`, given a browser step: an unattended grant must drop it.
fn planned(config: &McpConfig) -> (ServerConfig, OAuthSettings) {
    let server = config.server("s").unwrap().clone();
    let browser: Arc<dyn BrowserStep> = Arc::new(LoopbackBrowser::new(print_url()));
    let settings = server.oauth_settings("test-client", Arc::new(MemoryStore::new()), Some(browser));
    (server, settings)
}

#[test]
fn client_credentials_with_a_key_file_in_reference_toml() {
    let text = r#"
        [[mcp.servers]]
        name = "s"
        url = "https://mcp.example.com/mcp"
        [mcp.servers.oauth]
        grant = "client_credentials"
        client_id = "svc"
        private_key_file = "keys/svc.pem"
        signing_algorithm = "ES256"
        token_endpoint_auth_method = "private_key_jwt"
        dpop = true
    "#;
    let config = parse_files(text, "/etc/app/mcp.toml", &[], &[("/etc/app/keys/svc.pem", EC_KEY)]).unwrap();
    let (server, settings) = planned(&config);
    assert!(server.uses_oauth());
    assert_eq!(server.oauth.grant, GrantConfig::ClientCredentials);
    assert!(matches!(settings.grant, Grant::ClientCredentials), "{:?}", settings.grant);
    assert_eq!(settings.client_id.as_deref(), Some("svc"));
    assert_eq!(settings.client_key.as_ref().map(|k| k.algorithm()), Some(SigningAlgorithm::Es256));
    assert_eq!(settings.token_endpoint_auth_method.as_deref(), Some("private_key_jwt"));
    assert_eq!(settings.dpop, DpopPolicy::Always);
    assert!(settings.browser.is_none(), "an unattended grant never gets a browser");
    assert_eq!(server.oauth.grant_label(), "client credentials (private_key_jwt), DPoP");
    let shown = format!("{server:?} {settings:?}");
    assert!(!shown.contains(KEY_BODY), "{shown}");
}

#[test]
fn client_credentials_with_a_secret_and_a_key_variable_in_json() {
    let text = r#"{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "client_credentials", "clientId": "svc", "clientSecretEnvVar": "SVC_SECRET",
        "tokenEndpointAuthMethod": "client_secret_post", "dpop": false}}}}"#;
    let config = parse(text, "/w/mcp.json", &[("SVC_SECRET", "svc-secret-value-1")]).unwrap();
    let (server, settings) = planned(&config);
    assert!(matches!(settings.grant, Grant::ClientCredentials));
    assert_eq!(settings.client_secret.as_ref().map(|s| s.expose()), Some("svc-secret-value-1"));
    assert_eq!(settings.token_endpoint_auth_method.as_deref(), Some("client_secret_post"));
    assert_eq!(settings.dpop, DpopPolicy::Never);
    assert!(settings.client_key.is_none() && settings.browser.is_none());
    assert_eq!(server.oauth.grant_label(), "client credentials (client_secret_post)");

    let keyed = r#"{"servers": {"s": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "client_credentials", "clientId": "svc", "privateKeyEnvVar": "SVC_KEY"}}}}"#;
    let config = parse(keyed, "/w/.vscode/mcp.json", &[("SVC_KEY", EC_KEY)]).unwrap();
    let (server, settings) = planned(&config);
    assert_eq!(settings.client_key.as_ref().map(|k| k.algorithm()), Some(SigningAlgorithm::Es256));
    assert_eq!(settings.dpop, DpopPolicy::Auto, "no dpop key: auto");
    assert_eq!(server.oauth.grant_label(), "client credentials (private_key_jwt)");
    assert!(!format!("{server:?} {settings:?}").contains(KEY_BODY));
}

#[test]
fn the_code_flow_keeps_its_browser() {
    let text =
        r#"{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "oauth": {"grant": "authorization_code"}}}}"#;
    let config = parse(text, "/w/mcp.json", &[]).unwrap();
    let (server, settings) = planned(&config);
    assert!(matches!(settings.grant, Grant::AuthorizationCode));
    assert!(settings.browser.is_some());
    assert_eq!(server.oauth.grant_label(), "oauth");
}

#[test]
fn workload_identity_from_a_file_a_command_or_a_variable() {
    let toml = r#"
        [[mcp.servers]]
        name = "s"
        url = "https://mcp.example.com/mcp"
        [mcp.servers.oauth]
        grant = "workload_identity"
        workload_token_file = "run/token"
    "#;
    let config = parse(toml, "/etc/app/mcp.toml", &[]).unwrap();
    let (server, settings) = planned(&config);
    assert_eq!(server.oauth.grant_label(), "workload identity");
    match &settings.grant {
        Grant::WorkloadIdentity { token: CredentialSource::File(p) } => {
            assert_eq!(p, Path::new("/etc/app/run/token"), "relative to the config's folder")
        }
        other => panic!("{other:?}"),
    }
    assert!(settings.browser.is_none());

    let json = r#"{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "workload_identity", "workloadTokenCommand": ["cloud-cli", "print-token", "--aud", "mcp"]}}}}"#;
    let (_, settings) = planned(&parse(json, "/w/mcp.json", &[]).unwrap());
    match &settings.grant {
        Grant::WorkloadIdentity { token: CredentialSource::Command(argv) } => {
            assert_eq!(argv, &["cloud-cli", "print-token", "--aud", "mcp"])
        }
        other => panic!("{other:?}"),
    }

    let json = r#"{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "workload_identity", "workloadTokenEnvVar": "WL_TOKEN"}}}}"#;
    let config = parse(json, "/w/mcp.json", &[("WL_TOKEN", "wl-token-value-2")]).unwrap();
    let (server, settings) = planned(&config);
    match &settings.grant {
        Grant::WorkloadIdentity { token: CredentialSource::Value(v) } => assert_eq!(v.expose(), "wl-token-value-2"),
        other => panic!("{other:?}"),
    }
    let shown = format!("{server:?} {settings:?}");
    assert!(!shown.contains("wl-token-value-2"), "{shown}");
}

#[test]
fn enterprise_in_toml_and_json() {
    let toml = r#"
        [[mcp.servers]]
        name = "s"
        url = "https://mcp.example.com/mcp"
        [mcp.servers.oauth]
        grant = "enterprise"
        client_id = "mcp-client"
        idp_token_endpoint = "https://idp.example.com/oauth2/token"
        idp_client_id = "idp-client"
        idp_client_secret_env_var = "IDP_SECRET"
        id_token_command = ["idp-cli", "id-token"]
    "#;
    let config = parse(toml, "/etc/app/mcp.toml", &[("IDP_SECRET", "idp-secret-value-3")]).unwrap();
    let (server, settings) = planned(&config);
    assert_eq!(server.oauth.grant_label(), "enterprise");
    let Grant::Enterprise(e) = &settings.grant else { panic!("{:?}", settings.grant) };
    assert_eq!(e.token_endpoint, "https://idp.example.com/oauth2/token");
    assert_eq!(e.client_id.as_deref(), Some("idp-client"));
    assert_eq!(e.client_secret.as_ref().map(|s| s.expose()), Some("idp-secret-value-3"));
    assert!(matches!(&e.id_token, CredentialSource::Command(argv) if argv == &["idp-cli", "id-token"]));
    assert_eq!(settings.client_id.as_deref(), Some("mcp-client"));
    assert!(settings.browser.is_none());
    let shown = format!("{server:?} {settings:?}");
    assert!(!shown.contains("idp-secret-value-3"), "{shown}");

    let json = r#"{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "enterprise", "clientId": "mcp-client", "idpTokenEndpoint": "https://idp.example.com/token",
        "idpClientId": "idp-client", "idpClientSecret": "idp-literal-4", "idTokenFile": "/run/id_token"}}}}"#;
    let config = parse(json, "/w/mcp.json", &[]).unwrap();
    let (server, settings) = planned(&config);
    let Grant::Enterprise(e) = &settings.grant else { panic!("{:?}", settings.grant) };
    assert_eq!(e.client_secret.as_ref().map(|s| s.expose()), Some("idp-literal-4"));
    assert!(matches!(&e.id_token, CredentialSource::File(p) if p == Path::new("/run/id_token")));
    let shown = format!("{server:?} {settings:?}");
    assert!(!shown.contains("idp-literal-4"), "{shown}");

    let json = r#"{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "enterprise", "clientId": "c", "idpTokenEndpoint": "https://idp.example.com/token",
        "idTokenEnvVar": "ID_TOKEN"}}}}"#;
    let (_, settings) = planned(&parse(json, "/w/mcp.json", &[("ID_TOKEN", "id-token-value-5")]).unwrap());
    let Grant::Enterprise(e) = &settings.grant else { panic!() };
    assert!(matches!(&e.id_token, CredentialSource::Value(v) if v.expose() == "id-token-value-5"));
}

#[test]
fn each_problem_names_the_server_and_the_field() {
    let json = |oauth: &str| {
        format!(r#"{{"mcpServers": {{"s": {{"url": "https://mcp.example.com/mcp", "oauth": {{{oauth}}}}}}}}}"#)
    };
    let cases = [
        (
            json(r#""grant": "password""#),
            "field \"oauth.grant\": unknown grant \"password\": expected \"authorization_code\", \"client_credentials\", \"workload_identity\" or \"enterprise\"",
        ),
        (
            json(r#""grant": "client_credentials", "clientSecret": "x""#),
            "field \"oauth.clientSecret\": a client secret needs a client id",
        ),
        (
            json(r#""grant": "client_credentials""#),
            "field \"oauth.clientId\": missing (grant client_credentials needs a client id)",
        ),
        (
            json(r#""grant": "client_credentials", "clientId": "c""#),
            "field \"oauth.clientSecret\": missing (grant client_credentials needs a client secret",
        ),
        (
            json(r#""grant": "client_credentials", "clientId": "c", "clientSecret": "x", "workloadTokenFile": "/t""#),
            "field \"oauth.workloadTokenFile\": workloadTokenFile is set but grant is client_credentials",
        ),
        (
            json(r#""clientId": "c", "privateKeyEnvVar": "K""#),
            "field \"oauth.privateKeyEnvVar\": privateKeyEnvVar is set but grant is authorization_code",
        ),
        (
            json(r#""grant": "workload_identity""#),
            "field \"oauth.workloadTokenFile\": missing (the workload identity token needs one of",
        ),
        (
            json(r#""grant": "workload_identity", "workloadTokenFile": "/t", "workloadTokenEnvVar": "T""#),
            "field \"oauth.workloadTokenEnvVar\": give only one of",
        ),
        (
            json(r#""grant": "workload_identity", "workloadTokenCommand": []"#),
            "field \"oauth.workloadTokenCommand\": needs a program",
        ),
        (
            json(r#""grant": "workload_identity", "workloadTokenEnvVar": "UNSET_WL""#),
            "field \"oauth.workloadTokenEnvVar\": variable \"UNSET_WL\" is not set",
        ),
        (
            json(r#""grant": "enterprise", "clientId": "c", "idTokenFile": "/t""#),
            "field \"oauth.idpTokenEndpoint\": missing",
        ),
        (
            json(r#""grant": "enterprise", "idpTokenEndpoint": "https://i/t", "idTokenFile": "/t""#),
            "field \"oauth.clientId\": missing (grant enterprise needs a client id)",
        ),
        (
            json(r#""grant": "enterprise", "clientId": "c", "idpTokenEndpoint": "https://i/t""#),
            "field \"oauth.idTokenFile\": missing (the ID token needs one of",
        ),
        (
            json(r#""grant": "enterprise", "clientId": "c", "idpTokenEndpoint": "ftp://i/t", "idTokenFile": "/t""#),
            "field \"oauth.idpTokenEndpoint\": not an http or https URL",
        ),
        (
            json(r#""grant": "workload_identity", "workloadTokenFile": "/t", "idTokenFile": "/t""#),
            "field \"oauth.idTokenFile\": idTokenFile is set but grant is workload_identity",
        ),
        (
            json(r#""grant": "client_credentials", "clientId": "c", "clientSecret": "x", "idpClientId": "i""#),
            "field \"oauth.idpClientId\": idpClientId is set but grant is client_credentials",
        ),
        (
            json(
                r#""grant": "client_credentials", "clientId": "c", "clientSecret": "x", "tokenEndpointAuthMethod": "mtls""#,
            ),
            "field \"oauth.tokenEndpointAuthMethod\": unknown method \"mtls\"",
        ),
        (
            json(
                r#""grant": "client_credentials", "clientId": "c", "clientSecret": "x", "tokenEndpointAuthMethod": "private_key_jwt""#,
            ),
            "field \"oauth.tokenEndpointAuthMethod\": \"private_key_jwt\" needs a private key",
        ),
        (
            json(r#""grant": "client_credentials", "clientId": "c", "clientSecret": "x", "signingAlgorithm": "ES256""#),
            "field \"oauth.signingAlgorithm\": a signing algorithm needs a private key",
        ),
        (
            json(
                r#""grant": "client_credentials", "clientId": "c", "privateKeyEnvVar": "K", "signingAlgorithm": "HS256""#,
            ),
            "field \"oauth.signingAlgorithm\": unsupported signing algorithm \"HS256\"",
        ),
        (
            json(
                r#""grant": "client_credentials", "clientId": "c", "privateKeyEnvVar": "K", "signingAlgorithm": "RS256""#,
            ),
            "field \"oauth.privateKeyEnvVar\": not a usable private key: the key is a ES256 key, not one for RS256",
        ),
        (
            json(r#""grant": "client_credentials", "clientId": "c", "privateKeyFile": "/nope.pem""#),
            "field \"oauth.privateKeyFile\": cannot read /nope.pem",
        ),
        (json(r#""dpop": "yes""#), "field \"oauth.dpop\": expected true or false"),
        (
            json(r#""grant": "client_credentials", "clientId": "c", "clientSecret": "x", "privateKeyFIle": "/k""#),
            "field \"oauth.privateKeyFIle\": unknown key (did you mean \"privateKeyFile\"?)",
        ),
    ];
    for (text, expected) in &cases {
        let error = parse(text, "/w/mcp.json", &[("K", EC_KEY)]).unwrap_err();
        assert!(error.contains(&format!("server \"s\": {expected}")), "{text}\n=> {error}");
        assert!(!error.contains(KEY_BODY), "{error}");
    }
    // The reference TOML spells the same problems its own way.
    let toml = |oauth: &str| {
        format!("[[mcp.servers]]\nname = \"s\"\nurl = \"https://mcp.example.com/mcp\"\n[mcp.servers.oauth]\n{oauth}\n")
    };
    let cases = [
        (toml("grant = \"implicit\""), "field \"oauth.grant\": unknown grant \"implicit\""),
        (
            toml(
                "grant = \"client_credentials\"\nclient_id = \"c\"\nclient_secret = \"x\"\nworkload_token_file = \"/t\"",
            ),
            "field \"oauth.workload_token_file\": workload_token_file is set but grant is client_credentials",
        ),
        (
            toml("grant = \"enterprise\"\nclient_id = \"c\"\nid_token_file = \"/t\""),
            "field \"oauth.idp_token_endpoint\": missing",
        ),
        (toml("grant = \"workload_identity\""), "field \"oauth.workload_token_file\": missing"),
    ];
    for (text, expected) in &cases {
        let error = parse(text, "/w/mcp.toml", &[]).unwrap_err();
        assert!(error.contains(&format!("server \"s\": {expected}")), "{text}\n=> {error}");
    }
}

#[test]
fn a_bad_key_is_named_but_never_shown() {
    let not_a_key = "-----BEGIN PRIVATE KEY-----\nTm90QUtleVNlY3JldE1hdGVyaWFsNjY2\n-----END PRIVATE KEY-----\n";
    let json = r#"{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "client_credentials", "clientId": "c", "privateKeyEnvVar": "BAD_KEY"}}}}"#;
    let error = parse(json, "/w/mcp.json", &[("BAD_KEY", not_a_key)]).unwrap_err();
    assert!(error.contains("server \"s\": field \"oauth.privateKeyEnvVar\": not a usable private key"), "{error}");
    assert!(!error.contains("Tm90QUtleVNlY3JldE1hdGVyaWFsNjY2"), "{error}");
    let toml = "[[mcp.servers]]\nname = \"s\"\nurl = \"https://h.example/mcp\"\n[mcp.servers.oauth]\n\
                grant = \"client_credentials\"\nclient_id = \"c\"\nprivate_key_file = \"k.pem\"\n";
    let error = parse_files(toml, "/etc/app/mcp.toml", &[], &[("/etc/app/k.pem", "garbage-key-text-7")])
        .unwrap_err()
        .to_string();
    assert!(error.contains("field \"oauth.private_key_file\": not a usable private key"), "{error}");
    assert!(!error.contains("garbage-key-text-7"), "{error}");
}

#[test]
fn the_codex_format_has_no_oauth_table() {
    let text =
        "[mcp_servers.s]\nurl = \"https://h.example/mcp\"\n[mcp_servers.s.oauth]\ngrant = \"client_credentials\"\n";
    let env = BTreeMap::<String, String>::new();
    let error = McpConfig::parse(text, Some(ConfigFormat::CodexToml), "config.toml", &env).unwrap_err();
    assert!(error.to_string().contains("\"oauth\""), "{error}");
}
