//! [`ToolParameters`]: a tool's arguments schema, shared by reference count and read through
//! whatever holds it, so that an adapter can hand over a schema it has not parsed yet.

use std::borrow::Borrow;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// What holds a schema for [`ToolParameters`]: a [`Value`] built in memory, or an adapter's own
/// type that parses its schema on the first read (the MCP adapter shares a tool's `inputSchema`
/// this way, kept as text until someone reads it).
///
/// Every type that lends a [`Value`] (`Borrow<Value>`: a `Value` itself, or a type of another
/// crate that parses on the first borrow) is a source as it is, so an adapter hands over the
/// `Arc` it already holds, not a new one around it.
pub trait SchemaSource: Send + Sync + 'static {
    /// The schema. Called on every read: parse once, then hand out the same value.
    fn schema(&self) -> &Value;
}

impl<T: Borrow<Value> + Send + Sync + 'static> SchemaSource for T {
    fn schema(&self) -> &Value {
        self.borrow()
    }
}

/// The JSON Schema of a tool's arguments object, shared rather than copied: cloning it (and the
/// [`ToolSpec`](crate::ToolSpec) holding it) copies a pointer. Reads as a [`Value`]; a source
/// that parses lazily parses on the first read, so a host that lists thousands of tools pays
/// only for the schemas it reads.
#[derive(Clone)]
pub struct ToolParameters(Arc<dyn SchemaSource>);

impl ToolParameters {
    /// Parameters read from `source` (shared, never copied).
    pub fn from_source(source: Arc<dyn SchemaSource>) -> Self {
        ToolParameters(source)
    }

    /// Whether `self` and `other` share one source (not a copy).
    pub fn ptr_eq(&self, other: &ToolParameters) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.0), Arc::as_ptr(&other.0))
    }
}

impl Deref for ToolParameters {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.0.schema()
    }
}

impl AsRef<Value> for ToolParameters {
    fn as_ref(&self) -> &Value {
        self
    }
}

impl From<Value> for ToolParameters {
    fn from(schema: Value) -> Self {
        ToolParameters(Arc::new(schema))
    }
}

impl From<Arc<Value>> for ToolParameters {
    fn from(schema: Arc<Value>) -> Self {
        ToolParameters(schema)
    }
}

impl PartialEq for ToolParameters {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other) || **self == **other
    }
}

impl std::fmt::Debug for ToolParameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// The schema as compact JSON text.
impl std::fmt::Display for ToolParameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for ToolParameters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolParameters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(ToolParameters::from)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    /// A source that parses its text on the first read and counts the parses.
    struct Lazy {
        text: &'static str,
        tree: OnceLock<Value>,
        parses: AtomicUsize,
    }

    impl SchemaSource for Lazy {
        fn schema(&self) -> &Value {
            self.tree.get_or_init(|| {
                self.parses.fetch_add(1, Ordering::SeqCst);
                serde_json::from_str(self.text).unwrap()
            })
        }
    }

    #[test]
    fn a_lazy_source_is_read_once_and_shared_by_clones() {
        let lazy = Arc::new(Lazy { text: r#"{"type":"object"}"#, tree: OnceLock::new(), parses: AtomicUsize::new(0) });
        let parameters = ToolParameters::from_source(lazy.clone());
        let clone = parameters.clone();
        assert_eq!(lazy.parses.load(Ordering::SeqCst), 0, "cloning read the schema");
        assert!(clone.ptr_eq(&parameters));
        assert_eq!(clone["type"], "object");
        assert_eq!(*parameters, json!({"type": "object"}));
        assert_eq!(lazy.parses.load(Ordering::SeqCst), 1);
        assert_eq!(serde_json::to_value(&parameters).unwrap(), json!({"type": "object"}));
    }

    #[test]
    fn equal_schemas_are_equal_whatever_holds_them() {
        let lazy = Arc::new(Lazy { text: r#"{"a":1}"#, tree: OnceLock::new(), parses: AtomicUsize::new(0) });
        assert_eq!(ToolParameters::from_source(lazy), ToolParameters::from(json!({"a": 1})));
        assert_ne!(ToolParameters::from(json!({"a": 2})), ToolParameters::from(json!({"a": 1})));
        let back: ToolParameters = serde_json::from_value(json!({"a": 1})).unwrap();
        assert_eq!(format!("{back:?}"), format!("{:?}", json!({"a": 1})));
    }
}
