//! Following `nextCursor` to the end, with a loop guard and a page cap.

use std::collections::HashSet;

use mcp_protocol::types::prompts::{ListPromptsResult, Prompt};
use mcp_protocol::types::resources::{ListResourceTemplatesResult, ListResourcesResult, Resource, ResourceTemplate};
use mcp_protocol::types::tools::{ListToolsResult, Tool};

/// A page of a `*/list` result.
pub trait Page {
    /// What the list holds.
    type Item;
    /// The cursor of the next page.
    fn next_cursor(&self) -> Option<&str>;
    /// The items of this page.
    fn into_items(self) -> Vec<Self::Item>;
    /// How long this page may be cached, in milliseconds (2026-07-28 `ttlMs`).
    fn ttl_ms(&self) -> Option<u64> {
        None
    }
}

macro_rules! page {
    ($result:ty, $item:ty, $field:ident) => {
        impl Page for $result {
            type Item = $item;
            fn next_cursor(&self) -> Option<&str> {
                self.next_cursor.as_deref()
            }
            fn into_items(self) -> Vec<$item> {
                self.$field
            }
            fn ttl_ms(&self) -> Option<u64> {
                self.ttl_ms
            }
        }
    };
}

page!(ListToolsResult, Tool, tools);
page!(ListPromptsResult, Prompt, prompts);
page!(ListResourcesResult, Resource, resources);
page!(ListResourceTemplatesResult, ResourceTemplate, resource_templates);

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
}

/// Tracks the cursors of one listing.
pub(crate) struct CursorGuard {
    seen: HashSet<String>,
    pages: usize,
    max: usize,
    server: String,
    what: &'static str,
}

impl CursorGuard {
    pub(crate) fn new(server: &str, what: &'static str, max: usize) -> Self {
        CursorGuard { seen: HashSet::new(), pages: 0, max, server: server.to_owned(), what }
    }

    /// Account for one page received; `next` is its cursor. Returns the cursor to follow.
    pub(crate) fn next(&mut self, next: Option<&str>) -> Result<Option<String>, PaginationError> {
        self.pages += 1;
        let Some(cursor) = next else { return Ok(None) };
        if self.pages >= self.max {
            return Err(PaginationError::TooManyPages { server: self.server.clone(), what: self.what, max: self.max });
        }
        if !self.seen.insert(cursor.to_owned()) {
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

    #[test]
    fn repeated_cursor_and_page_cap_are_errors() {
        let mut g = CursorGuard::new("s", "tools", 10);
        assert_eq!(g.next(Some("a")).unwrap(), Some("a".into()));
        assert_eq!(g.next(Some("b")).unwrap(), Some("b".into()));
        let err = g.next(Some("a")).unwrap_err();
        assert!(err.to_string().contains("repeated the tools cursor \"a\""), "{err}");

        let mut g = CursorGuard::new("s", "prompts", 3);
        g.next(Some("1")).unwrap();
        g.next(Some("2")).unwrap();
        let err = g.next(Some("3")).unwrap_err();
        assert!(matches!(err, PaginationError::TooManyPages { max: 3, .. }));
        let mut g = CursorGuard::new("s", "prompts", 1);
        assert_eq!(g.next(None).unwrap(), None, "a last page within the cap is fine");
    }
}
