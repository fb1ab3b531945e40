//! The Bot Framework at the wire, for Teams as a bot: a token issuer with
//! its own RSA signing keys (`tests/fixtures/bot_framework/*.pem`, made
//! with `openssl genrsa 2048` for these tests only) publishing them as the
//! real one does — an OpenID metadata document whose `jwks_uri` lists them,
//! each with the channels it endorses — and signing the JWTs the Bot
//! Framework sends a bot; the OAuth 2.0 token endpoint that hands the bot its
//! connector tokens (client credentials); and the connector
//! (`POST {serviceUrl}/v3/conversations/{id}/activities`), which checks those
//! tokens and records every activity the bot posts. Activities are shaped as
//! Teams sends them (personal chats, channel threads, `conversationUpdate`).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Mutex as AsyncMutex};

/// The issuer of the Bot Framework's tokens to bots.
pub const ISSUER: &str = "https://api.botframework.com";

/// The scope a bot must ask its connector token for.
pub const SCOPE: &str = "https://api.botframework.com/.default";

/// The bot's app registration in these tests.
pub const APP_ID: &str = "9a7f3c2e-5b1d-4e8a-b6c4-0d2e1f3a5b7c";
pub const APP_PASSWORD: &str = "Zq8~x3Tq.fake-client-secret-for-tests~9";

/// The tenant every test person belongs to.
pub const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";

/// The bot's own account in Teams.
pub fn bot_id() -> String {
    format!("28:{APP_ID}")
}

/// A signing key of the fake issuer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SigningKey {
    /// Published from the start (kid `issuer-key-1`).
    Current,
    /// Published after [`FakeBotFramework::rotate`] (kid `issuer-key-2`).
    Rotated,
    /// Never published: a forger's key.
    Forger,
}

impl SigningKey {
    pub fn kid(self) -> &'static str {
        match self {
            SigningKey::Current => "issuer-key-1",
            SigningKey::Rotated => "issuer-key-2",
            SigningKey::Forger => "forger-key",
        }
    }

    fn pem(self) -> &'static str {
        match self {
            SigningKey::Current => include_str!("../fixtures/bot_framework/issuer.pem"),
            SigningKey::Rotated => include_str!("../fixtures/bot_framework/rotated.pem"),
            SigningKey::Forger => include_str!("../fixtures/bot_framework/forger.pem"),
        }
    }

    fn encoding(self) -> EncodingKey {
        EncodingKey::from_rsa_pem(self.pem().as_bytes()).expect("a test RSA key")
    }

    /// The public half as a JWK, as the metadata's `jwks_uri` lists it.
    fn jwk(self) -> Value {
        let jwk = Jwk::from_encoding_key(&self.encoding(), Algorithm::RS256).expect("a JWK");
        let mut v = serde_json::to_value(jwk).expect("JWK as JSON");
        v["kid"] = json!(self.kid());
        v["use"] = json!("sig");
        v["endorsements"] = json!(["msteams", "webchat"]);
        v
    }
}

/// The claims of a token the Bot Framework sends with an activity, as
/// numbers of seconds relative to `now` where they are times.
#[derive(Debug, Clone)]
pub struct Claims {
    pub iss: String,
    pub aud: String,
    /// Seconds from now (negative: past).
    pub exp_in: i64,
    pub nbf_in: i64,
    pub serviceurl: Option<String>,
}

/// How the connector answers one post before it starts accepting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scripted {
    /// 429 with `Retry-After: <seconds>`.
    TooManyRequests { retry_after_secs: u64 },
    /// 503 without `Retry-After`.
    Unavailable,
}

/// One activity the bot posted, as the connector took it.
#[derive(Debug, Clone)]
pub struct Posted {
    /// The conversation of the URL it was posted to.
    pub conversation: String,
    pub activity: Value,
    /// The id the connector gave it.
    pub id: String,
    pub at: Instant,
}

impl Posted {
    pub fn kind(&self) -> &str {
        self.activity["type"].as_str().unwrap_or_default()
    }
    pub fn text(&self) -> &str {
        self.activity["text"].as_str().unwrap_or_default()
    }
    pub fn reply_to(&self) -> Option<&str> {
        self.activity["replyToId"].as_str()
    }
}

struct FakeState {
    /// Where it listens, `http://127.0.0.1:<port>`.
    base: String,
    now: Box<dyn Fn() -> i64 + Send + Sync>,
    rotated: AtomicBool,
    metadata_fetches: AtomicU64,
    tokens: Mutex<HashSet<String>>,
    token_requests: AtomicU64,
    script: Mutex<VecDeque<Scripted>>,
    statuses: Mutex<Vec<(u16, Instant)>>,
    posted: Mutex<Vec<Posted>>,
    next_id: AtomicU64,
    tx: mpsc::UnboundedSender<Posted>,
}

/// The token issuer, the token endpoint and the connector, on 127.0.0.1.
pub struct FakeBotFramework {
    /// `[teams_bot] openid_metadata_url`.
    pub openid_metadata_url: String,
    /// `[teams_bot] token_endpoint`.
    pub token_endpoint: String,
    /// The `serviceUrl` of every activity (with its trailing `/`, as Teams').
    pub service_url: String,
    state: Arc<FakeState>,
    received: AsyncMutex<mpsc::UnboundedReceiver<Posted>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeBotFramework {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeBotFramework {
    /// Start it; `now` is the clock (ms) its tokens are dated by: steward's.
    pub async fn start(now: impl Fn() -> i64 + Send + Sync + 'static) -> FakeBotFramework {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake Bot Framework");
        let base = format!("http://{}", listener.local_addr().expect("local addr"));
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Arc::new(FakeState {
            base: base.clone(),
            now: Box::new(now),
            rotated: AtomicBool::new(false),
            metadata_fetches: AtomicU64::new(0),
            tokens: Mutex::new(HashSet::new()),
            token_requests: AtomicU64::new(0),
            script: Mutex::new(VecDeque::new()),
            statuses: Mutex::new(Vec::new()),
            posted: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1_767_700_000_000),
            tx,
        });
        let app = Router::new()
            .route("/v1/.well-known/openidconfiguration", get(metadata))
            .route("/v1/.well-known/keys", get(keys))
            .route("/botframework.com/oauth2/v2.0/token", post(token))
            .route(
                "/teams/v3/conversations/{conversation}/activities",
                post(activity),
            )
            .with_state(state.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeBotFramework {
            openid_metadata_url: format!("{base}/v1/.well-known/openidconfiguration"),
            token_endpoint: format!("{base}/botframework.com/oauth2/v2.0/token"),
            service_url: format!("{base}/teams/"),
            state,
            received: AsyncMutex::new(rx),
            server,
        }
    }

    /// Publish the rotated key beside the current one.
    pub fn rotate(&self) {
        self.state.rotated.store(true, Ordering::Relaxed);
    }

    /// How many times the metadata document was read (each key fetch reads it).
    pub fn metadata_fetches(&self) -> u64 {
        self.state.metadata_fetches.load(Ordering::Relaxed)
    }

    /// How many connector tokens the bot asked for.
    pub fn token_requests(&self) -> u64 {
        self.state.token_requests.load(Ordering::Relaxed)
    }

    /// The claims of a good token for an activity at this fake's service URL.
    pub fn claims(&self) -> Claims {
        Claims {
            iss: ISSUER.into(),
            aud: APP_ID.into(),
            exp_in: 3600,
            nbf_in: -300,
            serviceurl: Some(self.service_url.clone()),
        }
    }

    /// `claims` signed RS256 by `key`, naming `kid` as its key.
    pub fn sign(&self, key: SigningKey, kid: &str, claims: &Claims) -> String {
        let now = (self.state.now)() / 1000;
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(kid.into());
        let mut body = json!({
            "iss": claims.iss,
            "aud": claims.aud,
            "exp": now + claims.exp_in,
            "nbf": now + claims.nbf_in,
        });
        if let Some(url) = &claims.serviceurl {
            body["serviceurl"] = json!(url);
        }
        jsonwebtoken::encode(&header, &body, &key.encoding()).expect("signed")
    }

    /// The `Authorization` value of a good request.
    pub fn bearer(&self) -> String {
        let kid = SigningKey::Current.kid();
        format!(
            "Bearer {}",
            self.sign(SigningKey::Current, kid, &self.claims())
        )
    }

    /// Script the connector's next answers.
    pub fn script(&self, more: impl IntoIterator<Item = Scripted>) {
        self.state.script.lock().expect("script").extend(more);
    }

    /// The connector's answers so far: status and when.
    pub fn statuses(&self) -> Vec<(u16, Instant)> {
        self.state.statuses.lock().expect("statuses").clone()
    }

    /// Every activity posted so far, typing indicators included.
    pub fn posted(&self) -> Vec<Posted> {
        self.state.posted.lock().expect("posted").clone()
    }

    /// The messages posted so far (no typing indicators).
    pub fn messages(&self) -> Vec<Posted> {
        self.posted()
            .into_iter()
            .filter(|p| p.kind() == "message")
            .collect()
    }

    /// The next message the bot posts (typing indicators passed over). A
    /// guard of 60 s turns a missing post into a failure instead of a hang.
    pub async fn next_message(&self) -> Posted {
        let mut rx = self.received.lock().await;
        loop {
            let posted = tokio::time::timeout(Duration::from_secs(60), rx.recv())
                .await
                .expect("nothing was posted to the fake connector")
                .expect("the fake connector stopped");
            if posted.kind() == "message" {
                return posted;
            }
        }
    }
}

/// A person in the test tenant.
#[derive(Debug, Clone)]
pub struct Person {
    pub name: String,
    /// Their Azure AD object id.
    pub aad: String,
}

impl Person {
    pub fn new(name: &str, n: u8) -> Person {
        Person {
            name: name.into(),
            aad: format!("00000000-0000-4000-8000-0000000000{n:02x}"),
        }
    }

    /// Their stored id: the same through the webhook and the bot.
    pub fn stored(&self) -> String {
        format!("teams:{}", self.aad)
    }

    /// Their personal chat with the bot.
    pub fn chat(&self) -> String {
        format!("a:1personal-{}", self.aad)
    }

    fn account(&self) -> Value {
        json!({
            "id": format!("29:1user-{}", self.aad),
            "name": self.name,
            "aadObjectId": self.aad
        })
    }
}

/// A fresh activity id (Teams' are milliseconds-like numbers).
pub fn activity_id() -> String {
    static N: AtomicU64 = AtomicU64::new(1_767_603_600_000);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

impl FakeBotFramework {
    /// What every activity carries, dated now by the fake's clock.
    fn envelope(&self, kind: &str, id: &str) -> Value {
        let now = chrono::DateTime::from_timestamp_millis((self.state.now)()).unwrap_or_default();
        json!({
            "type": kind,
            "id": id,
            "timestamp": now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "localTimestamp": now.to_rfc3339_opts(chrono::SecondsFormat::Millis, false),
            "serviceUrl": self.service_url,
            "channelId": "msteams",
            "recipient": {"id": bot_id(), "name": "steward"},
            "locale": "en-US"
        })
    }
}

impl FakeBotFramework {
    /// `person` writes `text` in their personal chat with the bot.
    pub fn personal(&self, person: &Person, text: &str) -> Value {
        let mut a = self.envelope("message", &activity_id());
        a["from"] = person.account();
        a["conversation"] = json!({
            "conversationType": "personal",
            "tenantId": TENANT,
            "id": person.chat()
        });
        a["text"] = json!(text);
        a["textFormat"] = json!("plain");
        a["entities"] =
            json!([{"type": "clientInfo", "locale": "en-US", "country": "US", "platform": "Web"}]);
        a["channelData"] = json!({"tenant": {"id": TENANT}});
        a
    }

    /// `person` @mentions the bot in team channel `channel`
    /// (`19:…@thread.tacv2`): a new post, or a reply in the thread of post
    /// `root`. The activity's id is its message id.
    pub fn channel_mention(
        &self,
        person: &Person,
        channel: &str,
        root: Option<&str>,
        text: &str,
    ) -> Value {
        let id = activity_id();
        let root = root.unwrap_or(&id).to_string();
        let mut a = self.envelope("message", &id);
        a["from"] = person.account();
        a["conversation"] = json!({
            "isGroup": true,
            "conversationType": "channel",
            "tenantId": TENANT,
            "id": format!("{channel};messageid={root}")
        });
        a["text"] = json!(format!("<at>steward</at> {text}"));
        a["textFormat"] = json!("plain");
        a["entities"] = json!([{
            "type": "mention",
            "text": "<at>steward</at>",
            "mentioned": {"id": bot_id(), "name": "steward"}
        }]);
        a["channelData"] = json!({
            "teamsChannelId": channel,
            "teamsTeamId": "19:team-general@thread.tacv2",
            "channel": {"id": channel},
            "team": {"id": "19:team-general@thread.tacv2"},
            "tenant": {"id": TENANT}
        });
        a
    }

    /// `person` writes in group chat `chat` (`19:…@thread.v2`), mentioning
    /// the bot or not.
    pub fn group_chat(&self, person: &Person, chat: &str, text: &str, mention: bool) -> Value {
        let mut a = self.envelope("message", &activity_id());
        a["from"] = person.account();
        a["conversation"] = json!({
            "isGroup": true,
            "conversationType": "groupChat",
            "tenantId": TENANT,
            "id": chat
        });
        a["textFormat"] = json!("plain");
        a["channelData"] = json!({"tenant": {"id": TENANT}});
        if mention {
            a["text"] = json!(format!("<at>steward</at> {text}"));
            a["entities"] = json!([{
                "type": "mention",
                "text": "<at>steward</at>",
                "mentioned": {"id": bot_id(), "name": "steward"}
            }]);
        } else {
            a["text"] = json!(text);
        }
        a
    }

    /// Forget every connector token handed out (as a revocation would): the
    /// next post with one is refused 401.
    pub fn revoke_tokens(&self) {
        self.state.tokens.lock().expect("tokens").clear();
    }

    /// The bot added to the team whose general channel is `channel`.
    pub fn bot_added(&self, channel: &str) -> Value {
        let mut a = self.envelope("conversationUpdate", &activity_id());
        a["from"] =
            json!({"id": "29:1installer", "aadObjectId": "00000000-0000-4000-8000-0000000000ff"});
        a["membersAdded"] = json!([{"id": bot_id()}]);
        a["conversation"] = json!({
            "isGroup": true,
            "conversationType": "channel",
            "tenantId": TENANT,
            "id": channel
        });
        a["channelData"] = json!({
            "team": {"id": channel, "name": "Operations"},
            "eventType": "teamMemberAdded",
            "tenant": {"id": TENANT}
        });
        a
    }
}

async fn metadata(State(state): State<Arc<FakeState>>) -> Json<Value> {
    state.metadata_fetches.fetch_add(1, Ordering::Relaxed);
    let base = &state.base;
    Json(json!({
        "issuer": ISSUER,
        "authorization_endpoint": "https://invalid.botframework.com",
        "jwks_uri": format!("{base}/v1/.well-known/keys"),
        "id_token_signing_alg_values_supported": ["RS256"],
        "token_endpoint_auth_methods_supported": ["private_key_jwt"]
    }))
}

async fn keys(State(state): State<Arc<FakeState>>) -> Json<Value> {
    let mut keys = vec![SigningKey::Current.jwk()];
    if state.rotated.load(Ordering::Relaxed) {
        keys.push(SigningKey::Rotated.jwk());
    }
    Json(json!({ "keys": keys }))
}

/// The OAuth 2.0 token endpoint: client credentials for the bot's app.
async fn token(
    State(state): State<Arc<FakeState>>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    state.token_requests.fetch_add(1, Ordering::Relaxed);
    let field = |k: &str| form.get(k).map(String::as_str);
    if field("grant_type") != Some("client_credentials") {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "unsupported_grant_type"})),
        )
            .into_response();
    }
    if field("client_id") != Some(APP_ID) || field("client_secret") != Some(APP_PASSWORD) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({
                "error": "invalid_client",
                "error_description": "AADSTS7000215: Invalid client secret provided."
            })),
        )
            .into_response();
    }
    if field("scope") != Some(SCOPE) {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_scope"})),
        )
            .into_response();
    }
    let access = format!(
        "connector-token-{}",
        state.next_id.fetch_add(1, Ordering::Relaxed)
    );
    state.tokens.lock().expect("tokens").insert(access.clone());
    Json(json!({
        "token_type": "Bearer",
        "expires_in": 3599,
        "ext_expires_in": 3599,
        "access_token": access
    }))
    .into_response()
}

fn answered(state: &FakeState, resp: Response) -> Response {
    state
        .statuses
        .lock()
        .expect("statuses")
        .push((resp.status().as_u16(), Instant::now()));
    resp
}

/// The connector: `POST /v3/conversations/{conversation}/activities`.
async fn activity(
    State(state): State<Arc<FakeState>>,
    Path(conversation): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let known = bearer.is_some_and(|t| state.tokens.lock().expect("tokens").contains(&t));
    if !known {
        let resp = (
            StatusCode::UNAUTHORIZED,
            Json(json!({"message": "Authorization has been denied for this request."})),
        )
            .into_response();
        return answered(&state, resp);
    }
    let Ok(activity) = serde_json::from_str::<Value>(&body) else {
        return answered(&state, StatusCode::BAD_REQUEST.into_response());
    };
    if let Some(scripted) = state.script.lock().expect("script").pop_front() {
        let resp = match scripted {
            Scripted::TooManyRequests { retry_after_secs } => (
                StatusCode::TOO_MANY_REQUESTS,
                [("retry-after", retry_after_secs.to_string())],
            )
                .into_response(),
            Scripted::Unavailable => StatusCode::SERVICE_UNAVAILABLE.into_response(),
        };
        return answered(&state, resp);
    }
    let id = state.next_id.fetch_add(1, Ordering::Relaxed).to_string();
    let posted = Posted {
        conversation,
        activity,
        id: id.clone(),
        at: Instant::now(),
    };
    state.posted.lock().expect("posted").push(posted.clone());
    let resp = answered(
        &state,
        (StatusCode::CREATED, Json(json!({ "id": id }))).into_response(),
    );
    let _ = state.tx.send(posted);
    resp
}
