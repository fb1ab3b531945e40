//! The Slack channel: the Events API route (`adapters::slack`), or the
//! Socket Mode connection as a worker of `steward serve`
//! (`adapters::slack::socket`), on the turn loop, from the `[slack]` section
//! of the configuration (`steward_core::config::slack`, read here as
//! `section`), whose secrets are read from the environment variables (or the
//! file) it names; and delivery into a channel or thread through
//! `chat.postMessage`.

pub use steward_core::config::slack as section;

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use adapters::slack::{self, SlackSettings};
use adapters::TurnHandler;
use axum::Router;
use section::SlackMode;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use steward_core::config::{Config, ConfigError};
use steward_core::services::Services;
use steward_core::workers::{CancellationToken, Worker, WorkerError};

/// `[slack]`: on when `slack.signing_secret_env` is set (the Events API), or
/// the app-level token with `mode = "socket"`.
pub struct Slack;

#[async_trait::async_trait]
impl Channel for Slack {
    fn name(&self) -> &'static str {
        slack::CHANNEL
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.slack.on()
    }

    fn routes(&self, services: &Services) -> Option<Router> {
        Some(routes(services))
    }

    /// Over the Events API Slack has no connection of its own (Slack posts
    /// its events to the route); in Socket Mode the connection is the
    /// worker. The secrets are read here either way, so `steward serve` does
    /// not start while a variable or file the section names is unset or empty.
    fn worker(&self, services: &Services) -> Result<Option<Box<dyn Worker>>, ConfigError> {
        Ok(worker(services)?.map(|w| Box::new(w) as Box<dyn Worker>))
    }

    fn announce(&self, cfg: &Config, addr: SocketAddr) -> Option<String> {
        Some(match cfg.slack.mode {
            SlackMode::Events => {
                format!("Slack Events API: POST http://{addr}{}", slack::EVENTS_PATH)
            }
            SlackMode::Socket => format!(
                "Slack Socket Mode: connecting through {}/apps.connections.open",
                cfg.slack.api_base.trim_end_matches('/')
            ),
        })
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        let s = &cfg.slack;
        let (events, secrets) = match s.mode {
            SlackMode::Events => (
                format!("POST {} (Events API)", slack::EVENTS_PATH),
                "signing secret and bot token from the environment variables slack.signing_secret_env and slack.bot_token_env name",
            ),
            SlackMode::Socket => (
                "Socket Mode (a websocket steward opens)".to_string(),
                "app-level token from slack.app_token_env or slack.app_token_file, bot token from slack.bot_token_env",
            ),
        };
        vec![
            SettingRow::new("events", events),
            // Not the variables' names either: a secret pasted where a name
            // belongs must not show here.
            SettingRow::new("secrets", secrets),
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

/// The app-level token from the file or the variable `[slack]` names.
fn app_token(s: &section::SlackConfig) -> Result<String, ConfigError> {
    if let Some(path) = s.app_token_file.as_deref() {
        return match std::fs::read_to_string(path) {
            Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_string()),
            Ok(_) => Err(ConfigError::Invalid(format!(
                "slack.app_token_file names {path}, which is empty"
            ))),
            Err(e) => Err(ConfigError::Invalid(format!(
                "slack.app_token_file names {path}, which cannot be read: {e}"
            ))),
        };
    }
    let name = s.app_token_env.as_deref().ok_or_else(|| {
        ConfigError::Invalid("slack.app_token_env: required with slack.mode = \"socket\"".into())
    })?;
    secret("slack.app_token_env", name)
}

/// The adapter's settings from `[slack]` and the environment, or `None`
/// when the channel is off.
pub fn settings(cfg: &Config) -> Result<Option<SlackSettings>, ConfigError> {
    let s = &cfg.slack;
    if !s.on() {
        return Ok(None);
    }
    let token_env = s.bot_token_env.as_deref().ok_or_else(|| {
        ConfigError::Invalid("slack.bot_token_env: required when the Slack channel is on".into())
    })?;
    let bot_token = secret("slack.bot_token_env", token_env)?;
    let made = match (s.mode, s.signing_secret_env.as_deref()) {
        (SlackMode::Socket, _) => {
            SlackSettings::socket_mode(&app_token(s)?, &bot_token, &s.api_base)
        }
        (SlackMode::Events, Some(secret_env)) => SlackSettings::new(
            &secret("slack.signing_secret_env", secret_env)?,
            &bot_token,
            &s.api_base,
        ),
        (SlackMode::Events, None) => return Ok(None),
    };
    let mut settings = made.map_err(|e| ConfigError::Invalid(format!("slack: {e}")))?;
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
    settings.reconnect_backoff = Duration::from_millis(s.reconnect_backoff_ms);
    Ok(Some(settings))
}

/// The Socket Mode connection on the turn loop, as a worker of `serve`:
/// closed cleanly on shutdown, reconnecting by itself otherwise.
pub struct SlackSocket {
    settings: SlackSettings,
    handler: Arc<dyn TurnHandler>,
}

/// The Socket Mode connection when `[slack]` is on with `mode = "socket"`;
/// `None` for the Events API (its route is the way in) or when off.
pub fn worker(services: &Services) -> Result<Option<SlackSocket>, ConfigError> {
    match settings(services.config())? {
        Some(settings) if settings.is_socket_mode() => Ok(Some(SlackSocket {
            settings,
            handler: services.turns().clone(),
        })),
        _ => Ok(None),
    }
}

#[async_trait::async_trait]
impl Worker for SlackSocket {
    fn name(&self) -> &'static str {
        "slack"
    }

    async fn run(self: Box<Self>, shutdown: CancellationToken) -> Result<(), WorkerError> {
        slack::socket::run(self.settings, self.handler, shutdown.cancelled_owned())
            .await
            .map_err(|e| WorkerError::Failed {
                worker: "slack",
                source: Box::new(e),
            })
    }
}

/// `POST /slack/events` on the turn loop when the channel is configured
/// for the Events API; no routes otherwise (Socket Mode has none).
pub fn routes<S>(services: &Services) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    match settings(services.config()) {
        Ok(None) => Router::new(),
        Ok(Some(s)) if s.is_socket_mode() => Router::new(),
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
