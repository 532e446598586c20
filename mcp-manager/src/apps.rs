//! MCP Apps (extension `io.modelcontextprotocol/ui`): a tool's interactive view, read so that a
//! host can render it sandboxed. The library never renders.
//!
//! - A host that renders views says so with [`HostCallbacks::apps`](crate::HostCallbacks::apps);
//!   only then is the extension declared to servers.
//! - A tool's `_meta.ui` travels through the host tool model: its visibility becomes the spec's
//!   [`ToolCallers`](tool_system::ToolCallers) (an app-only tool is never offered to the LLM and
//!   a model-only tool cannot be called by an app), its declaration is kept in the spec's
//!   metadata under [`UI_KEY`](crate::manager::convert::UI_KEY). An app calls its server's tools
//!   through [`ToolRegistry::invoke_from_app`](tool_system::ToolRegistry::invoke_from_app) with
//!   [`McpToolProvider::app_origin`](crate::manager::McpToolProvider::app_origin).
//! - [`AppView`] is a `ui://` resource as `resources/read` returned it: the HTML, and the
//!   content security policy and permissions the view asks for ([`UiResourceMeta`]), the
//!   contents' `_meta.ui` taking precedence over the listing's.

use base64::Engine as _;
use mcp_protocol::types::content::ResourceContents;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::resources::{ReadResourceResult, Resource};
use mcp_protocol::types::ui::{MCP_APP_MIME_TYPE, UiResourceMeta, is_ui_uri};

/// The largest view accepted, in bytes of HTML (a view is a page, not a download).
pub const MAX_APP_VIEW_BYTES: usize = 8 * 1024 * 1024;

/// A `ui://` resource ready to be rendered by the host in a sandbox.
#[derive(Debug, Clone, PartialEq)]
pub struct AppView {
    /// The view's URI.
    pub uri: String,
    /// The MIME type the server gave ([`MCP_APP_MIME_TYPE`]).
    pub mime_type: String,
    /// The HTML document.
    pub html: String,
    /// The sandbox the view asks for: CSP origins, permissions, dedicated domain, border. Empty
    /// when the server declared none (the host then applies its strictest defaults).
    pub ui: UiResourceMeta,
    /// The contents' whole `_meta`, for members this crate does not model.
    pub meta: Option<JsonObject>,
}

/// Why a resource is not a view the host can render.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppViewError {
    /// The URI is not a `ui://` URI.
    #[error("{uri:?} is not an app view: its scheme is not ui://")]
    NotUiUri {
        /// The URI asked for.
        uri: String,
    },
    /// The read returned no contents for the URI.
    #[error("server {server:?} returned no contents for app view {uri:?}")]
    NoContents {
        /// The server's name.
        server: String,
        /// The URI asked for.
        uri: String,
    },
    /// The contents are not an MCP App's HTML.
    #[error("app view {uri:?} of server {server:?} has MIME type {found:?}, not {MCP_APP_MIME_TYPE:?}")]
    WrongMimeType {
        /// The server's name.
        server: String,
        /// The URI asked for.
        uri: String,
        /// The MIME type the server gave (empty when it gave none).
        found: String,
    },
    /// The contents cannot be read as HTML text.
    #[error("app view {uri:?} of server {server:?} is unusable: {reason}")]
    Unreadable {
        /// The server's name.
        server: String,
        /// The URI asked for.
        uri: String,
        /// What was wrong (bad base64, not UTF-8, too large).
        reason: String,
    },
}

/// Whether `mime` is [`MCP_APP_MIME_TYPE`]: the type, and the `profile` parameter, compared
/// without case and around spaces (`text/html; profile=mcp-app` is the same type).
pub fn is_app_mime_type(mime: &str) -> bool {
    let mut parts = mime.split(';').map(str::trim);
    let essence = parts.next().unwrap_or_default();
    if !essence.eq_ignore_ascii_case("text/html") {
        return false;
    }
    parts.any(|param| {
        param.split_once('=').is_some_and(|(key, value)| {
            key.trim().eq_ignore_ascii_case("profile") && value.trim().trim_matches('"').eq_ignore_ascii_case("mcp-app")
        })
    })
}

/// The view `uri` of `server` from the result of its `resources/read`, with `listed` (the
/// resource as `resources/list` gave it, if it did) supplying the `_meta.ui` the contents do not.
pub fn app_view(
    server: &str,
    uri: &str,
    listed: Option<&Resource>,
    result: ReadResourceResult,
) -> Result<AppView, AppViewError> {
    if !is_ui_uri(uri) {
        return Err(AppViewError::NotUiUri { uri: uri.to_owned() });
    }
    let Some(contents) = result.contents.into_iter().find(|c| c.uri() == uri) else {
        return Err(AppViewError::NoContents { server: server.to_owned(), uri: uri.to_owned() });
    };
    let unreadable =
        |reason: String| AppViewError::Unreadable { server: server.to_owned(), uri: uri.to_owned(), reason };
    let (mime_type, html, meta) = match contents {
        ResourceContents::Text(text) => (text.mime_type, text.text, text.meta),
        ResourceContents::Blob(blob) => {
            // Checked before decoding: the decoded size is at most 3/4 of the text.
            if blob.blob.len() / 4 * 3 > MAX_APP_VIEW_BYTES {
                return Err(unreadable(format!("it is larger than {MAX_APP_VIEW_BYTES} bytes")));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob.blob.trim())
                .map_err(|err| unreadable(format!("its blob is not valid base64 ({err})")))?;
            let html = String::from_utf8(bytes).map_err(|_| unreadable("its blob is not UTF-8 text".to_owned()))?;
            (blob.mime_type, html, blob.meta)
        }
    };
    let mime_type = mime_type.or_else(|| listed.and_then(|r| r.mime_type.clone())).unwrap_or_default();
    if !is_app_mime_type(&mime_type) {
        return Err(AppViewError::WrongMimeType { server: server.to_owned(), uri: uri.to_owned(), found: mime_type });
    }
    if html.len() > MAX_APP_VIEW_BYTES {
        return Err(unreadable(format!("it is larger than {MAX_APP_VIEW_BYTES} bytes")));
    }
    let from_list = listed.and_then(|r| r.meta.as_ref()).and_then(|m| UiResourceMeta::from_meta(&m.0));
    let from_contents = meta.as_ref().and_then(|m| UiResourceMeta::from_meta(&m.0));
    let ui = match (from_list, from_contents) {
        (Some(listed), Some(read)) => listed.overlaid(read),
        (listed, read) => read.or(listed).unwrap_or_default(),
    };
    Ok(AppView { uri: uri.to_owned(), mime_type, html, ui, meta: meta.map(|m| m.0) })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(contents: serde_json::Value) -> ReadResourceResult {
        serde_json::from_value(json!({ "contents": contents })).unwrap()
    }

    #[test]
    fn app_mime_types_are_compared_leniently() {
        assert!(is_app_mime_type("text/html;profile=mcp-app"));
        assert!(is_app_mime_type("Text/HTML; charset=utf-8; profile=\"mcp-app\""));
        assert!(!is_app_mime_type("text/html"));
        assert!(!is_app_mime_type("text/plain;profile=mcp-app"));
    }

    #[test]
    fn a_text_view_keeps_its_html_and_the_contents_meta_wins_over_the_listing() {
        let listed: Resource = serde_json::from_value(json!({
            "uri": "ui://w/view", "name": "view", "mimeType": MCP_APP_MIME_TYPE,
            "_meta": {"ui": {"prefersBorder": true, "csp": {"connectDomains": ["https://old.example"]}}}
        }))
        .unwrap();
        let result = read(json!([{
            "uri": "ui://w/view", "mimeType": MCP_APP_MIME_TYPE, "text": "<p>hi</p>",
            "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example"]}, "permissions": {"microphone": {}}}}
        }]));
        let view = app_view("w", "ui://w/view", Some(&listed), result).unwrap();
        assert_eq!(view.html, "<p>hi</p>");
        assert_eq!(view.ui.prefers_border, Some(true));
        assert_eq!(view.ui.csp.unwrap().connect_domains.unwrap(), ["https://api.example"]);
        assert!(view.ui.permissions.unwrap().microphone.is_some());
    }

    #[test]
    fn a_blob_view_is_decoded_and_bad_views_are_refused_with_the_reason() {
        let html = base64::engine::general_purpose::STANDARD.encode("<b>x</b>");
        let blob = read(json!([{"uri": "ui://s/v", "mimeType": MCP_APP_MIME_TYPE, "blob": html}]));
        assert_eq!(app_view("s", "ui://s/v", None, blob).unwrap().html, "<b>x</b>");

        let plain = read(json!([{"uri": "ui://s/v", "mimeType": "text/html", "text": "<b>x</b>"}]));
        let err = app_view("s", "ui://s/v", None, plain).unwrap_err();
        assert!(err.to_string().contains("MIME type \"text/html\""), "{err}");

        let garbage = read(json!([{"uri": "ui://s/v", "mimeType": MCP_APP_MIME_TYPE, "blob": "!!!"}]));
        let err = app_view("s", "ui://s/v", None, garbage).unwrap_err();
        assert!(err.to_string().contains("not valid base64"), "{err}");

        let other = read(json!([{"uri": "ui://s/other", "mimeType": MCP_APP_MIME_TYPE, "text": ""}]));
        assert!(matches!(app_view("s", "ui://s/v", None, other), Err(AppViewError::NoContents { .. })));
        assert!(matches!(app_view("s", "file:///v", None, read(json!([]))), Err(AppViewError::NotUiUri { .. })));
    }
}
