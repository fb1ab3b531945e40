//! The Teams channel: the outgoing webhook (`adapters::teams`) on the turn
//! loop from the `[teams]` section of the configuration, and delivery to a
//! channel through its Workflows webhook.

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use crate::config::{Config, ConfigError};
use crate::services::Services;
use adapters::teams::{self, TeamsSettings};
use adapters::TurnHandler;
use axum::Router;
use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use validator::Validate;

/// `[teams]`: on when `teams.security_token` is set.
pub struct Teams;

#[async_trait::async_trait]
impl Channel for Teams {
    fn name(&self) -> &'static str {
        teams::CHANNEL
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.channels.teams.security_token.is_some()
    }

    fn agent<'c>(&self, cfg: &'c Config) -> Option<&'c str> {
        cfg.channels.teams.agent.as_deref()
    }

    fn agent_key(&self) -> Option<&'static str> {
        Some("teams.agent")
    }

    fn check(&self, cfg: &Config) -> Result<(), ConfigError> {
        let t = &cfg.channels.teams;
        if let Some(Err(why)) = t.agent.as_deref().map(memory::check_agent_id) {
            return Err(ConfigError::Invalid(format!("teams.agent: {why}")));
        }
        for (tenant, org) in &t.tenant_orgs {
            if let Err(why) = memory::check_org_id(org) {
                let key = format!("teams.tenant_orgs.{tenant}");
                return Err(ConfigError::Invalid(format!("{key}: {why}")));
            }
        }
        t.check()
    }

    fn target_form(&self) -> Option<&'static str> {
        Some("<channel>")
    }

    fn parse_target(&self, target: &str) -> Option<String> {
        let target = target.trim();
        (!target.is_empty()).then(|| target.into())
    }

    fn check_target(&self, cfg: &Config, target: &str) -> Result<(), String> {
        let t = &cfg.channels.teams;
        if t.security_token.is_none() {
            return Err("needs the Teams channel (teams.security_token)".into());
        }
        if !t.workflows.contains_key(target) {
            return Err(format!(
                "needs a Workflows webhook for `{target}` (teams.workflows)"
            ));
        }
        Ok(())
    }

    fn routes(&self, services: &Services) -> Option<Router> {
        Some(routes(services))
    }

    fn announce(&self, _cfg: &Config, addr: SocketAddr) -> Option<String> {
        Some(format!(
            "Teams outgoing webhook: POST http://{addr}/teams/<agent>"
        ))
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        let t = &cfg.channels.teams;
        let agent = t.agent.as_deref().unwrap_or(&cfg.server.agent);
        vec![
            SettingRow::new(
                "webhook",
                "POST /teams/<agent> (POST /teams: the agent below)",
            ),
            SettingRow::new("agent", agent),
            SettingRow::new(
                "late replies and delivery",
                format!(
                    "Workflows webhooks of {} Teams channels (teams.workflows)",
                    t.workflows.len()
                ),
            ),
        ]
    }

    /// Posts to the Workflows webhook of the conversation's Teams channel
    /// (`teams.workflows`); a conversation whose channel has none (a personal
    /// chat) cannot be posted into.
    async fn deliver(&self, services: &Services, out: Outbound<'_>) -> Delivery {
        let Outbound { to, text } = out;
        let t = &services.config().channels.teams;
        let channel = teams::channel_of(&to.conversation);
        let Some(url) = t.workflows.get(channel) else {
            return Err(DeliveryError::no_route(
                teams::CHANNEL,
                to,
                format!("its Teams channel `{channel}` has no Workflows webhook (teams.workflows)"),
            ));
        };
        let failed = |reason: String| DeliveryError::Failed {
            channel: teams::CHANNEL,
            reason,
        };
        let client = teams::workflows_client().map_err(|e| failed(e.to_string()))?;
        teams::post_to_workflows(
            &client,
            url,
            text,
            t.workflows_attempts,
            Duration::from_millis(t.workflows_backoff_ms),
        )
        .await
        .map_err(|e| failed(e.to_string()))?;
        Ok(Delivered::Posted { ids: Vec::new() })
    }
}

/// The adapter's settings from the configuration; `None` when `teams.security_token` is unset.
pub fn settings(cfg: &crate::Config) -> Option<Result<TeamsSettings, teams::TeamsError>> {
    let t = &cfg.channels.teams;
    let token = t.security_token.as_deref()?;
    Some(TeamsSettings::new(token).map(|mut s| {
        s.workflows = t
            .workflows
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().into()))
            .collect();
        s.reply_deadline = Duration::from_millis(t.reply_deadline_ms);
        s.tenant_orgs = t
            .tenant_orgs
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        s.default_org = cfg.server.org.clone();
        s.default_agent = t.agent.clone().unwrap_or_else(|| cfg.server.agent.clone());
        s.max_body_bytes = t.max_body_bytes.unwrap_or(cfg.server.max_body_bytes);
        s.workflows_attempts = t.workflows_attempts;
        s.workflows_backoff = Duration::from_millis(t.workflows_backoff_ms);
        s
    }))
}

/// `POST /teams/{agent}` on the turn loop when the channel is configured; no routes otherwise.
pub fn routes<S>(services: &Services) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    match settings(services.config()) {
        None => Router::new(),
        Some(Ok(s)) => {
            let handler: Arc<dyn TurnHandler> = services.turns().clone();
            teams::router(s, handler)
        }
        Some(Err(e)) => {
            // Config::load refuses such a token; a hand-built Config still must not serve.
            tracing::error!(error = %e, "teams.security_token: Teams channel disabled");
            Router::new()
        }
    }
}

/// The Teams outgoing webhook. Off unless a security token is set.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct TeamsConfig {
    /// The outgoing webhook's security token (base64), as Teams shows it.
    pub security_token: Option<String>,
    /// Retired: one Workflows webhook for every channel posted each channel's
    /// late replies into one (see `workflows`). Refused at start when set.
    pub workflows_url: Option<String>,
    /// Teams channel id (`channelData.channel.id`, `19:…@thread.tacv2`) → the
    /// Workflows webhook ("Post to a channel when a webhook request is
    /// received") that posts into that channel: where its replies finished
    /// after the deadline go. Other conversations get no late reply.
    pub workflows: BTreeMap<String, String>,
    /// How long a request waits for the turn before acknowledging (Teams waits 5 s).
    #[default = 4000]
    #[validate(range(min = 0, max = 60_000))]
    pub reply_deadline_ms: u64,
    /// Teams tenant id → organisation; other tenants are `server.org`.
    pub tenant_orgs: BTreeMap<String, String>,
    /// Agent of `POST /teams` (no agent in the path); default `server.agent`.
    pub agent: Option<String>,
    /// Largest accepted webhook body; default `server.max_body_bytes`.
    #[validate(range(min = 1024, max = 67_108_864))]
    pub max_body_bytes: Option<usize>,
    /// Workflows posts are tried at most this many times (429, 5xx, network errors).
    #[default = 5]
    #[validate(range(min = 1, max = 20))]
    pub workflows_attempts: u32,
    /// Wait before the second Workflows attempt, doubling after each further one,
    /// unless the endpoint sends `Retry-After`.
    #[default = 500]
    #[validate(range(min = 1, max = 60_000))]
    pub workflows_backoff_ms: u64,
}

/// `[teams]`.
pub type Section = TeamsConfig;

impl super::Section for TeamsConfig {
    /// A Workflows webhook's URL carries its signature in the query.
    const HIDDEN_MAPS: &'static [&'static str] = &["workflows"];
}

impl TeamsConfig {
    fn check(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: String| Err(ConfigError::Invalid(format!("{key}: {why}")));
        let t = self;
        if let Some(token) = &t.security_token {
            if let Err(e) = adapters::teams::decode_security_token(token) {
                return bad(
                    "teams.security_token",
                    format!(
                        "{e} (paste the token Teams showed when the outgoing webhook was created)"
                    ),
                );
            }
        }
        if t.workflows_url.is_some() {
            return bad(
                "teams.workflows_url",
                "retired: it posted every channel's late replies into one channel. Map each channel to its own webhook under [teams.workflows] (\"<channel id>\" = \"https://…\")".into(),
            );
        }
        for (channel, url) in &t.workflows {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return bad(
                    &format!("teams.workflows.{channel}"),
                    "must be an http(s) URL".into(),
                );
            }
        }
        if t.reply_deadline_ms >= 5000 {
            return bad(
                "teams.reply_deadline_ms",
                "must be below 5000: Teams stops waiting after 5 seconds".into(),
            );
        }
        if let Some((tenant, _)) = t.tenant_orgs.iter().find(|(_, org)| org.trim().is_empty()) {
            return bad(
                &format!("teams.tenant_orgs.{tenant}"),
                "organisation must not be empty".into(),
            );
        }
        Ok(())
    }
}
