//! A page of tools decoded with each tool's input schema taken as text where it lies.
//!
//! A tool's `inputSchema` is most of the tool, and a
//! [`SharedSchema`](super::SharedSchema) keeps it as the JSON text it came as. Decoded the
//! usual way, each schema is parsed as a `RawValue` only to find where it ends, although the
//! page's text is known to be JSON already (the codec checked it, or serde_json parsed it, when
//! it became the response's result). Here the schemas are found by the page's structure
//! ([`element_members`]), which is exact on JSON text; the page is decoded as usual with `{}` in each schema's
//! place (each taken as an empty cell, not as text: [`SchemasCutOut`]); and each tool's cell is
//! given its schema's text. A page with a tool whose schema is not cut out (not an object,
//! absent, or its member's name escaped), or that the scan and the decoder see differently, is
//! decoded the usual way, whose errors are the ones reported.

use super::{ListToolsResult, SchemasCutOut};
use crate::scan::{element_members, with_placeholders};

/// Decode a `tools/list` result, each tool's input schema taken from `raw`'s text as it is.
pub(crate) fn decode_tool_page(raw: &crate::RawJson) -> Result<ListToolsResult, serde_json::Error> {
    let json = raw.get();
    let usual = || serde_json::from_str::<ListToolsResult>(json);
    let Some(elements) = element_members(json, "tools", ["inputSchema"]) else { return usual() };
    // Every tool's schema, when each is an object: a page with anything else (a schema that is
    // not an object, a tool without one or with its name escaped, an element that is not an
    // object) is left for the usual decoding to take or refuse.
    let Some(schemas) = elements
        .iter()
        .map(|[span]| span.filter(|&(start, _)| json.as_bytes()[start] == b'{'))
        .collect::<Option<Vec<_>>>()
        .filter(|schemas| !schemas.is_empty())
    else {
        return usual();
    };
    // The page without its schemas, each an empty object.
    let rest = with_placeholders(json, &schemas, "{}");
    let decoded = {
        let _cut_out = SchemasCutOut::hold();
        serde_json::from_str::<ListToolsResult>(&rest)
    };
    // A schema given twice stays in `rest` after the first, and the decoder refuses the tool.
    let Ok(mut page) = decoded else { return usual() };
    if page.tools.len() != schemas.len() {
        return usual();
    }
    for (tool, (start, end)) in page.tools.iter_mut().zip(schemas) {
        tool.input_schema.set_object_text(&json[start..end]);
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decode(json: &str) -> Result<ListToolsResult, serde_json::Error> {
        decode_tool_page(&crate::RawJson::from_string(json.to_owned()).expect("the test's page is JSON"))
    }

    /// The page decoded here and the usual way: the same tools, each schema the same text.
    fn agrees(json: &str) -> ListToolsResult {
        let page = decode(json).unwrap_or_else(|e| panic!("{json}: {e}"));
        let usual: ListToolsResult = serde_json::from_str(json).expect("decodes the usual way");
        assert_eq!(page, usual, "{json}");
        for (tool, expected) in page.tools.iter().zip(&usual.tools) {
            assert_eq!(tool.input_schema.raw_json(), expected.input_schema.raw_json(), "{json}");
            assert!(!tool.input_schema.is_parsed(), "{json}: the schema was parsed");
            assert_eq!(tool.input_schema.as_value(), expected.input_schema.as_value(), "{json}");
        }
        page
    }

    #[test]
    fn each_tool_gets_its_schema_as_the_text_it_came_as() {
        let schema = r#"{"type":"object","properties":{"a":{"type":"integer","description":"A \"quoted\" {brace}"},"b":{"type":"string"}},"required":["a","b"]}"#;
        let page = format!(
            r#"{{"tools":[{{"name":"one","description":"d","inputSchema":{schema}}}, {{ "inputSchema" : {{ }} , "name":"two" }},{{"name":"three","inputSchema":{{"type":"object","properties":{{"inputSchema":{{"type":"object"}}}}}}}}],"nextCursor":"c2","_meta":{{"k":1}},"x":[{{"inputSchema":{{}}}}]}}"#
        );
        let decoded = agrees(&page);
        assert_eq!(decoded.tools[0].input_schema.raw_json(), Some(schema));
        assert_eq!(decoded.tools[1].input_schema.raw_json(), Some("{ }"));
        assert_eq!(decoded.tools[2].input_schema["properties"]["inputSchema"], json!({"type": "object"}));
        assert_eq!(decoded.next_cursor.as_deref(), Some("c2"));
        assert_eq!(decoded.extra["x"], json!([{"inputSchema": {}}]));
        // Encoded, each schema is written as its text.
        assert_eq!(serde_json::from_str::<serde_json::Value>(&page).unwrap(), serde_json::to_value(&decoded).unwrap());
        // Pages with no tool, no schema to cut, or tools in a member written with an escape.
        for page in [
            r#"{"tools":[]}"#,
            r#"{"tools":[],"nextCursor":"x"}"#,
            r#"{"nextCursor":null,"tools":[{"name":"a","input\u0053chema":{"type":"object"}}]}"#,
            r#"{"to\u006fls":[{"name":"a","inputSchema":{"type":"object"}}]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{}},{"name":"b","input\u0053chema":{"a":[1,{"b":"]"}]}}]}"#,
        ] {
            agrees(page);
        }
    }

    #[test]
    fn a_page_the_usual_decoding_refuses_is_refused_with_its_error() {
        for page in [
            // Not an object schema, a tool that is not an object, a member twice.
            r#"{"tools":[{"name":"a","inputSchema":{}},{"name":"b","inputSchema":[{"type":"object"}]}]}"#,
            r#"{"tools":[{"name":"a","inputSchema":"{}"}]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{}},7]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{},"inputSchema":{"type":"object"}}]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{"type":"object"},"input\u0053chema":{}}]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{}}],"tools":[]}"#,
            // A tool without a name, or without a schema; `tools` not an array.
            r#"{"tools":[{"inputSchema":{"type":"object"}}]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{}},{"name":"b"}]}"#,
            r#"{"tools":{"name":"a","inputSchema":{}}}"#,
            r#"{"nextCursor":5,"tools":[{"name":"a","inputSchema":{"type":"object"}}]}"#,
        ] {
            let error = decode(page).expect_err(page).to_string();
            let usual = serde_json::from_str::<ListToolsResult>(page).expect_err(page).to_string();
            assert_eq!(error, usual, "{page}");
            // The decode of the page with its schemas cut out is over, refused or not: a schema
            // decoded on this thread since is read as its text again.
            let tool: super::super::Tool = serde_json::from_str(r#"{"name":"t","inputSchema":{"a":1}}"#).unwrap();
            assert_eq!(tool.input_schema.raw_json(), Some(r#"{"a":1}"#), "after {page}");
            let refused = serde_json::from_str::<super::super::Tool>(r#"{"name":"t","inputSchema":5}"#);
            assert!(refused.is_err(), "after {page}: a schema that is not an object was taken");
        }
    }
}
