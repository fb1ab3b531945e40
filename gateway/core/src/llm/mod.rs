//! Language-model roles: the extractor (classifies items, soft) and the
//! responder (writes replies). `offline` is deterministic and needs no network;
//! `openai` talks to any OpenAI-compatible server. The judge, consolidation and
//! summary roles are traits here too; `roles` chooses the set a turn loop uses,
//! `usage` counts tokens, and every model call of a turn draws on `budget`.

pub mod budget;
pub mod local_model;
pub mod metered;
pub mod offline;
pub mod openai;
pub mod roles;
pub mod text_calls;
pub mod tool_pick;
pub mod usage;

pub use roles::{Models, Roles};
pub use usage::{TokenUsage, UsageSnapshot};

use memory::store::Retrieved;
use memory::{Candidate, MemoryRecord, Principal, StoredMessage};

/// Most records one consolidation call shows a model (its answer's groups are
/// bounded by it too).
pub const MAX_CONSOLIDATION_RECORDS: usize = 40;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("model unavailable: {0}")]
    Unavailable(String),
    #[error("model answer invalid: {0}")]
    Invalid(String),
    /// The server refused the request itself (a 4xx other than 429).
    #[error("model unavailable: {0}")]
    Rejected(String),
}

/// Proposes memory items from a message. Its labels are never authority.
#[async_trait::async_trait]
pub trait Extractor: Send + Sync {
    async fn extract(&self, text: &str) -> Result<Vec<Candidate>, LlmError>;

    /// The items, and the statement the extractor labels a correction of
    /// how a task was answered (`None`: none, or an extractor that does not
    /// label them). The same call as [`Extractor::extract`]: one call where
    /// one suffices (docs/skills.md).
    async fn extract_labelled(&self, text: &str) -> Result<Extraction, LlmError> {
        Ok(Extraction {
            items: self.extract(text).await?,
            correction: None,
        })
    }
}

/// What one extraction call answered. The correction is a pointer at a
/// statement, never the rule kept: `skills::corrections::read_labelled`
/// screens it and keeps the speaker's own clause.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub items: Vec<Candidate>,
    pub correction: Option<String>,
}

/// What a reply may draw on.
#[derive(Debug, Clone)]
pub struct ReplyContext<'a> {
    pub principal: &'a Principal,
    pub text: &'a str,
    /// What `memory` was found with: `text`, or a follow-up read with the
    /// speaker's previous line ("and tell me again?").
    pub searched_with: &'a str,
    /// Memory the turn may read, most authoritative first.
    pub memory: &'a [Retrieved],
    /// A group thread: no citations of personal memory.
    pub shared: bool,
    /// The conversation's earlier live lines, oldest first (the current
    /// message not among them): `turn.history_messages` / `_chars` at most.
    pub history: &'a [StoredMessage],
    /// Agent notes left out because org policy on their subject wins.
    pub overridden: &'a [crate::context::Overridden],
    /// The assembled prompt (the fixed policy, then this turn's context with
    /// memory as data), for model responders.
    pub prompt: &'a crate::context::Prompt,
    /// What the model may call during this reply (none: a plain completion).
    pub tools: Option<&'a dyn Tools>,
    /// Approved skills this request calls for, best first (also in `prompt`).
    pub skills: &'a [memory::skill::SkillRevision],
}

/// A tool offered to a model: its name, what it does, and the JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Steward's own tools' names are fixed; an external tool's is its listing's.
    pub name: std::borrow::Cow<'static, str>,
    pub description: std::borrow::Cow<'static, str>,
    pub parameters: serde_json::Value,
}

/// Every tool steward offers a model, each one action of the one
/// authorization point (`memory::authz`): `Tool::action` (`crate::tools`) is an
/// exhaustive match, so a tool cannot be offered unclassified.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray, strum::EnumString, strum::IntoStaticStr,
)]
#[strum(serialize_all = "snake_case")]
pub enum Tool {
    MemorySearch,
    MemoryForget,
    ReviewLearned,
    ProposePromotion,
    SkillLoad,
    SkillPropose,
    MemoryWrite,
}

impl Tool {
    /// The tool a model named, if steward offers it.
    pub fn from_name(name: &str) -> Option<Tool> {
        name.parse().ok()
    }

    /// Its name, as offered to a model.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// The tools of one turn, built by the turn loop for its speaker and scope.
/// A provider that supports tool calls offers `specs` and runs each call the
/// model makes through `call`; what `call` returns goes back to the model as
/// data. Nothing here decides authority: the implementation asks the write
/// policy, and the model's arguments are only requests.
#[async_trait::async_trait]
pub trait Tools: Send + Sync {
    fn specs(&self) -> Vec<ToolSpec>;
    /// The external tools among [`Tools::specs`] (`crate::mcp`): none unless
    /// a server offers this speaker some. Asked first by the offline rules,
    /// so a turn with none builds no specs.
    fn external_specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }
    /// Run one call; `arguments` is the model's JSON (an object, or `Null` when
    /// it sent none or invalid JSON). The result is text for the model.
    async fn call(&self, name: &str, arguments: &serde_json::Value) -> String;
}

impl std::fmt::Debug for dyn Tools + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .specs()
            .into_iter()
            .map(|s| s.name.into_owned())
            .collect();
        f.debug_tuple("Tools").field(&names).finish()
    }
}

#[async_trait::async_trait]
pub trait Responder: Send + Sync {
    async fn respond(&self, ctx: &ReplyContext<'_>) -> Result<String, LlmError>;
    /// Whether it reads the prompt: the rules answer from the records alone,
    /// so a turn assembles no standing notes for them.
    fn reads_prompt(&self) -> bool {
        true
    }
}

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

/// Which model, under which prompt, made a revision (stored with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provenance<'a> {
    pub model: &'a str,
    pub prompt_version: Option<&'a str>,
}

impl Provenance<'static> {
    /// A model that uses no prompt (offline rules).
    pub fn without_prompt(model: &'static str) -> Self {
        Provenance {
            model,
            prompt_version: None,
        }
    }
}

/// Decides which live records on the same topic a newly written record replaces.
#[async_trait::async_trait]
pub trait Judge: Send + Sync {
    /// Stored with every revision the judge makes.
    fn provenance(&self) -> Provenance<'_>;
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
    fn provenance(&self) -> Provenance<'_>;
    async fn consolidate(&self, records: &[MemoryRecord]) -> Result<Vec<MergeGroup>, LlmError>;
}

/// Summarises a trimmed slice of history.
#[async_trait::async_trait]
pub trait Summarizer: Send + Sync {
    async fn summarize(&self, slice: &[StoredMessage]) -> Result<String, LlmError>;
}
