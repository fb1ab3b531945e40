//! `steward.toml` plus `STEWARD_<SECTION>__<KEY>` environment overrides.
//! Every key has an embedded default, so no file is needed. A channel's
//! section (`[<channel>]`) is its own type (`config/<channel>.rs`, a
//! [`Section`](section::Section)), and a plain field of `Config`; the
//! channels crate reads it, this crate knows no channel.

pub mod discord;
mod llm;
mod mcp;
mod memory_settings;
pub mod oidc;
mod runs;
pub mod section;
mod server;
pub mod slack;
pub mod teams;
pub mod teams_bot;
mod turn;

pub use llm::{LlmConfig, ModelPreset, SchemaLimits, ToolsMode, LOCAL_MODEL_KEYS};
pub use mcp::{McpConfig, McpHeaderConfig, McpServerConfig, McpTransport};
pub use memory_settings::{EmbeddingsConfig, MemoryConfig, SkillsConfig};
pub use runs::{
    webhook_key, Deliver, Procedure, RunTarget, ScheduleConfig, SecretError, WebhookConfig,
};
pub use server::{DashboardConfig, DatabaseConfig, MetricsConfig, RateLimitConfig, ServerConfig};
pub use turn::{DmPolicy, GroupPolicy, HistoryFor, PairingConfig, TurnConfig};

use discord::DiscordConfig;
use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use section::{Section, TargetForm};
use serde::{Deserialize, Serialize};
use slack::SlackConfig;
use std::collections::BTreeMap;
use std::path::Path;
use teams::TeamsConfig;
use teams_bot::TeamsBotConfig;
use validator::{Validate, ValidationErrors, ValidationErrorsKind};

/// The whole configuration: these sections, then each channel's own.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    #[validate(nested)]
    pub server: ServerConfig,
    pub database: DatabaseConfig,
    #[validate(nested)]
    pub llm: LlmConfig,
    #[validate(nested)]
    pub memory: MemoryConfig,
    #[validate(nested)]
    pub pairing: PairingConfig,
    #[validate(nested)]
    pub turn: TurnConfig,
    #[validate(nested)]
    pub rate_limit: RateLimitConfig,
    #[validate(nested)]
    pub dashboard: DashboardConfig,
    pub metrics: MetricsConfig,
    #[validate(nested)]
    pub embeddings: EmbeddingsConfig,
    #[validate(nested)]
    pub skills: SkillsConfig,
    /// `[mcp]` and `[[mcp.servers]]`: external tools an administrator approves (docs/tools.md).
    #[validate(nested)]
    pub mcp: McpConfig,
    /// Settings of one agent, by agent id (`[agents.it] auto_keep = true`);
    /// what an agent does not set is the global setting.
    pub agents: BTreeMap<String, AgentConfig>,
    /// Automated runs at set times (`[[schedules]]`).
    pub schedules: Vec<ScheduleConfig>,
    /// Automated runs on a signed request to `POST /hooks/<name>` (`[[webhooks]]`).
    pub webhooks: Vec<WebhookConfig>,
    /// `[teams]`: the Teams channel (`channels::teams`).
    #[validate(nested)]
    pub teams: TeamsConfig,
    /// `[discord]`: the Discord channel (`channels::discord`).
    #[validate(nested)]
    pub discord: DiscordConfig,
    /// `[slack]`: the Slack channel (`channels::slack`).
    #[validate(nested)]
    pub slack: SlackConfig,
    /// `[teams_bot]`: Teams as a Bot Framework bot (`channels::teams_bot`).
    #[validate(nested)]
    pub teams_bot: TeamsBotConfig,
    /// `[oidc]`: people sign in to the dashboard through an OpenID Connect provider.
    pub oidc: oidc::OidcConfig,
}

impl Config {
    /// Each channel's section with its key (its channel's name), in the
    /// keys' order. A channel with a section has its line here.
    pub fn sections(&self) -> Vec<(&'static str, &dyn Section)> {
        vec![
            ("discord", &self.discord),
            ("slack", &self.slack),
            ("teams", &self.teams),
            ("teams_bot", &self.teams_bot),
        ]
    }

    /// How runs name the conversations of each channel that takes their
    /// answers, by its section's key, in the keys' order.
    fn targets() -> Vec<(&'static str, TargetForm)> {
        [
            ("discord", DiscordConfig::target()),
            ("slack", SlackConfig::target()),
            ("teams", TeamsConfig::target()),
            ("teams_bot", TeamsBotConfig::target()),
        ]
        .into_iter()
        .filter_map(|(key, form)| Some((key, form?)))
        .collect()
    }
}

/// One agent's own settings (`[agents.<id>]`); each unset one is the global one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// `memory.auto_keep` for this agent: save implicit items without asking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_keep: Option<bool>,
}

/// The first setting out of its range, as `section.key` and why (keys in
/// order, so the message is the same on every run).
fn out_of_range(errors: &ValidationErrors) -> (String, String) {
    let mut fields: Vec<_> = errors.errors().iter().collect();
    fields.sort_by(|a, b| a.0.cmp(b.0));
    for (field, kind) in fields {
        match kind {
            ValidationErrorsKind::Struct(inner) => {
                let (key, why) = out_of_range(inner);
                return (format!("{field}.{key}"), why);
            }
            ValidationErrorsKind::Field(list) => {
                if let Some(e) = list.first() {
                    let param = |name: &str| {
                        e.params
                            .get(name)
                            .map(|v| v.to_string())
                            .unwrap_or_else(|| "?".into())
                    };
                    let why = format!(
                        "must be between {} and {} (it is {})",
                        param("min"),
                        param("max"),
                        param("value")
                    );
                    return (field.to_string(), why);
                }
            }
            ValidationErrorsKind::List(_) => {}
        }
    }
    ("config".into(), "a setting is out of range".into())
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config file {0} does not exist")]
    Missing(String),
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl Config {
    /// Defaults, then `path` (required when given, else `steward.toml` if present),
    /// then `STEWARD_<SECTION>__<KEY>` variables.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        // What the operator set, apart from the defaults: a preset fills only the rest.
        let mut set = Figment::new();
        match path {
            Some(p) if !p.exists() => return Err(ConfigError::Missing(p.display().to_string())),
            Some(p) => set = set.merge(Toml::file_exact(p)),
            None if Path::new("steward.toml").exists() => {
                set = set.merge(Toml::file_exact("steward.toml"))
            }
            None => {}
        }
        // Only sectioned names (`STEWARD_DATABASE__URL`) are configuration;
        // other STEWARD_ variables (test settings) are not.
        set = set.merge(
            Env::prefixed("STEWARD_")
                .filter(|k| k.as_str().contains("__"))
                .split("__"),
        );
        Config::over_defaults(set)
    }

    /// `set` over the defaults, checked.
    fn over_defaults(set: Figment) -> Result<Config, ConfigError> {
        let mut cfg: Config = Figment::from(Serialized::defaults(Config::default()))
            .merge(set.clone())
            .extract()
            .map_err(|e| ConfigError::Invalid(render(e)))?;
        cfg.llm.set_by_operator = LOCAL_MODEL_KEYS
            .into_iter()
            .filter(|k| set.contains(k))
            .collect();
        cfg.check()?;
        Ok(cfg)
    }

    /// Parse a TOML text on top of the defaults (no environment).
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        Config::over_defaults(Figment::from(Toml::string(text)))
    }

    fn check(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError::Invalid(format!("{key}: {why}")));
        if let Err((key, why)) = self.llm.check() {
            return bad(key, &why);
        }
        // Every numeric setting has a range (the `#[validate(range)]` on its
        // field): outside it, pairing, consent or the limits would break
        // quietly (a code that never expires, a budget of nothing). A `0` that
        // means something is inside: `llm.turn_token_budget` (no limit), a
        // channel's reply deadline (acknowledge first; its upper bound is the
        // section's own check).
        if let Err(errors) = Validate::validate(self) {
            let (key, why) = out_of_range(&errors);
            return bad(&key, &why);
        }
        for (key, agent) in self.agent_settings() {
            if let Some(Err(why)) = agent.map(memory::check_agent_id) {
                return bad(&key, why);
            }
        }
        for id in self.agents.keys() {
            if let Err(why) = memory::check_agent_id(id) {
                return bad(&format!("agents.{id}"), why);
            }
        }
        if let Err((key, why)) = self.mcp.check() {
            return bad(&key, &why);
        }
        // Every organisation a message or a run can be filed under.
        let mut orgs = vec![("server.org".to_string(), Some(&self.server.org))];
        for (_, section) in self.sections() {
            orgs.extend(section.orgs().into_iter().map(|(key, o)| (key, Some(o))));
        }
        orgs.extend(
            self.schedules
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("schedules[{i}].org"), s.org.as_ref())),
        );
        orgs.extend(
            self.webhooks
                .iter()
                .enumerate()
                .map(|(i, w)| (format!("webhooks[{i}].org"), w.org.as_ref())),
        );
        for (key, org) in orgs {
            if let Some(Err(why)) = org.map(|o| memory::check_org_id(o)) {
                return bad(&key, why);
            }
        }
        if self.server.listen.parse::<std::net::SocketAddr>().is_err() {
            return bad("server.listen", "not a socket address like 127.0.0.1:8080");
        }
        self.dashboard.check()?;
        self.oidc.check().map_err(ConfigError::Invalid)?;
        self.metrics.check(&self.server)?;
        self.embeddings.check()?;
        for (_, section) in self.sections() {
            section.check().map_err(ConfigError::Invalid)?;
        }
        self.check_runs()?;
        Ok(())
    }

    /// Whether `agent` saves implicit items without asking: its own
    /// `[agents.<id>] auto_keep`, else `memory.auto_keep`.
    pub fn auto_keep(&self, agent: &str) -> bool {
        self.agents
            .get(agent)
            .and_then(|a| a.auto_keep)
            .unwrap_or(self.memory.auto_keep)
    }

    /// The effective configuration as JSON with every secret replaced by
    /// [`REDACTED`]: tokens (`dashboard.admin_token`, `metrics.token`, any
    /// key naming a token, secret or password), the values of the channels'
    /// secret tables ([`Section::secret_tables`]) and the database URL's
    /// password.
    pub fn redacted(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        let tables: Vec<String> = self
            .sections()
            .into_iter()
            .flat_map(|(key, section)| {
                section
                    .secret_tables()
                    .iter()
                    .map(move |table| format!("{key}.{table}"))
            })
            .collect();
        redact(&mut v, "", &tables);
        if let Some(url) = v.pointer_mut("/database/url") {
            *url = serde_json::Value::String(memory::store::without_password(&self.database.url));
        }
        // An MCP server's URL may carry a user and password; its headers are
        // read from elsewhere and only where is shown.
        for (i, server) in self.mcp.servers.iter().enumerate() {
            if let (Some(url), Some(shown)) =
                (&server.url, v.pointer_mut(&format!("/mcp/servers/{i}/url")))
            {
                *shown = serde_json::Value::String(memory::store::without_password(url));
            }
        }
        v
    }

    /// Warnings to print at start (retired settings).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.memory.quarantine_learned_facts.is_some() {
            w.push(
                "memory.quarantine_learned_facts is retired and has no effect: non-admin operational items are never learned, and relearned ones are quarantined for review".into(),
            );
        }
        w
    }
}

/// What the settings page and any other view show instead of a secret.
pub const REDACTED: &str = "(set, hidden)";

/// Replace the secrets below `v` (at `path`, dotted) by [`REDACTED`]:
/// secret keys' values and every value of the `tables`.
fn redact(v: &mut serde_json::Value, path: &str, tables: &[String]) {
    let secret_key = |key: &str| {
        key == "api_key"
            || ["token", "secret", "password"]
                .iter()
                .any(|w| key.contains(w))
    };
    match v {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                let here = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                let hidden = secret_key(key) || tables.iter().any(|t| t == path);
                if hidden && !value.is_null() {
                    *value = serde_json::Value::String(REDACTED.into());
                } else {
                    redact(value, &here, tables);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|i| redact(i, path, tables)),
        _ => {}
    }
}

fn render(e: figment::Error) -> String {
    e.into_iter()
        .map(|e| {
            let key = e.path.join(".");
            if key.is_empty() {
                e.kind.to_string()
            } else {
                format!("{key}: {}", e.kind)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests;
