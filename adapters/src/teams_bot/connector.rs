//! The Bot Connector REST API, bot to channel: activities posted to
//! `POST {serviceUrl}/v3/conversations/{conversation}/activities` with a
//! bearer token got by OAuth 2.0 client credentials (the bot's app id and
//! password) from the token endpoint, kept until shortly before it expires.
//!
//! A post is retried on 429 (after its `Retry-After`), 5xx and network
//! errors, and once on 401 with a fresh token; anything else is final, so
//! nothing is posted twice by a retry of an answered post.

use super::{ConversationAddress, NowMs};
use crate::retry::{
    self, retry_after, retryable_status, Failure, LongWait, RetryError, RetryPolicy,
};
use chrono::Utc;
use oauth2::basic::BasicClient;
use oauth2::{AuthType, ClientId, ClientSecret, Scope, TokenResponse, TokenUrl};
use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::Mutex;

/// The scope a bot asks for to call the connector.
pub const CONNECTOR_SCOPE: &str = "https://api.botframework.com/.default";

/// A token is fetched again this long before it expires.
const TOKEN_MARGIN_MS: i64 = 5 * 60 * 1000;

/// Longest wait between two connector attempts, whatever `Retry-After` asks.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// The bot's credentials and where its tokens come from.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub app_id: String,
    pub app_password: SecretString,
    /// The OAuth 2.0 token endpoint (`…/oauth2/v2.0/token`).
    pub token_endpoint: String,
}

/// Whether a post is worth retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tries {
    /// Retried as [`PostRetries`] says: a message.
    Retried,
    /// Tried once: a typing indicator, stale by the time a retry could show it.
    Once,
}

/// How often a post is tried.
#[derive(Debug, Clone, Copy)]
pub struct PostRetries {
    pub attempts: u32,
    /// Wait before the second attempt when the connector sends no `Retry-After`; doubles after.
    pub backoff: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    #[error("the service URL `{0}` is not an http(s) URL")]
    ServiceUrl(String),
    #[error("the connector refused the activity: {0}")]
    Refused(String),
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp { attempts: u32, last: String },
}

/// How one attempt failed.
#[derive(Debug)]
enum CallError {
    Token(String),
    Status(StatusCode),
    Transport(reqwest::Error),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Token(e) => write!(f, "no connector token: {e}"),
            CallError::Status(s) => write!(f, "HTTP {s}"),
            CallError::Transport(e) => write!(f, "{e}"),
        }
    }
}

struct Token {
    secret: SecretString,
    /// Fetch a new one from here on (ms, the injected clock).
    renew_at: i64,
}

/// What the connector answers a post with (a `ResourceResponse`).
#[derive(Debug, Deserialize)]
struct Posted {
    #[serde(default)]
    id: Option<String>,
}

/// The connector client: its token, kept, and its posts.
pub struct Connector {
    credentials: Credentials,
    retries: PostRetries,
    client: reqwest::Client,
    now: NowMs,
    token: Mutex<Option<Token>>,
}

impl Connector {
    pub fn new(
        credentials: Credentials,
        retries: PostRetries,
        client: reqwest::Client,
        now: NowMs,
    ) -> Connector {
        Connector {
            credentials,
            retries,
            client,
            now,
            token: Mutex::new(None),
        }
    }

    /// A token for the connector: the one kept, or a new one.
    async fn token(&self) -> Result<SecretString, String> {
        let mut kept = self.token.lock().await;
        let now = (self.now)();
        if let Some(t) = kept.as_ref().filter(|t| now < t.renew_at) {
            return Ok(t.secret.clone());
        }
        let c = &self.credentials;
        let url = TokenUrl::new(c.token_endpoint.clone()).map_err(|e| e.to_string())?;
        let client = BasicClient::new(ClientId::new(c.app_id.clone()))
            .set_client_secret(ClientSecret::new(c.app_password.expose_secret().into()))
            .set_auth_type(AuthType::RequestBody)
            .set_token_uri(url);
        let answer = client
            .exchange_client_credentials()
            .add_scope(Scope::new(CONNECTOR_SCOPE.into()))
            .request_async(&self.client)
            .await
            .map_err(|e| match e {
                oauth2::RequestTokenError::ServerResponse(r) => r.to_string(),
                other => other.to_string(),
            })?;
        let lifetime = answer
            .expires_in()
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(60 * 60 * 1000);
        let secret: SecretString = answer.access_token().secret().clone().into();
        *kept = Some(Token {
            secret: secret.clone(),
            renew_at: now.saturating_add(lifetime.saturating_sub(TOKEN_MARGIN_MS).max(0)),
        });
        Ok(secret)
    }

    /// Forget the kept token (the connector refused it).
    async fn drop_token(&self) {
        *self.token.lock().await = None;
    }

    /// Post `activity` into `conversation` at `address`'s service URL; the
    /// id the connector gave it, when it gave one.
    pub async fn post(
        &self,
        address: &ConversationAddress,
        conversation: &str,
        activity: &Value,
        tries: Tries,
    ) -> Result<Option<String>, ConnectorError> {
        let url = activities_url(&address.service_url, conversation)?;
        let policy = RetryPolicy {
            attempts: match tries {
                Tries::Retried => self.retries.attempts,
                Tries::Once => 1,
            },
            initial_backoff: self.retries.backoff,
            max_wait: MAX_RETRY_WAIT,
            long_wait: LongWait::Cap,
        };
        let refreshed = std::sync::atomic::AtomicBool::new(false);
        let call = || async {
            let token = self
                .token()
                .await
                .map_err(|e| Failure::retry(CallError::Token(e)))?;
            let sent = self
                .client
                .post(url.clone())
                .bearer_auth(token.expose_secret())
                .json(activity)
                .send()
                .await;
            let resp = sent.map_err(|e| Failure::retry(CallError::Transport(e)))?;
            let status = resp.status();
            if status == StatusCode::UNAUTHORIZED
                && !refreshed.swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                // A token revoked or expired early: once more with a new one.
                self.drop_token().await;
                return Err(Failure::retry(CallError::Status(status)));
            }
            if retryable_status(status) {
                return Err(Failure::Retry {
                    retry_after: retry_after(resp.headers(), Utc::now()),
                    error: CallError::Status(status),
                });
            }
            if !status.is_success() {
                return Err(Failure::Fatal(CallError::Status(status)));
            }
            // The post is made; an unreadable answer only loses its id.
            let posted: Option<Posted> = resp.json().await.ok();
            Ok(posted.and_then(|p| p.id))
        };
        retry::run(&policy, "Bot Connector post", call)
            .await
            .map_err(|e| match e {
                RetryError::Fatal(last) => ConnectorError::Refused(last.to_string()),
                RetryError::Exhausted { last, .. } | RetryError::TooLong { last, .. } => {
                    ConnectorError::GaveUp {
                        attempts: policy.attempts.max(1),
                        last: last.to_string(),
                    }
                }
            })
    }
}

/// `{serviceUrl}/v3/conversations/{conversation}/activities`, the
/// conversation id one path segment (escaped as one).
pub fn activities_url(
    service_url: &str,
    conversation: &str,
) -> Result<reqwest::Url, ConnectorError> {
    let bad = || ConnectorError::ServiceUrl(service_url.into());
    let mut url = reqwest::Url::parse(service_url).map_err(|_| bad())?;
    if !matches!(url.scheme(), "https" | "http") || url.cannot_be_a_base() {
        return Err(bad());
    }
    url.set_query(None);
    url.set_fragment(None);
    url.path_segments_mut()
        .map_err(|_| bad())?
        .pop_if_empty()
        .extend(["v3", "conversations", conversation, "activities"]);
    Ok(url)
}

/// A message activity from the bot (`from`) into `conversation`, as plain
/// text (nothing in it renders as markup or a mention), replying to
/// `reply_to` when given.
pub fn message(
    address: &ConversationAddress,
    conversation: &str,
    text: &str,
    reply_to: Option<&str>,
) -> Value {
    let mut activity = json!({
        "type": "message",
        "text": text,
        "textFormat": "plain",
        "conversation": { "id": conversation },
    });
    if let Some(bot) = &address.bot {
        activity["from"] = json!({ "id": bot });
    }
    if let Some(id) = reply_to {
        activity["replyToId"] = json!(id);
    }
    activity
}

/// The typing indicator in `conversation`.
pub fn typing(address: &ConversationAddress, conversation: &str) -> Value {
    let mut activity = json!({
        "type": "typing",
        "conversation": { "id": conversation },
    });
    if let Some(bot) = &address.bot {
        activity["from"] = json!({ "id": bot });
    }
    activity
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversation_id_is_one_escaped_segment_below_the_service_url() {
        let url = activities_url(
            "https://smba.trafficmanager.net/amer/",
            "19:abc@thread.tacv2;messageid=1767603600000",
        )
        .unwrap();
        assert_eq!(
            url.as_str(),
            "https://smba.trafficmanager.net/amer/v3/conversations/19:abc@thread.tacv2;messageid=1767603600000/activities"
        );
        let url = activities_url("http://127.0.0.1:9/teams", "a:1/../x?y#z").unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9/teams/v3/conversations/a:1%2F..%2Fx%3Fy%23z/activities"
        );
        assert!(activities_url("file:///etc/passwd", "a").is_err());
        assert!(activities_url("not a url", "a").is_err());
    }
}
