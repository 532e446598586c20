//! Every MCP message of revisions 2024-11-05 to 2026-07-28, split by domain.
//!
//! One set of types covers all five revisions: a member that exists only in some revisions is an
//! `Option`. Every struct keeps members it does not model in `extra`, so unknown fields survive a
//! decode/encode round trip.

pub mod common;
pub mod content;
pub mod meta;
pub mod mrtr;
pub mod tasks;
pub mod tools;
