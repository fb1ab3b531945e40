//! The Slack channel: the Events API route (`adapters::slack`) on the turn
//! loop from the `[slack]` section of the configuration (`steward_core::config::slack`, read here as `section`), whose
//! signing secret and bot token are read from the environment variables it
//! names, and delivery into a channel or thread through `chat.postMessage`.

pub use steward_core::config::slack as section;

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use adapters::slack::{self, SlackSettings};
use adapters::TurnHandler;
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use steward_core::config::{Config, ConfigError};
use steward_core::services::Services;
use steward_core::workers::Worker;

/// `[slack]`: on when `slack.signing_secret_env` is set.
pub struct Slack;

#[async_trait::async_trait]
impl Channel for Slack {
    fn name(&self) -> &'static str {
        slack::CHANNEL
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.slack.signing_secret_env.is_some()
    }

    fn routes(&self, services: &Services) -> Option<Router> {
        Some(routes(services))
    }

    /// Slack has no connection of its own (Slack posts its events to the
    /// route); its secrets are read here, so `steward serve` does not start
    /// while a variable the section names is unset or empty.
    fn worker(&self, services: &Services) -> Result<Option<Box<dyn Worker>>, ConfigError> {
        settings(services.config())?;
        Ok(None)
    }

    fn announce(&self, _cfg: &Config, addr: SocketAddr) -> Option<String> {
        Some(format!(
            "Slack Events API: POST http://{addr}{}",
            slack::EVENTS_PATH
        ))
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        let s = &cfg.slack;
        vec![
            SettingRow::new("events", format!("POST {}", slack::EVENTS_PATH)),
            // Not the variables' names either: a secret pasted where a name
            // belongs must not show here.
            SettingRow::new(
                "secrets",
                "signing secret and bot token from the environment variables slack.signing_secret_env and slack.bot_token_env name",
            ),
            SettingRow::new("web api", s.api_base.clone()),
            SettingRow::new("agent", s.agent.as_deref().unwrap_or(&cfg.server.agent)),
            SettingRow::new(
                "organisations",
                format!(
                    "{} workspaces mapped (slack.team_orgs); others: {}",
                    s.team_orgs.len(),
                    s.default_org.as_deref().unwrap_or(&cfg.server.org)
                ),
            ),
        ]
    }

    /// Posts into the channel the conversation is (`<channel>`), or into its
    /// thread (`<channel>:<thread ts>`).
    async fn deliver(&self, services: &Services, out: Outbound<'_>) -> Delivery {
        let Outbound { to, text } = out;
        let failed = |reason: String| DeliveryError::Failed {
            channel: slack::CHANNEL,
            reason,
        };
        let settings = match settings(services.config()) {
            Ok(Some(settings)) => settings,
            Ok(None) => return Err(DeliveryError::Off(slack::CHANNEL)),
            Err(e) => return Err(failed(e.to_string())),
        };
        let Some((channel, thread)) = slack::parse_conversation(&to.conversation) else {
            return Err(DeliveryError::no_route(
                slack::CHANNEL,
                to,
                "not a Slack channel id (`C…`, or `C…:<thread ts>`)",
            ));
        };
        match slack::post(&settings, channel, thread, text).await {
            Ok(ids) => Ok(Delivered::Posted { ids }),
            Err(e) => Err(failed(e.to_string())),
        }
    }
}

/// The value of the environment variable `name`, which `key` names.
fn secret(key: &str, name: &str) -> Result<String, ConfigError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(v),
        Ok(_) => Err(ConfigError::Invalid(format!(
            "{key} names the environment variable {name}, which is empty"
        ))),
        Err(_) => Err(ConfigError::Invalid(format!(
            "{key} names the environment variable {name}, which is not set"
        ))),
    }
}

/// The adapter's settings from `[slack]` and the environment, or `None`
/// when the channel is off.
pub fn settings(cfg: &Config) -> Result<Option<SlackSettings>, ConfigError> {
    let s = &cfg.slack;
    let Some(secret_env) = s.signing_secret_env.as_deref() else {
        return Ok(None);
    };
    let token_env = s.bot_token_env.as_deref().ok_or_else(|| {
        ConfigError::Invalid("slack.bot_token_env: required with slack.signing_secret_env".into())
    })?;
    let signing_secret = secret("slack.signing_secret_env", secret_env)?;
    let bot_token = secret("slack.bot_token_env", token_env)?;
    let mut settings = SlackSettings::new(&signing_secret, &bot_token, &s.api_base)
        .map_err(|e| ConfigError::Invalid(format!("slack: {e}")))?;
    settings.team_orgs = s
        .team_orgs
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    settings.default_org = s
        .default_org
        .clone()
        .unwrap_or_else(|| cfg.server.org.clone());
    settings.agent = s.agent.clone().unwrap_or_else(|| cfg.server.agent.clone());
    settings.max_body_bytes = s.max_body_bytes.unwrap_or(cfg.server.max_body_bytes);
    settings.post_attempts = s.post_attempts;
    settings.post_backoff = Duration::from_millis(s.post_backoff_ms);
    Ok(Some(settings))
}

/// `POST /slack/events` on the turn loop when the channel is configured; no routes otherwise.
pub fn routes<S>(services: &Services) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    match settings(services.config()) {
        Ok(None) => Router::new(),
        Ok(Some(s)) => {
            let handler: Arc<dyn TurnHandler> = services.turns().clone();
            slack::router(s, handler)
        }
        Err(e) => {
            // `steward serve` refuses to start so (`Slack::worker`); a hand-built
            // server still must not serve without its secrets.
            tracing::error!(error = %e, "Slack channel disabled");
            Router::new()
        }
    }
}
