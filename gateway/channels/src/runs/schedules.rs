//! `[[schedules]]`: a run at each slot of a cron expression, in its time
//! zone. Each slot is claimed in the database (the job runner's claims), so
//! with several replicas on one PostgreSQL a slot runs once. A slot that
//! passed while steward was stopped runs once at start — only the latest
//! one, never a backlog — and only for a schedule that had run before (a new
//! schedule starts with its next slot). Time comes from the loop's clock.

use super::{Prepared, RunError, Runner, Start};
use chrono::TimeZone;
use memory::run::{Run, Trigger};
use std::sync::Arc;
use std::time::Duration;
use steward_core::clock::Clock;
use steward_core::config::{RunTarget, ScheduleConfig};
use steward_core::workers::{CancellationToken, Worker, WorkerError};

/// The longest the worker sleeps before looking at the clock again.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// One schedule, parsed.
#[derive(Debug, Clone)]
pub struct ScheduleEntry {
    pub target: RunTarget,
    cron: cron::Schedule,
    zone: chrono_tz::Tz,
}

impl ScheduleEntry {
    /// `s` as the configuration holds it; `None` when its cron expression or
    /// time zone do not parse (`Config::load` refuses those).
    pub fn new(cfg: &steward_core::Config, s: &ScheduleConfig) -> Option<ScheduleEntry> {
        Some(ScheduleEntry {
            target: cfg.schedule_target(s),
            cron: s.parsed().ok()?,
            zone: s.zone().ok()?,
        })
    }

    /// What `steward serve` prints of it.
    pub fn describe(&self) -> String {
        format!(
            "`{}` ({}) as {} in {}/{}, delivered to {}",
            self.cron.source(),
            self.zone.name(),
            super::principal_of(Trigger::Schedule, &self.target.procedure).as_str(),
            self.target.org,
            self.target.agent,
            self.target.deliver
        )
    }

    /// The name its slots are claimed under.
    fn job(&self) -> String {
        format!("schedule:{}:{}", self.target.org, self.target.name)
    }

    /// The latest slot at or before `now` (ms), if any.
    pub fn slot_at_or_before(&self, now: i64) -> Option<i64> {
        let after = self
            .zone
            .timestamp_millis_opt(now.checked_add(1)?)
            .single()?;
        self.cron
            .after(&after)
            .next_back()
            .map(|t| t.timestamp_millis())
    }

    /// The first slot after `now` (ms), if any.
    pub fn slot_after(&self, now: i64) -> Option<i64> {
        let at = self.zone.timestamp_millis_opt(now).single()?;
        self.cron.after(&at).next().map(|t| t.timestamp_millis())
    }
}

/// Whether `slot` (the latest at or before now) is due: one that came while
/// this process ran (at or after `since`), or one missed while it was
/// stopped by a schedule that had run before (its latest claim is older).
pub fn due(slot: i64, since: i64, last_claimed: Option<i64>) -> bool {
    slot >= since || last_claimed.is_some_and(|last| last < slot)
}

/// Every schedule of the configuration, run by one [`Runner`].
#[derive(Clone)]
pub struct Schedules {
    runner: Runner,
    entries: Vec<ScheduleEntry>,
    /// When this process started looking (ms).
    since: i64,
}

/// What a tick did with one schedule.
#[derive(Debug)]
pub enum Ticked {
    Ran(Run),
    /// Its skill was not in force: nothing ran, the slot is spent.
    Refused {
        name: String,
        error: RunError,
    },
}

impl Schedules {
    /// The configured schedules on `runner`, looking from `since` (ms).
    pub fn new(runner: Runner, since: i64) -> Schedules {
        let cfg = runner.services().config().clone();
        let entries = cfg
            .schedules
            .iter()
            .filter_map(|s| ScheduleEntry::new(&cfg, s))
            .collect();
        Schedules {
            runner,
            entries,
            since,
        }
    }

    pub fn entries(&self) -> &[ScheduleEntry] {
        &self.entries
    }

    /// Run every schedule whose latest slot at or before `now` is due and
    /// that this replica claims first; wait for each run to end.
    pub async fn tick(&self, now: i64) -> steward_core::error::Result<Vec<Ticked>> {
        let mut out = Vec::new();
        let jobs = self.runner.services().db().jobs();
        for entry in &self.entries {
            let Some(slot) = entry.slot_at_or_before(now) else {
                continue;
            };
            let job = entry.job();
            if !due(slot, self.since, jobs.last_slot(&job).await?) {
                continue;
            }
            if !jobs.claim(&job, slot, now).await? {
                continue;
            }
            out.push(self.run(entry).await?);
        }
        Ok(out)
    }

    async fn run(&self, entry: &ScheduleEntry) -> steward_core::error::Result<Ticked> {
        let prepared: Prepared = match self.runner.prepare(&entry.target, Trigger::Schedule).await {
            Ok(p) => p,
            Err(RunError::Store(e)) => return Err(e.into()),
            Err(error) => {
                tracing::error!(schedule = %entry.target.name, %error, "scheduled run refused");
                return Ok(Ticked::Refused {
                    name: entry.target.name.clone(),
                    error,
                });
            }
        };
        let run = self.runner.run_now(&prepared, &Start::default()).await?;
        Ok(Ticked::Ran(run))
    }

    /// How long to wait after `now` before the next tick.
    fn wait(&self, now: i64) -> Duration {
        let next = self.entries.iter().filter_map(|e| e.slot_after(now)).min();
        next.map_or(MAX_WAIT, |at| {
            Duration::from_millis(u64::try_from(at - now).unwrap_or(0)).min(MAX_WAIT)
        })
    }

    /// The worker `steward serve` runs when there are schedules.
    pub fn worker(self, clock: Arc<dyn Clock>) -> ScheduleWorker {
        ScheduleWorker {
            schedules: self,
            clock,
        }
    }
}

/// Ticks the schedules at each slot until stopped.
pub struct ScheduleWorker {
    schedules: Schedules,
    clock: Arc<dyn Clock>,
}

#[async_trait::async_trait]
impl Worker for ScheduleWorker {
    fn name(&self) -> &'static str {
        "schedules"
    }

    async fn run(self: Box<Self>, shutdown: CancellationToken) -> Result<(), WorkerError> {
        let ScheduleWorker { schedules, clock } = *self;
        loop {
            let now = clock.now_ms();
            // A failed tick (the database away) is logged and tried at the next one.
            if let Err(e) = tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                ticked = schedules.tick(now) => ticked,
            } {
                tracing::error!(error = %e, "schedules: a tick failed");
            }
            let wait = schedules
                .wait(clock.now_ms())
                .max(Duration::from_millis(200));
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                () = clock.sleep(wait) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn only_a_slot_of_this_run_or_one_missed_by_a_schedule_that_ran_is_due() {
        let (since, slot) = (1_000, 2_000);
        for (slot, last, want) in [
            // A slot that came while running.
            (slot, None, true),
            (slot, Some(1_500), true),
            // Missed while stopped: runs once if the schedule ran before…
            (500, Some(100), true),
            // …not when it is already claimed, nor for a new schedule.
            (500, Some(500), false),
            (500, None, false),
        ] {
            assert_eq!(due(slot, since, last), want, "slot {slot} last {last:?}");
        }
    }

    #[test]
    fn slots_follow_the_cron_expression_in_its_zone() {
        let mut cfg = steward_core::Config::default();
        cfg.schedules.push(ScheduleConfig {
            name: "digest".into(),
            cron: "0 9 * * *".into(),
            timezone: Some("Europe/Lisbon".into()),
            text: Some("Post the digest".into()),
            ..ScheduleConfig::default()
        });
        let e = ScheduleEntry::new(&cfg, &cfg.schedules[0]).expect("entry");
        // 2026-07-01 12:00 UTC: Lisbon is UTC+1, so 09:00 there was 08:00 UTC.
        let noon = Utc
            .with_ymd_and_hms(2026, 7, 1, 12, 0, 0)
            .unwrap()
            .timestamp_millis();
        let nine = Utc
            .with_ymd_and_hms(2026, 7, 1, 8, 0, 0)
            .unwrap()
            .timestamp_millis();
        assert_eq!(e.slot_at_or_before(noon), Some(nine));
        assert_eq!(
            e.slot_at_or_before(nine),
            Some(nine),
            "a slot is at or before itself"
        );
        assert_eq!(e.slot_after(nine), Some(nine + 86_400_000));
    }
}
