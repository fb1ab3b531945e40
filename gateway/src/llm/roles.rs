//! The model roles beyond extraction and replies — the belief-revision judge,
//! consolidation, the slice summary — and the set of models a turn loop uses,
//! chosen from `llm.provider`.
//!
//! Every role only proposes. What a judge or a consolidator answers is applied
//! by `memory::Db::retire` / `Db::merge`, which check place, time and vetoes in
//! code; what an extractor answers goes through `memory::policy::decide`.

use super::openai::OpenAi;
use super::{Extractor, LlmError, ReplyContext, Responder};
use crate::config::LlmConfig;
use memory::{Candidate, MemoryRecord, StoredMessage};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A candidate the judge says the new record replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgedRetirement {
    pub id: i64,
    pub reason: String,
}

/// Records that say the same thing, and the one text that keeps what they say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeGroup {
    pub ids: Vec<i64>,
    pub merged: String,
}

/// Decides which live records on the same topic a newly written record replaces.
#[async_trait::async_trait]
pub trait Judge: Send + Sync {
    /// Stored with every revision the judge makes.
    fn model(&self) -> &str;
    fn prompt_version(&self) -> Option<&str>;
    async fn judge(
        &self,
        new: &MemoryRecord,
        candidates: &[MemoryRecord],
    ) -> Result<Vec<JudgedRetirement>, LlmError>;
}

/// Finds groups of records that say the same thing.
#[async_trait::async_trait]
pub trait Consolidator: Send + Sync {
    /// Stored with every revision a merge makes.
    fn model(&self) -> &str;
    fn prompt_version(&self) -> Option<&str>;
    async fn consolidate(&self, records: &[MemoryRecord]) -> Result<Vec<MergeGroup>, LlmError>;
}

/// Summarises a trimmed slice of history.
#[async_trait::async_trait]
pub trait Summarizer: Send + Sync {
    async fn summarize(&self, slice: &[StoredMessage]) -> Result<String, LlmError>;
}

/// Token use of a model provider, counted in process (logs and tests read it).
#[derive(Debug, Default)]
pub struct TokenUsage {
    calls: AtomicU64,
    failed_calls: AtomicU64,
    repairs: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UsageSnapshot {
    /// Requests answered by the server.
    pub calls: u64,
    /// Requests that failed (after retries), timed out, or were refused by the turn budget.
    pub failed_calls: u64,
    /// Repair requests sent after an invalid structured answer.
    pub repairs: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl TokenUsage {
    pub(crate) fn answered(&self, prompt: u64, completion: u64) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.prompt_tokens.fetch_add(prompt, Ordering::Relaxed);
        self.completion_tokens
            .fetch_add(completion, Ordering::Relaxed);
    }

    pub(crate) fn failed(&self) {
        self.failed_calls.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn repaired(&self) {
        self.repairs.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> UsageSnapshot {
        UsageSnapshot {
            calls: self.calls.load(Ordering::Relaxed),
            failed_calls: self.failed_calls.load(Ordering::Relaxed),
            repairs: self.repairs.load(Ordering::Relaxed),
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
        }
    }
}

/// The roles a turn loop holds beside its extractor and responder.
#[derive(Clone)]
pub struct Roles {
    /// `None`: no belief revision (the offline model).
    pub judge: Option<Arc<dyn Judge>>,
    pub consolidator: Arc<dyn Consolidator>,
    /// `None`: the deterministic summary (`lifecycle::summarize`).
    pub summarizer: Option<Arc<dyn Summarizer>>,
    pub usage: Arc<TokenUsage>,
}

impl Roles {
    /// The offline model: no judge, exact-duplicate consolidation, the deterministic summary.
    pub fn offline() -> Roles {
        Roles {
            judge: None,
            consolidator: Arc::new(OfflineConsolidator),
            summarizer: None,
            usage: Arc::new(TokenUsage::default()),
        }
    }
}

/// Every model a turn loop uses.
#[derive(Clone)]
pub struct Models {
    pub extractor: Arc<dyn Extractor>,
    pub responder: Arc<dyn Responder>,
    pub roles: Roles,
}

impl Models {
    pub fn offline() -> Models {
        Models {
            extractor: Arc::new(super::offline::OfflineExtractor),
            responder: Arc::new(super::offline::OfflineResponder),
            roles: Roles::offline(),
        }
    }

    /// The models `llm.provider` names.
    pub fn from_config(cfg: &LlmConfig) -> Result<Models, LlmError> {
        match cfg.provider.as_str() {
            "openai" => {
                let usage = Arc::new(TokenUsage::default());
                let m = Arc::new(OpenAi::from_config(cfg, usage.clone())?);
                Ok(Models {
                    extractor: m.clone(),
                    responder: m.clone(),
                    roles: Roles {
                        judge: Some(m.clone()),
                        consolidator: m.clone(),
                        summarizer: Some(m),
                        usage,
                    },
                })
            }
            "offline" => Ok(Models::offline()),
            other => Err(LlmError::Unavailable(format!("unknown provider `{other}`"))),
        }
    }

    /// Models that always fail with `reason`: a misconfigured provider answers
    /// "I can't answer right now" and learns nothing, rather than silently
    /// falling back to other rules.
    pub fn unavailable(reason: String) -> Models {
        let u = Arc::new(Unavailable(reason));
        Models {
            extractor: u.clone(),
            responder: u.clone(),
            roles: Roles {
                judge: None,
                consolidator: u,
                summarizer: None,
                usage: Arc::new(TokenUsage::default()),
            },
        }
    }
}

struct Unavailable(String);

#[async_trait::async_trait]
impl Extractor for Unavailable {
    async fn extract(&self, _: &str) -> Result<Vec<Candidate>, LlmError> {
        Err(LlmError::Unavailable(self.0.clone()))
    }
}

#[async_trait::async_trait]
impl Responder for Unavailable {
    async fn respond(&self, _: &ReplyContext<'_>) -> Result<String, LlmError> {
        Err(LlmError::Unavailable(self.0.clone()))
    }
}

#[async_trait::async_trait]
impl Consolidator for Unavailable {
    fn model(&self) -> &str {
        "unavailable"
    }
    fn prompt_version(&self) -> Option<&str> {
        None
    }
    async fn consolidate(&self, _: &[MemoryRecord]) -> Result<Vec<MergeGroup>, LlmError> {
        Err(LlmError::Unavailable(self.0.clone()))
    }
}

/// Text compared for "says the same thing" without a model: lower case, words only.
pub fn normalised(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Offline consolidation: exact and near-exact duplicates only (equal
/// normalised text). The merged text is the newest member's.
#[derive(Debug, Default, Clone, Copy)]
pub struct OfflineConsolidator;

#[async_trait::async_trait]
impl Consolidator for OfflineConsolidator {
    fn model(&self) -> &str {
        "offline"
    }
    fn prompt_version(&self) -> Option<&str> {
        None
    }
    async fn consolidate(&self, records: &[MemoryRecord]) -> Result<Vec<MergeGroup>, LlmError> {
        let mut by_text: BTreeMap<String, Vec<&MemoryRecord>> = BTreeMap::new();
        for r in records {
            let key = normalised(&r.content);
            if !key.is_empty() {
                by_text.entry(key).or_default().push(r);
            }
        }
        Ok(by_text
            .into_values()
            .filter(|g| g.len() > 1)
            .filter_map(|g| {
                let newest = g.iter().max_by_key(|r| (r.said_at, r.id))?;
                Some(MergeGroup {
                    ids: g.iter().map(|r| r.id).collect(),
                    merged: newest.content.clone(),
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_text_ignores_case_and_punctuation() {
        assert_eq!(
            normalised("The wiki is at wiki.example.com!"),
            normalised("the wiki is at  WIKI.example.com")
        );
        assert_ne!(
            normalised("The wiki is at wiki.example.com"),
            normalised("The wiki is at wiki2.example.com")
        );
    }
}
