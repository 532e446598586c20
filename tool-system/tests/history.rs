//! The history text of results that mix text with other items, and of failed results: every
//! item reaches the history in order, blank text hides nothing, a failure says what failed and
//! keeps what came with it.

use serde_json::json;
use tool_system::{ContentItem, EmbeddedResource, GENERIC_FAILURE, ResourceBody, ResourceLink, ToolExecutionResult};

fn text_resource(uri: &str, text: &str) -> ContentItem {
    ContentItem::EmbeddedResource(EmbeddedResource {
        uri: uri.into(),
        mime_type: Some("text/plain".into()),
        body: ResourceBody::Text(text.into()),
        annotations: None,
        metadata: Default::default(),
    })
}

/// What the MCP adapter makes of a result: the items, and `content` the join of the text items.
fn mcp_like(items: Vec<ContentItem>) -> ToolExecutionResult {
    let texts: Vec<&str> = items.iter().filter_map(ContentItem::as_text).collect();
    let content = (!texts.is_empty()).then(|| texts.join("\n").into());
    ToolExecutionResult { content, ..ToolExecutionResult::ok_items(items) }
}

#[test]
fn text_and_an_embedded_resource_both_reach_the_history() {
    let result = mcp_like(vec![ContentItem::text("Here it is:"), text_resource("file:///n.txt", "KEY=42")]);
    assert_eq!(result.history_text(), "Here it is:\n[resource: file:///n.txt, text/plain]\nKEY=42");
}

#[test]
fn items_keep_their_order_and_text_is_not_repeated() {
    let link = ContentItem::ResourceLink(ResourceLink {
        uri: "file:///r.pdf".into(),
        name: "r.pdf".into(),
        title: Some("The report".into()),
        description: Some("Quarterly numbers".into()),
        ..ResourceLink::default()
    });
    let result = mcp_like(vec![
        ContentItem::text("before"),
        ContentItem::image("AAAA", "image/png"),
        ContentItem::text("between"),
        link,
        ContentItem::text("after"),
    ]);
    assert_eq!(
        result.history_text(),
        "before\n[image: image/png, 3 B]\nbetween\n\
         [resource link: r.pdf <file:///r.pdf>, title \"The report\"]\nQuarterly numbers\nafter"
    );
}

#[test]
fn blank_text_hides_nothing() {
    let result = mcp_like(vec![ContentItem::text("  \n"), text_resource("mem://a", "the fact")]);
    assert_eq!(result.content.as_deref(), Some("  \n"));
    assert_eq!(result.history_text(), "[resource: mem://a, text/plain]\nthe fact");

    let only_blank = ToolExecutionResult::ok_text(" \t").with_structured(json!({"n": 1}));
    assert_eq!(only_blank.history_text(), r#"{"n":1}"#, "blank content is no content");
}

#[test]
fn content_other_than_the_items_text_is_kept_with_the_items() {
    let result = ToolExecutionResult::ok_text("the summary")
        .with_item(ContentItem::text("a detail"))
        .with_item(text_resource("mem://r", "the data"));
    assert_eq!(result.history_text(), "the summary\na detail\n[resource: mem://r, text/plain]\nthe data");
    // A native tool's text alone is its history.
    assert_eq!(ToolExecutionResult::ok_text("5").history_text(), "5");
}

#[test]
fn structured_content_of_a_success_is_given_only_without_text() {
    let with_text = mcp_like(vec![ContentItem::text("42")]).with_structured(json!({"result": 42}));
    assert_eq!(with_text.history_text(), "42");
    let without_text = mcp_like(vec![ContentItem::image("AAAA", "image/png")]).with_structured(json!({"result": 42}));
    assert_eq!(without_text.history_text(), "[image: image/png, 3 B]\n{\"result\":42}");
}

#[test]
fn a_long_embedded_resource_is_cut_with_a_note() {
    let max = ContentItem::MAX_SUMMARY_TEXT;
    // Multi-byte characters around the bound: the cut falls on a character boundary.
    let long = format!("{}{}", "a".repeat(max - 1), "é".repeat(1000));
    let summary = text_resource("mem://big", &long).summary();
    let (kept, note) = summary.rsplit_once('\n').unwrap();
    let kept = kept.strip_prefix("[resource: mem://big, text/plain]\n").unwrap();
    assert_eq!(kept, "a".repeat(max - 1), "cut before the character that would cross the bound");
    let left_out = long.len() - kept.len();
    assert_eq!(note, format!("[... {left_out} more bytes left out, of {}]", long.len()));

    let exact = "b".repeat(max);
    assert_eq!(text_resource("mem://x", &exact).summary(), format!("[resource: mem://x, text/plain]\n{exact}"));
}

#[test]
fn a_failure_says_it_failed_and_keeps_what_came_with_it() {
    assert_eq!(ToolExecutionResult::failed("disk full").history_text(), "Error: disk full");
    let bare = ToolExecutionResult { success: false, error_message: None, ..ToolExecutionResult::ok() };
    assert_eq!(bare.history_text(), format!("Error: {GENERIC_FAILURE}"));

    // An error whose message is its text (an MCP `isError` result) says the text once.
    let mut is_error = mcp_like(vec![ContentItem::text("not found:"), text_resource("mem://q", "the query")]);
    is_error.success = false;
    is_error.error_message = Some("not found:".into());
    assert_eq!(is_error.history_text(), "Error: not found:\n[resource: mem://q, text/plain]\nthe query");

    // A failure found by the host (an output-schema problem): the message, the text, the JSON.
    let mut mismatch = mcp_like(vec![ContentItem::text("hot")]).with_structured(json!({"temperature": "hot"}));
    mismatch.success = false;
    mismatch.error_message =
        Some("structured content of tool `t` does not match its outputSchema at /temperature".into());
    assert_eq!(
        mismatch.history_text(),
        "Error: structured content of tool `t` does not match its outputSchema at /temperature\nhot\n\
         {\"temperature\":\"hot\"}"
    );
}

#[test]
fn a_failure_gives_structured_content_once() {
    let failed = |result: ToolExecutionResult| ToolExecutionResult {
        success: false,
        error_message: Some("tool `t` on server `s` reported an error".into()),
        ..result
    };
    let only_json = failed(ToolExecutionResult::ok_structured(json!({"code": 7})));
    assert_eq!(only_json.history_text(), "Error: tool `t` on server `s` reported an error\n{\"code\":7}");
    // Already in the text (as the protocol recommends): not repeated.
    let mirrored = failed(mcp_like(vec![ContentItem::text("{\n  \"code\": 7\n}")]).with_structured(json!({"code": 7})));
    assert_eq!(mirrored.history_text(), "Error: tool `t` on server `s` reported an error\n{\n  \"code\": 7\n}");
}

#[test]
fn a_failures_structured_content_is_bounded() {
    let max = ToolExecutionResult::MAX_HISTORY_JSON;
    let big = json!({"blob": "x".repeat(2 * max)});
    let result = ToolExecutionResult::failed("too much").with_structured(big.clone());
    let text = result.history_text();
    let json_len = big.to_string().len();
    assert!(text.len() < max + 200, "{} bytes", text.len());
    assert!(text.starts_with("Error: too much\n{\"blob\":\"xxx"), "{}", &text[..40]);
    assert!(
        text.ends_with(&format!("[... {} more bytes left out, of {json_len}]", json_len - max)),
        "{}",
        &text[text.len() - 80..]
    );
}
