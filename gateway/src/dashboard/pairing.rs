//! The pairing page: pending requests (approve as user or admin, deny) and
//! paired users (change role, revoke). The built-in `admin` is not changed here.

use super::auth::{Admin, CsrfForm};
use super::view::{self, PAIRING};
use super::{now_ms, DashError, DashboardState, Page, BUILT_IN_ADMIN};
use axum::extract::State;
use axum_extra::extract::CookieJar;
use maud::{html, Markup};
use memory::Role;
use pairing::{PairingError, PairingRequest, User};
use serde::Deserialize;

pub(super) async fn page(
    State(state): State<DashboardState>,
    admin: Admin,
    jar: CookieJar,
) -> Page {
    let p = state.pairing();
    let pending = p.pending(state.org(), now_ms()).await?;
    let users = p.users(state.org()).await?;
    let content = template(&pending, &users, admin.csrf());
    Ok(view::render(
        jar,
        state.org(),
        admin.csrf(),
        PAIRING,
        content,
    ))
}

fn template(pending: &[PairingRequest], users: &[User], csrf: &str) -> Markup {
    html! {
        section.card {
            h2 { "Pairing requests" }
            @if pending.is_empty() {
                (view::empty("No pending requests. Someone new sends /pair to the bot to get a code."))
            } @else {
                table.pending {
                    thead { tr { th { "Code" } th { "Identity" } th { "Name (as the platform gave it)" } th { "Channel" } th { "Expires" } th { "" } } }
                    tbody {
                        @for r in pending {
                            tr id={ "request-" (r.code) } {
                                td { code.code { (r.code) } }
                                td { code { (r.stored_id) } }
                                td { (r.name) }
                                td { (r.channel) }
                                td.when { (view::date(r.expires_at)) }
                                td.actions {
                                    (view::action("/dashboard/pairing/approve", csrf, &[("code", &r.code), ("role", "user")], "Approve as user", "primary"))
                                    (view::action("/dashboard/pairing/approve", csrf, &[("code", &r.code), ("role", "admin")], "Approve as admin", "secondary"))
                                    (view::action("/dashboard/pairing/deny", csrf, &[("code", &r.code)], "Deny", "danger"))
                                }
                            }
                        }
                    }
                }
            }
        }
        section.card {
            h2 { "Paired users" }
            @if users.is_empty() {
                (view::empty("Nobody is paired yet."))
            } @else {
                table.users {
                    thead { tr { th { "User" } th { "Name" } th { "Role" } th { "Status" } th { "" } } }
                    tbody {
                        @for u in users {
                            tr id={ "user-" (u.user_id) } {
                                td { code { (u.user_id) } }
                                td { (u.name) }
                                td { span class={ "badge role-" (u.role) } { (u.role) } }
                                td { span class={ "badge " (u.status) } { (u.status) } }
                                td.actions {
                                    @if u.user_id == BUILT_IN_ADMIN {
                                        span.muted { "built-in dashboard admin" }
                                    } @else if u.status == "active" {
                                        form.inline method="post" action="/dashboard/users/role" {
                                            (view::csrf_field(csrf))
                                            input type="hidden" name="user" value=(u.user_id);
                                            select name="role" aria-label="Role" {
                                                option value="user" selected[u.role == Role::User] { "user" }
                                                option value="admin" selected[u.role == Role::Admin] { "admin" }
                                            }
                                            button.secondary type="submit" { "Set role" }
                                        }
                                        (view::action("/dashboard/users/revoke", csrf, &[("user", &u.user_id)], "Revoke", "danger"))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct CodeForm {
    code: String,
    #[serde(default)]
    role: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct UserForm {
    user: String,
    #[serde(default)]
    role: String,
}

const KEEP_BUILT_IN: &str =
    "The built-in dashboard admin keeps its admin role; it is the identity this dashboard acts as.";

/// Back to the pairing page with the outcome: `said` of what the store
/// returned, or the refusal the admin can act on (anything else fails the page).
fn outcome<T>(
    jar: CookieJar,
    result: Result<T, PairingError>,
    said: impl FnOnce(T) -> String,
) -> Page {
    let (ok, text) = match result {
        Ok(v) => (true, said(v)),
        Err(
            e @ (PairingError::UnknownCode(_)
            | PairingError::CodeExpired(_)
            | PairingError::CodeNotPending { .. }
            | PairingError::UnknownUser(_)),
        ) => (false, e.to_string()),
        Err(other) => return Err(DashError::from(other)),
    };
    Ok(view::done(jar, ok, text, PAIRING.path))
}

/// The role a form names, or the notice why it names none.
fn role_of(field: &str) -> Result<Role, String> {
    field.parse::<Role>().map_err(|e| e.to_string())
}

pub(super) async fn approve(
    State(state): State<DashboardState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<CodeForm>,
) -> Page {
    let role = match role_of(&form.role) {
        Ok(r) => r,
        Err(e) => return Ok(view::done(jar, false, e, PAIRING.path)),
    };
    let result = state
        .pairing()
        .approve(state.org(), &form.code, role, BUILT_IN_ADMIN, now_ms())
        .await;
    outcome(jar, result, |u| {
        format!(
            "Approved: {} ({}) is paired as {}.",
            u.name, u.user_id, u.role
        )
    })
}

pub(super) async fn deny(
    State(state): State<DashboardState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<CodeForm>,
) -> Page {
    let result = state
        .pairing()
        .deny(state.org(), &form.code, BUILT_IN_ADMIN, now_ms())
        .await;
    outcome(jar, result, |r| {
        format!("Denied pairing request {} from {}.", r.code, r.stored_id)
    })
}

pub(super) async fn set_role(
    State(state): State<DashboardState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<UserForm>,
) -> Page {
    let role = match (form.user == BUILT_IN_ADMIN, role_of(&form.role)) {
        (true, _) => return Ok(view::done(jar, false, KEEP_BUILT_IN, PAIRING.path)),
        (false, Err(e)) => return Ok(view::done(jar, false, e, PAIRING.path)),
        (false, Ok(r)) => r,
    };
    let result = state
        .pairing()
        .set_role(state.org(), &form.user, role, BUILT_IN_ADMIN, now_ms())
        .await;
    outcome(jar, result, |()| format!("{} is now {role}.", form.user))
}

pub(super) async fn revoke(
    State(state): State<DashboardState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<UserForm>,
) -> Page {
    if form.user == BUILT_IN_ADMIN {
        return Ok(view::done(jar, false, KEEP_BUILT_IN, PAIRING.path));
    }
    let result = state
        .pairing()
        .revoke(state.org(), &form.user, BUILT_IN_ADMIN, now_ms())
        .await;
    outcome(jar, result, |()| {
        format!("Revoked: {} is no longer paired.", form.user)
    })
}
