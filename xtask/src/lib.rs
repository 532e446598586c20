//! Project automation for the MCP client stack, run as `cargo xtask <command>`.
//!
//! The binary (`src/main.rs`) reads the command line and runs other tools. This library holds
//! what other crates reuse: the [`tidy`](mod@tidy) architecture checks, which `cargo xtask tidy`
//! reports and a test in the `tests` crate asserts on the real workspace; and [`command`], the
//! helpers the binary's commands share to run other tools with their output captured.
//!
//! ```
//! // A workspace whose tool-system depends on an MCP crate breaks an invariant.
//! let root = std::env::temp_dir().join(format!("xtask-doc-{}", std::process::id()));
//! std::fs::create_dir_all(root.join("tool-system/src"))?;
//! let manifest = "[package]\nname = \"tool-system\"\n\n[dependencies]\nmcp-protocol = \"0\"\n";
//! std::fs::write(root.join("tool-system/Cargo.toml"), manifest)?;
//! std::fs::write(root.join("tool-system/src/lib.rs"), "//! Docs.\n")?;
//! let violations: Vec<String> = xtask::tidy(&root).iter().map(ToString::to_string).collect();
//! std::fs::remove_dir_all(&root)?;
//! assert!(violations.iter().any(|v| v.contains("depends on `mcp-protocol`")), "{violations:?}");
//! # Ok::<(), std::io::Error>(())
//! ```

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
