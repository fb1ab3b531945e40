//! The review queue: quarantined (unverified) records, confirmed or rejected
//! by the admin through the turn loop's review (subject rule, time, vetoes; audited).

use super::auth::{Screen, Submitted};
use super::view::{self, REVIEW};
use super::Page;
use maud::{html, Markup};
use memory::store::RecordFilter;
use memory::{MemoryRecord, Status};
use serde::Deserialize;

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let filter = RecordFilter {
        status: Some(Status::Unverified),
        ..Default::default()
    };
    let records = state.browse(&filter).await?;
    let content = template(&records, screen.who.csrf());
    screen.show(REVIEW, content)
}

fn template(records: &[MemoryRecord], csrf: &str) -> Markup {
    let intro = html! { p.muted { "Quarantined records (relearned from archives, or written by automated runs: the source names the run's principal, and its conversation the run) are never used until an admin confirms them. Confirming makes a record active under the subject rule; rejecting keeps it out for good. Both are audited." } };
    view::Table {
        class: "review",
        head: &["#", "Content", "Scope", "Subject", "Said", "Source", ""],
        none: "Nothing is waiting for review.",
    }
    .card(intro, records, |r| {
        let id = r.id.to_string();
        html! {
            tr id={ "record-" (r.id) } {
                td.num { (r.id) }
                td.content { (view::content_or_link(r)) }
                td { (r.scope) }
                td.subject { code { (r.subject) } }
                td.when { (view::date(r.said_at)) }
                td.source {
                    (r.source)
                    @if let Some(c) = &r.conversation { br; span.muted { "in " (c) } }
                    @if let Some(p) = &r.on_behalf_of { br; span.muted { "on behalf of " (p) } }
                }
                td.actions {
                    (view::action("/dashboard/review/confirm", csrf, &[("id", &id)], "Confirm", "primary"))
                    (view::action("/dashboard/review/reject", csrf, &[("id", &id)], "Reject", "danger"))
                }
            }
        }
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct IdForm {
    id: i64,
}

pub(super) async fn confirm(sent: Submitted<IdForm>) -> Page {
    decide(sent, true).await
}

pub(super) async fn reject(sent: Submitted<IdForm>) -> Page {
    decide(sent, false).await
}

/// `review_learned` from the review queue, with the admin as actor; its
/// outcome (done or refused) as the notice, capitalised.
async fn decide(sent: Submitted<IdForm>, confirm: bool) -> Page {
    let state = &sent.state;
    let outcome = state
        .lifecycle
        .review(
            state.org(),
            sent.form.id,
            confirm,
            sent.who.user_id(),
            state.now_ms(),
        )
        .await?;
    let (ok, text) = match outcome {
        Ok(done) => (true, done),
        Err(refused) => (false, refused),
    };
    let mut chars = text.chars();
    let text = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect::<String>())
        .unwrap_or_default();
    sent.done(ok, format!("{text}."), REVIEW.path)
}
