//! The dashboard's pages (GET) and actions (POST forms, then a redirect
//! back with a one-shot notice).

use super::auth::{self, Admin, CsrfForm, SignIn};
use super::view::{self, Flash};
use super::{DashError, BUILT_IN_ADMIN, CHAT_CONVERSATION, FLASH_COOKIE};
use crate::http::AppState;
use crate::turn::TurnLoop;
use adapters::{ConversationKind, Inbound, TurnHandler};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use axum_extra::extract::cookie::{Cookie, SameSite};
use axum_extra::extract::CookieJar;
use maud::{html, Markup};
use memory::store::BrowseFilter;
use memory::{Role, Scope, Status};
use pairing::PairingError;
use serde::Deserialize;
use std::collections::HashMap;

type Page = Result<Response, DashError>;

/// Rows a list page shows at most.
const PAGE_ROWS: i64 = 200;

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn org(state: &AppState) -> &str {
    &state.turns.config().server.org
}

/// Redirect to `to` with a notice for the next page.
fn done(jar: CookieJar, ok: bool, text: impl Into<String>, to: &str) -> Response {
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

/// A signed-in page in the layout.
fn render(
    state: &AppState,
    admin: &Admin,
    jar: CookieJar,
    title: &str,
    active: &str,
    content: Markup,
) -> Response {
    let (jar, flash) = take_flash(jar);
    let page = view::layout(
        title,
        active,
        org(state),
        admin.csrf(),
        flash.as_ref(),
        content,
    );
    (jar, Html(page.into_string())).into_response()
}

// ---------------------------------------------------------------- sign-in

fn login_html(error: Option<&str>) -> Html<String> {
    Html(
        view::bare(
            "Sign in",
            html! {
                div.card.signin {
                    h1 { "Sign in" }
                    p.muted {
                        "Use the admin token that " code { "steward serve" }
                        " printed when it generated one, or the " code { "dashboard.admin_token" }
                        " you configured."
                    }
                    @if let Some(e) = error {
                        div.flash.err id="flash" role="alert" { (e) }
                    }
                    form method="post" action="/dashboard/login" {
                        label for="token" { "Admin token" }
                        input id="token" name="token" type="password" autocomplete="current-password" required autofocus;
                        button.primary type="submit" { "Sign in" }
                    }
                }
            },
        )
        .into_string(),
    )
}

pub async fn login_page() -> Html<String> {
    login_html(None)
}

#[derive(Debug, Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    token: String,
}

pub async fn login(State(state): State<AppState>, Form(f): Form<LoginForm>) -> Page {
    Ok(match auth::sign_in(&state.turns, &f.token).await? {
        SignIn::Ok(cookie) => (CookieJar::new().add(cookie), Redirect::to("/dashboard/chat")).into_response(),
        SignIn::Refused => {
            tracing::warn!("dashboard sign-in refused: wrong admin token");
            (
                StatusCode::UNAUTHORIZED,
                login_html(Some("That is not the admin token.")),
            )
                .into_response()
        }
        SignIn::NoToken => (
            StatusCode::UNAUTHORIZED,
            login_html(Some(
                "No admin token exists yet: start the server with `steward serve` (it prints one) or set dashboard.admin_token.",
            )),
        )
            .into_response(),
    })
}

#[derive(Debug, Deserialize)]
pub struct NoFields {}

pub async fn logout(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { admin, .. }: CsrfForm<NoFields>,
) -> Page {
    state
        .turns
        .db()
        .delete_dashboard_session(org(&state), &admin.session.id_hash)
        .await?;
    let gone = auth::session_cookie(String::new(), false);
    Ok((jar.remove(gone), Redirect::to("/dashboard/login")).into_response())
}

// ---------------------------------------------------------------- chat

pub async fn chat(State(state): State<AppState>, admin: Admin, jar: CookieJar) -> Page {
    let t = &state.turns;
    let agent = &t.config().server.agent;
    let history = t
        .db()
        .history(org(&state), agent, CHAT_CONVERSATION)
        .await?;
    let skip = history.len().saturating_sub(PAGE_ROWS as usize);
    let pending = t
        .db()
        .pending_proposals(
            org(&state),
            agent,
            CHAT_CONVERSATION,
            BUILT_IN_ADMIN,
            now_ms(),
        )
        .await?;
    let batch = pending.first().and_then(|r| r.batch);
    let csrf = admin.csrf();
    let content = html! {
        section.chat {
            // Newest first in the document; the stylesheet stacks it bottom-up,
            // so the log opens scrolled to the latest message.
            div.log id="log" {
                @if history.is_empty() {
                    p.empty { "No messages yet. Teach the agent with " code { "@notes: …" } ", or ask it something." }
                }
                @for m in history.iter().skip(skip).rev() {
                    @let mine = m.author != "agent";
                    div class={ "msg " @if mine { "me" } @else { "bot" } } {
                        div.meta { (if mine { "you" } else { "steward" }) " · " (view::date(m.said_at)) }
                        div.text { (m.text) }
                    }
                }
            }
            @if let Some(batch) = batch {
                div.proposal id="proposal" {
                    div.q { "Remember this?" }
                    ul {
                        @for r in &pending {
                            li { (r.content) " " span.muted { "(" (r.scope) ")" } }
                        }
                    }
                    div.buttons {
                        (view::action("/dashboard/chat/answer", csrf, &[("batch", &batch.to_string()), ("answer", "yes")], "Yes, remember", "primary"))
                        (view::action("/dashboard/chat/answer", csrf, &[("batch", &batch.to_string()), ("answer", "no")], "No", "secondary"))
                    }
                }
            }
            form.compose method="post" action="/dashboard/chat" {
                (view::csrf_field(csrf))
                input type="hidden" name="nonce" value=(auth::random_hex(16));
                input id="text" name="text" type="text" autocomplete="off" required autofocus placeholder="Message steward as the admin…";
                button.primary type="submit" { "Send" }
            }
        }
    };
    Ok(render(
        &state,
        &admin,
        jar,
        "Chat",
        "/dashboard/chat",
        content,
    ))
}

#[derive(Debug, Deserialize)]
pub struct ChatForm {
    #[serde(default)]
    text: String,
    /// One per rendered form: a resubmitted form runs once.
    #[serde(default)]
    nonce: String,
}

fn dashboard_message(t: &TurnLoop, text: &str) -> Inbound {
    Inbound {
        org: t.config().server.org.clone(),
        agent: t.config().server.agent.clone(),
        channel: "dashboard".into(),
        conversation: CHAT_CONVERSATION.into(),
        kind: ConversationKind::Direct,
        sender: Some(BUILT_IN_ADMIN.into()),
        sender_name: "Dashboard admin".into(),
        text: text.into(),
        platform_id: None,
        at: chrono::Utc::now(),
        mentioned: true,
        answer: None,
    }
}

/// Run a message through the turn loop; a reply the history does not show
/// (a refusal before storing, such as "slow down") comes back as a notice.
async fn run_turn(state: &AppState, jar: CookieJar, msg: Inbound) -> Page {
    let t = &state.turns;
    auth::ensure_admin_user(t).await?;
    let replies = match TurnHandler::handle(t.as_ref(), msg).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "dashboard turn failed");
            return Ok(done(
                jar,
                false,
                "The turn failed; your message was kept if it was stored. Please try again.",
                "/dashboard/chat",
            ));
        }
    };
    let history = t
        .db()
        .history(org(state), &t.config().server.agent, CHAT_CONVERSATION)
        .await?;
    let shown: Vec<&str> = history
        .iter()
        .rev()
        .filter(|m| m.author == "agent")
        .take(replies.len().max(1))
        .map(|m| m.text.as_str())
        .collect();
    let unseen: Vec<&str> = replies
        .iter()
        .map(|r| r.text.as_str())
        .filter(|r| !shown.contains(r))
        .collect();
    if unseen.is_empty() {
        Ok(Redirect::to("/dashboard/chat").into_response())
    } else {
        Ok(done(jar, false, unseen.join(" "), "/dashboard/chat"))
    }
}

pub async fn chat_send(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<ChatForm>,
) -> Page {
    let text = form.text.trim();
    if text.is_empty() {
        return Ok(done(jar, false, "Type a message first.", "/dashboard/chat"));
    }
    let mut msg = dashboard_message(&state.turns, text);
    let nonce = form.nonce.trim();
    if (16..=64).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
        msg.platform_id = Some(format!("form:{nonce}"));
    }
    run_turn(&state, jar, msg).await
}

#[derive(Debug, Deserialize)]
pub struct AnswerForm {
    batch: i64,
    answer: String,
}

pub async fn chat_answer(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<AnswerForm>,
) -> Page {
    let yes = match form.answer.as_str() {
        "yes" => true,
        "no" => false,
        _ => return Ok(done(jar, false, "Answer yes or no.", "/dashboard/chat")),
    };
    let mut msg = dashboard_message(&state.turns, if yes { "yes" } else { "no" });
    msg.answer = Some((form.batch, yes));
    run_turn(&state, jar, msg).await
}

// ---------------------------------------------------------------- pairing

pub async fn pairing(State(state): State<AppState>, admin: Admin, jar: CookieJar) -> Page {
    let p = state.turns.pairing();
    let pending = p.pending(org(&state), now_ms()).await?;
    let users = p.users(org(&state)).await?;
    let csrf = admin.csrf();
    let content = html! {
        section.card {
            h2 { "Pairing requests" }
            @if pending.is_empty() {
                (view::empty("No pending requests. Someone new sends /pair to the bot to get a code."))
            } @else {
                table.pending {
                    thead { tr { th { "Code" } th { "Identity" } th { "Name (as the platform gave it)" } th { "Channel" } th { "Expires" } th { "" } } }
                    tbody {
                        @for r in &pending {
                            tr id={ "request-" (r.code) } {
                                td { code.code { (r.code) } }
                                td { code { (r.stored_id) } }
                                td { (r.name) }
                                td { (r.channel) }
                                td.when { (view::date(r.expires_at)) }
                                td.actions {
                                    (view::action("/dashboard/pairing/approve", csrf, &[("code", &r.code), ("role", "user")], "Approve as user", "primary"))
                                    (view::action("/dashboard/pairing/approve", csrf, &[("code", &r.code), ("role", "admin")], "Approve as admin", "secondary"))
                                    (view::action("/dashboard/pairing/deny", csrf, &[("code", &r.code)], "Deny", "danger"))
                                }
                            }
                        }
                    }
                }
            }
        }
        section.card {
            h2 { "Paired users" }
            @if users.is_empty() {
                (view::empty("Nobody is paired yet."))
            } @else {
                table.users {
                    thead { tr { th { "User" } th { "Name" } th { "Role" } th { "Status" } th { "" } } }
                    tbody {
                        @for u in &users {
                            tr id={ "user-" (u.user_id) } {
                                td { code { (u.user_id) } }
                                td { (u.name) }
                                td { span class={ "badge role-" (u.role) } { (u.role) } }
                                td { span class={ "badge " (u.status) } { (u.status) } }
                                td.actions {
                                    @if u.user_id == BUILT_IN_ADMIN {
                                        span.muted { "built-in dashboard admin" }
                                    } @else if u.status == "active" {
                                        form.inline method="post" action="/dashboard/users/role" {
                                            (view::csrf_field(csrf))
                                            input type="hidden" name="user" value=(u.user_id);
                                            select name="role" aria-label="Role" {
                                                option value="user" selected[u.role == Role::User] { "user" }
                                                option value="admin" selected[u.role == Role::Admin] { "admin" }
                                            }
                                            button.secondary type="submit" { "Set role" }
                                        }
                                        (view::action("/dashboard/users/revoke", csrf, &[("user", &u.user_id)], "Revoke", "danger"))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(render(
        &state,
        &admin,
        jar,
        "Pairing",
        "/dashboard/pairing",
        content,
    ))
}

#[derive(Debug, Deserialize)]
pub struct CodeForm {
    code: String,
    #[serde(default)]
    role: String,
}

/// A pairing error the admin can act on, as a notice; anything else fails the page.
fn pairing_notice(e: PairingError) -> Result<String, DashError> {
    match e {
        PairingError::UnknownCode(_)
        | PairingError::CodeExpired(_)
        | PairingError::CodeNotPending { .. }
        | PairingError::UnknownUser(_) => Ok(e.to_string()),
        other => Err(other.into()),
    }
}

pub async fn pairing_approve(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<CodeForm>,
) -> Page {
    let to = "/dashboard/pairing";
    let role: Role = match form.role.parse() {
        Ok(r) => r,
        Err(e) => return Ok(done(jar, false, format!("{e}"), to)),
    };
    let p = state.turns.pairing();
    Ok(
        match p
            .approve(org(&state), &form.code, role, BUILT_IN_ADMIN, now_ms())
            .await
        {
            Ok(u) => done(
                jar,
                true,
                format!(
                    "Approved: {} ({}) is paired as {}.",
                    u.name, u.user_id, u.role
                ),
                to,
            ),
            Err(e) => done(jar, false, pairing_notice(e)?, to),
        },
    )
}

pub async fn pairing_deny(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<CodeForm>,
) -> Page {
    let to = "/dashboard/pairing";
    let p = state.turns.pairing();
    Ok(
        match p
            .deny(org(&state), &form.code, BUILT_IN_ADMIN, now_ms())
            .await
        {
            Ok(r) => done(
                jar,
                true,
                format!("Denied pairing request {} from {}.", r.code, r.stored_id),
                to,
            ),
            Err(e) => done(jar, false, pairing_notice(e)?, to),
        },
    )
}

#[derive(Debug, Deserialize)]
pub struct UserForm {
    user: String,
    #[serde(default)]
    role: String,
}

const KEEP_BUILT_IN: &str =
    "The built-in dashboard admin keeps its admin role; it is the identity this dashboard acts as.";

pub async fn user_role(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<UserForm>,
) -> Page {
    let to = "/dashboard/pairing";
    if form.user == BUILT_IN_ADMIN {
        return Ok(done(jar, false, KEEP_BUILT_IN, to));
    }
    let role: Role = match form.role.parse() {
        Ok(r) => r,
        Err(e) => return Ok(done(jar, false, format!("{e}"), to)),
    };
    let p = state.turns.pairing();
    Ok(
        match p
            .set_role(org(&state), &form.user, role, BUILT_IN_ADMIN, now_ms())
            .await
        {
            Ok(()) => done(jar, true, format!("{} is now {role}.", form.user), to),
            Err(e) => done(jar, false, pairing_notice(e)?, to),
        },
    )
}

pub async fn user_revoke(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<UserForm>,
) -> Page {
    let to = "/dashboard/pairing";
    if form.user == BUILT_IN_ADMIN {
        return Ok(done(jar, false, KEEP_BUILT_IN, to));
    }
    let p = state.turns.pairing();
    Ok(
        match p
            .revoke(org(&state), &form.user, BUILT_IN_ADMIN, now_ms())
            .await
        {
            Ok(()) => done(
                jar,
                true,
                format!("Revoked: {} is no longer paired.", form.user),
                to,
            ),
            Err(e) => done(jar, false, pairing_notice(e)?, to),
        },
    )
}

// ---------------------------------------------------------------- memory

#[derive(Debug, Deserialize, Default)]
pub struct MemoryQuery {
    scope: Option<String>,
    q: Option<String>,
    status: Option<String>,
    user: Option<String>,
}

/// `active` by default; `all` lists every status.
fn status_filter(s: Option<&str>) -> (Option<Status>, &'static str) {
    match s {
        Some("all") => (None, "all"),
        Some(other) => match Status::parse(other) {
            Some(st) => (Some(st), st.as_str()),
            None => (Some(Status::Active), "active"),
        },
        None => (Some(Status::Active), "active"),
    }
}

const STATUS_CHOICES: &[&str] = &[
    "active",
    "all",
    "superseded",
    "unverified",
    "pending",
    "rejected",
    "deleted",
];

fn tabs(active: &str) -> Markup {
    let tabs = [
        (
            "agent_notes",
            "Agent notes",
            "/dashboard/memory?scope=agent_notes",
        ),
        (
            "org_policy",
            "Org policy",
            "/dashboard/memory?scope=org_policy",
        ),
        ("people", "People", "/dashboard/memory?scope=people"),
    ];
    html! {
        div.tabs {
            @for (key, label, href) in tabs {
                a.active[key == active] href=(href) { (label) }
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
                @for s in STATUS_CHOICES {
                    option value=(s) selected[*s == status] { (s) }
                }
            }
            button.secondary type="submit" { "Search" }
        }
    }
}

pub async fn memory(
    State(state): State<AppState>,
    admin: Admin,
    jar: CookieJar,
    Query(mq): Query<MemoryQuery>,
) -> Page {
    let db = state.turns.db();
    let scope_key = mq.scope.as_deref().unwrap_or("agent_notes");
    let q = mq.q.clone().unwrap_or_default();
    let (status, status_key) = status_filter(mq.status.as_deref());
    let content = match scope_key {
        "people" => {
            let owners = db.personal_owners(org(&state)).await?;
            let users = state.turns.pairing().users(org(&state)).await?;
            let mut people: Vec<(String, i64)> = owners;
            for u in &users {
                if !people.iter().any(|(o, _)| *o == u.user_id) {
                    people.push((u.user_id.clone(), 0));
                }
            }
            people.sort();
            let names: HashMap<&str, &pairing::User> =
                users.iter().map(|u| (u.user_id.as_str(), u)).collect();
            html! {
                (tabs("people"))
                section.card {
                    p.muted { "Each person's personal memory is private to them. Opening it is written to the audit log." }
                    @if people.is_empty() {
                        (view::empty("Nobody has personal memory yet."))
                    } @else {
                        table.people {
                            thead { tr { th { "Person" } th { "Name" } th { "Role" } th { "Active records" } th { "" } } }
                            tbody {
                                @for (owner, n) in &people {
                                    @let u = names.get(owner.as_str());
                                    tr data-person=(owner) {
                                        td { code { (owner) } }
                                        td { (u.map(|u| u.name.as_str()).unwrap_or("—")) }
                                        td { (u.map(|u| u.role.as_str()).unwrap_or("not paired")) }
                                        td.num { (n) }
                                        td.actions { a.button.secondary href=(view::person_href(owner)) { "Open (audited)" } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        other => {
            let scope = match Scope::parse(other) {
                Some(s @ (Scope::AgentNotes | Scope::OrgPolicy)) => s,
                _ => Scope::AgentNotes,
            };
            let records = db
                .browse_records(
                    org(&state),
                    &BrowseFilter {
                        scopes: vec![scope],
                        status,
                        text: Some(q.clone()),
                        ..Default::default()
                    },
                    PAGE_ROWS,
                )
                .await?;
            html! {
                (tabs(scope.as_str()))
                section.card {
                    (search_box("/dashboard/memory", &[("scope", scope.as_str())], &q, status_key))
                    (view::records_table(&records, false))
                }
            }
        }
    };
    Ok(render(
        &state,
        &admin,
        jar,
        "Memory",
        "/dashboard/memory",
        content,
    ))
}

/// One person's personal memory. Opening it is audited: `memory.view`, the
/// admin as actor, the person as target.
pub async fn person(
    State(state): State<AppState>,
    admin: Admin,
    jar: CookieJar,
    Query(mq): Query<MemoryQuery>,
) -> Page {
    let user = mq.user.as_deref().map(str::trim).unwrap_or("");
    if user.is_empty() {
        return Ok(Redirect::to("/dashboard/memory?scope=people").into_response());
    }
    let db = state.turns.db();
    let q = mq.q.clone().unwrap_or_default();
    let (status, status_key) = status_filter(mq.status.as_deref());
    db.audit(
        org(&state),
        BUILT_IN_ADMIN,
        "memory.view",
        user,
        "personal memory opened on the dashboard",
        now_ms(),
    )
    .await?;
    let records = db
        .browse_records(
            org(&state),
            &BrowseFilter {
                scopes: vec![Scope::Personal, Scope::Person],
                owner: Some(user.to_string()),
                status,
                text: Some(q.clone()),
                ..Default::default()
            },
            PAGE_ROWS,
        )
        .await?;
    let who = match state.turns.pairing().user(org(&state), user).await {
        Ok(u) => format!("{} · {} · {}", u.name, u.role, u.status),
        Err(PairingError::UnknownUser(_)) => "not paired".into(),
        Err(e) => return Err(e.into()),
    };
    let content = html! {
        (tabs("people"))
        section.card {
            h2 { "Personal memory of " code { (user) } }
            p.muted { (who) ". This view was recorded in the audit log." }
            (search_box("/dashboard/memory/person", &[("user", user)], &q, status_key))
            (view::records_table(&records, true))
        }
    };
    Ok(render(
        &state,
        &admin,
        jar,
        "Memory",
        "/dashboard/memory",
        content,
    ))
}

// ---------------------------------------------------------------- review

pub async fn review(State(state): State<AppState>, admin: Admin, jar: CookieJar) -> Page {
    let records = state
        .turns
        .db()
        .browse_records(
            org(&state),
            &BrowseFilter {
                status: Some(Status::Unverified),
                ..Default::default()
            },
            PAGE_ROWS,
        )
        .await?;
    let csrf = admin.csrf();
    let content = html! {
        section.card {
            p.muted { "Quarantined records (relearned from archives) are never used until an admin confirms them. Confirming makes a record active under the subject rule; rejecting keeps it out for good. Both are audited." }
            @if records.is_empty() {
                (view::empty("Nothing is waiting for review."))
            } @else {
                table.review {
                    thead { tr { th { "#" } th { "Content" } th { "Scope" } th { "Subject" } th { "Said" } th { "Source" } th { "" } } }
                    tbody {
                        @for r in &records {
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
    };
    Ok(render(
        &state,
        &admin,
        jar,
        "Review",
        "/dashboard/review",
        content,
    ))
}

#[derive(Debug, Deserialize)]
pub struct IdForm {
    id: i64,
}

/// `review_learned` from the review queue: the turn loop's review (subject
/// rule, time, vetoes; audited), with the admin as actor.
async fn review_action(state: &AppState, jar: CookieJar, id: i64, confirm: bool) -> Page {
    let outcome = state
        .turns
        .lifecycle()
        .review(org(state), id, confirm, BUILT_IN_ADMIN, now_ms())
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
    Ok(done(jar, ok, format!("{text}."), "/dashboard/review"))
}

pub async fn review_confirm(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<IdForm>,
) -> Page {
    review_action(&state, jar, form.id, true).await
}

pub async fn review_reject(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<IdForm>,
) -> Page {
    review_action(&state, jar, form.id, false).await
}

// ---------------------------------------------------------------- revisions

pub async fn revisions(State(state): State<AppState>, admin: Admin, jar: CookieJar) -> Page {
    let db = state.turns.db();
    let revs = db.recent_revisions(org(&state), PAGE_ROWS).await?;
    let mut records = HashMap::new();
    for r in &revs {
        for id in [r.retired_id, r.replacing_id] {
            if let std::collections::hash_map::Entry::Vacant(e) = records.entry(id) {
                match db.record(org(&state), id).await {
                    Ok(rec) => {
                        e.insert(rec);
                    }
                    Err(memory::StoreError::NotFound(_)) => {}
                    Err(err) => return Err(err.into()),
                }
            }
        }
    }
    let csrf = admin.csrf();
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
    let content = html! {
        section.card {
            p.muted { "Every retirement of a record is a revision. Undo brings the retired record back; the replacing record stays, and the same pair is never applied again." }
            @if revs.is_empty() {
                (view::empty("No revisions yet."))
            } @else {
                table.revisions {
                    thead { tr { th { "Rev" } th { "When" } th { "Retired" } th { "Replaced by" } th { "Why" } th { "" } } }
                    tbody {
                        @for r in &revs {
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
                    }
                }
            }
        }
    };
    Ok(render(
        &state,
        &admin,
        jar,
        "Revisions",
        "/dashboard/revisions",
        content,
    ))
}

pub async fn revision_undo(
    State(state): State<AppState>,
    jar: CookieJar,
    CsrfForm { form, .. }: CsrfForm<IdForm>,
) -> Page {
    let to = "/dashboard/revisions";
    let db = state.turns.db();
    let id = form.id;
    let rev = match db.revision(org(&state), id).await {
        Ok(r) => r,
        Err(memory::StoreError::NotFound(_)) => {
            return Ok(done(jar, false, format!("There is no revision {id}."), to))
        }
        Err(e) => return Err(e.into()),
    };
    if !db
        .undo_revision(org(&state), id, BUILT_IN_ADMIN, now_ms())
        .await?
    {
        return Ok(done(
            jar,
            false,
            format!("Revision {id} was already undone."),
            to,
        ));
    }
    let back = db.record(org(&state), rev.retired_id).await?;
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
    Ok(done(jar, true, text, to))
}

// ---------------------------------------------------------------- audit

pub async fn audit(State(state): State<AppState>, admin: Admin, jar: CookieJar) -> Page {
    let entries = state.turns.db().audit_log(org(&state), PAGE_ROWS).await?;
    let content = html! {
        section.card {
            @if entries.is_empty() {
                (view::empty("Nothing has been audited yet."))
            } @else {
                table.audit {
                    thead { tr { th { "When" } th { "Actor" } th { "Action" } th { "Target" } th { "Detail" } } }
                    tbody {
                        @for e in &entries {
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
    };
    Ok(render(
        &state,
        &admin,
        jar,
        "Audit log",
        "/dashboard/audit",
        content,
    ))
}
