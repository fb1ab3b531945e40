//! Revisions: every retirement of a record, with undo (the retired record
//! comes back; the same pair is never applied again).

use super::auth::{Screen, Submitted};
use super::view::{self, REVISIONS};
use super::{Page, PAGE_ROWS};
use maud::{html, Markup};
use memory::{MemoryRecord, Revision, Status, StoreError};
use serde::Deserialize;
use std::collections::HashMap;
use steward_core::lifecycle::Undo;

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let db = state.db();
    let revs = db
        .records()
        .recent_revisions(state.org(), PAGE_ROWS)
        .await?;
    let mut records = HashMap::new();
    for r in &revs {
        for id in [r.retired_id, r.replacing_id] {
            if let std::collections::hash_map::Entry::Vacant(e) = records.entry(id) {
                match db.records().get(state.org(), id).await {
                    Ok(rec) => {
                        e.insert(rec);
                    }
                    Err(StoreError::NotFound(_)) => {}
                    Err(err) => return Err(err.into()),
                }
            }
        }
    }
    let content = template(&revs, &records, screen.who.csrf());
    screen.show(REVISIONS, content)
}

/// The revisions, each pair of records shown from `records` (a deleted one as gone).
fn template(revs: &[Revision], records: &HashMap<i64, MemoryRecord>, csrf: &str) -> Markup {
    let cell = |id: i64| -> Markup {
        match records.get(&id) {
            Some(r) => html! {
                div.rec {
                    span.num { "#" (id) } " " (view::status_badge(r.status))
                    div.content { (view::content_or_link(r)) }
                }
            },
            None => html! { span.num { "#" (id) } " " span.muted { "(gone)" } },
        }
    };
    let rivals = |r: &Revision| match (records.get(&r.retired_id), records.get(&r.replacing_id)) {
        (Some(a), Some(b)) => a.disagrees_with(b),
        _ => false,
    };
    let intro = html! { p.muted { "Every retirement of a record is a revision. Undo brings the retired record back; the replacing record stays, and the same pair is never applied again." } };
    view::Table {
        class: "revisions",
        head: &["Rev", "When", "Retired", "Replaced by", "Why", ""],
        none: "No revisions yet.",
    }
    .card(intro, revs, |r| {
        html! {
            tr id={ "revision-" (r.id) } data-undone=(r.undone_at.is_some()) {
                td.num { (r.id) }
                td.when { (view::date(r.created_at)) }
                td { (cell(r.retired_id)) }
                td { (cell(r.replacing_id)) }
                td {
                    (r.reason)
                    div.muted { "via " (r.via) " · " (r.cause) " · run " code { (r.run_id) } }
                }
                @if let Some(at) = r.undone_at {
                    td.state {
                        span.badge.undone { "undone" }
                        div.muted { "by " (r.undone_by.as_deref().unwrap_or("?")) }
                        div.muted { (view::date(at)) }
                        @if rivals(r) {
                            div.muted { "Both records are active on one subject." }
                            (view::action("/dashboard/revisions/forget", csrf, &[("id", &r.replacing_id.to_string())], &format!("Forget #{}", r.replacing_id), "danger"))
                        }
                    }
                } @else {
                    td.actions {
                        (view::action("/dashboard/revisions/undo", csrf, &[("id", &r.id.to_string())], "Undo", "secondary"))
                    }
                }
            }
        }
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct UndoForm {
    id: i64,
}

pub(super) async fn undo(sent: Submitted<UndoForm>) -> Page {
    let to = REVISIONS.path;
    let state = &sent.state;
    let id = sent.form.id;
    let undo = match state
        .lifecycle
        .undo(state.org(), id, sent.who.user_id(), state.now_ms())
        .await
    {
        Ok(u) => u,
        Err(steward_core::error::TurnError::Store(StoreError::NotFound(_))) => {
            return sent.done(false, format!("There is no revision {id}."), to)
        }
        Err(e) => return Err(e.into()),
    };
    let done = matches!(undo, Undo::Undone { .. });
    let text = undo
        .message(id, |r| {
            ::memory::admin_text!("retire it with “Forget #{}” below", r)
        })
        .to_string();
    sent.done(done, text, to)
}

/// Forget the replacing record of an undone revision (the rival of the one
/// the undo brought back), as `memory forget` does.
pub(super) async fn forget(sent: Submitted<UndoForm>) -> Page {
    let to = REVISIONS.path;
    let state = &sent.state;
    let id = sent.form.id;
    let live = match state.db().records().get(state.org(), id).await {
        Ok(r) => r.status == Status::Active,
        Err(StoreError::NotFound(_)) => false,
        Err(e) => return Err(e.into()),
    };
    if !live {
        return sent.done(false, format!("Record #{id} is not active."), to);
    }
    state
        .lifecycle
        .forget(state.org(), id, sent.who.user_id(), state.now_ms())
        .await?;
    sent.done(true, format!("Forgotten: record #{id} is deleted."), to)
}
