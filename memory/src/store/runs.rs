//! Automated runs and the webhook deliveries already taken. A run's start
//! and its end are each audited in their transaction.

use super::audit::Act;
use super::{Db, Result};
use crate::admin_text::Identifier;
use crate::run::{conversation_of, Run, RunOutcome, Trigger};

const RUN: &str = "SELECT id, org, agent, name, trigger, principal, skill, skill_rev, started_by, \
     conversation, deliver, outcome, error, started_at, finished_at FROM runs";

/// Automated runs of every agent of an organisation (`db.runs()`).
#[derive(Clone, Copy)]
pub struct Runs<'a> {
    pub(super) db: &'a Db,
}

/// A run about to start.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub name: &'a str,
    pub trigger: Trigger,
    pub principal: &'a str,
    /// The skill followed and its revision number, when it is a standing procedure.
    pub skill: Option<(&'a str, i64)>,
    pub started_by: &'a str,
    pub deliver: &'a str,
    pub at: i64,
}

impl Runs<'_> {
    /// Record a run as started; its conversation is `run:<name>/<id>`.
    /// Audited as `run.start`.
    pub async fn start(&self, r: &NewRun<'_>) -> Result<Run> {
        let mut tx = super::begin(&self.db.pool).await?;
        let (skill, skill_rev) = r.skill.unwrap_or(("", 0));
        let text = "INSERT INTO runs (org, agent, name, trigger, principal, skill, skill_rev, \
             started_by, conversation, deliver, outcome, error, started_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '', $9, $10, '', $11) RETURNING id";
        let (id,): (i64,) = sql!(
            text,
            r.org,
            r.agent,
            r.name,
            r.trigger,
            r.principal,
            skill,
            skill_rev,
            r.started_by,
            r.deliver,
            RunOutcome::Running,
            r.at,
        )
        .one(&mut *tx)
        .await?;
        let conversation = conversation_of(r.name, id);
        let text = "UPDATE runs SET conversation = $1 WHERE id = $2";
        sql!(text, conversation.as_str(), id).exec(&mut *tx).await?;
        let run_of = admin_text!(
            "{} run of {} as {}",
            r.trigger.as_str(),
            Identifier::new(r.name),
            Identifier::new(r.principal)
        );
        let detail = if skill.is_empty() {
            run_of
        } else {
            admin_text!(
                "{}, skill {} rev {}",
                run_of,
                Identifier::new(skill),
                skill_rev
            )
        };
        let actor = if r.started_by.is_empty() || r.trigger == Trigger::Webhook {
            r.principal
        } else {
            r.started_by
        };
        let by = Act {
            org: r.org,
            actor,
            at: r.at,
        };
        by.audit(&mut *tx, "run.start", &conversation, &detail)
            .await?;
        tx.commit().await?;
        self.get(r.org, id).await
    }

    /// Record how a run ended. Audited as `run.finish`.
    pub async fn finish(
        &self,
        org: &str,
        id: i64,
        outcome: RunOutcome,
        error: &str,
        at: i64,
    ) -> Result<Run> {
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE runs SET outcome = $1, error = $2, finished_at = $3 \
             WHERE org = $4 AND id = $5";
        sql!(text, outcome, error, at, org, id)
            .exec(&mut *tx)
            .await?;
        let text = format!("{RUN} WHERE org = $1 AND id = $2");
        let run: Run = sql!(text, org, id).one(&mut *tx).await?;
        // The error itself stays in the run's record: it may quote what
        // the run read, and every administrator reads the audit log.
        let detail = if error.is_empty() {
            admin_text!("{}", outcome.as_str())
        } else {
            admin_text!("{} (the run's record holds the error)", outcome.as_str())
        };
        let by = Act {
            org,
            actor: &run.principal,
            at,
        };
        by.audit(&mut *tx, "run.finish", &run.conversation, &detail)
            .await?;
        tx.commit().await?;
        Ok(run)
    }

    /// One run of `org`.
    pub async fn get(&self, org: &str, id: i64) -> Result<Run> {
        let text = format!("{RUN} WHERE org = $1 AND id = $2");
        sql!(text, org, id).one(&self.db.pool).await
    }

    /// One run of `org`, if there is one.
    pub async fn find(&self, org: &str, id: i64) -> Result<Option<Run>> {
        let text = format!("{RUN} WHERE org = $1 AND id = $2");
        sql!(text, org, id).opt(&self.db.pool).await
    }

    /// The newest runs of `org` first, `limit` at most, those of `name` when given.
    pub async fn list(&self, org: &str, name: Option<&str>, limit: i64) -> Result<Vec<Run>> {
        self.list_before(org, name, None, limit).await
    }

    /// As [`Runs::list`], of the runs with an id below `before` (a page's cursor).
    pub async fn list_before(
        &self,
        org: &str,
        name: Option<&str>,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<Run>> {
        let q = sql!(format!("{RUN} WHERE org = $1"), org)
            .and_eq("name", name)
            .push(" AND id < ")
            .bind(before.unwrap_or(i64::MAX))
            .push(" ORDER BY id DESC LIMIT ")
            .bind(limit);
        q.all(&self.db.pool).await
    }

    /// Take webhook `hook`'s delivery `delivery`: true the first time it is
    /// seen, false for a repeat, however many replicas are asked.
    pub async fn take_delivery(
        &self,
        org: &str,
        hook: &str,
        delivery: &str,
        at: i64,
    ) -> Result<bool> {
        let text = "INSERT INTO webhook_deliveries (org, hook, delivery, received_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
        Ok(sql!(text, org, hook, delivery, at)
            .exec(&self.db.pool)
            .await?
            == 1)
    }
}
