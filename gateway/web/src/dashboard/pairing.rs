//! The pairing page: pending requests (approve as user or admin, deny),
//! pairing an identity directly (without a code), paired users (change
//! role, revoke), and delegations (who may act for whom, granted by an
//! administrator for a person). The built-in `admin` is not changed here.

use super::auth::{Screen, Submitted};
use super::view::{self, PAIRING};
use super::{DashError, Page, BUILT_IN_ADMIN};
use maud::{html, Markup};
use memory::Role;
use pairing::{Act, Delegation, DelegationChange, PairingError, PairingRequest, User, UserStatus};
use serde::Deserialize;

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let p = state.pairing();
    let pending = p.pending(state.org(), state.now_ms()).await?;
    let users = p.users(state.org()).await?;
    let delegations = p.delegations(state.org(), None).await?;
    let content = html! {
        (template(&pending, &users, screen.who.csrf()))
        (delegations_card(&delegations, &users, screen.who.csrf()))
    };
    screen.show(PAIRING, content)
}

fn template(pending: &[PairingRequest], users: &[User], csrf: &str) -> Markup {
    let requests = view::Table {
        class: "pending",
        head: &["Code", "Identity", "Name (as the platform gave it)", "Channel", "Expires", ""],
        none: "No pending requests. Someone new sends /pair to the bot to get a code.",
    }
    .card(html! { h2 { "Pairing requests" } }, pending, |r| {
        html! {
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
    });
    let paired = view::Table {
        class: "users",
        head: &["User", "Name", "Role", "Status", ""],
        none: "Nobody is paired yet.",
    }
    .card(html! { h2 { "Paired users" } }, users, |u| {
        html! {
            tr id={ "user-" (u.user_id) } {
                td { code { (u.user_id) } }
                td { (u.name) }
                td { span class={ "badge role-" (u.role) } { (u.role) } }
                td { span class={ "badge " (u.status) } { (u.status) } }
                td.actions {
                    @if u.user_id == BUILT_IN_ADMIN {
                        span.muted { "built-in dashboard admin" }
                    } @else if u.status == UserStatus::Active {
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
    });
    let add = html! {
        section.card.add-user {
            h2 { "Pair someone directly" }
            p.muted { "Without a /pair code: give the identity their channel stores (discord:<id>, teams:<aad id>, cli:<name>)." }
            form.fields method="post" action="/dashboard/pairing/add" {
                (view::csrf_field(csrf))
                label { "Identity"
                    input type="text" name="identity" required placeholder="discord:123456789012345678";
                }
                label { "Name (optional)"
                    input type="text" name="name";
                }
                label { "Role"
                    select name="role" {
                        option value="user" selected { "user" }
                        option value="admin" { "admin" }
                    }
                }
                button.primary type="submit" { "Pair" }
            }
        }
    };
    html! {
        (requests)
        (add)
        (paired)
    }
}

/// Who may act for whom: each grant with **End**, and a form to grant one
/// for a person (as `steward delegate add`). A delegate acts as themselves,
/// through an API key made on the person's behalf.
fn delegations_card(all: &[Delegation], users: &[User], csrf: &str) -> Markup {
    let people: Vec<&User> = users
        .iter()
        .filter(|u| u.status == UserStatus::Active && u.user_id != BUILT_IN_ADMIN)
        .collect();
    let table = view::Table {
        class: "delegations",
        head: &["Person", "May be acted for by", "Granted", ""],
        none: "Nobody acts for anyone.",
    }
    .card(html! { h2 { "Delegations" } }, all, |d| {
        html! {
            tr {
                td { code { (d.principal) } }
                td { code { (d.delegate) } }
                td.when { (view::date(d.granted_at)) " by " (d.granted_by) }
                td.actions {
                    (view::action("/dashboard/delegates/remove", csrf, &[("principal", &d.principal), ("delegate", &d.delegate)], "End", "danger"))
                }
            }
        }
    });
    html! {
        (table)
        section.card.add-delegate {
            h2 { "Let someone act for a person" }
            p.muted { "The delegate then makes an API key on the person's behalf (steward api-key create --on-behalf-of); what they do reads and writes only their own memory, tagged on whose behalf." }
            form.fields method="post" action="/dashboard/delegates/add" {
                (view::csrf_field(csrf))
                label { "Person"
                    select name="principal" {
                        @for u in &people { option value=(u.user_id) { (u.name) " (" (u.user_id) ")" } }
                    }
                }
                label { "Delegate"
                    select name="delegate" {
                        @for u in &people { option value=(u.user_id) { (u.name) " (" (u.user_id) ")" } }
                    }
                }
                button.primary type="submit" { "Grant" }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct DelegateForm {
    principal: String,
    delegate: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct CodeForm {
    code: String,
    #[serde(default)]
    role: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct AddForm {
    identity: String,
    #[serde(default)]
    name: String,
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

/// Back to the pairing page with the outcome of the form `sent`: `said` of
/// what the store returned, or the refusal the admin can act on (anything
/// else fails the page).
fn outcome<F, T>(
    sent: Submitted<F>,
    result: Result<T, PairingError>,
    said: impl FnOnce(T, &F) -> String,
) -> Page {
    outcome_at(sent, result, said, PAIRING.path)
}

/// [`outcome`], its notice shown on the page at `to`.
pub(super) fn outcome_at<F, T>(
    sent: Submitted<F>,
    result: Result<T, PairingError>,
    said: impl FnOnce(T, &F) -> String,
    to: &str,
) -> Page {
    let (ok, text) = match result {
        Ok(v) => (true, said(v, &sent.form)),
        Err(
            e @ (PairingError::UnknownCode(_)
            | PairingError::CodeExpired(_)
            | PairingError::CodeNotPending { .. }
            | PairingError::UnknownUser(_)
            | PairingError::BadIdentity(_)
            | PairingError::AlreadyPaired { .. }
            | PairingError::SelfDelegation(_)
            | PairingError::NotDelegated { .. }),
        ) => (false, e.to_string()),
        Err(other) => return Err(DashError::from(other)),
    };
    sent.done(ok, text, to)
}

/// The role a form names, or the notice why it names none.
fn role_of(field: &str) -> Result<Role, String> {
    field.parse::<Role>().map_err(|e| e.to_string())
}

pub(super) async fn approve(sent: Submitted<CodeForm>) -> Page {
    let role = match role_of(&sent.form.role) {
        Ok(r) => r,
        Err(e) => return sent.done(false, e, PAIRING.path),
    };
    let (pairing, Act { org, actor, at }) = (sent.state.pairing(), sent.who.act(&sent.state));
    let result = pairing.approve(org, &sent.form.code, role, actor, at).await;
    outcome(sent, result, |u, _| {
        format!(
            "Approved: {} ({}) is paired as {}.",
            u.name, u.user_id, u.role
        )
    })
}

/// Pair an identity without a code (`Pairing::pair_directly`, audited).
pub(super) async fn add(sent: Submitted<AddForm>) -> Page {
    let role = match role_of(&sent.form.role) {
        Ok(r) => r,
        Err(e) => return sent.done(false, e, PAIRING.path),
    };
    let (pairing, Act { org, actor, at }) = (sent.state.pairing(), sent.who.act(&sent.state));
    let (identity, name) = (&sent.form.identity, Some(sent.form.name.as_str()));
    let result = pairing
        .pair_directly(org, identity, name, role, actor, at)
        .await;
    outcome(sent, result, |u, _| {
        format!("Paired: {} ({}) as {}.", u.name, u.user_id, u.role)
    })
}

pub(super) async fn deny(sent: Submitted<CodeForm>) -> Page {
    let (pairing, Act { org, actor, at }) = (sent.state.pairing(), sent.who.act(&sent.state));
    let result = pairing.deny(org, &sent.form.code, actor, at).await;
    outcome(sent, result, |r, _| {
        format!("Denied pairing request {} from {}.", r.code, r.stored_id)
    })
}

pub(super) async fn set_role(sent: Submitted<UserForm>) -> Page {
    let role = match (sent.form.user == BUILT_IN_ADMIN, role_of(&sent.form.role)) {
        (true, _) => return sent.done(false, KEEP_BUILT_IN, PAIRING.path),
        (false, Err(e)) => return sent.done(false, e, PAIRING.path),
        (false, Ok(r)) => r,
    };
    let (pairing, Act { org, actor, at }) = (sent.state.pairing(), sent.who.act(&sent.state));
    let result = pairing
        .set_role(org, &sent.form.user, role, actor, at)
        .await;
    outcome(sent, result, |(), form| {
        format!("{} is now {role}.", form.user)
    })
}

pub(super) async fn revoke(sent: Submitted<UserForm>) -> Page {
    if sent.form.user == BUILT_IN_ADMIN {
        return sent.done(false, KEEP_BUILT_IN, PAIRING.path);
    }
    let (pairing, Act { org, actor, at }) = (sent.state.pairing(), sent.who.act(&sent.state));
    let result = pairing.revoke(org, &sent.form.user, actor, at).await;
    outcome(sent, result, |keys, form| match keys.len() {
        0 => format!("Revoked: {} is no longer paired.", form.user),
        n => format!(
            "Revoked: {} is no longer paired; their {n} API key(s) were revoked with them.",
            form.user
        ),
    })
}

/// The grant a delegate form names, made or ended by the signed-in administrator now.
fn grant_of(sent: &Submitted<DelegateForm>) -> DelegationChange<'_> {
    DelegationChange {
        principal: &sent.form.principal,
        delegate: &sent.form.delegate,
        by: sent.who.act(&sent.state),
    }
}

/// Grant a delegate for a person (`Pairing::grant_delegate`, audited).
pub(super) async fn delegate_add(sent: Submitted<DelegateForm>) -> Page {
    let result = sent.state.pairing().grant_delegate(&grant_of(&sent)).await;
    outcome(sent, result, |new, f| {
        let already = if new { "" } else { " (already)" };
        format!("{} may act for {}{already}.", f.delegate, f.principal)
    })
}

/// End a delegation (`Pairing::revoke_delegate`: the keys made on its
/// behalf are revoked with it).
pub(super) async fn delegate_remove(sent: Submitted<DelegateForm>) -> Page {
    let result = sent.state.pairing().revoke_delegate(&grant_of(&sent)).await;
    outcome(sent, result, |(), f| {
        format!("{} no longer acts for {}.", f.delegate, f.principal)
    })
}
