//! Wiring of the Discord channel into `steward serve`: `[discord]` settings
//! to the adapter's [`DiscordSettings`], and the channel's lifetime beside the
//! HTTP server. The adapter (`adapters::discord`) does the Discord work.

use crate::config::{Config, ConfigError};
use crate::services::Services;
use crate::workers::{CancellationToken, Worker, WorkerError};
use adapters::discord::{self, DiscordSettings};
use adapters::TurnHandler;
use std::sync::Arc;

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
