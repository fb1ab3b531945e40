//! The channels people reach steward through, and the automated runs
//! ([`runs`]) that deliver through them. Each channel is one module behind one
//! [`Channel`] trait: whether the configuration turns it on, its HTTP routes
//! or its connection (a [`Worker`]), what the settings page shows of it, and
//! how a message reaches one of its conversations outside a turn
//! ([`Channel::deliver`], for automated runs). A channel with settings reads
//! its section of the configuration as `<channel>::section` (the core's
//! `config::<channel>`, a [`Section`](steward_core::config::section::Section):
//! its keys, their checks, the delivery targets runs name in it), a field of `Config`. [`all`] is the one list `http::app`, `steward serve` and the
//! settings page read: a new channel is a module here, its line in [`all`]
//! and, when it has settings, its field in `Config` and its line in
//! `Config::sections`.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod api;
pub mod dashboard_chat;
pub mod discord;
pub mod runs;
pub mod slack;
pub mod teams;
pub mod teams_bot;

use axum::Router;
use std::net::SocketAddr;
use steward_core::config::{Config, ConfigError};
use steward_core::services::Services;
use steward_core::workers::Worker;

/// Every channel, in the order `serve` announces them.
pub fn all() -> &'static [&'static dyn Channel] {
    &[
        &teams::Teams,
        &teams_bot::TeamsBot,
        &slack::Slack,
        &discord::Discord,
        &dashboard_chat::DashboardChat,
        &api::Api,
    ]
}

/// The channel stored as `name` on its messages.
pub fn named(name: &str) -> Option<&'static dyn Channel> {
    all().iter().copied().find(|c| c.name() == name)
}

/// A conversation of a channel, as its lines are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationRef {
    pub org: String,
    pub agent: String,
    /// The channel's own id of it: a Discord channel id, a Slack channel
    /// (`C…`, or `C…:<thread ts>`), a Teams conversation id (the webhook's
    /// and the bot's), `dashboard:admin`, `api:<user>[/<thread>]`.
    pub conversation: String,
}

/// Where a delivered message went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    /// Posted on the platform: the ids of the messages it made, in order
    /// (none when it gives none, as a Teams Workflows webhook).
    Posted { ids: Vec<String> },
    /// Stored as the agent's line of the conversation, which shows it.
    Stored { line: i64 },
}

/// Why a message was not delivered.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("there is nothing to deliver: the text is blank")]
    Blank,
    #[error("the {0} channel is off")]
    Off(&'static str),
    #[error("the {channel} channel cannot post into {conversation}: {why}")]
    NoRoute {
        channel: &'static str,
        conversation: String,
        why: String,
    },
    #[error("the {channel} channel cannot deliver messages: {why}")]
    Unsupported {
        channel: &'static str,
        why: &'static str,
    },
    #[error("the {channel} channel did not take the message: {reason}")]
    Failed {
        channel: &'static str,
        reason: String,
    },
    #[error(transparent)]
    Store(#[from] memory::StoreError),
}

/// One line the settings page shows of a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingRow {
    pub key: &'static str,
    pub value: String,
}

impl SettingRow {
    pub fn new(key: &'static str, value: impl Into<String>) -> SettingRow {
        SettingRow {
            key,
            value: value.into(),
        }
    }
}

#[async_trait::async_trait]
pub trait Channel: Send + Sync {
    /// The name stored with its messages (`Inbound::channel`).
    fn name(&self) -> &'static str;

    /// Whether `cfg` turns it on.
    fn enabled(&self, cfg: &Config) -> bool;

    /// Its own HTTP routes, with their state already applied (so a channel
    /// knows nothing of `http`'s), merged by `http::app` when it is on.
    fn routes(&self, _services: &Services) -> Option<Router> {
        None
    }

    /// Its connection, run by `steward serve` when it is on.
    fn worker(&self, _services: &Services) -> Result<Option<Box<dyn Worker>>, ConfigError> {
        Ok(None)
    }

    /// What `steward serve` prints of it at start, when it is on.
    fn announce(&self, _cfg: &Config, _addr: SocketAddr) -> Option<String> {
        None
    }

    /// What the settings page shows of it (beside whether it is on).
    fn settings(&self, cfg: &Config) -> Vec<SettingRow>;

    /// Send a message to one of its conversations outside any turn
    /// (automated runs); its text is not blank.
    async fn deliver(&self, services: &Services, out: Outbound<'_>) -> Delivery;
}

/// What a channel's [`Channel::deliver`] returns.
pub type Delivery = Result<Delivered, DeliveryError>;

/// A message to deliver: `text` (not blank) to the conversation `to`.
#[derive(Debug, Clone, Copy)]
pub struct Outbound<'a> {
    pub to: &'a ConversationRef,
    pub text: &'a str,
}

/// Deliver `text` to `to` on the channel stored as `channel`, if it is on.
pub async fn deliver(
    services: &Services,
    channel: &str,
    to: &ConversationRef,
    text: &str,
) -> Result<Delivered, DeliveryError> {
    let Some(found) = named(channel) else {
        let why = format!("there is no channel `{channel}`");
        return Err(DeliveryError::no_route("unknown", to, why));
    };
    if !found.enabled(services.config()) {
        return Err(DeliveryError::Off(found.name()));
    }
    if text.trim().is_empty() {
        return Err(DeliveryError::Blank);
    }
    found.deliver(services, Outbound { to, text }).await
}

impl DeliveryError {
    /// `channel` cannot post into `to`, and why.
    fn no_route(channel: &'static str, to: &ConversationRef, why: impl Into<String>) -> Self {
        DeliveryError::NoRoute {
            channel,
            conversation: to.conversation.clone(),
            why: why.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run names a channel by its section's key, and `deliver` finds the
    /// channel by that name.
    #[test]
    fn every_section_is_named_after_its_channel() {
        let cfg = Config::default();
        let keys: Vec<&str> = cfg.sections().into_iter().map(|(key, _)| key).collect();
        assert_eq!(keys, ["discord", "slack", "teams", "teams_bot"]);
        for key in keys {
            assert!(named(key).is_some(), "no channel `{key}`");
        }
    }
}
