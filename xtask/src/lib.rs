//! Project automation for the MCP client stack, run as `cargo xtask <command>`.
//!
//! The binary (`src/main.rs`) reads the command line and runs other tools. This library holds
//! what other crates reuse: the [`tidy`](mod@tidy) architecture checks, which `cargo xtask tidy`
//! reports and a test in the `tests` crate asserts on the real workspace; and [`command`], the
//! helpers the binary's commands share to run other tools with their output captured.

use std::path::{Path, PathBuf};

pub mod command;
pub mod tidy;

pub use tidy::{Violation, tidy};

/// The workspace root: the directory above this crate.
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}
