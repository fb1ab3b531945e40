//! Channel adapters. Each turns its platform's events into one normalised
//! [`Inbound`] message and hands it to a [`TurnHandler`]; replies come back as
//! [`Reply`] values the adapter renders in its platform's format.
//!
//! Architecture Invariant: platform types (serenity models, Teams Activity
//! JSON, Bot Framework tokens, HTTP details) stay in this crate; nothing past `Inbound` knows them.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]
pub mod discord;
pub mod retry;
pub mod slack;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Whether a conversation is one person with the agent, or a shared thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConversationKind {
    Direct,
    Group,
}

impl ConversationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationKind::Direct => "direct",
            ConversationKind::Group => "group",
        }
    }
}

/// One normalised inbound message: what every channel turns its platform
/// event into, and all the turn loop sees of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    pub org: String,
    pub agent: String,
    /// `discord`, `slack`, `teams`, `dashboard`, `api`, `cli`, …
    pub channel: String,
    pub conversation: String,
    pub kind: ConversationKind,
    /// The stored user id (`discord:<snowflake>`, `slack:<team>:<user>`, `teams:<id>`, `admin`, …);
    /// `None` for a sender the platform let in without an identity.
    pub sender: Option<String>,
    /// Display name as the platform gave it: shown, never trusted.
    pub sender_name: String,
    pub text: String,
    /// The platform's message id, for dropping redeliveries.
    pub platform_id: Option<String>,
    pub at: DateTime<Utc>,
    /// Whether the agent was mentioned (group threads answer only when it was).
    pub mentioned: bool,
    /// A button press answering a "Remember this?" question: (batch, yes).
    pub answer: Option<(i64, bool)>,
    /// Whose behalf the sender acts on (an API key made `--on-behalf-of`
    /// them, checked against the grant): the turn still runs as the sender,
    /// and what it writes is tagged with this.
    pub on_behalf_of: Option<String>,
}

/// Stands in for a character no database stores alike.
const REPLACEMENT: char = '\u{FFFD}';

/// NUL (PostgreSQL refuses it in text; SQLite keeps it) and the other control
/// characters, and Unicode noncharacters: never stored as given, on any database.
fn unstorable(c: char, in_text: bool) -> bool {
    let line_break_or_tab = matches!(c, '\n' | '\r' | '\t');
    let nonchar = matches!(c as u32, 0xFDD0..=0xFDEF) || (c as u32 & 0xFFFE) == 0xFFFE;
    (c.is_control() && !(in_text && line_break_or_tab)) || nonchar
}

fn clean(s: &str, in_text: bool) -> bool {
    !s.chars().any(|c| unstorable(c, in_text))
}

fn normalise(s: &mut String, in_text: bool) {
    if !clean(s, in_text) {
        *s = s
            .chars()
            .map(|c| {
                if unstorable(c, in_text) {
                    REPLACEMENT
                } else {
                    c
                }
            })
            .collect();
    }
}

impl Inbound {
    /// The message as every database stores it alike: in its text, control
    /// characters other than line breaks and tabs become U+FFFD; in its ids and
    /// the display name, every control character does. `None` when nothing changes.
    pub fn normalised(&self) -> Option<Inbound> {
        let ids = [
            Some(&self.org),
            Some(&self.agent),
            Some(&self.channel),
            Some(&self.conversation),
            Some(&self.sender_name),
            self.sender.as_ref(),
            self.platform_id.as_ref(),
        ];
        if clean(&self.text, true) && ids.into_iter().flatten().all(|id| clean(id, false)) {
            return None;
        }
        let mut m = self.clone();
        normalise(&mut m.text, true);
        let ids = [
            Some(&mut m.org),
            Some(&mut m.agent),
            Some(&mut m.channel),
            Some(&mut m.conversation),
            Some(&mut m.sender_name),
            m.sender.as_mut(),
            m.platform_id.as_mut(),
        ];
        for id in ids.into_iter().flatten() {
            normalise(id, false);
        }
        Some(m)
    }
}

/// One reply to render.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reply {
    pub conversation: String,
    pub text: String,
    /// Set when the reply asks "Remember this?": the batch its Yes/No buttons answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<i64>,
}

/// What a person is told when their turn failed: one wording on every channel.
pub const TURN_FAILED: &str =
    "Sorry, something went wrong while answering. Your message was received; please try again.";

impl Reply {
    /// The apology a channel sends in `conversation` when the turn failed.
    pub fn turn_failed(conversation: impl Into<String>) -> Reply {
        Reply {
            conversation: conversation.into(),
            text: TURN_FAILED.into(),
            proposal: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TurnFailed(pub String);

/// Told once an inbound message is stored, or once its turn ended without
/// storing it (a redelivery, a refusal, a failure): what a platform that
/// acknowledges a message before it answers (Slack, the Teams bot) waits for.
/// The platform sends an unacknowledged message again, so an acknowledgement
/// that never runs ahead of the store loses nothing to a crash.
#[derive(Debug)]
pub struct Stored(tokio::sync::oneshot::Sender<()>);

/// The acknowledging side of [`Stored`].
#[derive(Debug)]
pub struct StoredWait(tokio::sync::oneshot::Receiver<()>);

impl Stored {
    /// A signal and what waits for it.
    pub fn pair() -> (Stored, StoredWait) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (Stored(tx), StoredWait(rx))
    }

    /// The message is stored (dropping it says the turn ended without).
    pub fn done(self) {
        let _ = self.0.send(());
    }
}

impl StoredWait {
    /// Until the message is stored or its turn has ended.
    pub async fn wait(self) {
        let _ = self.0.await;
    }
}

/// The turn loop, as an adapter sees it.
#[async_trait::async_trait]
pub trait TurnHandler: Send + Sync {
    /// The replies to `msg`; a redelivery of an answered message gets the
    /// reply stored for it again (Teams, whose answer is the HTTP response).
    async fn handle(&self, msg: Inbound) -> Result<Vec<Reply>, TurnFailed>;

    /// As [`TurnHandler::handle`], but a redelivery of a message already
    /// answered gets nothing: for a platform where the bot posted its answer
    /// itself (Discord), which must not post it twice.
    async fn handle_new(&self, msg: Inbound) -> Result<Vec<Reply>, TurnFailed> {
        self.handle(msg).await
    }

    /// As [`TurnHandler::handle_new`], telling `stored` as soon as the
    /// message is stored, before it is answered: for a platform that
    /// acknowledges first and posts the answer after (Slack, the Teams bot).
    async fn handle_new_acked(
        &self,
        msg: Inbound,
        stored: Stored,
    ) -> Result<Vec<Reply>, TurnFailed> {
        let out = self.handle_new(msg).await;
        stored.done();
        out
    }
}

pub mod teams;
pub mod teams_bot;

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str, conversation: &str) -> Inbound {
        Inbound {
            org: "default".into(),
            agent: "default".into(),
            channel: "api".into(),
            conversation: conversation.into(),
            kind: ConversationKind::Direct,
            sender: Some("api:1".into()),
            sender_name: "Ann".into(),
            text: text.into(),
            platform_id: Some("id\0one".into()),
            at: DateTime::<Utc>::UNIX_EPOCH,
            mentioned: true,
            answer: None,
            on_behalf_of: None,
        }
    }

    #[test]
    fn nul_and_controls_become_replacement_characters() {
        let m = message("a\0b\u{7}c\nline\ttab\u{FFFF}", "conv\nsplit")
            .normalised()
            .expect("changed");
        assert_eq!(m.text, "a\u{FFFD}b\u{FFFD}c\nline\ttab\u{FFFD}");
        // Ids keep no line breaks either.
        assert_eq!(m.conversation, "conv\u{FFFD}split");
        assert_eq!(m.platform_id.as_deref(), Some("id\u{FFFD}one"));
        assert_eq!(m.sender.as_deref(), Some("api:1"));
    }

    #[test]
    fn a_clean_message_is_left_as_it_is() {
        let mut m = message("Hello\r\nthere ✓", "c1");
        m.platform_id = Some("p1".into());
        assert_eq!(m.normalised(), None);
    }
}
