//! The members of an object that its type does not model: [`Extra`].

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::meta::JsonObject;

/// The members of an object that its type does not model (a later revision's fields, an
/// extension's), kept so that they survive a round trip; held in a box, and only when there are
/// some. A host keeps the tools, prompts and resources of every server, thousands of them, and
/// almost none has such members: an empty map inline (72 bytes) would be a third of a tool.
///
/// Reads as a [`JsonObject`] (empty when there are none); a write through `DerefMut` makes the
/// map. On the wire it is the members themselves (the field that holds it is `flatten`ed).
#[derive(Clone, Default)]
pub struct Extra(Option<Box<JsonObject>>);

/// The empty object that an `Extra` without members, and any other view of an absent object,
/// reads as.
pub(crate) fn empty_object() -> &'static JsonObject {
    static EMPTY: LazyLock<JsonObject> = LazyLock::new(JsonObject::new);
    &EMPTY
}

impl Extra {
    /// No members.
    pub const fn new() -> Self {
        Extra(None)
    }

    /// The members, as a map of their own.
    pub fn into_inner(self) -> JsonObject {
        self.0.map(|members| *members).unwrap_or_default()
    }
}

impl Deref for Extra {
    type Target = JsonObject;

    fn deref(&self) -> &JsonObject {
        self.0.as_deref().unwrap_or_else(|| empty_object())
    }
}

impl DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut JsonObject {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<JsonObject> for Extra {
    /// No box for an empty map.
    fn from(members: JsonObject) -> Self {
        Extra((!members.is_empty()).then(|| Box::new(members)))
    }
}

impl From<Extra> for JsonObject {
    fn from(extra: Extra) -> Self {
        extra.into_inner()
    }
}

impl PartialEq for Extra {
    /// Equal when the members are: no map and an empty one are the same.
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        JsonObject::deserialize(deserializer).map(Extra::from)
    }
}

/// Asserts that each `(type, size, most)` is at most `most` bytes (tests of the types that box
/// what they rarely have).
#[cfg(test)]
pub(crate) fn assert_sizes_at_most(sizes: &[(&str, usize, usize)]) {
    for (name, size, most) in sizes {
        assert!(size <= most, "{name} is {size} bytes, more than {most}");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Extra, JsonObject};
    use crate::types::tools::Tool;

    #[test]
    fn no_members_take_no_box_and_read_as_an_empty_map() {
        let extra = Extra::from(JsonObject::new());
        assert!(extra.0.is_none());
        assert!(extra.is_empty());
        assert_eq!(extra, Extra::new());
        let mut members = JsonObject::new();
        members.insert("x".into(), json!(1));
        assert_ne!(Extra::from(members.clone()), Extra::new());
        assert_eq!(Extra::from(members.clone()).into_inner(), members);
    }

    #[test]
    fn a_write_makes_the_map() {
        let mut extra = Extra::new();
        extra.insert("later".into(), json!({"a": true}));
        assert_eq!(extra.get("later"), Some(&json!({"a": true})));
        assert_eq!(format!("{extra:?}"), r#"{"later": Object {"a": Bool(true)}}"#);
    }

    #[test]
    fn a_tools_unmodelled_members_survive_a_round_trip_and_an_ordinary_tool_keeps_none() {
        let text = r#"{"name":"t","inputSchema":{"type":"object"},"future":{"x":[1,2]},"zeta":"z"}"#;
        let tool: Tool = serde_json::from_str(text).unwrap();
        assert_eq!(tool.extra.get("future"), Some(&json!({"x": [1, 2]})));
        assert_eq!(tool.extra.len(), 2);
        assert_eq!(serde_json::to_value(&tool).unwrap(), serde_json::from_str::<serde_json::Value>(text).unwrap());
        let plain: Tool = serde_json::from_str(r#"{"name":"t","inputSchema":{"type":"object"}}"#).unwrap();
        assert!(plain.extra.0.is_none());
        assert_eq!(serde_json::to_string(&plain).unwrap(), r#"{"name":"t","inputSchema":{"type":"object"}}"#);
    }

    #[test]
    fn listed_items_hold_a_pointer_for_what_they_rarely_have() {
        use crate::types::content::ResourceLink;
        use crate::types::prompts::{Prompt, PromptArgument};
        use crate::types::resources::ResourceTemplate;
        assert_eq!(size_of::<Extra>(), size_of::<usize>());
        // With the maps inline (an empty `Extra` map, `_meta`, annotations) a tool was 208
        // bytes, a prompt 264, a resource 440 and a template 424.
        let sizes = [
            ("Tool", size_of::<Tool>(), 144),
            ("Prompt", size_of::<Prompt>(), 136),
            ("PromptArgument", size_of::<PromptArgument>(), 88),
            ("ResourceLink", size_of::<ResourceLink>(), 184),
            ("ResourceTemplate", size_of::<ResourceTemplate>(), 168),
        ];
        super::assert_sizes_at_most(&sizes);
    }
}
