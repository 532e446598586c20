//! [`ToolRegistry`]: many providers behind one tool list with LLM-valid names, and routing of
//! each call to the provider that declares the tool.

pub(crate) mod availability;
mod changes;
mod former;
pub(crate) mod search;
mod snapshot;

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures::FutureExt as _;
use futures::future::join_all;
use serde_json::Value;

use crate::dialect::{LlmDialect, nulls};
use crate::names::MAX_NAME_LEN;
use crate::{ExposedTool, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolProvider};
use availability::{Gate, ToolAvailability};
use search::{SearchArgs, TOOL_SEARCH_NAME, search_deferred, search_result};
use snapshot::Snapshot;

pub use changes::RegistryChanges;

/// The longest tool name quoted back in an error message.
const MAX_QUOTED_NAME: usize = 128;

/// How a [`ToolRegistry`] forms exposed names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryOptions {
    /// Put between a tool's namespace and its name (default `__`, giving `server__tool`).
    /// Characters outside `[a-zA-Z0-9_-]` are sanitised like the rest of the name.
    pub separator: String,
    /// The longest exposed name (default 64, clamped to 16..=64).
    pub max_name_len: usize,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        Self { separator: "__".to_owned(), max_name_len: MAX_NAME_LEN }
    }
}

/// Where an app (an interactive view a provider served, such as an MCP App's `ui://` resource)
/// came from: the provider that served it and, for providers that qualify names (the MCP one:
/// one namespace per server), its namespace. An app calls only its own origin's tools, by their
/// own names, and only those whose [`ToolCallers::app`](crate::ToolCallers::app) is set.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AppOrigin {
    /// The provider's name, as [`ExposedTool::provider`].
    pub provider: String,
    /// The namespace, as [`ToolSpec::namespace`](crate::ToolSpec::namespace).
    pub namespace: Option<String>,
}

impl AppOrigin {
    /// The origin of apps served by `provider` under `namespace`.
    pub fn new(provider: impl Into<String>, namespace: Option<String>) -> Self {
        Self { provider: provider.into(), namespace }
    }
}

/// The `function` member of a definition: the LLM name, the description (else the title;
/// omitted when there is neither) and the cleaned parameters, always an object schema.
pub(crate) fn function_body(tool: &ExposedTool) -> Value {
    match tool.to_llm_definition() {
        Value::Object(mut definition) => definition.remove("function").unwrap_or_default(),
        _ => Value::Null,
    }
}

struct State {
    providers: Vec<Arc<dyn ToolProvider>>,
    /// Tools that left the listing, still routed to their provider (see `former.rs`).
    former: former::FormerTools,
    /// Bumped by every registration change and by [`ToolRegistry::invalidate`].
    generation: u64,
    /// The last listing, possibly stale.
    snapshot: Option<Arc<Snapshot>>,
}

impl State {
    /// The last listing, if it was made at the current generation (same providers, no
    /// invalidation since). The providers' revisions are checked by the caller, outside the lock.
    fn same_generation(&self) -> Option<Arc<Snapshot>> {
        self.snapshot.as_ref().filter(|snapshot| snapshot.generation == self.generation).cloned()
    }
}

/// Many [`ToolProvider`]s behind one tool list.
///
/// - Providers keep their registration order. Registering a provider under a name already
///   registered replaces the old provider in its place and closes it.
/// - Each tool is exposed under a name valid for LLM APIs (`^[a-zA-Z0-9_-]{1,64}$`):
///   `namespace` + separator + `name` when the spec has a namespace, else `name`; characters
///   outside the set become `_`; a name that is too long, or taken by an earlier tool, gets a
///   stable hash suffix. Calls are routed through a lookup table, never by splitting names.
/// - A qualified name that two tools share is a duplicate: the first (in registration order)
///   is kept and the later one is skipped with a `tracing` warning.
/// - Deferred tools stay out of the LLM definitions; the built-in `tool_search` tool (offered
///   only while a deferred tool exists) finds them.
///
/// # Caching
///
/// The registry lists its providers once and keeps the listing (and the name table) until it
/// becomes stale: when a provider is registered or unregistered, when
/// [`invalidate`](Self::invalidate) is called, or when a provider's
/// [`revision`](ToolProvider::revision) changes. The next [`tools`](Self::tools),
/// [`llm_definitions`](Self::llm_definitions) or [`invoke`](Self::invoke) then lists again, with
/// the context of that call; [`refresh`](Self::refresh) lists again at once. A call on a current
/// listing costs one read lock, one hash lookup and the provider's own work.
///
/// # Availability
///
/// Two ways decide which tools a caller sees. The host's rule ([`set_availability`](Self::set_availability),
/// a [`ToolAvailability`]) is applied per call to the shared listing, so every context gets its
/// own view of one cached listing: listings ([`tools`](Self::tools), [`llm_tools`](Self::llm_tools),
/// the LLM definitions, `tool_search`, [`app_tools`](Self::app_tools)) leave out what it hides,
/// and a call of a hidden tool fails. A provider may also filter in
/// [`list_tools`](ToolProvider::list_tools) by the context it is given; that context is the one
/// of the call that built the listing, shared by every caller until the next listing, so a
/// provider-side filter suits what is the same for every caller of a registry (a host with one
/// registry per user), and the rule suits the rest.
///
/// # Concurrency
///
/// The registry is `Send + Sync` and meant to be shared behind an `Arc`. No lock is held while a
/// provider runs (listing, invoking or closing); concurrent calls on a stale listing may each
/// list the providers. Cancelling [`invoke`](Self::invoke), [`tools`](Self::tools) or
/// [`refresh`](Self::refresh) is safe. Cancelling [`register`](Self::register),
/// [`unregister`](Self::unregister) or [`close`](Self::close) after the change was made but
/// before a removed provider finished closing leaves that provider unclosed (dropped).
pub struct ToolRegistry {
    options: RegistryOptions,
    state: RwLock<State>,
    availability: RwLock<Option<Arc<dyn ToolAvailability>>>,
    /// Wakes [`RegistryChanges`] subscribers.
    signal: changes::Signal,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("options", &self.options)
            .field("providers", &self.provider_names())
            .finish_non_exhaustive()
    }
}

impl ToolRegistry {
    /// An empty registry with the default options.
    pub fn new() -> Self {
        Self::with_options(RegistryOptions::default())
    }

    /// An empty registry with `options`.
    pub fn with_options(options: RegistryOptions) -> Self {
        Self {
            options,
            state: RwLock::new(State {
                providers: Vec::new(),
                former: former::FormerTools::default(),
                generation: 0,
                snapshot: None,
            }),
            availability: RwLock::new(None),
            signal: changes::Signal::new(),
        }
    }

    /// A signal that wakes whenever the tool list may have changed (see [`RegistryChanges`]),
    /// so that a host offers its LLM the new list without polling.
    pub fn subscribe_changes(&self) -> RegistryChanges {
        self.signal.subscribe()
    }

    /// The options the registry was made with.
    pub fn options(&self) -> &RegistryOptions {
        &self.options
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `provider`. Returns whether it replaced a provider of the same name, which is
    /// closed before this returns (the new one takes its place in the order). `provider` is
    /// wrapped in a new `Arc`; to register an `Arc` the caller keeps, use
    /// [`register_arc`](Self::register_arc).
    pub async fn register<P: ToolProvider>(&self, provider: P) -> bool {
        self.register_arc(Arc::new(provider)).await
    }

    /// Registers a shared provider; see [`register`](Self::register). Registering the same
    /// `Arc` again is a no-op that reports a replacement without closing anything.
    pub async fn register_arc(&self, provider: Arc<dyn ToolProvider>) -> bool {
        let provider_again = Arc::clone(&provider);
        let replaced = {
            let mut state = self.write();
            state.generation += 1;
            let replaced = match state.providers.iter().position(|p| p.name() == provider.name()) {
                Some(index) => Some(std::mem::replace(&mut state.providers[index], provider)),
                None => {
                    state.providers.push(provider);
                    None
                }
            };
            self.signal.providers_changed(&state.providers);
            replaced
        };
        match replaced {
            Some(old) if Arc::ptr_eq(&old, &provider_again) => true,
            Some(old) => {
                tracing::info!(provider = old.name(), "tool provider replaced; closing the old one");
                old.close().await;
                true
            }
            None => false,
        }
    }

    /// Removes the provider called `name` and closes it. Returns whether there was one.
    pub async fn unregister(&self, name: &str) -> bool {
        let removed = {
            let mut state = self.write();
            let index = state.providers.iter().position(|p| p.name() == name);
            let removed = index.map(|index| {
                state.generation += 1;
                state.providers.remove(index)
            });
            self.signal.providers_changed(&state.providers);
            removed
        };
        match removed {
            Some(provider) => {
                provider.close().await;
                true
            }
            None => false,
        }
    }

    /// The registered providers' names, in registration order.
    pub fn provider_names(&self) -> Vec<String> {
        self.read().providers.iter().map(|p| p.name().to_owned()).collect()
    }

    /// The provider called `name`, if registered.
    pub fn provider(&self, name: &str) -> Option<Arc<dyn ToolProvider>> {
        self.read().providers.iter().find(|p| p.name() == name).cloned()
    }

    /// Marks the listing stale: the next call lists every provider again.
    pub fn invalidate(&self) {
        self.write().generation += 1;
        self.signal.bump();
    }

    /// Sets the host's availability rule (see [`ToolAvailability`]), replacing any earlier one.
    /// It applies from the next call on; the cached listing stays valid (the rule is applied
    /// per call, never stored in it).
    pub fn set_availability(&self, rule: impl ToolAvailability) {
        *self.availability.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(rule));
    }

    /// Removes the availability rule: every tool is available again.
    pub fn clear_availability(&self) {
        *self.availability.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The availability rule bound to `ctx`.
    fn gate<'a>(&self, ctx: &'a ToolExecutionContext) -> Gate<'a> {
        Gate::new(self.availability.read().unwrap_or_else(PoisonError::into_inner).clone(), ctx)
    }

    /// The tools of `snapshot` that pass `gate`, shared (no spec is copied).
    fn available(snapshot: &Snapshot, gate: &Gate<'_>) -> Vec<ExposedTool> {
        let mut tools = Vec::with_capacity(snapshot.tools.len());
        tools.extend(snapshot.tools.iter().filter(|tool| gate.allows(tool)).cloned());
        tools
    }

    /// Lists every provider now (concurrently) with `ctx`, rebuilds the name table and returns
    /// every exposed tool available in `ctx`, visible and deferred, in registration order. A
    /// provider whose listing fails contributes no tools (with a warning) until the next
    /// listing.
    pub async fn refresh(&self, ctx: &ToolExecutionContext) -> Vec<ExposedTool> {
        Self::available(&*self.relist(ctx).await, &self.gate(ctx))
    }

    async fn relist(&self, ctx: &ToolExecutionContext) -> Arc<Snapshot> {
        let (generation, providers) = {
            let state = self.read();
            (state.generation, state.providers.clone())
        };
        // Revisions are read before listing, so a change during the listing makes it stale.
        let revisions = providers.iter().map(|p| p.revision()).collect();
        let listings = join_all(providers.iter().map(|p| p.list_tools(ctx))).await;
        let snapshot = Arc::new(Snapshot::build(&self.options, generation, revisions, providers, listings));
        let mut state = self.write();
        if state.snapshot.as_ref().is_none_or(|old| old.generation <= generation)
            && let Some(old) = state.snapshot.replace(Arc::clone(&snapshot))
        {
            state.former.update(&old, &snapshot);
        }
        snapshot
    }

    /// The current listing, listing again with `ctx` when it is stale.
    async fn listing(&self, ctx: &ToolExecutionContext) -> Arc<Snapshot> {
        let candidate = self.read().same_generation();
        match candidate {
            Some(snapshot) if snapshot.is_current() => snapshot,
            _ => self.relist(ctx).await,
        }
    }

    /// The last listing, current or not.
    fn last_listing(&self) -> Option<Arc<Snapshot>> {
        self.read().snapshot.clone()
    }

    /// Every exposed tool available in `ctx`, visible and deferred, in registration order (from
    /// the cached listing; see the type's docs). The built-in `tool_search` is not among them;
    /// see [`llm_tools`](Self::llm_tools).
    pub async fn tools(&self, ctx: &ToolExecutionContext) -> Vec<ExposedTool> {
        Self::available(&*self.listing(ctx).await, &self.gate(ctx))
    }

    /// What the LLM is offered in `ctx`: the visible tools the model may call (not the app-only
    /// ones) that are available, then the built-in `tool_search` when at least one such tool is
    /// deferred.
    pub async fn llm_tools(&self, ctx: &ToolExecutionContext) -> Vec<ExposedTool> {
        self.listing(ctx).await.llm_tools(&self.gate(ctx))
    }

    /// [`llm_tools`](Self::llm_tools) as OpenAI function-tool definitions
    /// (`{"type": "function", "function": {"name", "description", "parameters"}}`): the
    /// [`LlmDialect::OpenAi`] definitions of [`llm_definitions_for`](Self::llm_definitions_for).
    pub async fn llm_definitions(&self, ctx: &ToolExecutionContext) -> Vec<Value> {
        self.llm_definitions_for(LlmDialect::OpenAi, ctx).await
    }

    /// [`llm_tools`](Self::llm_tools) as definitions of `dialect` (see [`LlmDialect`] for each
    /// shape). Schemas are cleaned (`$schema` removed) and rewritten as the dialect requires;
    /// the specs keep the servers' schemas.
    pub async fn llm_definitions_for(&self, dialect: LlmDialect, ctx: &ToolExecutionContext) -> Vec<Value> {
        // Built on demand: a listing of thousands of tools keeps no second copy of every schema.
        let tools = self.listing(ctx).await.llm_tools(&self.gate(ctx));
        tools.iter().map(|tool| tool.to_llm_definition_for(dialect)).collect()
    }

    /// Whether `tool_search` is offered in `ctx` (at least one available tool is deferred).
    pub async fn has_deferred(&self, ctx: &ToolExecutionContext) -> bool {
        self.listing(ctx).await.has_deferred(&self.gate(ctx))
    }

    /// The tool the last listing knows as `name` (an LLM name, or a qualified or original name
    /// only one tool has), without listing again. `None` before the first listing. This is the
    /// host's own lookup: the availability rule does not apply (there is no caller).
    pub fn lookup(&self, name: &str) -> Option<ExposedTool> {
        let snapshot = self.last_listing()?;
        snapshot.resolve(name).map(|index| snapshot.tools[index].clone())
    }

    /// The deferred tools of the last listing available in `ctx` that match `query` in their
    /// names, titles or descriptions, best first, at most `limit` (at most 50). A blank query
    /// matches every deferred tool. Empty before the first listing.
    pub fn search(&self, query: &str, limit: usize, ctx: &ToolExecutionContext) -> Vec<ExposedTool> {
        let Some(snapshot) = self.last_listing() else { return Vec::new() };
        search_deferred(&snapshot.tools, query, limit, &self.gate(ctx)).into_iter().cloned().collect()
    }

    /// The tools an app of `origin` may call in `ctx`: its origin's available tools whose
    /// [`ToolCallers::app`](crate::ToolCallers::app) is set, in registration order.
    pub async fn app_tools(&self, origin: &AppOrigin, ctx: &ToolExecutionContext) -> Vec<ExposedTool> {
        let snapshot = self.listing(ctx).await;
        let gate = self.gate(ctx);
        snapshot
            .tools
            .iter()
            .filter(|tool| {
                tool.spec.callers.app
                    && tool.provider == origin.provider
                    && tool.spec.namespace.as_deref() == origin.namespace.as_deref()
                    && gate.allows(tool)
            })
            .cloned()
            .collect()
    }

    /// Runs, for an app of `origin`, the origin's tool whose own name is `invocation.tool_name`
    /// (apps know their server's names, not the LLM's). A tool of another origin, or one whose
    /// callers do not include apps, is refused with a failed result that says so; otherwise as
    /// [`invoke`](Self::invoke).
    pub async fn invoke_from_app(
        &self,
        origin: &AppOrigin,
        invocation: ToolInvocation,
        ctx: ToolExecutionContext,
    ) -> ToolExecutionResult {
        let snapshot = self.listing(&ctx).await;
        let tool = invocation.tool_name.as_str();
        let Some(index) = snapshot.resolve_in(origin, tool) else {
            return ToolExecutionResult::failed(format!(
                "an app of {} has no tool `{}` to call",
                describe_origin(origin),
                quote_name(tool)
            ));
        };
        if !snapshot.tools[index].spec.callers.app {
            return ToolExecutionResult::failed(format!(
                "tool `{}` of {} may not be called by an app (its visibility does not include apps)",
                quote_name(tool),
                describe_origin(origin)
            ));
        }
        if !self.gate(&ctx).allows(&snapshot.tools[index]) {
            return not_available(tool);
        }
        run_tool(&snapshot.tools[index], snapshot.provider(index), invocation, ctx).await
    }

    /// Runs the tool exposed as `invocation.tool_name` (an LLM name; a qualified or original
    /// name that only one tool has works too). `invocation.tool_name` is replaced by the
    /// provider's own name of the tool. `tool_search` runs the built-in search. An unknown name,
    /// a tool only an app may call (see [`invoke_from_app`](Self::invoke_from_app)), a tool the
    /// availability rule hides from this caller, a provider that panics or a failed result
    /// without a message all give a failed result with a non-empty message.
    ///
    /// A `null` argument that is optional and that the tool's schema refuses means "left out"
    /// (models in OpenAI's strict mode send one for every optional argument they skip) and is
    /// removed before the provider sees the call.
    ///
    /// The context's [`CallControl`](crate::CallControl) holds for every provider: once its
    /// token is cancelled or its deadline passes, the call resolves at once
    /// ([`ToolExecutionResult::cancelled`], [`ToolExecutionResult::timed_out`]) and the
    /// provider's future is dropped. A deadline needs a tokio runtime with its timer.
    #[expect(clippy::manual_async_fn, reason = "an async fn would hold the invocation and the context twice")]
    pub fn invoke(
        &self,
        mut invocation: ToolInvocation,
        ctx: ToolExecutionContext,
    ) -> impl Future<Output = ToolExecutionResult> + Send + '_ {
        // An `async` block rather than an `async fn`: the function's arguments would be held
        // twice in the call's state (as given and as moved into the body), which every call in
        // flight carries, and moved once more.
        async move {
            let snapshot = self.listing(&ctx).await;
            let gate = self.gate(&ctx);
            let name = invocation.tool_name.as_str();
            if name == TOOL_SEARCH_NAME {
                return match SearchArgs::parse(&invocation.arguments) {
                    Ok(args) => {
                        search_result(&search_deferred(&snapshot.tools, &args.query, args.limit, &gate), &args.query)
                    }
                    Err(message) => ToolExecutionResult::failed(format!("tool `{TOOL_SEARCH_NAME}`: {message}")),
                };
            }
            let Some(index) = snapshot.resolve(name) else {
                // A tool that left the listing goes to its provider, which can say why.
                let former = {
                    let state = self.read();
                    state.former.get(name, &state.providers)
                };
                return match former {
                    Some((tool, provider)) if tool.spec.callers.model && gate.allows(&tool) => {
                        drop(gate);
                        run_tool(&tool, &provider, invocation, ctx).await
                    }
                    Some(_) => not_available(name),
                    None => ToolExecutionResult::failed(format!("unknown tool `{}`", quote_name(name))),
                };
            };
            if !snapshot.tools[index].spec.callers.model {
                return ToolExecutionResult::failed(format!(
                    "tool `{}` may only be called by its app, not by the model",
                    quote_name(name)
                ));
            }
            if !gate.allows(&snapshot.tools[index]) {
                return not_available(name);
            }
            drop(gate);
            nulls::drop_refused_nulls(&snapshot.tools[index].spec.parameters, &mut invocation.arguments);
            run_tool(&snapshot.tools[index], snapshot.provider(index), invocation, ctx).await
        }
    }

    /// Removes and closes every provider (concurrently). The registry is empty afterwards and
    /// can be used again.
    pub async fn close(&self) {
        let providers = {
            let mut state = self.write();
            state.generation += 1;
            state.snapshot = None;
            state.former.clear();
            let providers = std::mem::take(&mut state.providers);
            self.signal.providers_changed(&state.providers);
            providers
        };
        join_all(providers.iter().map(|p| p.close())).await;
    }
}

/// Runs `tool` on `provider` under the context's control (see [`ToolRegistry::invoke`]),
/// isolating a panic. Awaited directly by the registry's calls, not through a layer of its own:
/// each `async` layer moves the whole state of the call once more.
///
/// The provider is handed the invocation and the context before the returned future exists, so
/// that future holds neither: it holds the provider's call, the host's control of it and the
/// time it started. (An `async` block taking them would keep room for them while the call is in
/// flight, beside the copies that the caller's state and the provider's call hold.) `provider`
/// is borrowed from the listing, or the former tool, that the caller's state keeps.
fn run_tool<'a>(
    tool: &'a ExposedTool,
    provider: &'a Arc<dyn ToolProvider>,
    mut invocation: ToolInvocation,
    ctx: ToolExecutionContext,
) -> impl Future<Output = ToolExecutionResult> + Send + 'a {
    let started = std::time::Instant::now();
    let call = if ctx.control.is_cancelled() {
        None
    } else {
        let control = ctx.control.clone();
        invocation.tool_name.clone_from(&tool.spec.name);
        Some((control, std::panic::catch_unwind(AssertUnwindSafe(|| provider.invoke(invocation, ctx)))))
    };
    async move {
        let Some((control, call)) = call else {
            return ToolExecutionResult::cancelled(&tool.llm_name);
        };
        let outcome = match call {
            Ok(future) => {
                let call = AssertUnwindSafe(future).catch_unwind();
                let deadline = async {
                    match control.deadline {
                        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                        None => std::future::pending().await,
                    }
                };
                // The provider first: a result that is ready when the token or the deadline fires
                // is kept (the MCP provider's own timeout says more than ours).
                tokio::select! {
                    biased;
                    outcome = call => outcome,
                    () = control.cancellation.cancelled() => return ToolExecutionResult::cancelled(&tool.llm_name),
                    () = deadline => return ToolExecutionResult::timed_out(&tool.llm_name, started.elapsed()),
                }
            }
            Err(panic) => Err(panic),
        };
        match outcome {
            Ok(result) => result.normalized(),
            Err(_) => {
                tracing::error!(tool = %tool.llm_name, provider = %tool.provider, "tool panicked");
                ToolExecutionResult::failed(format!(
                    "tool `{}` of provider `{}` panicked",
                    tool.llm_name, tool.provider
                ))
            }
        }
    }
}

/// The failed result of a call of a tool the availability rule hides: no more than that (not
/// whether the tool exists, nor who serves it).
fn not_available(name: &str) -> ToolExecutionResult {
    ToolExecutionResult::failed(format!("tool `{}` is not available to this caller", quote_name(name)))
}

/// "provider `p`" or "provider `p`, namespace `n`" for an error message.
fn describe_origin(origin: &AppOrigin) -> String {
    match &origin.namespace {
        Some(namespace) => format!("provider `{}` (namespace `{}`)", origin.provider, quote_name(namespace)),
        None => format!("provider `{}`", origin.provider),
    }
}

/// `name` cut to [`MAX_QUOTED_NAME`] characters for an error message.
fn quote_name(name: &str) -> String {
    match name.char_indices().nth(MAX_QUOTED_NAME) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_owned(),
    }
}
