//! Support for the schema conformance tests: the official `schema.json` of each revision
//! ([`spec`]), the table that maps every union member of the schemas to our Rust types
//! ([`table`]), the minimal and maximal instances those types build ([`instances`]), the
//! schemas' closed enums against ours ([`enums`]), and error responses ([`errors`]).

pub mod enums;
pub mod errors;
pub mod instances;
pub mod revisions;
pub mod spec;
pub mod table;

/// The five revisions the schemas cover, oldest first. Ordered, so builders can say
/// `rev >= Rev::V2025_06_18` for "this field exists since 2025-06-18".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rev {
    /// 2024-11-05.
    V2024_11_05,
    /// 2025-03-26.
    V2025_03_26,
    /// 2025-06-18.
    V2025_06_18,
    /// 2025-11-25.
    V2025_11_25,
    /// 2026-07-28.
    V2026_07_28,
}

impl Rev {
    /// Every revision, oldest first.
    pub const ALL: [Rev; 5] =
        [Rev::V2024_11_05, Rev::V2025_03_26, Rev::V2025_06_18, Rev::V2025_11_25, Rev::V2026_07_28];

    /// The wire string, also the folder name of the schema.
    pub fn as_str(self) -> &'static str {
        match self {
            Rev::V2024_11_05 => "2024-11-05",
            Rev::V2025_03_26 => "2025-03-26",
            Rev::V2025_06_18 => "2025-06-18",
            Rev::V2025_11_25 => "2025-11-25",
            Rev::V2026_07_28 => "2026-07-28",
        }
    }

    /// The modern era: per-request `_meta`, `resultType`, input requests instead of server requests.
    pub fn is_modern(self) -> bool {
        self == Rev::V2026_07_28
    }
}

impl std::fmt::Display for Rev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
