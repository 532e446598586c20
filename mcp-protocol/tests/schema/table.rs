//! The explicit table from every union member the schemas name to our Rust type and method, with
//! the builders of its instances.
//!
//! A request or notification entry is keyed by its marker type, so its method is the marker's
//! `METHOD` and its instances are built from the marker's `Params`. A result entry names the
//! method whose answer it is (the union decodes results by method) and the concrete result type
//! it builds, which for multi round-trip methods is one shape of the method's `Outcome`.

use std::any::type_name;

use mcp_protocol::method::{NotificationMethod, RequestMethod};
use mcp_protocol::types::cancellation::Cancelled;
use mcp_protocol::types::common::EmptyResult;
use mcp_protocol::types::completion::{Complete, CompleteResult};
use mcp_protocol::types::discover::{Discover, DiscoverResult};
use mcp_protocol::types::elicitation::{Elicit, ElicitResult, ElicitationComplete};
use mcp_protocol::types::lifecycle::{Initialize, InitializeResult, Initialized, Ping};
use mcp_protocol::types::logging::{LoggingMessage, SetLevel};
use mcp_protocol::types::mrtr::InputRequiredResult;
use mcp_protocol::types::progress::Progress;
use mcp_protocol::types::prompts::{GetPrompt, GetPromptResult, ListPrompts, ListPromptsResult, PromptListChanged};
use mcp_protocol::types::resources::{
    ListResourceTemplates, ListResourceTemplatesResult, ListResources, ListResourcesResult, ReadResource,
    ReadResourceResult, ResourceListChanged, ResourceUpdated, Subscribe, Unsubscribe,
};
use mcp_protocol::types::roots::{ListRoots, ListRootsResult, RootsListChanged};
use mcp_protocol::types::sampling::{CreateMessage, CreateMessageResult};
use mcp_protocol::types::subscriptions::{SubscriptionsAcknowledged, SubscriptionsListen, SubscriptionsListenResult};
use mcp_protocol::types::tasks::{
    CancelTask, CancelTaskResult, CreateTaskResult, GetTask, GetTaskPayload, GetTaskPayloadResult, GetTaskResult,
    ListTasks, ListTasksResult, TaskStatus,
};
use mcp_protocol::types::tools::{CallTool, CallToolResult, ListTools, ListToolsResult, ToolListChanged};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Rev;
use super::instances::{elicitation, lifecycle, misc, prompts, resources, sampling, tasks, tools as tool_instances};

/// What a union member is on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A request: `method` and `params` (and, as a JSON-RPC message, `jsonrpc` and `id`).
    Request,
    /// A notification: `method` and `params`.
    Notification,
    /// The `result` of a response.
    Result,
}

/// One instance of a type, before serialisation.
pub struct Variant<T> {
    /// `minimal`, `maximal`, or `maximal (...)` for a second maximal shape.
    pub label: &'static str,
    /// Whether every optional field the revision has is meant to be filled.
    pub maximal: bool,
    /// The value.
    pub value: T,
}

impl<T> Variant<T> {
    /// The minimal instance: required fields only.
    pub fn min(value: T) -> Self {
        Variant { label: "minimal", maximal: false, value }
    }

    /// The maximal instance: every optional field of the revision.
    pub fn max(value: T) -> Self {
        Variant { label: "maximal", maximal: true, value }
    }

    /// Another maximal instance, for members whose shapes exclude each other (form or URL
    /// elicitation, a prompt or a resource reference).
    pub fn max_as(label: &'static str, value: T) -> Self {
        Variant { label, maximal: true, value }
    }
}

/// One instance serialised by our type.
pub struct Built {
    /// See [`Variant::label`].
    pub label: &'static str,
    /// See [`Variant::maximal`].
    pub maximal: bool,
    /// The `params` (requests, notifications; `None` when absent) or the `result`.
    pub payload: Option<Value>,
    /// Decoding the payload with the same type and encoding it again gives it back unchanged.
    pub round_trip: Result<(), String>,
}

/// An entry of the table.
pub struct Entry {
    /// The schema's name for the member, e.g. `CallToolRequest`.
    pub member: &'static str,
    /// Request, notification or result.
    pub kind: Kind,
    /// Requests and notifications: the marker's `METHOD`. Results: the method they answer.
    pub method: &'static str,
    /// The Rust type that builds the payload.
    pub rust_type: &'static str,
    build: Box<dyn Fn(Rev) -> Vec<Built>>,
}

impl Entry {
    /// The instances of this member for a revision.
    pub fn instances(&self, rev: Rev) -> Vec<Built> {
        (self.build)(rev)
    }
}

/// The instances of one type for a revision.
type Builder<T> = fn(Rev) -> Vec<Variant<T>>;

fn encode<T: Serialize + DeserializeOwned>(variant: Variant<T>) -> Built {
    let payload = serde_json::to_value(&variant.value).expect("our types serialise");
    let round_trip = match serde_json::from_value::<T>(payload.clone()) {
        Ok(back) => {
            let again = serde_json::to_value(&back).expect("our types serialise");
            if again == payload { Ok(()) } else { Err(format!("re-encoded as {again}")) }
        }
        Err(e) => Err(format!("does not decode back: {e}")),
    };
    // `Option<Params>`: `None` is a request without params, not `"params": null`.
    let payload = (!payload.is_null()).then_some(payload);
    Built { label: variant.label, maximal: variant.maximal, payload, round_trip }
}

fn request<M: RequestMethod>(member: &'static str, build: Builder<Option<M::Params>>) -> Entry {
    Entry {
        member,
        kind: Kind::Request,
        method: M::METHOD,
        rust_type: type_name::<M::Params>(),
        build: Box::new(move |rev| build(rev).into_iter().map(encode).collect()),
    }
}

fn notification<M: NotificationMethod>(member: &'static str, build: Builder<Option<M::Params>>) -> Entry {
    Entry {
        member,
        kind: Kind::Notification,
        method: M::METHOD,
        rust_type: type_name::<M::Params>(),
        build: Box::new(move |rev| build(rev).into_iter().map(encode).collect()),
    }
}

fn result<M: RequestMethod, R: Serialize + DeserializeOwned + 'static>(
    member: &'static str,
    build: Builder<R>,
) -> Entry {
    Entry {
        member,
        kind: Kind::Result,
        method: M::METHOD,
        rust_type: type_name::<R>(),
        build: Box::new(move |rev| build(rev).into_iter().map(encode).collect()),
    }
}

/// Every union member of every revision, and nothing else.
pub fn table() -> Vec<Entry> {
    vec![
        // Lifecycle.
        request::<Initialize>("InitializeRequest", lifecycle::initialize_params),
        result::<Initialize, InitializeResult>("InitializeResult", lifecycle::initialize_result),
        notification::<Initialized>("InitializedNotification", lifecycle::notification_params),
        request::<Ping>("PingRequest", lifecycle::ping_params),
        // The schema's bare `Result` (alias `EmptyResult`): the answer to ping, subscribe,
        // unsubscribe and setLevel.
        result::<Ping, EmptyResult>("Result", lifecycle::empty_result),
        request::<Discover>("DiscoverRequest", lifecycle::discover_params),
        result::<Discover, DiscoverResult>("DiscoverResult", lifecycle::discover_result),
        // Tools.
        request::<ListTools>("ListToolsRequest", misc::paginated_params),
        result::<ListTools, ListToolsResult>("ListToolsResult", tool_instances::list_tools_result),
        request::<CallTool>("CallToolRequest", tool_instances::call_tool_params),
        result::<CallTool, CallToolResult>("CallToolResult", tool_instances::call_tool_result),
        notification::<ToolListChanged>("ToolListChangedNotification", lifecycle::notification_params),
        // Multi round-trip (2026-07-28): `tools/call`, `prompts/get` and `resources/read` may answer
        // with an input-required result; `tools/call` stands for the three.
        result::<CallTool, InputRequiredResult>("InputRequiredResult", misc::input_required_result),
        // Resources.
        request::<ListResources>("ListResourcesRequest", misc::paginated_params),
        result::<ListResources, ListResourcesResult>("ListResourcesResult", resources::list_resources_result),
        request::<ListResourceTemplates>("ListResourceTemplatesRequest", misc::paginated_params),
        result::<ListResourceTemplates, ListResourceTemplatesResult>(
            "ListResourceTemplatesResult",
            resources::list_resource_templates_result,
        ),
        request::<ReadResource>("ReadResourceRequest", resources::read_resource_params),
        result::<ReadResource, ReadResourceResult>("ReadResourceResult", resources::read_resource_result),
        request::<Subscribe>("SubscribeRequest", resources::subscribe_params),
        request::<Unsubscribe>("UnsubscribeRequest", resources::subscribe_params),
        notification::<ResourceListChanged>("ResourceListChangedNotification", lifecycle::notification_params),
        notification::<ResourceUpdated>("ResourceUpdatedNotification", resources::resource_updated_params),
        // Prompts.
        request::<ListPrompts>("ListPromptsRequest", misc::paginated_params),
        result::<ListPrompts, ListPromptsResult>("ListPromptsResult", prompts::list_prompts_result),
        request::<GetPrompt>("GetPromptRequest", prompts::get_prompt_params),
        result::<GetPrompt, GetPromptResult>("GetPromptResult", prompts::get_prompt_result),
        notification::<PromptListChanged>("PromptListChangedNotification", lifecycle::notification_params),
        // Completion and logging.
        request::<Complete>("CompleteRequest", prompts::complete_params),
        result::<Complete, CompleteResult>("CompleteResult", prompts::complete_result),
        request::<SetLevel>("SetLevelRequest", misc::set_level_params),
        notification::<LoggingMessage>("LoggingMessageNotification", misc::logging_message_params),
        // Progress and cancellation.
        notification::<Progress>("ProgressNotification", misc::progress_params),
        notification::<Cancelled>("CancelledNotification", misc::cancelled_params),
        // Subscriptions (2026-07-28).
        request::<SubscriptionsListen>("SubscriptionsListenRequest", misc::subscriptions_listen_params),
        result::<SubscriptionsListen, SubscriptionsListenResult>(
            "SubscriptionsListenResult",
            misc::subscriptions_listen_result,
        ),
        notification::<SubscriptionsAcknowledged>(
            "SubscriptionsAcknowledgedNotification",
            misc::subscriptions_acknowledged_params,
        ),
        // Sampling, roots and elicitation: server requests (legacy era) or input requests (2026-07-28).
        request::<CreateMessage>("CreateMessageRequest", sampling::create_message_params),
        result::<CreateMessage, CreateMessageResult>("CreateMessageResult", sampling::create_message_result),
        request::<ListRoots>("ListRootsRequest", sampling::list_roots_params),
        result::<ListRoots, ListRootsResult>("ListRootsResult", sampling::list_roots_result),
        notification::<RootsListChanged>("RootsListChangedNotification", lifecycle::notification_params),
        request::<Elicit>("ElicitRequest", elicitation::elicit_params),
        result::<Elicit, ElicitResult>("ElicitResult", elicitation::elicit_result),
        notification::<ElicitationComplete>(
            "ElicitationCompleteNotification",
            elicitation::elicitation_complete_params,
        ),
        // Tasks (2025-11-25).
        request::<GetTask>("GetTaskRequest", tasks::get_task_params),
        result::<GetTask, GetTaskResult>("GetTaskResult", tasks::get_task_result),
        request::<GetTaskPayload>("GetTaskPayloadRequest", tasks::get_task_params),
        result::<GetTaskPayload, GetTaskPayloadResult>("GetTaskPayloadResult", tasks::get_task_payload_result),
        request::<CancelTask>("CancelTaskRequest", tasks::get_task_params),
        result::<CancelTask, CancelTaskResult>("CancelTaskResult", tasks::get_task_result),
        request::<ListTasks>("ListTasksRequest", misc::paginated_params),
        result::<ListTasks, ListTasksResult>("ListTasksResult", tasks::list_tasks_result),
        notification::<TaskStatus>("TaskStatusNotification", tasks::task_status_params),
    ]
}

/// Definitions outside every union that our types still produce, checked where the schema
/// defines them: a task-augmented request is answered with a `CreateTaskResult` (2025-11-25),
/// which the schema leaves out of `ServerResult` and `ClientResult`.
pub fn extra_definitions() -> Vec<Entry> {
    vec![result::<CallTool, CreateTaskResult>("CreateTaskResult", tasks::create_task_result)]
}
