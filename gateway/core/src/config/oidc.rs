//! `[oidc]`: each person signs in to the dashboard as themselves through an
//! OpenID Connect provider (docs/channels.md, "Signing in as yourself"). The
//! client secret is never in the file: the section names the environment
//! variable or the file that holds it.

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

/// Sign-in through an OpenID Connect provider (authorization code flow with
/// PKCE). Off unless `issuer` is set.
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
}

impl OidcConfig {
    /// Whether sign-in through the provider is on.
    pub fn enabled(&self) -> bool {
        self.issuer.is_some()
    }

    /// Each error names its key.
    pub fn check(&self) -> Result<(), String> {
        let Some(issuer) = &self.issuer else {
            return Ok(());
        };
        let bad = |key: &str, why: &str| Err(format!("oidc.{key}: {why}"));
        let url = |s: &str| s.starts_with("https://") || s.starts_with("http://");
        if !url(issuer.trim()) {
            return bad("issuer", "not an http(s) URL");
        }
        if self.client_id.trim().is_empty() {
            return bad("client_id", "required with oidc.issuer");
        }
        if !url(self.redirect_url.trim()) {
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
        let channel = self.channel.trim();
        if channel.is_empty() || channel.contains(':') || channel.contains(char::is_whitespace) {
            return bad(
                "channel",
                "a channel name like teams, without `:` or spaces",
            );
        }
        Ok(())
    }

    /// The client secret, read from where the section says.
    pub fn client_secret(&self) -> Result<String, String> {
        let secret = match (&self.client_secret_env, &self.client_secret_file) {
            (Some(name), _) => std::env::var(name).map_err(|_| {
                format!("oidc.client_secret_env: the environment variable {name} is not set")
            })?,
            (None, Some(path)) => std::fs::read_to_string(path)
                .map_err(|e| format!("oidc.client_secret_file: cannot read {path}: {e}"))?,
            (None, None) => return Err("oidc.client_secret_env: not set".into()),
        };
        let secret = secret.trim().to_string();
        if secret.is_empty() {
            return Err("oidc: the client secret is empty".into());
        }
        Ok(secret)
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
}
