//! "Your memory": what every signed-in person sees of their own, as `/memory`
//! and `GET /api/v1/me/memory` show it — steward's two promises, who looked
//! at their memory and why (`viewed_by`), and both their tiers, each record
//! with forget and (an individual one) promote. The rules are the lifecycle's
//! (`Lifecycle::forget_own`, `Lifecycle::promote_own`), as for the chat and
//! the API; this page only shows them. Nobody else's records are read here.
//! A person who holds work roles also sees each role's entries and may share
//! one of their records with a role, through the call the API's
//! `POST /api/v1/roles/{role}/memory` makes (`RoleMemory::share`).
//! The contradiction questions waiting for the person (docs/memory.md,
//! "Contradictions are asked") are listed with both texts and answered
//! here — keep the new, keep the old, keep both — through the turn loop's
//! own answer path (`TurnLoop::answer_waiting`), as a yes, no or "both" in chat.

use super::auth::{Screen, SignedIn, Submitted};
use super::view::{self, ME};
use super::{DashError, DashboardState, Page};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use maud::{html, Markup};
use memory::role_memory::{RoleEntry, RoleError};
use memory::store::RecordFilter;
use memory::{MemoryRecord, Scope, Status};
use serde::Deserialize;
use steward_core::turn::{Choice, WaitingQuestion};

pub(super) async fn page(screen: Screen) -> Page {
    let content = own_memory(&screen.state, &screen.who).await?;
    screen.show(ME, content)
}

/// The signed-in person's own memory: the promises, the looks, the records.
pub(super) async fn own_memory(
    state: &DashboardState,
    who: &SignedIn,
) -> Result<Markup, DashError> {
    let db = state.db();
    let filter = RecordFilter {
        scopes: vec![Scope::Personal, Scope::Person],
        owner: Some(who.user_id().to_string()),
        status: Some(Status::Active),
        ..Default::default()
    };
    let records = state.browse(&filter).await?;
    let roles = state
        .db()
        .role_memory()
        .roles_of(state.org(), who.user_id())
        .await?;
    let mut entries = Vec::new();
    for role in &roles {
        match db
            .role_memory()
            .list(state.org(), role, state.now_ms())
            .await
        {
            Ok(list) => entries.push((role.clone(), list)),
            Err(RoleError::Store(e)) => return Err(e.into()),
            // A role name the store would refuse holds nothing to show.
            Err(_) => entries.push((role.clone(), Vec::new())),
        }
    }
    let questions = state
        .turns
        .waiting_questions(state.org(), who.user_id(), state.now_ms())
        .await?;
    let views = steward_core::oversight::views(db, state.org(), who.user_id()).await?;
    let mut looks = Vec::new();
    for v in views {
        // The administrator's name, as the API's `viewed_by` shows it.
        let name = match state.pairing().user(state.org(), &v.who).await {
            Ok(u) => u.name,
            Err(_) => v.who.clone(),
        };
        looks.push((name, v));
    }
    Ok(html! {
        section.card.promises {
            h2 { "Your memory" }
            p.muted { "Signed in as " b { (who.user.name) } " (" code { (who.user_id()) } ", " (who.user.role) ")." }
            @for p in steward_core::oversight::PROMISES {
                p.promise { (p) }
            }
        }
        section.card.viewed-by {
            h2 { "Who looked at your memory" }
            @if looks.is_empty() {
                (view::empty("Nobody has looked at your memory."))
            }
            @for (name, v) in &looks {
                p.look {
                    (v.looked.told()) " " (name)
                    @if let Some(how) = &v.acted_as { " " (how) }
                    " on " (view::date(v.at_ms)) "."
                    @if let Some(r) = &v.reason { " Reason: " (r) }
                }
            }
        }
        @if !questions.is_empty() {
            (waiting(&questions, who.csrf()))
        }
        (own_records(&records, &roles, who.csrf()))
        @if !entries.is_empty() {
            (own_roles(&entries))
        }
    })
}

/// The contradiction questions waiting for the person: what they said, what
/// it conflicts with, and the three answers.
fn waiting(questions: &[WaitingQuestion], csrf: &str) -> Markup {
    html! {
        section.card.questions {
            h2 { "Questions waiting for you" }
            p.muted { "You told steward something that conflicts with what it keeps about you. Nothing is replaced until you choose." }
            @for q in questions {
                @let batch = q.batch.to_string();
                div.question id={ "question-" (q.batch) } {
                    @for (new, kept) in &q.proposals {
                        p.new { "New: " span.content { (new.content) } " " span.muted { "(said " (view::date(new.said_at)) ")" } }
                        @for old in kept {
                            p.old { "Kept: " span.content { (old.content) } " " span.muted { "(#" (old.id) ", said " (view::date(old.said_at)) ")" } }
                        }
                    }
                    div.buttons {
                        (view::action(QUESTION_PATH, csrf, &[("batch", &batch), ("answer", "new")], "Keep the new", "primary"))
                        (view::action(QUESTION_PATH, csrf, &[("batch", &batch), ("answer", "old")], "Keep the old", "secondary"))
                        (view::action(QUESTION_PATH, csrf, &[("batch", &batch), ("answer", "both")], "Keep both", "secondary"))
                    }
                }
            }
        }
    }
}

/// Where a question's answer is posted.
pub(super) const QUESTION_PATH: &str = "/dashboard/me/question";

/// The entries of each role the person holds, as its holders see them.
fn own_roles(entries: &[(String, Vec<RoleEntry>)]) -> Markup {
    html! {
        section.card.roles-mine {
            h2 { "Your roles" }
            @for (role, list) in entries {
                h3 { code { (role) } }
                @if list.is_empty() {
                    (view::empty("Nothing is kept for this role yet."))
                }
                ul {
                    @for e in list {
                        li id={ "entry-" (e.id) } { (e.content) " " span.muted { "(" (e.kind) ", " (e.status) ")" } }
                    }
                }
            }
        }
    }
}

/// Each record with what its owner may do to it.
fn own_records(records: &[MemoryRecord], roles: &[String], csrf: &str) -> Markup {
    view::Table {
        class: "records mine",
        head: &["#", "Content", "Subject", "Kind", "Tier", "Said", ""],
        none: "steward keeps nothing about you.",
    }
    .card(html! { h2 { "What steward keeps about you" } }, records, |r| {
        let id = r.id.to_string();
        html! {
            tr id={ "record-" (r.id) } {
                td.num { (r.id) }
                td.content { (r.content) }
                td.subject { code { (r.subject) } }
                td { (r.kind) }
                td { (r.scope) }
                td.when { (view::date(r.said_at)) }
                td.actions {
                    @if r.scope == Scope::Personal {
                        (view::action("/dashboard/me/promote", csrf, &[("id", &id)], "Use with every agent", "secondary"))
                    }
                    (view::action("/dashboard/me/forget", csrf, &[("id", &id)], "Forget", "danger"))
                    @for role in roles {
                        (view::action("/dashboard/me/share", csrf, &[("id", &id), ("role", role)], &format!("Share with {role}"), "secondary"))
                    }
                }
            }
        }
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct IdForm {
    id: i64,
}

/// Forget one of one's own records, as `/forget` does.
pub(super) async fn forget(sent: Submitted<IdForm>) -> Page {
    let (state, id) = (&sent.state, sent.form.id);
    let done = state
        .lifecycle
        .forget_own(state.org(), id, sent.who.user_id(), state.now_ms())
        .await?;
    match done {
        Ok(()) => sent.done(true, format!("Forgotten: record #{id}."), ME.path),
        Err(refused) => sent.done(false, refused, ME.path),
    }
}

/// Promote one of one's own individual records to the person tier, as `/promote` does.
pub(super) async fn promote(sent: Submitted<IdForm>) -> Page {
    let (state, id) = (&sent.state, sent.form.id);
    let done = state
        .lifecycle
        .promote_own(state.org(), sent.who.user_id(), id, state.now_ms())
        .await?;
    match done {
        Ok(()) => sent.done(
            true,
            format!("Record #{id} is now used with every agent when you speak."),
            ME.path,
        ),
        Err(refused) => sent.done(false, refused, ME.path),
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct ShareForm {
    id: i64,
    role: String,
}

/// Share one of one's own records with a role one holds: a proposal its
/// manager and another holder decide on, as `POST /api/v1/roles/{role}/memory`
/// with `record` makes it (audited `role_memory.propose`).
pub(super) async fn share(sent: Submitted<ShareForm>) -> Page {
    let (state, f) = (&sent.state, &sent.form);
    let shared = state
        .db()
        .role_memory()
        .share(
            state.org(),
            f.id,
            f.role.trim(),
            sent.who.user_id(),
            None,
            state.now_ms(),
        )
        .await;
    match shared {
        Ok(e) => {
            let done = format!(
                "Proposed to {}: entry #{} waits for a manager and another holder.",
                e.role, e.id
            );
            sent.done(true, done, ME.path)
        }
        Err(RoleError::Store(e)) => Err(e.into()),
        Err(e) => sent.done(false, format!("Refused: {e}."), ME.path),
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct QuestionForm {
    batch: i64,
    answer: String,
}

/// Answer one of one's own contradiction questions: the new text kept (a
/// yes), the old one (a no), or both — the turn loop's answer path, audited
/// `memory.conflict_answer` under the person. A question that is not
/// waiting for them (another person's, answered, expired) is 404.
pub(super) async fn question(sent: Submitted<QuestionForm>) -> Page {
    let choice = match sent.form.answer.as_str() {
        "new" => Choice::Yes,
        "old" => Choice::No,
        "both" => Choice::Both,
        _ => return sent.done(false, "Choose to keep the new, the old, or both.", ME.path),
    };
    let state = &sent.state;
    let answered = state
        .turns
        .answer_waiting(
            state.org(),
            &sent.who.principal(),
            sent.form.batch,
            choice,
            state.now_ms(),
        )
        .await?;
    match answered {
        Some(said) => sent.done(true, said, ME.path),
        None => Ok((
            StatusCode::NOT_FOUND,
            view::message_page(
                "No such question",
                "That question is not waiting for you: it was answered, it expired, or it was never asked to you. Nothing was changed.",
            ),
        )
            .into_response()),
    }
}
