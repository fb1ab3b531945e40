//! From corrections to a draft: a request's key words, corrections of one
//! kind of task grouped (by shared words, or by meaning with `[embeddings]`),
//! and the proposal drafted from a group.

use super::corrections;
use crate::embeddings::{Client, EmbedAs, EmbedError};
use dashmap::DashMap;
use memory::skill::{self, steps, Correction, SkillRevision};
use memory::terms::terms;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// Words of a request that say nothing of its kind of task.
pub(super) const FILLER: &[&str] = &[
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
pub(super) fn group_near<'c>(
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
pub(super) fn cosine(a: &[f32], b: &[f32]) -> f32 {
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
pub(super) const MAX_CACHED_VECTORS: usize = 10_000;

/// Corrections' request texts as vectors, when `[embeddings]` is on.
pub(super) struct TaskVectors {
    pub(super) client: Client,
    pub(super) timeout: Duration,
    pub(super) batch: usize,
    pub(super) cache: DashMap<String, Arc<Vec<f32>>>,
}

impl TaskVectors {
    /// The vectors of `texts`, in their order: from the cache, the rest
    /// from the endpoint (each text once).
    pub(super) async fn of(
        &self,
        texts: &[&str],
    ) -> std::result::Result<Vec<Arc<Vec<f32>>>, EmbedError> {
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
pub(super) fn shared_words(group: &[&Correction]) -> Vec<String> {
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
