//! What any key reaches: its own user, its own personal memory (list, show,
//! forget), its own data, and a search of what a turn of theirs may read.
//! Another person's record is answered as one that does not exist.

use super::auth::Caller;
use super::memory::{export_of, records_page, Forgotten, Record};
use super::search::{ranked, SearchResults, Searched};
use super::wire::{self, page_query, Body, Path, Query, Reply};
use crate::error::{ApiError, ErrorBody};
use axum::Json;
use memory::policy::PromotionRefusal;
use memory::store::RecordFilter;
use memory::{MemoryRecord, Role, Scope, Status};
use serde::{Deserialize, Serialize};
use steward_core::oversight;
use utoipa::{IntoParams, ToSchema};

/// The key's user.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub org: String,
    pub user_id: String,
    pub name: String,
    pub role: Role,
}

/// Who this key speaks as, with the role the pairing store gives them.
#[utoipa::path(get, operation_id = "me_whoami", path = "/api/v1/me", tag = "me",
    responses((status = 200, body = Me)))]
pub async fn whoami(caller: Caller) -> Json<Me> {
    let u = caller.user;
    Json(Me {
        org: u.org,
        user_id: u.user_id,
        name: u.name,
        role: u.role,
    })
}

page_query! {
    /// Filters of one's own record list.
    pub struct OwnQuery by id {
        /// `personal` or `person` (both when not given).
        #[param(value_type = Option<OwnScope>)]
        scope: Option<Scope>,
        /// Only this status (every status when not given).
        status: Option<Status>,
        /// Subject or content contains this text (case-insensitive).
        q: Option<String>,
    }
}

/// The scopes of one's own memory.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum OwnScope {
    Personal,
    Person,
}

/// A page of one's own memory, with steward's two promises and every time
/// an administrator looked at it.
#[derive(Debug, Serialize, ToSchema)]
pub struct MyMemory {
    pub items: Vec<Record>,
    /// The cursor of the next page, or null.
    pub next: Option<String>,
    /// The consent promise and the training promise, word for word.
    pub promises: Vec<&'static str>,
    /// Each oversight look at your records or direct conversations: who, when, why.
    pub viewed_by: Vec<ViewedBy>,
}

/// One oversight look, as the person is shown it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ViewedBy {
    /// The administrator's name (their stored id when not paired).
    pub who: String,
    pub at: chrono::DateTime<chrono::Utc>,
    /// Their reason; null for looks made before reasons were asked.
    pub reason: Option<String>,
    /// Set when the operator acted as you rather than looked: how (a key
    /// made to act as you, with its id — revoke it under /api/v1/me/keys —
    /// or a chat as you).
    pub acted_as: Option<String>,
}

/// Your own personal memory, newest first, with the two promises and who
/// looked at it and why.
#[utoipa::path(get, operation_id = "me_memory", path = "/api/v1/me/memory", tag = "me", params(OwnQuery),
    responses((status = 200, body = MyMemory)))]
pub async fn memory(caller: Caller, Query(mut q): Query<OwnQuery>) -> Reply<MyMemory> {
    let scopes = match q.scope {
        Some(s) if s.is_personal() => vec![s],
        Some(s) => {
            return Err(ApiError::bad_request(format!(
                "your own memory is personal or person, not {s}; search reads the rest"
            )))
        }
        None => vec![Scope::Personal, Scope::Person],
    };
    let filter = RecordFilter {
        scopes,
        owner: Some(caller.id().to_string()),
        status: q.status,
        text: q.q.take(),
        ..Default::default()
    };
    let page = records_page(&caller, filter, &q).await?;
    let mut viewed_by = Vec::new();
    for v in oversight::views(&caller.db, caller.org(), caller.id()).await? {
        let who = match caller.pairing.user(caller.org(), &v.who).await {
            Ok(u) => u.name,
            Err(_) => v.who,
        };
        viewed_by.push(ViewedBy {
            who,
            at: wire::at(v.at_ms),
            reason: v.reason,
            acted_as: v.acted_as,
        });
    }
    Ok(Json(MyMemory {
        items: page.items,
        next: page.next,
        promises: oversight::PROMISES.to_vec(),
        viewed_by,
    }))
}

/// What promoting did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Promoted {
    /// The record, now in the person tier: every agent of the organisation reads it when you speak.
    pub promoted: i64,
}

/// Promote one of your own individual records to the person tier, as `/promote`
/// does in chat: only how you like to work travels (preference, vocabulary,
/// rubric adjustment); any other kind is 422 `kind_not_promotable`. Audited.
#[utoipa::path(post, operation_id = "me_promote", path = "/api/v1/me/memory/{id}/promote", tag = "me",
    params(("id" = i64, Path, description = "Record id")),
    responses((status = 200, body = Promoted), (status = 422, body = ErrorBody)))]
pub async fn promote(caller: Caller, Path(id): Path<i64>) -> Reply<Promoted> {
    let r = own(&caller, id).await?;
    match memory::policy::decide_promotion(caller.id(), &r) {
        Ok(()) => {}
        Err(refused @ PromotionRefusal::NotYours(_)) => {
            return Err(ApiError::not_found(refused.to_string()))
        }
        Err(refused @ PromotionRefusal::KindNotPromotable { .. }) => {
            return Err(ApiError::new(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                refused.to_string(),
            )
            .with_code("kind_not_promotable"))
        }
    }
    match caller
        .lifecycle
        .promote_own(caller.org(), caller.id(), id, caller.now)
        .await?
    {
        Ok(()) => Ok(Json(Promoted { promoted: id })),
        Err(refused) => Err(ApiError::not_found(refused)),
    }
}

/// `id` when it is one of `caller`'s own personal records; otherwise the
/// same 404 as a record that does not exist.
async fn own(caller: &Caller, id: i64) -> Result<MemoryRecord, ApiError> {
    let none = || ApiError::not_found(format!("you have no record {id}"));
    let r = match caller.db.records().get(caller.org(), id).await {
        Ok(r) => r,
        Err(memory::StoreError::NotFound(_)) => return Err(none()),
        Err(e) => return Err(e.into()),
    };
    if r.scope.is_personal() && r.owner.as_deref() == Some(caller.id()) {
        Ok(r)
    } else {
        Err(none())
    }
}

/// One of your own records.
#[utoipa::path(get, operation_id = "me_show", path = "/api/v1/me/memory/{id}", tag = "me",
    params(("id" = i64, Path, description = "Record id")),
    responses((status = 200, body = Record)))]
pub async fn show(caller: Caller, Path(id): Path<i64>) -> Reply<Record> {
    Ok(Json(own(&caller, id).await?.into()))
}

/// Forget one of your own records, as `/forget` does in chat. Audited.
#[utoipa::path(delete, operation_id = "me_forget", path = "/api/v1/me/memory/{id}", tag = "me",
    params(("id" = i64, Path, description = "Record id")),
    responses((status = 200, body = Forgotten)))]
pub async fn forget(caller: Caller, Path(id): Path<i64>) -> Reply<Forgotten> {
    match caller
        .lifecycle
        .forget_own(caller.org(), id, caller.id(), caller.now)
        .await?
    {
        Ok(()) => Ok(Json(Forgotten { forgotten: id })),
        Err(refused) => Err(ApiError::not_found(refused)),
    }
}

/// Everything stored about you: pairing, records and lines. Audited.
#[utoipa::path(get, operation_id = "me_export", path = "/api/v1/me/export", tag = "me",
    responses((status = 200, body = Object, description = "Your data: org, user, pairing, records, messages")))]
pub async fn export(caller: Caller) -> Reply<serde_json::Value> {
    export_of(&caller, caller.org(), caller.id(), caller.id())
        .await
        .map(Json)
}

/// A search of memory.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct SearchQuery {
    /// The words to look for.
    q: String,
    /// The agent whose notes are read (default: server.agent).
    #[param(pattern = "^[A-Za-z0-9._-]{1,64}$")]
    agent: Option<String>,
    /// Results at most (1–200, default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<i64>,
}

/// Search what a direct conversation of yours may read: org policy, the
/// agent's notes and your own personal records (never anyone else's),
/// through the same retrieval a turn uses.
#[utoipa::path(get, operation_id = "me_search", path = "/api/v1/me/search", tag = "me", params(SearchQuery),
    responses((status = 200, body = SearchResults)))]
pub async fn search(caller: Caller, Query(q): Query<SearchQuery>) -> Reply<SearchResults> {
    let searched = Searched {
        org: caller.org(),
        agent: q.agent,
        speaker: Some(caller.id().to_string()),
        text: &q.q,
        limit: q.limit,
    };
    Ok(Json(ranked(&caller, searched).await?))
}

/// Your own settings.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Keep what you say about yourself without asking "Remember this?"
    /// (default off). The operator's per-agent `auto_keep` is the ceiling:
    /// both must be on.
    pub auto_keep: bool,
}

/// Your own settings.
#[utoipa::path(get, operation_id = "me_settings", path = "/api/v1/me/settings", tag = "me",
    responses((status = 200, body = Settings)))]
pub async fn settings(caller: Caller) -> Reply<Settings> {
    let auto_keep = caller
        .db
        .identity()
        .person_auto_keep(caller.org(), caller.id())
        .await?;
    Ok(Json(Settings { auto_keep }))
}

/// Change your own settings (as `/autokeep on|off` in chat). Audited (`settings.auto_keep`).
#[utoipa::path(put, operation_id = "me_settings_set", path = "/api/v1/me/settings", tag = "me",
    request_body = Settings,
    responses((status = 200, body = Settings)))]
pub async fn set_settings(caller: Caller, Body(s): Body<Settings>) -> Reply<Settings> {
    caller
        .db
        .identity()
        .set_person_auto_keep(
            caller.org(),
            caller.id(),
            s.auto_keep,
            caller.id(),
            caller.now,
        )
        .await?;
    Ok(Json(s))
}
