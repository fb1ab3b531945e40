//! The rates of external tool calls (docs/tools.md): each person (or run) at
//! most `[mcp] calls_per_minute` calls a minute whatever the tool, and each
//! tool at most its approval's `calls_per_minute` (or `[mcp]
//! tool_calls_per_minute`), all speakers together. On the loop's injected
//! clock (`clock::GovernorClock`), so a test moves time instead of sleeping.
//! In-process: each replica limits its own calls.

use crate::clock::GovernorClock;
use dashmap::DashMap;
use governor::clock::Clock as _;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::state::{InMemoryState, NotKeyed};
use governor::{NotUntil, Quota, RateLimiter};
use memory::external_tool::ExternalTool;
use std::num::NonZeroU32;
use std::sync::Arc;

type PersonLimiter =
    RateLimiter<String, DashMapStateStore<String>, GovernorClock, NoOpMiddleware<Nanos>>;
type ToolLimiter = RateLimiter<NotKeyed, InMemoryState, GovernorClock, NoOpMiddleware<Nanos>>;

/// Which rate a call was over, and the whole seconds until one more is let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limited {
    /// The speaker's calls, whatever the tool.
    Person { retry_after: u64 },
    /// The tool's calls, all speakers together.
    Tool { retry_after: u64 },
}

impl Limited {
    pub fn retry_after(self) -> u64 {
        match self {
            Limited::Person { retry_after } | Limited::Tool { retry_after } => retry_after,
        }
    }

    /// What the speaker is told (the reply's note) and the model is given.
    pub fn explained(self, tool: &str) -> String {
        match self {
            Limited::Person { retry_after } => format!(
                "`{tool}` was not run: you made too many tool calls this minute. Try again in {retry_after} s."
            ),
            Limited::Tool { retry_after } => format!(
                "`{tool}` was not run: it was called too often this minute. Try again in {retry_after} s."
            ),
        }
    }
}

pub(super) struct CallLimits {
    clock: GovernorClock,
    per_person: PersonLimiter,
    /// One limiter a listing, with the rate it was made for (a suspended
    /// listing approved again with another rate gets a new limiter).
    per_tool: DashMap<i64, (u32, Arc<ToolLimiter>)>,
    tool_default: u32,
}

fn per_minute(n: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN))
}

impl CallLimits {
    pub(super) fn new(cfg: &crate::config::McpConfig, clock: GovernorClock) -> CallLimits {
        CallLimits {
            per_person: RateLimiter::dashmap_with_clock(
                per_minute(cfg.calls_per_minute),
                clock.clone(),
            ),
            clock,
            per_tool: DashMap::new(),
            tool_default: cfg.tool_calls_per_minute,
        }
    }

    /// Let one call of `tool` by `person` through, or say which rate it is over.
    /// The tool's rate is checked first: a call refused for it spends none of
    /// the person's.
    pub(super) fn check(&self, tool: &ExternalTool, person: &str) -> Result<(), Limited> {
        let rate = match tool.calls_per_minute {
            0 => self.tool_default,
            n => n,
        };
        let limiter = {
            let mut entry = self.per_tool.entry(tool.id).or_insert_with(|| {
                (
                    rate,
                    Arc::new(RateLimiter::direct_with_clock(
                        per_minute(rate),
                        self.clock.clone(),
                    )),
                )
            });
            if entry.0 != rate {
                *entry = (
                    rate,
                    Arc::new(RateLimiter::direct_with_clock(
                        per_minute(rate),
                        self.clock.clone(),
                    )),
                );
            }
            entry.1.clone()
        };
        if let Err(n) = limiter.check() {
            return Err(Limited::Tool {
                retry_after: self.seconds(&n),
            });
        }
        self.per_person
            .check_key(&person.to_string())
            .map_err(|n| Limited::Person {
                retry_after: self.seconds(&n),
            })
    }

    fn seconds(&self, not_until: &NotUntil<Nanos>) -> u64 {
        let wait = not_until.wait_time_from(self.clock.now());
        (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
    }
}
