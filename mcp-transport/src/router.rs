//! [`MessageRouter`]: the fast path for messages a transport decodes
//! ([`Transport::set_router`](crate::Transport::set_router)), and the slot a transport keeps it
//! in.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

use mcp_protocol::Message;

/// Takes each message a transport decodes, on the transport's own task, before it is queued
/// for [`Transport::recv`](crate::Transport::recv): returns the message when it is to be queued
/// after all, `None` when it took it.
pub type MessageRouter = Arc<dyn Fn(Message) -> Option<Message> + Send + Sync>;

/// Where a transport keeps its router: set once, read for every decoded message.
#[derive(Default)]
pub(crate) struct RouterSlot(OnceLock<MessageRouter>);

impl std::fmt::Debug for RouterSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "RouterSlot(set)" } else { "RouterSlot(empty)" })
    }
}

impl RouterSlot {
    /// Keep `router`; false when one is kept already (the first stays).
    pub(crate) fn set(&self, router: MessageRouter) -> bool {
        self.0.set(router).is_ok()
    }

    /// `message` through the router, if there is one: what is left to queue. A router that
    /// panics has taken the message (it is gone), and the panic goes no further than this.
    pub(crate) fn route(&self, server: &str, message: Message) -> Option<Message> {
        let Some(router) = self.0.get() else { return Some(message) };
        match catch_unwind(AssertUnwindSafe(|| router(message))) {
            Ok(rest) => rest,
            Err(_) => {
                tracing::error!(server, "the message router panicked; the message it was given is dropped");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::RequestId;

    fn ping(id: i64) -> Message {
        Message::request::<()>(RequestId::Number(id), "ping", None).unwrap()
    }

    #[test]
    fn without_a_router_every_message_is_queued() {
        let slot = RouterSlot::default();
        assert_eq!(slot.route("s", ping(1)).and_then(|m| m.method().map(str::to_owned)).as_deref(), Some("ping"));
    }

    #[test]
    fn the_first_router_stays_and_decides_what_is_queued() {
        let slot = RouterSlot::default();
        let even: MessageRouter = Arc::new(|m: Message| match &m {
            Message::Request(r) if r.id == RequestId::Number(2) => None,
            _ => Some(m),
        });
        assert!(slot.set(even));
        assert!(!slot.set(Arc::new(|_| None)), "a second router is refused");
        assert!(slot.route("s", ping(1)).is_some());
        assert!(slot.route("s", ping(2)).is_none());
    }

    #[test]
    fn a_panicking_router_drops_the_message_and_nothing_else() {
        let slot = RouterSlot::default();
        assert!(slot.set(Arc::new(|_| panic!("router bug"))));
        assert!(slot.route("s", ping(1)).is_none());
        assert!(slot.route("s", ping(2)).is_none(), "the slot still works after a panic");
    }
}
