//! Progress notifications for long-running requests that carried a `progressToken` in `_meta`.

use serde::{Deserialize, Serialize, Serializer};

use super::meta::{JsonObject, Meta, ProgressToken};

/// Params of `notifications/progress`.
///
/// `progress` and `total` may be fractional, so they are `f64`. A whole value is written as a
/// JSON integer (`5`, not `5.0`), the way most senders write it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token of the request this progress is about.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification, even when the total is unknown.
    #[serde(serialize_with = "whole_as_integer")]
    pub progress: f64,
    /// Total amount of work, if known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_whole_as_integer"
    )]
    pub total: Option<f64>,
    /// Human-readable progress message (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ProgressParams {
    /// Progress for a token, without total or message.
    pub fn new(progress_token: impl Into<ProgressToken>, progress: f64) -> Self {
        ProgressParams {
            progress_token: progress_token.into(),
            progress,
            total: None,
            message: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Largest magnitude below which every whole f64 is an exact integer (2^53).
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

fn whole_as_integer<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < EXACT_INT {
        if *v >= 0.0 {
            s.serialize_u64(*v as u64)
        } else {
            s.serialize_i64(*v as i64)
        }
    } else {
        s.serialize_f64(*v)
    }
}

fn opt_whole_as_integer<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => whole_as_integer(v, s),
        None => s.serialize_none(),
    }
}

crate::notification_methods! {
    /// `notifications/progress`.
    Progress = "notifications/progress", ProgressParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;
    use crate::method::NotificationMethod;
    use serde_json::json;

    #[test]
    fn round_trips_integers_fractions_and_unknown_members() {
        let v = json!({"progress": 3, "total": 10, "progressToken": 7, "message": "step 3", "_meta": {"a": 1}, "eta": "1s"});
        let p: ProgressParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.progress_token, RequestId::Number(7));
        assert_eq!(p.progress, 3.0);
        assert_eq!(p.total, Some(10.0));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        let v = json!({"progressToken": "tok", "progress": 0.25, "total": -1.5});
        let p: ProgressParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.progress, 0.25);
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn whole_floats_are_written_as_integers() {
        let p = ProgressParams {
            total: Some(3.0),
            ..ProgressParams::new(4, 1.0)
        };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"progressToken":4,"progress":1,"total":3}"#
        );
        assert_eq!(Progress::METHOD, "notifications/progress");
    }
}
