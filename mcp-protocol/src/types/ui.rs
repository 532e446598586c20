//! MCP Apps (extension `io.modelcontextprotocol/ui`, stable 2026-01-26): the members a server
//! puts in `_meta.ui` of its tools and `ui://` resources, and the client's declaration.
//!
//! A tool names the HTML view that shows its results ([`UiToolMeta::resource_uri`]) and who may
//! call it ([`UiToolMeta::visibility`]: the model, the app, or both). The view is a `ui://`
//! resource of MIME type [`MCP_APP_MIME_TYPE`] whose `_meta.ui` ([`UiResourceMeta`]) tells the
//! host how to sandbox it: the origins of its content security policy and the permissions it
//! asks for. Hosts render; this crate only reads the declarations.
//!
//! Every accessor here is lenient: a member of the wrong shape reads as absent, never as an
//! error, because `_meta` is free-form for everything that does not know the extension.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::meta::JsonObject;

/// The extension's identifier, the key in `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP App's HTML view.
pub const MCP_APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of app views.
pub const UI_SCHEME: &str = "ui";

/// The key of the UI metadata inside `_meta`.
pub const UI_META_KEY: &str = "ui";

/// The flat key early servers used for the view of a tool (`_meta["ui/resourceUri"]`).
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// What the client declares under `capabilities.extensions["io.modelcontextprotocol/ui"]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiClientCapabilities {
    /// The view MIME types the host renders.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mime_types: Vec<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UiClientCapabilities {
    /// A host that renders [`MCP_APP_MIME_TYPE`] views.
    pub fn html() -> Self {
        Self { mime_types: vec![MCP_APP_MIME_TYPE.to_owned()], extra: JsonObject::new() }
    }
}

/// Who may call a tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UiVisibility {
    /// The model (the LLM) sees and calls the tool.
    Model,
    /// The tool's app (a view of the same server) calls it.
    App,
    /// A value this crate does not know.
    #[serde(untagged)]
    Unknown(String),
}

/// The `_meta.ui` of a tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiToolMeta {
    /// The `ui://` resource that shows the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool; absent means both the model and the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<UiVisibility>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UiToolMeta {
    /// The UI metadata of a tool's `_meta`: `_meta.ui` when it is an object (a member of the
    /// wrong type reads as absent), with the flat `ui/resourceUri` key as the view when
    /// `_meta.ui` names none. `None` when the tool says nothing about apps.
    pub fn from_meta(meta: &JsonObject) -> Option<Self> {
        let mut ui = match meta.get(UI_META_KEY) {
            Some(Value::Object(object)) => Self::lenient(object),
            _ => None,
        };
        if let Some(Value::String(uri)) = meta.get(LEGACY_RESOURCE_URI_KEY) {
            let ui = ui.get_or_insert_with(Self::default);
            if ui.resource_uri.is_none() {
                ui.resource_uri = Some(uri.clone());
            }
        }
        ui
    }

    /// Reads each known member on its own, so one malformed member does not hide the others.
    fn lenient(object: &JsonObject) -> Option<Self> {
        let resource_uri = object.get("resourceUri").and_then(Value::as_str).map(str::to_owned);
        let visibility = object.get("visibility").and_then(Value::as_array).map(|values| {
            values.iter().filter_map(|v| serde_json::from_value::<UiVisibility>(v.clone()).ok()).collect()
        });
        let mut extra = object.clone();
        extra.shift_remove("resourceUri");
        extra.shift_remove("visibility");
        Some(Self { resource_uri, visibility, extra })
    }

    /// Whether the model may see and call the tool (no visibility list means yes).
    pub fn model_visible(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&UiVisibility::Model))
    }

    /// Whether the tool's app may call it (no visibility list means yes).
    pub fn app_visible(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&UiVisibility::App))
    }
}

/// The content security policy a view asks for: the origins it may reach, per directive.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceCsp {
    /// Origins for fetch, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_domains: Option<Vec<String>>,
    /// Origins for scripts, styles, images, fonts and media.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_domains: Option<Vec<String>>,
    /// Origins of nested frames (`frame-src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_domains: Option<Vec<String>>,
    /// Allowed base URIs (`base-uri`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_uri_domains: Option<Vec<String>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The sandbox permissions a view asks for; each present member is a request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourcePermissions {
    /// The camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<JsonObject>,
    /// The microphone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<JsonObject>,
    /// The device's location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<JsonObject>,
    /// Writing to the clipboard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<JsonObject>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `_meta.ui` of a `ui://` resource (in `resources/list` or on its contents).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    /// The content security policy the view needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiResourceCsp>,
    /// The sandbox permissions the view asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiResourcePermissions>,
    /// A dedicated origin for the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border around the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UiResourceMeta {
    /// The UI metadata of a resource's `_meta` (`_meta.ui`), `None` when absent. A member of
    /// the wrong shape reads as absent and the others are kept.
    pub fn from_meta(meta: &JsonObject) -> Option<Self> {
        let Some(Value::Object(object)) = meta.get(UI_META_KEY) else { return None };
        fn member<T: serde::de::DeserializeOwned>(object: &JsonObject, key: &str) -> Option<T> {
            object.get(key).and_then(|v| serde_json::from_value(v.clone()).ok())
        }
        let mut extra = object.clone();
        for key in ["csp", "permissions", "domain", "prefersBorder"] {
            extra.shift_remove(key);
        }
        Some(Self {
            csp: member(object, "csp"),
            permissions: member(object, "permissions"),
            domain: member(object, "domain"),
            prefers_border: member(object, "prefersBorder"),
            extra,
        })
    }

    /// `self` with every member `over` sets replaced by `over`'s (the contents' metadata takes
    /// precedence over the listing's).
    pub fn overlaid(mut self, over: UiResourceMeta) -> Self {
        if over.csp.is_some() {
            self.csp = over.csp;
        }
        if over.permissions.is_some() {
            self.permissions = over.permissions;
        }
        if over.domain.is_some() {
            self.domain = over.domain;
        }
        if over.prefers_border.is_some() {
            self.prefers_border = over.prefers_border;
        }
        self.extra.extend(over.extra);
        self
    }
}

/// Whether `uri` is an app view's URI (`ui://...`, scheme compared without case).
pub fn is_ui_uri(uri: &str) -> bool {
    uri.split_once("://").is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case(UI_SCHEME))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn tool_visibility_defaults_to_both_and_reads_lists() {
        let both = UiToolMeta::from_meta(&object(json!({"ui": {"resourceUri": "ui://a/b"}}))).unwrap();
        assert!(both.model_visible() && both.app_visible());
        assert_eq!(both.resource_uri.as_deref(), Some("ui://a/b"));
        let app = UiToolMeta::from_meta(&object(json!({"ui": {"visibility": ["app"]}}))).unwrap();
        assert!(!app.model_visible() && app.app_visible());
        let model = UiToolMeta::from_meta(&object(json!({"ui": {"visibility": ["model", "future"]}}))).unwrap();
        assert!(model.model_visible() && !model.app_visible());
        assert_eq!(model.visibility.unwrap()[1], UiVisibility::Unknown("future".into()));
        assert!(UiToolMeta::from_meta(&object(json!({"other": 1}))).is_none());
    }

    #[test]
    fn malformed_members_read_as_absent_and_the_flat_key_names_the_view() {
        let ui = UiToolMeta::from_meta(&object(json!({"ui": {"resourceUri": 7, "visibility": ["app", 3]}}))).unwrap();
        assert_eq!(ui.resource_uri, None);
        assert_eq!(ui.visibility, Some(vec![UiVisibility::App]));
        let flat = UiToolMeta::from_meta(&object(json!({"ui/resourceUri": "ui://x/y"}))).unwrap();
        assert_eq!(flat.resource_uri.as_deref(), Some("ui://x/y"));
        assert!(flat.model_visible());
        // A visibility list of the wrong type is absent: both audiences.
        let odd = UiToolMeta::from_meta(&object(json!({"ui": {"visibility": "app"}}))).unwrap();
        assert!(odd.model_visible());
    }

    #[test]
    fn resource_meta_reads_csp_and_permissions_and_contents_take_precedence() {
        let listed = UiResourceMeta::from_meta(&object(json!({"ui": {
            "csp": {"connectDomains": ["https://api.example.com"]},
            "prefersBorder": true,
            "domain": 42
        }})))
        .unwrap();
        assert_eq!(listed.domain, None);
        let read = UiResourceMeta::from_meta(&object(json!({"ui": {
            "csp": {"resourceDomains": ["https://cdn.example.com"]},
            "permissions": {"camera": {}, "clipboardWrite": {}}
        }})))
        .unwrap();
        let merged = listed.overlaid(read);
        let csp = merged.csp.unwrap();
        assert_eq!(csp.resource_domains.unwrap(), vec!["https://cdn.example.com".to_owned()]);
        assert_eq!(csp.connect_domains, None);
        let permissions = merged.permissions.unwrap();
        assert!(
            permissions.camera.is_some() && permissions.clipboard_write.is_some() && permissions.microphone.is_none()
        );
        assert_eq!(merged.prefers_border, Some(true));
    }

    #[test]
    fn ui_uris_are_told_by_scheme() {
        assert!(is_ui_uri("ui://weather/view.html"));
        assert!(is_ui_uri("UI://x"));
        assert!(!is_ui_uri("file:///ui://x"));
        assert!(!is_ui_uri("ui:/x"));
    }
}
