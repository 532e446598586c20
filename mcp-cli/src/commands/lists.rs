//! The listing subcommands: `tools`, `prompts`, `resources`, `templates` and `status`.

use std::collections::HashMap;

use mcp_manager::ServerState;
use mcp_manager::manager::{ConflictKind, McpManager};
use tool_system::ToolExecutionContext;

use super::setup::Started;
use super::{print, print_json};
use crate::exit::{CliError, ExitCode};
use crate::output::stdout_width;
use crate::output::views::{self, HiddenTool, Served, StatusRow, ToolEntry};

pub(crate) async fn tools(session: &Started, schema: bool, json: bool) -> Result<ExitCode, CliError> {
    let exposed = session.registry.tools(&ToolExecutionContext::default()).await;
    // A tool only an MCP App may call has no name the LLM sees.
    let llm_names: HashMap<(Option<String>, String), Option<String>> = exposed
        .into_iter()
        .map(|t| {
            let key = (t.spec.namespace.as_deref().map(str::to_owned), t.spec.name.clone());
            (key, t.spec.callers.model.then(|| t.llm_name.into_string()))
        })
        .collect();
    let entries: Vec<ToolEntry> = session
        .manager
        .routing()
        .tools()
        .iter()
        .map(|route| ToolEntry {
            server: route.server().to_string(),
            llm_name: llm_names
                .get(&(Some(route.server().to_string()), route.tool().name.clone()))
                .cloned()
                .unwrap_or_else(|| Some(String::new())),
            tool: route.tool().clone(),
        })
        .collect();
    if json {
        print_json(&views::tools_json(&entries))?;
    } else if schema {
        print(&views::tools_schemas(&entries))?;
    } else {
        print(&views::tools_table(&entries, stdout_width()))?;
    }
    Ok(ExitCode::Ok)
}

pub(crate) fn prompts(manager: &McpManager, json: bool) -> Result<ExitCode, CliError> {
    let entries: Vec<_> = manager
        .routing()
        .prompts()
        .iter()
        .map(|p| Served { server: p.server.to_string(), item: p.prompt.clone() })
        .collect();
    if json {
        print_json(&views::prompts_json(&entries))
    } else {
        print(&views::prompts_table(&entries, stdout_width()))
    }?;
    Ok(ExitCode::Ok)
}

pub(crate) fn resources(manager: &McpManager, json: bool) -> Result<ExitCode, CliError> {
    let entries: Vec<_> = manager
        .routing()
        .resources()
        .iter()
        .map(|r| Served { server: r.server.to_string(), item: r.resource.clone() })
        .collect();
    if json {
        print_json(&views::resources_json(&entries))
    } else {
        print(&views::resources_table(&entries, stdout_width()))
    }?;
    Ok(ExitCode::Ok)
}

pub(crate) fn templates(manager: &McpManager, json: bool) -> Result<ExitCode, CliError> {
    let entries: Vec<_> = manager
        .routing()
        .templates()
        .iter()
        .map(|t| Served { server: t.server.to_string(), item: t.template.clone() })
        .collect();
    if json {
        print_json(&views::templates_json(&entries))
    } else {
        print(&views::templates_table(&entries, stdout_width()))
    }?;
    Ok(ExitCode::Ok)
}

pub(crate) fn status(session: &super::setup::Started, json: bool) -> Result<ExitCode, CliError> {
    let rows: Vec<StatusRow> = session
        .manager
        .status()
        .into_iter()
        .map(|s| {
            let (grant, auth) = super::auth::describe(
                &session.config,
                &s.name,
                s.needs_login,
                matches!(s.state, ServerState::Ready | ServerState::Degraded),
            )
            .unzip();
            let hidden = s
                .conflicts
                .iter()
                .filter(|c| c.what == "tool" && c.server == s.name)
                .filter_map(|c| match &c.kind {
                    ConflictKind::TakenBy(winner) => {
                        Some(HiddenTool { tool: c.name.clone(), hidden_by: winner.clone() })
                    }
                    _ => None,
                })
                .collect();
            StatusRow {
                warnings: s.warnings,
                notices: s.notices,
                hidden,
                grant,
                auth,
                name: s.name,
                state: s.state.to_string(),
                transport: s.transport,
                protocol_version: s.protocol_version,
                era: s.era,
                tools: s.tool_count,
                prompts: s.prompt_count,
                resources: s.resource_count,
                templates: s.resource_template_count,
                last_error: s.last_error,
            }
        })
        .collect();
    if json { print_json(&views::status_json(&rows)) } else { print(&views::status_table(&rows, stdout_width())) }?;
    Ok(ExitCode::Ok)
}
