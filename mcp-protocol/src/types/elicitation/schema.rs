//! The form of a form-mode elicitation: a restricted JSON Schema, `type: "object"` whose members
//! are primitive (string, number, boolean) or enum definitions.

use crate::types::open_enum::open_enum;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

use crate::types::meta::JsonObject;

/// The schema of a form: `type: "object"` with primitive members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestedSchema {
    /// Always `object`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// `$schema` (2025-11-25+).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The members, in wire order.
    pub properties: SchemaProperties,
    /// Names of required members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Members this crate does not model (e.g. `title`).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Default for RequestedSchema {
    fn default() -> Self {
        RequestedSchema {
            schema_type: "object".to_owned(),
            schema: None,
            properties: SchemaProperties::default(),
            required: None,
            extra: JsonObject::new(),
        }
    }
}

impl RequestedSchema {
    /// Whether a member is required.
    pub fn is_required(&self, name: &str) -> bool {
        self.required.as_ref().is_some_and(|r| r.iter().any(|n| n == name))
    }

    /// The schema defaults of every member that has one: a pre-filled form `content`.
    pub fn defaults(&self) -> JsonObject {
        self.properties.iter().filter_map(|(name, def)| Some((name.clone(), def.default_value()?))).collect()
    }
}

/// The members of a [`RequestedSchema`], in the order the server sent them (forms render them
/// in that order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchemaProperties(pub Vec<(String, PrimitiveSchemaDefinition)>);

impl SchemaProperties {
    /// The definition of a member.
    pub fn get(&self, name: &str) -> Option<&PrimitiveSchemaDefinition> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    /// The members in wire order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &PrimitiveSchemaDefinition)> {
        self.0.iter().map(|(n, d)| (n, d))
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for SchemaProperties {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, def) in &self.0 {
            map.serialize_entry(name, def)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for SchemaProperties {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = SchemaProperties;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of property schemas")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((name, def)) = map.next_entry::<String, PrimitiveSchemaDefinition>()? {
                    // A repeated key replaces the earlier one, as in a JSON object.
                    out.retain(|(n, _): &(String, PrimitiveSchemaDefinition)| *n != name);
                    out.push((name, def));
                }
                Ok(SchemaProperties(out))
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// The schema of one form member: a string, number, boolean or enum.
///
/// A member whose `type` this crate does not know, or whose known shape does not decode, is kept
/// as [`PrimitiveSchemaDefinition::Unknown`] instead of failing the whole form.
#[derive(Debug, Clone, PartialEq)]
pub enum PrimitiveSchemaDefinition {
    /// `type: "string"` without `enum`/`oneOf`.
    String(StringSchema),
    /// `type: "number"` or `"integer"`.
    Number(NumberSchema),
    /// `type: "boolean"`.
    Boolean(BooleanSchema),
    /// `type: "string"` with `enum` (single choice, values are the labels).
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// `type: "string"` with `oneOf` of `{const, title}` (2025-11-25+).
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// `type: "string"` with `enum` and `enumNames` (2025-06-18 style, deprecated).
    LegacyTitledEnum(LegacyTitledEnumSchema),
    /// `type: "array"` of `items.enum` (2025-11-25+).
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// `type: "array"` of `items.anyOf` `{const, title}` (2025-11-25+).
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// A definition this crate does not know, kept as it arrived.
    Unknown(Value),
}

impl PrimitiveSchemaDefinition {
    /// The wire `type`.
    pub fn kind(&self) -> &str {
        match self {
            PrimitiveSchemaDefinition::String(_)
            | PrimitiveSchemaDefinition::UntitledSingleSelect(_)
            | PrimitiveSchemaDefinition::TitledSingleSelect(_)
            | PrimitiveSchemaDefinition::LegacyTitledEnum(_) => "string",
            PrimitiveSchemaDefinition::Number(n) => match n.number_type {
                NumberType::Integer => "integer",
                NumberType::Number => "number",
            },
            PrimitiveSchemaDefinition::Boolean(_) => "boolean",
            PrimitiveSchemaDefinition::UntitledMultiSelect(_) | PrimitiveSchemaDefinition::TitledMultiSelect(_) => {
                "array"
            }
            PrimitiveSchemaDefinition::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    /// The display title.
    pub fn title(&self) -> Option<&str> {
        self.common_str("title")
    }

    /// The description.
    pub fn description(&self) -> Option<&str> {
        self.common_str("description")
    }

    fn common_str(&self, key: &str) -> Option<&str> {
        let (title, description) = match self {
            PrimitiveSchemaDefinition::String(s) => (&s.title, &s.description),
            PrimitiveSchemaDefinition::Number(s) => (&s.title, &s.description),
            PrimitiveSchemaDefinition::Boolean(s) => (&s.title, &s.description),
            PrimitiveSchemaDefinition::UntitledSingleSelect(s) => (&s.title, &s.description),
            PrimitiveSchemaDefinition::TitledSingleSelect(s) => (&s.title, &s.description),
            PrimitiveSchemaDefinition::LegacyTitledEnum(s) => (&s.title, &s.description),
            PrimitiveSchemaDefinition::UntitledMultiSelect(s) => (&s.title, &s.description),
            PrimitiveSchemaDefinition::TitledMultiSelect(s) => (&s.title, &s.description),
            PrimitiveSchemaDefinition::Unknown(v) => return v.get(key).and_then(Value::as_str),
        };
        if key == "title" { title.as_deref() } else { description.as_deref() }
    }

    /// The schema default as a JSON value, if the definition has one.
    pub fn default_value(&self) -> Option<Value> {
        match self {
            PrimitiveSchemaDefinition::String(s) => s.default.clone().map(Value::String),
            PrimitiveSchemaDefinition::Number(s) => s.default.clone().map(Value::Number),
            PrimitiveSchemaDefinition::Boolean(s) => s.default.map(Value::Bool),
            PrimitiveSchemaDefinition::UntitledSingleSelect(s) => s.default.clone().map(Value::String),
            PrimitiveSchemaDefinition::TitledSingleSelect(s) => s.default.clone().map(Value::String),
            PrimitiveSchemaDefinition::LegacyTitledEnum(s) => s.default.clone().map(Value::String),
            PrimitiveSchemaDefinition::UntitledMultiSelect(s) => {
                s.default.clone().map(|d| d.into_iter().map(Value::String).collect())
            }
            PrimitiveSchemaDefinition::TitledMultiSelect(s) => {
                s.default.clone().map(|d| d.into_iter().map(Value::String).collect())
            }
            PrimitiveSchemaDefinition::Unknown(v) => v.get("default").cloned(),
        }
    }
}

#[derive(Serialize)]
struct WithType<'a, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    inner: &'a T,
}

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        fn tagged<S: Serializer, T: Serialize>(s: S, kind: &'static str, inner: &T) -> Result<S::Ok, S::Error> {
            WithType { kind, inner }.serialize(s)
        }
        match self {
            PrimitiveSchemaDefinition::String(x) => tagged(s, "string", x),
            PrimitiveSchemaDefinition::Number(x) => x.serialize(s),
            PrimitiveSchemaDefinition::Boolean(x) => tagged(s, "boolean", x),
            PrimitiveSchemaDefinition::UntitledSingleSelect(x) => tagged(s, "string", x),
            PrimitiveSchemaDefinition::TitledSingleSelect(x) => tagged(s, "string", x),
            PrimitiveSchemaDefinition::LegacyTitledEnum(x) => tagged(s, "string", x),
            PrimitiveSchemaDefinition::UntitledMultiSelect(x) => tagged(s, "array", x),
            PrimitiveSchemaDefinition::TitledMultiSelect(x) => tagged(s, "array", x),
            PrimitiveSchemaDefinition::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Ok(PrimitiveSchemaDefinition::from_value(value))
    }
}

impl PrimitiveSchemaDefinition {
    fn from_value(value: Value) -> Self {
        use PrimitiveSchemaDefinition as P;
        fn typed<T: DeserializeOwned>(mut value: Value, strip_type: bool) -> Option<T> {
            if strip_type && let Value::Object(map) = &mut value {
                map.remove("type");
            }
            serde_json::from_value(value).ok()
        }
        let Value::Object(map) = &value else { return P::Unknown(value) };
        let kind = map.get("type").and_then(Value::as_str).unwrap_or_default();
        let parsed = match kind {
            "string" if map.contains_key("oneOf") => typed(value.clone(), true).map(P::TitledSingleSelect),
            "string" if map.contains_key("enum") && map.contains_key("enumNames") => {
                typed(value.clone(), true).map(P::LegacyTitledEnum)
            }
            "string" if map.contains_key("enum") => typed(value.clone(), true).map(P::UntitledSingleSelect),
            "string" => typed(value.clone(), true).map(P::String),
            "number" | "integer" => typed(value.clone(), false).map(P::Number),
            "boolean" => typed(value.clone(), true).map(P::Boolean),
            "array" => {
                let titled = map.get("items").and_then(|i| i.get("anyOf")).is_some();
                if titled {
                    typed(value.clone(), true).map(P::TitledMultiSelect)
                } else {
                    typed(value.clone(), true).map(P::UntitledMultiSelect)
                }
            }
            _ => None,
        };
        parsed.unwrap_or(P::Unknown(value))
    }
}

/// A free-text member.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// `date`, `date-time`, `email` or `uri`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_enum! {
    /// `format` of a [`StringSchema`].
    pub enum StringFormat {
        /// `date`.
        Date = "date",
        /// `date-time`.
        DateTime = "date-time",
        /// `email`.
        Email = "email",
        /// `uri`.
        Uri = "uri",
    }
}

/// `type` of a [`NumberSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// `number`.
    #[default]
    Number,
    /// `integer`.
    Integer,
}

/// A numeric member. Bounds and default are kept as JSON numbers so `1` stays `1`, not `1.0`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `number` or `integer`.
    #[serde(rename = "type")]
    pub number_type: NumberType,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// Default value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Number>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A yes/no member.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanSchema {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A single choice among values that are their own labels.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledSingleSelectEnumSchema {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The allowed values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A single choice among titled values (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options.
    pub one_of: Vec<EnumOption>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A single choice with parallel `enumNames` labels (2025-06-18 style, deprecated).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The allowed values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Labels of the values, same order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A multiple choice among values that are their own labels (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The allowed values.
    pub items: UntitledEnumItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `items` of an [`UntitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledEnumItems {
    /// Always `string`.
    #[serde(rename = "type")]
    pub item_type: String,
    /// The allowed values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A multiple choice among titled values (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The options.
    pub items: TitledEnumItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `items` of a [`TitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The options.
    pub any_of: Vec<EnumOption>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One titled option of an enum: the value (`const`) and its label.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label.
    pub title: String,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::elicitation::ElicitParams;
    use serde_json::json;

    fn everything_form() -> Value {
        json!({
            "message": "Please provide inputs for the following fields:",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
                "check": {"title": "Boolean", "type": "boolean", "description": "Agree"},
                "email": {"title": "Email", "type": "string", "format": "email"},
                "integer": {"title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42},
                "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 2.5},
                "untitledSingleSelectEnum": {"type": "string", "enum": ["Monica", "Rachel"], "default": "Monica"},
                "untitledMultipleSelectEnum": {"type": "array", "minItems": 1, "maxItems": 3,
                    "items": {"type": "string", "enum": ["Guitar", "Piano"]}, "default": ["Guitar"]},
                "titledSingleSelectEnum": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}],
                    "default": "hero-1"},
                "titledMultipleSelectEnum": {"type": "array",
                    "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}]}, "default": ["fish-1"]},
                "legacyTitledEnum": {"type": "string", "enum": ["pet-1"], "enumNames": ["Cats"], "default": "pet-1"},
                "color": {"type": "color", "default": "#fff"}
            }, "required": ["name"], "title": "Answer"}
        })
    }

    #[test]
    fn form_without_mode_round_trips_with_every_member_kind() {
        let v = everything_form();
        let p: ElicitParams = serde_json::from_value(v.clone()).unwrap();
        let ElicitParams::Form(form) = &p else { panic!("{p:?}") };
        assert_eq!(p.mode(), "form");
        assert!(form.mode.is_none());
        let schema = &form.requested_schema;
        assert!(schema.is_required("name") && !schema.is_required("check"));
        assert_eq!(schema.extra["title"], "Answer");
        let kinds: Vec<_> = schema.properties.iter().map(|(n, d)| (n.as_str(), d.kind())).collect();
        assert_eq!(kinds[0], ("name", "string"));
        assert_eq!(kinds[3], ("integer", "integer"));
        use PrimitiveSchemaDefinition as P;
        assert!(matches!(schema.properties.get("check"), Some(P::Boolean(_))));
        assert!(matches!(schema.properties.get("email"), Some(P::String(s)) if s.format == Some(StringFormat::Email)));
        assert!(matches!(schema.properties.get("untitledSingleSelectEnum"), Some(P::UntitledSingleSelect(_))));
        assert!(matches!(schema.properties.get("untitledMultipleSelectEnum"), Some(P::UntitledMultiSelect(_))));
        assert!(matches!(schema.properties.get("titledSingleSelectEnum"), Some(P::TitledSingleSelect(_))));
        assert!(matches!(schema.properties.get("titledMultipleSelectEnum"), Some(P::TitledMultiSelect(_))));
        assert!(matches!(schema.properties.get("legacyTitledEnum"), Some(P::LegacyTitledEnum(_))));
        assert!(matches!(schema.properties.get("color"), Some(P::Unknown(_))));
        assert_eq!(schema.properties.get("name").unwrap().description(), Some("Your full, legal name"));
        // Integers stay integers on the way back.
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        let defaults = schema.defaults();
        assert_eq!(defaults["integer"], 42);
        assert_eq!(defaults["untitledMultipleSelectEnum"], json!(["Guitar"]));
        assert_eq!(defaults["color"], "#fff");
        assert!(!defaults.contains_key("name"));
    }
}
