//! Token use of a model provider, counted in process (logs and tests read it).

use serde::Serialize;
use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

tokio::task_local! {
    /// Tokens (prompt, completion) of the model call being measured.
    static CALL_TOKENS: Cell<(u64, u64)>;
}

/// Run one model call and count the tokens its requests used (prompt,
/// completion), whatever provider answers; an inner measured call counts
/// its own, not the outer one's.
pub async fn measured<F: Future>(f: F) -> (F::Output, (u64, u64)) {
    CALL_TOKENS
        .scope(Cell::new((0, 0)), async {
            let out = f.await;
            (out, CALL_TOKENS.with(Cell::get))
        })
        .await
}

/// Token use of a model provider.
#[derive(Debug, Default)]
pub struct TokenUsage {
    calls: AtomicU64,
    failed_calls: AtomicU64,
    repairs: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UsageSnapshot {
    /// Requests answered by the server.
    pub calls: u64,
    /// Requests that failed (after retries), timed out, or were refused by the turn budget.
    pub failed_calls: u64,
    /// Repair requests sent after an invalid structured answer.
    pub repairs: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl TokenUsage {
    pub(crate) fn answered(&self, prompt: u64, completion: u64) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.prompt_tokens.fetch_add(prompt, Ordering::Relaxed);
        self.completion_tokens
            .fetch_add(completion, Ordering::Relaxed);
        let _ = CALL_TOKENS.try_with(|t| {
            let (p, c) = t.get();
            t.set((p.saturating_add(prompt), c.saturating_add(completion)));
        });
    }

    pub(crate) fn failed(&self) {
        self.failed_calls.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn repaired(&self) {
        self.repairs.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> UsageSnapshot {
        UsageSnapshot {
            calls: self.calls.load(Ordering::Relaxed),
            failed_calls: self.failed_calls.load(Ordering::Relaxed),
            repairs: self.repairs.load(Ordering::Relaxed),
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
        }
    }
}
