//! The ranked search both `/api/v1/me/search` and `/api/v1/memory/search`
//! answer with: the one retrieval a turn uses (`Db::retrieve`); the admin's
//! search (`GET /api/v1/memory/search`) is here too.

use super::auth::Admin;
use super::memory::reason_required;
use super::memory::Record;
use super::wire::{self, Query, Reply};
use super::ApiState;
use crate::error::{ApiError, ErrorBody};
use axum::Json;
use memory::policy::{self, Oversight};
use memory::store::RetrievalScope;
use serde::{Deserialize, Serialize};
use steward_core::oversight::{audit_view, Look, Looked};
use utoipa::{IntoParams, ToSchema};

/// A record found: how many of the search's words it holds, and its rank
/// (BM25 inverse document frequency summed, both engines; higher is better, comparable
/// within one search only).
#[derive(Debug, Serialize, ToSchema)]
pub struct SearchHit {
    pub record: Record,
    pub hits: i64,
    pub score: f64,
}

/// The records found, best first.
#[derive(Debug, Serialize, ToSchema)]
pub struct SearchResults {
    pub items: Vec<SearchHit>,
}

/// What one ranked search reads: the org, the agent (default
/// `server.agent`), the person whose own records it may also read.
pub struct Searched<'a> {
    pub org: &'a str,
    pub agent: Option<String>,
    pub speaker: Option<String>,
    pub text: &'a str,
    pub limit: Option<i64>,
}

/// The one retrieval a turn uses, with a direct conversation's scope.
pub async fn ranked(state: &ApiState, s: Searched<'_>) -> Result<SearchResults, ApiError> {
    let limit = wire::limit(s.limit)?;
    let agent = s.agent.unwrap_or_else(|| state.cfg.server.agent.clone());
    if let Err(why) = memory::check_agent_id(&agent) {
        return Err(ApiError::bad_request(format!("agent: {why}")));
    }
    // The work roles the speaker holds now: their role memory is read too.
    let roles = match &s.speaker {
        Some(who) => state.db.role_memory().roles_of(s.org, who).await?,
        None => Vec::new(),
    };
    let scope = RetrievalScope {
        org: s.org.to_string(),
        agent,
        speaker: s.speaker,
        shared: false,
        roles,
    };
    let found = state.db.records().retrieve(&scope, s.text, limit).await?;
    Ok(SearchResults {
        items: found
            .into_iter()
            .map(|f| SearchHit {
                record: f.record.into(),
                hits: f.hits,
                score: f.score,
            })
            .collect(),
    })
}

/// An admin's ranked search.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AdminSearchQuery {
    /// The words to look for.
    q: String,
    /// Also read this person's individual records, as a turn of theirs would
    /// (needs `reason`; audited as `memory.view` and shown to them). Their
    /// person tier is never shown.
    #[serde(rename = "as")]
    #[param(rename = "as")]
    as_user: Option<String>,
    /// Why you read this person's records: required with `as`.
    reason: Option<String>,
    /// The agent whose notes are read (default: server.agent).
    #[param(pattern = "^[A-Za-z0-9._-]{1,64}$")]
    agent: Option<String>,
    /// Results at most (1–200, default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<i64>,
}

/// Ranked search with a turn's scope (as `steward memory search`): org policy
/// and the agent's notes, and with `as` that person's own records.
#[utoipa::path(get, operation_id = "memory_search", path = "/api/v1/memory/search", tag = "memory", params(AdminSearchQuery),
    responses((status = 200, body = SearchResults), (status = 404, body = ErrorBody)))]
pub async fn search(admin: Admin, Query(q): Query<AdminSearchQuery>) -> Reply<SearchResults> {
    let why = match q.as_user {
        None => Oversight::Unreasoned,
        Some(_) => Oversight::Reasoned,
    };
    let speaker = match q.as_user {
        None => None,
        Some(who) => {
            let Some(reason) = policy::oversight_reason(q.reason.as_deref()) else {
                return Err(reason_required("searching as a person"));
            };
            let user = admin.pairing.person(admin.org(), &who).await?;
            let surface = format!("GET /api/v1/memory/search?as: {}", q.q);
            let look = Look {
                org: admin.org(),
                actor: admin.id(),
                looked: Looked::Memory,
                person: &user.user_id,
                surface: &surface,
                reason,
            };
            audit_view(&admin.db, look, admin.now).await?;
            Some(user.user_id)
        }
    };
    let searched = Searched {
        org: admin.org(),
        agent: q.agent,
        speaker,
        text: &q.q,
        limit: q.limit,
    };
    let mut found = ranked(&admin, searched).await?;
    found
        .items
        .retain(|f| policy::oversight_shows(f.record.scope, why));
    Ok(Json(found))
}
