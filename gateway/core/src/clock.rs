//! The one clock of the turn loop, the jobs and every front-end (API,
//! dashboard, CLI). Injected: `serve` uses the wall clock; replay and tests
//! set it, so a transcript replays identically on any day.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[async_trait::async_trait]
pub trait Clock: Send + Sync {
    /// Milliseconds since the epoch.
    fn now_ms(&self) -> i64;
    /// Wait `d` (a job's pause between runs).
    async fn sleep(&self, d: Duration);
    /// Replay says it is now `ms` in its transcript. The wall clock ignores
    /// it; a [`ManualClock`] moves there, so a replay sees the transcript's time.
    fn follow(&self, _ms: i64) {}
    /// Now, as a message's time (an operator's or a client's line).
    fn now_utc(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp_millis(self.now_ms()).unwrap_or_default()
    }
}

/// A `governor` rate limiter's clock: the turn loop's injected [`Clock`] (the
/// wall clock in `serve`), so tests move time instead of sleeping. The
/// dashboard's sign-in limiter and the API's per-key limiter run on it.
#[derive(Clone)]
pub struct GovernorClock(pub Arc<dyn Clock>);

impl governor::clock::Clock for GovernorClock {
    type Instant = governor::nanos::Nanos;
    fn now(&self) -> governor::nanos::Nanos {
        let ms = u64::try_from(self.0.now_ms()).unwrap_or(0);
        governor::nanos::Nanos::from(ms.saturating_mul(1_000_000))
    }
}

/// The wall clock and tokio's timer.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

#[async_trait::async_trait]
impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
    async fn sleep(&self, d: Duration) {
        tokio::time::sleep(d).await
    }
}

/// A clock that only moves when told: replay moves it to each event's time.
/// Sleeping moves it forward by the time slept and returns at once.
#[derive(Debug, Default, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    pub fn at(ms: i64) -> Self {
        ManualClock(Arc::new(AtomicI64::new(ms)))
    }
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::Relaxed);
    }
}

#[async_trait::async_trait]
impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
    fn follow(&self, ms: i64) {
        self.set(ms)
    }
    async fn sleep(&self, d: Duration) {
        let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_add(ms))
            });
    }
}
