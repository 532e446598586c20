//! Skills for hosts: every server's skill catalog, and loading a skill by server and name, with
//! the verification of [`crate::connection::skills`].
//!
//! A host offers skills to its LLM the way it offers prompts: the catalog ([`McpManager::skills`],
//! or [`skills_catalog`] as text for a system prompt) tells the model what exists, and a skill's
//! instructions enter the context only when it is loaded ([`McpManager::load_skill`]). Nothing of
//! a skill is read before that.

use std::sync::Arc;

use super::{ManagedServer, ManagerError, McpManager, read};
use crate::connection::skills::{LoadedSkill, SkillFile, SkillLimits, SkillSummary};

impl McpManager {
    async fn skill_server(&self, server: &str) -> Result<Arc<ManagedServer>, ManagerError> {
        self.shared.server(server).ok_or_else(|| ManagerError::UnknownServer(server.into()))
    }

    /// The skills server `server` lists, from its listing alone (no skill file is read).
    pub async fn server_skills(&self, server: &str) -> Result<Vec<SkillSummary>, ManagerError> {
        let managed = self.skill_server(server).await?;
        let limits = SkillLimits::default();
        let skills = managed.conn.list_skills().await?;
        Ok(skills.iter().map(|s| SkillSummary::of(&managed.name, s, &limits)).collect())
    }

    /// The skills of every connected server that declares the extension, server by server in
    /// configuration order; a server whose listing failed is reported with its error.
    pub async fn skills(&self) -> (Vec<SkillSummary>, Vec<(String, ManagerError)>) {
        let servers: Vec<Arc<ManagedServer>> = read(&self.shared.servers).clone();
        let (mut all, mut failed) = (Vec::new(), Vec::new());
        for server in servers {
            if !server.conn.declares_skills().await {
                continue;
            }
            match self.server_skills(&server.name).await {
                Ok(skills) => all.extend(skills),
                Err(e) => failed.push((server.name.to_string(), e)),
            }
        }
        (all, failed)
    }

    /// Load skill `name` (its name, path or `SKILL.md` URI) of server `server`: its `SKILL.md`
    /// is read and verified against the listing (size, digest, frontmatter); its other files are
    /// read later, with [`McpManager::read_skill_file`].
    pub async fn load_skill(&self, server: &str, name: &str) -> Result<LoadedSkill, ManagerError> {
        let managed = self.skill_server(server).await?;
        let entry = managed.conn.find_skill(name).await?;
        Ok(managed.conn.load_skill(&entry, &SkillLimits::default()).await?)
    }

    /// Read file `path` (relative to the skill's root, or its URI) of a loaded skill, verified
    /// against the entry the skill was loaded from.
    pub async fn read_skill_file(&self, skill: &LoadedSkill, path: &str) -> Result<SkillFile, ManagerError> {
        let managed = self.skill_server(&skill.server).await?;
        Ok(managed.conn.read_skill_file(skill, path).await?)
    }

    /// Load skill `name` of `server` and read all its files, each verified.
    pub async fn load_skill_files(
        &self,
        server: &str,
        name: &str,
    ) -> Result<(LoadedSkill, Vec<SkillFile>), ManagerError> {
        let skill = self.load_skill(server, name).await?;
        let managed = self.skill_server(server).await?;
        let files = managed.conn.read_skill_files(&skill).await?;
        Ok((skill, files))
    }
}

/// The catalog of `skills` as text for an LLM's context: one line per loadable skill,
/// `- <server>/<path>: <description>` (a skill whose entry is unusable is left out).
pub fn skills_catalog(skills: &[SkillSummary]) -> String {
    let mut text = String::new();
    for skill in skills.iter().filter(|s| s.problem.is_none()) {
        let description = skill.description.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&format!("- {}/{}: {description}\n", skill.server, skill.path));
    }
    text
}
