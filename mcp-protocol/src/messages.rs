//! Typed unions of every message per direction, as the schemas name them: [`ClientRequest`],
//! [`ServerRequest`], [`ClientNotification`], [`ServerNotification`], and the results
//! [`ServerResult`] (answers to client requests) and [`ClientResult`] (answers to server
//! requests). A method outside the set decodes into an `Other` variant that keeps it raw.
//!
//! Params are `Option`: a request sent without `params` stays without them when re-encoded.

use serde_json::Value;

use crate::jsonrpc::{Notification, RawJson, Request, RequestId, to_raw};
use crate::method::{NotificationMethod, RequestMethod};
use crate::types::{
    cancellation::Cancelled,
    completion::Complete,
    discover::Discover,
    elicitation::{Elicit, ElicitationComplete},
    lifecycle::{Initialize, Initialized, Ping},
    logging::{LoggingMessage, SetLevel},
    progress::Progress,
    prompts::{GetPrompt, ListPrompts, PromptListChanged},
    resources::{
        ListResourceTemplates, ListResources, ReadResource, ResourceListChanged, ResourceUpdated, Subscribe,
        Unsubscribe,
    },
    roots::{ListRoots, RootsListChanged},
    sampling::CreateMessage,
    subscriptions::{SubscriptionsAcknowledged, SubscriptionsListen},
    tasks::{CancelTask, GetTask, GetTaskPayload, ListTasks, TaskStatus},
    tools::{CallTool, ListTools, ToolListChanged},
};

fn decode_params<P: serde::de::DeserializeOwned>(params: Option<&RawJson>) -> Result<Option<P>, serde_json::Error> {
    params.map(|p| serde_json::from_str(p.get())).transpose()
}

fn decode_other(params: Option<&RawJson>) -> Result<Option<Value>, serde_json::Error> {
    params.map(|p| serde_json::from_str(p.get())).transpose()
}

macro_rules! request_union {
    ($(#[$doc:meta])* $name:ident => $(#[$rdoc:meta])* $result:ident { $( $variant:ident($marker:ty), )* }) => {
        $(#[$doc])*
        // Params differ widely in size (initialize carries capabilities); a union is decoded once
        // and handed on, so boxing each variant would cost more than it saves.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $(
                #[doc = concat!("The `", stringify!($variant), "` request.")]
                $variant(Option<<$marker as RequestMethod>::Params>),
            )*
            /// A method outside this union, kept raw.
            Other {
                /// The method name.
                method: String,
                /// The params as they arrived.
                params: Option<Value>,
            },
        }

        impl $name {
            /// The wire method name.
            pub fn method(&self) -> &str {
                match self {
                    $( $name::$variant(_) => <$marker as RequestMethod>::METHOD, )*
                    $name::Other { method, .. } => method,
                }
            }

            /// Type the params of a request by its method.
            pub fn decode(method: &str, params: Option<&RawJson>) -> Result<Self, serde_json::Error> {
                $( if method == <$marker as RequestMethod>::METHOD {
                    return Ok($name::$variant(decode_params(params)?));
                } )*
                Ok($name::Other { method: method.to_owned(), params: decode_other(params)? })
            }

            /// Type an envelope request.
            pub fn from_request(request: &Request) -> Result<Self, serde_json::Error> {
                Self::decode(&request.method, request.params.as_ref())
            }

            /// The params as raw JSON (`None` when the request has none).
            pub fn params_to_raw(&self) -> Result<Option<RawJson>, serde_json::Error> {
                match self {
                    $( $name::$variant(p) => p.as_ref().map(to_raw).transpose(), )*
                    $name::Other { params, .. } => params.as_ref().map(to_raw).transpose(),
                }
            }

            /// An envelope request with this method and params.
            pub fn into_request(self, id: RequestId) -> Result<Request, serde_json::Error> {
                let params = self.params_to_raw()?;
                Ok(Request { id, method: self.method().to_owned(), params })
            }
        }

        $(#[$rdoc])*
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum $result {
            $(
                #[doc = concat!("The result of `", stringify!($variant), "`.")]
                $variant(<$marker as RequestMethod>::Result),
            )*
            /// The result of a method outside the union, kept raw.
            Other(Value),
        }

        impl $result {
            /// Type a raw result by the method of the request it answers.
            pub fn decode(method: &str, raw: &RawJson) -> Result<Self, serde_json::Error> {
                $( if method == <$marker as RequestMethod>::METHOD {
                    return <$marker as RequestMethod>::decode_result(raw).map($result::$variant);
                } )*
                serde_json::from_str(raw.get()).map($result::Other)
            }

            /// The result as raw JSON.
            pub fn to_raw(&self) -> Result<RawJson, serde_json::Error> {
                match self {
                    $( $result::$variant(r) => to_raw(r), )*
                    $result::Other(v) => to_raw(v),
                }
            }
        }
    };
}

macro_rules! notification_union {
    ($(#[$doc:meta])* $name:ident { $( $variant:ident($marker:ty), )* }) => {
        $(#[$doc])*
        // Params differ widely in size (initialize carries capabilities); a union is decoded once
        // and handed on, so boxing each variant would cost more than it saves.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $(
                #[doc = concat!("The `", stringify!($variant), "` notification.")]
                $variant(Option<<$marker as NotificationMethod>::Params>),
            )*
            /// A method outside this union, kept raw.
            Other {
                /// The method name.
                method: String,
                /// The params as they arrived.
                params: Option<Value>,
            },
        }

        impl $name {
            /// The wire method name.
            pub fn method(&self) -> &str {
                match self {
                    $( $name::$variant(_) => <$marker as NotificationMethod>::METHOD, )*
                    $name::Other { method, .. } => method,
                }
            }

            /// Type the params of a notification by its method.
            pub fn decode(method: &str, params: Option<&RawJson>) -> Result<Self, serde_json::Error> {
                $( if method == <$marker as NotificationMethod>::METHOD {
                    return Ok($name::$variant(decode_params(params)?));
                } )*
                Ok($name::Other { method: method.to_owned(), params: decode_other(params)? })
            }

            /// Type an envelope notification.
            pub fn from_notification(n: &Notification) -> Result<Self, serde_json::Error> {
                Self::decode(&n.method, n.params.as_ref())
            }

            /// An envelope notification with this method and params.
            pub fn into_notification(self) -> Result<Notification, serde_json::Error> {
                let params = match &self {
                    $( $name::$variant(p) => p.as_ref().map(to_raw).transpose()?, )*
                    $name::Other { params, .. } => params.as_ref().map(to_raw).transpose()?,
                };
                Ok(Notification { method: self.method().to_owned(), params })
            }
        }
    };
}

request_union! {
    /// Every request a client sends, in any revision.
    ClientRequest =>
    /// Every result a server sends, typed by the client request it answers.
    ServerResult {
        Initialize(Initialize),
        Ping(Ping),
        Discover(Discover),
        ListResources(ListResources),
        ListResourceTemplates(ListResourceTemplates),
        ReadResource(ReadResource),
        Subscribe(Subscribe),
        Unsubscribe(Unsubscribe),
        SubscriptionsListen(SubscriptionsListen),
        ListPrompts(ListPrompts),
        GetPrompt(GetPrompt),
        ListTools(ListTools),
        CallTool(CallTool),
        GetTask(GetTask),
        GetTaskPayload(GetTaskPayload),
        CancelTask(CancelTask),
        ListTasks(ListTasks),
        SetLevel(SetLevel),
        Complete(Complete),
    }
}

request_union! {
    /// Every request a server sends (legacy era), in any revision.
    ServerRequest =>
    /// Every result a client sends, typed by the server request it answers.
    ClientResult {
        Ping(Ping),
        CreateMessage(CreateMessage),
        ListRoots(ListRoots),
        Elicit(Elicit),
        GetTask(GetTask),
        GetTaskPayload(GetTaskPayload),
        CancelTask(CancelTask),
        ListTasks(ListTasks),
    }
}

notification_union! {
    /// Every notification a client sends.
    ClientNotification {
        Cancelled(Cancelled),
        Initialized(Initialized),
        Progress(Progress),
        TaskStatus(TaskStatus),
        RootsListChanged(RootsListChanged),
    }
}

notification_union! {
    /// Every notification a server sends.
    ServerNotification {
        Cancelled(Cancelled),
        Progress(Progress),
        ResourceListChanged(ResourceListChanged),
        ResourceUpdated(ResourceUpdated),
        PromptListChanged(PromptListChanged),
        ToolListChanged(ToolListChanged),
        TaskStatus(TaskStatus),
        LoggingMessage(LoggingMessage),
        ElicitationComplete(ElicitationComplete),
        SubscriptionsAcknowledged(SubscriptionsAcknowledged),
    }
}
