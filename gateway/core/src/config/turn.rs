//! `[pairing]` and `[turn]`: who may talk to steward, and what one turn reads.

use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use validator::Validate;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DmPolicy {
    /// Unknown senders get a pairing hint and may `/pair`.
    Pairing,
    /// Only `allow_from` and paired senders are answered.
    Allowlist,
    /// Anyone is answered; unknown senders are unpaired (nothing is learned from them).
    Open,
    /// Direct messages are ignored.
    Disabled,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GroupPolicy {
    /// Unpaired members of a thread are answered as unpaired.
    Open,
    /// Only `allow_from` and paired senders are answered.
    Allowlist,
    /// Only paired senders are answered.
    Paired,
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct PairingConfig {
    #[default(DmPolicy::Pairing)]
    pub dm_policy: DmPolicy,
    #[default(GroupPolicy::Open)]
    pub group_policy: GroupPolicy,
    /// Stored user ids let in without pairing (as unpaired senders).
    pub allow_from: Vec<String>,
    #[default = 60]
    #[validate(range(min = 1, max = 10_080))]
    pub code_ttl_minutes: i64,
    #[default = 3]
    #[validate(range(min = 1, max = 1000))]
    pub max_pending_per_channel: i64,
    #[default = 60]
    #[validate(range(min = 0, max = 86_400))]
    pub hint_interval_seconds: i64,
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct TurnConfig {
    /// In group threads, answer only when the agent is mentioned.
    #[default = true]
    pub require_mention: bool,
    /// Longest accepted message text, in characters.
    #[default = 8000]
    #[validate(range(min = 1, max = 1_000_000))]
    pub max_message_chars: usize,
    /// Earlier live lines of the conversation a reply sees, at most (0: none).
    #[default = 12]
    #[validate(range(min = 0, max = 200))]
    pub history_messages: usize,
    /// The same window in characters; the newest lines are kept.
    #[default = 6000]
    #[validate(range(min = 0, max = 200_000))]
    pub history_chars: usize,
    /// Which replies a model is shown the window for.
    #[default(HistoryFor::Every)]
    pub history_for: HistoryFor,
    /// Org policy and the agent's notes go whole into a model's system
    /// prompt, oldest first, when together they fit in this many characters:
    /// the same for every turn of the agent, so a server's prompt cache keeps
    /// them and a turn only processes its own message. Beyond, or at 0, each
    /// turn is given the records retrieved for its message.
    #[default = 4000]
    #[validate(range(min = 0, max = 200_000))]
    pub standing_notes_chars: usize,
}

/// `turn.history_for`: which replies a model sees the conversation's window for.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HistoryFor {
    /// Every reply.
    Every,
    /// Only a message that reads as a follow-up ("and the weekly one?", a
    /// word or two), with the exchange it follows (the speaker's previous
    /// line and what came after it); a standalone question is answered from memory alone,
    /// which a small model answers faster and without copying its earlier
    /// answers.
    FollowUps,
}
