//! Every MCP message of revisions 2024-11-05 to 2026-07-28, split by domain.
//!
//! One set of types covers all five revisions: a member that exists only in some revisions is an
//! `Option`. Every struct keeps members it does not model in `extra`, so unknown fields survive a
//! decode/encode round trip.

pub mod cancellation;
pub mod common;
pub mod completion;
pub mod content;
pub mod discover;
pub mod elicitation;
pub mod extra;
mod large_text;
pub mod lifecycle;
pub mod logging;
pub mod meta;
pub mod mrtr;
mod open_enum;
pub mod progress;
pub mod prompts;
pub mod resources;
pub mod roots;
pub mod sampling;
pub mod skills;
pub mod subscriptions;
pub mod tasks;
pub mod tasks_ext;
pub mod tools;
pub mod ui;
