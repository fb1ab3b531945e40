//! Slack at the wire: events signed as Slack signs them (`v0:` HMAC-SHA256 of
//! the timestamp and the raw body with the app's signing secret), shaped as
//! the Events API sends them, and a fake of the Web API's `chat.postMessage`
//! that answers as Slack does (`{"ok":true,…}`, `invalid_auth`, 429 with
//! `Retry-After` when scripted) and records what each post would show.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Mutex as AsyncMutex};

/// `X-Slack-Signature` for `body` sent at `timestamp` (Unix seconds).
pub fn sign(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(format!("v0:{timestamp}:").as_bytes());
    mac.update(body);
    format!("v0={}", hex::encode(mac.finalize().into_bytes()))
}

/// One workspace with the app installed: its team id and the bot's user and bot ids.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub team: String,
    pub bot_user: String,
    pub bot_id: String,
    pub app: String,
}

impl Workspace {
    pub fn new(team: &str) -> Workspace {
        Workspace {
            team: team.into(),
            bot_user: "U0BOTSTEW".into(),
            bot_id: "B0BOTSTEW".into(),
            app: "A0STEWARD".into(),
        }
    }

    /// The stored id of `user` in this workspace.
    pub fn stored(&self, user: &str) -> String {
        format!("slack:{}:{user}", self.team)
    }

    /// An `event_callback` envelope around `event`, as Slack posts it.
    pub fn envelope(&self, event_id: &str, event: Value) -> Value {
        json!({
            "token": "Jhj5dZrVaK7ZwHHjRyZWjbDl",
            "team_id": self.team,
            "context_team_id": self.team,
            "context_enterprise_id": null,
            "api_app_id": self.app,
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": 1_767_603_600,
            "authorizations": [{
                "enterprise_id": null,
                "team_id": self.team,
                "user_id": self.bot_user,
                "is_bot": true,
                "is_enterprise_install": false
            }],
            "is_ext_shared_channel": false,
            "event_context": "4-eyJldCI6Im1lc3NhZ2UiLCJ0aWQiOiJUMDAxIn0"
        })
    }

    /// A person's `message` in the direct-message channel `channel` (`D…`).
    pub fn dm(&self, event_id: &str, user: &str, channel: &str, ts: &str, text: &str) -> Value {
        self.envelope(
            event_id,
            json!({
                "user": user,
                "type": "message",
                "ts": ts,
                "client_msg_id": format!("c-{ts}"),
                "text": text,
                "team": self.team,
                "blocks": rich_text(text),
                "channel": channel,
                "event_ts": ts,
                "channel_type": "im"
            }),
        )
    }

    /// An `app_mention` of the bot by `user` in `channel` (`C…`), in the
    /// thread `thread_ts` when given: the text starts with the bot's mention.
    pub fn mention(
        &self,
        event_id: &str,
        user: &str,
        channel: &str,
        ts: &str,
        thread_ts: Option<&str>,
        text: &str,
    ) -> Value {
        let text = format!("<@{}> {text}", self.bot_user);
        let mut event = json!({
            "type": "app_mention",
            "user": user,
            "ts": ts,
            "client_msg_id": format!("c-{ts}"),
            "text": text,
            "team": self.team,
            "blocks": rich_text(&text),
            "channel": channel,
            "event_ts": ts
        });
        if let Some(t) = thread_ts {
            event["thread_ts"] = json!(t);
            event["parent_user_id"] = json!(user);
        }
        self.envelope(event_id, event)
    }

    /// The `message` event Slack sends back for a message the bot posted.
    pub fn own_message(&self, event_id: &str, channel: &str, ts: &str, text: &str) -> Value {
        self.envelope(
            event_id,
            json!({
                "bot_id": self.bot_id,
                "type": "message",
                "text": text,
                "user": self.bot_user,
                "ts": ts,
                "app_id": self.app,
                "team": self.team,
                "bot_profile": {"id": self.bot_id, "app_id": self.app, "name": "steward", "deleted": false, "team_id": self.team},
                "channel": channel,
                "event_ts": ts,
                "channel_type": "im"
            }),
        )
    }

    /// Another app's `bot_message` in `channel`.
    pub fn other_bot(&self, event_id: &str, channel: &str, ts: &str, text: &str) -> Value {
        self.envelope(
            event_id,
            json!({
                "type": "message",
                "subtype": "bot_message",
                "text": text,
                "ts": ts,
                "username": "deploy-bot",
                "bot_id": "B0OTHERBOT",
                "channel": channel,
                "event_ts": ts,
                "channel_type": "channel"
            }),
        )
    }
}

/// The `rich_text` block Slack's clients attach to a typed message.
fn rich_text(text: &str) -> Value {
    json!([{
        "type": "rich_text",
        "block_id": "b1",
        "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]
    }])
}

/// How the fake answers one `chat.postMessage` before it starts accepting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scripted {
    /// HTTP 429 with `Retry-After: <seconds>`, as Slack rate-limits a method.
    RateLimited { retry_after_secs: u64 },
    /// HTTP 503.
    Unavailable,
}

/// One message the bot posted, as the fake took it.
#[derive(Debug, Clone)]
pub struct Posted {
    pub channel: String,
    /// The text as sent (Slack's escapes in it).
    pub text: String,
    pub thread_ts: Option<String>,
    /// The `ts` the fake gave the message.
    pub ts: String,
    /// When it arrived.
    pub at: Instant,
}

impl Posted {
    /// What a person sees: the text with Slack's three escapes undone.
    pub fn shown(&self) -> String {
        self.text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    }
}

/// Every call the fake answered, in order: its status and when it came.
#[derive(Debug, Clone, Copy)]
pub struct Answered {
    pub status: u16,
    pub at: Instant,
}

struct FakeState {
    token: String,
    script: Mutex<VecDeque<Scripted>>,
    answered: Mutex<Vec<Answered>>,
    posted: Mutex<Vec<Posted>>,
    next_ts: AtomicU64,
    tx: mpsc::UnboundedSender<Posted>,
}

/// Slack's Web API on 127.0.0.1 (`chat.postMessage`), for the bot token `token`.
pub struct FakeSlack {
    /// The Web API root to configure (`slack.api_base`).
    pub api_base: String,
    state: Arc<FakeState>,
    received: AsyncMutex<mpsc::UnboundedReceiver<Posted>>,
    server: tokio::task::JoinHandle<()>,
}

impl FakeSlack {
    pub async fn start(token: &str, script: impl IntoIterator<Item = Scripted>) -> FakeSlack {
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Arc::new(FakeState {
            token: token.into(),
            script: Mutex::new(script.into_iter().collect()),
            answered: Mutex::new(Vec::new()),
            posted: Mutex::new(Vec::new()),
            next_ts: AtomicU64::new(1_767_700_000_000_100),
            tx,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake Slack");
        let addr = listener.local_addr().expect("local addr");
        let app = Router::new()
            .route("/api/chat.postMessage", post(post_message))
            .fallback(unknown_method)
            .with_state(state.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeSlack {
            api_base: format!("http://{addr}/api"),
            state,
            received: AsyncMutex::new(rx),
            server,
        }
    }

    /// Script more answers (after those not yet used).
    pub fn script(&self, more: impl IntoIterator<Item = Scripted>) {
        self.state.script.lock().expect("script").extend(more);
    }

    /// The next message posted. Waits for it (a guard of 60 s turns a missing
    /// post into a failure instead of a hang).
    pub async fn next_post(&self) -> Posted {
        let mut rx = self.received.lock().await;
        tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .expect("nothing was posted to the fake Slack")
            .expect("fake Slack stopped")
    }

    /// Every message posted so far.
    pub fn posted(&self) -> Vec<Posted> {
        self.state.posted.lock().expect("posted").clone()
    }

    /// Every call answered so far.
    pub fn answered(&self) -> Vec<Answered> {
        self.state.answered.lock().expect("answered").clone()
    }
}

impl Drop for FakeSlack {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn answer(state: &FakeState, resp: Response) -> Response {
    state.answered.lock().expect("answered").push(Answered {
        status: resp.status().as_u16(),
        at: Instant::now(),
    });
    resp
}

fn not_ok(error: &str) -> Response {
    Json(json!({"ok": false, "error": error})).into_response()
}

async fn unknown_method(State(state): State<Arc<FakeState>>) -> Response {
    let resp = (
        StatusCode::NOT_FOUND,
        Json(json!({"ok": false, "error": "unknown_method"})),
    )
        .into_response();
    answer(&state, resp)
}

async fn post_message(
    State(state): State<Arc<FakeState>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if bearer != Some(state.token.as_str()) {
        return answer(&state, not_ok("invalid_auth"));
    }
    let json_body = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let Some(args) = json_body
        .then(|| serde_json::from_str::<Value>(&body).ok())
        .flatten()
    else {
        return answer(&state, not_ok("invalid_arguments"));
    };
    if let Some(scripted) = state.script.lock().expect("script").pop_front() {
        let resp = match scripted {
            Scripted::RateLimited { retry_after_secs } => (
                StatusCode::TOO_MANY_REQUESTS,
                [("retry-after", retry_after_secs.to_string())],
                Json(json!({"ok": false, "error": "ratelimited"})),
            )
                .into_response(),
            Scripted::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "").into_response(),
        };
        return answer(&state, resp);
    }
    let (Some(channel), Some(text)) = (args["channel"].as_str(), args["text"].as_str()) else {
        return answer(&state, not_ok("no_text"));
    };
    if channel.is_empty() {
        return answer(&state, not_ok("channel_not_found"));
    }
    let n = state.next_ts.fetch_add(1, Ordering::Relaxed);
    let ts = format!("{}.{:06}", n / 1_000_000, n % 1_000_000);
    let thread_ts = args["thread_ts"].as_str().map(str::to_string);
    let mut message = json!({
        "type": "message",
        "subtype": null,
        "text": text,
        "user": "U0BOTSTEW",
        "bot_id": "B0BOTSTEW",
        "app_id": "A0STEWARD",
        "ts": ts,
        "team": "T0FAKE"
    });
    if let Some(t) = &thread_ts {
        message["thread_ts"] = json!(t);
    }
    let posted = Posted {
        channel: channel.into(),
        text: text.into(),
        thread_ts,
        ts: ts.clone(),
        at: Instant::now(),
    };
    state.posted.lock().expect("posted").push(posted.clone());
    let resp = answer(
        &state,
        Json(json!({"ok": true, "channel": channel, "ts": ts, "message": message})).into_response(),
    );
    // Handed to a waiting test only once recorded as answered.
    let _ = state.tx.send(posted);
    resp
}
