//! Step 7b: a correction of the previous answer is a skill's evidence, not memory.

use super::{Result, Turn, TurnLoop};
use crate::llm::offline;
use crate::skills::{CorrectionAt, Learned};
use adapters::Reply;
use memory::authz::Action;
use memory::{Candidate, ItemChannel};

impl TurnLoop {
    /// A paired person's correction of the previous answer, or an
    /// administrator's "make this a skill" (`/learn`): kept as a skill's
    /// evidence and answered with what it led to. `None` for other lines.
    pub(super) async fn learn_skill(&self, t: &Turn<'_>, text: &str) -> Result<Option<Reply>> {
        if !self.parts.skills.enabled() || t.principal.user_id().is_none() {
            return Ok(None);
        }
        let lower = text.trim_end_matches(['.', '!']).to_lowercase();
        if lower == "/learn" || lower == "make this a skill" {
            if let Err(denial) = memory::authz::authorize(t.asker().actor(), Action::CurateSkills) {
                return Ok(Some(t.reply(match denial {
                    memory::authz::Denial::NotAdmin => "Only administrators turn corrections into skills; your corrections are kept for them to review.".to_string(),
                    other => format!("Refused: {other}. Nothing was drafted."),
                })));
            }
            let drafted = self
                .parts
                .skills
                .learn_now(t.org(), t.agent(), &t.msg.conversation, t.now)
                .await?;
            return Ok(Some(t.reply(match drafted {
                Some(r) => format!(
                    "Drafted skill “{}” rev {} from the corrections of this kind of request. Review it with /skill show {}.",
                    r.slug, r.rev, r.id
                ),
                None => "There is no correction in this conversation to learn from yet.".into(),
            })));
        }
        let Some(rule) = crate::skills::corrections::read_correction(text) else {
            return Ok(None);
        };
        self.keep_correction(t, text, &rule).await
    }

    /// The extractor model labelled `clause` of a paired person's line a
    /// correction: kept as a skill's evidence only when the line passes the
    /// rules' screens (`corrections::read_labelled`). `None` otherwise.
    pub(super) async fn learn_labelled(
        &self,
        t: &Turn<'_>,
        text: &str,
        clause: &str,
    ) -> Result<Option<Reply>> {
        if !self.parts.skills.enabled() || t.principal.user_id().is_none() {
            return Ok(None);
        }
        let Some(rule) = crate::skills::corrections::read_labelled(text, clause) else {
            return Ok(None);
        };
        self.keep_correction(t, text, &rule).await
    }

    /// `rule`, read from `text`, kept as a correction of the previous answer
    /// and answered with what it led to; `None` when it corrects nothing.
    pub(super) async fn keep_correction(
        &self,
        t: &Turn<'_>,
        text: &str,
        rule: &str,
    ) -> Result<Option<Reply>> {
        let (history, _) = self.conversation(t).await?;
        let learned = self
            .parts
            .skills
            .observe_rule(
                &CorrectionAt {
                    org: t.org(),
                    agent: t.agent(),
                    conversation: &t.msg.conversation,
                    principal: &t.principal,
                    message_id: t.message_id,
                    text,
                    history: &history,
                    now: t.now,
                },
                rule,
            )
            .await?;
        let Some(learned) = learned else {
            return Ok(None);
        };
        let noted = format!("Thanks, noted as a correction of my last answer: {rule}.");
        let next = match learned {
            Learned::Noted => String::new(),
            Learned::Proposed(r) if t.principal.is_human_admin() => format!(
                "\nCorrections like this one are now skill proposal “{}” rev {}. Review it with /skill show {}.",
                r.slug, r.rev, r.id
            ),
            Learned::Proposed(r) => format!(
                "\nCorrections like this one are now a proposed procedure (“{}”) for an administrator to review.",
                r.slug
            ),
            Learned::Suspended(r) => format!(
                "\nThe procedure “{}” rev {} I followed was corrected too often, so I stopped following it; an administrator will review it.",
                r.slug, r.rev
            ),
        };
        Ok(Some(t.reply(format!("{noted}{next}"))))
    }

    /// A correction whose subject no pattern named ("Correction: deploys now
    /// happen only before 14:00"), or one named by no live note whose value
    /// carries into a note (below), takes the subject of the live agent note
    /// it shares the most words of a topic with — two at least, or one and a
    /// new value of the shape of one the note holds ("Der Code vom
    /// Schlüsselkasten an Tor B ist geändert, jetzt 9082" of "… Kasten neben
    /// Tor B, Zahlencode 4471") — so it supersedes that note under the
    /// subject rule. Function words name no topic: a German shift change
    /// sharing "ist" and "um" with the hotline's note replaces nothing.
    /// Other items are kept as they are.
    pub(super) async fn correction_subject(
        &self,
        t: &Turn<'_>,
        item: &Candidate,
    ) -> Result<Candidate> {
        if item.channel == ItemChannel::Personal {
            let keyed = offline::keyed_by_length(item);
            return self
                .personal_change_subject(t, keyed.as_ref().unwrap_or(item))
                .await;
        }
        if item.channel != ItemChannel::Operational || item.kind != "correction" {
            return Ok(item.clone());
        }
        // A subject a pattern named ("the airport shuttle is now 180 MAD")
        // stands when a live note is on it; else the note it changes is found
        // by its words, as an unkeyed correction's is, when its new value
        // carries into that note: a note holding more than the value (the
        // shuttle's times, its driver) is never replaced by the value alone.
        let keyed = !item.subject.starts_with(offline::UNKEYED);
        if keyed {
            let on_it = self
                .parts
                .db
                .records()
                .live_on_subject(
                    t.org(),
                    t.agent(),
                    memory::Scope::AgentNotes,
                    None,
                    &item.subject,
                )
                .await?;
            if !on_it.is_empty() {
                return Ok(item.clone());
            }
        }
        let scope = self.retrieval_scope(t).await?;
        let found = self
            .parts
            .db
            .records()
            .retrieve(&scope, &item.content, 5)
            .await?;
        let note = found
            .into_iter()
            .filter(|r| r.record.scope == memory::Scope::AgentNotes)
            .filter(|r| !keyed || offline::carried_into(&r.record.content, &item.content).is_some())
            .filter_map(|r| {
                let old = &r.record.content;
                let shared = crate::beliefs::topic_words_shared(&item.content, old);
                let valued = offline::gives_a_new_value_of(old, &item.content);
                (shared >= 2 || (shared == 1 && valued)).then_some(((shared, valued), r))
            })
            .max_by_key(|(named, _)| *named)
            .map(|(_, r)| r);
        Ok(match note {
            Some(r) => Candidate {
                subject: r.record.written.subject,
                ..item.clone()
            },
            None => item.clone(),
        })
    }

    /// A fact of the speaker's that says one of theirs no longer holds ("…
    /// er ikke på Havbris lenger" of "Jeg er fast plassert på Havbris") takes
    /// that record's subject, so it is asked as a change of it and a yes
    /// replaces it (`offline::no_longer_holds`); it is kept without saying
    /// what no longer holds (`offline::as_changed`).
    async fn personal_change_subject(&self, t: &Turn<'_>, item: &Candidate) -> Result<Candidate> {
        /// The speaker's records read for it, at most.
        const MOST: i64 = 30;
        // Most facts say nothing no longer holds: their turn reads no more.
        if !offline::is_a_fact_of_theirs(item) || !offline::says_something_former(&item.content) {
            return Ok(item.clone());
        }
        let scope = self.retrieval_scope(t).await?;
        let own = self.parts.db.records().speakers_own(&scope, MOST).await?;
        let changed = own.into_iter().rev().find(|old| {
            old.scope.is_personal()
                && old.subject != item.subject
                && offline::no_longer_holds(&item.content, &old.content)
        });
        Ok(match changed {
            Some(old) => Candidate {
                subject: old.subject.clone(),
                content: offline::as_changed(&item.content, &old.content),
                ..item.clone()
            },
            None => item.clone(),
        })
    }
}
