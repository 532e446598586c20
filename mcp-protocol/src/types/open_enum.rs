//! Open string enums: a set of known wire values plus `Unknown(String)` for any other string.
//!
//! serde's derive can express this (`#[serde(untagged)] Unknown(String)`), but its generated
//! code buffers every value before trying the variants, which costs an allocation and a second
//! pass on each decode. `resultType` is in every 2026-07-28 result, so the enums here match the
//! borrowed string once instead.

/// Declare an open string enum from its known variants and their wire values; the macro adds
/// `Unknown(String)` for every other string.
///
/// Generates the enum (deriving `Debug, Clone, PartialEq, Eq, Hash` plus any derive given),
/// `as_str()`, and `Serialize`/`Deserialize` as a plain JSON string. `enum Name as "a thing"`
/// names what a decoding error expected (by default, "a string (Name)").
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident $(as $what:literal)? {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// Any other value, kept as written.
            Unknown(String),
        }

        impl $name {
            /// The value as written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Unknown(other) => other,
                }
            }

            fn from_wire(text: &str) -> Option<Self> {
                match text {
                    $( $wire => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Visitor;
                impl serde::de::Visitor<'_> for Visitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(open_enum!(@what $name $($what)?))
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        Ok($name::from_wire(v).unwrap_or_else(|| $name::Unknown(v.to_owned())))
                    }
                    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<$name, E> {
                        Ok($name::from_wire(&v).unwrap_or($name::Unknown(v)))
                    }
                }
                d.deserialize_str(Visitor)
            }
        }
    };
    // What a decoding error says was expected: the given description, or the type's name.
    (@what $name:ident) => { concat!("a string (", stringify!($name), ")") };
    (@what $name:ident $what:literal) => { $what };
}

pub(crate) use open_enum;

#[cfg(test)]
mod tests {
    use crate::types::common::ResultType;
    use crate::types::elicitation::ElicitAction;
    use serde_json::json;

    #[test]
    fn known_values_decode_to_their_variant_and_others_are_kept() {
        let known: ResultType = serde_json::from_value(json!("input_required")).unwrap();
        assert_eq!(known, ResultType::InputRequired);
        let other: ResultType = serde_json::from_str(r#""la\u0074er""#).unwrap();
        assert_eq!(other, ResultType::Unknown("later".into()));
        assert_eq!(serde_json::to_string(&other).unwrap(), r#""later""#);
        assert_eq!(serde_json::to_string(&ResultType::Complete).unwrap(), r#""complete""#);
        // An escaped spelling of a known value is that value.
        let escaped: ResultType = serde_json::from_str(r#""compl\u0065te""#).unwrap();
        assert_eq!(escaped, ResultType::Complete);
    }

    #[test]
    fn a_value_that_is_not_a_string_is_an_error_naming_the_type() {
        let err = serde_json::from_value::<ResultType>(json!(3)).unwrap_err();
        assert!(err.to_string().contains("a string (ResultType)"), "{err}");
        let err = serde_json::from_str::<ElicitAction>("null").unwrap_err();
        assert!(err.to_string().contains("a string (ElicitAction)"), "{err}");
    }

    #[test]
    fn the_declared_default_is_kept() {
        assert_eq!(ElicitAction::default(), ElicitAction::Decline);
        assert_eq!(ElicitAction::Decline.as_str(), "decline");
    }
}
