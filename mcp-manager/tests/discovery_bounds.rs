//! Discovery against a server whose lists never end: every list is bounded in items, bytes and
//! cursor length, and the error names the server and the list. And how pages are asked for: the
//! next one before this one is decoded, on the cursor read from the page's text, which the
//! decoded page confirms.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_manager::connection::{
    ConnectionError, ConnectionOptions, EraPreference, McpConnection, PaginationError, ToolCompanion, ToolCompanions,
    single_use_factory,
};
use mcp_protocol::{Message, Response};
use mcp_transport::MemoryTransport;
use serde_json::{Value, json};
use test_support::scripted::{Event, Got};
use test_support::{ScriptedServer, within};

type Page = Box<dyn FnMut(&str, Option<&str>) -> Value + Send>;

/// A legacy-era server that answers `initialize` and every `*/list` with `page(method, cursor)`.
fn serve(server: MemoryTransport, mut page: Page) {
    ScriptedServer::start(server, move |request, params| {
        Some(Ok(match request.method.as_str() {
            "initialize" => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "prompts": {}},
                "serverInfo": {"name": "endless", "version": "1"}
            }),
            method => page(method, params["cursor"].as_str()),
        }))
    });
}

/// Page `n` of an endless list: 100 items and the cursor of page `n + 1`.
fn endless(method: &str, cursor: Option<&str>, description: &str) -> Value {
    let n: usize = cursor.and_then(|c| c.strip_prefix('p')).and_then(|n| n.parse().ok()).unwrap_or(0);
    let items: Vec<Value> = (0..100)
        .map(|i| json!({"name": format!("i{n}_{i}"), "description": description, "inputSchema": {"type": "object"}}))
        .collect();
    let field = if method == "tools/list" { "tools" } else { "prompts" };
    json!({field: items, "nextCursor": format!("p{}", n + 1)})
}

async fn connected(page: Page, options: impl FnOnce(&mut ConnectionOptions)) -> McpConnection {
    let (client, server) = MemoryTransport::pair();
    serve(server, page);
    let mut o = ConnectionOptions::new("endless");
    o.era = EraPreference::Legacy;
    options(&mut o);
    let conn = McpConnection::new(single_use_factory(Arc::new(client)), o);
    conn.connect().await.unwrap();
    conn
}

#[tokio::test]
async fn a_list_with_too_many_items_is_refused_naming_the_server_and_the_list() {
    within(async {
        let conn = connected(Box::new(|m, c| endless(m, c, "")), |o| o.max_list_items = 1000).await;
        let err = conn.list_all_tools().await.unwrap_err();
        assert!(
            matches!(&err, ConnectionError::Pagination(PaginationError::TooManyItems { what: "tools", max: 1000, .. })),
            "{err}"
        );
        assert_eq!(err.to_string(), "server \"endless\" listed more than 1000 tools; refusing to continue");
        let err = conn.list_all_prompts().await.unwrap_err();
        assert!(err.to_string().contains("more than 1000 prompts"), "{err}");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn a_list_with_too_many_bytes_is_refused() {
    within(async {
        let long = "x".repeat(1000);
        let conn = connected(Box::new(move |m, c| endless(m, c, &long)), |o| o.max_list_bytes = 1024 * 1024).await;
        let err = conn.list_all_tools().await.unwrap_err();
        assert!(
            matches!(
                &err,
                ConnectionError::Pagination(PaginationError::TooLarge { what: "tools", max: 1048576, server }) if server == "endless"
            ),
            "{err}"
        );
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn the_default_item_bound_holds_within_the_page_cap() {
    within(async {
        // 1000 pages of 100 is 100,000 tools: more than the default bound, within the page cap.
        let conn = connected(Box::new(|m, c| endless(m, c, "")), |_| {}).await;
        let err = conn.list_all_tools().await.unwrap_err();
        assert!(matches!(&err, ConnectionError::Pagination(PaginationError::TooManyItems { .. })), "{err}");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn a_cursor_that_is_too_long_is_not_followed() {
    within(async {
        let page: Page = Box::new(|_, cursor| {
            let next = format!("{}{}", cursor.unwrap_or(""), "c".repeat(3000));
            json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": next})
        });
        let conn = connected(page, |_| {}).await;
        let err = conn.list_all_tools().await.unwrap_err();
        assert!(
            matches!(
                &err,
                ConnectionError::Pagination(PaginationError::CursorTooLong { what: "tools", len: 9000, .. })
            ),
            "{err}"
        );
        assert!(err.to_string().starts_with("server \"endless\" sent a tools cursor of 9000 bytes"), "{err}");
        conn.close().await;
    })
    .await
}

/// A legacy-era server whose `tools/list` answers are the JSON texts `page(cursor)` gives, as
/// written (`None`: the request is never answered).
async fn raw_pages(
    mut page: impl FnMut(Option<&str>) -> Option<&'static str> + Send + 'static,
) -> (McpConnection, ScriptedServer) {
    let (client, server) = MemoryTransport::pair();
    let server = ScriptedServer::start_with(server, move |got, outbox| {
        let Got::Request(request, params) = got else { return None };
        if request.method == "initialize" {
            return Some(Ok(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"}
            })));
        }
        let text = page(params["cursor"].as_str())?;
        let raw = mcp_protocol::RawJson::from_string(text.to_owned()).expect("the test's page is JSON");
        outbox.send(Message::Response(Response::result(request.id.clone(), raw)));
        None
    });
    let mut o = ConnectionOptions::new("raw");
    o.era = EraPreference::Legacy;
    let conn = McpConnection::new(single_use_factory(Arc::new(client)), o);
    conn.connect().await.unwrap();
    (conn, server)
}

#[tokio::test]
async fn the_next_page_is_asked_for_before_this_one_is_decoded_and_cancelled_when_it_does_not_decode() {
    within(async {
        let (conn, server) = raw_pages(|cursor| match cursor {
            None => Some(r#"{"tools":[{"name":7,"inputSchema":{"type":"object"}}],"nextCursor":"p1"}"#),
            Some(_) => None,
        })
        .await;
        let err = conn.list_all_tools().await.unwrap_err();
        assert!(err.to_string().contains("tools/list"), "{err}");
        // The second page was asked for on the cursor read from the first page's text, before
        // the first page failed to decode; the failure cancelled it.
        server
            .until(|events| {
                let asked = events.iter().find_map(|e| match e {
                    Event::Request { request, params, .. } if params["cursor"] == "p1" => Some(request.id.clone()),
                    _ => None,
                });
                asked.is_some_and(|id| {
                    let id = serde_json::to_value(&id).unwrap();
                    events.iter().any(|e| {
                        matches!(e, Event::Notification { method, params }
                            if method == "notifications/cancelled" && params["requestId"] == id)
                    })
                })
            })
            .await;
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn a_cursor_the_early_look_misses_is_followed_once_the_page_is_decoded() {
    within(async {
        // A member name written with an escape is still `nextCursor` to the decoder.
        let (conn, server) = raw_pages(|cursor| match cursor {
            None => Some(r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"next\u0043ursor":"p1"}"#),
            Some("p1") => Some(r#"{"tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"p2"}"#),
            Some(_) => Some(r#"{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}"#),
        })
        .await;
        let tools = conn.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let cursors: Vec<Value> = server.requests_of("tools/list").iter().map(|p| p["cursor"].clone()).collect();
        assert_eq!(cursors, [Value::Null, json!("p1"), json!("p2")]);
        assert!(!server.notifications().iter().any(|m| m == "notifications/cancelled"));
        conn.close().await;
    })
    .await
}

/// A legacy server offering tools, prompts and resources whose script sees every list request
/// and may answer it later through the outbox.
async fn four_lists(
    mut script: impl FnMut(&mcp_protocol::Request, &test_support::scripted::Outbox) + Send + 'static,
    request_timeout: std::time::Duration,
) -> (McpConnection, ScriptedServer) {
    let (client, server) = MemoryTransport::pair();
    let server = ScriptedServer::start_with(server, move |got, outbox| {
        let Got::Request(request, _) = got else { return None };
        if request.method == "initialize" {
            return Some(Ok(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                "serverInfo": {"name": "four", "version": "1"}
            })));
        }
        script(request, outbox);
        None
    });
    let mut o = ConnectionOptions::new("four");
    o.era = EraPreference::Legacy;
    o.session.request_timeout = request_timeout;
    let conn = McpConnection::new(single_use_factory(Arc::new(client)), o);
    conn.connect().await.unwrap();
    (conn, server)
}

/// The one-page answer to the list request `method`.
fn one_page(method: &str) -> mcp_protocol::RawJson {
    let page = match method {
        "tools/list" => json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        "prompts/list" => json!({"prompts": [{"name": "p"}]}),
        "resources/list" => json!({"resources": [{"uri": "file:///r", "name": "r"}]}),
        _ => json!({"resourceTemplates": [{"uriTemplate": "file:///{x}", "name": "x"}]}),
    };
    mcp_protocol::RawJson::from_string(page.to_string()).unwrap()
}

#[tokio::test]
async fn the_four_lists_are_asked_for_at_once() {
    within(async {
        // The server answers no list before it has been asked for all four: a client asking for
        // them one after another would wait for the first answer until its request timed out.
        let mut held = Vec::new();
        let (conn, server) = four_lists(
            move |request, outbox| {
                held.push((request.id.clone(), request.method.clone()));
                if held.len() == 4 {
                    for (id, method) in held.drain(..) {
                        outbox.send(Message::Response(Response::result(id, one_page(&method))));
                    }
                }
            },
            std::time::Duration::from_secs(3),
        )
        .await;
        let inventory = conn.discover().await.unwrap();
        assert_eq!(inventory.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["t"]);
        assert_eq!(inventory.prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["p"]);
        assert_eq!(inventory.resources.len(), 1);
        assert_eq!(inventory.resource_templates.len(), 1);
        assert!(inventory.warnings.is_empty(), "{:?}", inventory.warnings);
        let mut methods: Vec<String> = server.requests().into_iter().map(|(r, _)| r.method).collect();
        methods.sort();
        assert_eq!(methods, ["initialize", "prompts/list", "resources/list", "resources/templates/list", "tools/list"]);
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn a_failed_tools_listing_ends_discovery_at_once_and_cancels_the_other_lists() {
    within(async {
        // Only the tools listing is answered, with an error; the others would wait for the
        // request timeout (a minute), far beyond the test's hang guard.
        let (conn, server) = four_lists(
            |request, outbox| {
                if request.method == "tools/list" {
                    let error =
                        mcp_protocol::ErrorObject::new(mcp_protocol::ErrorCode::INTERNAL_ERROR, "no tools today");
                    outbox.send(Message::Response(Response::error(Some(request.id.clone()), error)));
                }
            },
            std::time::Duration::from_secs(60),
        )
        .await;
        let err = conn.discover().await.unwrap_err();
        assert!(err.to_string().contains("no tools today"), "{err}");
        // The other three requests were dropped, which cancels them on the server.
        server
            .until(|events| {
                events
                    .iter()
                    .filter(|e| matches!(e, Event::Notification { method, .. } if method == "notifications/cancelled"))
                    .count()
                    == 3
            })
            .await;
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn each_listed_tool_gets_its_companion_in_order_and_the_inventory_keeps_them() {
    within(async {
        // Three pages of 100 tools; the last one has no cursor.
        let pages: Page = Box::new(|method, cursor| {
            let mut page = endless(method, cursor, "");
            if cursor == Some("p2") {
                page.as_object_mut().unwrap().remove("nextCursor");
            }
            page
        });
        let made = Arc::new(AtomicUsize::new(0));
        let counted = made.clone();
        let conn = connected(pages, move |o| {
            o.tool_companions = Some(ToolCompanions::new(move |tool| -> ToolCompanion {
                counted.fetch_add(1, Ordering::SeqCst);
                Arc::new(format!("made for {}", tool.name))
            }))
        })
        .await;
        let inventory = conn.discover().await.unwrap();
        assert_eq!(inventory.tools.len(), 300);
        assert_eq!(inventory.tool_companions.len(), 300, "one companion a tool");
        for (tool, companion) in inventory.tools.iter().zip(inventory.tool_companions.iter()) {
            let text = companion.downcast_ref::<String>().expect("the companion made for the tool");
            assert_eq!(*text, format!("made for {}", tool.name));
        }
        assert_eq!(made.load(Ordering::SeqCst), 300);
        // A look at the cached inventory shares them: nothing is made again.
        let again = conn.inventory().await.unwrap();
        assert!(Arc::ptr_eq(&again.tool_companions, &inventory.tool_companions));
        assert_eq!(made.load(Ordering::SeqCst), 300);
        // A listing of the tools alone (no inventory) makes none either.
        assert_eq!(conn.list_all_tools().await.unwrap().len(), 300);
        assert_eq!(made.load(Ordering::SeqCst), 300, "list_all_tools made companions it drops");
        // A connection whose options make none keeps none.
        conn.close().await;
        let one_page: Page = Box::new(|method, _| {
            let mut page = endless(method, None, "");
            page.as_object_mut().unwrap().remove("nextCursor");
            page
        });
        let plain = connected(one_page, |_| {}).await;
        let inventory = plain.discover().await.unwrap();
        assert_eq!(inventory.tools.len(), 100);
        assert!(inventory.tool_companions.is_empty());
        plain.close().await;
    })
    .await
}
