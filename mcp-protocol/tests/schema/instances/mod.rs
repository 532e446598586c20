//! Minimal and maximal instances of every union member, built with our types, per revision.
//!
//! A minimal instance has the fields the revision requires and nothing else (in 2026-07-28 that
//! includes the request `_meta` with protocol version and client capabilities, and `resultType`,
//! `ttlMs` and `cacheScope` on results). A maximal instance fills every optional field our type
//! has that the revision's schema declares, with nested objects maximal too; where shapes exclude
//! each other (form or URL elicitation) there is one maximal instance per shape.
//!
//! The helpers here build the pieces many domains share: `_meta` objects, implementation info,
//! icons, annotations, the cache hints of 2026-07-28 results.

pub mod content;
pub mod elicitation;
pub mod lifecycle;
pub mod misc;
pub mod prompts;
pub mod resources;
pub mod sampling;
pub mod tasks;
pub mod tools;

use mcp_protocol::types::common::{Annotations, CacheScope, Icon, Implementation, ResultType, Role};
use mcp_protocol::types::lifecycle::ClientCapabilities;
use mcp_protocol::types::logging::LoggingLevel;
use mcp_protocol::types::meta::{JsonObject, Meta};
use serde_json::{Number, Value};

pub use super::Rev;
pub use super::table::Variant;

/// A JSON number from a finite `f64`.
pub fn number(value: f64) -> Number {
    Number::from_f64(value).expect("a finite number")
}

/// A JSON object literal as a [`JsonObject`].
pub fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// Some vendor `_meta` member, for the `_meta` objects the schema leaves open.
pub fn vendor_meta() -> Meta {
    Meta::new().with("com.example/trace", "trace-1")
}

/// The `_meta` of request params. 2026-07-28 requires protocol version and client capabilities
/// (minimal: empty capabilities) and has client info, log level and progress token. Before, only
/// 2025-11-25 declares `_meta` (with `progressToken`) on every request's params; older schemas
/// declare it on `ping` alone (see [`lifecycle::ping_params`]).
pub fn request_meta(rev: Rev, full: bool) -> Option<Meta> {
    if rev.is_modern() {
        if !full {
            return Some(Meta::for_request(rev.as_str(), &ClientCapabilities::default(), None));
        }
        let caps = lifecycle::client_capabilities(rev, true);
        let mut meta = Meta::for_request(rev.as_str(), &caps, Some(&implementation(rev, true)));
        meta.set(Meta::LOG_LEVEL, LoggingLevel::Notice);
        meta.set(Meta::PROGRESS_TOKEN, "progress-1");
        return Some(meta);
    }
    (full && rev >= Rev::V2025_11_25).then(progress_meta)
}

/// A legacy request `_meta`: the progress token.
pub fn progress_meta() -> Meta {
    Meta::new().with(Meta::PROGRESS_TOKEN, 7)
}

/// The `_meta` of notification params: the subscription id in 2026-07-28, open in 2025-11-25.
/// Older schemas declare it only on the params-less notifications (see
/// [`lifecycle::notification_params`]).
pub fn notification_meta(rev: Rev, full: bool) -> Option<Meta> {
    if !full || rev < Rev::V2025_11_25 {
        return None;
    }
    Some(if rev.is_modern() { Meta::new().with(Meta::SUBSCRIPTION_ID, "listen-1") } else { vendor_meta() })
}

/// The `_meta` of a result: the server info in 2026-07-28, open before.
pub fn result_meta(rev: Rev, full: bool) -> Option<Meta> {
    if !full {
        return None;
    }
    Some(if rev.is_modern() { Meta::new().with(Meta::SERVER_INFO, implementation(rev, true)) } else { vendor_meta() })
}

/// The `_meta` of a content block, resource, tool or prompt: since 2025-06-18.
pub fn item_meta(rev: Rev, full: bool) -> Option<Meta> {
    (full && rev >= Rev::V2025_06_18).then(vendor_meta)
}

/// `resultType: complete`, required on 2026-07-28 results.
pub fn complete(rev: Rev) -> Option<ResultType> {
    rev.is_modern().then_some(ResultType::Complete)
}

/// `ttlMs` and `cacheScope`, required on cacheable 2026-07-28 results.
pub fn cache_hints(rev: Rev) -> (Option<u64>, Option<CacheScope>) {
    if rev.is_modern() { (Some(60_000), Some(CacheScope::Private)) } else { (None, None) }
}

/// Name and version; title since 2025-06-18; description, icons and website since 2025-11-25.
pub fn implementation(rev: Rev, full: bool) -> Implementation {
    let mut info = Implementation::new("conformance-host", "1.2.3");
    if full {
        info.title = (rev >= Rev::V2025_06_18).then(|| "Conformance Host".to_owned());
        if rev >= Rev::V2025_11_25 {
            info.description = Some("The host of the schema conformance tests".to_owned());
            info.icons = icons(rev, true);
            info.website_url = Some("https://example.com/host".to_owned());
        }
    }
    info
}

/// Icons (2025-11-25+): one with every member.
pub fn icons(rev: Rev, full: bool) -> Option<Vec<Icon>> {
    (full && rev >= Rev::V2025_11_25).then(|| {
        vec![Icon {
            src: "https://example.com/icon.png".to_owned(),
            mime_type: Some("image/png".to_owned()),
            sizes: Some(vec!["48x48".to_owned(), "any".to_owned()]),
            theme: Some("dark".to_owned()),
            ..Default::default()
        }]
    })
}

/// Display hints: audience and priority; `lastModified` since 2025-06-18.
pub fn annotations(rev: Rev, full: bool) -> Option<Annotations> {
    full.then(|| Annotations {
        audience: Some(vec![Role::User, Role::Assistant]),
        priority: Some(number(0.5)),
        last_modified: (rev >= Rev::V2025_06_18).then(|| "2025-01-12T15:00:58Z".to_owned()),
        ..Default::default()
    })
}
