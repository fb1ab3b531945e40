//! The audit log: who did what to whom, newest first.

use super::auth::Admin;
use super::view::{self, AUDIT};
use super::{DashboardState, Page, PAGE_ROWS};
use axum::extract::State;
use axum_extra::extract::CookieJar;
use maud::{html, Markup};
use memory::AuditEntry;

pub(super) async fn page(
    State(state): State<DashboardState>,
    admin: Admin,
    jar: CookieJar,
) -> Page {
    let entries = state.db().audit_log(state.org(), PAGE_ROWS).await?;
    Ok(view::render(
        jar,
        state.org(),
        admin.csrf(),
        AUDIT,
        template(&entries),
    ))
}

fn template(entries: &[AuditEntry]) -> Markup {
    html! {
        section.card {
            @if entries.is_empty() {
                (view::empty("Nothing has been audited yet."))
            } @else {
                table.audit {
                    thead { tr { th { "When" } th { "Actor" } th { "Action" } th { "Target" } th { "Detail" } } }
                    tbody {
                        @for e in entries {
                            tr {
                                td.when { (view::date(e.at)) }
                                td { code { (e.actor) } }
                                td { span.action { (e.action) } }
                                td { code { (e.target) } }
                                td { (e.detail) }
                            }
                        }
                    }
                }
            }
        }
    }
}
