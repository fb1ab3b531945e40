//! Slack at the wire: events signed as Slack signs them (`v0:` HMAC-SHA256 of
//! the timestamp and the raw body with the app's signing secret), shaped as
//! the Events API sends them, and a fake of the Web API's `chat.postMessage`
//! that answers as Slack does (`{"ok":true,…}`, `invalid_auth`, 429 with
//! `Retry-After` when scripted) and records what each post would show.
//!
//! For Socket Mode it also answers `apps.connections.open` (the app-level
//! token checked as Slack checks it: `invalid_auth` otherwise) with the URL
//! of a real websocket on the same port, one use per URL, that says `hello`
//! and then sends the envelopes a test gives it, takes acknowledgements and
//! records, in one order with the posts, what was sent, acknowledged and
//! posted ([`Seen`]): a post made while an envelope was still unacknowledged
//! says so.

use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, Mutex as AsyncMutex};

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

/// What the fake saw, in the order it saw it, over the Web API and the
/// Socket Mode connections together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// `apps.connections.open` gave out the connection numbered so.
    Opened(u32),
    /// `apps.connections.open` refused the app-level token.
    Refused,
    /// An envelope sent over a connection.
    Sent(String),
    /// Its acknowledgement, received.
    Acked(String),
    /// A message posted (`chat.postMessage`, its `ts`), and the envelopes
    /// sent but not yet acknowledged when it came.
    Posted { ts: String, unacked: Vec<String> },
}

/// What a test has a connection do.
enum Out {
    Frame(String),
    /// Drop the TCP connection, without a close frame (a network failure).
    Drop,
}

/// One Socket Mode connection steward opened, as the test drives it.
pub struct Connection {
    /// Its number: 1 for the first `apps.connections.open`, and so on.
    pub n: u32,
    out: mpsc::UnboundedSender<Out>,
    acks: AsyncMutex<mpsc::UnboundedReceiver<String>>,
    ended: AsyncMutex<Option<oneshot::Receiver<()>>>,
    state: Arc<FakeState>,
}

impl Connection {
    /// Send `payload` (an event callback, as [`Workspace::dm`] makes) in an
    /// `events_api` envelope; `retry_attempt` > 0 for a redelivery.
    pub fn send_event(&self, envelope_id: &str, payload: Value, retry_attempt: u32) {
        let envelope = json!({
            "envelope_id": envelope_id,
            "type": "events_api",
            "payload": payload,
            "accepts_response_payload": false,
            "retry_attempt": retry_attempt,
            "retry_reason": if retry_attempt > 0 { "timeout" } else { "" },
        });
        self.state.seen(Seen::Sent(envelope_id.into()));
        self.state
            .outstanding
            .lock()
            .expect("outstanding")
            .insert(envelope_id.into());
        let _ = self.out.send(Out::Frame(envelope.to_string()));
    }

    /// Send any frame as it is (a kind of envelope steward does not read).
    pub fn send_raw(&self, frame: Value) {
        let _ = self.out.send(Out::Frame(frame.to_string()));
    }

    /// Warn that Slack will close this connection, as it does before a
    /// refresh (`refresh_requested`) and other planned closes.
    pub fn disconnect(&self, reason: &str) {
        let frame = json!({
            "type": "disconnect",
            "reason": reason,
            "debug_info": {"host": "applink-fake"}
        });
        let _ = self.out.send(Out::Frame(frame.to_string()));
    }

    /// Drop the connection without a word, as a network failure does.
    pub fn drop_connection(&self) {
        let _ = self.out.send(Out::Drop);
    }

    /// The envelope id of the next acknowledgement on this connection.
    pub async fn acked(&self) -> String {
        let mut rx = self.acks.lock().await;
        tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .expect("no envelope was acknowledged")
            .expect("the connection ended without an acknowledgement")
    }

    /// Waits until the connection has ended (steward closed it, or it was dropped).
    pub async fn ended(&self) {
        let Some(rx) = self.ended.lock().await.take() else {
            return;
        };
        let _ = tokio::time::timeout(Duration::from_secs(60), rx)
            .await
            .expect("the connection did not end");
    }
}

struct FakeState {
    token: String,
    script: Mutex<VecDeque<Scripted>>,
    answered: Mutex<Vec<Answered>>,
    posted: Mutex<Vec<Posted>>,
    next_ts: AtomicU64,
    tx: mpsc::UnboundedSender<Posted>,
    /// The app-level token `apps.connections.open` accepts.
    app_token: Mutex<String>,
    /// `ws://…` of this server.
    ws_base: String,
    connections: AtomicU32,
    /// The connection numbers given out and not yet used.
    tickets: Mutex<BTreeSet<u32>>,
    seen: Mutex<Vec<Seen>>,
    /// Envelopes sent and not yet acknowledged.
    outstanding: Mutex<BTreeSet<String>>,
    /// Each live connection's way to read what has already arrived.
    syncs: Mutex<Vec<mpsc::UnboundedSender<oneshot::Sender<()>>>>,
    opened_tx: mpsc::UnboundedSender<Connection>,
    refused_tx: mpsc::UnboundedSender<()>,
}

impl FakeState {
    fn seen(&self, what: Seen) {
        self.seen.lock().expect("seen").push(what);
    }

    /// Have every live connection read the acknowledgements already
    /// received, so a post is judged against everything steward sent before it.
    async fn read_pending_acks(&self) {
        let syncs: Vec<_> = self.syncs.lock().expect("syncs").clone();
        for sync in syncs {
            let (tx, rx) = oneshot::channel();
            if sync.send(tx).is_ok() {
                let _ = rx.await;
            }
        }
    }
}

/// Slack's Web API on 127.0.0.1 (`chat.postMessage`, `apps.connections.open`)
/// for the bot token `token`, and its Socket Mode websocket.
pub struct FakeSlack {
    /// The Web API root to configure (`slack.api_base`).
    pub api_base: String,
    state: Arc<FakeState>,
    received: AsyncMutex<mpsc::UnboundedReceiver<Posted>>,
    opened: AsyncMutex<mpsc::UnboundedReceiver<Connection>>,
    refused: AsyncMutex<mpsc::UnboundedReceiver<()>>,
    server: tokio::task::JoinHandle<()>,
}

impl FakeSlack {
    pub async fn start(token: &str, script: impl IntoIterator<Item = Scripted>) -> FakeSlack {
        FakeSlack::start_with_app_token(token, "", script).await
    }

    /// A fake whose `apps.connections.open` accepts the app-level token `app_token`.
    pub async fn start_with_app_token(
        token: &str,
        app_token: &str,
        script: impl IntoIterator<Item = Scripted>,
    ) -> FakeSlack {
        let (tx, rx) = mpsc::unbounded_channel();
        let (opened_tx, opened) = mpsc::unbounded_channel();
        let (refused_tx, refused) = mpsc::unbounded_channel();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake Slack");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(FakeState {
            token: token.into(),
            script: Mutex::new(script.into_iter().collect()),
            answered: Mutex::new(Vec::new()),
            posted: Mutex::new(Vec::new()),
            next_ts: AtomicU64::new(1_767_700_000_000_100),
            tx,
            app_token: Mutex::new(app_token.into()),
            ws_base: format!("ws://{addr}"),
            connections: AtomicU32::new(0),
            tickets: Mutex::new(BTreeSet::new()),
            seen: Mutex::new(Vec::new()),
            outstanding: Mutex::new(BTreeSet::new()),
            syncs: Mutex::new(Vec::new()),
            opened_tx,
            refused_tx,
        });
        let app = Router::new()
            .route("/api/chat.postMessage", post(post_message))
            .route("/api/apps.connections.open", post(connections_open))
            .route("/link/", get(link))
            .fallback(unknown_method)
            .with_state(state.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeSlack {
            api_base: format!("http://{addr}/api"),
            state,
            received: AsyncMutex::new(rx),
            opened: AsyncMutex::new(opened),
            refused: AsyncMutex::new(refused),
            server,
        }
    }

    /// The next Socket Mode connection steward opens, once `hello` was sent on it.
    pub async fn connection(&self) -> Connection {
        let mut rx = self.opened.lock().await;
        tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .expect("steward opened no Socket Mode connection")
            .expect("fake Slack stopped")
    }

    /// Waits for the next `apps.connections.open` refused for its token.
    pub async fn refused(&self) {
        let mut rx = self.refused.lock().await;
        tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .expect("no app-level token was refused")
            .expect("fake Slack stopped");
    }

    /// From now on `apps.connections.open` accepts `app_token` (and only it).
    pub fn accept_app_token(&self, app_token: &str) {
        *self.state.app_token.lock().expect("app token") = app_token.into();
    }

    /// Everything seen so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().expect("seen").clone()
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

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// `apps.connections.open`: a one-use websocket URL for the app-level token.
async fn connections_open(State(state): State<Arc<FakeState>>, headers: HeaderMap) -> Response {
    let expected = state.app_token.lock().expect("app token").clone();
    if expected.is_empty() || bearer(&headers) != Some(expected.as_str()) {
        state.seen(Seen::Refused);
        let _ = state.refused_tx.send(());
        return answer(&state, not_ok("invalid_auth"));
    }
    let n = state.connections.fetch_add(1, Ordering::Relaxed) + 1;
    state.tickets.lock().expect("tickets").insert(n);
    state.seen(Seen::Opened(n));
    let url = format!("{}/link/?ticket={n}&app_id=A0STEWARD", state.ws_base);
    answer(
        &state,
        Json(json!({"ok": true, "url": url})).into_response(),
    )
}

/// The websocket `apps.connections.open` pointed at: each URL opens once.
async fn link(
    State(state): State<Arc<FakeState>>,
    Query(query): Query<HashMap<String, String>>,
    ws: WebSocketUpgrade,
) -> Response {
    let ticket = query.get("ticket").and_then(|t| t.parse::<u32>().ok());
    let Some(n) = ticket.filter(|n| state.tickets.lock().expect("tickets").remove(n)) else {
        return (StatusCode::UNAUTHORIZED, "unknown or used connection URL").into_response();
    };
    ws.on_upgrade(move |socket| socket_session(socket, state, n))
}

/// One Socket Mode connection: `hello`, then the test's frames out and
/// steward's acknowledgements in.
async fn socket_session(mut socket: WebSocket, state: Arc<FakeState>, n: u32) {
    let hello = json!({
        "type": "hello",
        "num_connections": 1,
        "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
        "connection_info": {"app_id": "A0STEWARD"}
    });
    if socket
        .send(WsMessage::Text(hello.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    let (out, mut out_rx) = mpsc::unbounded_channel();
    let (ack_tx, acks) = mpsc::unbounded_channel();
    let (ended_tx, ended) = oneshot::channel();
    let (sync_tx, mut sync_rx) = mpsc::unbounded_channel::<oneshot::Sender<()>>();
    state.syncs.lock().expect("syncs").push(sync_tx);
    let _ = state.opened_tx.send(Connection {
        n,
        out,
        acks: AsyncMutex::new(acks),
        ended: AsyncMutex::new(Some(ended)),
        state: state.clone(),
    });
    loop {
        tokio::select! {
            frame = out_rx.recv() => match frame {
                Some(Out::Frame(text)) => {
                    if socket.send(WsMessage::Text(text.into())).await.is_err() {
                        break;
                    }
                }
                Some(Out::Drop) | None => break,
            },
            incoming = socket.recv() => {
                if !took(&state, &ack_tx, incoming) {
                    break;
                }
            }
            Some(done) = sync_rx.recv() => {
                // What has already arrived is read now (a zero timeout polls once).
                while let Ok(incoming) = tokio::time::timeout(Duration::ZERO, socket.recv()).await {
                    if !took(&state, &ack_tx, incoming) {
                        break;
                    }
                }
                let _ = done.send(());
            }
        }
    }
    let _ = ended_tx.send(());
}

/// One frame from steward: an acknowledgement is recorded. `false` when the
/// connection has ended.
fn took(
    state: &FakeState,
    acks: &mpsc::UnboundedSender<String>,
    incoming: Option<Result<WsMessage, axum::Error>>,
) -> bool {
    match incoming {
        Some(Ok(WsMessage::Text(text))) => {
            let frame: Value = serde_json::from_str(&text).unwrap_or_default();
            match frame["envelope_id"].as_str() {
                Some(id) => {
                    state.seen(Seen::Acked(id.into()));
                    state.outstanding.lock().expect("outstanding").remove(id);
                    let _ = acks.send(id.into());
                }
                None => {
                    eprintln!("FAKE SLACK: a Socket Mode frame that is no acknowledgement: {text}")
                }
            }
            true
        }
        Some(Ok(WsMessage::Close(_))) | Some(Err(_)) | None => false,
        Some(Ok(_)) => true,
    }
}

async fn post_message(
    State(state): State<Arc<FakeState>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if bearer(&headers) != Some(state.token.as_str()) {
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
    state.read_pending_acks().await;
    let unacked = state
        .outstanding
        .lock()
        .expect("outstanding")
        .iter()
        .cloned()
        .collect();
    state.seen(Seen::Posted {
        ts: ts.clone(),
        unacked,
    });
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
