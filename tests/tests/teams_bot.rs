//! Teams as a Bot Framework bot at the wire: the real server
//! (`steward::http::app`) on a real socket; activities sent as the Bot
//! Framework sends them, each with a JWT from a fake token issuer that has
//! its own RSA keys, OpenID metadata and JWKS; answers, typing indicators and
//! runs posted to a fake connector, with connector tokens from a fake OAuth
//! 2.0 token endpoint. Time is steward's injected clock, which the tokens
//! are dated by.

use chrono::TimeZone;
use memory::{Db, Role, Status};
use serde_json::{json, Value};
use std::sync::{Arc, Once};
use std::time::Duration;
use steward::channels::{self, Channel, ConversationRef, Delivered, DeliveryError};
use steward::clock::ManualClock;
use steward::http::{app, AppState};
use steward::Config;
use steward_tests::fake_bot_framework::{
    Claims, FakeBotFramework, Person, Posted, Scripted, SigningKey, APP_ID, APP_PASSWORD, TENANT,
};
use steward_tests::{both_dbs, teams_signer, Harness};

/// The environment variable `[teams_bot]` names, set once for this test binary.
const PASSWORD_ENV: &str = "TEAMS_BOT_TEST_APP_PASSWORD";

/// A team channel the bot is in.
const GENERAL: &str = "19:general@thread.tacv2";

fn password_in_the_environment() {
    static SET: Once = Once::new();
    // Only this binary reads this name, and always after this.
    SET.call_once(|| std::env::set_var(PASSWORD_ENV, APP_PASSWORD));
}

/// When every test starts, by steward's clock.
fn start_ms() -> i64 {
    chrono::Utc
        .with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
        .single()
        .unwrap()
        .timestamp_millis()
}

struct Bot {
    h: Harness,
    fake: FakeBotFramework,
    clock: ManualClock,
    base: String,
    client: reqwest::Client,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Bot {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The real HTTP app with the Teams bot on, on 127.0.0.1:0, against a fake Bot Framework.
async fn start(cfg: Config) -> Bot {
    start_on(Db::in_memory().await.unwrap(), cfg).await
}

async fn start_on(db: Db, mut cfg: Config) -> Bot {
    password_in_the_environment();
    let clock = ManualClock::at(start_ms());
    let fake = {
        let clock = clock.clone();
        FakeBotFramework::start(move || steward::clock::Clock::now_ms(&clock)).await
    };
    cfg.teams_bot.app_id = Some(APP_ID.into());
    cfg.teams_bot.app_password_env = Some(PASSWORD_ENV.into());
    // A test that names another metadata document keeps it.
    if cfg.teams_bot.openid_metadata_url == adapters::teams_bot::OPENID_METADATA {
        cfg.teams_bot.openid_metadata_url = fake.openid_metadata_url.clone();
    }
    cfg.teams_bot.token_endpoint = fake.token_endpoint.clone();
    let services = steward::with_db(db, cfg).with_clock(Arc::new(clock.clone()));
    let h = Harness::from_services(services);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = app(AppState::new(h.services.clone()));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Bot {
        h,
        fake,
        clock,
        base: format!("http://{addr}"),
        client: reqwest::Client::new(),
        server,
    }
}

impl Bot {
    fn advance(&self, by: Duration) {
        let now = steward::clock::Clock::now_ms(&self.clock);
        self.clock.set(now + by.as_millis() as i64);
    }

    async fn pair(&self, person: &Person, role: Role) {
        self.h
            .services
            .pairing()
            .add_user("default", &person.stored(), &person.name, role, "test", 1)
            .await
            .unwrap();
    }

    /// POST `body` to `/api/messages` with an `Authorization` value; the status and the body.
    async fn post_raw(&self, body: Vec<u8>, authorization: Option<&str>) -> (u16, String) {
        let mut req = self
            .client
            .post(format!("{}/api/messages", self.base))
            .header("content-type", "application/json")
            .body(body);
        if let Some(a) = authorization {
            req = req.header("authorization", a);
        }
        let resp = req.send().await.unwrap();
        (resp.status().as_u16(), resp.text().await.unwrap())
    }

    /// POST an activity with `authorization`, ten seconds after the last.
    async fn send_with(&self, activity: &Value, authorization: &str) -> (u16, String) {
        self.advance(Duration::from_secs(10));
        self.post_raw(serde_json::to_vec(activity).unwrap(), Some(authorization))
            .await
    }

    /// POST an activity with a good token; it must be acknowledged at once.
    async fn send(&self, activity: &Value) {
        let (status, body) = self.send_with(activity, &self.fake.bearer()).await;
        assert_eq!(status, 200, "{body}");
    }

    /// `person` writes in their personal chat; the answer posted.
    async fn say(&self, person: &Person, text: &str) -> Posted {
        let activity = self.fake.personal(person, text);
        self.send(&activity).await;
        let answer = self.fake.next_message().await;
        assert_eq!(answer.conversation, person.chat(), "answered where asked");
        assert_eq!(answer.reply_to(), activity["id"].as_str());
        answer
    }

    async fn count(&self, table: &str) -> i64 {
        self.h.db().row_count(table).await.unwrap()
    }

    /// Nothing at all was stored or posted.
    async fn assert_nothing_happened(&self, what: &str) {
        for table in ["messages", "seen_messages", "channel_addresses"] {
            assert_eq!(self.count(table).await, 0, "{what}: a row in {table}");
        }
        assert!(self.h.records().await.is_empty(), "{what}: memory written");
        assert!(self.fake.posted().is_empty(), "{what}: something posted");
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

fn code_in(answer: &str) -> String {
    answer
        .split("code is ")
        .nth(1)
        .and_then(|rest| rest.get(..8))
        .unwrap_or_else(|| panic!("no code in {answer:?}"))
        .to_string()
}

/// Pairing in a personal chat, an admin's `@notes:` and a question, on
/// SQLite and PostgreSQL; the bot types before each answer, keeps one
/// connector token, and keeps each conversation's reference once.
#[tokio::test]
async fn a_personal_chat_pairs_a_person_who_is_then_answered() {
    for (name, db) in both_dbs().await {
        let b = start_on(db, Config::default()).await;
        let (admin, new) = (Person::new("Ada", 1), Person::new("Nils", 2));
        b.pair(&admin, Role::Admin).await;
        let taught = b
            .say(&admin, "@notes: The daily report uses example_orders")
            .await;
        assert!(
            taught.text().starts_with("Written: agent_notes"),
            "{name}: {}",
            taught.text()
        );
        assert_eq!(taught.activity["textFormat"], "plain");
        // An unpaired person asks for a code in private …
        let asked = b.say(&new, "pair").await;
        let code = code_in(asked.text());
        // … the administrator approves it in theirs …
        let approved = b.say(&admin, &format!("/pair approve {code}")).await;
        assert!(
            approved.text().contains("paired as user"),
            "{name}: {}",
            approved.text()
        );
        // … and the new person is answered from the admin's note.
        let served = b.say(&new, "Produce today's daily report").await;
        assert!(
            served.text().contains("example_orders"),
            "{name}: {}",
            served.text()
        );
        assert_eq!(
            b.people(&new.chat()).await,
            [(
                Some(new.stored()),
                "Produce today's daily report".to_string()
            )],
            "{name}: kept under the AAD id; the unpaired request was not kept"
        );
        // Each answer came after a typing indicator in its chat.
        let posted = b.fake.posted();
        for (i, p) in posted
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind() == "message")
        {
            assert!(
                i > 0
                    && posted[i - 1].kind() == "typing"
                    && posted[i - 1].conversation == p.conversation,
                "{name}: no typing before {:?}",
                p.text()
            );
        }
        assert_eq!(b.fake.messages().len(), 4, "{name}");
        assert_eq!(b.fake.token_requests(), 1, "{name}: one token, kept");
        assert_eq!(
            b.count("channel_addresses").await,
            2,
            "{name}: two chats, each kept once"
        );
    }
}

#[tokio::test]
async fn a_mention_in_a_channel_is_answered_in_its_thread() {
    let b = start(Config::default()).await;
    let (admin, bob, new) = (
        Person::new("Ada", 1),
        Person::new("Bob", 3),
        Person::new("Nils", 2),
    );
    b.pair(&admin, Role::Admin).await;
    b.pair(&bob, Role::User).await;
    let post = b.fake.channel_mention(
        &admin,
        GENERAL,
        None,
        "@notes: The daily report uses example_orders",
    );
    b.send(&post).await;
    let root = post["id"].as_str().unwrap().to_string();
    let thread = format!("{GENERAL};messageid={root}");
    let receipt = b.fake.next_message().await;
    assert_eq!(receipt.conversation, thread, "in the post's own thread");
    assert_eq!(receipt.reply_to(), Some(root.as_str()));
    assert!(
        receipt.text().starts_with("Written: agent_notes"),
        "{}",
        receipt.text()
    );
    // A mention in that thread is answered in it.
    let question =
        b.fake
            .channel_mention(&bob, GENERAL, Some(&root), "Produce today's daily report");
    b.send(&question).await;
    let answer = b.fake.next_message().await;
    assert_eq!(answer.conversation, thread);
    assert_eq!(answer.reply_to(), question["id"].as_str());
    assert!(
        answer.text().contains("example_orders"),
        "{}",
        answer.text()
    );
    // The thread is one conversation, each line its sender's, the mention removed.
    assert_eq!(
        b.people(&thread).await,
        [
            (
                Some(admin.stored()),
                "@notes: The daily report uses example_orders".to_string()
            ),
            (
                Some(bob.stored()),
                "Produce today's daily report".to_string()
            ),
        ]
    );
    // A pairing code is never given in a channel: the answer points to the
    // personal chat, which the bot has.
    b.send(&b.fake.channel_mention(&new, GENERAL, Some(&root), "pair"))
        .await;
    let refused = b.fake.next_message().await;
    assert!(
        refused.text().contains("direct message") && !refused.text().contains("code is"),
        "{}",
        refused.text()
    );
    // A line of the thread that does not mention the bot is read, not answered.
    let mut line = b
        .fake
        .channel_mention(&bob, GENERAL, Some(&root), "lunch at noon?");
    line["entities"] = json!([]);
    line["text"] = json!("lunch at noon?");
    b.send(&line).await;
    let typing_or_message = b.fake.posted().len();
    // The next mention is answered; the line before it got neither typing nor an answer.
    b.send(
        &b.fake
            .channel_mention(&bob, GENERAL, Some(&root), "What is the daily report?"),
    )
    .await;
    let next = b.fake.next_message().await;
    assert!(next.text().contains("example_orders"), "{}", next.text());
    assert_eq!(
        b.fake.posted().len(),
        typing_or_message + 2,
        "only the mention's typing and answer"
    );
}

/// In a group chat the bot answers when mentioned, in the chat, and reads
/// the other lines it is sent without answering them.
#[tokio::test]
async fn a_group_chat_is_answered_when_the_bot_is_mentioned() {
    let b = start(Config::default()).await;
    let (admin, bob) = (Person::new("Ada", 1), Person::new("Bob", 3));
    b.pair(&admin, Role::Admin).await;
    b.pair(&bob, Role::User).await;
    let chat = "19:c0ffee@thread.v2";
    b.send(&b.fake.group_chat(
        &admin,
        chat,
        "@notes: The daily report uses example_orders",
        true,
    ))
    .await;
    let receipt = b.fake.next_message().await;
    assert_eq!(receipt.conversation, chat);
    assert!(
        receipt.text().starts_with("Written: agent_notes"),
        "{}",
        receipt.text()
    );
    b.send(&b.fake.group_chat(&bob, chat, "who wants lunch?", false))
        .await;
    let before = b.fake.posted().len();
    b.send(
        &b.fake
            .group_chat(&bob, chat, "Produce today's daily report", true),
    )
    .await;
    let answer = b.fake.next_message().await;
    assert!(
        answer.text().contains("example_orders"),
        "{}",
        answer.text()
    );
    assert_eq!(
        b.fake.posted().len(),
        before + 2,
        "the unmentioned line got neither typing nor an answer"
    );
}

/// A connector token revoked before it expires: the post is refused 401,
/// a new token is fetched and the answer arrives.
#[tokio::test]
async fn a_revoked_connector_token_is_replaced_and_the_answer_arrives() {
    let b = start(Config::default()).await;
    let ana = Person::new("Ana", 4);
    b.pair(&ana, Role::User).await;
    b.say(&ana, "hello").await;
    assert_eq!(b.fake.token_requests(), 1);
    b.fake.revoke_tokens();
    let answer = b.say(&ana, "hello again").await;
    assert!(!answer.text().is_empty());
    assert_eq!(b.fake.token_requests(), 2);
    assert!(b.fake.statuses().iter().any(|(s, _)| *s == 401));
}

/// Every token the Bot Framework would not have sent is refused with a 401
/// before the activity is read, and nothing is stored or posted; a token a
/// few minutes past its expiry is within the allowed clock skew.
#[tokio::test]
async fn forged_expired_wrong_audience_wrong_issuer_and_unknown_key_tokens_are_refused() {
    let b = start(Config::default()).await;
    let admin = Person::new("Ada", 1);
    b.pair(&admin, Role::Admin).await;
    let activity = b
        .fake
        .personal(&admin, "@notes: The daily report uses example_forged");
    let fake = &b.fake;
    let good = fake.claims();
    let current = SigningKey::Current.kid();
    let signed = |claims| {
        format!(
            "Bearer {}",
            fake.sign(SigningKey::Current, current, &claims)
        )
    };
    let hs256 = {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        header.kid = Some(current.into());
        let now = start_ms() / 1000;
        let claims = json!({"iss": good.iss, "aud": good.aud, "exp": now + 7200,
            "serviceurl": fake.service_url});
        let key = jsonwebtoken::EncodingKey::from_secret(b"the issuer's public key, as a secret")
            .unwrap();
        format!(
            "Bearer {}",
            jsonwebtoken::encode(&header, &claims, &key).unwrap()
        )
    };
    let attempts: Vec<(&str, Option<String>, &str)> = vec![
        ("no token", None, "missing Authorization"),
        (
            "another scheme",
            Some("Basic YXBwOnBhc3N3b3Jk".into()),
            "expected `Bearer",
        ),
        ("not a JWT", Some("Bearer not.a.token".into()), "not a JWT"),
        (
            "signed by a forger under the issuer's key id",
            Some(format!(
                "Bearer {}",
                fake.sign(SigningKey::Forger, current, &good)
            )),
            "invalid token signature",
        ),
        (
            "signed by a key nobody published",
            Some(format!(
                "Bearer {}",
                fake.sign(SigningKey::Forger, SigningKey::Forger.kid(), &good)
            )),
            "does not publish",
        ),
        (
            "expired six minutes ago",
            Some(signed(Claims {
                exp_in: -6 * 60,
                nbf_in: -3600,
                ..good.clone()
            })),
            "has expired",
        ),
        (
            "not valid for another ten minutes",
            Some(signed(Claims {
                nbf_in: 10 * 60,
                ..good.clone()
            })),
            "not valid yet",
        ),
        (
            "for another bot",
            Some(signed(Claims {
                aud: "11111111-2222-3333-4444-555555555555".into(),
                ..good.clone()
            })),
            "audience",
        ),
        (
            "from another issuer",
            Some(signed(Claims {
                iss: "https://sts.windows.net/d6d49420-f39b-4df7-a1dc-d59a935871db/".into(),
                ..good.clone()
            })),
            "not issued by the Bot Framework",
        ),
        (
            "without a service URL",
            Some(signed(Claims {
                serviceurl: None,
                ..good.clone()
            })),
            "serviceurl",
        ),
        (
            "for another service URL",
            Some(signed(Claims {
                serviceurl: Some("https://connector.attacker.example/".into()),
                ..good.clone()
            })),
            "serviceurl",
        ),
        ("HS256 under the issuer's key id", Some(hs256), "RS256"),
    ];
    let body = serde_json::to_vec(&activity).unwrap();
    for (what, authorization, why) in attempts {
        let (status, answer) = b.post_raw(body.clone(), authorization.as_deref()).await;
        assert_eq!(status, 401, "{what}: {answer}");
        assert!(answer.contains(why), "{what}: {answer}");
    }
    // A good token for an activity of a channel its key does not endorse.
    let mut other_channel = activity.clone();
    other_channel["channelId"] = json!("skype");
    let (status, answer) = b
        .post_raw(
            serde_json::to_vec(&other_channel).unwrap(),
            Some(&fake.bearer()),
        )
        .await;
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer.contains("does not endorse channel `skype`"),
        "{answer}"
    );
    b.assert_nothing_happened("refused requests").await;
    // Four minutes past its expiry is within the clock skew: taken.
    let late = signed(Claims {
        exp_in: -4 * 60,
        nbf_in: -3600,
        ..good.clone()
    });
    let (status, answer) = b.post_raw(body, Some(&late)).await;
    assert_eq!(status, 200, "{answer}");
    let receipt = b.fake.next_message().await;
    assert!(
        receipt.text().starts_with("Written: agent_notes"),
        "{}",
        receipt.text()
    );
}

/// The keys are fetched once and kept; a token under a key id the set does
/// not hold fetches them again (a rotation), at most once every five
/// minutes, so made-up key ids cannot make steward hammer the issuer.
#[tokio::test]
async fn a_rotated_key_is_fetched_and_unknown_keys_refetch_at_most_every_five_minutes() {
    let b = start(Config::default()).await;
    let ana = Person::new("Ana", 4);
    b.pair(&ana, Role::User).await;
    let rotated = |b: &Bot| {
        let kid = SigningKey::Rotated.kid();
        format!(
            "Bearer {}",
            b.fake.sign(SigningKey::Rotated, kid, &b.fake.claims())
        )
    };
    b.say(&ana, "hello").await;
    assert_eq!(b.fake.metadata_fetches(), 1);
    b.say(&ana, "hello again").await;
    assert_eq!(b.fake.metadata_fetches(), 1, "the keys are kept");
    // The issuer starts signing with a new key: within five minutes of the
    // last fetch, its id is unknown and not looked up again …
    b.fake.rotate();
    let (status, answer) = b
        .send_with(&b.fake.personal(&ana, "rotated too soon"), &rotated(&b))
        .await;
    assert_eq!(status, 401, "{answer}");
    assert_eq!(b.fake.metadata_fetches(), 1);
    // … after them, it is fetched and the token taken.
    b.advance(Duration::from_secs(5 * 60));
    let (status, answer) = b
        .send_with(&b.fake.personal(&ana, "rotated"), &rotated(&b))
        .await;
    assert_eq!(status, 200, "{answer}");
    b.fake.next_message().await;
    assert_eq!(b.fake.metadata_fetches(), 2);
    // A made-up key id right after: refused without another fetch.
    let forged = format!(
        "Bearer {}",
        b.fake
            .sign(SigningKey::Forger, "made-up-key", &b.fake.claims())
    );
    for n in 0..5 {
        let (status, _) = b
            .send_with(&b.fake.personal(&ana, &format!("forged {n}")), &forged)
            .await;
        assert_eq!(status, 401);
    }
    assert_eq!(b.fake.metadata_fetches(), 2);
    // Both published keys stay good.
    b.say(&ana, "still here").await;
    assert_eq!(b.fake.metadata_fetches(), 2);
}

#[tokio::test]
async fn a_redelivered_activity_is_answered_once() {
    let b = start(Config::default()).await;
    let admin = Person::new("Ada", 1);
    b.pair(&admin, Role::Admin).await;
    let activity = b
        .fake
        .personal(&admin, "@notes: The weekly report uses example_weekly");
    b.send(&activity).await;
    // The Bot Framework sends it again (it saw no answer in time, as far as
    // it knows): while the turn may still run, and after the answer.
    b.send(&activity).await;
    let receipt = b.fake.next_message().await;
    assert!(
        receipt.text().starts_with("Written: agent_notes"),
        "{}",
        receipt.text()
    );
    b.send(&activity).await;
    let answer = b.say(&admin, "Produce the weekly report").await;
    assert!(
        answer.text().contains("example_weekly"),
        "{}",
        answer.text()
    );
    assert_eq!(b.fake.messages().len(), 2, "{:?}", b.fake.messages());
    assert_eq!(b.people(&admin.chat()).await.len(), 2);
    assert_eq!(b.h.records_containing("example_weekly").await.len(), 1);
}

/// "Remember this?" is asked in the personal chat and answered there.
#[tokio::test]
async fn remember_this_and_yes_in_a_personal_chat_saves_the_preference() {
    for (name, db) in both_dbs().await {
        let b = start_on(db, Config::default()).await;
        let ana = Person::new("Ana", 4);
        b.pair(&ana, Role::User).await;
        let asked = b.say(&ana, "I prefer tea").await;
        assert!(
            asked.text().contains("Remember this?"),
            "{name}: {}",
            asked.text()
        );
        let pending = b.h.records_containing("tea").await;
        assert_eq!(pending.len(), 1, "{name}");
        assert_eq!(pending[0].status, Status::Pending, "{name}");
        let saved = b.say(&ana, "yes").await;
        let kept = b.h.records_containing("tea").await;
        assert_eq!(kept.len(), 1, "{name}");
        assert_eq!(kept[0].status, Status::Active, "{name}: {}", saved.text());
        assert_eq!(
            kept[0].owner.as_deref(),
            Some(ana.stored().as_str()),
            "{name}"
        );
    }
}

/// A person paired through the bot is the same person through the outgoing
/// webhook: one stored id, `teams:<aadObjectId>`.
#[tokio::test]
async fn a_person_is_one_identity_through_the_bot_and_the_webhook() {
    let token = teams_signer::new_token();
    let mut cfg = Config::default();
    cfg.teams.security_token = Some(token.clone());
    let b = start(cfg).await;
    let (admin, nils) = (Person::new("Ada", 1), Person::new("Nils", 2));
    b.pair(&admin, Role::Admin).await;
    b.say(&admin, "@notes: The daily report uses example_orders")
        .await;
    let code = code_in(b.say(&nils, "pair").await.text());
    b.say(&admin, &format!("/pair approve {code}")).await;
    // Nils @mentions the outgoing webhook in a channel.
    let webhook = json!({
        "type": "message",
        "id": "1767603999000",
        "timestamp": "2026-01-05T09:30:00.000Z",
        "serviceUrl": "https://smba.trafficmanager.net/emea/",
        "channelId": "msteams",
        "from": {"id": "29:1nils-webhook", "name": "Nils", "aadObjectId": nils.aad},
        "conversation": {"isGroup": true, "conversationType": "channel",
            "id": format!("{GENERAL};messageid=1767603999000"), "tenantId": TENANT},
        "text": "<at>steward</at> Produce today's daily report",
        "channelData": {"channel": {"id": GENERAL}, "tenant": {"id": TENANT}}
    });
    let body = serde_json::to_vec(&webhook).unwrap();
    let resp = b
        .client
        .post(format!("{}/teams/default", b.base))
        .header("content-type", "application/json")
        .header("authorization", teams_signer::sign(&body, &token))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let answer: Value = resp.json().await.unwrap();
    let text = answer["text"].as_str().unwrap_or_default();
    assert!(text.contains("example_orders"), "{text}");
    let users = b.h.services.pairing().users("default").await.unwrap();
    let nils_rows: Vec<_> = users
        .iter()
        .filter(|u| u.user_id.contains(&nils.aad))
        .collect();
    assert_eq!(nils_rows.len(), 1, "{users:?}");
    assert_eq!(nils_rows[0].user_id, nils.stored());
    assert_eq!(nils_rows[0].role, Role::User);
}

/// Where the bot has been — a team it was added to, a person's personal
/// chat — a scheduled run and a late delivery arrive, with no conversation
/// open; where it has not been, nothing is posted and the run says why.
#[tokio::test]
async fn a_run_is_delivered_proactively_to_conversations_the_bot_is_in() {
    for (name, db) in both_dbs().await {
        println!("on {name}");
        run_delivered_on(db).await;
    }
}

async fn run_delivered_on(db: Db) {
    use memory::run::RunOutcome;
    use steward::runs::schedules::{Schedules, Ticked};
    use steward::runs::Runner;
    password_in_the_environment();
    // The endpoints are the fake's, set by `start`.
    let cfg = Config::from_toml(&format!(
        r#"
[teams_bot]
app_id = "{APP_ID}"
app_password_env = "{PASSWORD_ENV}"
[[schedules]]
name = "digest"
cron = "0 * * * *"
text = "Post the weekly digest"
deliver = "teams_bot:{GENERAL}"
"#
    ))
    .unwrap();
    let b = start_on(db, cfg).await;
    let admin = Person::new("Ada", 1);
    b.pair(&admin, Role::Admin).await;
    b.say(
        &admin,
        "@notes: The weekly digest lists example_orders by region",
    )
    .await;
    // The bot is added to the team: its general channel's reference is kept.
    b.send(&b.fake.bot_added(GENERAL)).await;
    let schedules = Schedules::new(Runner::new(&b.h.services), start_ms());
    let slot = start_ms() + 60 * 60 * 1000;
    b.clock.set(slot + 5_000);
    let ticked = schedules.tick(slot + 5_000).await.unwrap();
    let [Ticked::Ran(run)] = ticked.as_slice() else {
        panic!("{ticked:?}");
    };
    assert_eq!(run.outcome, RunOutcome::Answered, "{run:?}");
    let posted = b.fake.next_message().await;
    assert_eq!(posted.conversation, GENERAL, "a new post in the channel");
    assert_eq!(posted.reply_to(), None);
    assert!(
        posted.text().contains("example_orders"),
        "{}",
        posted.text()
    );
    // A late answer to a person, in their personal chat.
    let to = |conversation: &str| ConversationRef {
        org: "default".into(),
        agent: "default".into(),
        conversation: conversation.into(),
    };
    let delivered = channels::deliver(
        &b.h.services,
        "teams_bot",
        &to(&admin.chat()),
        "Your export is ready",
    )
    .await
    .unwrap();
    let posted = b.fake.next_message().await;
    assert_eq!(
        (posted.conversation.as_str(), posted.text()),
        (admin.chat().as_str(), "Your export is ready")
    );
    assert_eq!(
        delivered,
        Delivered::Posted {
            ids: vec![posted.id.clone()]
        }
    );
    // Into a thread of the channel, through the channel's reference.
    let thread = format!("{GENERAL};messageid=1767600000000");
    channels::deliver(&b.h.services, "teams_bot", &to(&thread), "In the thread")
        .await
        .unwrap();
    assert_eq!(b.fake.next_message().await.conversation, thread);
    // A conversation the bot was never in.
    let before = b.fake.posted().len();
    let refused = channels::deliver(
        &b.h.services,
        "teams_bot",
        &to("19:elsewhere@thread.tacv2"),
        "Hello?",
    )
    .await;
    assert!(
        matches!(refused, Err(DeliveryError::NoRoute { .. })),
        "{refused:?}"
    );
    assert_eq!(b.fake.posted().len(), before);
}

#[tokio::test]
async fn a_429_from_the_connector_is_waited_out_and_the_answer_arrives() {
    let b = start(Config::default()).await;
    let admin = Person::new("Ada", 1);
    b.pair(&admin, Role::Admin).await;
    // The typing indicator goes first and is tried once: it meets the 503
    // and is dropped. The answer meets the 429, waits, and is posted.
    b.fake.script([
        Scripted::Unavailable,
        Scripted::TooManyRequests {
            retry_after_secs: 1,
        },
    ]);
    let receipt = b
        .say(&admin, "@notes: The daily report uses example_orders")
        .await;
    assert!(
        receipt.text().starts_with("Written: agent_notes"),
        "{}",
        receipt.text()
    );
    let statuses = b.fake.statuses();
    let codes: Vec<u16> = statuses.iter().map(|(s, _)| *s).collect();
    assert_eq!(codes, [503, 429, 201]);
    let waited = statuses[2].1 - statuses[1].1;
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After: 1 was not waited out ({waited:?})"
    );
}

/// With no signing key to check a token against (the metadata cannot be
/// fetched), a request is 503 with `Retry-After`, never taken on trust.
#[tokio::test]
async fn without_the_signing_keys_a_request_is_503_and_nothing_is_stored() {
    let mut cfg = Config::default();
    // Nothing listens there (the discard port): the keys cannot be fetched.
    cfg.teams_bot.openid_metadata_url =
        "http://127.0.0.1:9/v1/.well-known/openidconfiguration".into();
    let b = start(cfg).await;
    let admin = Person::new("Ada", 1);
    b.pair(&admin, Role::Admin).await;
    let activity = b
        .fake
        .personal(&admin, "@notes: The daily report uses example_orders");
    let resp = b
        .client
        .post(format!("{}/api/messages", b.base))
        .header("authorization", b.fake.bearer())
        .json(&activity)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "30");
    assert_eq!(b.fake.metadata_fetches(), 0);
    b.assert_nothing_happened("no keys").await;
}

#[tokio::test]
async fn an_oversized_body_is_413_and_a_body_that_is_no_activity_400() {
    let mut cfg = Config::default();
    cfg.teams_bot.max_body_bytes = Some(2048);
    let b = start(cfg).await;
    let admin = Person::new("Ada", 1);
    let big = b.fake.personal(&admin, &"x".repeat(4000));
    let (status, answer) = b.send_with(&big, &b.fake.bearer()).await;
    assert_eq!(status, 413, "{answer}");
    for (what, body) in [
        ("not JSON", b"{\"type\": ".to_vec()),
        ("no type", br#"{"text":"hi"}"#.to_vec()),
    ] {
        let (status, answer) = b.post_raw(body, Some(&b.fake.bearer())).await;
        assert_eq!(status, 400, "{what}: {answer}");
    }
    b.assert_nothing_happened("refused bodies").await;
}

#[tokio::test]
async fn without_its_password_there_is_no_teams_bot() {
    password_in_the_environment();
    // Off: no route.
    let h = Harness::new().await;
    let resp = tower::ServiceExt::oneshot(
        app(AppState::new(h.services.clone())),
        axum::http::Request::post("/api/messages")
            .body(axum::body::Body::from("{}"))
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(resp.status(), 404);
    // Named but unset: `serve` does not start.
    let mut cfg = Config::default();
    cfg.teams_bot.app_id = Some(APP_ID.into());
    cfg.teams_bot.app_password_env = Some("TEAMS_BOT_TEST_NEVER_SET".into());
    let h = Harness::with_config(cfg).await;
    let refused = steward::channels::teams_bot::TeamsBot
        .worker(&h.services)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        refused.contains("TEAMS_BOT_TEST_NEVER_SET, which is not set"),
        "{refused}"
    );
    // The password is never in the file: a value that is no variable name is refused …
    let err = Config::from_toml(&format!(
        "[teams_bot]\napp_id = \"{APP_ID}\"\napp_password_env = \"{APP_PASSWORD}\""
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("teams_bot.app_password_env"), "{err}");
    // … nor is there a key for it.
    let err = Config::from_toml(&format!(
        "[teams_bot]\napp_id = \"{APP_ID}\"\napp_password = \"{APP_PASSWORD}\""
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("app_password"), "{err}");
    // From a file, as a mounted secret.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app-password");
    std::fs::write(&file, format!("{APP_PASSWORD}\n")).unwrap();
    let cfg = Config::from_toml(&format!(
        "[teams_bot]\napp_id = \"{APP_ID}\"\napp_password_file = \"{}\"",
        file.display()
    ))
    .unwrap();
    let h = Harness::with_config(cfg).await;
    assert!(steward::channels::teams_bot::TeamsBot
        .worker(&h.services)
        .is_ok());
}
