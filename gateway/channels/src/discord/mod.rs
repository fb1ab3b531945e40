//! The Discord channel: `[discord]` settings (`steward_core::config::discord`, read here as `section`) to the adapter's
//! [`DiscordSettings`], its gateway connection as a worker of `steward
//! serve`, and delivery to a channel through the REST API. The adapter
//! (`adapters::discord`) does the Discord work.

pub use steward_core::config::discord as section;

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use adapters::discord::{self, DiscordSettings};
use adapters::TurnHandler;
use std::net::SocketAddr;
use std::sync::Arc;
use steward_core::config::{Config, ConfigError};
use steward_core::services::Services;
use steward_core::workers::{CancellationToken, Worker, WorkerError};

/// `[discord]`: on when `discord.token` is set.
pub struct Discord;

#[async_trait::async_trait]
impl Channel for Discord {
    fn name(&self) -> &'static str {
        discord::CHANNEL
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.discord
            .token
            .as_deref()
            .is_some_and(|t| !t.trim().is_empty())
    }

    fn worker(&self, services: &Services) -> Result<Option<Box<dyn Worker>>, ConfigError> {
        Ok(worker(services)?.map(|w| Box::new(w) as Box<dyn Worker>))
    }

    fn announce(&self, _cfg: &Config, _addr: SocketAddr) -> Option<String> {
        Some("discord channel connecting to the gateway".into())
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        let d = &cfg.discord;
        vec![
            SettingRow::new(
                "connection",
                format!(
                    "gateway and REST API at {}",
                    d.api_base.as_deref().unwrap_or("https://discord.com")
                ),
            ),
            SettingRow::new("agent", d.agent.as_deref().unwrap_or(&cfg.server.agent)),
            SettingRow::new(
                "organisations",
                format!(
                    "{} guilds mapped (discord.guild_orgs); others and DMs: {}",
                    d.guild_orgs.len(),
                    d.default_org.as_deref().unwrap_or(&cfg.server.org)
                ),
            ),
        ]
    }

    /// Posts into the channel, thread or DM channel whose id the conversation is.
    async fn deliver(&self, services: &Services, out: Outbound<'_>) -> Delivery {
        let Outbound { to, text } = out;
        let failed = |reason: String| DeliveryError::Failed {
            channel: discord::CHANNEL,
            reason,
        };
        let settings = match settings(services.config()) {
            Ok(Some(settings)) => settings,
            Ok(None) => return Err(DeliveryError::Off(discord::CHANNEL)),
            Err(e) => return Err(failed(e.to_string())),
        };
        match discord::post(&settings, &to.conversation, text).await {
            Ok(ids) => Ok(Delivered::Posted { ids }),
            Err(discord::DiscordError::NotAChannel(_)) => Err(DeliveryError::no_route(
                discord::CHANNEL,
                to,
                "not a Discord channel id",
            )),
            Err(e) => Err(failed(e.to_string())),
        }
    }
}

/// The adapter's settings from `[discord]`, or `None` when no token is set.
pub fn settings(cfg: &Config) -> Result<Option<DiscordSettings>, ConfigError> {
    let d = &cfg.discord;
    let Some(token) = d.token.as_deref().filter(|t| !t.trim().is_empty()) else {
        return Ok(None);
    };
    let mut guild_orgs = std::collections::HashMap::new();
    for (guild, org) in &d.guild_orgs {
        let id = guild.parse::<u64>().map_err(|_| {
            ConfigError::Invalid(format!(
                "discord.guild_orgs.{guild}: not a Discord guild id"
            ))
        })?;
        guild_orgs.insert(id, org.clone());
    }
    Ok(Some(DiscordSettings {
        token: token.trim().into(),
        api_base: d.api_base.clone(),
        guild_orgs,
        default_org: d
            .default_org
            .clone()
            .unwrap_or_else(|| cfg.server.org.clone()),
        agent: d.agent.clone().unwrap_or_else(|| cfg.server.agent.clone()),
    }))
}

/// The Discord gateway connection on the turn loop, as a worker of `serve`:
/// closed cleanly on shutdown; a rejected token ends it (and `serve`) with an error.
pub struct DiscordConnection {
    settings: DiscordSettings,
    handler: Arc<dyn TurnHandler>,
}

/// The Discord connection when `[discord] token` is set.
pub fn worker(services: &Services) -> Result<Option<DiscordConnection>, ConfigError> {
    let Some(settings) = settings(services.config())? else {
        return Ok(None);
    };
    Ok(Some(DiscordConnection {
        settings,
        handler: services.turns().clone(),
    }))
}

#[async_trait::async_trait]
impl Worker for DiscordConnection {
    fn name(&self) -> &'static str {
        "discord"
    }

    async fn run(self: Box<Self>, shutdown: CancellationToken) -> Result<(), WorkerError> {
        discord::run(self.settings, self.handler, shutdown.cancelled_owned())
            .await
            .map_err(|e| WorkerError::Failed {
                worker: "discord",
                source: Box::new(e),
            })
    }
}
