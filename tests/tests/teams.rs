//! The Teams outgoing webhook at the wire: the real server (`steward::http::app`)
//! on a real socket, requests signed as Teams signs them, late replies posted to
//! a fake Teams Workflows webhook.

use memory::{Db, Role};
use serde_json::{json, Value};
use std::time::Duration;
use steward::channels::{self, ConversationRef, Delivered, DeliveryError};
use steward::http::{app, AppState};
use steward::Config;
use steward_tests::teams_signer::{
    card_text, new_token, sign, sign_with_key, FakeWorkflows, Refusal,
};
use steward_tests::Harness;
use tower::ServiceExt;

const CHANNEL_THREAD: &str = "19:general@thread.tacv2;messageid=1700000000000";
const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
/// The team channel `activity` posts in (`channelData.channel.id`).
const GENERAL: &str = "19:general@thread.tacv2";

struct Teams {
    h: Harness,
    base: String,
    token: String,
    client: reqwest::Client,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Teams {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The real HTTP app with the Teams channel on, on 127.0.0.1:0.
async fn start(cfg: Config) -> Teams {
    start_on(Db::in_memory().await.unwrap(), cfg).await
}

/// The real HTTP app with the Teams channel on, on `db`.
async fn start_on(db: Db, mut cfg: Config) -> Teams {
    let token = new_token();
    cfg.teams.security_token = Some(token.clone());
    let h = Harness::on(db, cfg);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = app(AppState::new(h.services.clone()));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Teams {
        h,
        base: format!("http://{addr}"),
        token,
        client: reqwest::Client::new(),
        server,
    }
}

/// A Teams `message` activity from `aad` in the general channel's thread.
fn activity(id: &str, aad: &str, name: &str, text: &str) -> Value {
    json!({
        "type": "message",
        "id": id,
        "timestamp": "2026-01-05T10:00:00.000Z",
        "localTimestamp": "2026-01-05T11:00:00.000+01:00",
        "serviceUrl": "https://smba.trafficmanager.net/emea/",
        "channelId": "msteams",
        "from": {"id": format!("29:{aad}-bf"), "name": name, "aadObjectId": aad},
        "conversation": {
            "isGroup": true,
            "conversationType": "channel",
            "id": CHANNEL_THREAD,
            "tenantId": TENANT
        },
        "recipient": null,
        "textFormat": "plain",
        "text": text,
        "attachments": [{"contentType": "text/html", "content": format!("<div>{text}</div>")}],
        "entities": [{"type": "clientInfo", "locale": "en-US"}],
        "channelData": {
            "teamsChannelId": "19:general@thread.tacv2",
            "teamsTeamId": "19:team@thread.tacv2",
            "channel": {"id": "19:general@thread.tacv2"},
            "team": {"id": "19:team@thread.tacv2"},
            "tenant": {"id": TENANT}
        }
    })
}

impl Teams {
    async fn pair(&self, org: &str, aad: &str, role: Role) {
        self.h
            .services
            .pairing()
            .add_user(org, &format!("teams:{aad}"), aad, role, "test", 1)
            .await
            .unwrap();
    }

    /// POST raw bytes to `path` with an optional Authorization header.
    async fn post_raw(&self, path: &str, body: Vec<u8>, auth: Option<String>) -> (u16, Value) {
        let mut req = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let body = resp.json().await.unwrap_or(Value::Null);
        (status, body)
    }

    /// POST an activity to `/teams/default`, signed with the configured token.
    async fn send(&self, activity: &Value) -> (u16, Value) {
        let body = serde_json::to_vec(activity).unwrap();
        let auth = sign(&body, &self.token);
        self.post_raw("/teams/default", body, Some(auth)).await
    }

    /// The synchronous reply text of a signed activity (asserting 200 and the message shape).
    async fn say(&self, activity: &Value) -> String {
        let (status, body) = self.send(activity).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["type"], "message", "{body}");
        body["text"].as_str().unwrap().to_string()
    }

    async fn count(&self, table: &str) -> i64 {
        self.h.db().row_count(table).await.unwrap()
    }

    /// Assert nothing at all was stored: no message, no dedupe mark, no record.
    async fn assert_nothing_stored(&self, what: &str) {
        assert_eq!(
            self.count("messages").await,
            0,
            "{what}: a message was stored"
        );
        assert_eq!(
            self.count("seen_messages").await,
            0,
            "{what}: the activity id was marked seen"
        );
        assert!(
            self.h.records().await.is_empty(),
            "{what}: memory was written"
        );
    }
}

#[tokio::test]
async fn a_signed_admin_teaches_and_a_signed_user_is_served() {
    let t = start(Config::default()).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    t.pair("default", "aad-user", Role::User).await;
    let taught = t
        .say(&activity(
            "1001",
            "aad-admin",
            "Ana",
            "<at>steward</at> @notes: The daily report uses example_orders",
        ))
        .await;
    assert!(taught.starts_with("Written: agent_notes"), "{taught}");
    let served = t
        .say(&activity(
            "1002",
            "aad-user",
            "Bob",
            "<at>steward</at>&nbsp;Produce today's daily report",
        ))
        .await;
    assert!(served.contains("example_orders"), "{served}");
    // The user cannot teach, whatever name Teams shows for them.
    let refused = t
        .say(&activity(
            "1003",
            "aad-user",
            "Ana",
            "<at>steward</at> @notes: The daily report uses example_archive",
        ))
        .await;
    assert!(refused.contains("Only administrators"), "{refused}");
    assert!(t.h.records_containing("example_archive").await.is_empty());
    // Stored as the channel identity with its role, in the Teams thread.
    let history =
        t.h.db()
            .conversations()
            .history("default", "default", CHANNEL_THREAD)
            .await
            .unwrap();
    let people: Vec<_> = history
        .iter()
        .filter(|m| m.author == "person")
        .map(|m| (m.sender.clone(), m.sender_role.clone(), m.channel.clone()))
        .collect();
    assert_eq!(
        people,
        vec![
            (
                Some("teams:aad-admin".to_string()),
                Some("admin".to_string()),
                "teams".to_string()
            ),
            (
                Some("teams:aad-user".to_string()),
                Some("user".to_string()),
                "teams".to_string()
            ),
            (
                Some("teams:aad-user".to_string()),
                Some("user".to_string()),
                "teams".to_string()
            ),
        ]
    );
}

#[tokio::test]
async fn requests_without_a_valid_signature_are_401_and_store_nothing() {
    let t = start(Config::default()).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    let act = activity(
        "2001",
        "aad-admin",
        "Ana",
        "<at>steward</at> @notes: The daily report uses example_forged",
    );
    let body = serde_json::to_vec(&act).unwrap();
    let good = sign(&body, &t.token);
    let tampered = String::from_utf8(body.clone())
        .unwrap()
        .replace("example_forged", "example_tamper")
        .into_bytes();
    let raw_token_key = sign_with_key(&body, t.token.as_bytes());
    let truncated = {
        use base64::Engine;
        let sig = good.strip_prefix("HMAC ").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(sig)
            .unwrap();
        format!(
            "HMAC {}",
            base64::engine::general_purpose::STANDARD.encode(&bytes[..16])
        )
    };
    let attempts: Vec<(&str, Vec<u8>, Option<String>)> = vec![
        ("unsigned", body.clone(), None),
        (
            "garbage signature",
            body.clone(),
            Some("HMAC not-base64!".into()),
        ),
        ("empty signature", body.clone(), Some("HMAC ".into())),
        (
            "signed with another token",
            body.clone(),
            Some(sign(&body, &new_token())),
        ),
        (
            "keyed with the token text instead of its decoded bytes",
            body.clone(),
            Some(raw_token_key),
        ),
        ("truncated signature", body.clone(), Some(truncated)),
        (
            "right signature, wrong scheme",
            body.clone(),
            Some(good.replacen("HMAC", "Bearer", 1)),
        ),
        ("body tampered after signing", tampered, Some(good.clone())),
    ];
    for (what, bytes, auth) in attempts {
        let (status, reply) = t.post_raw("/teams/default", bytes, auth).await;
        assert_eq!(status, 401, "{what}: {reply}");
        assert!(reply["error"].is_string(), "{what}: {reply}");
        t.assert_nothing_stored(what).await;
    }
    // The genuine request with the same activity id still runs: the refused
    // ones left no dedupe mark.
    let (status, reply) = t.post_raw("/teams/default", body, Some(good)).await;
    assert_eq!(status, 200);
    assert!(
        reply["text"]
            .as_str()
            .unwrap()
            .starts_with("Written: agent_notes"),
        "{reply}"
    );
    assert_eq!(t.h.records_containing("example_forged").await.len(), 1);
    assert!(t.h.records_containing("example_tamper").await.is_empty());
}

#[tokio::test]
async fn malformed_activities_with_a_valid_signature_are_400_with_a_reason() {
    let t = start(Config::default()).await;
    for (what, body, needle) in [
        (
            "truncated JSON",
            r#"{"type":"message","text":"#,
            "malformed",
        ),
        ("missing text", r#"{"type":"message","id":"3001"}"#, "text"),
        ("missing type", r#"{"text":"hi","id":"3002"}"#, "type"),
        (
            "not a message",
            r#"{"type":"conversationUpdate","text":"","id":"3003"}"#,
            "conversationUpdate",
        ),
    ] {
        let auth = sign(body.as_bytes(), &t.token);
        let (status, reply) = t
            .post_raw("/teams/default", body.as_bytes().to_vec(), Some(auth))
            .await;
        assert_eq!(status, 400, "{what}: {reply}");
        let reason = reply["error"].as_str().unwrap_or_default();
        assert!(reason.contains(needle), "{what}: {reason}");
    }
    t.assert_nothing_stored("malformed").await;
}

#[tokio::test]
async fn an_oversized_body_is_413_and_stores_nothing() {
    let mut cfg = Config::default();
    cfg.teams.max_body_bytes = Some(2048);
    let t = start(cfg).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    let act = activity(
        "4001",
        "aad-admin",
        "Ana",
        &format!("<at>steward</at> @notes: {}", "x".repeat(4096)),
    );
    let (status, reply) = t.send(&act).await;
    assert_eq!(status, 413, "{reply}");
    t.assert_nothing_stored("oversized").await;
    // Without a Content-Length the body is read only up to the limit.
    let big = serde_json::to_vec(&act).unwrap();
    let auth = sign(&big, &t.token);
    let req = axum::http::Request::post("/teams/default")
        .header("authorization", auth)
        .body(axum::body::Body::from(big))
        .unwrap();
    assert!(req.headers().get("content-length").is_none());
    let resp = app(AppState::new(t.h.services.clone()))
        .oneshot(req)
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    t.assert_nothing_stored("oversized, undeclared length")
        .await;
    // Just under the limit is accepted.
    let (status, _) = t
        .send(&activity(
            "4002",
            "aad-admin",
            "Ana",
            "<at>steward</at> hello",
        ))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_redelivered_activity_runs_once() {
    let t = start(Config::default()).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    let act = activity(
        "5001",
        "aad-admin",
        "Ana",
        "<at>steward</at> @notes: The weekly report uses example_weekly",
    );
    let first = t.say(&act).await;
    assert!(first.starts_with("Written: agent_notes"), "{first}");
    let again = t.say(&act).await;
    assert_eq!(
        again, first,
        "a redelivery is answered with the stored reply"
    );
    let inbound =
        t.h.db()
            .conversations()
            .history("default", "default", CHANNEL_THREAD)
            .await
            .unwrap()
            .into_iter()
            .filter(|m| m.author == "person")
            .count();
    assert_eq!(inbound, 1);
    let answers =
        t.h.db()
            .conversations()
            .history("default", "default", CHANNEL_THREAD)
            .await
            .unwrap()
            .into_iter()
            .filter(|m| m.author == "agent")
            .count();
    assert_eq!(answers, 1, "no second turn");
    assert_eq!(t.h.records_containing("example_weekly").await.len(), 1);
}

/// Issue 31, item 6: an activity stored before a crash but not answered was
/// answered with nothing when Teams sent it again (its id was spent). Its
/// turn runs on the redelivery.
#[tokio::test]
async fn a_redelivered_activity_stored_but_never_answered_is_answered() {
    let t = start(Config::default()).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    let text = "@notes: The weekly report uses example_weekly";
    t.h.db()
        .conversations()
        .insert_message_once(
            &memory::store::NewMessage {
                org: "default",
                agent: "default",
                channel: "teams",
                conversation: CHANNEL_THREAD,
                conversation_kind: "group",
                author: "person",
                sender: Some("teams:aad-admin"),
                sender_role: Some("admin"),
                text,
                said_at: 1,
            },
            Some("teams:aad-admin/5002"),
        )
        .await
        .unwrap()
        .expect("stored");
    let act = activity(
        "5002",
        "aad-admin",
        "Ana",
        &format!("<at>steward</at> {text}"),
    );
    let answer = t.say(&act).await;
    assert!(answer.starts_with("Written: agent_notes"), "{answer}");
    assert_eq!(t.say(&act).await, answer, "and the same answer again");
    let lines =
        t.h.db()
            .conversations()
            .history("default", "default", CHANNEL_THREAD)
            .await
            .unwrap();
    assert_eq!(lines.iter().filter(|m| m.author == "person").count(), 1);
    assert_eq!(lines.iter().filter(|m| m.author == "agent").count(), 1);
}

#[tokio::test]
async fn mentions_and_teams_markup_are_stripped_before_the_turn() {
    let t = start(Config::default()).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    let reply = t
        .say(&activity(
            "6001",
            "aad-admin",
            "Ana",
            "<at>steward</at>&nbsp;<p>@notes: The <b>daily</b> report uses example_orders &amp; example_items</p>\n",
        ))
        .await;
    assert!(reply.starts_with("Written: agent_notes"), "{reply}");
    let history =
        t.h.db()
            .conversations()
            .history("default", "default", CHANNEL_THREAD)
            .await
            .unwrap();
    assert_eq!(
        history[0].text,
        "@notes: The daily report uses example_orders & example_items"
    );
    let records = t.h.records_containing("example_orders").await;
    assert_eq!(records.len(), 1);
    assert!(!records[0].content.contains('<'), "{}", records[0].content);
    assert!(
        !records[0].content.contains("steward"),
        "{}",
        records[0].content
    );
}

#[tokio::test]
async fn an_unpaired_teams_sender_is_told_how_to_pair() {
    let t = start(Config::default()).await;
    // One-to-one: the pairing hint.
    let mut dm = activity("7001", "aad-new", "Newcomer", "<at>steward</at> hello");
    dm["conversation"] = json!({"conversationType": "personal", "id": "a:1-personal"});
    let hint = t.say(&dm).await;
    assert!(hint.contains("/pair"), "{hint}");
    // `pair` in a channel: no code where everyone would see it (issue 13).
    let public = t
        .say(&activity(
            "7002",
            "aad-new",
            "Newcomer",
            "<at>steward</at> pair",
        ))
        .await;
    assert!(
        public.contains("only in private") && !public.contains("pairing code is"),
        "{public}"
    );
    // In the one-to-one chat: a code for an administrator, for the Teams identity.
    let mut ask = activity("7004", "aad-new", "Newcomer", "pair");
    ask["conversation"] = json!({"conversationType": "personal", "id": "a:1-personal"});
    let code = t.say(&ask).await;
    assert!(code.contains("Your pairing code is"), "{code}");
    let now = chrono::DateTime::parse_from_rfc3339("2026-01-05T10:00:00Z")
        .unwrap()
        .timestamp_millis();
    let pending =
        t.h.services
            .pairing()
            .pending("default", now)
            .await
            .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].stored_id, "teams:aad-new");
    // Unpaired in a channel: answered, but nothing is learned from them.
    t.say(&activity(
        "7003",
        "aad-new",
        "Newcomer",
        "<at>steward</at> @notes: The daily report uses example_unpaired",
    ))
    .await;
    assert!(t.h.records_containing("example_unpaired").await.is_empty());
}

#[tokio::test]
async fn tenants_map_to_organisations() {
    let mut cfg = Config::default();
    cfg.teams
        .tenant_orgs
        .insert("tenant-acme".into(), "acme".into());
    let t = start(cfg).await;
    t.pair("acme", "aad-admin", Role::Admin).await;
    let mut acme = activity(
        "8001",
        "aad-admin",
        "Ana",
        "<at>steward</at> @notes: The daily report uses example_acme",
    );
    acme["channelData"]["tenant"]["id"] = json!("tenant-acme");
    let reply = t.say(&acme).await;
    assert!(reply.starts_with("Written: agent_notes"), "{reply}");
    let in_acme =
        t.h.db()
            .records()
            .list("acme", &Default::default())
            .await
            .unwrap();
    assert_eq!(in_acme.len(), 1);
    // The same person from another tenant is in the default organisation,
    // where nobody paired them: no admin there.
    let mut other = activity(
        "8002",
        "aad-admin",
        "Ana",
        "<at>steward</at> @notes: The daily report uses example_other",
    );
    other["channelData"]["tenant"]["id"] = json!("tenant-other");
    let reply = t.say(&other).await;
    assert!(!reply.starts_with("Written"), "{reply}");
    assert!(t.h.records().await.is_empty(), "nothing in the default org");
}

#[tokio::test]
async fn a_late_reply_is_acknowledged_then_posted_to_workflows_after_429_and_500() {
    let workflows = FakeWorkflows::start([Refusal::TooManyRequests, Refusal::ServerError]).await;
    let mut cfg = Config::default();
    cfg.teams.reply_deadline_ms = 0;
    cfg.teams.workflows = [(GENERAL.to_string(), workflows.url.clone())].into();
    cfg.teams.workflows_backoff_ms = 1;
    let t = start(cfg).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    let ack = t
        .say(&activity(
            "9001",
            "aad-admin",
            "Ana",
            "<at>steward</at> @notes: The daily report uses example_late",
        ))
        .await;
    assert!(ack.contains("Working on it"), "{ack}");
    assert!(!ack.contains("Written"), "{ack}");
    let post = workflows.next_post().await;
    assert_eq!(post["type"], "message");
    assert_eq!(
        post["attachments"][0]["contentType"],
        "application/vnd.microsoft.card.adaptive"
    );
    assert_eq!(post["attachments"][0]["content"]["type"], "AdaptiveCard");
    let text = card_text(&post);
    assert!(text.starts_with("Written: agent_notes"), "{text}");
    assert_eq!(workflows.statuses(), vec![429, 500, 202]);
    // The message and the reply were stored by the turn loop.
    assert_eq!(t.h.records_containing("example_late").await.len(), 1);
    let history =
        t.h.db()
            .conversations()
            .history("default", "default", CHANNEL_THREAD)
            .await
            .unwrap();
    assert!(history
        .iter()
        .any(|m| m.author == "agent" && m.text == text));
}

#[tokio::test]
async fn a_personal_late_reply_is_never_posted_to_a_channel() {
    let workflows = FakeWorkflows::start([]).await;
    let mut cfg = Config::default();
    cfg.teams.reply_deadline_ms = 0;
    cfg.teams.workflows = [(GENERAL.to_string(), workflows.url.clone())].into();
    let t = start(cfg).await;
    t.pair("default", "aad-user", Role::User).await;
    let mut dm = activity(
        "9101",
        "aad-user",
        "Bob",
        "remember that my badge number is 4711",
    );
    dm["conversation"] = json!({"conversationType": "personal", "id": "a:1-personal"});
    let ack = t.say(&dm).await;
    assert!(ack.contains("will not appear here"), "{ack}");
    // A channel message after it is delivered; it is the first post the fake saw.
    t.say(&activity(
        "9102",
        "aad-user",
        "Bob",
        "<at>steward</at> what is the daily report?",
    ))
    .await;
    let post = workflows.next_post().await;
    assert!(!card_text(&post).contains("4711"), "{post}");
    assert_eq!(workflows.statuses(), vec![202]);
}

#[tokio::test]
async fn workflows_posts_retry_a_bounded_number_of_times_and_not_on_4xx() {
    let client = reqwest::Client::new();
    let failing = FakeWorkflows::start([Refusal::ServerError; 5]).await;
    let e = adapters::teams::post_to_workflows(
        &client,
        &failing.url,
        "hello",
        3,
        Duration::from_millis(1),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("3 attempts"), "{e}");
    assert_eq!(failing.statuses(), vec![500, 500, 500]);
    let refusing = FakeWorkflows::start([Refusal::BadRequest]).await;
    let e = adapters::teams::post_to_workflows(
        &client,
        &refusing.url,
        "hello",
        3,
        Duration::from_millis(1),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("400"), "{e}");
    assert_eq!(refusing.statuses(), vec![400]);
}

#[tokio::test]
async fn the_agent_comes_from_the_path() {
    let t = start(Config::default()).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    let body = serde_json::to_vec(&activity(
        "10001",
        "aad-admin",
        "Ana",
        "<at>it</at> @notes: The VPN host is example_vpn",
    ))
    .unwrap();
    let auth = sign(&body, &t.token);
    let (status, reply) = t.post_raw("/teams/it-agent", body, Some(auth)).await;
    assert_eq!(status, 200, "{reply}");
    let history =
        t.h.db()
            .conversations()
            .history("default", "it-agent", CHANNEL_THREAD)
            .await
            .unwrap();
    assert!(!history.is_empty());
    let body = br#"{"type":"message","text":"x"}"#.to_vec();
    let auth = sign(&body, &t.token);
    let (status, _) = t.post_raw("/teams/..%2Fetc", body, Some(auth)).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn without_a_security_token_there_is_no_teams_endpoint() {
    let h = Harness::new().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = app(AppState::new(h.services.clone()));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let body = br#"{"type":"message","text":"hi"}"#.to_vec();
    let auth = sign(&body, &new_token());
    let resp = reqwest::Client::new()
        .post(format!("http://{addr}/teams/default"))
        .header("authorization", auth)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    server.abort();
}

#[test]
fn teams_config_keys_have_defaults_and_bad_values_name_their_key() {
    let c = Config::from_toml("").unwrap();
    assert_eq!(c.teams.reply_deadline_ms, 4000);
    assert_eq!(c.teams.security_token, None);
    assert_eq!(c.teams.workflows_attempts, 5);
    let e = Config::from_toml("[teams]\nsecurity_token = \"not base64!\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("teams.security_token"), "{e}");
    let e = Config::from_toml("[teams]\nreply_deadline_ms = 6000")
        .unwrap_err()
        .to_string();
    assert!(e.contains("teams.reply_deadline_ms"), "{e}");
    let e = Config::from_toml("[teams]\nworkflows_url = \"ftp://x\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("teams.workflows_url"), "{e}");
    // The one-URL-for-every-channel key is retired, with the way out named.
    let e = Config::from_toml("[teams]\nworkflows_url = \"https://example.invalid/hook\"")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("teams.workflows_url") && e.contains("[teams.workflows]"),
        "{e}"
    );
    let e = Config::from_toml("[teams.workflows]\n\"19:x@thread.tacv2\" = \"ftp://x\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("teams.workflows.19:x@thread.tacv2"), "{e}");
    let c = Config::from_toml(&format!(
        "[teams]\nsecurity_token = \"{}\"\n[teams.workflows]\n\"{GENERAL}\" = \"https://example.invalid/hook\"\n[teams.tenant_orgs]\n\"{TENANT}\" = \"acme\"",
        new_token()
    ))
    .unwrap();
    assert_eq!(
        c.teams.tenant_orgs.get(TENANT).map(String::as_str),
        Some("acme")
    );
}

/// Every late answer used to go to the one configured Workflows channel,
/// whatever channel asked — a pairing code requested in one channel included.
#[tokio::test]
async fn a_late_reply_goes_only_to_its_own_channels_workflows_and_codes_only_in_private() {
    let general = FakeWorkflows::start([]).await;
    let mut cfg = Config::default();
    cfg.teams.reply_deadline_ms = 0;
    cfg.teams.workflows = [(GENERAL.to_string(), general.url.clone())].into();
    let t = start(cfg).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    // Another channel, not mapped: acknowledged, never posted (to general or anywhere).
    let mut elsewhere = activity(
        "9201",
        "aad-admin",
        "Ana",
        "<at>steward</at> @notes: The finance report uses example_private",
    );
    elsewhere["channelData"]["channel"]["id"] = json!("19:finance@thread.tacv2");
    elsewhere["conversation"]["id"] = json!("19:finance@thread.tacv2;messageid=2");
    let ack = t.say(&elsewhere).await;
    assert!(ack.contains("will not appear here"), "{ack}");
    // An unpaired person asks for a code in the mapped channel: told to ask in private.
    let code = t
        .say(&activity(
            "9202",
            "aad-new",
            "Eve",
            "<at>steward</at> /pair",
        ))
        .await;
    assert!(code.contains("Working on it"), "{code}");
    // The general channel's own late reply is the first post its webhook sees.
    t.say(&activity(
        "9203",
        "aad-admin",
        "Ana",
        "<at>steward</at> what is the finance report?",
    ))
    .await;
    let first = card_text(&general.next_post().await);
    let second = card_text(&general.next_post().await);
    for text in [&first, &second] {
        assert!(
            !text.contains("Written: agent_notes"),
            "another channel's reply: {text}"
        );
        assert!(
            !text.contains("pairing code is"),
            "a code in a channel: {text}"
        );
    }
    assert!(
        [&first, &second]
            .iter()
            .any(|t| t.contains("direct message")),
        "{first} / {second}"
    );
    assert_eq!(general.statuses(), vec![202, 202]);
}

/// Many signed turns at once on a SQLite file: when each answer arrives,
/// another connection to the file already reads the message it answers and
/// the answer's own line. An answer sent before its lines were committed (a
/// write left to finish later) would fail here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answered_activity_is_stored_before_its_answer_arrives() {
    let (db, dir) = steward_tests::sqlite_file_db().await;
    let url = format!("sqlite:{}", dir.path().join("steward.db").display());
    let mut cfg = Config::default();
    cfg.rate_limit.sender_burst = 1_000;
    cfg.rate_limit.conversation_burst = 1_000;
    let t = start_on(db, cfg).await;
    const PEOPLE: usize = 8;
    const EACH: usize = 12;
    for p in 0..PEOPLE {
        t.pair("default", &format!("aad-{p}"), Role::User).await;
    }
    let reader = Db::connect(&url).await.unwrap();
    let mut people = Vec::new();
    for p in 0..PEOPLE {
        let (client, base, token, reader) = (
            t.client.clone(),
            t.base.clone(),
            t.token.clone(),
            reader.clone(),
        );
        people.push(tokio::spawn(async move {
            for i in 0..EACH {
                let text = format!("Where is the handover note {p}x{i}?");
                let act = activity(
                    &format!("7{p:02}{i:03}"),
                    &format!("aad-{p}"),
                    "Load",
                    &format!("<at>steward</at> {text}"),
                );
                let body = serde_json::to_vec(&act).unwrap();
                let resp = client
                    .post(format!("{base}/teams/default"))
                    .header("content-type", "application/json")
                    .header("authorization", sign(&body, &token))
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status(), 200);
                let answer: Value = resp.json().await.unwrap();
                let answer = answer["text"].as_str().unwrap().to_string();
                assert!(!answer.is_empty());
                // Read at once, from another connection.
                let lines = reader
                    .conversations()
                    .history("default", "default", CHANNEL_THREAD)
                    .await
                    .unwrap();
                let asked = lines
                    .iter()
                    .find(|m| m.author == "person" && m.text == text)
                    .unwrap_or_else(|| panic!("{text}: answered but not stored"));
                assert_eq!(
                    asked.sender.as_deref(),
                    Some(format!("teams:aad-{p}").as_str())
                );
                assert!(
                    lines
                        .iter()
                        .any(|m| m.author == "agent" && m.id > asked.id && m.text == answer),
                    "{text}: the answer was sent before it was stored"
                );
            }
        }));
    }
    for p in people {
        p.await.unwrap();
    }
    let asked = reader
        .conversations()
        .history("default", "default", CHANNEL_THREAD)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.author == "person")
        .count();
    assert_eq!(asked, PEOPLE * EACH);
    reader.close().await;
}

/// The speaker is looked up on every turn (with the dedupe check, in one
/// read, nothing cached): a role change or a revocation holds from the very
/// next activity.
#[tokio::test]
async fn a_role_change_and_a_revocation_hold_from_the_next_turn() {
    let t = start(Config::default()).await;
    t.pair("default", "aad-ana", Role::Admin).await;
    let taught = t
        .say(&activity(
            "8001",
            "aad-ana",
            "Ana",
            "<at>steward</at> @notes: The daily report uses example_first",
        ))
        .await;
    assert!(taught.starts_with("Written: agent_notes"), "{taught}");
    let pairing = t.h.services.pairing();
    pairing
        .set_role("default", "teams:aad-ana", Role::User, "test", 2)
        .await
        .unwrap();
    let refused = t
        .say(&activity(
            "8002",
            "aad-ana",
            "Ana",
            "<at>steward</at> @notes: The daily report uses example_second",
        ))
        .await;
    assert!(refused.contains("Only administrators"), "{refused}");
    pairing
        .set_role("default", "teams:aad-ana", Role::Admin, "test", 3)
        .await
        .unwrap();
    pairing
        .revoke("default", "teams:aad-ana", "test", 4)
        .await
        .unwrap();
    let revoked = t
        .say(&activity(
            "8003",
            "aad-ana",
            "Ana",
            "<at>steward</at> @notes: The daily report uses example_third",
        ))
        .await;
    assert!(!revoked.starts_with("Written"), "{revoked}");
    assert!(t.h.records_containing("example_second").await.is_empty());
    assert!(t.h.records_containing("example_third").await.is_empty());
    // Stored with the role each was sent with: admin, user, then nobody's.
    let roles: Vec<_> =
        t.h.db()
            .conversations()
            .history("default", "default", CHANNEL_THREAD)
            .await
            .unwrap()
            .into_iter()
            .filter(|m| m.author == "person")
            .map(|m| m.sender_role)
            .collect();
    assert_eq!(
        roles,
        vec![Some("admin".to_string()), Some("user".to_string()), None]
    );
}

/// `deliver` posts to the Workflows webhook of the conversation's Teams
/// channel; a conversation whose channel has none gets nothing, and says so.
#[tokio::test]
async fn deliver_posts_to_the_workflows_webhook_of_the_conversations_channel() {
    let general = FakeWorkflows::start([]).await;
    let finance = FakeWorkflows::start([]).await;
    let mut cfg = Config::default();
    cfg.teams.workflows = [
        (GENERAL.to_string(), general.url.clone()),
        ("19:finance@thread.tacv2".to_string(), finance.url.clone()),
    ]
    .into();
    let t = start(cfg).await;
    let to = |conversation: &str| ConversationRef {
        org: "default".into(),
        agent: "default".into(),
        conversation: conversation.into(),
    };
    let text = "The weekly report is ready.";
    let delivered = channels::deliver(&t.h.services, "teams", &to(CHANNEL_THREAD), text)
        .await
        .expect("delivered");
    assert_eq!(delivered, Delivered::Posted { ids: Vec::new() });
    assert_eq!(card_text(&general.next_post().await), text);
    // A personal chat has no webhook: an error, and nothing posted anywhere.
    let e = channels::deliver(&t.h.services, "teams", &to("a:1-personal"), text)
        .await
        .expect_err("no webhook");
    assert!(
        matches!(&e, DeliveryError::NoRoute { why, .. } if why.contains("no Workflows webhook")),
        "{e}"
    );
    assert_eq!(general.statuses(), vec![202]);
    assert!(finance.statuses().is_empty());
}

/// Teams names every user's message by `from.aadObjectId`. A signed activity
/// with it empty is not read as `from.id` (another key for the same person,
/// or someone else's), and one with no `from` is not processed as nobody's:
/// both are 400, and nothing is stored.
#[tokio::test]
async fn an_activity_without_its_senders_aad_id_is_refused_not_reread() {
    let t = start(Config::default()).await;
    t.pair("default", "aad-admin", Role::Admin).await;
    let mut empty = activity(
        "a-1",
        "aad-admin",
        "Mara",
        "@notes: The VPN is at vpn.example.com",
    );
    empty["from"]["aadObjectId"] = json!("");
    empty["from"]["id"] = json!("aad-admin");
    let mut missing = activity(
        "a-2",
        "aad-admin",
        "Mara",
        "@notes: The VPN is at vpn.example.com",
    );
    missing.as_object_mut().unwrap().remove("from");
    for (what, a) in [("empty aadObjectId", empty), ("no from", missing)] {
        let (status, body) = t.send(&a).await;
        assert_eq!(status, 400, "{what}: {body}");
        assert!(
            body.to_string().contains("aadObjectId") || body.to_string().contains("from"),
            "{what}: {body}"
        );
    }
    assert!(t.h.records().await.is_empty());
    assert_eq!(t.h.db().row_count("messages").await.unwrap(), 0);
}
