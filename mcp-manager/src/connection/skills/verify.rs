//! Checks of a skill entry before anything is read (its URIs, name, manifest and sizes), and of
//! each file read against its manifest entry (size, then digest).

use std::collections::HashSet;

use mcp_protocol::types::skills::{DIGEST_PREFIX, Skill, SkillResource, SkillResources};
use sha2::{Digest, Sha256};

use super::SkillLimits;

/// Longest skill name accepted (the Agent Skills naming rule).
const MAX_NAME_CHARS: usize = 64;

/// Longest URI accepted in a skill entry, in bytes.
const MAX_URI_BYTES: usize = 2048;

/// What a checked entry holds: the skill's name, its root (`scheme://path`, no trailing slash),
/// its path (the part after `scheme://`), and its files with their paths relative to the root.
#[derive(Debug, Clone)]
pub(crate) struct Manifest {
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) files: Vec<(String, SkillResource)>,
}

/// Check an entry before anything of it is read; the error says what is wrong with it.
pub(crate) fn manifest(skill: &Skill, limits: &SkillLimits) -> Result<Manifest, String> {
    let (root, path) = skill_root(&skill.uri)?;
    let name = skill.name().ok_or("its frontmatter has no string `name`")?;
    check_name(name)?;
    if path.rsplit('/').next() != Some(name) {
        return Err(format!("its URI's last path segment is not its name {name:?}"));
    }
    if skill.description().is_none_or(|d| d.trim().is_empty()) {
        return Err("its frontmatter has no `description`".into());
    }
    let listed = match &skill.resources {
        SkillResources::Files(files) => files,
        SkillResources::Dynamic => {
            return Err("its resources are \"dynamic\": content without digests cannot be verified".into());
        }
        SkillResources::Invalid(_) => return Err("its `resources` is missing or malformed".into()),
    };
    if listed.len() > limits.max_files {
        return Err(format!("it lists {} files, more than the {} accepted", listed.len(), limits.max_files));
    }
    let mut seen = HashSet::new();
    let mut total: u64 = 0;
    let mut files = Vec::with_capacity(listed.len());
    for file in listed {
        let relative = file
            .uri
            .strip_prefix(root)
            .and_then(|r| r.strip_prefix('/'))
            .ok_or_else(|| format!("its file {:?} is outside the skill's directory {root}", file.uri))?;
        check_relative(relative).map_err(|e| format!("its file {:?}: {e}", file.uri))?;
        if !seen.insert(relative) {
            return Err(format!("it lists the file {:?} twice", file.uri));
        }
        check_digest_format(&file.digest).map_err(|e| format!("its file {:?}: {e}", file.uri))?;
        if file.size > limits.max_file_size {
            return Err(format!(
                "its file {:?} is {} bytes, more than the {} accepted for one file",
                file.uri, file.size, limits.max_file_size
            ));
        }
        total = total.saturating_add(file.size);
        files.push((relative.to_owned(), file.clone()));
    }
    if total > limits.max_total_size {
        return Err(format!("its files total {total} bytes, more than the {} accepted", limits.max_total_size));
    }
    if !seen.contains("SKILL.md") {
        return Err("its resources do not list its SKILL.md".into());
    }
    Ok(Manifest { name: name.to_owned(), path: path.to_owned(), files })
}

/// The root (`scheme://path`) and path of a skill URI `scheme://path/SKILL.md`.
pub(crate) fn skill_root(uri: &str) -> Result<(&str, &str), String> {
    if uri.len() > MAX_URI_BYTES {
        return Err(format!("its URI is longer than {MAX_URI_BYTES} bytes"));
    }
    let (scheme, rest) = uri.split_once("://").ok_or_else(|| format!("its URI {uri:?} has no scheme"))?;
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
        return Err(format!("its URI {uri:?} has an invalid scheme"));
    }
    let path = rest.strip_suffix("/SKILL.md").ok_or_else(|| format!("its URI {uri:?} does not end in /SKILL.md"))?;
    check_relative(path).map_err(|e| format!("its URI {uri:?}: {e}"))?;
    Ok((&uri[..scheme.len() + 3 + path.len()], path))
}

/// A relative path: non-empty `/`-separated segments, none `.` or `..`, no backslash, no
/// percent-encoded dot, slash or backslash, no query or fragment, no control character.
pub(crate) fn check_relative(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    if path.chars().any(|c| c.is_control() || c == '\\' || c == '?' || c == '#') {
        return Err(format!("the path {path:?} holds a control character, a backslash, `?` or `#`"));
    }
    let lower = path.to_ascii_lowercase();
    if ["%2e", "%2f", "%5c", "%00"].iter().any(|e| lower.contains(e)) {
        return Err(format!("the path {path:?} holds a percent-encoded dot, slash, backslash or NUL"));
    }
    for segment in path.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(format!("the path {path:?} has an empty, `.` or `..` segment"));
        }
    }
    Ok(())
}

/// The Agent Skills name rule: 1 to 64 lowercase letters, digits and hyphens, without a
/// leading, trailing or doubled hyphen.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "its name {:?} is not 1 to {MAX_NAME_CHARS} lowercase letters, digits and single hyphens",
            super::clip(name)
        ))
    }
}

fn check_digest_format(digest: &str) -> Result<(), String> {
    let hex = digest.strip_prefix(DIGEST_PREFIX).unwrap_or("");
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        Ok(())
    } else {
        Err(format!("its digest {:?} is not `sha256:` and 64 lowercase hex digits", super::clip(digest)))
    }
}

/// `sha256:<hex>` of `bytes`: a skill file's digest as a listing gives it.
pub fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(DIGEST_PREFIX.len() + 64);
    out.push_str(DIGEST_PREFIX);
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Which check a file failed, and how.
pub(crate) enum Mismatch {
    Size(String),
    Digest(String),
}

/// Check `bytes` against the file's entry: its size first, then its digest.
pub(crate) fn check_file(entry: &SkillResource, bytes: &[u8]) -> Result<(), Mismatch> {
    let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if size != entry.size {
        return Err(Mismatch::Size(format!("the listing says {} bytes, the server sent {size}", entry.size)));
    }
    let digest = digest_of(bytes);
    if digest != entry.digest {
        return Err(Mismatch::Digest(format!("the listing says {}, the content hashes to {digest}", entry.digest)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn skill(v: serde_json::Value) -> Skill {
        serde_json::from_value(v).unwrap()
    }

    fn entry(uri: &str, files: serde_json::Value) -> Skill {
        skill(json!({"uri": uri, "frontmatter": {"name": "pdf", "description": "d"}, "resources": files}))
    }

    fn file(uri: &str) -> serde_json::Value {
        json!({"uri": uri, "digest": digest_of(b"x"), "size": 1})
    }

    #[test]
    fn a_good_entry_gives_its_manifest() {
        let s = entry(
            "skill://acme/pdf/SKILL.md",
            json!([file("skill://acme/pdf/SKILL.md"), file("skill://acme/pdf/a/b.md")]),
        );
        let m = manifest(&s, &SkillLimits::default()).unwrap();
        assert_eq!((m.name.as_str(), m.path.as_str()), ("pdf", "acme/pdf"));
        assert_eq!(m.files.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["SKILL.md", "a/b.md"]);
    }

    #[test]
    fn hostile_entries_are_refused_with_the_reason() {
        let limits = SkillLimits::default();
        let cases = [
            (entry("skill://pdf/SKILL.md", json!([file("skill://pdf/SKILL.md"), file("skill://pdf/../x")])), "`..`"),
            (entry("skill://pdf/SKILL.md", json!([file("skill://pdf/SKILL.md"), file("skill://other/x")])), "outside"),
            (
                entry("skill://pdf/SKILL.md", json!([file("skill://pdf/SKILL.md"), file("skill://pdf/%2e%2e/x")])),
                "percent",
            ),
            (
                entry("skill://pdf/SKILL.md", json!([file("skill://pdf/SKILL.md"), file("skill://pdf/a\\..\\x")])),
                "backslash",
            ),
            (entry("skill://../pdf/SKILL.md", json!([file("skill://../pdf/SKILL.md")])), "`..`"),
            (entry("skill://x/SKILL.md", json!([file("skill://x/SKILL.md")])), "not its name"),
            (
                entry("skill://pdf/SKILL.md", json!([file("skill://pdf/SKILL.md"), file("skill://pdf/SKILL.md")])),
                "twice",
            ),
            (entry("skill://pdf/SKILL.md", json!([file("skill://pdf/a.md")])), "do not list its SKILL.md"),
            (entry("skill://pdf/SKILL.md", json!("dynamic")), "dynamic"),
            (entry("skill://pdf/SKILL.md", json!(null)), "missing or malformed"),
            (
                entry("skill://pdf/SKILL.md", json!([{"uri": "skill://pdf/SKILL.md", "digest": "md5:00", "size": 1}])),
                "digest",
            ),
            (
                skill(
                    json!({"uri": "skill://Bad/SKILL.md", "frontmatter": {"name": "Bad", "description": "d"}, "resources": []}),
                ),
                "lowercase",
            ),
            (
                skill(json!({"uri": "skill://pdf/SKILL.md", "frontmatter": {"name": "pdf"}, "resources": []})),
                "description",
            ),
            (entry("pdf/SKILL.md", json!([])), "no scheme"),
        ];
        for (s, want) in cases {
            let err = manifest(&s, &limits).unwrap_err();
            assert!(err.contains(want), "{s:?}: {err:?} should mention {want:?}");
        }
    }

    #[test]
    fn sizes_and_counts_are_bounded_from_the_listing() {
        let limits = SkillLimits { max_files: 2, max_file_size: 10, max_total_size: 15 };
        let big = json!({"uri": "skill://pdf/a.md", "digest": digest_of(b""), "size": 11});
        let s = entry("skill://pdf/SKILL.md", json!([file("skill://pdf/SKILL.md"), big]));
        assert!(manifest(&s, &limits).unwrap_err().contains("11 bytes"));
        let s = entry(
            "skill://pdf/SKILL.md",
            json!([file("skill://pdf/SKILL.md"), file("skill://pdf/a"), file("skill://pdf/b")]),
        );
        assert!(manifest(&s, &limits).unwrap_err().contains("3 files"));
        let nine = json!({"uri": "skill://pdf/a.md", "digest": digest_of(b""), "size": 9});
        let s = entry(
            "skill://pdf/SKILL.md",
            json!([{"uri": "skill://pdf/SKILL.md", "digest": digest_of(b""), "size": 9}, nine]),
        );
        assert!(manifest(&s, &limits).unwrap_err().contains("total 18"));
    }

    #[test]
    fn a_file_is_checked_by_size_then_digest() {
        let entry = SkillResource { uri: "skill://pdf/SKILL.md".into(), digest: digest_of(b"abc"), size: 3 };
        assert!(check_file(&entry, b"abc").is_ok());
        assert!(
            matches!(check_file(&entry, b"abcd"), Err(Mismatch::Size(d)) if d.contains("3 bytes") && d.contains("4"))
        );
        assert!(matches!(check_file(&entry, b"abd"), Err(Mismatch::Digest(_))));
        assert_eq!(digest_of(b"abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
