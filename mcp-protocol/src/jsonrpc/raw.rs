//! [`RawJson`]: a payload's JSON text, kept as it arrived until its method types it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// Raw JSON text: a payload (`params`, `result`) kept as it arrived until it is typed by its
/// method.
///
/// It always holds one valid JSON value: it is made by serde_json's parse ([`RawJson::from_string`],
/// its `Deserialize`, a `Box<RawValue>`), by serialising a value ([`to_raw`](super::to_raw)), or
/// by the codec from a line its own check found to be JSON ([`crate::codec`]), which is what
/// lets a decoded payload skip a second parse before its method reads it. It is written out as
/// it is, so that a payload goes back on the wire byte for byte.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RawJson(Box<str>);

impl RawJson {
    /// `null`.
    pub fn null() -> Self {
        RawJson("null".into())
    }

    /// `text`, once serde_json has checked that it is one JSON value.
    pub fn from_string(text: String) -> Result<Self, serde_json::Error> {
        serde_json::from_str::<&RawValue>(&text)?;
        Ok(RawJson(text.into_boxed_str()))
    }

    /// Text known to be one JSON value: the codec's, after its check.
    pub(crate) fn from_checked(text: String) -> Self {
        RawJson(text.into_boxed_str())
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// The JSON text, given up.
    pub fn into_string(self) -> String {
        self.0.into_string()
    }

    /// The text as serde_json's raw value (a parse, to make one).
    pub fn to_raw_value(&self) -> Box<RawValue> {
        self.as_raw_value().to_owned()
    }

    /// The text borrowed as serde_json's raw value, which is made by a parse only.
    fn as_raw_value(&self) -> &RawValue {
        // The text is one JSON value by construction.
        serde_json::from_str(&self.0).expect("a RawJson holds one JSON value")
    }
}

impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        RawJson(raw.into())
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&format_args!("{}", &self.0)).finish()
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for RawJson {
    /// Through serde, as serde_json's raw value, which serde_json's serialiser writes as it is
    /// (another serialiser sees a value); the codec's writer copies the text without serde.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_raw_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(d).map(RawJson::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_json_text_becomes_raw_json_and_it_is_written_as_it_is() {
        assert!(RawJson::from_string("{\"a\": [1, 2]}".into()).is_ok());
        for bad in ["", "{", "{\"a\":}", "tru", "1 2", "\"\u{1}\""] {
            assert!(RawJson::from_string(bad.into()).is_err(), "{bad:?}");
        }
        let raw = RawJson::from_string("{\"a\": [1, 2]}".into()).unwrap();
        assert_eq!(serde_json::to_string(&raw).unwrap(), "{\"a\": [1, 2]}");
        assert_eq!(format!("{raw:?}"), "RawJson({\"a\": [1, 2]})");
        let back: RawJson = serde_json::from_str(" [true] ").unwrap();
        assert_eq!(back.get(), "[true]");
        assert_eq!(RawJson::null().to_raw_value().get(), "null");
    }
}
