//! One scripted conversation over every channel on both databases, and the
//! dashboard's sign-in link sent in private.

use super::*;

use memory::run::{RunOutcome, Trigger};
use memory::{Db, Status};
use std::net::SocketAddr;
use steward::config::oidc::OidcConfig;
use steward::config::{Deliver, Procedure, RunTarget};
use steward::runs::{Runner, Start};
use steward_tests::both_dbs;
use steward_tests::dashboard::field_value;
use steward_tests::fake_oidc::{self, FakeOidc};
use steward_tests::teams_signer::{card_text, FakeWorkflows};

/// The channels the script runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Discord,
    Slack,
    TeamsBot,
    TeamsWebhook,
    Dashboard,
}

const CHANNELS: [Via; 5] = [
    Via::Discord,
    Via::Slack,
    Via::TeamsBot,
    Via::TeamsWebhook,
    Via::Dashboard,
];

/// Discord: a channel of the guild that a question is asked in, and DMs.
const THREAD: u64 = 1_180_000_000_000_000_102;
const ANA_DM: u64 = 1_180_000_000_000_000_201;
const NEW_DM: u64 = 1_180_000_000_000_000_202;
/// Slack: the workspace's channel, and the two people's DM channels.
const SLACK_GENERAL: &str = "C0GENERAL";
/// Teams: the team's general channel (both the bot and the webhook are in it).
const TEAMS_GENERAL: &str = "19:general@thread.tacv2";

/// steward with every channel configured, on `db`, on a real socket.
struct World {
    h: Harness,
    addr: SocketAddr,
    client: reqwest::Client,
    discord: FakeDiscord,
    slack: FakeSlack,
    bot: FakeBotFramework,
    workflows: FakeWorkflows,
    oidc: FakeOidc,
    teams_token: String,
    /// Discord: the administrator and the newcomer.
    ana: FakeUser,
    newcomer: FakeUser,
    acme: Workspace,
    /// Teams: the administrator and the newcomer (by their AAD object ids).
    ada: Person,
    nils: Person,
    /// The dashboard: the built-in admin's browser and the newcomer's.
    admin_browser: Browser,
    nils_browser: Browser,
    stop: Option<oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<Result<std::io::Result<()>, workers::WorkerError>>>,
    _secret: tempfile::TempDir,
}

/// A browser over HTTP that keeps its cookies and follows nothing by itself.
struct Browser {
    client: reqwest::Client,
    cookies: std::collections::BTreeMap<String, String>,
}

/// One HTTP answer: status, where it sends the browser, body.
struct Page {
    status: u16,
    location: Option<String>,
    body: String,
}

impl Browser {
    fn new() -> Browser {
        Browser {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            cookies: Default::default(),
        }
    }

    async fn send(&mut self, req: reqwest::RequestBuilder) -> Page {
        let cookie: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let resp = req
            .header("cookie", cookie.join("; "))
            .send()
            .await
            .expect("request");
        for set in resp.headers().get_all("set-cookie") {
            let pair = set
                .to_str()
                .expect("ascii")
                .split(';')
                .next()
                .unwrap_or_default();
            let (name, value) = pair.split_once('=').expect("name=value");
            if value.is_empty() {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.into(), value.into());
            }
        }
        Page {
            status: resp.status().as_u16(),
            location: resp
                .headers()
                .get("location")
                .map(|l| l.to_str().expect("ascii").to_string()),
            body: resp.text().await.expect("body"),
        }
    }

    async fn get(&mut self, url: &str) -> Page {
        let req = self.client.get(url);
        self.send(req).await
    }

    async fn post(&mut self, url: &str, fields: &[(&str, &str)]) -> Page {
        let req = self.client.post(url).form(fields);
        self.send(req).await
    }

    /// POST a form and follow its redirect back to a page of `base`.
    async fn submit(&mut self, base: &str, path: &str, fields: &[(&str, &str)]) -> Page {
        let sent = self.post(&format!("{base}{path}"), fields).await;
        assert_eq!(sent.status, 303, "{path}: {}", sent.body);
        let to = sent.location.expect("a redirect");
        self.get(&format!("{base}{to}")).await
    }

    async fn csrf(&mut self, base: &str) -> String {
        let page = self.get(&format!("{base}/dashboard/chat")).await;
        field_value(&page.body, "csrf").expect("a csrf field on the chat page")
    }
}

fn code_in(text: &str) -> String {
    text.split("pairing code is ")
        .nth(1)
        .and_then(|rest| rest.get(..8))
        .unwrap_or_else(|| panic!("no pairing code in {text:?}"))
        .to_string()
}

/// A fresh Slack message `ts`, now.
fn slack_ts() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(100);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{}.{n:06}", Utc::now().timestamp())
}

impl World {
    async fn start(db: Db) -> World {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let callback = format!("http://{addr}/dashboard/oidc/callback");
        let discord =
            FakeDiscord::start(TOKEN, FakeUser::new(BOT, "steward").bot(), Utc::now()).await;
        let slack = FakeSlack::start(SLACK_TOKEN, []).await;
        std::env::set_var(SLACK_SECRET_ENV, SLACK_SECRET);
        std::env::set_var(SLACK_TOKEN_ENV, SLACK_TOKEN);
        let bot = FakeBotFramework::start(|| Utc::now().timestamp_millis()).await;
        std::env::set_var(TEAMS_BOT_PASSWORD_ENV, fake_bot_framework::APP_PASSWORD);
        let workflows = FakeWorkflows::start([]).await;
        let oidc = FakeOidc::start(&callback, || Utc::now().timestamp()).await;
        let secret = tempfile::tempdir().expect("dir");
        let secret_file = secret.path().join("client_secret");
        std::fs::write(&secret_file, fake_oidc::CLIENT_SECRET).expect("secret file");
        let teams_token = new_token();
        let mut cfg = Config::from_toml(&format!(
            "[discord]\ntoken = \"{TOKEN}\"\napi_base = \"{}\"\n[slack]\nsigning_secret_env = \"{SLACK_SECRET_ENV}\"\nbot_token_env = \"{SLACK_TOKEN_ENV}\"\napi_base = \"{}\"\n[teams]\nsecurity_token = \"{teams_token}\"\n[teams_bot]\napp_id = \"{}\"\napp_password_env = \"{TEAMS_BOT_PASSWORD_ENV}\"\nopenid_metadata_url = \"{}\"\ntoken_endpoint = \"{}\"\n[dashboard]\nadmin_token = \"{DASHBOARD_TOKEN}\"\n",
            discord.base_url(),
            slack.api_base,
            fake_bot_framework::APP_ID,
            bot.openid_metadata_url,
            bot.token_endpoint,
        ))
        .expect("config");
        cfg.teams.workflows = [(TEAMS_GENERAL.to_string(), workflows.url.clone())].into();
        cfg.oidc = OidcConfig {
            issuer: Some(oidc.issuer.clone()),
            client_id: fake_oidc::CLIENT_ID.into(),
            client_secret_file: Some(secret_file.display().to_string()),
            redirect_url: callback,
            provider_name: "Contoso".into(),
            ..Default::default()
        };
        cfg.oidc.check().expect("a valid [oidc] section");
        cfg.dashboard.public_url = Some(format!("http://{addr}"));
        // More sign-ins than a person makes; the limits are dashboard_sign_in.rs's.
        cfg.dashboard.sign_in_per_minute = 1_000;
        cfg.dashboard.sign_in_global_per_minute = 1_000;
        let h = Harness::on(db, cfg);
        let (ana, newcomer) = (
            FakeUser::new(1_180_000_000_000_000_011, "ana"),
            FakeUser::new(1_180_000_000_000_000_022, "nils"),
        );
        let acme = Workspace::new("T0ACME");
        let (ada, nils) = (Person::new("Ada", 1), Person::new("Nils", 2));
        let p = h.services.pairing();
        for (id, name) in [
            (ana.stored(), "Ana"),
            (acme.stored("U0ADMIN"), "Ana"),
            (ada.stored(), "Ada"),
        ] {
            p.add_user("default", &id, name, Role::Admin, "test", 1)
                .await
                .expect("pair an administrator");
        }
        let (stop, stopped) = oneshot::channel::<()>();
        let server = serve(listener, AppState::new(h.services.clone()), async {
            let _ = stopped.await;
        });
        let channel = steward::channels::discord::worker(&h.services)
            .expect("settings")
            .expect("discord on");
        let running = workers::start(vec![Box::new(channel)], &CancellationToken::new());
        let serving = tokio::spawn(running.beside(server));
        discord.identified().await;
        discord.commands().await;
        World {
            h,
            addr,
            client: reqwest::Client::new(),
            discord,
            slack,
            bot,
            workflows,
            oidc,
            teams_token,
            ana,
            newcomer,
            acme,
            ada,
            nils,
            admin_browser: Browser::new(),
            nils_browser: Browser::new(),
            stop: Some(stop),
            serving: Some(serving),
            _secret: secret,
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    async fn finish(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            let served = serving.await.expect("serve task").expect("stopped cleanly");
            served.expect("served");
        }
        assert!(
            self.discord.unknown_routes().is_empty(),
            "{:?}",
            self.discord.unknown_routes()
        );
    }

    /// The newcomer's stored id on `via`.
    fn newcomer_id(&self, via: Via) -> String {
        match via {
            Via::Discord => self.newcomer.stored(),
            Via::Slack => self.acme.stored("U0NEW"),
            Via::TeamsBot | Via::TeamsWebhook | Via::Dashboard => self.nils.stored(),
        }
    }

    // ---- Discord

    async fn discord_dm(&self, who: &FakeUser, dm: u64, text: &str) -> String {
        self.discord.dm(dm, who, text);
        self.discord.message_in(dm).await.content().to_string()
    }

    // ---- Slack

    async fn slack_post(&self, event: &Value) {
        let body = serde_json::to_vec(event).expect("json");
        let at = Utc::now().timestamp().to_string();
        let resp = self
            .client
            .post(format!("{}/slack/events", self.base()))
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
    }

    async fn slack_dm(&self, user: &str, text: &str) -> String {
        let (ts, dm) = (slack_ts(), format!("D{user}"));
        self.slack_post(&self.acme.dm(&format!("Ev{ts}"), user, &dm, &ts, text))
            .await;
        let posted = self.slack.next_post().await;
        assert_eq!(
            (posted.channel.as_str(), posted.thread_ts.as_deref()),
            (dm.as_str(), None)
        );
        posted.shown()
    }

    // ---- Teams, the bot

    async fn bot_activity(&self, activity: &Value) {
        let resp = self
            .client
            .post(format!("{}/api/messages", self.base()))
            .header("authorization", self.bot.bearer())
            .json(activity)
            .send()
            .await
            .expect("Bot Framework request");
        assert_eq!(resp.status(), 200);
    }

    async fn bot_personal(&self, who: &Person, text: &str) -> String {
        self.bot_activity(&self.bot.personal(who, text)).await;
        let posted = self.bot.next_message().await;
        assert_eq!(
            posted.conversation,
            who.chat(),
            "answered in the personal chat"
        );
        posted.text().to_string()
    }

    // ---- Teams, the outgoing webhook

    /// `who` @mentions steward in the general channel's thread: the answer.
    async fn webhook(&self, who: &Person, text: &str) -> String {
        let body = serde_json::to_vec(&json!({
            "type": "message",
            "id": fake_bot_framework::activity_id(),
            "timestamp": Utc::now().to_rfc3339(),
            "serviceUrl": "https://smba.trafficmanager.net/emea/",
            "channelId": "msteams",
            "from": {"id": format!("29:{}", who.aad), "name": who.name, "aadObjectId": who.aad},
            "conversation": {
                "isGroup": true,
                "conversationType": "channel",
                "id": format!("{TEAMS_GENERAL};messageid=1767600000000"),
            },
            "textFormat": "plain",
            "text": format!("<at>steward</at> {text}"),
            "channelData": {
                "teamsChannelId": TEAMS_GENERAL,
                "channel": {"id": TEAMS_GENERAL},
                "team": {"id": "19:team@thread.tacv2"},
            }
        }))
        .expect("json");
        let resp = self
            .client
            .post(format!("{}/teams/default", self.base()))
            .header("authorization", sign(&body, &self.teams_token))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("teams request");
        assert_eq!(resp.status(), 200);
        let answer: Value = resp.json().await.expect("json");
        assert_eq!(answer["type"], "message", "{answer}");
        answer["text"].as_str().unwrap_or_default().to_string()
    }

    // ---- the dashboard

    async fn admin_signed_in(&mut self) -> String {
        let base = self.base();
        if !self.admin_browser.cookies.contains_key("steward_session") {
            let signed = self
                .admin_browser
                .post(
                    &format!("{base}/dashboard/login"),
                    &[("token", DASHBOARD_TOKEN)],
                )
                .await;
            assert_eq!(signed.status, 303, "{}", signed.body);
        }
        self.admin_browser.csrf(&base).await
    }

    /// The newcomer signs in through the identity provider: the callback's page.
    async fn nils_signs_in(&mut self) -> Page {
        let base = self.base();
        self.oidc
            .log_in_as(Some(fake_oidc::Person::new(&self.nils.aad, "Nils")));
        let start = self
            .nils_browser
            .get(&format!("{base}/dashboard/oidc/start"))
            .await;
        assert_eq!(start.status, 303, "{}", start.body);
        let at_provider = start.location.expect("to the provider");
        let back = self.nils_browser.get(&at_provider).await;
        let callback = back.location.expect("back to steward");
        self.nils_browser.get(&callback).await
    }

    /// Send `text` in the dashboard chat of `browser`: the newest answer.
    async fn dashboard_chat(&mut self, admin: bool, text: &str) -> (String, Page) {
        let base = self.base();
        let browser = if admin {
            &mut self.admin_browser
        } else {
            &mut self.nils_browser
        };
        let csrf = browser.csrf(&base).await;
        let page = browser
            .submit(&base, "/dashboard/chat", &[("csrf", &csrf), ("text", text)])
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        (newest_answer(&page.body), page)
    }
}

/// The newest of steward's lines on a chat page (the log is newest first).
fn newest_answer(page: &str) -> String {
    let at = page
        .find("class=\"msg bot\"")
        .unwrap_or_else(|| panic!("no answer on the chat page: {page}"));
    let rest = &page[at..];
    let text = rest
        .split("<div class=\"text\">")
        .nth(1)
        .and_then(|t| t.split("</div>").next())
        .unwrap_or_default();
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The script's steps, as each channel carries them out.
impl World {
    /// Step 1a: The newcomer asks for a pairing code in private: the code.
    async fn pair_request(&mut self, via: Via) -> String {
        let asked = match via {
            Via::Discord => {
                let newcomer = self.newcomer.clone();
                self.discord_dm(&newcomer, NEW_DM, "/pair").await
            }
            Via::Slack => self.slack_dm("U0NEW", "/pair").await,
            Via::TeamsBot => self.bot_personal(&self.nils, "pair").await,
            Via::TeamsWebhook => {
                // In the channel, no code: it would show to everyone.
                let refused = self.webhook(&self.nils, "/pair").await;
                assert!(refused.contains("only in private"), "{refused}");
                self.bot_personal(&self.nils, "pair").await
            }
            Via::Dashboard => {
                // Signing in unpaired is turned away, and says how to pair.
                let refused = self.nils_signs_in().await;
                assert_eq!(refused.status, 403, "{}", refused.body);
                assert!(refused.body.contains("/pair"), "{}", refused.body);
                assert!(!self.nils_browser.cookies.contains_key("steward_session"));
                self.bot_personal(&self.nils, "pair").await
            }
        };
        code_in(&asked)
    }

    /// Step 1b: An administrator approves the code, where they speak to steward.
    async fn approve(&mut self, via: Via, code: &str) -> String {
        let approve = format!("/pair approve {code}");
        match via {
            Via::Discord => {
                let ana = self.ana.clone();
                self.discord_dm(&ana, ANA_DM, &approve).await
            }
            Via::Slack => self.slack_dm("U0ADMIN", &approve).await,
            Via::TeamsBot => self.bot_personal(&self.ada, &approve).await,
            Via::TeamsWebhook => self.webhook(&self.ada, &approve).await,
            Via::Dashboard => {
                let (base, csrf) = (self.base(), self.admin_signed_in().await);
                let page = self
                    .admin_browser
                    .submit(
                        &base,
                        "/dashboard/pairing/approve",
                        &[("csrf", &csrf), ("code", code), ("role", "user")],
                    )
                    .await;
                page.body
            }
        }
    }

    /// Step 2: The administrator teaches with `@notes:`: the receipt.
    async fn admin_notes(&mut self, via: Via, text: &str) -> String {
        match via {
            Via::Discord => {
                let ana = self.ana.clone();
                self.discord_dm(&ana, ANA_DM, text).await
            }
            Via::Slack => self.slack_dm("U0ADMIN", text).await,
            Via::TeamsBot => self.bot_personal(&self.ada, text).await,
            Via::TeamsWebhook => self.webhook(&self.ada, text).await,
            Via::Dashboard => {
                self.admin_signed_in().await;
                self.dashboard_chat(true, text).await.0
            }
        }
    }

    /// Step 3: The newcomer asks in a thread of a shared channel, mentioning
    /// steward: the answer, checked to be in that thread.
    async fn ask_in_thread(&mut self, via: Via, text: &str) -> String {
        match via {
            Via::Discord => {
                let newcomer = self.newcomer.clone();
                self.discord.mention(GUILD, THREAD, &newcomer, text);
                self.discord.message_in(THREAD).await.content().to_string()
            }
            Via::Slack => {
                let (root, ts) = (slack_ts(), slack_ts());
                let event = self.acme.mention(
                    &format!("Ev{ts}"),
                    "U0NEW",
                    SLACK_GENERAL,
                    &ts,
                    Some(&root),
                    text,
                );
                self.slack_post(&event).await;
                let posted = self.slack.next_post().await;
                assert_eq!(
                    (posted.channel.as_str(), posted.thread_ts.as_deref()),
                    (SLACK_GENERAL, Some(root.as_str()))
                );
                posted.shown()
            }
            Via::TeamsBot => {
                let root = "1767600000123";
                let activity =
                    self.bot
                        .channel_mention(&self.nils, TEAMS_GENERAL, Some(root), text);
                self.bot_activity(&activity).await;
                let posted = self.bot.next_message().await;
                assert_eq!(
                    posted.conversation,
                    format!("{TEAMS_GENERAL};messageid={root}")
                );
                posted.text().to_string()
            }
            Via::TeamsWebhook => self.webhook(&self.nils, text).await,
            Via::Dashboard => {
                let signed = self.nils_signs_in().await;
                assert_eq!(signed.status, 200, "{}", signed.body);
                self.dashboard_chat(false, text).await.0
            }
        }
    }

    /// Step 4a: The newcomer states a preference (in private where the channel
    /// has it): steward's question.
    async fn prefer(&mut self, via: Via, text: &str) -> String {
        match via {
            Via::Discord => {
                let newcomer = self.newcomer.clone();
                self.discord_dm(&newcomer, NEW_DM, text).await
            }
            Via::Slack => self.slack_dm("U0NEW", text).await,
            Via::TeamsBot => self.bot_personal(&self.nils, text).await,
            Via::TeamsWebhook => self.webhook(&self.nils, text).await,
            Via::Dashboard => self.dashboard_chat(false, text).await.0,
        }
    }

    /// Step 4b: … and says yes: steward's answer.
    async fn yes(&mut self, via: Via) -> String {
        match via {
            Via::Dashboard => {
                let base = self.base();
                let csrf = self.nils_browser.csrf(&base).await;
                let chat = self
                    .nils_browser
                    .get(&format!("{base}/dashboard/chat"))
                    .await;
                let batch = field_value(&chat.body, "batch").expect("a Yes/No form");
                let page = self
                    .nils_browser
                    .submit(
                        &base,
                        "/dashboard/chat/answer",
                        &[("csrf", &csrf), ("batch", &batch), ("answer", "yes")],
                    )
                    .await;
                assert!(!page.body.contains("id=\"proposal\""), "answered");
                newest_answer(&page.body)
            }
            _ => self.prefer(via, "yes").await,
        }
    }

    /// Step 5: Where a run of this channel is delivered.
    fn deliver(&self, via: Via) -> Deliver {
        let to = |channel: &str, conversation: String| Deliver::Channel {
            channel: channel.into(),
            conversation,
        };
        match via {
            Via::Discord => to("discord", GENERAL.to_string()),
            Via::Slack => to("slack", SLACK_GENERAL.into()),
            Via::TeamsBot => to("teams_bot", TEAMS_GENERAL.into()),
            Via::TeamsWebhook => to("teams", TEAMS_GENERAL.into()),
            Via::Dashboard => Deliver::Dashboard,
        }
    }

    /// Step 5: What the run's delivery showed, where it was delivered.
    async fn delivered(&mut self, via: Via, run: i64) -> String {
        match via {
            Via::Discord => self.discord.message_in(GENERAL).await.content().to_string(),
            Via::Slack => {
                let posted = self.slack.next_post().await;
                assert_eq!(
                    (posted.channel.as_str(), posted.thread_ts.as_deref()),
                    (SLACK_GENERAL, None)
                );
                posted.shown()
            }
            Via::TeamsBot => {
                let posted = self.bot.next_message().await;
                assert_eq!(
                    (posted.conversation.as_str(), posted.reply_to()),
                    (TEAMS_GENERAL, None)
                );
                posted.text().to_string()
            }
            Via::TeamsWebhook => card_text(&self.workflows.next_post().await),
            Via::Dashboard => {
                self.admin_signed_in().await;
                let base = self.base();
                let page = self
                    .admin_browser
                    .get(&format!("{base}/dashboard/runs/{run}"))
                    .await;
                assert_eq!(page.status, 200, "{}", page.body);
                page.body
            }
        }
    }
}

/// The script, over `via`, on a fresh world on `db`.
async fn script(via: Via, db: Db, on: &str) {
    let mut w = World::start(db).await;
    let at = format!("{via:?} on {on}");
    if via == Via::TeamsBot {
        // The bot installed in the team: where it may post unasked.
        w.bot_activity(&w.bot.bot_added(TEAMS_GENERAL)).await;
    }

    // 1. Pairing in private.
    let code = w.pair_request(via).await;
    let newcomer = w.newcomer_id(via);
    let p = w.h.services.pairing().clone();
    assert!(
        p.resolve("default", &newcomer)
            .await
            .expect("store")
            .is_none(),
        "{at}: paired before approval"
    );
    let approved = w.approve(via, &code).await;
    assert!(approved.contains("paired as user"), "{at}: {approved}");
    let paired = p
        .resolve("default", &newcomer)
        .await
        .expect("store")
        .unwrap_or_else(|| panic!("{at}: {newcomer} is not paired"));
    assert_eq!(paired.role, Role::User, "{at}");

    // 2. An administrator's `@notes:`.
    let receipt = w
        .admin_notes(via, "@notes: The daily report uses example_orders")
        .await;
    assert!(
        receipt.starts_with("Written: agent_notes updated"),
        "{at}: {receipt}"
    );

    // 3. A question in a thread, served from the note.
    let answer = w.ask_in_thread(via, "Produce today's daily report").await;
    assert!(answer.contains("example_orders"), "{at}: {answer}");

    // 4. A preference: asked, then saved on yes, as the newcomer's own.
    let asked = w.prefer(via, "I prefer tea").await;
    assert!(asked.contains("Remember this?"), "{at}: {asked}");
    let pending = w.h.records_containing("tea").await;
    assert_eq!(pending.len(), 1, "{at}: {pending:?}");
    assert_eq!(pending[0].status, Status::Pending, "{at}");
    let saved = w.yes(via).await;
    assert!(!saved.is_empty(), "{at}");
    let kept = w.h.records_containing("tea").await;
    assert_eq!(kept.len(), 1, "{at}: {kept:?}");
    assert_eq!(kept[0].status, Status::Active, "{at}: {saved}");
    assert_eq!(kept[0].owner.as_deref(), Some(newcomer.as_str()), "{at}");

    // 5. A run, delivered to this channel.
    let target = RunTarget {
        name: "daily".into(),
        org: "default".into(),
        agent: "default".into(),
        procedure: Procedure::Text("Produce today's daily report".into()),
        deliver: w.deliver(via),
    };
    let runner = Runner::new(&w.h.services);
    let prepared = runner
        .prepare(&target, Trigger::Schedule)
        .await
        .expect("prepared");
    let run = runner
        .run_now(&prepared, &Start::default())
        .await
        .expect("run");
    assert_eq!(run.outcome, RunOutcome::Answered, "{at}: {run:?}");
    let shown = w.delivered(via, run.id).await;
    assert!(shown.contains("example_orders"), "{at}: {shown}");

    w.finish().await;
}

#[tokio::test]
async fn one_conversation_passes_over_every_channel_on_both_databases() {
    for via in CHANNELS {
        for (on, db) in both_dbs().await {
            script(via, db, on).await;
        }
    }
}

// ------------------------------------------------------------------------
// `/web`: a one-time sign-in link, in private, on Slack and the Teams bot.

/// The link in `text`, and its token.
fn link_in(text: &str, base: &str) -> (String, String) {
    let start = format!("{base}/web/sign-in/");
    let at = text
        .find(&start)
        .unwrap_or_else(|| panic!("no sign-in link in {text:?}"));
    let link: String = text[at..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let token = link[start.len()..].to_string();
    (link, token)
}

impl World {
    /// `/web` from the newcomer in a shared channel of `via`: the answer there.
    async fn web_in_group(&mut self, via: Via) -> String {
        self.ask_in_thread(via, "/web").await
    }

    /// `/web` from the newcomer in private on `via`: the answer.
    async fn web_in_private(&mut self, via: Via) -> String {
        self.prefer(via, "/web").await
    }

    /// The newcomer's private conversation on `via`, as stored.
    fn private_conversation(&self, via: Via) -> String {
        match via {
            Via::Slack => "DU0NEW".into(),
            _ => self.nils.chat(),
        }
    }

    async fn sign_in_links(&self) -> i64 {
        self.h.db().row_count("sign_in_links").await.expect("count")
    }
}

/// A paired person sends `/web` in a direct message and gets a link that
/// signs them in as themselves once; in a channel, unpaired, reused,
/// expired or unknown, nobody is signed in; both ends are audited; and the
/// session's role is read on every request, so revoking them signs them out.
#[tokio::test]
async fn web_sends_a_one_time_sign_in_link_in_private_on_slack_and_the_teams_bot() {
    for (on, db) in both_dbs().await {
        let mut w = World::start(db).await;
        let base = w.base();
        let p = w.h.services.pairing().clone();
        for (id, name) in [
            (w.acme.stored("U0NEW"), "Nils S"),
            (w.nils.stored(), "Nils T"),
        ] {
            p.add_user("default", &id, name, Role::User, "test", 1)
                .await
                .expect("pair");
        }
        for via in [Via::Slack, Via::TeamsBot] {
            let at = format!("{via:?} on {on}");
            let user = w.newcomer_id(via);
            let before = w.sign_in_links().await;

            // In a channel: refused, and nothing is made.
            let refused = w.web_in_group(via).await;
            assert!(refused.contains("only in private"), "{at}: {refused}");
            assert_eq!(w.sign_in_links().await, before, "{at}");

            // In private: a link, shown once; the stored reply has no token.
            let sent = w.web_in_private(via).await;
            let (link, token) = link_in(&sent, &base);
            assert!(token.len() >= 40, "{at}: {token}");
            assert_eq!(w.sign_in_links().await, before + 1, "{at}");
            let stored =
                w.h.db()
                    .conversations()
                    .history("default", "default", &w.private_conversation(via))
                    .await
                    .expect("history");
            assert!(
                stored.iter().any(|m| m.text.contains("sign-in link")),
                "{at}: the reply is stored"
            );
            assert!(
                stored.iter().all(|m| !m.text.contains(&token)),
                "{at}: the token was stored"
            );

            // Opening it (as a link preview would) spends nothing.
            let mut browser = Browser::new();
            for _ in 0..2 {
                let page = browser.get(&link).await;
                assert_eq!(page.status, 200, "{at}: {}", page.body);
                assert!(page.body.contains("id=\"use-link\""), "{at}");
            }
            assert!(!browser.cookies.contains_key("steward_session"), "{at}");

            // Its button signs the person in, as themselves.
            let signed = browser.post(&link, &[]).await;
            assert_eq!(signed.status, 200, "{at}: {}", signed.body);
            assert!(
                signed.body.contains("Welcome, Nils"),
                "{at}: {}",
                signed.body
            );
            assert!(browser.cookies.contains_key("steward_session"), "{at}");
            let me = browser.get(&format!("{base}/dashboard/me")).await;
            assert_eq!(me.status, 200, "{at}: {}", me.body);
            assert!(me.body.contains(&user), "{at}: not their own page");
            let admin_page = browser.get(&format!("{base}/dashboard/pairing")).await;
            assert_eq!(admin_page.status, 403, "{at}: a user on an admin page");

            // Used once: a second use signs nobody in.
            let mut other = Browser::new();
            let reused = other.post(&link, &[]).await;
            assert_eq!(reused.status, 410, "{at}: {}", reused.body);
            assert!(
                reused.body.contains("already used"),
                "{at}: {}",
                reused.body
            );
            assert!(!other.cookies.contains_key("steward_session"), "{at}");

            // Issued and used, each audited under the person.
            let audit = w.h.db().audit();
            for action in ["dashboard.link_issued", "dashboard.link_sign_in"] {
                let rows = audit.about("default", action, &user).await.expect("audit");
                assert!(
                    rows.iter().any(|r| r.actor == user),
                    "{at}: no {action} by {user}: {rows:?}"
                );
            }

            // The role is read on every request: revoked, signed out.
            p.revoke("default", &user, "test", 2).await.expect("revoke");
            let gone = browser.get(&format!("{base}/dashboard/me")).await;
            assert_eq!(gone.location.as_deref(), Some("/dashboard/login"), "{at}");
        }

        // A link steward never gave, and one past its time.
        let mut browser = Browser::new();
        let unknown = browser
            .post(&format!("{base}/web/sign-in/{}", "A".repeat(43)), &[])
            .await;
        assert_eq!(unknown.status, 404, "{on}: {}", unknown.body);
        p.add_user(
            "default",
            &w.acme.stored("U0OLD"),
            "Old",
            Role::User,
            "test",
            3,
        )
        .await
        .expect("pair");
        let now = Utc::now().timestamp_millis();
        let stale = p
            .create_sign_in_link(
                "default",
                &w.acme.stored("U0OLD"),
                now - 11 * 60_000,
                10 * 60_000,
            )
            .await
            .expect("a link made 11 minutes ago");
        let expired = browser
            .post(&format!("{base}/web/sign-in/{stale}"), &[])
            .await;
        assert_eq!(expired.status, 410, "{on}: {}", expired.body);
        assert!(expired.body.contains("expired"), "{on}: {}", expired.body);
        assert!(!browser.cookies.contains_key("steward_session"), "{on}");

        // A form posted from another site signs nobody in, and spends nothing.
        let fresh = p
            .create_sign_in_link("default", &w.acme.stored("U0OLD"), now, 10 * 60_000)
            .await
            .expect("a link");
        let req = browser
            .client
            .post(format!("{base}/web/sign-in/{fresh}"))
            .header("sec-fetch-site", "cross-site");
        let forged = browser.send(req).await;
        assert_eq!(forged.status, 403, "{on}: {}", forged.body);
        let used = browser
            .post(&format!("{base}/web/sign-in/{fresh}"), &[])
            .await;
        assert_eq!(used.status, 200, "{on}: still unspent: {}", used.body);

        // An unpaired sender gets no link.
        let before = w.sign_in_links().await;
        let (ts, dm) = (slack_ts(), "DU0STRANGER".to_string());
        w.slack_post(
            &w.acme
                .dm(&format!("Ev{ts}"), "U0STRANGER", &dm, &ts, "/web"),
        )
        .await;
        let answer = w.slack.next_post().await.shown();
        assert!(!answer.contains("/web/sign-in/"), "{on}: {answer}");
        assert_eq!(w.sign_in_links().await, before, "{on}");
        w.finish().await;
    }
}
