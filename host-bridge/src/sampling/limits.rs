//! The per-server sampling rate limit: at most N requests in any 60-second window.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use mcp_protocol::{ErrorCode, ErrorObject};
use serde_json::json;
use tokio::time::Instant;

/// The error code of a sampling request refused by the rate limit: an implementation-defined
/// server error (JSON-RPC reserves -32000 to -32099 for those).
pub const RATE_LIMITED: ErrorCode = ErrorCode(-32000);

const WINDOW: Duration = Duration::from_secs(60);

/// Counts each server's requests over a sliding minute. Memory: at most `per_minute` instants
/// per server name (names come from the host's configuration, not from servers).
#[derive(Debug)]
pub(crate) struct RateLimiter {
    per_minute: Option<u32>,
    seen: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl RateLimiter {
    /// `None`: no limit.
    pub(crate) fn new(per_minute: Option<u32>) -> Self {
        RateLimiter { per_minute, seen: Mutex::new(HashMap::new()) }
    }

    /// Count one request of `server`, or refuse it when the last minute already holds the limit.
    pub(crate) fn admit(&self, server: &str) -> Result<(), ErrorObject> {
        let Some(limit) = self.per_minute else { return Ok(()) };
        let now = Instant::now();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let times = seen.entry(server.to_owned()).or_default();
        while times.front().is_some_and(|t| now.duration_since(*t) >= WINDOW) {
            times.pop_front();
        }
        if times.len() < limit as usize {
            times.push_back(now);
            return Ok(());
        }
        let retry_after = times.front().map_or(WINDOW, |oldest| WINDOW.saturating_sub(now.duration_since(*oldest)));
        let message = format!(
            "sampling rate limit exceeded for server {server:?}: at most {limit} request(s) per minute; \
             retry in {:.1} s",
            retry_after.as_secs_f64()
        );
        Err(ErrorObject::new(RATE_LIMITED, message)
            .with_data(json!({"limitPerMinute": limit, "retryAfterMs": retry_after.as_millis() as u64})))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_window_slides_per_server() {
        let limiter = RateLimiter::new(Some(2));
        limiter.admit("a").unwrap();
        tokio::time::advance(Duration::from_secs(20)).await;
        limiter.admit("a").unwrap();
        let err = limiter.admit("a").unwrap_err();
        assert_eq!(err.code, RATE_LIMITED);
        assert!(err.message.contains("\"a\"") && err.message.contains("at most 2 request(s) per minute"), "{err:?}");
        assert_eq!(err.data.as_ref().unwrap()["retryAfterMs"], 40_000);
        // Another server has its own budget.
        limiter.admit("b").unwrap();
        // The first request leaves the window after 60 s: one more fits, then no more.
        tokio::time::advance(Duration::from_secs(40)).await;
        limiter.admit("a").unwrap();
        assert!(limiter.admit("a").is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn no_limit_and_zero() {
        let unlimited = RateLimiter::new(None);
        for _ in 0..1000 {
            unlimited.admit("a").unwrap();
        }
        assert!(RateLimiter::new(Some(0)).admit("a").is_err());
    }
}
