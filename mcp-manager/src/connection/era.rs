//! Era negotiation: probe with `server/discover` at the modern revision, fall back to the legacy
//! initialize handshake when the server does not speak the modern era.

use std::time::Duration;

use mcp_protocol::types::common::RequestParams;
use mcp_protocol::types::discover::{
    Discover, HeaderMismatchData, MissingRequiredClientCapabilityData, UnsupportedProtocolVersionData,
};
use mcp_protocol::types::meta::{JsonObject, Meta};
use mcp_protocol::{Era, ErrorCode, ProtocolVersion};
use mcp_transport::TransportKind;
use serde_json::Value;

use super::{ConnectionError, McpConnection, ServerInfo};
use crate::session::{RequestOptions, Session, SessionError};

/// Which era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EraPreference {
    /// Probe with `server/discover`; fall back to the legacy handshake (the default).
    #[default]
    Auto,
    /// Only the modern era: a server that does not speak it is an error.
    Modern,
    /// Only the legacy era: the initialize handshake, no probe.
    Legacy,
}

impl std::str::FromStr for EraPreference {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(EraPreference::Auto),
            "modern" => Ok(EraPreference::Modern),
            "legacy" => Ok(EraPreference::Legacy),
            other => Err(format!("unknown era {other:?}: expected auto, modern or legacy")),
        }
    }
}

/// What the probe decided.
enum Verdict {
    Modern(Box<ServerInfo>),
    Legacy,
    /// The probe got no answer in time: most likely a legacy server that ignores requests before
    /// initialize, but possibly a modern one that is slow to start (a stdio server on a busy
    /// machine), which answers the probe late and then refuses the handshake.
    Unanswered,
}

impl McpConnection {
    /// The `_meta` members every modern request carries; the client's capabilities declare the
    /// tasks extension when `tasks` (see [`super::tasks::with_tasks_extension`]).
    pub(crate) fn modern_meta(&self, version: &ProtocolVersion, tasks: bool) -> JsonObject {
        let mut meta = Meta::new();
        meta.set(Meta::PROTOCOL_VERSION, version.as_str());
        let capabilities = self.options.callbacks.capabilities();
        let capabilities = if tasks { super::tasks::with_tasks_extension(capabilities) } else { capabilities };
        meta.set(Meta::CLIENT_CAPABILITIES, capabilities);
        meta.set(Meta::CLIENT_INFO, &self.options.client_info);
        if let Some(level) = &self.options.log_level {
            meta.set(Meta::LOG_LEVEL, level);
        }
        meta.0
    }

    /// Settle the era on a fresh session, then run the handshake of that era.
    pub(crate) async fn negotiate(
        &self,
        session: &Session,
        kind: TransportKind,
    ) -> Result<ServerInfo, ConnectionError> {
        let preference = match (self.options.era, self.cached_era(kind)) {
            (EraPreference::Auto, Some(Era::Legacy)) => EraPreference::Legacy,
            (p, _) => p,
        };
        if preference != EraPreference::Legacy {
            match self.probe(session, kind, preference).await? {
                Verdict::Modern(info) => {
                    self.remember_era(Era::Modern);
                    return Ok(*info);
                }
                Verdict::Legacy => session.set_request_meta(None),
                Verdict::Unanswered => {
                    session.set_request_meta(None);
                    match self.handshake(session, kind).await {
                        Err(refused) if refused_as_modern(&refused) => {
                            // The server refuses the legacy handshake: it is modern and was only
                            // slow. Ask again, this time waiting as long as any request.
                            tracing::debug!(server = %self.name(), "the legacy handshake was refused after an unanswered probe; probing again");
                            return match self.probe(session, kind, EraPreference::Modern).await? {
                                Verdict::Modern(info) => {
                                    self.remember_era(Era::Modern);
                                    Ok(*info)
                                }
                                Verdict::Legacy | Verdict::Unanswered => Err(refused),
                            };
                        }
                        other => return self.after_handshake(session, other?).await,
                    }
                }
            }
        }
        let info = self.handshake(session, kind).await?;
        self.after_handshake(session, info).await
    }

    /// What follows a successful legacy handshake.
    async fn after_handshake(&self, session: &Session, info: ServerInfo) -> Result<ServerInfo, ConnectionError> {
        self.remember_era(Era::Legacy);
        // The legacy era sets the log level once per session (the modern era sends it with
        // every request); a server that refuses keeps its own level.
        if let Some(level) = &self.options.log_level
            && info.capabilities.logging.is_some()
        {
            let params = mcp_protocol::types::logging::SetLevelParams {
                level: level.clone(),
                meta: None,
                extra: Default::default(),
            };
            if let Err(error) =
                session.request::<mcp_protocol::types::logging::SetLevel>(&params, RequestOptions::default()).await
            {
                tracing::warn!(server = %self.name, %error, "logging/setLevel was refused");
            }
        }
        Ok(info)
    }

    async fn probe(
        &self,
        session: &Session,
        kind: TransportKind,
        preference: EraPreference,
    ) -> Result<Verdict, ConnectionError> {
        let strict = preference == EraPreference::Modern;
        let mut version = ProtocolVersion::LATEST_MODERN;
        let mut retried = false;
        loop {
            // The probe declares the tasks extension: the server's answer says whether it has it.
            session.set_request_meta(Some(self.modern_meta(&version, true)));
            let options = RequestOptions { timeout: (!strict).then_some(self.options.probe_timeout), progress: None };
            let error = match session.request::<Discover>(&RequestParams::default(), options).await {
                Ok(result) => {
                    if let Some(v) = pick_modern(&result.supported_versions) {
                        // An extension is in use when both sides declare it: a server that does
                        // not advertise tasks would only parse the declaration on every request.
                        let tasks = super::tasks::advertises_tasks(&result.capabilities);
                        if v != version || !tasks {
                            version = v;
                            session.set_request_meta(Some(self.modern_meta(&version, tasks)));
                        }
                        let implementation = result.server_info().unwrap_or_default();
                        return Ok(Verdict::Modern(Box::new(ServerInfo {
                            protocol_version: version,
                            implementation,
                            capabilities: result.capabilities,
                            instructions: result.instructions,
                            transport: kind,
                        })));
                    }
                    if !strict && result.supported_versions.iter().any(|v| is_legacy(v)) {
                        return Ok(Verdict::Legacy);
                    }
                    return Err(self.no_mutual_version(&result.supported_versions));
                }
                Err(e) => e,
            };
            match &error {
                SessionError::Rpc { error: rpc, .. } if rpc.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => {
                    let supported =
                        UnsupportedProtocolVersionData::from_error(rpc).map(|d| d.supported).unwrap_or_default();
                    match pick_modern(&supported) {
                        // Retried once even when the server lists the very version it refused:
                        // the spec says to retry with a supported one, and servers do reject a
                        // first request that way.
                        Some(v) if !retried => {
                            version = v;
                            retried = true;
                            continue;
                        }
                        _ if !strict && supported.iter().any(|v| is_legacy(v)) => return Ok(Verdict::Legacy),
                        _ => return Err(self.no_mutual_version(&supported)),
                    }
                }
                SessionError::Rpc { error: rpc, .. } if rpc.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY => {
                    let required = MissingRequiredClientCapabilityData::from_error(rpc)
                        .and_then(|d| serde_json::to_value(d.required_capabilities).ok())
                        .unwrap_or(Value::Null);
                    return Err(ConnectionError::MissingClientCapability {
                        server: self.name().to_owned(),
                        required: required.to_string(),
                        message: rpc.message.clone(),
                    });
                }
                SessionError::Rpc { error: rpc, .. } if rpc.code == ErrorCode::HEADER_MISMATCH => {
                    let detail = HeaderMismatchData::from_error(rpc).map(|d| Value::Object(d.extra).to_string());
                    return Err(ConnectionError::HeaderMismatch {
                        server: self.name().to_owned(),
                        message: rpc.message.clone(),
                        detail: detail.unwrap_or_default(),
                    });
                }
                SessionError::Closed { .. } | SessionError::Encode { .. } => return Err(error.into()),
                _ if strict => return Err(error.into()),
                _ if error.is_timeout() => {
                    tracing::debug!(server = %self.name(), "server/discover probe got no answer in time; trying the legacy handshake");
                    return Ok(Verdict::Unanswered);
                }
                _ => {
                    tracing::debug!(server = %self.name(), error = %error, "server/discover probe failed; using the legacy handshake");
                    return Ok(Verdict::Legacy);
                }
            }
        }
    }

    fn no_mutual_version(&self, theirs: &[String]) -> ConnectionError {
        let ours: Vec<&str> = ProtocolVersion::KNOWN.iter().map(ProtocolVersion::as_str).collect();
        ConnectionError::NoMutualVersion {
            server: self.name().to_owned(),
            ours: ours.join(", "),
            theirs: theirs.join(", "),
        }
    }
}

/// Whether the legacy handshake was refused because the server speaks only the modern era.
fn refused_as_modern(error: &ConnectionError) -> bool {
    matches!(error, ConnectionError::Session(SessionError::Rpc { error, .. })
        if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
}

fn is_legacy(v: &str) -> bool {
    ProtocolVersion::parse(v).era() == Some(Era::Legacy)
}

/// The newest modern revision both sides know.
fn pick_modern(versions: &[String]) -> Option<ProtocolVersion> {
    versions
        .iter()
        .map(|v| ProtocolVersion::parse(v))
        .filter(|v| v.era() == Some(Era::Modern))
        .max_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal))
}

/// Default time the probe waits before assuming a legacy server.
pub(crate) const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
