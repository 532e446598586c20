//! What a tool call gives back: [`ToolExecutionResult`] and its history text.

use std::fmt::Display;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ContentItem;

/// The error message of a failed result whose cause gave none.
pub const GENERIC_FAILURE: &str = "tool execution failed without an error message";

/// The outcome of one tool call.
///
/// A failed result always has a non-empty `error_message` when it comes from a constructor here
/// or from [`ToolRegistry::invoke`](crate::ToolRegistry::invoke), which normalises what providers
/// return (see [`ToolExecutionResult::normalized`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolExecutionResult {
    /// Whether the tool succeeded.
    pub success: bool,
    /// The main text output, if the tool gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The output as content items (text, images, resources, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ContentItem>,
    /// Structured output (usually matching the tool's output schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Why the tool failed; set whenever `success` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

impl ToolExecutionResult {
    /// A success with nothing in it yet.
    pub fn ok() -> Self {
        Self {
            success: true,
            content: None,
            items: Vec::new(),
            structured_content: None,
            error_message: None,
            metadata: Map::new(),
        }
    }

    /// A success whose content is `text`.
    pub fn ok_text(text: impl Into<String>) -> Self {
        Self { content: Some(text.into()), ..Self::ok() }
    }

    /// A success made of content items.
    pub fn ok_items(items: Vec<ContentItem>) -> Self {
        Self { items, ..Self::ok() }
    }

    /// A success whose structured content is `value` (its history text is the JSON text).
    pub fn ok_structured(value: Value) -> Self {
        Self { structured_content: Some(value), ..Self::ok() }
    }

    /// A success whose structured content is `value` serialised to JSON; a value that does not
    /// serialise gives a failed result that says why.
    pub fn ok_json<T: Serialize + ?Sized>(value: &T) -> Self {
        match serde_json::to_value(value) {
            Ok(value) => Self::ok_structured(value),
            Err(err) => Self::failed(format!("the tool's output does not serialise to JSON: {err}")),
        }
    }

    /// A failure with `message`. An empty (or blank) message becomes [`GENERIC_FAILURE`].
    pub fn failed(message: impl Into<String>) -> Self {
        let message = message.into();
        let message = if message.trim().is_empty() { GENERIC_FAILURE.to_owned() } else { message };
        Self { success: false, error_message: Some(message), ..Self::ok() }
    }

    /// Sets the content text.
    pub fn with_content(mut self, text: impl Into<String>) -> Self {
        self.content = Some(text.into());
        self
    }

    /// Adds a content item.
    pub fn with_item(mut self, item: ContentItem) -> Self {
        self.items.push(item);
        self
    }

    /// Sets the structured content.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Adds one metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// The result with its invariant restored: a failed result whose error message is missing
    /// or blank gets [`GENERIC_FAILURE`]. Everything else is left as it is.
    pub fn normalized(mut self) -> Self {
        if !self.success && self.error_message.as_deref().is_none_or(|m| m.trim().is_empty()) {
            self.error_message = Some(GENERIC_FAILURE.to_owned());
        }
        self
    }

    /// The text to put in the conversation history, in this order of preference:
    ///
    /// 1. `content`, when it is not empty;
    /// 2. else the items' [summaries](ContentItem::summary), one per line, when there are items;
    /// 3. else the structured content as compact JSON;
    /// 4. else the error message (for a failed result without one, [`GENERIC_FAILURE`]);
    /// 5. else the empty string (a success that returned nothing).
    pub fn history_text(&self) -> String {
        if let Some(content) = self.content.as_deref().filter(|c| !c.is_empty()) {
            return content.to_owned();
        }
        if !self.items.is_empty() {
            let summaries: Vec<String> = self.items.iter().map(ContentItem::summary).collect();
            return summaries.join("\n");
        }
        if let Some(value) = &self.structured_content {
            return value.to_string();
        }
        if let Some(message) = self.error_message.as_deref().filter(|m| !m.trim().is_empty()) {
            return message.to_owned();
        }
        if self.success { String::new() } else { GENERIC_FAILURE.to_owned() }
    }
}

impl From<String> for ToolExecutionResult {
    fn from(text: String) -> Self {
        Self::ok_text(text)
    }
}

impl From<&str> for ToolExecutionResult {
    fn from(text: &str) -> Self {
        Self::ok_text(text)
    }
}

impl From<Value> for ToolExecutionResult {
    /// Structured content (its history text is the JSON text).
    fn from(value: Value) -> Self {
        Self::ok_structured(value)
    }
}

impl From<()> for ToolExecutionResult {
    /// An empty success.
    fn from((): ()) -> Self {
        Self::ok()
    }
}

impl From<Vec<ContentItem>> for ToolExecutionResult {
    fn from(items: Vec<ContentItem>) -> Self {
        Self::ok_items(items)
    }
}

impl<T, E> From<Result<T, E>> for ToolExecutionResult
where
    T: Into<ToolExecutionResult>,
    E: Display,
{
    /// `Ok` converts its value; `Err` becomes a failed result with the error's text.
    fn from(result: Result<T, E>) -> Self {
        match result {
            Ok(value) => value.into(),
            Err(err) => Self::failed(err.to_string()),
        }
    }
}
