//! `rmcp-bench-server`: the benchmark server built on the official Rust SDK (rmcp), so that
//! `cargo xtask bench` measures every client against a server no one here wrote, as well as
//! against our `bench-server`.
//!
//! It serves what `bench-server` serves, the way an rmcp author writes it: `echo {text}` and
//! `big` are `#[tool]` methods of a `#[tool_router]`, and the generated tools (`tool-00000` ..)
//! are routes of the same router whose input schema is the one schemars makes for a two-field
//! argument struct, title-less, with descriptions (about 300 bytes a tool, the shape rmcp's macros
//! give). `tools/list` pages the router's tools, P per page (cursor `page-K`); the sorted listing
//! is made once at start-up, so the server's own cost stays small beside the clients'. Every
//! field is shared (`Arc`), so the per-request clone the HTTP service makes costs nothing.
//!
//! Transports: stdio (the default), or `--http PORT` for streamable HTTP on 127.0.0.1 at `/mcp`
//! (rmcp's `StreamableHttpService`, stateless, JSON replies); with `--http 0` it takes a free port.
//! Over HTTP the bound port is the first line of stdout. rmcp answers both eras: `initialize` with
//! a legacy revision, and `server/discover` for 2026-07-28.
//!
//! Flags: `--tools N` (how many tools `tools/list` gives, `echo` and `big` included; default
//! 10002), `--page-size P` (default 100), `--big-mib M` (default 8),
//! `--prefix P` (put P before every tool's name, `echo` and `big` included: several servers under
//! one host need names of their own), `--http PORT`.

use std::borrow::Cow;
use std::process::exit;
use std::sync::Arc;

use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::{ToolCallContext, schema_for_type};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

struct Config {
    tools: usize,
    page_size: usize,
    big_mib: usize,
    http: Option<u16>,
    prefix: String,
}

fn parse_args() -> Result<Config, String> {
    let mut config = Config { tools: 10_002, page_size: 100, big_mib: 8, http: None, prefix: String::new() };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        if flag == "--prefix" {
            config.prefix = value;
            continue;
        }
        let n: usize = value.parse().map_err(|_| format!("{flag}: not a number: {value:?}"))?;
        match flag.as_str() {
            "--tools" => config.tools = n,
            "--page-size" => config.page_size = n.max(1),
            "--big-mib" => config.big_mib = n,
            "--http" => config.http = Some(u16::try_from(n).map_err(|_| format!("--http: not a port: {n}"))?),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(config)
}

/// The arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

// The arguments of every generated tool: a query and a limit, as a search tool takes them (a
// plain comment, not a doc comment: schemars would put it in every schema).
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct QueryArgs {
    /// What to find.
    query: String,
    /// Most results.
    limit: u32,
}

#[derive(Clone)]
struct BenchServer {
    tool_router: Arc<ToolRouter<BenchServer>>,
    /// The router's tools, sorted by name, made once.
    listing: Arc<Vec<Tool>>,
    page_size: usize,
    big: Arc<str>,
}

#[tool_router]
impl BenchServer {
    /// Sends the text back as one text block.
    #[tool(description = "Echo the text back as one text block")]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    /// One text block of the configured size.
    #[tool(description = "Answer with one large text block of x characters")]
    async fn big(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(self.big.to_string())])
    }
}

impl BenchServer {
    fn new(config: &Config) -> Self {
        let mut tool_router = Self::tool_router();
        if !config.prefix.is_empty() {
            let routes: Vec<_> = tool_router.map.drain().map(|(_, route)| route).collect();
            for mut route in routes {
                route.attr.name = Cow::Owned(format!("{}{}", config.prefix, route.attr.name));
                tool_router.add_route(route);
            }
        }
        let schema = schema_for_type::<QueryArgs>();
        // `--tools` counts every listed tool, `echo` and `big` included.
        for i in 0..config.tools.saturating_sub(tool_router.map.len()) {
            let tool = Tool::new(
                Cow::Owned(format!("{}tool-{i:05}", config.prefix)),
                format!("Generated tool {i}: searches with a query and a limit"),
                schema.clone(),
            );
            tool_router.add_route(ToolRoute::new_dyn(tool, |_context: ToolCallContext<'_, BenchServer>| {
                Box::pin(async { Ok(CallToolResult::success(vec![ContentBlock::text("no results")]).into()) })
            }));
        }
        let listing = Arc::new(tool_router.list_all());
        let big: Arc<str> = "x".repeat(config.big_mib * 1024 * 1024).into();
        BenchServer { tool_router: Arc::new(tool_router), listing, page_size: config.page_size, big }
    }
}

impl ServerHandler for BenchServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let page = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .strip_prefix("page-")
                .and_then(|k| k.parse::<usize>().ok())
                .ok_or_else(|| ErrorData::invalid_params(format!("unknown cursor {cursor:?}"), None))?,
        };
        let start = page.saturating_mul(self.page_size).min(self.listing.len());
        let end = start.saturating_add(self.page_size).min(self.listing.len());
        let mut result = ListToolsResult::with_all_items(self.listing[start..end].to_vec());
        if end < self.listing.len() {
            result.next_cursor = Some(format!("page-{}", page + 1));
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.tool_router.call(ToolCallContext::new(self, request, context)).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_router.get(name).cloned()
    }
}

fn main() {
    let config = match parse_args() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("rmcp-bench-server: {e}");
            exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    let server = BenchServer::new(&config);
    let outcome = match config.http {
        None => runtime.block_on(serve_stdio(server)),
        Some(port) => runtime.block_on(serve_http(server, port)),
    };
    if let Err(e) = outcome {
        eprintln!("rmcp-bench-server: {e}");
        exit(1);
    }
}

async fn serve_stdio(server: BenchServer) -> Result<(), String> {
    let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| format!("serve: {e}"))?;
    running.waiting().await.map_err(|e| format!("serve: {e}"))?;
    Ok(())
}

async fn serve_http(server: BenchServer, port: u16) -> Result<(), String> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true);
    let service = StreamableHttpService::new(move || Ok(server.clone()), LocalSessionManager::default().into(), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| format!("bind: {e}"))?;
    // The harness reads the port from the first line of stdout.
    println!("{}", listener.local_addr().map_err(|e| e.to_string())?.port());
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| format!("serve: {e}"))
}
