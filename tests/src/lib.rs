//! Cross-crate integration tests and the test support they share (fake servers arrive with the
//! stdio issue).
