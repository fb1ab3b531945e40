//! The Teams bot channel: the Bot Framework route (`adapters::teams_bot`) on
//! the turn loop from the `[teams_bot]` section of the configuration
//! (`steward_core::config::teams_bot`, read here as `section`), whose app password is read from the environment variable
//! or the file it names; conversation references kept in the database
//! (`memory`'s `channel_addresses`), so answers and runs reach any
//! conversation the bot is in; delivery through the connector.

pub use steward_core::config::teams_bot as section;

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use adapters::teams_bot::{
    self, AddressBook, AddressBookError, AppRegistration, Bot, BotSettings, ConversationAddress,
    DeliverError,
};
use adapters::TurnHandler;
use axum::Router;
use memory::Db;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use steward_core::clock::Clock;
use steward_core::config::{Config, ConfigError};
use steward_core::services::Services;
use steward_core::workers::Worker;

/// `[teams_bot]`: on when `teams_bot.app_id` is set.
pub struct TeamsBot;

#[async_trait::async_trait]
impl Channel for TeamsBot {
    fn name(&self) -> &'static str {
        teams_bot::CHANNEL
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.teams_bot.app_id.is_some()
    }

    fn routes(&self, services: &Services) -> Option<Router> {
        Some(routes(services))
    }

    /// The bot has no connection of its own (the Bot Framework posts to the
    /// route); its password is read here, so `steward serve` does not start
    /// while the variable or file the section names is missing or empty.
    fn worker(&self, services: &Services) -> Result<Option<Box<dyn Worker>>, ConfigError> {
        settings(services)?;
        Ok(None)
    }

    fn announce(&self, _cfg: &Config, addr: SocketAddr) -> Option<String> {
        Some(format!(
            "Teams bot (Bot Framework): POST http://{addr}{}",
            teams_bot::MESSAGES_PATH
        ))
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        let b = &cfg.teams_bot;
        let password = match (&b.app_password_env, &b.app_password_file) {
            (_, Some(_)) => "from the file teams_bot.app_password_file names",
            _ => "from the environment variable teams_bot.app_password_env names",
        };
        vec![
            SettingRow::new("activities", format!("POST {}", teams_bot::MESSAGES_PATH)),
            SettingRow::new("app password", password),
            SettingRow::new("signing keys", b.openid_metadata_url.clone()),
            SettingRow::new("tokens", b.token_endpoint.clone()),
            SettingRow::new("agent", b.agent.as_deref().unwrap_or(&cfg.server.agent)),
            SettingRow::new(
                "organisations",
                format!(
                    "{} tenants mapped (teams.tenant_orgs, shared with the webhook); others: {}",
                    cfg.teams.tenant_orgs.len(),
                    cfg.server.org
                ),
            ),
        ]
    }

    /// Posts into the conversation through the reference kept when the bot
    /// was first in it; a conversation it has never been in has none.
    async fn deliver(&self, services: &Services, out: Outbound<'_>) -> Delivery {
        let Outbound { to, text } = out;
        let failed = |reason: String| DeliveryError::Failed {
            channel: teams_bot::CHANNEL,
            reason,
        };
        let bot = match settings(services) {
            Ok(Some(settings)) => Bot::new(settings, addresses(services)),
            Ok(None) => return Err(DeliveryError::Off(teams_bot::CHANNEL)),
            Err(e) => return Err(failed(e.to_string())),
        };
        match bot.deliver(&to.org, &to.conversation, text).await {
            Ok(ids) => Ok(Delivered::Posted { ids }),
            Err(DeliverError::Unknown) => Err(DeliveryError::no_route(
                teams_bot::CHANNEL,
                to,
                DeliverError::Unknown.to_string(),
            )),
            Err(e) => Err(failed(e.to_string())),
        }
    }
}

/// The app password from the variable or the file `[teams_bot]` names.
fn password(cfg: &section::TeamsBotConfig) -> Result<String, ConfigError> {
    let invalid = |why: String| Err(ConfigError::Invalid(why));
    if let Some(path) = cfg.app_password_file.as_deref() {
        return match std::fs::read_to_string(path) {
            Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_string()),
            Ok(_) => invalid(format!(
                "teams_bot.app_password_file names {path}, which is empty"
            )),
            Err(e) => invalid(format!(
                "teams_bot.app_password_file names {path}, which cannot be read: {e}"
            )),
        };
    }
    let Some(name) = cfg.app_password_env.as_deref() else {
        return invalid("teams_bot.app_password_env: required with teams_bot.app_id".into());
    };
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(v),
        Ok(_) => invalid(format!(
            "teams_bot.app_password_env names the environment variable {name}, which is empty"
        )),
        Err(_) => invalid(format!(
            "teams_bot.app_password_env names the environment variable {name}, which is not set"
        )),
    }
}

/// The adapter's settings from `[teams_bot]`, the password and the
/// services' clock, or `None` when the channel is off.
pub fn settings(services: &Services) -> Result<Option<BotSettings>, ConfigError> {
    let cfg = services.config();
    let b = &cfg.teams_bot;
    let Some(app_id) = b.app_id.clone() else {
        return Ok(None);
    };
    let app = AppRegistration {
        app_id,
        app_password: password(b)?.into(),
    };
    let clock = services.clock().clone();
    let invalid = |e: teams_bot::BotError| ConfigError::Invalid(format!("teams_bot: {e}"));
    let mut settings = BotSettings::new(app, Arc::new(move || clock.now_ms()))
        .and_then(|s| s.endpoints(&b.openid_metadata_url, &b.token_endpoint))
        .map_err(invalid)?;
    settings.issuer = b.token_issuer.trim().to_string();
    // One tenant map for Teams: a person is the same identity in the same
    // organisation through the webhook and the bot.
    settings.tenant_orgs = cfg
        .teams
        .tenant_orgs
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    settings.default_org = cfg.server.org.clone();
    settings.agent = b.agent.clone().unwrap_or_else(|| cfg.server.agent.clone());
    settings.max_body_bytes = b.max_body_bytes.unwrap_or(cfg.server.max_body_bytes);
    settings.post_attempts = b.post_attempts;
    settings.post_backoff = Duration::from_millis(b.post_backoff_ms);
    Ok(Some(settings))
}

/// Conversation references in the database, as JSON the adapter wrote.
struct StoredAddresses {
    db: Db,
    clock: Arc<dyn Clock>,
}

#[async_trait::async_trait]
impl AddressBook for StoredAddresses {
    async fn keep(&self, org: &str, address: &ConversationAddress) -> Result<(), AddressBookError> {
        let json = serde_json::to_string(address).map_err(|e| AddressBookError(e.to_string()))?;
        self.db
            .conversations()
            .save_address(
                org,
                teams_bot::CHANNEL,
                &address.conversation,
                &json,
                self.clock.now_ms(),
            )
            .await
            .map_err(|e| AddressBookError(e.to_string()))
    }

    async fn find(
        &self,
        org: &str,
        conversation: &str,
    ) -> Result<Option<ConversationAddress>, AddressBookError> {
        let kept = self
            .db
            .conversations()
            .address(org, teams_bot::CHANNEL, conversation)
            .await
            .map_err(|e| AddressBookError(e.to_string()))?;
        kept.map(|json| serde_json::from_str(&json))
            .transpose()
            .map_err(|e| AddressBookError(format!("a kept conversation reference: {e}")))
    }
}

fn addresses(services: &Services) -> Arc<dyn AddressBook> {
    Arc::new(StoredAddresses {
        db: services.db().clone(),
        clock: services.clock().clone(),
    })
}

/// `POST /api/messages` on the turn loop when the bot is configured; no routes otherwise.
pub fn routes<S>(services: &Services) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    match settings(services) {
        Ok(None) => Router::new(),
        Ok(Some(s)) => {
            let bot = Arc::new(Bot::new(s, addresses(services)));
            let handler: Arc<dyn TurnHandler> = services.turns().clone();
            teams_bot::router(bot, handler)
        }
        Err(e) => {
            // `steward serve` refuses to start so (`TeamsBot::worker`); a
            // hand-built server still must not serve without its password.
            tracing::error!(error = %e, "Teams bot channel disabled");
            Router::new()
        }
    }
}
