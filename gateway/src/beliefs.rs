//! Belief revision (SPEC §6): after a live or confirmed write, the judge may
//! retire records on the same topic that the subject rule missed.
//!
//! The judge only proposes. Candidates are active records in the new record's
//! own place (organisation, agent, scope, owner) that share its words, said no
//! later than it; `Db::retire` then checks place, time and vetoes again in one
//! transaction and writes the revision with the judge's model and prompt version.

use crate::lifecycle::summarize;
use crate::turn::TurnLoop;
use memory::store::{Retirement, RevisionMeta, Supersession};
use memory::{Scope, Status, StoredMessage};

/// How many related records the judge is shown.
pub const JUDGE_CANDIDATES: usize = 12;

#[derive(Debug, thiserror::Error)]
enum BeliefError {
    #[error(transparent)]
    Store(#[from] memory::StoreError),
    #[error(transparent)]
    Model(#[from] crate::llm::LlmError),
}

impl TurnLoop {
    /// Ask the judge which records record `id` (just activated, with `activation`
    /// the subject rule's outcome) replaces, and retire them. Best effort: the
    /// write stands whatever happens here; failures are logged. Returns the retired ids.
    pub(crate) async fn revise_beliefs(
        &self,
        org: &str,
        id: i64,
        activation: &Supersession,
        cause: &str,
        run_id: &str,
        now: i64,
    ) -> Vec<i64> {
        match self
            .try_revise_beliefs(org, id, activation, cause, run_id, now)
            .await
        {
            Ok(retired) => retired,
            Err(e) => {
                tracing::warn!(error = %e, record = id, "belief revision skipped");
                Vec::new()
            }
        }
    }

    async fn try_revise_beliefs(
        &self,
        org: &str,
        id: i64,
        activation: &Supersession,
        cause: &str,
        run_id: &str,
        now: i64,
    ) -> Result<Vec<i64>, BeliefError> {
        let Some(judge) = self.roles.judge.clone() else {
            return Ok(Vec::new());
        };
        // A record that became history itself (a newer value exists) retires nothing.
        if activation.superseded_by.is_some() {
            return Ok(Vec::new());
        }
        let new = self.db.record(org, id).await?;
        if new.status != Status::Active
            || !matches!(
                new.scope,
                Scope::AgentNotes | Scope::Personal | Scope::Person
            )
        {
            return Ok(Vec::new());
        }
        let candidates: Vec<_> = self
            .db
            .related_active(&new, JUDGE_CANDIDATES)
            .await?
            .into_iter()
            .map(|(r, _)| r)
            .filter(|r| r.said_at <= new.said_at)
            .collect();
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let verdict = judge.judge(&new, &candidates).await?;
        let mut retired = Vec::new();
        for v in verdict {
            if !candidates.iter().any(|c| c.id == v.id) {
                tracing::warn!(
                    id = v.id,
                    "judge named a record outside its candidates; ignored"
                );
                continue;
            }
            let meta = RevisionMeta {
                via: "belief_revision",
                cause,
                run_id,
                reason: &v.reason,
                model: Some(judge.model()),
                prompt_version: judge.prompt_version(),
            };
            match self.db.retire(org, v.id, new.id, &meta, now).await? {
                Retirement::Retired { revision } => {
                    tracing::info!(retired = v.id, by = new.id, revision, "belief revision");
                    retired.push(v.id);
                }
                Retirement::Refused(why) => {
                    tracing::info!(
                        retired = v.id,
                        by = new.id,
                        refused = why.as_str(),
                        "belief revision refused"
                    );
                }
            }
        }
        Ok(retired)
    }

    /// The summary of a trimmed slice: the configured model's, or the
    /// deterministic one when there is none or it fails.
    pub(crate) async fn summarize_slice(&self, slice: &[StoredMessage]) -> String {
        if let Some(s) = &self.roles.summarizer {
            match s.summarize(slice).await {
                Ok(text) => return text,
                Err(e) => {
                    tracing::warn!(error = %e, "model summary failed; using the deterministic summary")
                }
            }
        }
        summarize(slice)
    }
}
