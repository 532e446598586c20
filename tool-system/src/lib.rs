//! The host-side tool model, independent of MCP.
//!
//! A host's reasoning loop sees one uniform tool list, whatever serves each tool: a native Rust
//! function, a plugin, or (through the MCP adapter built on this crate) a remote MCP server.
//!
//! Main types:
//!
//! - [`ToolSpec`]: what a tool is (name, [`ToolParameters`] and output schema, icons,
//!   [`ToolAnnotation`], provider, namespace, [`ToolVisibility`], [`ToolCallers`], [`Metadata`]).
//! - [`ToolInvocation`] and [`ToolExecutionContext`]: one call, and the host context (session,
//!   chat stream, user, platform, anchor message) carried through to the provider.
//! - [`ToolExecutionResult`] with its [`ContentItem`]s and
//!   [`history_text`](ToolExecutionResult::history_text); their text is [`SharedText`], so the
//!   result's `content` and its text item hold one buffer; its [`ResultOrigin`] says where it
//!   came from.
//! - [`ToolProvider`]: an object-safe trait for a source of tools; [`ToolError`] for listing
//!   failures.
//! - [`ToolRegistry`]: many providers behind one list with names valid for LLM APIs
//!   ([`ExposedTool`], [`RegistryOptions`]), tool definitions in the dialects LLM APIs take
//!   ([`LlmDialect`], [`dialect`]: OpenAI, OpenAI strict, Gemini, Anthropic), deferred tools
//!   reachable through the built-in `tool_search`, a host rule of which tools each caller may
//!   see and call ([`ToolAvailability`]), and routing of each call; tools only an app may call
//!   stay out of the LLM's list and are reached through [`ToolRegistry::invoke_from_app`] with
//!   the app's [`AppOrigin`].
//! - [`NativeTool`] and [`NativeToolProvider`]: a typed async function becomes a tool whose
//!   parameters schema is generated from its argument type.
//!
//! # Example
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use tool_system::{NativeTool, NativeToolProvider, ToolExecutionContext, ToolInvocation, ToolRegistry};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct AddArgs {
//!     /// The first number.
//!     a: i64,
//!     /// The second number.
//!     b: i64,
//! }
//!
//! # futures::executor::block_on(async {
//! let registry = ToolRegistry::new();
//! let add = NativeTool::new("add", "Add two numbers", |args: AddArgs, _ctx| async move {
//!     (args.a + args.b).to_string()
//! });
//! registry.register(NativeToolProvider::new("math").with_tool(add)).await;
//!
//! let ctx = ToolExecutionContext::default();
//! let definitions = registry.llm_definitions(&ctx).await;
//! assert_eq!(definitions[0]["type"], "function");
//! assert_eq!(definitions[0]["function"]["name"], "add");
//! assert_eq!(definitions[0]["function"]["parameters"]["required"], json!(["a", "b"]));
//!
//! let call = ToolInvocation::from_value("add", json!({ "a": 2, "b": 3 }));
//! let result = registry.invoke(call, ctx.clone()).await;
//! assert!(result.success);
//! assert_eq!(result.history_text(), "5");
//!
//! let bad = ToolInvocation::from_value("add", json!({ "a": 2, "b": "x" }));
//! let result = registry.invoke(bad, ctx).await;
//! assert!(!result.success);
//! assert!(result.history_text().contains("argument `b`"));
//! # });
//! ```

mod content;
mod control;
pub mod dialect;
mod exposed;
mod invocation;
mod metadata;
pub mod names;
mod native;
mod origin;
mod parameters;
mod provider;
mod registry;
mod result;
mod spec;
mod text;

use serde::{Deserialize, Serialize};

pub use content::{
    BinaryContent, ContentItem, EmbeddedResource, MediaContent, ResourceBody, ResourceLink, TextContent,
    UnknownContent, base64_decoded_len, human_size,
};
pub use control::{CallControl, CancellationToken, ProgressSink, ToolProgress};
pub use dialect::LlmDialect;
pub use exposed::ExposedTool;
pub use invocation::{ToolExecutionContext, ToolInvocation};
pub use metadata::Metadata;
pub use native::{NATIVE_PROVIDER_TYPE, NativeTool, NativeToolProvider, NoArgs, schema_for};
pub use origin::ResultOrigin;
pub use parameters::{SchemaSource, ToolParameters};
pub use provider::{ToolError, ToolProvider};
pub use registry::availability::ToolAvailability;
pub use registry::search::{
    BUILTIN_PROVIDER, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, TOOL_SEARCH_NAME, tool_search_spec,
};
pub use registry::{AppOrigin, RegistryChanges, RegistryOptions, ToolRegistry};
pub use result::{GENERIC_FAILURE, ToolExecutionResult};
pub use spec::{ToolAnnotation, ToolCallers, ToolIcon, ToolSpec, empty_object_schema};
pub use text::SharedText;

/// Whether a tool is offered to the LLM directly or only through tool search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolVisibility {
    /// Listed in the LLM's tool definitions.
    #[default]
    Visible,
    /// Reachable only through the built-in `tool_search` tool.
    Deferred,
}
