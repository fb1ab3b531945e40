//! Consolidation (docs/models.md, "Belief revision and consolidation"): merge live
//! records that say the same thing into
//! one and retire the sources under one run id, so `steward memory revisions
//! undo --run RUN` restores them. `steward memory distill` runs it once; `serve`
//! runs it in the background.
//!
//! Bounds: at most 40 records a model call, records sharing words batched
//! together (never across agents, scopes or owners), at most 6 calls a run —
//! the rest wait for the next run. A record already shown without a repeat is
//! not shown again until a new record joins its batch (`consolidation_seen`).
//! Automatic runs wait 5 minutes, doubling after each run whose model calls
//! failed, up to 6 hours. With the offline model only records whose
//! normalised text is equal merge.

use crate::error::Result;
use crate::jobs::{self, Job, Schedule};
use crate::llm::roles::normalised;
use crate::llm::{Consolidator, MergeGroup};
use memory::sanitize::sanitize;
use memory::store::{MergeInto, RevisionMeta};
use memory::{Cause, Db, MemoryRecord, NewRecord, Via};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// Most records one model call is shown.
pub const MAX_RECORDS_PER_CALL: usize = crate::llm::MAX_CONSOLIDATION_RECORDS;
/// Most model calls one run makes.
pub const MAX_CALLS_PER_RUN: usize = 6;
/// Wait before an automatic run, and after a run whose model calls all worked.
pub const FIRST_WAIT: Duration = Duration::from_secs(5 * 60);
/// Longest wait between automatic runs, however often the model failed.
pub const MAX_WAIT: Duration = Duration::from_secs(6 * 3600);

/// One merge of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Merge {
    /// The surviving record (new, or the member that already said the merged text).
    pub into: i64,
    pub retired: Vec<i64>,
}

/// What one consolidation run did in one organisation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DistillReport {
    /// Undo it all with `steward memory revisions undo --run <run_id>`.
    pub run_id: String,
    /// Model calls answered.
    pub calls: usize,
    /// Model calls that failed; their records are shown again next run.
    pub failed_calls: usize,
    /// Records shown to the model.
    pub shown: usize,
    pub merges: Vec<Merge>,
    /// Retirements a rule refused (time, veto, place, no longer active).
    pub refused: usize,
    /// New records this run looked at but left for the next one (over 6 calls);
    /// more may wait beyond the 240 newest-unseen records a run looks at.
    pub waiting: usize,
}

/// The place a record lives in: merges never cross it.
fn place(r: &MemoryRecord) -> (String, &'static str, Option<String>) {
    (r.agent.clone(), r.scope.as_str(), r.owner.clone())
}

/// The consolidation service: the store and the consolidating model.
pub struct Consolidation {
    db: Db,
    consolidator: Arc<dyn Consolidator>,
}

impl Consolidation {
    pub fn new(db: Db, consolidator: Arc<dyn Consolidator>) -> Self {
        Consolidation { db, consolidator }
    }

    /// One consolidation run in `org`.
    pub async fn distill(&self, org: &str, now: i64) -> Result<DistillReport> {
        let mut report = DistillReport {
            run_id: format!("consolidate:{now}"),
            ..Default::default()
        };
        let run_id = report.run_id.clone();
        let window = (MAX_RECORDS_PER_CALL * MAX_CALLS_PER_RUN) as i64;
        let unseen = self.db.records().unseen_active(org, window).await?;
        let unseen_ids: BTreeSet<i64> = unseen.iter().map(|r| r.id).collect();
        // Records sharing words with a new record, in its own place.
        let mut recs: HashMap<i64, MemoryRecord> = HashMap::new();
        let mut adj: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        for u in &unseen {
            adj.entry(u.id).or_default();
            for (n, _) in self
                .db
                .records()
                .related_active(u, MAX_RECORDS_PER_CALL - 1)
                .await?
            {
                adj.entry(u.id).or_default().insert(n.id);
                adj.entry(n.id).or_default().insert(u.id);
                recs.insert(n.id, n);
            }
            recs.insert(u.id, u.clone());
        }
        let (chunks, alone) = batches(&unseen_ids, &adj);
        // A new record sharing no words with anything has nothing to merge with.
        if !alone.is_empty() {
            self.db
                .records()
                .mark_consolidation_seen(org, &alone, &run_id, now)
                .await?;
        }
        let mut calls = packed(chunks, &recs);
        if calls.len() > MAX_CALLS_PER_RUN {
            let shown: HashSet<i64> = calls[..MAX_CALLS_PER_RUN]
                .iter()
                .flatten()
                .copied()
                .collect();
            report.waiting = calls[MAX_CALLS_PER_RUN..]
                .iter()
                .flatten()
                .filter(|id| unseen_ids.contains(id) && !shown.contains(id))
                .collect::<HashSet<_>>()
                .len();
            calls.truncate(MAX_CALLS_PER_RUN);
        }
        for ids in calls {
            let batch: Vec<MemoryRecord> =
                ids.iter().filter_map(|id| recs.get(id).cloned()).collect();
            report.shown += batch.len();
            let groups = match self.consolidator.consolidate(&batch).await {
                Ok(g) => g,
                Err(e) => {
                    report.failed_calls += 1;
                    tracing::warn!(error = %e, records = batch.len(), "consolidation call failed; these records are shown again next run");
                    continue;
                }
            };
            report.calls += 1;
            let mut seen: Vec<i64> = ids.clone();
            let mut used: HashSet<i64> = HashSet::new();
            for g in groups {
                let Some(members) = members_of(&g, &batch, &used) else {
                    tracing::warn!(ids = ?g.ids, "consolidation group refused: unknown, repeated or mixed-place records");
                    continue;
                };
                used.extend(members.iter().map(|m| m.id));
                let run = Run {
                    org,
                    run_id: &run_id,
                    now,
                };
                if let Some(into) = self.merge(&run, &g, &members, &mut report).await? {
                    seen.push(into);
                }
            }
            self.db
                .records()
                .mark_consolidation_seen(org, &seen, &run_id, now)
                .await?;
        }
        if report.calls + report.failed_calls > 0 {
            jobs::audit_run::<Self>(&self.db, org, &run_id, &report, now).await?;
        }
        Ok(report)
    }

    /// Merges one group the model named into its newest member's place: the
    /// record it merged into, when the merge was kept.
    async fn merge(
        &self,
        run: &Run<'_>,
        g: &MergeGroup,
        members: &[&MemoryRecord],
        report: &mut DistillReport,
    ) -> Result<Option<i64>> {
        let merged = sanitize(&g.merged);
        let Some(newest) = members.iter().max_by_key(|r| (r.said_at, r.id)) else {
            return Ok(None);
        };
        if merged.is_empty() {
            return Ok(None);
        }
        let into = if normalised(&newest.content) == normalised(&merged) {
            MergeInto::Existing(newest.id)
        } else {
            // The merged record says what its newest member said, when it said it.
            MergeInto::New(Box::new(
                NewRecord::said(
                    run.org,
                    &newest.agent,
                    newest.scope,
                    &newest.kind,
                    &newest.subject,
                    merged,
                    newest.said_at,
                )
                .owner(newest.owner.clone())
                .source(format!("consolidation:{}", run.run_id))
                .recorded_at(run.now)
                .author(newest.author.clone()),
            ))
        };
        let member_ids: Vec<i64> = members.iter().map(|m| m.id).collect();
        let meta = RevisionMeta {
            via: Via::Consolidation.as_str(),
            cause: Cause::Consolidate.as_str(),
            run_id: run.run_id,
            reason: &memory::admin_text::AdminText::fixed("says the same as the merged record"),
            model: Some(self.consolidator.provenance().model),
            prompt_version: self.consolidator.provenance().prompt_version,
        };
        let out = self
            .db
            .records()
            .merge(run.org, &into, &member_ids, &meta, run.now)
            .await;
        let out = match memory::write::split_refusal(out)? {
            Ok(out) => out,
            Err(refusal) => {
                tracing::warn!(ids = ?g.ids, %refusal, "consolidation group refused: the merged text is one memory never keeps");
                report.refused += member_ids.len();
                return Ok(None);
            }
        };
        report.refused += out.refused.len();
        Ok(out.into.inspect(|&into| {
            report.merges.push(Merge {
                into,
                retired: out.retired,
            })
        }))
    }
}

/// Consolidation as a job of the runner: one run per 5-minute slot, waiting
/// longer while the model's calls fail.
#[async_trait::async_trait]
impl Job for Consolidation {
    type Report = DistillReport;
    const NAME: &'static str = "consolidation";
    const AUDIT_ACTION: &'static str = "memory.distill";
    const SLOT_MS: i64 = FIRST_WAIT.as_millis() as i64;
    const SCHEDULE: Schedule = Schedule::Backoff {
        first: FIRST_WAIT,
        max: MAX_WAIT,
    };
    async fn run_org(&self, org: &str, now: i64) -> Result<DistillReport> {
        let r = self.distill(org, now).await?;
        if r.calls + r.failed_calls > 0 {
            tracing::info!(org, run = %r.run_id, calls = r.calls, failed = r.failed_calls, merges = r.merges.len(), waiting = r.waiting, "consolidation ran");
        }
        Ok(r)
    }
    fn failed(report: &DistillReport) -> bool {
        report.failed_calls > 0
    }
}

/// Where and when a consolidation run writes.
struct Run<'a> {
    org: &'a str,
    run_id: &'a str,
    now: i64,
}

/// Batches of connected records (`adj`), oldest new record first, each split
/// evenly to at most `MAX_RECORDS_PER_CALL`; and the new records left alone
/// (sharing no words with anything, nothing to merge with).
fn batches(
    unseen_ids: &BTreeSet<i64>,
    adj: &BTreeMap<i64, BTreeSet<i64>>,
) -> (Vec<Vec<i64>>, Vec<i64>) {
    let mut visited: HashSet<i64> = HashSet::new();
    let mut alone: Vec<i64> = Vec::new();
    let mut chunks: Vec<Vec<i64>> = Vec::new();
    for &start in unseen_ids {
        if !visited.insert(start) {
            continue;
        }
        let mut order = Vec::new();
        let mut queue = VecDeque::from([start]);
        while let Some(id) = queue.pop_front() {
            order.push(id);
            for &n in adj.get(&id).into_iter().flatten() {
                if visited.insert(n) {
                    queue.push_back(n);
                }
            }
        }
        let parts = order.len().div_ceil(MAX_RECORDS_PER_CALL);
        let size = order.len().div_ceil(parts.max(1)).max(1);
        for c in order.chunks(size) {
            if c.len() >= 2 && c.iter().any(|id| unseen_ids.contains(id)) {
                chunks.push(c.to_vec());
            } else {
                alone.extend(c.iter().filter(|id| unseen_ids.contains(id)));
            }
        }
    }
    (chunks, alone)
}

/// Calls: batches of one place packed together up to `MAX_RECORDS_PER_CALL`.
fn packed(chunks: Vec<Vec<i64>>, recs: &HashMap<i64, MemoryRecord>) -> Vec<Vec<i64>> {
    let mut calls: Vec<Vec<i64>> = Vec::new();
    for c in chunks {
        let same_place = |a: &[i64]| {
            let p = |id: &i64| recs.get(id).map(place);
            a.first().and_then(p) == c.first().and_then(p)
        };
        match calls.last_mut() {
            Some(last) if same_place(last) && last.len() + c.len() <= MAX_RECORDS_PER_CALL => {
                last.extend(c)
            }
            _ => calls.push(c),
        }
    }
    calls
}

/// The records of `batch` a group names, when it names at least two, each
/// once, all known, all in one place and none merged already (`used`).
fn members_of<'b>(
    g: &MergeGroup,
    batch: &'b [MemoryRecord],
    used: &HashSet<i64>,
) -> Option<Vec<&'b MemoryRecord>> {
    let mut members: Vec<&MemoryRecord> = Vec::new();
    for id in &g.ids {
        if let Some(r) = batch.iter().find(|r| r.id == *id) {
            if !members.iter().any(|m| m.id == r.id) {
                members.push(r);
            }
        }
    }
    let one_place = members.windows(2).all(|w| place(w[0]) == place(w[1]));
    let refused = members.len() < 2
        || members.len() != g.ids.len()
        || !one_place
        || members.iter().any(|m| used.contains(&m.id));
    (!refused).then_some(members)
}
