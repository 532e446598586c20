//! Skills (the `io.modelcontextprotocol/skills` extension, SEP-2640) of one connection: list a
//! server's skills, load one on demand, read its files, each verified against the listing.
//!
//! A skill is a directory of files served as resources; `skills/list` gives each skill's
//! frontmatter and the manifest of its files (URI, SHA-256 digest, size). Nothing of a skill
//! is read until the host loads it:
//!
//! 1. [`McpConnection::list_skills`] (or [`McpConnection::find_skill`], [`McpConnection::get_skill`])
//!    gives the entries; no file is read.
//! 2. [`McpConnection::load_skill`] checks the entry (its URIs stay inside the skill's
//!    directory, the name follows the Agent Skills rule, the file count and sizes are within
//!    [`SkillLimits`]), reads `SKILL.md`, and checks it: size, then digest, then its frontmatter,
//!    field by field, against the listing's. Any mismatch refuses the skill with a
//!    [`SkillError::Verification`] naming the check and the file.
//! 3. [`McpConnection::read_skill_file`] reads one supporting file of a loaded skill when it is
//!    needed, verified the same way; a file the manifest does not list is refused without a
//!    request.

mod frontmatter;
mod verify;

use std::fmt;

use base64::Engine as _;
use mcp_protocol::types::content::ResourceContents;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::skills::{
    GetSkill, GetSkillParams, ListSkills, MAX_RESOURCES_PER_SKILL, MAX_TOTAL_SIZE_PER_SKILL, Skill, SkillResource,
    declares_skills,
};
use serde::Serialize;

use super::pagination::{CursorGuard, ListLimits, for_each_page};
use super::{ConnectionError, McpConnection};
use crate::session::RequestOptions;

pub use self::verify::digest_of;

/// How much of a skill this client accepts. The defaults are the extension's limits (512
/// files, 16 MiB in all), which every host must accept; one file may use the whole budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillLimits {
    /// Most files in one skill, `SKILL.md` included.
    pub max_files: usize,
    /// Largest single file, in bytes.
    pub max_file_size: u64,
    /// Largest sum of a skill's file sizes, in bytes.
    pub max_total_size: u64,
}

impl Default for SkillLimits {
    fn default() -> Self {
        SkillLimits {
            max_files: MAX_RESOURCES_PER_SKILL,
            max_file_size: MAX_TOTAL_SIZE_PER_SKILL,
            max_total_size: MAX_TOTAL_SIZE_PER_SKILL,
        }
    }
}

/// The verification a skill's file failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillCheck {
    /// Its length is not the listed `size`.
    Size,
    /// Its SHA-256 is not the listed `digest`.
    Digest,
    /// The `SKILL.md` frontmatter differs from the listing's on this field (`None`: the
    /// frontmatter could not be read at all).
    Frontmatter(Option<String>),
    /// The file is not in the skill's manifest (nothing was requested).
    Unlisted,
}

impl fmt::Display for SkillCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillCheck::Size => f.write_str("size"),
            SkillCheck::Digest => f.write_str("digest"),
            SkillCheck::Frontmatter(Some(field)) => write!(f, "frontmatter (field `{}`)", clip(field)),
            SkillCheck::Frontmatter(None) => f.write_str("frontmatter"),
            SkillCheck::Unlisted => f.write_str("listed-file"),
        }
    }
}

/// Why a skill could not be listed, loaded or read.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The server does not declare the skills extension (nothing was asked).
    #[error("server {server:?} does not declare the skills extension (io.modelcontextprotocol/skills)")]
    NotSupported {
        /// The server's name.
        server: String,
    },
    /// No listed skill has this name, path or URI.
    #[error("server {server:?} lists no skill {name:?}")]
    UnknownSkill {
        /// The server's name.
        server: String,
        /// What was asked for.
        name: String,
    },
    /// Several listed skills have this name.
    #[error("server {server:?} lists several skills named {name:?} ({}): name one by its path", paths.join(", "))]
    Ambiguous {
        /// The server's name.
        server: String,
        /// The name asked for.
        name: String,
        /// The paths of the skills of that name.
        paths: Vec<String>,
    },
    /// The entry itself is unusable (hostile or malformed URIs or name, no digests, over the
    /// limits, or a `SKILL.md` that is not UTF-8); nothing more of it is read.
    #[error("skill {skill} of server {server:?} is refused: {reason}")]
    Invalid {
        /// The server's name.
        server: String,
        /// The skill's URI.
        skill: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file read does not match the listing: the skill is not loaded (or the file not used).
    #[error("skill {skill} of server {server:?} is refused: the {check} check failed for {file}: {detail}")]
    Verification {
        /// The server's name.
        server: String,
        /// The skill's URI.
        skill: String,
        /// The file's URI.
        file: String,
        /// Which check failed.
        check: SkillCheck,
        /// What the listing says and what was read.
        detail: String,
    },
    /// The server answered in a shape this client does not use.
    #[error("server {server:?} answered {method} for {uri}: {detail}")]
    BadAnswer {
        /// The server's name.
        server: String,
        /// The method.
        method: &'static str,
        /// The URI asked for.
        uri: String,
        /// What is wrong.
        detail: String,
    },
    /// The request failed.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
}

/// What a host shows of a listed skill (to a user, or to the LLM as a catalog entry), built from
/// the listing alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillSummary {
    /// The server that serves it.
    pub server: String,
    /// `frontmatter.name` (a label: names may repeat, the path tells skills apart).
    pub name: String,
    /// The skill's path: its URI without the scheme and `/SKILL.md` (`acme/billing/refunds`).
    pub path: String,
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// `frontmatter.description`.
    pub description: String,
    /// How many files it lists (`None` for a dynamic or malformed manifest).
    pub files: Option<usize>,
    /// The sum of their sizes in bytes.
    pub total_size: Option<u64>,
    /// The whole frontmatter, as listed.
    pub frontmatter: JsonObject,
    /// Why it cannot be loaded, when its entry is already unusable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl SkillSummary {
    /// The summary of `skill`, listed by `server`, checked against `limits`.
    pub fn of(server: &str, skill: &Skill, limits: &SkillLimits) -> SkillSummary {
        let checked = verify::manifest(skill, limits);
        let path = verify::skill_root(&skill.uri).map(|(_, p)| p.to_owned()).unwrap_or_else(|_| clip(&skill.uri));
        let (files, total_size) = match &checked {
            Ok(m) => (Some(m.files.len()), Some(m.files.iter().map(|(_, f)| f.size).sum())),
            Err(_) => (None, None),
        };
        SkillSummary {
            server: server.to_owned(),
            name: clip(skill.name().unwrap_or_default()),
            path,
            uri: skill.uri.clone(),
            description: skill.description().unwrap_or_default().to_owned(),
            files,
            total_size,
            frontmatter: skill.frontmatter.clone(),
            problem: checked.err(),
        }
    }
}

/// A skill whose `SKILL.md` was read and verified: its instructions, and the manifest its
/// further reads are held to.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    /// The server that serves it.
    pub server: String,
    /// Its name (`frontmatter.name`).
    pub name: String,
    /// Its path (`acme/billing/refunds`).
    pub path: String,
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// The whole verified `SKILL.md`, frontmatter included.
    pub instructions: String,
    /// Its frontmatter (verified equal to the listing's).
    pub frontmatter: JsonObject,
    entry: Skill,
    manifest: verify::Manifest,
}

impl LoadedSkill {
    /// The `SKILL.md` without its frontmatter: the instructions proper.
    pub fn body(&self) -> &str {
        frontmatter::body(&self.instructions)
    }

    /// The entry it was loaded from (the held entry).
    pub fn entry(&self) -> &Skill {
        &self.entry
    }

    /// Its files as listed: each one's path relative to the skill's root, and its entry.
    pub fn files(&self) -> impl Iterator<Item = (&str, &SkillResource)> {
        self.manifest.files.iter().map(|(p, f)| (p.as_str(), f))
    }

    /// The listed file at `path` (relative to the skill's root, or its full URI).
    pub fn file(&self, path: &str) -> Option<&SkillResource> {
        self.manifest.files.iter().find(|(p, f)| p == path || f.uri == path).map(|(_, f)| f)
    }
}

/// One verified file of a skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillFile {
    /// Its URI.
    pub uri: String,
    /// Its path relative to the skill's root.
    pub path: String,
    /// The MIME type the server gave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its content.
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

impl SkillFile {
    /// The content as text, when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

impl McpConnection {
    /// Whether the server declared the skills extension (false while not connected).
    pub async fn declares_skills(&self) -> bool {
        self.server_info().await.is_some_and(|i| declares_skills(i.capabilities.extensions.as_ref()))
    }

    async fn require_skills(&self) -> Result<(), SkillError> {
        if self.declares_skills().await { Ok(()) } else { Err(SkillError::NotSupported { server: self.name.clone() }) }
    }

    /// Every skill entry the server lists (every page, bounded like the other lists). Reads no
    /// skill file.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, SkillError> {
        self.require_skills().await?;
        let session = self.session().await?;
        let limits = ListLimits {
            max_pages: self.options.max_pages,
            max_items: self.options.max_list_items,
            max_bytes: self.options.max_list_bytes,
        };
        let mut skills = Vec::new();
        let guard = CursorGuard::new(&self.name, "skills", limits);
        for_each_page::<ListSkills>(&session, guard, |page| skills.extend(page.skills)).await?;
        Ok(skills)
    }

    /// The entry of the skill whose `SKILL.md` is `uri` (`skills/get`): for a skill that is not
    /// in the listing. Reads no skill file.
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, SkillError> {
        self.require_skills().await?;
        let params = GetSkillParams { uri: uri.to_owned(), ..Default::default() };
        let result = self.call::<GetSkill>(&params, RequestOptions::default()).await?;
        if result.skill.uri != uri {
            return Err(SkillError::BadAnswer {
                server: self.name.clone(),
                method: "skills/get",
                uri: clip(uri),
                detail: format!("the entry is for another skill, {}", clip(&result.skill.uri)),
            });
        }
        Ok(result.skill)
    }

    /// The listed skill named `name`: its `frontmatter.name`, its path (`acme/billing/refunds`)
    /// or the URI of its `SKILL.md`. A URI the listing lacks is asked for with `skills/get`
    /// (a listing may be partial). Reads no skill file.
    pub async fn find_skill(&self, name: &str) -> Result<Skill, SkillError> {
        let skills = self.list_skills().await?;
        if let Some(skill) = skills.iter().find(|s| s.uri == name) {
            return Ok(skill.clone());
        }
        let path_of = |s: &Skill| verify::skill_root(&s.uri).ok().map(|(_, p)| p.to_owned());
        if let Some(skill) = skills.iter().find(|s| path_of(s).as_deref() == Some(name)) {
            return Ok(skill.clone());
        }
        let named: Vec<&Skill> = skills.iter().filter(|s| s.name() == Some(name)).collect();
        match named.as_slice() {
            [one] => Ok((*one).clone()),
            [] if name.contains("://") => self.get_skill(name).await,
            [] => Err(SkillError::UnknownSkill { server: self.name.clone(), name: clip(name) }),
            many => Err(SkillError::Ambiguous {
                server: self.name.clone(),
                name: clip(name),
                paths: many.iter().map(|s| path_of(s).unwrap_or_else(|| clip(&s.uri))).collect(),
            }),
        }
    }

    /// Load the skill of entry `skill`: check the entry against `limits`, read its `SKILL.md`
    /// and verify its size, digest and frontmatter against the entry. Reads no other file.
    pub async fn load_skill(&self, skill: &Skill, limits: &SkillLimits) -> Result<LoadedSkill, SkillError> {
        self.require_skills().await?;
        let invalid =
            |reason: String| SkillError::Invalid { server: self.name.clone(), skill: clip(&skill.uri), reason };
        let manifest = verify::manifest(skill, limits).map_err(invalid)?;
        let (_, entry) =
            manifest.files.iter().find(|(p, _)| p == "SKILL.md").ok_or_else(|| invalid("no SKILL.md".into()))?;
        let file = self.fetch_verified(&skill.uri, "SKILL.md", entry).await?;
        let refuse = |check: SkillCheck, detail: String| SkillError::Verification {
            server: self.name.clone(),
            skill: skill.uri.clone(),
            file: entry.uri.clone(),
            check,
            detail,
        };
        let instructions =
            String::from_utf8(file.bytes).map_err(|_| invalid("its SKILL.md is not UTF-8 text".into()))?;
        let parsed = frontmatter::parse(&instructions).map_err(|e| refuse(SkillCheck::Frontmatter(None), e))?;
        if let Some((field, detail)) = frontmatter::first_difference(&skill.frontmatter, &parsed) {
            return Err(refuse(SkillCheck::Frontmatter(Some(field)), detail));
        }
        Ok(LoadedSkill {
            server: self.name.clone(),
            name: manifest.name.clone(),
            path: manifest.path.clone(),
            uri: skill.uri.clone(),
            instructions,
            frontmatter: parsed,
            entry: skill.clone(),
            manifest,
        })
    }

    /// Read the file at `path` (relative to the skill's root, or its full URI) of a loaded
    /// skill, verified against the held entry. A file the entry does not list is refused without
    /// a request.
    pub async fn read_skill_file(&self, skill: &LoadedSkill, path: &str) -> Result<SkillFile, SkillError> {
        let Some((relative, entry)) = skill.manifest.files.iter().find(|(p, f)| p == path || f.uri == path) else {
            return Err(SkillError::Verification {
                server: self.name.clone(),
                skill: skill.uri.clone(),
                file: clip(path),
                check: SkillCheck::Unlisted,
                detail: "the skill's listing does not list this file, so it is not read".into(),
            });
        };
        self.fetch_verified(&skill.uri, relative, entry).await
    }

    /// Read every file of a loaded skill, in the listing's order, each verified.
    pub async fn read_skill_files(&self, skill: &LoadedSkill) -> Result<Vec<SkillFile>, SkillError> {
        let mut files = Vec::with_capacity(skill.manifest.files.len());
        for (relative, entry) in &skill.manifest.files {
            files.push(self.fetch_verified(&skill.uri, relative, entry).await?);
        }
        Ok(files)
    }

    /// `resources/read` of a listed file, checked against its entry: size, then digest.
    async fn fetch_verified(
        &self,
        skill: &str,
        relative: &str,
        entry: &SkillResource,
    ) -> Result<SkillFile, SkillError> {
        let bad = |detail: String| SkillError::BadAnswer {
            server: self.name.clone(),
            method: "resources/read",
            uri: entry.uri.clone(),
            detail,
        };
        let result = match self.read_resource(&entry.uri).await? {
            Outcome::Complete(result) => result,
            _ => return Err(bad("it asked for input instead of answering".into())),
        };
        let mut contents = result.contents;
        let index = match contents.iter().position(|c| c.uri() == entry.uri) {
            Some(i) => i,
            None if contents.len() == 1 => 0,
            None => return Err(bad(format!("none of its {} contents is this file", contents.len()))),
        };
        let refuse = |check: SkillCheck, detail: String| SkillError::Verification {
            server: self.name.clone(),
            skill: skill.to_owned(),
            file: entry.uri.clone(),
            check,
            detail,
        };
        let (bytes, mime_type) = match contents.swap_remove(index) {
            ResourceContents::Text(t) => (t.text.into_bytes(), t.mime_type),
            ResourceContents::Blob(b) => {
                // Base64 of `size` bytes is at most this long; more is a size mismatch, found
                // without decoding it.
                let longest = entry.size.div_ceil(3).saturating_mul(4);
                if u64::try_from(b.blob.trim().len()).unwrap_or(u64::MAX) > longest {
                    let detail = format!("the listing says {} bytes, the server sent more", entry.size);
                    return Err(refuse(SkillCheck::Size, detail));
                }
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b.blob.trim())
                    .map_err(|e| bad(format!("its blob is not base64: {e}")))?;
                (bytes, b.mime_type)
            }
        };
        verify::check_file(entry, &bytes).map_err(|m| match m {
            verify::Mismatch::Size(d) => refuse(SkillCheck::Size, d),
            verify::Mismatch::Digest(d) => refuse(SkillCheck::Digest, d),
        })?;
        Ok(SkillFile { uri: entry.uri.clone(), path: relative.to_owned(), mime_type, bytes })
    }
}

/// `text` cut to 200 characters, for messages about what a server sent.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}
