//! [`RawJson`]: a payload's JSON text, kept as it arrived until its method types it.

use std::cell::RefCell;
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

/// The room a thread's serialising buffer keeps between two [`to_raw`] calls, in bytes.
const SCRATCH_KEPT: usize = 16 * 1024;

thread_local! {
    /// Where [`to_raw`] writes on this thread: it keeps its room from one call to the next.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Serialise a value to raw JSON text.
///
/// The text is written into a buffer that the thread keeps (16 KiB, made at its first use) and
/// then copied into an allocation of its exact size. Serialising into a fresh buffer instead
/// would grow it as the text outgrows it (a modern request's `_meta` alone outgrows serde_json's
/// first 128 bytes, twice) and shrink it to the text's size after, and every message a client
/// sends is serialised here. A text longer than what the buffer keeps leaves in the buffer
/// itself, shrunk: a large payload is not copied again, only checked once to be UTF-8 (about
/// half an instruction a byte; serialising it took about nine).
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<RawJson, serde_json::Error> {
    let kept = SCRATCH.try_with(|scratch| scratch.try_borrow_mut().ok().map(|mut buf| write_kept(&mut buf, value)));
    match kept {
        Ok(Some(written)) => written,
        // A `Serialize` that serialises another value with `to_raw` while it writes, or a thread
        // whose locals are gone (a destructor's message): a buffer of its own.
        _ => serde_json::to_string(value).map(RawJson::from_checked),
    }
}

/// [`to_raw`] through the thread's buffer `buf`.
fn write_kept<T: Serialize + ?Sized>(buf: &mut Vec<u8>, value: &T) -> Result<RawJson, serde_json::Error> {
    buf.clear();
    // All its room at once: grown as the text arrives, a `Vec` may double past it (a text of
    // 16 KiB would leave 32 KiB, and the next call would start over from nothing).
    buf.reserve_exact(SCRATCH_KEPT);
    let written = serde_json::to_writer(&mut *buf, value).and_then(|()| {
        if buf.len() > SCRATCH_KEPT {
            String::from_utf8(std::mem::take(buf)).map(RawJson::from_checked).map_err(not_utf8)
        } else {
            std::str::from_utf8(buf).map(|text| RawJson(text.into())).map_err(not_utf8)
        }
    });
    // A value that failed half-way may have grown the buffer past what it keeps.
    if buf.capacity() > SCRATCH_KEPT {
        *buf = Vec::new();
    }
    written
}

/// serde_json writes UTF-8; were it ever not to, the value is refused rather than cut.
fn not_utf8<E: fmt::Display>(error: E) -> serde_json::Error {
    serde::ser::Error::custom(format_args!("serialised text is not UTF-8: {error}"))
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

    fn scratch_room() -> usize {
        SCRATCH.with(|scratch| scratch.borrow().capacity())
    }

    /// Serialises `inner` with `to_raw` while it is itself being serialised.
    struct Nested(serde_json::Value);

    impl Serialize for Nested {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let inner = to_raw(&self.0).map_err(serde::ser::Error::custom)?;
            inner.serialize(s)
        }
    }

    /// Writes `len` bytes of a string, then fails.
    struct FailsAfter(usize);

    impl Serialize for FailsAfter {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::{Error, SerializeSeq};
            let mut seq = s.serialize_seq(None)?;
            seq.serialize_element(&"f".repeat(self.0))?;
            Err(S::Error::custom("refused half-way"))
        }
    }

    #[test]
    fn to_raw_writes_what_serde_json_writes_and_keeps_a_bounded_buffer() {
        let small =
            serde_json::json!({"name": "echo", "arguments": {"text": "h\u{e9}\"llo\n\u{1}"}, "n": [1, 2.5, null]});
        assert_eq!(to_raw(&small).unwrap().get(), serde_json::to_string(&small).unwrap());
        assert_eq!(scratch_room(), SCRATCH_KEPT);
        // Exactly at what the buffer keeps, and one byte past it (`"` + text + `"`).
        for len in [SCRATCH_KEPT - 2, SCRATCH_KEPT - 1, 3 * 1024 * 1024] {
            let text = "é".repeat(len / 2) + &"x".repeat(len % 2);
            let raw = to_raw(&text).unwrap();
            assert_eq!(raw.get().len(), text.len() + 2, "{len}");
            assert_eq!(raw.get(), serde_json::to_string(&text).unwrap(), "{len}");
            // The room is kept for the next call, whatever this one wrote.
            assert!(matches!(scratch_room(), 0 | SCRATCH_KEPT), "{len}: {}", scratch_room());
            assert_eq!(to_raw(&small).unwrap().get(), serde_json::to_string(&small).unwrap());
            assert_eq!(scratch_room(), SCRATCH_KEPT, "{len}");
        }
        // A value whose serialising serialises another: each gets its whole text.
        let nested = Nested(serde_json::json!({"inner": ["a", {"b": 1}]}));
        let outer = serde_json::json!([1]);
        let both = to_raw(&(&outer, &nested, "tail")).unwrap();
        assert_eq!(both.get(), r#"[[1],{"inner":["a",{"b":1}]},"tail"]"#);
        // A value that fails half-way, past what the buffer keeps: the error, and nothing kept.
        for len in [10, 100_000] {
            let error = to_raw(&FailsAfter(len)).unwrap_err();
            assert!(error.to_string().contains("refused half-way"), "{error}");
            assert!(matches!(scratch_room(), 0 | SCRATCH_KEPT), "{len}: {}", scratch_room());
        }
        // The next value is written from the start, not after what the failed one left.
        assert_eq!(to_raw(&small).unwrap().get(), serde_json::to_string(&small).unwrap());
    }
}
