//! What a tool call gives back: [`ToolExecutionResult`] and its history text.

use std::borrow::Cow;
use std::fmt::Display;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::bounded;
use crate::{ContentItem, Metadata, ResultOrigin, SharedText};

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
    /// The main text output, if the tool gave one. For an MCP tool, the text of its text items
    /// joined with line breaks; when there is one, this holds the item's own buffer (see
    /// [`SharedText`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<SharedText>,
    /// The output as content items (text, images, resources, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ContentItem>,
    /// Structured output (usually matching the tool's output schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Why the tool failed; set whenever `success` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Where the result came from (the tool, its namespace, the protocol and session of the
    /// call), when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<ResultOrigin>,
    /// Free-form metadata (a pointer while there is none, as for most results).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Metadata,
}

impl ToolExecutionResult {
    /// The most bytes of structured content (as compact JSON) that the
    /// [history text](ToolExecutionResult::history_text) of a failed result holds: longer JSON
    /// is cut on a character boundary and followed by a line saying how many bytes were left out.
    pub const MAX_HISTORY_JSON: usize = 64 * 1024;

    /// A success with nothing in it yet.
    pub fn ok() -> Self {
        Self {
            success: true,
            content: None,
            items: Vec::new(),
            structured_content: None,
            error_message: None,
            origin: None,
            metadata: Metadata::new(),
        }
    }

    /// A success whose content is `text`.
    pub fn ok_text(text: impl Into<SharedText>) -> Self {
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

    /// The result of a call the host cancelled (through its
    /// [`CallControl`](crate::CallControl)): failed, with `interrupted: "cancelled"` in the
    /// metadata.
    pub fn cancelled(tool: &str) -> Self {
        Self::failed(format!("tool `{tool}` was cancelled by the caller"))
            .with_metadata(Self::INTERRUPTED_METADATA, Value::from("cancelled"))
    }

    /// The result of a call whose host deadline passed after `waited`: failed, with
    /// `interrupted: "timeout"` in the metadata.
    pub fn timed_out(tool: &str, waited: std::time::Duration) -> Self {
        Self::failed(format!("tool `{tool}` did not finish within its deadline ({:.1} s)", waited.as_secs_f64()))
            .with_metadata(Self::INTERRUPTED_METADATA, Value::from("timeout"))
    }

    /// The metadata key that says a call was interrupted by its host: `"cancelled"` or
    /// `"timeout"`.
    pub const INTERRUPTED_METADATA: &'static str = "interrupted";

    /// Whether the host cancelled the call ([`cancelled`](Self::cancelled)).
    pub fn is_cancelled(&self) -> bool {
        self.metadata.get(Self::INTERRUPTED_METADATA).and_then(Value::as_str) == Some("cancelled")
    }

    /// Whether the call's deadline passed: the host's ([`timed_out`](Self::timed_out)) or one a
    /// provider reports the same way.
    pub fn is_timed_out(&self) -> bool {
        self.metadata.get(Self::INTERRUPTED_METADATA).and_then(Value::as_str) == Some("timeout")
    }

    /// Sets the content text.
    pub fn with_content(mut self, text: impl Into<SharedText>) -> Self {
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

    /// Sets where the result came from.
    pub fn with_origin(mut self, origin: ResultOrigin) -> Self {
        self.origin = Some(origin);
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

    /// The text to put in the conversation history: every part of the result, one after the
    /// other, separated by line breaks.
    ///
    /// 1. A failed result starts with `Error: ` and its error message (for a failed result
    ///    without one, [`GENERIC_FAILURE`]).
    /// 2. Then `content`, unless it is blank, or it is the items' text (all text items joined
    ///    with `\n`, with or without the blank ones, as the MCP adapter makes it: that text is
    ///    given by the items themselves, so it is not repeated), or it is the error message.
    /// 3. Then every item, in order: a text item as its text, any other item as its
    ///    [summary](ContentItem::summary) (an embedded text resource with its text, bounded by
    ///    [`ContentItem::MAX_SUMMARY_TEXT`]). Blank text items are left out, so they hide
    ///    nothing. The text items are left out of a failed result whose error message is their
    ///    text (an MCP `isError` result), which has already said it.
    /// 4. Then the structured content as compact JSON: for a success, only when no text came
    ///    (no content, no text item); for a failure, unless `content` or a text item already
    ///    holds the same JSON value, and bounded by
    ///    [`MAX_HISTORY_JSON`](ToolExecutionResult::MAX_HISTORY_JSON).
    ///
    /// A success that returned nothing has empty history text.
    pub fn history_text(&self) -> String {
        let message =
            (!self.success).then(|| self.error_message.as_deref().filter(|m| !is_blank(m)).unwrap_or(GENERIC_FAILURE));
        let item_text = ItemText::of(&self.items);
        let mut parts: Vec<Cow<'_, str>> = Vec::new();
        if let Some(message) = message {
            parts.push(Cow::Owned(format!("Error: {message}")));
        }
        let mut text_given = false;
        if let Some(content) = self.content.as_deref().filter(|c| !is_blank(c) && !item_text.is(c)) {
            text_given = true;
            if message != Some(content) {
                parts.push(Cow::Borrowed(content));
            }
        }
        let said_by_message = message.is_some_and(|m| item_text.is(m));
        for item in &self.items {
            match item.as_text() {
                Some(text) if is_blank(text) => {}
                Some(text) => {
                    text_given = true;
                    if !said_by_message {
                        parts.push(Cow::Borrowed(text));
                    }
                }
                None => parts.push(Cow::Owned(item.summary())),
            }
        }
        if let Some(value) = &self.structured_content {
            if message.is_some() {
                if !self.holds_as_text(value) {
                    parts.push(Cow::Owned(bounded(&value.to_string(), Self::MAX_HISTORY_JSON).into_owned()));
                }
            } else if !text_given {
                parts.push(Cow::Owned(value.to_string()));
            }
        }
        parts.join("\n")
    }

    /// Whether `content` or a text item is JSON text of `value`.
    fn holds_as_text(&self, value: &Value) -> bool {
        let is_value = |text: &str| serde_json::from_str::<Value>(text).is_ok_and(|parsed| parsed == *value);
        self.content.as_deref().is_some_and(is_value)
            || self.items.iter().filter_map(ContentItem::as_text).any(is_value)
    }
}

fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// The text of a result's text items, joined with `\n`: all of them, and the non-blank ones.
struct ItemText {
    all: String,
    filled: String,
}

impl ItemText {
    fn of(items: &[ContentItem]) -> ItemText {
        let texts: Vec<&str> = items.iter().filter_map(ContentItem::as_text).collect();
        let filled: Vec<&str> = texts.iter().copied().filter(|t| !is_blank(t)).collect();
        ItemText { all: texts.join("\n"), filled: filled.join("\n") }
    }

    /// Whether `text` (not blank) is the items' text.
    fn is(&self, text: &str) -> bool {
        !self.filled.is_empty() && (text == self.all || text == self.filled)
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
