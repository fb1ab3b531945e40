//! The Discord channel end to end: the real serenity adapter talks to a fake
//! Discord over real HTTP and a real gateway websocket, and runs every event
//! through the real turn loop on SQLite.

use adapters::discord::{self, parse_answer_id, DiscordSettings};
use adapters::{ConversationKind, TurnHandler};
use chrono::{TimeZone, Utc};
use memory::{Role, Scope, Status};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use steward::channels::{self, ConversationRef, Delivered, DeliveryError};
use steward::workers::{self, CancellationToken};
use steward::Config;
use steward_tests::fake_discord::{id_of, FakeDiscord, FakeUser, Posted, RecordingTurns, Sent};
use steward_tests::Harness;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const TOKEN: &str = "MTE4MDAwMDAwMDAwMDAwMDAwMQ.fake.bot-token";
const BOT: u64 = 1_180_000_000_000_000_001;
const GUILD: u64 = 1_180_000_000_000_000_100;
const GENERAL: u64 = 1_180_000_000_000_000_101;
const ADMIN_DM: u64 = 1_180_000_000_000_000_201;
const BOB_DM: u64 = 1_180_000_000_000_000_202;
const CAROL_DM: u64 = 1_180_000_000_000_000_203;

fn ana() -> FakeUser {
    FakeUser::new(1_180_000_000_000_000_011, "ana")
}
fn bob() -> FakeUser {
    FakeUser::new(1_180_000_000_000_000_022, "bob")
}
fn carol() -> FakeUser {
    FakeUser::new(1_180_000_000_000_000_033, "carol")
}

struct World {
    h: Harness,
    fake: FakeDiscord,
    turns: Arc<RecordingTurns>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), discord::DiscordError>>,
}

impl World {
    async fn new() -> World {
        World::with(Harness::new().await, HashMap::new()).await
    }

    /// The adapter on `h`'s turn loop, connected to a fresh fake Discord.
    async fn with(h: Harness, guild_orgs: HashMap<u64, String>) -> World {
        let start = Utc
            .with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
            .single()
            .expect("date");
        let fake = FakeDiscord::start(TOKEN, FakeUser::new(BOT, "steward").bot(), start).await;
        let turns = RecordingTurns::new(h.turns.clone());
        let settings = DiscordSettings {
            token: TOKEN.into(),
            api_base: Some(fake.base_url()),
            guild_orgs,
            default_org: "default".into(),
            agent: "default".into(),
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let handler: Arc<dyn TurnHandler> = turns.clone();
        let task = tokio::spawn(discord::run(settings, handler, async move {
            let _ = stopped.await;
        }));
        fake.identified().await;
        // READY was handled once /pair is registered.
        fake.commands().await;
        World {
            h,
            fake,
            turns,
            stop,
            task,
        }
    }

    async fn pair(&self, org: &str, user: &FakeUser, role: Role) {
        self.h
            .services
            .pairing()
            .add_user(org, &user.stored(), &user.username, role, "test", 1)
            .await
            .expect("pair");
    }

    /// Close the gateway and check the adapter stopped cleanly, having called
    /// no REST route the fake does not know.
    async fn finish(self) {
        assert!(
            self.fake.unknown_routes().is_empty(),
            "{:?}",
            self.fake.unknown_routes()
        );
        let _ = self.stop.send(());
        self.task
            .await
            .expect("adapter task")
            .expect("adapter stopped cleanly");
    }
}

fn messages_in(fake: &FakeDiscord, channel: u64) -> Vec<Posted> {
    fake.sent()
        .into_iter()
        .filter_map(|s| match s {
            Sent::Message(p) if p.channel == channel => Some(p),
            _ => None,
        })
        .collect()
}

fn pairing_code(text: &str) -> String {
    text.split("pairing code is ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no pairing code in {text:?}"))
        .to_string()
}

#[tokio::test]
async fn teach_pair_serve_and_consent_through_discord() {
    let w = World::new().await;
    let (ana, bob) = (ana(), bob());
    w.pair("default", &ana, Role::Admin).await;

    // The bot identified with its token and exactly the intents it needs.
    let identify = w.fake.identified().await;
    assert_eq!(
        identify["token"].as_str(),
        Some(format!("Bot {TOKEN}").as_str())
    );
    let intents = identify["intents"].as_u64().expect("intents");
    assert_eq!(intents, (1 << 9) | (1 << 12) | (1 << 15));

    // An unknown user DMs /pair and gets a code in the DM.
    w.fake.dm(BOB_DM, &bob, "/pair");
    let code = pairing_code(w.fake.message_in(BOB_DM).await.content());

    // The admin approves it in chat.
    w.fake.dm(ADMIN_DM, &ana, &format!("/pair approve {code}"));
    let approved = w.fake.message_in(ADMIN_DM).await;
    assert!(
        approved.content().contains("is paired as user"),
        "{}",
        approved.content()
    );
    let paired =
        w.h.services
            .pairing()
            .resolve("default", &bob.stored())
            .await
            .expect("pairing store")
            .expect("bob is paired");
    assert_eq!(paired.role, Role::User);

    // The admin teaches a note in the guild channel, mentioning the bot.
    w.fake.mention(
        GUILD,
        GENERAL,
        &ana,
        "@notes: The daily report uses example_orders",
    );
    let receipt = w.fake.message_in(GENERAL).await;
    assert!(
        receipt
            .content()
            .starts_with("Written: agent_notes updated (id:"),
        "{}",
        receipt.content()
    );
    let note = &w.h.records_containing("example_orders").await[0];
    assert_eq!(
        (note.scope, note.status),
        (Scope::AgentNotes, Status::Active)
    );

    // The new user asks in the channel and is served from the note.
    w.fake
        .mention(GUILD, GENERAL, &bob, "Produce today's daily report");
    let answer = w.fake.message_in(GENERAL).await;
    assert!(
        answer.content().contains("example_orders"),
        "{}",
        answer.content()
    );

    // The admin's implicit operational statement is asked about, with buttons.
    let said = w.fake.mention(
        GUILD,
        GENERAL,
        &ana,
        "From now on the daily report uses example_archive",
    );
    let question = w.fake.message_in(GENERAL).await;
    assert!(
        question.content().contains("Remember this?"),
        "{}",
        question.content()
    );
    assert_eq!(question.labels(), ["Yes", "No"]);
    let pending = &w.h.records_containing("example_archive").await[0];
    assert_eq!(pending.status, Status::Pending);
    let batch = pending.batch.expect("a proposal batch");
    let ids = question.custom_ids();
    assert_eq!(
        ids.iter().map(|id| parse_answer_id(id)).collect::<Vec<_>>(),
        [Some((batch, true)), Some((batch, false))]
    );
    let (turn, _) = w.turns.turn_of(&id_of(&said)).await;
    assert_eq!(turn.sender.as_deref(), Some(ana.stored().as_str()));

    // Another user presses Yes: refused, privately, and nothing is saved.
    let token = w.fake.press(Some(GUILD), &bob, &question, &ids[0]);
    let ack = w.fake.interaction_callback(&token).await;
    assert_eq!(ack["type"], 5, "deferred channel message");
    assert_eq!(
        ack["data"]["flags"].as_u64().unwrap_or(0) & 64,
        64,
        "ephemeral"
    );
    let refused = w.fake.interaction_reply(&token).await;
    assert!(
        refused.content().contains("not asked to you"),
        "{}",
        refused.content()
    );
    for r in w.h.records_containing("example_archive").await {
        assert_eq!(r.status, Status::Pending, "{r:?}");
    }
    assert_eq!(
        w.h.records_containing("example_orders").await[0].status,
        Status::Active
    );

    // The admin's own press saves it, superseding the old procedure.
    let token = w.fake.press(Some(GUILD), &ana, &question, &ids[0]);
    let saved = w.fake.interaction_reply(&token).await;
    assert!(
        saved.content().contains("Written: agent_notes updated"),
        "{}",
        saved.content()
    );
    assert_eq!(
        w.h.records_containing("example_archive").await[0].status,
        Status::Active
    );
    assert_eq!(
        w.h.records_containing("example_orders").await[0].status,
        Status::Superseded
    );
    w.fake
        .mention(GUILD, GENERAL, &bob, "Produce today's daily report");
    let answer = w.fake.message_in(GENERAL).await;
    assert!(
        answer.content().contains("example_archive"),
        "{}",
        answer.content()
    );

    // Nothing the bot posted may ping anyone.
    for s in w.fake.sent() {
        if let Sent::Message(p) | Sent::EditOriginal { message: p, .. } = s {
            assert!(p.pings_nobody(), "{:?}", p.body);
        }
    }
    w.finish().await;
}

#[tokio::test]
async fn a_guild_message_without_a_mention_is_stored_but_not_answered() {
    let w = World::new().await;
    let ana = ana();
    w.pair("default", &ana, Role::Admin).await;

    let quiet = w.fake.say(
        GUILD,
        GENERAL,
        &ana,
        "The build server is at ci.example.com",
    );
    let (inbound, replies) = w.turns.turn_of(&id_of(&quiet)).await;
    assert_eq!(inbound.kind, ConversationKind::Group);
    assert!(!inbound.mentioned);
    assert!(replies.is_empty(), "{replies:?}");
    let history =
        w.h.db()
            .conversations()
            .history("default", "default", &GENERAL.to_string())
            .await
            .expect("history");
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].text, "The build server is at ci.example.com");
    assert_eq!(history[0].sender.as_deref(), Some(ana.stored().as_str()));
    assert_eq!(history[0].sender_role.as_deref(), Some("admin"));
    assert!(
        w.h.records_containing("ci.example.com").await.is_empty(),
        "nothing is proposed or learned from a line the bot was not asked about"
    );
    let typed = |w: &World| {
        w.fake
            .sent()
            .iter()
            .filter(|s| matches!(s, Sent::Typing { channel } if *channel == GENERAL))
            .count()
    };
    assert_eq!(
        typed(&w),
        0,
        "no typing for a line the bot was not asked about"
    );

    // The next mention is answered, and it is the only message in the channel.
    let asked = w
        .fake
        .mention(GUILD, GENERAL, &ana, "Where is the build server?");
    let answer = w.fake.message_in(GENERAL).await;
    let (_, replies) = w.turns.turn_of(&id_of(&asked)).await;
    assert_eq!(answer.content(), replies[0].text);
    assert_eq!(messages_in(&w.fake, GENERAL).len(), 1);
    // While the turn ran, the channel showed the bot typing.
    w.fake
        .take("typing in the channel", |s| match s {
            Sent::Typing { channel } if *channel == GENERAL => Some(()),
            _ => None,
        })
        .await;
    w.finish().await;
}

#[tokio::test]
async fn a_redelivered_message_is_answered_once() {
    let w = World::new().await;
    let ana = ana();
    w.pair("default", &ana, Role::Admin).await;

    let note = w.fake.mention(
        GUILD,
        GENERAL,
        &ana,
        "@notes: The weekly report is produced from sales_2024",
    );
    w.fake.dispatch("MESSAGE_CREATE", &note);
    let first = w.turns.turn_of(&id_of(&note)).await;
    let second = w.turns.turn_of(&id_of(&note)).await;
    let answered = [&first, &second]
        .iter()
        .filter(|(_, replies)| !replies.is_empty())
        .count();
    assert_eq!(answered, 1, "{first:?} / {second:?}");
    let receipt = w.fake.message_in(GENERAL).await;
    assert!(receipt
        .content()
        .starts_with("Written: agent_notes updated"));
    assert_eq!(messages_in(&w.fake, GENERAL).len(), 1);
    assert_eq!(w.h.records_containing("sales_2024").await.len(), 1);
    let history =
        w.h.db()
            .conversations()
            .history("default", "default", &GENERAL.to_string())
            .await
            .expect("history");
    assert_eq!(
        history.iter().filter(|m| m.author == "person").count(),
        1,
        "stored once"
    );
    w.finish().await;
}

#[tokio::test]
async fn a_reply_over_2000_characters_arrives_split_on_line_boundaries() {
    let w = World::new().await;
    let bob = bob();
    w.pair("default", &bob, Role::User).await;
    // Seven records under the 500-character cap that together run past
    // Discord's 2,000 characters.
    let topics = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
    ];
    for topic in topics {
        let filler = format!("{topic} ").repeat(400 / (topic.len() + 1));
        let text = format!("remember that {topic} project notes {}", filler.trim());
        w.fake.dm(BOB_DM, &bob, &text);
        let receipt = w.fake.message_in(BOB_DM).await;
        assert!(
            receipt
                .content()
                .starts_with("Written: personal memory updated"),
            "{}",
            receipt.content()
        );
    }

    let asked = w.fake.dm(BOB_DM, &bob, "/memory");
    let (_, replies) = w.turns.turn_of(&id_of(&asked)).await;
    let full = &replies[0].text;
    assert!(full.chars().count() > 2000, "{}", full.chars().count());
    let first = w.fake.message_in(BOB_DM).await;
    let second = w.fake.message_in(BOB_DM).await;
    let mut parts = vec![first, second];
    while parts.iter().map(|p| p.content().len()).sum::<usize>() + parts.len() - 1 < full.len() {
        parts.push(w.fake.message_in(BOB_DM).await);
    }
    for p in &parts {
        assert!(p.content().chars().count() <= 2000, "{}", p.content().len());
    }
    // Split only where a line ended: the pieces, rejoined by line breaks, are the reply.
    let rejoined = parts
        .iter()
        .map(|p| p.content())
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(&rejoined, full);
    assert!(parts[0]
        .content()
        .starts_with("Here is what I remember about you:"));
    for topic in topics {
        let holding: Vec<_> = parts
            .iter()
            .filter(|p| p.content().contains(&format!("{topic} project notes")))
            .collect();
        assert_eq!(holding.len(), 1, "{topic}: one record line, never cut");
    }
    w.finish().await;
}

#[tokio::test]
async fn slash_pair_requests_and_approves_with_private_answers() {
    let w = World::new().await;
    let (ana, bob, carol) = (ana(), bob(), carol());
    w.pair("default", &ana, Role::Admin).await;
    w.pair("default", &bob, Role::User).await;

    // /pair is registered with request / approve code [admin] / deny code.
    let registered = w.fake.sent();
    let commands = registered
        .iter()
        .find_map(|s| match s {
            Sent::Commands(v) => Some(v.clone()),
            _ => None,
        })
        .expect("commands registered");
    assert_eq!(commands[0]["name"], "pair");
    let subs: Vec<&str> = commands[0]["options"]
        .as_array()
        .expect("options")
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert_eq!(subs, ["request", "approve", "deny"]);

    // An unknown user asks with the slash command in a DM.
    let token = w.fake.slash_pair(
        None,
        CAROL_DM,
        &carol,
        json!([{"name": "request", "type": 1, "options": []}]),
    );
    let ack = w.fake.interaction_callback(&token).await;
    assert_eq!(
        ack["data"]["flags"].as_u64().unwrap_or(0) & 64,
        64,
        "ephemeral"
    );
    let code = pairing_code(w.fake.interaction_reply(&token).await.content());

    let approve = |code: &str, admin: bool| {
        json!([{"name": "approve", "type": 1, "options": [
            {"name": "code", "type": 3, "value": code},
            {"name": "admin", "type": 5, "value": admin},
        ]}])
    };
    // A paired non-admin cannot approve it.
    let token = w
        .fake
        .slash_pair(Some(GUILD), GENERAL, &bob, approve(&code, true));
    let refused = w.fake.interaction_reply(&token).await;
    assert!(
        refused.content().contains("Only administrators"),
        "{}",
        refused.content()
    );
    // A role cannot be smuggled in through the code option.
    let token = w.fake.slash_pair(
        Some(GUILD),
        GENERAL,
        &ana,
        approve(&format!("{code} admin"), false),
    );
    w.fake.interaction_reply(&token).await;
    let carol_now =
        w.h.services
            .pairing()
            .resolve("default", &carol.stored())
            .await
            .expect("pairing store");
    assert!(carol_now.is_none(), "{carol_now:?}");

    // The admin approves with the slash command.
    let token = w
        .fake
        .slash_pair(Some(GUILD), GENERAL, &ana, approve(&code, false));
    let approved = w.fake.interaction_reply(&token).await;
    assert!(
        approved.content().contains("is paired as user"),
        "{}",
        approved.content()
    );
    let carol_now =
        w.h.services
            .pairing()
            .resolve("default", &carol.stored())
            .await
            .expect("pairing store")
            .expect("carol is paired");
    assert_eq!(carol_now.role, Role::User);
    // Interaction answers are never posted in the channel.
    assert!(messages_in(&w.fake, GENERAL).is_empty());
    w.finish().await;
}

#[tokio::test]
async fn a_display_name_is_never_an_identity() {
    let w = World::new().await;
    let ana = ana();
    w.pair("default", &ana, Role::Admin).await;
    // Someone else calls themselves Ana, everywhere a name can be set.
    let impostor = FakeUser::new(1_180_000_000_000_000_066, "ana_")
        .global_name("Ana")
        .nick("ana");

    let sent = w.fake.mention(
        GUILD,
        GENERAL,
        &impostor,
        "@notes: The daily report uses impostor_table",
    );
    let reply = w.fake.message_in(GENERAL).await;
    assert!(
        reply.content().contains("Only administrators"),
        "{}",
        reply.content()
    );
    let (inbound, _) = w.turns.turn_of(&id_of(&sent)).await;
    assert_eq!(inbound.sender.as_deref(), Some(impostor.stored().as_str()));
    assert_eq!(inbound.sender_name, "ana");
    assert!(w.h.records_containing("impostor_table").await.is_empty());
    w.finish().await;
}

#[tokio::test]
async fn bots_and_the_bots_own_messages_are_ignored() {
    let w = World::new().await;
    let ana = ana();
    w.pair("default", &ana, Role::Admin).await;
    let other_bot = FakeUser::new(1_180_000_000_000_000_077, "deploybot").bot();
    let me = w.fake.bot().clone();

    let from_bot = w.fake.mention(
        GUILD,
        GENERAL,
        &other_bot,
        "@notes: The daily report uses bot_table",
    );
    let own = w.fake.message(
        Some(GUILD),
        GENERAL,
        &me,
        "Written: agent_notes updated",
        &[],
    );
    w.fake.dispatch("MESSAGE_CREATE", &own);
    let asked = w
        .fake
        .mention(GUILD, GENERAL, &ana, "Produce today's daily report");
    w.turns.turn_of(&id_of(&asked)).await;
    let answer = w.fake.message_in(GENERAL).await;
    assert!(
        answer.content().contains("don't have anything"),
        "{}",
        answer.content()
    );
    let seen: Vec<String> = w
        .turns
        .turns()
        .into_iter()
        .filter_map(|(m, _)| m.platform_id)
        .collect();
    assert!(!seen.contains(&id_of(&from_bot)), "{seen:?}");
    assert!(!seen.contains(&id_of(&own)), "{seen:?}");
    assert!(w.h.records_containing("bot_table").await.is_empty());
    w.finish().await;
}

#[tokio::test]
async fn guilds_map_to_their_organisations_and_knowledge_stays_there() {
    const ACME: u64 = 1_180_000_000_000_000_300;
    const ACME_GENERAL: u64 = 1_180_000_000_000_000_301;
    let h = Harness::new().await;
    let w = World::with(h, HashMap::from([(ACME, "acme".to_string())])).await;
    let (ana, bob) = (ana(), bob());
    w.pair("acme", &ana, Role::Admin).await;

    let taught = w.fake.mention(
        ACME,
        ACME_GENERAL,
        &ana,
        "@notes: The daily report uses acme_orders",
    );
    let receipt = w.fake.message_in(ACME_GENERAL).await;
    assert!(receipt
        .content()
        .starts_with("Written: agent_notes updated"));
    let (inbound, _) = w.turns.turn_of(&id_of(&taught)).await;
    assert_eq!(inbound.org, "acme");
    let acme_notes =
        w.h.db()
            .records()
            .list("acme", &memory::store::RecordFilter::default())
            .await
            .expect("records");
    assert_eq!(acme_notes.len(), 1);
    assert!(acme_notes[0].content.contains("acme_orders"));

    // A guild that is not mapped is the default organisation: no acme knowledge
    // there, and Ana is not an admin there.
    let asked = w
        .fake
        .mention(GUILD, GENERAL, &bob, "Produce today's daily report");
    let answer = w.fake.message_in(GENERAL).await;
    assert!(
        !answer.content().contains("acme_orders"),
        "{}",
        answer.content()
    );
    assert_eq!(w.turns.turn_of(&id_of(&asked)).await.0.org, "default");
    w.fake.mention(
        GUILD,
        GENERAL,
        &ana,
        "@notes: The daily report uses default_orders",
    );
    let refused = w.fake.message_in(GENERAL).await;
    assert!(refused.content().contains("Only administrators"));
    // A DM belongs to the default organisation too.
    let dm = w.fake.dm(ADMIN_DM, &ana, "hello");
    assert_eq!(w.turns.turn_of(&id_of(&dm)).await.0.org, "default");
    assert!(w.h.records_containing("default_orders").await.is_empty());
    w.finish().await;
}

fn config_for(fake: &FakeDiscord, token: &str, extra: &str) -> Config {
    Config::from_toml(&format!(
        "[discord]\ntoken = \"{token}\"\napi_base = \"{}\"\n{extra}",
        fake.base_url()
    ))
    .expect("config")
}

#[tokio::test]
async fn serve_wires_the_discord_section_and_stops_with_the_server() {
    const ACME: u64 = 1_180_000_000_000_000_300;
    let start = Utc
        .with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
        .single()
        .expect("date");
    let fake = FakeDiscord::start(TOKEN, FakeUser::new(BOT, "steward").bot(), start).await;
    let cfg = config_for(
        &fake,
        TOKEN,
        &format!("agent = \"it\"\n[discord.guild_orgs]\n\"{ACME}\" = \"acme\"\n"),
    );
    let h = Harness::with_config(cfg).await;
    let ana = ana();
    h.services
        .pairing()
        .add_user("acme", &ana.stored(), "Ana", Role::Admin, "test", 1)
        .await
        .expect("pair");

    let channel = steward::channels::discord::worker(&h.services)
        .expect("settings")
        .expect("a token starts the channel");
    let running = workers::start(vec![Box::new(channel)], &CancellationToken::new());
    let (server_done, server_stop) = oneshot::channel::<()>();
    let serving = tokio::spawn(running.beside(async move {
        let _ = server_stop.await;
        Ok::<(), std::io::Error>(())
    }));
    fake.identified().await;
    fake.commands().await;

    fake.mention(
        ACME,
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
    let notes = h
        .db()
        .records()
        .list("acme", &memory::store::RecordFilter::default())
        .await
        .expect("records");
    assert_eq!((notes.len(), notes[0].agent.as_str()), (1, "it"));

    // The server stops (ctrl-c in `steward serve`): the gateway is closed cleanly.
    let _ = server_done.send(());
    let served = serving.await.expect("serve task").expect("stopped cleanly");
    served.expect("served");
    assert_eq!(fake.disconnected().await, Some(1000));
}

#[tokio::test]
async fn a_rejected_token_stops_serve_with_an_error() {
    let start = Utc
        .with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
        .single()
        .expect("date");
    let fake = FakeDiscord::start(TOKEN, FakeUser::new(BOT, "steward").bot(), start).await;
    let h = Harness::with_config(config_for(&fake, "not-the-token", "")).await;
    let channel = steward::channels::discord::worker(&h.services)
        .expect("settings")
        .expect("a token starts the channel");
    let running = workers::start(vec![Box::new(channel)], &CancellationToken::new());
    let never = std::future::pending::<Result<(), std::io::Error>>();
    let err = running
        .beside(never)
        .await
        .expect_err("a rejected token is fatal");
    assert!(format!("{err:#}").contains("Discord"), "{err:#}");
}

#[test]
fn the_discord_section_is_validated_and_optional() {
    let cfg = Config::from_toml("").expect("defaults");
    assert!(steward::channels::discord::settings(&cfg)
        .expect("ok")
        .is_none());

    let cfg = Config::from_toml(
        "[server]\norg = \"acme\"\n[discord]\ntoken = \"t\"\n[discord.guild_orgs]\n\"42\" = \"beta\"\n",
    )
    .expect("config");
    let s = steward::channels::discord::settings(&cfg)
        .expect("ok")
        .expect("token set");
    assert_eq!(s.default_org, "acme", "defaults to server.org");
    assert_eq!(s.agent, "default", "defaults to server.agent");
    assert_eq!(s.guild_orgs.get(&42).map(String::as_str), Some("beta"));
    assert_eq!(s.api_base, None);

    for (toml, key) in [
        (
            "[discord.guild_orgs]\ngeneral = \"acme\"\n",
            "discord.guild_orgs.general",
        ),
        (
            "[discord.guild_orgs]\n\"42\" = \"\"\n",
            "discord.guild_orgs.42",
        ),
        (
            "[discord]\napi_base = \"discord.com\"\n",
            "discord.api_base",
        ),
        ("[discord]\nagent = \" \"\n", "discord.agent"),
        ("[discord]\ntokn = \"t\"\n", "tokn"),
    ] {
        let err = Config::from_toml(toml).expect_err(toml).to_string();
        assert!(err.contains(key), "{toml}: {err}");
    }
}

/// `deliver` posts through Discord's REST API into the conversation's channel,
/// without a gateway connection, split at Discord's limit, pinging nobody.
#[tokio::test]
async fn deliver_posts_into_the_conversations_channel() {
    let start = Utc
        .with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
        .single()
        .expect("date");
    let fake = FakeDiscord::start(TOKEN, FakeUser::new(BOT, "steward").bot(), start).await;
    let h = Harness::with_config(config_for(&fake, TOKEN, "")).await;
    let to = |conversation: &str| ConversationRef {
        org: "default".into(),
        agent: "default".into(),
        conversation: conversation.into(),
    };
    let text = "The weekly report is ready: @everyone see example_orders.";
    let delivered = channels::deliver(&h.services, "discord", &to(&GENERAL.to_string()), text)
        .await
        .expect("delivered");
    let posted = fake.message_in(GENERAL).await;
    assert_eq!((posted.channel, posted.content()), (GENERAL, text));
    assert!(posted.pings_nobody(), "{:?}", posted.body);
    assert_eq!(
        delivered,
        Delivered::Posted {
            ids: vec![posted.id.to_string()]
        }
    );
    // A long text is several messages, in order, in the same channel.
    let long = format!("{}\n{}", "a".repeat(1_500), "b".repeat(1_500));
    let delivered = channels::deliver(&h.services, "discord", &to(&ADMIN_DM.to_string()), &long)
        .await
        .expect("delivered");
    let first = fake.message_in(ADMIN_DM).await;
    let second = fake.message_in(ADMIN_DM).await;
    assert_eq!(
        (first.content(), second.content()),
        ("a".repeat(1_500).as_str(), "b".repeat(1_500).as_str())
    );
    assert_eq!(
        delivered,
        Delivered::Posted {
            ids: vec![first.id.to_string(), second.id.to_string()]
        }
    );
    // Not a channel id, blank text, or the channel off: nothing is sent.
    let before = fake.sent().len();
    let e = channels::deliver(&h.services, "discord", &to("general"), "hi")
        .await
        .expect_err("not a channel id");
    assert!(matches!(e, DeliveryError::NoRoute { .. }), "{e}");
    let e = channels::deliver(&h.services, "discord", &to(&GENERAL.to_string()), "  ")
        .await
        .expect_err("blank");
    assert!(matches!(e, DeliveryError::Blank), "{e}");
    let off = Harness::new().await;
    let e = channels::deliver(&off.services, "discord", &to(&GENERAL.to_string()), "hi")
        .await
        .expect_err("off");
    assert!(matches!(e, DeliveryError::Off("discord")), "{e}");
    assert_eq!(fake.sent().len(), before);
}
