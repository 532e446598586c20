//! The demo's one skill (extension `io.modelcontextprotocol/skills`): `demo-arithmetic`, a
//! `SKILL.md` with a supporting file, listed with the SHA-256 digest and size of each so that
//! `mcp skills` and `mcp skill demo-arithmetic` can be tried, and tested, without a network.

use mcp_protocol::types::content::{ResourceContents, TextResourceContents};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::skills::{DIGEST_PREFIX, ListSkillsResult, Skill, SkillResource, SkillResources};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// The skill's `SKILL.md`.
pub(crate) const SKILL_URI: &str = "skill://demo-arithmetic/SKILL.md";
/// Its supporting file.
pub(crate) const EXAMPLES_URI: &str = "skill://demo-arithmetic/examples.md";

const NAME: &str = "demo-arithmetic";
const DESCRIPTION: &str = "Do exact arithmetic with the demo's add tool instead of guessing.";

const SKILL_MD: &str = "---
name: demo-arithmetic
description: Do exact arithmetic with the demo's add tool instead of guessing.
---
# Arithmetic with the demo server

When the user asks for a sum, call the `add` tool with `a` and `b` rather than adding in your
head, and quote its result. For longer sums, add two numbers at a time.
See examples.md for worked calls.
";

const EXAMPLES_MD: &str = "# Examples

- 2 + 3: call `add` with `{\"a\": 2, \"b\": 3}`, answer 5.
- 1 + 2 + 3: call `add` with 1 and 2, then with 3 and 3, answer 6.
";

fn file(uri: &str, text: &str) -> SkillResource {
    let digest: String = Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    SkillResource { uri: uri.to_owned(), digest: format!("{DIGEST_PREFIX}{digest}"), size: text.len() as u64 }
}

/// `skills/list`: the one skill, on one page.
pub(crate) fn list() -> ListSkillsResult {
    let mut frontmatter = JsonObject::new();
    frontmatter.insert("name".into(), Value::String(NAME.into()));
    frontmatter.insert("description".into(), Value::String(DESCRIPTION.into()));
    let skill = Skill {
        uri: SKILL_URI.to_owned(),
        frontmatter,
        resources: SkillResources::Files(vec![file(SKILL_URI, SKILL_MD), file(EXAMPLES_URI, EXAMPLES_MD)]),
        ..Default::default()
    };
    ListSkillsResult { skills: vec![skill], ..Default::default() }
}

/// The contents of one of the skill's files, `None` for another URI.
pub(crate) fn read(uri: &str) -> Option<ResourceContents> {
    let text = match uri {
        SKILL_URI => SKILL_MD,
        EXAMPLES_URI => EXAMPLES_MD,
        _ => return None,
    };
    Some(ResourceContents::Text(TextResourceContents {
        uri: uri.to_owned(),
        mime_type: Some("text/markdown".into()),
        text: text.to_owned(),
        ..Default::default()
    }))
}
