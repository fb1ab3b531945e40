//! HTML: the page layout and the small pieces pages share. maud escapes
//! every interpolated value, so text from chat platforms (names, messages,
//! memory) is shown, never run.

use maud::{html, Markup, DOCTYPE};
use memory::{MemoryRecord, Status};

/// A one-shot notice shown at the top of the next page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub ok: bool,
    pub text: String,
}

/// The pages in the navigation bar: (path, label).
pub const NAV: &[(&str, &str)] = &[
    ("/dashboard/chat", "Chat"),
    ("/dashboard/pairing", "Pairing"),
    ("/dashboard/memory", "Memory"),
    ("/dashboard/review", "Review"),
    ("/dashboard/revisions", "Revisions"),
    ("/dashboard/audit", "Audit log"),
];

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · steward" }
            link rel="stylesheet" href="/dashboard/static/style.css";
        }
    }
}

/// A signed-in page: navigation, the notice, the content.
pub fn layout(
    title: &str,
    active: &str,
    org: &str,
    csrf: &str,
    flash: Option<&Flash>,
    content: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                header.topbar {
                    div.topbar-inner {
                        a.brand href="/dashboard/chat" { "steward" }
                        nav {
                            @for (path, label) in NAV {
                                a.active[*path == active] href=(path) { (label) }
                            }
                        }
                        div.who {
                            span.org { "org " b { (org) } }
                            form.inline method="post" action="/dashboard/logout" {
                                (csrf_field(csrf))
                                button.link type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main {
                    h1 { (title) }
                    @if let Some(f) = flash {
                        div.flash.ok[f.ok].err[!f.ok] id="flash" role="status" { (f.text) }
                    }
                    (content)
                }
            }
        }
    }
}

/// A page outside the signed-in layout (sign-in, errors).
pub fn bare(title: &str, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body.bare {
                main.narrow {
                    div.brand-big { "steward" }
                    (content)
                }
            }
        }
    }
}

/// A short standalone page: a title and one sentence.
pub fn message_page(title: &str, text: &str) -> axum::response::Html<String> {
    axum::response::Html(
        bare(
            title,
            html! {
                div.card {
                    h1 { (title) }
                    p { (text) }
                    p { a href="/dashboard" { "Back to the dashboard" } }
                }
            },
        )
        .into_string(),
    )
}

pub fn csrf_field(csrf: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(csrf); }
}

/// A one-button POST form with hidden fields.
pub fn action(path: &str, csrf: &str, fields: &[(&str, &str)], label: &str, class: &str) -> Markup {
    html! {
        form.inline method="post" action=(path) {
            (csrf_field(csrf))
            @for (name, value) in fields {
                input type="hidden" name=(name) value=(value);
            }
            button type="submit" class=(class) { (label) }
        }
    }
}

pub fn date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| "—".into())
}

pub fn status_badge(s: Status) -> Markup {
    html! { span class={ "badge " (s.as_str()) } { (s.as_str()) } }
}

pub fn empty(text: &str) -> Markup {
    html! { p.empty { (text) } }
}

/// The person page of `owner`, where their personal memory is shown (audited).
pub fn person_href(owner: &str) -> String {
    format!(
        "/dashboard/memory/person?{}",
        serde_urlencoded::to_string([("user", owner)]).unwrap_or_default()
    )
}

/// A record's text, except personal memory, which is only shown on its
/// owner's page (opening it is audited).
pub fn content_or_link(r: &MemoryRecord) -> Markup {
    if r.scope.is_personal() {
        let owner = r.owner.as_deref().unwrap_or("");
        html! {
            span.masked {
                "personal memory of " (owner) " — "
                a href=(person_href(owner)) { "open (audited)" }
            }
        }
    } else {
        html! { (r.content) }
    }
}

/// A table of records; `show` decides whether personal text is shown in full.
pub fn records_table(records: &[MemoryRecord], show_personal: bool) -> Markup {
    if records.is_empty() {
        return empty("No records match.");
    }
    html! {
        table.records {
            thead { tr { th { "#" } th { "Content" } th { "Subject" } th { "Kind" } th { "Status" } th { "Said" } th { "Source" } } }
            tbody {
                @for r in records {
                    tr id={ "record-" (r.id) } data-status=(r.status.as_str()) {
                        td.num { (r.id) }
                        td.content {
                            @if show_personal { (r.content) } @else { (content_or_link(r)) }
                        }
                        td.subject { code { (r.subject) } }
                        td { (r.kind) }
                        td { (status_badge(r.status)) }
                        td.when { (date(r.said_at)) }
                        td.source { (r.source) }
                    }
                }
            }
        }
    }
}
