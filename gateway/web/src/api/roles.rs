//! Work roles and role memory over the API: an administrator sets a
//! person's roles and grants `role_memory.manage` per role; holders,
//! managers and administrators read a role's proposals and entries, propose
//! (a delegated key's proposals carry `on_behalf_of`), and curate them in
//! two parties (docs/memory.md, "Roles and role memory"). Every refusal has a
//! status and a JSON `code` (403 `not_a_manager` / `not_a_holder`, 409
//! `same_person` / `stale_hash` / `wrong_state`, 410 `expired`, 422 for text
//! the scrubber refuses).

use super::auth::{Admin, Caller};
use super::wire::{at, Body, Path, Reply};
use super::ApiState;
use crate::error::{ApiError, ErrorBody};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use memory::authz::Action;
use memory::role_memory::{
    CurationStep, NewRoleProposal, Permission, ProposalStatus, RoleChange, RoleEntry, RoleGrant,
    RoleKind,
};
use memory::Role;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A person's work roles and the permissions they hold per role.
#[derive(Debug, Serialize, ToSchema)]
pub struct PersonRoles {
    pub user_id: String,
    pub roles: Vec<String>,
    pub grants: Vec<RoleGrant>,
}

/// A role to give a person.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRole {
    /// Lower-case letters, digits and hyphens, at most 32 characters.
    #[schema(pattern = "^[a-z0-9-]{1,32}$")]
    pub role: String,
}

/// A permission to grant for one role.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPermission {
    pub permission: Permission,
    /// Lower-case letters, digits and hyphens, at most 32 characters.
    #[schema(pattern = "^[a-z0-9-]{1,32}$")]
    pub role: String,
}

/// A proposal to a role's memory, or an entry of it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RoleEntryOut {
    pub id: i64,
    pub role: String,
    /// `org/{org}/role/{role}`.
    pub address: String,
    pub kind: RoleKind,
    pub content: String,
    /// What an accept or confirm is bound to: pass it back as `hash`.
    pub content_hash: String,
    pub status: ProposalStatus,
    /// Read by the role's holders now.
    pub active: bool,
    pub proposed_by: String,
    pub on_behalf_of: Option<String>,
    pub source_record: Option<i64>,
    pub proposed_at: DateTime<Utc>,
    pub accepted_by: Option<String>,
    pub accepted_at: Option<DateTime<Utc>>,
    pub confirmed_by: Option<String>,
    pub confirmed_at: Option<DateTime<Utc>>,
    pub record_id: Option<i64>,
}

impl From<RoleEntry> for RoleEntryOut {
    fn from(e: RoleEntry) -> Self {
        RoleEntryOut {
            active: e.is_active(),
            address: memory::role_memory::role_address(&e.org, &e.role),
            id: e.id,
            role: e.role,
            kind: e.kind,
            content: e.content,
            content_hash: e.content_hash,
            status: e.status,
            proposed_by: e.proposed_by,
            on_behalf_of: e.on_behalf_of,
            source_record: e.source_record,
            proposed_at: at(e.proposed_at),
            accepted_by: e.accepted_by,
            accepted_at: e.accepted_at.map(at),
            confirmed_by: e.confirmed_by,
            confirmed_at: e.confirmed_at.map(at),
            record_id: e.record_id,
        }
    }
}

/// A role's proposals and entries, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct Entries {
    pub items: Vec<RoleEntryOut>,
}

/// A proposal: new text of a kind, or one of the caller's own records shared.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewEntry {
    /// `rubric`, `term` or `lesson` (ignored when sharing a record).
    pub kind: Option<RoleKind>,
    /// The text: no names, ids or personal data.
    pub content: Option<String>,
    /// One of the caller's own active records to share instead.
    pub record: Option<i64>,
}

/// A decision, bound to the text the decider saw.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CurationDecision {
    /// The `content_hash` the decision is about; 409 `stale_hash` when the text changed.
    pub hash: String,
}

/// New text for a pending proposal: both decisions are reset.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    pub content: String,
}

/// The revision a retirement made (undo it with `POST /api/v1/revisions/{id}/undo`).
#[derive(Debug, Serialize, ToSchema)]
pub struct Retired {
    pub revision: i64,
}

async fn person_roles(state: &ApiState, org: &str, user: &str) -> Result<PersonRoles, ApiError> {
    let r = state.db.role_memory();
    Ok(PersonRoles {
        user_id: user.to_string(),
        roles: r.roles_of(org, user).await?,
        grants: r.grants(org, Some(user)).await?,
    })
}

/// A person's work roles and grants (admin).
#[utoipa::path(get, operation_id = "user_roles", path = "/api/v1/users/{user}/roles", tag = "roles",
    params(("user" = String, Path, description = "The paired user's id")),
    responses((status = 200, body = PersonRoles)))]
pub async fn roles(admin: Admin, Path(user): Path<String>) -> Reply<PersonRoles> {
    Ok(Json(person_roles(&admin, admin.org(), &user).await?))
}

/// Give a person a work role (admin). Audited (`role.add`).
#[utoipa::path(post, operation_id = "user_roles_add", path = "/api/v1/users/{user}/roles", tag = "roles",
    params(("user" = String, Path, description = "The paired user's id")),
    request_body = NewRole,
    responses((status = 200, body = PersonRoles), (status = 422, body = ErrorBody, description = "`invalid_role`")))]
pub async fn add_role(
    admin: Admin,
    Path(user): Path<String>,
    Body(body): Body<NewRole>,
) -> Reply<PersonRoles> {
    change(&admin, &user, RoleChange::Add(&body.role)).await
}

/// Take a work role from a person (admin): their next turn no longer reads
/// its memory. Audited (`role.remove`).
#[utoipa::path(delete, operation_id = "user_roles_remove", path = "/api/v1/users/{user}/roles/{role}", tag = "roles",
    params(("user" = String, Path, description = "The paired user's id"), ("role" = String, Path, description = "The role: lower-case letters, digits and hyphens", pattern = "^[a-z0-9-]{1,32}$")),
    responses((status = 200, body = PersonRoles), (status = 422, body = ErrorBody, description = "`invalid_role`")))]
pub async fn remove_role(
    admin: Admin,
    Path((user, role)): Path<(String, String)>,
) -> Reply<PersonRoles> {
    change(&admin, &user, RoleChange::Remove(&role)).await
}

/// Grant a permission for one role (admin). Audited (`role.grant`).
#[utoipa::path(post, operation_id = "user_grants_add", path = "/api/v1/users/{user}/grants", tag = "roles",
    params(("user" = String, Path, description = "The paired user's id")),
    request_body = NewPermission,
    responses((status = 200, body = PersonRoles), (status = 422, body = ErrorBody, description = "`invalid_role`")))]
pub async fn grant(
    admin: Admin,
    Path(user): Path<String>,
    Body(body): Body<NewPermission>,
) -> Reply<PersonRoles> {
    let granted = RoleChange::Grant(body.permission, &body.role);
    change(&admin, &user, granted).await
}

/// Withdraw a permission granted for one role (admin). Audited (`role.ungrant`).
#[utoipa::path(delete, operation_id = "user_grants_remove", path = "/api/v1/users/{user}/grants/{role}", tag = "roles",
    params(("user" = String, Path, description = "The paired user's id"), ("role" = String, Path, description = "The role: lower-case letters, digits and hyphens", pattern = "^[a-z0-9-]{1,32}$")),
    responses((status = 200, body = PersonRoles), (status = 422, body = ErrorBody, description = "`invalid_role`")))]
pub async fn ungrant(
    admin: Admin,
    Path((user, role)): Path<(String, String)>,
) -> Reply<PersonRoles> {
    let withdrawn = RoleChange::Ungrant(Permission::RoleMemoryManage, &role);
    change(&admin, &user, withdrawn).await
}

/// Make `change` to `user`'s roles as `admin`, then show their roles; a
/// removal of what they did not hold is a 404 (an addition of what they
/// held already is not an error).
async fn change(admin: &Admin, user: &str, change: RoleChange<'_>) -> Reply<PersonRoles> {
    let r = admin.db.role_memory();
    let changed = r
        .change(admin.org(), user, change, admin.id(), admin.now)
        .await?;
    let role = change.role();
    match change {
        RoleChange::Remove(_) if !changed => {
            Err(ApiError::not_found(format!("{user} does not hold {role}")))
        }
        RoleChange::Ungrant(..) if !changed => Err(ApiError::not_found(format!(
            "{user} holds no role_memory.manage for {role}"
        ))),
        _ => Ok(Json(person_roles(admin, admin.org(), user).await?)),
    }
}

/// Whether the caller may see a role's memory: a holder, a manager, an administrator.
async fn may_see(caller: &Caller, role: &str) -> Result<(), ApiError> {
    let r = caller.db.role_memory();
    if caller.user.role == Role::Admin
        || r.holds(caller.org(), caller.id(), role).await?
        || r.manages(caller.org(), caller.id(), role).await?
    {
        return Ok(());
    }
    Err(memory::role_memory::RoleError::NotHolder(caller.id().to_string(), role.to_string()).into())
}

/// A role's proposals and entries: for its holders, its managers and administrators.
#[utoipa::path(get, operation_id = "role_memory_list", path = "/api/v1/roles/{role}/memory", tag = "role_memory",
    params(("role" = String, Path, description = "The role: lower-case letters, digits and hyphens", pattern = "^[a-z0-9-]{1,32}$")),
    responses((status = 200, body = Entries), (status = 403, body = ErrorBody, description = "`not_a_holder`"), (status = 422, body = ErrorBody, description = "`invalid_role`")))]
pub async fn list(caller: Caller, Path(role): Path<String>) -> Reply<Entries> {
    memory::role_memory::valid_role(&role)?;
    may_see(&caller, &role).await?;
    let items = caller
        .db
        .role_memory()
        .list(caller.org(), &role, caller.now)
        .await?;
    Ok(Json(Entries {
        items: items.into_iter().map(RoleEntryOut::from).collect(),
    }))
}

/// Propose an entry: new text (by a holder, a manager or an administrator)
/// or one of the caller's own records (`record`, by a holder). Never active
/// until accepted and confirmed; a delegated key's proposal carries
/// `on_behalf_of`. Audited (`role_memory.propose`).
#[utoipa::path(post, operation_id = "role_memory_propose", path = "/api/v1/roles/{role}/memory", tag = "role_memory",
    params(("role" = String, Path, description = "The role: lower-case letters, digits and hyphens", pattern = "^[a-z0-9-]{1,32}$")),
    request_body = NewEntry,
    responses((status = 201, body = RoleEntryOut),
        (status = 403, body = ErrorBody, description = "`may_not_propose`, `not_a_holder`, `not_your_record`"),
        (status = 422, body = ErrorBody, description = "`invalid_role`, or the scrubber refused the text (`holds_email`, …)")))]
pub async fn propose(
    caller: Caller,
    Path(role): Path<String>,
    Body(body): Body<NewEntry>,
) -> Result<(StatusCode, Json<RoleEntryOut>), ApiError> {
    let r = caller.db.role_memory();
    let now = caller.now;
    let behalf = caller.on_behalf_of.as_deref();
    let e = match (body.record, body.kind, body.content) {
        (Some(record), _, None) => {
            r.share(caller.org(), record, &role, caller.id(), behalf, now)
                .await?
        }
        (None, Some(kind), Some(content)) => {
            r.propose(&NewRoleProposal {
                org: caller.org(),
                role: &role,
                kind,
                content: &content,
                proposed_by: caller.id(),
                on_behalf_of: behalf,
                source_record: None,
                now,
            })
            .await?
        }
        _ => {
            return Err(ApiError::bad_request(
                "give `kind` and `content`, or `record` alone",
            ))
        }
    };
    Ok((StatusCode::CREATED, Json(e.into())))
}

/// Accept a proposal: the caller holds `role_memory.manage` for its role.
/// Audited (`role_memory.accept`).
#[utoipa::path(post, operation_id = "role_memory_accept", path = "/api/v1/role-memory/{id}/accept", tag = "role_memory",
    params(("id" = i64, Path, description = "The proposal's id")),
    request_body = CurationDecision,
    responses((status = 200, body = RoleEntryOut),
        (status = 403, body = ErrorBody, description = "`not_a_manager`"),
        (status = 409, body = ErrorBody, description = "`stale_hash`, `wrong_state`"),
        (status = 410, body = ErrorBody, description = "`expired`")))]
pub async fn accept(
    caller: Caller,
    Path(id): Path<i64>,
    Body(body): Body<CurationDecision>,
) -> Reply<RoleEntryOut> {
    decide(&caller, id, &body, CurationStep::Accept).await
}

/// Confirm an accepted proposal: the caller holds its role now and is not
/// the one who accepted it. It becomes active. Audited (`role_memory.confirm`,
/// naming both people).
#[utoipa::path(post, operation_id = "role_memory_confirm", path = "/api/v1/role-memory/{id}/confirm", tag = "role_memory",
    params(("id" = i64, Path, description = "The proposal's id")),
    request_body = CurationDecision,
    responses((status = 200, body = RoleEntryOut),
        (status = 403, body = ErrorBody, description = "`not_a_holder`"),
        (status = 409, body = ErrorBody, description = "`same_person`, `stale_hash`, `wrong_state`"),
        (status = 410, body = ErrorBody, description = "`expired`")))]
pub async fn confirm(
    caller: Caller,
    Path(id): Path<i64>,
    Body(body): Body<CurationDecision>,
) -> Reply<RoleEntryOut> {
    decide(&caller, id, &body, CurationStep::Confirm).await
}

/// Take `step` on proposal `id` as the caller, bound to the hash they saw.
async fn decide(
    caller: &Caller,
    id: i64,
    body: &CurationDecision,
    step: CurationStep,
) -> Reply<RoleEntryOut> {
    caller.may(Action::CurateRoleMemory)?;
    let (org, now) = (caller.org(), caller.now);
    let r = caller.db.role_memory();
    let e = r.decide(step, org, id, caller.id(), Some(&body.hash), now);
    Ok(Json(e.await?.into()))
}

/// Change a pending proposal's text (its proposer, a manager, an
/// administrator): both decisions are reset. Audited (`role_memory.edit`).
#[utoipa::path(patch, operation_id = "role_memory_edit", path = "/api/v1/role-memory/{id}", tag = "role_memory",
    params(("id" = i64, Path, description = "The proposal's id")),
    request_body = Edit,
    responses((status = 200, body = RoleEntryOut),
        (status = 403, body = ErrorBody, description = "`not_a_manager`"),
        (status = 409, body = ErrorBody, description = "`wrong_state`"),
        (status = 410, body = ErrorBody, description = "`expired`"),
        (status = 422, body = ErrorBody, description = "The scrubber refused the text")))]
pub async fn edit(
    caller: Caller,
    Path(id): Path<i64>,
    Body(body): Body<Edit>,
) -> Reply<RoleEntryOut> {
    caller.may(Action::CurateRoleMemory)?;
    let e = caller
        .db
        .role_memory()
        .edit(caller.org(), id, caller.id(), &body.content, caller.now)
        .await?;
    Ok(Json(e.into()))
}

/// Retire an active entry (a manager of its role, an administrator): a
/// revision, undone with `POST /api/v1/revisions/{id}/undo`. Audited
/// (`role_memory.retire`).
#[utoipa::path(post, operation_id = "role_memory_retire", path = "/api/v1/role-memory/{id}/retire", tag = "role_memory",
    params(("id" = i64, Path, description = "The proposal's id")),
    responses((status = 200, body = Retired),
        (status = 403, body = ErrorBody, description = "`not_a_manager`"),
        (status = 409, body = ErrorBody, description = "`wrong_state`: not an active entry")))]
pub async fn retire(caller: Caller, Path(id): Path<i64>) -> Reply<Retired> {
    caller.may(Action::CurateRoleMemory)?;
    let r = caller.db.role_memory();
    let now = caller.now;
    let e = r.get(caller.org(), id, now).await?;
    if !r.curates(caller.org(), caller.id(), &e.role).await? {
        return Err(
            memory::role_memory::RoleError::NotManager(caller.id().to_string(), e.role).into(),
        );
    }
    let revision = r.retire(caller.org(), id, caller.id(), now).await?;
    Ok(Json(Retired { revision }))
}
