//! The chat page: the signed-in person's conversation with the agent, the
//! pending "Remember this?" proposal, and sending a message or an answer
//! through the turn loop as that person on channel `dashboard`. The built-in
//! admin's conversation is `dashboard:admin` (where runs deliver); each other
//! person has their own (`dashboard:<their id>`), which nobody else sees.

use super::auth::SignedIn;
use super::auth::{self, Screen, Submitted};
use super::view::{self, CHAT};
use super::{DashboardState, Page, BUILT_IN_ADMIN, CHAT_CONVERSATION, PAGE_ROWS};
use adapters::{ConversationKind, Inbound, TurnHandler};
use axum::response::{IntoResponse, Redirect};
use maud::{html, Markup};
use memory::{MemoryRecord, StoredMessage};
use serde::Deserialize;

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let agent = &state.cfg.server.agent;
    let history = state
        .db()
        .conversations()
        .history(state.org(), agent, &conversation(&screen.who))
        .await?;
    let pending = state
        .db()
        .records()
        .pending_proposals(
            state.org(),
            agent,
            &conversation(&screen.who),
            screen.who.user_id(),
            state.now_ms(),
        )
        .await?;
    let content = template(&history, &pending, screen.who.csrf());
    screen.show(CHAT, content)
}

/// The newest [`PAGE_ROWS`] messages, the proposal awaiting an answer, and the compose box.
fn template(history: &[StoredMessage], pending: &[MemoryRecord], csrf: &str) -> Markup {
    let skip = history.len().saturating_sub(PAGE_ROWS as usize);
    let batch = pending.first().and_then(|r| r.batch);
    // A conflict question has a third answer: keep both (typed, as in chat).
    let conflicted = history
        .last()
        .is_some_and(|m| m.author == "agent" && m.text.contains(steward_core::turn::KEEPS_BOTH));
    html! {
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
                        @for r in pending {
                            li { (r.content) " " span.muted { "(" (r.scope) ")" } }
                        }
                    }
                    div.buttons {
                        (view::action("/dashboard/chat/answer", csrf, &[("batch", &batch.to_string()), ("answer", "yes")], "Yes, remember", "primary"))
                        @if conflicted {
                            (view::action("/dashboard/chat", csrf, &[("text", "both"), ("nonce", &auth::random_hex(16))], "Keep both", "secondary"))
                        }
                        (view::action("/dashboard/chat/answer", csrf, &[("batch", &batch.to_string()), ("answer", "no")], "No", "secondary"))
                    }
                }
            }
            form.compose method="post" action="/dashboard/chat" {
                (view::csrf_field(csrf))
                input type="hidden" name="nonce" value=(auth::random_hex(16));
                input id="text" name="text" type="text" autocomplete="off" required autofocus placeholder="Message steward…";
                button.primary type="submit" { "Send" }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct ChatForm {
    #[serde(default)]
    text: String,
    /// One per rendered form: a resubmitted form runs once.
    #[serde(default)]
    nonce: String,
}

pub(super) async fn send(sent: Submitted<ChatForm>) -> Page {
    let text = sent.form.text.trim();
    if text.is_empty() {
        return sent.done(false, "Type a message first.", CHAT.path);
    }
    let mut msg = message(&sent.state, &sent.who, text);
    let nonce = sent.form.nonce.trim();
    if (16..=64).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
        msg.platform_id = Some(format!("form:{nonce}"));
    }
    run_turn(sent, msg).await
}

#[derive(Debug, Deserialize)]
pub(super) struct AnswerForm {
    batch: i64,
    answer: String,
}

pub(super) async fn answer(sent: Submitted<AnswerForm>) -> Page {
    let yes = match sent.form.answer.as_str() {
        "yes" => true,
        "no" => false,
        _ => return sent.done(false, "Answer yes or no.", CHAT.path),
    };
    let mut msg = message(&sent.state, &sent.who, if yes { "yes" } else { "no" });
    msg.answer = Some((sent.form.batch, yes));
    run_turn(sent, msg).await
}

/// The signed-in person's dashboard conversation.
fn conversation(who: &SignedIn) -> String {
    if who.user_id() == BUILT_IN_ADMIN {
        CHAT_CONVERSATION.to_string()
    } else {
        format!("dashboard:{}", who.user_id())
    }
}

/// `text` from the signed-in person in their dashboard conversation.
fn message(state: &DashboardState, who: &SignedIn, text: &str) -> Inbound {
    let server = &state.cfg.server;
    Inbound {
        org: server.org.clone(),
        agent: server.agent.clone(),
        channel: "dashboard".into(),
        conversation: conversation(who),
        kind: ConversationKind::Direct,
        sender: Some(who.user_id().into()),
        sender_name: who.user.name.clone(),
        text: text.into(),
        platform_id: None,
        at: state.clock.now_utc(),
        mentioned: true,
        answer: None,
        on_behalf_of: None,
    }
}

/// Run `msg`, from the form `sent`, through the turn loop; a reply the
/// history does not show (a refusal before storing, such as "slow down")
/// comes back as a notice.
async fn run_turn<T>(sent: Submitted<T>, msg: Inbound) -> Page {
    let state = &sent.state;
    let replies = match TurnHandler::handle(state.turns.as_ref(), msg).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "dashboard turn failed");
            return sent.done(
                false,
                "The turn failed; your message was kept if it was stored. Please try again.",
                CHAT.path,
            );
        }
    };
    let history = state
        .db()
        .conversations()
        .history(
            state.org(),
            &state.cfg.server.agent,
            &conversation(&sent.who),
        )
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
        Ok(Redirect::to(CHAT.path).into_response())
    } else {
        sent.done(false, unseen.join(" "), CHAT.path)
    }
}
