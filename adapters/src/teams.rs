//! Microsoft Teams outgoing webhook (set up as docs/channels.md, "Microsoft Teams
//! (outgoing webhook)", describes).
//!
//! Teams POSTs a Bot Framework `message` activity to `/teams/{agent}` when
//! someone @mentions the webhook in a channel. The request carries
//! `Authorization: HMAC <base64 signature>`, an HMAC-SHA256 over the raw body
//! keyed with the base64-decoded security token that Teams showed when the
//! webhook was created. The signature is checked, in constant time, before a
//! byte of the body is parsed.
//!
//! Teams waits about five seconds for the answer. The turn runs in its own
//! task; when it finishes within the configured deadline its replies are the
//! response. Otherwise the response is a short acknowledgement and the full
//! reply is posted, when the turn finishes, to a Teams Workflows webhook
//! ("Post to a channel when a webhook request is received") as an Adaptive
//! Card message, retried with exponential backoff on 429/5xx.
//!
//! Only this module knows the Activity JSON; the turn loop sees an [`Inbound`].

use crate::retry::{
    self, retry_after, retryable_status, Failure, LongWait, RetryError, RetryPolicy,
};
use crate::{ConversationKind, Inbound, Reply, TurnHandler, TURN_FAILED};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use regex::Regex;
use secrecy::{ExposeSecret, SecretSlice, SecretString};
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

/// The channel name stored with Teams messages and used for dedupe.
pub const CHANNEL: &str = "teams";

/// Longest wait between two delivery attempts, whatever `Retry-After` asks.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// Per-request timeout of a Workflows post.
const POST_TIMEOUT: Duration = Duration::from_secs(15);

const ACK_WITH_WORKFLOW: &str =
    "Working on it — I'll post the full answer to this channel in a moment.";
const ACK_WITHOUT_WORKFLOW: &str = "Working on it, but this is taking longer than Teams waits for an answer, so the reply will not appear here. Your message was received; please ask again in a minute.";
const EMPTY_MENTION: &str = "Mention me followed by a question or a command (for example `pair`).";

#[derive(Debug, thiserror::Error)]
pub enum TeamsError {
    #[error("the security token is empty")]
    EmptyToken,
    #[error("the security token is not valid base64: {0}")]
    TokenNotBase64(#[from] base64::DecodeError),
    #[error("cannot build the HTTP client for Workflows posts: {0}")]
    Client(#[from] reqwest::Error),
}

/// Decode the security token as Teams shows it (standard base64) into the HMAC key.
pub fn decode_security_token(token: &str) -> Result<Vec<u8>, TeamsError> {
    let token = token.trim();
    if token.is_empty() {
        return Err(TeamsError::EmptyToken);
    }
    let key = STANDARD.decode(token)?;
    if key.is_empty() {
        return Err(TeamsError::EmptyToken);
    }
    Ok(key)
}

/// Everything the Teams endpoint needs besides the turn loop. Its secrets
/// (the HMAC key, the webhook URLs, which carry a signature) never print.
#[derive(Debug)]
pub struct TeamsSettings {
    /// The base64-decoded security token: the HMAC key.
    key: SecretSlice<u8>,
    client: reqwest::Client,
    /// Teams channel id → the Workflows webhook that posts into that channel:
    /// where a reply finished after the deadline goes. A conversation whose
    /// channel is not here gets no late reply, so none lands in another channel.
    pub workflows: HashMap<String, SecretString>,
    /// How long to wait for the turn before acknowledging (zero: always acknowledge).
    pub reply_deadline: Duration,
    /// Teams tenant id → organisation.
    pub tenant_orgs: HashMap<String, String>,
    /// Organisation of a tenant not in `tenant_orgs` (or of an activity without one).
    pub default_org: String,
    /// Agent of `POST /teams` (no agent in the path).
    pub default_agent: String,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Workflows posts tried at most this many times.
    pub workflows_attempts: u32,
    /// Wait before the second attempt; doubles after each further one.
    pub workflows_backoff: Duration,
}

impl TeamsSettings {
    /// Settings for the security token `token` (base64, as Teams shows it),
    /// with defaults for everything else.
    pub fn new(token: &str) -> Result<TeamsSettings, TeamsError> {
        let key = decode_security_token(token)?;
        let client = workflows_client()?;
        Ok(TeamsSettings {
            key: key.into(),
            client,
            workflows: HashMap::new(),
            reply_deadline: Duration::from_millis(4000),
            tenant_orgs: HashMap::new(),
            default_org: "default".into(),
            default_agent: "default".into(),
            max_body_bytes: 64 * 1024,
            workflows_attempts: 5,
            workflows_backoff: Duration::from_millis(500),
        })
    }
}

struct Shared {
    settings: TeamsSettings,
    handler: Arc<dyn TurnHandler>,
}

/// `POST /teams/{agent}` (and `POST /teams` for the default agent), ready to
/// merge into any router.
pub fn router<S>(settings: TeamsSettings, handler: Arc<dyn TurnHandler>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let shared = Arc::new(Shared { settings, handler });
    Router::new()
        .route("/teams", post(receive_default))
        .route("/teams/{agent}", post(receive_for_agent))
        .with_state(shared)
}

async fn receive_default(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let agent = shared.settings.default_agent.clone();
    receive(shared, agent, headers, body).await
}

async fn receive_for_agent(
    State(shared): State<Arc<Shared>>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if !valid_agent(&agent) {
        return error(StatusCode::NOT_FOUND, "unknown agent");
    }
    receive(shared, agent, headers, body).await
}

fn valid_agent(agent: &str) -> bool {
    !agent.is_empty()
        && agent.len() <= 64
        && agent
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn error(status: StatusCode, reason: &str) -> Response {
    (status, Json(json!({ "error": reason }))).into_response()
}

/// The synchronous answer Teams renders in the thread.
fn message(status: StatusCode, text: &str) -> Response {
    (status, Json(json!({ "type": "message", "text": text }))).into_response()
}

async fn receive(shared: Arc<Shared>, agent: String, headers: HeaderMap, body: Body) -> Response {
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
    let body = match read_limited(body, settings.max_body_bytes).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => return too_large(settings.max_body_bytes),
        Err(BodyError::Read(e)) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("could not read the request body: {e}"),
            )
        }
    };
    // 2. Authentication over the raw bytes, before any parsing.
    if let Err(reason) = verify_signature(settings.key.expose_secret(), &headers, &body) {
        tracing::warn!(reason, "Teams request refused: bad signature");
        return error(StatusCode::UNAUTHORIZED, reason);
    }
    // 3. The activity.
    let activity: Activity = match serde_json::from_slice(&body) {
        Ok(a) => a,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("malformed activity: {e}")),
    };
    if activity.kind != "message" {
        return error(
            StatusCode::BAD_REQUEST,
            &format!(
                "unsupported activity type `{}` (expected `message`)",
                activity.kind
            ),
        );
    }
    let channel = activity.team_channel();
    let msg = match activity.into_inbound(settings, agent) {
        Ok(msg) => msg,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    if msg.text.is_empty() {
        return message(StatusCode::OK, EMPTY_MENTION);
    }
    // Only a channel conversation has a Workflows webhook of its own.
    let late_to = channel
        .filter(|_| msg.kind == ConversationKind::Group)
        .and_then(|c| settings.workflows.get(&c))
        .map(|url| url.expose_secret().to_string());
    run_turn(shared.clone(), msg, late_to).await
}

fn too_large(limit: usize) -> Response {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("request body is larger than {limit} bytes"),
    )
}

enum BodyError {
    TooLarge,
    Read(String),
}

async fn read_limited(body: Body, limit: usize) -> Result<Bytes, BodyError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(BodyError::TooLarge),
        Err(e) => Err(BodyError::Read(e.to_string())),
    }
}

/// Check `Authorization: HMAC <base64>` against HMAC-SHA256(key, body), in constant time.
pub fn verify_signature(key: &[u8], headers: &HeaderMap, body: &[u8]) -> Result<(), &'static str> {
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or("missing Authorization header (expected `HMAC <signature>`)")?
        .to_str()
        .map_err(|_| "invalid Authorization header")?;
    let (scheme, signature) = value
        .trim()
        .split_once(' ')
        .ok_or("invalid Authorization header (expected `HMAC <signature>`)")?;
    if !scheme.eq_ignore_ascii_case("HMAC") {
        return Err("invalid Authorization header (expected `HMAC <signature>`)");
    }
    let signature = STANDARD
        .decode(signature.trim())
        .map_err(|_| "invalid HMAC signature")?;
    let mut mac = Hmac::<Sha256>::new_from_slice(key).map_err(|_| "invalid HMAC signature")?;
    mac.update(body);
    mac.verify_slice(&signature)
        .map_err(|_| "invalid HMAC signature")
}

/// The parts of a Bot Framework activity an outgoing webhook uses. Teams sends
/// more; unknown fields are ignored.
#[derive(Debug, Deserialize)]
struct Activity {
    #[serde(rename = "type")]
    kind: String,
    text: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    from: Option<Account>,
    #[serde(default)]
    conversation: Option<Conversation>,
    #[serde(default, rename = "channelData")]
    channel_data: Option<ChannelData>,
}

#[derive(Debug, Deserialize)]
struct Account {
    // `from.id` (a bot-framework id) is not an identity steward keys anyone by.
    #[serde(default, rename = "aadObjectId")]
    aad_object_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Conversation {
    #[serde(default)]
    id: Option<String>,
    #[serde(default, rename = "conversationType")]
    conversation_type: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ChannelData {
    #[serde(default)]
    tenant: Option<Tenant>,
    /// The team channel a channel conversation is in (absent in chats).
    #[serde(default)]
    channel: Option<TeamsChannel>,
}

#[derive(Debug, Deserialize)]
struct TeamsChannel {
    #[serde(default)]
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Tenant {
    #[serde(default)]
    id: Option<String>,
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl Activity {
    /// The id of the team channel the activity was posted in, if it was.
    fn team_channel(&self) -> Option<String> {
        let data = self.channel_data.as_ref()?;
        non_empty(data.channel.as_ref()?.id.clone())
    }

    /// The activity as the loop takes it. A sender is known only by the
    /// Azure AD object id Teams puts on every user's message: an activity
    /// without one is refused, never read as someone else's `from.id` nor
    /// as nobody's.
    fn into_inbound(
        self,
        settings: &TeamsSettings,
        agent: String,
    ) -> Result<Inbound, &'static str> {
        let from = self
            .from
            .ok_or("malformed activity: it has no `from` (the sender)")?;
        let aad = non_empty(from.aad_object_id).ok_or(
            "malformed activity: `from.aadObjectId` (the sender's Azure AD id) is missing or empty",
        )?;
        let (sender, sender_name) = (
            Some(format!("{CHANNEL}:{aad}")),
            from.name.unwrap_or_default(),
        );
        let (conversation, conversation_type) = match self.conversation {
            Some(c) => (non_empty(c.id), c.conversation_type),
            None => (None, None),
        };
        let kind = match conversation_type.as_deref() {
            Some(t) if t.eq_ignore_ascii_case("personal") => ConversationKind::Direct,
            _ => ConversationKind::Group,
        };
        let conversation = conversation.unwrap_or_else(|| {
            format!(
                "{CHANNEL}:{}",
                sender.as_deref().unwrap_or("unknown-conversation")
            )
        });
        let tenant = self
            .channel_data
            .and_then(|c| c.tenant)
            .and_then(|t| non_empty(t.id));
        let org = tenant
            .and_then(|t| settings.tenant_orgs.get(&t).cloned())
            .unwrap_or_else(|| settings.default_org.clone());
        let at = self
            .timestamp
            .as_deref()
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_else(Utc::now);
        Ok(Inbound {
            org,
            agent,
            channel: CHANNEL.into(),
            conversation,
            kind,
            sender,
            sender_name,
            text: clean_text(&self.text),
            platform_id: non_empty(self.id),
            at,
            // Only messages that @mention the webhook reach it.
            mentioned: true,
            answer: None,
            on_behalf_of: None,
        })
    }
}

static MENTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?is)<at(?:\s[^>]*)?>.*?</at\s*>").expect("constant regex"));
static LINE_BREAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<br\s*/?>|</(?:p|div|li|h[1-6])\s*>").expect("constant regex")
});
static TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"<[^>]*>").expect("constant regex"));

/// The text a person typed: `<at>…</at>` mentions removed, the HTML Teams adds
/// reduced to text (tags dropped, entities decoded), whitespace tidied.
/// Entities are decoded last, so an escaped `&lt;at&gt;` stays literal text.
pub fn clean_text(raw: &str) -> String {
    let text = MENTION.replace_all(raw, " ");
    let text = LINE_BREAK.replace_all(&text, "\n");
    let text = TAG.replace_all(&text, "");
    let text = html_escape::decode_html_entities(&text);
    let mut lines: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let line = line
            .split(|c: char| c.is_whitespace())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if line.is_empty() && lines.last().map(String::is_empty).unwrap_or(true) {
            continue;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

fn joined(replies: &[Reply]) -> String {
    replies
        .iter()
        .map(|r| r.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Run the turn in its own task (a dropped connection never cuts a turn
/// short) and answer within the deadline, or acknowledge and deliver later.
/// `late_to` is the Workflows webhook of the activity's own channel, if any.
async fn run_turn(shared: Arc<Shared>, msg: Inbound, late_to: Option<String>) -> Response {
    let handler = shared.handler.clone();
    let mut task = tokio::spawn(async move { handler.handle(msg).await });
    let deadline = shared.settings.reply_deadline;
    if !deadline.is_zero() {
        if let Ok(done) = tokio::time::timeout(deadline, &mut task).await {
            return match done {
                Ok(Ok(replies)) => message(StatusCode::OK, &joined(&replies)),
                Ok(Err(e)) => {
                    tracing::error!(error = %e, "Teams turn failed");
                    message(StatusCode::INTERNAL_SERVER_ERROR, TURN_FAILED)
                }
                Err(e) => {
                    tracing::error!(error = %e, "Teams turn panicked or was cancelled");
                    message(StatusCode::INTERNAL_SERVER_ERROR, TURN_FAILED)
                }
            };
        }
    }
    // Late: acknowledge now, deliver when the turn is done, only into the
    // channel that asked (a personal chat's reply is never posted anywhere).
    let target = late_to;
    let ack = if target.is_some() {
        ACK_WITH_WORKFLOW
    } else {
        ACK_WITHOUT_WORKFLOW
    };
    let late = shared.clone();
    tokio::spawn(async move {
        let replies = match task.await {
            Ok(Ok(replies)) => replies,
            Ok(Err(e)) => {
                tracing::error!(error = %e, "late Teams turn failed");
                return;
            }
            Err(e) => {
                tracing::error!(error = %e, "late Teams turn panicked or was cancelled");
                return;
            }
        };
        let text = joined(&replies);
        if text.is_empty() {
            return;
        }
        let Some(url) = target else {
            tracing::warn!(
                "a Teams reply finished after the deadline and its channel has no Workflows webhook (teams.workflows); it is stored but not delivered"
            );
            return;
        };
        let s = &late.settings;
        if let Err(e) = post_to_workflows(
            &s.client,
            &url,
            &text,
            s.workflows_attempts,
            s.workflows_backoff,
        )
        .await
        {
            tracing::error!(error = %e, "late Teams reply not delivered (it is stored)");
        }
    });
    message(StatusCode::OK, ack)
}

/// The body a Teams Workflows "when a webhook request is received" trigger
/// expects: a message with Adaptive Card attachments.
pub fn workflows_payload(text: &str) -> Value {
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": [{ "type": "TextBlock", "text": text, "wrap": true }]
            }
        }]
    })
}

#[derive(Debug, thiserror::Error)]
pub enum WorkflowsPostError {
    #[error("Workflows webhook refused the post with {0}")]
    Refused(StatusCode),
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp { attempts: u32, last: String },
}

/// How one Workflows post failed.
#[derive(Debug)]
enum PostError {
    Status(StatusCode),
    Transport(reqwest::Error),
}

impl std::fmt::Display for PostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PostError::Status(s) => write!(f, "{s}"),
            PostError::Transport(e) => write!(f, "{e}"),
        }
    }
}

/// The HTTP client Workflows posts go through, with their per-request timeout.
pub fn workflows_client() -> Result<reqwest::Client, TeamsError> {
    Ok(reqwest::Client::builder().timeout(POST_TIMEOUT).build()?)
}

/// The Teams channel a conversation id is in: a channel thread's id is
/// `<channel id>;messageid=<root message>`; any other is its own.
pub fn channel_of(conversation: &str) -> &str {
    conversation
        .split_once(";messageid=")
        .map_or(conversation, |(channel, _)| channel)
}

/// POST `text` as an Adaptive Card to a Workflows webhook. 429, 5xx and
/// transport errors are retried up to `attempts` times in all, waiting
/// `Retry-After` when given (at most a minute) or else `backoff`, doubling.
/// Any other refusal is final.
pub async fn post_to_workflows(
    client: &reqwest::Client,
    url: &str,
    text: &str,
    attempts: u32,
    backoff: Duration,
) -> Result<(), WorkflowsPostError> {
    let payload = workflows_payload(text);
    let policy = RetryPolicy {
        attempts,
        initial_backoff: backoff,
        max_wait: MAX_RETRY_WAIT,
        long_wait: LongWait::Cap,
    };
    let post = || async {
        match client.post(url).json(&payload).send().await {
            Ok(resp) if resp.status().is_success() => Ok(()),
            Ok(resp) if retryable_status(resp.status()) => Err(Failure::Retry {
                retry_after: retry_after(resp.headers(), Utc::now()),
                error: PostError::Status(resp.status()),
            }),
            Ok(resp) => Err(Failure::Fatal(PostError::Status(resp.status()))),
            Err(e) => Err(Failure::retry(PostError::Transport(e))),
        }
    };
    retry::run(&policy, "Workflows post", post)
        .await
        .map_err(|e| match e {
            RetryError::Fatal(PostError::Status(status)) => WorkflowsPostError::Refused(status),
            RetryError::Fatal(last)
            | RetryError::Exhausted { last, .. }
            | RetryError::TooLong { last, .. } => WorkflowsPostError::GaveUp {
                attempts: policy.attempts.max(1),
                last: last.to_string(),
            },
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn mentions_markup_and_entities_are_removed() {
        assert_eq!(
            clean_text("<at>steward</at>&nbsp;@notes: The report uses example_orders\n"),
            "@notes: The report uses example_orders"
        );
        assert_eq!(
            clean_text(r#"<div><at id="0">Steward Bot</at> hello <b>there</b> &amp; you</div>"#),
            "hello there & you"
        );
        assert_eq!(clean_text("a<br>b<br/>\n\n\nc"), "a\nb\n\nc");
        // Escaped markup is what the person typed: it stays, as text.
        assert_eq!(
            clean_text("&lt;at&gt;steward&lt;/at&gt; x &lt; y"),
            "<at>steward</at> x < y"
        );
        assert_eq!(clean_text("<AT>Bot</AT>"), "");
    }

    #[test]
    fn the_token_must_be_base64() {
        assert!(decode_security_token("not base64!").is_err());
        assert!(decode_security_token("").is_err());
        assert_eq!(
            decode_security_token(&STANDARD.encode(b"key")).ok(),
            Some(b"key".to_vec())
        );
    }

    fn auth(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn signatures_are_checked_over_the_raw_body() {
        let key = b"secret-key";
        let body = br#"{"type":"message","text":"hi"}"#;
        let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
        mac.update(body);
        let sig = STANDARD.encode(mac.finalize().into_bytes());
        assert!(verify_signature(key, &auth(&format!("HMAC {sig}")), body).is_ok());
        assert!(verify_signature(key, &auth(&format!("hmac {sig}")), body).is_ok());
        assert!(verify_signature(key, &auth(&format!("Bearer {sig}")), body).is_err());
        assert!(verify_signature(key, &auth(&format!("HMAC {sig}")), b"{}").is_err());
        assert!(verify_signature(b"other", &auth(&format!("HMAC {sig}")), body).is_err());
        assert!(verify_signature(key, &HeaderMap::new(), body).is_err());
        // A truncated signature is not a prefix match.
        let short = STANDARD.encode(&STANDARD.decode(&sig).unwrap_or_default()[..16]);
        assert!(verify_signature(key, &auth(&format!("HMAC {short}")), body).is_err());
    }
}
