//! The `tests` crate's integration tests that can share one process, as one test binary (one link
//! instead of one per file). Files of their own in `tests/tests/` stay alone because they must:
//! the real-peer tests (`cargo xtask peers` runs each by name), `chaos` (a soak with its own
//! settings), `huge_line_memory` (it measures this process's memory), `no_zombie` (it makes the
//! process a subreaper) and `stdio_faults` (it captures this thread's logs and counts processes).

mod custom_transport;
mod manager;
mod manager_hardening;
mod openai_client;
mod roots_changes;
mod tidy;
