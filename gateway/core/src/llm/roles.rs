//! The set of models a turn loop uses, chosen from `llm.provider`, and the
//! models that need no server (offline consolidation, an unavailable provider).
//!
//! Every role only proposes. What a judge or a consolidator answers is applied
//! by `memory::Db::retire` / `Db::merge`, which check place, time and vetoes in
//! code; what an extractor answers goes through `memory::policy::decide`.

use super::openai::OpenAi;
use super::usage::TokenUsage;
use super::{
    Consolidator, Extractor, Judge, LlmError, MergeGroup, Provenance, ReplyContext, Responder,
    Summarizer,
};
use crate::config::LlmConfig;
use memory::{Candidate, MemoryRecord};
use std::collections::BTreeMap;
use std::sync::Arc;

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
                consolidator: u,
                ..Roles::offline()
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
    fn provenance(&self) -> Provenance<'_> {
        Provenance::without_prompt("unavailable")
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
    fn provenance(&self) -> Provenance<'_> {
        Provenance::without_prompt("offline")
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
