//! Elicitation (2025-06-18+): form mode with every member kind of the revision, URL mode
//! (2025-11-25+), the user's answer and the URL-completion notification.

use mcp_protocol::types::elicitation::{
    BooleanSchema, ElicitAction, ElicitFormParams, ElicitParams, ElicitResult, ElicitUrlParams,
    ElicitationCompleteParams, EnumOption, FormMode, LegacyTitledEnumSchema, NumberSchema, NumberType,
    PrimitiveSchemaDefinition as P, RequestedSchema, SchemaProperties, StringFormat, StringSchema, TitledEnumItems,
    TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledEnumItems, UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema, UrlMode,
};
use mcp_protocol::types::meta::Meta;
use serde_json::{Number, json};

use super::tasks::task_metadata;
use super::{Rev, Variant, object, vendor_meta};

fn text(s: &str) -> Option<String> {
    Some(s.to_owned())
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

fn options() -> Vec<EnumOption> {
    let option = |value: &str, title: &str| EnumOption {
        value: value.to_owned(),
        title: title.to_owned(),
        ..Default::default()
    };
    vec![option("c", "Celsius"), option("f", "Fahrenheit")]
}

/// One form member of every kind the revision has, each with every member of its kind.
fn members(rev: Rev) -> SchemaProperties {
    // Defaults on every kind and the select kinds came with 2025-11-25.
    let new = rev >= Rev::V2025_11_25;
    let mut members = vec![
        (
            "name",
            P::String(StringSchema {
                title: text("Name"),
                description: text("Your full name"),
                min_length: Some(1),
                max_length: Some(100),
                format: None,
                default: new.then(|| "Ada".to_owned()),
                ..Default::default()
            }),
        ),
        ("email", P::String(StringSchema { format: Some(StringFormat::Email), ..Default::default() })),
        (
            "age",
            P::Number(NumberSchema {
                number_type: NumberType::Integer,
                title: text("Age"),
                description: text("Age in years"),
                minimum: Some(Number::from(0)),
                maximum: Some(Number::from(150)),
                default: new.then(|| Number::from(30)),
                ..Default::default()
            }),
        ),
        ("score", P::Number(NumberSchema { number_type: NumberType::Number, ..Default::default() })),
        (
            "subscribe",
            P::Boolean(BooleanSchema {
                title: text("Subscribe"),
                description: text("Receive the newsletter"),
                default: Some(false),
                ..Default::default()
            }),
        ),
        (
            "unit",
            P::LegacyTitledEnum(LegacyTitledEnumSchema {
                title: text("Unit"),
                description: text("Temperature unit"),
                values: strings(&["c", "f"]),
                enum_names: Some(strings(&["Celsius", "Fahrenheit"])),
                default: new.then(|| "c".to_owned()),
                ..Default::default()
            }),
        ),
    ];
    if new {
        members.push((
            "color",
            P::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
                title: text("Color"),
                description: text("Favourite color"),
                values: strings(&["red", "green"]),
                default: text("red"),
                ..Default::default()
            }),
        ));
        members.push((
            "scale",
            P::TitledSingleSelect(TitledSingleSelectEnumSchema {
                title: text("Scale"),
                description: text("Temperature scale"),
                one_of: options(),
                default: text("c"),
                ..Default::default()
            }),
        ));
        members.push((
            "toppings",
            P::UntitledMultiSelect(UntitledMultiSelectEnumSchema {
                title: text("Toppings"),
                description: text("Pizza toppings"),
                min_items: Some(1),
                max_items: Some(2),
                items: UntitledEnumItems {
                    item_type: "string".to_owned(),
                    values: strings(&["cheese", "ham"]),
                    ..Default::default()
                },
                default: Some(strings(&["cheese"])),
                ..Default::default()
            }),
        ));
        members.push((
            "scales",
            P::TitledMultiSelect(TitledMultiSelectEnumSchema {
                title: text("Scales"),
                description: text("Temperature scales"),
                min_items: Some(1),
                max_items: Some(2),
                items: TitledEnumItems { any_of: options(), ..Default::default() },
                default: Some(strings(&["c"])),
                ..Default::default()
            }),
        ));
    }
    SchemaProperties(members.into_iter().map(|(n, d)| (n.to_owned(), d)).collect())
}

/// The `_meta` of elicitation params: declared in 2025-11-25 only.
fn params_meta(rev: Rev) -> Option<Meta> {
    (rev == Rev::V2025_11_25).then(|| Meta::new().with(Meta::PROGRESS_TOKEN, "progress-3"))
}

/// `elicitation/create` params: a form (minimal, maximal) and a URL (maximal, 2025-11-25+).
pub fn elicit_params(rev: Rev) -> Vec<Variant<Option<ElicitParams>>> {
    let minimal = ElicitFormParams {
        message: "Who are you?".to_owned(),
        requested_schema: RequestedSchema::default(),
        ..Default::default()
    };
    let modes = rev >= Rev::V2025_11_25;
    let form = ElicitFormParams {
        mode: modes.then_some(FormMode),
        message: "Please fill in your profile".to_owned(),
        requested_schema: RequestedSchema {
            schema: modes.then(|| "https://json-schema.org/draft/2020-12/schema".to_owned()),
            properties: members(rev),
            required: Some(strings(&["name"])),
            ..Default::default()
        },
        task: (rev == Rev::V2025_11_25).then(task_metadata),
        meta: params_meta(rev),
        ..Default::default()
    };
    let mut variants =
        vec![Variant::min(Some(ElicitParams::Form(minimal))), Variant::max(Some(ElicitParams::Form(form)))];
    if modes {
        let url = ElicitUrlParams {
            mode: UrlMode,
            message: "Authorize access to your calendar".to_owned(),
            url: "https://example.com/authorize?session=abc".to_owned(),
            // Required in 2025-11-25, gone in 2026-07-28.
            elicitation_id: (rev == Rev::V2025_11_25).then(|| "elicit-1".to_owned()),
            task: (rev == Rev::V2025_11_25).then(task_metadata),
            meta: params_meta(rev),
            ..Default::default()
        };
        variants.push(Variant::max_as("maximal (url mode)", Some(ElicitParams::Url(url))));
    }
    variants
}

/// `elicitation/create` result: a decline (minimal) and an accept with content of every value
/// kind (maximal).
pub fn elicit_result(rev: Rev) -> Vec<Variant<ElicitResult>> {
    let mut content = object(json!({"name": "Ada", "age": 36, "subscribe": true}));
    if rev >= Rev::V2025_11_25 {
        content.insert("toppings".to_owned(), json!(["cheese", "ham"]));
    }
    let accept = ElicitResult {
        // An input response (2026-07-28) has no `_meta`.
        meta: (!rev.is_modern()).then(vendor_meta),
        ..ElicitResult::accept(content)
    };
    assert_eq!(accept.action, ElicitAction::Accept);
    vec![Variant::min(ElicitResult::decline()), Variant::max(accept)]
}

/// `notifications/elicitation/complete` params (2025-11-25).
pub fn elicitation_complete_params(_rev: Rev) -> Vec<Variant<Option<ElicitationCompleteParams>>> {
    let params = ElicitationCompleteParams { elicitation_id: "elicit-1".to_owned(), ..Default::default() };
    vec![Variant::min(Some(params.clone())), Variant::max(Some(params))]
}
