//! Step 6: answers to "Remember this?" (yes, no, both) in the speaker's
//! language — and the same answers given on the person's "Your memory"
//! page to the contradiction questions waiting for them
//! ([`TurnLoop::waiting_questions`], [`TurnLoop::answer_waiting`]): one
//! path keeps, rejects or keeps beside, whichever surface the answer came from.

use super::routing::{beside, replaced, CONFLICTS_WITH};
use super::{ReplyParts, Result, Turn, TurnLoop};
use crate::metrics::PolicyOutcome;
use adapters::Reply;
use memory::policy::{self, Consent};
use memory::{Cause, MemoryRecord, Principal};
use prompts::answers::Choice;

/// A yes or no to a "Remember this?" the speaker passed over.
pub const LAPSED: &str = "That question lapsed when you wrote again, so nothing was saved. Tell me again if you want me to remember it.";

/// A yes, no or both, the language it was said in, who said it and where:
/// what keeping or turning down a proposal on their word needs.
struct Answer<'a> {
    choice: Choice,
    said_in: &'static prompts::answers::Language,
    author: &'a str,
    org: &'a str,
    /// Checked again at consent time: a role may have changed since.
    principal: &'a Principal,
    /// The run the answer's revisions are named after.
    run: String,
    now: i64,
}

/// A contradiction question waiting for a person: the proposals of one
/// "Remember this?" (a batch), each with the records of theirs it conflicts with.
#[derive(Debug, Clone)]
pub struct WaitingQuestion {
    /// The question's batch: the message it was asked at.
    pub batch: i64,
    /// Where it was asked.
    pub conversation: Option<String>,
    /// Each proposal, and what it conflicts with (empty for one asked
    /// beside a conflicting one in the same question).
    pub proposals: Vec<(MemoryRecord, Vec<MemoryRecord>)>,
}

impl TurnLoop {
    /// Yes/no to the newest "Remember this?" batch the speaker was asked here.
    pub(super) async fn answer_proposal(&self, t: &Turn<'_>, text: &str) -> Result<Option<Reply>> {
        // A yes or no in the person's language is steward's to answer, in
        // that language (`prompts::answers`); a button's is English.
        let Some(author) = t.principal.user_id() else {
            return Ok(None);
        };
        // "oui, mets à jour" answers a question waiting (`answers::Reach`).
        let reach = prompts::answers::Reach::Waiting;
        // A typed answer reads the proposals waiting for its language: they
        // are what it answers, not read again (`waiting`).
        let (read, waiting) = match t.msg.answer {
            Some(_) => (None, None),
            None if prompts::answers::read_as_far_as(text, reach).is_none() => return Ok(None),
            None => {
                // "ja" answering "Remember this? Wants answers in dansk" is
                // Danish: the language asked for first, then the one kept,
                // then the one the question's words are in ("ja" to "Vanaf
                // nu geldt …" is Dutch).
                let pending = self.waiting_here(t, author).await?;
                let preferred = match super::answer::language_asked_for(&pending) {
                    Some(asked) => Some(asked),
                    None => match self.reply_language(t, author).await? {
                        Some(kept) => Some(kept),
                        None => {
                            let asked: Vec<&str> =
                                pending.iter().map(|r| r.content.as_str()).collect();
                            crate::context::written_in(&asked.join("\n"))
                        }
                    },
                };
                (
                    prompts::answers::read_preferring(text, preferred, reach),
                    Some(pending),
                )
            }
        };
        let (batch, choice, said_in) = match (t.msg.answer, read) {
            (Some((batch, true)), _) => (Some(batch), Choice::Yes, prompts::answers::english()),
            (Some((batch, false)), _) => (Some(batch), Choice::No, prompts::answers::english()),
            (None, Some(a)) => (None, a.choice, a.language),
            (None, None) => return Ok(None),
        };
        let pending = match self
            .answered_proposals(t, author, batch, said_in, waiting)
            .await?
        {
            Ok(pending) => pending,
            // With none waiting, a yes only the longer reach reads is a
            // message of its own ("yes, use the other table" corrects).
            Err(_) if t.msg.answer.is_none() && prompts::answers::read(text).is_none() => {
                return Ok(None)
            }
            Err(reply) => return Ok(Some(reply)),
        };
        let answer = Answer {
            choice,
            said_in,
            author,
            org: t.org(),
            principal: &t.principal,
            run: format!("turn:{}", t.message_id),
            now: t.now,
        };
        let mut parts = ReplyParts::default();
        self.answer_each(&answer, &pending, &mut parts).await?;
        Ok(Some(self.render(t, parts)))
    }

    /// `answer` to each of `pending`: a yes or "both" keeps it, a no turns
    /// it down. An answer to a contradiction question is audited
    /// (`memory.conflict_answer`, detail "both with:3,5").
    async fn answer_each(
        &self,
        answer: &Answer<'_>,
        pending: &[MemoryRecord],
        parts: &mut ReplyParts,
    ) -> Result<()> {
        for rec in pending {
            let conflicts = self.asked_conflicts(answer.org, rec).await?;
            if !conflicts.is_empty() {
                let ids: Vec<i64> = conflicts.iter().map(|c| c.id).collect();
                let said = match answer.choice {
                    Choice::Yes => "yes",
                    Choice::No => "no",
                    Choice::Both => "both",
                };
                self.parts
                    .db
                    .audit()
                    .append(
                        answer.org,
                        answer.author,
                        "memory.conflict_answer",
                        &format!("record:{}", rec.id),
                        &memory::admin_text!(
                            "{} {}{}",
                            said,
                            CONFLICTS_WITH,
                            memory::admin_text::Ids(&ids)
                        ),
                        answer.now,
                    )
                    .await?;
            }
            if answer.choice == Choice::No {
                self.parts.db.records().reject(answer.org, rec.id).await?;
            } else {
                self.keep_consented(answer, rec, conflicts, parts).await?;
            }
        }
        if answer.choice == Choice::No {
            parts.notes.push(answer.said_in.declined.into());
        }
        Ok(())
    }

    /// The contradiction questions waiting for `person`, newest first:
    /// every unexpired proposal of their own memory they were asked, in any
    /// conversation, grouped by question, where one conflicts with a record
    /// they keep. Nobody else's are read.
    pub async fn waiting_questions(
        &self,
        org: &str,
        person: &str,
        now: i64,
    ) -> Result<Vec<WaitingQuestion>> {
        let pending = self.parts.db.records().pending_of(org, person, now).await?;
        let mut out: Vec<WaitingQuestion> = Vec::new();
        for rec in pending {
            if !rec.scope.is_personal() || rec.owner.as_deref() != Some(person) {
                continue;
            }
            let Some(batch) = rec.batch else { continue };
            let conflicts = self.asked_conflicts(org, &rec).await?;
            match out.iter_mut().find(|q| q.batch == batch) {
                Some(q) => q.proposals.push((rec, conflicts)),
                None => out.push(WaitingQuestion {
                    batch,
                    conversation: rec.conversation.clone(),
                    proposals: vec![(rec, conflicts)],
                }),
            }
        }
        out.retain(|q| q.proposals.iter().any(|(_, c)| !c.is_empty()));
        Ok(out)
    }

    /// `principal`'s answer to their contradiction question `batch`, given
    /// on their "Your memory" page: the same keeping, turning down or
    /// keeping beside as the answer in chat, its revisions in run
    /// `question:<batch>`. `None` when no such question waits for them (never
    /// asked to them, answered, or expired); else what the answer did.
    pub async fn answer_waiting(
        &self,
        org: &str,
        principal: &Principal,
        batch: i64,
        choice: Choice,
        now: i64,
    ) -> Result<Option<String>> {
        let Some(person) = principal.user_id() else {
            return Ok(None);
        };
        let Some(question) = self
            .waiting_questions(org, person, now)
            .await?
            .into_iter()
            .find(|q| q.batch == batch)
        else {
            return Ok(None);
        };
        let pending: Vec<MemoryRecord> = question.proposals.into_iter().map(|(r, _)| r).collect();
        let answer = Answer {
            choice,
            said_in: prompts::answers::english(),
            author: person,
            org,
            principal,
            run: format!("question:{batch}"),
            now,
        };
        let mut parts = ReplyParts::default();
        self.answer_each(&answer, &pending, &mut parts).await?;
        let said: Vec<String> = parts.receipts.into_iter().chain(parts.notes).collect();
        Ok(Some(said.join(" ")))
    }

    /// The "Remember this?" proposals waiting for the speaker here.
    async fn waiting_here(&self, t: &Turn<'_>, author: &str) -> Result<Vec<MemoryRecord>> {
        Ok(self
            .parts
            .db
            .records()
            .pending_proposals(t.org(), t.agent(), &t.msg.conversation, author, t.now)
            .await?)
    }

    /// The proposals a yes or no answers (`batch`: the question a button
    /// names), or the reply when it answers none: a typed answer answers the
    /// question asked at the speaker's previous line here, nothing older,
    /// and one passed over has lapsed. `waiting`: the proposals waiting here,
    /// when this turn has read them already.
    async fn answered_proposals(
        &self,
        t: &Turn<'_>,
        author: &str,
        batch: Option<i64>,
        said_in: &'static prompts::answers::Language,
        waiting: Option<Vec<MemoryRecord>>,
    ) -> Result<std::result::Result<Vec<memory::MemoryRecord>, Reply>> {
        let mut pending = match waiting {
            Some(read) => read,
            None => self.waiting_here(t, author).await?,
        };
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

    /// A yes (or "both") to `rec`, asked with `conflicts`: kept if the
    /// speaker may still keep it, with what it replaces or is kept beside,
    /// and its receipt in `parts`.
    async fn keep_consented(
        &self,
        answer: &Answer<'_>,
        rec: &MemoryRecord,
        conflicts: Vec<MemoryRecord>,
        parts: &mut ReplyParts,
    ) -> Result<()> {
        let org = answer.org;
        // Authority is checked again at consent time: a role, or who
        // `memory.write_access` lists, may have changed since.
        let settings = self.parts.learning.policy(&rec.agent);
        if let Consent::Refuse(reason) = policy::consent(answer.principal, rec.scope, settings) {
            self.parts.metrics.policy(PolicyOutcome::Refused);
            self.parts.db.records().reject(org, rec.id).await?;
            parts.notes.push(reason.explain().into());
            return Ok(());
        }
        let replaces = self
            .replaces(
                org,
                &rec.agent,
                rec.scope,
                rec.owner.as_deref(),
                (&rec.subject, &rec.content),
            )
            .await?;
        let run = answer.run.as_str();
        if answer.choice == Choice::Both {
            for old in &conflicts {
                let keep = memory::store::KeepBeside {
                    org,
                    old: old.id,
                    new: rec.id,
                    actor: answer.author,
                    run_id: run,
                    now: answer.now,
                };
                self.parts.db.records().keep_beside(&keep).await?;
            }
        }
        let activated = self
            .parts
            .db
            .records()
            .activate_kept(
                org,
                rec.id,
                Cause::Live,
                run,
                answer.now,
                self.parts.beliefs.as_ref(),
            )
            .await?;
        if answer.choice == Choice::Yes {
            self.replace_on_consent(org, rec, &conflicts, run, answer.now)
                .await?;
        }
        self.parts.metrics.policy(PolicyOutcome::Written);
        let kept = answer
            .said_in
            .receipt(crate::learning::place(rec.scope), rec.id);
        let mut named: Vec<i64> = conflicts.iter().map(|c| c.id).collect();
        named.extend(replaces.as_ref().map(|(id, _)| *id));
        let judged = self.also_replaced(org, &activated.retired, &named).await?;
        parts
            .receipts
            .push(match (answer.choice, conflicts.as_slice(), replaces) {
                (Choice::Both, [_, ..], _) => format!("{kept} {}{judged}", beside(&conflicts)),
                (_, [_, ..], _) => format!("{kept} {}{judged}", replaced(&conflicts)),
                (_, [], Some((_, old))) => format!("{kept} It {old}.{judged}"),
                (_, [], None) => format!("{kept}{judged}"),
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
