//! `mcp chat`: a terminal conversation with an OpenAI-compatible LLM (see [`super::llm`]) that
//! may call every MCP tool, showing each call and its result.
//!
//! Lines are read from stdin until it ends (or `/quit`); each may lead to several rounds of tool
//! calls (at most [`MAX_TOOL_ROUNDS`]).

use host_bridge::{ChatMessage, ChatRequest, LlmClient, ToolChoice, ToolDefinition};
use tool_system::{ToolExecutionContext, ToolInvocation};

use super::ask::read_line_bounded;
use super::setup::Started;
use crate::cli::ChatArgs;
use crate::exit::{CliError, ExitCode};
use crate::output::terminal;

/// Most LLM rounds answering one user line.
pub(crate) const MAX_TOOL_ROUNDS: usize = 8;

pub(crate) async fn run(session: &Started, args: &ChatArgs) -> Result<ExitCode, CliError> {
    let llm = super::llm::chat_llm(args)?;
    let ctx = ToolExecutionContext::default();
    let exposed = session.registry.llm_tools(&ctx).await;
    let tools: Vec<ToolDefinition> = exposed
        .iter()
        .map(|t| ToolDefinition {
            name: t.llm_name.to_string(),
            description: t.spec.description.clone().or_else(|| t.spec.title.clone()),
            parameters: (*t.spec.parameters).clone(),
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
