//! Step 6: answers to "Remember this?" (yes, no, both) in the speaker's language.

use super::routing::{beside, replaced};
use super::{ReplyParts, Result, Turn, TurnLoop};
use crate::metrics::PolicyOutcome;
use adapters::Reply;
use memory::policy::{self, Consent};
use memory::Cause;
use prompts::answers::Choice;

/// A yes or no to a "Remember this?" the speaker passed over.
pub const LAPSED: &str = "That question lapsed when you wrote again, so nothing was saved. Tell me again if you want me to remember it.";

/// A yes, no or both, the language it was said in, and who said it.
struct Answer<'a> {
    choice: Choice,
    said_in: &'static prompts::answers::Language,
    author: &'a str,
}

impl TurnLoop {
    /// Yes/no to the newest "Remember this?" batch the speaker was asked here.
    pub(super) async fn answer_proposal(&self, t: &Turn<'_>, text: &str) -> Result<Option<Reply>> {
        // A yes or no in the person's language is steward's to answer, in
        // that language (`prompts::answers`); a button's is English.
        let Some(author) = t.principal.user_id() else {
            return Ok(None);
        };
        let read = match t.msg.answer {
            Some(_) => None,
            None if prompts::answers::read(text).is_none() => return Ok(None),
            None => {
                // "ja" answering "Remember this? Wants answers in dansk" is
                // Danish: the language asked for first, then the one kept.
                let preferred = match self.asked_reply_language(t, author).await? {
                    Some(asked) => Some(asked),
                    None => self.reply_language(t, author).await?,
                };
                prompts::answers::read_preferring(text, preferred)
            }
        };
        let (batch, choice, said_in) = match (t.msg.answer, read) {
            (Some((batch, true)), _) => (Some(batch), Choice::Yes, prompts::answers::english()),
            (Some((batch, false)), _) => (Some(batch), Choice::No, prompts::answers::english()),
            (None, Some(a)) => (None, a.choice, a.language),
            (None, None) => return Ok(None),
        };
        let yes = choice != Choice::No;
        let pending = match self.answered_proposals(t, author, batch, said_in).await? {
            Ok(pending) => pending,
            Err(reply) => return Ok(Some(reply)),
        };
        let mut parts = ReplyParts::default();
        for rec in pending {
            if yes {
                let answer = Answer {
                    choice,
                    said_in,
                    author,
                };
                self.keep_consented(t, &rec, &answer, &mut parts).await?;
            } else {
                self.parts.db.records().reject(t.org(), rec.id).await?;
            }
        }
        if !yes {
            parts.notes.push(said_in.declined.into());
        }
        Ok(Some(self.render(t, parts)))
    }

    /// The proposals a yes or no answers (`batch`: the question a button
    /// names), or the reply when it answers none: a typed answer answers the
    /// question asked at the speaker's previous line here, nothing older,
    /// and one passed over has lapsed.
    /// The reply language a "Remember this?" waiting for the speaker here
    /// asks for, when the answers table has it.
    async fn asked_reply_language(
        &self,
        t: &Turn<'_>,
        author: &str,
    ) -> Result<Option<&'static prompts::answers::Language>> {
        let pending = self
            .parts
            .db
            .records()
            .pending_proposals(t.org(), t.agent(), &t.msg.conversation, author, t.now)
            .await?;
        Ok(super::answer::language_asked_for(&pending))
    }

    async fn answered_proposals(
        &self,
        t: &Turn<'_>,
        author: &str,
        batch: Option<i64>,
        said_in: &'static prompts::answers::Language,
    ) -> Result<std::result::Result<Vec<memory::MemoryRecord>, Reply>> {
        let mut pending = self
            .parts
            .db
            .records()
            .pending_proposals(t.org(), t.agent(), &t.msg.conversation, author, t.now)
            .await?;
        match batch {
            // A button names the question it answers.
            Some(b) => pending.retain(|r| r.batch == Some(b)),
            // A typed yes or no answers the question asked at the speaker's
            // previous line here, nothing older: one passed over has lapsed.
            None if !pending.is_empty() => {
                let asked = self
                    .parts
                    .db
                    .conversations()
                    .previous_line_of(
                        t.org(),
                        t.agent(),
                        &t.msg.conversation,
                        author,
                        t.message_id,
                    )
                    .await?
                    .map(|(id, _)| id);
                if pending[0].batch != asked {
                    for rec in &pending {
                        self.parts.db.records().lapse(t.org(), rec.id).await?;
                    }
                    return Ok(Err(t.reply(LAPSED)));
                }
            }
            None => {}
        }
        if pending.is_empty() {
            return Ok(Err(t.reply(if batch.is_some() {
                "That question was not asked to you, or it has expired."
            } else {
                said_in.nothing_waiting
            })));
        }
        Ok(Ok(pending))
    }

    /// A yes (or "both") to `rec`: kept if the speaker may still keep it,
    /// with what it replaces or is kept beside, and its receipt in `parts`.
    async fn keep_consented(
        &self,
        t: &Turn<'_>,
        rec: &memory::MemoryRecord,
        answer: &Answer<'_>,
        parts: &mut ReplyParts,
    ) -> Result<()> {
        // Authority is checked again at consent time: a role, or who
        // `memory.write_access` lists, may have changed since.
        let settings = self.parts.learning.policy(&rec.agent);
        if let Consent::Refuse(reason) = policy::consent(&t.principal, rec.scope, settings) {
            self.parts.metrics.policy(PolicyOutcome::Refused);
            self.parts.db.records().reject(t.org(), rec.id).await?;
            parts.notes.push(reason.explain().into());
            return Ok(());
        }
        let replaces = self
            .replaces(
                t.org(),
                &rec.agent,
                rec.scope,
                rec.owner.as_deref(),
                (&rec.subject, &rec.content),
            )
            .await?;
        let run = format!("turn:{}", t.message_id);
        let conflicts = self.asked_conflicts(t, rec).await?;
        if answer.choice == Choice::Both {
            for old in &conflicts {
                let keep = memory::store::KeepBeside {
                    org: t.org(),
                    old: old.id,
                    new: rec.id,
                    actor: answer.author,
                    run_id: &run,
                    now: t.now,
                };
                self.parts.db.records().keep_beside(&keep).await?;
            }
        }
        self.parts
            .db
            .records()
            .activate_kept(
                t.org(),
                rec.id,
                Cause::Live,
                &run,
                t.now,
                self.parts.beliefs.as_ref(),
            )
            .await?;
        if answer.choice == Choice::Yes {
            self.replace_on_consent(t, rec, &conflicts, &run).await?;
        }
        self.parts.metrics.policy(PolicyOutcome::Written);
        let kept = answer
            .said_in
            .receipt(crate::learning::place(rec.scope), rec.id);
        parts
            .receipts
            .push(match (answer.choice, conflicts.as_slice(), replaces) {
                (Choice::Both, [_, ..], _) => format!("{kept} {}", beside(&conflicts)),
                (_, [_, ..], _) => format!("{kept} {}", replaced(&conflicts)),
                (_, [], Some(old)) => format!("{kept} It {old}."),
                (_, [], None) => kept,
            });
        Ok(())
    }
}

impl TurnLoop {
    /// Step 6: a command (`/forget`, `/pair approve`, …), an answer to an
    /// external tool's question, or an answer to "Remember this?": the
    /// turn's reply, when the message is one of these.
    pub(super) async fn command_or_answer(
        &self,
        t: &Turn<'_>,
        text: &str,
    ) -> Result<Option<Reply>> {
        if let Some(r) = self.parts.commands.run(&t.asker(), text).await? {
            return Ok(Some(t.reply(r)));
        }
        if let Some(mcp) = self.parts.mcp.as_ref().filter(|m| m.configured()) {
            let (roles, run) = (self.roles_now(t).await?, format!("turn:{}", t.message_id));
            let place = self.tool_place(t, &roles, &run);
            if let Some(r) = mcp.answer_waiting(place, text).await? {
                return Ok(Some(t.reply(r)));
            }
        }
        self.answer_proposal(t, text).await
    }
}
