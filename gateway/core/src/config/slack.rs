//! `[slack]`: the Slack channel's settings, and what a run may deliver to
//! through `chat.postMessage` (`slack:<channel id>`). Its two secrets are
//! never in the file: the section names the environment variables that hold them.

use crate::config::section::{Section, TargetForm};
use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use std::collections::BTreeMap;
use validator::Validate;

/// The Slack channel (Events API over HTTP). Off unless `signing_secret_env` is set.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct SlackConfig {
    /// NAME of the environment variable holding the app's signing secret
    /// (Basic Information → App Credentials); the channel is on when it is set.
    pub signing_secret_env: Option<String>,
    /// NAME of the environment variable holding the bot token (`xoxb-…`,
    /// OAuth & Permissions); required with `signing_secret_env`.
    pub bot_token_env: Option<String>,
    /// The Web API's root; a test points it at a fake.
    #[default(adapters::slack::SLACK_API.to_string())]
    pub api_base: String,
    /// Slack workspace (team) id → organisation (`T0123ABCD = "acme"`).
    pub team_orgs: BTreeMap<String, String>,
    /// Organisation of workspaces not in `team_orgs` (default: `server.org`).
    pub default_org: Option<String>,
    /// Agent answering on Slack (default: `server.agent`).
    pub agent: Option<String>,
    /// Largest accepted event body; default `server.max_body_bytes`.
    #[validate(range(min = 1024, max = 67_108_864))]
    pub max_body_bytes: Option<usize>,
    /// `chat.postMessage` calls are tried at most this many times (429, 5xx, network errors).
    #[default = 5]
    #[validate(range(min = 1, max = 20))]
    pub post_attempts: u32,
    /// Wait before the second attempt, doubling after each further one,
    /// unless Slack sends `Retry-After`.
    #[default = 500]
    #[validate(range(min = 1, max = 60_000))]
    pub post_backoff_ms: u64,
}

/// Whether `name` reads as the name of an environment variable.
pub(crate) fn env_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Section for SlackConfig {
    fn agent(&self) -> Option<Option<&str>> {
        Some(self.agent.as_deref())
    }

    fn orgs(&self) -> Vec<(String, &String)> {
        crate::config::section::org_keys(
            "slack",
            self.default_org.as_ref(),
            ("team_orgs", &self.team_orgs),
        )
    }

    fn check(&self) -> Result<(), String> {
        let bad = |key: String, why: &str| Err(format!("{key}: {why}"));
        for (key, name) in [
            ("signing_secret_env", &self.signing_secret_env),
            ("bot_token_env", &self.bot_token_env),
        ] {
            if name.as_deref().is_some_and(|n| !env_name(n)) {
                return bad(
                    format!("slack.{key}"),
                    "the NAME of an environment variable (like SLACK_SIGNING_SECRET), not the secret",
                );
            }
        }
        match (&self.signing_secret_env, &self.bot_token_env) {
            (Some(_), None) => {
                return bad(
                    "slack.bot_token_env".into(),
                    "required with slack.signing_secret_env (the answers are posted with the bot token)",
                )
            }
            (None, Some(_)) => {
                return bad(
                    "slack.signing_secret_env".into(),
                    "required with slack.bot_token_env (the channel is on only when it is set)",
                )
            }
            _ => {}
        }
        let base = self.api_base.trim();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return bad("slack.api_base".into(), "not an http(s) URL");
        }
        for (team, org) in &self.team_orgs {
            if team.trim().is_empty() || org.trim().is_empty() {
                return bad(
                    format!("slack.team_orgs.{team}"),
                    "neither the team id nor the organisation may be empty",
                );
            }
        }
        for (key, value) in [("default_org", &self.default_org), ("agent", &self.agent)] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return bad(format!("slack.{key}"), "must not be empty");
            }
        }
        Ok(())
    }

    /// `slack:<channel id>`: posted in that Slack channel (`C…`), or in a
    /// thread of it (`C…:<thread ts>`).
    fn target() -> Option<TargetForm> {
        Some(TargetForm {
            placeholder: "<channel id>",
            parse: |written| {
                let written = written.trim();
                adapters::slack::parse_conversation(written).map(|_| written.to_string())
            },
        })
    }

    fn check_target(&self, target: &str, _channel: &str) -> Result<(), String> {
        match self.signing_secret_env {
            None => Err(format!(
                "`{target}` needs the Slack channel (slack.signing_secret_env)"
            )),
            Some(_) => Ok(()),
        }
    }
}
