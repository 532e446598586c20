//! `mcp chat`: a terminal conversation with an OpenAI-compatible LLM that may call every MCP tool,
//! showing each call and its result; and the terminal's answers to elicitation requests.
//!
//! The LLM comes from `--base-url`/`--model` (or `MCP_CHAT_BASE_URL`/`MCP_CHAT_MODEL`, then
//! `OPENAI_BASE_URL`/`OPENAI_MODEL`) and the key from the variable `--api-key-env` names
//! (default `OPENAI_API_KEY`); `OPENAI_TOKEN_PARAMETER` (`auto`, `max_tokens` or
//! `max_completion_tokens`) says how the token limit is named. Lines are read from stdin until it ends (or `/quit`); each may
//! lead to several rounds of tool calls (at most [`MAX_TOOL_ROUNDS`]).

use std::io::{BufRead, Read as _};
use std::sync::Arc;

use futures::future::BoxFuture;
use host_bridge::{
    AskUser, ChatMessage, ChatRequest, FormAnswer, FormRequest, LlmClient, OpenAiClient, OpenAiConfig, ToolChoice,
    ToolDefinition,
};
use tool_system::{ToolExecutionContext, ToolInvocation};

use super::setup::Started;
use crate::cli::{ChatArgs, Cli, Command};
use crate::exit::{CliError, ExitCode};
use crate::output::terminal;

/// Most LLM rounds answering one user line.
pub(crate) const MAX_TOOL_ROUNDS: usize = 8;

/// The chat LLM, when the command is `chat` (it then also answers sampling requests).
pub(crate) fn sampling_llm(cli: &Cli) -> Result<Option<Arc<dyn LlmClient>>, CliError> {
    let Command::Chat(args) = &cli.command else { return Ok(None) };
    Ok(Some(llm(args)?))
}

fn llm(args: &ChatArgs) -> Result<Arc<dyn LlmClient>, CliError> {
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

pub(crate) async fn run(session: &Started, args: &ChatArgs) -> Result<ExitCode, CliError> {
    let llm = llm(args)?;
    let ctx = ToolExecutionContext::default();
    let exposed = session.registry.llm_tools(&ctx).await;
    let tools: Vec<ToolDefinition> = exposed
        .iter()
        .map(|t| ToolDefinition {
            name: t.llm_name.clone(),
            description: t.spec.description.clone().or_else(|| t.spec.title.clone()),
            parameters: t.spec.parameters.clone(),
        })
        .collect();
    terminal::errln(&format!(
        "mcp chat: {} tools from {} server(s); type a message, /quit to end",
        tools.len(),
        session.manager.status().len()
    ));
    let mut messages = vec![ChatMessage::system(
        "You are a helpful assistant. Use the available tools when they help answer the user.",
    )];
    let (tx, mut lines) = tokio::sync::mpsc::channel::<String>(16);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        while let Some(line) = read_line_bounded(&mut stdin) {
            let line = line.unwrap_or_else(|too_long| {
                terminal::errln(&format!("mcp chat: {too_long}"));
                String::new()
            });
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    while let Some(line) = lines.recv().await {
        let line = line.trim().to_owned();
        if line.is_empty() {
            continue;
        }
        if line == "/quit" || line == "/exit" {
            break;
        }
        messages.push(ChatMessage::user(line));
        answer(session, &*llm, &tools, &mut messages, &ctx).await?;
    }
    Ok(ExitCode::Ok)
}

/// Let the LLM answer the last user message, running the tools it calls.
async fn answer(
    session: &Started,
    llm: &dyn LlmClient,
    tools: &[ToolDefinition],
    messages: &mut Vec<ChatMessage>,
    ctx: &ToolExecutionContext,
) -> Result<(), CliError> {
    for _ in 0..MAX_TOOL_ROUNDS {
        let request = ChatRequest {
            messages: messages.clone(),
            tools: tools.to_vec(),
            tool_choice: (!tools.is_empty()).then_some(ToolChoice::Auto),
            ..Default::default()
        };
        let response = llm.chat(request).await.map_err(|e| CliError::unreachable(format!("chat LLM: {e}")))?;
        if response.tool_calls.is_empty() {
            let text = response.text.unwrap_or_default();
            terminal::outln(&text);
            messages.push(ChatMessage::assistant(text));
            return Ok(());
        }
        messages.push(ChatMessage::assistant_tool_calls(response.text.clone(), response.tool_calls.clone()));
        for call in response.tool_calls {
            let output = match &call.arguments {
                Ok(arguments) => {
                    terminal::outln(&format!("→ {} {}", call.name, arguments));
                    let invocation = ToolInvocation::from_value(&call.name, arguments.clone()).with_call_id(&call.id);
                    let result = session.registry.invoke(invocation, ctx.clone()).await;
                    let text = result.history_text();
                    // A failure's history text starts with `Error: `, which says it already.
                    terminal::outln(&format!("← {}", crate::output::truncate(&text, 400)));
                    text
                }
                Err(bad) => {
                    terminal::outln(&format!("→ {} (arguments are not valid JSON: {})", call.name, bad.error));
                    format!("error: the arguments were not valid JSON ({})", bad.error)
                }
            };
            messages.push(ChatMessage::tool_result(call.id, output));
        }
    }
    terminal::outln(&format!("(stopped after {MAX_TOOL_ROUNDS} rounds of tool calls)"));
    Ok(())
}

/// The longest line read from stdin (a chat message or a form answer).
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;

/// One line of `input` without its line break: `None` at the end of input (or on a read error),
/// `Some(Err(..))` for a line over [`MAX_LINE_BYTES`], which is skipped without being kept.
pub(crate) fn read_line_bounded(input: &mut impl BufRead) -> Option<Result<String, String>> {
    let mut bytes = Vec::new();
    let n = input.by_ref().take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut bytes).ok()?;
    if n == 0 {
        return None;
    }
    if bytes.len() > MAX_LINE_BYTES && !bytes.ends_with(b"\n") {
        // Skip the rest of the line, a bounded chunk at a time.
        loop {
            bytes.clear();
            match input.by_ref().take(MAX_LINE_BYTES as u64).read_until(b'\n', &mut bytes) {
                Ok(0) | Err(_) => break,
                Ok(_) if bytes.ends_with(b"\n") => break,
                Ok(_) => {}
            }
        }
        return Some(Err(format!("a line longer than {MAX_LINE_BYTES} bytes was skipped")));
    }
    let text = String::from_utf8_lossy(&bytes);
    Some(Ok(text.trim_end_matches(['\n', '\r']).to_owned()))
}

/// Elicitation on a terminal: the server's message, then each field (its name and title) asked in
/// turn (Enter keeps the default); an empty answer to "answer?" declines. What the server wrote
/// is shown sanitized, like all output.
pub(crate) struct TerminalAsk;

impl AskUser for TerminalAsk {
    fn ask_form(&self, request: FormRequest) -> BoxFuture<'static, FormAnswer> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask_on_terminal(&request)).await.unwrap_or(FormAnswer::Cancel)
        })
    }
}

fn ask_on_terminal(request: &FormRequest) -> FormAnswer {
    let read = || match read_line_bounded(&mut std::io::stdin().lock()) {
        Some(Ok(line)) => Some(line.trim().to_owned()),
        Some(Err(_)) | None => None,
    };
    terminal::errln(&format!("\nserver {:?} asks: {}", request.server, request.message));
    terminal::err("answer? [y/N] ");
    if !matches!(read().as_deref(), Some("y" | "Y" | "yes")) {
        return FormAnswer::Decline;
    }
    let mut values = request.prefilled.clone();
    for (name, property) in request.schema.properties.iter() {
        let default = values.get(name).map(|v| v.to_string()).unwrap_or_default();
        let property = serde_json::to_value(property).unwrap_or_default();
        let kind = property["type"].as_str();
        let title = property["title"].as_str().map(|t| format!(" ({t})")).unwrap_or_default();
        terminal::err(&format!("  {name}{title} [{default}]: "));
        let Some(answer) = read() else { return FormAnswer::Cancel };
        if answer.is_empty() {
            continue;
        }
        let value = match kind {
            Some("number" | "integer" | "boolean") => {
                serde_json::from_str(&answer).unwrap_or(serde_json::Value::String(answer))
            }
            _ => serde_json::Value::String(answer),
        };
        values.insert(name.clone(), value);
    }
    FormAnswer::Accept(values)
}

#[cfg(test)]
mod tests {
    use super::{MAX_LINE_BYTES, read_line_bounded};

    #[test]
    fn lines_are_read_bounded() {
        let long = "x".repeat(MAX_LINE_BYTES * 2 + 10);
        let text = format!("hello\r\n{long}\nafter\nlast");
        let mut input = std::io::Cursor::new(text.into_bytes());
        assert_eq!(read_line_bounded(&mut input), Some(Ok("hello".into())));
        assert!(read_line_bounded(&mut input).unwrap().unwrap_err().contains("skipped"));
        assert_eq!(read_line_bounded(&mut input), Some(Ok("after".into())));
        assert_eq!(read_line_bounded(&mut input), Some(Ok("last".into())), "a last line without a line break");
        assert_eq!(read_line_bounded(&mut input), None);
    }
}
