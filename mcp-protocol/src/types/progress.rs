//! Progress notifications for long-running requests that carried a `progressToken` in `_meta`.

use serde::{Deserialize, Serialize};
use serde_json::Number;

use super::meta::{JsonObject, Meta, ProgressToken};

/// Params of `notifications/progress`.
///
/// `progress` and `total` may be fractional. They are kept as the JSON numbers that arrived, so
/// that `5` and `5.0` (Python peers write the latter) each re-encode unchanged; read them as `f64`
/// with [`ProgressParams::progress_f64`] and [`ProgressParams::total_f64`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token of the request this progress is about.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification, even when the total is unknown.
    pub progress: Number,
    /// Total amount of work, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Number>,
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
    /// Progress for a token, without total or message. A whole value is written as a JSON
    /// integer (`5`, not `5.0`); a non-finite one, which JSON cannot carry, as `0`.
    pub fn new(progress_token: impl Into<ProgressToken>, progress: f64) -> Self {
        ProgressParams {
            progress_token: progress_token.into(),
            progress: whole_as_integer(progress),
            total: None,
            message: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The same progress with a total, written like `progress` in [`ProgressParams::new`].
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(whole_as_integer(total));
        self
    }

    /// Progress so far, as `f64`.
    pub fn progress_f64(&self) -> f64 {
        // Without serde_json's `arbitrary_precision`, every number converts.
        self.progress.as_f64().unwrap_or(f64::NAN)
    }

    /// Total amount of work as `f64`, if known.
    pub fn total_f64(&self) -> Option<f64> {
        self.total.as_ref().and_then(Number::as_f64)
    }
}

/// Largest magnitude below which every whole f64 is an exact integer (2^53).
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// A whole `f64` as a JSON integer, any other finite one as a float, a non-finite one as `0`.
fn whole_as_integer(v: f64) -> Number {
    if v.fract() == 0.0 && v.abs() < EXACT_INT {
        if v >= 0.0 { Number::from(v as u64) } else { Number::from(v as i64) }
    } else {
        Number::from_f64(v).unwrap_or_else(|| Number::from(0))
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
        assert_eq!(p.progress_f64(), 3.0);
        assert_eq!(p.total_f64(), Some(10.0));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        let v = json!({"progressToken": "tok", "progress": 0.25, "total": -1.5});
        let p: ProgressParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.progress_f64(), 0.25);
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        // A float with a zero fraction (Python's `1.0`) stays a float.
        let text = r#"{"progressToken":"t","progress":1.0,"total":3.0}"#;
        let p: ProgressParams = serde_json::from_str(text).unwrap();
        assert_eq!((p.progress_f64(), p.total_f64()), (1.0, Some(3.0)));
        assert_eq!(serde_json::to_string(&p).unwrap(), text);
    }

    #[test]
    fn built_whole_values_are_written_as_integers() {
        let p = ProgressParams::new(4, 1.0).with_total(3.0);
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"progressToken":4,"progress":1,"total":3}"#);
        let p = ProgressParams::new("t", 0.5).with_total(f64::INFINITY);
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"progressToken":"t","progress":0.5,"total":0}"#);
        assert_eq!(Progress::METHOD, "notifications/progress");
    }
}
