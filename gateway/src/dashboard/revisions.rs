//! Revisions: every retirement of a record, with undo (the retired record
//! comes back; the same pair is never applied again).

use super::auth::{Screen, Submitted};
use super::view::{self, REVISIONS};
use super::{now_ms, Page, BUILT_IN_ADMIN, PAGE_ROWS};
use maud::{html, Markup};
use memory::{MemoryRecord, Revision, Status, StoreError};
use serde::Deserialize;
use std::collections::HashMap;

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let db = state.db();
    let revs = db.recent_revisions(state.org(), PAGE_ROWS).await?;
    let mut records = HashMap::new();
    for r in &revs {
        for id in [r.retired_id, r.replacing_id] {
            if let std::collections::hash_map::Entry::Vacant(e) = records.entry(id) {
                match db.record(state.org(), id).await {
                    Ok(rec) => {
                        e.insert(rec);
                    }
                    Err(StoreError::NotFound(_)) => {}
                    Err(err) => return Err(err.into()),
                }
            }
        }
    }
    let content = template(&revs, &records, screen.admin.csrf());
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
    let db = state.db();
    let id = sent.form.id;
    let rev = match db.revision(state.org(), id).await {
        Ok(r) => r,
        Err(StoreError::NotFound(_)) => {
            return sent.done(false, format!("There is no revision {id}."), to)
        }
        Err(e) => return Err(e.into()),
    };
    if !db
        .undo_revision(state.org(), id, BUILT_IN_ADMIN, now_ms())
        .await?
    {
        let text = format!("Revision {id} was already undone.");
        return sent.done(false, text, to);
    }
    let back = db.record(state.org(), rev.retired_id).await?;
    let text = if back.status == Status::Active {
        format!(
            "Undone: record #{} is active again; #{} may not replace it again.",
            rev.retired_id, rev.replacing_id
        )
    } else {
        format!(
            "Undone: record #{} stays {} (it changed since); #{} may not replace it again.",
            rev.retired_id,
            back.status.as_str(),
            rev.replacing_id
        )
    };
    sent.done(true, text, to)
}
