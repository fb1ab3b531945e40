//! Settings a small local model needs, chosen at start when the configuration
//! leaves them unset (`llm.preset`, docs/models.md). A newcomer who sets only
//! `provider`, `base_url` and `model` gets what the measured settings give: the
//! server's own sampling paraphrases notes, the memory tools offered to a
//! model that writes them as text cost every reply their whole prompt (the
//! approved external tools are still offered: only they do what the person
//! asks), and a small
//! model shown the conversation copies its earlier answers.

use std::time::Duration;

use serde_json::Value;

use crate::config::{Config, HistoryFor, ModelPreset, ToolsMode};

/// Models this size or smaller get the local settings.
pub const SMALL_MODEL_PARAMS: u64 = 8_000_000_000;

/// The reply cap for a small local model: what ~10 tokens a second writes well
/// within `llm.timeout_ms`'s default, and longer than any answer from a note.
pub const LOCAL_MAX_OUTPUT_TOKENS: u32 = 320;

/// How long start-up waits for the server to say what it runs.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What the server said about its model, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerModel {
    pub params: u64,
    /// The endpoint that said it (for the start-up log).
    pub source: &'static str,
}

/// What start-up chose, for the log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chosen {
    /// Not an OpenAI-compatible server, or `llm.preset = "hosted"`.
    Nothing,
    /// `auto`, and the server did not say how big its model is.
    UnknownSize,
    /// `auto`, and the model is larger than [`SMALL_MODEL_PARAMS`].
    Large(ServerModel),
    /// The local settings went to these keys (the operator's own were kept).
    Local {
        why: String,
        applied: Vec<&'static str>,
    },
}

/// Ask the server about its model when `llm.preset` says to, and give a small
/// one the local settings wherever the operator set nothing.
pub async fn settle(cfg: &mut Config) -> Chosen {
    if cfg.llm.provider != "openai" {
        return Chosen::Nothing;
    }
    let why = match cfg.llm.preset {
        ModelPreset::Hosted => return Chosen::Nothing,
        ModelPreset::Local => "llm.preset = \"local\"".to_string(),
        ModelPreset::Auto => match probe(cfg).await {
            None => return Chosen::UnknownSize,
            Some(m) if m.params > SMALL_MODEL_PARAMS => return Chosen::Large(m),
            Some(m) => format!(
                "the server runs a model of {:.1}B parameters ({})",
                m.params as f64 / 1e9,
                m.source
            ),
        },
    };
    Chosen::Local {
        why,
        applied: apply_local(cfg),
    }
}

/// Give each of the local settings the operator left unset its local value;
/// the keys set.
pub fn apply_local(cfg: &mut Config) -> Vec<&'static str> {
    let set = cfg.llm.set_by_operator.clone();
    let mut applied = Vec::new();
    let mut give = |key: &'static str, apply: &mut dyn FnMut()| {
        if !set.contains(&key) {
            apply();
            applied.push(key);
        }
    };
    give("llm.temperature", &mut || cfg.llm.temperature = Some(0.0));
    give("llm.max_output_tokens", &mut || {
        cfg.llm.max_output_tokens = LOCAL_MAX_OUTPUT_TOKENS
    });
    give("llm.tools", &mut || cfg.llm.tools = ToolsMode::External);
    give("turn.history_for", &mut || {
        cfg.turn.history_for = HistoryFor::FollowUps
    });
    applied
}

/// The model's parameter count as the server reports it: llama.cpp's
/// `GET /v1/models` (`meta.n_params`), else Ollama's `POST /api/show`
/// (`details.parameter_size`, "8.0B"). `None` when neither says (hosted APIs).
pub async fn probe(cfg: &Config) -> Option<ServerModel> {
    let base = cfg.llm.base_url.as_deref()?.trim().trim_end_matches('/');
    let model = cfg.llm.model.as_deref()?.trim();
    let http = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .build()
        .ok()?;
    let key = cfg
        .llm
        .api_key_env
        .as_deref()
        .and_then(|name| std::env::var(name).ok());
    let with_key = |r: reqwest::RequestBuilder| match &key {
        Some(k) => r.bearer_auth(k.trim()),
        None => r,
    };
    if let Some(params) = get_json(with_key(http.get(format!("{base}/models"))))
        .await
        .and_then(|v| llama_cpp_params(&v, model))
    {
        return Some(ServerModel {
            params,
            source: "GET /v1/models",
        });
    }
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let show = with_key(http.post(format!("{root}/api/show")))
        .json(&serde_json::json!({ "model": model }));
    get_json(show)
        .await
        .and_then(|v| ollama_params(&v))
        .map(|params| ServerModel {
            params,
            source: "POST /api/show",
        })
}

async fn get_json(request: reqwest::RequestBuilder) -> Option<Value> {
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

/// `meta.n_params` of the listed model named `model`, or of the only one listed.
fn llama_cpp_params(list: &Value, model: &str) -> Option<u64> {
    let data = list.get("data")?.as_array()?;
    let entry = data
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| data.first().filter(|_| data.len() == 1))?;
    entry.get("meta")?.get("n_params")?.as_u64()
}

/// Ollama's `details.parameter_size`: "8.0B", "1.5B", "567M".
fn ollama_params(show: &Value) -> Option<u64> {
    let size = show.get("details")?.get("parameter_size")?.as_str()?.trim();
    let (number, unit) = size.split_at(size.len().checked_sub(1)?);
    let scale = match unit {
        "B" | "b" => 1e9,
        "M" | "m" => 1e6,
        "K" | "k" => 1e3,
        _ => return None,
    };
    let n: f64 = number.trim().parse().ok()?;
    (n.is_finite() && n > 0.0).then_some((n * scale) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameter_counts_are_read_from_both_servers_and_nothing_else() {
        let llama = json!({"object": "list", "data": [{"id": "qwen", "meta": {"n_params": 1_543_714_304u64}}]});
        assert_eq!(llama_cpp_params(&llama, "qwen"), Some(1_543_714_304));
        assert_eq!(
            llama_cpp_params(&llama, "another name"),
            Some(1_543_714_304)
        );
        let two = json!({"data": [{"id": "a", "meta": {"n_params": 7}}, {"id": "b"}]});
        assert_eq!(llama_cpp_params(&two, "b"), None);
        assert_eq!(
            llama_cpp_params(&json!({"data": [{"id": "gpt-4o-mini"}]}), "gpt-4o-mini"),
            None
        );
        assert_eq!(
            ollama_params(&json!({"details": {"parameter_size": "8.0B"}})),
            Some(8_000_000_000)
        );
        assert_eq!(
            ollama_params(&json!({"details": {"parameter_size": "567M"}})),
            Some(567_000_000)
        );
        assert_eq!(
            ollama_params(&json!({"details": {"parameter_size": "large"}})),
            None
        );
        assert_eq!(
            ollama_params(&json!({"details": {"parameter_size": ""}})),
            None
        );
    }

    #[test]
    fn the_operators_own_settings_are_kept() {
        let mut cfg = Config::from_toml(
            "[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\ntemperature = 0.7\n[turn]\nhistory_for = \"every\"\n",
        )
        .expect("config");
        assert_eq!(
            apply_local(&mut cfg),
            vec!["llm.max_output_tokens", "llm.tools"]
        );
        assert_eq!(cfg.llm.temperature, Some(0.7));
        assert_eq!(cfg.turn.history_for, HistoryFor::Every);
        assert_eq!(cfg.llm.max_output_tokens, LOCAL_MAX_OUTPUT_TOKENS);
        assert_eq!(cfg.llm.tools, ToolsMode::External);
    }
}
