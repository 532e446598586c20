//! The small domains: pagination, logging, progress, cancellation, subscriptions (2026-07-28) and
//! multi round-trip results and retries (2026-07-28).

use mcp_protocol::jsonrpc::RequestId;
use mcp_protocol::types::cancellation::CancelledParams;
use mcp_protocol::types::common::{PaginatedParams, RequestParams, ResultType};
use mcp_protocol::types::logging::{LoggingLevel, LoggingMessageParams, SetLevelParams};
use mcp_protocol::types::meta::Meta;
use mcp_protocol::types::mrtr::{InputRequest, InputRequiredResult, InputResponse, InputResponses};
use mcp_protocol::types::progress::ProgressParams;
use mcp_protocol::types::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams, SubscriptionsListenResult,
};
use serde_json::{Number, json};

use super::elicitation::{elicit_params, elicit_result};
use super::sampling::{create_message_params, create_message_result, list_roots_result};
use super::{Rev, Variant, complete, implementation, notification_meta, request_meta, result_meta};

/// Params of the `*/list` requests: optional in the legacy era, required (for `_meta`) in
/// 2026-07-28.
pub fn paginated_params(rev: Rev) -> Vec<Variant<Option<PaginatedParams>>> {
    let minimal = rev.is_modern().then(|| PaginatedParams { meta: request_meta(rev, false), ..Default::default() });
    let maximal =
        PaginatedParams { meta: request_meta(rev, true), cursor: Some("page-2".to_owned()), ..Default::default() };
    vec![Variant::min(minimal), Variant::max(Some(maximal))]
}

/// `logging/setLevel` params (legacy era).
pub fn set_level_params(rev: Rev) -> Vec<Variant<Option<SetLevelParams>>> {
    let build = |full: bool| {
        Some(SetLevelParams { level: LoggingLevel::Warning, meta: request_meta(rev, full), extra: Default::default() })
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `notifications/message` params.
pub fn logging_message_params(rev: Rev) -> Vec<Variant<Option<LoggingMessageParams>>> {
    let build = |full: bool| {
        Some(LoggingMessageParams {
            level: if full { LoggingLevel::Error } else { LoggingLevel::Info },
            logger: full.then(|| "database".to_owned()),
            data: if full { json!({"error": "connection lost", "retries": 3}) } else { json!("started") },
            meta: notification_meta(rev, full),
            extra: Default::default(),
        })
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `notifications/progress` params: an integer token (minimal) or a string one (maximal).
pub fn progress_params(rev: Rev) -> Vec<Variant<Option<ProgressParams>>> {
    let maximal = ProgressParams {
        total: Some(Number::from(10)),
        message: (rev >= Rev::V2025_03_26).then(|| "Step 3 of 10".to_owned()),
        meta: notification_meta(rev, true),
        ..ProgressParams::new("progress-1", 2.5)
    };
    vec![Variant::min(Some(ProgressParams::new(7, 3.0))), Variant::max(Some(maximal))]
}

/// `notifications/cancelled` params. The request id is optional only in 2025-11-25, where a task
/// is cancelled with `tasks/cancel` instead.
pub fn cancelled_params(rev: Rev) -> Vec<Variant<Option<CancelledParams>>> {
    let minimal = if rev == Rev::V2025_11_25 {
        CancelledParams::default()
    } else {
        CancelledParams::new(RequestId::from(3), None)
    };
    let maximal = CancelledParams {
        meta: notification_meta(rev, true),
        ..CancelledParams::new(RequestId::from("request-3"), Some("The user pressed stop".to_owned()))
    };
    vec![Variant::min(Some(minimal)), Variant::max(Some(maximal))]
}

fn filter(full: bool) -> SubscriptionFilter {
    if !full {
        return SubscriptionFilter::default();
    }
    SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        resources_list_changed: Some(false),
        resource_subscriptions: Some(vec!["file:///project/README.md".to_owned()]),
        ..Default::default()
    }
}

/// `subscriptions/listen` params (2026-07-28).
pub fn subscriptions_listen_params(rev: Rev) -> Vec<Variant<Option<SubscriptionsListenParams>>> {
    let build = |full: bool| {
        Some(SubscriptionsListenParams {
            notifications: filter(full),
            meta: request_meta(rev, full),
            ..Default::default()
        })
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `subscriptions/listen` result (2026-07-28): `_meta` carries the subscription id.
pub fn subscriptions_listen_result(rev: Rev) -> Vec<Variant<SubscriptionsListenResult>> {
    let build = |full: bool| {
        let mut meta = Meta::new().with(Meta::SUBSCRIPTION_ID, RequestId::from(1));
        if full {
            meta.set(Meta::SERVER_INFO, implementation(rev, true));
        }
        SubscriptionsListenResult { meta, result_type: complete(rev), ..Default::default() }
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `notifications/subscriptions/acknowledged` params (2026-07-28).
pub fn subscriptions_acknowledged_params(rev: Rev) -> Vec<Variant<Option<SubscriptionsAcknowledgedParams>>> {
    let build = |full: bool| {
        Some(SubscriptionsAcknowledgedParams {
            notifications: filter(full),
            meta: notification_meta(rev, full),
            ..Default::default()
        })
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// The maximal variant of a builder.
fn maximal<T>(variants: Vec<Variant<T>>) -> T {
    variants.into_iter().find(|v| v.maximal).expect("a maximal variant").value
}

/// The input requests of a maximal input-required result: one of each kind, each maximal.
pub fn input_requests(rev: Rev) -> Vec<(String, InputRequest)> {
    let sample = maximal(create_message_params(rev)).expect("sampling params");
    let elicit = maximal(elicit_params(rev)).expect("elicitation params");
    let roots = RequestParams { meta: Some(super::vendor_meta()), ..Default::default() };
    vec![
        ("sample".to_owned(), InputRequest::CreateMessage(sample)),
        ("roots".to_owned(), InputRequest::ListRoots(Some(roots))),
        ("ask".to_owned(), InputRequest::Elicit(elicit)),
    ]
}

/// The answers to [`input_requests`], for the maximal retries of 2026-07-28.
pub fn input_responses(rev: Rev) -> InputResponses {
    InputResponses::from([
        ("sample".to_owned(), InputResponse::CreateMessage(maximal(create_message_result(rev)))),
        ("roots".to_owned(), InputResponse::ListRoots(maximal(list_roots_result(rev)))),
        ("ask".to_owned(), InputResponse::Elicit(maximal(elicit_result(rev)))),
    ])
}

/// The input-required result (2026-07-28). Its schema requires only `resultType`, but its
/// description requires `inputRequests` or `requestState` too: the minimal instance has the state.
pub fn input_required_result(rev: Rev) -> Vec<Variant<InputRequiredResult>> {
    let minimal = InputRequiredResult {
        result_type: Some(ResultType::InputRequired),
        request_state: Some("state-1".to_owned()),
        ..Default::default()
    };
    let maximal = InputRequiredResult {
        input_requests: Some(input_requests(rev).into_iter().collect()),
        meta: result_meta(rev, true),
        ..minimal.clone()
    };
    vec![Variant::min(minimal), Variant::max(maximal)]
}
