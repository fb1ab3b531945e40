//! The Discord channel: `[discord]` settings to the adapter's
//! [`DiscordSettings`], its gateway connection as a worker of `steward
//! serve`, and delivery to a channel through the REST API. The adapter
//! (`adapters::discord`) does the Discord work.

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use crate::config::{Config, ConfigError};
use crate::services::Services;
use crate::workers::{CancellationToken, Worker, WorkerError};
use adapters::discord::{self, DiscordSettings};
use adapters::TurnHandler;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use validator::Validate;

/// `[discord]`: on when `discord.token` is set.
pub struct Discord;

#[async_trait::async_trait]
impl Channel for Discord {
    fn name(&self) -> &'static str {
        discord::CHANNEL
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.channels
            .discord
            .token
            .as_deref()
            .is_some_and(|t| !t.trim().is_empty())
    }

    fn agent<'c>(&self, cfg: &'c Config) -> Option<&'c str> {
        cfg.channels.discord.agent.as_deref()
    }

    fn agent_key(&self) -> Option<&'static str> {
        Some("discord.agent")
    }

    fn check(&self, cfg: &Config) -> Result<(), ConfigError> {
        let d = &cfg.channels.discord;
        let bad = |key: String, why: &str| Err(ConfigError::Invalid(format!("{key}: {why}")));
        if let Some(Err(why)) = d.agent.as_deref().map(memory::check_agent_id) {
            return bad("discord.agent".into(), why);
        }
        let default_org = d.default_org.iter().map(|o| ("discord.default_org".into(), o));
        let guild_orgs = (d.guild_orgs.iter()).map(|(g, o)| (format!("discord.guild_orgs.{g}"), o));
        for (key, org) in default_org.chain(guild_orgs) {
            if let Err(why) = memory::check_org_id(org) {
                return bad(key, why);
            }
        }
        d.check()
    }

    fn target_form(&self) -> Option<&'static str> {
        Some("<channel id>")
    }

    fn parse_target(&self, target: &str) -> Option<String> {
        matches!(target.parse::<u64>(), Ok(n) if n > 0).then(|| target.into())
    }

    fn check_target(&self, cfg: &Config, _target: &str) -> Result<(), String> {
        match cfg.channels.discord.token {
            None => Err("needs the Discord channel (discord.token)".into()),
            Some(_) => Ok(()),
        }
    }

    fn worker(&self, services: &Services) -> Result<Option<Box<dyn Worker>>, ConfigError> {
        Ok(worker(services)?.map(|w| Box::new(w) as Box<dyn Worker>))
    }

    fn announce(&self, _cfg: &Config, _addr: SocketAddr) -> Option<String> {
        Some("discord channel connecting to the gateway".into())
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        let d = &cfg.channels.discord;
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
    let d = &cfg.channels.discord;
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

/// The Discord channel (serenity). Off unless a token is set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct DiscordConfig {
    /// Bot token; the channel runs only when it is set.
    pub token: Option<String>,
    /// Base URL of a Discord REST proxy (or a test fake) instead of `https://discord.com`.
    pub api_base: Option<String>,
    /// Organisation of each guild, by guild id (`"123456789012345678" = "acme"`).
    pub guild_orgs: BTreeMap<String, String>,
    /// Organisation of DMs and of guilds not in `guild_orgs` (default: `server.org`).
    pub default_org: Option<String>,
    /// Agent answering on Discord (default: `server.agent`).
    pub agent: Option<String>,
}

/// `[discord]`.
pub type Section = DiscordConfig;

impl super::Section for DiscordConfig {}

impl DiscordConfig {
    fn check(&self) -> Result<(), ConfigError> {
        let bad = |key: String, why: &str| Err(ConfigError::Invalid(format!("{key}: {why}")));
        if let Some(base) = &self.api_base {
            if !(base.starts_with("http://") || base.starts_with("https://")) {
                return bad("discord.api_base".into(), "not an http(s) URL");
            }
        }
        for (guild, org) in &self.guild_orgs {
            if !matches!(guild.parse::<u64>(), Ok(id) if id > 0) {
                return bad(
                    format!("discord.guild_orgs.{guild}"),
                    "not a Discord guild id (a number such as 123456789012345678)",
                );
            }
            if org.trim().is_empty() {
                return bad(
                    format!("discord.guild_orgs.{guild}"),
                    "the organisation is empty",
                );
            }
        }
        for (key, value) in [("default_org", &self.default_org), ("agent", &self.agent)] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return bad(format!("discord.{key}"), "must not be empty");
            }
        }
        Ok(())
    }
}
