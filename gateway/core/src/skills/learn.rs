//! How the loop learns: a person's correction observed, a proposal drafted
//! or revised, a revision in force corrected or suspended, and an
//! administrator's approval, rejection or rollback.

use super::drafting::group_near;
use super::{corrections, draft, ready, CorrectionAt, Learned, Skills, STEWARD};
use crate::error::Result;
use memory::skill::{self, Correction, SkillRefusal, SkillRevision, SkillStatus};
use memory::store::{Curator, NewCorrection, NewProposal};
use memory::{MessageAuthor, Principal, StoredMessage};

/// An administrator's act on a skill's revisions.
enum Curation<'a> {
    Approve { id: i64, hash: &'a str },
    Reject { id: i64 },
    Rollback { skill_id: i64, to: Option<i64> },
}

/// Who a curation act is recorded as: `principal`, if it may curate.
fn curator(principal: &Principal) -> std::result::Result<String, SkillRefusal> {
    skill::decide_curation(principal)?;
    Ok(principal.author_id().unwrap_or_default())
}

/// The exchange a correction corrects: the assistant's line just before it,
/// and the person's request that line answered.
pub(super) fn corrected_exchange(
    history: &[StoredMessage],
) -> Option<(&StoredMessage, &StoredMessage)> {
    let (answer, earlier) = history.split_last()?;
    if answer.written_by() != MessageAuthor::Agent {
        return None;
    }
    let task = earlier
        .iter()
        .rev()
        .find(|m| m.written_by() != MessageAuthor::Agent)?;
    (task.written_by() == MessageAuthor::Person && task.sender.is_some() && !states(&task.text))
        .then_some((task, answer))
}

/// Whether a person's line told the assistant something rather than asked
/// for something: an `@`-directive, or a statement the rules read as one to
/// remember. The assistant's line after it is a receipt or a "Remember
/// this?", not an answer, so the next line corrects nothing (an
/// administrator's "going forward, laptop requests go through IT-REQ" said
/// after a note is another note).
fn states(text: &str) -> bool {
    use crate::llm::offline;
    let text = text.trim_start();
    text.starts_with('@')
        || (!offline::asks(text)
            && offline::statements(text)
                .iter()
                .any(|c| offline::label(c).is_some()))
}

impl Skills {
    /// Read a person's line as a correction of the previous answer and learn
    /// from it. `None` when it is not one: the speaker is not a paired
    /// person, the line states no rule, or the line before it is not the
    /// assistant's answer to a person's request.
    pub async fn observe(&self, at: &CorrectionAt<'_>) -> Result<Option<Learned>> {
        let Some(rule) = corrections::read_correction(at.text) else {
            return Ok(None);
        };
        self.observe_rule(at, &rule).await
    }

    /// Learn from `rule`, read from the person's line by the rules or from
    /// the clause a model labelled (`corrections::read_labelled`): kept only
    /// when the speaker is a paired person and the line before theirs is the
    /// assistant's answer to a person's request.
    pub async fn observe_rule(&self, at: &CorrectionAt<'_>, rule: &str) -> Result<Option<Learned>> {
        if !self.cfg.enabled {
            return Ok(None);
        }
        let Principal::Human { user_id, .. } = at.principal else {
            return Ok(None);
        };
        let Some((task, _answer)) = corrected_exchange(at.history) else {
            return Ok(None);
        };
        // The rule passes the scrubber once more, with the names of the
        // paired people (`corrections::may_be_step` knows none).
        let names: Vec<String> = self
            .db
            .identity()
            .paired_users(at.org)
            .await?
            .into_iter()
            .map(|u| u.name)
            .filter(|n| n != "admin")
            .collect();
        if !corrections::may_be_step(rule) || memory::scrub::scrub(rule, &names).is_err() {
            return Ok(None);
        }
        let used = self
            .db
            .skills()
            .used_by(at.org, task.id)
            .await?
            .first()
            .copied()
            .unwrap_or(0);
        let kept = self
            .db
            .skills()
            .record_correction(&NewCorrection {
                org: at.org,
                agent: at.agent,
                conversation: at.conversation,
                message_id: at.message_id,
                task_message_id: task.id,
                sender: user_id,
                task: &memory::sanitize::sanitize(&task.text),
                rule,
                used_id: used,
                at: at.now,
            })
            .await?;
        let Some(correction) = kept else {
            return Ok(Some(Learned::Noted));
        };
        if used != 0 {
            return self.correct_in_force(&correction, at.now).await.map(Some);
        }
        self.learn_from(&correction, false, at.now).await.map(Some)
    }

    /// "make this a skill" / `/learn` by an administrator: propose at once
    /// from the newest correction in this conversation.
    pub async fn learn_now(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        now: i64,
    ) -> Result<Option<SkillRevision>> {
        let Some(c) = self
            .db
            .skills()
            .latest_correction_in(org, agent, conversation)
            .await?
        else {
            return Ok(None);
        };
        Ok(match self.learn_from(&c, true, now).await? {
            Learned::Proposed(r) => Some(r),
            _ => None,
        })
    }

    /// A correction of an answer that followed revision `c.used_id`: it
    /// proposes that skill's next revision, and enough of them suspend it.
    async fn correct_in_force(&self, c: &Correction, now: i64) -> Result<Learned> {
        let store = self.db.skills();
        let base = store.revision(&c.org, c.used_id).await?;
        let count = store
            .corrections_of_answers_using(&c.org, c.used_id)
            .await?;
        if count >= self.cfg.suspend_after && base.status == SkillStatus::Active {
            // The corrections' words stay in the corrections: every
            // administrator reads the audit log.
            let why = memory::admin_text!("{} corrections of answers that followed it", count);
            let who = Curator {
                org: &c.org,
                actor: STEWARD,
                at: now,
            };
            store.suspend(who, base.id, &why).await?;
            let suspended = store.revision(&c.org, base.id).await?;
            return Ok(Learned::Suspended(suspended));
        }
        let group: Vec<Correction> = store
            .corrections_since(&c.org, &c.agent, now - self.window_ms())
            .await?
            .into_iter()
            .filter(|x| x.used_id == c.used_id)
            .collect();
        let refs: Vec<&Correction> = group.iter().collect();
        self.propose(&refs, Some(&base), &c.sender, now).await
    }

    fn window_ms(&self) -> i64 {
        self.cfg.window_days.saturating_mul(86_400_000)
    }

    /// Draft or revise the proposal of `c`'s kind of task when its group is
    /// ready (or `now_asked`: an administrator said so).
    async fn learn_from(&self, c: &Correction, now_asked: bool, now: i64) -> Result<Learned> {
        let store = self.db.skills();
        let all = store
            .corrections_since(&c.org, &c.agent, now - self.window_ms())
            .await?;
        let near = self.near(c, &all).await;
        let group = group_near(&all, c, &near);
        if !(now_asked || ready(&group, self.cfg.min_corrections)) {
            return Ok(Learned::Noted);
        }
        // A kind of task that already has a skill revises it.
        let (slug, _, _) = draft(&group, None);
        let base = match store
            .named(&c.org, &slug)
            .await?
            .into_iter()
            .find(|s| s.agent == c.agent)
        {
            Some(s) if s.active_id != 0 => Some(store.revision(&c.org, s.active_id).await?),
            _ => None,
        };
        self.propose(&group, base.as_ref(), &c.sender, now).await
    }

    async fn propose(
        &self,
        group: &[&Correction],
        base: Option<&SkillRevision>,
        by: &str,
        now: i64,
    ) -> Result<Learned> {
        let Some(first) = group.first() else {
            return Ok(Learned::Noted);
        };
        let (slug, description, body) = draft(group, base);
        let evidence: Vec<i64> = group.iter().map(|c| c.message_id).collect();
        let ids: Vec<i64> = group.iter().map(|c| c.id).collect();
        let proposed = self
            .db
            .skills()
            .propose(&NewProposal {
                org: &first.org,
                agent: &first.agent,
                slug: &slug,
                description: &description,
                body: &body,
                evidence: &evidence,
                corrections: &ids,
                proposed_by: &format!("corrections (latest by {by})"),
                at: now,
            })
            .await?;
        Ok(Learned::Proposed(proposed))
    }

    /// Approve revision `id` as `principal`, bound to `hash`.
    pub async fn approve(
        &self,
        org: &str,
        principal: &Principal,
        id: i64,
        hash: &str,
        now: i64,
    ) -> Result<std::result::Result<SkillRevision, SkillRefusal>> {
        self.curate(org, principal, Curation::Approve { id, hash }, now)
            .await
    }

    /// Reject revision `id` as `principal`.
    pub async fn reject(
        &self,
        org: &str,
        principal: &Principal,
        id: i64,
        now: i64,
    ) -> Result<std::result::Result<SkillRevision, SkillRefusal>> {
        self.curate(org, principal, Curation::Reject { id }, now)
            .await
    }

    /// Roll skill `skill_id` back (to revision `to`, or the one before) as `principal`.
    pub async fn rollback(
        &self,
        org: &str,
        principal: &Principal,
        skill_id: i64,
        to: Option<i64>,
        now: i64,
    ) -> Result<std::result::Result<SkillRevision, SkillRefusal>> {
        self.curate(org, principal, Curation::Rollback { skill_id, to }, now)
            .await
    }

    /// Take `act` as `principal`, if they may curate (`skill::decide_curation`).
    async fn curate(
        &self,
        org: &str,
        principal: &Principal,
        act: Curation<'_>,
        now: i64,
    ) -> Result<std::result::Result<SkillRevision, SkillRefusal>> {
        let actor = match curator(principal) {
            Ok(actor) => actor,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let who = Curator {
            org,
            actor: &actor,
            at: now,
        };
        let skills = self.db.skills();
        Ok(match act {
            Curation::Approve { id, hash } => skills.approve(who, id, hash).await?,
            Curation::Reject { id } => skills.reject(who, id).await?,
            Curation::Rollback { skill_id, to } => skills.rollback(who, skill_id, to).await?,
        })
    }
}
