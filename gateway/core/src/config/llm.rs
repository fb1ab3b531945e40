//! `[llm]`: the models steward asks, their presets and limits.

use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use validator::Validate;

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// `offline`: deterministic rules, no network (default). `openai`: an
    /// OpenAI-compatible HTTP server (OpenAI, Ollama, vLLM, llama.cpp server).
    #[default = "offline"]
    pub provider: String,
    /// `openai`: the API root, e.g. `http://127.0.0.1:11434/v1` (Ollama) or `https://api.openai.com/v1`.
    pub base_url: Option<String>,
    /// `openai`: the model name the server knows (`llama3.1`, `gpt-4o-mini`, …).
    pub model: Option<String>,
    /// `openai`: NAME of the environment variable holding the API key
    /// (e.g. `OPENAI_API_KEY`); unset for servers that need none.
    pub api_key_env: Option<String>,
    /// Time one model request may take, in milliseconds.
    #[default = 60_000]
    #[validate(range(min = 100, max = 3_600_000))]
    pub timeout_ms: u64,
    /// Retries of a request answered 429 or 5xx.
    #[default = 2]
    #[validate(range(min = 0, max = 10))]
    pub max_retries: u32,
    /// Backoff before the first retry when the server gives no `Retry-After`; doubles per retry.
    #[default = 500]
    #[validate(range(min = 0, max = 3_600_000))]
    pub retry_base_ms: u64,
    /// Longest `Retry-After` honoured, in seconds; a server asking for more fails the call.
    #[default = 30]
    #[validate(range(min = 0, max = 3600))]
    pub max_retry_after_seconds: u64,
    /// Most tokens one model answer may have.
    #[default = 2048]
    #[validate(range(min = 1, max = 1_000_000))]
    pub max_output_tokens: u32,
    /// The request field that caps an answer: `max_tokens` (most servers) or
    /// `max_completion_tokens` (OpenAI's reasoning models).
    #[default = "max_tokens"]
    pub max_tokens_field: String,
    /// `on`: the structured-output schemas bound every string and array
    /// (`maxLength`, `maxItems`), so a grammar-constrained local model closes
    /// them instead of writing until the token cap. `off` strips those
    /// keywords, for servers whose strict mode refuses them (OpenAI's hosted
    /// API, for some models).
    #[default(SchemaLimits::On)]
    pub schema_limits: SchemaLimits,
    /// Sampling temperature sent with every request; unset leaves it to the
    /// server. A small local model answers from memory more faithfully at 0
    /// (it picks the most likely words: the note's own); OpenAI's reasoning
    /// models accept only their default, so leave it unset for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[validate(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Tokens (prompt and answer) all model calls of one turn may use; 0 = no limit.
    #[default = 16_000]
    #[validate(range(min = 0, max = 100_000_000))]
    pub turn_token_budget: u64,
    /// Run memory consolidation in the background of `serve` (first after 5 minutes).
    #[default = true]
    pub auto_consolidate: bool,
    /// Whether replies offer the model tools (`memory_search`, `memory_write`,
    /// `memory_forget`, and the approved external tools): `external` offers
    /// only the approved external ones.
    #[default(ToolsMode::Auto)]
    pub tools: ToolsMode,
    /// Rounds of tool calls one reply may make before the model must answer in text.
    #[default = 4]
    #[validate(range(min = 0, max = 16))]
    pub max_tool_rounds: u32,
    /// What kind of model this is, for the settings a small one needs
    /// (`llm::local_model`): `auto` asks the server at start.
    #[default(ModelPreset::Auto)]
    pub preset: ModelPreset,
    /// The keys of [`LOCAL_MODEL_KEYS`] the file or the environment set: a
    /// preset never overrides them. Filled by [`Config::load`].
    #[serde(skip)]
    pub set_by_operator: Vec<&'static str>,
}

/// The settings a small local model gets from `llm.preset` when the
/// configuration leaves them unset (docs/models.md says why each).
pub const LOCAL_MODEL_KEYS: [&str; 4] = [
    "llm.temperature",
    "llm.max_output_tokens",
    "llm.tools",
    "turn.history_for",
];

/// `llm.preset`: what kind of model the server runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ModelPreset {
    /// Ask the server (llama.cpp's and Ollama's model metadata) at start: a
    /// model of 8B parameters or fewer gets the local settings; an unknown
    /// size, none.
    Auto,
    /// A small local model, whatever the server says.
    Local,
    /// A hosted or large model: the settings stay as configured.
    Hosted,
}

/// `llm.tools`: whether a reply offers the model tools.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ToolsMode {
    /// Offer them; a server that rejects a request with tools is asked again
    /// without them, and not offered them again.
    Auto,
    /// Offer them; a server that rejects them fails the reply.
    On,
    /// Never offer them.
    Off,
    /// Offer only the external tools an administrator approved (MCP,
    /// docs/tools.md), never steward's own memory tools: what a small local
    /// model gets (`llm.preset`). A reply with none approved for its speaker
    /// offers nothing and stays one model call.
    External,
}

impl LlmConfig {
    /// The key that is wrong and why.
    pub(super) fn check(&self) -> Result<(), (&'static str, String)> {
        match self.provider.as_str() {
            "offline" => {}
            "openai" => {
                let url = self.base_url.as_deref().map(str::trim).unwrap_or("");
                if url.is_empty() {
                    return Err(("llm.base_url", "required when provider = \"openai\"".into()));
                }
                if !(url.starts_with("http://") || url.starts_with("https://"))
                    || url.contains(char::is_whitespace)
                {
                    return Err((
                        "llm.base_url",
                        format!("`{url}` is not an http(s) URL like http://127.0.0.1:11434/v1"),
                    ));
                }
                if self
                    .model
                    .as_deref()
                    .map(str::trim)
                    .unwrap_or("")
                    .is_empty()
                {
                    return Err(("llm.model", "required when provider = \"openai\"".into()));
                }
            }
            other => {
                return Err((
                    "llm.provider",
                    format!("unknown provider `{other}` (expected `offline` or `openai`)"),
                ))
            }
        }
        if let Some(name) = &self.api_key_env {
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err((
                    "llm.api_key_env",
                    "the NAME of an environment variable (like OPENAI_API_KEY), not the key".into(),
                ));
            }
        }
        if !["max_tokens", "max_completion_tokens"].contains(&self.max_tokens_field.as_str()) {
            return Err((
                "llm.max_tokens_field",
                "expected `max_tokens` or `max_completion_tokens`".into(),
            ));
        }
        Ok(())
    }
}

/// Whether structured-output schemas carry length keywords (`llm.schema_limits`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SchemaLimits {
    /// `maxLength` on every string, `maxItems` on every array (default).
    On,
    /// No length keywords (OpenAI's hosted strict mode may need this).
    Off,
}
