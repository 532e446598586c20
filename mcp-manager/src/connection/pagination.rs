//! Following `nextCursor` to the end, with a loop guard and caps on pages, items, bytes and
//! cursor length.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;

use futures::future::maybe_done;

use mcp_protocol::RequestMethod;
use mcp_protocol::types::common::{Paginated, PaginatedParams};

use super::ConnectionError;
use crate::session::{RequestOptions, Session};

/// Default most items of one list (`ConnectionOptions::max_list_items`).
pub const DEFAULT_MAX_LIST_ITEMS: usize = 50_000;

/// Default most bytes of one list's results (`ConnectionOptions::max_list_bytes`).
pub const DEFAULT_MAX_LIST_BYTES: usize = 64 * 1024 * 1024;

/// Longest cursor followed, in bytes.
pub const MAX_CURSOR_BYTES: usize = 8 * 1024;

/// Why a listing stopped early.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaginationError {
    /// The server sent a cursor it had sent before: following it would loop forever.
    #[error("server {server:?} repeated the {what} cursor {cursor:?}: pagination would loop")]
    RepeatedCursor {
        /// The server's name.
        server: String,
        /// Which list.
        what: &'static str,
        /// The repeated cursor.
        cursor: String,
    },
    /// More pages than allowed.
    #[error("server {server:?} returned more than {max} pages of {what}; refusing to continue")]
    TooManyPages {
        /// The server's name.
        server: String,
        /// Which list.
        what: &'static str,
        /// The page cap.
        max: usize,
    },
    /// More items than allowed, across the pages of one list.
    #[error("server {server:?} listed more than {max} {what}; refusing to continue")]
    TooManyItems {
        /// The server's name.
        server: String,
        /// Which list.
        what: &'static str,
        /// The item cap.
        max: usize,
    },
    /// The pages of one list were larger in total than allowed.
    #[error("server {server:?} sent more than {max} bytes of {what} results; refusing to continue")]
    TooLarge {
        /// The server's name.
        server: String,
        /// Which list.
        what: &'static str,
        /// The byte cap.
        max: usize,
    },
    /// A cursor longer than [`MAX_CURSOR_BYTES`].
    #[error("server {server:?} sent a {what} cursor of {len} bytes (at most {max} are followed)")]
    CursorTooLong {
        /// The server's name.
        server: String,
        /// Which list.
        what: &'static str,
        /// The cursor's length in bytes.
        len: usize,
        /// The longest cursor followed.
        max: usize,
    },
}

/// Every page of the `*/list` request `M`, in order, each handed to `each` as it arrives: the one
/// loop behind every listing (tools, prompts, resources, templates, skills). Stops after the last
/// page, or with an error at the first page past `guard`'s bounds.
///
/// The next page is asked for before this one is decoded: its cursor is read from the result's
/// text first ([`mcp_protocol::scan::next_cursor`]), so that the server prepares the next page
/// while the client decodes this one. The decoded page has the final word: when its cursor is
/// not the one read early, the early request is dropped (which cancels it) and the page's own
/// cursor is followed.
pub(crate) async fn for_each_page<M>(
    session: &Session,
    mut guard: CursorGuard,
    mut each: impl FnMut(M::Result),
) -> Result<(), ConnectionError>
where
    M: RequestMethod<Params = PaginatedParams>,
    M::Result: Paginated,
{
    let fetch = |cursor: Option<String>| {
        maybe_done(Box::pin(async move {
            let params = PaginatedParams { cursor, ..Default::default() };
            session.request_undecoded::<M>(&params, RequestOptions::default()).await
        }))
    };
    let mut next = Some(fetch(None));
    while let Some(mut request) = next.take() {
        (&mut request).await;
        let raw = Pin::new(&mut request).take_output().expect("a finished request holds its answer")?;
        guard.received(raw.get().len())?;
        let early = mcp_protocol::scan::next_cursor(raw.get());
        if early.is_some() {
            let mut request = fetch(guard.follow(early.as_deref())?);
            // One poll hands the request to the transport; the yield lets the transport's writer
            // send it before the decode below holds this thread.
            if futures::poll!(&mut request).is_pending() {
                tokio::task::yield_now().await;
            }
            next = Some(request);
        }
        let page = session.decode_result::<M>(raw)?;
        if page.next_cursor() != early.as_deref() {
            next = guard.follow(page.next_cursor())?.map(|cursor| fetch(Some(cursor)));
        }
        guard.items(page.items().len())?;
        each(page);
    }
    Ok(())
}

/// The bounds of one listing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListLimits {
    pub(crate) max_pages: usize,
    pub(crate) max_items: usize,
    pub(crate) max_bytes: usize,
}

/// Tracks the pages of one listing: their count, items and bytes, and the cursors seen (kept as
/// keyed hashes, so that what the guard remembers does not grow with the cursors' length).
pub(crate) struct CursorGuard {
    seen: HashSet<u64>,
    hasher: RandomState,
    pages: usize,
    items: usize,
    bytes: usize,
    limits: ListLimits,
    server: String,
    what: &'static str,
}

impl CursorGuard {
    pub(crate) fn new(server: &str, what: &'static str, limits: ListLimits) -> Self {
        CursorGuard {
            seen: HashSet::new(),
            hasher: RandomState::new(),
            pages: 0,
            items: 0,
            bytes: 0,
            limits,
            server: server.to_owned(),
            what,
        }
    }

    /// Account for a page's result of `bytes` bytes, before it is decoded.
    pub(crate) fn received(&mut self, bytes: usize) -> Result<(), PaginationError> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.limits.max_bytes {
            let (server, what) = (self.server.clone(), self.what);
            return Err(PaginationError::TooLarge { server, what, max: self.limits.max_bytes });
        }
        Ok(())
    }

    /// Account for the `items` items of a decoded page.
    pub(crate) fn items(&mut self, items: usize) -> Result<(), PaginationError> {
        self.items = self.items.saturating_add(items);
        if self.items > self.limits.max_items {
            let (server, what) = (self.server.clone(), self.what);
            return Err(PaginationError::TooManyItems { server, what, max: self.limits.max_items });
        }
        Ok(())
    }

    /// Account for one page received; `next` is its cursor. Returns the cursor to follow.
    pub(crate) fn follow(&mut self, next: Option<&str>) -> Result<Option<String>, PaginationError> {
        self.pages += 1;
        let Some(cursor) = next else { return Ok(None) };
        if self.pages >= self.limits.max_pages {
            return Err(PaginationError::TooManyPages {
                server: self.server.clone(),
                what: self.what,
                max: self.limits.max_pages,
            });
        }
        if cursor.len() > MAX_CURSOR_BYTES {
            return Err(PaginationError::CursorTooLong {
                server: self.server.clone(),
                what: self.what,
                len: cursor.len(),
                max: MAX_CURSOR_BYTES,
            });
        }
        if !self.seen.insert(self.hasher.hash_one(cursor)) {
            return Err(PaginationError::RepeatedCursor {
                server: self.server.clone(),
                what: self.what,
                cursor: cursor.to_owned(),
            });
        }
        Ok(Some(cursor.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_pages: usize) -> ListLimits {
        ListLimits { max_pages, max_items: usize::MAX, max_bytes: usize::MAX }
    }

    #[test]
    fn repeated_cursor_and_page_cap_are_errors() {
        let mut g = CursorGuard::new("s", "tools", limits(10));
        assert_eq!(g.follow(Some("a")).unwrap(), Some("a".into()));
        assert_eq!(g.follow(Some("b")).unwrap(), Some("b".into()));
        let err = g.follow(Some("a")).unwrap_err();
        assert!(err.to_string().contains("repeated the tools cursor \"a\""), "{err}");

        let mut g = CursorGuard::new("s", "prompts", limits(3));
        g.follow(Some("1")).unwrap();
        g.follow(Some("2")).unwrap();
        let err = g.follow(Some("3")).unwrap_err();
        assert!(matches!(err, PaginationError::TooManyPages { max: 3, .. }));
        let mut g = CursorGuard::new("s", "prompts", limits(1));
        assert_eq!(g.follow(None).unwrap(), None, "a last page within the cap is fine");
    }

    #[test]
    fn items_bytes_and_cursor_length_are_bounded() {
        let mut g = CursorGuard::new("srv", "tools", ListLimits { max_pages: 100, max_items: 10, max_bytes: 1000 });
        g.received(100).unwrap();
        assert_eq!(g.follow(Some("a")).unwrap(), Some("a".into()));
        g.items(6).unwrap();
        g.received(100).unwrap();
        assert_eq!(g.follow(None).unwrap(), None);
        g.items(4).expect("exactly at the item cap is fine");
        let err = g.items(1).unwrap_err();
        assert_eq!(err, PaginationError::TooManyItems { server: "srv".into(), what: "tools", max: 10 });
        assert_eq!(err.to_string(), "server \"srv\" listed more than 10 tools; refusing to continue");

        let mut g = CursorGuard::new("srv", "prompts", ListLimits { max_pages: 100, max_items: 10, max_bytes: 1000 });
        g.received(600).unwrap();
        g.received(400).expect("exactly at the byte cap is fine");
        let err = g.received(1).unwrap_err();
        assert!(matches!(err, PaginationError::TooLarge { max: 1000, what: "prompts", .. }), "{err}");
        assert!(err.to_string().contains("\"srv\"") && err.to_string().contains("prompts"), "{err}");

        let mut g = CursorGuard::new("srv", "resources", limits(100));
        let long = "c".repeat(MAX_CURSOR_BYTES + 1);
        let err = g.follow(Some(&long)).unwrap_err();
        assert!(matches!(err, PaginationError::CursorTooLong { len, .. } if len == MAX_CURSOR_BYTES + 1), "{err}");
        assert!(err.to_string().contains("resources cursor of 8193 bytes"), "{err}");
        let fits = "c".repeat(MAX_CURSOR_BYTES);
        assert_eq!(g.follow(Some(&fits)).unwrap(), Some(fits));
    }
}
