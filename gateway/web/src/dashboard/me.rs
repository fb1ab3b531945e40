//! "Your memory": what every signed-in person sees of their own, as `/memory`
//! and `GET /api/v1/me/memory` show it — steward's two promises, who looked
//! at their memory and why (`viewed_by`), and both their tiers, each record
//! with forget and (an individual one) promote. The rules are the lifecycle's
//! (`Lifecycle::forget_own`, `Lifecycle::promote_own`), as for the chat and
//! the API; this page only shows them. Nobody else's records are read here.
//! A person who holds work roles also sees each role's entries and may share
//! one of their records with a role, through the call the API's
//! `POST /api/v1/roles/{role}/memory` makes (`RoleMemory::share`).

use super::auth::{Screen, SignedIn, Submitted};
use super::view::{self, ME};
use super::{DashError, DashboardState, Page};
use maud::{html, Markup};
use memory::role_memory::{RoleEntry, RoleError};
use memory::store::RecordFilter;
use memory::{MemoryRecord, Scope, Status};
use serde::Deserialize;

pub(super) async fn page(screen: Screen) -> Page {
    let content = own_memory(&screen.state, &screen.who).await?;
    screen.show(ME, content)
}

/// The signed-in person's own memory: the promises, the looks, the records.
pub(super) async fn own_memory(
    state: &DashboardState,
    who: &SignedIn,
) -> Result<Markup, DashError> {
    let db = state.db();
    let filter = RecordFilter {
        scopes: vec![Scope::Personal, Scope::Person],
        owner: Some(who.user_id().to_string()),
        status: Some(Status::Active),
        ..Default::default()
    };
    let records = state.browse(&filter).await?;
    let roles = state
        .db()
        .role_memory()
        .roles_of(state.org(), who.user_id())
        .await?;
    let mut entries = Vec::new();
    for role in &roles {
        match db
            .role_memory()
            .list(state.org(), role, state.now_ms())
            .await
        {
            Ok(list) => entries.push((role.clone(), list)),
            Err(RoleError::Store(e)) => return Err(e.into()),
            // A role name the store would refuse holds nothing to show.
            Err(_) => entries.push((role.clone(), Vec::new())),
        }
    }
    let views = steward_core::oversight::views(db, state.org(), who.user_id()).await?;
    let mut looks = Vec::new();
    for v in views {
        // The administrator's name, as the API's `viewed_by` shows it.
        let name = match state.pairing().user(state.org(), &v.who).await {
            Ok(u) => u.name,
            Err(_) => v.who.clone(),
        };
        looks.push((name, v));
    }
    Ok(html! {
        section.card.promises {
            h2 { "Your memory" }
            p.muted { "Signed in as " b { (who.user.name) } " (" code { (who.user_id()) } ", " (who.user.role) ")." }
            @for p in steward_core::oversight::PROMISES {
                p.promise { (p) }
            }
        }
        section.card.viewed-by {
            h2 { "Who looked at your memory" }
            @if looks.is_empty() {
                (view::empty("Nobody has looked at your memory."))
            }
            @for (name, v) in &looks {
                p.look {
                    (v.looked.told()) " " (name)
                    @if let Some(how) = &v.acted_as { " " (how) }
                    " on " (view::date(v.at_ms)) "."
                    @if let Some(r) = &v.reason { " Reason: " (r) }
                }
            }
        }
        (own_records(&records, &roles, who.csrf()))
        @if !entries.is_empty() {
            (own_roles(&entries))
        }
    })
}

/// The entries of each role the person holds, as its holders see them.
fn own_roles(entries: &[(String, Vec<RoleEntry>)]) -> Markup {
    html! {
        section.card.roles-mine {
            h2 { "Your roles" }
            @for (role, list) in entries {
                h3 { code { (role) } }
                @if list.is_empty() {
                    (view::empty("Nothing is kept for this role yet."))
                }
                ul {
                    @for e in list {
                        li id={ "entry-" (e.id) } { (e.content) " " span.muted { "(" (e.kind) ", " (e.status) ")" } }
                    }
                }
            }
        }
    }
}

/// Each record with what its owner may do to it.
fn own_records(records: &[MemoryRecord], roles: &[String], csrf: &str) -> Markup {
    view::Table {
        class: "records mine",
        head: &["#", "Content", "Subject", "Kind", "Tier", "Said", ""],
        none: "steward keeps nothing about you.",
    }
    .card(html! { h2 { "What steward keeps about you" } }, records, |r| {
        let id = r.id.to_string();
        html! {
            tr id={ "record-" (r.id) } {
                td.num { (r.id) }
                td.content { (r.content) }
                td.subject { code { (r.subject) } }
                td { (r.kind) }
                td { (r.scope) }
                td.when { (view::date(r.said_at)) }
                td.actions {
                    @if r.scope == Scope::Personal {
                        (view::action("/dashboard/me/promote", csrf, &[("id", &id)], "Use with every agent", "secondary"))
                    }
                    (view::action("/dashboard/me/forget", csrf, &[("id", &id)], "Forget", "danger"))
                    @for role in roles {
                        (view::action("/dashboard/me/share", csrf, &[("id", &id), ("role", role)], &format!("Share with {role}"), "secondary"))
                    }
                }
            }
        }
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct IdForm {
    id: i64,
}

/// Forget one of one's own records, as `/forget` does.
pub(super) async fn forget(sent: Submitted<IdForm>) -> Page {
    let (state, id) = (&sent.state, sent.form.id);
    let done = state
        .lifecycle
        .forget_own(state.org(), id, sent.who.user_id(), state.now_ms())
        .await?;
    match done {
        Ok(()) => sent.done(true, format!("Forgotten: record #{id}."), ME.path),
        Err(refused) => sent.done(false, refused, ME.path),
    }
}

/// Promote one of one's own individual records to the person tier, as `/promote` does.
pub(super) async fn promote(sent: Submitted<IdForm>) -> Page {
    let (state, id) = (&sent.state, sent.form.id);
    let done = state
        .lifecycle
        .promote_own(state.org(), sent.who.user_id(), id, state.now_ms())
        .await?;
    match done {
        Ok(()) => sent.done(
            true,
            format!("Record #{id} is now used with every agent when you speak."),
            ME.path,
        ),
        Err(refused) => sent.done(false, refused, ME.path),
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct ShareForm {
    id: i64,
    role: String,
}

/// Share one of one's own records with a role one holds: a proposal its
/// manager and another holder decide on, as `POST /api/v1/roles/{role}/memory`
/// with `record` makes it (audited `role_memory.propose`).
pub(super) async fn share(sent: Submitted<ShareForm>) -> Page {
    let (state, f) = (&sent.state, &sent.form);
    let shared = state
        .db()
        .role_memory()
        .share(
            state.org(),
            f.id,
            f.role.trim(),
            sent.who.user_id(),
            None,
            state.now_ms(),
        )
        .await;
    match shared {
        Ok(e) => {
            let done = format!(
                "Proposed to {}: entry #{} waits for a manager and another holder.",
                e.role, e.id
            );
            sent.done(true, done, ME.path)
        }
        Err(RoleError::Store(e)) => Err(e.into()),
        Err(e) => sent.done(false, format!("Refused: {e}."), ME.path),
    }
}
