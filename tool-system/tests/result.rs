//! ToolExecutionResult: history text of simple results, failed results' messages, item summaries.

use proptest::prelude::*;
use serde_json::json;
use tool_system::{
    BinaryContent, ContentItem, EmbeddedResource, GENERIC_FAILURE, ResourceBody, ResourceLink, ResultOrigin,
    ToolExecutionResult, UnknownContent,
};

/// `n` bytes as base64 (only the length matters to the summaries).
fn base64_of_len(n: usize) -> String {
    let mut data = "A".repeat(n.div_ceil(3) * 4);
    match n % 3 {
        1 => data.replace_range(data.len() - 2.., "=="),
        2 => data.replace_range(data.len() - 1.., "="),
        _ => {}
    }
    data
}

#[test]
fn history_text_gives_content_then_items() {
    let result = ToolExecutionResult::ok_text("the content")
        .with_item(ContentItem::text("an item"))
        .with_structured(json!({"a": 1}));
    assert_eq!(result.history_text(), "the content\nan item", "structured content only when no text came");
}

#[test]
fn history_text_falls_back_to_item_summaries() {
    let result = ToolExecutionResult::ok_items(vec![
        ContentItem::text("first line"),
        ContentItem::image(base64_of_len(12 * 1024), "image/png"),
    ])
    .with_structured(json!({"ignored": true}));
    assert_eq!(result.history_text(), "first line\n[image: image/png, 12 KB]");

    let empty_content = ToolExecutionResult::ok_text("").with_item(ContentItem::text("from the item"));
    assert_eq!(empty_content.history_text(), "from the item", "empty content counts as none");
}

#[test]
fn history_text_falls_back_to_structured_content() {
    let result = ToolExecutionResult::ok_structured(json!({"temperature": 21.5, "unit": "C"}));
    assert_eq!(result.history_text(), r#"{"temperature":21.5,"unit":"C"}"#);
}

#[test]
fn history_text_of_a_failure_is_its_error_message() {
    assert_eq!(ToolExecutionResult::failed("disk full").history_text(), "Error: disk full");
    let bare = ToolExecutionResult { success: false, error_message: None, ..ToolExecutionResult::ok() };
    assert_eq!(bare.history_text(), format!("Error: {GENERIC_FAILURE}"), "even a hand-built failure has history text");
    assert_eq!(ToolExecutionResult::ok().history_text(), "", "an empty success has empty history");
}

#[test]
fn a_failed_result_always_has_a_message() {
    for message in ["", "   ", "\n\t"] {
        let result = ToolExecutionResult::failed(message);
        assert!(!result.success);
        assert_eq!(result.error_message.as_deref(), Some(GENERIC_FAILURE));
    }
    let hand_built =
        ToolExecutionResult { success: false, error_message: Some(" ".into()), ..ToolExecutionResult::ok() };
    assert_eq!(hand_built.normalized().error_message.as_deref(), Some(GENERIC_FAILURE));
    let success = ToolExecutionResult::ok().normalized();
    assert_eq!(success.error_message, None, "normalising leaves a success alone");
}

proptest! {
    #[test]
    fn failed_never_has_an_empty_message(message in ".*") {
        let result = ToolExecutionResult::failed(message.clone());
        let kept = result.error_message.clone().unwrap();
        prop_assert!(!kept.trim().is_empty());
        prop_assert!(!result.history_text().trim().is_empty());
        if !message.trim().is_empty() {
            prop_assert_eq!(kept, message);
        }
    }
}

#[test]
fn conversions_into_results() {
    assert_eq!(ToolExecutionResult::from("text").content.as_deref(), Some("text"));
    assert_eq!(ToolExecutionResult::from(json!([1])).structured_content, Some(json!([1])));
    let ok: Result<String, std::io::Error> = Ok("fine".into());
    assert!(ToolExecutionResult::from(ok).success);
    let err: Result<String, String> = Err("went wrong".into());
    let result = ToolExecutionResult::from(err);
    assert_eq!((result.success, result.error_message.as_deref()), (false, Some("went wrong")));
    let err: Result<(), String> = Err(String::new());
    assert_eq!(ToolExecutionResult::from(err).error_message.as_deref(), Some(GENERIC_FAILURE));
}

#[test]
fn summaries_of_every_kind_of_item() {
    assert_eq!(ContentItem::audio(base64_of_len(300), "audio/wav").summary(), "[audio: audio/wav, 300 B]");
    assert_eq!(
        ContentItem::image(base64_of_len(3 * 1024 * 1024 / 2), "image/jpeg").summary(),
        "[image: image/jpeg, 1.5 MB]"
    );
    let link = ContentItem::ResourceLink(ResourceLink {
        uri: "file:///tmp/report.pdf".into(),
        name: "report.pdf".into(),
        mime_type: Some("application/pdf".into()),
        size: Some(2048),
        ..ResourceLink::default()
    });
    assert_eq!(link.summary(), "[resource link: report.pdf <file:///tmp/report.pdf>, application/pdf, 2 KB]");
    assert_eq!(link.uri(), Some("file:///tmp/report.pdf"));
    assert_eq!(link.name(), Some("report.pdf"));

    let text_resource = ContentItem::EmbeddedResource(EmbeddedResource {
        uri: "mem://note".into(),
        mime_type: Some("text/plain".into()),
        body: ResourceBody::Text("hello".into()),
        annotations: None,
        metadata: Default::default(),
    });
    assert_eq!(text_resource.summary(), "[resource: mem://note, text/plain]\nhello", "the text is kept");
    let blob_resource = ContentItem::EmbeddedResource(EmbeddedResource {
        uri: "mem://blob".into(),
        mime_type: None,
        body: ResourceBody::Blob(base64_of_len(10)),
        annotations: Some(json!({"audience": ["user"]})),
        metadata: Default::default(),
    });
    assert_eq!(blob_resource.summary(), "[resource: mem://blob, 10 B]");
    assert_eq!(blob_resource.annotations(), Some(&json!({"audience": ["user"]})));

    let binary = ContentItem::Binary(BinaryContent { data: base64_of_len(5000), ..BinaryContent::default() });
    assert_eq!(binary.summary(), "[binary: application/octet-stream, 5 KB]");

    let unknown = ContentItem::Unknown(UnknownContent {
        type_name: "hologram".into(),
        raw: json!({"type": "hologram", "mimeType": "x/holo", "uri": "holo://1"}),
        ..UnknownContent::default()
    });
    assert_eq!(unknown.summary(), "[unknown content: hologram]");
    assert_eq!(unknown.mime_type(), Some("x/holo"));
    assert_eq!(unknown.uri(), Some("holo://1"));
}

#[test]
fn results_round_trip_through_json() {
    let result = ToolExecutionResult::ok_text("t")
        .with_item(ContentItem::image("AAAA", "image/png"))
        .with_metadata("k", json!(1));
    let value = serde_json::to_value(&result).unwrap();
    assert_eq!(value["items"][0]["type"], "image");
    let back: ToolExecutionResult = serde_json::from_value(value).unwrap();
    assert_eq!(back, result);
}

#[test]
fn a_results_origin_is_typed_serialises_without_its_absent_parts_and_round_trips() {
    let origin = ResultOrigin::new(Some("weather".into()), "forecast").with_protocol_version("2025-11-25");
    let result = ToolExecutionResult::ok_text("sunny").with_origin(origin.clone());
    let value = serde_json::to_value(&result).unwrap();
    assert_eq!(value["origin"], json!({"namespace": "weather", "tool": "forecast", "protocol_version": "2025-11-25"}));
    assert!(value.get("metadata").is_none(), "where a result came from is not in its metadata: {value}");
    let back: ToolExecutionResult = serde_json::from_value(value).unwrap();
    assert_eq!(back.origin, Some(origin));

    let bare = serde_json::to_value(ToolExecutionResult::ok_text("x")).unwrap();
    assert!(bare.get("origin").is_none(), "{bare}");
    let back: ToolExecutionResult = serde_json::from_value(json!({"success": true, "origin": {"tool": "t"}})).unwrap();
    assert_eq!(back.origin, Some(ResultOrigin::new(None, "t")));
}

/// A host moves every result through several layers and keeps many: the metadata that most
/// results and items leave empty is a pointer in them, not a map inline (a result was 240 bytes,
/// an item 280 and a text item 152 with the maps inline), and it still reads, writes and
/// serialises as a map.
#[test]
fn results_and_items_hold_a_pointer_for_the_metadata_most_leave_empty() {
    let sizes = [
        ("ToolExecutionResult", std::mem::size_of::<ToolExecutionResult>(), 176),
        ("ContentItem", std::mem::size_of::<ContentItem>(), 216),
        ("TextContent", std::mem::size_of::<tool_system::TextContent>(), 88),
    ];
    for (name, size, most) in sizes {
        assert!(size <= most, "{name} is {size} bytes, more than {most}");
    }
    let plain = ToolExecutionResult::ok_text("hi");
    assert!(plain.metadata.is_empty());
    assert_eq!(serde_json::to_value(&plain).unwrap(), json!({"success": true, "content": "hi"}));
    let tagged = plain.with_metadata("trace", json!("t-1"));
    assert_eq!(tagged.metadata.get("trace"), Some(&json!("t-1")));
    let text = serde_json::to_value(&tagged).unwrap();
    assert_eq!(text, json!({"success": true, "content": "hi", "metadata": {"trace": "t-1"}}));
    let back: ToolExecutionResult = serde_json::from_value(text).unwrap();
    assert_eq!(back, tagged);
    assert!(ToolExecutionResult::cancelled("t").is_cancelled(), "read through the metadata");
}
