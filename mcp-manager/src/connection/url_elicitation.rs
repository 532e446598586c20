//! URL elicitation required (error -32042): the server refuses a request until the user has
//! opened one or more URLs. The connection asks the host's elicitation handler about each URL,
//! waits until the server says each one is done (legacy era: `notifications/elicitation/complete`
//! with its `elicitationId`), and then the request is retried (see [`super::mrtr`]).
//!
//! The waiters for completions live on the connection: the session's notification handler feeds
//! them ([`CompletionWaiters::complete`]) before the host's own sink sees the notification. A
//! waiter is registered before the host is asked, so a completion that arrives while the
//! handler is still returning is not lost; it is removed when the call ends, however it ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_protocol::ErrorObject;
use mcp_protocol::types::elicitation::{ElicitAction, ElicitParams, ElicitUrlParams, UrlElicitationRequiredData};
use tokio::sync::oneshot;

use super::deadline::CallDeadline;
use super::{ConnectionError, McpConnection};
use crate::session::SessionError;

/// Most URL elicitations taken from one -32042 error; an error with more is refused
/// ([`ConnectionError::TooManyUrlElicitations`]) without asking the user anything.
pub const MAX_URL_ELICITATIONS_PER_ERROR: usize = 8;

/// How many times one request is retried after -32042 errors; a server that still answers
/// -32042 after that fails the call ([`ConnectionError::UrlElicitationStillRequired`]).
pub const MAX_URL_ELICITATION_RETRIES: usize = 3;

/// Most completions waited for at once on one connection, across its calls.
pub const MAX_PENDING_COMPLETIONS: usize = 256;

/// The calls of one connection waiting for `notifications/elicitation/complete`, by
/// `elicitationId`.
#[derive(Debug, Default)]
pub(crate) struct CompletionWaiters {
    inner: Mutex<Waiters>,
}

#[derive(Debug, Default)]
struct Waiters {
    next: u64,
    count: usize,
    by_id: HashMap<String, Vec<(u64, oneshot::Sender<()>)>>,
}

impl CompletionWaiters {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiters> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait for the completion of `id`; `None` when [`MAX_PENDING_COMPLETIONS`] are waited for
    /// already.
    pub(crate) fn register(self: &Arc<Self>, id: &str) -> Option<Completion> {
        let mut w = self.lock();
        if w.count >= MAX_PENDING_COMPLETIONS {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        let serial = w.next;
        w.next += 1;
        w.count += 1;
        w.by_id.entry(id.to_owned()).or_default().push((serial, tx));
        Some(Completion { waiters: self.clone(), id: id.to_owned(), serial, rx })
    }

    /// The server completed `id`: wake whoever waits for it. Whether anyone did.
    pub(crate) fn complete(&self, id: &str) -> bool {
        let mut w = self.lock();
        let Some(waiting) = w.by_id.remove(id) else { return false };
        w.count -= waiting.len();
        drop(w);
        for (_, tx) in waiting {
            let _ = tx.send(());
        }
        true
    }

    fn forget(&self, id: &str, serial: u64) {
        let mut w = self.lock();
        let Some(waiting) = w.by_id.get_mut(id) else { return };
        let before = waiting.len();
        waiting.retain(|(s, _)| *s != serial);
        let removed = before - waiting.len();
        if waiting.is_empty() {
            w.by_id.remove(id);
        }
        w.count -= removed;
    }
}

/// One registered wait; dropping it unregisters it.
pub(crate) struct Completion {
    waiters: Arc<CompletionWaiters>,
    id: String,
    serial: u64,
    rx: oneshot::Receiver<()>,
}

impl Drop for Completion {
    fn drop(&mut self) {
        self.waiters.forget(&self.id, self.serial);
    }
}

/// At most this many characters of a server's URL or message in an error.
const MAX_QUOTED: usize = 256;

fn quoted(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl McpConnection {
    /// Have the user complete the URL elicitations of `error` (a -32042 answer to `method`),
    /// within `deadline`. `Ok` means the request may be retried.
    ///
    /// Without an elicitation handler that supports URL mode, or when the error's data holds no
    /// URL elicitation, the call fails with `error` itself. Each URL is put to the handler in
    /// turn; any answer but `accept` (or the handler's error) fails the call with that reason.
    /// In the legacy era, the call then waits for `notifications/elicitation/complete` of every
    /// elicitation that has an `elicitationId` (registered before the handler is asked); one
    /// without an id, and every one in the modern era (whose revision has neither ids nor the
    /// notification), counts as done once the handler accepted it.
    pub(super) async fn complete_url_elicitations(
        &self,
        error: SessionError,
        method: &'static str,
        modern: bool,
        deadline: &CallDeadline,
    ) -> Result<(), ConnectionError> {
        let server = self.name().to_owned();
        let handler = match &self.options.callbacks.elicitation {
            Some(h) if h.supports_url() => h.clone(),
            _ => {
                tracing::debug!(server, method, "URL elicitation required, but the host has no URL elicitation");
                return Err(error.into());
            }
        };
        let data = match error.rpc_error().and_then(UrlElicitationRequiredData::from_error) {
            Some(d) if !d.elicitations.is_empty() => d,
            _ => {
                tracing::warn!(server, method, "URL elicitation required, but the error data names no URL elicitation");
                return Err(error.into());
            }
        };
        let count = data.elicitations.len();
        if count > MAX_URL_ELICITATIONS_PER_ERROR {
            return Err(ConnectionError::TooManyUrlElicitations {
                server,
                method,
                count,
                max: MAX_URL_ELICITATIONS_PER_ERROR,
            });
        }
        let failed = |e: &ElicitUrlParams, reason: String| ConnectionError::UrlElicitationFailed {
            server: server.clone(),
            method,
            url: quoted(&e.url),
            reason,
        };
        // Registered before anyone is asked: the completion may come before the answer.
        let mut completions = Vec::new();
        if !modern {
            for e in &data.elicitations {
                let Some(id) = &e.elicitation_id else { continue };
                match self.completions.register(id) {
                    Some(c) => completions.push(c),
                    None => {
                        let reason = format!("{MAX_PENDING_COMPLETIONS} URL elicitations are pending already");
                        return Err(failed(e, reason));
                    }
                }
            }
        }
        for e in &data.elicitations {
            let asked = handler.elicit(&server, ElicitParams::Url(e.clone()));
            let answer = tokio::time::timeout_at(deadline.at(), asked)
                .await
                .map_err(|_| deadline.timeout_error(&server, method))?;
            match answer {
                Ok(r) if r.action == ElicitAction::Accept => {}
                Ok(r) => {
                    let reason = match &r.action {
                        ElicitAction::Decline => "the user declined it".to_owned(),
                        ElicitAction::Cancel => "the user dismissed it".to_owned(),
                        other => format!("the host answered {:?}", other.as_str()),
                    };
                    return Err(failed(e, reason));
                }
                Err(refused) => return Err(failed(e, format!("the host refused it: {}", describe(&refused)))),
            }
        }
        if completions.is_empty() {
            return Ok(());
        }
        let all = futures::future::join_all(completions.iter_mut().map(|c| &mut c.rx));
        match tokio::time::timeout_at(deadline.at(), all).await {
            Ok(done) if done.iter().all(Result::is_ok) => Ok(()),
            Ok(_) => Err(ConnectionError::NotConnected(server)),
            Err(_) => {
                let pending: Vec<String> =
                    completions.iter_mut().filter_map(|c| c.rx.try_recv().is_err().then(|| quoted(&c.id))).collect();
                Err(ConnectionError::UrlElicitationTimeout {
                    server,
                    method,
                    elicitation_ids: pending,
                    after: deadline.elapsed(),
                })
            }
        }
    }
}

/// A duration as errors show it: seconds with a tenth from one second on, else milliseconds.
pub(super) fn fmt_after(d: std::time::Duration) -> String {
    if d.as_secs() >= 1 { format!("{:.1} s", d.as_secs_f64()) } else { format!("{} ms", d.as_millis()) }
}

fn describe(error: &ErrorObject) -> String {
    quoted(&error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_are_woken_and_forgotten() {
        let waiters = Arc::new(CompletionWaiters::default());
        let mut a = waiters.register("x").unwrap();
        let b = waiters.register("x").unwrap();
        drop(b);
        assert_eq!(waiters.lock().count, 1, "a dropped wait is forgotten");
        assert!(!waiters.complete("y"));
        assert!(waiters.complete("x"));
        assert!(a.rx.try_recv().is_ok());
        assert!(!waiters.complete("x"), "a completion wakes once");
        drop(a);
        assert_eq!(waiters.lock().count, 0);
        let held: Vec<Completion> =
            (0..MAX_PENDING_COMPLETIONS).map(|i| waiters.register(&i.to_string()).unwrap()).collect();
        assert!(waiters.register("one more").is_none(), "bounded");
        drop(held);
        assert!(waiters.lock().by_id.is_empty());
    }
}
