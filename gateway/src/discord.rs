//! Wiring of the Discord channel into `steward serve`: `[discord]` settings
//! to the adapter's [`DiscordSettings`], and the channel's lifetime beside the
//! HTTP server. The adapter (`adapters::discord`) does the Discord work.

use crate::config::{Config, ConfigError};
use crate::services::Services;
use adapters::discord::{self, DiscordError, DiscordSettings};
use adapters::TurnHandler;
use anyhow::{anyhow, Context, Result};
use std::future::{Future, IntoFuture};
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

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

/// The running Discord channel.
pub struct DiscordChannel {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), DiscordError>>,
}

/// Start the Discord channel on the turn loop when `[discord] token` is set.
pub fn start(services: &Services) -> Result<Option<DiscordChannel>> {
    let Some(settings) = settings(services.config())? else {
        return Ok(None);
    };
    let handler: Arc<dyn TurnHandler> = services.turns().clone();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(discord::run(settings, handler, async move {
        let _ = stopped.await;
    }));
    Ok(Some(DiscordChannel { stop, task }))
}

impl DiscordChannel {
    /// Close the gateway connection and wait until the channel has stopped.
    pub async fn stop(self) -> Result<()> {
        let _ = self.stop.send(());
        finished(self.task.await)
    }

    /// Run `server` with the channel beside it. When the server returns (for
    /// `steward serve`: on ctrl-c), the channel is stopped; when the channel
    /// stops on its own first (a rejected token), that is the error returned.
    pub async fn beside<F, E>(self, server: F) -> Result<()>
    where
        F: IntoFuture<Output = Result<(), E>>,
        F::IntoFuture: Future<Output = Result<(), E>>,
        E: Into<anyhow::Error>,
    {
        let DiscordChannel { stop, mut task } = self;
        tokio::select! {
            served = server.into_future() => {
                let _ = stop.send(());
                let stopped = finished(task.await);
                served.map_err(Into::into)?;
                stopped
            }
            ended = &mut task => {
                finished(ended)?;
                Err(anyhow!("the Discord channel stopped unexpectedly"))
            }
        }
    }
}

fn finished(joined: Result<Result<(), DiscordError>, tokio::task::JoinError>) -> Result<()> {
    joined
        .context("the Discord channel task panicked")?
        .context("the Discord channel")
}
