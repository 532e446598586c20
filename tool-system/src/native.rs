//! Native Rust tools: a typed async function becomes a [`ToolSpec`] (its argument type's JSON
//! Schema) and an invocation target ([`NativeTool`], grouped in a [`NativeToolProvider`]).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{
    SharedText, ToolAnnotation, ToolError, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolProvider,
    ToolSpec, ToolVisibility,
};

/// The provider type of a [`NativeToolProvider`].
pub const NATIVE_PROVIDER_TYPE: &str = "native";

type Handler =
    dyn Fn(Map<String, Value>, ToolExecutionContext) -> BoxFuture<'static, ToolExecutionResult> + Send + Sync;

/// The arguments of a tool that takes none (any object is accepted, its members ignored).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NoArgs {}

/// One native tool: a spec and the async function that runs it.
///
/// The arguments object is deserialised into the function's argument type `A`; a mismatch gives
/// a failed result naming the argument, such as ``argument `b`: invalid type: string "x",
/// expected i64``. The function's output converts into a [`ToolExecutionResult`]: a `String`,
/// a `serde_json::Value`, a `ToolExecutionResult`, `()`, or a `Result` of one of these whose
/// error is displayed as the failure message.
#[derive(Clone)]
pub struct NativeTool {
    /// Shared with every listing; changed in place while the tool is being built.
    spec: Arc<ToolSpec>,
    handler: Arc<Handler>,
}

impl fmt::Debug for NativeTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NativeTool").field("spec", &self.spec).finish_non_exhaustive()
    }
}

impl NativeTool {
    /// A tool named `name` that runs `handler`. Its parameters schema is generated from `A`
    /// (see [`schema_for`]).
    pub fn new<A, F, Fut, R>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolExecutionContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: Into<ToolExecutionResult>,
    {
        let spec = ToolSpec::new(name).with_description(description).with_parameters(schema_for::<A>());
        let handler: Arc<Handler> = Arc::new(move |arguments, ctx| match parse_arguments::<A>(arguments) {
            Ok(args) => {
                let future = handler(args, ctx);
                Box::pin(async move { future.await.into() })
            }
            Err(message) => Box::pin(std::future::ready(ToolExecutionResult::failed(message))),
        });
        Self { spec: Arc::new(spec), handler }
    }

    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The tool's spec, to change it (title, icons, output schema, ...).
    pub fn spec_mut(&mut self) -> &mut ToolSpec {
        Arc::make_mut(&mut self.spec)
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.spec_mut().title = Some(title.into());
        self
    }

    /// Sets the annotation.
    pub fn with_annotation(mut self, annotation: ToolAnnotation) -> Self {
        self.spec_mut().annotation = Some(Box::new(annotation));
        self
    }

    /// Sets the output schema from a type.
    pub fn with_output<O: JsonSchema>(mut self) -> Self {
        self.spec_mut().output_schema = Some(Box::new(schema_for::<O>()));
        self
    }

    /// Sets the visibility.
    pub fn with_visibility(mut self, visibility: ToolVisibility) -> Self {
        self.spec_mut().visibility = visibility;
        self
    }

    /// Makes the tool deferred (reachable through `tool_search`).
    pub fn deferred(self) -> Self {
        self.with_visibility(ToolVisibility::Deferred)
    }

    /// Runs the tool with `arguments` in `ctx`.
    pub fn call(
        &self,
        arguments: Map<String, Value>,
        ctx: ToolExecutionContext,
    ) -> BoxFuture<'static, ToolExecutionResult> {
        (self.handler)(arguments, ctx)
    }
}

/// The JSON Schema of `T` for an LLM: draft 2020-12, subschemas inlined, without the `$schema`
/// member or the root `title` (the Rust type's name).
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(members) = &mut schema {
        // The root title is the Rust type's name: noise for an LLM.
        members.remove("title");
    }
    schema
}

/// Deserialises the arguments object into `A`; the error names the argument at fault.
fn parse_arguments<A: DeserializeOwned>(arguments: Map<String, Value>) -> Result<A, String> {
    serde_path_to_error::deserialize(Value::Object(arguments)).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        if path.is_empty() || path == "." {
            format!("invalid arguments: {inner}")
        } else {
            format!("argument `{path}`: {inner}")
        }
    })
}

/// A provider of native tools, kept in the order they were added.
#[derive(Debug, Clone)]
pub struct NativeToolProvider {
    /// Shared with the specs of its tools.
    name: SharedText,
    tools: Vec<NativeTool>,
    index: HashMap<String, usize>,
}

impl NativeToolProvider {
    /// An empty provider called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: SharedText::from(name.into()), tools: Vec::new(), index: HashMap::new() }
    }

    /// Adds `tool`, replacing a tool of the same name (returned).
    pub fn add(&mut self, mut tool: NativeTool) -> Option<NativeTool> {
        let spec = tool.spec_mut();
        spec.provider_name = self.name.clone();
        spec.provider_type = NATIVE_PROVIDER_TYPE.into();
        match self.index.get(&tool.spec.name) {
            Some(&at) => Some(std::mem::replace(&mut self.tools[at], tool)),
            None => {
                self.index.insert(tool.spec.name.clone(), self.tools.len());
                self.tools.push(tool);
                None
            }
        }
    }

    /// Adds `tool` (builder form of [`add`](Self::add)).
    pub fn with_tool(mut self, tool: NativeTool) -> Self {
        self.add(tool);
        self
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&NativeTool> {
        self.index.get(name).map(|&at| &self.tools[at])
    }

    /// The tools, in the order they were added.
    pub fn tools(&self) -> &[NativeTool] {
        &self.tools
    }
}

impl ToolProvider for NativeToolProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider_type(&self) -> &str {
        NATIVE_PROVIDER_TYPE
    }

    fn list_tools(&self, _ctx: &ToolExecutionContext) -> BoxFuture<'_, Result<Vec<Arc<ToolSpec>>, ToolError>> {
        let specs = self.tools.iter().map(|tool| tool.spec.clone()).collect();
        Box::pin(std::future::ready(Ok(specs)))
    }

    fn invoke(&self, invocation: ToolInvocation, ctx: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult> {
        match self.get(&invocation.tool_name) {
            Some(tool) => tool.call(invocation.arguments, ctx),
            None => Box::pin(std::future::ready(ToolExecutionResult::failed(format!(
                "provider `{}` has no tool `{}`",
                self.name, invocation.tool_name
            )))),
        }
    }
}
