//! The storage conformance suite, conversations: the same checks on SQLite
//! and PostgreSQL of lines stored and deduplicated, concurrent stores, a
//! reply's window and the live size, trims and archives, and a turn's first read.
//! PostgreSQL runs when STEWARD_TEST_POSTGRES_URL is set (always, under CI).

use memory::admin_text::AdminText;
use memory::store::{LiveSize, NewArchive, NewMessage, Opening, ViewOf};
use memory::{Backend, Db, Role};
use pairing::{Pairing, PairingSettings};
use steward_tests::{postgres_db, sqlite_file_db};

steward_tests::on_both_databases!(
    messages_keep_sender_and_role_and_dedupe,
    a_reply_reads_its_window_the_live_size_and_the_summaries_at_once,
    the_live_size_follows_every_insert_trim_erasure_and_redelivery,
    a_slice_is_archived_once_however_many_trims_race_for_it,
    a_trim_committed_with_lines_beside_it_keeps_every_line_and_the_live_size,
    a_turns_first_read_answers_seen_sender_and_view_at_once,
);

async fn messages_keep_sender_and_role_and_dedupe(db: Db) {
    assert!(db
        .conversations()
        .mark_seen("o", "discord", "m1", 1)
        .await
        .unwrap());
    assert!(!db
        .conversations()
        .mark_seen("o", "discord", "m1", 2)
        .await
        .unwrap());
    assert!(
        db.conversations()
            .mark_seen("o", "teams", "m1", 2)
            .await
            .unwrap(),
        "ids are per channel"
    );
    assert!(
        db.conversations()
            .mark_seen("o2", "discord", "m1", 2)
            .await
            .unwrap(),
        "ids are per org"
    );
    for (sender, role) in [(Some("discord:1"), Some("admin")), (None, None)] {
        db.conversations()
            .insert_message(&NewMessage {
                org: "o",
                agent: "default",
                channel: "discord",
                conversation: "g",
                conversation_kind: "group",
                author: "person",
                sender,
                sender_role: role,
                text: "hello",
                said_at: 5,
            })
            .await
            .unwrap();
    }
    let h = db
        .conversations()
        .history("o", "default", "g")
        .await
        .unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(
        (h[0].sender.as_deref(), h[0].sender_role.as_deref()),
        (Some("discord:1"), Some("admin"))
    );
    assert_eq!(
        (h[1].sender.as_deref(), h[1].sender_role.as_deref()),
        (None, None)
    );
    assert!(db
        .conversations()
        .history("o2", "default", "g")
        .await
        .unwrap()
        .is_empty());
}

/// The ids of the live lines of conversation `conversation` of `o`, oldest first.
async fn live_ids(db: &Db, conversation: &str) -> Vec<i64> {
    let live = db
        .conversations()
        .history("o", "default", conversation)
        .await
        .unwrap();
    live.iter().map(|m| m.id).collect()
}

/// The ids of the lines of archive `id` of `o`, oldest first.
async fn archived_ids(db: &Db, id: i64) -> Vec<i64> {
    let lines = db.conversations().archive_lines("o", id).await.unwrap();
    lines.iter().map(|m| m.id).collect()
}

/// The archive of lines `first_id..=last_id` of group conversation `c` of `o`.
fn slice_of_c(first_id: i64, last_id: i64) -> NewArchive<'static> {
    NewArchive {
        org: "o",
        agent: "default",
        channel: "teams",
        conversation: "c",
        conversation_kind: "group",
        first_id,
        last_id,
        started_at: 0,
        ended_at: 1,
        trust: "mixed",
        summary: "s",
        markdown: "",
        created_at: 2,
        created_by: "test",
    }
}

/// A line of user `teams:1` in group conversation `conversation` of organisation `o`.
fn teams_line<'a>(conversation: &'a str, text: &'a str, said_at: i64) -> NewMessage<'a> {
    NewMessage {
        org: "o",
        agent: "default",
        channel: "teams",
        conversation,
        conversation_kind: "group",
        author: "person",
        sender: Some("teams:1"),
        sender_role: Some("user"),
        text,
        said_at,
    }
}

/// Many lines stored at once (turns share one commit): each is committed by
/// the time its store returns — a second connection reads it at once — keeps
/// its own id, and of two deliveries racing with one platform id exactly one
/// is stored. On a SQLite file and on PostgreSQL, each with a second pool.
async fn concurrent_lines_are_committed_when_stored(db: Db, other: Db) {
    const LINES: usize = 64;
    const IDS: usize = 48;
    let mut tasks = Vec::new();
    for i in 0..LINES {
        let (db, other) = (db.clone(), other.clone());
        tasks.push(tokio::spawn(async move {
            let conversation = format!("c{}", i % IDS);
            let text = format!("line {i}");
            let line = teams_line(&conversation, &text, i as i64);
            let platform_id = format!("teams:1/p{}", i % IDS);
            let stored = db
                .conversations()
                .insert_message_once(&line, Some(&platform_id))
                .await
                .unwrap();
            if let Some(id) = stored {
                let seen = other
                    .conversations()
                    .history("o", "default", &conversation)
                    .await
                    .unwrap();
                assert!(
                    seen.iter().any(|m| m.id == id && m.text == text),
                    "{text}: stored as {id}, but another connection does not read it"
                );
                assert!(other
                    .conversations()
                    .is_seen("o", "teams", &platform_id)
                    .await
                    .unwrap());
            }
            stored
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    assert_eq!(ids.len(), IDS, "one line per platform id");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), IDS, "every line has its own id");
    // The delivery that lost the race left no line, and the winner's mark
    // finds its line (a retry gets the answer stored for it).
    for i in 0..IDS {
        let conversation = format!("c{i}");
        let c = other.conversations();
        let history = c.history("o", "default", &conversation).await.unwrap();
        assert_eq!(history.len(), 1, "{conversation} holds one line");
        let size = c.live_size("o", "default", &conversation).await.unwrap();
        assert_eq!(size.0, 1, "{conversation}'s live size counts one line");
        let answer = c.answer_of("o", "teams", &format!("teams:1/p{i}")).await;
        assert_eq!(answer.unwrap().map(|a| a.message), Some(history[0].id));
    }
    let replies = replies_at_once(&db, 16).await;
    assert_eq!(replies.len(), 16);
}

/// `n` lines without platform ids stored at once; their ids.
async fn replies_at_once(db: &Db, n: usize) -> Vec<i64> {
    let mut tasks = Vec::new();
    for i in 0..n {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let text = format!("reply {i}");
            db.conversations()
                .insert_message(&NewMessage {
                    org: "o",
                    agent: "default",
                    channel: "teams",
                    conversation: "replies",
                    conversation_kind: "group",
                    author: "agent",
                    sender: None,
                    sender_role: None,
                    text: &text,
                    said_at: i as i64,
                })
                .await
                .unwrap()
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.unwrap());
    }
    let stored = db
        .conversations()
        .history("o", "default", "replies")
        .await
        .unwrap();
    assert_eq!(stored.len(), n);
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_lines_are_committed_when_stored_on_sqlite() {
    let (db, dir) = sqlite_file_db().await;
    let url = format!("sqlite:{}", dir.path().join("steward.db").display());
    let other = Db::connect(&url).await.unwrap();
    concurrent_lines_are_committed_when_stored(db, other).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_lines_are_committed_when_stored_on_postgres() {
    let Some(url) = steward_tests::postgres_url() else {
        return;
    };
    let schema = format!("t_lines_{}", std::process::id());
    let db = Db::connect_fresh_schema(&url, &schema).await.unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    let other = Db::connect(&format!("{url}{sep}options=-c%20search_path%3D{schema}"))
        .await
        .unwrap();
    concurrent_lines_are_committed_when_stored(db, other).await;
}

/// `conversation_view`: the newest live lines before the message being
/// answered (newest first, at most the window), the size of the whole live
/// history in characters (not bytes), and the newest summaries of trimmed
/// history, each of this conversation only.
async fn a_reply_reads_its_window_the_live_size_and_the_summaries_at_once(db: Db) {
    let texts = ["one", "two", "naïve café", "четыре", "five"];
    let mut ids = Vec::new();
    for (i, (conversation, text)) in texts
        .iter()
        .map(|t| ("c", *t))
        .chain([("elsewhere", "not this one")])
        .enumerate()
    {
        ids.push(
            db.conversations()
                .insert_message(&teams_line(conversation, text, i as i64))
                .await
                .unwrap(),
        );
    }
    for (line, summary) in [(ids[0], "first summary"), (ids[1], "second summary")] {
        db.conversations()
            .archive_slice(&NewArchive {
                org: "o",
                agent: "default",
                channel: "teams",
                conversation: "c",
                conversation_kind: "group",
                first_id: line,
                last_id: line,
                started_at: 0,
                ended_at: 1,
                trust: "trusted",
                summary,
                markdown: "",
                created_at: 10,
                created_by: "test",
            })
            .await
            .unwrap();
    }
    let live = LiveSize {
        messages: 3,
        chars: ("naïve café".chars().count() + "четыре".chars().count() + 4) as i64,
    };
    let view = db
        .conversations()
        .conversation_view("o", "default", "c", ids[4], 1, 1)
        .await
        .unwrap();
    let texts_of = |v: &memory::store::ConversationView| {
        v.recent.iter().map(|m| m.text.clone()).collect::<Vec<_>>()
    };
    assert_eq!(
        texts_of(&view),
        vec!["четыре"],
        "the window: before the message, newest"
    );
    assert_eq!(view.recent[0].id, ids[3]);
    assert_eq!(view.recent[0].sender.as_deref(), Some("teams:1"));
    assert_eq!(
        view.live, live,
        "the whole live history, this message included"
    );
    assert_eq!(view.summaries, vec!["second summary"]);
    let wide = db
        .conversations()
        .conversation_view("o", "default", "c", ids[4], 10, 10)
        .await
        .unwrap();
    assert_eq!(
        texts_of(&wide),
        vec!["четыре", "naïve café"],
        "trimmed lines are not live"
    );
    assert_eq!(wide.summaries, vec!["second summary", "first summary"]);
    let none = db
        .conversations()
        .conversation_view("o", "default", "c", ids[4], 0, 0)
        .await
        .unwrap();
    assert!(none.recent.is_empty() && none.summaries.is_empty());
    assert_eq!(none.live, live, "the size is read even with no window");
    let empty = db
        .conversations()
        .conversation_view("o", "default", "nothing here", i64::MAX, 5, 5)
        .await
        .unwrap();
    assert_eq!(empty, memory::store::ConversationView::default());
}

/// The live history's size is kept by the database (`live_history`), not
/// summed per turn: after lines stored together in one group commit, a
/// redelivery, a trim and an erasure, it is what counting the live lines says.
async fn the_live_size_follows_every_insert_trim_erasure_and_redelivery(db: Db) {
    let line = |conversation: &'static str, sender: &'static str, text: String| {
        let db = db.clone();
        async move {
            db.conversations()
                .insert_message_once(
                    &NewMessage {
                        sender: Some(sender),
                        ..teams_line(conversation, &text, 1)
                    },
                    Some(&format!("{sender}/{text}")),
                )
                .await
                .unwrap()
        }
    };
    // Concurrent lines share batches of the group commit; one is sent twice.
    let mut tasks = Vec::new();
    for i in 0..24 {
        let (conversation, sender) = if i % 3 == 0 {
            ("d", "teams:2")
        } else {
            ("c", "teams:1")
        };
        let text = format!("line {i} — naïve {}", "é".repeat(i));
        tasks.push(tokio::spawn(line(conversation, sender, text)));
    }
    tasks.push(tokio::spawn(line(
        "c",
        "teams:1",
        "line 1 — naïve é".into(),
    )));
    let mut stored = Vec::new();
    for t in tasks {
        stored.extend(t.await.unwrap());
    }
    assert_eq!(stored.len(), 24, "the redelivery stores nothing");
    let counted = |db: Db, conversation: &'static str| async move {
        let live = db
            .conversations()
            .history("o", "default", conversation)
            .await
            .unwrap();
        let chars: usize = live.iter().map(|m| m.text.chars().count()).sum();
        (live.len() as i64, chars as i64)
    };
    for c in ["c", "d"] {
        assert_eq!(
            db.conversations()
                .live_size("o", "default", c)
                .await
                .unwrap(),
            counted(db.clone(), c).await,
            "after the inserts, conversation {c}"
        );
    }
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "c")
            .await
            .unwrap()
            .0,
        16
    );
    // A trim takes its slice out of the live history.
    let slice: Vec<i64> = db
        .conversations()
        .history("o", "default", "c")
        .await
        .unwrap()
        .iter()
        .take(5)
        .map(|m| m.id)
        .collect();
    db.conversations()
        .archive_slice(&slice_of_c(slice[0], slice[4]))
        .await
        .unwrap();
    // Erasing a person rewrites the text of their lines, live and trimmed.
    db.erase_person("o", "teams:2").await.unwrap();
    for c in ["c", "d"] {
        assert_eq!(
            db.conversations()
                .live_size("o", "default", c)
                .await
                .unwrap(),
            counted(db.clone(), c).await,
            "after a trim and an erasure, conversation {c}"
        );
    }
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "c")
            .await
            .unwrap()
            .0,
        11
    );
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "d")
            .await
            .unwrap(),
        (8, 8 * "[erased]".chars().count() as i64),
        "an erased line counts as its new text"
    );
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "none")
            .await
            .unwrap(),
        (0, 0)
    );
    let view = db
        .conversations()
        .conversation_view("o", "default", "d", i64::MAX, 0, 0)
        .await
        .unwrap();
    assert_eq!(
        (view.live.messages, view.live.chars),
        db.conversations()
            .live_size("o", "default", "d")
            .await
            .unwrap()
    );
}

/// Two turns of one conversation can both find it over budget and trim the
/// same oldest slice: one archive holds it, the other trim writes nothing,
/// and the live history is what is left.
async fn a_slice_is_archived_once_however_many_trims_race_for_it(db: Db) {
    let mut ids = Vec::new();
    for (i, conversation) in ["c", "c", "d", "c", "c", "c"].into_iter().enumerate() {
        let text = format!("line {i}");
        ids.push(
            db.conversations()
                .insert_message(&teams_line(conversation, &text, i as i64))
                .await
                .unwrap(),
        );
    }
    let trim = |first: i64, last: i64| {
        let db = db.clone();
        async move {
            db.conversations()
                .archive_slice(&slice_of_c(first, last))
                .await
                .unwrap()
        }
    };
    // The first slice spans a line of another conversation (ids interleave).
    let racing: Vec<_> = (0..4).map(|_| tokio::spawn(trim(ids[0], ids[3]))).collect();
    let mut archived = Vec::new();
    for t in racing {
        archived.extend(t.await.unwrap());
    }
    assert_eq!(
        archived.len(),
        1,
        "one of the racing trims archives the slice"
    );
    assert_eq!(
        trim(ids[0], ids[3]).await,
        None,
        "a trimmed slice is not archived again"
    );
    assert_eq!(trim(ids[1], ids[1]).await, None, "nor any part of it");
    let lines = archived_ids(&db, archived[0]).await;
    assert_eq!(
        lines,
        vec![ids[0], ids[1], ids[3]],
        "its lines, this conversation's only"
    );
    let live = live_ids(&db, "c").await;
    assert_eq!(live, vec![ids[4], ids[5]]);
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "c")
            .await
            .unwrap(),
        (2, 2 * "line 4".len() as i64)
    );
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "d")
            .await
            .unwrap(),
        (1, 6)
    );
    // The next slice begins after the watermark.
    assert!(trim(ids[4], ids[4]).await.is_some());
    assert_eq!(
        db.conversations()
            .archives("o", Some("c"))
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "c")
            .await
            .unwrap(),
        (1, 6)
    );
}

/// Trims go through the group commit of lines and share its transactions:
/// a slice archived while lines of the same and other conversations are
/// being stored loses none of them, counts none twice, and the live size
/// stays what the live lines add up to.
async fn a_trim_committed_with_lines_beside_it_keeps_every_line_and_the_live_size(db: Db) {
    let mut first = Vec::new();
    for i in 0..10 {
        let text = format!("old line {i}");
        first.push(
            db.conversations()
                .insert_message(&teams_line("c", &text, i))
                .await
                .unwrap(),
        );
    }
    let writers: Vec<_> = (0..40)
        .map(|i| {
            let db = db.clone();
            tokio::spawn(async move {
                let conversation = if i % 2 == 0 { "c" } else { "d" };
                let text = format!("new line {i} of {}", "x".repeat(i));
                db.conversations()
                    .insert_message(&teams_line(conversation, &text, 100 + i as i64))
                    .await
                    .unwrap()
            })
        })
        .collect();
    // Two trims of the slice race the lines: one archives it.
    let trims: Vec<_> = (0..2)
        .map(|_| {
            let db = db.clone();
            let (a, b) = (first[0], first[5]);
            tokio::spawn(async move {
                db.conversations()
                    .archive_slice(&slice_of_c(a, b))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut new_ids = Vec::new();
    for w in writers {
        new_ids.push(w.await.unwrap());
    }
    let mut archived = Vec::new();
    for t in trims {
        archived.extend(t.await.unwrap());
    }
    assert_eq!(archived.len(), 1, "the slice is archived once");
    let in_archive = archived_ids(&db, archived[0]).await;
    assert_eq!(in_archive, first[..6].to_vec(), "the slice, and only it");
    for conversation in ["c", "d"] {
        let live = db
            .conversations()
            .history("o", "default", conversation)
            .await
            .unwrap();
        let chars: i64 = live.iter().map(|m| m.text.chars().count() as i64).sum();
        assert_eq!(
            db.conversations()
                .live_size("o", "default", conversation)
                .await
                .unwrap(),
            (live.len() as i64, chars),
            "the live size of {conversation} is its live lines'"
        );
    }
    let live_c = live_ids(&db, "c").await;
    let live_d = db
        .conversations()
        .history("o", "default", "d")
        .await
        .unwrap();
    assert_eq!(
        live_c.len(),
        4 + 20,
        "c keeps its 4 newer old lines and its 20 new ones"
    );
    assert_eq!(live_d.len(), 20, "d loses nothing");
    for id in &new_ids {
        assert!(
            live_c.contains(id) || live_d.iter().any(|m| m.id == *id),
            "line {id} is live"
        );
    }
}

/// A turn's first read (`Db::opening`, through `Pairing::open_turn`): whether
/// the platform id was seen in this channel, the sender's active user, and
/// the conversation's view as `conversation_view` reads it — or none when
/// not asked; a revoked user is nobody from the next read on.
async fn a_turns_first_read_answers_seen_sender_and_view_at_once(db: Db) {
    let pairing = Pairing::new(db.clone(), PairingSettings::default());
    pairing
        .add_user("o", "teams:1", "Ana", Role::Admin, "test", 1)
        .await
        .unwrap();
    for (i, text) in ["first", "second", "third"].iter().enumerate() {
        db.conversations()
            .insert_message_once(
                &NewMessage {
                    org: "o",
                    agent: "default",
                    channel: "teams",
                    conversation: "c",
                    conversation_kind: "direct",
                    author: "person",
                    sender: Some("teams:1"),
                    sender_role: Some("admin"),
                    text,
                    said_at: i as i64,
                },
                Some(&format!("teams:1/m{i}")),
            )
            .await
            .unwrap();
    }
    let view = ViewOf {
        agent: "default",
        conversation: "c",
        lines: 2,
        summaries: 3,
    };
    let open = |platform_id: Option<&'static str>, stored_id: Option<&'static str>, view| {
        let pairing = pairing.clone();
        async move {
            pairing
                .open_turn(&Opening {
                    org: "o",
                    channel: "teams",
                    platform_id,
                    stored_id,
                    view,
                    audited: &[],
                })
                .await
                .unwrap()
        }
    };
    let o = open(Some("teams:1/m1"), Some("teams:1"), Some(view)).await;
    assert!(o.seen, "a redelivery is seen");
    let user = o.user.expect("the sender's user");
    assert_eq!((user.user_id.as_str(), user.role), ("teams:1", Role::Admin));
    assert_eq!(
        o.view,
        Some(
            db.conversations()
                .conversation_view("o", "default", "c", i64::MAX, 2, 3)
                .await
                .unwrap()
        ),
        "the same view a reply reads"
    );
    let texts: Vec<&str> = o
        .view
        .as_ref()
        .unwrap()
        .recent
        .iter()
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(texts, ["third", "second"]);
    assert_eq!(o.view.as_ref().unwrap().live.messages, 3);
    let fresh = open(Some("teams:1/m9"), Some("teams:1"), None).await;
    assert!(!fresh.seen && fresh.user.is_some() && fresh.view.is_none());
    let other_channel = Opening {
        channel: "discord",
        ..Opening {
            org: "o",
            channel: "teams",
            platform_id: Some("teams:1/m1"),
            stored_id: None,
            view: None,
            audited: &[],
        }
    };
    let elsewhere = pairing.open_turn(&other_channel).await.unwrap();
    assert!(
        !elsewhere.seen && elsewhere.user.is_none(),
        "ids are per channel"
    );
    let stranger = open(None, Some("teams:404"), Some(view)).await;
    assert!(!stranger.seen && stranger.user.is_none());
    assert!(stranger.roles.is_empty() && stranger.audited.is_empty());
    // The same read brings what the turn would otherwise read apart: the
    // sender's roles, the agent's skills generation, and which of the audit
    // actions asked about the log holds about the sender.
    for role in ["oncall", "billing"] {
        roles_changed(&db, memory::role_memory::RoleChange::Add(role), 2).await;
    }
    audited(&db, "test", "pairing.approve", 2).await;
    let asked = ["pairing.approve", "oversight.promised"];
    let full = pairing
        .open_turn(&Opening {
            org: "o",
            channel: "teams",
            platform_id: Some("teams:1/m7"),
            stored_id: Some("teams:1"),
            view: Some(view),
            audited: &asked,
        })
        .await
        .unwrap();
    assert_eq!(
        full.roles,
        db.role_memory().roles_of("o", "teams:1").await.unwrap()
    );
    assert_eq!(full.roles, ["billing", "oncall"]);
    assert_eq!(
        full.skill_generation,
        Some(db.skills().generation("o", "default").await.unwrap())
    );
    assert_eq!(full.audited, ["pairing.approve"]);
    // An action the kept copy does not follow is read as asked.
    let other = pairing
        .open_turn(&speaker_turn(&["role.add", "role.remove"]))
        .await
        .unwrap();
    assert_eq!(other.audited, ["role.add"]);
    audited(&db, "teams:1", "oversight.promised", 3).await;
    let promised = pairing.open_turn(&speaker_turn(&asked)).await.unwrap();
    let mut found = promised.audited.clone();
    found.sort_unstable();
    assert_eq!(
        found,
        ["oversight.promised", "pairing.approve"],
        "both actions"
    );
    assert_eq!(promised.roles, ["billing", "oncall"]);
    assert_eq!(
        full.view,
        open(Some("teams:1/m7"), Some("teams:1"), Some(view))
            .await
            .view,
        "the view is the same whatever else is asked"
    );
    pairing.revoke("o", "teams:1", "test", 2).await.unwrap();
    assert!(
        open(None, Some("teams:1"), None).await.user.is_none(),
        "revoked: nobody from the next read on"
    );
}

/// The first read of a turn of `teams:1` in organisation `o` (no message
/// id, no view), asking which of `audited` the log holds about them.
fn speaker_turn<'a>(audited: &'a [&'a str]) -> Opening<'a> {
    Opening {
        org: "o",
        channel: "teams",
        platform_id: None,
        stored_id: Some("teams:1"),
        view: None,
        audited,
    }
}

/// An audit entry `action` about `teams:1` in organisation `o`.
async fn audited(db: &Db, actor: &str, action: &str, at: i64) {
    db.audit()
        .append("o", actor, action, "teams:1", &AdminText::empty(), at)
        .await
        .unwrap();
}

/// A change of `teams:1`'s work roles in organisation `o`.
async fn roles_changed(db: &Db, change: memory::role_memory::RoleChange<'_>, at: i64) {
    db.role_memory()
        .change("o", "teams:1", change, "test", at)
        .await
        .unwrap();
}

/// Two processes on one store (as two replicas are), each with its own copy
/// of speakers' roles and audit entries: what one changes, the other's next
/// turn reads — the copy holds only while the organisation's people
/// generation, moved by the database itself, stands.
async fn another_replica_changes_a_speaker(a: Db, b: Db) {
    let here = Pairing::new(a.clone(), PairingSettings::default());
    let there = Pairing::new(b.clone(), PairingSettings::default());
    here.add_user("o", "teams:1", "Ana", Role::User, "test", 1)
        .await
        .unwrap();
    let asked = ["pairing.approve", "oversight.promised"];
    let open = |p: Pairing| async move { p.open_turn(&speaker_turn(&asked)).await.unwrap() };
    let first = open(here.clone()).await;
    assert!(first.roles.is_empty() && first.audited.is_empty());
    // Kept here; changed there.
    roles_changed(&b, memory::role_memory::RoleChange::Add("oncall"), 2).await;
    audited(&b, "test", "pairing.approve", 2).await;
    let next = open(here.clone()).await;
    assert_eq!(next.roles, ["oncall"], "a role granted elsewhere");
    assert_eq!(
        next.audited,
        ["pairing.approve"],
        "an approval audited elsewhere"
    );
    assert_eq!(open(there.clone()).await.roles, ["oncall"]);
    roles_changed(&b, memory::role_memory::RoleChange::Remove("oncall"), 3).await;
    assert!(
        open(here).await.roles.is_empty(),
        "a role taken away elsewhere is gone from the next turn on"
    );
}

#[tokio::test]
async fn what_another_replica_changes_about_a_speaker_holds_from_the_next_turn() {
    let (a, dir) = sqlite_file_db().await;
    let url = format!("sqlite:{}", dir.path().join("steward.db").display());
    let b = Db::connect(&url)
        .await
        .expect("a second process on the file");
    another_replica_changes_a_speaker(a, b).await;
    let Some(url) = steward_tests::postgres_url() else {
        return;
    };
    let schema = format!("t_{}", std::process::id());
    let a = Db::connect_fresh_schema(&url, &schema).await.expect("pg");
    let b = Db::connect_kept_schema(&url, &schema)
        .await
        .expect("pg again");
    another_replica_changes_a_speaker(a, b).await;
}
