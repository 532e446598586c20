//! Which transport a configured server uses, from the spellings config files use.

use std::str::FromStr;

use crate::TransportKind;

/// A transport type no transport answers to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown transport type {given:?}: expected \"stdio\", \"streamable_http\" (also \"streamable-http\", \"streamableHttp\" or \"http\") or \"sse\""
)]
pub struct UnknownTransportKind {
    /// What the config said.
    pub given: String,
}

/// The transport named by a config's `type`/`transport` value: `stdio`; `streamable_http`,
/// `streamable-http`, `streamableHttp` or `http`; `sse`. Case and surrounding blanks are
/// ignored.
pub fn parse_transport_kind(value: &str) -> Result<TransportKind, UnknownTransportKind> {
    match value.trim().to_ascii_lowercase().as_str() {
        "stdio" => Ok(TransportKind::Stdio),
        "streamable_http" | "streamable-http" | "streamablehttp" | "http" => Ok(TransportKind::StreamableHttp),
        "sse" => Ok(TransportKind::Sse),
        _ => Err(UnknownTransportKind { given: value.to_owned() }),
    }
}

impl FromStr for TransportKind {
    type Err = UnknownTransportKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_transport_kind(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_spellings() {
        for (s, kind) in [
            ("stdio", TransportKind::Stdio),
            ("streamable_http", TransportKind::StreamableHttp),
            ("streamable-http", TransportKind::StreamableHttp),
            ("streamableHttp", TransportKind::StreamableHttp),
            (" HTTP ", TransportKind::StreamableHttp),
            ("sse", TransportKind::Sse),
        ] {
            assert_eq!(parse_transport_kind(s), Ok(kind), "{s}");
        }
        let e = "websocket".parse::<TransportKind>().unwrap_err();
        assert_eq!(e.given, "websocket");
        assert!(e.to_string().contains("\"websocket\"") && e.to_string().contains("stdio"));
        assert!(parse_transport_kind("memory").is_err());
    }
}
