//! `[server]`, `[database]`, `[dashboard]`, `[metrics]` and `[rate_limit]`:
//! where steward listens and stores, who signs in, and its limits.

use super::ConfigError;
use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use validator::Validate;

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address the HTTP server (API, dashboard, channels' webhooks) listens on.
    #[default = "127.0.0.1:8080"]
    pub listen: String,
    /// Organisation of the dashboard, the CLI and API keys' default.
    #[default = "default"]
    pub org: String,
    /// Agent that answers when a channel names none.
    #[default = "default"]
    pub agent: String,
    /// Largest accepted request body, in bytes.
    #[default(64 * 1024)]
    #[validate(range(min = 1024, max = 67_108_864))]
    pub max_body_bytes: usize,
    /// How long a connection may take to send a request's headers, in ms; also
    /// how long an idle keep-alive connection stays open. Then it is closed.
    #[default = 10_000]
    #[validate(range(min = 100, max = 600_000))]
    pub header_timeout_ms: u64,
    /// How long a request's body may take to arrive in full after its headers,
    /// in ms; then the request is answered 408 and the connection closed.
    #[default = 30_000]
    #[validate(range(min = 100, max = 600_000))]
    pub body_timeout_ms: u64,
    /// Open HTTP connections at most; a connection beyond them is closed at once.
    #[default = 1024]
    #[validate(range(min = 1, max = 1_000_000))]
    pub max_connections: usize,
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// `sqlite:steward.db` (default), `sqlite::memory:`, or `postgres://…`.
    #[default = "sqlite:steward.db"]
    pub url: String,
}

/// Prometheus `/metrics`. Off unless `listen` or `token` is set: the counts
/// name organisations' channels and show their traffic, and the main listener
/// may face the internet, so nothing is exposed before an operator says where.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Serve `/metrics` on a listener of its own at this address (such as
    /// `127.0.0.1:9464`, reachable only by the scraper), apart from `server.listen`.
    pub listen: Option<String>,
    /// Serve `/metrics` on the main listener too, to requests carrying
    /// `Authorization: Bearer <token>`; when set it is required on `listen` as well.
    pub token: Option<String>,
}

impl MetricsConfig {
    /// Shortest accepted token.
    pub const MIN_TOKEN_CHARS: usize = 16;

    /// Whether `/metrics` is served anywhere.
    pub fn enabled(&self) -> bool {
        self.listen.is_some() || self.token.is_some()
    }

    pub(super) fn check(&self, server: &ServerConfig) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError::Invalid(format!("{key}: {why}")));
        if let Some(listen) = &self.listen {
            if listen.parse::<std::net::SocketAddr>().is_err() {
                return bad("metrics.listen", "not a socket address like 127.0.0.1:9464");
            }
            if listen.trim() == server.listen.trim() {
                return bad(
                    "metrics.listen",
                    "is server.listen; leave it unset and set metrics.token to serve /metrics there",
                );
            }
        }
        if let Some(t) = &self.token {
            if t.trim().chars().count() < Self::MIN_TOKEN_CHARS {
                return bad(
                    "metrics.token",
                    &format!("must be at least {} characters", Self::MIN_TOKEN_CHARS),
                );
            }
        }
        Ok(())
    }
}

/// The web dashboard, served by the same HTTP server under `/dashboard`.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct DashboardConfig {
    /// Serve the dashboard at all.
    #[default = true]
    pub enabled: bool,
    /// Admin sign-in token; when unset one is generated, stored (hashed) in
    /// the database for every replica, and printed once by `steward serve`.
    pub admin_token: Option<String>,
    /// How long a dashboard sign-in lasts, in hours.
    #[default = 12]
    #[validate(range(min = 1, max = 2_160))]
    pub session_hours: i64,
    /// Mark the session cookie `Secure` (set it when a TLS proxy fronts the server).
    pub secure_cookie: bool,
    /// Sign-in attempts one client (IP address; an IPv6 /64) may make per
    /// minute, right or wrong; past it the token is not checked (429).
    #[default = 10]
    #[validate(range(min = 1, max = 10_000))]
    pub sign_in_per_minute: u32,
    /// Sign-in attempts all clients together may make per minute.
    #[default = 60]
    #[validate(range(min = 1, max = 1_000_000))]
    pub sign_in_global_per_minute: u32,
    /// The dashboard's address as people open it (`https://steward.example.com`):
    /// `/web` sends sign-in links to it, and is off without it.
    pub public_url: Option<String>,
    /// How long a `/web` sign-in link may wait for its one use, in minutes.
    #[default = 10]
    #[validate(range(min = 1, max = 1_440))]
    pub sign_in_link_minutes: i64,
}

impl DashboardConfig {
    /// Shortest accepted configured admin token.
    pub const MIN_TOKEN_CHARS: usize = 16;

    pub(super) fn check(&self) -> Result<(), ConfigError> {
        if let Some(t) = &self.admin_token {
            if t.trim().chars().count() < Self::MIN_TOKEN_CHARS {
                return Err(ConfigError::Invalid(format!(
                    "dashboard.admin_token: must be at least {} characters (or unset, to have one generated)",
                    Self::MIN_TOKEN_CHARS
                )));
            }
        }
        if let Some(url) = &self.public_url {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(ConfigError::Invalid(
                    "dashboard.public_url: must be an http(s) URL, such as https://steward.example.com".into(),
                ));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitConfig {
    /// Messages a sender may send per minute (sustained).
    #[default = 20]
    #[validate(range(min = 1, max = 1_000_000))]
    pub per_sender_per_minute: u32,
    /// Messages a sender may send at once.
    #[default = 10]
    #[validate(range(min = 1, max = 1_000_000))]
    pub sender_burst: u32,
    /// Messages a conversation may carry per minute (sustained).
    #[default = 60]
    #[validate(range(min = 1, max = 1_000_000))]
    pub per_conversation_per_minute: u32,
    #[default = 30]
    #[validate(range(min = 1, max = 1_000_000))]
    pub conversation_burst: u32,
    /// REST API requests (`/api/v1`) one key's user may make per minute
    /// (sustained); beyond it they are answered 429 with `Retry-After`.
    #[default = 600]
    #[validate(range(min = 1, max = 1_000_000))]
    pub api_per_key_per_minute: u32,
    /// REST API requests one key's user may make at once.
    #[default = 120]
    #[validate(range(min = 1, max = 1_000_000))]
    pub api_key_burst: u32,
    /// Requests one webhook (`POST /hooks/<name>`) takes per minute;
    /// beyond it they are answered 429 with `Retry-After`.
    #[default = 60]
    #[validate(range(min = 1, max = 1_000_000))]
    pub webhook_per_minute: u32,
}
