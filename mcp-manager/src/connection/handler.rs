//! The bridge from the session engine's [`InboundHandler`] to the host's callbacks.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::messages::{ServerNotification, ServerRequest};
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::roots::ListRootsResult;
use mcp_protocol::{ErrorCode, ErrorObject, RawJson};
use serde::Serialize;

use super::freshness::Freshness;
use crate::callbacks::HostCallbacks;
use crate::session::InboundHandler;

pub(crate) struct CallbackHandler {
    pub(crate) server: Arc<str>,
    pub(crate) callbacks: HostCallbacks,
    /// The connection's own interest in notifications (list changes, subscriptions).
    watcher: Option<Arc<Freshness>>,
}

fn encode<T: Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    to_raw(value).map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("could not encode the result: {e}")))
}

fn not_found(method: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: {method}"))
}

fn missing_params(method: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("{method} needs params"))
}

impl CallbackHandler {
    pub(crate) fn new(server: &str, callbacks: HostCallbacks) -> Self {
        CallbackHandler { server: Arc::from(server), callbacks, watcher: None }
    }

    /// Let the connection see every notification too, before the host's sink does.
    pub(crate) fn watching(mut self, watcher: Arc<Freshness>) -> Self {
        self.watcher = Some(watcher);
        self
    }
}

impl InboundHandler for CallbackHandler {
    fn handle_request(&self, request: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        let server = self.server.clone();
        let method = request.method().to_owned();
        match request {
            ServerRequest::CreateMessage(params) => {
                let (Some(handler), Some(params)) = (self.callbacks.sampling.clone(), params) else {
                    return Box::pin(async move { Err(if_none_found(&method)) });
                };
                Box::pin(async move {
                    let result = handler.create_message(&server, params).await?;
                    encode(&Outcome::Complete(result))
                })
            }
            ServerRequest::Elicit(params) => {
                let Some(handler) = self.callbacks.elicitation.clone() else {
                    return Box::pin(async move { Err(not_found(&method)) });
                };
                let Some(params) = params else {
                    return Box::pin(async move { Err(missing_params(&method)) });
                };
                Box::pin(async move { encode(&handler.elicit(&server, params).await?) })
            }
            ServerRequest::ListRoots(_) => {
                let Some(provider) = self.callbacks.roots.clone() else {
                    return Box::pin(async move { Err(not_found(&method)) });
                };
                Box::pin(async move {
                    let roots = provider.list_roots(&server).await?;
                    encode(&ListRootsResult { roots, ..Default::default() })
                })
            }
            _ => Box::pin(async move { Err(not_found(&method)) }),
        }
    }

    fn handle_notification(&self, notification: ServerNotification) -> BoxFuture<'static, ()> {
        if let Some(watcher) = &self.watcher {
            watcher.on_notification(&notification);
        }
        if let Some(sink) = &self.callbacks.notifications {
            sink.on_notification(&self.server, &notification);
        } else if let ServerNotification::LoggingMessage(Some(log)) = &notification {
            tracing::info!(server = %self.server, level = ?log.level, logger = ?log.logger, data = %log.data, "server log");
        }
        Box::pin(async {})
    }
}

fn if_none_found(method: &str) -> ErrorObject {
    not_found(method)
}
