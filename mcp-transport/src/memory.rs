//! An in-memory transport pair, for tests and in-process servers.

use std::sync::Mutex;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::Message;
use tokio::sync::{mpsc, watch};

use crate::{CloseReason, Transport, TransportError, TransportEvent, TransportKind};

/// One end of an in-memory pair. Closing or dropping one end ends the other with
/// [`CloseReason::PeerClosed`]; the closing end itself then reports [`CloseReason::Closed`].
#[derive(Debug)]
pub struct MemoryTransport {
    tx: Mutex<Option<mpsc::UnboundedSender<Message>>>,
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Message>>,
    closed: watch::Sender<bool>,
}

impl MemoryTransport {
    /// Two connected ends.
    pub fn pair() -> (MemoryTransport, MemoryTransport) {
        let (a_tx, a_rx) = mpsc::unbounded_channel();
        let (b_tx, b_rx) = mpsc::unbounded_channel();
        (MemoryTransport::new(a_tx, b_rx), MemoryTransport::new(b_tx, a_rx))
    }

    fn new(tx: mpsc::UnboundedSender<Message>, rx: mpsc::UnboundedReceiver<Message>) -> Self {
        MemoryTransport { tx: Mutex::new(Some(tx)), rx: tokio::sync::Mutex::new(rx), closed: watch::Sender::new(false) }
    }
}

impl Transport for MemoryTransport {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let result = match tx {
            None => Err(TransportError::Closed(CloseReason::Closed)),
            Some(tx) => tx.send(message).map_err(|_| TransportError::Closed(CloseReason::PeerClosed)),
        };
        futures::future::ready(result).boxed()
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        async move {
            let mut closed = self.closed.subscribe();
            if *closed.borrow() {
                return TransportEvent::Closed(CloseReason::Closed);
            }
            let mut rx = self.rx.lock().await;
            tokio::select! {
                biased;
                _ = closed.wait_for(|c| *c) => TransportEvent::Closed(CloseReason::Closed),
                m = rx.recv() => match m {
                    Some(m) => TransportEvent::Message(m),
                    None => TransportEvent::Closed(CloseReason::PeerClosed),
                },
            }
        }
        .boxed()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.closed.send_replace(true);
        futures::future::ready(()).boxed()
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Memory
    }
}
