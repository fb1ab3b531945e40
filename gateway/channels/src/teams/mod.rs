//! The Teams channel: the outgoing webhook (`adapters::teams`) on the turn
//! loop from the `[teams]` section of the configuration (`steward_core::config::teams`, read here as `section`), and
//! delivery to a channel through its Workflows webhook.

pub use steward_core::config::teams as section;

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use adapters::teams::{self, TeamsSettings};
use adapters::TurnHandler;
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use steward_core::config::Config;
use steward_core::services::Services;

/// `[teams]`: on when `teams.security_token` is set.
pub struct Teams;

#[async_trait::async_trait]
impl Channel for Teams {
    fn name(&self) -> &'static str {
        teams::CHANNEL
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.teams.security_token.is_some()
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
        let t = &cfg.teams;
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
        let t = &services.config().teams;
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
pub fn settings(cfg: &steward_core::Config) -> Option<Result<TeamsSettings, teams::TeamsError>> {
    let t = &cfg.teams;
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
