//! The turn loop's steps as a user of the bot meets them.

use adapters::ConversationKind;
use chrono::Duration;
use memory::{Role, Scope, Status};
use steward::Config;
use steward_tests::{join, Harness};

// --- consent: "Remember this?" ------------------------------------------------

#[tokio::test]
async fn yes_saves_exactly_the_text_that_was_shown() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let ask = h
        .dm(
            "111",
            "From now on the weekly report is produced from sales_2026.",
        )
        .await;
    let shown = ask
        .split("Remember this? ")
        .nth(1)
        .and_then(|s| s.strip_suffix(" — reply yes or no"))
        .expect("a question");
    assert!(
        h.records()
            .await
            .iter()
            .all(|r| r.status == Status::Pending),
        "nothing saved before yes"
    );
    h.dm("111", "yes").await;
    let saved = h.records().await;
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].content, shown);
    assert_eq!(saved[0].status, Status::Active);
}

#[tokio::test]
async fn no_discards_and_is_not_asked_again() {
    let h = Harness::new().await;
    h.pair("222", Role::User).await;
    assert!(h.dm("222", "I prefer tea").await.contains("Remember this?"));
    assert!(h.dm("222", "no").await.contains("won't remember"));
    let again = h.dm("222", "I prefer tea").await;
    assert!(!again.contains("Remember this?"), "{again}");
    assert!(h.records().await.iter().all(|r| r.status != Status::Active));
    assert!(h.dm("222", "yes").await.contains("nothing waiting"));
}

/// `memory.auto_keep` is the default; `[agents.<id>] auto_keep` sets one agent's own.
#[tokio::test]
async fn auto_keep_is_set_per_agent() {
    let cfg = Config::from_toml("[agents.it]\nauto_keep = true\n").expect("config");
    let h = Harness::with_config(cfg).await;
    h.pair("222", Role::User).await;
    // The person's own opt-in: the operator's setting is the ceiling.
    assert!(h
        .dm("222", "/autokeep on")
        .await
        .contains("Auto-keep is on"));
    let to = |agent: &str, text: &str| {
        let mut m = h.inbound(
            Some("222"),
            &format!("dm:222:{agent}"),
            ConversationKind::Direct,
            text,
        );
        m.agent = agent.into();
        m
    };
    let kept = join(h.send(to("it", "I prefer tea")).await);
    assert!(
        kept.contains("Written: personal memory") && !kept.contains("Remember this?"),
        "{kept}"
    );
    let asked = join(h.send(to("default", "I prefer coffee")).await);
    assert!(asked.contains("Remember this?"), "{asked}");
    let by_agent = |agent: &'static str| {
        let records = h.records();
        async move {
            records
                .await
                .into_iter()
                .filter(|r| r.agent == agent)
                .map(|r| r.status)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(by_agent("it").await, [Status::Active]);
    assert_eq!(by_agent("default").await, [Status::Pending]);
}

/// A yes with a few plain words after it ("oui, mets à jour") answers the
/// question waiting; with none waiting, the same words are a message of
/// their own, never "nothing waiting for a yes or no".
#[tokio::test]
async fn a_yes_with_plain_words_after_it_answers_only_a_waiting_question() {
    let h = Harness::new().await;
    h.pair("222", Role::User).await;
    assert!(h.dm("222", "I prefer tea").await.contains("Remember this?"));
    let kept = h.dm("222", "oui, mets à jour").await;
    assert!(kept.contains("(id: "), "{kept}");
    assert_eq!(h.records().await[0].status, Status::Active);
    for said in ["yes, replace the old time", "no, leave refunds out"] {
        let reply = h.dm("222", said).await;
        assert!(!reply.contains("nothing waiting"), "{said}: {reply}");
    }
}

#[tokio::test]
async fn proposals_expire_after_a_day() {
    let h = Harness::new().await;
    h.pair("222", Role::User).await;
    h.dm("222", "Call me Bo").await;
    h.advance(Duration::hours(24));
    assert!(h.dm("222", "yes").await.contains("nothing waiting"));
    assert!(h.records().await.iter().all(|r| r.status != Status::Active));
}

#[tokio::test]
async fn only_the_person_asked_can_answer() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    let replies = h
        .send(h.inbound(
            Some("111"),
            "g1",
            ConversationKind::Group,
            "From now on the VPN is at vpn.example.com",
        ))
        .await;
    let batch = replies[0]
        .proposal
        .expect("the question carries its batch for buttons");
    // Another member presses Yes on the admin's question.
    let mut press = h.inbound(Some("222"), "g1", ConversationKind::Group, "yes");
    press.answer = Some((batch, true));
    assert!(join(h.send(press).await).contains("not asked to you"));
    assert!(h
        .group(Some("222"), "g1", "yes")
        .await
        .contains("nothing waiting"));
    assert!(h
        .records()
        .await
        .iter()
        .all(|r| r.status == Status::Pending));
    let mut own = h.inbound(Some("111"), "g1", ConversationKind::Group, "");
    own.answer = Some((batch, true));
    assert!(join(h.send(own).await).contains("Written: agent_notes"));
}

#[tokio::test]
async fn an_admin_demoted_before_answering_cannot_save_operational_items() {
    let h = Harness::new().await;
    let admin = h.pair("111", Role::Admin).await;
    h.dm("111", "From now on the VPN is at vpn.example.com")
        .await;
    let now = h.now_ms();
    h.services
        .pairing()
        .set_role("default", &admin, Role::User, "test", now)
        .await
        .unwrap();
    assert!(h.dm("111", "yes").await.contains("need an administrator"));
    assert!(h
        .records()
        .await
        .iter()
        .all(|r| r.scope != Scope::AgentNotes || r.status != Status::Active));
}

#[tokio::test]
async fn auto_keep_saves_without_asking_but_with_a_receipt() {
    let mut cfg = Config::default();
    cfg.memory.auto_keep = true;
    let h = Harness::with_config(cfg).await;
    h.pair("111", Role::Admin).await;
    h.dm("111", "/autokeep on").await;
    let reply = h.dm("111", "The build server is at ci.example.com").await;
    assert!(reply.starts_with("Written: agent_notes updated"), "{reply}");
    assert!(!reply.contains("Remember this?"));
}

// --- pairing through the bot ---------------------------------------------------

#[tokio::test]
async fn an_unknown_sender_pairs_and_is_approved_in_chat() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let first = h.inbound(Some("555"), "dm:555", ConversationKind::Direct, "hello?");
    let mut second = first.clone();
    second.at += Duration::seconds(59);
    second.text = "hello again".into();
    let hint = join(h.send(first).await);
    assert!(hint.contains("/pair"), "{hint}");
    assert!(h.send(second).await.is_empty(), "one hint a minute");
    let reply = h.dm("555", "/pair").await;
    let code: String = reply.split("code is ").nth(1).unwrap()[..8].to_string();
    assert!(
        h.dm("555", "/pair").await.contains(&code),
        "the pending code is reused"
    );
    assert!(h.records().await.is_empty());
    assert!(h
        .dm("111", &format!("/pair approve {code}"))
        .await
        .contains("paired as user"));
    assert!(h
        .dm("555", "/pair")
        .await
        .contains("already paired as user"));
    let audit = h.db().audit().log("default", 20).await.unwrap();
    assert!(audit
        .iter()
        .any(|e| e.action == "pairing.approve" && e.actor == "discord:111"));
}

#[tokio::test]
async fn the_fourth_pending_request_on_a_channel_waits() {
    let h = Harness::new().await;
    for u in ["1", "2", "3"] {
        assert!(h.dm(u, "/pair").await.contains("pairing code"));
    }
    assert!(h
        .dm("4", "/pair")
        .await
        .contains("too many pairing requests"));
}

#[tokio::test]
async fn a_pairing_store_error_denies_the_message() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    h.db().close().await; // the store goes away
    let reply = h.dm("111", "@notes: The VPN is at vpn.example.com").await;
    assert!(reply.contains("can't check who you are"), "{reply}");
}

#[tokio::test]
async fn dm_policy_disabled_and_allowlist() {
    let mut cfg = Config::default();
    cfg.pairing.dm_policy = steward::config::DmPolicy::Allowlist;
    cfg.pairing.allow_from = vec!["discord:777".into()];
    let h = Harness::with_config(cfg).await;
    assert!(h
        .dm("777", "what is the VPN?")
        .await
        .contains("don't have anything"));
    // Not on the allowlist: not served, only told how to pair.
    assert_eq!(
        h.dm("778", "what is the VPN?").await,
        "Hi! I don't know you yet. Send /pair to request access; an administrator will approve it."
    );
    let mut cfg = Config::default();
    cfg.pairing.dm_policy = steward::config::DmPolicy::Disabled;
    let h = Harness::with_config(cfg).await;
    assert_eq!(h.dm("778", "/pair").await, "");
    assert_eq!(h.dm("778", "hi").await, "");
}

/// `/pair` used to work only under `dm_policy = pairing`: under `open` an
/// unknown sender was told to use a direct message (while in one), and under
/// `allowlist` the hint said "Send /pair" and /pair was ignored.
#[tokio::test]
async fn pair_works_under_dm_policy_open_and_allowlist() {
    use steward::config::DmPolicy;
    for policy in [DmPolicy::Open, DmPolicy::Allowlist] {
        let mut cfg = Config::default();
        cfg.pairing.dm_policy = policy;
        let h = Harness::with_config(cfg).await;
        h.pair("111", Role::Admin).await;
        let asked = h.dm("900", "/pair").await;
        let code = asked
            .split("code is ")
            .nth(1)
            .and_then(|rest| rest.get(..8))
            .unwrap_or_else(|| panic!("{policy:?}: no code in {asked:?}"))
            .to_string();
        // Never in a thread, where everyone would see the code.
        let in_group = h.group(Some("901"), "g1", "/pair").await;
        assert!(
            in_group.contains("direct message"),
            "{policy:?}: {in_group}"
        );
        let approved = h.dm("111", &format!("/pair approve {code}")).await;
        assert!(
            approved.contains("paired as user"),
            "{policy:?}: {approved}"
        );
        let again = h.dm("900", "/pair").await;
        assert!(
            again.contains("already paired as user"),
            "{policy:?}: {again}"
        );
        // Paired, they are a person: what they ask to be remembered is theirs.
        let kept = h.dm("900", "remember that my desk is 4B").await;
        assert!(kept.contains("Written: personal"), "{policy:?}: {kept}");
    }
}

// --- dedupe, rate limit, storage of every message ---------------------------------

#[tokio::test]
async fn a_redelivered_message_runs_once() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let mut msg = h.inbound(
        Some("111"),
        "d1",
        ConversationKind::Direct,
        "@notes: The VPN is at vpn.example.com",
    );
    msg.platform_id = Some("m-1".into());
    let first = h.send(msg.clone()).await;
    assert_eq!(first.len(), 1);
    // Answered with the stored reply, not a second turn.
    assert_eq!(h.send(msg).await, first);
    assert_eq!(h.records().await.len(), 1);
    let history = h
        .db()
        .conversations()
        .history("default", "default", "d1")
        .await
        .unwrap();
    assert_eq!(history.iter().filter(|m| m.author == "person").count(), 1);
    assert_eq!(history.iter().filter(|m| m.author == "agent").count(), 1);
}

/// A refused message used to spend its id: the client's later retry was
/// swallowed as a redelivery. Now only a stored message spends it, and ids
/// are each sender's own. On both databases.
#[tokio::test]
async fn only_a_stored_message_spends_its_id_and_ids_are_each_senders_own() {
    for (name, db) in steward_tests::both_dbs().await {
        let mut cfg = Config::default();
        cfg.rate_limit.sender_burst = 1;
        cfg.rate_limit.per_sender_per_minute = 1;
        cfg.turn.max_message_chars = 60;
        let h = Harness::on(db, cfg);
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        // The clock moves a minute per message: one token each, unless `at` is shared.
        let message = |user: &str, id: &str, text: &str| {
            let mut m = h.inbound(
                Some(user),
                &format!("dm:{user}"),
                ConversationKind::Direct,
                text,
            );
            m.platform_id = Some(id.into());
            m
        };
        // Too long: refused, and the id is not spent.
        let long = message("111", "m-long", &"x".repeat(61));
        assert!(join(h.send(long).await).contains("too long"), "{name}");
        let fixed = message("111", "m-long", "@notes: The VPN is at vpn.example.com");
        assert!(join(h.send(fixed).await).starts_with("Written"), "{name}");
        // Rate-limited: refused, and the same message later is stored and answered.
        let first = message("111", "m-1", "hello");
        let mut limited = message("111", "m-2", "@notes: The wiki is at wiki.example.com");
        limited.at = first.at;
        h.send(first).await;
        assert!(
            join(h.send(limited.clone()).await).contains("slow down"),
            "{name}"
        );
        h.advance(Duration::minutes(2));
        let mut later = limited;
        later.at = h.tick();
        assert!(
            join(h.send(later.clone()).await).starts_with("Written"),
            "{name}"
        );
        // Stored: the same id again is a redelivery, answered with the stored reply.
        later.at = h.tick();
        assert!(join(h.send(later).await).starts_with("Written"), "{name}");
        // Another sender's `m-2` is their own message.
        let theirs = message("222", "m-2", "what is the wiki?");
        assert!(
            join(h.send(theirs).await).contains("wiki.example.com"),
            "{name}"
        );
        let notes = h.records().await;
        assert_eq!(notes.len(), 2, "{name}: {notes:?}");
    }
}

/// Issue 31, item 6: a retry of an answered message id was answered with
/// nothing, and one whose turn never finished (stored before a crash, no
/// reply) was never answered. The reply is stored with its message: a retry
/// gets the same reply (the "Remember this?" batch included) and runs no
/// second turn; a message stored without its reply is answered on retry,
/// once. On both databases.
#[tokio::test]
async fn a_retry_gets_the_stored_reply_and_an_unanswered_message_its_turn() {
    for (name, db) in steward_tests::both_dbs().await {
        let h = Harness::on(db, Config::default());
        h.pair("111", Role::Admin).await;
        let lines = || async {
            h.db()
                .conversations()
                .history("default", "default", "dm:111")
                .await
                .unwrap()
        };
        let mut asked = h.inbound(
            Some("111"),
            "dm:111",
            ConversationKind::Direct,
            "I prefer short answers",
        );
        asked.platform_id = Some("r-1".into());
        let first = h.send(asked.clone()).await;
        assert!(
            join(first.clone()).contains("Remember this?"),
            "{name}: {first:?}"
        );
        assert!(first[0].proposal.is_some(), "{name}");
        let before = lines().await;
        asked.at = h.tick();
        let again = h.send(asked.clone()).await;
        assert_eq!(again, first, "{name}: the same reply, its batch included");
        assert_eq!(
            lines().await,
            before,
            "{name}: no second turn, nothing stored"
        );
        // The batch the retried reply names is the one a yes saves.
        let mut yes = h.inbound(Some("111"), "dm:111", ConversationKind::Direct, "yes");
        yes.answer = Some((again[0].proposal.unwrap(), true));
        h.send(yes).await;
        assert_eq!(
            h.records_containing("short answers").await.len(),
            1,
            "{name}"
        );

        // A crash between the message and its reply: the line is stored and
        // its id spent, with no reply.
        let at = h.tick();
        let stored = h
            .db()
            .conversations()
            .insert_message_once(
                &memory::store::NewMessage {
                    org: "default",
                    agent: "default",
                    channel: "discord",
                    conversation: "dm:111",
                    conversation_kind: "direct",
                    author: "person",
                    sender: Some("discord:111"),
                    sender_role: Some("admin"),
                    text: "@notes: The VPN is at vpn.example.com",
                    said_at: at.timestamp_millis(),
                },
                Some("discord:111/r-2"),
            )
            .await
            .unwrap()
            .expect("stored");
        let mut retry = h.inbound(
            Some("111"),
            "dm:111",
            ConversationKind::Direct,
            "@notes: The VPN is at vpn.example.com",
        );
        retry.platform_id = Some("r-2".into());
        let answered = join(h.send(retry.clone()).await);
        assert!(answered.starts_with("Written"), "{name}: {answered}");
        let after = lines().await;
        let people = |ls: &[memory::StoredMessage]| {
            ls.iter()
                .filter(|m| m.text.contains("vpn.example.com") && m.author == "person")
                .count()
        };
        assert_eq!(people(&after), 1, "{name}: the message is stored once");
        assert_eq!(
            after
                .iter()
                .filter(|m| m.id > stored && m.author == "agent")
                .count(),
            1,
            "{name}: one reply"
        );
        // And once answered, a retry gets that answer again.
        retry.at = h.tick();
        assert_eq!(join(h.send(retry).await), answered, "{name}");
        assert_eq!(lines().await.len(), after.len(), "{name}");
        assert_eq!(
            h.records_containing("vpn.example.com").await.len(),
            1,
            "{name}"
        );
    }
}

/// The id is spent in the same transaction that stores the message: when
/// the insert fails, nothing is marked seen, so the platform's retry runs.
#[tokio::test]
async fn a_failed_store_leaves_the_id_unspent() {
    for (name, db) in steward_tests::both_dbs().await {
        let line = |text: &'static str| memory::store::NewMessage {
            org: "o",
            agent: "a",
            channel: "api",
            conversation: "c",
            conversation_kind: "direct",
            author: "person",
            sender: Some("api:1"),
            sender_role: Some("user"),
            text,
            said_at: 1,
        };
        let first = db
            .conversations()
            .insert_message_once(&line("hello"), Some("api:1/k1"))
            .await
            .unwrap();
        assert!(first.is_some(), "{name}");
        let again = db
            .conversations()
            .insert_message_once(&line("hello"), Some("api:1/k1"))
            .await
            .unwrap();
        assert_eq!(again, None, "{name}: a redelivery stores nothing");
        assert!(
            db.conversations()
                .is_seen("o", "api", "api:1/k1")
                .await
                .unwrap(),
            "{name}"
        );
        if name == "postgres" {
            // PostgreSQL refuses NUL in text: the insert fails inside the transaction.
            assert!(db
                .conversations()
                .insert_message_once(&line("a\0b"), Some("api:1/k2"))
                .await
                .is_err());
            assert!(
                !db.conversations()
                    .is_seen("o", "api", "api:1/k2")
                    .await
                    .unwrap(),
                "the id stays unspent"
            );
        }
        assert_eq!(
            db.conversations()
                .history("o", "a", "c")
                .await
                .unwrap()
                .len(),
            1,
            "{name}"
        );
        let window = db
            .conversations()
            .live_before("o", "a", "c", i64::MAX, 5)
            .await
            .unwrap();
        assert_eq!(
            window.len(),
            1,
            "{name}: the history window reads the stored line"
        );
        assert!(db
            .conversations()
            .live_before("o", "a", "c", window[0].id, 5)
            .await
            .unwrap()
            .is_empty());
        // Seen ids are pruned after their retention window.
        assert_eq!(
            db.conversations().prune_seen("o", 2).await.unwrap(),
            1,
            "{name}"
        );
        assert!(
            !db.conversations()
                .is_seen("o", "api", "api:1/k1")
                .await
                .unwrap(),
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_flood_gets_one_slow_down_then_silence() {
    let mut cfg = Config::default();
    cfg.rate_limit.sender_burst = 3;
    cfg.rate_limit.per_sender_per_minute = 1;
    let h = Harness::with_config(cfg).await;
    h.pair("111", Role::Admin).await;
    let at = h.tick();
    let mut replies = Vec::new();
    for i in 0..6 {
        let mut m = h.inbound(
            Some("111"),
            "d1",
            ConversationKind::Direct,
            &format!("message {i}"),
        );
        m.at = at; // all at once
        replies.push(join(h.send(m).await));
    }
    assert!(replies[..3].iter().all(|r| !r.contains("slow down")));
    assert!(replies[3].contains("slow down"));
    assert_eq!(&replies[4..], &["", ""]);
    // A minute later the sender is served again.
    h.advance(Duration::minutes(2));
    assert!(!h.dm("111", "hello").await.contains("slow down"));
}

#[tokio::test]
async fn group_messages_are_stored_with_sender_and_role_and_answered_only_when_mentioned() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    let mut quiet = h.inbound(
        Some("222"),
        "g1",
        ConversationKind::Group,
        "From now on the VPN is at vpn.evil.example",
    );
    quiet.mentioned = false;
    assert!(h.send(quiet).await.is_empty());
    h.group(Some("111"), "g1", "what is the VPN?").await;
    h.group(None, "g1", "hi all").await;
    let hist = h
        .db()
        .conversations()
        .history("default", "default", "g1")
        .await
        .unwrap();
    let people: Vec<_> = hist.iter().filter(|m| m.author == "person").collect();
    assert_eq!(people.len(), 3);
    assert_eq!(
        (
            people[0].sender.as_deref(),
            people[0].sender_role.as_deref()
        ),
        (Some("discord:222"), Some("user"))
    );
    assert_eq!(
        (
            people[1].sender.as_deref(),
            people[1].sender_role.as_deref()
        ),
        (Some("discord:111"), Some("admin"))
    );
    assert_eq!(
        (
            people[2].sender.as_deref(),
            people[2].sender_role.as_deref()
        ),
        (None, None)
    );
    assert!(
        hist.iter().any(|m| m.author == "agent"),
        "replies are part of the history"
    );
}

#[tokio::test]
async fn an_oversized_message_is_refused_and_nothing_is_stored() {
    let mut cfg = Config::default();
    cfg.turn.max_message_chars = 100;
    let h = Harness::with_config(cfg).await;
    h.pair("111", Role::Admin).await;
    let reply = h.dm("111", &format!("@notes: {}", "x".repeat(200))).await;
    assert!(reply.contains("too long"), "{reply}");
    assert!(h
        .db()
        .conversations()
        .history("default", "default", "dm:111")
        .await
        .unwrap()
        .is_empty());
    assert!(h.records().await.is_empty());
}

/// A note over the record cap used to be cut to "…" and still answered
/// "Written"; now it is refused with the cap named, and nothing is kept.
#[tokio::test]
async fn a_note_over_the_cap_is_refused_with_the_cap_named() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let long = format!("The deploy checklist is {}", "step ".repeat(120));
    let reply = h.dm("111", &format!("@notes: {long}")).await;
    assert!(
        reply.contains("at most 500 characters") && reply.contains("Nothing was written"),
        "{reply}"
    );
    assert!(h.records().await.is_empty());
    // The same note within the cap is written whole.
    let short = format!("The deploy checklist is {}", "step ".repeat(90));
    let reply = h.dm("111", &format!("@notes: {short}")).await;
    assert!(reply.starts_with("Written: agent_notes"), "{reply}");
    let kept = h.records().await;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].content, short.trim());
}

// --- privacy and own memory ---------------------------------------------------

#[tokio::test]
async fn in_a_group_nobody_else_s_personal_memory_is_read() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.dm("222", "remember that my salary review is in March")
        .await;
    let reply = h
        .group(Some("111"), "g1", "when is the salary review?")
        .await;
    assert!(!reply.contains("March"), "{reply}");
    let own_in_group = h
        .group(Some("222"), "g1", "when is my salary review?")
        .await;
    assert!(
        !own_in_group.contains("March"),
        "episodic personal items stay out of shared scope: {own_in_group}"
    );
    assert!(h
        .dm("222", "when is my salary review?")
        .await
        .contains("March"));
    assert!(h
        .group(Some("222"), "g1", "what do you remember about me?")
        .await
        .contains("direct message"));
}

#[tokio::test]
async fn people_list_and_forget_their_own_records() {
    let h = Harness::new().await;
    h.pair("222", Role::User).await;
    h.pair("333", Role::User).await;
    h.dm("222", "remember that my locker is 12").await;
    h.dm("333", "remember that my locker is 40").await;
    let mine = h.dm("222", "What do you remember about me?").await;
    assert!(
        mine.contains("locker is 12") && !mine.contains("40"),
        "{mine}"
    );
    let theirs = h.records_containing("locker is 40").await[0].id;
    assert!(h
        .dm("222", &format!("/forget {theirs}"))
        .await
        .contains("no record"));
    let own = h.records_containing("locker is 12").await[0].id;
    assert!(h
        .dm("222", &format!("/forget {own}"))
        .await
        .contains("Forgotten"));
    assert_eq!(
        h.db().records().get("default", own).await.unwrap().status,
        Status::Deleted
    );
    assert_eq!(
        h.db()
            .records()
            .get("default", theirs)
            .await
            .unwrap()
            .status,
        Status::Active
    );
}

/// "The admin password is hunter2" used to be stored verbatim. Now every
/// kind of credential is refused, with what it looks like named, through a
/// directive, an explicit "remember", and never proposed.
#[tokio::test]
async fn credentials_are_refused_with_a_message_per_kind_and_never_proposed() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    for (text, kind) in [
        ("The admin password is hunter2", "a password"),
        ("The deploy key is sk-abcdefghijklmnop1234", "an API key"),
        (
            "-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEA",
            "a private key",
        ),
        (
            "Call the API with Bearer abcdef123456789xyz",
            "a bearer token",
        ),
    ] {
        let reply = h.dm("111", &format!("@notes: {text}")).await;
        assert!(
            reply.contains(&format!("looks like {kind}")),
            "{text}: {reply}"
        );
        let reply = h.dm("111", &format!("@policy: {text}")).await;
        assert!(
            reply.contains(&format!("looks like {kind}")),
            "{text}: {reply}"
        );
        let reply = h.dm("222", &format!("remember that {text}")).await;
        assert!(
            reply.contains(&format!("looks like {kind}")),
            "{text}: {reply}"
        );
        let reply = h.dm("111", &format!("From now on: {text}")).await;
        assert!(
            !reply.contains("Remember this?"),
            "{text}: proposed: {reply}"
        );
    }
    assert!(h.records().await.is_empty(), "{:?}", h.records().await);
    // Positive control: the same kind of note without a secret is kept.
    let reply = h
        .dm("111", "@notes: Passwords are reset at the IT desk")
        .await;
    assert!(reply.starts_with("Written"), "{reply}");
}

/// A follow-up with no memory of its own ("and tell me again?") is
/// read with the speaker's previous line, by the offline responder too.
#[tokio::test]
async fn a_follow_up_without_a_hit_of_its_own_is_read_with_the_previous_line() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.dm("111", "@notes: The daily report uses example_orders")
        .await;
    let first = h
        .dm("222", "Which table is the daily report built from?")
        .await;
    assert!(first.contains("example_orders"), "{first}");
    let again = h.dm("222", "and tell me again?").await;
    assert!(again.contains("example_orders"), "{again}");
    // Without a previous line of their own there is nothing to follow up.
    h.pair("333", Role::User).await;
    let other = h.dm("333", "and tell me again?").await;
    assert!(!other.contains("example_orders"), "{other}");
}
