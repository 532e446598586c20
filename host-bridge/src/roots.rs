//! Roots: the `file://` directories the host lets servers work in, changeable at run time.
//!
//! [`Roots`] answers `roots/list` (it implements the manager's `RootsProvider`). Every URI is
//! checked when it is set: anything but an absolute `file://` URI is refused then, never sent.
//! A change bumps a version that [`Roots::subscribe`] watches. A connection whose callbacks
//! carry these roots watches it too (`RootsProvider::changes`) and sends
//! `notifications/roots/list_changed` after each change while it is open in the legacy era
//! (modern-era servers ask for roots with each request, so they need no notification).
//! [`RootsNotifier`] does the same for a connection whose callbacks hold other roots.

use std::path::Path;
use std::sync::{Arc, RwLock, Weak};

use futures::future::BoxFuture;
use mcp_manager::McpConnection;
use mcp_manager::callbacks::RootsProvider;
use mcp_protocol::types::common::NotificationParams;
use mcp_protocol::types::roots::{Root, RootsListChanged};
use mcp_protocol::{Era, ErrorObject};
use tokio::sync::watch;

/// Why a root was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RootsError {
    /// The URI does not parse.
    #[error("root {uri:?} is not a valid URI: {reason}")]
    InvalidUri {
        /// The URI as given.
        uri: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The URI is not a `file://` URI.
    #[error("root {uri:?} has the scheme {scheme:?}; roots must be file:// URIs")]
    NotFile {
        /// The URI as given.
        uri: String,
        /// Its scheme.
        scheme: String,
    },
    /// A path that is not absolute cannot be a root.
    #[error("root path {path:?} is not absolute")]
    RelativePath {
        /// The path as given.
        path: String,
    },
}

/// Check one root: an absolute `file://` URI, kept as given.
fn check(root: &Root) -> Result<(), RootsError> {
    let url = reqwest::Url::parse(&root.uri)
        .map_err(|e| RootsError::InvalidUri { uri: root.uri.clone(), reason: e.to_string() })?;
    if url.scheme() != "file" {
        return Err(RootsError::NotFile { uri: root.uri.clone(), scheme: url.scheme().to_owned() });
    }
    if url.query().is_some() || url.fragment().is_some() {
        let reason = "a root has no query or fragment".to_owned();
        return Err(RootsError::InvalidUri { uri: root.uri.clone(), reason });
    }
    Ok(())
}

/// A root for a local directory: its `file://` URI (percent-encoded as needed), named `name`.
pub fn file_root(path: impl AsRef<Path>, name: Option<String>) -> Result<Root, RootsError> {
    let path = path.as_ref();
    let url = reqwest::Url::from_directory_path(path)
        .map_err(|()| RootsError::RelativePath { path: path.display().to_string() })?;
    // `from_directory_path` ends the URI with a slash; roots are written without one.
    let uri = url.as_str().strip_suffix('/').filter(|u| *u != "file://").unwrap_or(url.as_str());
    Ok(Root::new(uri, name))
}

/// The host's roots. Cheap to clone; clones share the list.
#[derive(Clone)]
pub struct Roots {
    inner: Arc<Inner>,
}

struct Inner {
    list: RwLock<Vec<Root>>,
    version: watch::Sender<u64>,
}

impl std::fmt::Debug for Roots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Roots").field("roots", &self.list()).finish()
    }
}

impl Roots {
    /// Roots with these entries, each checked. Duplicate URIs are kept once (the first).
    pub fn new(roots: impl IntoIterator<Item = Root>) -> Result<Self, RootsError> {
        let list = Roots::checked(roots)?;
        Ok(Roots { inner: Arc::new(Inner { list: RwLock::new(list), version: watch::Sender::new(0) }) })
    }

    fn checked(roots: impl IntoIterator<Item = Root>) -> Result<Vec<Root>, RootsError> {
        let mut list: Vec<Root> = Vec::new();
        for root in roots {
            check(&root)?;
            if !list.iter().any(|r| r.uri == root.uri) {
                list.push(root);
            }
        }
        Ok(list)
    }

    /// The current roots.
    pub fn list(&self) -> Vec<Root> {
        self.inner.list.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replace every root. Nothing changes when one is refused. Subscribers hear of it when the
    /// list differs.
    pub fn set(&self, roots: impl IntoIterator<Item = Root>) -> Result<(), RootsError> {
        let new = Roots::checked(roots)?;
        self.update(|list| {
            let changed = *list != new;
            *list = new;
            changed
        });
        Ok(())
    }

    /// Add a root (or replace the one with the same URI).
    pub fn add(&self, root: Root) -> Result<(), RootsError> {
        check(&root)?;
        self.update(|list| match list.iter_mut().find(|r| r.uri == root.uri) {
            Some(existing) if *existing == root => false,
            Some(existing) => {
                *existing = root;
                true
            }
            None => {
                list.push(root);
                true
            }
        });
        Ok(())
    }

    /// Remove the root with this URI. Returns whether there was one.
    pub fn remove(&self, uri: &str) -> bool {
        self.update(|list| {
            let before = list.len();
            list.retain(|r| r.uri != uri);
            list.len() != before
        })
    }

    fn update(&self, change: impl FnOnce(&mut Vec<Root>) -> bool) -> bool {
        let changed = change(&mut self.inner.list.write().unwrap_or_else(|p| p.into_inner()));
        if changed {
            self.inner.version.send_modify(|v| *v += 1);
        }
        changed
    }

    /// A receiver whose value (a version number) changes with every change of the list.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    /// Send `notifications/roots/list_changed` on `connection` after every change, while both
    /// live (see [`RootsNotifier`]).
    ///
    /// Only for a connection whose callbacks do not carry these roots: one that does (built from
    /// [`HostBridge::callbacks`](crate::HostBridge::callbacks), say) already announces every
    /// change itself, and a notifier would announce it twice.
    pub fn notify_changes(&self, connection: &Arc<McpConnection>) -> RootsNotifier {
        RootsNotifier::spawn(self.subscribe(), Arc::downgrade(connection))
    }
}

impl RootsProvider for Roots {
    fn list_roots(&self, _server: &str) -> BoxFuture<'static, Result<Vec<Root>, ErrorObject>> {
        let roots = self.list();
        Box::pin(async move { Ok(roots) })
    }

    /// Every change of the list: a connection given these roots in its callbacks announces each
    /// change to its server itself, in the legacy era.
    fn changes(&self) -> Option<watch::Receiver<u64>> {
        Some(self.subscribe())
    }
}

/// A task that tells one connection about root changes: after each change, when the
/// connection is open in the legacy era, it sends `notifications/roots/list_changed`. It holds
/// the connection weakly, ends when the connection or the roots are gone, and is stopped when
/// dropped.
#[derive(Debug)]
pub struct RootsNotifier {
    task: tokio::task::JoinHandle<()>,
}

impl RootsNotifier {
    fn spawn(mut changes: watch::Receiver<u64>, connection: Weak<McpConnection>) -> Self {
        changes.mark_unchanged();
        let task = tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                let Some(connection) = connection.upgrade() else { return };
                notify(&connection).await;
            }
        });
        RootsNotifier { task }
    }
}

impl Drop for RootsNotifier {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn notify(connection: &McpConnection) {
    let name = connection.name();
    let Some(info) = connection.server_info().await else {
        tracing::debug!(server = name, "roots changed while not connected; the next connection lists them anew");
        return;
    };
    if info.protocol_version.era() != Some(Era::Legacy) {
        return;
    }
    let sent = match connection.session().await {
        Ok(session) => {
            session.notify::<RootsListChanged>(Some(&NotificationParams::default())).await.map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    match sent {
        Ok(()) => tracing::debug!(server = name, "sent notifications/roots/list_changed"),
        Err(error) => tracing::warn!(server = name, %error, "could not send notifications/roots/list_changed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_file_uris_are_roots() {
        let ok = Roots::new([Root::new("file:///home/ada/project", Some("project".into()))]).unwrap();
        assert_eq!(ok.list()[0].name.as_deref(), Some("project"));
        for (uri, needle) in [
            ("https://example.com/repo", "\"https\"; roots must be file:// URIs"),
            ("/home/ada", "not a valid URI"),
            ("file:///a?x=1", "no query or fragment"),
        ] {
            let err = Roots::new([Root::new(uri, None)]).unwrap_err();
            assert!(err.to_string().contains(needle), "{uri}: {err}");
        }
    }

    #[test]
    fn file_roots_from_paths() {
        let root = file_root("/srv/data dir", Some("data".into())).unwrap();
        assert_eq!(root.uri, "file:///srv/data%20dir");
        assert_eq!(file_root("/", None).unwrap().uri, "file:///");
        assert_eq!(
            file_root("relative/dir", None).unwrap_err(),
            RootsError::RelativePath { path: "relative/dir".into() }
        );
    }

    #[tokio::test]
    async fn changes_are_announced_once_each_and_a_refused_set_changes_nothing() {
        let roots = Roots::new([Root::new("file:///a", None), Root::new("file:///a", Some("dup".into()))]).unwrap();
        assert_eq!(roots.list().len(), 1, "duplicates kept once");
        let mut rx = roots.subscribe();
        let version = *rx.borrow_and_update();
        roots.add(Root::new("file:///b", None)).unwrap();
        assert!(rx.has_changed().unwrap());
        assert_eq!(*rx.borrow_and_update(), version + 1);
        roots.add(Root::new("file:///b", None)).unwrap();
        assert!(!rx.has_changed().unwrap(), "the same root again is no change");
        assert!(roots.set([Root::new("file:///c", None), Root::new("ftp://x", None)]).is_err());
        assert!(!rx.has_changed().unwrap());
        assert_eq!(roots.list().len(), 2);
        assert!(roots.remove("file:///a"));
        assert!(!roots.remove("file:///a"));
        assert!(rx.has_changed().unwrap(), "a removal is a change");
        rx.borrow_and_update();
        roots.set([Root::new("file:///b", None)]).unwrap();
        assert!(!rx.has_changed().unwrap(), "setting the same list is no change");
        roots.set([Root::new("file:///z", Some("z".into()))]).unwrap();
        assert_eq!(*rx.borrow_and_update(), version + 3);
        let listed = tokio::time::timeout(std::time::Duration::from_secs(5), roots.list_roots("srv")).await.unwrap();
        assert_eq!(listed.unwrap(), [Root::new("file:///z", Some("z".into()))]);
    }
}
