//! Slack through the Events API over HTTP (set up as docs/channels.md,
//! "Slack", describes).
//!
//! Slack POSTs every event the app subscribes to to `/slack/events`, signed:
//! `X-Slack-Signature: v0=<hex>` is the HMAC-SHA256 of
//! `v0:{X-Slack-Request-Timestamp}:{raw body}` keyed with the app's signing
//! secret. The signature and the timestamp (within five minutes) are checked,
//! in constant time, before a byte of the body is parsed (slack-morphism's
//! verifier); a refusal is `401`, a body over the limit `413`, one that is not
//! an event `400`.
//!
//! Slack waits three seconds for the `200` that acknowledges an event and
//! sends it again when none comes (`X-Slack-Retry-Num`). So every event is
//! acknowledged at once and its turn runs in its own task; the answer is
//! posted afterwards with the Web API's `chat.postMessage`, in the thread the
//! message came from, with the bot token, retried when Slack answers 429
//! (waiting its `Retry-After`) or 5xx.
//!
//! - `message` events in direct messages (`channel_type: "im"`) are turns of
//!   a direct conversation; in channels they are read (stored) and answered
//!   only when they mention the bot, as `app_mention` events are.
//! - A message is known by its channel and `ts`, which a retry (same
//!   `event_id`) and the `message` twin of an `app_mention` share: the turn
//!   loop runs it once and answers it once ([`TurnHandler::handle_new`]).
//! - The bot's own messages, other bots' (`bot_id`), edits, joins and the
//!   other subtypes are acknowledged and ignored: no loops.
//!
//! slack-morphism supplies the wire format (its push event types, the
//! `chat.postMessage` request, the signature verifier). Its Web API client is
//! not used: it brings a hyper/rustls stack and a websocket client of its own,
//! and its rate control is not ours. Web API calls go through `reqwest` and
//! [`crate::retry`], as every other outbound call, against a base URL a test
//! can point at a fake.
//!
//! Only this module knows Slack's JSON; the turn loop sees an [`Inbound`].

use crate::discord::split_message;
use crate::retry::{
    self, retry_after, retryable_status, Failure, LongWait, RetryError, RetryPolicy,
};
use crate::{ConversationKind, Inbound, Reply, Stored, TurnHandler};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use regex::Regex;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::json;
use slack_morphism::api::SlackApiChatPostMessageRequest;
use slack_morphism::events::{
    SlackAppMentionEvent, SlackEventCallbackBody, SlackMessageEvent, SlackMessageEventType,
    SlackPushEvent, SlackPushEventCallback,
};
use slack_morphism::signature_verifier::SlackEventSignatureVerifier;
use slack_morphism::{SlackChannelId, SlackMessageContent, SlackTs};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

/// The channel name stored with Slack messages.
pub const CHANNEL: &str = "slack";

/// The Web API's root, unless a configuration points elsewhere.
pub const SLACK_API: &str = "https://slack.com/api";

/// Where Slack posts events.
pub const EVENTS_PATH: &str = "/slack/events";

/// The longest message text steward posts: Slack truncates past 40,000
/// characters and advises keeping under 4,000; longer answers are split.
pub const MESSAGE_LIMIT: usize = 4000;

/// Longest wait between two Web API attempts, whatever `Retry-After` asks.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// Per-request timeout of a Web API call.
const POST_TIMEOUT: Duration = Duration::from_secs(15);

/// The Web API `error` codes worth another try: Slack's side, not the request.
const RETRYABLE_ERRORS: &[&str] = &[
    "ratelimited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
];

#[derive(Debug, thiserror::Error)]
pub enum SlackError {
    #[error("the signing secret is empty")]
    EmptySecret,
    #[error("the bot token is empty")]
    EmptyToken,
    #[error("the Web API base URL `{0}` is not an http(s) URL")]
    NotAnApiBase(String),
    #[error("cannot build the HTTP client for Web API calls: {0}")]
    Client(#[from] reqwest::Error),
}

/// Everything the Slack endpoint needs besides the turn loop. Its secrets
/// (the signing secret, the bot token) never print.
#[derive(Debug)]
pub struct SlackSettings {
    signing_secret: SecretString,
    bot_token: SecretString,
    /// The Web API's root (`https://slack.com/api`), without a trailing `/`.
    api_base: String,
    client: reqwest::Client,
    /// Slack workspace (team) id → organisation.
    pub team_orgs: HashMap<String, String>,
    /// Organisation of a workspace not in `team_orgs`.
    pub default_org: String,
    /// The agent answering on Slack.
    pub agent: String,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Web API calls tried at most this many times.
    pub post_attempts: u32,
    /// Wait before the second attempt when Slack sends no `Retry-After`; doubles after each further one.
    pub post_backoff: Duration,
}

impl SlackSettings {
    /// Settings for the app's signing secret and bot token, calling the Web
    /// API at `api_base`, with defaults for everything else.
    pub fn new(
        signing_secret: &str,
        bot_token: &str,
        api_base: &str,
    ) -> Result<SlackSettings, SlackError> {
        let (secret, token) = (signing_secret.trim(), bot_token.trim());
        if secret.is_empty() {
            return Err(SlackError::EmptySecret);
        }
        if token.is_empty() {
            return Err(SlackError::EmptyToken);
        }
        let base = api_base.trim().trim_end_matches('/');
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(SlackError::NotAnApiBase(base.into()));
        }
        Ok(SlackSettings {
            signing_secret: secret.to_string().into(),
            bot_token: token.to_string().into(),
            api_base: base.to_string(),
            client: reqwest::Client::builder().timeout(POST_TIMEOUT).build()?,
            team_orgs: HashMap::new(),
            default_org: "default".into(),
            agent: "default".into(),
            max_body_bytes: 64 * 1024,
            post_attempts: 5,
            post_backoff: Duration::from_millis(500),
        })
    }

    fn org_for(&self, team: &str) -> String {
        self.team_orgs
            .get(team)
            .unwrap_or(&self.default_org)
            .clone()
    }
}

struct Shared {
    settings: SlackSettings,
    handler: Arc<dyn TurnHandler>,
}

/// `POST /slack/events`, ready to merge into any router.
pub fn router<S>(settings: SlackSettings, handler: Arc<dyn TurnHandler>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let shared = Arc::new(Shared { settings, handler });
    Router::new()
        .route(EVENTS_PATH, routing::post(receive))
        .with_state(shared)
}

fn error(status: StatusCode, reason: &str) -> Response {
    (status, Json(json!({ "error": reason }))).into_response()
}

async fn receive(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Response {
    let settings = &shared.settings;
    // 1. Size, before reading: a declared length over the limit is refused at once,
    //    an undeclared one is read only up to the limit.
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > settings.max_body_bytes as u64) {
        return too_large(settings.max_body_bytes);
    }
    let body = match Limited::new(body, settings.max_body_bytes).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return too_large(settings.max_body_bytes)
        }
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("could not read the request body: {e}"),
            )
        }
    };
    // 2. The signature and its timestamp over the raw bytes, before any parsing.
    if let Err(reason) = verify_signature(settings.signing_secret.expose_secret(), &headers, &body)
    {
        tracing::warn!(reason, "Slack request refused");
        return error(StatusCode::UNAUTHORIZED, reason);
    }
    // 3. The event.
    let event: SlackPushEvent = match serde_json::from_slice(&body) {
        Ok(e) => e,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("not a Slack event: {e}")),
    };
    match event {
        SlackPushEvent::UrlVerification(v) => {
            Json(json!({ "challenge": v.challenge })).into_response()
        }
        SlackPushEvent::AppRateLimited(r) => {
            tracing::warn!(team = %r.team_id, "Slack is dropping this app's events for a minute (app_rate_limited)");
            StatusCode::OK.into_response()
        }
        SlackPushEvent::EventCallback(callback) => {
            let retry = headers
                .get("x-slack-retry-num")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let event_id = callback.event_id.0.clone();
            match Turn::of(settings, callback) {
                Some(turn) => {
                    tracing::debug!(event = %event_id, retry = ?retry, "Slack event taken");
                    // Acknowledged once the message is stored, answered when
                    // the turn is done: Slack sends an unacknowledged event
                    // again, so a crash before the store loses nothing. The
                    // turn runs in its own task: a dropped connection never
                    // cuts it short.
                    let (stored, taken) = Stored::pair();
                    let shared = shared.clone();
                    tokio::spawn(async move { turn.run(&shared, stored).await });
                    taken.wait().await;
                }
                None => tracing::debug!(event = %event_id, "Slack event ignored"),
            }
            StatusCode::OK.into_response()
        }
    }
}

fn too_large(limit: usize) -> Response {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("request body is larger than {limit} bytes"),
    )
}

/// Check `X-Slack-Signature` against `v0:{X-Slack-Request-Timestamp}:{body}`
/// signed with `secret`, in constant time, and that the timestamp is within
/// five minutes of now (slack-morphism's verifier does both).
pub fn verify_signature(
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), &'static str> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let signature = header(SlackEventSignatureVerifier::SLACK_SIGNED_HASH_HEADER)
        .ok_or("missing X-Slack-Signature header")?;
    let timestamp = header(SlackEventSignatureVerifier::SLACK_SIGNED_TIMESTAMP)
        .ok_or("missing X-Slack-Request-Timestamp header")?;
    // Slack signs UTF-8 JSON; other bytes cannot carry its signature.
    let body = std::str::from_utf8(body).map_err(|_| "invalid Slack signature")?;
    let verifier = SlackEventSignatureVerifier::new(&secret.to_string().into());
    verifier
        .verify(signature.trim(), body, timestamp.trim())
        .map_err(|e| match e {
            slack_morphism::signature_verifier::SlackEventSignatureVerifierError::IncorrectOrExpiredTimestampError(_) => {
                "stale or invalid X-Slack-Request-Timestamp (more than five minutes from now)"
            }
            _ => "invalid Slack signature",
        })
}

/// One message to answer: the turn, and where its answer goes.
struct Turn {
    inbound: Inbound,
    /// The Slack channel (`C…`, `D…`, `G…`) the message was written in.
    channel: String,
    /// The thread the answer goes into; `None`: the channel itself (a direct
    /// message written outside a thread).
    thread_ts: Option<String>,
}

/// How a message reached the bot.
enum Via<'a> {
    Message(&'a SlackMessageEvent),
    Mention(&'a SlackAppMentionEvent),
}

impl Turn {
    /// The turn an event is, or `None` when it is not one for the loop.
    fn of(settings: &SlackSettings, callback: SlackPushEventCallback) -> Option<Turn> {
        let team = callback.team_id.0.clone();
        // The bot's own user id in this workspace, as Slack says.
        let bot = callback
            .authorizations
            .as_deref()
            .unwrap_or_default()
            .iter()
            .find(|a| a.team_id.0 == team && a.is_bot.unwrap_or(true))
            .or_else(|| callback.authorizations.as_deref()?.first())
            .map(|a| a.user_id.0.clone());
        let via = match &callback.event {
            SlackEventCallbackBody::Message(m) => Via::Message(m),
            SlackEventCallbackBody::AppMention(m) => Via::Mention(m),
            SlackEventCallbackBody::Unknown(v)
                if matches!(v["type"].as_str(), Some("message" | "app_mention")) =>
            {
                tracing::warn!(subtype = ?v["subtype"], "a Slack message event of a shape slack-morphism does not read; ignored");
                return None;
            }
            _ => return None,
        };
        Turn::from_message(settings, &team, bot.as_deref(), via)
    }

    fn from_message(
        settings: &SlackSettings,
        team: &str,
        bot: Option<&str>,
        via: Via<'_>,
    ) -> Option<Turn> {
        let (origin, channel, content, user, bot_id, profile, mention) = match via {
            Via::Message(m) => {
                // Only what a person wrote: no edits, deletions, joins or bots.
                let written = match &m.subtype {
                    None => true,
                    Some(t) => matches!(
                        t,
                        SlackMessageEventType::FileShare | SlackMessageEventType::ThreadBroadcast
                    ),
                };
                if !written || m.hidden == Some(true) {
                    return None;
                }
                (
                    &m.origin,
                    m.origin.channel.as_ref(),
                    m.content.as_ref(),
                    m.sender.user.as_ref(),
                    m.sender.bot_id.as_ref(),
                    m.sender.user_profile.as_ref(),
                    false,
                )
            }
            // Its channel is a field of its own, not of the origin.
            Via::Mention(m) => (
                &m.origin,
                Some(&m.channel),
                Some(&m.content),
                Some(&m.user),
                None,
                None,
                true,
            ),
        };
        if bot_id.is_some() {
            return None;
        }
        let user = user?.0.as_str();
        if user.is_empty() || bot == Some(user) {
            return None;
        }
        let channel = channel?.0.clone();
        let direct = match origin.channel_type.as_ref() {
            Some(t) => t.0 == "im",
            None => channel.starts_with('D'),
        };
        let raw = content.and_then(|c| c.text.as_deref()).unwrap_or_default();
        let mentioned = mention || direct || bot.is_some_and(|b| mentions(raw, b));
        let text = clean_text(raw, bot);
        if text.is_empty() {
            return None;
        }
        let ts = origin.ts.0.clone();
        // A channel's answer goes into the thread of the message (which it
        // starts, when it was written outside one); a direct message's into
        // its thread when it has one.
        let thread_ts = match (&origin.thread_ts, direct) {
            (Some(t), _) => Some(t.0.clone()),
            (None, false) => Some(ts.clone()),
            (None, true) => None,
        };
        let conversation = match &thread_ts {
            Some(root) => format!("{channel}:{root}"),
            None => channel.clone(),
        };
        let sender_name = profile
            .and_then(|p| {
                p.display_name
                    .clone()
                    .filter(|n| !n.is_empty())
                    .or(p.real_name.clone())
            })
            .unwrap_or_else(|| user.to_string());
        let inbound = Inbound {
            org: settings.org_for(team),
            agent: settings.agent.clone(),
            channel: CHANNEL.into(),
            conversation,
            kind: if direct {
                ConversationKind::Direct
            } else {
                ConversationKind::Group
            },
            sender: Some(stored_id(team, user)),
            sender_name,
            text,
            platform_id: Some(format!("{channel}/{ts}")),
            at: said_at(&ts).unwrap_or_else(Utc::now),
            mentioned,
            answer: None,
            on_behalf_of: None,
        };
        Some(Turn {
            inbound,
            channel,
            thread_ts,
        })
    }

    /// Run the turn and post its answer. A redelivery of a message already
    /// answered gets nothing: its answer was posted once.
    async fn run(self, shared: &Shared, stored: Stored) {
        let Turn {
            inbound,
            channel,
            thread_ts,
        } = self;
        let addressed = inbound.mentioned;
        let replies = match shared.handler.handle_new_acked(inbound, stored).await {
            Ok(replies) => replies,
            Err(e) => {
                tracing::error!(error = %e, "turn failed for a Slack message");
                if !addressed {
                    return;
                }
                vec![Reply::turn_failed(channel.clone())]
            }
        };
        let text = replies
            .iter()
            .map(|r| r.text.as_str())
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        if let Err(e) = post(&shared.settings, &channel, thread_ts.as_deref(), &text).await {
            tracing::error!(error = %e, channel, "a Slack answer was not delivered (it is stored)");
        }
    }
}

/// The stored user id of a Slack user: workspace and user id, never a name.
pub fn stored_id(team: &str, user: &str) -> String {
    format!("{CHANNEL}:{team}:{user}")
}

/// When a message was written: its `ts` is Unix seconds with microseconds.
fn said_at(ts: &str) -> Option<DateTime<Utc>> {
    let (secs, micros) = ts.split_once('.').unwrap_or((ts, "0"));
    let secs = secs.parse::<i64>().ok()?;
    let micros = format!("{micros:0<6}").get(..6)?.parse::<u32>().ok()?;
    DateTime::from_timestamp(secs, micros * 1000)
}

/// Whether `text` mentions the user `bot` (`<@U…>` or `<@U…|name>`).
fn mentions(text: &str, bot: &str) -> bool {
    text.contains(&format!("<@{bot}>")) || text.contains(&format!("<@{bot}|"))
}

static LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"<((?:https?|mailto):[^|>]*)(?:\|[^>]*)?>").expect("constant regex")
});
static CHANNEL_REF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<#[A-Z0-9]+\|([^>]*)>").expect("constant regex"));

/// The text a person typed: the bot's own mention removed (so `@steward
/// @notes: …` is an `@notes:` directive), links and channel references as
/// they read, Slack's three escapes (`&amp;`, `&lt;`, `&gt;`) undone.
pub fn clean_text(raw: &str, bot: Option<&str>) -> String {
    let mut text = raw.to_string();
    if let Some(bot) = bot {
        let own = Regex::new(&format!(r"<@{}(?:\|[^>]*)?>", regex::escape(bot)));
        if let Ok(own) = own {
            text = own.replace_all(&text, " ").into_owned();
        }
    }
    let text = LINK.replace_all(&text, "$1");
    let text = CHANNEL_REF.replace_all(&text, "#$1");
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// `text` as Slack shows it literally: `&`, `<` and `>` escaped, so no reply
/// (text echoed from memory or from a person) becomes a mention, an
/// `<!channel>` ping or a link it did not spell.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[derive(Debug, thiserror::Error)]
pub enum SlackPostError {
    #[error("Slack refused the message: {0}")]
    Refused(String),
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp { attempts: u32, last: String },
}

/// How one Web API call failed.
#[derive(Debug)]
enum CallError {
    Status(StatusCode),
    Api(String),
    Transport(reqwest::Error),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Status(s) => write!(f, "HTTP {s}"),
            CallError::Api(e) => write!(f, "{e}"),
            CallError::Transport(e) => write!(f, "{e}"),
        }
    }
}

/// What every Web API method answers, in part (`ok`, and `error` when not).
#[derive(Debug, Deserialize)]
struct ApiAnswer {
    ok: bool,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    ts: Option<SlackTs>,
}

/// Post `text` into `channel` (into the thread `thread_ts` when given) with
/// `chat.postMessage`, split at [`MESSAGE_LIMIT`], escaped (see [`escape`]).
/// Each piece is retried on 429 (waiting `Retry-After`), 5xx, Slack's own
/// transient errors and transport errors, up to `post_attempts` tries. The
/// `ts` of each message made.
pub async fn post(
    settings: &SlackSettings,
    channel: &str,
    thread_ts: Option<&str>,
    text: &str,
) -> Result<Vec<String>, SlackPostError> {
    let mut made = Vec::new();
    for piece in split_message(text, MESSAGE_LIMIT) {
        made.push(post_one(settings, channel, thread_ts, &piece).await?);
    }
    Ok(made)
}

async fn post_one(
    settings: &SlackSettings,
    channel: &str,
    thread_ts: Option<&str>,
    text: &str,
) -> Result<String, SlackPostError> {
    let mut request = SlackApiChatPostMessageRequest::new(
        SlackChannelId(channel.into()),
        SlackMessageContent::new().with_text(escape(text)),
    )
    .with_unfurl_links(false)
    .with_unfurl_media(false);
    if let Some(ts) = thread_ts {
        request = request.with_thread_ts(SlackTs(ts.into()));
    }
    let url = format!("{}/chat.postMessage", settings.api_base);
    let policy = RetryPolicy {
        attempts: settings.post_attempts,
        initial_backoff: settings.post_backoff,
        max_wait: MAX_RETRY_WAIT,
        long_wait: LongWait::Cap,
    };
    let call = || async {
        let sent = settings
            .client
            .post(&url)
            .bearer_auth(settings.bot_token.expose_secret())
            .json(&request)
            .send()
            .await;
        let resp = match sent {
            Ok(resp) => resp,
            Err(e) => return Err(Failure::retry(CallError::Transport(e))),
        };
        let status = resp.status();
        if retryable_status(status) {
            return Err(Failure::Retry {
                retry_after: retry_after(resp.headers(), Utc::now()),
                error: CallError::Status(status),
            });
        }
        if !status.is_success() {
            return Err(Failure::Fatal(CallError::Status(status)));
        }
        let wait = retry_after(resp.headers(), Utc::now());
        let answer: ApiAnswer = match resp.json().await {
            Ok(a) => a,
            Err(e) => return Err(Failure::retry(CallError::Transport(e))),
        };
        match answer {
            ApiAnswer { ok: true, ts, .. } => Ok(ts.map(|t| t.0).unwrap_or_default()),
            ApiAnswer { error, .. } => {
                let error = error.unwrap_or_else(|| "unknown_error".into());
                if RETRYABLE_ERRORS.contains(&error.as_str()) {
                    Err(Failure::Retry {
                        retry_after: wait,
                        error: CallError::Api(error),
                    })
                } else {
                    Err(Failure::Fatal(CallError::Api(error)))
                }
            }
        }
    };
    retry::run(&policy, "Slack chat.postMessage", call)
        .await
        .map_err(|e| match e {
            RetryError::Fatal(last) => SlackPostError::Refused(last.to_string()),
            RetryError::Exhausted { last, .. } | RetryError::TooLong { last, .. } => {
                SlackPostError::GaveUp {
                    attempts: policy.attempts.max(1),
                    last: last.to_string(),
                }
            }
        })
}

/// A conversation id as stored (`<channel>` or `<channel>:<thread ts>`): the
/// channel and the thread an answer to it goes into.
pub fn parse_conversation(conversation: &str) -> Option<(&str, Option<&str>)> {
    let (channel, thread) = match conversation.split_once(':') {
        Some((c, t)) => (c, Some(t)),
        None => (conversation, None),
    };
    let id = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric());
    let ts = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
    (id(channel) && thread.is_none_or(ts)).then_some((channel, thread))
}

#[cfg(test)]
mod tests;
