//! External tools (MCP) for admins: listings as their servers listed them,
//! one listing as an approval shows it, and the decisions — approve for
//! roles bound to the hash shown, reject, suspend — each an
//! `authz::Action::CurateTools` and audited by the store.

use super::auth::Admin;
use super::wire::{self, page_query, Body, Page, Path, Query, Reply};
use crate::error::{ApiError, ErrorBody};
use axum::Json;
use memory::authz::Action;
use memory::external_tool::{ExternalTool, ExternalToolRefusal, ExternalToolStatus};
use memory::store::{Act, ToolGrant};
use serde::Deserialize;
use utoipa::ToSchema;

page_query! {
    /// Which listings, one page at a time.
    pub struct ToolsQuery by id {
        /// Only listings with this status.
        pub status: Option<ExternalToolStatus>,
    }
}

/// Tool listings of every agent, newest first.
#[utoipa::path(get, operation_id = "tools_list", path = "/api/v1/tools", tag = "tools", params(ToolsQuery),
    responses((status = 200, body = Page<ExternalTool>)))]
pub async fn list(admin: Admin, Query(q): Query<ToolsQuery>) -> Reply<Page<ExternalTool>> {
    admin.may(Action::CurateTools)?;
    let db = &admin.db;
    let (org, status) = (admin.org(), q.status);
    let read = |before: Option<i64>, n: i64| async move {
        let rows = db.external_tools().list(org, status).await?;
        let below = rows
            .into_iter()
            .filter(|r| r.id < before.unwrap_or(i64::MAX));
        Ok(below.take(usize::try_from(n).unwrap_or(0)).collect())
    };
    let page = wire::newest_by_id(&q, read, |r: &ExternalTool| r.id, |r| r);
    Ok(Json(page.await?))
}

/// One listing: its description as the server gave it (a client shows it
/// escaped), what the screen found in it, its schema and its hash.
#[utoipa::path(get, operation_id = "tools_show", path = "/api/v1/tools/{id}", tag = "tools",
    params(("id" = i64, Path, description = "Tool listing id")),
    responses((status = 200, body = ExternalTool)))]
pub async fn show(admin: Admin, Path(id): Path<i64>) -> Reply<ExternalTool> {
    admin.may(Action::CurateTools)?;
    Ok(Json(
        admin.db.external_tools().listing(admin.org(), id).await?,
    ))
}

/// An approval of a tool listing: the hash shown, who may be offered it, and
/// whether each call waits for the speaker's yes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolApproval {
    /// The listing's `hash` as shown (8 characters of it at least).
    #[schema(example = "3f6c1a9e0b2d")]
    pub hash: String,
    /// Roles it is offered to: `admin`, `user` or work roles.
    pub roles: Vec<String>,
    /// Each call asks the speaker "Run … ? yes/no" first.
    #[serde(default)]
    pub confirm: bool,
    /// Automated runs may call it too (not with `confirm`: a run has no one to answer).
    #[serde(default)]
    pub runs: bool,
    /// Calls of it a minute, all speakers together (1 to 100000); default `[mcp] tool_calls_per_minute`.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 100000)]
    pub calls_per_minute: Option<u32>,
    /// Each call carries the organisation and the speaker's stored id to the
    /// server (MCP `_meta`); off: neither leaves steward.
    #[serde(default)]
    pub identity: bool,
}

/// Why a listing is suspended.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSuspension {
    /// For the audit log.
    #[serde(default)]
    pub reason: Option<String>,
}

fn answer(r: Result<ExternalTool, ExternalToolRefusal>) -> Reply<ExternalTool> {
    match r {
        Ok(t) => Ok(Json(t)),
        Err(
            why @ (ExternalToolRefusal::NoRoles
            | ExternalToolRefusal::BadRole(_)
            | ExternalToolRefusal::ConfirmedForRuns
            | ExternalToolRefusal::BadRate),
        ) => Err(ApiError::bad_request(why.to_string())),
        Err(why) => Err(ApiError::conflict(why.to_string())),
    }
}

fn act(admin: &Admin) -> Act<'_> {
    Act {
        org: admin.org(),
        actor: &admin.user.user_id,
        at: admin.now,
    }
}

/// Approve proposed listing `id` for roles, if it is still the listing whose
/// hash was shown. Audited.
#[utoipa::path(post, operation_id = "tools_approve", path = "/api/v1/tools/{id}/approve", tag = "tools",
    params(("id" = i64, Path, description = "Tool listing id")), request_body = ToolApproval,
    responses((status = 200, body = ExternalTool, description = "The listing, approved"),
        (status = 409, body = ErrorBody, description = "Not proposed, or the hash is not the listing's")))]
pub async fn approve(
    admin: Admin,
    Path(id): Path<i64>,
    Body(body): Body<ToolApproval>,
) -> Reply<ExternalTool> {
    admin.may(Action::CurateTools)?;
    let grant = ToolGrant {
        id,
        hash: &body.hash,
        roles: &body.roles,
        confirm: body.confirm,
        runs: body.runs,
        calls_per_minute: body.calls_per_minute,
        identity: body.identity,
    };
    answer(
        admin
            .db
            .external_tools()
            .approve(act(&admin), &grant)
            .await?,
    )
}

/// Decline proposed listing `id`. Audited.
#[utoipa::path(post, operation_id = "tools_reject", path = "/api/v1/tools/{id}/reject", tag = "tools",
    params(("id" = i64, Path, description = "Tool listing id")),
    responses((status = 200, body = ExternalTool, description = "The listing, rejected"),
        (status = 409, body = ErrorBody, description = "Not waiting for approval")))]
pub async fn reject(admin: Admin, Path(id): Path<i64>) -> Reply<ExternalTool> {
    admin.may(Action::CurateTools)?;
    answer(admin.db.external_tools().reject(act(&admin), id).await?)
}

/// Take listing `id` out of use. Audited.
#[utoipa::path(post, operation_id = "tools_suspend", path = "/api/v1/tools/{id}/suspend", tag = "tools",
    params(("id" = i64, Path, description = "Tool listing id")), request_body = ToolSuspension,
    responses((status = 200, body = ExternalTool, description = "The listing, suspended"),
        (status = 409, body = ErrorBody, description = "Neither approved nor proposed")))]
pub async fn suspend(
    admin: Admin,
    Path(id): Path<i64>,
    Body(body): Body<ToolSuspension>,
) -> Reply<ExternalTool> {
    admin.may(Action::CurateTools)?;
    let why = body
        .reason
        .as_deref()
        .unwrap_or("suspended by an administrator");
    answer(
        admin
            .db
            .external_tools()
            .suspend(act(&admin), id, why)
            .await?,
    )
}
