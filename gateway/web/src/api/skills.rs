//! Skills for admins: revisions, a revision's review, the curation acts
//! (approve bound to the hash reviewed, reject, roll back), each checked by
//! `memory::skill::decide_curation` and audited by the store, and running a
//! skill in force now as a standing procedure.

use super::auth::Admin;
use super::runs::{self, RunOut};
use super::wire::{self, page_query, Body, OptionalBody, Page, Path, Query, Reply};
use crate::error::{ApiError, ErrorBody};
use axum::http::StatusCode;
use axum::Json;
use channels::runs::RunError;
use memory::skill::{SkillRefusal, SkillRevision, SkillStatus};
use memory::Principal;
use serde::Deserialize;
use steward_core::config::Deliver;
use steward_core::skills::review::{self, Review};
use utoipa::ToSchema;

page_query! {
    /// Which revisions, one page at a time.
    pub struct SkillsQuery by id {
        /// Only revisions with this status.
        pub status: Option<SkillStatus>,
    }
}

/// Skill revisions of every agent, newest first.
#[utoipa::path(get, operation_id = "skills_list", path = "/api/v1/skills", tag = "skills", params(SkillsQuery),
    responses((status = 200, body = Page<SkillRevision>)))]
pub async fn list(admin: Admin, Query(q): Query<SkillsQuery>) -> Reply<Page<SkillRevision>> {
    let db = &admin.db;
    let (org, status) = (admin.org(), q.status);
    // The store lists every revision of the organisation; the page is cut here.
    let read = |before: Option<i64>, n: i64| async move {
        let rows = db.skills().list(org, status).await?;
        let below = rows
            .into_iter()
            .filter(|r| r.id < before.unwrap_or(i64::MAX));
        Ok(below.take(usize::try_from(n).unwrap_or(0)).collect())
    };
    let page = wire::newest_by_id(&q, read, |r: &SkillRevision| r.id, |r| r);
    Ok(Json(page.await?))
}

/// What an administrator reviews before approving revision `id`: the
/// revision, the one in force, the difference, the corrections it came from.
#[utoipa::path(get, operation_id = "skills_show", path = "/api/v1/skills/{id}", tag = "skills",
    params(("id" = i64, Path, description = "Skill revision id")),
    responses((status = 200, body = Review)))]
pub async fn show(admin: Admin, Path(id): Path<i64>) -> Reply<Review> {
    Ok(Json(review::review(&admin.db, admin.org(), id).await?))
}

/// An approval: the hash of the content reviewed.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillApproval {
    /// The revision's `hash` as reviewed (8 characters of it at least).
    #[schema(example = "3f6c1a9e0b2d")]
    pub hash: String,
}

/// A rollback's target.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rollback {
    /// The approved revision (id) of the same skill to put back; null or
    /// absent: the one approved before the revision in force.
    #[serde(default)]
    pub to: Option<i64>,
}

/// The admin as the principal of a curation act.
fn principal(admin: &Admin) -> Principal {
    Principal::Human {
        user_id: admin.user.user_id.clone(),
        name: admin.user.name.clone(),
        role: admin.user.role,
    }
}

/// A curation act's answer: the revision, or 409 with why it was refused.
fn answer(r: Result<SkillRevision, SkillRefusal>) -> Reply<SkillRevision> {
    match r {
        Ok(r) => Ok(Json(r)),
        Err(SkillRefusal::NotAdmin) => Err(ApiError::forbidden(super::ADMIN_ONLY)),
        Err(why) => Err(ApiError::conflict(why.to_string())),
    }
}

/// Put proposed revision `id` in force, if its content still has the hash
/// reviewed and the revision it was proposed against is still in force. Audited.
#[utoipa::path(post, operation_id = "skills_approve", path = "/api/v1/skills/{id}/approve", tag = "skills",
    params(("id" = i64, Path, description = "Skill revision id")), request_body = SkillApproval,
    responses((status = 200, body = SkillRevision, description = "The revision, in force"),
        (status = 409, body = ErrorBody, description = "Not proposed, or stale: the hash differs or another revision is in force now")))]
pub async fn approve(
    admin: Admin,
    Path(id): Path<i64>,
    Body(body): Body<SkillApproval>,
) -> Reply<SkillRevision> {
    let r = admin
        .skills
        .approve(admin.org(), &principal(&admin), id, &body.hash, admin.now)
        .await?;
    answer(r)
}

/// Decline proposed revision `id`. Audited.
#[utoipa::path(post, operation_id = "skills_reject", path = "/api/v1/skills/{id}/reject", tag = "skills",
    params(("id" = i64, Path, description = "Skill revision id")),
    responses((status = 200, body = SkillRevision, description = "The revision, rejected"),
        (status = 409, body = ErrorBody, description = "Not waiting for approval")))]
pub async fn reject(admin: Admin, Path(id): Path<i64>) -> Reply<SkillRevision> {
    let r = admin
        .skills
        .reject(admin.org(), &principal(&admin), id, admin.now)
        .await?;
    answer(r)
}

/// Put an earlier approved revision of the skill of revision `id` back in
/// force: `to`, or the one approved before the revision in force. Audited.
#[utoipa::path(post, operation_id = "skills_rollback", path = "/api/v1/skills/{id}/rollback", tag = "skills",
    params(("id" = i64, Path, description = "Any revision id of the skill")), request_body = Rollback,
    responses((status = 200, body = SkillRevision, description = "The revision now in force"), (status = 404, body = ErrorBody, description = "No such revision, or `to` is not one of this skill"),
        (status = 409, body = ErrorBody, description = "`to` was never approved, or there is nothing to roll back to")))]
pub async fn rollback(
    admin: Admin,
    Path(id): Path<i64>,
    Body(body): Body<Rollback>,
) -> Reply<SkillRevision> {
    let of = admin.db.skills().revision(admin.org(), id).await?;
    let r = admin
        .skills
        .rollback(
            admin.org(),
            &principal(&admin),
            of.skill_id,
            body.to,
            admin.now,
        )
        .await?;
    answer(r)
}

/// What to run a skill for, and where its answer goes.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Whose skill (default: server.agent).
    #[schema(pattern = "^[A-Za-z0-9._-]{1,64}$")]
    pub agent: Option<String>,
    /// Where the answer goes: `dashboard` (default), `none`,
    /// `discord:<channel id>`, `slack:<channel id>`, `teams:<channel>` or
    /// `teams_bot:<conversation id>` (a configured channel).
    #[schema(example = "dashboard")]
    pub deliver: Option<String>,
}

/// Run skill `slug` now as a standing procedure, under the system principal
/// `sop-system`, the calling admin recorded as `started_by`; answers when the
/// run has finished (however it ended: see `outcome`), with its lines. The
/// body may be left out. Audited (`run.start`, `run.finish`).
#[utoipa::path(post, operation_id = "skills_run", path = "/api/v1/skills/{slug}/run", tag = "skills",
    params(("slug" = String, Path, description = "The skill's name")), request_body(content = Option<RunRequest>, description = "Optional: every field has a default"),
    responses((status = 201, body = RunOut, description = "The run, finished"), (status = 400, body = ErrorBody, description = "A bad agent or delivery target"),
        (status = 404, body = ErrorBody, description = "The agent has no such skill in force")))]
pub async fn run(
    admin: Admin,
    Path(slug): Path<String>,
    OptionalBody(body): OptionalBody<RunRequest>,
) -> Result<(StatusCode, Json<RunOut>), ApiError> {
    let agent = body.agent.unwrap_or_else(|| admin.cfg.server.agent.clone());
    if let Err(why) = memory::check_agent_id(&agent) {
        return Err(ApiError::bad_request(format!("agent: {why}")));
    }
    let deliver = match body.deliver.as_deref() {
        None => Deliver::Dashboard,
        Some(d) => d
            .parse::<Deliver>()
            .map_err(|why| ApiError::bad_request(format!("deliver: {why}")))?,
    };
    admin
        .cfg
        .check_deliver(&deliver)
        .map_err(|why| ApiError::bad_request(format!("deliver: {why}")))?;
    let target = channels::runs::on_demand(admin.org(), &agent, &slug, deliver);
    let run = match admin.runner.on_demand(&target, admin.id()).await {
        Ok(run) => run,
        Err(e @ RunError::NoSkill { .. }) => return Err(ApiError::not_found(e.to_string())),
        Err(RunError::Store(e)) => return Err(e.into()),
    };
    let lines = admin.runner.lines(&run).await?;
    Ok((StatusCode::CREATED, Json(runs::out(run, Some(lines)))))
}
