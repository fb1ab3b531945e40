//! Skills: procedures learned from people's corrections, in force only once
//! an administrator approved one exact revision.
//!
//! The loop: a person's line that corrects the assistant's previous answer
//! ([`corrections::read_correction`]) is kept as evidence with the request
//! that answer answered. Corrections of the same kind of task (sharing its
//! key words) from two conversations or more within `skills.window_days`
//! draft a proposal; a new correction revises the open proposal; a
//! correction of an answer that followed a skill proposes its next revision,
//! and `skills.suspend_after` of them take that revision out of force. Only
//! an administrator approves, bound to the content hash and the revision in
//! force when it was proposed. A turn follows at most `skills.per_turn`
//! active skills whose key words its request holds.
//!
//! Architecture Invariant: nothing here grants anything. A skill reaches a
//! model as a data frame below the agent's notes; the tools a turn is
//! offered and the role it runs with do not depend on skills.

pub mod corrections;
mod drafting;
mod learn;
pub mod review;
pub mod skill_md;

use crate::config::{EmbeddingsConfig, SkillsConfig};
use crate::embeddings::Client;
use crate::error::Result;
use dashmap::DashMap;
use memory::skill::{steps, Correction, SkillRevision};
use memory::terms::terms;
use memory::{Db, Principal, StoredMessage};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use drafting::{cosine, TaskVectors};
pub use drafting::{draft, group, key_words, ready, same_task};

/// Who the learning loop acts as when it suspends a revision.
pub const STEWARD: &str = "steward";

/// An active skill as a turn matches it: the revision and its key words.
#[derive(Debug, Clone)]
pub struct InForce {
    pub revision: SkillRevision,
    key: Vec<String>,
}

impl InForce {
    /// `revision`, matched by the key words of its slug (or followed because a run names it).
    pub fn standing(revision: SkillRevision) -> InForce {
        InForce {
            key: key_words(&revision.slug.replace('-', " ")),
            revision,
        }
    }
}

/// What one agent has in force, as of its generation.
struct Shelf {
    generation: i64,
    skills: Arc<Vec<InForce>>,
}

/// What a correction led to, for the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Learned {
    /// Kept as evidence; not enough of its kind yet.
    Noted,
    /// A proposal was drafted or revised.
    Proposed(SkillRevision),
    /// The revision the corrected answer followed was taken out of force.
    Suspended(SkillRevision),
}

/// The turn's view of a correction: who, where, which lines.
pub struct CorrectionAt<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub conversation: &'a str,
    pub principal: &'a Principal,
    pub message_id: i64,
    pub text: &'a str,
    /// The conversation's live lines before this one, oldest first.
    pub history: &'a [StoredMessage],
    pub now: i64,
}

pub struct Skills {
    db: Db,
    cfg: SkillsConfig,
    shelves: DashMap<(String, String), Shelf, foldhash::fast::RandomState>,
    vectors: Option<TaskVectors>,
}

impl Skills {
    pub fn new(db: Db, cfg: SkillsConfig) -> Self {
        Skills {
            db,
            cfg,
            shelves: DashMap::default(),
            vectors: None,
        }
    }

    /// Group corrections by their requests' embeddings too (`[embeddings]`
    /// on), beside their key words.
    pub fn with_embeddings(mut self, cfg: &EmbeddingsConfig) -> Self {
        self.vectors = Client::from_config(cfg).map(|client| TaskVectors {
            client,
            timeout: Duration::from_millis(cfg.timeout_ms),
            batch: cfg.batch_size,
            cache: DashMap::new(),
        });
        self
    }

    /// The corrections of `all` whose requests mean what `of`'s does: their
    /// vectors at least `skills.task_similarity` alike. Empty with
    /// embeddings off, or when the endpoint fails (then key words alone
    /// group, with a warning in the log).
    async fn near(&self, of: &Correction, all: &[Correction]) -> HashSet<i64> {
        let Some(vectors) = &self.vectors else {
            return HashSet::new();
        };
        let mut texts: Vec<&str> = vec![of.task.as_str()];
        texts.extend(
            all.iter()
                .filter(|c| c.id != of.id)
                .map(|c| c.task.as_str()),
        );
        let found = match vectors.of(&texts).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "no request embeddings: corrections grouped by key words only");
                return HashSet::new();
            }
        };
        let Some((mine, others)) = found.split_first() else {
            return HashSet::new();
        };
        all.iter()
            .filter(|c| c.id != of.id)
            .zip(others)
            .filter(|(_, v)| cosine(mine, v) >= self.cfg.task_similarity)
            .map(|(c, _)| c.id)
            .collect()
    }

    pub fn enabled(&self) -> bool {
        self.cfg.enabled
    }

    /// The active skills a request calls for, best first, `skills.per_turn`
    /// at most: those whose key words (from the slug) the request holds.
    /// One read of the agent's generation a turn; the skills themselves are
    /// read again only when it moved.
    pub async fn for_request(&self, org: &str, agent: &str, text: &str) -> Result<Vec<InForce>> {
        self.for_request_at(org, agent, text, None).await
    }

    /// [`Skills::for_request`] when the agent's generation was read already
    /// (`generation`: a turn's first read brings it): no read of it here.
    pub async fn for_request_at(
        &self,
        org: &str,
        agent: &str,
        text: &str,
        generation: Option<i64>,
    ) -> Result<Vec<InForce>> {
        if !self.cfg.enabled || self.cfg.per_turn == 0 {
            return Ok(Vec::new());
        }
        let shelf = self.shelf(org, agent, generation).await?;
        if shelf.is_empty() {
            return Ok(Vec::new());
        }
        let asked = key_words(text);
        Ok(matching(&shelf, &asked, self.cfg.per_turn))
    }

    async fn shelf(&self, org: &str, agent: &str, known: Option<i64>) -> Result<Arc<Vec<InForce>>> {
        let generation = match known {
            Some(g) => g,
            None => self.db.skills().generation(org, agent).await?,
        };
        let key = (org.to_string(), agent.to_string());
        if let Some(s) = self.shelves.get(&key) {
            if s.generation == generation {
                return Ok(s.skills.clone());
            }
        }
        let skills: Vec<InForce> = self
            .db
            .skills()
            .active(org, agent)
            .await?
            .into_iter()
            .map(InForce::standing)
            .collect();
        let skills = Arc::new(skills);
        self.shelves.insert(
            key,
            Shelf {
                generation,
                skills: skills.clone(),
            },
        );
        Ok(skills)
    }

    /// What noting that the turn of `message_id` followed these revisions
    /// writes (the uses and their audit entries), for the group commit to
    /// store with the turn's reply (`Conversations::insert_answer`).
    pub fn uses(
        &self,
        org: &str,
        actor: &str,
        message_id: i64,
        used: &[InForce],
        at: i64,
    ) -> memory::store::TurnWrites {
        let mut writes = memory::store::TurnWrites::default();
        for s in used {
            let r = &s.revision;
            writes.skill_uses.push(memory::store::SkillUse {
                org: org.to_string(),
                message_id,
                revision_id: r.id,
                at,
            });
            writes.audit.push(memory::store::AuditRow {
                org: org.to_string(),
                actor: actor.to_string(),
                action: "skill.use".into(),
                target: format!("skill:{}/{}", r.agent, r.slug),
                detail: memory::admin_text!(
                    "rev {} (revision {}) in turn {}",
                    r.rev,
                    r.id,
                    message_id
                ),
                at,
            });
        }
        writes
    }

    /// Note that the turn of `message_id` followed these revisions.
    pub async fn record_uses(
        &self,
        org: &str,
        actor: &str,
        message_id: i64,
        used: &[InForce],
        at: i64,
    ) -> Result<()> {
        if used.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = used.iter().map(|s| s.revision.id).collect();
        self.db
            .skills()
            .record_uses(org, message_id, &ids, at)
            .await?;
        for s in used {
            let r = &s.revision;
            self.db
                .audit()
                .append(
                    org,
                    actor,
                    "skill.use",
                    &format!("skill:{}/{}", r.agent, r.slug),
                    &memory::admin_text!(
                        "rev {} (revision {}) in turn {}",
                        r.rev,
                        r.id,
                        message_id
                    ),
                    at,
                )
                .await?;
        }
        Ok(())
    }
}

/// The best `n` of `shelf` for a request of key words `asked`: every key
/// word of the skill in the request (two at least, when it has two).
fn matching(shelf: &[InForce], asked: &[String], n: usize) -> Vec<InForce> {
    let mut scored: Vec<(usize, &InForce)> = shelf
        .iter()
        .filter_map(|s| {
            let hits = s.key.iter().filter(|w| asked.contains(w)).count();
            (hits > 0 && hits >= s.key.len().min(2)).then_some((hits, s))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.revision.slug.cmp(&b.1.revision.slug))
    });
    scored.into_iter().take(n).map(|(_, s)| s.clone()).collect()
}

/// `answer` with the procedure of each followed skill whose steps it leaves
/// out (a step is left out when the answer holds fewer than half of its
/// words): a small model often answers the fact and drops the frame's
/// steps, and the person must still see what an administrator approved.
pub fn with_steps(answer: String, followed: &[SkillRevision]) -> String {
    // Most turns follow no skill: the answer's terms are then not needed.
    if followed.is_empty() {
        return answer;
    }
    let said = terms(&answer);
    let mut out = answer;
    for r in followed {
        let all = steps(&r.body);
        let left_out = all.iter().any(|step| {
            let words = terms(step);
            let held = words.iter().filter(|w| said.contains(w)).count();
            2 * held < words.len()
        });
        if left_out {
            out.push_str("\n\n");
            out.push_str(&r.procedure());
        }
    }
    out
}

/// A skill as prompt data, `<<<skill:SLUG@REV …>>>`, sanitised again.
pub fn skill_frame(r: &SkillRevision) -> String {
    let body: String = r
        .body
        .lines()
        .map(memory::sanitize::sanitize)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ");
    format!(
        "<<<skill:{}@{} {}: {}>>>",
        r.slug,
        r.rev,
        memory::sanitize::sanitize(&r.description),
        body
    )
}

#[cfg(test)]
mod tests;
