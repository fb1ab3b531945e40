//! `[slack]`: the Slack channel's settings — how its events arrive (the
//! Events API over HTTP, or Socket Mode) — and what a run may deliver to
//! through `chat.postMessage` (`slack:<channel id>`). Its secrets are never in
//! the file: the section names the environment variables (or, for the
//! app-level token, the file) that hold them.

use crate::config::section::{Section, TargetForm};
use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use std::collections::BTreeMap;
use validator::Validate;

/// How Slack's events reach steward (docs/channels.md, "Slack").
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SlackMode {
    /// The Events API: Slack POSTs each event, signed, to `/slack/events`.
    #[default]
    Events,
    /// Socket Mode: steward opens a websocket to Slack with the app-level
    /// token; no public URL is needed.
    Socket,
}

/// The Slack channel. Off unless `signing_secret_env` (Events API) or the
/// app-level token (`mode = "socket"`) is set.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct SlackConfig {
    /// How events arrive: `events` (HTTP, the default) or `socket`.
    pub mode: SlackMode,
    /// NAME of the environment variable holding the app's signing secret
    /// (Basic Information → App Credentials); with `mode = "events"`, the
    /// channel is on when it is set.
    pub signing_secret_env: Option<String>,
    /// NAME of the environment variable holding the bot token (`xoxb-…`,
    /// OAuth & Permissions); required when the channel is on.
    pub bot_token_env: Option<String>,
    /// NAME of the environment variable holding the app-level token
    /// (`xapp-…`, Basic Information → App-Level Tokens, scope
    /// `connections:write`); with `mode = "socket"`, the channel is on when
    /// it (or `app_token_file`) is set.
    pub app_token_env: Option<String>,
    /// Path of a file holding the app-level token (a mounted secret), instead.
    pub app_token_file: Option<String>,
    /// Socket Mode: wait before reconnecting after a connection failed or
    /// closed, doubling after each further failure (at most a minute).
    #[default = 1000]
    #[validate(range(min = 1, max = 60_000))]
    pub reconnect_backoff_ms: u64,
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

impl SlackConfig {
    /// Whether the channel is on: the Events API's signing secret, or the
    /// app-level token in Socket Mode, is configured.
    pub fn on(&self) -> bool {
        match self.mode {
            SlackMode::Events => self.signing_secret_env.is_some(),
            SlackMode::Socket => self.app_token_env.is_some() || self.app_token_file.is_some(),
        }
    }

    /// The secrets each mode needs, and none it would ignore.
    fn check_mode(&self) -> Result<(), String> {
        let bad = |key: &str, why: &str| Err(format!("slack.{key}: {why}"));
        let app_token = self.app_token_env.is_some() || self.app_token_file.is_some();
        match self.mode {
            SlackMode::Events => {
                if app_token {
                    let key = if self.app_token_env.is_some() {
                        "app_token_env"
                    } else {
                        "app_token_file"
                    };
                    return bad(
                        key,
                        "the app-level token is for Socket Mode: set slack.mode = \"socket\" too",
                    );
                }
                match (&self.signing_secret_env, &self.bot_token_env) {
                    (Some(_), None) => bad(
                        "bot_token_env",
                        "required with slack.signing_secret_env (the answers are posted with the bot token)",
                    ),
                    (None, Some(_)) => bad(
                        "signing_secret_env",
                        "required with slack.bot_token_env (the channel is on only when it is set)",
                    ),
                    _ => Ok(()),
                }
            }
            SlackMode::Socket => {
                if self.signing_secret_env.is_some() {
                    // Slack sends no Request URL traffic to an app in Socket Mode.
                    return bad(
                        "signing_secret_env",
                        "not used with slack.mode = \"socket\" (Socket Mode events are not signed): remove it",
                    );
                }
                if self.app_token_env.is_some() && self.app_token_file.is_some() {
                    return bad(
                        "app_token_file",
                        "set either slack.app_token_env or slack.app_token_file, not both",
                    );
                }
                match (app_token, &self.bot_token_env) {
                    (false, _) => bad(
                        "app_token_env",
                        "required with slack.mode = \"socket\" (or slack.app_token_file): the connection is opened with the app-level token (xapp-…)",
                    ),
                    (true, None) => bad(
                        "bot_token_env",
                        "required with slack.mode = \"socket\" (the answers are posted with the bot token)",
                    ),
                    (true, Some(_)) => Ok(()),
                }
            }
        }
    }
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
            ("app_token_env", &self.app_token_env),
        ] {
            if name.as_deref().is_some_and(|n| !env_name(n)) {
                return bad(
                    format!("slack.{key}"),
                    "the NAME of an environment variable (like SLACK_SIGNING_SECRET), not the secret",
                );
            }
        }
        if self
            .app_token_file
            .as_deref()
            .is_some_and(|p| p.trim().is_empty())
        {
            return bad("slack.app_token_file".into(), "must not be empty");
        }
        self.check_mode()?;
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
        if self.on() {
            return Ok(());
        }
        Err(format!(
            "`{target}` needs the Slack channel (slack.signing_secret_env, or slack.app_token_env with slack.mode = \"socket\")"
        ))
    }
}
