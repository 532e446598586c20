//! The demo server's prompt, resources, resource template and argument completions.

use base64::Engine as _;
use mcp_protocol::ErrorObject;
use mcp_protocol::types::common::Role;
use mcp_protocol::types::completion::{CompleteParams, CompleteResult, Completion, Reference};
use mcp_protocol::types::content::{
    BlobResourceContents, ContentBlock, ResourceContents, ResourceLink, TextResourceContents,
};
use mcp_protocol::types::prompts::{GetPromptParams, GetPromptResult, Prompt, PromptArgument, PromptMessage};
use mcp_protocol::types::resources::{Resource, ResourceTemplate};

use super::png;
use super::state::invalid_params;

/// The URI of the text resource.
pub(crate) const README_URI: &str = "demo://readme";
/// The URI of the binary resource.
pub(crate) const LOGO_URI: &str = "demo://logo.png";
/// The resource template.
pub(crate) const GREETING_TEMPLATE: &str = "demo://greeting/{name}";
const GREETING_PREFIX: &str = "demo://greeting/";
/// Longest name a greeting accepts, in characters.
const MAX_NAME_CHARS: usize = 100;

const README: &str = "# The mcp demo server

This server ships inside the `mcp` command (`mcp serve-demo`) so that every subcommand works
with no set-up. It speaks both protocol eras: the legacy `initialize` handshake (2024-11-05 to
2025-11-25) and the stateless 2026-07-28 revision (`server/discover`).

Tools: `echo`, `add`, `current_time`, `stats` (structured output), `image` (a PNG), `slow`
(progress and cancellation), `ask_roots` and `summarize` (the server asks the client for its
roots and for an LLM completion).

Prompt: `review_code`. Resources: `demo://readme` (this text), `demo://logo.png`, and the
template `demo://greeting/{name}`.
";

const LANGUAGES: [&str; 12] =
    ["bash", "c", "cpp", "go", "java", "javascript", "kotlin", "python", "ruby", "rust", "swift", "typescript"];
const NAMES: [&str; 6] = ["Ada", "Alan", "Barbara", "Grace", "Ken", "Linus"];

/// The prompts.
pub(crate) fn prompts() -> Vec<Prompt> {
    vec![Prompt {
        name: "review_code".into(),
        title: Some("Review code".into()),
        description: Some("Ask the LLM for a careful review of a piece of code.".into()),
        arguments: Some(vec![
            PromptArgument {
                name: "code".into(),
                description: Some("The code to review".into()),
                required: Some(true),
                ..Default::default()
            },
            PromptArgument {
                name: "language".into(),
                description: Some("Its programming language, e.g. rust".into()),
                required: Some(false),
                ..Default::default()
            },
        ]),
        ..Default::default()
    }]
}

/// `prompts/get`.
pub(crate) fn get_prompt(params: &GetPromptParams) -> Result<GetPromptResult, ErrorObject> {
    if params.name != "review_code" {
        return Err(invalid_params(format!("unknown prompt {:?}; this server has: review_code", params.name)));
    }
    let arguments = params.arguments.clone().unwrap_or_default();
    if let Some(unknown) = arguments.keys().find(|k| *k != "code" && *k != "language") {
        return Err(invalid_params(format!(
            "unknown argument {unknown:?} of prompt review_code (it takes: code, language)"
        )));
    }
    let Some(code) = arguments.get("code").filter(|c| !c.trim().is_empty()) else {
        return Err(invalid_params("missing required argument \"code\" of prompt review_code"));
    };
    let language = arguments.get("language").map(|l| l.trim()).filter(|l| !l.is_empty());
    let text = format!(
        "Please review this {what}. Point out bugs, unclear names and missing error handling, and suggest \
         improvements.\n\n```{fence}\n{code}\n```",
        what = language.map_or_else(|| "code".to_owned(), |l| format!("{l} code")),
        fence = language.unwrap_or_default(),
    );
    Ok(GetPromptResult {
        description: Some(format!("Code review{}", language.map(|l| format!(" ({l})")).unwrap_or_default())),
        messages: vec![PromptMessage {
            role: Role::User,
            content: ContentBlock::text(text),
            extra: Default::default(),
        }],
        ..Default::default()
    })
}

/// The resources.
pub(crate) fn resources() -> Vec<Resource> {
    vec![
        ResourceLink {
            uri: README_URI.into(),
            name: "readme".into(),
            title: Some("About the demo server".into()),
            description: Some("What this server offers, in Markdown".into()),
            mime_type: Some("text/markdown".into()),
            size: Some(README.len() as u64),
            ..Default::default()
        },
        ResourceLink {
            uri: LOGO_URI.into(),
            name: "logo".into(),
            title: Some("A small logo".into()),
            description: Some("A 16x16 PNG image (a binary resource)".into()),
            mime_type: Some("image/png".into()),
            size: Some(logo().len() as u64),
            ..Default::default()
        },
    ]
}

/// The resource templates.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![ResourceTemplate {
        uri_template: GREETING_TEMPLATE.into(),
        name: "greeting".into(),
        title: Some("A greeting".into()),
        description: Some("A greeting for anyone: replace {name}".into()),
        mime_type: Some("text/plain".into()),
        ..Default::default()
    }]
}

fn logo() -> Vec<u8> {
    png::pattern(16, png::Pattern::Checker)
}

/// `resources/read`: the contents of `uri`, or why there is no such resource.
pub(crate) fn read(uri: &str) -> Result<ResourceContents, String> {
    match uri {
        README_URI => Ok(ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: Some("text/markdown".into()),
            text: README.into(),
            ..Default::default()
        })),
        LOGO_URI => Ok(ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: Some("image/png".into()),
            blob: base64::engine::general_purpose::STANDARD.encode(logo()),
            ..Default::default()
        })),
        _ => {
            let Some(encoded) = uri.strip_prefix(GREETING_PREFIX) else {
                return Err(format!(
                    "resource not found: {uri:?} (this server has {README_URI}, {LOGO_URI} and {GREETING_TEMPLATE})"
                ));
            };
            let name = percent_decode(encoded).ok_or_else(|| format!("resource not found: {uri:?} (bad escape)"))?;
            let chars = name.chars().count();
            if name.trim().is_empty() || chars > MAX_NAME_CHARS || name.contains('/') {
                return Err(format!(
                    "resource not found: {uri:?} (the name must be 1 to {MAX_NAME_CHARS} characters without '/')"
                ));
            }
            Ok(ResourceContents::Text(TextResourceContents {
                uri: uri.into(),
                mime_type: Some("text/plain".into()),
                text: format!("Hello, {name}! This text comes from the template {GREETING_TEMPLATE}."),
                ..Default::default()
            }))
        }
    }
}

/// `%XX` escapes decoded; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `completion/complete`: the prompt's `language` and the template's `name`.
pub(crate) fn complete(params: &CompleteParams) -> CompleteResult {
    let candidates: &[&str] = match (&params.reference, params.argument.name.as_str()) {
        (Reference::Prompt(p), "language") if p.name == "review_code" => &LANGUAGES,
        (Reference::ResourceTemplate(t), "name") if t.uri == GREETING_TEMPLATE => &NAMES,
        _ => &[],
    };
    let prefix = params.argument.value.to_lowercase();
    let values: Vec<String> =
        candidates.iter().filter(|c| c.to_lowercase().starts_with(&prefix)).map(|c| c.to_string()).collect();
    CompleteResult {
        completion: Completion {
            total: Some(values.len() as u64),
            has_more: Some(false),
            values,
            ..Default::default()
        },
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::types::completion::CompleteArgument;
    use std::collections::BTreeMap;

    fn prompt(args: &[(&str, &str)]) -> GetPromptParams {
        GetPromptParams {
            name: "review_code".into(),
            arguments: Some(args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>()),
            ..Default::default()
        }
    }

    #[test]
    fn the_prompt_fills_its_template_and_names_bad_arguments() {
        let result = get_prompt(&prompt(&[("code", "fn main() {}"), ("language", "rust")])).unwrap();
        let text = result.messages[0].content.as_text().unwrap();
        assert!(text.contains("```rust\nfn main() {}\n```") && text.contains("rust code"), "{text}");
        let err = get_prompt(&prompt(&[("language", "rust")])).unwrap_err();
        assert!(err.message.contains("\"code\""), "{}", err.message);
        let err = get_prompt(&prompt(&[("code", "x"), ("colour", "red")])).unwrap_err();
        assert!(err.message.contains("\"colour\""), "{}", err.message);
        let err = get_prompt(&GetPromptParams { name: "nope".into(), ..Default::default() }).unwrap_err();
        assert!(err.message.contains("\"nope\""), "{}", err.message);
    }

    #[test]
    fn resources_and_the_template_read() {
        let ResourceContents::Text(readme) = read(README_URI).unwrap() else { panic!("text") };
        assert!(readme.text.starts_with("# The mcp demo server"));
        let ResourceContents::Blob(logo) = read(LOGO_URI).unwrap() else { panic!("blob") };
        assert!(logo.blob.starts_with("iVBORw0KGgo"), "a base64 PNG");
        let ResourceContents::Text(hello) = read("demo://greeting/Ada%20Lovelace").unwrap() else { panic!() };
        assert!(hello.text.starts_with("Hello, Ada Lovelace!"), "{}", hello.text);
        for bad in ["demo://nothing", "demo://greeting/", "demo://greeting/%zz", "demo://greeting/a%2Fb"] {
            assert!(read(bad).unwrap_err().contains("resource not found"), "{bad}");
        }
        let long = format!("demo://greeting/{}", "x".repeat(MAX_NAME_CHARS + 1));
        assert!(read(&long).is_err());
    }

    #[test]
    fn completions_filter_by_prefix() {
        let params = |reference, name: &str, value: &str| CompleteParams {
            reference,
            argument: CompleteArgument { name: name.into(), value: value.into(), ..Default::default() },
            context: None,
            meta: None,
            extra: Default::default(),
        };
        let r = complete(&params(Reference::prompt("review_code"), "language", "r"));
        assert_eq!(r.completion.values, ["ruby", "rust"]);
        let r = complete(&params(Reference::resource_template(GREETING_TEMPLATE), "name", "a"));
        assert_eq!(r.completion.values, ["Ada", "Alan"]);
        assert!(complete(&params(Reference::prompt("other"), "language", "")).completion.values.is_empty());
    }
}
