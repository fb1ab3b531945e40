//! The audit log: who did what to whom, newest first.

use super::auth::Screen;
use super::view::{self, AUDIT};
use super::{Page, PAGE_ROWS};
use maud::{html, Markup};
use memory::AuditEntry;

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let entries = state.db().audit().log(state.org(), PAGE_ROWS).await?;
    screen.show(AUDIT, template(&entries))
}

fn template(entries: &[AuditEntry]) -> Markup {
    view::Table {
        class: "audit",
        head: &["When", "Actor", "Action", "Target", "Detail"],
        none: "Nothing has been audited yet.",
    }
    .card(html! {}, entries, |e| {
        html! {
            tr {
                td.when { (view::date(e.at)) }
                td { code { (e.actor) } }
                td { span.action { (e.action) } }
                td { code { (e.target) } }
                td.detail { (e.detail) }
            }
        }
    })
}
