//! `conformance-client`: the client under test of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, run by `cargo xtask conformance`).
//!
//! `conformance-client <server url>`
//!
//! The suite starts a mock server for one scenario and runs this binary with the server's URL as
//! the last argument. The environment names the scenario (`MCP_CONFORMANCE_SCENARIO`), may carry
//! scenario data as JSON (`MCP_CONFORMANCE_CONTEXT`) and, from suite 0.2 on, the revision the mock
//! server speaks (`MCP_CONFORMANCE_PROTOCOL_VERSION`). The client connects with this stack's
//! [`StreamableHttpTransport`] through an [`McpConnection`] and does what a host would:
//!
//! - `initialize`: the handshake, then close.
//! - `json-schema-ref-no-deref`: list the tools, then close.
//! - `json-schema-2020-12-preservation`: list the tools and echo the focal tool's `inputSchema`
//!   back, as received, through the echo tool.
//! - `sep-2640-client-no-prefetch`: list the skills (`skills/list`), load none, then close.
//! - the other `sep-2640-client-*` scenarios (`-verify-digest`, `-verify-size`,
//!   `-verify-frontmatter`): list the skills, load the first one (its `SKILL.md`, verified
//!   against the listing by the library), then read each of its other files, verified too; a
//!   refused skill ends the run with the library's error (exit 1, which those scenarios allow).
//! - every other scenario (`tools_call`, `sse-retry`, `elicitation-sep1034-client-defaults`, the
//!   auth scenarios, ...): discover everything the server offers, call every tool with arguments
//!   made from its input schema (or make the calls the context's `toolCalls` names), get every
//!   prompt, read every resource, then close.
//!
//! The era follows `MCP_CONFORMANCE_PROTOCOL_VERSION`: a legacy revision is offered in
//! `initialize` without a `server/discover` probe, a modern one is spoken without a fallback.
//! Without it (suite 0.1) the era is negotiated as for any server.
//!
//! Authorization: an [`OAuthClient`] with a memory store authorizes the requests. The browser
//! step is headless: a plain GET of the authorization URL, with the code (and `state`, `iss`)
//! read from the redirect's `Location`. The context's `client_id` / `client_secret` are the
//! pre-registered credentials; the client metadata document URL is the one the suite expects.
//!
//! Elicitation is answered as a user who accepts the form as the server pre-filled it: `accept`
//! with the requested schema's defaults. URL-mode elicitation is declined.
//!
//! Progress goes to stdout (the suite keeps it as `stdout.txt`). Any failure prints to stderr and
//! exits 1; the whole run is bounded by [`OVERALL_TIMEOUT`], below the suite's own 30 s.

use std::process::exit;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::callbacks::ElicitationHandler;
use mcp_manager::connection::EraPreference;
use mcp_manager::connection::skills::SkillLimits;
use mcp_manager::{ConnectionOptions, McpConnection, RequestOptions, TransportFactory};
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::prompts::GetPromptParams;
use mcp_protocol::types::skills::Skill;
use mcp_protocol::types::tools::Tool;
use mcp_protocol::{Era, ErrorObject, ProtocolVersion};
use mcp_transport::auth::browser::{AuthorizationResponse, BrowserStep, PendingRedirect};
use mcp_transport::auth::jose::{SigningAlgorithm, SigningKey};
use mcp_transport::auth::oauth::{CredentialSource, EnterpriseSettings, Grant, OAuthClient, OAuthSettings};
use mcp_transport::auth::{AuthError, AuthStep, Authorization};
use mcp_transport::redact::describe;
use mcp_transport::{Secret, StreamableHttpConfig, StreamableHttpTransport, Transport};
use serde_json::Value;

/// The longest a whole scenario may take.
const OVERALL_TIMEOUT: Duration = Duration::from_secs(25);

/// The focal and echo tools of `json-schema-2020-12-preservation`.
const SCHEMA_FOCAL_TOOL: &str = "json_schema_2020_12_tool";
const SCHEMA_ECHO_TOOL: &str = "json_schema_echo";

/// The client ID metadata document URL the suite's `auth/basic-cimd` expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The redirect URI of the headless browser step (never listened on: the redirect is read from
/// the authorization endpoint's answer).
const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

type Failure = String;

fn main() {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client <server url> (with MCP_CONFORMANCE_SCENARIO set)");
        exit(2);
    };
    let Ok(scenario) = std::env::var("MCP_CONFORMANCE_SCENARIO") else {
        eprintln!("conformance-client: MCP_CONFORMANCE_SCENARIO is not set");
        exit(2);
    };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a Tokio runtime");
    let outcome = runtime.block_on(async {
        match tokio::time::timeout(OVERALL_TIMEOUT, run(&scenario, &url)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("gave up after {OVERALL_TIMEOUT:?}")),
        }
    });
    match outcome {
        Ok(()) => println!("conformance-client: {scenario}: done"),
        Err(e) => {
            eprintln!("conformance-client: {scenario}: {e}");
            exit(1);
        }
    }
}

async fn run(scenario: &str, url: &str) -> Result<(), Failure> {
    println!("scenario {scenario}, server {url}");
    if let Ok(context) = std::env::var("MCP_CONFORMANCE_CONTEXT") {
        // Its keys only: the values hold secrets (client secrets, private keys, tokens).
        let keys: Vec<String> = serde_json::from_str::<Value>(&context)
            .ok()
            .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
            .unwrap_or_default();
        println!("context keys: {}", keys.join(", "));
    }
    let connection = connection(scenario, url)?;
    let server = connection.connect().await.map_err(|e| format!("connect: {e}"))?;
    println!(
        "connected: {} {} (protocol {}, capabilities {})",
        server.implementation.name,
        server.implementation.version,
        server.protocol_version,
        serde_json::to_string(&server.capabilities).unwrap_or_default()
    );
    let result = match scenario {
        "initialize" => Ok(()),
        "json-schema-ref-no-deref" => list_tools(&connection).await.map(drop),
        "json-schema-2020-12-preservation" => echo_schema(&connection).await,
        "sep-2640-client-no-prefetch" => list_skills(&connection).await.map(drop),
        s if s.starts_with("sep-2640-client-") => use_skill(&connection).await,
        _ => exercise_everything(&connection).await,
    };
    connection.close().await;
    println!("closed");
    result
}

/// A connection over streamable HTTP to `url`, offering the revision the suite names when it is
/// one this stack speaks in the legacy era.
fn connection(scenario: &str, url: &str) -> Result<McpConnection, Failure> {
    let mut config = StreamableHttpConfig::new("conformance", url);
    config.authorization = Some(authorization(scenario, url)?);
    // Fail on a bad URL now rather than inside connect.
    StreamableHttpTransport::new(config.clone()).map_err(|e| format!("transport: {e}"))?;
    let factory: TransportFactory = Arc::new(move || {
        let config = config.clone();
        Box::pin(async move { Ok(Arc::new(StreamableHttpTransport::new(config)?) as Arc<dyn Transport>) })
    });
    let mut options = ConnectionOptions::new("conformance");
    options.client_info.name = "mcp-stack-conformance-client".into();
    // Without a revision named (suite 0.1), the era is negotiated as for any server.
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        let version = ProtocolVersion::parse(&version);
        match version.era() {
            Some(Era::Legacy) => {
                options.era = EraPreference::Legacy;
                options.protocol_version = version;
            }
            Some(Era::Modern) => options.era = EraPreference::Modern,
            None => {}
        }
    }
    options.callbacks.elicitation = Some(Arc::new(AcceptDefaults));
    Ok(McpConnection::new(factory, options))
}

/// The OAuth client: pre-registered credentials from the context, the suite's metadata
/// document URL, a headless browser step; for the extension scenarios, the grant their
/// context describes (client credentials with a secret or a private key, workload identity,
/// enterprise-managed authorization).
fn authorization(scenario: &str, url: &str) -> Result<Arc<dyn Authorization>, Failure> {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    let client_key = match text("private_key_pem") {
        Some(pem) => {
            let algorithm = text("signing_algorithm").map(|a| a.parse::<SigningAlgorithm>()).transpose()?;
            Some(SigningKey::from_pem(&pem, algorithm).map_err(|e| format!("private_key_pem: {e}"))?)
        }
        None => None,
    };
    let grant = if let Some(token_endpoint) = text("idp_token_endpoint") {
        let Some(id_token) = text("idp_id_token") else { return Err("the context has no idp_id_token".into()) };
        Grant::Enterprise(EnterpriseSettings {
            token_endpoint,
            client_id: text("idp_client_id"),
            client_secret: text("idp_client_secret").map(Secret::new),
            id_token: CredentialSource::Value(Secret::new(id_token)),
        })
    } else if let Some(jwt) = text("valid_jwt") {
        Grant::WorkloadIdentity { token: CredentialSource::Value(Secret::new(jwt)) }
    } else if scenario.contains("client-credentials") {
        Grant::ClientCredentials
    } else {
        Grant::AuthorizationCode
    };
    let settings = OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret").map(Secret::new),
        client_metadata_url: Some(CLIENT_METADATA_URL.into()),
        client_name: "mcp-stack-conformance-client".into(),
        browser: (!grant.is_unattended()).then(|| Arc::new(Headless) as Arc<dyn BrowserStep>),
        grant,
        client_key,
        http_timeout: Duration::from_secs(5),
        ..OAuthSettings::default()
    };
    let client = OAuthClient::new("conformance", url, settings).map_err(|e| format!("oauth: {e}"))?;
    Ok(Arc::new(client))
}

/// The headless browser step: GET the authorization URL and read the redirect.
#[derive(Debug)]
struct Headless;

impl BrowserStep for Headless {
    fn prepare<'a>(&'a self, _: Option<&'a str>) -> BoxFuture<'a, Result<Box<dyn PendingRedirect>, AuthError>> {
        Box::pin(async { Ok(Box::new(HeadlessRedirect) as Box<dyn PendingRedirect>) })
    }
}

struct HeadlessRedirect;

impl PendingRedirect for HeadlessRedirect {
    fn redirect_uri(&self) -> &str {
        REDIRECT_URI
    }

    fn complete(self: Box<Self>, url: url::Url) -> BoxFuture<'static, Result<AuthorizationResponse, AuthError>> {
        Box::pin(async move {
            let fail = |m: String| AuthError::new(AuthStep::Authorization, m);
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(5))
                .build()
                .map_err(|e| fail(format!("cannot build an HTTP client: {}", describe(&e))))?;
            println!("authorizing at {}", url.origin().ascii_serialization());
            let response =
                client.get(url).send().await.map_err(|e| fail(format!("GET authorization URL: {}", describe(&e))))?;
            let location =
                response.headers().get(reqwest::header::LOCATION).and_then(|l| l.to_str().ok()).ok_or_else(|| {
                    fail(format!("the authorization endpoint answered {} without a redirect", response.status()))
                })?;
            let redirect = url::Url::parse(REDIRECT_URI)
                .and_then(|base| base.join(location))
                .map_err(|e| fail(format!("the redirect is not a URL: {e}")))?;
            Ok(AuthorizationResponse::from_query(&redirect))
        })
    }
}

/// A user who accepts every form as the server pre-filled it.
struct AcceptDefaults;

impl ElicitationHandler for AcceptDefaults {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        let result = match &params {
            ElicitParams::Form(form) => {
                let content = form.requested_schema.defaults();
                println!("elicitation {:?}: accepting with {}", form.message, Value::Object(content.clone()));
                ElicitResult::accept(content)
            }
            other => {
                println!("elicitation in {} mode: declining", other.mode());
                ElicitResult::decline()
            }
        };
        Box::pin(async move { Ok(result) })
    }
}

async fn list_tools(connection: &McpConnection) -> Result<Vec<Tool>, Failure> {
    let tools = connection.list_all_tools().await.map_err(|e| format!("tools/list: {e}"))?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools: {names:?}");
    Ok(tools)
}

/// `json-schema-2020-12-preservation`: hand the focal tool's schema, as this stack decoded it,
/// back to the server.
async fn echo_schema(connection: &McpConnection) -> Result<(), Failure> {
    let tools = list_tools(connection).await?;
    let focal = tools
        .iter()
        .find(|t| t.name == SCHEMA_FOCAL_TOOL)
        .ok_or_else(|| format!("the server lists no tool {SCHEMA_FOCAL_TOOL:?}"))?;
    let mut arguments = JsonObject::new();
    arguments.insert("schema".into(), Value::Object((*focal.input_schema).clone()));
    call_tool(connection, SCHEMA_ECHO_TOOL, arguments).await
}

/// Discover everything, call every tool, get every prompt, read every resource.
/// The skills the server lists (no skill file is read).
async fn list_skills(connection: &McpConnection) -> Result<Vec<Skill>, Failure> {
    let skills = connection.list_skills().await.map_err(|e| format!("skills/list: {e}"))?;
    println!("skills: {}", skills.iter().map(|s| s.uri.as_str()).collect::<Vec<_>>().join(", "));
    Ok(skills)
}

/// Load the first listed skill, then read its supporting files, each verified.
async fn use_skill(connection: &McpConnection) -> Result<(), Failure> {
    let skills = list_skills(connection).await?;
    let entry = skills.first().ok_or("the server lists no skill")?;
    let skill = connection.load_skill(entry, &SkillLimits::default()).await.map_err(|e| e.to_string())?;
    println!("loaded skill {} ({} bytes of instructions)", skill.uri, skill.instructions.len());
    let supporting: Vec<String> =
        skill.files().filter(|(path, _)| *path != "SKILL.md").map(|(path, _)| path.to_owned()).collect();
    for path in supporting {
        let file = connection.read_skill_file(&skill, &path).await.map_err(|e| e.to_string())?;
        println!("read {} ({} bytes, verified)", file.uri, file.bytes.len());
    }
    Ok(())
}

async fn exercise_everything(connection: &McpConnection) -> Result<(), Failure> {
    let inventory = connection.discover().await.map_err(|e| format!("discovery: {e}"))?;
    for warning in &inventory.warnings {
        println!("discovery warning: {warning}");
    }
    let names: Vec<&str> = inventory.tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools: {names:?}");
    match context_tool_calls()? {
        // The scenario names the calls to make (`toolCalls` in its context).
        Some(calls) => {
            for (name, arguments) in calls {
                call_tool(connection, &name, arguments).await?;
            }
        }
        None => {
            for tool in inventory.tools.iter() {
                call_tool(connection, &tool.name, arguments_for(&tool.input_schema)).await?;
            }
        }
    }
    for prompt in inventory.prompts.iter() {
        let arguments = prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| (a.name.clone(), "test".to_owned()))
            .collect();
        let params = GetPromptParams { name: prompt.name.clone(), arguments: Some(arguments), ..Default::default() };
        connection.get_prompt(params).await.map_err(|e| format!("prompts/get {:?}: {e}", prompt.name))?;
        println!("got prompt {:?}", prompt.name);
    }
    for resource in inventory.resources.iter() {
        connection.read_resource(&resource.uri).await.map_err(|e| format!("resources/read {:?}: {e}", resource.uri))?;
        println!("read resource {:?}", resource.uri);
    }
    Ok(())
}

/// The `toolCalls` of `MCP_CONFORMANCE_CONTEXT` (`[{name, arguments}]`), when it has them.
fn context_tool_calls() -> Result<Option<Vec<(String, JsonObject)>>, Failure> {
    let Ok(text) = std::env::var("MCP_CONFORMANCE_CONTEXT") else { return Ok(None) };
    let context: Value =
        serde_json::from_str(&text).map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?;
    let Some(calls) = context.get("toolCalls").and_then(Value::as_array) else { return Ok(None) };
    calls
        .iter()
        .map(|call| {
            let name = call.get("name").and_then(Value::as_str).ok_or("a toolCalls entry has no name")?;
            let arguments = call.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default();
            Ok((name.to_owned(), arguments))
        })
        .collect::<Result<Vec<_>, &str>>()
        .map(Some)
        .map_err(str::to_owned)
}

async fn call_tool(connection: &McpConnection, name: &str, arguments: JsonObject) -> Result<(), Failure> {
    println!("calling {name} with {}", Value::Object(arguments.clone()));
    let outcome = connection
        .call_tool(name, Some(arguments), RequestOptions::default())
        .await
        .map_err(|e| format!("tools/call {name:?}: {e}"))?;
    match outcome {
        Outcome::Complete(result) => {
            let shown = serde_json::to_string(&result.content).unwrap_or_default();
            if result.is_error == Some(true) {
                println!("{name} answered a tool error: {shown}");
            } else {
                println!("{name} answered: {shown}");
            }
            Ok(())
        }
        other => {
            Err(format!("tools/call {name:?} did not complete: {}", serde_json::to_string(&other).unwrap_or_default()))
        }
    }
}

/// Arguments for a tool: each required member of its input schema gets its default, its first
/// enum value, or a plain value of its type (numbers count up from 2, so `a + b` is `2 + 3`).
fn arguments_for(schema: &JsonObject) -> JsonObject {
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return JsonObject::new();
    };
    let mut next_number = 2;
    let mut arguments = JsonObject::new();
    for (name, definition) in properties {
        if !required.contains(&name.as_str()) {
            continue;
        }
        let value = if let Some(default) = definition.get("default") {
            default.clone()
        } else if let Some(first) = definition.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
            first.clone()
        } else {
            match definition.get("type").and_then(Value::as_str) {
                Some("number" | "integer") => {
                    next_number += 1;
                    Value::from(next_number - 1)
                }
                Some("boolean") => Value::Bool(true),
                Some("object") => Value::Object(JsonObject::new()),
                Some("array") => Value::Array(Vec::new()),
                Some("null") => Value::Null,
                _ => Value::String("test".into()),
            }
        };
        arguments.insert(name.clone(), value);
    }
    arguments
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_fill_required_members_by_type() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "number"},
                "b": {"type": "number"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "flag": {"type": "boolean", "default": false},
                "optional": {"type": "string"}
            },
            "required": ["a", "b", "mode", "flag"]
        });
        let Value::Object(schema) = schema else { unreachable!() };
        let arguments = Value::Object(arguments_for(&schema));
        assert_eq!(arguments, json!({"a": 2, "b": 3, "mode": "fast", "flag": false}));
    }
}
