//! `[teams_bot]`: Teams as a Bot Framework bot — its app registration (the
//! password read from an environment variable or a file it names, never the
//! file itself), the endpoints its tokens come from, and what a run may
//! deliver to (`teams_bot:<conversation id>`).

use crate::config::section::{Section, TargetForm};
use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use validator::Validate;

/// The Teams bot. Off unless `app_id` is set.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct TeamsBotConfig {
    /// The bot's Microsoft App ID (its Azure Bot resource, "Configuration");
    /// the channel is on when it is set.
    pub app_id: Option<String>,
    /// NAME of the environment variable holding the app password (client secret).
    pub app_password_env: Option<String>,
    /// Path of a file holding the app password (a mounted secret), instead.
    pub app_password_file: Option<String>,
    /// The OpenID metadata document listing the keys tokens are signed with.
    #[default(adapters::teams_bot::OPENID_METADATA.to_string())]
    pub openid_metadata_url: String,
    /// The issuer every token must name.
    #[default(adapters::teams_bot::ISSUER.to_string())]
    pub token_issuer: String,
    /// Where the bot's connector tokens come from (OAuth 2.0 client credentials).
    #[default(adapters::teams_bot::TOKEN_ENDPOINT.to_string())]
    pub token_endpoint: String,
    /// Agent answering through the bot (default: `server.agent`).
    pub agent: Option<String>,
    /// Largest accepted activity body; default `server.max_body_bytes`.
    #[validate(range(min = 1024, max = 67_108_864))]
    pub max_body_bytes: Option<usize>,
    /// Connector posts are tried at most this many times (429, 5xx, network errors).
    #[default = 5]
    #[validate(range(min = 1, max = 20))]
    pub post_attempts: u32,
    /// Wait before the second attempt, doubling after each further one,
    /// unless the connector sends `Retry-After`.
    #[default = 500]
    #[validate(range(min = 1, max = 60_000))]
    pub post_backoff_ms: u64,
}

/// Whether `name` reads as the name of an environment variable.
fn env_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn http_url(url: &str) -> bool {
    let url = url.trim();
    (url.starts_with("https://") || url.starts_with("http://")) && url.len() > "https://".len()
}

impl Section for TeamsBotConfig {
    fn agent(&self) -> Option<Option<&str>> {
        Some(self.agent.as_deref())
    }

    fn check(&self) -> Result<(), String> {
        let bad = |key: &str, why: &str| Err(format!("teams_bot.{key}: {why}"));
        if self
            .app_password_env
            .as_deref()
            .is_some_and(|n| !env_name(n))
        {
            return bad(
                "app_password_env",
                "the NAME of an environment variable (like TEAMS_APP_PASSWORD), not the password",
            );
        }
        if self
            .app_password_file
            .as_deref()
            .is_some_and(|p| p.trim().is_empty())
        {
            return bad("app_password_file", "must not be empty");
        }
        match (
            &self.app_id,
            &self.app_password_env,
            &self.app_password_file,
        ) {
            (Some(id), _, _) if id.trim().is_empty() => {
                return bad("app_id", "must not be empty");
            }
            (Some(_), None, None) => {
                return bad(
                    "app_password_env",
                    "required with teams_bot.app_id (or teams_bot.app_password_file): the answers are posted with the app's password",
                );
            }
            (Some(_), Some(_), Some(_)) => {
                return bad(
                    "app_password_file",
                    "set either teams_bot.app_password_env or teams_bot.app_password_file, not both",
                );
            }
            (None, Some(_), _) | (None, _, Some(_)) => {
                return bad(
                    "app_id",
                    "required with the app password (the channel is on only when it is set)",
                );
            }
            _ => {}
        }
        for (key, url) in [
            ("openid_metadata_url", &self.openid_metadata_url),
            ("token_issuer", &self.token_issuer),
            ("token_endpoint", &self.token_endpoint),
        ] {
            if !http_url(url) {
                return bad(key, "not an http(s) URL");
            }
        }
        if self.agent.as_deref().is_some_and(|a| a.trim().is_empty()) {
            return bad("agent", "must not be empty");
        }
        Ok(())
    }

    /// `teams_bot:<conversation id>`: posted by the bot into that personal
    /// chat, group chat, channel (a new post) or channel thread
    /// (`…;messageid=…`), where it has been before.
    fn target() -> Option<TargetForm> {
        Some(TargetForm {
            placeholder: "<conversation id>",
            parse: |written| {
                let written = written.trim();
                let plain = !written.is_empty()
                    && !written.chars().any(|c| c.is_whitespace() || c.is_control());
                plain.then(|| written.to_string())
            },
        })
    }

    fn check_target(&self, target: &str, _conversation: &str) -> Result<(), String> {
        match self.app_id {
            None => Err(format!("`{target}` needs the Teams bot (teams_bot.app_id)")),
            Some(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(id: Option<&str>, env: Option<&str>, file: Option<&str>) -> TeamsBotConfig {
        TeamsBotConfig {
            app_id: id.map(str::to_string),
            app_password_env: env.map(str::to_string),
            app_password_file: file.map(str::to_string),
            ..TeamsBotConfig::default()
        }
    }

    #[test]
    fn the_app_needs_its_password_from_one_place_and_never_the_password_itself() {
        let id = Some("9a7f3c2e-5b1d-4e8a-b6c4-0d2e1f3a5b7c");
        let refused = |c: TeamsBotConfig| c.check().err().unwrap_or_default();
        assert!(with(None, None, None).check().is_ok(), "off");
        assert!(with(id, Some("TEAMS_APP_PASSWORD"), None).check().is_ok());
        assert!(with(id, None, Some("/run/secrets/teams")).check().is_ok());
        assert!(refused(with(id, None, None)).starts_with("teams_bot.app_password_env: required"));
        assert!(refused(with(id, Some("A"), Some("/f"))).contains("not both"));
        assert!(refused(with(None, Some("A"), None)).starts_with("teams_bot.app_id: required"));
        assert!(refused(with(id, Some("Zq8~x3Tq.secret"), None))
            .starts_with("teams_bot.app_password_env: the NAME"));
        assert!(refused(with(Some(" "), Some("A"), None)).starts_with("teams_bot.app_id"));
        let mut c = with(id, Some("A"), None);
        c.token_endpoint = "login.microsoftonline.com/x".into();
        assert!(refused(c).starts_with("teams_bot.token_endpoint"));
    }
}
