//! The module graph on small crates written to temporary directories.
