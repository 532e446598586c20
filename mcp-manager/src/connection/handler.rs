//! The bridge from the session engine's [`InboundHandler`] to the host's callbacks, and the task
//! that tells a legacy-era server when the host's roots change.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::messages::{ServerNotification, ServerRequest};
use mcp_protocol::types::common::NotificationParams;
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::roots::{ListRootsResult, RootsListChanged};
use mcp_protocol::{ErrorCode, ErrorObject, RawJson};
use serde::Serialize;
use tokio::sync::watch;

use super::freshness::Freshness;
use super::url_elicitation::CompletionWaiters;
use crate::callbacks::HostCallbacks;
use crate::session::{InboundHandler, Session};

pub(crate) struct CallbackHandler {
    pub(crate) server: Arc<str>,
    pub(crate) callbacks: HostCallbacks,
    /// The connection's own interest in notifications (list changes, subscriptions).
    watcher: Option<Arc<Freshness>>,
    /// The connection's calls waiting for URL elicitations to complete.
    completions: Option<Arc<CompletionWaiters>>,
    /// The tasks the connection's calls follow.
    tasks: Option<Arc<super::task_watch::TaskWatchers>>,
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
        CallbackHandler { server: Arc::from(server), callbacks, watcher: None, completions: None, tasks: None }
    }

    /// Let the connection see every notification too, before the host's sink does.
    pub(crate) fn watching(mut self, watcher: Arc<Freshness>) -> Self {
        self.watcher = Some(watcher);
        self
    }

    /// Hand task status pushes and task progress to the connection's task calls too.
    pub(crate) fn following_tasks(mut self, tasks: Arc<super::task_watch::TaskWatchers>) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// Hand `notifications/elicitation/complete` to the connection's waiting calls too, before
    /// the host's sink sees it.
    pub(crate) fn completing(mut self, completions: Arc<CompletionWaiters>) -> Self {
        self.completions = Some(completions);
        self
    }
}

impl InboundHandler for CallbackHandler {
    fn handle_request(&self, request: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        let server = self.server.clone();
        let method = request.method().to_owned();
        match request {
            ServerRequest::CreateMessage(params) => {
                // No handler: the method is not offered (-32601); no params: invalid (-32602).
                let Some(handler) = self.callbacks.sampling.clone() else {
                    return Box::pin(async move { Err(not_found(&method)) });
                };
                let Some(params) = params else {
                    return Box::pin(async move { Err(missing_params(&method)) });
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
        if let Some(tasks) = &self.tasks {
            tasks.on_notification(&notification);
        }
        if let (Some(completions), ServerNotification::ElicitationComplete(Some(done))) =
            (&self.completions, &notification)
            && completions.complete(&done.elicitation_id)
        {
            tracing::debug!(server = %self.server, elicitation_id = %done.elicitation_id, "a URL elicitation completed");
        }
        if let Some(sink) = &self.callbacks.notifications {
            sink.on_notification(&self.server, &notification);
        } else if let ServerNotification::LoggingMessage(Some(log)) = &notification {
            tracing::info!(server = %self.server, level = ?log.level, logger = ?log.logger, data = %log.data, "server log");
        }
        Box::pin(async {})
    }
}

/// The host's announcements of root changes, taken before the handshake so that a change made
/// while it runs is announced once the session is open.
pub(crate) fn root_changes(callbacks: &HostCallbacks) -> Option<watch::Receiver<u64>> {
    let mut changes = callbacks.roots.as_ref()?.changes()?;
    changes.mark_unchanged();
    Some(changes)
}

/// Send `notifications/roots/list_changed` on `session` after each change of the host's roots,
/// until the roots provider is gone or the session ends. The caller ties the task to the
/// session's life (it aborts the task when the session is closed).
pub(crate) fn announce_root_changes(
    server: Arc<str>,
    session: Session,
    mut changes: watch::Receiver<u64>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let closed = session.closed();
        tokio::pin!(closed);
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                _ = &mut closed => return,
            }
            send_roots_changed(&server, &session).await;
        }
    })
}

/// Send `notifications/roots/list_changed` to `server` on `session`; whether it was sent.
pub(crate) async fn send_roots_changed(server: &str, session: &Session) -> bool {
    match session.notify::<RootsListChanged>(Some(&NotificationParams::default())).await {
        Ok(()) => {
            tracing::debug!(server, "sent notifications/roots/list_changed");
            true
        }
        Err(error) => {
            tracing::warn!(server, %error, "could not send notifications/roots/list_changed");
            false
        }
    }
}
