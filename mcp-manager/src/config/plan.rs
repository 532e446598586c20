//! From a [`ServerConfig`] to what opens its transport: a `StdioConfig` or a [`RemoteTarget`].

use std::sync::Arc;

use mcp_transport::StdioConfig;
use mcp_transport::auth::browser::BrowserStep;
use mcp_transport::auth::oauth::{CredentialSource, EnterpriseSettings, Grant, OAuthSettings};
use mcp_transport::auth::store::TokenStore;

use super::model::{AuthMode, CredentialConfig, GrantConfig, ServerConfig, TransportChoice};
use crate::connection::{RemoteTarget, RemoteTimeouts};

impl ServerConfig {
    /// The child process of a stdio server: its command, arguments, `env` (on top of the
    /// transport's safe allow-list of inherited variables) and working directory. `None` for a
    /// remote server or one without a command.
    pub fn stdio_config(&self) -> Option<StdioConfig> {
        if self.transport != TransportChoice::Stdio {
            return None;
        }
        let mut config = StdioConfig::new(&self.name, self.command.as_deref()?, &self.args);
        config.env = self.env.clone();
        config.cwd = self.cwd.clone();
        if let Some(grace) = self.close_grace {
            config.close_grace = grace;
        }
        Some(config)
    }

    /// The HTTP target of a remote server: url, explicit transport (or the fallback for
    /// [`TransportChoice::Remote`]), headers, bearer token and read timeout. `None` for a stdio
    /// server or one without a url.
    pub fn remote_target(&self) -> Option<RemoteTarget> {
        if !self.transport.is_remote() {
            return None;
        }
        let mut target = RemoteTarget::new(self.url.as_deref()?).with_transport(self.transport.kind());
        target.headers = self.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        target.bearer = self.bearer_token.clone();
        target.timeouts = RemoteTimeouts { read: self.read_timeout, ..RemoteTimeouts::default() };
        Some(target)
    }
}

impl ServerConfig {
    /// Whether this server is authorized with OAuth: a remote server whose `auth` is `oauth`,
    /// or `auto` (the default) with neither a bearer token nor an `Authorization` header.
    pub fn uses_oauth(&self) -> bool {
        if !self.transport.is_remote() {
            return false;
        }
        match self.auth {
            AuthMode::OAuth => true,
            AuthMode::Auto => {
                self.bearer_token.is_none()
                    && !self.headers.keys().any(|k| k.trim().eq_ignore_ascii_case("authorization"))
            }
            AuthMode::Bearer | AuthMode::None => false,
        }
    }

    /// The OAuth client settings of this server, keeping what it gets in `store` and asking the
    /// user through `browser` (none: a needed login fails with `LoginRequired`). With an
    /// unattended grant, `browser` is dropped: no browser ever opens for such a server.
    pub fn oauth_settings(
        &self,
        client_name: &str,
        store: Arc<dyn TokenStore>,
        browser: Option<Arc<dyn BrowserStep>>,
    ) -> OAuthSettings {
        let oauth = &self.oauth;
        let grant = match &oauth.grant {
            GrantConfig::AuthorizationCode => Grant::AuthorizationCode,
            GrantConfig::ClientCredentials => Grant::ClientCredentials,
            GrantConfig::WorkloadIdentity { token } => Grant::WorkloadIdentity { token: credential_source(token) },
            GrantConfig::Enterprise(e) => Grant::Enterprise(EnterpriseSettings {
                token_endpoint: e.token_endpoint.clone(),
                client_id: e.client_id.clone(),
                client_secret: e.client_secret.clone(),
                id_token: credential_source(&e.id_token),
            }),
        };
        OAuthSettings {
            client_id: oauth.client_id.clone(),
            client_secret: oauth.client_secret.clone(),
            client_metadata_url: oauth.client_metadata_url.clone(),
            client_name: client_name.to_owned(),
            scopes: oauth.scopes.clone(),
            browser: if grant.is_unattended() { None } else { browser },
            grant,
            client_key: oauth.client_key.as_ref().map(|k| k.0.clone()),
            token_endpoint_auth_method: oauth.token_endpoint_auth_method.clone(),
            dpop: oauth.dpop,
            store,
            ..OAuthSettings::default()
        }
    }
}

fn credential_source(config: &CredentialConfig) -> CredentialSource {
    match config {
        CredentialConfig::Value(v) => CredentialSource::Value(v.clone()),
        CredentialConfig::File(p) => CredentialSource::File(p.clone()),
        CredentialConfig::Command(argv) => CredentialSource::Command(argv.clone()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcp_transport::{Secret, TransportKind};

    use super::*;

    #[test]
    fn stdio_and_remote_plans() {
        let stdio = ServerConfig {
            command: Some("uvx".into()),
            args: vec!["mcp-server-time".into()],
            env: [("A".to_owned(), "b".to_owned())].into(),
            cwd: Some("/srv".into()),
            ..ServerConfig::new("time")
        };
        let config = stdio.stdio_config().unwrap();
        assert_eq!((config.name.as_str(), config.command.as_str()), ("time", "uvx"));
        assert_eq!(config.args, ["mcp-server-time"]);
        assert_eq!(config.env, stdio.env);
        assert_eq!(config.cwd, stdio.cwd);
        assert!(stdio.remote_target().is_none());

        let remote = ServerConfig {
            transport: TransportChoice::Sse,
            url: Some("https://x.example/sse".into()),
            headers: [("X-A".to_owned(), "1".to_owned())].into(),
            bearer_token: Some(Secret::new("t")),
            read_timeout: Duration::from_secs(9),
            ..ServerConfig::new("r")
        };
        let target = remote.remote_target().unwrap();
        assert_eq!(target.url, "https://x.example/sse");
        assert_eq!(target.transport, Some(TransportKind::Sse));
        assert_eq!(target.headers, [("X-A".to_owned(), "1".to_owned())]);
        assert_eq!(target.bearer, Some(Secret::new("t")));
        assert_eq!(target.timeouts.read, Duration::from_secs(9));
        assert!(remote.stdio_config().is_none());
        let implied = ServerConfig { transport: TransportChoice::Remote, ..remote };
        assert_eq!(implied.remote_target().unwrap().transport, None);
    }

    #[test]
    fn close_grace_reaches_the_stdio_transport_only_when_set() {
        let base = ServerConfig::stdio("s", "srv");
        let default_grace = StdioConfig::new("s", "srv", &[] as &[String]).close_grace;
        assert_eq!(base.stdio_config().unwrap().close_grace, default_grace);
        let quick = base.close_grace(Duration::from_millis(200));
        assert_eq!(quick.stdio_config().unwrap().close_grace, Duration::from_millis(200));
        assert_ne!(default_grace, Duration::from_millis(200));
    }
}
