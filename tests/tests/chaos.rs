//! The chaos soak: one `McpManager` over eight fake stdio servers that, call by call and at
//! random (seeded), crash, leave an orphan holding their stdout, stall, hang, answer slowly or
//! with errors, flood notifications (logs, progress, list_changed), ping and ask the client, and
//! send junk lines (not JSON, broken JSON-RPC, wrong ids, duplicate answers). The host issues
//! thousands of calls, many at once, through `McpToolProvider` in a `tool_system::ToolRegistry`,
//! as a host does; some of them it abandons after a short deadline (the future is dropped).
//!
//! Invariants checked (every broken one is reported, then the test fails):
//! - every call resolves exactly once: a result, an error or the library's own timeout, within
//!   the request timeout plus a generous margin (none lost, none twice, none stuck);
//! - every success is the answer to its own call (the token it sent comes back);
//! - memory stays bounded (peak VmRSS under 512 MiB);
//! - after the soak, every server that was not frozen is ready again with a live process and
//!   answers a clean call (the manager recovers from everything the servers did);
//! - closing the registry (and so the manager) finishes within a bound, and afterwards no
//!   process is left in any server's process group, reconnects and grandchildren included.
//!
//! `CHAOS_SEED` (default [`tests::chaos::DEFAULT_SEED`], printed), `CHAOS_SECS` (default 6;
//! `cargo xtask test` runs 60), `CHAOS_CALLS`, `CHAOS_CONCURRENCY`: see
//! [`tests::chaos::Settings`].

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_manager::config::{McpConfig, ServerConfig};
use mcp_manager::manager::{ManagerOptions, McpManager, McpToolProvider, PlanOverride, ReconnectPolicy};
use mcp_manager::{ServerState, TransportPlan};
use serde_json::{Value, json};
use test_support::process::process_state;
use tests::chaos::{Rng, RssSampler, Settings, group_members};
use tests::support::{Spawned, recording_factory};
use tokio::sync::Semaphore;
use tool_system::{ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolRegistry};

/// Each server's request timeout: the library must end every call within it (plus the margin).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// How long after its request timeout a call may take before it counts as stuck.
const STUCK_MARGIN: Duration = Duration::from_secs(15);
/// The memory bound.
const MAX_RSS: u64 = 512 * 1024 * 1024;
/// How long closing the registry (and the manager) may take.
const CLOSE_LIMIT: Duration = Duration::from_secs(30);
/// How long after close every process of every group may take to be gone.
const GONE_LIMIT: Duration = Duration::from_secs(10);
/// How long a server may take to be ready again after the soak.
const RECOVERY_LIMIT: Duration = Duration::from_secs(25);

/// The servers: name and flags. The last one is the freezer: once in the soak it stops reading
/// stdin for good, after a ping flood whose replies fill its pipe.
const SERVERS: &[(&str, &[&str])] = &[
    ("s0", &["--chaos", "chaos-0", "--grandchild", "--log"]),
    ("s1", &["--chaos", "chaos-1", "--grandchild", "--list-changed"]),
    ("s2", &["--chaos", "chaos-2", "--banner"]),
    ("s3", &["--chaos", "chaos-3", "--log", "--list-changed"]),
    ("s4", &["--chaos", "chaos-4", "--tools", "50"]),
    ("s5", &["--chaos", "chaos-5", "--page-size", "2", "--list-changed"]),
    ("s6", &["--chaos", "chaos-6"]),
    ("s7", &["--chaos", "chaos-7"]),
];
const FREEZER: usize = 7;
/// The steady server never crashes or leaves an orphan (those acts become `hang`), so that what
/// it is asked to do can last as long as it likes (a progress flood outlasting every timeout).
/// Neither does the freezer, so that it is there to freeze.
const STEADY: usize = 6;

/// What a call asks its server to do (the `act` argument of the fake server's `chaos` tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Act {
    Ok,
    ToolError,
    RpcError,
    Slow,
    Stall,
    Hang,
    HangProgress,
    Crash,
    Orphan,
    Freeze,
}

impl Act {
    fn name(self) -> &'static str {
        match self {
            Act::Ok => "ok",
            Act::ToolError => "tool_error",
            Act::RpcError => "rpc_error",
            Act::Slow => "slow",
            Act::Stall => "stall",
            Act::Hang => "hang",
            Act::HangProgress => "hang_progress",
            Act::Crash => "crash",
            Act::Orphan => "orphan",
            Act::Freeze => "freeze",
        }
    }

    /// Whether the server answers with a successful result.
    fn succeeds(self) -> bool {
        matches!(self, Act::Ok | Act::Slow | Act::Stall)
    }
}

/// One planned call.
#[derive(Debug, Clone)]
struct Call {
    n: u64,
    server: usize,
    act: Act,
    token: String,
    args: serde_json::Map<String, Value>,
    /// The host gives up after this long and drops the call's future (`None`: it waits for the
    /// library to end the call).
    abandon_after: Option<Duration>,
}

/// Acts by weight (per mille), for every server.
const ACTS: &[(Act, u64)] = &[
    (Act::Ok, 430),
    (Act::ToolError, 50),
    (Act::RpcError, 50),
    (Act::Slow, 180),
    (Act::Stall, 80),
    (Act::Hang, 100),
    (Act::HangProgress, 15),
    (Act::Crash, 85),
    (Act::Orphan, 10),
];

fn plan(rng: &mut Rng, n: u64, freeze_now: bool) -> Call {
    let server = if freeze_now { FREEZER } else { rng.range(0, SERVERS.len() as u64 - 1) as usize };
    let act = if freeze_now {
        Act::Freeze
    } else {
        let mut pick = rng.range(0, ACTS.iter().map(|(_, w)| w).sum::<u64>() - 1);
        let mut chosen = Act::Ok;
        for &(act, weight) in ACTS {
            if pick < weight {
                chosen = act;
                break;
            }
            pick -= weight;
        }
        match chosen {
            Act::Crash | Act::Orphan if server == STEADY || server == FREEZER => Act::Hang,
            other => other,
        }
    };
    let token = format!("call-{n}");
    let mut args = serde_json::Map::new();
    args.insert("token".into(), json!(token));
    args.insert("act".into(), json!(act.name()));
    let ms = match act {
        Act::Slow => rng.range(10, 3000),
        Act::Stall => rng.range(10, 1500),
        // Longer than the request timeout and the margin together.
        Act::HangProgress => 40_000,
        _ => 0,
    };
    args.insert("ms".into(), json!(ms));
    let mut flood = |key: &str, per_mille: u64, max: u64| {
        if rng.chance(per_mille) {
            args.insert(key.into(), json!(rng.range(1, max)));
        }
    };
    flood("logs", 100, 200);
    flood("progress", 50, 200);
    flood("list_changed", 30, 5);
    flood("pings", 30, 100);
    flood("asks", 20, 60);
    flood("junk", 80, 20);
    if act == Act::Freeze {
        // Replies the frozen server never reads: far more than a pipe holds.
        args.insert("pings".into(), json!(3000));
    }
    if rng.chance(50) {
        args.insert("wrong_id".into(), json!(true));
    }
    if rng.chance(50) {
        args.insert("duplicate".into(), json!(true));
    }
    if rng.chance(30) {
        args.insert("pad".into(), json!("p".repeat(64 * 1024)));
    }
    // The freeze is never abandoned: it must reach the server.
    let abandon_after = (rng.chance(80) && act != Act::Freeze).then(|| Duration::from_millis(rng.range(20, 800)));
    Call { n, server, act, token, args, abandon_after }
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// A successful result carrying the call's own token.
    Ok,
    /// A failed result: a tool error, an RPC error, a lost server, an unknown tool...
    Error(String),
    /// The library's own timeout.
    Timeout,
    /// The host gave up at its short deadline and dropped the call.
    Abandoned,
    /// Not ended by the library within its request timeout and the margin.
    Stuck,
    /// A success that is not the answer to this call.
    Wrong(String),
}

fn classify(call: &Call, result: ToolExecutionResult) -> Outcome {
    if result.success {
        let content = result.content.unwrap_or_default();
        return if call.act.succeeds() && content == call.token {
            Outcome::Ok
        } else {
            Outcome::Wrong(content.into_string())
        };
    }
    let message = result.error_message.unwrap_or_default();
    if message.contains("timed out") { Outcome::Timeout } else { Outcome::Error(message) }
}

/// A short name for an error message, for the summary's histogram.
fn error_kind(message: &str) -> &'static str {
    [
        ("unknown tool", "unknown tool (server not routed)"),
        ("chaos error", "rpc error"),
        ("call-", "tool error"),
        ("was lost", "server lost"),
        ("closed", "connection closed"),
        ("exited", "server exited"),
    ]
    .iter()
    .find(|(needle, _)| message.contains(needle))
    .map_or("other", |(_, kind)| kind)
}

#[derive(Default)]
struct Tally {
    resolved: Mutex<HashSet<u64>>,
    twice: Mutex<Vec<u64>>,
    outcomes: Mutex<BTreeMap<&'static str, u64>>,
    errors: Mutex<BTreeMap<&'static str, u64>>,
    other_errors: Mutex<Vec<String>>,
    stuck: Mutex<Vec<(u64, usize, Act)>>,
    wrong: Mutex<Vec<(u64, Act, String)>>,
    in_flight: AtomicUsize,
    peak_in_flight: AtomicUsize,
    /// How the freeze call ended (a timeout or abandonment: it reached the server).
    freeze: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Tally {
    fn record(&self, call: &Call, outcome: Outcome) {
        if call.act == Act::Freeze {
            *lock(&self.freeze) = Some(format!("{outcome:?}"));
        }
        if !lock(&self.resolved).insert(call.n) {
            lock(&self.twice).push(call.n);
        }
        let key = match &outcome {
            Outcome::Ok => "ok",
            Outcome::Error(message) => {
                let kind = error_kind(message);
                *lock(&self.errors).entry(kind).or_default() += 1;
                if kind == "other" && lock(&self.other_errors).len() < 5 {
                    lock(&self.other_errors).push(message.chars().take(300).collect());
                }
                "error"
            }
            Outcome::Timeout => "timeout",
            Outcome::Abandoned => "abandoned",
            Outcome::Stuck => {
                lock(&self.stuck).push((call.n, call.server, call.act));
                "stuck"
            }
            Outcome::Wrong(content) => {
                lock(&self.wrong).push((call.n, call.act, content.chars().take(100).collect()));
                "wrong"
            }
        };
        *lock(&self.outcomes).entry(key).or_default() += 1;
    }

    fn count(&self, key: &str) -> u64 {
        lock(&self.outcomes).get(key).copied().unwrap_or(0)
    }
}

/// Run one call through the registry, as a host does, and record how it ended.
async fn run_call(registry: Arc<ToolRegistry>, call: Call, tally: Arc<Tally>) {
    let now = tally.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    tally.peak_in_flight.fetch_max(now, Ordering::SeqCst);
    let name = tool_name(call.server);
    let invocation = ToolInvocation::new(name.clone(), call.args.clone());
    let invoke = registry.invoke(invocation, ToolExecutionContext::default());
    let outcome = match call.abandon_after {
        Some(after) => match tokio::time::timeout(after, invoke).await {
            Ok(result) => classify(&call, result),
            Err(_) => Outcome::Abandoned,
        },
        None => match tokio::time::timeout(REQUEST_TIMEOUT + STUCK_MARGIN, invoke).await {
            Ok(result) => classify(&call, result),
            Err(_) => Outcome::Stuck,
        },
    };
    tally.record(&call, outcome);
    tally.in_flight.fetch_sub(1, Ordering::SeqCst);
}

/// The LLM name of server `server`'s chaos tool.
fn tool_name(server: usize) -> String {
    format!("{}__chaos-{server}", SERVERS[server].0)
}

fn server_config(name: &str, flags: &[&str]) -> ServerConfig {
    let mut s = tests::fake::server_config(name, env!("CARGO_BIN_EXE_fake-mcp-server"), flags);
    s.request_timeout = REQUEST_TIMEOUT;
    s
}

/// Every process the manager starts, recorded by the factory that starts it.
fn recording_override(spawned: Arc<Mutex<Vec<Spawned>>>) -> PlanOverride {
    Arc::new(move |config: &ServerConfig| {
        let (factory, log) = recording_factory(config.stdio_config()?);
        lock(&spawned).push(log);
        Some(TransportPlan::single(factory))
    })
}

fn all_pids(spawned: &Mutex<Vec<Spawned>>) -> BTreeSet<u32> {
    lock(spawned).iter().flat_map(Spawned::pids).collect()
}

fn alive(pid: u32) -> bool {
    process_state(pid).is_some_and(|s| s != 'Z')
}

/// After the soak: wait until `server` is ready with a live process, then call it cleanly.
async fn recovered(manager: &McpManager, registry: &Arc<ToolRegistry>, server: usize) -> Result<(), String> {
    let name = SERVERS[server].0;
    let deadline = tokio::time::Instant::now() + RECOVERY_LIMIT;
    loop {
        let status = manager.server_status(name).ok_or_else(|| format!("{name}: no status"))?;
        let ready = matches!(status.state, ServerState::Ready | ServerState::Degraded);
        if ready && status.pid.is_some_and(alive) {
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            let pid = match status.pid {
                None => "no pid".to_owned(),
                Some(p) => match process_state(p) {
                    None => format!("pid {p}, which is gone"),
                    Some(state) => format!("pid {p} in state {state}"),
                },
            };
            return Err(format!(
                "{name} not ready with a live process after {RECOVERY_LIMIT:?}: state {:?}, {pid}, last error {:?}",
                status.state, status.last_error
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A server may still be working through calls the host gave up on (a backlog of stalls it
    // reads one after the other): it has recovered when a clean call is answered before the
    // deadline, not necessarily the first one.
    let tool = tool_name(server);
    let token = format!("recovery-{name}");
    let limit = REQUEST_TIMEOUT + STUCK_MARGIN;
    let deadline = tokio::time::Instant::now() + RECOVERY_LIMIT;
    let mut attempts = 0;
    loop {
        attempts += 1;
        let invocation = ToolInvocation::from_value(tool.clone(), json!({"token": token, "act": "ok"}));
        let result = tokio::time::timeout(limit, registry.invoke(invocation, ToolExecutionContext::default()))
            .await
            .map_err(|_| format!("{name}: a clean call after the soak did not end within {limit:?}"))?;
        if result.success && result.content.as_deref() == Some(token.as_str()) {
            if attempts > 1 {
                println!("chaos: {name} answered a clean call at try {attempts}");
            }
            return Ok(());
        }
        if tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        let status = manager.server_status(name);
        let pid_state = status.as_ref().and_then(|s| s.pid).map(|p| (p, process_state(p)));
        return Err(format!(
            "{name}: no clean call after the soak succeeded within {RECOVERY_LIMIT:?} ({attempts} tries), the last: {:?} (status {:?}, pid (and its state) {pid_state:?})",
            result.error_message.or(result.content.map(String::from)),
            status.map(|s| s.state)
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_soak() {
    let settings = Settings::from_env().expect("CHAOS_* settings");
    let limit = settings.soak + Duration::from_secs(240);
    tokio::time::timeout(limit, soak(settings)).await.expect("the chaos soak as a whole timed out");
}

async fn soak(settings: Settings) {
    // Orphans of the servers (the `--grandchild` sleeps, the `orphan` act's children) become this
    // process's children, as they would of a host that is PID 1, and the transport must reap
    // them; otherwise they would be left to a PID 1 that may reap nothing.
    nix::sys::prctl::set_child_subreaper(true).expect("PR_SET_CHILD_SUBREAPER");
    let Settings { seed, soak, calls, concurrency } = settings;
    println!(
        "chaos: seed={seed:#x} (CHAOS_SEED) soak={soak:?} (CHAOS_SECS) calls={calls} concurrency={concurrency} servers={}",
        SERVERS.len()
    );
    let rss = RssSampler::start(Duration::from_millis(50));
    let mut failures: Vec<String> = Vec::new();

    let spawned: Arc<Mutex<Vec<Spawned>>> = Arc::default();
    let options = ManagerOptions {
        reconnect: ReconnectPolicy {
            initial_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(500),
            max_attempts: 1000,
        },
        transport_override: Some(recording_override(spawned.clone())),
        ..Default::default()
    };
    let config = McpConfig {
        servers: SERVERS.iter().map(|(name, flags)| server_config(name, flags)).collect(),
        client: Default::default(),
    };
    let manager = tokio::time::timeout(Duration::from_secs(60), McpManager::start(config, options))
        .await
        .expect("the manager did not start within 60 s");
    for s in manager.status() {
        assert_eq!(s.state, ServerState::Ready, "before any chaos: {s:?}");
    }
    let registry = Arc::new(ToolRegistry::new());
    tokio::time::timeout(Duration::from_secs(10), registry.register(McpToolProvider::new(manager.clone())))
        .await
        .expect("registering the provider did not finish");

    let listed = tokio::time::timeout(Duration::from_secs(10), registry.tools(&ToolExecutionContext::default()))
        .await
        .expect("listing the tools did not finish");
    for server in 0..SERVERS.len() {
        let name = tool_name(server);
        assert!(
            listed.iter().any(|t| t.llm_name == name),
            "{name} is not offered: {:?}",
            manager.routing().conflicts()
        );
    }

    // The pids the manager reports, sampled: each must be one the factories recorded.
    let reported: Arc<Mutex<BTreeSet<u32>>> = Arc::default();
    let sampler = {
        let (manager, reported) = (manager.clone(), reported.clone());
        tokio::spawn(async move {
            loop {
                lock(&reported).extend(manager.status().iter().filter_map(|s| s.pid));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };

    // The soak: calls issued in waves of random size, at most `concurrency` in flight.
    let tally = Arc::new(Tally::default());
    let mut rng = Rng::new(seed);
    let started = tokio::time::Instant::now();
    let freeze_at = started + soak.mul_f64(0.3 + 0.4 * rng.unit());
    let mut frozen = false;
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = tokio::task::JoinSet::new();
    let waves = (soak.as_millis() / 100).max(1) as u64;
    let per_wave = calls.div_ceil(waves);
    let mut issued = 0u64;
    let mut acts: BTreeMap<Act, u64> = BTreeMap::new();
    'soak: for wave in 0..waves {
        tokio::time::sleep_until(started + Duration::from_millis(wave * 100)).await;
        let size = rng.range(0, 2 * per_wave).min(calls - issued);
        for _ in 0..size {
            let freeze_now = !frozen && tokio::time::Instant::now() >= freeze_at;
            frozen |= freeze_now;
            let call = plan(&mut rng, issued, freeze_now);
            let permit = match tokio::time::timeout(REQUEST_TIMEOUT + STUCK_MARGIN, permits.clone().acquire_owned())
                .await
            {
                Ok(permit) => permit.expect("the semaphore is never closed"),
                Err(_) => {
                    failures
                        .push(format!("no call slot freed for {:?}: calls do not end", REQUEST_TIMEOUT + STUCK_MARGIN));
                    break 'soak;
                }
            };
            *acts.entry(call.act).or_default() += 1;
            issued += 1;
            let (registry, tally) = (registry.clone(), tally.clone());
            tasks.spawn(async move {
                run_call(registry, call, tally).await;
                drop(permit);
            });
        }
        if issued >= calls {
            break;
        }
    }
    let soaked = started.elapsed();

    // Every call ends: by the library, or stuck at its own guard (which these bounds outlast).
    let drain_limit = REQUEST_TIMEOUT + STUCK_MARGIN + Duration::from_secs(10);
    let drained = tokio::time::timeout(drain_limit, async {
        let mut panicked = 0;
        while let Some(joined) = tasks.join_next().await {
            panicked += usize::from(joined.is_err());
        }
        panicked
    })
    .await;
    match drained {
        Ok(0) => {}
        Ok(n) => failures.push(format!("{n} call tasks panicked")),
        Err(_) => {
            failures.push(format!("{} call tasks still running {drain_limit:?} after the soak", tasks.len()));
            tasks.abort_all();
        }
    }
    let resolved = lock(&tally.resolved).len() as u64;
    if resolved != issued {
        failures.push(format!("{issued} calls issued but {resolved} resolved (lost calls)"));
    }
    let twice = lock(&tally.twice).clone();
    if !twice.is_empty() {
        failures.push(format!("calls resolved twice: {twice:?}"));
    }
    let stuck = lock(&tally.stuck).clone();
    if !stuck.is_empty() {
        let mut by_act: BTreeMap<&str, u64> = BTreeMap::new();
        for (_, _, act) in &stuck {
            *by_act.entry(act.name()).or_default() += 1;
        }
        let servers: BTreeSet<&str> = stuck.iter().map(|(_, s, _)| SERVERS[*s].0).collect();
        failures.push(format!(
            "{} calls were not ended by the library within request_timeout {REQUEST_TIMEOUT:?} + {STUCK_MARGIN:?}: by act {by_act:?}, servers {servers:?}, first calls {:?}",
            stuck.len(),
            stuck.iter().take(8).map(|(n, _, _)| n).collect::<Vec<_>>()
        ));
    }
    let wrong = lock(&tally.wrong).clone();
    if !wrong.is_empty() {
        failures.push(format!(
            "{} successes that are not the answer to their call (call, act, content): {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(8)]
        ));
    }

    // The manager recovers: every server that was not frozen is ready again and answers.
    let frozen_servers: BTreeSet<usize> = if frozen { BTreeSet::from([FREEZER]) } else { BTreeSet::new() };
    let checks = (0..SERVERS.len()).filter(|s| !frozen_servers.contains(s)).map(|s| recovered(&manager, &registry, s));
    let recovery_limit = 2 * RECOVERY_LIMIT + REQUEST_TIMEOUT + STUCK_MARGIN + Duration::from_secs(5);
    match tokio::time::timeout(recovery_limit, futures::future::join_all(checks)).await {
        Ok(results) => {
            failures.extend(results.into_iter().filter_map(Result::err).map(|e| format!("no recovery: {e}")))
        }
        Err(_) => failures.push(format!("the recovery checks did not end within {recovery_limit:?}")),
    }
    let peak_before_close = rss.peak();

    // Close, as a host does: the registry closes its provider, which closes the manager.
    sampler.abort();
    let close_started = Instant::now();
    let closed = tokio::time::timeout(CLOSE_LIMIT, registry.close()).await.is_ok();
    let close_took = close_started.elapsed();
    if !closed {
        let states: Vec<_> = manager.status().iter().map(|s| (s.name.clone(), s.state, s.pid)).collect();
        failures.push(format!("closing the registry (and manager) did not finish within {CLOSE_LIMIT:?}: {states:?}"));
    } else if !manager.is_closed() {
        failures.push("closing the registry did not close the manager".into());
    }

    // No process is left in any server's group, whatever the servers did.
    let pids = all_pids(&spawned);
    let groups: BTreeSet<u32> = pids.clone();
    let unrecorded: Vec<u32> = lock(&reported).difference(&pids).copied().collect();
    if !unrecorded.is_empty() {
        failures.push(format!("the manager reported pids its factories never started: {unrecorded:?}"));
    }
    let gone_deadline = Instant::now() + GONE_LIMIT;
    let left = loop {
        let left = group_members(&groups);
        if left.is_empty() || Instant::now() >= gone_deadline {
            break left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    if !left.is_empty() {
        failures.push(format!("processes left {GONE_LIMIT:?} after close: {left:?}"));
        // Leave nothing behind, whatever the outcome.
        for pgid in &groups {
            if let Ok(g) = i32::try_from(*pgid) {
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(g), nix::sys::signal::Signal::SIGKILL);
            }
        }
    }

    let peak = rss.peak().max(peak_before_close);
    if peak > MAX_RSS {
        failures.push(format!("peak RSS {} MiB over the bound of {} MiB", peak >> 20, MAX_RSS >> 20));
    }
    let reconnects = pids.len().saturating_sub(SERVERS.len());
    let errors = lock(&tally.errors).clone();
    println!("chaos: acts {acts:?}");
    println!("chaos: errors by kind {errors:?}");
    println!("chaos: the freeze of {} ended as {:?}", SERVERS[FREEZER].0, lock(&tally.freeze));
    for e in lock(&tally.other_errors).iter() {
        println!("chaos: other error: {e}");
    }
    println!(
        "chaos summary: seed={seed:#x} soak={soaked:.1?} calls={issued} ok={} errors={} timeouts={} abandoned={} stuck={} wrong={} peak_in_flight={} peak_rss={}MiB processes={} reconnects={reconnects} frozen={frozen} close={close_took:.1?} failures={}",
        tally.count("ok"),
        tally.count("error"),
        tally.count("timeout"),
        tally.count("abandoned"),
        tally.count("stuck"),
        tally.count("wrong"),
        tally.peak_in_flight.load(Ordering::SeqCst),
        peak >> 20,
        pids.len(),
        failures.len(),
    );
    if issued < calls / 2 {
        failures.push(format!("only {issued} of {calls} calls were issued"));
    }
    assert!(
        failures.is_empty(),
        "chaos seed {seed:#x}: {} invariant(s) broken:\n  - {}",
        failures.len(),
        failures.join("\n  - ")
    );
}
