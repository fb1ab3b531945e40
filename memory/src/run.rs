//! What an automated run is: a turn no person started — a schedule's slot, a
//! signed webhook delivery, or an administrator's "run this skill now" —
//! under a system principal, recorded with its trigger, procedure, outcome
//! and where its answer went.

use serde::Serialize;

named_enum! {
    /// What started a run. Stored by name.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum Trigger {
        /// A slot of a `[[schedules]]` entry.
        Schedule,
        /// A signed delivery to `POST /hooks/<name>`.
        Webhook,
        /// An administrator ran a skill now (CLI, API, dashboard).
        OnDemand,
    }
}

named_enum! {
    /// Where a run is in its life. Stored by name.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum RunOutcome {
        /// Started, not finished yet (or its process stopped midway).
        Running,
        /// Answered, and the answer reached its target (or it had none).
        Answered,
        /// Answered, but the answer did not reach its target.
        Undelivered,
        /// The turn itself failed (a store or model error).
        Failed,
    }
}

/// One run as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow, derive_more::Deref)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Run {
    pub id: i64,
    pub org: String,
    #[sqlx(flatten)]
    #[serde(flatten)]
    #[deref]
    pub start: RunStart,
    #[sqlx(try_from = "String")]
    pub outcome: RunOutcome,
    /// What went wrong ('' when nothing did): the turn's error, or the delivery's.
    pub error: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
}

/// What a run was started as, as every view of one shows it (the store's,
/// the API's): which agent runs it, what it follows, for whom, and where its
/// answer goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunStart {
    /// The agent that runs it.
    pub agent: String,
    /// The schedule's or webhook's name, or the skill's slug for a run on demand.
    pub name: String,
    #[sqlx(try_from = "String")]
    pub trigger: Trigger,
    /// `cron-system`, `sop-system` or `webhook-system`.
    pub principal: String,
    /// The skill it followed as a standing procedure ('' when none).
    pub skill: String,
    /// That skill's revision number (0 when none).
    pub skill_rev: i64,
    /// The administrator who started it (on demand), the webhook's delivery
    /// id, or '' for a schedule.
    pub started_by: String,
    /// Its conversation, `run:<name>/<id>`: its lines are stored there.
    pub conversation: String,
    /// Where its answer goes: `none`, `dashboard`, `discord:<channel id>`,
    /// `slack:<channel id>`, `teams:<channel>`, `teams_bot:<conversation id>`.
    pub deliver: String,
}

/// The conversation a run's lines are stored in.
pub fn conversation_of(name: &str, id: i64) -> String {
    format!("run:{name}/{id}")
}
