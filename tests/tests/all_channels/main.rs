//! `steward serve` with a Discord token, a Slack app, a Teams bot, a Teams
//! security token and the dashboard all configured: five channels at once
//! against one memory.

use chrono::{TimeZone, Utc};
use memory::Role;
use serde_json::{json, Value};
use steward::http::{serve, AppState};
use steward::workers::{self, CancellationToken};
use steward::Config;
use steward_tests::fake_bot_framework::{self, FakeBotFramework, Person};
use steward_tests::fake_discord::{FakeDiscord, FakeUser};
use steward_tests::fake_slack::{self, FakeSlack, Workspace};
use steward_tests::teams_signer::{new_token, sign};
use steward_tests::Harness;
use tokio::sync::oneshot;

mod script;

const TOKEN: &str = "MTE4MDAwMDAwMDAwMDAwMDAwMQ.fake.bot-token";
const BOT: u64 = 1_180_000_000_000_000_001;
const GUILD: u64 = 1_180_000_000_000_000_100;
const GENERAL: u64 = 1_180_000_000_000_000_101;

const DASHBOARD_TOKEN: &str = "all-channels-dashboard-token-42";

/// The variables `[slack]` names (set by this binary's one test) and their values.
const SLACK_SECRET_ENV: &str = "ALL_CHANNELS_SLACK_SIGNING_SECRET";
const SLACK_TOKEN_ENV: &str = "ALL_CHANNELS_SLACK_BOT_TOKEN";
const SLACK_SECRET: &str = "all-channels-slack-signing-secret";
const SLACK_TOKEN: &str = "xoxb-all-channels-bot-token";

/// The variable `[teams_bot]` names (set by this binary's one test).
const TEAMS_BOT_PASSWORD_ENV: &str = "ALL_CHANNELS_TEAMS_APP_PASSWORD";

#[tokio::test]
async fn one_memory_serves_discord_slack_teams_and_the_dashboard_at_once() {
    let start = Utc
        .with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
        .single()
        .expect("date");
    let fake = FakeDiscord::start(TOKEN, FakeUser::new(BOT, "steward").bot(), start).await;
    let slack = FakeSlack::start(SLACK_TOKEN, []).await;
    std::env::set_var(SLACK_SECRET_ENV, SLACK_SECRET);
    std::env::set_var(SLACK_TOKEN_ENV, SLACK_TOKEN);
    let bot_framework = FakeBotFramework::start(|| Utc::now().timestamp_millis()).await;
    std::env::set_var(TEAMS_BOT_PASSWORD_ENV, fake_bot_framework::APP_PASSWORD);
    let teams_token = new_token();
    let cfg = Config::from_toml(&format!(
        "[discord]\ntoken = \"{TOKEN}\"\napi_base = \"{}\"\n[slack]\nsigning_secret_env = \"{SLACK_SECRET_ENV}\"\nbot_token_env = \"{SLACK_TOKEN_ENV}\"\napi_base = \"{}\"\n[teams]\nsecurity_token = \"{teams_token}\"\n[teams_bot]\napp_id = \"{}\"\napp_password_env = \"{TEAMS_BOT_PASSWORD_ENV}\"\nopenid_metadata_url = \"{}\"\ntoken_endpoint = \"{}\"\n[dashboard]\nadmin_token = \"{DASHBOARD_TOKEN}\"\n",
        fake.base_url(),
        slack.api_base,
        fake_bot_framework::APP_ID,
        bot_framework.openid_metadata_url,
        bot_framework.token_endpoint,
    ))
    .expect("config");
    let h = Harness::with_config(cfg).await;
    let ana = FakeUser::new(1_180_000_000_000_000_011, "ana");
    let p = h.services.pairing();
    p.add_user("default", &ana.stored(), "Ana", Role::Admin, "test", 1)
        .await
        .expect("pair");
    p.add_user("default", "teams:aad-bob", "Bob", Role::User, "test", 1)
        .await
        .expect("pair");
    let acme = Workspace::new("T0ACME");
    p.add_user(
        "default",
        &acme.stored("U0CAROL"),
        "Carol",
        Role::User,
        "test",
        1,
    )
    .await
    .expect("pair");

    // The HTTP server (API, Teams webhook, dashboard) on a real socket, with Discord beside it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    let server = serve(listener, AppState::new(h.services.clone()), async {
        let _ = stopped.await;
    });
    let channel = steward::channels::discord::worker(&h.services)
        .expect("settings")
        .expect("discord on");
    let running = workers::start(vec![Box::new(channel)], &CancellationToken::new());
    let serving = tokio::spawn(running.beside(server));
    fake.identified().await;

    // An admin teaches on Discord …
    fake.mention(
        GUILD,
        GENERAL,
        &ana,
        "@notes: The daily report uses example_orders",
    );
    let receipt = fake.message_in(GENERAL).await;
    assert!(
        receipt
            .content()
            .starts_with("Written: agent_notes updated"),
        "{}",
        receipt.content()
    );

    // … a Teams user is served from it …
    let body = serde_json::to_vec(&json!({
        "type": "message",
        "id": "act-1",
        "timestamp": "2026-01-05T10:00:00.000Z",
        "from": {"id": "29:bob", "name": "Bob", "aadObjectId": "aad-bob"},
        "conversation": {"id": "19:general@thread.tacv2;messageid=1", "conversationType": "channel"},
        "text": "<at>steward</at> Produce the daily report",
    }))
    .expect("json");
    let client = reqwest::Client::new();
    let resp = client
        .post(format!("http://{addr}/teams/default"))
        .header("authorization", sign(&body, &teams_token))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("teams request");
    assert_eq!(resp.status(), 200);
    let answer: serde_json::Value = resp.json().await.expect("json");
    assert!(
        answer["text"]
            .as_str()
            .unwrap_or_default()
            .contains("example_orders"),
        "{answer}"
    );

    // … Bob again, in his personal chat with the Teams bot: the same
    // person as through the webhook …
    let bob = Person {
        name: "Bob".into(),
        aad: "aad-bob".into(),
    };
    let activity = bot_framework.personal(&bob, "Produce the daily report");
    let resp = client
        .post(format!("http://{addr}/api/messages"))
        .header("authorization", bot_framework.bearer())
        .json(&activity)
        .send()
        .await
        .expect("Bot Framework request");
    assert_eq!(resp.status(), 200);
    let posted = bot_framework.next_message().await;
    assert_eq!(posted.conversation, bob.chat());
    assert!(
        posted.text().contains("example_orders"),
        "{}",
        posted.text()
    );

    // … so is a Slack user, answered in their direct message …
    let ts = format!("{}.000100", Utc::now().timestamp());
    let event = acme.dm(
        "Ev0CAROL",
        "U0CAROL",
        "D0CAROL",
        &ts,
        "Produce the daily report",
    );
    let body = serde_json::to_vec(&event).expect("json");
    let at = Utc::now().timestamp().to_string();
    let resp = client
        .post(format!("http://{addr}/slack/events"))
        .header("x-slack-request-timestamp", &at)
        .header(
            "x-slack-signature",
            fake_slack::sign(SLACK_SECRET, &at, &body),
        )
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("slack request");
    assert_eq!(resp.status(), 200);
    let posted = slack.next_post().await;
    assert_eq!(posted.channel, "D0CAROL");
    assert!(
        posted.shown().contains("example_orders"),
        "{}",
        posted.shown()
    );

    // … and the dashboard is served by the same process.
    let dash = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .get(format!("http://{addr}/dashboard"))
        .send()
        .await
        .expect("dashboard");
    assert!(dash.status().is_redirection(), "{}", dash.status());
    assert!(dash.headers()["location"]
        .to_str()
        .unwrap_or_default()
        .contains("/dashboard"));
    // Signed in, the dashboard shows the note Ana taught on Discord.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let signed_in = browser
        .post(format!("http://{addr}/dashboard/login"))
        .form(&[("token", DASHBOARD_TOKEN)])
        .send()
        .await
        .expect("sign in");
    assert_eq!(signed_in.status(), 303);
    let cookie = signed_in.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    let notes = browser
        .get(format!("http://{addr}/dashboard/memory?scope=agent_notes"))
        .header("cookie", cookie)
        .send()
        .await
        .expect("memory page");
    assert_eq!(notes.status(), 200);
    let page = notes.text().await.expect("page");
    assert!(page.contains("example_orders"), "{page}");

    let _ = stop.send(());
    let served = serving.await.expect("serve task").expect("stopped cleanly");
    served.expect("served");
}

// ------------------------------------------------------------------------
// One script over every channel.
//
// The behaviour every channel shares — pairing in private, an administrator's
// `@notes:`, a question in a thread, a preference asked with "Remember this?"
// and saved with "yes", a run delivered — is one script, run over each row
// of `CHANNELS` on both databases: each row on a fresh `steward serve` with
// every channel configured, each channel talking to its wire-level fake.
// Where a channel cannot do a step itself, its row says what it does instead:
// the Teams outgoing webhook reaches steward only from a channel, so its
// people pair in the Teams bot's personal chat (the same stored id); the
// dashboard has no door for an unpaired person (its sign-in turns them away),
// so its newcomer asks for a code there too, and has no threads: a question
// is asked in the person's own chat.
