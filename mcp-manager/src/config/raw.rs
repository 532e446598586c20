//! One server entry as written, before interpolation and validation: what every format's reader
//! produces. A [`Spelling`] says which key of a format holds which setting, so one reader serves
//! all four formats.

use mcp_protocol::types::logging::LoggingLevel;
use mcp_transport::parse_transport_kind;
use tool_system::ToolVisibility;

use super::model::TransportChoice;
use super::node::{FieldProblem, ObjectReader, Pair, Text};
use crate::connection::EraPreference;

/// A number of seconds as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seconds {
    pub field: String,
    pub value: f64,
}

/// Where a secret (a bearer token, a client secret) comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SecretSource {
    /// The token itself (interpolated).
    Value(Text),
    /// The name of the variable that holds it.
    EnvVar(Text),
}

/// The OAuth client settings of an entry, as written.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct RawOAuth {
    /// The keys of the format, for problems about a missing key.
    pub spelling: Option<&'static OAuthSpelling>,
    /// What fields are named from (`oauth.`).
    pub prefix: String,
    pub client_id: Option<Text>,
    pub client_secret: Option<SecretSource>,
    pub scopes: Option<Vec<Text>>,
    pub redirect_port: Option<(String, f64)>,
    pub client_metadata_url: Option<Text>,
    pub grant: Option<Text>,
    /// `Value`: the PEM file's path; `EnvVar`: the variable holding the PEM.
    pub private_key: Option<SecretSource>,
    pub signing_algorithm: Option<Text>,
    pub token_endpoint_auth_method: Option<Text>,
    pub dpop: Option<bool>,
    pub workload_token: RawCredential,
    pub idp_token_endpoint: Option<Text>,
    pub idp_client_id: Option<Text>,
    pub idp_client_secret: Option<SecretSource>,
    pub id_token: RawCredential,
}

/// The three ways of giving a credential (file, command, variable), as written; more than one is
/// a problem found later.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct RawCredential {
    pub file: Option<Text>,
    /// The field of the array, and its elements.
    pub command: Option<(String, Vec<Text>)>,
    pub env_var: Option<Text>,
}

impl RawCredential {
    /// The fields given, in the order file, command, variable.
    pub fn fields(&self) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.file.as_ref().map(|t| t.field.clone()));
        out.extend(self.command.as_ref().map(|(f, _)| f.clone()));
        out.extend(self.env_var.as_ref().map(|t| t.field.clone()));
        out
    }
}

/// The keys of the OAuth settings object of a format.
#[derive(Debug, PartialEq)]
pub(crate) struct OAuthSpelling {
    pub client_id: &'static str,
    pub client_secret: &'static str,
    pub client_secret_env_var: &'static str,
    pub scopes: &'static str,
    pub redirect_port: &'static str,
    pub client_metadata_url: &'static str,
    pub grant: &'static str,
    pub private_key_file: &'static str,
    pub private_key_env_var: &'static str,
    pub signing_algorithm: &'static str,
    pub token_endpoint_auth_method: &'static str,
    pub dpop: &'static str,
    pub workload_token_file: &'static str,
    pub workload_token_command: &'static str,
    pub workload_token_env_var: &'static str,
    pub idp_token_endpoint: &'static str,
    pub idp_client_id: &'static str,
    pub idp_client_secret: &'static str,
    pub idp_client_secret_env_var: &'static str,
    pub id_token_file: &'static str,
    pub id_token_command: &'static str,
    pub id_token_env_var: &'static str,
}

/// The TOML formats' `oauth` table.
pub(crate) const OAUTH_SNAKE: OAuthSpelling = OAuthSpelling {
    client_id: "client_id",
    client_secret: "client_secret",
    client_secret_env_var: "client_secret_env_var",
    scopes: "scopes",
    redirect_port: "redirect_port",
    client_metadata_url: "client_metadata_url",
    grant: "grant",
    private_key_file: "private_key_file",
    private_key_env_var: "private_key_env_var",
    signing_algorithm: "signing_algorithm",
    token_endpoint_auth_method: "token_endpoint_auth_method",
    dpop: "dpop",
    workload_token_file: "workload_token_file",
    workload_token_command: "workload_token_command",
    workload_token_env_var: "workload_token_env_var",
    idp_token_endpoint: "idp_token_endpoint",
    idp_client_id: "idp_client_id",
    idp_client_secret: "idp_client_secret",
    idp_client_secret_env_var: "idp_client_secret_env_var",
    id_token_file: "id_token_file",
    id_token_command: "id_token_command",
    id_token_env_var: "id_token_env_var",
};

/// The JSON formats' `oauth` object (VS Code writes `oauth.clientId`).
pub(crate) const OAUTH_CAMEL: OAuthSpelling = OAuthSpelling {
    client_id: "clientId",
    client_secret: "clientSecret",
    client_secret_env_var: "clientSecretEnvVar",
    scopes: "scopes",
    redirect_port: "redirectPort",
    client_metadata_url: "clientMetadataUrl",
    grant: "grant",
    private_key_file: "privateKeyFile",
    private_key_env_var: "privateKeyEnvVar",
    signing_algorithm: "signingAlgorithm",
    token_endpoint_auth_method: "tokenEndpointAuthMethod",
    dpop: "dpop",
    workload_token_file: "workloadTokenFile",
    workload_token_command: "workloadTokenCommand",
    workload_token_env_var: "workloadTokenEnvVar",
    idp_token_endpoint: "idpTokenEndpoint",
    idp_client_id: "idpClientId",
    idp_client_secret: "idpClientSecret",
    idp_client_secret_env_var: "idpClientSecretEnvVar",
    id_token_file: "idTokenFile",
    id_token_command: "idTokenCommand",
    id_token_env_var: "idTokenEnvVar",
};

impl OAuthSpelling {
    fn read(&'static self, r: &mut ObjectReader<'_>, key: &str) -> Option<RawOAuth> {
        let members = r.object(key)?;
        let prefix = format!("{}.", r.field(key));
        let mut o = ObjectReader::new(members, prefix.clone());
        o.check_keys(&[
            self.client_id,
            self.client_secret,
            self.client_secret_env_var,
            self.scopes,
            self.redirect_port,
            self.client_metadata_url,
            self.grant,
            self.private_key_file,
            self.private_key_env_var,
            self.signing_algorithm,
            self.token_endpoint_auth_method,
            self.dpop,
            self.workload_token_file,
            self.workload_token_command,
            self.workload_token_env_var,
            self.idp_token_endpoint,
            self.idp_client_id,
            self.idp_client_secret,
            self.idp_client_secret_env_var,
            self.id_token_file,
            self.id_token_command,
            self.id_token_env_var,
        ]);
        let client_secret = value_or_variable(&mut o, Some(self.client_secret), Some(self.client_secret_env_var));
        let redirect_port = o.number(self.redirect_port).map(|n| (o.field(self.redirect_port), n));
        let private_key = value_or_variable(&mut o, Some(self.private_key_file), Some(self.private_key_env_var));
        let idp_client_secret =
            value_or_variable(&mut o, Some(self.idp_client_secret), Some(self.idp_client_secret_env_var));
        let mut credential = |file: &str, command: &str, env_var: &str| RawCredential {
            file: o.string(file),
            command: o.strings(command).map(|argv| (o.field(command), argv)),
            env_var: o.string(env_var),
        };
        let workload_token =
            credential(self.workload_token_file, self.workload_token_command, self.workload_token_env_var);
        let id_token = credential(self.id_token_file, self.id_token_command, self.id_token_env_var);
        let out = RawOAuth {
            spelling: Some(self),
            prefix,
            client_id: o.string(self.client_id),
            client_secret,
            scopes: o.strings(self.scopes),
            redirect_port,
            client_metadata_url: o.string(self.client_metadata_url),
            grant: o.string(self.grant),
            private_key,
            signing_algorithm: o.string(self.signing_algorithm),
            token_endpoint_auth_method: o.string(self.token_endpoint_auth_method),
            dpop: o.bool(self.dpop),
            workload_token,
            idp_token_endpoint: o.string(self.idp_token_endpoint),
            idp_client_id: o.string(self.idp_client_id),
            idp_client_secret,
            id_token,
        };
        r.problems.extend(o.problems);
        Some(out)
    }
}

/// A secret given either as a value (`value_key`) or as the name of the variable that holds it
/// (`var_key`); both at once is a problem, and the value wins.
fn value_or_variable(r: &mut ObjectReader<'_>, value_key: Option<&str>, var_key: Option<&str>) -> Option<SecretSource> {
    let value = value_key.and_then(|k| r.string(k));
    let var = var_key.and_then(|k| r.string(k));
    match (value, var) {
        (Some(value), Some(_)) => {
            let (value_key, var_key) = (value_key.unwrap_or_default(), var_key.unwrap_or_default());
            r.problem(var_key, format!("give either {value_key:?} or {var_key:?}, not both"));
            Some(SecretSource::Value(value))
        }
        (Some(value), None) => Some(SecretSource::Value(value)),
        (None, Some(var)) => Some(SecretSource::EnvVar(var)),
        (None, None) => None,
    }
}

/// One server entry as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawServer {
    pub name: String,
    /// Where the entry is, for problems of a server with a blank name: `mcp.servers[2]`.
    pub path: String,
    /// The field a blank name is reported on.
    pub name_field: String,
    pub enabled: bool,
    pub transport: Option<TransportChoice>,
    pub command: Option<Text>,
    pub args: Vec<Text>,
    pub env: Vec<Pair>,
    pub env_file: Option<Text>,
    /// Variables copied from the environment (Codex `env_vars`).
    pub env_vars: Vec<Text>,
    pub cwd: Option<Text>,
    pub url: Option<Text>,
    pub headers: Vec<Pair>,
    /// Header name -> variable holding its value (Codex `env_http_headers`).
    pub env_headers: Vec<Pair>,
    pub bearer: Option<SecretSource>,
    /// `auth`: `oauth`, `bearer` or `none`.
    pub auth: Option<super::model::AuthMode>,
    pub oauth: Option<RawOAuth>,
    pub startup_timeout: Option<Seconds>,
    pub request_timeout: Option<Seconds>,
    pub read_timeout: Option<Seconds>,
    pub era: Option<EraPreference>,
    pub visibility: Option<ToolVisibility>,
    pub log_level: Option<LoggingLevel>,
    pub task: Option<crate::connection::TaskMode>,
    /// `enabled_tools`: the allow-list, each name with its field.
    pub allow: Option<Vec<Text>>,
    /// `disabled_tools`: the deny-list, each name with its field.
    pub deny: Vec<Text>,
    /// Keys present that only a stdio server uses.
    pub stdio_keys: Vec<String>,
    /// Keys present that only a remote server uses.
    pub remote_keys: Vec<String>,
    /// Problems found while reading (unknown keys, wrong types, bad enum strings).
    pub problems: Vec<FieldProblem>,
    /// Keys ignored by a lenient format.
    pub notes: Vec<FieldProblem>,
}

/// Which key of a format holds which setting; `None`: the format has no such setting.
pub(crate) struct Spelling {
    pub name: Option<&'static str>,
    pub transport: Option<&'static str>,
    /// VS Code: `"http"` means streamable HTTP with the SSE fallback.
    pub http_is_remote: bool,
    pub enabled: Option<&'static str>,
    pub disabled: Option<&'static str>,
    pub command: &'static str,
    pub args: &'static str,
    pub env: &'static str,
    pub env_file: Option<&'static str>,
    pub env_vars: Option<&'static str>,
    pub cwd: &'static str,
    pub url: &'static str,
    pub headers: &'static str,
    pub env_headers: Option<&'static str>,
    pub bearer_token: Option<&'static str>,
    pub bearer_token_env_var: Option<&'static str>,
    /// The authorization mode (`auth`).
    pub auth: Option<&'static str>,
    /// The OAuth client settings object, and its keys.
    pub oauth: Option<(&'static str, &'static OAuthSpelling)>,
    pub startup_timeout: Option<&'static str>,
    pub request_timeout: Option<&'static str>,
    pub read_timeout: Option<&'static str>,
    pub era: Option<&'static str>,
    /// The default visibility of the server's tools; the first key is the format's own, the
    /// others are accepted too (one of them at most).
    pub visibility: &'static [&'static str],
    pub log_level: Option<&'static str>,
    /// When optional tools run as tasks (`auto`, `always`, `never`).
    pub task: Option<&'static str>,
    /// The tool allow-list (`enabled_tools`), keys as for `visibility`.
    pub allow: &'static [&'static str],
    /// The tool deny-list (`disabled_tools`), keys as for `visibility`.
    pub deny: &'static [&'static str],
    /// Keys accepted and ignored (documented per format).
    pub ignored: &'static [&'static str],
    /// Whether an unknown key is a note rather than a problem (a host's own format).
    pub lenient: bool,
}

impl Spelling {
    /// Every key the format accepts in a server entry.
    pub fn known(&self) -> Vec<&'static str> {
        let mut keys: Vec<&'static str> = [
            self.name,
            self.transport,
            self.enabled,
            self.disabled,
            Some(self.command),
            Some(self.args),
            Some(self.env),
            self.env_file,
            self.env_vars,
            Some(self.cwd),
            Some(self.url),
            Some(self.headers),
            self.env_headers,
            self.bearer_token,
            self.bearer_token_env_var,
            self.auth,
            self.oauth.map(|(k, _)| k),
            self.startup_timeout,
            self.request_timeout,
            self.read_timeout,
            self.era,
            self.log_level,
            self.task,
        ]
        .into_iter()
        .flatten()
        .collect();
        keys.extend(self.visibility.iter().chain(self.allow).chain(self.deny));
        keys.extend(self.ignored);
        keys
    }

    /// Reads one server entry. `name` is the map key, or `None` when the entry carries its
    /// name (reference TOML).
    pub fn read(&self, name: Option<&str>, path: String, members: &[(String, super::node::Node)]) -> RawServer {
        let mut r = ObjectReader::new(members, "");
        r.check_keys_as(&self.known(), self.lenient);
        let (name, name_field) = match (name, self.name) {
            (Some(name), _) => (name.to_owned(), path.clone()),
            (None, Some(key)) => (r.string(key).map(|t| t.value).unwrap_or_default(), format!("{path}.{key}")),
            (None, None) => (String::new(), path.clone()),
        };
        let http_is_remote = self.http_is_remote;
        let transport = self.transport.and_then(|key| r.parsed(key, |s| parse_transport(s, http_is_remote)));
        let enabled = match (self.enabled.and_then(|k| r.bool(k)), self.disabled.and_then(|k| r.bool(k))) {
            (Some(enabled), _) => enabled,
            (None, Some(disabled)) => !disabled,
            (None, None) => true,
        };
        let stdio_keys =
            [Some(self.command), Some(self.args), Some(self.env), self.env_file, self.env_vars, Some(self.cwd)]
                .into_iter()
                .flatten()
                .filter(|k| r.has_content(k))
                .map(str::to_owned)
                .collect();
        let remote_keys = [
            Some(self.url),
            Some(self.headers),
            self.env_headers,
            self.bearer_token,
            self.bearer_token_env_var,
            self.auth,
            self.oauth.map(|(k, _)| k),
        ]
        .into_iter()
        .flatten()
        .filter(|k| r.has_content(k))
        .map(str::to_owned)
        .collect();
        let bearer = value_or_variable(&mut r, self.bearer_token, self.bearer_token_env_var);
        let auth = self.auth.and_then(|k| r.parsed(k, |s| s.parse::<super::model::AuthMode>()));
        let oauth = self.oauth.and_then(|(key, spelling)| spelling.read(&mut r, key));
        let mut seconds = |key: Option<&str>| {
            let key = key?;
            r.number(key).map(|value| Seconds { field: r.field(key), value })
        };
        let startup_timeout = seconds(self.startup_timeout);
        let request_timeout = seconds(self.request_timeout);
        let read_timeout = seconds(self.read_timeout);
        RawServer {
            name,
            path,
            name_field,
            enabled,
            transport,
            command: r.string(self.command),
            args: r.strings(self.args).unwrap_or_default(),
            env: r.string_map(self.env).unwrap_or_default(),
            env_file: self.env_file.and_then(|k| r.string(k)),
            env_vars: self.env_vars.and_then(|k| r.strings(k)).unwrap_or_default(),
            cwd: r.string(self.cwd),
            url: r.string(self.url),
            headers: r.string_map(self.headers).unwrap_or_default(),
            env_headers: self.env_headers.and_then(|k| r.string_map(k)).unwrap_or_default(),
            bearer,
            auth,
            oauth,
            startup_timeout,
            request_timeout,
            read_timeout,
            era: self.era.and_then(|k| r.parsed(k, |s| s.parse::<EraPreference>())),
            visibility: one_of(&mut r, self.visibility).and_then(|k| r.parsed(k, parse_visibility)),
            log_level: self.log_level.and_then(|k| r.parsed(k, parse_log_level)),
            task: self.task.and_then(|k| r.parsed(k, |s| s.parse::<crate::connection::TaskMode>())),
            allow: one_of(&mut r, self.allow).and_then(|k| r.strings(k)),
            deny: one_of(&mut r, self.deny).and_then(|k| r.strings(k)).unwrap_or_default(),
            stdio_keys,
            remote_keys,
            problems: r.problems,
            notes: r.notes,
        }
    }
}

/// The one key of `keys` (spellings of one setting) the entry uses: a problem when it uses
/// several (the first is read).
fn one_of(r: &mut ObjectReader<'_>, keys: &[&'static str]) -> Option<&'static str> {
    let present: Vec<&'static str> = keys.iter().copied().filter(|k| r.get(k).is_some()).collect();
    if let [first, second, ..] = present.as_slice() {
        r.problem(second, format!("the same setting as {first:?}: give one of them"));
    }
    present.first().copied()
}

/// A `type`/`transport` string. With `http_is_remote` (VS Code), `"http"` keeps the SSE
/// fallback, as VS Code does.
pub(crate) fn parse_transport(value: &str, http_is_remote: bool) -> Result<TransportChoice, String> {
    if http_is_remote && value.trim().eq_ignore_ascii_case("http") {
        return Ok(TransportChoice::Remote);
    }
    parse_transport_kind(value).map(TransportChoice::from).map_err(|e| e.to_string())
}

/// `visible` or `deferred`.
pub(crate) fn parse_visibility(value: &str) -> Result<ToolVisibility, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "visible" => Ok(ToolVisibility::Visible),
        "deferred" => Ok(ToolVisibility::Deferred),
        _ => Err(format!("unknown visibility {value:?}: expected \"visible\" or \"deferred\"")),
    }
}

/// One of the eight syslog levels MCP uses.
pub(crate) fn parse_log_level(value: &str) -> Result<LoggingLevel, String> {
    Ok(match value.trim().to_ascii_lowercase().as_str() {
        "debug" => LoggingLevel::Debug,
        "info" => LoggingLevel::Info,
        "notice" => LoggingLevel::Notice,
        "warning" => LoggingLevel::Warning,
        "error" => LoggingLevel::Error,
        "critical" => LoggingLevel::Critical,
        "alert" => LoggingLevel::Alert,
        "emergency" => LoggingLevel::Emergency,
        _ => {
            return Err(format!(
                "unknown log level {value:?}: expected debug, info, notice, warning, error, critical, alert or emergency"
            ));
        }
    })
}
