//! Steps 5 and 10: the message is stored with its sender and role (spending
//! its id in the same transaction), and the answer with it; then the history
//! is trimmed past its budget.

use super::{line_of, Result, Turn, TurnLoop};
use crate::metrics::Duplicate;
use adapters::{Inbound, Reply};
use memory::store::{LiveSize, NewMessage};
use memory::{MessageAuthor, Principal};

impl TurnLoop {
    /// Step 5: stores `msg` and spends its id `seen` in one transaction.
    /// `None` when another replica stored it first (and is answering it).
    pub(super) async fn store_message(
        &self,
        msg: &Inbound,
        principal: &Principal,
        now: i64,
        seen: Option<&str>,
    ) -> Result<Option<i64>> {
        let (sender, role) = match principal {
            Principal::Human { user_id, role, .. } => (Some(user_id.as_str()), Some(role.as_str())),
            Principal::System(s) => (Some(s.as_str()), Some(s.as_str())),
            Principal::Unpaired => (None, None),
        };
        let author = if matches!(principal, Principal::System(_)) {
            MessageAuthor::System
        } else {
            MessageAuthor::Person
        };
        let line = NewMessage {
            sender,
            sender_role: role,
            ..line_of(msg, author, &msg.text, now)
        };
        let stored = self
            .parts
            .db
            .conversations()
            .insert_message_once(&line, seen)
            .await?;
        if stored.is_none() {
            self.parts.metrics.duplicate(Duplicate::Message);
        }
        Ok(stored)
    }

    /// Step 10, first half: the reply lines name the message they answer, and
    /// are stored in one transaction with what the turn writes besides them:
    /// a retry of its id gets them again. No reply repeats a credential,
    /// whatever a model said or a record kept before the screen knew its
    /// format; a key shown once (`/apikey`) is stored as a placeholder and put
    /// into the reply only as it leaves.
    pub(super) async fn store_answer(&self, turn: &Turn<'_>, replies: &mut [Reply]) -> Result<()> {
        for r in replies.iter_mut() {
            if let std::borrow::Cow::Owned(m) = memory::credentials::masked(&r.text) {
                r.text = m;
            }
        }
        let lines: Vec<NewMessage<'_>> = replies
            .iter()
            .map(|r| line_of(turn.msg, MessageAuthor::Agent, &r.text, turn.now))
            .collect();
        let writes = std::mem::take(&mut *turn.writes.lock().unwrap_or_else(|e| e.into_inner()));
        self.parts
            .db
            .conversations()
            .insert_answer(&lines, turn.message_id, writes)
            .await?;
        // What steward shows once reaches the person, and only them.
        if let Some(secret) = turn.shown_once.get() {
            for r in replies.iter_mut() {
                r.text = r.text.replace(pairing::KEY_SHOWN_ONCE, secret);
            }
        }
        Ok(())
    }

    /// Step 10, second half: trim when the history passes its budget. A
    /// failed trim loses nothing: the slice stays live and is tried again on
    /// the next turn. The size is the one the reply read, or else the one the
    /// turn's first read brought (a turn answered by a receipt reads no
    /// conversation), with this message and its replies added: the check
    /// reads nothing again.
    pub(super) async fn trim(&self, turn: &Turn<'_>, replies: &[Reply]) {
        let msg = turn.msg;
        let read = match turn.live.get() {
            Some(size) => Some(*size),
            None => turn
                .view
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map(|v| LiveSize {
                    messages: v.live.messages + 1,
                    chars: v.live.chars + msg.text.chars().count() as i64,
                }),
        };
        let live = read.map(|size| LiveSize {
            messages: size.messages + replies.len() as i64,
            chars: size.chars
                + replies
                    .iter()
                    .map(|r| r.text.chars().count() as i64)
                    .sum::<i64>(),
        });
        if let Err(e) = self
            .parts
            .lifecycle
            .trim_if_over_budget(msg, &turn.principal, turn.now, live)
            .await
        {
            tracing::error!(error = %e, conversation = %msg.conversation, "trim failed");
        }
    }
}
