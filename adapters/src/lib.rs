//! Channel adapters. Each turns its platform's events into one normalised
//! [`Inbound`] message and hands it to a [`TurnHandler`]; replies come back as
//! [`Reply`] values the adapter renders in its platform's format.
//!
//! Architecture Invariant: platform types (serenity models, Teams Activity
//! JSON, HTTP details) stay in this crate; nothing past `Inbound` knows them.

pub mod discord;
pub mod retry;

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

/// One normalised inbound message (SPEC §4 step 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    pub org: String,
    pub agent: String,
    /// `discord`, `teams`, `dashboard`, `api`, `cli`, …
    pub channel: String,
    pub conversation: String,
    pub kind: ConversationKind,
    /// The stored user id (`discord:<snowflake>`, `teams:<id>`, `admin`, …);
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

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TurnFailed(pub String);

/// The turn loop, as an adapter sees it.
#[async_trait::async_trait]
pub trait TurnHandler: Send + Sync {
    async fn handle(&self, msg: Inbound) -> Result<Vec<Reply>, TurnFailed>;
}

pub mod teams;
