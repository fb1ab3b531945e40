//! `[oidc]`: each person signs in to the dashboard as themselves through
//! the organisation's identity providers (docs/channels.md, "Signing in as
//! yourself"): the `[oidc]` section's own OpenID Connect provider (Entra ID),
//! and any number of `[[oidc.providers]]` — another OpenID Connect provider,
//! Sign in with Slack, or Discord — each its own button. A client secret is
//! never in the file: each provider names the environment variable or the
//! file that holds it.

use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use validator::Validate;

/// Which claim of the ID token is the person's platform identity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentityClaim {
    /// Microsoft Entra ID's object id: the `aadObjectId` Teams sends, so
    /// with `channel = "teams"` the stored id is the one Teams pairs.
    #[default]
    Oid,
    /// The subject, the provider's own id for the person.
    Sub,
}

impl IdentityClaim {
    /// The claim's name in the token.
    pub fn name(self) -> &'static str {
        match self {
            IdentityClaim::Oid => "oid",
            IdentityClaim::Sub => "sub",
        }
    }
}

/// How a provider signs a person in, and so which stored id it yields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any OpenID Connect provider: the ID token's `claim` is the person,
    /// `<channel>:<claim value>`.
    #[default]
    Oidc,
    /// Sign in with Slack, OpenID Connect at `https://slack.com`: the ID
    /// token's `https://slack.com/team_id` and `https://slack.com/user_id`
    /// are the person as the Slack channel stores them, `slack:<team>:<user>`.
    Slack,
    /// Discord, OAuth 2.0 without OpenID Connect: the code (scope
    /// `identify`) redeemed for an access token, then `GET users/@me`,
    /// whose `id` is the person, `discord:<id>`.
    Discord,
}

impl ProviderKind {
    /// Its name in the configuration, and a provider's default id.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Oidc => "oidc",
            ProviderKind::Slack => "slack",
            ProviderKind::Discord => "discord",
        }
    }
}

/// Sign in with Slack's issuer; its discovery document is at
/// `https://slack.com/.well-known/openid-configuration`.
pub const SLACK_ISSUER: &str = "https://slack.com";
/// Discord's authorization endpoint (the browser is sent there).
pub const DISCORD_AUTHORIZATION_URL: &str = "https://discord.com/oauth2/authorize";
/// Discord's token endpoint.
pub const DISCORD_TOKEN_URL: &str = "https://discord.com/api/oauth2/token";
/// Discord's "who is this access token's user" endpoint.
pub const DISCORD_USER_URL: &str = "https://discord.com/api/users/@me";

/// The id of the provider the `[oidc]` section itself configures.
pub const SECTION_PROVIDER_ID: &str = "oidc";

/// Sign-in through an OpenID Connect provider (authorization code flow with
/// PKCE), and the other providers beside it. The section's own provider is
/// off unless `issuer` is set.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct OidcConfig {
    /// The provider's issuer URL; its discovery document is at
    /// `<issuer>/.well-known/openid-configuration`. Sign-in is on when set.
    pub issuer: Option<String>,
    /// The client (application) id registered with the provider.
    pub client_id: String,
    /// NAME of the environment variable holding the client secret.
    pub client_secret_env: Option<String>,
    /// Path of a file holding the client secret (instead of `client_secret_env`).
    pub client_secret_file: Option<String>,
    /// The callback URL registered with the provider: this server's public
    /// address followed by `/dashboard/oidc/callback`.
    pub redirect_url: String,
    /// The claim that is the person's identity: `oid` or `sub`.
    pub claim: IdentityClaim,
    /// The channel prefix of the stored id: `<channel>:<claim value>`.
    #[default = "teams"]
    pub channel: String,
    /// What the sign-in page's button names.
    #[default = "your organisation's account"]
    pub provider_name: String,
    /// More providers (`[[oidc.providers]]`), each its own button.
    pub providers: Vec<ProviderConfig>,
}

/// One more identity provider (`[[oidc.providers]]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ProviderConfig {
    /// `oidc`, `slack` or `discord`.
    pub kind: ProviderKind,
    /// Its name in steward's URLs (`/dashboard/oidc/start?provider=…`);
    /// default the kind's. Letters, digits, `-` and `_`.
    pub id: Option<String>,
    /// The issuer (`oidc`: required; `slack`: default `https://slack.com`;
    /// `discord` has none).
    pub issuer: Option<String>,
    /// The client id registered with the provider.
    pub client_id: String,
    /// NAME of the environment variable holding the client secret.
    pub client_secret_env: Option<String>,
    /// Path of a file holding the client secret (instead of `client_secret_env`).
    pub client_secret_file: Option<String>,
    /// The callback URL registered with the provider: this server's public
    /// address followed by `/dashboard/oidc/callback`.
    pub redirect_url: String,
    /// `oidc` only: the claim that is the person (default `sub`).
    pub claim: Option<IdentityClaim>,
    /// `oidc` only: the stored id's channel prefix (required).
    pub channel: Option<String>,
    /// `discord` only: its authorization endpoint (a test points it at a fake).
    pub authorization_url: Option<String>,
    /// `discord` only: its token endpoint.
    pub token_url: Option<String>,
    /// `discord` only: its `users/@me` endpoint.
    pub user_url: Option<String>,
    /// What the sign-in page's button names (default: Slack, Discord, or
    /// "your organisation's account").
    pub provider_name: Option<String>,
}

/// An http(s) URL, as far as the configuration can tell.
fn is_url(s: &str) -> bool {
    let s = s.trim();
    s.starts_with("https://") || s.starts_with("http://")
}

/// A client secret, read from where `env` or `file` says; `key` names the
/// provider's keys in errors (`oidc`, `oidc.providers[1]`).
fn read_secret(key: &str, env: Option<&str>, file: Option<&str>) -> Result<String, String> {
    let secret = match (env, file) {
        (Some(name), _) => std::env::var(name).map_err(|_| {
            format!("{key}.client_secret_env: the environment variable {name} is not set")
        })?,
        (None, Some(path)) => std::fs::read_to_string(path)
            .map_err(|e| format!("{key}.client_secret_file: cannot read {path}: {e}"))?,
        (None, None) => return Err(format!("{key}.client_secret_env: not set")),
    };
    let secret = secret.trim().to_string();
    if secret.is_empty() {
        return Err(format!("{key}: the client secret is empty"));
    }
    Ok(secret)
}

/// The keys every provider has: client, secret, callback.
fn check_client(
    key: &str,
    client_id: &str,
    redirect_url: &str,
    secret: (Option<&str>, Option<&str>),
) -> Result<(), String> {
    let bad = |k: &str, why: &str| Err(format!("{key}.{k}: {why}"));
    if client_id.trim().is_empty() {
        return bad(
            "client_id",
            "required: the client id registered with the provider",
        );
    }
    if !is_url(redirect_url) {
        return bad(
            "redirect_url",
            "required: the http(s) URL of /dashboard/oidc/callback as the provider knows it",
        );
    }
    match secret {
        (Some(_), Some(_)) => bad(
            "client_secret_file",
            "set either it or client_secret_env, not both",
        ),
        (None, None) => bad(
            "client_secret_env",
            "required (or client_secret_file): the NAME of the variable holding the client secret",
        ),
        (Some(name), None) if !super::slack::env_name(name) => bad(
            "client_secret_env",
            "the NAME of an environment variable (like OIDC_CLIENT_SECRET), not the secret",
        ),
        _ => Ok(()),
    }
}

/// A channel prefix: a name without `:` or spaces.
fn is_channel(channel: &str) -> bool {
    let channel = channel.trim();
    !channel.is_empty() && !channel.contains(':') && !channel.contains(char::is_whitespace)
}

impl OidcConfig {
    /// Whether sign-in through the section's own provider is on.
    pub fn enabled(&self) -> bool {
        self.issuer.is_some()
    }

    /// Each error names its key.
    pub fn check(&self) -> Result<(), String> {
        if let Some(issuer) = &self.issuer {
            self.check_section(issuer)?;
        }
        let mut ids: Vec<String> = Vec::new();
        if self.enabled() {
            ids.push(SECTION_PROVIDER_ID.into());
        }
        for (i, p) in self.providers.iter().enumerate() {
            let key = format!("oidc.providers[{i}]");
            p.check(&key)?;
            let id = p.id();
            if ids.contains(&id) {
                return Err(format!(
                    "{key}.id: `{id}` names another provider already; give each its own id"
                ));
            }
            ids.push(id);
        }
        Ok(())
    }

    fn check_section(&self, issuer: &str) -> Result<(), String> {
        let bad = |key: &str, why: &str| Err(format!("oidc.{key}: {why}"));
        if !is_url(issuer) {
            return bad("issuer", "not an http(s) URL");
        }
        if self.client_id.trim().is_empty() {
            return bad("client_id", "required with oidc.issuer");
        }
        if !is_url(&self.redirect_url) {
            return bad(
                "redirect_url",
                "required with oidc.issuer: the http(s) URL of /dashboard/oidc/callback as the provider knows it",
            );
        }
        match (&self.client_secret_env, &self.client_secret_file) {
            (Some(_), Some(_)) => {
                return bad("client_secret_file", "set either it or oidc.client_secret_env, not both")
            }
            (None, None) => {
                return bad(
                    "client_secret_env",
                    "required with oidc.issuer (or oidc.client_secret_file): the NAME of the variable holding the client secret",
                )
            }
            (Some(name), None) if !super::slack::env_name(name) => {
                return bad(
                    "client_secret_env",
                    "the NAME of an environment variable (like OIDC_CLIENT_SECRET), not the secret",
                )
            }
            _ => {}
        }
        if !is_channel(&self.channel) {
            return bad(
                "channel",
                "a channel name like teams, without `:` or spaces",
            );
        }
        Ok(())
    }

    /// The client secret, read from where the section says.
    pub fn client_secret(&self) -> Result<String, String> {
        read_secret(
            "oidc",
            self.client_secret_env.as_deref(),
            self.client_secret_file.as_deref(),
        )
    }

    /// Every provider configured, the section's own first (id `oidc`):
    /// each a button on the sign-in page, in this order.
    pub fn in_use(&self) -> Vec<ProviderConfig> {
        let own = self.issuer.as_ref().map(|issuer| ProviderConfig {
            kind: ProviderKind::Oidc,
            id: Some(SECTION_PROVIDER_ID.into()),
            issuer: Some(issuer.clone()),
            client_id: self.client_id.clone(),
            client_secret_env: self.client_secret_env.clone(),
            client_secret_file: self.client_secret_file.clone(),
            redirect_url: self.redirect_url.clone(),
            claim: Some(self.claim),
            channel: Some(self.channel.clone()),
            provider_name: Some(self.provider_name.clone()),
            ..Default::default()
        });
        own.into_iter()
            .chain(self.providers.iter().cloned())
            .collect()
    }
}

impl ProviderConfig {
    /// Its id: as configured, else its kind's name.
    pub fn id(&self) -> String {
        self.id
            .as_deref()
            .map(str::trim)
            .unwrap_or(self.kind.as_str())
            .to_string()
    }

    /// What its button names.
    pub fn name(&self) -> String {
        match (&self.provider_name, self.kind) {
            (Some(name), _) if !name.trim().is_empty() => name.trim().to_string(),
            (_, ProviderKind::Slack) => "Slack".into(),
            (_, ProviderKind::Discord) => "Discord".into(),
            (_, ProviderKind::Oidc) => "your organisation's account".into(),
        }
    }

    /// The issuer an OpenID Connect provider's ID tokens name, without a
    /// trailing `/` (`discord` has none).
    pub fn issuer(&self) -> Option<String> {
        let issuer = match (self.kind, &self.issuer) {
            (ProviderKind::Discord, _) => return None,
            (_, Some(issuer)) => issuer.trim(),
            (ProviderKind::Slack, None) => SLACK_ISSUER,
            (ProviderKind::Oidc, None) => return None,
        };
        Some(issuer.trim_end_matches('/').to_string())
    }

    /// Discord's three endpoints: authorization, token, user.
    pub fn discord_urls(&self) -> [String; 3] {
        let or = |set: &Option<String>, default: &str| {
            set.as_deref().unwrap_or(default).trim().to_string()
        };
        [
            or(&self.authorization_url, DISCORD_AUTHORIZATION_URL),
            or(&self.token_url, DISCORD_TOKEN_URL),
            or(&self.user_url, DISCORD_USER_URL),
        ]
    }

    /// The client secret, read from where the provider says.
    pub fn client_secret(&self) -> Result<String, String> {
        let key = if self.id.as_deref() == Some(SECTION_PROVIDER_ID) {
            "oidc".to_string()
        } else {
            format!("oidc.providers ({})", self.id())
        };
        read_secret(
            &key,
            self.client_secret_env.as_deref(),
            self.client_secret_file.as_deref(),
        )
    }

    /// Each error names its key under `key` (`oidc.providers[0]`).
    fn check(&self, key: &str) -> Result<(), String> {
        let bad = |k: &str, why: &str| Err(format!("{key}.{k}: {why}"));
        let id = self.id();
        if id.is_empty()
            || id.len() > 32
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return bad("id", "letters, digits, `-` and `_`, at most 32");
        }
        check_client(
            key,
            &self.client_id,
            &self.redirect_url,
            (
                self.client_secret_env.as_deref(),
                self.client_secret_file.as_deref(),
            ),
        )?;
        let kind = self.kind.as_str();
        let only = |k: &str, set: bool, kinds: &str| {
            if set {
                bad(k, &format!("not for kind = \"{kind}\" (only {kinds})"))
            } else {
                Ok(())
            }
        };
        let discord = self.kind == ProviderKind::Discord;
        let oidc = self.kind == ProviderKind::Oidc;
        only("issuer", discord && self.issuer.is_some(), "oidc and slack")?;
        only("claim", !oidc && self.claim.is_some(), "oidc")?;
        only("channel", !oidc && self.channel.is_some(), "oidc")?;
        for (k, v) in [
            ("authorization_url", &self.authorization_url),
            ("token_url", &self.token_url),
            ("user_url", &self.user_url),
        ] {
            only(k, !discord && v.is_some(), "discord")?;
            if v.as_deref().is_some_and(|u| !is_url(u)) {
                return bad(k, "not an http(s) URL");
            }
        }
        match (self.kind, &self.issuer) {
            (ProviderKind::Oidc, None) => return bad("issuer", "required with kind = \"oidc\""),
            (_, Some(issuer)) if !is_url(issuer) => return bad("issuer", "not an http(s) URL"),
            _ => {}
        }
        if oidc && !self.channel.as_deref().is_some_and(is_channel) {
            return bad(
                "channel",
                "required with kind = \"oidc\": a channel name like teams, without `:` or spaces",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> OidcConfig {
        OidcConfig {
            issuer: Some("https://login.example.com/tenant/v2.0".into()),
            client_id: "app".into(),
            client_secret_env: Some("OIDC_CLIENT_SECRET".into()),
            redirect_url: "https://steward.example.com/dashboard/oidc/callback".into(),
            ..Default::default()
        }
    }

    #[test]
    fn off_by_default_and_each_missing_or_wrong_key_is_named() {
        assert!(!OidcConfig::default().enabled());
        assert_eq!(OidcConfig::default().check(), Ok(()));
        assert_eq!(on().check(), Ok(()));
        let refused = |c: OidcConfig, key: &str| {
            let e = c.check().expect_err(key);
            assert!(e.starts_with(&format!("oidc.{key}:")), "{e}");
        };
        refused(
            OidcConfig {
                issuer: Some("login.example.com".into()),
                ..on()
            },
            "issuer",
        );
        refused(
            OidcConfig {
                client_id: " ".into(),
                ..on()
            },
            "client_id",
        );
        refused(
            OidcConfig {
                redirect_url: String::new(),
                ..on()
            },
            "redirect_url",
        );
        refused(
            OidcConfig {
                client_secret_env: None,
                ..on()
            },
            "client_secret_env",
        );
        refused(
            OidcConfig {
                client_secret_env: Some("s3cr3t value!".into()),
                ..on()
            },
            "client_secret_env",
        );
        refused(
            OidcConfig {
                client_secret_file: Some("/run/x".into()),
                ..on()
            },
            "client_secret_file",
        );
        refused(
            OidcConfig {
                channel: "teams:x".into(),
                ..on()
            },
            "channel",
        );
    }

    #[test]
    fn the_secret_is_read_from_its_file_and_an_unreadable_one_is_a_clear_error() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("secret");
        std::fs::write(&path, "  hunter2-but-longer\n").expect("write");
        let c = OidcConfig {
            client_secret_env: None,
            client_secret_file: Some(path.display().to_string()),
            ..on()
        };
        assert_eq!(c.client_secret().as_deref(), Ok("hunter2-but-longer"));
        let gone = OidcConfig {
            client_secret_file: Some(dir.path().join("nope").display().to_string()),
            ..c
        };
        assert!(gone
            .client_secret()
            .unwrap_err()
            .contains("oidc.client_secret_file: cannot read"));
    }

    fn slack() -> ProviderConfig {
        ProviderConfig {
            kind: ProviderKind::Slack,
            client_id: "3141592653.5897932384".into(),
            client_secret_env: Some("SLACK_SIGN_IN_SECRET".into()),
            redirect_url: "https://steward.example.com/dashboard/oidc/callback".into(),
            ..Default::default()
        }
    }

    fn discord() -> ProviderConfig {
        ProviderConfig {
            kind: ProviderKind::Discord,
            client_secret_env: Some("DISCORD_SIGN_IN_SECRET".into()),
            ..slack()
        }
    }

    #[test]
    fn slack_and_discord_beside_the_section_each_with_its_id_defaults_and_only_its_keys() {
        let both = OidcConfig {
            providers: vec![slack(), discord()],
            ..on()
        };
        assert_eq!(both.check(), Ok(()));
        let ids: Vec<(String, String)> = both.in_use().iter().map(|p| (p.id(), p.name())).collect();
        assert_eq!(
            ids,
            [
                (
                    "oidc".to_string(),
                    "your organisation's account".to_string()
                ),
                ("slack".into(), "Slack".into()),
                ("discord".into(), "Discord".into()),
            ]
        );
        assert_eq!(slack().issuer().as_deref(), Some(SLACK_ISSUER));
        assert_eq!(discord().issuer(), None);
        assert_eq!(discord().discord_urls()[2], DISCORD_USER_URL);
        // Without the section's own provider, the list alone is enough.
        let only = OidcConfig {
            providers: vec![discord()],
            ..Default::default()
        };
        assert_eq!(only.check(), Ok(()));
        assert_eq!(only.in_use().len(), 1);
        let refused = |p: ProviderConfig, key: &str| {
            let c = OidcConfig {
                providers: vec![slack(), p],
                ..Default::default()
            };
            let e = c.check().expect_err(key);
            assert!(e.starts_with(&format!("oidc.providers[1].{key}:")), "{e}");
        };
        refused(slack(), "id");
        refused(
            ProviderConfig {
                issuer: Some("https://discord.com".into()),
                ..discord()
            },
            "issuer",
        );
        refused(
            ProviderConfig {
                channel: Some("slack".into()),
                id: Some("slack2".into()),
                ..slack()
            },
            "channel",
        );
        refused(
            ProviderConfig {
                user_url: Some("https://discord.com/api/users/@me".into()),
                id: Some("slack2".into()),
                ..slack()
            },
            "user_url",
        );
        refused(
            ProviderConfig {
                kind: ProviderKind::Oidc,
                issuer: Some("https://accounts.example.com".into()),
                ..discord()
            },
            "channel",
        );
        refused(
            ProviderConfig {
                id: Some("a.b".into()),
                ..discord()
            },
            "id",
        );
        refused(
            ProviderConfig {
                client_secret_env: None,
                ..discord()
            },
            "client_secret_env",
        );
        refused(
            ProviderConfig {
                token_url: Some("discord.com/api/oauth2/token".into()),
                ..discord()
            },
            "token_url",
        );
    }
}
