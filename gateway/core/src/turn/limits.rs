//! Step 3: rate limits per sender and per conversation, with one polite warning per burst.

use super::{Outcome, Refused, TurnLoop};
use crate::config::Config;
use crate::metrics::Refusal;
use adapters::{Inbound, Reply};
use dashmap::DashMap;
use governor::clock::Clock as LimiterClock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub(super) const SLOW_DOWN: &str =
    "You're sending messages faster than I can answer. Please slow down for a moment.";

/// The rate limiters' clock: the newest message time seen. Platforms stamp
/// messages themselves, so replayed transcripts are limited as they happened.
#[derive(Clone, Default)]
pub(super) struct MessageClock(Arc<AtomicU64>);

impl LimiterClock for MessageClock {
    type Instant = Nanos;
    fn now(&self) -> Nanos {
        Nanos::from(self.0.load(Ordering::Relaxed))
    }
}

impl MessageClock {
    /// Move to a message's time, never past `now_ms` (the loop's clock) plus
    /// skew: one future-stamped message must not freeze the limiters for
    /// everyone until that time arrives. Never backwards.
    fn observe(&self, at_ms: i64, now_ms: i64) {
        let cap = now_ms.saturating_add(MAX_CLOCK_SKEW_MS);
        let nanos = u64::try_from(at_ms.min(cap))
            .unwrap_or(0)
            .saturating_mul(1_000_000)
            .min(MAX_LIMITER_NANOS);
        self.0.fetch_max(nanos, Ordering::Relaxed);
    }
}

/// The limiters' clock stops here (about the year 2116): governor adds
/// periods to it, which must not overflow for a transcript dated far ahead.
pub(super) const MAX_LIMITER_NANOS: u64 = u64::MAX / 4;

/// How far ahead of this machine's clock a platform's message time is believed.
pub(super) const MAX_CLOCK_SKEW_MS: i64 = 5_000;

/// Keyed by organisation and sender or conversation, hashed with foldhash
/// (seeded per process): SipHash was a visible part of a turn.
pub(super) type Limiter = RateLimiter<
    String,
    DashMapStateStore<String, foldhash::fast::RandomState>,
    MessageClock,
    NoOpMiddleware<Nanos>,
>;

/// Per-sender and per-conversation limits. In-process: each replica limits its own traffic.
pub(super) struct RateLimits {
    clock: MessageClock,
    sender: Limiter,
    conversation: Limiter,
    warned: DashMap<String, (), foldhash::fast::RandomState>,
}

pub(super) fn quota(per_minute: u32, burst: u32) -> Quota {
    let per = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
    let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
    Quota::per_minute(per).allow_burst(burst)
}

impl RateLimits {
    pub(super) fn new(cfg: &Config) -> Self {
        let rl = &cfg.rate_limit;
        let clock = MessageClock::default();
        RateLimits {
            sender: RateLimiter::dashmap_with_clock_and_hasher(
                quota(rl.per_sender_per_minute, rl.sender_burst),
                clock.clone(),
                Default::default(),
            ),
            conversation: RateLimiter::dashmap_with_clock_and_hasher(
                quota(rl.per_conversation_per_minute, rl.conversation_burst),
                clock.clone(),
                Default::default(),
            ),
            clock,
            warned: DashMap::default(),
        }
    }
}

impl TurnLoop {
    /// Step 3: the refusal of a message past the sender's or the
    /// conversation's rate (a chat channel is told once a burst; the API
    /// answers each with 429), or over the length limit (`stored`: a message
    /// stored already was measured when it came).
    pub(super) fn limit(&self, msg: &Inbound, now: i64, stored: bool) -> Option<Outcome> {
        let sender_key = format!(
            "{}|{}",
            msg.org,
            msg.sender.as_deref().unwrap_or(&msg.conversation)
        );
        self.limits.clock.observe(now, self.parts.clock.now_ms());
        let conv_key = format!("{}|{}|{}", msg.org, msg.channel, msg.conversation);
        let limited = self
            .limits
            .sender
            .check_key(&sender_key)
            .err()
            .or_else(|| self.limits.conversation.check_key(&conv_key).err());
        if let Some(not_until) = limited {
            self.parts.metrics.refused(Refusal::RateLimit);
            let wait = not_until.wait_time_from(self.limits.clock.now());
            let why = Refused::RateLimited {
                retry_after: (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1),
            };
            // A chat channel is told once a burst; the API answers each 429.
            let replies = if self.limits.warned.insert(sender_key, ()).is_none() {
                vec![Reply {
                    conversation: msg.conversation.clone(),
                    text: SLOW_DOWN.into(),
                    proposal: None,
                }]
            } else {
                Vec::new()
            };
            return Some(Outcome::Refused { why, replies });
        }
        self.limits.warned.remove(&sender_key);
        let max = self.parts.cfg.turn.max_message_chars;
        if !stored && msg.text.chars().count() > max {
            self.parts.metrics.refused(Refusal::TooLong);
            return Some(Outcome::Refused {
                why: Refused::TooLong { max },
                replies: vec![Reply {
                    conversation: msg.conversation.clone(),
                    text: format!(
                        "That message is too long for me ({max} characters at most). Nothing was stored."
                    ),
                    proposal: None,
                }],
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_clock_never_runs_ahead_of_the_loops_clock() {
        let clock = MessageClock::default();
        let now = 1_767_603_600_000; // 2026-01-05 09:00 UTC
        clock.observe(now - 60_000, now);
        assert_eq!(
            u64::from(clock.now()),
            u64::try_from(now - 60_000).unwrap() * 1_000_000
        );
        // A message stamped a year ahead moves the clock at most the allowed skew,
        // so later, correctly stamped traffic is limited normally within seconds.
        clock.observe(now + 365 * 86_400_000, now);
        let ahead_ms = i64::try_from(u64::from(clock.now()) / 1_000_000).unwrap() - now;
        assert!(ahead_ms <= MAX_CLOCK_SKEW_MS + 1_000, "{ahead_ms}");
        // Older messages never move it back.
        clock.observe(now - 120_000, now);
        assert!(i64::try_from(u64::from(clock.now()) / 1_000_000).unwrap() >= now);
    }
}
