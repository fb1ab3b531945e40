//! Step 2: a message seen before is answered with its stored reply, and a retry waits for its turn running here.

use super::{Outcome, Refused, Result, TurnLoop};
use crate::metrics::Duplicate;
use adapters::{Inbound, Reply};
use dashmap::DashMap;
use memory::store::{ConversationView, Opening, ViewOf};
use std::sync::Arc;

/// The platform ids whose turns run on this replica: a retry that arrives
/// while its message's turn runs waits for that turn, then gets its stored
/// reply (it is not a second turn, nor a refusal).
#[derive(Default)]
pub(super) struct InFlight(
    DashMap<String, Arc<tokio::sync::Mutex<()>>, foldhash::fast::RandomState>,
);

/// A turn's hold on its platform id ([`InFlight::enter`]).
pub(super) struct Entered<'a> {
    map: &'a InFlight,
    key: String,
    _held: tokio::sync::OwnedMutexGuard<()>,
}

impl InFlight {
    /// Wait until no other turn of this replica holds `key`, and hold it.
    pub(super) async fn enter(&self, key: &str) -> Entered<'_> {
        let lock = self.0.entry(key.to_string()).or_default().clone();
        Entered {
            map: self,
            key: key.to_string(),
            _held: lock.lock_owned().await,
        }
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        // The last holder removes the entry: the map holds one reference and
        // this guard the other; a waiter holds a third.
        self.map
            .0
            .remove_if(&self.key, |_, lock| Arc::strong_count(lock) <= 2);
    }
}

/// What a turn's first read (`Conversations::opening`) told of the speaker
/// besides who they are, so the turn reads none of it again: the work
/// roles they hold, the agent's skills generation, and whether steward's
/// promises are owed to them (approved with `/pair`, not yet promised).
#[derive(Debug, Clone, Default)]
pub(super) struct Known {
    pub(super) roles: Vec<String>,
    pub(super) skill_generation: Option<i64>,
    pub(super) promises_owed: bool,
}

/// The audit actions a turn's first read asks about its speaker: approved
/// through `/pair`, and promised (`TurnLoop::first_contact`) — those the
/// store keeps a copy of per speaker (`memory::store::SPEAKER_AUDIT`).
pub(super) const APPROVED: &str = memory::store::SPEAKER_AUDIT[0];

pub(super) const PROMISED: &str = memory::store::SPEAKER_AUDIT[1];

impl Known {
    fn of(o: &memory::store::Opened) -> Known {
        let audited = |a: &str| o.audited.iter().any(|x| x == a);
        Known {
            roles: o.roles.clone(),
            skill_generation: o.skill_generation,
            promises_owed: audited(APPROVED) && !audited(PROMISED),
        }
    }
}

/// The replies stored for a message ([`memory::store::Answer`]), as its turn
/// gave them: one asking "Remember this?" carries the batch it asks about,
/// which is the message's own id.
pub(super) fn stored_replies(a: memory::store::Answer) -> Vec<Reply> {
    a.replies
        .into_iter()
        .map(|m| Reply {
            proposal: m
                .text
                .lines()
                .any(|l| l.starts_with("Remember this? "))
                .then_some(a.message),
            conversation: m.conversation,
            // One stored before replies were screened shows no credential either.
            text: memory::credentials::masked(&m.text).into_owned(),
        })
        .collect()
}

/// The id a redelivery of `msg` is known by: the platform's message id within
/// its sender's own namespace, so one API user's `order-1` never drops another's.
pub(super) fn seen_key(msg: &Inbound) -> Option<String> {
    let id = msg.platform_id.as_deref()?;
    Some(format!("{}/{id}", msg.sender.as_deref().unwrap_or("")))
}

impl TurnLoop {
    /// Which part of `msg`'s conversation a reply reads: the live lines of
    /// the window (none when `turn.history_chars` is 0) and three summaries.
    pub(super) fn view_of<'m>(&self, msg: &'m Inbound) -> ViewOf<'m> {
        let (lines, chars) = (
            self.parts.cfg.turn.history_messages,
            self.parts.cfg.turn.history_chars,
        );
        ViewOf {
            agent: &msg.agent,
            conversation: &msg.conversation,
            lines: if chars == 0 {
                0
            } else {
                i64::try_from(lines).unwrap_or(i64::MAX)
            },
            summaries: 3,
        }
    }
}

/// What the turn's first read found ([`TurnLoop::open`]).
pub(super) struct Opened {
    /// Who the sender is, or the pairing store's error (denied at step 4).
    pub(super) known: std::result::Result<Option<pairing::User>, pairing::PairingError>,
    /// The conversation as read before the message is stored.
    pub(super) view: Option<ConversationView>,
    /// The message's line when it was stored already and never answered.
    pub(super) stored: Option<i64>,
    /// What the read told of the speaker besides who they are.
    pub(super) first_read: Option<Known>,
}

impl TurnLoop {
    /// Step 2 and the lookup of step 4 in one read: a message whose id `seen`
    /// was spent gets the reply stored for it (`Err`, the outcome to give);
    /// one stored and never answered runs its turn now.
    pub(super) async fn open(
        &self,
        msg: &Inbound,
        seen: Option<&str>,
    ) -> Result<std::result::Result<Opened, Outcome>> {
        let opened = self
            .parts
            .pairing
            .open_turn(&Opening {
                org: &msg.org,
                channel: &msg.channel,
                platform_id: seen,
                stored_id: msg.sender.as_deref(),
                view: Some(self.view_of(msg)),
                audited: &[APPROVED, PROMISED],
            })
            .await;
        let first_read = opened.as_ref().ok().map(Known::of);
        let (known, view, stored) = match opened {
            Ok(o) if o.seen => {
                self.parts.metrics.duplicate(Duplicate::Message);
                let spent = seen.unwrap_or_default();
                match self
                    .parts
                    .db
                    .conversations()
                    .answer_of(&msg.org, &msg.channel, spent)
                    .await?
                {
                    Some(a) if !a.replies.is_empty() => {
                        return Ok(Err(Outcome::Again(stored_replies(a))))
                    }
                    // Stored, never answered: its turn runs (and is limited) now.
                    Some(a) => (Ok(o.user), None, Some(a.message)),
                    None => return Ok(Err(Outcome::refused(Refused::InProgress))),
                }
            }
            Ok(o) => (Ok(o.user), o.view, None),
            // Denied at step 4 (fail closed), after the refusals below.
            Err(e) => (Err(e), None, None),
        };
        Ok(Ok(Opened {
            known,
            view,
            stored,
            first_read,
        }))
    }
}
