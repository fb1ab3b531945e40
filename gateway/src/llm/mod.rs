//! Language-model roles: the extractor (classifies items, soft) and the
//! responder (writes replies). `offline` is deterministic and needs no network;
//! `openai` talks to any OpenAI-compatible server. The judge, consolidation and
//! summary roles are in `roles`; every model call of a turn draws on `budget`.

pub mod budget;
pub mod offline;
pub mod openai;
pub mod roles;

pub use roles::{
    Consolidator, Judge, JudgedRetirement, MergeGroup, Models, Roles, Summarizer, TokenUsage,
    UsageSnapshot,
};

use memory::store::Retrieved;
use memory::{Candidate, Principal};

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("model unavailable: {0}")]
    Unavailable(String),
    #[error("model answer invalid: {0}")]
    Invalid(String),
}

/// Proposes memory items from a message. Its labels are never authority.
#[async_trait::async_trait]
pub trait Extractor: Send + Sync {
    async fn extract(&self, text: &str) -> Result<Vec<Candidate>, LlmError>;
}

/// What a reply may draw on.
#[derive(Debug, Clone)]
pub struct ReplyContext<'a> {
    pub principal: &'a Principal,
    pub text: &'a str,
    /// Memory the turn may read, most authoritative first.
    pub memory: &'a [Retrieved],
    /// A group thread: no citations of personal memory.
    pub shared: bool,
    /// Agent notes left out because org policy on their subject wins.
    pub overridden: &'a [crate::context::Overridden],
    /// The assembled prompt (system policy plus memory as data), for model responders.
    pub prompt: &'a str,
}

#[async_trait::async_trait]
pub trait Responder: Send + Sync {
    async fn respond(&self, ctx: &ReplyContext<'_>) -> Result<String, LlmError>;
}
