//! Wires the Teams outgoing webhook (`adapters::teams`) to the turn loop from
//! the `[teams]` section of the configuration.

use crate::services::Services;
use adapters::teams::{self, TeamsSettings};
use adapters::TurnHandler;
use axum::Router;
use std::sync::Arc;
use std::time::Duration;

/// The adapter's settings from the configuration; `None` when `teams.security_token` is unset.
pub fn settings(cfg: &crate::Config) -> Option<Result<TeamsSettings, teams::TeamsError>> {
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
