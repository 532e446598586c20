//! The members a session adds to every request's `params._meta` (the modern era's protocol
//! version, client capabilities and client info, and a request's `progressToken`).
//!
//! Typed params are serialised with those members in one pass ([`typed_params`]): a proxy
//! serializer passes the params' own members through and appends `_meta`, so the result needs
//! no second parse to be a valid `RawValue`; on the way it notes what the transport may be told
//! of the request ([`SendHints`]: the revision, and the member that names what the request acts
//! on), so that no transport parses the params back. Raw params (already JSON text) get the
//! members spliced in ([`raw_params`]).

use std::cell::Cell;
use std::fmt;

use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::types::meta::{JsonObject, Meta};
use mcp_protocol::{ProtocolVersion, RawJson, RequestId};
use mcp_transport::SendHints;
use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// The `_meta` members added to every request, encoded once.
pub(super) struct RequestMeta {
    members: JsonObject,
    /// Each member's value as JSON text, written as is on requests with a progress token.
    encoded: Vec<(String, Box<RawValue>)>,
    /// The whole `_meta` object as JSON text, written as is on every other request.
    object: Box<RawValue>,
    /// The members as JSON text without the enclosing braces.
    text: String,
    /// The revision the members name (the modern era's protocol version), if any.
    revision: Option<ProtocolVersion>,
}

impl RequestMeta {
    /// Encode `members` (JSON values always encode; the error is serde_json's signature).
    pub(super) fn new(members: JsonObject) -> Result<Self, serde_json::Error> {
        use serde_json::value::to_raw_value;
        let encoded = members.iter().map(|(k, v)| Ok((k.clone(), to_raw_value(v)?))).collect::<Result<_, _>>()?;
        let object = to_raw_value(&members)?;
        let text = object.get().strip_prefix('{').and_then(|t| t.strip_suffix('}')).unwrap_or_default().to_owned();
        let revision = members.get(Meta::PROTOCOL_VERSION).and_then(Value::as_str).map(ProtocolVersion::parse);
        Ok(RequestMeta { members, encoded, object, text, revision })
    }
}

/// Serialise typed `params` of request `method` with the session's `_meta` members and the
/// progress token. With them, when `method` is given (the transport reads hints), what the
/// transport may be told of the request: the revision the `_meta` names and the string in the
/// member that names what the request acts on ([`mcp_protocol::method::target_member`]); `None`
/// when that is not known for sure (no session members, or params that set `_meta` themselves).
pub(super) fn typed_params<P: Serialize + ?Sized>(
    method: Option<&str>,
    params: &P,
    meta: Option<&RequestMeta>,
    token: Option<&RequestId>,
) -> Result<(RawJson, Option<SendHints>), serde_json::Error> {
    if meta.is_none() && token.is_none() {
        return Ok((to_raw(params)?, None));
    }
    let target =
        method.and_then(mcp_protocol::method::target_member).map(|member| Target { member, value: Cell::new(None) });
    let extra = Extra { meta, token, target: target.as_ref() };
    match mcp_protocol::to_raw(&WithMeta { params, extra }) {
        Ok(raw) if method.is_none() => Ok((raw, None)),
        Ok(raw) => {
            let hints = SendHints {
                revision: meta.and_then(|m| m.revision.clone()),
                target: target.and_then(|t| t.value.into_inner()),
            };
            Ok((raw, Some(hints)))
        }
        // The params set `_meta` themselves: merge the two (rare, so the slow way).
        Err(e) if e.to_string() == HAS_META => Ok((raw_params(Some(to_raw(params)?), meta, token)?, None)),
        Err(e) => Err(e),
    }
}

/// Add the session's `_meta` members and the progress token to params that are JSON text.
pub(super) fn raw_params(
    params: Option<RawJson>,
    meta: Option<&RequestMeta>,
    token: Option<&RequestId>,
) -> Result<RawJson, serde_json::Error> {
    let text = params.as_ref().map_or("{}", RawJson::get);
    if !text.contains("\"_meta\"")
        && let Some(body) = text.trim_start().strip_prefix('{')
    {
        let mut members = meta.map_or(String::new(), |m| m.text.clone());
        if let Some(id) = token {
            if !members.is_empty() {
                members.push(',');
            }
            members.push_str("\"progressToken\":");
            members.push_str(&serde_json::to_string(id)?);
        }
        let body = body.trim_start();
        let separator = if body.starts_with('}') { "" } else { "," };
        return RawJson::from_string(format!("{{\"_meta\":{{{members}}}{separator}{body}"));
    }
    let mut value: Value = serde_json::from_str(text)?;
    if let Value::Object(map) = &mut value {
        let entry = map.entry("_meta").or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(target) = entry {
            // What the caller put in `_meta` wins over the session's defaults.
            for (k, v) in meta.map(|m| &m.members).into_iter().flatten() {
                target.entry(k.clone()).or_insert_with(|| v.clone());
            }
            if let Some(id) = token {
                target.insert("progressToken".into(), serde_json::to_value(id)?);
            }
        }
    }
    to_raw(&value)
}

/// The error that sends [`typed_params`] to the merging path.
const HAS_META: &str = "params carry their own _meta";
/// The error for params that are not a JSON object.
const NOT_AN_OBJECT: &str = "request params must serialise as a JSON object";

#[derive(Clone, Copy)]
struct Extra<'a> {
    meta: Option<&'a RequestMeta>,
    token: Option<&'a RequestId>,
    /// Where the string of the member naming what the request acts on is noted.
    target: Option<&'a Target>,
}

/// The member of the params that names what the request acts on, and the string it held.
struct Target {
    member: &'static str,
    value: Cell<Option<String>>,
}

impl Target {
    /// Note `value` when it is a string (the member holding anything else names nothing).
    fn note<T: Serialize + ?Sized>(&self, value: &T) {
        if let Ok(Value::String(s)) = value.serialize(serde_json::value::Serializer) {
            self.value.set(Some(s));
        }
    }
}

impl Serialize for Extra<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let (Some(meta), None) = (self.meta, self.token) {
            return meta.object.serialize(s);
        }
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.meta.map(|m| m.encoded.as_slice()).unwrap_or_default() {
            map.serialize_entry(k, v)?;
        }
        if let Some(id) = self.token {
            map.serialize_entry("progressToken", id)?;
        }
        map.end()
    }
}

struct WithMeta<'a, P: ?Sized> {
    params: &'a P,
    extra: Extra<'a>,
}

impl<P: Serialize + ?Sized> Serialize for WithMeta<'_, P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(Proxy { inner: s, extra: self.extra })
    }
}

/// Passes an object's members through to `inner` and appends `_meta` at its end.
struct Proxy<'a, S> {
    inner: S,
    extra: Extra<'a>,
}

/// The proxy of one object being written.
struct ProxyMap<'a, M> {
    map: M,
    extra: Extra<'a>,
    /// The value about to be written is the target member's.
    target_next: bool,
}

impl<M: SerializeMap> ProxyMap<'_, M> {
    fn finish(mut self) -> Result<M::Ok, M::Error> {
        self.map.serialize_entry("_meta", &self.extra)?;
        self.map.end()
    }
}

fn not_an_object<E: ser::Error>() -> E {
    E::custom(NOT_AN_OBJECT)
}

macro_rules! reject {
    ($($name:ident($($arg:ty),*);)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<Self::Ok, Self::Error> { Err(not_an_object()) })*
    };
}

impl<'a, S: Serializer> Serializer for Proxy<'a, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = ProxyMap<'a, S::SerializeMap>;
    type SerializeStruct = ProxyMap<'a, S::SerializeMap>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    reject! {
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32); serialize_i64(i64);
        serialize_u8(u8); serialize_u16(u16); serialize_u32(u32); serialize_u64(u64); serialize_f32(f32);
        serialize_f64(f64); serialize_char(char); serialize_str(&str); serialize_bytes(&[u8]);
        serialize_unit_struct(&'static str); serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.serialize_unit()
    }

    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        ProxyMap { map: self.inner.serialize_map(Some(1))?, extra: self.extra, target_next: false }.finish()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_an_object())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(not_an_object())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(ProxyMap { map: self.inner.serialize_map(None)?, extra: self.extra, target_next: false })
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, S::Error> {
        Ok(ProxyMap { map: self.inner.serialize_map(None)?, extra: self.extra, target_next: false })
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Err(not_an_object())
    }
}

impl<M: SerializeMap> SerializeMap for ProxyMap<'_, M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), M::Error> {
        if key_is(key, "_meta") {
            return Err(ser::Error::custom(HAS_META));
        }
        self.target_next = self.extra.target.is_some_and(|t| key_is(key, t.member));
        self.map.serialize_key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), M::Error> {
        if std::mem::take(&mut self.target_next)
            && let Some(target) = self.extra.target
        {
            target.note(value);
        }
        self.map.serialize_value(value)
    }

    fn end(self) -> Result<M::Ok, M::Error> {
        self.finish()
    }
}

impl<M: SerializeMap> SerializeStruct for ProxyMap<'_, M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), M::Error> {
        if key == "_meta" {
            return Err(ser::Error::custom(HAS_META));
        }
        if let Some(target) = self.extra.target
            && key == target.member
        {
            target.note(value);
        }
        self.map.serialize_entry(key, value)
    }

    fn end(self) -> Result<M::Ok, M::Error> {
        self.finish()
    }
}

/// Whether a map key is the string `name`.
fn key_is<T: Serialize + ?Sized>(key: &T, name: &str) -> bool {
    key.serialize(KeyIs(name)).unwrap_or(false)
}

/// Answers whether the key it is given is the string it holds; any other kind of key is not.
struct KeyIs<'a>(&'a str);

#[derive(Debug)]
struct NotAString;

impl fmt::Display for NotAString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a string")
    }
}

impl std::error::Error for NotAString {}

impl ser::Error for NotAString {
    fn custom<T: fmt::Display>(_: T) -> Self {
        NotAString
    }
}

macro_rules! not_meta {
    ($($name:ident($($arg:ty),*);)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<bool, NotAString> { Ok(false) })*
    };
}

impl Serializer for KeyIs<'_> {
    type Ok = bool;
    type Error = NotAString;
    type SerializeSeq = Impossible<bool, NotAString>;
    type SerializeTuple = Impossible<bool, NotAString>;
    type SerializeTupleStruct = Impossible<bool, NotAString>;
    type SerializeTupleVariant = Impossible<bool, NotAString>;
    type SerializeMap = Impossible<bool, NotAString>;
    type SerializeStruct = Impossible<bool, NotAString>;
    type SerializeStructVariant = Impossible<bool, NotAString>;

    not_meta! {
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32); serialize_i64(i64);
        serialize_u8(u8); serialize_u16(u16); serialize_u32(u32); serialize_u64(u64); serialize_f32(f32);
        serialize_f64(f64); serialize_char(char); serialize_bytes(&[u8]); serialize_none(); serialize_unit();
        serialize_unit_struct(&'static str); serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_str(self, v: &str) -> Result<bool, NotAString> {
        Ok(v == self.0)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<bool, NotAString> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<bool, NotAString> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<bool, NotAString> {
        Ok(false)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotAString> {
        Err(NotAString)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotAString> {
        Err(NotAString)
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, NotAString> {
        Err(NotAString)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotAString> {
        Err(NotAString)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotAString> {
        Err(NotAString)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NotAString> {
        Err(NotAString)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotAString> {
        Err(NotAString)
    }
}

#[cfg(test)]
mod tests;
