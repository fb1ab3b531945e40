//! Automated runs for admins: the runs of the key's organisation (schedules,
//! webhooks, skills run on demand), newest first, and one run with its lines.
//! Starting one is `POST /api/v1/skills/{slug}/run` (`skills.rs`).

use super::auth::Admin;
use super::wire::{self, at, page_query, Page, Path, Query, Reply};
use crate::error::ApiError;
use axum::Json;
use chrono::{DateTime, Utc};
use memory::run::{Run, RunOutcome, RunStart};
use memory::StoredMessage;
use serde::Serialize;
use utoipa::ToSchema;

/// A run: what started it, under which system principal, what it followed,
/// how it ended and where its answer went.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunOut {
    pub id: i64,
    #[serde(flatten)]
    pub start: RunStart,
    pub outcome: RunOutcome,
    /// What went wrong ('' when nothing did).
    pub error: String,
    pub started_at: DateTime<Utc>,
    /// Null while it runs.
    pub finished_at: Option<DateTime<Utc>>,
    /// Its lines, oldest first (one run only, not in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<LineOut>>,
}

/// One line of a run's conversation.
#[derive(Debug, Serialize, ToSchema)]
pub struct LineOut {
    pub id: i64,
    /// `system` (the run's instruction) or `agent` (its answer).
    pub author: String,
    /// The principal the instruction was sent as; null for the agent.
    pub sender: Option<String>,
    pub sender_role: Option<String>,
    pub text: String,
    pub said_at: DateTime<Utc>,
}

pub(super) fn out(r: Run, lines: Option<Vec<StoredMessage>>) -> RunOut {
    RunOut {
        id: r.id,
        start: r.start,
        outcome: r.outcome,
        error: r.error,
        started_at: at(r.started_at),
        finished_at: r.finished_at.map(at),
        lines: lines.map(|ls| {
            ls.into_iter()
                .map(|m| LineOut {
                    id: m.id,
                    author: m.author,
                    sender: m.sender,
                    sender_role: m.sender_role,
                    text: m.text,
                    said_at: at(m.said_at),
                })
                .collect()
        }),
    }
}

page_query! {
    /// Which runs, one page at a time.
    pub struct RunsQuery by id, max 500 {
        /// Only the runs of this schedule, webhook or skill.
        pub name: Option<String>,
    }
}

/// The organisation's automated runs, newest first (without their lines).
#[utoipa::path(get, operation_id = "runs_list", path = "/api/v1/runs", tag = "runs", params(RunsQuery),
    responses((status = 200, body = Page<RunOut>)))]
pub async fn list(admin: Admin, Query(q): Query<RunsQuery>) -> Reply<Page<RunOut>> {
    let db = &admin.db;
    let (org, name) = (admin.org(), q.name.as_deref());
    let read = |before, n| async move { db.runs().list_before(org, name, before, n).await };
    let page = wire::newest_by_id(&q, read, |r| r.id, |r| out(r, None));
    Ok(Json(page.await?))
}

/// One run of the organisation, with its lines: its instruction and the
/// agent's answer.
#[utoipa::path(get, operation_id = "runs_show", path = "/api/v1/runs/{id}", tag = "runs",
    params(("id" = i64, Path, description = "Run id")),
    responses((status = 200, body = RunOut)))]
pub async fn show(admin: Admin, Path(id): Path<i64>) -> Reply<RunOut> {
    let run = admin
        .db
        .runs()
        .find(admin.org(), id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("run {id} not found")))?;
    let lines = admin.runner.lines(&run).await?;
    Ok(Json(out(run, Some(lines))))
}
