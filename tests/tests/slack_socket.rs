//! Slack over Socket Mode at the wire: the Slack channel's worker (as
//! `steward serve` starts it) opens its connection through a fake of
//! `apps.connections.open` and a real websocket speaking Socket Mode; the
//! fake sends envelopes, takes the acknowledgements, and checks that no
//! answer is posted before its envelope was acknowledged.

use memory::{Db, Role, Status};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use steward::channels::{Channel, ConversationRef};
use steward::workers::{self, CancellationToken, Running};
use steward::Config;
use steward_tests::fake_slack::{Connection, FakeSlack, Posted, Seen, Workspace};
use steward_tests::{both_dbs, Harness};

/// The variables `[slack]` names, set once for this test binary.
const TOKEN_ENV: &str = "SLACK_SOCKET_TEST_BOT_TOKEN";
const APP_TOKEN_ENV: &str = "SLACK_SOCKET_TEST_APP_TOKEN";
const TOKEN: &str = "xoxb-17653672481-19874698323-socketmodebot";
const APP_TOKEN: &str = "xapp-1-A0STEWARD-1767600000000-0123456789abcdef";

const TEAM: &str = "T0ACME";
const GENERAL: &str = "C0GENERAL";

fn secrets_in_the_environment() {
    static SET: Once = Once::new();
    // Only this binary reads these names, and always after this.
    SET.call_once(|| {
        std::env::set_var(TOKEN_ENV, TOKEN);
        std::env::set_var(APP_TOKEN_ENV, APP_TOKEN);
    });
}

/// A fresh message `ts`: now, with a microsecond part no other message of this binary has.
fn ts() -> String {
    static N: AtomicU64 = AtomicU64::new(100);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{}.{n:06}", chrono::Utc::now().timestamp())
}

/// A fresh envelope id.
fn envelope() -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "57d6a792-4d35-4d0b-b6aa-{:012}",
        N.fetch_add(1, Ordering::Relaxed)
    )
}

struct Socket {
    h: Harness,
    fake: FakeSlack,
    ws: Workspace,
    running: Option<Running>,
}

/// The Slack channel in Socket Mode on `db`, its worker started as `serve`
/// starts it, against a fake Slack that accepts `accepted` as the app token.
async fn start_on(db: Db, accepted: &str) -> Socket {
    secrets_in_the_environment();
    let fake = FakeSlack::start_with_app_token(TOKEN, accepted, []).await;
    let cfg = Config::from_toml(&format!(
        "[slack]\nmode = \"socket\"\napp_token_env = \"{APP_TOKEN_ENV}\"\nbot_token_env = \"{TOKEN_ENV}\"\napi_base = \"{}\"\nreconnect_backoff_ms = 1\n",
        fake.api_base
    ))
    .expect("a Socket Mode configuration");
    let h = Harness::on(db, cfg);
    let slack = steward::channels::slack::Slack;
    assert!(slack.enabled(h.services.config()));
    let worker = slack
        .worker(&h.services)
        .expect("its secrets are set")
        .expect("Socket Mode has a connection to keep");
    let running = workers::start(vec![worker], &CancellationToken::new());
    Socket {
        h,
        fake,
        ws: Workspace::new(TEAM),
        running: Some(running),
    }
}

async fn start(accepted: &str) -> Socket {
    start_on(Db::in_memory().await.unwrap(), accepted).await
}

impl Socket {
    async fn pair(&self, user: &str, role: Role) {
        self.h
            .services
            .pairing()
            .add_user("default", &self.ws.stored(user), user, role, "test", 1)
            .await
            .unwrap();
    }

    /// Send `payload` over `conn` as envelope `id`; it must be acknowledged.
    async fn deliver(&self, conn: &Connection, id: &str, payload: Value, retry_attempt: u32) {
        conn.send_event(id, payload, retry_attempt);
        assert_eq!(conn.acked().await, id, "acknowledged, by its envelope id");
    }

    /// A direct message from `user` in `dm` over `conn`; the answer posted.
    async fn dm(&self, conn: &Connection, user: &str, dm: &str, text: &str) -> Posted {
        let ts = ts();
        let payload = self.ws.dm(&format!("Ev{ts}"), user, dm, &ts, text);
        self.deliver(conn, &envelope(), payload, 0).await;
        let posted = self.fake.next_post().await;
        assert_eq!(posted.channel, dm, "answered where it was asked");
        assert_eq!(posted.thread_ts, None, "a DM is answered in the DM");
        posted
    }

    /// Every answer was posted after its envelope was acknowledged, and
    /// every envelope sent was acknowledged.
    fn assert_acknowledged_before_answered(&self) {
        let seen = self.fake.seen();
        for s in &seen {
            if let Seen::Posted { unacked, .. } = s {
                assert!(
                    unacked.is_empty(),
                    "posted before {unacked:?} was acknowledged: {seen:?}"
                );
            }
            if let Seen::Sent(id) = s {
                assert!(
                    seen.contains(&Seen::Acked(id.clone())),
                    "{id} was never acknowledged: {seen:?}"
                );
            }
        }
    }

    /// Stop the worker as `serve` does on ctrl-c: it ends cleanly.
    async fn stop(mut self) {
        if let Some(running) = self.running.take() {
            running
                .stop()
                .await
                .expect("the Slack worker stops cleanly");
        }
        self.assert_acknowledged_before_answered();
    }

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

/// Over Socket Mode on both databases: pairing in a direct message, an
/// admin's `@notes:`, a question answered from it, and "Remember this?" —
/// each envelope acknowledged before its answer was posted.
#[tokio::test]
async fn direct_messages_over_socket_mode_are_acknowledged_then_answered() {
    for (name, db) in both_dbs().await {
        let s = start_on(db, APP_TOKEN).await;
        s.pair("U0ADMIN", Role::Admin).await;
        let conn = s.fake.connection().await;
        assert_eq!(conn.n, 1, "{name}");
        let taught = s
            .dm(
                &conn,
                "U0ADMIN",
                "D0ADMIN",
                "@notes: The daily report uses example_orders",
            )
            .await
            .shown();
        assert!(
            taught.starts_with("Written: agent_notes"),
            "{name}: {taught}"
        );
        // An unpaired person asks for a code in private; the admin approves it.
        let asked = s.dm(&conn, "U0NEW", "D0NEW", "pair").await.shown();
        let code: String = asked
            .split("code is ")
            .nth(1)
            .and_then(|rest| rest.get(..8))
            .unwrap_or_else(|| panic!("{name}: no code in {asked:?}"))
            .to_string();
        let approved = s
            .dm(
                &conn,
                "U0ADMIN",
                "D0ADMIN",
                &format!("/pair approve {code}"),
            )
            .await
            .shown();
        assert!(approved.contains("paired as user"), "{name}: {approved}");
        let served = s
            .dm(&conn, "U0NEW", "D0NEW", "Produce today's daily report")
            .await
            .shown();
        assert!(served.contains("example_orders"), "{name}: {served}");
        assert_eq!(
            s.people("D0NEW").await,
            [(
                Some(s.ws.stored("U0NEW")),
                "Produce today's daily report".to_string()
            )],
            "{name}"
        );
        // "Remember this?" and its yes.
        let question = s.dm(&conn, "U0NEW", "D0NEW", "I prefer tea").await.shown();
        assert!(question.contains("Remember this?"), "{name}: {question}");
        s.dm(&conn, "U0NEW", "D0NEW", "yes").await;
        let kept = s.h.records_containing("tea").await;
        assert_eq!(kept.len(), 1, "{name}");
        assert_eq!(kept[0].status, Status::Active, "{name}");
        assert_eq!(kept[0].owner.as_deref(), Some("slack:T0ACME:U0NEW"));
        s.stop().await;
        // steward closed its connection on the way out.
        conn.ended().await;
    }
}

/// A mention in a channel is answered in the thread it starts; a mention in
/// that thread in the same thread; envelopes of kinds steward does not use
/// (a button press) are acknowledged and nothing is posted for them; a
/// run's answer is delivered into the channel.
#[tokio::test]
async fn a_mention_in_a_channel_is_answered_in_its_thread() {
    let s = start(APP_TOKEN).await;
    s.pair("U0ADMIN", Role::Admin).await;
    s.pair("U0BOB", Role::User).await;
    let conn = s.fake.connection().await;
    let root = ts();
    let mention = s.ws.mention(
        "EvM1",
        "U0ADMIN",
        GENERAL,
        &root,
        None,
        "@notes: The daily report uses example_orders",
    );
    s.deliver(&conn, &envelope(), mention, 0).await;
    let receipt = s.fake.next_post().await;
    assert_eq!(receipt.channel, GENERAL);
    assert_eq!(receipt.thread_ts.as_deref(), Some(root.as_str()));
    assert!(receipt.shown().starts_with("Written: agent_notes"));
    // A button press: acknowledged, nothing more.
    let pressed = envelope();
    conn.send_raw(json!({
        "envelope_id": pressed,
        "type": "interactive",
        "accepts_response_payload": false,
        "payload": {"type": "shortcut", "token": "x", "action_ts": "1", "team": {"id": TEAM}, "user": {"id": "U0BOB"}, "callback_id": "c", "trigger_id": "t"}
    }));
    assert_eq!(conn.acked().await, pressed);
    let question = s.ws.mention(
        "EvM2",
        "U0BOB",
        GENERAL,
        &ts(),
        Some(&root),
        "Produce today's daily report",
    );
    s.deliver(&conn, &envelope(), question, 0).await;
    let answer = s.fake.next_post().await;
    assert_eq!(answer.channel, GENERAL);
    assert_eq!(answer.thread_ts.as_deref(), Some(root.as_str()));
    assert!(
        answer.shown().contains("example_orders"),
        "{}",
        answer.shown()
    );
    assert_eq!(s.fake.posted().len(), 2, "nothing posted for the button");
    assert_eq!(
        s.people(&format!("{GENERAL}:{root}")).await,
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
    // A run's answer is delivered into the channel as over the Events API.
    let to = ConversationRef {
        org: "default".into(),
        agent: "default".into(),
        conversation: GENERAL.into(),
    };
    steward::channels::deliver(&s.h.services, "slack", &to, "Nightly run done")
        .await
        .expect("delivered in Socket Mode");
    let run = s.fake.next_post().await;
    assert_eq!(
        (run.channel.as_str(), run.thread_ts.as_deref()),
        (GENERAL, None)
    );
    assert_eq!(run.shown(), "Nightly run done");
    s.stop().await;
}

/// An envelope is acknowledged once its message is stored; the connection
/// drops after it was answered, and Slack sends it again on the next
/// connection (`retry_attempt` 1): acknowledged again, answered once.
#[tokio::test]
async fn an_envelope_redelivered_after_a_dropped_connection_is_answered_once() {
    let s = start(APP_TOKEN).await;
    s.pair("U0ADMIN", Role::Admin).await;
    let first = s.fake.connection().await;
    let ts = ts();
    let id = envelope();
    let payload = s.ws.dm(
        "Ev0REDELIVERED",
        "U0ADMIN",
        "D0ADMIN",
        &ts,
        "@notes: The weekly report uses example_weekly",
    );
    s.deliver(&first, &id, payload.clone(), 0).await;
    // Acknowledged only once stored: a crash after the acknowledgement loses nothing.
    assert_eq!(
        s.people("D0ADMIN").await,
        [(
            Some(s.ws.stored("U0ADMIN")),
            "@notes: The weekly report uses example_weekly".to_string()
        )]
    );
    let receipt = s.fake.next_post().await.shown();
    assert!(receipt.starts_with("Written: agent_notes"), "{receipt}");
    first.drop_connection();
    first.ended().await;
    // steward connects again by itself …
    let second = s.fake.connection().await;
    assert_eq!(second.n, 2);
    // … and the redelivery is acknowledged, not answered again.
    s.deliver(&second, &id, payload, 1).await;
    let answer = s
        .dm(&second, "U0ADMIN", "D0ADMIN", "Produce the weekly report")
        .await
        .shown();
    assert!(answer.contains("example_weekly"), "{answer}");
    let posted: Vec<String> = s.fake.posted().iter().map(Posted::shown).collect();
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(s.people("D0ADMIN").await.len(), 2);
    assert_eq!(s.h.records_containing("example_weekly").await.len(), 1);
    s.stop().await;
}

/// Slack's `disconnect` (`refresh_requested`) before it closes a
/// connection: steward closes it and opens a new one, which keeps working.
#[tokio::test]
async fn a_refresh_requested_disconnect_is_followed_by_a_new_connection_that_keeps_working() {
    let s = start(APP_TOKEN).await;
    s.pair("U0ADMIN", Role::Admin).await;
    let first = s.fake.connection().await;
    s.dm(
        &first,
        "U0ADMIN",
        "D0ADMIN",
        "@notes: The daily report uses example_orders",
    )
    .await;
    first.disconnect("refresh_requested");
    first.ended().await;
    let second = s.fake.connection().await;
    assert_eq!(second.n, 2, "a new connection, from apps.connections.open");
    let answer = s
        .dm(
            &second,
            "U0ADMIN",
            "D0ADMIN",
            "Produce today's daily report",
        )
        .await
        .shown();
    assert!(answer.contains("example_orders"), "{answer}");
    // Still the only two connections: the refresh was not a failure loop.
    let opened = s
        .fake
        .seen()
        .iter()
        .filter(|x| matches!(x, Seen::Opened(_)))
        .count();
    assert_eq!(opened, 2);
    s.stop().await;
}

/// An app-level token Slack refuses (`invalid_auth`): steward logs it and
/// tries again with its backoff, without stopping; once Slack accepts the
/// token it connects and answers.
#[tokio::test]
async fn a_refused_app_token_is_tried_again_and_the_channel_does_not_stop() {
    let s = start("xapp-1-A0OTHER-1767600000000-notthisone").await;
    s.pair("U0ADMIN", Role::Admin).await;
    s.fake.refused().await;
    s.fake.refused().await;
    s.fake.refused().await;
    assert!(
        !s.fake.seen().iter().any(|x| matches!(x, Seen::Opened(_))),
        "no connection with a refused token"
    );
    s.fake.accept_app_token(APP_TOKEN);
    let conn = s.fake.connection().await;
    let receipt = s
        .dm(
            &conn,
            "U0ADMIN",
            "D0ADMIN",
            "@notes: The daily report uses example_orders",
        )
        .await
        .shown();
    assert!(receipt.starts_with("Written: agent_notes"), "{receipt}");
    s.stop().await;
}

/// The app-level token may come from a file (a mounted secret); the
/// Events API's route is not served in Socket Mode, and a token that is not
/// an app-level one is refused at start.
#[tokio::test]
async fn socket_mode_reads_its_token_file_and_serves_no_events_route() {
    secrets_in_the_environment();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("slack-app-token");
    std::fs::write(&file, format!("{APP_TOKEN}\n")).unwrap();
    let fake = FakeSlack::start_with_app_token(TOKEN, APP_TOKEN, []).await;
    let toml = |path: &std::path::Path| {
        format!(
            "[slack]\nmode = \"socket\"\napp_token_file = \"{}\"\nbot_token_env = \"{TOKEN_ENV}\"\napi_base = \"{}\"\n",
            path.display(),
            fake.api_base
        )
    };
    let h = Harness::on(
        Db::in_memory().await.unwrap(),
        Config::from_toml(&toml(&file)).unwrap(),
    );
    let worker = steward::channels::slack::Slack
        .worker(&h.services)
        .expect("the token file is read")
        .expect("a connection");
    let router = steward::http::app(steward::http::AppState::new(h.services.clone()));
    let resp = tower::ServiceExt::oneshot(
        router,
        axum::http::Request::post("/slack/events")
            .body(axum::body::Body::from("{}"))
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(resp.status(), 404, "no Events API route in Socket Mode");
    let running = workers::start(vec![worker], &CancellationToken::new());
    let conn = fake.connection().await;
    running.stop().await.expect("stopped cleanly");
    conn.ended().await;
    // A bot token where the app-level token belongs: refused before any connection.
    let wrong = dir.path().join("bot-token");
    std::fs::write(&wrong, TOKEN).unwrap();
    let h = Harness::on(
        Db::in_memory().await.unwrap(),
        Config::from_toml(&toml(&wrong)).unwrap(),
    );
    let refused = steward::channels::slack::Slack
        .worker(&h.services)
        .err()
        .expect("a bot token is no app-level token")
        .to_string();
    assert!(refused.contains("xapp-"), "{refused}");
    let missing = dir.path().join("nope");
    let h = Harness::on(
        Db::in_memory().await.unwrap(),
        Config::from_toml(&toml(&missing)).unwrap(),
    );
    let refused = steward::channels::slack::Slack
        .worker(&h.services)
        .err()
        .expect("an unreadable token file")
        .to_string();
    assert!(refused.contains("slack.app_token_file"), "{refused}");
}
