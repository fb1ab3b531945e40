//! `[discord]`: the Discord channel's settings and what a run may deliver to
//! through its REST API (`discord:<channel id>`).

use crate::config::section::{Section, TargetForm};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use validator::Validate;

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

impl Section for DiscordConfig {
    fn agent(&self) -> Option<Option<&str>> {
        Some(self.agent.as_deref())
    }

    fn orgs(&self) -> Vec<(String, &String)> {
        crate::config::section::org_keys(
            "discord",
            self.default_org.as_ref(),
            ("guild_orgs", &self.guild_orgs),
        )
    }

    fn check(&self) -> Result<(), String> {
        let bad = |key: String, why: &str| Err(format!("{key}: {why}"));
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

    /// `discord:<channel id>`: posted in that Discord channel.
    fn target() -> Option<TargetForm> {
        Some(TargetForm {
            placeholder: "<channel id>",
            parse: |id| matches!(id.parse::<u64>(), Ok(n) if n > 0).then(|| id.into()),
        })
    }

    fn check_target(&self, target: &str, _channel: &str) -> Result<(), String> {
        match self.token {
            None => Err(format!(
                "`{target}` needs the Discord channel (discord.token)"
            )),
            Some(_) => Ok(()),
        }
    }
}
