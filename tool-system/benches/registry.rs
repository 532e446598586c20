//! Per-call cost of the registry: lookup of the exposed name and routing to the provider
//! (target: under 2 µs), on a registry of 3 providers with 100 namespaced tools each.
//!
//! - `registry/route`: a provider that answers at once, so the time is the registry's own.
//! - `registry/native_add`: a native tool, adding argument deserialisation and the handler.
//!
//! `cargo bench -p tool-system --bench registry -- --measurement-time 3 --warm-up-time 1`

use std::hint::black_box;

use criterion::{Criterion, criterion_main};
use futures::executor::block_on;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, json};
use tool_system::{
    NativeTool, NativeToolProvider, ToolError, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolProvider,
    ToolRegistry, ToolSpec,
};

/// A provider of 100 tools in its own namespace that answers every call at once.
struct Instant {
    name: String,
}

impl ToolProvider for Instant {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider_type(&self) -> &str {
        "bench"
    }

    fn list_tools(
        &self,
        _ctx: &ToolExecutionContext,
    ) -> BoxFuture<'_, Result<Vec<std::sync::Arc<ToolSpec>>, ToolError>> {
        let specs = (0..100)
            .map(|i| ToolSpec::new(format!("tool_{i}")).with_namespace(&self.name).with_description("a tool").into())
            .collect();
        Box::pin(std::future::ready(Ok(specs)))
    }

    fn invoke(&self, _invocation: ToolInvocation, _ctx: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult> {
        Box::pin(std::future::ready(ToolExecutionResult::ok_text("ok")))
    }
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    block_on(async {
        for name in ["alpha", "beta", "gamma"] {
            registry.register(Instant { name: name.to_owned() }).await;
        }
        let add =
            NativeTool::new(
                "add",
                "Add two numbers",
                |args: AddArgs, _ctx| async move { (args.a + args.b).to_string() },
            );
        registry.register(NativeToolProvider::new("native").with_tool(add)).await;
        registry.refresh(&ToolExecutionContext::default()).await;
    });
    registry
}

fn bench(c: &mut Criterion) {
    let registry = registry();
    let ctx = ToolExecutionContext::new("session", "stream");
    let routed = ToolInvocation::from_value("beta__tool_57", json!({ "x": 1 }));
    let added = ToolInvocation::from_value("add", json!({ "a": 2, "b": 3 }));
    assert!(block_on(registry.invoke(routed.clone(), ctx.clone())).success);
    assert!(block_on(registry.invoke(added.clone(), ctx.clone())).success);

    let mut group = c.benchmark_group("registry");
    group.bench_function("route", |b| b.iter(|| block_on(registry.invoke(black_box(routed.clone()), ctx.clone()))));
    group.bench_function("native_add", |b| b.iter(|| block_on(registry.invoke(black_box(added.clone()), ctx.clone()))));
    group.bench_function("lookup_miss", |b| {
        b.iter(|| block_on(registry.invoke(ToolInvocation::new(black_box("nope"), Map::new()), ctx.clone())))
    });
    group.finish();
}

mod group {
    // criterion_group! defines a public function; a private module keeps it out of the docs lint.
    criterion::criterion_group!(registry_benches, super::bench);
}
criterion_main!(group::registry_benches);
