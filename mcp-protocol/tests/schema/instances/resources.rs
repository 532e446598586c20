//! Resources: listing resources and templates, reading, subscribing, and the updated
//! notification.

use mcp_protocol::types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceParams, ReadResourceResult, ResourceTemplate,
    ResourceUpdatedParams, SubscribeParams,
};

use super::misc::input_responses;
use super::{
    Rev, Variant, annotations, cache_hints, complete, content, icons, item_meta, notification_meta, request_meta,
    result_meta,
};

/// `resources/list` result.
pub fn list_resources_result(rev: Rev) -> Vec<Variant<ListResourcesResult>> {
    let build = |full: bool| {
        let (ttl_ms, cache_scope) = cache_hints(rev);
        ListResourcesResult {
            resources: vec![content::resource_link(rev, full)],
            next_cursor: full.then(|| "page-2".to_owned()),
            ttl_ms,
            cache_scope,
            result_type: complete(rev),
            meta: result_meta(rev, full),
            ..Default::default()
        }
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// A resource template; `full` fills every member the revision has.
pub fn resource_template(rev: Rev, full: bool) -> ResourceTemplate {
    let mut template = ResourceTemplate {
        uri_template: "file:///project/{path}".to_owned(),
        name: "project-files".to_owned(),
        ..Default::default()
    };
    if full {
        template.title = (rev >= Rev::V2025_06_18).then(|| "Project files".to_owned());
        template.description = Some("Any file of the project".to_owned());
        template.mime_type = Some("text/plain".to_owned());
        template.icons = icons(rev, true);
        template.annotations = annotations(rev, true).map(Box::new);
        template.meta = item_meta(rev, true).map(Box::new);
    }
    template
}

/// `resources/templates/list` result.
pub fn list_resource_templates_result(rev: Rev) -> Vec<Variant<ListResourceTemplatesResult>> {
    let build = |full: bool| {
        let (ttl_ms, cache_scope) = cache_hints(rev);
        ListResourceTemplatesResult {
            resource_templates: vec![resource_template(rev, full)],
            next_cursor: full.then(|| "page-2".to_owned()),
            ttl_ms,
            cache_scope,
            result_type: complete(rev),
            meta: result_meta(rev, full),
            ..Default::default()
        }
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `resources/read` params; the maximal 2026-07-28 instance is a retry with input responses.
pub fn read_resource_params(rev: Rev) -> Vec<Variant<Option<ReadResourceParams>>> {
    let build = |full: bool| {
        let mut params = ReadResourceParams {
            uri: "file:///project/README.md".to_owned(),
            meta: request_meta(rev, full),
            ..Default::default()
        };
        if full && rev.is_modern() {
            params.input_responses = Some(input_responses(rev));
            params.request_state = Some("state-1".to_owned());
        }
        Some(params)
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// A completed `resources/read` result: text and blob contents.
pub fn read_resource_result(rev: Rev) -> Vec<Variant<ReadResourceResult>> {
    let build = |full: bool| {
        let (ttl_ms, cache_scope) = cache_hints(rev);
        let contents = if full {
            vec![content::resource_contents(rev, true, false), content::resource_contents(rev, true, true)]
        } else {
            vec![content::resource_contents(rev, false, false)]
        };
        ReadResourceResult {
            contents,
            ttl_ms,
            cache_scope,
            result_type: complete(rev),
            meta: result_meta(rev, full),
            ..Default::default()
        }
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `resources/subscribe` and `resources/unsubscribe` params (legacy era).
pub fn subscribe_params(rev: Rev) -> Vec<Variant<Option<SubscribeParams>>> {
    let build = |full: bool| {
        Some(SubscribeParams {
            uri: "file:///project/README.md".to_owned(),
            meta: request_meta(rev, full),
            ..Default::default()
        })
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `notifications/resources/updated` params.
pub fn resource_updated_params(rev: Rev) -> Vec<Variant<Option<ResourceUpdatedParams>>> {
    let build = |full: bool| {
        Some(ResourceUpdatedParams {
            uri: "file:///project/README.md".to_owned(),
            meta: notification_meta(rev, full),
            ..Default::default()
        })
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}
