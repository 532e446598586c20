//! The LLM of `mcp`: an OpenAI-compatible client.
//!
//! - In `chat`: from `--base-url`/`--model` (or `MCP_CHAT_BASE_URL`/`MCP_CHAT_MODEL`, then
//!   `OPENAI_BASE_URL`/`OPENAI_MODEL`), the key from the variable `--api-key-env` names (default
//!   `OPENAI_API_KEY`). `chat` talks to it, and it answers the servers' sampling requests.
//! - In every other command, when one is configured: `model`, `base_url` and `api_key_env` under
//!   `[mcp.client.sampling]`, else `MCP_LLM_MODEL`/`MCP_LLM_BASE_URL`/`MCP_LLM_API_KEY_ENV`, else
//!   `OPENAI_MODEL`/`OPENAI_BASE_URL` with `OPENAI_API_KEY`; it answers sampling requests. With
//!   none, a sampling request is declined with a message that says how to configure one.
//!
//! `OPENAI_TOKEN_PARAMETER` (`auto`, `max_tokens` or `max_completion_tokens`) names the token
//! limit in both.

use std::sync::Arc;

use futures::future::BoxFuture;
use host_bridge::{LlmClient, OpenAiClient, OpenAiConfig};
use mcp_manager::callbacks::SamplingHandler;
use mcp_manager::config::SamplingSettings;
use mcp_protocol::ErrorObject;
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult};

use crate::cli::{ChatArgs, Cli, Command};
use crate::exit::CliError;

/// What a command without an LLM tells a server that asks it to sample one.
pub(crate) const NO_LLM: &str = "the mcp command has no LLM configured for sampling: set model (and base_url, \
     api_key_env) under [mcp.client.sampling] in the config, or OPENAI_MODEL (and OPENAI_BASE_URL, \
     OPENAI_API_KEY) in the environment";

/// The LLM that answers sampling requests: the chat LLM in `chat`, else the one the config or
/// the environment configures, if any.
pub(crate) fn sampling_llm(cli: &Cli, settings: &SamplingSettings) -> Result<Option<Arc<dyn LlmClient>>, CliError> {
    if let Command::Chat(args) = &cli.command {
        return Ok(Some(chat_llm(args)?));
    }
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    configured_llm(settings, &env)
}

/// The LLM `settings`, else the environment (`env`), configures.
fn configured_llm(
    settings: &SamplingSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Arc<dyn LlmClient>>, CliError> {
    let Some(model) = settings.model.clone().or_else(|| env("MCP_LLM_MODEL")).or_else(|| env("OPENAI_MODEL")) else {
        return Ok(None);
    };
    let base_url = settings
        .base_url
        .clone()
        .or_else(|| env("MCP_LLM_BASE_URL"))
        .or_else(|| env("OPENAI_BASE_URL"))
        .unwrap_or_else(|| OpenAiConfig::DEFAULT_BASE_URL.to_owned());
    let key_var = settings
        .api_key_env
        .clone()
        .or_else(|| env("MCP_LLM_API_KEY_ENV"))
        .unwrap_or_else(|| "OPENAI_API_KEY".to_owned());
    let mut config = OpenAiConfig::new(base_url, model);
    config.api_key = env(&key_var).map(host_bridge::Secret::new);
    if let Some(parameter) = env("OPENAI_TOKEN_PARAMETER") {
        config.token_parameter =
            parameter.parse().map_err(|e| CliError::usage(format!("OPENAI_TOKEN_PARAMETER: {e}")))?;
    }
    let client = OpenAiClient::new(config).map_err(|e| CliError::usage(format!("sampling LLM: {e}")))?;
    Ok(Some(Arc::new(client)))
}

/// Answers every sampling request with a refusal that says how to configure an LLM.
pub(crate) struct NoLlm;

impl SamplingHandler for NoLlm {
    fn create_message(
        &self,
        server: &str,
        _params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        crate::output::terminal::errln(&format!("mcp: server {server:?} asked to sample an LLM; declined: {NO_LLM}"));
        // -1: the code the spec gives a refused sampling request.
        Box::pin(std::future::ready(Err(ErrorObject::new(mcp_protocol::ErrorCode(-1), NO_LLM))))
    }
}

/// The LLM `chat` talks to, built from its flags and the environment.
pub(crate) fn chat_llm(args: &ChatArgs) -> Result<Arc<dyn LlmClient>, CliError> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let model = args
        .model
        .clone()
        .or_else(|| env("OPENAI_MODEL"))
        .ok_or_else(|| CliError::usage("chat needs a model: --model NAME (or MCP_CHAT_MODEL / OPENAI_MODEL)"))?;
    let base_url = args
        .base_url
        .clone()
        .or_else(|| env("OPENAI_BASE_URL"))
        .unwrap_or_else(|| OpenAiConfig::DEFAULT_BASE_URL.to_owned());
    let mut config = OpenAiConfig::new(base_url, model);
    config.api_key = env(&args.api_key_env).map(host_bridge::Secret::new);
    if let Some(parameter) = env("OPENAI_TOKEN_PARAMETER") {
        config.token_parameter =
            parameter.parse().map_err(|e| CliError::usage(format!("chat: OPENAI_TOKEN_PARAMETER: {e}")))?;
    }
    let client = OpenAiClient::new(config).map_err(|e| CliError::usage(format!("chat: {e}")))?;
    Ok(Arc::new(client))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: BTreeMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| vars.get(name).cloned()
    }

    #[test]
    fn an_llm_comes_from_the_config_then_the_environment_else_none() {
        let none = SamplingSettings::default();
        assert!(configured_llm(&none, &env_of(&[])).unwrap().is_none(), "nothing configured");
        assert!(configured_llm(&none, &env_of(&[("OPENAI_BASE_URL", "http://127.0.0.1:1")])).unwrap().is_none());
        assert!(configured_llm(&none, &env_of(&[("OPENAI_MODEL", "m")])).unwrap().is_some());
        assert!(configured_llm(&none, &env_of(&[("MCP_LLM_MODEL", "m")])).unwrap().is_some());
        let configured = SamplingSettings { model: Some("m".into()), ..SamplingSettings::default() };
        assert!(configured_llm(&configured, &env_of(&[])).unwrap().is_some());
        let bad = configured_llm(&configured, &env_of(&[("OPENAI_TOKEN_PARAMETER", "lots")]));
        assert!(bad.err().unwrap().message.contains("OPENAI_TOKEN_PARAMETER"));
    }
}
