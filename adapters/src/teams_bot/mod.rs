//! Microsoft Teams as a Bot Framework bot (set up as docs/channels.md,
//! "Microsoft Teams (bot)", describes), beside the outgoing webhook
//! ([`crate::teams`]).
//!
//! The Bot Framework POSTs every activity for the bot to `/api/messages` with
//! `Authorization: Bearer <JWT>`. The token is checked before the body is
//! read ([`auth`]); the activity is then read, and its `serviceUrl` must be
//! the token's and its channel one the signing key endorses. A refusal is
//! `401` and nothing is stored; a body over the limit is `413`, one that is
//! not an activity `400`.
//!
//! Every accepted activity is acknowledged at once. A message's turn runs in
//! its own task while the bot shows as typing, and the answer is posted
//! through the connector ([`connector`]) into the conversation it came from,
//! as a reply to it. The conversation's reference (service URL, tenant, the
//! bot's id) is kept through an [`AddressBook`] at first contact, so answers
//! finished late and automated runs reach any conversation the bot is in.
//!
//! - Personal chats are direct conversations: pairing and "Remember this?"
//!   happen there. Group chats and channel threads are group conversations,
//!   answered when the bot is mentioned (its `<at>` mention removed).
//! - A sender is the stored id `teams:<aadObjectId>`, the same as through the
//!   outgoing webhook: one person, one identity, whichever way they write.
//! - A message is known by its conversation and activity id: a redelivery
//!   runs once and is answered once ([`TurnHandler::handle_new`]).
//!
//! Only this module knows the Bot Framework's JSON; the turn loop sees an [`Inbound`].

pub mod auth;
pub mod connector;

use crate::discord::split_message;
use crate::teams::{channel_of, clean_text};
use crate::{ConversationKind, Inbound, Reply, Stored, TurnHandler};
use auth::{TokenRefusal, TokenRules, TokenValidator, Verified};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use connector::{Connector, ConnectorError, Credentials, PostRetries, Tries};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The channel name stored with the bot's messages (and its section's key).
pub const CHANNEL: &str = "teams_bot";

/// Where the Bot Framework posts activities.
pub const MESSAGES_PATH: &str = "/api/messages";

/// The Bot Framework's OpenID metadata document (connector to bot).
pub const OPENID_METADATA: &str =
    "https://login.botframework.com/v1/.well-known/openidconfiguration";

/// The issuer of the Bot Framework's tokens to bots.
pub const ISSUER: &str = "https://api.botframework.com";

/// Where a multi-tenant bot gets its connector tokens.
pub const TOKEN_ENDPOINT: &str =
    "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token";

/// The `channelId` of Teams' activities: the only channel this bot takes.
pub const TEAMS_CHANNEL_ID: &str = "msteams";

/// The longest text of one message steward posts; longer answers are split
/// at line breaks (Teams takes about 28 KB a message, markup included).
pub const MESSAGE_LIMIT: usize = 10_000;

/// Per-request timeout of every call the bot makes.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// Milliseconds since the epoch, by the clock the rest of steward reads.
pub type NowMs = Arc<dyn Fn() -> i64 + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error("the app id is empty")]
    EmptyAppId,
    #[error("the app password is empty")]
    EmptyPassword,
    #[error("`{0}` is not an http(s) URL")]
    NotAnUrl(String),
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// Where a conversation is reached outside a turn: the parts of a Bot
/// Framework conversation reference steward keeps. No person's id or words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationAddress {
    /// The connector's root for this conversation (`https://smba.trafficmanager.net/…/`).
    pub service_url: String,
    /// The conversation as a whole: a personal or group chat's id, or a
    /// team channel's (a thread's id without its `;messageid=…`).
    pub conversation: String,
    /// `personal`, `groupChat` or `channel`.
    #[serde(default)]
    pub conversation_type: Option<String>,
    #[serde(default)]
    pub tenant: Option<String>,
    /// The bot's own id in the channel (`28:<app id>`).
    #[serde(default)]
    pub bot: Option<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AddressBookError(pub String);

/// Where conversation references are kept (the database, shared by replicas).
#[async_trait::async_trait]
pub trait AddressBook: Send + Sync {
    /// Keep `address` as how `org` reaches its conversation.
    async fn keep(&self, org: &str, address: &ConversationAddress) -> Result<(), AddressBookError>;
    /// How `org` reaches `conversation` (a chat or channel id), if kept.
    async fn find(
        &self,
        org: &str,
        conversation: &str,
    ) -> Result<Option<ConversationAddress>, AddressBookError>;
}

/// Everything the bot needs besides the turn loop and the address book.
/// Its password never prints.
pub struct BotSettings {
    /// The app id: the audience of every token, the client id of the bot's own.
    pub app_id: String,
    app_password: SecretString,
    /// Where the signing keys are published; overridable for tests.
    pub openid_metadata_url: String,
    /// The issuer tokens must name.
    pub issuer: String,
    /// Where connector tokens come from.
    pub token_endpoint: String,
    client: reqwest::Client,
    /// The injected clock: token expiry, key and token caches.
    pub now: NowMs,
    /// Teams tenant id → organisation.
    pub tenant_orgs: HashMap<String, String>,
    /// Organisation of a tenant not in `tenant_orgs`.
    pub default_org: String,
    /// The agent answering through the bot.
    pub agent: String,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Connector posts tried at most this many times.
    pub post_attempts: u32,
    /// Wait before the second attempt when the connector sends no `Retry-After`; doubles after.
    pub post_backoff: Duration,
}

impl std::fmt::Debug for BotSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotSettings")
            .field("app_id", &self.app_id)
            .field("openid_metadata_url", &self.openid_metadata_url)
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

/// The bot's app registration: what Azure shows for it.
#[derive(Debug, Clone)]
pub struct AppRegistration {
    pub app_id: String,
    pub app_password: SecretString,
}

fn http_url(url: &str) -> Result<String, BotError> {
    let url = url.trim();
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "https" | "http") => Ok(url.to_string()),
        _ => Err(BotError::NotAnUrl(url.into())),
    }
}

impl BotSettings {
    /// Settings for the bot `app`, on the Bot Framework's public endpoints,
    /// reading time from `now`, with defaults for everything else.
    pub fn new(app: AppRegistration, now: NowMs) -> Result<BotSettings, BotError> {
        use secrecy::ExposeSecret;
        let app_id = app.app_id.trim().to_string();
        if app_id.is_empty() {
            return Err(BotError::EmptyAppId);
        }
        let password = app.app_password.expose_secret().trim();
        if password.is_empty() {
            return Err(BotError::EmptyPassword);
        }
        // No redirects: a token is never sent on to where an answer points.
        let client = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(BotSettings {
            app_id,
            app_password: password.to_string().into(),
            openid_metadata_url: OPENID_METADATA.into(),
            issuer: ISSUER.into(),
            token_endpoint: TOKEN_ENDPOINT.into(),
            client,
            now,
            tenant_orgs: HashMap::new(),
            default_org: "default".into(),
            agent: "default".into(),
            max_body_bytes: 256 * 1024,
            post_attempts: 5,
            post_backoff: Duration::from_millis(500),
        })
    }

    /// Take the keys from `openid_metadata_url` and tokens from
    /// `token_endpoint` (a sovereign cloud, a single-tenant bot, a test).
    pub fn endpoints(
        mut self,
        openid_metadata_url: &str,
        token_endpoint: &str,
    ) -> Result<BotSettings, BotError> {
        self.openid_metadata_url = http_url(openid_metadata_url)?;
        self.token_endpoint = http_url(token_endpoint)?;
        Ok(self)
    }

    fn org_for(&self, tenant: Option<&str>) -> String {
        tenant
            .and_then(|t| self.tenant_orgs.get(t))
            .unwrap_or(&self.default_org)
            .clone()
    }
}

/// The bot: its token check, its connector client and where it keeps
/// conversation references. One serves the route; `deliver` makes its own.
pub struct Bot {
    settings: BotSettings,
    validator: TokenValidator,
    connector: Connector,
    addresses: Arc<dyn AddressBook>,
    /// The conversations whose reference this process has kept, with their
    /// service URL: kept again only when it changes.
    kept: Mutex<HashMap<(String, String), String>>,
}

impl Bot {
    pub fn new(settings: BotSettings, addresses: Arc<dyn AddressBook>) -> Bot {
        let validator = TokenValidator::new(
            TokenRules {
                app_id: settings.app_id.clone(),
                issuer: settings.issuer.clone(),
                openid_metadata_url: settings.openid_metadata_url.clone(),
            },
            settings.client.clone(),
            settings.now.clone(),
        );
        let connector = Connector::new(
            Credentials {
                app_id: settings.app_id.clone(),
                app_password: settings.app_password.clone(),
                token_endpoint: settings.token_endpoint.clone(),
            },
            PostRetries {
                attempts: settings.post_attempts,
                backoff: settings.post_backoff,
            },
            settings.client.clone(),
            settings.now.clone(),
        );
        Bot {
            settings,
            validator,
            connector,
            addresses,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// Post `text` into `conversation` of `org` (a chat, a channel — a new
    /// post — or a channel thread `…;messageid=…`) through the reference
    /// kept for it: the ids of the messages made.
    pub async fn deliver(
        &self,
        org: &str,
        conversation: &str,
        text: &str,
    ) -> Result<Vec<String>, DeliverError> {
        let root = channel_of(conversation);
        let address = self
            .addresses
            .find(org, root)
            .await
            .map_err(|e| DeliverError::Store(e.0))?
            .ok_or(DeliverError::Unknown)?;
        self.post_text(&address, conversation, text, None)
            .await
            .map_err(DeliverError::Connector)
    }

    /// Post `text`, split at [`MESSAGE_LIMIT`], each piece replying to `reply_to`.
    async fn post_text(
        &self,
        address: &ConversationAddress,
        conversation: &str,
        text: &str,
        reply_to: Option<&str>,
    ) -> Result<Vec<String>, ConnectorError> {
        let mut made = Vec::new();
        for piece in split_message(text, MESSAGE_LIMIT) {
            let activity = connector::message(address, conversation, &piece, reply_to);
            if let Some(id) = self
                .connector
                .post(address, conversation, &activity, Tries::Retried)
                .await?
            {
                made.push(id);
            }
        }
        Ok(made)
    }

    /// Keep `address` for `org`, unless this process kept it already.
    async fn keep(&self, org: &str, address: &ConversationAddress) {
        let key = (org.to_string(), address.conversation.clone());
        let known = self
            .kept
            .lock()
            .map(|k| k.get(&key) == Some(&address.service_url))
            .unwrap_or(false);
        if known {
            return;
        }
        match self.addresses.keep(org, address).await {
            Ok(()) => {
                if let Ok(mut k) = self.kept.lock() {
                    k.insert(key, address.service_url.clone());
                }
            }
            Err(e) => tracing::error!(error = %e, conversation = %address.conversation,
                "a Teams conversation reference was not kept: runs cannot reach it until it is"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error("the bot has not been in this conversation (no conversation reference is kept for it): a person must write to it, or it must be added there, first")]
    Unknown,
    #[error("the conversation references cannot be read: {0}")]
    Store(String),
    #[error(transparent)]
    Connector(ConnectorError),
}

struct Shared {
    bot: Arc<Bot>,
    handler: Arc<dyn TurnHandler>,
}

/// `POST /api/messages`, ready to merge into any router.
pub fn router<S>(bot: Arc<Bot>, handler: Arc<dyn TurnHandler>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route(MESSAGES_PATH, routing::post(receive))
        .with_state(Arc::new(Shared { bot, handler }))
}

fn error(status: StatusCode, reason: &str) -> Response {
    (status, Json(json!({ "error": reason }))).into_response()
}

fn refused(refusal: &TokenRefusal) -> Response {
    tracing::warn!(reason = %refusal, "Teams bot request refused");
    match refusal {
        TokenRefusal::KeysUnavailable(_) => {
            let mut resp = error(StatusCode::SERVICE_UNAVAILABLE, &refusal.to_string());
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
            resp
        }
        _ => {
            let mut resp = error(StatusCode::UNAUTHORIZED, &refusal.to_string());
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"steward\""),
            );
            resp
        }
    }
}

fn too_large(limit: usize) -> Response {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("request body is larger than {limit} bytes"),
    )
}

async fn receive(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Response {
    let bot = &shared.bot;
    let limit = bot.settings.max_body_bytes;
    // 1. A declared length over the limit is refused before anything else.
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit);
    }
    // 2. The token, before a byte of the body is read.
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let verified = match bot.validator.verify(authorization).await {
        Ok(v) => v,
        Err(refusal) => return refused(&refusal),
    };
    // 3. The body, up to the limit.
    let body = match Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return too_large(limit),
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("could not read the request body: {e}"),
            )
        }
    };
    // 4. The activity, which must agree with its token.
    let activity: Activity = match serde_json::from_slice(&body) {
        Ok(a) => a,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("not an activity: {e}")),
    };
    if let Err(refusal) = activity.admitted(&verified) {
        return refused(&refusal);
    }
    if activity.channel_id.as_deref() != Some(TEAMS_CHANNEL_ID) {
        return error(
            StatusCode::BAD_REQUEST,
            "only Microsoft Teams activities (channelId `msteams`) are taken",
        );
    }
    let Some(address) = activity.address() else {
        return error(
            StatusCode::BAD_REQUEST,
            "not an activity: it has no `conversation.id`",
        );
    };
    let org = bot.settings.org_for(activity.tenant());
    match activity.kind.as_str() {
        "message" => {
            bot.keep(&org, &address).await;
            match Turn::of(&bot.settings, org, address, activity) {
                Some(turn) => {
                    // Acknowledged once the message is stored, answered when
                    // the turn is done: a crash never leaves an acknowledged
                    // activity unstored. The turn runs in its own task: a
                    // dropped connection never cuts it short.
                    let (stored, taken) = Stored::pair();
                    let shared = shared.clone();
                    tokio::spawn(async move { turn.run(&shared, stored).await });
                    taken.wait().await;
                }
                None => tracing::debug!("a Teams message with nothing to answer; ignored"),
            }
        }
        // The bot added to a team or chat, or installed: first contact.
        "conversationUpdate" | "installationUpdate" => bot.keep(&org, &address).await,
        other => tracing::debug!(kind = other, "a Teams activity steward does not act on"),
    }
    StatusCode::OK.into_response()
}

/// The parts of a Bot Framework activity the bot reads. Teams sends more;
/// unknown fields are ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Activity {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    service_url: Option<String>,
    #[serde(default)]
    channel_id: Option<String>,
    #[serde(default)]
    from: Option<Account>,
    #[serde(default)]
    recipient: Option<Account>,
    #[serde(default)]
    conversation: Option<Conversation>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    entities: Vec<Entity>,
    #[serde(default)]
    channel_data: Option<ChannelData>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Account {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    aad_object_id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Conversation {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    conversation_type: Option<String>,
    #[serde(default)]
    tenant_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Entity {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    mentioned: Option<Account>,
}

#[derive(Debug, Deserialize)]
struct ChannelData {
    #[serde(default)]
    tenant: Option<Tenant>,
}

#[derive(Debug, Deserialize)]
struct Tenant {
    #[serde(default)]
    id: Option<String>,
}

fn non_empty(s: Option<&String>) -> Option<&str> {
    s.map(|s| s.trim()).filter(|s| !s.is_empty())
}

impl Activity {
    /// Whether its token admits it: the token's service URL, a key that
    /// endorses its channel.
    fn admitted(&self, verified: &Verified) -> Result<(), TokenRefusal> {
        let channel = self.channel_id.as_deref().unwrap_or_default();
        let service_url = self.service_url.as_deref().unwrap_or_default();
        verified.admits(service_url, channel)
    }

    fn tenant(&self) -> Option<&str> {
        let from_data = self
            .channel_data
            .as_ref()
            .and_then(|d| d.tenant.as_ref())
            .and_then(|t| non_empty(t.id.as_ref()));
        from_data.or_else(|| non_empty(self.conversation.as_ref()?.tenant_id.as_ref()))
    }

    /// Its conversation's reference (keyed by the chat or channel, not the thread).
    fn address(&self) -> Option<ConversationAddress> {
        let conversation = self.conversation.as_ref()?;
        let id = non_empty(conversation.id.as_ref())?;
        Some(ConversationAddress {
            service_url: self.service_url.clone()?,
            conversation: channel_of(id).to_string(),
            conversation_type: conversation.conversation_type.clone(),
            tenant: self.tenant().map(str::to_string),
            bot: self
                .recipient
                .as_ref()
                .and_then(|r| non_empty(r.id.as_ref()))
                .map(str::to_string),
        })
    }

    /// Whether it @mentions the bot (a mention entity naming the recipient).
    fn mentions_bot(&self) -> bool {
        let Some(bot) = self.recipient.as_ref().and_then(|r| r.id.as_deref()) else {
            return false;
        };
        self.entities.iter().any(|e| {
            e.kind == "mention" && e.mentioned.as_ref().and_then(|m| m.id.as_deref()) == Some(bot)
        })
    }
}

/// One message to answer: the turn, and where its answer goes.
struct Turn {
    inbound: Inbound,
    address: ConversationAddress,
    /// The conversation the answer goes into: the chat, or the channel thread.
    conversation: String,
    /// The activity answered.
    reply_to: Option<String>,
}

impl Turn {
    /// The turn a message activity is, or `None` when it is none for the loop.
    fn of(
        settings: &BotSettings,
        org: String,
        address: ConversationAddress,
        activity: Activity,
    ) -> Option<Turn> {
        let mentioned = activity.mentions_bot();
        let Activity {
            id,
            timestamp,
            from,
            conversation,
            text,
            ..
        } = activity;
        let from = from?;
        // A person is known only by their Azure AD object id, as through the
        // webhook; a message without one (another bot's) is no one's turn.
        let Some(aad) = non_empty(from.aad_object_id.as_ref()) else {
            tracing::warn!("a Teams message without `from.aadObjectId`; ignored");
            return None;
        };
        let sender = format!("{}:{aad}", crate::teams::CHANNEL);
        let conversation = conversation?;
        let conversation_id = non_empty(conversation.id.as_ref())?.to_string();
        let direct = conversation
            .conversation_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("personal"));
        let text = clean_text(text.as_deref().unwrap_or_default());
        if text.is_empty() {
            return None;
        }
        let activity_id = non_empty(id.as_ref()).map(str::to_string);
        let at = timestamp
            .as_deref()
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
            .or_else(|| DateTime::from_timestamp_millis((settings.now)()))
            .unwrap_or_default();
        let inbound = Inbound {
            org,
            agent: settings.agent.clone(),
            channel: CHANNEL.into(),
            conversation: conversation_id.clone(),
            kind: if direct {
                ConversationKind::Direct
            } else {
                ConversationKind::Group
            },
            sender: Some(sender),
            sender_name: from.name.unwrap_or_default(),
            text,
            platform_id: activity_id
                .as_ref()
                .map(|id| format!("{}/{id}", channel_of(&conversation_id))),
            at,
            mentioned: direct || mentioned,
            answer: None,
            on_behalf_of: None,
        };
        Some(Turn {
            inbound,
            address,
            conversation: conversation_id,
            reply_to: activity_id,
        })
    }

    /// Run the turn, typing meanwhile, and post its answer. A redelivery of
    /// a message already answered gets nothing: its answer was posted once.
    async fn run(self, shared: &Shared, stored: Stored) {
        let Turn {
            inbound,
            address,
            conversation,
            reply_to,
        } = self;
        let bot = shared.bot.clone();
        let addressed = inbound.mentioned;
        let typing = addressed.then(|| {
            let (bot, address, conversation) = (bot.clone(), address.clone(), conversation.clone());
            tokio::spawn(async move {
                let activity = connector::typing(&address, &conversation);
                if let Err(e) = bot
                    .connector
                    .post(&address, &conversation, &activity, Tries::Once)
                    .await
                {
                    tracing::debug!(error = %e, "the typing indicator was not shown");
                }
            })
        });
        let replies = match shared.handler.handle_new_acked(inbound, stored).await {
            Ok(replies) => replies,
            Err(e) => {
                tracing::error!(error = %e, "turn failed for a Teams bot message");
                if !addressed {
                    return;
                }
                vec![Reply::turn_failed(conversation.clone())]
            }
        };
        // The answer comes after the typing indicator, never before it.
        if let Some(typing) = typing {
            let _ = typing.await;
        }
        let text = replies
            .iter()
            .map(|r| r.text.as_str())
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        if text.is_empty() {
            return;
        }
        if let Err(e) = bot
            .post_text(&address, &conversation, &text, reply_to.as_deref())
            .await
        {
            tracing::error!(error = %e, conversation, "a Teams bot answer was not delivered (it is stored)");
        }
    }
}

#[cfg(test)]
mod tests;
