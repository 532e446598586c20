//! `mcp skills` (the skills every server lists) and `mcp skill NAME` (load one: its `SKILL.md`
//! verified against the listing, and with `--json` every file of it).

use base64::Engine as _;
use mcp_manager::connection::skills::{SkillError, SkillSummary};
use mcp_manager::manager::{ManagerError, McpManager};
use serde_json::{Value, json};

use super::{print, print_json};
use crate::cli::SkillArgs;
use crate::exit::{CliError, ExitCode};
use crate::output::{Table, stdout_width};

/// A skill error as a CLI error: a refused skill is a protocol error (the server sent what its
/// listing does not describe), an unknown one a usage error.
fn skill_error(error: ManagerError) -> CliError {
    match error {
        ManagerError::Skill(SkillError::Connection(e)) | ManagerError::Connection(e) => CliError::from(&e),
        ManagerError::Skill(
            e @ (SkillError::Verification { .. } | SkillError::Invalid { .. } | SkillError::BadAnswer { .. }),
        ) => CliError::protocol(e.to_string()),
        other => CliError::usage(other.to_string()),
    }
}

/// The skills of every server that declares the extension (`--server` keeps one server).
async fn summaries(manager: &McpManager) -> Result<Vec<SkillSummary>, CliError> {
    let (skills, failed) = manager.skills().await;
    if let Some((_, error)) = failed.into_iter().next() {
        return Err(skill_error(error));
    }
    Ok(skills)
}

pub(crate) async fn skills(manager: &McpManager, json: bool) -> Result<ExitCode, CliError> {
    let skills = summaries(manager).await?;
    if json {
        let list: Vec<Value> = skills.iter().map(|s| serde_json::to_value(s).unwrap_or(Value::Null)).collect();
        print_json(&json!({ "skills": list }))?;
        return Ok(ExitCode::Ok);
    }
    let mut table = Table::new(["NAME", "SERVER", "PATH", "FILES", "DESCRIPTION"]);
    for s in &skills {
        let files = s.files.map(|n| n.to_string()).unwrap_or_else(|| "-".into());
        let description = match &s.problem {
            Some(problem) => format!("[cannot be loaded: {problem}] {}", s.description),
            None => s.description.clone(),
        };
        table.row([s.name.clone(), s.server.clone(), s.path.clone(), files, description]);
    }
    if table.is_empty() {
        print("No skills.")?;
    } else {
        print(&table.render(stdout_width()))?;
    }
    Ok(ExitCode::Ok)
}

pub(crate) async fn skill(manager: &McpManager, args: &SkillArgs, json: bool) -> Result<ExitCode, CliError> {
    let server = owner(manager, &args.name).await?;
    if !json {
        let skill = manager.load_skill(&server, &args.name).await.map_err(skill_error)?;
        print(skill.instructions.trim_end_matches('\n'))?;
        return Ok(ExitCode::Ok);
    }
    let (skill, files) = manager.load_skill_files(&server, &args.name).await.map_err(skill_error)?;
    let files: Vec<Value> = files
        .iter()
        .map(|f| {
            let listed = skill.file(&f.uri);
            let mut v = json!({"uri": f.uri, "path": f.path, "mimeType": f.mime_type,
                "size": listed.map(|l| l.size), "digest": listed.map(|l| l.digest.clone())});
            match f.text() {
                Some(text) => v["text"] = json!(text),
                None => v["blob"] = json!(base64::engine::general_purpose::STANDARD.encode(&f.bytes)),
            }
            v
        })
        .collect();
    print_json(&json!({
        "server": skill.server, "name": skill.name, "path": skill.path, "uri": skill.uri,
        "frontmatter": skill.frontmatter, "instructions": skill.instructions, "files": files,
    }))?;
    Ok(ExitCode::Ok)
}

/// The one server that lists skill `name` (by name, path or URI).
async fn owner(manager: &McpManager, name: &str) -> Result<String, CliError> {
    let skills = summaries(manager).await?;
    let mut servers: Vec<&str> = skills
        .iter()
        .filter(|s| s.name == name || s.path == name || s.uri == name)
        .map(|s| s.server.as_str())
        .collect();
    servers.dedup();
    match servers.as_slice() {
        [one] => Ok((*one).to_owned()),
        [] => Err(CliError::usage(format!("no server lists a skill {name:?} (see `mcp skills`)"))),
        many => Err(CliError::usage(format!(
            "several servers list a skill {name:?} ({}): choose one with --server",
            many.join(", ")
        ))),
    }
}
