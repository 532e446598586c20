//! The integration tests of `mcp-transport` that can share one process, as one test binary (one
//! link instead of one per file). Tests that must run alone stay files of their own in `tests/`:
//! `stdio_close` and `stdio_host_death` (process-wide settings and process trees),
//! `http_plain_warning`, `oauth_secrets` and `oauth_unattended_secrets` (they capture the
//! tracing output of their thread), and `http_secrets` (it remembers secrets process-wide).

#[path = "../http_support/mod.rs"]
mod http_support;
#[path = "../m2m_support/mod.rs"]
mod m2m_support;
#[path = "../oauth_support/mod.rs"]
mod oauth_support;

mod auth_loopback;
mod auth_store;
mod http_cancel;
mod http_errors;
mod http_event_ids;
mod http_inline;
mod http_param_headers;
mod http_redirects;
mod http_resume;
mod http_session;
mod http_sse_legacy;
mod http_standalone_open;
mod http_streamable;
mod jose;
mod oauth_flow;
mod oauth_sse;
mod oauth_unattended;
mod router;
mod stdio_send;
