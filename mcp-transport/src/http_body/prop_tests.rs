//! Property tests of SSE reading ([`Events`]: `sse-stream`'s parser fed bounded, timed slices):
//!
//! - any bytes, cut into any chunks, end the stream without a panic or a hang; every event is
//!   within the size limit, together they hold no more data than the input, and after an
//!   error the stream ends;
//! - well-formed events (any line ending, comments, a byte-order mark), cut anywhere, come back
//!   exactly and in order.
//!
//! Each property runs a modest number of cases (CI runs them with a fixed seed, see `cargo xtask
//! ci`); `PROPTEST_CASES` and `PROPTEST_RNG_SEED` override both (`cargo xtask fuzz sse`).

use std::time::Duration;

use bytes::Bytes;
use proptest::collection::vec;
use proptest::prelude::*;
use sse_stream::Sse;

use super::{BodyError, Events};

/// This file's configuration: `cases` unless `PROPTEST_CASES` says otherwise.
fn config(cases: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}

/// `body` cut at `cuts` (indices into it), as the chunks of an HTTP response.
fn response(body: &[u8], cuts: &[prop::sample::Index]) -> http::Response<reqwest::Body> {
    let mut at: Vec<usize> = cuts.iter().map(|i| i.index(body.len() + 1)).collect();
    at.push(0);
    at.push(body.len());
    at.sort_unstable();
    at.dedup();
    let chunks: Vec<Result<Bytes, std::io::Error>> =
        at.windows(2).map(|w| Ok(Bytes::copy_from_slice(&body[w[0]..w[1]]))).collect();
    let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    http::Response::new(body)
}

/// Every item of the stream, up to its end; the stream must end within a generous bound.
fn read_all(response: http::Response<reqwest::Body>, limit: usize) -> Vec<Result<Sse, BodyError>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime");
    runtime.block_on(async move {
        let read = async move {
            let mut events = Events::new(response, limit, Some(Duration::from_secs(10)));
            let mut items = Vec::new();
            while let Some(item) = events.next().await {
                let failed = item.is_err();
                items.push(item);
                if failed {
                    // After an error the stream ends.
                    assert!(events.next().await.is_none(), "an item after an error");
                    break;
                }
            }
            items
        };
        tokio::time::timeout(Duration::from_secs(20), read).await.expect("the SSE stream did not end")
    })
}

/// Bytes that look like SSE: field names, line endings, comments, and anything else.
fn sse_ish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => prop::sample::select(vec![
            "data:", "data: ", "data", "event:", "event: ", "id:", "id: ", "retry:", "retry: 10", ":", ": c", "\n",
            "\r", "\r\n", "\n\n", "\u{feff}", "{\"jsonrpc\":\"2.0\"}", "x", " ", "é", "\u{0}",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => vec(any::<u8>(), 0..16),
        1 => "[a-z]{0,40}".prop_map(String::into_bytes),
    ];
    vec(piece, 0..64).prop_map(|parts| parts.concat())
}

/// One well-formed event: an optional type and id, and data lines (at least one field).
#[derive(Debug, Clone)]
struct Event {
    event: Option<String>,
    id: Option<String>,
    data: Option<Vec<String>>,
    comment: Option<String>,
}

impl Event {
    fn expected(&self) -> Sse {
        Sse {
            event: self.event.clone(),
            data: self.data.as_ref().map(|lines| lines.join("\n")),
            id: self.id.clone(),
            retry: None,
        }
    }
}

/// A field value: no line break (and, for ids, no NUL, which the spec says voids an id).
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9 :{}\",.é]{0,12}",
        1 => any::<String>().prop_map(|s| s.replace(['\r', '\n', '\0'], "")),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    let non_empty = || value().prop_filter("not empty", |v| !v.is_empty());
    (
        proptest::option::of(non_empty()),
        proptest::option::of(non_empty()),
        proptest::option::of(vec(value(), 1..4)),
        proptest::option::of(value()),
    )
        .prop_filter("at least one field", |(event, id, data, _)| event.is_some() || id.is_some() || data.is_some())
        .prop_map(|(event, id, data, comment)| Event { event, id, data, comment })
}

/// The events as an SSE body, every line ended with `eol`.
fn write(events: &[Event], eol: &str, bom: bool) -> Vec<u8> {
    let mut out = String::new();
    if bom {
        out.push('\u{feff}');
    }
    for e in events {
        if let Some(comment) = &e.comment {
            out.push_str(&format!(":{comment}{eol}"));
        }
        if let Some(event) = &e.event {
            out.push_str(&format!("event: {event}{eol}"));
        }
        if let Some(id) = &e.id {
            out.push_str(&format!("id: {id}{eol}"));
        }
        for line in e.data.iter().flatten() {
            out.push_str(&format!("data: {line}{eol}"));
        }
        out.push_str(eol);
    }
    out.into_bytes()
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn any_bytes_end_the_stream_within_bounds(
        body in prop_oneof![sse_ish(), vec(any::<u8>(), 0..1024)],
        cuts in vec(any::<prop::sample::Index>(), 0..8),
        limit in prop::sample::select(vec![0usize, 8, 64, 1 << 20]),
    ) {
        let items = read_all(response(&body, &cuts), limit);
        prop_assert!(items.len() <= body.len());
        let mut data = 0usize;
        for item in &items {
            match item {
                Ok(event) => {
                    let len = event.data.as_ref().map_or(0, String::len);
                    prop_assert!(len <= limit, "{} bytes of data past the limit of {}", len, limit);
                    data += len;
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
        prop_assert!(data <= body.len());
    }

    #[test]
    fn well_formed_events_come_back_whatever_the_chunks(
        events in vec(event(), 0..6),
        eol in prop::sample::select(vec!["\n", "\r\n", "\r"]),
        bom in any::<bool>(),
        cuts in vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let body = write(&events, eol, bom);
        let items = read_all(response(&body, &cuts), 1 << 20);
        let got: Vec<Sse> = items
            .into_iter()
            .map(|item| item.map_err(|e| TestCaseError::fail(format!("{e} in {:?}", String::from_utf8_lossy(&body)))))
            .collect::<Result<_, _>>()?;
        let expected: Vec<Sse> = events.iter().map(Event::expected).collect();
        prop_assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(&body));
    }

    #[test]
    fn an_event_over_the_limit_is_refused(
        before in vec(event(), 0..3),
        size in 65usize..4096,
        cuts in vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut events = before.clone();
        events.push(Event { event: None, id: None, data: Some(vec!["x".repeat(size)]), comment: None });
        let body = write(&events, "\n", false);
        let items = read_all(response(&body, &cuts), 64);
        // The events before it that fit come through; the big one is an error, and the end.
        let last = items.last().expect("at least the error");
        prop_assert!(matches!(last, Err(BodyError::TooLarge { limit: 64 })), "{:?}", last);
        for (item, event) in items.iter().zip(&before) {
            if let Ok(got) = item {
                prop_assert_eq!(got, &event.expected());
            }
        }
    }
}
