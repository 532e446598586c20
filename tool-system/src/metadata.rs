//! A spec's free-form metadata, held in a box only when there is some: [`Metadata`].

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The free-form metadata of a [`ToolSpec`](crate::ToolSpec): a map, held in a box and only when
/// it has entries. A registry holds a spec for every tool of every provider and most carry no
/// metadata; an empty map inline (72 bytes) would be a third of each spec.
///
/// Reads as a map (empty when there is none); a write through `DerefMut` makes the map. On the
/// wire it is the map itself. (`mcp-protocol`'s `Extra` does the same for the members of the
/// wire types; this crate depends on no `mcp-*` crate, so the host model has its own.)
#[derive(Clone, Default)]
pub struct Metadata(Option<Box<Map<String, Value>>>);

impl Metadata {
    /// No entries.
    pub const fn new() -> Self {
        Metadata(None)
    }

    /// The entries, as a map of their own.
    pub fn into_map(self) -> Map<String, Value> {
        self.0.map(|entries| *entries).unwrap_or_default()
    }
}

impl Deref for Metadata {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for Metadata {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<Map<String, Value>> for Metadata {
    /// No box for an empty map.
    fn from(entries: Map<String, Value>) -> Self {
        Metadata((!entries.is_empty()).then(|| Box::new(entries)))
    }
}

impl From<Metadata> for Map<String, Value> {
    fn from(metadata: Metadata) -> Self {
        metadata.into_map()
    }
}

impl PartialEq for Metadata {
    /// Equal when the entries are: no map and an empty one are the same.
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Metadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::deserialize(deserializer).map(Metadata::from)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::Metadata;
    use crate::ToolSpec;

    #[test]
    fn no_entries_take_no_box_and_a_write_makes_the_map() {
        let mut metadata = Metadata::from(Map::new());
        assert!(metadata.0.is_none() && metadata.is_empty());
        assert_eq!(metadata, Metadata::new());
        metadata.insert("k".into(), json!(1));
        assert_eq!(metadata.get("k"), Some(&json!(1)));
        assert_ne!(metadata, Metadata::new());
        assert_eq!(metadata.clone().into_map().len(), 1);
    }

    #[test]
    fn a_spec_without_metadata_holds_a_pointer_for_it_and_encodes_none() {
        // With the map inline a spec was 232 bytes.
        let size = size_of::<ToolSpec>();
        assert!(size <= 168, "a spec is {size} bytes");
        let spec = ToolSpec::new("t");
        let wire = serde_json::to_value(&spec).unwrap();
        assert!(wire.get("metadata").is_none(), "{wire}");
        let back: ToolSpec = serde_json::from_value(wire).unwrap();
        assert!(back.metadata.0.is_none());
        let tagged = ToolSpec::new("t").with_metadata("k", json!("v"));
        let back: ToolSpec = serde_json::from_value(serde_json::to_value(&tagged).unwrap()).unwrap();
        assert_eq!(back.metadata.get("k"), Some(&json!("v")));
    }
}
