//! The runtime configuration: what the manager needs to connect servers and to describe the
//! client, whatever file it came from.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use mcp_protocol::types::logging::LoggingLevel;
use mcp_transport::auth::jose::SigningKey;
use mcp_transport::auth::oauth::DpopPolicy;
use mcp_transport::redact::{Masked, redact_args, redact_url_str};
use mcp_transport::{Secret, TransportKind};
use tool_system::ToolVisibility;

use crate::connection::EraPreference;

/// Default time a server has to start and finish its handshake: 30 s.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time a request may take: 60 s.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time an HTTP response may stay silent: 300 s.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);
/// Default sampling rate limit: at most 30 requests per minute and server.
pub const DEFAULT_SAMPLING_REQUESTS_PER_MINUTE: u32 = 30;
/// Default cap of a sampling request's `maxTokens`: 4096 (a larger request is lowered to it).
pub const DEFAULT_SAMPLING_MAX_TOKENS_CAP: u32 = 4096;
/// The longest timeout a configuration may give (365 days): a larger one is a problem naming the
/// server and the field (it would overflow deadline arithmetic, and means "never" anyway).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 60 * 60);
/// Default `max_tokens` of a sampling request that names none: 1024.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// A whole configuration: the servers in file order, and the client settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpConfig {
    /// Every server, enabled or not, in file order (the manager registers them in this order).
    pub servers: Vec<ServerConfig>,
    /// How the client presents itself and what it offers servers.
    pub client: ClientConfig,
}

impl McpConfig {
    /// The enabled servers, in file order.
    pub fn enabled_servers(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().filter(|s| s.enabled)
    }

    /// The server named `name`, enabled or not (the first one, if a disabled draft shares it).
    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers
            .iter()
            .find(|s| s.name == name && s.enabled)
            .or_else(|| self.servers.iter().find(|s| s.name == name))
    }
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportChoice {
    /// A child process speaking over stdin/stdout.
    Stdio,
    /// Streamable HTTP only.
    StreamableHttp,
    /// The legacy HTTP+SSE transport only.
    Sse,
    /// A URL with no explicit type: streamable HTTP, falling back to HTTP+SSE when the server
    /// refuses it (see `RemoteTarget`).
    Remote,
}

impl TransportChoice {
    /// Whether the server is reached over HTTP.
    pub fn is_remote(self) -> bool {
        self != TransportChoice::Stdio
    }

    /// The explicit transport kind: `None` for [`TransportChoice::Remote`], whose transport is
    /// decided while connecting. This is what `RemoteTarget::transport` takes.
    pub fn kind(self) -> Option<TransportKind> {
        match self {
            TransportChoice::Stdio => Some(TransportKind::Stdio),
            TransportChoice::StreamableHttp => Some(TransportKind::StreamableHttp),
            TransportChoice::Sse => Some(TransportKind::Sse),
            TransportChoice::Remote => None,
        }
    }
}

impl From<TransportKind> for TransportChoice {
    /// `Memory` and `Custom` are not configurable and map to [`TransportChoice::Remote`]; the
    /// loaders never produce them.
    fn from(kind: TransportKind) -> Self {
        match kind {
            TransportKind::Stdio => TransportChoice::Stdio,
            TransportKind::StreamableHttp => TransportChoice::StreamableHttp,
            TransportKind::Sse => TransportChoice::Sse,
            _ => TransportChoice::Remote,
        }
    }
}

/// How a remote server's requests are authorized (`auth` in a config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthMode {
    /// The default: the bearer token or `Authorization` header when one is configured, else
    /// OAuth when the server asks for it (HTTP 401).
    #[default]
    Auto,
    /// OAuth 2.1, even when an `Authorization` header is configured (it is dropped).
    OAuth,
    /// The configured bearer token only; a 401 is reported as it is.
    Bearer,
    /// No authorization at all: no bearer token, no OAuth.
    None,
}

impl std::str::FromStr for AuthMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(AuthMode::Auto),
            "oauth" => Ok(AuthMode::OAuth),
            "bearer" => Ok(AuthMode::Bearer),
            "none" => Ok(AuthMode::None),
            _ => Err(format!("unknown auth {s:?}: expected \"oauth\", \"bearer\", \"none\" or \"auto\"")),
        }
    }
}

/// The OAuth client settings of a server (`oauth` in a config). Every member is optional: with
/// none, the client registers itself dynamically and asks for the scopes the server names.
#[derive(Clone, PartialEq, Default)]
pub struct OAuthConfig {
    /// A client id registered beforehand.
    pub client_id: Option<String>,
    /// Its secret (from the config or the variable it names).
    pub client_secret: Option<Secret>,
    /// The scopes to ask for instead of the server's.
    pub scopes: Option<Vec<String>>,
    /// The port of the loopback redirect listener (default: any free port).
    pub redirect_port: Option<u16>,
    /// The https URL of a client ID metadata document to use as the client id.
    pub client_metadata_url: Option<String>,
    /// How tokens are obtained (`grant`; default: the authorization code flow in a browser).
    pub grant: GrantConfig,
    /// The client's private key, for `private_key_jwt` (`private_key_file`,
    /// `private_key_env_var`), loaded when the config is loaded.
    pub client_key: Option<ClientKey>,
    /// `token_endpoint_auth_method`: `client_secret_basic`, `client_secret_post`,
    /// `private_key_jwt` or `none` (default: chosen from the credentials and the metadata).
    pub token_endpoint_auth_method: Option<String>,
    /// `dpop`: absent, when the server offers it; `true`, always; `false`, never.
    pub dpop: DpopPolicy,
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("scopes", &self.scopes)
            .field("redirect_port", &self.redirect_port)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("grant", &self.grant)
            .field("client_key", &self.client_key)
            .field("token_endpoint_auth_method", &self.token_endpoint_auth_method)
            .field("dpop", &self.dpop)
            .finish()
    }
}

impl OAuthConfig {
    /// How `mcp status` names the way this server is authorized: `oauth` (the code flow),
    /// `client credentials (private_key_jwt)`, `workload identity`, `enterprise`, with `, DPoP`
    /// when DPoP is switched on.
    pub fn grant_label(&self) -> String {
        let mut label = match &self.grant {
            GrantConfig::AuthorizationCode => "oauth".to_owned(),
            GrantConfig::ClientCredentials => {
                let method = match (&self.token_endpoint_auth_method, &self.client_key) {
                    (Some(m), _) => m.as_str(),
                    (None, Some(_)) => "private_key_jwt",
                    (None, None) => "client secret",
                };
                format!("client credentials ({method})")
            }
            GrantConfig::WorkloadIdentity { .. } => "workload identity".to_owned(),
            GrantConfig::Enterprise(_) => "enterprise".to_owned(),
        };
        if self.dpop == DpopPolicy::Always {
            label.push_str(", DPoP");
        }
        label
    }
}

/// How a server's OAuth client obtains tokens (`oauth.grant`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum GrantConfig {
    /// `authorization_code`: a person logs in in a browser (`mcp login`).
    #[default]
    AuthorizationCode,
    /// `client_credentials`: the client authorizes as itself, with a secret or a private key.
    ClientCredentials,
    /// `workload_identity`: the JWT bearer grant with a workload identity token.
    WorkloadIdentity {
        /// Where the workload token comes from.
        token: CredentialConfig,
    },
    /// `enterprise`: enterprise-managed authorization (an ID token exchanged at the identity
    /// provider, then the JWT bearer grant).
    Enterprise(EnterpriseConfig),
}

impl GrantConfig {
    /// The name the config gives it (`authorization_code`, `client_credentials`,
    /// `workload_identity`, `enterprise`).
    pub fn name(&self) -> &'static str {
        match self {
            GrantConfig::AuthorizationCode => "authorization_code",
            GrantConfig::ClientCredentials => "client_credentials",
            GrantConfig::WorkloadIdentity { .. } => "workload_identity",
            GrantConfig::Enterprise(_) => "enterprise",
        }
    }

    /// Whether it runs unattended: no browser, no person.
    pub fn is_unattended(&self) -> bool {
        *self != GrantConfig::AuthorizationCode
    }
}

/// The identity provider of enterprise-managed authorization.
#[derive(Debug, Clone, PartialEq)]
pub struct EnterpriseConfig {
    /// `idp_token_endpoint`: where the ID token is exchanged.
    pub token_endpoint: String,
    /// `idp_client_id`: this client's id there.
    pub client_id: Option<String>,
    /// `idp_client_secret` (or the variable `idp_client_secret_env_var` names).
    pub client_secret: Option<Secret>,
    /// Where the user's ID token comes from (`id_token_file`, `id_token_command`,
    /// `id_token_env_var`).
    pub id_token: CredentialConfig,
}

/// Where a credential an unattended grant presents comes from. A file or a command is read
/// again for every grant; a variable is read when the config is loaded.
#[derive(Clone, PartialEq)]
pub enum CredentialConfig {
    /// The value of a variable, read when the config was loaded.
    Value(Secret),
    /// A file, read whole and trimmed (relative paths are relative to the config's folder).
    File(PathBuf),
    /// A program and its arguments, run without a shell; its standard output, trimmed.
    Command(Vec<String>),
}

impl fmt::Debug for CredentialConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialConfig::Value(_) => f.write_str("Value(<redacted>)"),
            CredentialConfig::File(path) => f.debug_tuple("File").field(&Masked(&path.display().to_string())).finish(),
            CredentialConfig::Command(argv) => f.debug_tuple("Command").field(&redact_args(argv)).finish(),
        }
    }
}

/// The client's private key (`private_key_jwt`). Equal keys have the same public key; `Debug`
/// shows its algorithm only.
#[derive(Clone)]
pub struct ClientKey(pub SigningKey);

impl PartialEq for ClientKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.algorithm() == other.0.algorithm() && self.0.thumbprint() == other.0.thumbprint()
    }
}

impl fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientKey").field("algorithm", &self.0.algorithm().name()).field("key", &Redacted).finish()
    }
}

/// One configured server.
///
/// Strings are already interpolated. `Debug` shows no secret: the bearer token, every `env`
/// value and the value of every header whose name looks secret ([`looks_secret`]) are redacted;
/// the URL loses its user name, password and query values; arguments lose the values of
/// secret-looking flags (`--token=...`); and every value interpolated from the environment is
/// masked wherever it appears (`mcp_transport::redact::mask_secrets`).
#[derive(Clone, PartialEq)]
pub struct ServerConfig {
    /// The server's name, unique among enabled servers.
    pub name: String,
    /// Whether the manager connects it (default `true`). A disabled server is a draft: it is
    /// listed but not validated.
    pub enabled: bool,
    /// How it is reached.
    pub transport: TransportChoice,
    /// Stdio: the program.
    pub command: Option<String>,
    /// Stdio: its arguments.
    pub args: Vec<String>,
    /// Stdio: variables set for the child (a VS Code `envFile` is merged in, `env` winning).
    pub env: BTreeMap<String, String>,
    /// Stdio: the working directory, as written (a relative path is relative to the host's
    /// working directory).
    pub cwd: Option<PathBuf>,
    /// Remote: the endpoint, `http` or `https`.
    pub url: Option<String>,
    /// Remote: extra headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// Remote: a bearer token, sent as `Authorization: Bearer ...`.
    pub bearer_token: Option<Secret>,
    /// Remote: how requests are authorized (default [`AuthMode::Auto`]).
    pub auth: AuthMode,
    /// Remote: the OAuth client settings.
    pub oauth: OAuthConfig,
    /// How long start-up and handshake may take (default 30 s).
    pub startup_timeout: Duration,
    /// How long one request may take (default 60 s).
    pub request_timeout: Duration,
    /// Remote: how long a response may stay silent (default 300 s).
    pub read_timeout: Duration,
    /// Which protocol era to speak (default auto).
    pub era: EraPreference,
    /// Which of the server's tools are offered (`enabled_tools`, `disabled_tools`).
    pub tools: ToolFilter,
    /// Whether its tools are offered directly or through tool search (`tool_visibility`);
    /// `None`: the manager's default (`ManagerOptions::tool_visibility`, visible unless the
    /// host says otherwise).
    pub tool_visibility: Option<ToolVisibility>,
    /// The log level to ask the server for, if any.
    pub log_level: Option<LoggingLevel>,
    /// When a tool whose task support is `optional` is called as a task (default auto: only
    /// tools that require it).
    pub task: crate::connection::TaskMode,
    /// How long each step of a stdio server's shutdown waits (end of input, then SIGTERM, then
    /// SIGKILL); `None`: the transport's default (2 s). Set only by code: a command-line tool
    /// about to exit waits less than a long-running host.
    pub close_grace: Option<std::time::Duration>,
}

impl ServerConfig {
    /// A server named `name` with every default: enabled, stdio with no command yet, default
    /// timeouts, era auto, every tool visible.
    pub fn new(name: impl Into<String>) -> Self {
        ServerConfig {
            name: name.into(),
            enabled: true,
            transport: TransportChoice::Stdio,
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            bearer_token: None,
            auth: AuthMode::Auto,
            oauth: OAuthConfig::default(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            era: EraPreference::Auto,
            tools: ToolFilter::default(),
            tool_visibility: None,
            log_level: None,
            task: crate::connection::TaskMode::Auto,
            close_grace: None,
        }
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: BTreeMap<&str, Redacted> = self.env.keys().map(|k| (k.as_str(), Redacted)).collect();
        let headers: BTreeMap<&str, HeaderValue<'_>> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), if looks_secret(k) { HeaderValue::Secret } else { HeaderValue::Plain(v) }))
            .collect();
        let cwd = self.cwd.as_ref().map(|cwd| cwd.display().to_string());
        f.debug_struct("ServerConfig")
            .field("name", &self.name)
            .field("enabled", &self.enabled)
            .field("transport", &self.transport)
            .field("command", &self.command.as_deref().map(Masked))
            .field("args", &redact_args(&self.args))
            .field("env", &env)
            .field("cwd", &cwd.as_deref().map(Masked))
            .field("url", &self.url.as_deref().map(redact_url_str))
            .field("headers", &headers)
            .field("bearer_token", &self.bearer_token)
            .field("auth", &self.auth)
            .field("oauth", &self.oauth)
            .field("startup_timeout", &self.startup_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("era", &self.era)
            .field("tools", &self.tools)
            .field("tool_visibility", &self.tool_visibility)
            .field("log_level", &self.log_level)
            .field("task", &self.task)
            .field("close_grace", &self.close_grace)
            .finish()
    }
}

struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

enum HeaderValue<'a> {
    Plain(&'a str),
    Secret,
}

impl fmt::Debug for HeaderValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderValue::Plain(v) => fmt::Debug::fmt(&Masked(v), f),
            HeaderValue::Secret => f.write_str("<redacted>"),
        }
    }
}

/// Whether a header or variable name looks like it holds a secret: it contains `auth`, `token`,
/// `key`, `secret`, `password`, `passwd`, `credential`, `cookie` or `session` (any case). The
/// same test as [`mcp_transport::redact::looks_secret`].
pub fn looks_secret(name: &str) -> bool {
    mcp_transport::redact::looks_secret(name)
}

/// Which of a server's tools are offered to the host, as Codex writes it: `enabled_tools` (an
/// allow-list) and `disabled_tools` (a deny-list), by the server's own tool names.
///
/// A tool the filter drops is not routed at all: no listing shows it, a call of it (even by its
/// MCP name) fails saying the server's config disables it, and it never takes a name from
/// another server. A name in both lists is a config error.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolFilter {
    /// `enabled_tools`: only these tools (exact names), when set.
    pub allow: Option<Vec<String>>,
    /// `disabled_tools`: never these tools (exact names); wins over `allow`.
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool named `name` (the server's own name for it) is offered.
    pub fn allows(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|allow| allow.iter().any(|a| a == name)) && !self.deny.iter().any(|d| d == name)
    }
}

/// How the client presents itself and what it offers servers.
///
/// The sampling and elicitation settings can only switch off or limit what the host supplies:
/// without a handler in `HostCallbacks`, the capability is not declared whatever they say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// `clientInfo.name` (default: this crate's name).
    pub name: String,
    /// `clientInfo.version` (default: this crate's version).
    pub version: String,
    /// Roots offered to servers, as `file://` URIs.
    pub roots: Vec<String>,
    /// Sampling through the host's LLM.
    pub sampling: SamplingSettings,
    /// Elicitation from the user.
    pub elicitation: ElicitationSettings,
    /// Tool names the host keeps for its own tools; a server tool with one of these names is
    /// renamed or skipped by the manager.
    pub reserved_tool_names: Vec<String>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            name: env!("CARGO_PKG_NAME").to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            roots: Vec::new(),
            sampling: SamplingSettings::default(),
            elicitation: ElicitationSettings::default(),
            reserved_tool_names: Vec::new(),
        }
    }
}

/// Sampling settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingSettings {
    /// Whether servers may sample the host's LLM (default `true`).
    pub enabled: bool,
    /// Whether sampling requests may carry tools (default `false`).
    pub tool_support: bool,
    /// At most this many sampling requests per minute and server (default
    /// [`DEFAULT_SAMPLING_REQUESTS_PER_MINUTE`]; `None`, no limit, can only be set by code: a
    /// config file gives a positive number, as large as it likes).
    pub requests_per_minute: Option<u32>,
    /// `max_tokens` for a request that names none (default 1024; the cap applies to it too).
    pub default_max_tokens: u32,
    /// The most tokens a request may ask for: a larger `maxTokens` is lowered to it (default
    /// [`DEFAULT_SAMPLING_MAX_TOKENS_CAP`]).
    pub max_tokens_cap: u32,
    /// Models the host may choose from, in order of preference (default: the host's own).
    pub models: Vec<String>,
    /// How the token limit is named in the LLM requests that sampling makes (`None`, the
    /// default: as the host's LLM client is set, which is [`TokenParameter::Auto`] unless the
    /// host or its environment says otherwise).
    pub token_parameter: Option<TokenParameter>,
    /// The OpenAI-compatible endpoint of the LLM that answers sampling requests (`base_url`),
    /// for hosts that build their LLM client from the config (the `mcp` command does).
    pub base_url: Option<String>,
    /// The model of that LLM (`model`).
    pub model: Option<String>,
    /// The environment variable that holds its API key (`api_key_env`; the key itself is never
    /// in the config).
    pub api_key_env: Option<String>,
}

/// How a chat-completions request names its token limit (`token_parameter`: `auto`,
/// `max_tokens` or `max_completion_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TokenParameter {
    /// By the model: `max_completion_tokens` for OpenAI's o-series and `gpt-5` and later,
    /// `max_tokens` for the others; and when the endpoint refuses the one sent as unsupported,
    /// the other, remembered for that model.
    #[default]
    Auto,
    /// Always `max_tokens` (vLLM, llama.cpp, Ollama, older OpenAI models).
    MaxTokens,
    /// Always `max_completion_tokens` (OpenAI's current models).
    MaxCompletionTokens,
}

impl TokenParameter {
    /// The name in a config file or the environment: `auto`, `max_tokens` or
    /// `max_completion_tokens`.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenParameter::Auto => "auto",
            TokenParameter::MaxTokens => "max_tokens",
            TokenParameter::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

impl std::str::FromStr for TokenParameter {
    type Err = String;

    /// `auto`, `max_tokens` or `max_completion_tokens` (case and surrounding blanks ignored).
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(TokenParameter::Auto),
            "max_tokens" => Ok(TokenParameter::MaxTokens),
            "max_completion_tokens" => Ok(TokenParameter::MaxCompletionTokens),
            _ => Err(format!("{text:?} is not auto, max_tokens or max_completion_tokens")),
        }
    }
}

impl Default for SamplingSettings {
    fn default() -> Self {
        SamplingSettings {
            enabled: true,
            tool_support: false,
            requests_per_minute: Some(DEFAULT_SAMPLING_REQUESTS_PER_MINUTE),
            default_max_tokens: DEFAULT_MAX_TOKENS,
            max_tokens_cap: DEFAULT_SAMPLING_MAX_TOKENS_CAP,
            models: Vec::new(),
            token_parameter: None,
            base_url: None,
            model: None,
            api_key_env: None,
        }
    }
}

/// Elicitation settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElicitationSettings {
    /// Whether servers may ask the user for input (default `true`).
    pub enabled: bool,
    /// Whether URL-mode elicitation is offered (default `false`).
    pub url_mode: bool,
}

impl Default for ElicitationSettings {
    fn default() -> Self {
        ElicitationSettings { enabled: true, url_mode: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_redaction() {
        assert_eq!(
            redact_url_str("https://u:pw@h.example/mcp?key=abc&x=1"),
            "https://redacted:redacted@h.example/mcp?key=redacted&x=redacted"
        );
        assert_eq!(redact_url_str("https://h.example/mcp"), "https://h.example/mcp");
    }

    #[test]
    fn debug_shows_no_secret_nor_interpolated_value() {
        let env: BTreeMap<String, String> = [
            ("TOKEN", "tok-from-env-1"),
            ("PASS", "pass-from-env-2"),
            ("QKEY", "qkey-from-env-3"),
            ("HDR", "hdr-from-env-4"),
            ("BEARER", "bearer-from-env-5"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into();
        let text = r#"{"mcpServers": {
            "s": {"command": "srv", "args": ["--token=${TOKEN}", "--label", "x-${HDR}", "--secret", "literal-6"],
                  "env": {"K": "${TOKEN}", "LITERAL": "env-literal-7"}},
            "r": {"url": "https://user-8:${PASS}@h.example/mcp?key=${QKEY}&mode=${HDR}",
                  "headers": {"X-Custom": "v-${HDR}", "X-Api-Key": "literal-9",
                              "Authorization": "Bearer ${BEARER}"}}
        }}"#;
        let config = crate::config::McpConfig::parse(text, None, "mcp.json", &env).unwrap();
        let secrets = [
            "tok-from-env-1",
            "pass-from-env-2",
            "qkey-from-env-3",
            "hdr-from-env-4",
            "bearer-from-env-5",
            "literal-6",
        ];
        let literal = ["env-literal-7", "user-8", "literal-9"];
        for server in &config.servers {
            let mut shown = vec![format!("{server:?}")];
            if let Some(stdio) = server.stdio_config() {
                shown.push(format!("{stdio:?}"));
            }
            if let Some(target) = server.remote_target() {
                shown.push(format!("{target:?}"));
                shown.push(format!("{:?}", target.streamable_http_config(&server.name)));
                shown.push(format!("{:?}", target.sse_config(&server.name)));
            }
            for shown in shown {
                for secret in secrets.iter().chain(&literal) {
                    assert!(!shown.contains(secret), "{secret} shows in {shown}");
                }
                assert!(shown.contains("<redacted>") || shown.contains("redacted@"), "{shown}");
            }
        }
        let stdio = format!("{:?}", config.servers[0]);
        assert!(stdio.contains("--token=<redacted>") && stdio.contains("x-<redacted>"), "{stdio}");
        let remote = format!("{:?}", config.servers[1]);
        assert!(remote.contains("key=redacted") && remote.contains("\"v-<redacted>\""), "{remote}");
    }

    #[test]
    fn secret_names() {
        for name in ["Authorization", "X-API-Key", "GITHUB_TOKEN", "client_secret", "Cookie", "DB_PASSWORD"] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["Accept", "X-Client", "PATH", "HOME"] {
            assert!(!looks_secret(name), "{name}");
        }
    }
}
