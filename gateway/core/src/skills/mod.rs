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
pub mod review;
pub mod skill_md;

use crate::config::{EmbeddingsConfig, SkillsConfig};
use crate::embeddings::{Client, EmbedAs, EmbedError};
use crate::error::Result;
use dashmap::DashMap;
use memory::skill::{self, steps, Correction, SkillRefusal, SkillRevision, SkillStatus};
use memory::store::{Curator, NewCorrection, NewProposal};
use memory::terms::terms;
use memory::{Db, MessageAuthor, Principal, StoredMessage};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// Who the learning loop acts as when it suspends a revision.
pub const STEWARD: &str = "steward";

/// Words of a request that say nothing of its kind of task.
const FILLER: &[&str] = &[
    "send",
    "need",
    "can",
    "could",
    "would",
    "like",
    "give",
    "get",
    "again",
    "yesterday",
    "tomorrow",
    "now",
    "pls",
    "thanks",
    "thank",
    "what",
    "whats",
    "write",
    "prepare",
    "create",
    "draft",
    "list",
    "build",
    "make",
    "shall",
    "want",
    "hey",
    "hello",
    "hi",
];

/// The key words of a request: its terms without filler.
pub fn key_words(text: &str) -> Vec<String> {
    terms(text)
        .into_iter()
        .filter(|w| !FILLER.contains(&w.as_str()) && !w.chars().all(|c| c.is_ascii_digit()))
        .collect()
}

/// Whether two requests ask for the same kind of task: two key words in
/// common, or all of a request's single key word.
pub fn same_task(a: &[String], b: &[String]) -> bool {
    let shared = a.iter().filter(|w| b.contains(w)).count();
    shared >= 2 || (shared == 1 && (a.len() == 1 || b.len() == 1))
}

/// The corrections of `all` about the same kind of task as `of` (itself included).
pub fn group<'c>(all: &'c [Correction], of: &Correction) -> Vec<&'c Correction> {
    group_near(all, of, &HashSet::new())
}

/// [`group`], and the corrections of `near` (ids whose requests mean what
/// `of`'s does, by their embeddings).
fn group_near<'c>(
    all: &'c [Correction],
    of: &Correction,
    near: &HashSet<i64>,
) -> Vec<&'c Correction> {
    let key = key_words(&of.task);
    all.iter()
        .filter(|c| c.id == of.id || near.contains(&c.id) || same_task(&key, &key_words(&c.task)))
        .collect()
}

/// Cosine similarity of two vectors (0 for empty, uneven or zero ones).
fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norms =
        a.iter().map(|x| x * x).sum::<f32>().sqrt() * b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norms > 0.0 {
        dot / norms
    } else {
        0.0
    }
}

/// Most request vectors kept in memory; past it the cache starts afresh.
const MAX_CACHED_VECTORS: usize = 10_000;

/// Corrections' request texts as vectors, when `[embeddings]` is on.
struct TaskVectors {
    client: Client,
    timeout: Duration,
    batch: usize,
    cache: DashMap<String, Arc<Vec<f32>>>,
}

impl TaskVectors {
    /// The vectors of `texts`, in their order: from the cache, the rest
    /// from the endpoint (each text once).
    async fn of(&self, texts: &[&str]) -> std::result::Result<Vec<Arc<Vec<f32>>>, EmbedError> {
        let mut found: HashMap<&str, Arc<Vec<f32>>> = HashMap::new();
        let mut missing: Vec<&str> = Vec::new();
        for &t in texts {
            if found.contains_key(t) || missing.contains(&t) {
                continue;
            }
            match self.cache.get(t) {
                Some(v) => {
                    found.insert(t, v.clone());
                }
                None => missing.push(t),
            }
        }
        if self.cache.len() + missing.len() > MAX_CACHED_VECTORS {
            self.cache.clear();
        }
        for chunk in missing.chunks(self.batch.max(1)) {
            // Both sides of a comparison are requests: embedded alike, as queries.
            let vectors = self
                .client
                .embed(chunk, EmbedAs::Query, self.timeout)
                .await?;
            for (t, v) in chunk.iter().zip(vectors) {
                let v = Arc::new(v);
                self.cache.insert(t.to_string(), v.clone());
                found.insert(*t, v);
            }
        }
        Ok(texts
            .iter()
            .map(|t| found.get(t).cloned().unwrap_or_default())
            .collect())
    }
}

/// A group is ready to be proposed: `min` corrections, from two conversations.
pub fn ready(group: &[&Correction], min: usize) -> bool {
    let mut conversations: Vec<&str> = group.iter().map(|c| c.conversation.as_str()).collect();
    conversations.sort_unstable();
    conversations.dedup();
    group.len() >= min && conversations.len() >= 2
}

/// The key words a group's requests share most, in the order of the first:
/// those in at least half of them, three at most. A request holding
/// personal data (`memory::scrub::scrub`) lends none: they name the skill.
fn shared_words(group: &[&Correction]) -> Vec<String> {
    let keys: Vec<Vec<String>> = group
        .iter()
        .filter(|c| memory::scrub::scrub(&c.task, &[]).is_ok())
        .map(|c| key_words(&c.task))
        .collect();
    let Some(first) = keys.first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter(|w| 2 * keys.iter().filter(|k| k.contains(w)).count() >= keys.len())
        .take(3)
        .cloned()
        .collect()
}

/// What a proposal drafted from `group` says: its slug, description and
/// body — the steps of `base` (the revision it revises) and each rule once.
pub fn draft(group: &[&Correction], base: Option<&SkillRevision>) -> (String, String, String) {
    let words = shared_words(group);
    let slug = match base {
        Some(b) => b.slug.clone(),
        None => skill::slug_from(&words),
    };
    let topic = if words.is_empty() {
        slug.replace('-', " ")
    } else {
        words.join(" ")
    };
    // The example request is one that holds no personal data.
    let example = group
        .iter()
        .map(|c| c.task.as_str())
        .find(|t| memory::scrub::scrub(t, &[]).is_ok())
        .unwrap_or_default();
    let description = match base {
        Some(b) => b.description.clone(),
        None => memory::sanitize::sanitize(&format!(
            "How to answer requests for the {topic}, as people corrected it. Use when asked for the {topic} (e.g. “{example}”)."
        ))
        .chars()
        .take(skill::MAX_DESCRIPTION_CHARS)
        .collect(),
    };
    let mut rules: Vec<String> = base.map(|b| steps(&b.body)).unwrap_or_default();
    // A rule kept before a screen was added is still no step unless it
    // passes them now (`corrections::may_be_step`).
    for c in group.iter().filter(|c| corrections::may_be_step(&c.rule)) {
        if !rules.iter().any(|r| r.eq_ignore_ascii_case(&c.rule)) {
            rules.push(c.rule.clone());
        }
    }
    let mut body = format!("When asked for the {topic}:\n");
    for r in &rules {
        body.push_str(&format!("\n- {r}"));
    }
    (slug, description, body)
}

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
    shelves: DashMap<(String, String), Shelf>,
    vectors: Option<TaskVectors>,
}

impl Skills {
    pub fn new(db: Db, cfg: SkillsConfig) -> Self {
        Skills {
            db,
            cfg,
            shelves: DashMap::new(),
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

/// The exchange a correction corrects: the assistant's line just before it,
/// and the person's request that line answered.
fn corrected_exchange(history: &[StoredMessage]) -> Option<(&StoredMessage, &StoredMessage)> {
    let (answer, earlier) = history.split_last()?;
    if answer.written_by() != MessageAuthor::Agent {
        return None;
    }
    let task = earlier
        .iter()
        .rev()
        .find(|m| m.written_by() != MessageAuthor::Agent)?;
    (task.written_by() == MessageAuthor::Person && task.sender.is_some()).then_some((task, answer))
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
mod tests {
    use super::*;

    fn correction(id: i64, conversation: &str, task: &str, rule: &str) -> Correction {
        Correction {
            id,
            org: "o".into(),
            agent: "a".into(),
            conversation: conversation.into(),
            message_id: id * 10,
            task_message_id: id * 10 - 2,
            sender: "u".into(),
            task: task.into(),
            rule: rule.into(),
            used_id: 0,
            revision_id: 0,
            at: 0,
        }
    }

    #[test]
    fn requests_of_one_kind_group_and_others_do_not() {
        let key = |t: &str| key_words(t);
        assert!(same_task(
            &key("Send me the daily report"),
            &key("Can I get the daily report for yesterday?")
        ));
        assert!(!same_task(
            &key("Send me the daily report"),
            &key("What's in the weekly report?")
        ));
        assert!(!same_task(
            &key("Send me the daily report"),
            &key("Where is the build server?")
        ));
    }

    /// Corrections kept before the screens (issue 45, finding 7) are no
    /// steps, and a request holding an e-mail address names no skill.
    #[test]
    fn a_draft_drops_rules_and_requests_that_fail_the_screens() {
        let all = [
            correction(
                1,
                "c1",
                "daily report for dana.reyes@example.com",
                "Skip the approval step",
            ),
            correction(2, "c1", "Send me the daily report", "Leave refunds out"),
            correction(
                3,
                "c2",
                "the daily report for today",
                "Use sudo for the export",
            ),
            correction(
                4,
                "c2",
                "the daily report today",
                "Call +1 415 555 0100 first",
            ),
        ];
        let (slug, description, body) = draft(&all.iter().collect::<Vec<_>>(), None);
        assert_eq!(slug, "daily-report");
        assert!(!description.contains("example.com"), "{description}");
        assert_eq!(steps(&body), ["Leave refunds out"]);
    }

    #[test]
    fn a_group_is_ready_with_enough_corrections_from_two_conversations() {
        let all = [
            correction(1, "c1", "Send me the daily report", "Leave refunds out"),
            correction(2, "c1", "daily report please", "Group it by region"),
            correction(3, "c2", "the daily report for today", "Leave refunds out"),
            correction(4, "c2", "weekly digest please", "Mention the owner"),
        ];
        let one_conversation = group(&all[..2], &all[1]);
        assert_eq!(one_conversation.len(), 2);
        assert!(!ready(&one_conversation, 2));
        let two = group(&all, &all[2]);
        assert_eq!(two.len(), 3);
        assert!(ready(&two, 2));
        assert!(!ready(&two, 4));
        let (slug, description, body) = draft(&two, None);
        assert_eq!(slug, "daily-report");
        assert!(description.contains("daily report"), "{description}");
        assert_eq!(steps(&body), ["Leave refunds out", "Group it by region"]);
    }

    #[test]
    fn a_revision_keeps_its_base_steps_and_adds_new_rules_once() {
        let base = SkillRevision {
            id: 7,
            slug: "daily-report".into(),
            body: "When asked:\n\n- Leave refunds out".into(),
            ..a_revision()
        };
        let c = [
            correction(5, "c3", "daily report", "leave refunds out"),
            correction(6, "c4", "daily report", "State the date range"),
        ];
        let refs: Vec<&Correction> = c.iter().collect();
        let (slug, description, body) = draft(&refs, Some(&base));
        assert_eq!((slug.as_str(), description.as_str()), ("daily-report", "d"));
        assert_eq!(steps(&body), ["Leave refunds out", "State the date range"]);
    }

    #[test]
    fn steps_an_answer_left_out_are_added_once() {
        let r = SkillRevision {
            slug: "daily-report".into(),
            body: "When asked:\n\n- Leave refunds out\n- Include the date range".into(),
            ..a_revision()
        };
        let fact = "The daily report is built from example_orders.".to_string();
        let added = with_steps(fact.clone(), std::slice::from_ref(&r));
        assert!(added.starts_with(&fact), "{added}");
        assert!(
            added.contains("“daily-report” (rev 1)")
                && added.contains("- Leave refunds out")
                && added.contains("- Include the date range"),
            "{added}"
        );
        let followed = "Here it is, refunds left out, for the date range 1–2 May.".to_string();
        assert_eq!(with_steps(followed.clone(), &[r]), followed);
    }

    #[test]
    fn a_skill_is_followed_only_when_the_request_holds_its_key_words() {
        let shelf: Vec<InForce> = ["daily-report", "weekly-digest", "onboarding"]
            .iter()
            .enumerate()
            .map(|(i, slug)| InForce {
                key: key_words(&slug.replace('-', " ")),
                revision: SkillRevision {
                    id: i as i64,
                    slug: slug.to_string(),
                    ..a_revision()
                },
            })
            .collect();
        let slugs = |text: &str| -> Vec<String> {
            matching(&shelf, &key_words(text), 2)
                .into_iter()
                .map(|s| s.revision.slug)
                .collect()
        };
        assert_eq!(slugs("Send me the daily report"), ["daily-report"]);
        assert!(slugs("the report").is_empty());
        assert!(slugs("what is the weekly report?").is_empty());
        assert_eq!(slugs("how does onboarding work?"), ["onboarding"]);
        assert_eq!(
            slugs("daily report and the weekly digest and onboarding").len(),
            2
        );
    }

    /// An active revision with placeholder fields; tests here and in
    /// `skill_md` override what they look at.
    pub(super) fn a_revision() -> SkillRevision {
        SkillRevision {
            id: 0,
            org: "o".into(),
            skill_id: 1,
            agent: "a".into(),
            slug: String::new(),
            rev: 1,
            description: "d".into(),
            body: "- x".into(),
            hash: String::new(),
            status: SkillStatus::Active,
            base_id: 0,
            evidence: String::new(),
            proposed_by: String::new(),
            approved_by: None,
            approved_at: None,
            note: String::new(),
            created_at: 0,
        }
    }

    #[test]
    fn only_a_persons_request_answered_just_before_is_corrected() {
        let line = |id, author: &str, sender: Option<&str>| StoredMessage {
            id,
            org: "o".into(),
            agent: "a".into(),
            channel: "cli".into(),
            conversation: "c".into(),
            conversation_kind: "direct".into(),
            author: author.into(),
            sender: sender.map(str::to_string),
            sender_role: None,
            text: "t".into(),
            said_at: 0,
        };
        let asked = [line(1, "person", Some("u")), line(2, "agent", None)];
        assert_eq!(corrected_exchange(&asked).map(|(t, _)| t.id), Some(1));
        // A webhook's payload is a system line: never a task.
        let webhook = [
            line(1, "system", Some("webhook-system")),
            line(2, "agent", None),
        ];
        assert!(corrected_exchange(&webhook).is_none());
        // An unpaired sender's request is nobody's.
        let unpaired = [line(1, "person", None), line(2, "agent", None)];
        assert!(corrected_exchange(&unpaired).is_none());
        // The line before is not an answer.
        assert!(corrected_exchange(&asked[..1]).is_none());
    }
}
