//! The one job runner of `steward serve`. A [`Job`] runs in every
//! organisation once per slot: each run is claimed in the database
//! (`job_runs`), so with several replicas on one PostgreSQL a slot runs once.
//! Time and waiting come from the injected [`Clock`].

use crate::clock::Clock;
use crate::error::Result;
use crate::metrics::{JobOutcome, Metrics};
use crate::workers::{CancellationToken, Worker, WorkerError};
use memory::Db;
use std::sync::Arc;
use std::time::Duration;

/// When a job runs again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Look every `period`; the slot decides whether a run is due.
    Every(Duration),
    /// Wait `first`, doubling after each run that failed, up to `max`;
    /// back to `first` after one that worked.
    Backoff { first: Duration, max: Duration },
}

impl Schedule {
    pub fn first_wait(self) -> Duration {
        match self {
            Schedule::Every(period) => period,
            Schedule::Backoff { first, .. } => first,
        }
    }

    /// The wait after a run that waited `last` and did or did not fail.
    pub fn next_wait(self, last: Duration, failed: bool) -> Duration {
        match self {
            Schedule::Every(period) => period,
            Schedule::Backoff { max, .. } if failed => last.saturating_mul(2).min(max),
            Schedule::Backoff { first, .. } => first,
        }
    }
}

#[async_trait::async_trait]
pub trait Job: Send + Sync + 'static {
    /// What one run in one organisation did.
    type Report: Send + std::fmt::Debug;
    /// The name its runs are claimed under.
    const NAME: &'static str;
    /// One run per slot of this length, across replicas.
    const SLOT_MS: i64;
    const SCHEDULE: Schedule;
    /// The audit-log action of a run (its actor is [`Job::NAME`]).
    const AUDIT_ACTION: &'static str;
    async fn run_org(&self, org: &str, now: i64) -> Result<Self::Report>;
    /// Whether a run should slow the schedule down (its model calls failed).
    fn failed(_report: &Self::Report) -> bool {
        false
    }
}

/// Write what a run of `J` did in `org` to the audit log, about `target`.
pub async fn audit_run<J: Job>(
    db: &Db,
    org: &str,
    target: &str,
    report: &impl serde::Serialize,
    now: i64,
) -> Result<()> {
    let detail = memory::admin_text::AdminText::report(report);
    db.audit()
        .append(org, J::NAME, J::AUDIT_ACTION, target, &detail, now)
        .await?;
    Ok(())
}

/// Claims slots and runs jobs in every organisation.
#[derive(Clone)]
pub struct JobRunner {
    db: Db,
    metrics: Metrics,
}

impl JobRunner {
    /// Each slot's outcome is counted in `metrics` (`steward_job_runs_total`).
    pub fn new(db: Db, metrics: Metrics) -> Self {
        JobRunner { db, metrics }
    }

    /// Run `job` in every organisation if this replica wins `slot`.
    pub async fn run_if_due<J: Job>(
        &self,
        job: &J,
        slot: i64,
        now: i64,
    ) -> Result<Option<Vec<(String, J::Report)>>> {
        let ran = self.run_claimed(job, slot, now).await;
        let outcome = match &ran {
            Ok(None) => JobOutcome::NotDue,
            Ok(Some(reports)) if reports.iter().any(|(_, r)| J::failed(r)) => JobOutcome::Degraded,
            Ok(Some(_)) => JobOutcome::Ran,
            Err(_) => JobOutcome::Failed,
        };
        self.metrics.job(J::NAME, outcome);
        ran
    }

    async fn run_claimed<J: Job>(
        &self,
        job: &J,
        slot: i64,
        now: i64,
    ) -> Result<Option<Vec<(String, J::Report)>>> {
        if !self.db.jobs().claim(J::NAME, slot, now).await? {
            return Ok(None);
        }
        let mut out = Vec::new();
        for org in self.db.jobs().orgs().await? {
            out.push((org.clone(), job.run_org(&org, now).await?));
        }
        Ok(Some(out))
    }

    /// The background loop: wait, run if due, and wait as the schedule says.
    /// `runs` bounds it (tests); `None` runs until the task is dropped.
    pub async fn run<J: Job>(&self, job: &J, clock: &dyn Clock, runs: Option<usize>) {
        let mut wait = J::SCHEDULE.first_wait();
        let mut done = 0;
        loop {
            if let Some(n) = runs {
                if done >= n {
                    break;
                }
            }
            clock.sleep(wait).await;
            let now = clock.now_ms();
            let failed = match self.run_if_due(job, now / J::SLOT_MS, now).await {
                Ok(Some(reports)) => {
                    tracing::debug!(job = J::NAME, ?reports, "job ran");
                    reports.iter().any(|(_, r)| J::failed(r))
                }
                Ok(None) => false,
                Err(e) => {
                    tracing::error!(job = J::NAME, error = %e, "job failed; retried next slot");
                    true
                }
            };
            wait = J::SCHEDULE.next_wait(wait, failed);
            done += 1;
        }
    }

    /// `job` as a worker of `serve`: run on its schedule until shut down.
    pub fn worker<J: Job>(&self, job: Arc<J>, clock: Arc<dyn Clock>) -> JobWorker<J> {
        JobWorker {
            runner: self.clone(),
            job,
            clock,
        }
    }
}

/// A [`Job`] on its schedule, as a [`Worker`] named after the job.
pub struct JobWorker<J> {
    runner: JobRunner,
    job: Arc<J>,
    clock: Arc<dyn Clock>,
}

#[async_trait::async_trait]
impl<J: Job> Worker for JobWorker<J> {
    fn name(&self) -> &'static str {
        J::NAME
    }

    async fn run(
        self: Box<Self>,
        shutdown: CancellationToken,
    ) -> std::result::Result<(), WorkerError> {
        // A run cut short is claimed and tried again in a later slot.
        tokio::select! {
            () = shutdown.cancelled() => {}
            () = self.runner.run(self.job.as_ref(), self.clock.as_ref(), None) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_while_failing_up_to_its_cap() {
        let s = Schedule::Backoff {
            first: Duration::from_secs(5 * 60),
            max: Duration::from_secs(6 * 3600),
        };
        let mut w = s.first_wait();
        let mut waits = vec![w.as_secs() / 60];
        for _ in 0..8 {
            w = s.next_wait(w, true);
            waits.push(w.as_secs() / 60);
        }
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 360, 360]);
        assert_eq!(s.next_wait(w, false), s.first_wait());
        let every = Schedule::Every(Duration::from_secs(300));
        assert_eq!(
            every.next_wait(Duration::from_secs(300), true).as_secs(),
            300
        );
    }
}
