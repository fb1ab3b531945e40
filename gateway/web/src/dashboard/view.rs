//! What every page shares: the layout with its navigation, the one-shot
//! notice an action leaves for the next page, and the small pieces of markup
//! several pages use. Each page's own markup stands beside its handlers.
//!
//! maud escapes every interpolated value, so text from chat platforms (names,
//! messages, memory) is shown, never run.

use axum::response::{Html, IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::{Cookie, SameSite};
use axum_extra::extract::CookieJar;
use maud::{html, Markup, DOCTYPE};
use memory::{MemoryRecord, Status};

/// The cookie that carries a notice to the next page.
const FLASH_COOKIE: &str = "steward_flash";

/// A one-shot notice shown at the top of the next page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub ok: bool,
    pub text: String,
}

/// A page of the navigation bar: where it is, and its title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tab {
    pub path: &'static str,
    pub title: &'static str,
}

impl Tab {
    const fn new(path: &'static str, title: &'static str) -> Tab {
        Tab { path, title }
    }
}

pub const ME: Tab = Tab::new("/dashboard/me", "Your memory");
pub const KEYS: Tab = Tab::new("/dashboard/me/keys", "Your keys");
pub const CHAT: Tab = Tab::new("/dashboard/chat", "Chat");
pub const PAIRING: Tab = Tab::new("/dashboard/pairing", "Pairing");
pub const MEMORY: Tab = Tab::new("/dashboard/memory", "Memory");
pub const REVIEW: Tab = Tab::new("/dashboard/review", "Review");
pub const REVISIONS: Tab = Tab::new("/dashboard/revisions", "Revisions");
pub const ROLES: Tab = Tab::new("/dashboard/roles", "Roles");
pub const SKILLS: Tab = Tab::new("/dashboard/skills", "Skills");
pub const TOOLS: Tab = Tab::new("/dashboard/tools", "Tools");
pub const RUNS: Tab = Tab::new("/dashboard/runs", "Runs");
pub const AUDIT: Tab = Tab::new("/dashboard/audit", "Audit log");
pub const SETTINGS: Tab = Tab::new("/dashboard/settings", "Settings");

/// The pages in the navigation bar, in order; each person sees those their
/// role may open ([`Viewer::may_open`]).
pub const NAV: &[Tab] = &[
    ME, KEYS, CHAT, PAIRING, ROLES, MEMORY, REVIEW, REVISIONS, SKILLS, TOOLS, RUNS, AUDIT, SETTINGS,
];

/// Who a signed-in page is for: the organisation, the session's CSRF token
/// its forms carry, and the person.
pub struct Viewer<'a> {
    pub org: &'a str,
    pub csrf: &'a str,
    pub who: &'a pairing::User,
}

impl Viewer<'_> {
    /// Whether the one authorization point lets this person open `tab`'s
    /// route (`super::route_access`): a tab they may not open is not shown.
    pub fn may_open(&self, tab: Tab) -> bool {
        let principal = memory::Principal::Human {
            user_id: self.who.user_id.clone(),
            name: self.who.name.clone(),
            role: self.who.role,
        };
        super::route_access()
            .into_iter()
            .find(|(path, _)| *path == tab.path)
            .is_some_and(|(_, access)| match access {
                super::RouteAccess::BeforeSignIn => true,
                super::RouteAccess::SignedIn(action) => {
                    memory::authz::authorize(memory::authz::Actor::own(&principal), action).is_ok()
                }
            })
    }
}

/// A signed-in page `tab` in the layout (its forms carry the viewer's CSRF
/// token), showing (and clearing) the pending notice.
pub fn render(jar: CookieJar, viewer: &Viewer<'_>, tab: Tab, content: Markup) -> Response {
    let (jar, flash) = take_flash(jar);
    let page = layout(tab, viewer, flash.as_ref(), content);
    (jar, Html(page.into_string())).into_response()
}

/// Redirect to `to` with a notice for the next page.
pub fn done(jar: CookieJar, ok: bool, text: impl Into<String>, to: &str) -> Response {
    let text = text.into();
    let value = format!("{}{}", if ok { '1' } else { '0' }, hex::encode(text));
    let cookie = Cookie::build((FLASH_COOKIE, value))
        .http_only(true)
        .same_site(SameSite::Strict)
        .path("/dashboard")
        .build();
    (jar.add(cookie), Redirect::to(to)).into_response()
}

/// The pending notice, and the jar that clears it.
fn take_flash(jar: CookieJar) -> (CookieJar, Option<Flash>) {
    let Some(value) = jar.get(FLASH_COOKIE).map(|c| c.value().to_string()) else {
        return (jar, None);
    };
    let jar = jar.remove(Cookie::build(FLASH_COOKIE).path("/dashboard"));
    let flash = value.split_at_checked(1).and_then(|(kind, text)| {
        let text = String::from_utf8(hex::decode(text).ok()?).ok()?;
        Some(Flash {
            ok: kind == "1",
            text,
        })
    });
    (jar, flash)
}

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
fn layout(active: Tab, viewer: &Viewer<'_>, flash: Option<&Flash>, content: Markup) -> Markup {
    let (org, csrf) = (viewer.org, viewer.csrf);
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(active.title))
            body {
                header.topbar {
                    div.topbar-inner {
                        a.brand href="/dashboard" { "steward" }
                        nav {
                            @for tab in NAV.iter().filter(|t| viewer.may_open(**t)) {
                                a.active[*tab == active] href=(tab.path) { (tab.title) }
                            }
                        }
                        div.who {
                            span.org { "org " b { (org) } }
                            span.person { code { (viewer.who.user_id) } " · " (viewer.who.role) }
                            form.inline method="post" action="/dashboard/logout" {
                                (csrf_field(csrf))
                                button.link type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main {
                    h1 { (active.title) }
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

/// A table of one row per item under column headings, or a notice where
/// there are no items.
pub struct Table<'a> {
    /// Its class, by which the stylesheet and the tests tell tables apart.
    pub class: &'a str,
    /// The column headings.
    pub head: &'a [&'a str],
    /// The notice shown instead of a table without rows.
    pub none: &'a str,
}

impl Table<'_> {
    /// `items`, one `row` each, or the notice when there are none.
    pub fn rows<T>(&self, items: &[T], row: impl Fn(&T) -> Markup) -> Markup {
        if items.is_empty() {
            return empty(self.none);
        }
        html! {
            table class=(self.class) {
                thead { tr { @for h in self.head { th { (h) } } } }
                tbody { @for item in items { (row(item)) } }
            }
        }
    }

    /// A card of its `intro` (a heading, a note, or nothing) over the [`rows`](Self::rows).
    pub fn card<T>(&self, intro: Markup, items: &[T], row: impl Fn(&T) -> Markup) -> Markup {
        html! {
            section.card {
                (intro)
                (self.rows(items, row))
            }
        }
    }
}

/// The person page of `owner`, where their personal memory is shown (audited).
pub fn person_href(owner: &str) -> String {
    format!(
        "/dashboard/memory?scope=people#{}",
        serde_urlencoded::to_string([("person", owner)]).unwrap_or_default()
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
                a href=(person_href(owner)) { "open with a reason (audited)" }
            }
        }
    } else {
        html! { (r.content) }
    }
}
