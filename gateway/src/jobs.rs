//! Scheduled jobs of `steward serve`. Each run is claimed in the database
//! (`job_runs`), so with several replicas on one PostgreSQL a slot runs once.

use crate::turn::TurnLoop;
use std::sync::Arc;
use std::time::Duration;

/// One `memory_expire` slot an hour.
pub const EXPIRE_SLOT_MS: i64 = 3_600_000;

/// Run the retention job in the background until the task is dropped.
pub fn spawn_expire(turns: Arc<TurnLoop>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(300));
        loop {
            tick.tick().await;
            let now = chrono::Utc::now().timestamp_millis();
            match turns.expire_all_if_due(now / EXPIRE_SLOT_MS, now).await {
                Ok(Some(runs)) => tracing::info!(orgs = runs.len(), "memory_expire ran"),
                Ok(None) => {}
                Err(e) => tracing::error!(error = %e, "memory_expire failed; retried next slot"),
            }
        }
    })
}
