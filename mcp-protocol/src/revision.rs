//! Protocol revisions as data: which revision has which feature, and which era it belongs to.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The two protocol eras.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Era {
    /// Revisions 2024-11-05 to 2025-11-25: initialize handshake and sessions.
    Legacy,
    /// Revision 2026-07-28 and later: stateless, per-request `_meta`, `server/discover`.
    Modern,
}

/// A protocol revision. The five known revisions are ordered by date; a string this crate does
/// not know is kept as [`ProtocolVersion::Unknown`] rather than rejected, so a peer's answer can
/// be reported faithfully.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision (HTTP+SSE transport).
    V2024_11_05,
    /// 2025-03-26: streamable HTTP, batching, tool annotations, audio.
    V2025_03_26,
    /// 2025-06-18: elicitation, structured tool output, resource links; batching removed.
    V2025_06_18,
    /// 2025-11-25: tasks, URL elicitation, icons, sampling with tools.
    V2025_11_25,
    /// 2026-07-28: the modern era (stateless, `server/discover`, multi round-trip requests).
    V2026_07_28,
    /// A revision string this crate does not know.
    Unknown(String),
}

impl ProtocolVersion {
    /// Every known revision, oldest first.
    pub const KNOWN: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
    /// The newest legacy-era revision, offered in `initialize`.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;
    /// The newest modern-era revision.
    pub const LATEST_MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// Parse a wire string; unknown strings are kept.
    pub fn parse(s: &str) -> ProtocolVersion {
        match s {
            "2024-11-05" => ProtocolVersion::V2024_11_05,
            "2025-03-26" => ProtocolVersion::V2025_03_26,
            "2025-06-18" => ProtocolVersion::V2025_06_18,
            "2025-11-25" => ProtocolVersion::V2025_11_25,
            "2026-07-28" => ProtocolVersion::V2026_07_28,
            other => ProtocolVersion::Unknown(other.to_owned()),
        }
    }

    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ProtocolVersion::Unknown(s) => s,
            known => known.static_str().unwrap_or_default(),
        }
    }

    /// The wire string of a known revision, as a `'static` string (no copy needed to keep it);
    /// `None` for [`ProtocolVersion::Unknown`].
    pub fn static_str(&self) -> Option<&'static str> {
        Some(match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
            ProtocolVersion::Unknown(_) => return None,
        })
    }

    /// Whether this crate knows the revision.
    pub fn is_known(&self) -> bool {
        !matches!(self, ProtocolVersion::Unknown(_))
    }

    /// The era of a known revision; `None` for an unknown one.
    pub fn era(&self) -> Option<Era> {
        match self {
            ProtocolVersion::Unknown(_) => None,
            ProtocolVersion::V2026_07_28 => Some(Era::Modern),
            _ => Some(Era::Legacy),
        }
    }

    fn rank(&self) -> usize {
        Self::KNOWN.iter().position(|v| v == self).unwrap_or(usize::MAX)
    }

    fn at_least(&self, v: ProtocolVersion) -> bool {
        self.is_known() && self.rank() >= v.rank()
    }

    /// JSON-RPC batches are allowed (2025-03-26 only).
    pub fn has_batching(&self) -> bool {
        *self == ProtocolVersion::V2025_03_26
    }
    /// The initialize handshake and (over HTTP) sessions exist.
    pub fn has_sessions(&self) -> bool {
        self.era() == Some(Era::Legacy)
    }
    /// Streamable HTTP exists (otherwise HTTP+SSE).
    pub fn has_streamable_http(&self) -> bool {
        self.at_least(ProtocolVersion::V2025_03_26)
    }
    /// Tool annotations and audio content exist.
    pub fn has_tool_annotations(&self) -> bool {
        self.at_least(ProtocolVersion::V2025_03_26)
    }
    /// Form-mode elicitation exists.
    pub fn has_elicitation_form(&self) -> bool {
        self.at_least(ProtocolVersion::V2025_06_18)
    }
    /// URL-mode elicitation exists.
    pub fn has_elicitation_url(&self) -> bool {
        self.at_least(ProtocolVersion::V2025_11_25)
    }
    /// Structured tool output (outputSchema, structuredContent) and resource links exist.
    pub fn has_structured_output(&self) -> bool {
        self.at_least(ProtocolVersion::V2025_06_18)
    }
    /// The `MCP-Protocol-Version` HTTP header is required after initialisation.
    pub fn has_protocol_version_header(&self) -> bool {
        self.at_least(ProtocolVersion::V2025_06_18)
    }
    /// Tasks (task-augmented requests, `tasks/*`) exist (2025-11-25 only).
    pub fn has_tasks(&self) -> bool {
        *self == ProtocolVersion::V2025_11_25
    }
    /// Icons on tools, prompts, resources and implementations exist.
    pub fn has_icons(&self) -> bool {
        self.at_least(ProtocolVersion::V2025_11_25)
    }
    /// Sampling requests may carry tools.
    pub fn has_sampling_tools(&self) -> bool {
        self.at_least(ProtocolVersion::V2025_11_25)
    }
    /// Multi round-trip requests (InputRequiredResult) replace server-to-client requests.
    pub fn has_mrtr(&self) -> bool {
        self.era() == Some(Era::Modern)
    }
    /// `server/discover` exists.
    pub fn has_discover(&self) -> bool {
        self.era() == Some(Era::Modern)
    }
    /// `subscriptions/listen` replaces `resources/subscribe` and list_changed push.
    pub fn has_subscriptions_listen(&self) -> bool {
        self.era() == Some(Era::Modern)
    }
    /// Every request carries protocol version and client capabilities in `params._meta`.
    pub fn has_request_meta(&self) -> bool {
        self.era() == Some(Era::Modern)
    }
    /// Over HTTP, a request is cancelled by closing its response stream rather than with
    /// `notifications/cancelled` (stdio still sends the notification).
    pub fn has_http_stream_cancellation(&self) -> bool {
        self.era() == Some(Era::Modern)
    }
}

impl PartialOrd for ProtocolVersion {
    /// Known revisions order by date; an unknown revision is comparable only to itself.
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match (self.is_known(), other.is_known()) {
            (true, true) => Some(self.rank().cmp(&other.rank())),
            _ if self == other => Some(Ordering::Equal),
            _ => None,
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ProtocolVersion {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ProtocolVersion::parse(s))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(ProtocolVersion::parse(&s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_revisions_round_trip_and_order() {
        for (i, v) in ProtocolVersion::KNOWN.iter().enumerate() {
            assert_eq!(&ProtocolVersion::parse(v.as_str()), v);
            if i > 0 {
                assert!(ProtocolVersion::KNOWN[i - 1] < *v);
            }
        }
        for v in &ProtocolVersion::KNOWN {
            assert_eq!(v.static_str(), Some(v.as_str()), "a known revision has its static string");
        }
        let unknown = ProtocolVersion::parse("2099-01-01");
        assert_eq!(unknown.as_str(), "2099-01-01");
        assert_eq!(unknown.static_str(), None);
        assert_eq!(unknown.era(), None);
        assert_eq!(unknown.partial_cmp(&ProtocolVersion::V2025_11_25), None);
    }

    #[test]
    fn features_follow_the_revisions() {
        use ProtocolVersion::*;
        assert!(V2025_03_26.has_batching() && !V2025_06_18.has_batching());
        assert!(V2025_11_25.has_tasks() && !V2026_07_28.has_tasks());
        assert!(V2025_06_18.has_elicitation_form() && !V2025_06_18.has_elicitation_url());
        assert!(V2026_07_28.has_mrtr() && !V2025_11_25.has_mrtr());
        assert!(V2024_11_05.has_sessions() && !V2026_07_28.has_sessions());
        assert_eq!(V2026_07_28.era(), Some(Era::Modern));
        assert!(!V2024_11_05.has_streamable_http());
    }
}
