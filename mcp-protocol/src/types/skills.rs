//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): `skills/list`,
//! `skills/get` and the `Skill` entry, a skill's frontmatter and the manifest of its files with
//! their digests and sizes.
//!
//! A skill's files are ordinary resources, read with `resources/read`; this module only adds the
//! listing. An entry whose `resources` member is neither an array of files nor `"dynamic"` still
//! decodes (as [`SkillResources::Invalid`]), so that one bad entry does not fail a whole listing;
//! a client must not load it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{CacheScope, PaginatedParams, ResultType};
use super::meta::{JsonObject, Meta};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The digest algorithm prefix of [`SkillResource::digest`]: `sha256:` and 64 lowercase hex digits.
pub const DIGEST_PREFIX: &str = "sha256:";

/// Resources per skill every host must accept (the extension's limit, `SKILL.md` included).
pub const MAX_RESOURCES_PER_SKILL: usize = 512;

/// Total file size per skill every host must accept (the extension's limit: 16 MiB).
pub const MAX_TOTAL_SIZE_PER_SKILL: u64 = 16 * 1024 * 1024;

/// Whether a server's `capabilities.extensions` declares the skills extension.
pub fn declares_skills(extensions: Option<&JsonObject>) -> bool {
    extensions.is_some_and(|e| e.get(SKILLS_EXTENSION).is_some_and(Value::is_object))
}

/// One file of a skill, with the digest and size of its content.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// SHA-256 of the file's raw bytes: `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    /// Length in bytes of the file's raw content (the bytes `digest` covers).
    pub size: u64,
}

/// A skill's `resources` member.
#[derive(Debug, Clone, PartialEq)]
pub enum SkillResources {
    /// The complete list of the skill's files, `SKILL.md` included.
    Files(Vec<SkillResource>),
    /// `"dynamic"`: generated content without stable digests.
    Dynamic,
    /// Anything else (absent, `null`, a malformed array): the entry must not be loaded.
    Invalid(Value),
}

impl Default for SkillResources {
    fn default() -> Self {
        SkillResources::Invalid(Value::Null)
    }
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str("dynamic"),
            SkillResources::Invalid(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(match value {
            Value::String(s) if s == "dynamic" => SkillResources::Dynamic,
            Value::Array(_) => match serde_json::from_value::<Vec<SkillResource>>(value.clone()) {
                Ok(files) => SkillResources::Files(files),
                Err(_) => SkillResources::Invalid(value),
            },
            other => SkillResources::Invalid(other),
        })
    }
}

/// The entry of one skill, as `skills/list` and `skills/get` return it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Skill {
    /// The resource URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter, verbatim as a JSON object (`name` and `description`
    /// always present).
    #[serde(default)]
    pub frontmatter: JsonObject,
    /// The skill's files, or `"dynamic"`.
    #[serde(default)]
    pub resources: SkillResources,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Skill {
    /// `frontmatter.name`, when it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// `frontmatter.description`, when it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }
}

/// Params of `skills/list`.
pub type ListSkillsParams = PaginatedParams;

crate::paginated_results! {
    /// Result of `skills/list`.
    ListSkillsResult {
        /// The skills of this page.
        #[serde(default)]
        skills: Vec<Skill>
    }
}

/// Params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetSkillParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// The skill's entry.
    pub skill: Skill,
    /// Cache lifetime in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

crate::request_methods! {
    /// `skills/list` (skills extension).
    ListSkills = "skills/list", ListSkillsParams => ListSkillsResult;
    /// `skills/get` (skills extension).
    GetSkill = "skills/get", GetSkillParams => GetSkillResult;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listing_decodes_files_dynamic_and_invalid_entries() {
        let v = json!({
            "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "skills": [
                {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d", "license": "MIT"},
                 "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 3}]},
                {"uri": "skill://b/SKILL.md", "frontmatter": {"name": "b", "description": "d"}, "resources": "dynamic"},
                {"uri": "skill://c/SKILL.md", "frontmatter": {"name": "c", "description": "d"}, "resources": [{"uri": 1}]},
                {"uri": "skill://d/SKILL.md", "frontmatter": {"name": "d", "description": "d"}}
            ]
        });
        let r: ListSkillsResult = serde_json::from_value(v).unwrap();
        assert_eq!(r.skills.len(), 4);
        assert_eq!(r.skills[0].name(), Some("a"));
        assert_eq!(r.skills[0].frontmatter["license"], "MIT");
        let SkillResources::Files(files) = &r.skills[0].resources else { panic!("files expected") };
        assert_eq!(files[0].size, 3);
        assert_eq!(r.skills[1].resources, SkillResources::Dynamic);
        assert!(matches!(r.skills[2].resources, SkillResources::Invalid(Value::Array(_))));
        assert_eq!(r.skills[3].resources, SkillResources::Invalid(Value::Null));
        let back = serde_json::to_value(&r.skills[1]).unwrap();
        assert_eq!(back["resources"], "dynamic");
    }

    #[test]
    fn the_declaration_is_an_object_under_extensions() {
        let caps: JsonObject = serde_json::from_value(json!({SKILLS_EXTENSION: {}})).unwrap();
        assert!(declares_skills(Some(&caps)));
        let other: JsonObject = serde_json::from_value(json!({"io.modelcontextprotocol/ui": {}})).unwrap();
        assert!(!declares_skills(Some(&other)));
        assert!(!declares_skills(None));
    }
}
