//! Skills, their immutable revisions, the corrections they came from, and
//! which revisions each turn used. Every change of what is in force moves
//! the agent's generation in the same transaction and is audited there.

use super::audit::Act;
use super::{Db, Result, StoreError};
use crate::admin_text::{AdminText, Identifier};
use crate::skill::{Correction, Skill, SkillRefusal, SkillRevision, SkillStatus};
use sqlx::{Any, Transaction};

const REVISION: &str = "SELECT r.id, r.org, r.skill_id, s.agent, s.slug, r.rev, r.description, \
     r.body, r.hash, r.status, r.base_id, r.evidence, r.proposed_by, r.approved_by, r.approved_at, \
     r.note, r.created_at FROM skill_revisions r JOIN skills s ON s.id = r.skill_id";
const SKILL: &str = "SELECT id, org, agent, slug, active_id, created_at FROM skills";
const CORRECTION: &str = "SELECT id, org, agent, conversation, message_id, task_message_id, \
     sender, task, rule, used_id, revision_id, at FROM skill_corrections";

/// Skills of every agent of an organisation (`db.skills()`).
#[derive(Clone, Copy)]
pub struct SkillStore<'a> {
    pub(super) db: &'a Db,
}

/// A correction about to be kept as evidence.
#[derive(Debug, Clone)]
pub struct NewCorrection<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub conversation: &'a str,
    pub message_id: i64,
    pub task_message_id: i64,
    pub sender: &'a str,
    pub task: &'a str,
    pub rule: &'a str,
    pub used_id: i64,
    pub at: i64,
}

/// A proposal about to be drafted: a new revision of `slug`, proposed
/// against the revision in force now. Earlier open proposals of the skill
/// are set aside (it revises them).
#[derive(Debug, Clone)]
pub struct NewProposal<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub slug: &'a str,
    pub description: &'a str,
    pub body: &'a str,
    /// Message ids of its evidence.
    pub evidence: &'a [i64],
    /// Corrections it takes up (their `revision_id` is set to it).
    pub corrections: &'a [i64],
    pub proposed_by: &'a str,
    pub at: i64,
}

/// A curation act's answer: the revision as it stands after, or why the act
/// was refused.
pub type Curated = std::result::Result<SkillRevision, SkillRefusal>;

/// Who acts, when (approvals, rejections, rollbacks).
pub type Curator<'a> = Act<'a>;

impl SkillStore<'_> {
    /// Keep a correction; `None` when that message was kept already.
    pub async fn record_correction(&self, c: &NewCorrection<'_>) -> Result<Option<Correction>> {
        let text = "INSERT INTO skill_corrections (org, agent, conversation, message_id, \
             task_message_id, sender, task, rule, used_id, revision_id, at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10) ON CONFLICT DO NOTHING";
        let q = sql!(
            text,
            c.org,
            c.agent,
            c.conversation,
            c.message_id,
            c.task_message_id,
            c.sender,
            c.task,
            c.rule,
            c.used_id,
            c.at
        );
        if q.exec(&self.db.pool).await? == 0 {
            return Ok(None);
        }
        let text = format!("{CORRECTION} WHERE org = $1 AND message_id = $2");
        sql!(text, c.org, c.message_id).opt(&self.db.pool).await
    }

    /// An agent's corrections kept at or after `since`, oldest first.
    pub async fn corrections_since(
        &self,
        org: &str,
        agent: &str,
        since: i64,
    ) -> Result<Vec<Correction>> {
        let text = format!("{CORRECTION} WHERE org = $1 AND agent = $2 AND at >= $3 ORDER BY id");
        sql!(text, org, agent, since).all(&self.db.pool).await
    }

    /// The corrections a revision took up, oldest first.
    pub async fn corrections_of(&self, org: &str, revision_id: i64) -> Result<Vec<Correction>> {
        let text = format!("{CORRECTION} WHERE org = $1 AND revision_id = $2 ORDER BY id");
        sql!(text, org, revision_id).all(&self.db.pool).await
    }

    /// How many corrections were made of answers that used `revision_id`.
    pub async fn corrections_of_answers_using(&self, org: &str, revision_id: i64) -> Result<i64> {
        let text = "SELECT COUNT(*) FROM skill_corrections WHERE org = $1 AND used_id = $2";
        let (n,): (i64,) = sql!(text, org, revision_id).one(&self.db.pool).await?;
        Ok(n)
    }

    /// The newest correction kept in one conversation.
    pub async fn latest_correction_in(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
    ) -> Result<Option<Correction>> {
        let text = format!(
            "{CORRECTION} WHERE org = $1 AND agent = $2 AND conversation = $3 ORDER BY id DESC LIMIT 1"
        );
        sql!(text, org, agent, conversation)
            .opt(&self.db.pool)
            .await
    }

    /// Draft a proposal (see [`NewProposal`]); audited as `skill.propose`.
    pub async fn propose(&self, p: &NewProposal<'_>) -> Result<SkillRevision> {
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "INSERT INTO skills (org, agent, slug, active_id, created_at) \
                    VALUES ($1, $2, $3, 0, $4) ON CONFLICT DO NOTHING";
        sql!(text, p.org, p.agent, p.slug, p.at)
            .exec(&mut *tx)
            .await?;
        let skill = lock_skill_named(&mut tx, p.org, p.agent, p.slug).await?;
        let text =
            "SELECT COALESCE(MAX(rev), 0) FROM skill_revisions WHERE org = $1 AND skill_id = $2";
        let (last,): (i64,) = sql!(text, p.org, skill.id).one(&mut *tx).await?;
        let rev = last + 1;
        let text =
            "UPDATE skill_revisions SET status = $1, note = $2 WHERE org = $3 AND skill_id = $4 AND status = $5";
        sql!(
            text,
            SkillStatus::Retired,
            format!("revised by rev {rev}"),
            p.org,
            skill.id,
            SkillStatus::Proposed
        )
        .exec(&mut *tx)
        .await?;
        let hash = crate::skill::content_hash(p.slug, p.description, p.body);
        let evidence = p
            .evidence
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let text = "INSERT INTO skill_revisions (org, skill_id, rev, description, body, hash, \
             status, base_id, evidence, proposed_by, note, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, '', $11) RETURNING id";
        let (id,): (i64,) = sql!(
            text,
            p.org,
            skill.id,
            rev,
            p.description,
            p.body,
            hash,
            SkillStatus::Proposed,
            skill.active_id,
            evidence,
            p.proposed_by,
            p.at
        )
        .one(&mut *tx)
        .await?;
        if !p.corrections.is_empty() {
            let q = sql!(
                "UPDATE skill_corrections SET revision_id = $1 WHERE org = $2 AND id IN (",
                id,
                p.org
            );
            q.bind_list(p.corrections.iter().copied())
                .push(")")
                .exec(&mut *tx)
                .await?;
        }
        let target = format!("skill:{}/{}", p.agent, p.slug);
        let detail = admin_text!("rev {} (revision {}) proposed", rev, id);
        let by = Act {
            org: p.org,
            actor: p.proposed_by,
            at: p.at,
        };
        by.audit(&mut *tx, "skill.propose", &target, &detail)
            .await?;
        tx.commit().await?;
        self.revision(p.org, id).await
    }

    /// Put a proposed revision in force, if it is still the content whose
    /// hash (or 8 characters of it at least) the approver saw and the revision it was proposed against is
    /// still the one in force. The caller checked the approver's authority
    /// (`skill::decide_curation`). Audited as `skill.approve`.
    pub async fn approve(&self, who: Curator<'_>, id: i64, hash: &str) -> Result<Curated> {
        let mut tx = super::begin(&self.db.pool).await?;
        let r = self.revision_in(&mut tx, who.org, id).await?;
        let skill = lock_skill(&mut tx, who.org, r.skill_id).await?;
        if r.status != SkillStatus::Proposed {
            return Ok(Err(SkillRefusal::NotProposed(id, r.status)));
        }
        // The full hash, or a prefix of 8 characters at least (chat shows 12).
        let named = hash.to_ascii_lowercase();
        if named.len() < 8 || !r.hash.starts_with(&named) {
            return Ok(Err(SkillRefusal::StaleHash { id, hash: r.hash }));
        }
        if skill.active_id != r.base_id {
            return Ok(Err(SkillRefusal::StaleBase { id }));
        }
        set_status(
            &mut tx,
            who.org,
            skill.active_id,
            SkillStatus::Retired,
            &format!("replaced by rev {}", r.rev),
        )
        .await?;
        let text = "UPDATE skill_revisions SET status = $1, approved_by = $2, approved_at = $3 \
                    WHERE org = $4 AND id = $5";
        sql!(text, SkillStatus::Active, who.actor, who.at, who.org, id)
            .exec(&mut *tx)
            .await?;
        put_in_force(&mut tx, &skill, id).await?;
        let detail = admin_text!(
            "rev {} (revision {}, hash {})",
            r.rev,
            id,
            Identifier::new(&r.hash)
        );
        self.commit_curation(tx, who, "skill.approve", &skill, &detail, id)
            .await
    }

    /// Decline a proposed revision. Audited as `skill.reject`.
    pub async fn reject(&self, who: Curator<'_>, id: i64) -> Result<Curated> {
        let mut tx = super::begin(&self.db.pool).await?;
        let r = self.revision_in(&mut tx, who.org, id).await?;
        let skill = lock_skill(&mut tx, who.org, r.skill_id).await?;
        if r.status != SkillStatus::Proposed {
            return Ok(Err(SkillRefusal::NotProposed(id, r.status)));
        }
        let note = format!("rejected by {}", who.actor);
        set_status(&mut tx, who.org, id, SkillStatus::Rejected, &note).await?;
        let detail = admin_text!("rev {} (revision {})", r.rev, id);
        self.commit_curation(tx, who, "skill.reject", &skill, &detail, id)
            .await
    }

    /// Put an earlier approved revision back in force: `to`, or the newest
    /// approved one older than the revision in force. The one in force is
    /// retired; rolling back to it again undoes the rollback. Audited as
    /// `skill.rollback`.
    pub async fn rollback(
        &self,
        who: Curator<'_>,
        skill_id: i64,
        to: Option<i64>,
    ) -> Result<Curated> {
        let mut tx = super::begin(&self.db.pool).await?;
        let skill = lock_skill(&mut tx, who.org, skill_id).await?;
        let target = match to {
            Some(id) => {
                let r = self.revision_in(&mut tx, who.org, id).await?;
                if r.skill_id != skill.id {
                    return Err(StoreError::NotFound(format!(
                        "revision {id} of skill {}",
                        skill.slug
                    )));
                }
                if r.approved_at.is_none() {
                    return Ok(Err(SkillRefusal::NeverApproved(id)));
                }
                r
            }
            None => {
                let text = format!(
                    "{REVISION} WHERE r.org = $1 AND r.skill_id = $2 AND r.approved_at IS NOT NULL \
                     AND r.id < $3 ORDER BY r.id DESC LIMIT 1"
                );
                let current = if skill.active_id == 0 {
                    i64::MAX
                } else {
                    skill.active_id
                };
                match sql!(text, who.org, skill.id, current)
                    .opt::<SkillRevision, _>(&mut *tx)
                    .await?
                {
                    Some(r) => r,
                    None => return Ok(Err(SkillRefusal::NothingToRollBackTo)),
                }
            }
        };
        if target.id == skill.active_id {
            return Ok(Ok(target));
        }
        let note = format!("rolled back to rev {} by {}", target.rev, who.actor);
        set_status(
            &mut tx,
            who.org,
            skill.active_id,
            SkillStatus::Retired,
            &note,
        )
        .await?;
        set_status(&mut tx, who.org, target.id, SkillStatus::Active, "").await?;
        put_in_force(&mut tx, &skill, target.id).await?;
        let detail = admin_text!(
            "from revision {} to rev {} (revision {})",
            skill.active_id,
            target.rev,
            target.id
        );
        self.commit_curation(tx, who, "skill.rollback", &skill, &detail, target.id)
            .await
    }

    /// Take revision `id` out of force for `why`, putting back the revision
    /// it replaced when that one had been approved. Nothing when `id` is not
    /// in force. The revision now in force, if any. Audited as `skill.suspend`.
    pub async fn suspend(
        &self,
        who: Curator<'_>,
        id: i64,
        why: &AdminText,
    ) -> Result<Option<SkillRevision>> {
        let mut tx = super::begin(&self.db.pool).await?;
        let r = self.revision_in(&mut tx, who.org, id).await?;
        let skill = lock_skill(&mut tx, who.org, r.skill_id).await?;
        if skill.active_id != id {
            return Ok(None);
        }
        set_status(&mut tx, who.org, id, SkillStatus::Suspended, why.as_str()).await?;
        let back = if r.base_id == 0 {
            None
        } else {
            let base = self.revision_in(&mut tx, who.org, r.base_id).await?;
            base.approved_at.is_some().then_some(base)
        };
        let restored = back.as_ref().map_or(0, |b| b.id);
        if restored != 0 {
            set_status(&mut tx, who.org, restored, SkillStatus::Active, "").await?;
        }
        put_in_force(&mut tx, &skill, restored).await?;
        let detail = admin_text!("rev {} (revision {}): {}", r.rev, id, why);
        audit_skill(&mut tx, who, "skill.suspend", &skill, &detail).await?;
        tx.commit().await?;
        match back {
            Some(b) => Ok(Some(self.revision(who.org, b.id).await?)),
            None => Ok(None),
        }
    }

    /// The revisions in force for an agent, by slug.
    pub async fn active(&self, org: &str, agent: &str) -> Result<Vec<SkillRevision>> {
        let text = format!(
            "{REVISION} WHERE r.org = $1 AND s.agent = $2 AND s.active_id = r.id ORDER BY s.slug"
        );
        sql!(text, org, agent).all(&self.db.pool).await
    }

    /// The agent's generation: it moves whenever what is in force changes.
    pub async fn generation(&self, org: &str, agent: &str) -> Result<i64> {
        let text = "SELECT generation FROM skill_generations WHERE org = $1 AND agent = $2";
        let row: Option<(i64,)> = sql!(text, org, agent).opt(&self.db.pool).await?;
        Ok(row.map_or(0, |(g,)| g))
    }

    /// Revisions of an organisation, newest first; of one status when given.
    pub async fn list(&self, org: &str, status: Option<SkillStatus>) -> Result<Vec<SkillRevision>> {
        let q = sql!(format!("{REVISION} WHERE r.org = $1"), org).and_eq("r.status", status);
        q.push(" ORDER BY r.id DESC").all(&self.db.pool).await
    }

    /// One revision.
    pub async fn revision(&self, org: &str, id: i64) -> Result<SkillRevision> {
        let text = format!("{REVISION} WHERE r.org = $1 AND r.id = $2");
        sql!(text, org, id)
            .found(&self.db.pool, format!("skill revision {id}"))
            .await
    }

    /// Every revision of one skill, newest first.
    pub async fn revisions_of(&self, org: &str, skill_id: i64) -> Result<Vec<SkillRevision>> {
        let text = format!("{REVISION} WHERE r.org = $1 AND r.skill_id = $2 ORDER BY r.rev DESC");
        sql!(text, org, skill_id).all(&self.db.pool).await
    }

    /// The skills of an organisation named `slug` (one per agent that has it).
    pub async fn named(&self, org: &str, slug: &str) -> Result<Vec<Skill>> {
        let text = format!("{SKILL} WHERE org = $1 AND slug = $2 ORDER BY agent");
        sql!(text, org, slug).all(&self.db.pool).await
    }

    /// Note which revisions the turn of `message_id` used.
    pub async fn record_uses(
        &self,
        org: &str,
        message_id: i64,
        revisions: &[i64],
        at: i64,
    ) -> Result<()> {
        for id in revisions {
            let used = SkillUse {
                org: org.to_string(),
                message_id,
                revision_id: *id,
                at,
            };
            record_use(&self.db.pool, &used).await?;
        }
        Ok(())
    }

    /// The revisions the turn of `message_id` used.
    pub async fn used_by(&self, org: &str, message_id: i64) -> Result<Vec<i64>> {
        let text = "SELECT revision_id FROM skill_uses WHERE org = $1 AND message_id = $2 ORDER BY revision_id";
        let rows: Vec<(i64,)> = sql!(text, org, message_id).all(&self.db.pool).await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// End a curation act: audit `action` on `skill`, commit, and answer
    /// revision `id` as it stands now.
    async fn commit_curation(
        &self,
        mut tx: Transaction<'static, Any>,
        who: Curator<'_>,
        action: &str,
        skill: &Skill,
        detail: &AdminText,
        id: i64,
    ) -> Result<Curated> {
        audit_skill(&mut tx, who, action, skill, detail).await?;
        tx.commit().await?;
        Ok(Ok(self.revision(who.org, id).await?))
    }

    async fn revision_in(
        &self,
        tx: &mut Transaction<'static, Any>,
        org: &str,
        id: i64,
    ) -> Result<SkillRevision> {
        let text = format!("{REVISION} WHERE r.org = $1 AND r.id = $2");
        sql!(text, org, id)
            .found(&mut **tx, format!("skill revision {id}"))
            .await
    }
}

/// The skill row, locked for this transaction (a no-op update takes the
/// row's write lock on PostgreSQL and the database's on SQLite), so two
/// curators cannot both act on what was in force.
async fn lock_skill(tx: &mut Transaction<'static, Any>, org: &str, id: i64) -> Result<Skill> {
    let text = "UPDATE skills SET active_id = active_id WHERE org = $1 AND id = $2";
    sql!(text, org, id).exec(&mut **tx).await?;
    let text = format!("{SKILL} WHERE org = $1 AND id = $2");
    sql!(text, org, id)
        .found(&mut **tx, format!("skill {id}"))
        .await
}

async fn lock_skill_named(
    tx: &mut Transaction<'static, Any>,
    org: &str,
    agent: &str,
    slug: &str,
) -> Result<Skill> {
    let text =
        "UPDATE skills SET active_id = active_id WHERE org = $1 AND agent = $2 AND slug = $3";
    sql!(text, org, agent, slug).exec(&mut **tx).await?;
    let text = format!("{SKILL} WHERE org = $1 AND agent = $2 AND slug = $3");
    sql!(text, org, agent, slug)
        .found(&mut **tx, format!("skill {slug}"))
        .await
}

async fn set_status(
    tx: &mut Transaction<'static, Any>,
    org: &str,
    id: i64,
    status: SkillStatus,
    note: &str,
) -> Result<()> {
    if id == 0 {
        return Ok(());
    }
    let text = "UPDATE skill_revisions SET status = $1, note = $2 WHERE org = $3 AND id = $4";
    sql!(text, status, note, org, id).exec(&mut **tx).await?;
    Ok(())
}

/// Point `skill` at revision `id` (0: none) and move its agent's generation.
async fn put_in_force(tx: &mut Transaction<'static, Any>, skill: &Skill, id: i64) -> Result<()> {
    let text = "UPDATE skills SET active_id = $1 WHERE org = $2 AND id = $3";
    sql!(text, id, &skill.org, skill.id).exec(&mut **tx).await?;
    let text = "INSERT INTO skill_generations (org, agent, generation) VALUES ($1, $2, 1) \
                ON CONFLICT (org, agent) DO UPDATE SET generation = skill_generations.generation + 1";
    sql!(text, &skill.org, &skill.agent).exec(&mut **tx).await?;
    Ok(())
}

async fn audit_skill(
    tx: &mut Transaction<'static, Any>,
    who: Curator<'_>,
    action: &str,
    skill: &Skill,
    detail: &AdminText,
) -> Result<()> {
    let target = format!("skill:{}/{}", skill.agent, skill.slug);
    who.audit(&mut **tx, action, &target, detail).await
}

/// A turn of `message_id` followed skill revision `revision_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillUse {
    pub org: String,
    pub message_id: i64,
    pub revision_id: i64,
    pub at: i64,
}

/// Note one use of a skill revision, on a pool or inside a transaction (the
/// group commit stores a turn's with its reply: `Conversations::insert_answer`).
pub(super) async fn record_use<'c, E>(exec: E, u: &SkillUse) -> Result<()>
where
    E: sqlx::Executor<'c, Database = Any>,
{
    let text = "INSERT INTO skill_uses (org, message_id, revision_id, at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
    sql!(text, u.org.as_str(), u.message_id, u.revision_id, u.at)
        .exec(exec)
        .await
        .map(|_| ())
}
