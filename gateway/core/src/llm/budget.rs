//! The per-turn token budget: every model call a turn makes (extraction,
//! reply, judge, summary) draws on one allowance, set by `llm.turn_token_budget`.
//! Calls outside a turn (consolidation, relearn) have no turn budget.

use std::cell::Cell;
use std::future::Future;

tokio::task_local! {
    static TURN_BUDGET: Cell<u64>;
}

/// Run `f` with a budget of `tokens` for the model calls it makes (0: no limit).
pub async fn per_turn<F: Future>(tokens: u64, f: F) -> F::Output {
    if tokens == 0 {
        f.await
    } else {
        TURN_BUDGET.scope(Cell::new(tokens), f).await
    }
}

/// Tokens left in the running turn; `None` outside a turn.
pub fn remaining() -> Option<u64> {
    TURN_BUDGET.try_with(Cell::get).ok()
}

/// Count `tokens` against the running turn's budget, if any.
pub fn spend(tokens: u64) {
    let _ = TURN_BUDGET.try_with(|b| b.set(b.get().saturating_sub(tokens)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_turn_spends_its_own_budget() {
        assert_eq!(remaining(), None);
        let left = per_turn(100, async {
            spend(30);
            spend(30);
            remaining()
        })
        .await;
        assert_eq!(left, Some(40));
        assert_eq!(per_turn(0, async { remaining() }).await, None);
        assert_eq!(
            per_turn(10, async {
                spend(50);
                remaining()
            })
            .await,
            Some(0)
        );
    }
}
