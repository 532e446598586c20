//! The chat LLM: an OpenAI-compatible client from `--base-url`/`--model` (or
//! `MCP_CHAT_BASE_URL`/`MCP_CHAT_MODEL`, then `OPENAI_BASE_URL`/`OPENAI_MODEL`), the key from the
//! variable `--api-key-env` names (default `OPENAI_API_KEY`), and `OPENAI_TOKEN_PARAMETER`
//! (`auto`, `max_tokens` or `max_completion_tokens`) for how the token limit is named. `chat`
//! talks to it, and the bootstrap hands it the servers' sampling requests.

use std::sync::Arc;

use host_bridge::{LlmClient, OpenAiClient, OpenAiConfig};

use crate::cli::{ChatArgs, Cli, Command};
use crate::exit::CliError;

/// The chat LLM, when the command is `chat` (it then also answers sampling requests).
pub(crate) fn sampling_llm(cli: &Cli) -> Result<Option<Arc<dyn LlmClient>>, CliError> {
    let Command::Chat(args) = &cli.command else { return Ok(None) };
    Ok(Some(chat_llm(args)?))
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
