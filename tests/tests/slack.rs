//! Slack at the wire: the real server (`steward::http::app`) on a real
//! socket, events signed as Slack signs them, answers posted to a fake of
//! Slack's Web API (`chat.postMessage`) that answers as Slack does.

use memory::{Db, Role, Status};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::Duration;
use steward::channels::{Channel, ConversationRef, Delivered};
use steward::http::{app, AppState};
use steward::Config;
use steward_tests::fake_slack::{sign, FakeSlack, Posted, Scripted, Workspace};
use steward_tests::{both_dbs, Harness};

/// The environment variables the `[slack]` section names, set once for this test binary.
const SECRET_ENV: &str = "SLACK_TEST_SIGNING_SECRET";
const TOKEN_ENV: &str = "SLACK_TEST_BOT_TOKEN";
const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
const TOKEN: &str = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy";

const TEAM: &str = "T0ACME";
const GENERAL: &str = "C0GENERAL";

fn secrets_in_the_environment() {
    static SET: Once = Once::new();
    // Only this binary reads these names, and always after this.
    SET.call_once(|| {
        std::env::set_var(SECRET_ENV, SECRET);
        std::env::set_var(TOKEN_ENV, TOKEN);
    });
}

/// A fresh message `ts`: now, with a microsecond part no other message of this binary has.
fn ts() -> String {
    static N: AtomicU64 = AtomicU64::new(100);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{}.{n:06}", chrono::Utc::now().timestamp())
}

fn now() -> String {
    chrono::Utc::now().timestamp().to_string()
}

/// Request headers, by name.
type Headers = Vec<(&'static str, String)>;

struct Slack {
    h: Harness,
    fake: FakeSlack,
    ws: Workspace,
    base: String,
    client: reqwest::Client,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Slack {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The real HTTP app with the Slack channel on, on 127.0.0.1:0, posting to a fake Slack.
async fn start(cfg: Config) -> Slack {
    start_on(Db::in_memory().await.unwrap(), cfg).await
}

async fn start_on(db: Db, mut cfg: Config) -> Slack {
    secrets_in_the_environment();
    let fake = FakeSlack::start(TOKEN, []).await;
    cfg.slack.signing_secret_env = Some(SECRET_ENV.into());
    cfg.slack.bot_token_env = Some(TOKEN_ENV.into());
    cfg.slack.api_base = fake.api_base.clone();
    let h = Harness::on(db, cfg);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = app(AppState::new(h.services.clone()));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Slack {
        h,
        fake,
        ws: Workspace::new(TEAM),
        base: format!("http://{addr}"),
        client: reqwest::Client::new(),
        server,
    }
}

impl Slack {
    async fn pair(&self, user: &str, role: Role) {
        self.h
            .services
            .pairing()
            .add_user("default", &self.ws.stored(user), user, role, "test", 1)
            .await
            .unwrap();
    }

    /// POST `body` to `/slack/events` with `headers`; the status and the body.
    async fn post_raw(&self, body: Vec<u8>, headers: &[(&str, String)]) -> (u16, String) {
        let mut req = self
            .client
            .post(format!("{}/slack/events", self.base))
            .header("content-type", "application/json")
            .body(body);
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        let resp = req.send().await.unwrap();
        (resp.status().as_u16(), resp.text().await.unwrap())
    }

    /// POST an event signed now with the app's secret, plus `extra` headers.
    async fn send_with(&self, event: &Value, extra: &[(&str, String)]) -> (u16, String) {
        let body = serde_json::to_vec(event).unwrap();
        let at = now();
        let mut headers = vec![
            ("x-slack-request-timestamp", at.clone()),
            ("x-slack-signature", sign(SECRET, &at, &body)),
        ];
        headers.extend(extra.iter().cloned());
        self.post_raw(body, &headers).await
    }

    /// POST a signed event; it must be acknowledged with a 200 at once.
    async fn send(&self, event: &Value) {
        let (status, body) = self.send_with(event, &[]).await;
        assert_eq!(status, 200, "{body}");
    }

    /// A direct message from `user` in their DM channel `dm`; the answer posted.
    async fn dm(&self, user: &str, dm: &str, text: &str) -> Posted {
        let ts = ts();
        self.send(&self.ws.dm(&format!("Ev{ts}"), user, dm, &ts, text))
            .await;
        let posted = self.fake.next_post().await;
        assert_eq!(posted.channel, dm, "answered where it was asked");
        assert_eq!(posted.thread_ts, None, "a DM is answered in the DM");
        posted
    }

    async fn count(&self, table: &str) -> i64 {
        self.h.db().row_count(table).await.unwrap()
    }

    /// Nothing at all was stored or posted.
    async fn assert_nothing_happened(&self, what: &str) {
        assert_eq!(
            self.count("messages").await,
            0,
            "{what}: a message was stored"
        );
        assert_eq!(
            self.count("seen_messages").await,
            0,
            "{what}: the message id was spent"
        );
        assert!(
            self.h.records().await.is_empty(),
            "{what}: memory was written"
        );
        assert!(
            self.fake.posted().is_empty(),
            "{what}: something was posted"
        );
    }

    /// The person lines of `conversation`: (sender, text).
    async fn people(&self, conversation: &str) -> Vec<(Option<String>, String)> {
        self.h
            .db()
            .conversations()
            .history("default", "default", conversation)
            .await
            .unwrap()
            .into_iter()
            .filter(|m| m.author == "person")
            .map(|m| (m.sender, m.text))
            .collect()
    }
}

/// Pairing in a direct message, an admin's `@notes:` and a question, on
/// SQLite and PostgreSQL: each person is their workspace and user id.
#[tokio::test]
async fn a_signed_dm_pairs_a_person_who_is_then_answered() {
    for (name, db) in both_dbs().await {
        let s = start_on(db, Config::default()).await;
        s.pair("U0ADMIN", Role::Admin).await;
        let taught = s
            .dm(
                "U0ADMIN",
                "D0ADMIN",
                "@notes: The daily report uses example_orders",
            )
            .await;
        assert!(
            taught.shown().starts_with("Written: agent_notes"),
            "{name}: {}",
            taught.shown()
        );
        // An unpaired person asks for a code, in private …
        let asked = s.dm("U0NEW", "D0NEW", "pair").await.shown();
        let code: String = asked
            .split("code is ")
            .nth(1)
            .and_then(|rest| rest.get(..8))
            .unwrap_or_else(|| panic!("{name}: no code in {asked:?}"))
            .to_string();
        // … which the administrator approves in theirs …
        let approved = s
            .dm("U0ADMIN", "D0ADMIN", &format!("/pair approve {code}"))
            .await
            .shown();
        assert!(approved.contains("paired as user"), "{name}: {approved}");
        // … and the new person is answered from the admin's note.
        let served = s
            .dm("U0NEW", "D0NEW", "Produce today's daily report")
            .await
            .shown();
        assert!(served.contains("example_orders"), "{name}: {served}");
        let new = Some(s.ws.stored("U0NEW"));
        assert_eq!(new.as_deref(), Some("slack:T0ACME:U0NEW"));
        // Kept under that id; the unpaired request was not kept at all.
        assert_eq!(
            s.people("D0NEW").await,
            [(new, "Produce today's daily report".to_string())],
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_mention_in_a_channel_is_answered_in_its_thread() {
    let s = start(Config::default()).await;
    s.pair("U0ADMIN", Role::Admin).await;
    s.pair("U0BOB", Role::User).await;
    let root = ts();
    s.send(&s.ws.mention(
        "Ev1",
        "U0ADMIN",
        GENERAL,
        &root,
        None,
        "@notes: The daily report uses example_orders",
    ))
    .await;
    let receipt = s.fake.next_post().await;
    assert_eq!(receipt.channel, GENERAL);
    assert_eq!(
        receipt.thread_ts.as_deref(),
        Some(root.as_str()),
        "in a thread of its own"
    );
    assert!(
        receipt.shown().starts_with("Written: agent_notes"),
        "{}",
        receipt.shown()
    );
    // A mention within that thread is answered in it.
    s.send(&s.ws.mention(
        "Ev2",
        "U0BOB",
        GENERAL,
        &ts(),
        Some(&root),
        "Produce today's daily report",
    ))
    .await;
    let answer = s.fake.next_post().await;
    assert_eq!(answer.channel, GENERAL);
    assert_eq!(answer.thread_ts.as_deref(), Some(root.as_str()));
    assert!(
        answer.shown().contains("example_orders"),
        "{}",
        answer.shown()
    );
    // The thread is one conversation, each line with its own sender, the mention removed.
    let people = s.people(&format!("{GENERAL}:{root}")).await;
    assert_eq!(
        people,
        [
            (
                Some(s.ws.stored("U0ADMIN")),
                "@notes: The daily report uses example_orders".to_string()
            ),
            (
                Some(s.ws.stored("U0BOB")),
                "Produce today's daily report".to_string()
            ),
        ]
    );
    // A pairing code is never given in a channel.
    s.send(&s.ws.mention("Ev3", "U0NEW", GENERAL, &ts(), None, "pair"))
        .await;
    let refused = s.fake.next_post().await.shown();
    assert!(
        refused.contains("direct message") && !refused.contains("code is"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_bad_signature_or_a_stale_timestamp_is_401_and_nothing_is_stored() {
    let s = start(Config::default()).await;
    s.pair("U0ADMIN", Role::Admin).await;
    let event = s.ws.dm(
        "Ev1",
        "U0ADMIN",
        "D0ADMIN",
        &ts(),
        "@notes: The daily report uses example_forged",
    );
    let body = serde_json::to_vec(&event).unwrap();
    let at = now();
    let good = sign(SECRET, &at, &body);
    let stale = (chrono::Utc::now().timestamp() - 6 * 60).to_string();
    let ahead = (chrono::Utc::now().timestamp() + 6 * 60).to_string();
    let tampered = String::from_utf8(body.clone())
        .unwrap()
        .replace("example_forged", "example_tamper")
        .into_bytes();
    let signed_at = |t: &str| {
        vec![
            ("x-slack-request-timestamp", t.to_string()),
            ("x-slack-signature", sign(SECRET, t, &body)),
        ]
    };
    let attempts: Vec<(&str, Vec<u8>, Headers)> = vec![
        ("unsigned", body.clone(), vec![]),
        (
            "no timestamp",
            body.clone(),
            vec![("x-slack-signature", good.clone())],
        ),
        (
            "no signature",
            body.clone(),
            vec![("x-slack-request-timestamp", at.clone())],
        ),
        (
            "another secret",
            body.clone(),
            vec![
                ("x-slack-request-timestamp", at.clone()),
                ("x-slack-signature", sign("another-secret", &at, &body)),
            ],
        ),
        (
            "a tampered body",
            tampered,
            vec![
                ("x-slack-request-timestamp", at.clone()),
                ("x-slack-signature", good.clone()),
            ],
        ),
        (
            "a truncated signature",
            body.clone(),
            vec![
                ("x-slack-request-timestamp", at.clone()),
                ("x-slack-signature", good[..good.len() - 2].to_string()),
            ],
        ),
        ("a stale timestamp", body.clone(), signed_at(&stale)),
        (
            "a timestamp from the future",
            body.clone(),
            signed_at(&ahead),
        ),
        (
            "another timestamp than signed",
            body.clone(),
            vec![
                ("x-slack-request-timestamp", stale.clone()),
                ("x-slack-signature", good.clone()),
            ],
        ),
    ];
    for (what, body, headers) in attempts {
        let (status, answer) = s.post_raw(body, &headers).await;
        assert_eq!(status, 401, "{what}: {answer}");
    }
    s.assert_nothing_happened("refused requests").await;
    // The same request signed now is taken.
    let (status, _) = s
        .post_raw(
            body.clone(),
            &[
                ("x-slack-request-timestamp", at.clone()),
                ("x-slack-signature", good),
            ],
        )
        .await;
    assert_eq!(status, 200);
    let receipt = s.fake.next_post().await.shown();
    assert!(receipt.starts_with("Written: agent_notes"), "{receipt}");
}

#[tokio::test]
async fn a_signed_body_that_is_no_event_is_400_and_an_oversized_one_413() {
    let mut cfg = Config::default();
    cfg.slack.max_body_bytes = Some(2048);
    let s = start(cfg).await;
    for (what, body) in [
        ("not JSON", b"{\"type\": ".to_vec()),
        ("an unknown type", br#"{"type":"nonsense"}"#.to_vec()),
        (
            "a callback without its event",
            br#"{"type":"event_callback","team_id":"T0ACME"}"#.to_vec(),
        ),
    ] {
        let at = now();
        let sig = sign(SECRET, &at, &body);
        let (status, answer) = s
            .post_raw(
                body,
                &[
                    ("x-slack-request-timestamp", at),
                    ("x-slack-signature", sig),
                ],
            )
            .await;
        assert_eq!(status, 400, "{what}: {answer}");
    }
    let big =
        s.ws.dm("Ev1", "U0ADMIN", "D0ADMIN", &ts(), &"x".repeat(4000));
    let (status, answer) = s.send_with(&big, &[]).await;
    assert_eq!(status, 413, "{answer}");
    s.assert_nothing_happened("refused bodies").await;
}

#[tokio::test]
async fn url_verification_returns_the_challenge() {
    let s = start(Config::default()).await;
    let handshake = json!({
        "token": "Jhj5dZrVaK7ZwHHjRyZWjbDl",
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
        "type": "url_verification"
    });
    let (status, body) = s.send_with(&handshake, &[]).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["challenge"],
        "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    );
    // Unsigned, even the handshake is refused.
    let (status, _) = s
        .post_raw(serde_json::to_vec(&handshake).unwrap(), &[])
        .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_retried_event_is_answered_once() {
    let s = start(Config::default()).await;
    s.pair("U0ADMIN", Role::Admin).await;
    let event = s.ws.dm(
        "Ev0RETRIED",
        "U0ADMIN",
        "D0ADMIN",
        &ts(),
        "@notes: The weekly report uses example_weekly",
    );
    s.send(&event).await;
    // Slack retries (its first try timed out, as far as it knows): one while
    // the turn may still run, one after the answer was posted.
    let retry = |n: u32| {
        vec![
            ("x-slack-retry-num", n.to_string()),
            ("x-slack-retry-reason", "http_timeout".to_string()),
        ]
    };
    let (status, _) = s.send_with(&event, &retry(1)).await;
    assert_eq!(status, 200);
    let receipt = s.fake.next_post().await.shown();
    assert!(receipt.starts_with("Written: agent_notes"), "{receipt}");
    let (status, _) = s.send_with(&event, &retry(2)).await;
    assert_eq!(status, 200);
    // The next message is answered; nothing else was posted.
    let answer = s
        .dm("U0ADMIN", "D0ADMIN", "Produce the weekly report")
        .await
        .shown();
    assert!(answer.contains("example_weekly"), "{answer}");
    let posted: Vec<String> = s.fake.posted().iter().map(Posted::shown).collect();
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(s.people("D0ADMIN").await.len(), 2);
    assert_eq!(s.h.records_containing("example_weekly").await.len(), 1);
}

#[tokio::test]
async fn a_429_from_slack_is_waited_out_and_the_answer_arrives() {
    let s = start(Config::default()).await;
    s.pair("U0ADMIN", Role::Admin).await;
    s.fake.script([
        Scripted::RateLimited {
            retry_after_secs: 1,
        },
        Scripted::Unavailable,
    ]);
    let receipt = s
        .dm(
            "U0ADMIN",
            "D0ADMIN",
            "@notes: The daily report uses example_orders",
        )
        .await
        .shown();
    assert!(receipt.starts_with("Written: agent_notes"), "{receipt}");
    let answered = s.fake.answered();
    assert_eq!(
        answered.iter().map(|a| a.status).collect::<Vec<_>>(),
        [429, 503, 200]
    );
    let waited = answered[1].at - answered[0].at;
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After: 1 was not waited out ({waited:?})"
    );
}

#[tokio::test]
async fn the_bots_own_messages_and_other_bots_are_ignored() {
    let s = start(Config::default()).await;
    s.send(
        &s.ws
            .own_message("Ev1", "D0ADMIN", &ts(), "Written: agent_notes updated"),
    )
    .await;
    s.send(
        &s.ws
            .other_bot("Ev2", GENERAL, &ts(), "<@U0BOTSTEW> deploy finished"),
    )
    .await;
    // A person's edit of a message is not a new message either.
    let mut edit = s.ws.dm("Ev3", "U0ADMIN", "D0ADMIN", &ts(), "hello");
    edit["event"]["subtype"] = json!("message_changed");
    s.send(&edit).await;
    s.assert_nothing_happened("bot messages").await;
}

#[tokio::test]
async fn remember_this_and_yes_in_a_slack_dm_saves_the_record() {
    let s = start(Config::default()).await;
    s.pair("U0ANA", Role::User).await;
    let asked = s.dm("U0ANA", "D0ANA", "I prefer tea").await.shown();
    assert!(asked.contains("Remember this?"), "{asked}");
    let pending = s.h.records_containing("tea").await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].status, Status::Pending);
    let saved = s.dm("U0ANA", "D0ANA", "yes").await.shown();
    assert!(!saved.is_empty());
    let kept = s.h.records_containing("tea").await;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].status, Status::Active, "{saved}");
    assert_eq!(kept[0].owner.as_deref(), Some("slack:T0ACME:U0ANA"));
}

/// Slack's three escapes keep an answer from pinging anyone.
#[tokio::test]
async fn an_answer_never_pings_a_channel() {
    let s = start(Config::default()).await;
    s.pair("U0ADMIN", Role::Admin).await;
    let receipt = s
        .dm(
            "U0ADMIN",
            "D0ADMIN",
            "@notes: Outages are announced with <!channel> & <@U0BOB>",
        )
        .await;
    assert!(!receipt.text.contains("<!channel>"), "{}", receipt.text);
    assert!(!receipt.text.contains("<@"), "{}", receipt.text);
}

#[tokio::test]
async fn without_its_secrets_there_is_no_slack_channel() {
    secrets_in_the_environment();
    // Off: no route.
    let h = Harness::new().await;
    let router = app(AppState::new(h.services.clone()));
    let resp = tower::ServiceExt::oneshot(
        router,
        axum::http::Request::post("/slack/events")
            .body(axum::body::Body::from("{}"))
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(resp.status(), 404);
    // Named but unset: `serve` does not start.
    let mut cfg = Config::default();
    cfg.slack.signing_secret_env = Some("SLACK_TEST_NEVER_SET".into());
    cfg.slack.bot_token_env = Some(TOKEN_ENV.into());
    let h = Harness::with_config(cfg).await;
    let refused = steward::channels::slack::Slack
        .worker(&h.services)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        refused.contains("SLACK_TEST_NEVER_SET, which is not set"),
        "{refused}"
    );
    // Secrets never in the file: a value that is no variable name is refused.
    let err = Config::from_toml(&format!(
        "[slack]\nsigning_secret_env = \"{SECRET}!\"\nbot_token_env = \"{TOKEN_ENV}\""
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("slack.signing_secret_env"), "{err}");
}

#[tokio::test]
async fn deliver_posts_into_the_conversations_channel_or_thread() {
    let s = start(Config::default()).await;
    let to = |conversation: &str| ConversationRef {
        org: "default".into(),
        agent: "default".into(),
        conversation: conversation.into(),
    };
    let top = steward::channels::deliver(&s.h.services, "slack", &to(GENERAL), "Nightly run done")
        .await
        .unwrap();
    let posted = s.fake.next_post().await;
    assert_eq!(
        (posted.channel.as_str(), posted.thread_ts.as_deref()),
        (GENERAL, None)
    );
    assert_eq!(
        top,
        Delivered::Posted {
            ids: vec![posted.ts]
        }
    );
    let root = ts();
    steward::channels::deliver(
        &s.h.services,
        "slack",
        &to(&format!("{GENERAL}:{root}")),
        "In the thread",
    )
    .await
    .unwrap();
    let posted = s.fake.next_post().await;
    assert_eq!(posted.thread_ts.as_deref(), Some(root.as_str()));
    assert!(
        steward::channels::deliver(&s.h.services, "slack", &to("not a channel"), "x")
            .await
            .is_err()
    );
}

/// A scheduled run with `deliver = "slack:<channel id>"` posts its answer
/// into that channel through `chat.postMessage`.
#[tokio::test]
async fn a_scheduled_run_is_delivered_into_a_slack_channel() {
    use chrono::TimeZone;
    use memory::run::RunOutcome;
    use steward::clock::ManualClock;
    use steward::runs::schedules::{Schedules, Ticked};
    use steward::runs::Runner;
    secrets_in_the_environment();
    let fake = FakeSlack::start(TOKEN, []).await;
    let cfg = Config::from_toml(&format!(
        r#"
[slack]
signing_secret_env = "{SECRET_ENV}"
bot_token_env = "{TOKEN_ENV}"
api_base = "{}"
[[schedules]]
name = "digest"
cron = "0 * * * *"
text = "Post the weekly digest"
deliver = "slack:{GENERAL}"
"#,
        fake.api_base
    ))
    .unwrap();
    let at = |h: u32, m: u32| {
        chrono::Utc
            .with_ymd_and_hms(2026, 1, 5, h, m, 0)
            .single()
            .unwrap()
            .timestamp_millis()
    };
    let clock = ManualClock::at(at(9, 45));
    let services = steward::with_db(Db::in_memory().await.unwrap(), cfg)
        .with_clock(std::sync::Arc::new(clock.clone()));
    let h = Harness::from_services(services);
    h.pair("111", Role::Admin).await;
    assert!(h
        .dm(
            "111",
            "@notes: The weekly digest lists example_orders by region"
        )
        .await
        .contains("Written"));
    let schedules = Schedules::new(Runner::new(&h.services), at(9, 45));
    clock.set(at(10, 0) + 5_000);
    let ticked = schedules.tick(at(10, 0) + 5_000).await.unwrap();
    let [Ticked::Ran(run)] = ticked.as_slice() else {
        panic!("{ticked:?}");
    };
    assert_eq!(run.outcome, RunOutcome::Answered, "{run:?}");
    assert_eq!(run.deliver, format!("slack:{GENERAL}"));
    let posted = fake.next_post().await;
    assert_eq!(
        (posted.channel.as_str(), posted.thread_ts.as_deref()),
        (GENERAL, None)
    );
    assert!(
        posted.shown().contains("example_orders"),
        "{}",
        posted.shown()
    );
}
