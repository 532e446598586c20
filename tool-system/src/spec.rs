//! What a tool is: [`ToolSpec`] with its [`ToolIcon`]s, [`ToolAnnotation`] and [`ToolCallers`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Metadata, SharedText, ToolParameters, ToolVisibility};

/// The description of one tool, as a provider declares it.
///
/// A spec carries no wire shape of any protocol: adapters (such as the MCP one) convert into it.
/// Build one with [`ToolSpec::new`] and the `with_*` helpers, or set the public fields directly.
///
/// The members most tools leave out (`output_schema`, `annotation`, `metadata`) are boxed: a
/// registry holds a spec for every tool of every provider, and inline they would nearly double
/// each one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name as its provider knows it (not necessarily valid for LLM APIs; the
    /// [`ToolRegistry`](crate::ToolRegistry) derives the exposed name).
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the arguments object, shared rather than copied: an adapter hands
    /// over the schema it decoded (the MCP one shares the tool's `inputSchema`), and the
    /// registry's listings and LLM definitions read it in place.
    #[serde(default = "shared_empty_object_schema")]
    pub parameters: ToolParameters,
    /// The JSON Schema of the structured output, if the tool declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Box<Value>>,
    /// Icons for user interfaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<ToolIcon>,
    /// Hints about the tool's behaviour and audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation: Option<Box<ToolAnnotation>>,
    /// The name of the provider that declares the tool (the registry fills it in when empty).
    /// Shared text: the tools of one provider can hold one buffer for it.
    #[serde(default)]
    pub provider_name: SharedText,
    /// The kind of provider, such as `native` or `mcp` (the registry fills it in when empty).
    #[serde(default)]
    pub provider_type: SharedText,
    /// An optional qualifier of the exposed name: the registry exposes `namespace` + separator +
    /// `name` (for instance `server__tool`). The MCP adapter sets it to the server name; native
    /// tools leave it `None` and are exposed unqualified. Shared text, as the provider fields:
    /// the MCP adapter's tools of one server share their namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<SharedText>,
    /// Whether the tool is listed to the LLM directly or only through `tool_search`.
    #[serde(default)]
    pub visibility: ToolVisibility,
    /// Who may call the tool: the LLM, an app (an interactive view the tool's own provider
    /// served), or both (the default).
    #[serde(default, skip_serializing_if = "ToolCallers::is_default")]
    pub callers: ToolCallers,
    /// Free-form metadata that travels with the spec.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Metadata,
}

/// Who may call a tool.
///
/// Some tools exist only for an interactive view a provider serves (an "app", such as an MCP
/// App): the LLM must never see them, and the view calls them through
/// [`ToolRegistry::invoke_from_app`](crate::ToolRegistry::invoke_from_app). Others are for the
/// LLM only and an app may not call them. Most tools are for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolCallers {
    /// The LLM sees the tool and may call it.
    pub model: bool,
    /// An app served by the tool's own provider (and namespace) may call it.
    pub app: bool,
}

impl Default for ToolCallers {
    fn default() -> Self {
        Self::BOTH
    }
}

impl ToolCallers {
    /// Both the LLM and the provider's apps.
    pub const BOTH: Self = Self { model: true, app: true };
    /// Only the provider's apps: never offered to the LLM.
    pub const APP_ONLY: Self = Self { model: false, app: true };
    /// Only the LLM: an app may not call it.
    pub const MODEL_ONLY: Self = Self { model: true, app: false };

    fn is_default(&self) -> bool {
        *self == Self::BOTH
    }
}

fn shared_empty_object_schema() -> ToolParameters {
    empty_object_schema().into()
}

/// The schema of a tool that takes no arguments: `{"type": "object", "properties": {}}`.
pub fn empty_object_schema() -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), Value::String("object".into()));
    schema.insert("properties".into(), Value::Object(Map::new()));
    Value::Object(schema)
}

impl ToolSpec {
    /// A visible tool named `name` that takes no arguments; everything else empty.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            parameters: shared_empty_object_schema(),
            output_schema: None,
            icons: Vec::new(),
            annotation: None,
            provider_name: SharedText::default(),
            provider_type: SharedText::default(),
            namespace: None,
            visibility: ToolVisibility::Visible,
            callers: ToolCallers::default(),
            metadata: Metadata::new(),
        }
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the arguments schema (a [`Value`], an `Arc<Value>` or a [`ToolParameters`] to share
    /// one without a copy).
    pub fn with_parameters(mut self, parameters: impl Into<ToolParameters>) -> Self {
        self.parameters = parameters.into();
        self
    }

    /// Sets the output schema.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(Box::new(schema));
        self
    }

    /// Adds an icon.
    pub fn with_icon(mut self, icon: ToolIcon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Sets the annotation.
    pub fn with_annotation(mut self, annotation: ToolAnnotation) -> Self {
        self.annotation = Some(Box::new(annotation));
        self
    }

    /// Sets the provider's name and type.
    pub fn with_provider(mut self, name: impl Into<SharedText>, provider_type: impl Into<SharedText>) -> Self {
        self.provider_name = name.into();
        self.provider_type = provider_type.into();
        self
    }

    /// Sets the namespace that qualifies the exposed name.
    pub fn with_namespace(mut self, namespace: impl Into<SharedText>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Sets the visibility.
    pub fn with_visibility(mut self, visibility: ToolVisibility) -> Self {
        self.visibility = visibility;
        self
    }

    /// Makes the tool deferred: reachable only through `tool_search`.
    pub fn deferred(self) -> Self {
        self.with_visibility(ToolVisibility::Deferred)
    }

    /// Sets who may call the tool.
    pub fn with_callers(mut self, callers: ToolCallers) -> Self {
        self.callers = callers;
        self
    }

    /// Adds one metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// Whether the tool is deferred.
    pub fn is_deferred(&self) -> bool {
        self.visibility == ToolVisibility::Deferred
    }

    /// The name qualified by the namespace, before any sanitising: `namespace` + `separator` +
    /// `name`, or `name` alone without a namespace.
    pub fn qualified_name(&self, separator: &str) -> String {
        match &self.namespace {
            Some(namespace) => {
                // Sized and filled at once: a registry qualifies every tool it lists.
                let mut qualified = String::with_capacity(namespace.len() + separator.len() + self.name.len());
                qualified.push_str(namespace);
                qualified.push_str(separator);
                qualified.push_str(&self.name);
                qualified
            }
            None => self.name.clone(),
        }
    }
}

/// An icon of a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolIcon {
    /// Where the icon is: a URL or a `data:` URI.
    pub src: String,
    /// The icon's MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes the icon is available in, such as `48x48` or `any`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
}

impl ToolIcon {
    /// An icon at `src` with no MIME type or sizes.
    pub fn new(src: impl Into<String>) -> Self {
        Self { src: src.into(), mime_type: None, sizes: Vec::new() }
    }
}

/// Hints about a tool: who it is for and how it behaves. Hints are not guarantees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolAnnotation {
    /// Who the tool's output is meant for, such as `user` or `assistant`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<String>,
    /// Importance from 0 (least) to 1 (most), if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling the tool twice with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world of external entities (the web, for instance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Free-form metadata of the annotation.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}
