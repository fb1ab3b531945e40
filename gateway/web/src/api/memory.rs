//! Memory records for admins: list with filters (one person's individual
//! records at a time, with a reason, audited as `memory.view`), show and
//! forget. Oversight never shows the person tier (`policy::oversight_shows`)
//! and never exports one person's data: a person exports their own under
//! `/api/v1/me` (`me.rs`).

use super::auth::{Admin, Caller};
use super::wire::{self, at, iso_times, page_query, Page, PageAsk, Path, Query, Reply};
use crate::error::{ApiError, ErrorBody};
use axum::Json;
use chrono::{DateTime, Utc};
use memory::policy::{self, Oversight};
use memory::store::RecordFilter;
use memory::{MemoryRecord, Scope, Status};
use serde::{Deserialize, Serialize};
use steward_core::oversight::{audit_view, Look, Looked};
use utoipa::{IntoParams, ToSchema};

/// A memory record as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct Record {
    pub id: i64,
    pub agent: String,
    pub scope: Scope,
    /// The person a personal record belongs to.
    pub owner: Option<String>,
    /// Two statements about the same thing share a subject.
    pub subject: String,
    pub kind: String,
    pub content: String,
    pub status: Status,
    pub source: String,
    /// When it was said.
    pub said_at: DateTime<Utc>,
    /// When it was written.
    pub recorded_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub conversation: Option<String>,
    /// Who said it: a stored user id or a system principal.
    pub author: Option<String>,
    /// Whose behalf the author said it on (a delegate's turn), if any.
    pub on_behalf_of: Option<String>,
}

impl From<MemoryRecord> for Record {
    fn from(MemoryRecord { id, written: r }: MemoryRecord) -> Self {
        Record {
            id,
            agent: r.agent,
            scope: r.scope,
            owner: r.owner,
            subject: r.subject,
            kind: r.kind,
            content: r.content,
            status: r.status,
            source: r.source,
            said_at: at(r.said_at),
            recorded_at: at(r.recorded_at),
            expires_at: r.expires_at.map(at),
            conversation: r.conversation,
            author: r.author,
            on_behalf_of: r.on_behalf_of,
        }
    }
}

page_query! {
    /// Filters of the admin's record list.
    pub struct ListQuery by id {
        /// Only this scope. Personal scopes need `owner`.
        scope: Option<Scope>,
        /// Only this status (every status when not given).
        status: Option<Status>,
        /// One person's individual records (needs `reason`; the look is audited as
        /// `memory.view` and shown to the person). Their person tier is never shown.
        owner: Option<String>,
        /// Why you look at this person's records: required with `owner`.
        reason: Option<String>,
        /// Only this agent's records.
        agent: Option<String>,
        /// Subject or content contains this text (case-insensitive).
        q: Option<String>,
    }
}

/// The page `asked` of the records `filter` keeps, newest first.
pub async fn records_page(
    caller: &Caller,
    filter: RecordFilter,
    asked: &impl PageAsk,
) -> Result<Page<Record>, ApiError> {
    let (db, org) = (&caller.db, caller.org());
    let read = |before, n| async move {
        let filter = RecordFilter { before, ..filter };
        db.records().browse_records(org, &filter, n).await
    };
    wire::newest_by_id(asked, read, |r| r.id, Record::from).await
}

/// The refusal of an oversight read without a reason.
pub fn reason_required(what: &str) -> ApiError {
    ApiError::bad_request(format!(
        "{what} needs a reason: give reason=… (it is audited and shown to the person)"
    ))
    .with_code("reason_required")
}

/// The refusal of any admin read of the person tier.
pub fn person_tier_owner_only() -> ApiError {
    ApiError::forbidden("the person tier is read only by its owner, never by oversight")
        .with_code("person_tier_owner_only")
}

/// List records. Without `owner` only agent notes and org policy; one
/// person's individual records with `owner` and a `reason`, audited and shown
/// to them. The person tier is never listed here.
#[utoipa::path(get, operation_id = "memory_list", path = "/api/v1/memory", tag = "memory", params(ListQuery),
    responses((status = 200, body = Page<Record>)))]
pub async fn list(admin: Admin, Query(mut q): Query<ListQuery>) -> Reply<Page<Record>> {
    let owner = q
        .owner
        .take()
        .map(|o| o.trim().to_string())
        .filter(|o| !o.is_empty());
    let reason = policy::oversight_reason(q.reason.as_deref()).map(str::to_string);
    let why = match reason {
        Some(_) => Oversight::Reasoned,
        None => Oversight::Unreasoned,
    };
    if q.scope == Some(Scope::Person) {
        return Err(person_tier_owner_only());
    }
    let scopes: Vec<Scope> =
        match (q.scope, &owner) {
            (Some(s), None) if s.is_personal() => return Err(ApiError::bad_request(
                "personal memory is listed one person at a time: give owner and reason (the look is audited)",
            )),
            (Some(s), _) => vec![s],
            (None, None) => vec![Scope::AgentNotes, Scope::OrgPolicy],
            (None, Some(_)) => vec![Scope::Personal],
        };
    if let Some(o) = &owner {
        let Some(reason) = &reason else {
            return Err(reason_required("reading one person's records"));
        };
        let look = Look {
            org: admin.org(),
            actor: admin.id(),
            looked: Looked::Memory,
            person: o,
            surface: "GET /api/v1/memory?owner",
            reason,
        };
        audit_view(&admin.db, look, admin.now).await?;
    }
    let filter = RecordFilter {
        agent: q.agent.take(),
        scopes: scopes
            .into_iter()
            .filter(|s| policy::oversight_shows(*s, why))
            .collect(),
        owner,
        status: q.status,
        text: q.q.take(),
        ..Default::default()
    };
    if filter.scopes.is_empty() {
        return Err(reason_required("reading one person's records"));
    }
    let mut page = records_page(&admin, filter, &q).await?;
    page.items.retain(|r| policy::oversight_shows(r.scope, why));
    Ok(Json(page))
}

/// Why an admin opens one record.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ShowQuery {
    /// Why you look: required for a person's individual record (audited, shown to them).
    reason: Option<String>,
}

/// One record. A person's individual record needs a reason and is audited
/// (`memory.view`); the person tier is never shown (403 `person_tier_owner_only`).
#[utoipa::path(get, operation_id = "memory_show", path = "/api/v1/memory/{id}", tag = "memory",
    params(("id" = i64, Path, description = "Record id"), ShowQuery),
    responses((status = 200, body = Record)))]
pub async fn show(admin: Admin, Path(id): Path<i64>, Query(q): Query<ShowQuery>) -> Reply<Record> {
    let db = &admin.db;
    let r = db.records().get(admin.org(), id).await?;
    let reason = policy::oversight_reason(q.reason.as_deref());
    if r.scope == Scope::Person {
        return Err(person_tier_owner_only());
    }
    if let (true, Some(owner)) = (r.scope.is_personal(), &r.owner) {
        let Some(reason) = reason else {
            return Err(reason_required("opening a person's record"));
        };
        let surface = format!("GET /api/v1/memory/{id}");
        let look = Look {
            org: admin.org(),
            actor: admin.id(),
            looked: Looked::Memory,
            person: owner,
            surface: &surface,
            reason,
        };
        audit_view(db, look, admin.now).await?;
    }
    Ok(Json(r.into()))
}

/// What forgetting did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Forgotten {
    /// The record now deleted; its text is gone, a tombstone keeps it from being relearned.
    pub forgotten: i64,
}

/// Forget a record: its text is deleted and a tombstone keeps relearn from
/// bringing it back. Audited (`memory.forget`).
#[utoipa::path(delete, operation_id = "memory_forget", path = "/api/v1/memory/{id}", tag = "memory",
    params(("id" = i64, Path, description = "Record id")),
    responses((status = 200, body = Forgotten), (status = 409, body = ErrorBody, description = "Already deleted")))]
pub async fn forget(admin: Admin, Path(id): Path<i64>) -> Reply<Forgotten> {
    let r = admin.db.records().get(admin.org(), id).await?;
    if r.status == Status::Deleted {
        return Err(ApiError::conflict(format!(
            "record {id} is already deleted"
        )));
    }
    admin
        .lifecycle
        .forget(admin.org(), id, admin.id(), admin.now)
        .await?;
    Ok(Json(Forgotten { forgotten: id }))
}

/// `user`'s data as `actor` exports it, times ISO-8601.
pub async fn export_of(
    caller: &Caller,
    org: &str,
    user: &str,
    actor: &str,
) -> Result<serde_json::Value, ApiError> {
    let mut v = caller
        .export
        .export_user(org, user, actor, caller.now)
        .await?;
    iso_times(&mut v);
    Ok(v)
}
