use base64::Engine as _;
use mcp_protocol::types::content::{BlobResourceContents, EmbeddedResource, ImageContent, TextResourceContents};
use mcp_protocol::types::prompts::PromptArgument;

use super::*;

fn tool(name: &str, description: &str) -> ToolEntry {
    let input = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    ToolEntry {
        server: "demo".into(),
        llm_name: Some(format!("demo_{name}")),
        tool: Tool {
            name: name.into(),
            description: Some(description.into()),
            input_schema: input.as_object().unwrap().clone().into(),
            ..Default::default()
        },
    }
}

fn png_base64() -> String {
    base64::engine::general_purpose::STANDARD.encode([0x89, b'P', b'N', b'G', 0, 1, 2, 3])
}

#[test]
fn tools_table_and_json() {
    let entries = [tool("echo", "Return the given text unchanged."), tool("add", "Add a and b.\nTwo numbers.")];
    assert_eq!(
        tools_table(&entries, None),
        "NAME  SERVER  LLM NAME   DESCRIPTION\n\
         echo  demo    demo_echo  Return the given text unchanged.\n\
         add   demo    demo_add   Add a and b. Two numbers.\n"
    );
    let doc = tools_json(&entries);
    let first = &doc["tools"][0];
    let mut keys: Vec<&str> = first.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["description", "inputSchema", "llmName", "name", "outputSchema", "server", "title"]);
    assert_eq!(first["llmName"], "demo_echo");
    assert!(first["outputSchema"].is_null() && first["title"].is_null(), "absent fields are null: {first}");
    let schemas = tools_schemas(&entries[..1]);
    assert!(schemas.starts_with("echo (server demo, LLM name demo_echo)\n  Return the given text unchanged.\n"));
    assert!(schemas.contains("  input schema:\n    {\n      \"type\": \"object\""), "{schemas}");
}

#[test]
fn an_app_only_tool_has_no_llm_name() {
    let mut app = tool("refresh", "Refresh the view.");
    app.llm_name = None;
    let table = tools_table(std::slice::from_ref(&app), None);
    assert!(table.contains("refresh  demo    (app only)  Refresh the view."), "{table}");
    assert!(tools_schemas(std::slice::from_ref(&app)).starts_with("refresh (server demo, (app only))\n"));
    assert!(tools_json(&[app])["tools"][0]["llmName"].is_null());
}

#[test]
fn prompts_resources_and_templates() {
    let prompt = Prompt {
        name: "review_code".into(),
        description: Some("Review code".into()),
        arguments: Some(vec![
            PromptArgument { name: "code".into(), required: Some(true), ..Default::default() },
            PromptArgument { name: "language".into(), ..Default::default() },
        ]),
        ..Default::default()
    };
    let prompts = [Served { server: "demo".into(), item: prompt }];
    assert!(prompts_table(&prompts, None).contains("review_code  demo    code, language?  Review code"));
    let doc = prompts_json(&prompts);
    assert_eq!(doc["prompts"][0]["arguments"][1], json!({"name": "language", "description": null, "required": false}));

    let resource = Resource {
        uri: "demo://readme".into(),
        name: "readme".into(),
        mime_type: Some("text/markdown".into()),
        ..Default::default()
    };
    let resources = [Served { server: "demo".into(), item: resource }];
    assert!(resources_table(&resources, None).contains("demo://readme  demo    text/markdown  readme"));
    assert_eq!(resources_json(&resources)["resources"][0]["mimeType"], "text/markdown");

    let template = ResourceTemplate {
        uri_template: "demo://greeting/{name}".into(),
        name: "greeting".into(),
        ..Default::default()
    };
    let templates = [Served { server: "demo".into(), item: template }];
    assert!(templates_table(&templates, None).contains("demo://greeting/{name}  demo    -     greeting"));
    assert_eq!(templates_json(&templates)["templates"][0]["uriTemplate"], "demo://greeting/{name}");
}

#[test]
fn call_results_summarise_and_save_media() {
    let result = CallToolResult {
        content: vec![
            ContentBlock::Image(ImageContent {
                data: png_base64(),
                mime_type: "image/png".into(),
                ..Default::default()
            }),
            ContentBlock::text("A picture."),
            ContentBlock::Resource(EmbeddedResource {
                resource: ResourceContents::Blob(BlobResourceContents {
                    uri: "demo://files/report.pdf".into(),
                    mime_type: Some("application/pdf".into()),
                    blob: "aGk=".into(),
                    ..Default::default()
                }),
                annotations: None,
                meta: None,
                extra: Default::default(),
            }),
        ],
        ..Default::default()
    };
    assert_eq!(
        call_result_text(&result, &[]),
        "[image: image/png, 8 B]\nA picture.\n[resource demo://files/report.pdf] [blob: application/pdf, 2 B]\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let saved = save_call_media(dir.path(), "image", &result).unwrap();
    assert_eq!(
        saved,
        [
            Saved { index: 0, path: dir.path().join("image-1.png") },
            Saved { index: 2, path: dir.path().join("report.pdf") },
        ]
    );
    assert_eq!(std::fs::read(dir.path().join("report.pdf")).unwrap(), b"hi");
    let text = call_result_text(&result, &saved);
    assert!(text.starts_with(&format!("[image: image/png, 8 B] saved to {}\n", saved[0].path.display())), "{text}");

    let doc = call_result_json("demo", "image", &result, &saved);
    assert_eq!(doc["isError"], false);
    assert_eq!(doc["content"][0]["type"], "image");
    assert_eq!(doc["saved"][1]["index"], 2);
    assert!(doc["structuredContent"].is_null());

    let structured = CallToolResult { structured_content: Some(json!({"sum": 3})), ..Default::default() };
    assert_eq!(call_result_text(&structured, &[]), "{\n  \"sum\": 3\n}\n");
    let failed =
        CallToolResult { content: vec![ContentBlock::text("boom")], is_error: Some(true), ..Default::default() };
    assert_eq!(call_result_json("s", "t", &failed, &[])["isError"], true);
}

#[test]
fn read_results_and_prompts() {
    let contents = [
        ResourceContents::Text(TextResourceContents {
            uri: "demo://a".into(),
            text: "alpha".into(),
            ..Default::default()
        }),
        ResourceContents::Blob(BlobResourceContents {
            uri: "demo://logo.png".into(),
            mime_type: Some("image/png".into()),
            blob: png_base64(),
            ..Default::default()
        }),
    ];
    assert_eq!(read_result_text(&contents[..1], &[]), "alpha\n");
    let dir = tempfile::tempdir().unwrap();
    let saved = save_read_media(dir.path(), &contents).unwrap();
    assert_eq!(saved, [Saved { index: 1, path: dir.path().join("logo.png") }]);
    let text = read_result_text(&contents, &saved);
    assert!(text.starts_with("== demo://a ==\nalpha\n== demo://logo.png ==\n[blob: image/png"), "{text}");
    assert!(text.contains("[blob: image/png, 8 B] saved to"), "{text}");
    assert_eq!(read_result_json("demo", "demo://a", &contents[..1], &[])["contents"][0]["text"], "alpha");

    let prompt = GetPromptResult {
        description: Some("Code review".into()),
        messages: vec![mcp_protocol::types::prompts::PromptMessage {
            role: mcp_protocol::types::common::Role::User,
            content: ContentBlock::text("Please review."),
            extra: Default::default(),
        }],
        ..Default::default()
    };
    assert_eq!(prompt_result_text(&prompt), "# Code review\n\nuser: Please review.\n");
    assert_eq!(prompt_result_json("demo", "review_code", &prompt)["messages"][0]["role"], "user");
}

#[test]
fn status_rows() {
    let rows = [
        StatusRow {
            auth: None,
            grant: None,
            name: "demo".into(),
            state: "ready".into(),
            transport: "stdio".into(),
            protocol_version: Some("2026-07-28".into()),
            era: Some("modern".into()),
            tools: 8,
            prompts: 1,
            resources: 2,
            templates: 1,
            last_error: None,
            warnings: Vec::new(),
            notices: Vec::new(),
            hidden: Vec::new(),
        },
        StatusRow {
            auth: None,
            name: "broken".into(),
            state: "failed".into(),
            last_error: Some("exited".into()),
            ..Default::default()
        },
        StatusRow {
            name: "m2m".into(),
            state: "ready".into(),
            grant: Some("client_credentials".into()),
            auth: Some("client credentials (private_key_jwt), DPoP: authorized".into()),
            ..Default::default()
        },
        StatusRow {
            name: "desktop".into(),
            state: "degraded".into(),
            warnings: vec!["prompts/list failed: Method not found".into()],
            hidden: vec![
                HiddenTool { tool: "read_file".into(), hidden_by: "files".into() },
                HiddenTool { tool: "list_directory".into(), hidden_by: "files".into() },
            ],
            ..Default::default()
        },
    ];
    let table = status_table(&rows, None);
    assert!(
        table.contains("demo     ready     stdio      2026-07-28 (modern)  8      1        2          1          -"),
        "{table}"
    );
    assert!(table.contains("broken   failed               -"), "{table}");
    let doc = status_json(&rows);
    assert_eq!(doc["servers"][0]["protocolVersion"], "2026-07-28");
    assert_eq!(doc["servers"][1]["lastError"], "exited");
    assert!(doc["servers"][1]["era"].is_null());
    assert!(table.contains("client credentials (private_key_jwt), DPoP: authorized"), "{table}");
    assert_eq!(doc["servers"][2]["grant"], "client_credentials");
    assert!(doc["servers"][0]["grant"].is_null());
    // Degraded says why; hidden tools are counted with who hides them, and listed in JSON.
    let desktop = table.lines().find(|l| l.starts_with("desktop")).unwrap();
    assert!(
        desktop.contains("2 (by files)") && desktop.ends_with("prompts/list failed: Method not found"),
        "{desktop}"
    );
    assert_eq!(doc["servers"][3]["hidden"][1], json!({"tool": "list_directory", "hiddenBy": "files"}));
    assert_eq!(doc["servers"][3]["warnings"][0], "prompts/list failed: Method not found");
}
