//! Session archives for admins: list, show one (with its Markdown), and
//! relearn one (each person's lines under the role they were stored with).

use super::auth::Admin;
use super::memory::reason_required;
use super::wire::{self, at, page_query, Page, Path, Query, Reply};
use axum::Json;
use chrono::{DateTime, Utc};
use memory::store::Archive;
use serde::{Deserialize, Serialize};
use steward_core::oversight;
use utoipa::{IntoParams, ToSchema};

/// An archived slice of a conversation.
#[derive(Debug, Serialize, ToSchema)]
pub struct ArchiveOut {
    pub id: i64,
    pub agent: String,
    pub channel: String,
    pub conversation: String,
    pub conversation_kind: String,
    pub started_at: DateTime<Utc>,
    pub ended_at: DateTime<Utc>,
    /// `admin` only when everyone in the slice may author operational knowledge.
    pub trust: String,
    pub summary: String,
    pub created_at: DateTime<Utc>,
    pub created_by: String,
    /// The slice as Markdown (in `GET /api/v1/archives/{id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
}

/// What the archive list says of a person's direct conversation in place of
/// its summary: the summary is their words.
pub const DIRECT_SUMMARY_WITHHELD: &str =
    "A person's direct conversation: its summary is read with a reason (GET /api/v1/archives/{id}?reason=…).";

/// `a` as the API shows it, with its Markdown when `with_markdown`. A
/// person's direct conversation shows its words only after `look`, an
/// audited reasoned read.
fn out(a: Archive, look: Option<&memory::store::AuditedLook>, with_markdown: bool) -> ArchiveOut {
    let (summary, markdown) = match a.words(look) {
        Some(words) => (
            words.summary().to_string(),
            with_markdown.then(|| words.markdown().to_string()),
        ),
        None => (DIRECT_SUMMARY_WITHHELD.to_string(), None),
    };
    ArchiveOut {
        id: a.id,
        agent: a.agent,
        channel: a.channel,
        conversation: a.conversation,
        conversation_kind: a.conversation_kind,
        started_at: at(a.started_at),
        ended_at: at(a.ended_at),
        trust: a.trust,
        summary,
        created_at: at(a.created_at),
        created_by: a.created_by,
        markdown,
    }
}

page_query! {
    /// Filters of the archive list.
    pub struct ArchiveQuery by id {
        /// Only this conversation's archives.
        conversation: Option<String>,
    }
}

/// Archives, newest first (without their Markdown).
#[utoipa::path(get, operation_id = "archives_list", path = "/api/v1/archives", tag = "archives", params(ArchiveQuery),
    responses((status = 200, body = Page<ArchiveOut>)))]
pub async fn list(admin: Admin, Query(q): Query<ArchiveQuery>) -> Reply<Page<ArchiveOut>> {
    let db = &admin.db;
    let (org, conversation) = (admin.org(), q.conversation.as_deref());
    let read = |before, n| async move {
        let archives = db.conversations();
        archives.archives_before(org, conversation, before, n).await
    };
    let page = wire::newest_by_id(&q, read, |a| a.id, |a| out(a, None, false));
    Ok(Json(page.await?))
}

/// Why an admin opens one archive.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ShowArchiveQuery {
    /// Why you read it: required for a person's direct conversation (audited
    /// as `archive.view` and shown to the person).
    reason: Option<String>,
}

/// One archive, with its Markdown. The archive of a person's direct
/// conversation needs a reason and is audited (`archive.view`).
#[utoipa::path(get, operation_id = "archives_show", path = "/api/v1/archives/{id}", tag = "archives",
    params(("id" = i64, Path, description = "Archive id"), ShowArchiveQuery),
    responses((status = 200, body = ArchiveOut)))]
pub async fn show(
    admin: Admin,
    Path(id): Path<i64>,
    Query(q): Query<ShowArchiveQuery>,
) -> Reply<ArchiveOut> {
    let db = &admin.db;
    let a = db.conversations().archive(admin.org(), id).await?;
    if let Some(person) = oversight::direct_person(db, &a).await? {
        let Some(reason) = memory::policy::oversight_reason(q.reason.as_deref()) else {
            return Err(reason_required("reading a person's direct conversation"));
        };
        let surface = format!("GET /api/v1/archives/{id}");
        let look = oversight::Look {
            org: admin.org(),
            actor: admin.id(),
            looked: oversight::Looked::Archive,
            person: &person,
            surface: &surface,
            reason,
        };
        let look = oversight::audit_view(db, look, admin.now).await?;
        return Ok(Json(out(a, Some(&look), true)));
    }
    Ok(Json(out(a, None, true)))
}

/// What a relearn did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Relearned {
    /// Records now active.
    pub active: Vec<i64>,
    /// Records quarantined for review (`GET /api/v1/review`).
    pub unverified: Vec<i64>,
    /// Items already known, forgotten or declined.
    pub skipped: usize,
    /// Its run: `POST /api/v1/runs/{run}/undo` undoes its revisions.
    pub run_id: String,
}

/// Relearn an archive: each person's lines under the role they were stored
/// with; an archive without admin trust quarantines what it teaches. Audited.
#[utoipa::path(post, operation_id = "archives_relearn", path = "/api/v1/archives/{id}/relearn", tag = "archives",
    params(("id" = i64, Path, description = "Archive id")),
    responses((status = 200, body = Relearned)))]
pub async fn relearn(admin: Admin, Path(id): Path<i64>) -> Reply<Relearned> {
    let r = admin
        .lifecycle
        .relearn(admin.org(), id, admin.id(), admin.now)
        .await?;
    Ok(Json(Relearned {
        active: r.active,
        unverified: r.unverified,
        skipped: r.skipped,
        run_id: r.run_id,
    }))
}
