//! The memory browser: agent notes and org policy by scope, the people who
//! have personal memory (no per-person counts), and one person's individual
//! records, reached by a POST form with a reason (audited: `memory.view`, the
//! admin as actor, the person as target, the reason shown to the person).
//! The person tier is never shown here (`policy::oversight_shows`).

use super::auth::{Screen, Submitted};
use super::view::{self, MEMORY};
use super::Page;
use axum::extract::Query;
use maud::{html, Markup};
use memory::policy::{self, Oversight};
use memory::store::RecordFilter;
use memory::{MemoryRecord, Scope, Status};
use pairing::{PairingError, User};
use serde::Deserialize;
use std::collections::HashMap;
use steward_core::oversight::{audit_view, Look, Looked};
use strum::VariantArray;

#[derive(Debug, Deserialize, Default)]
pub(super) struct MemoryQuery {
    scope: Option<String>,
    q: Option<String>,
    status: Option<String>,
}

impl MemoryQuery {
    /// The search text, and the status filter: `active` by default; `all` lists every status.
    fn search(&self) -> (String, Option<Status>, &'static str) {
        let q = self.q.clone().unwrap_or_default();
        let (status, key) = match self.status.as_deref() {
            Some("all") => (None, "all"),
            Some(other) => match Status::parse(other) {
                Some(st) => (Some(st), st.as_str()),
                None => (Some(Status::Active), Status::Active.as_str()),
            },
            None => (Some(Status::Active), Status::Active.as_str()),
        };
        (q, status, key)
    }
}

/// The status filter's choices: `active` (the default), `all`, then every other status.
fn status_choices() -> impl Iterator<Item = &'static str> {
    let others = Status::VARIANTS
        .iter()
        .filter(|s| **s != Status::Active)
        .map(|s| s.as_str());
    [Status::Active.as_str(), "all"].into_iter().chain(others)
}

pub(super) async fn page(screen: Screen, Query(mq): Query<MemoryQuery>) -> Page {
    let state = &screen.state;
    let content = match mq.scope.as_deref().unwrap_or("agent_notes") {
        "mine" => html! {
            (tabs("mine"))
            (super::me::own_memory(state, &screen.who).await?)
        },
        "people" => {
            let owners = state.db().records().personal_owners(state.org()).await?;
            let users = state.pairing().users(state.org()).await?;
            people(owners, &users, screen.who.csrf())
        }
        other => {
            let scope = match Scope::parse(other) {
                Some(s @ (Scope::AgentNotes | Scope::OrgPolicy | Scope::Role)) => s,
                Some(Scope::Personal | Scope::Person) | None => Scope::AgentNotes,
            };
            let (q, status, status_key) = mq.search();
            let filter = RecordFilter {
                scopes: vec![scope],
                status,
                text: Some(q.clone()),
                ..Default::default()
            };
            let records = state.browse(&filter).await?;
            html! {
                (tabs(scope.as_str()))
                section.card {
                    (search_box("/dashboard/memory", &[("scope", scope.as_str())], &q, status_key))
                    (records_table(&records, false))
                }
            }
        }
    };
    screen.show(MEMORY, content)
}

/// Everyone with personal memory or a pairing; never how much anyone has.
fn people(owners: Vec<(String, i64)>, users: &[User], csrf: &str) -> Markup {
    let mut people: Vec<String> = owners.into_iter().map(|(o, _)| o).collect();
    for u in users {
        if !people.contains(&u.user_id) {
            people.push(u.user_id.clone());
        }
    }
    people.sort();
    let names: HashMap<&str, &User> = users.iter().map(|u| (u.user_id.as_str(), u)).collect();
    let intro = html! { p.muted { "Each person's personal memory is private to them. Opening it needs a reason; the look is written to the audit log and shown to the person. How someone likes to work across the organisation (the person tier) is shown only to them." } };
    let table = view::Table {
        class: "people",
        head: &["Person", "Name", "Role", "Open with a reason"],
        none: "Nobody has personal memory yet.",
    }
    .card(intro, &people, |owner| {
        let u = names.get(owner.as_str());
        html! {
            tr data-person=(owner) {
                td { code { (owner) } }
                td { (u.map(|u| u.name.as_str()).unwrap_or("—")) }
                td { (u.map(|u| u.role.as_str()).unwrap_or("not paired")) }
                td.actions {
                    form.inline method="post" action="/dashboard/memory/person" {
                        (view::csrf_field(csrf))
                        input type="hidden" name="user" value=(owner);
                        input type="text" name="reason" required placeholder="Why are you looking?" aria-label="Reason";
                        button.secondary type="submit" { "Open (audited)" }
                    }
                }
            }
        }
    });
    html! {
        (tabs("people"))
        (table)
    }
}

/// The form that opens one person's records: who, and why.
#[derive(Debug, Deserialize)]
pub(super) struct PersonForm {
    user: String,
    #[serde(default)]
    reason: String,
}

/// One person's individual records. Opening them needs a reason and is
/// audited: `memory.view`, the admin as actor, the person as target, the
/// reason in the row (shown to the person). Their person tier is not shown.
pub(super) async fn person(sent: Submitted<PersonForm>) -> Page {
    let user = sent.form.user.trim().to_string();
    let people = "/dashboard/memory?scope=people";
    if user.is_empty() {
        return sent.done(false, "Choose a person to open.", people);
    }
    let Some(reason) = policy::oversight_reason(Some(&sent.form.reason)).map(str::to_string) else {
        return sent.done(
            false,
            "Give a reason to open a person's memory: it is audited and shown to them.",
            people,
        );
    };
    let Submitted {
        state, who, jar, ..
    } = sent;
    let db = state.db();
    let look = Look {
        org: state.org(),
        actor: who.user_id(),
        looked: Looked::Memory,
        person: &user,
        surface: "dashboard person page",
        reason: &reason,
    };
    audit_view(db, look, state.now_ms()).await?;
    let filter = RecordFilter {
        scopes: vec![Scope::Personal],
        owner: Some(user.clone()),
        ..Default::default()
    };
    let records: Vec<MemoryRecord> = state
        .browse(&filter)
        .await?
        .into_iter()
        .filter(|r| policy::oversight_shows(r.scope, Oversight::Reasoned))
        .collect();
    let described = match state.pairing().user(state.org(), &user).await {
        Ok(u) => format!("{} · {} · {}", u.name, u.role, u.status),
        Err(PairingError::UnknownUser(_)) => "not paired".into(),
        Err(e) => return Err(e.into()),
    };
    let content = html! {
        (tabs("people"))
        section.card {
            h2 { "Personal memory of " code { (user) } }
            p.muted { (described) ". This view was recorded in the audit log with your reason, and " (user) " is shown it." }
            p.muted { "Reason: " (reason) }
            (records_table(&records, true))
        }
    };
    Screen { state, who, jar }.show(MEMORY, content)
}

fn tabs(active: &str) -> Markup {
    let tabs = [
        ("mine", "Your memory"),
        ("agent_notes", "Agent notes"),
        ("org_policy", "Org policy"),
        ("people", "People"),
    ];
    html! {
        div.tabs {
            @for (key, label) in tabs {
                a.active[key == active] href={ "/dashboard/memory?scope=" (key) } { (label) }
            }
        }
    }
}

/// The search box of a memory list, keeping its place (`hidden`).
fn search_box(action: &str, hidden: &[(&str, &str)], q: &str, status: &str) -> Markup {
    html! {
        form.search method="get" action=(action) {
            @for (k, v) in hidden {
                input type="hidden" name=(k) value=(v);
            }
            input type="search" name="q" value=(q) placeholder="Search subject or text…" aria-label="Search";
            select name="status" aria-label="Status" {
                @for s in status_choices() {
                    option value=(s) selected[s == status] { (s) }
                }
            }
            button.secondary type="submit" { "Search" }
        }
    }
}

/// A table of records; `show_personal` decides whether personal text is shown in full.
fn records_table(records: &[MemoryRecord], show_personal: bool) -> Markup {
    view::Table {
        class: "records",
        head: &[
            "#", "Content", "Subject", "Kind", "Status", "Said", "Source",
        ],
        none: "No records match.",
    }
    .rows(records, |r| {
        html! {
            tr id={ "record-" (r.id) } data-status=(r.status.as_str()) {
                td.num { (r.id) }
                td.content {
                    @if show_personal { (r.content) } @else { (view::content_or_link(r)) }
                }
                td.subject { code { (r.subject) } }
                td { (r.kind) }
                td { (view::status_badge(r.status)) }
                td.when { (view::date(r.said_at)) }
                td.source { (r.source) }
            }
        }
    })
}
