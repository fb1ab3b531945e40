//! A fake Discord on 127.0.0.1: the REST routes a serenity bot calls, and a
//! gateway websocket speaking Discord's protocol (HELLO, IDENTIFY → READY,
//! HEARTBEAT → HEARTBEAT_ACK, dispatches). Tests drive it like Discord would:
//! they dispatch `MESSAGE_CREATE` and `INTERACTION_CREATE` with realistic
//! payloads (string snowflakes whose time is the fake's clock, RFC 3339
//! timestamps, `guild_id` and `member` in guilds, `user` in DMs), and await
//! what the bot sent back. Nothing sleeps: waiting is on a `watch` channel,
//! with a generous guard so a missing feature fails instead of hanging.

use adapters::{Inbound, Reply, TurnFailed, TurnHandler};
use axum::extract::ws::{CloseFrame, Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post, put};
use axum::{Json, Router};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// Discord's epoch (2015-01-01T00:00:00Z) in Unix milliseconds.
pub const DISCORD_EPOCH_MS: i64 = 1_420_070_400_000;
/// Guard against a bot that never answers: far beyond any real turn.
const WAIT: Duration = Duration::from_secs(30);
/// The gateway's heartbeat interval, as Discord announces it.
const HEARTBEAT_INTERVAL_MS: u64 = 41_250;
/// Bit 6 of message flags: only the user who triggered it sees the message.
pub const EPHEMERAL: u64 = 1 << 6;

/// A Discord user as the fake describes them in payloads.
#[derive(Debug, Clone)]
pub struct FakeUser {
    pub id: u64,
    pub username: String,
    pub global_name: Option<String>,
    /// Guild nickname, sent in `member.nick`.
    pub nick: Option<String>,
    pub bot: bool,
}

impl FakeUser {
    pub fn new(id: u64, username: &str) -> FakeUser {
        FakeUser {
            id,
            username: username.into(),
            global_name: Some(capitalise(username)),
            nick: None,
            bot: false,
        }
    }

    pub fn nick(mut self, nick: &str) -> FakeUser {
        self.nick = Some(nick.into());
        self
    }

    pub fn global_name(mut self, name: &str) -> FakeUser {
        self.global_name = Some(name.into());
        self
    }

    pub fn bot(mut self) -> FakeUser {
        self.bot = true;
        self
    }

    /// The stored user id steward should give this user.
    pub fn stored(&self) -> String {
        format!("discord:{}", self.id)
    }

    pub fn json(&self) -> Value {
        json!({
            "id": self.id.to_string(),
            "username": self.username,
            "discriminator": "0",
            "global_name": self.global_name,
            "avatar": null,
            "bot": self.bot,
            "public_flags": 0,
        })
    }

    fn member(&self, at: &str) -> Value {
        json!({
            "nick": self.nick,
            "avatar": null,
            "roles": [],
            "joined_at": at,
            "premium_since": null,
            "deaf": false,
            "mute": false,
            "flags": 0,
            "pending": false,
        })
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A message the bot created (channel message, interaction response or follow-up).
#[derive(Debug, Clone)]
pub struct Posted {
    /// The id the fake gave it.
    pub id: u64,
    pub channel: u64,
    /// The JSON body the bot sent.
    pub body: Value,
}

impl Posted {
    pub fn content(&self) -> &str {
        self.body["content"].as_str().unwrap_or_default()
    }

    /// The custom ids of its buttons, in order.
    pub fn custom_ids(&self) -> Vec<String> {
        self.body["components"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|row| row["components"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["custom_id"].as_str().map(str::to_string))
            .collect()
    }

    /// Button labels, in order.
    pub fn labels(&self) -> Vec<String> {
        self.body["components"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|row| row["components"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["label"].as_str().map(str::to_string))
            .collect()
    }

    /// Whether the message may ping nobody (`allowed_mentions.parse` is empty).
    pub fn pings_nobody(&self) -> bool {
        let am = &self.body["allowed_mentions"];
        am["parse"].as_array().is_some_and(|p| p.is_empty())
            && am["users"].as_array().is_none_or(|u| u.is_empty())
            && am["roles"].as_array().is_none_or(|r| r.is_empty())
    }
}

/// Something the bot did over REST.
#[derive(Debug, Clone)]
pub enum Sent {
    /// `POST /channels/{channel}/messages`
    Message(Posted),
    /// `POST /channels/{channel}/typing`
    Typing { channel: u64 },
    /// `POST /interactions/{id}/{token}/callback`
    Callback {
        interaction: u64,
        token: String,
        body: Value,
    },
    /// `PATCH /webhooks/{app}/{token}/messages/@original`
    EditOriginal { token: String, message: Posted },
    /// `POST /webhooks/{app}/{token}`
    Followup { token: String, message: Posted },
    /// `PUT /applications/{app}/commands`
    Commands(Value),
}

struct Shared {
    token: String,
    bot: FakeUser,
    addr: SocketAddr,
    clock_ms: Mutex<i64>,
    counter: AtomicU64,
    seq: AtomicU64,
    /// The live gateway session, once the bot has identified.
    session: Mutex<Option<mpsc::UnboundedSender<String>>>,
    identifies: watch::Sender<Vec<Value>>,
    /// Close codes of gateway connections the bot closed.
    closes: watch::Sender<Vec<Option<u16>>>,
    log: watch::Sender<Vec<Sent>>,
    taken: Mutex<HashSet<usize>>,
    unknown: Mutex<Vec<String>>,
    /// Messages it created, by id, to quote in interactions.
    messages: Mutex<Vec<(u64, Value)>>,
}

impl Shared {
    fn now_ms(&self) -> i64 {
        *self.clock_ms.lock().expect("clock")
    }

    /// A fresh snowflake carrying the current fake time.
    fn snowflake(&self) -> u64 {
        let ms = u64::try_from(self.now_ms() - DISCORD_EPOCH_MS).expect("after Discord's epoch");
        (ms << 22) | (self.counter.fetch_add(1, Ordering::Relaxed) & 0xfff)
    }

    fn record(&self, sent: Sent) {
        self.log.send_modify(|log| log.push(sent));
    }

    fn message_object(&self, id: u64, channel: u64, body: &Value) -> Value {
        json!({
            "id": id.to_string(),
            "channel_id": channel.to_string(),
            "author": self.bot.json(),
            "content": body["content"].as_str().unwrap_or_default(),
            "timestamp": rfc3339(self.now_ms()),
            "edited_timestamp": null,
            "tts": false,
            "mention_everyone": false,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": false,
            "type": 0,
            "flags": body["flags"].as_u64().unwrap_or(0),
            "components": body.get("components").cloned().unwrap_or_else(|| json!([])),
        })
    }

    fn post(&self, channel: u64, body: Value) -> (Posted, Value) {
        let id = self.snowflake();
        let object = self.message_object(id, channel, &body);
        self.messages
            .lock()
            .expect("messages")
            .push((id, object.clone()));
        (Posted { id, channel, body }, object)
    }
}

fn rfc3339(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .expect("valid time")
        .format("%Y-%m-%dT%H:%M:%S%.6f+00:00")
        .to_string()
}

/// The fake Discord: an HTTP server with the REST API under `/api/v10` and the gateway at `/gateway`.
pub struct FakeDiscord {
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeDiscord {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeDiscord {
    /// Start on a free port; the bot authenticates with `token` and is `bot`.
    pub async fn start(token: &str, bot: FakeUser, start: DateTime<Utc>) -> FakeDiscord {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake Discord");
        let addr = listener.local_addr().expect("address");
        let shared = Arc::new(Shared {
            token: token.into(),
            bot,
            addr,
            clock_ms: Mutex::new(start.timestamp_millis()),
            counter: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            session: Mutex::new(None),
            identifies: watch::channel(Vec::new()).0,
            closes: watch::channel(Vec::new()).0,
            log: watch::channel(Vec::new()).0,
            taken: Mutex::new(HashSet::new()),
            unknown: Mutex::new(Vec::new()),
            messages: Mutex::new(Vec::new()),
        });
        let api = Router::new()
            .route("/gateway", get(rest_gateway))
            .route("/gateway/bot", get(rest_gateway_bot))
            .route("/users/@me", get(rest_me))
            .route("/channels/{channel}/messages", post(rest_create_message))
            .route("/channels/{channel}/typing", post(rest_typing))
            .route(
                "/interactions/{interaction}/{token}/callback",
                post(rest_callback),
            )
            .route(
                "/webhooks/{app}/{token}/messages/@original",
                patch(rest_edit_original),
            )
            .route("/webhooks/{app}/{token}", post(rest_followup))
            .route("/applications/{app}/commands", put(rest_commands));
        let app = Router::new()
            .route("/gateway", get(gateway))
            .nest("/api/v10", api)
            .fallback(unknown_route)
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeDiscord { shared, server }
    }

    /// What `discord.api_base` should be for the bot to reach this fake.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.shared.addr)
    }

    pub fn bot(&self) -> &FakeUser {
        &self.shared.bot
    }

    /// Move the fake clock (message timestamps and snowflakes) forward.
    pub fn advance(&self, by: chrono::Duration) {
        *self.shared.clock_ms.lock().expect("clock") += by.num_milliseconds();
    }

    /// The time stamped on the next event: one minute after the last.
    fn tick(&self) -> i64 {
        let mut c = self.shared.clock_ms.lock().expect("clock");
        *c += 60_000;
        *c
    }

    /// Wait until the bot has identified on the gateway; its IDENTIFY `d`.
    pub async fn identified(&self) -> Value {
        let mut rx = self.shared.identifies.subscribe();
        let got = tokio::time::timeout(WAIT, rx.wait_for(|v| !v.is_empty()))
            .await
            .expect("the bot never identified on the fake gateway")
            .expect("fake alive");
        got[0].clone()
    }

    /// Wait until the bot closed a gateway connection; the close code it sent.
    pub async fn disconnected(&self) -> Option<u16> {
        let mut rx = self.shared.closes.subscribe();
        let got = tokio::time::timeout(WAIT, rx.wait_for(|v| !v.is_empty()))
            .await
            .expect("the bot never closed its gateway connection")
            .expect("fake alive");
        got[0]
    }

    /// Everything the bot sent so far.
    pub fn sent(&self) -> Vec<Sent> {
        self.shared.log.borrow().clone()
    }

    /// Requests to routes the fake does not know (each was answered 404).
    pub fn unknown_routes(&self) -> Vec<String> {
        self.shared.unknown.lock().expect("unknown").clone()
    }

    /// Wait for the first thing the bot sent that no earlier `take` consumed and `pick` accepts.
    pub async fn take<T>(&self, what: &str, mut pick: impl FnMut(&Sent) -> Option<T>) -> T {
        let mut rx = self.shared.log.subscribe();
        let found = async {
            loop {
                {
                    let log = rx.borrow_and_update();
                    let mut taken = self.shared.taken.lock().expect("taken");
                    for (i, s) in log.iter().enumerate() {
                        if taken.contains(&i) {
                            continue;
                        }
                        if let Some(t) = pick(s) {
                            taken.insert(i);
                            return t;
                        }
                    }
                }
                rx.changed().await.expect("fake alive");
            }
        };
        match tokio::time::timeout(WAIT, found).await {
            Ok(t) => t,
            Err(_) => panic!("the bot never sent {what}; it sent {:#?}", self.sent()),
        }
    }

    /// The next message the bot posted in `channel`.
    pub async fn message_in(&self, channel: u64) -> Posted {
        self.take(&format!("a message to channel {channel}"), |s| match s {
            Sent::Message(p) if p.channel == channel => Some(p.clone()),
            _ => None,
        })
        .await
    }

    /// The bot's (edited, deferred) response to the interaction with `token`.
    pub async fn interaction_reply(&self, token: &str) -> Posted {
        self.take(&format!("a response to interaction {token}"), |s| match s {
            Sent::EditOriginal { token: t, message } if t == token => Some(message.clone()),
            _ => None,
        })
        .await
    }

    /// The bot's initial callback to the interaction with `token`.
    pub async fn interaction_callback(&self, token: &str) -> Value {
        self.take(&format!("a callback to interaction {token}"), |s| match s {
            Sent::Callback { token: t, body, .. } if t == token => Some(body.clone()),
            _ => None,
        })
        .await
    }

    /// The next slash-command registration.
    pub async fn commands(&self) -> Value {
        self.take("a command registration", |s| match s {
            Sent::Commands(v) => Some(v.clone()),
            _ => None,
        })
        .await
    }

    /// Send a gateway dispatch (op 0) to the connected bot.
    pub fn dispatch(&self, event: &str, d: &Value) {
        let seq = self.shared.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let frame = json!({"op": 0, "s": seq, "t": event, "d": d}).to_string();
        let session = self.shared.session.lock().expect("session");
        let tx = session
            .as_ref()
            .expect("the bot is not connected to the fake gateway");
        tx.send(frame).expect("gateway session alive");
    }

    /// A `MESSAGE_CREATE` payload; `guild` is `None` for a DM.
    pub fn message(
        &self,
        guild: Option<u64>,
        channel: u64,
        author: &FakeUser,
        content: &str,
        mentions: &[&FakeUser],
    ) -> Value {
        let at = rfc3339(self.tick());
        let mut d = json!({
            "id": self.shared.snowflake().to_string(),
            "channel_id": channel.to_string(),
            "author": author.json(),
            "content": content,
            "timestamp": at,
            "edited_timestamp": null,
            "tts": false,
            "mention_everyone": false,
            "mentions": mentions.iter().map(|u| {
                let mut j = u.json();
                if guild.is_some() {
                    j["member"] = u.member(&at);
                }
                j
            }).collect::<Vec<_>>(),
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": false,
            "type": 0,
            "flags": 0,
            "components": [],
            "nonce": self.shared.snowflake().to_string(),
        });
        if let Some(g) = guild {
            d["guild_id"] = json!(g.to_string());
            d["member"] = author.member(&at);
        }
        d
    }

    /// A direct message to the bot; the dispatched payload.
    pub fn dm(&self, channel: u64, author: &FakeUser, content: &str) -> Value {
        let d = self.message(None, channel, author, content, &[]);
        self.dispatch("MESSAGE_CREATE", &d);
        d
    }

    /// A guild message that mentions the bot (`<@bot> text`); the dispatched payload.
    pub fn mention(&self, guild: u64, channel: u64, author: &FakeUser, content: &str) -> Value {
        let bot = self.shared.bot.clone();
        let text = format!("<@{}> {content}", bot.id);
        let d = self.message(Some(guild), channel, author, &text, &[&bot]);
        self.dispatch("MESSAGE_CREATE", &d);
        d
    }

    /// A guild message that does not mention the bot; the dispatched payload.
    pub fn say(&self, guild: u64, channel: u64, author: &FakeUser, content: &str) -> Value {
        let d = self.message(Some(guild), channel, author, content, &[]);
        self.dispatch("MESSAGE_CREATE", &d);
        d
    }

    fn interaction(
        &self,
        kind: u8,
        guild: Option<u64>,
        channel: u64,
        user: &FakeUser,
        data: Value,
    ) -> (Value, String) {
        let at = rfc3339(self.tick());
        let id = self.shared.snowflake();
        let token = format!("aW50ZXJhY3Rpb24.{id}.fake-token");
        let mut d = json!({
            "id": id.to_string(),
            "application_id": self.shared.bot.id.to_string(),
            "type": kind,
            "data": data,
            "channel_id": channel.to_string(),
            "token": token,
            "version": 1,
            "app_permissions": "562949953421311",
            "locale": "en-GB",
            "entitlements": [],
            "attachment_size_limit": 10_485_760,
        });
        match guild {
            Some(g) => {
                d["guild_id"] = json!(g.to_string());
                d["guild_locale"] = json!("en-US");
                let mut member = user.member(&at);
                member["user"] = user.json();
                member["permissions"] = json!("2248473465835073");
                d["member"] = member;
                d["authorizing_integration_owners"] = json!({"0": g.to_string()});
                d["context"] = json!(0);
            }
            None => {
                d["user"] = user.json();
                d["authorizing_integration_owners"] = json!({"0": "0"});
                d["context"] = json!(1);
            }
        }
        (d, token)
    }

    /// `user` presses the button `custom_id` on the bot's message `on`; the interaction token.
    pub fn press(
        &self,
        guild: Option<u64>,
        user: &FakeUser,
        on: &Posted,
        custom_id: &str,
    ) -> String {
        let message = self
            .shared
            .messages
            .lock()
            .expect("messages")
            .iter()
            .find(|(id, _)| *id == on.id)
            .map(|(_, m)| m.clone())
            .expect("a message the bot posted");
        let (mut d, token) = self.interaction(
            3,
            guild,
            on.channel,
            user,
            json!({"custom_id": custom_id, "component_type": 2}),
        );
        d["message"] = message;
        self.dispatch("INTERACTION_CREATE", &d);
        token
    }

    /// `user` runs the slash command `/pair` with `options` (Discord's option
    /// objects, e.g. a subcommand); the interaction token.
    pub fn slash_pair(
        &self,
        guild: Option<u64>,
        channel: u64,
        user: &FakeUser,
        options: Value,
    ) -> String {
        let command_id = self.shared.snowflake();
        let (d, token) = self.interaction(
            2,
            guild,
            channel,
            user,
            json!({"id": command_id.to_string(), "name": "pair", "type": 1, "options": options}),
        );
        self.dispatch("INTERACTION_CREATE", &d);
        token
    }
}

type St = State<Arc<Shared>>;

fn unauthorized(s: &Shared, headers: &HeaderMap) -> Option<Response> {
    let expected = format!("Bot {}", s.token);
    let ok = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == expected);
    (!ok).then(|| {
        (
            StatusCode::UNAUTHORIZED,
            Json(json!({"message": "401: Unauthorized", "code": 0})),
        )
            .into_response()
    })
}

async fn rest_gateway(State(s): St) -> Json<Value> {
    Json(json!({"url": format!("ws://{}/gateway", s.addr)}))
}

async fn rest_gateway_bot(State(s): St, headers: HeaderMap) -> Response {
    if let Some(r) = unauthorized(&s, &headers) {
        return r;
    }
    Json(json!({
        "url": format!("ws://{}/gateway", s.addr),
        "shards": 1,
        "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14_400_000, "max_concurrency": 1},
    }))
    .into_response()
}

async fn rest_me(State(s): St, headers: HeaderMap) -> Response {
    if let Some(r) = unauthorized(&s, &headers) {
        return r;
    }
    let mut me = s.bot.json();
    me["verified"] = json!(true);
    me["mfa_enabled"] = json!(false);
    me["flags"] = json!(0);
    Json(me).into_response()
}

async fn rest_create_message(
    State(s): St,
    Path(channel): Path<u64>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(r) = unauthorized(&s, &headers) {
        return r;
    }
    let (posted, object) = s.post(channel, body);
    s.record(Sent::Message(posted));
    Json(object).into_response()
}

async fn rest_typing(State(s): St, Path(channel): Path<u64>, headers: HeaderMap) -> Response {
    if let Some(r) = unauthorized(&s, &headers) {
        return r;
    }
    s.record(Sent::Typing { channel });
    StatusCode::NO_CONTENT.into_response()
}

async fn rest_callback(
    State(s): St,
    Path((interaction, token)): Path<(u64, String)>,
    Json(body): Json<Value>,
) -> StatusCode {
    s.record(Sent::Callback {
        interaction,
        token,
        body,
    });
    StatusCode::NO_CONTENT
}

fn interaction_channel(token: &str) -> u64 {
    // The fake's tokens carry the interaction id; responses live in a pseudo-channel per interaction.
    token
        .split('.')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

async fn rest_edit_original(
    State(s): St,
    Path((_app, token)): Path<(u64, String)>,
    Json(body): Json<Value>,
) -> Response {
    let (message, object) = s.post(interaction_channel(&token), body);
    s.record(Sent::EditOriginal { token, message });
    Json(object).into_response()
}

async fn rest_followup(
    State(s): St,
    Path((_app, token)): Path<(u64, String)>,
    Json(body): Json<Value>,
) -> Response {
    let (message, object) = s.post(interaction_channel(&token), body);
    s.record(Sent::Followup { token, message });
    Json(object).into_response()
}

async fn rest_commands(
    State(s): St,
    Path(app): Path<u64>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(r) = unauthorized(&s, &headers) {
        return r;
    }
    s.record(Sent::Commands(body.clone()));
    let created: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let mut c = c.clone();
            c["id"] = json!(s.snowflake().to_string());
            c["application_id"] = json!(app.to_string());
            c["version"] = json!(s.snowflake().to_string());
            c["type"] = json!(c["type"].as_u64().unwrap_or(1));
            c["default_member_permissions"] = Value::Null;
            c
        })
        .collect();
    Json(created).into_response()
}

async fn unknown_route(method: Method, uri: Uri) -> Response {
    eprintln!("FAKE DISCORD: UNKNOWN ROUTE {method} {uri} — answered 404");
    (
        StatusCode::NOT_FOUND,
        Json(json!({"message": "404: Not Found", "code": 0})),
    )
        .into_response()
}

async fn gateway(State(s): St, ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(move |socket| session(socket, s))
}

/// One gateway connection: HELLO, then IDENTIFY → READY, HEARTBEAT → ACK, and test dispatches.
async fn session(mut socket: WebSocket, s: Arc<Shared>) {
    let hello =
        json!({"op": 10, "s": null, "t": null, "d": {"heartbeat_interval": HEARTBEAT_INTERVAL_MS}});
    if socket
        .send(WsMessage::Text(hello.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    loop {
        let incoming = tokio::select! {
            m = socket.recv() => m,
            Some(out) = rx.recv() => {
                if socket.send(WsMessage::Text(out.into())).await.is_err() {
                    break;
                }
                continue;
            }
        };
        let text = match incoming {
            Some(Ok(WsMessage::Text(t))) => t.to_string(),
            Some(Ok(WsMessage::Close(frame))) => {
                let code = frame.map(|f| f.code);
                s.closes.send_modify(|c| c.push(code));
                break;
            }
            Some(Ok(_)) => continue,
            None | Some(Err(_)) => {
                s.closes.send_modify(|c| c.push(None));
                break;
            }
        };
        let Ok(frame) = serde_json::from_str::<Value>(&text) else {
            eprintln!("FAKE DISCORD: gateway frame is not JSON: {text}");
            continue;
        };
        match frame["op"].as_u64() {
            // HEARTBEAT
            Some(1) => {
                let ack = json!({"op": 11, "s": null, "t": null, "d": null});
                if socket
                    .send(WsMessage::Text(ack.to_string().into()))
                    .await
                    .is_err()
                {
                    break;
                }
            }
            // IDENTIFY
            Some(2) => {
                let d = frame["d"].clone();
                let token = d["token"].as_str().unwrap_or_default();
                if token.trim_start_matches("Bot ") != s.token {
                    let _ = socket
                        .send(WsMessage::Close(Some(CloseFrame {
                            code: 4004,
                            reason: "Authentication failed.".into(),
                        })))
                        .await;
                    break;
                }
                *s.session.lock().expect("session") = Some(tx.clone());
                let seq = s.seq.fetch_add(1, Ordering::Relaxed) + 1;
                let ready = json!({
                    "op": 0, "s": seq, "t": "READY",
                    "d": {
                        "v": 10,
                        "user": {
                            "id": s.bot.id.to_string(), "username": s.bot.username,
                            "discriminator": "0", "global_name": null, "avatar": null,
                            "bot": true, "verified": true, "mfa_enabled": false, "flags": 0,
                        },
                        "guilds": [],
                        "session_id": format!("fake-session-{seq}"),
                        "resume_gateway_url": format!("ws://{}/gateway", s.addr),
                        "shard": [0, 1],
                        "application": {"id": s.bot.id.to_string(), "flags": 0},
                    }
                });
                if socket
                    .send(WsMessage::Text(ready.to_string().into()))
                    .await
                    .is_err()
                {
                    break;
                }
                s.identifies.send_modify(|v| v.push(d));
            }
            // RESUME: this fake keeps no sessions; ask for a fresh IDENTIFY.
            Some(6) => {
                let invalid = json!({"op": 9, "s": null, "t": null, "d": false});
                if socket
                    .send(WsMessage::Text(invalid.to_string().into()))
                    .await
                    .is_err()
                {
                    break;
                }
            }
            // Presence updates and the like: accepted, nothing to do.
            _ => {}
        }
    }
}

/// The real turn loop behind a recorder: each finished turn (what the adapter
/// made of the event, and what the loop answered) can be awaited.
pub struct RecordingTurns {
    inner: Arc<dyn TurnHandler>,
    log: watch::Sender<Vec<(Inbound, Vec<Reply>)>>,
    taken: Mutex<HashSet<usize>>,
}

impl RecordingTurns {
    pub fn new(inner: Arc<dyn TurnHandler>) -> Arc<RecordingTurns> {
        Arc::new(RecordingTurns {
            inner,
            log: watch::channel(Vec::new()).0,
            taken: Mutex::new(HashSet::new()),
        })
    }

    /// Every finished turn so far.
    pub fn turns(&self) -> Vec<(Inbound, Vec<Reply>)> {
        self.log.borrow().clone()
    }

    /// Wait for the finished turn of the platform message `platform_id`.
    pub async fn turn_of(&self, platform_id: &str) -> (Inbound, Vec<Reply>) {
        let mut rx = self.log.subscribe();
        let found = async {
            loop {
                {
                    let log = rx.borrow_and_update();
                    let mut taken = self.taken.lock().expect("taken");
                    let hit = log.iter().enumerate().find(|(i, (m, _))| {
                        !taken.contains(i) && m.platform_id.as_deref() == Some(platform_id)
                    });
                    if let Some((i, t)) = hit {
                        taken.insert(i);
                        return t.clone();
                    }
                }
                rx.changed().await.expect("recorder alive");
            }
        };
        match tokio::time::timeout(WAIT, found).await {
            Ok(t) => t,
            Err(_) => panic!(
                "no turn ran for Discord event {platform_id}; turns: {:#?}",
                self.turns()
            ),
        }
    }
}

#[async_trait::async_trait]
impl TurnHandler for RecordingTurns {
    async fn handle(&self, msg: Inbound) -> Result<Vec<Reply>, TurnFailed> {
        let replies = self.inner.handle(msg.clone()).await?;
        self.log.send_modify(|l| l.push((msg, replies.clone())));
        Ok(replies)
    }

    async fn handle_new(&self, msg: Inbound) -> Result<Vec<Reply>, TurnFailed> {
        let replies = self.inner.handle_new(msg.clone()).await?;
        self.log.send_modify(|l| l.push((msg, replies.clone())));
        Ok(replies)
    }
}

/// The snowflake id of a dispatched payload.
pub fn id_of(payload: &Value) -> String {
    payload["id"].as_str().expect("payload id").to_string()
}
