//! Support for the chaos soak test (`tests/tests/chaos.rs`): its settings from the environment,
//! a seeded generator, a sampler of this process's resident memory, and scans of `/proc` for the
//! members of process groups.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The seed used when `CHAOS_SEED` is not set.
pub const DEFAULT_SEED: u64 = 0x1313_C4A0_5EED;

/// The soak's length when `CHAOS_SECS` is not set (plain `cargo test`; `cargo xtask test` sets 60).
pub const DEFAULT_SECS: u64 = 6;

/// What the soak does, from the environment: `CHAOS_SEED` (decimal or `0x` hex), `CHAOS_SECS`,
/// `CHAOS_CALLS` (total calls; default `max(1500, 60 × secs)`), `CHAOS_CONCURRENCY` (most calls
/// in flight; default 192).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// The seed of the plan.
    pub seed: u64,
    /// How long calls are issued.
    pub soak: Duration,
    /// How many calls are issued in all.
    pub calls: u64,
    /// Most calls in flight at once.
    pub concurrency: usize,
}

impl Settings {
    /// Read the settings; a variable that is set but not a number is an error naming it.
    pub fn from_env() -> Result<Settings, String> {
        let seed = env_number("CHAOS_SEED")?.unwrap_or(DEFAULT_SEED);
        let secs = env_number("CHAOS_SECS")?.unwrap_or(DEFAULT_SECS).max(1);
        let calls = env_number("CHAOS_CALLS")?.unwrap_or_else(|| (60 * secs).max(1500)).max(1);
        let concurrency = env_number("CHAOS_CONCURRENCY")?.unwrap_or(192).clamp(1, 4096);
        Ok(Settings {
            seed,
            soak: Duration::from_secs(secs),
            calls,
            concurrency: usize::try_from(concurrency).unwrap_or(4096),
        })
    }
}

fn env_number(name: &str) -> Result<Option<u64>, String> {
    let Some(text) = std::env::var_os(name) else { return Ok(None) };
    let text = text.to_string_lossy();
    let text = text.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map(Some).map_err(|_| format!("{name}={text:?} is not a number (decimal or 0x hex)"))
}

/// SplitMix64: tiny, and its stream for a seed never changes with a dependency's version, so a
/// printed seed replays the same plan on any checkout.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi);
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True `per_mille` times in a thousand.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.next_u64() % 1000 < per_mille
    }

    /// A number in `0.0..1.0`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// This process's resident set size in bytes (`VmRSS` of `/proc/self/status`).
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Samples [`rss_bytes`] on a thread of its own (it keeps sampling even if the runtime is stuck)
/// and keeps the peak, until dropped.
#[derive(Debug)]
pub struct RssSampler {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    /// Start sampling every `every`.
    pub fn start(every: Duration) -> RssSampler {
        let peak = Arc::new(AtomicU64::new(rss_bytes().unwrap_or(0)));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (peak.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Some(rss) = rss_bytes() {
                    p.fetch_max(rss, Ordering::Relaxed);
                }
                std::thread::sleep(every);
            }
        });
        RssSampler { peak, stop, thread: Some(thread) }
    }

    /// The highest sample so far, in bytes.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One process found by [`group_members`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its process id.
    pub pid: u32,
    /// Its process group.
    pub pgid: u32,
    /// Its state letter (`S`, `R`, `Z`, ...).
    pub state: char,
    /// Its command name.
    pub comm: String,
}

/// Every process (zombies included) whose process group is one of `groups`, from `/proc`.
pub fn group_members(groups: &BTreeSet<u32>) -> Vec<Member> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // `pid (comm) state ppid pgrp ...`; comm may hold ')' itself: the fields follow the last.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        let comm = stat[open + 1..close].to_owned();
        let mut fields = stat[close + 1..].split_whitespace();
        let state = fields.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let pgid = fields.nth(1).and_then(|g| g.parse::<u32>().ok());
        if let Some(pgid) = pgid.filter(|g| groups.contains(g)) {
            found.push(Member { pid, pgid, state, comm });
        }
    }
    found.sort_by_key(|m| m.pid);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_ranges_hold() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let first: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        assert_eq!(first, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(first[0], Rng::new(8).next_u64());
        for _ in 0..1000 {
            let r = a.range(3, 9);
            assert!((3..=9).contains(&r));
            let u = a.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert!(!a.chance(0));
        assert!(a.chance(1000));
    }

    #[test]
    fn this_process_is_found_in_its_own_group_and_rss_is_read() {
        let me = std::process::id();
        let group = u32::try_from(nix::unistd::getpgrp().as_raw()).unwrap();
        let members = group_members(&BTreeSet::from([group]));
        assert!(members.iter().any(|m| m.pid == me && m.pgid == group), "{members:?}");
        assert!(rss_bytes().is_some_and(|r| r > 0));
    }
}
