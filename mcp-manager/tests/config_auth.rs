//! The authorization settings of remote servers: `auth` and the `oauth` settings, in the
//! reference TOML and the JSON formats, with their checks and what they plan.

use std::collections::BTreeMap;

use mcp_manager::config::{AuthMode, McpConfig};

fn parse(text: &str, source: &str, env: &[(&str, &str)]) -> Result<McpConfig, String> {
    let env: BTreeMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    McpConfig::parse(text, None, source, &env).map_err(|e| e.to_string())
}

#[test]
fn reference_toml_reads_auth_and_the_oauth_table() {
    let text = r#"
        [[mcp.servers]]
        name = "saas"
        url = "https://mcp.example.com/mcp"
        auth = "oauth"
        [mcp.servers.oauth]
        client_id = "my-client"
        client_secret_env_var = "SAAS_SECRET"
        scopes = ["read", "write"]
        redirect_port = 33418
        client_metadata_url = "https://app.example.com/client.json"
    "#;
    let config = parse(text, "mcp.toml", &[("SAAS_SECRET", "s3cr3t-value-1")]).unwrap();
    let server = config.server("saas").unwrap();
    assert_eq!(server.auth, AuthMode::OAuth);
    assert_eq!(server.oauth.client_id.as_deref(), Some("my-client"));
    assert_eq!(server.oauth.client_secret.as_ref().map(|s| s.expose()), Some("s3cr3t-value-1"));
    assert_eq!(server.oauth.scopes, Some(vec!["read".to_owned(), "write".to_owned()]));
    assert_eq!(server.oauth.redirect_port, Some(33418));
    assert!(server.uses_oauth());
    let shown = format!("{server:?}");
    assert!(!shown.contains("s3cr3t-value-1"), "{shown}");
}

#[test]
fn vscode_json_reads_oauth_client_id_and_auto_means_oauth_without_a_bearer() {
    let text = r#"{"servers": {
        "gh": {"type": "http", "url": "https://api.example.com/mcp", "oauth": {"clientId": "vs-client"}},
        "keyed": {"type": "http", "url": "https://k.example.com/mcp", "headers": {"Authorization": "Bearer abc"}},
        "plain": {"type": "http", "url": "https://p.example.com/mcp", "auth": "none"}
    }}"#;
    let config = parse(text, ".vscode/mcp.json", &[]).unwrap();
    let gh = config.server("gh").unwrap();
    assert_eq!(gh.auth, AuthMode::Auto);
    assert_eq!(gh.oauth.client_id.as_deref(), Some("vs-client"));
    assert!(gh.uses_oauth());
    assert!(!config.server("keyed").unwrap().uses_oauth(), "a configured Authorization header wins in auto");
    assert!(!config.server("plain").unwrap().uses_oauth());
}

#[test]
fn bad_auth_settings_are_named() {
    let cases = [
        (r#"{"mcpServers": {"s": {"url": "https://h/mcp", "auth": "kerberos"}}}"#, "unknown auth \"kerberos\""),
        (r#"{"mcpServers": {"s": {"url": "https://h/mcp", "auth": "bearer"}}}"#, "\"bearer\" needs a bearer token"),
        (r#"{"mcpServers": {"s": {"url": "https://h/mcp", "oauth": {"redirectPort": 70000}}}}"#, "oauth.redirectPort"),
        (
            r#"{"mcpServers": {"s": {"url": "https://h/mcp", "oauth": {"clientMetadataUrl": "http://h/c.json"}}}}"#,
            "https URL",
        ),
        (r#"{"mcpServers": {"s": {"url": "https://h/mcp", "oauth": {"clientSecret": "x"}}}}"#, "needs a client id"),
        (r#"{"mcpServers": {"s": {"url": "https://h/mcp", "oauth": {"clientID": "x"}}}}"#, "did you mean \"clientId\""),
    ];
    for (text, expected) in cases {
        let error = parse(text, "mcp.json", &[]).unwrap_err();
        assert!(error.contains(expected), "{text}\n=> {error}");
        assert!(error.contains("\"s\""), "names the server: {error}");
    }
}
