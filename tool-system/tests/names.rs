//! Exposed names: valid for LLM APIs, unique, stable, and mapped back to the right provider and
//! original name, whatever the providers' names are.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use common::TestProvider;
use futures::executor::block_on;
use proptest::prelude::*;
use tool_system::names::{fnv1a_32, is_valid_name};
use tool_system::{RegistryOptions, TOOL_SEARCH_NAME, ToolExecutionContext, ToolInvocation, ToolRegistry, ToolSpec};

/// One tool declaration: which provider (0..4), its namespace and its name.
type Decl = (usize, Option<String>, String);

fn name_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        // Few characters: many collisions, before and after sanitising.
        "[ab._ -]{0,6}",
        // Anything, including non-ASCII and characters LLM APIs refuse.
        "\\PC{0,20}",
        // Long names that need truncating.
        "[a-z_.]{50,90}",
        Just(TOOL_SEARCH_NAME.to_owned()),
    ]
}

fn decls() -> impl Strategy<Value = Vec<Decl>> {
    prop::collection::vec((0..4usize, prop::option::of(name_strategy()), name_strategy()), 0..40)
}

fn separator() -> impl Strategy<Value = String> {
    prop_oneof![Just("__".to_owned()), Just(".".to_owned()), Just(String::new()), Just("-".to_owned())]
}

fn build(separator: &str, decls: &[Decl]) -> (ToolRegistry, Vec<Arc<TestProvider>>) {
    let options = RegistryOptions { separator: separator.to_owned(), ..RegistryOptions::default() };
    let registry = ToolRegistry::with_options(options);
    let providers: Vec<Arc<TestProvider>> = (0..4)
        .map(|p| {
            let specs = decls
                .iter()
                .filter(|(owner, _, _)| *owner == p)
                .map(|(_, namespace, name)| {
                    let spec = ToolSpec::new(name.clone());
                    match namespace {
                        Some(namespace) => spec.with_namespace(namespace.clone()),
                        None => spec,
                    }
                })
                .collect();
            TestProvider::new(&format!("provider{p}"), specs)
        })
        .collect();
    block_on(async {
        for provider in &providers {
            registry.register(Arc::clone(provider)).await;
        }
    });
    (registry, providers)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn exposed_names_are_valid_unique_and_lead_back_to_their_tool(separator in separator(), decls in decls()) {
        let (registry, _providers) = build(&separator, &decls);
        let ctx = ToolExecutionContext::default();
        let tools = block_on(registry.tools(&ctx));

        // Expected: each qualified name once, from the first provider (in registration order)
        // that declares it; the reserved name never.
        let mut expected: Vec<(String, String, String)> = Vec::new();
        let mut seen = HashSet::new();
        for p in 0..4 {
            for (_, namespace, name) in decls.iter().filter(|(owner, _, _)| *owner == p) {
                let qualified = match namespace {
                    Some(namespace) => format!("{namespace}{separator}{name}"),
                    None => name.clone(),
                };
                if qualified != TOOL_SEARCH_NAME && seen.insert(qualified.clone()) {
                    expected.push((format!("provider{p}"), name.clone(), qualified));
                }
            }
        }
        prop_assert_eq!(tools.len(), expected.len());

        let mut unique = HashSet::new();
        for (tool, (provider, name, qualified)) in tools.iter().zip(&expected) {
            prop_assert!(is_valid_name(&tool.llm_name, 64), "invalid name {:?}", tool.llm_name);
            prop_assert!(unique.insert(tool.llm_name.clone()), "duplicate name {:?}", tool.llm_name);
            prop_assert_ne!(tool.llm_name.as_str(), TOOL_SEARCH_NAME);
            prop_assert_eq!(&tool.provider, provider);
            prop_assert_eq!(&tool.spec.name, name);
            prop_assert_eq!(tool.spec.qualified_name(&separator), qualified.clone());

            let found = registry.lookup(&tool.llm_name).expect("every exposed name resolves");
            prop_assert_eq!(&found.provider, provider);
            prop_assert_eq!(&found.spec.name, name);

            let result = block_on(registry.invoke(ToolInvocation::new(tool.llm_name.clone(), Default::default()), ctx.clone()));
            let expected = format!("{provider}:{name}");
            prop_assert_eq!(result.content.as_deref(), Some(expected.as_str()));
        }

        let definitions = block_on(registry.llm_definitions(&ctx));
        let defined: Vec<&str> = definitions.iter().map(|d| d["function"]["name"].as_str().unwrap()).collect();
        let listed: Vec<&str> = tools.iter().map(|t| t.llm_name.as_str()).collect();
        prop_assert_eq!(defined, listed, "every tool is visible here, so no tool_search either");
    }

    #[test]
    fn qualified_and_original_names_lead_where_a_plain_map_of_them_says(
        separator in separator(),
        decls in decls(),
        probes in prop::collection::vec(name_strategy(), 0..10),
    ) {
        let (registry, _providers) = build(&separator, &decls);
        let tools = block_on(registry.tools(&ToolExecutionContext::default()));
        // The model: LLM names first; then each qualified and original name that is not its
        // tool's LLM name, leading to its tool unless another tool has the same name.
        let mut by_llm: HashMap<&str, usize> = HashMap::new();
        let mut aliases: HashMap<String, Option<usize>> = HashMap::new();
        for (index, tool) in tools.iter().enumerate() {
            by_llm.insert(tool.llm_name.as_str(), index);
            for alias in [tool.spec.qualified_name(&separator), tool.spec.name.clone()] {
                if alias == tool.llm_name.as_str() {
                    continue;
                }
                let slot = aliases.entry(alias).or_insert(Some(index));
                if *slot != Some(index) {
                    *slot = None;
                }
            }
        }
        let declared = decls.iter().flat_map(|(_, namespace, name)| {
            let qualified = namespace.as_ref().map(|namespace| format!("{namespace}{separator}{name}"));
            [Some(name.clone()), qualified].into_iter().flatten()
        });
        let llm_names = tools.iter().map(|tool| tool.llm_name.to_string());
        for name in declared.chain(llm_names).chain(probes) {
            let expected = by_llm.get(name.as_str()).copied().or_else(|| aliases.get(&name).copied().flatten());
            let found = registry.lookup(&name).map(|tool| tool.llm_name.into_string());
            prop_assert_eq!(found, expected.map(|index| tools[index].llm_name.to_string()), "looking up {:?}", name);
        }
    }

    #[test]
    fn exposed_names_are_stable_across_registries(separator in separator(), decls in decls()) {
        let names = |(registry, _): (ToolRegistry, Vec<Arc<TestProvider>>)| -> Vec<String> {
            block_on(registry.tools(&ToolExecutionContext::default())).into_iter().map(|t| t.llm_name.into_string()).collect()
        };
        prop_assert_eq!(names(build(&separator, &decls)), names(build(&separator, &decls)));
    }
}

#[test]
fn long_names_keep_their_head_and_a_hash_of_the_whole() {
    let registry = ToolRegistry::new();
    let namespace = "a-very-long-server-name-from-some-config-file";
    let name = "and_an_even_longer_tool_name_that_goes_past_the_limit";
    block_on(registry.register(TestProvider::new("p", vec![ToolSpec::new(name).with_namespace(namespace)])));
    let tools = block_on(registry.tools(&ToolExecutionContext::default()));
    let qualified = format!("{namespace}__{name}");
    let expected = format!("{}_{:08x}", &qualified[..55], fnv1a_32(qualified.as_bytes()));
    assert_eq!(tools[0].llm_name, expected);
    assert_eq!(tools[0].llm_name.len(), 64);
}

#[test]
fn a_sanitising_collision_gets_a_suffix_and_both_stay_reachable() {
    let registry = ToolRegistry::new();
    let specs = vec![ToolSpec::new("get.file"), ToolSpec::new("get file"), ToolSpec::new("get_file")];
    let provider = TestProvider::new("p", specs);
    block_on(registry.register(Arc::clone(&provider)));
    let tools = block_on(registry.tools(&ToolExecutionContext::default()));
    let by_name: HashMap<&str, &str> = tools.iter().map(|t| (t.spec.name.as_str(), t.llm_name.as_str())).collect();
    assert_eq!(by_name["get.file"], "get_file", "the first one gets the plain name");
    assert_eq!(by_name["get file"], format!("get_file_{:08x}", fnv1a_32(b"get file")));
    assert_eq!(by_name["get_file"], format!("get_file_{:08x}", fnv1a_32(b"get_file")));
    for tool in &tools {
        let result = block_on(
            registry.invoke(ToolInvocation::new(tool.llm_name.clone(), Default::default()), Default::default()),
        );
        assert_eq!(result.content.as_deref(), Some(format!("p:{}", tool.spec.name).as_str()));
    }
}

#[test]
fn names_given_out_before_the_first_one_that_needs_changing_stay_taken_after_it() {
    // The first two names are handed out unchanged; the third is the first that must change,
    // and its sanitised form is the first one's; the fourth's is the reserved `tool_search`; the
    // fifth is valid, but the third's suffixed name; the sixth is valid and free.
    let suffixed = format!("get_file_{:08x}", fnv1a_32(b"get file"));
    let specs = vec![
        ToolSpec::new("get_file"),
        ToolSpec::new("put_file"),
        ToolSpec::new("get file"),
        ToolSpec::new("tool search"),
        ToolSpec::new(suffixed.clone()),
        ToolSpec::new("list"),
    ];
    let registry = ToolRegistry::new();
    block_on(registry.register(TestProvider::new("p", specs)));
    let tools = block_on(registry.tools(&ToolExecutionContext::default()));
    let by_name: HashMap<&str, &str> = tools.iter().map(|t| (t.spec.name.as_str(), t.llm_name.as_str())).collect();
    assert_eq!(by_name["get_file"], "get_file");
    assert_eq!(by_name["put_file"], "put_file");
    assert_eq!(by_name["get file"], suffixed, "an earlier tool's name was given out again");
    assert_eq!(by_name["tool search"], format!("tool_search_{:08x}", fnv1a_32(b"tool search")));
    assert_eq!(
        by_name[suffixed.as_str()],
        format!("{suffixed}_{:08x}", fnv1a_32(suffixed.as_bytes())),
        "a name taken by a suffix was given out again"
    );
    assert_eq!(by_name["list"], "list");
    let distinct: HashSet<&str> = by_name.values().copied().collect();
    assert_eq!(distinct.len(), 6);
}
