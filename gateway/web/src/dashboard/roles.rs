//! The Roles page: each paired person's work roles and `role_memory.manage`
//! grants (add, remove, grant, ungrant — each audited), and every role's
//! memory: its proposals, who proposed (on whose behalf), accepted and
//! confirmed them, and its active entries, which the admin may retire (a
//! revision the Revisions page undoes). Accepting and confirming are the
//! decisions of a role's manager and of another holder: the admin takes
//! them here only as a person who holds that right, like anyone else.

use super::auth::{Screen, Submitted};
use super::view::{self, ROLES};
use super::Page;
use maud::{html, Markup};
use memory::role_memory::{
    CurationStep, Permission, ProposalStatus, RoleChange, RoleEntry, RoleError, RoleGrant, RoleKind,
};
use memory::Status;
use pairing::{User, UserStatus};
use serde::Deserialize;
use strum::VariantArray;

/// A paired person, their roles and grants.
struct Person {
    user: User,
    roles: Vec<String>,
    grants: Vec<RoleGrant>,
}

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let r = state.db().role_memory();
    let mut people = Vec::new();
    for user in state.pairing().users(state.org()).await? {
        if user.status != UserStatus::Active {
            continue;
        }
        people.push(Person {
            roles: r.roles_of(state.org(), &user.user_id).await?,
            grants: r.grants(state.org(), Some(&user.user_id)).await?,
            user,
        });
    }
    let mut memory = Vec::new();
    for role in r.roles_with_memory(state.org()).await? {
        let entries = match r.list(state.org(), &role, state.now_ms()).await {
            Ok(e) => e,
            Err(RoleError::Store(e)) => return Err(e.into()),
            Err(_) => continue,
        };
        memory.push((role, entries));
    }
    let content = template(&people, &memory, screen.who.csrf());
    screen.show(ROLES, content)
}

fn state_of(e: &RoleEntry) -> &'static str {
    match (e.status, e.record_status) {
        (ProposalStatus::Confirmed, Some(Status::Active)) => "active",
        (ProposalStatus::Confirmed, _) => "retired",
        (s, _) => s.as_str(),
    }
}

fn template(people: &[Person], memory: &[(String, Vec<RoleEntry>)], csrf: &str) -> Markup {
    html! {
        (people_roles(people, csrf))
        (draft_form(csrf))
        (role_memory(memory, csrf))
    }
}

/// Each paired person's roles and the roles they manage, with their buttons.
fn people_roles(people: &[Person], csrf: &str) -> Markup {
    let intro = html! {
        p.muted { "Work roles say what someone does (analyst, sre, …), not what they may administer. Everyone holding a role reads its memory in every conversation, with any agent; an entry becomes active only when a manager of the role (role_memory.manage) accepts it and a different person holding the role confirms the same text. Proposals wait at most 14 days." }
    };
    view::Table {
        class: "people-roles",
        head: &["Person", "Roles", "Manages", "Change"],
        none: "Nobody is paired yet.",
    }
    .card(intro, people, |p| {
        let manages: Vec<&str> = p.grants.iter().map(|g| g.role.as_str()).collect();
        html! {
            tr id={ "roles-" (p.user.user_id) } {
                td { (p.user.name) br; code { (p.user.user_id) } }
                td {
                    @if p.roles.is_empty() { span.muted { "none" } }
                    @for role in &p.roles {
                        code { (role) } " "
                        (view::action("/dashboard/roles/remove", csrf, &[("user", &p.user.user_id), ("role", role)], "Remove", "danger"))
                    }
                }
                td {
                    @if manages.is_empty() { span.muted { "none" } }
                    @for role in &manages {
                        code { (role) } " "
                        (view::action("/dashboard/roles/ungrant", csrf, &[("user", &p.user.user_id), ("role", role)], "Ungrant", "danger"))
                    }
                }
                td.actions {
                    form.inline method="post" action="/dashboard/roles/add" {
                        (view::csrf_field(csrf))
                        input type="hidden" name="user" value=(p.user.user_id);
                        input type="text" name="role" required aria-label="Role" placeholder="analyst";
                        button.secondary type="submit" { "Add role" }
                    }
                    form.inline method="post" action="/dashboard/roles/grant" {
                        (view::csrf_field(csrf))
                        input type="hidden" name="user" value=(p.user.user_id);
                        input type="text" name="role" required aria-label="Role to manage" placeholder="analyst";
                        button.secondary type="submit" { "Grant role_memory.manage" }
                    }
                }
            }
        }
    })
}

/// Each role's entries, with the steps of curation they wait for.
fn role_memory(memory: &[(String, Vec<RoleEntry>)], csrf: &str) -> Markup {
    html! {
        @for (role, entries) in memory {
            (view::Table {
                class: "role-memory",
                head: &["#", "State", "Kind", "Text", "Proposed", "Decisions", ""],
                none: "No proposals.",
            }
            .card(html! { h2 { "Role " code { (role) } } }, entries, |e| {
                let id = e.id.to_string();
                html! {
                    tr id={ "proposal-" (e.id) } {
                        td.num { (e.id) }
                        td { (state_of(e)) }
                        td { (e.kind.as_str()) }
                        td.content { (e.content) }
                        td {
                            (e.proposed_by)
                            @if let Some(p) = &e.on_behalf_of { br; span.muted { "on behalf of " (p) } }
                            br; span.muted { (view::date(e.proposed_at)) }
                        }
                        td {
                            @if let Some(a) = &e.accepted_by { "accepted by " (a) }
                            @if let Some(c) = &e.confirmed_by { br; "confirmed by " (c) }
                        }
                        td.actions {
                            @if e.is_active() {
                                (view::action("/dashboard/roles/retire", csrf, &[("id", &id)], "Retire", "danger"))
                            }
                            @if e.status == ProposalStatus::Proposed {
                                (view::action("/dashboard/roles/accept", csrf, &[("id", &id), ("hash", &e.content_hash)], "Accept as admin", "primary"))
                            }
                            @if e.status == ProposalStatus::Accepted {
                                (view::action("/dashboard/roles/confirm", csrf, &[("id", &id), ("hash", &e.content_hash)], "Confirm as admin", "primary"))
                            }
                        }
                    }
                }
            }))
        }
    }
}

/// The built-in admin's form to propose an entry.
fn draft_form(csrf: &str) -> Markup {
    html! {
        section.card.draft-role-entry {
            h2 { "Draft a proposal" }
            p.muted { "As the built-in admin: a manager of the role accepts it and a holder confirms it before anyone reads it. No names, ids or personal data." }
            form.fields method="post" action="/dashboard/roles/propose" {
                (view::csrf_field(csrf))
                label { "Role" input type="text" name="role" required placeholder="analyst"; }
                label { "Kind"
                    select name="kind" {
                        @for kind in RoleKind::VARIANTS {
                            option value=(kind) selected[*kind == RoleKind::Lesson] { (kind) }
                        }
                    }
                }
                label { "Text" input type="text" name="content" required maxlength="500"; }
                button.primary type="submit" { "Propose" }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct DraftForm {
    role: String,
    kind: String,
    content: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct DecisionForm {
    id: i64,
    hash: String,
}

/// The notice of a proposal's step: done, or refused (and why).
fn stepped(sent: Submitted<impl Sized>, result: Result<RoleEntry, RoleError>, what: &str) -> Page {
    match result {
        Ok(e) => sent.done(
            true,
            format!("{what} #{} for role {}.", e.id, e.role),
            ROLES.path,
        ),
        Err(RoleError::Store(e)) => Err(e.into()),
        Err(e) => sent.done(false, format!("Refused: {e}."), ROLES.path),
    }
}

pub(super) async fn propose(sent: Submitted<DraftForm>) -> Page {
    let state = &sent.state;
    let f = &sent.form;
    let Ok(kind) = f.kind.parse::<RoleKind>() else {
        return sent.done(
            false,
            "Refused: the kind is rubric, term or lesson.",
            ROLES.path,
        );
    };
    let role = f.role.trim().to_string();
    let result = state
        .db()
        .role_memory()
        .propose(&memory::role_memory::NewRoleProposal {
            org: state.org(),
            role: &role,
            kind,
            content: &f.content,
            proposed_by: sent.who.user_id(),
            on_behalf_of: None,
            source_record: None,
            now: state.now_ms(),
        })
        .await;
    stepped(sent, result, "Proposed")
}

pub(super) async fn accept(sent: Submitted<DecisionForm>) -> Page {
    decide(sent, CurationStep::Accept, "Accepted").await
}

pub(super) async fn confirm(sent: Submitted<DecisionForm>) -> Page {
    decide(sent, CurationStep::Confirm, "Confirmed").await
}

/// Take `step` as the signed-in person, bound to the hash the page showed.
async fn decide(sent: Submitted<DecisionForm>, step: CurationStep, done: &str) -> Page {
    let (state, f) = (&sent.state, &sent.form);
    let (org, now) = (state.org(), state.now_ms());
    let r = state.db().role_memory();
    let result = r.decide(step, org, f.id, sent.who.user_id(), Some(&f.hash), now);
    let result = result.await;
    stepped(sent, result, done)
}

#[derive(Debug, Deserialize)]
pub(super) struct RoleForm {
    user: String,
    role: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct IdForm {
    id: i64,
}

/// The notice of a role change: done, or refused (and why).
fn notice<T>(sent: Submitted<T>, result: Result<bool, RoleError>, done: String) -> Page {
    match result {
        Ok(_) => sent.done(true, done, ROLES.path),
        Err(RoleError::Store(e)) => Err(e.into()),
        Err(e) => sent.done(false, format!("Refused: {e}."), ROLES.path),
    }
}

pub(super) async fn add(sent: Submitted<RoleForm>) -> Page {
    let role = sent.form.role.trim().to_string();
    let text = format!("{} holds {role}.", sent.form.user);
    change(sent, RoleChange::Add(&role), text).await
}

pub(super) async fn remove(sent: Submitted<RoleForm>) -> Page {
    let (user, role) = (sent.form.user.clone(), sent.form.role.clone());
    let text = format!("{user} no longer holds {role}.");
    change(sent, RoleChange::Remove(&role), text).await
}

pub(super) async fn grant(sent: Submitted<RoleForm>) -> Page {
    let role = sent.form.role.trim().to_string();
    let text = format!("{} manages the memory of {role}.", sent.form.user);
    let granted = RoleChange::Grant(Permission::RoleMemoryManage, &role);
    change(sent, granted, text).await
}

pub(super) async fn ungrant(sent: Submitted<RoleForm>) -> Page {
    let (user, role) = (sent.form.user.clone(), sent.form.role.clone());
    let text = format!("{user} no longer manages the memory of {role}.");
    let withdrawn = RoleChange::Ungrant(Permission::RoleMemoryManage, &role);
    change(sent, withdrawn, text).await
}

/// Make `change` to the form's person as the signed-in administrator; `done` is the notice.
async fn change(sent: Submitted<RoleForm>, change: RoleChange<'_>, done: String) -> Page {
    let state = &sent.state;
    let r = state.db().role_memory();
    let (org, now) = (state.org(), state.now_ms());
    let result = r.change(org, &sent.form.user, change, sent.who.user_id(), now);
    let result = result.await;
    notice(sent, result, done)
}

pub(super) async fn retire(sent: Submitted<IdForm>) -> Page {
    let state = &sent.state;
    let id = sent.form.id;
    let result = state
        .db()
        .role_memory()
        .retire(state.org(), id, sent.who.user_id(), state.now_ms())
        .await;
    match result {
        Ok(revision) => sent.done(
            true,
            format!("Retired #{id}: undo it with revision {revision} on the Revisions page."),
            ROLES.path,
        ),
        Err(RoleError::Store(e)) => Err(e.into()),
        Err(e) => sent.done(false, format!("Refused: {e}."), ROLES.path),
    }
}
