//! The pool's connections against a hand-written HTTP/1.1 server on 127.0.0.1, which shows
//! what happens to each connection: how many were opened, what each request line said, and
//! when the client closed one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::BodyExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::tests::{direct, endpoint, within};
use super::*;
use crate::http_policy::POOL_IDLE_TIMEOUT;

/// How the test server answers.
#[derive(Clone, Copy)]
struct Answer {
    /// The body of every response (with its `Content-Length`).
    body_bytes: usize,
    /// Close the connection after each response.
    close: bool,
}

/// What the test server saw.
struct Served {
    addr: std::net::SocketAddr,
    accepted: Arc<AtomicUsize>,
    request_lines: Arc<Mutex<Vec<String>>>,
    /// The number of each connection the client closed (its end of stream, or a failed write).
    closed: mpsc::UnboundedReceiver<usize>,
}

async fn serve(answer: Answer) -> Served {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let request_lines = Arc::new(Mutex::new(Vec::new()));
    let (closed_tx, closed) = mpsc::unbounded_channel();
    let (count, lines) = (accepted.clone(), request_lines.clone());
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let number = count.fetch_add(1, Ordering::SeqCst);
            let (lines, closed_tx) = (lines.clone(), closed_tx.clone());
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    // Every request of these tests is a head without a body.
                    while let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
                        buffer.drain(..end + 4);
                        lines.lock().unwrap().push(head.lines().next().unwrap_or_default().to_owned());
                        let mut response =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", answer.body_bytes).into_bytes();
                        response.resize(response.len() + answer.body_bytes, b'x');
                        if socket.write_all(&response).await.is_err() {
                            let _ = closed_tx.send(number);
                            return;
                        }
                        if answer.close {
                            return;
                        }
                    }
                    match socket.read(&mut chunk).await {
                        Ok(0) | Err(_) => {
                            let _ = closed_tx.send(number);
                            return;
                        }
                        Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    Served { addr, accepted, request_lines, closed }
}

fn client_for(addr: std::net::SocketAddr) -> (HttpClient, Endpoint) {
    let target = endpoint(&format!("http://{addr}/mcp?x=1"));
    let client = HttpClient::with_proxies(Duration::from_secs(5), &target, &direct()).unwrap();
    (client, target)
}

async fn get(client: &HttpClient, target: &Endpoint) -> Response {
    client.send(Method::GET, target, HeaderMap::new, Bytes::new()).await.unwrap()
}

async fn body_len(response: Response) -> usize {
    response.into_body().collect().await.unwrap().to_bytes().len()
}

#[tokio::test]
async fn a_connection_is_reused_in_origin_form_and_one_the_server_closed_is_not() {
    within(async {
        let served = serve(Answer { body_bytes: 2, close: false }).await;
        let (client, target) = client_for(served.addr);
        for _ in 0..3 {
            assert_eq!(body_len(get(&client, &target).await).await, 2);
        }
        assert_eq!(served.accepted.load(Ordering::SeqCst), 1, "three requests on one kept-alive connection");
        assert_eq!(*served.request_lines.lock().unwrap(), vec!["GET /mcp?x=1 HTTP/1.1"; 3], "origin form");

        let closing = serve(Answer { body_bytes: 2, close: true }).await;
        let (client, target) = client_for(closing.addr);
        assert_eq!(body_len(get(&client, &target).await).await, 2);
        // The server closed it after its response: the client's side of it sees that.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(body_len(get(&client, &target).await).await, 2, "the next request goes on a new connection");
        assert_eq!(closing.accepted.load(Ordering::SeqCst), 2);
    })
    .await
}

#[tokio::test]
async fn a_body_dropped_before_its_end_closes_its_connection() {
    within(async {
        let mut served = serve(Answer { body_bytes: 4 << 20, close: false }).await;
        let (client, target) = client_for(served.addr);
        let mut response = get(&client, &target).await;
        let first = response.body_mut().frame().await.unwrap().unwrap();
        assert!(first.data_ref().is_some_and(|data| !data.is_empty()));
        drop(response);
        assert_eq!(served.closed.recv().await, Some(0), "the connection whose body was dropped is closed");
        assert_eq!(body_len(get(&client, &target).await).await, 4 << 20);
        assert_eq!(served.accepted.load(Ordering::SeqCst), 2, "and not used again");
    })
    .await
}

#[tokio::test]
async fn idle_connections_are_closed_after_the_timeout_and_with_their_client() {
    within(async {
        let mut served = serve(Answer { body_bytes: 2, close: false }).await;
        let (client, target) = client_for(served.addr);
        assert_eq!(body_len(get(&client, &target).await).await, 2);
        tokio::time::sleep(POOL_IDLE_TIMEOUT / 2).await;
        assert!(served.closed.try_recv().is_err(), "an idle connection is kept for a while");
        // Nobody sends again: the pool closes it itself once it has been idle for the timeout.
        let closed = tokio::time::timeout(POOL_IDLE_TIMEOUT, served.closed.recv()).await;
        assert_eq!(closed.expect("closed after the idle timeout"), Some(0));

        // A client that goes closes the connections it kept.
        let mut served = serve(Answer { body_bytes: 2, close: false }).await;
        let (client, target) = client_for(served.addr);
        assert_eq!(body_len(get(&client, &target).await).await, 2);
        drop(client);
        assert_eq!(served.closed.recv().await, Some(0));
    })
    .await
}

#[tokio::test]
async fn concurrent_requests_each_open_a_connection_and_all_of_them_are_kept() {
    within(async {
        let served = serve(Answer { body_bytes: 64, close: false }).await;
        let (client, target) = client_for(served.addr);
        for _ in 0..2 {
            let lengths = futures::future::join_all((0..8).map(|_| async {
                let response = get(&client, &target).await;
                body_len(response).await
            }))
            .await;
            assert_eq!(lengths, vec![64; 8]);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(served.accepted.load(Ordering::SeqCst), 8, "the second round reused the first round's eight");
    })
    .await
}

#[tokio::test]
async fn a_request_to_another_origin_is_refused_without_connecting() {
    within(async {
        let served = serve(Answer { body_bytes: 2, close: false }).await;
        let (client, _) = client_for(served.addr);
        let elsewhere = endpoint("http://127.0.0.1:1/mcp");
        let error = client.send(Method::GET, &elsewhere, HeaderMap::new, Bytes::new()).await.unwrap_err();
        assert!(error.to_string().contains("another origin"), "{error}");
        assert_eq!(served.accepted.load(Ordering::SeqCst), 0);
    })
    .await
}
