use super::*;
use mcp_protocol::ProtocolVersion;
use mcp_protocol::types::tools::Tool;
use serde_json::json;
use tool_system::{ResultOrigin, ToolSpec};

fn tool(name: &str) -> Tool {
    serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"}})).unwrap()
}

fn inventory(tools: &[&str], templates: &[&str]) -> Inventory {
    Inventory {
        tools: Arc::new(tools.iter().map(|t| tool(t)).collect()),
        resource_templates: Arc::new(
            templates.iter().map(|t| serde_json::from_value(json!({"uriTemplate": t, "name": t})).unwrap()).collect(),
        ),
        ..Default::default()
    }
}

fn build(servers: &[(&str, Inventory, ToolFilter)], reserved: &[&str]) -> Routing {
    let inventories: Vec<Arc<Inventory>> = servers.iter().map(|(_, i, _)| Arc::new(i.clone())).collect();
    let names: Vec<Arc<str>> = servers.iter().map(|(n, _, _)| Arc::from(*n)).collect();
    let inputs = servers.iter().zip(&names).zip(&inventories).map(|(((_, _, filter), server), inventory)| {
        RoutingInput { server, inventory, filter, visibility: ToolVisibility::Visible }
    });
    Routing::build(inputs, &reserved.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &Routing::default())
}

#[test]
fn first_in_config_order_wins_and_every_loss_is_reported() {
    let deny = ToolFilter { allow: None, deny: vec!["secret".into()] };
    let r = build(
        &[
            ("a", inventory(&["x", "y", "x"], &[]), ToolFilter::default()),
            ("b", inventory(&["y", "z", "reserved", "secret"], &[]), deny),
        ],
        &["reserved"],
    );
    let owners: Vec<_> = r.tools().iter().map(|t| (t.tool().name.as_str(), &**t.server())).collect();
    assert_eq!(owners, [("x", "a"), ("y", "a"), ("z", "b")]);
    assert_eq!(&**r.tool("y").unwrap().server(), "a");
    let kinds: Vec<_> = r.conflicts().iter().map(|c| (c.name.as_str(), c.server.as_str(), c.kind.clone())).collect();
    assert_eq!(
        kinds,
        [
            ("x", "a", ConflictKind::DuplicateInServer),
            ("y", "b", ConflictKind::TakenBy("a".into())),
            ("reserved", "b", ConflictKind::Reserved),
        ],
        "a denied tool is dropped silently: the config asked for it"
    );
    assert_eq!(r.counts("a"), [2, 0, 0, 0]);
    assert_eq!(
        r.conflicts()[1].to_string(),
        "tool \"y\" of server \"b\" is skipped: server \"a\", earlier in the config, offers it too"
    );
}

#[test]
fn concrete_uris_go_to_the_most_specific_matching_template() {
    let r = build(
        &[
            ("wide", inventory(&[], &["file:///{+path}"]), ToolFilter::default()),
            ("narrow", inventory(&[], &["file:///logs/{name}"]), ToolFilter::default()),
            ("broken", inventory(&[], &["file:///{unclosed"]), ToolFilter::default()),
        ],
        &[],
    );
    assert_eq!(r.resource_server("file:///logs/app.log").map(|s| &**s), Some("narrow"));
    assert_eq!(r.resource_server("file:///etc/hosts").map(|s| &**s), Some("wide"));
    assert_eq!(r.resource_server("http://elsewhere/x"), None);
    assert_eq!(r.templates().len(), 3, "a template that does not parse is listed, not routed");
}

#[test]
fn a_rebuild_keeps_the_routes_of_unchanged_inventories_and_reports_clashes_alike() {
    let names: Vec<Arc<str>> = ["a", "b"].map(Arc::from).to_vec();
    let a = Arc::new(inventory(&["x", "y", "y"], &[]));
    let b = Arc::new(inventory(&["y", "z", "z"], &[]));
    let filter = ToolFilter::default();
    let input =
        |server, inventory| RoutingInput { server, inventory, filter: &filter, visibility: ToolVisibility::Visible };
    let lost = |table: &Routing, previous: &Routing| -> Vec<String> {
        table.lost_tools(previous).map(|t| format!("{}:{}", t.server(), t.tool().name)).collect()
    };
    let first = Routing::build([input(&names[0], &a)], &[], &Routing::default());
    assert_eq!((first.kept, lost(&first, &Routing::default()).len()), (0, 0));
    let check = first.tool("x").unwrap().input_check().expect("x's schema compiles");
    // `a` unchanged, `b` new: only b's tool is made anew; a's routes are the same, with what
    // they made so far.
    let second = Routing::build([input(&names[0], &a), input(&names[1], &b)], &[], &first);
    assert!(first.tool("x").unwrap().same_as(second.tool("x").unwrap()));
    assert!(first.tool("y").unwrap().same_as(second.tool("y").unwrap()));
    assert!(Arc::ptr_eq(&second.tool("x").unwrap().input_check().unwrap(), &check), "x's check compiled again");
    assert_eq!(second.kept, 2, "z is the only new route");
    assert!(lost(&second, &first).is_empty());
    let kinds: Vec<_> =
        second.conflicts().iter().map(|c| (c.name.as_str(), c.server.as_str(), c.kind.clone())).collect();
    assert_eq!(
        kinds,
        [
            ("y", "a", ConflictKind::DuplicateInServer),
            ("y", "b", ConflictKind::TakenBy("a".into())),
            ("z", "b", ConflictKind::DuplicateInServer),
        ]
    );
    assert_eq!((second.counts("a"), second.counts("b")), ([2, 0, 0, 0], [1, 0, 0, 0]));
    // A new inventory of `a` (its lists changed) gets new routes.
    let a2 = Arc::new(inventory(&["x"], &[]));
    let third = Routing::build([input(&names[0], &a2), input(&names[1], &b)], &[], &second);
    assert!(!second.tool("x").unwrap().same_as(third.tool("x").unwrap()));
    assert!(!Arc::ptr_eq(&third.tool("x").unwrap().input_check().unwrap(), &check));
    assert_eq!(&**third.tool("y").unwrap().server(), "b", "y passes to b once a no longer lists it");
    assert!(third.conflicts().iter().all(|c| c.kind == ConflictKind::DuplicateInServer));
    assert!(lost(&third, &second).is_empty(), "y moved to b: not lost");
    // Without `a`, x is routed nowhere: lost, with the server that had it.
    let fourth = Routing::build([input(&names[1], &b)], &[], &third);
    assert_eq!(lost(&fourth, &third), ["a:x"]);
    assert_eq!(
        (fourth.tool("x").map(|t| t.server().clone()), fourth.tool("z").map(|t| t.tool().name.clone())),
        (None, Some("z".into()))
    );
}

#[test]
fn every_tool_of_a_large_table_is_found_by_its_name_and_no_other() {
    let names: Vec<String> = (0..3000).map(|i| format!("tool_{i}")).collect();
    let listed: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = build(&[("big", inventory(&listed, &[]), ToolFilter::default())], &[]);
    for name in &names {
        assert_eq!(&r.tool(name).unwrap().tool().name, name);
    }
    for absent in ["tool_3000", "tool_", "", "tool_0 "] {
        assert!(r.tool(absent).is_none(), "{absent:?}");
    }
}

#[test]
fn templates_are_claimed_as_tools_are_a_repeat_within_a_server_told_from_a_clash() {
    let r = build(
        &[
            ("a", inventory(&[], &["file:///{a}", "file:///{a}"]), ToolFilter::default()),
            ("b", inventory(&[], &["file:///{a}", "file:///{a}", "mem:///{b}"]), ToolFilter::default()),
        ],
        &[],
    );
    let kinds: Vec<_> =
        r.conflicts().iter().map(|c| (c.what, c.name.as_str(), c.server.as_str(), c.kind.clone())).collect();
    assert_eq!(
        kinds,
        [
            ("template", "file:///{a}", "a", ConflictKind::DuplicateInServer),
            ("template", "file:///{a}", "b", ConflictKind::TakenBy("a".into())),
            ("template", "file:///{a}", "b", ConflictKind::DuplicateInServer),
        ]
    );
    assert_eq!((r.counts("a")[3], r.counts("b")[3]), (1, 1));
}

#[test]
fn counts_add_every_run_of_a_servers_entries_whichever_buffer_names_it() {
    // The third input names server `a` again with a buffer of its own: its tool counts for `a`.
    let r = build(
        &[
            ("a", inventory(&["x", "y"], &["file:///{a}"]), ToolFilter::default()),
            ("b", inventory(&["z"], &["mem:///{b}", "mem:///{c}"]), ToolFilter::default()),
            ("a", inventory(&["w"], &[]), ToolFilter::default()),
        ],
        &[],
    );
    assert_eq!(r.counts("a"), [3, 0, 0, 1]);
    assert_eq!(r.counts("b"), [1, 0, 0, 2]);
    assert_eq!(r.counts("c"), [0, 0, 0, 0]);
    assert_eq!(r.all_counts().len(), 2);
}

#[test]
fn a_route_gives_each_result_the_origin_of_the_session_that_served_it_sharing_its_texts() {
    let r = build(&[("lab", inventory(&["probe"], &[]), ToolFilter::default())], &[]);
    let route = r.tool("probe").unwrap();
    let legacy = ProtocolVersion::parse("2025-11-25");
    let first = route.origin(Some((&legacy, Some("s-1"))));
    assert_eq!(
        first,
        ResultOrigin::new(Some("lab".into()), "probe").with_protocol_version("2025-11-25").with_session_id("s-1")
    );
    // The next result of the same session shares every text: no allocation a call.
    let second = route.origin(Some((&legacy, Some("s-1"))));
    assert!(second.tool.shares_buffer_with(&first.tool));
    assert!(second.session_id.as_ref().unwrap().shares_buffer_with(first.session_id.as_ref().unwrap()));
    assert!(second.protocol_version.as_ref().unwrap().shares_buffer_with(first.protocol_version.as_ref().unwrap()));
    assert!(second.namespace.as_ref().unwrap().shares_buffer_with(first.namespace.as_ref().unwrap()));

    // Another session (a reconnection) or revision gets its own, and keeps the tool's name.
    let renewed = route.origin(Some((&legacy, Some("s-2"))));
    assert_eq!(renewed.session_id.as_deref(), Some("s-2"));
    assert!(renewed.tool.shares_buffer_with(&first.tool));
    let modern = ProtocolVersion::parse("2026-07-28");
    let stateless = route.origin(Some((&modern, None)));
    assert_eq!((stateless.protocol_version.as_deref(), stateless.session_id.as_deref()), (Some("2026-07-28"), None));

    // A call that no session served (it failed before) names the tool and server only, and
    // leaves the kept origin alone.
    assert_eq!(route.origin(None), ResultOrigin::new(Some("lab".into()), "probe"));
    assert!(route.origin(Some((&modern, None))).tool.shares_buffer_with(&stateless.tool));
    assert!(
        route
            .origin(Some((&modern, None)))
            .protocol_version
            .unwrap()
            .shares_buffer_with(stateless.protocol_version.as_ref().unwrap())
    );
}

/// An inventory whose tools got the specs the manager's connections make as they list them.
fn inventory_with_specs(server: &str, visibility: ToolVisibility, tools: &[&str]) -> Inventory {
    let mut inventory = inventory(tools, &[]);
    let made = spec_companions(server, visibility, &ToolFilter::default());
    inventory.tool_companions = Arc::new(inventory.tools.iter().map(|tool| made.make(tool)).collect());
    inventory
}

fn made_spec(inventory: &Arc<Inventory>, index: usize) -> Arc<ToolSpec> {
    Arc::clone(&inventory.tool_companions[index]).downcast::<ToolSpec>().unwrap()
}

#[test]
fn a_route_takes_the_spec_made_as_its_tool_was_listed() {
    let inventory = Arc::new(inventory_with_specs("a", ToolVisibility::Deferred, &["x", "y"]));
    let server: Arc<str> = Arc::from("a");
    let filter = ToolFilter::default();
    let input = |visibility| RoutingInput { server: &server, inventory: &inventory, filter: &filter, visibility };
    let r = Routing::build([input(ToolVisibility::Deferred)], &[], &Routing::default());
    for (index, route) in r.tools().iter().enumerate() {
        let spec = route.spec();
        assert!(Arc::ptr_eq(&spec, &made_spec(&inventory, index)), "the route made a spec of its own");
        assert_eq!((spec.name.as_str(), spec.namespace.as_deref()), (route.tool().name.as_str(), Some("a")));
        assert!(spec.is_deferred());
    }
    // Made for another visibility (the config changed since the listing): the route makes its own.
    let r = Routing::build([input(ToolVisibility::Visible)], &[], &Routing::default());
    let spec = r.tool("x").unwrap().spec();
    assert!(!Arc::ptr_eq(&spec, &made_spec(&inventory, 0)));
    assert!(!spec.is_deferred());
    // Made under another server's name: likewise.
    let other: Arc<str> = Arc::from("b");
    let input =
        RoutingInput { server: &other, inventory: &inventory, filter: &filter, visibility: ToolVisibility::Deferred };
    let spec = Routing::build([input], &[], &Routing::default()).tool("x").unwrap().spec();
    assert_eq!(spec.namespace.as_deref(), Some("b"));
    // Companions that do not line up with the tools (one missing) are not used at all.
    let mut short = inventory_with_specs("a", ToolVisibility::Deferred, &["x", "y"]);
    Arc::make_mut(&mut short.tool_companions).pop();
    let short = Arc::new(short);
    let input =
        RoutingInput { server: &server, inventory: &short, filter: &filter, visibility: ToolVisibility::Deferred };
    let spec = Routing::build([input], &[], &Routing::default()).tool("x").unwrap().spec();
    assert!(!Arc::ptr_eq(&spec, &made_spec(&short, 0)));
    assert_eq!(spec.name, "x");
}

#[test]
fn a_tool_the_config_drops_gets_no_spec_as_it_is_listed() {
    let filter = ToolFilter { allow: Some(vec!["x".into(), "y".into()]), deny: vec!["y".into()] };
    let made = spec_companions("a", ToolVisibility::Visible, &filter);
    // The first tool listed is one the filter drops.
    let companions: Vec<ToolCompanion> = ["y", "x", "z"].iter().map(|name| made.make(&tool(name))).collect();
    let spec = Arc::clone(&companions[1]).downcast::<ToolSpec>().expect("an enabled tool's spec");
    assert_eq!(spec.name, "x");
    for dropped in [&companions[0], &companions[2]] {
        assert!(!dropped.is::<ToolSpec>(), "a tool the filter drops got a spec");
    }
    // One shared empty companion for all of them: nothing is allocated for a dropped tool.
    assert!(Arc::ptr_eq(&companions[0], &companions[2]));
    // The table routes what the filter allows, with the spec made for it.
    let mut inventory = inventory(&["y", "x", "z"], &[]);
    inventory.tool_companions = Arc::new(companions);
    let r = build(&[("a", inventory, filter)], &[]);
    let routed: Vec<&str> = r.tools().iter().map(|t| t.tool().name.as_str()).collect();
    assert_eq!(routed, ["x"]);
    assert!(Arc::ptr_eq(&r.tools()[0].spec(), &spec), "the route made a spec of its own");
}

#[test]
fn a_route_is_a_handle_and_a_slot_until_its_tool_is_called() {
    // A host keeps a route for every tool of every server. A route was an allocation of its
    // own, 104 bytes with the state a call makes; it is a handle into its server's block, which
    // makes a slot for each tool's state at the first call of one of them, and the state at
    // each tool's first call.
    let size = std::mem::size_of::<RoutedTool>();
    assert!(size <= 16, "a route is {size} bytes");
    let slot = route::STATE_SLOT_SIZE;
    assert!(slot <= 16, "a tool's slot in its block is {slot} bytes");
    let r = build(&[("a", inventory(&["x", "y"], &[]), ToolFilter::default())], &[]);
    let (x, y) = (r.tool("x").unwrap(), r.tool("y").unwrap());
    assert_eq!((x.has_state(), y.has_state()), (false, false), "no state before a call");
    assert!(!x.block_has_slots(), "no slots before a call");
    x.input_check();
    assert_eq!((x.has_state(), y.has_state()), (true, false), "the first call makes its own tool's state");
    assert!(y.block_has_slots());
}
