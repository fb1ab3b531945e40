//! The review queue: quarantined (unverified) records, confirmed or rejected
//! by the admin through the turn loop's review (subject rule, time, vetoes; audited).

use super::auth::{Admin, CsrfForm};
use super::view::{self, REVIEW};
use super::{now_ms, DashboardState, Page, BUILT_IN_ADMIN, PAGE_ROWS};
use axum::extract::State;
use axum_extra::extract::CookieJar;
use maud::{html, Markup};
use memory::store::BrowseFilter;
use memory::{MemoryRecord, Status};
use serde::Deserialize;

pub(super) async fn page(
    State(state): State<DashboardState>,
    admin: Admin,
    jar: CookieJar,
) -> Page {
    let filter = BrowseFilter {
        status: Some(Status::Unverified),
        ..Default::default()
    };
    let records = state
        .db()
        .browse_records(state.org(), &filter, PAGE_ROWS)
        .await?;
    let content = template(&records, admin.csrf());
    Ok(view::render(
        jar,
        state.org(),
        admin.csrf(),
        REVIEW,
        content,
    ))
}

fn template(records: &[MemoryRecord], csrf: &str) -> Markup {
    html! {
        section.card {
            p.muted { "Quarantined records (relearned from archives) are never used until an admin confirms them. Confirming makes a record active under the subject rule; rejecting keeps it out for good. Both are audited." }
            @if records.is_empty() {
                (view::empty("Nothing is waiting for review."))
            } @else {
                table.review {
                    thead { tr { th { "#" } th { "Content" } th { "Scope" } th { "Subject" } th { "Said" } th { "Source" } th { "" } } }
                    tbody {
                        @for r in records {
                            @let id = r.id.to_string();
                            tr id={ "record-" (r.id) } {
                                td.num { (r.id) }
                                td.content { (view::content_or_link(r)) }
                                td { (r.scope) }
                                td.subject { code { (r.subject) } }
                                td.when { (view::date(r.said_at)) }
                                td.source { (r.source) }
                                td.actions {
                                    (view::action("/dashboard/review/confirm", csrf, &[("id", &id)], "Confirm", "primary"))
                                    (view::action("/dashboard/review/reject", csrf, &[("id", &id)], "Reject", "danger"))
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
pub(super) struct IdForm {
    id: i64,
}

pub(super) async fn confirm(
    State(state): State<DashboardState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<IdForm>,
) -> Page {
    decide(&state, jar, form.id, true).await
}

pub(super) async fn reject(
    State(state): State<DashboardState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<IdForm>,
) -> Page {
    decide(&state, jar, form.id, false).await
}

/// `review_learned` from the review queue, with the admin as actor; its
/// outcome (done or refused) as the notice, capitalised.
async fn decide(state: &DashboardState, jar: CookieJar, id: i64, confirm: bool) -> Page {
    let outcome = state
        .turns
        .lifecycle()
        .review(state.org(), id, confirm, BUILT_IN_ADMIN, now_ms())
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
    Ok(view::done(jar, ok, format!("{text}."), REVIEW.path))
}
