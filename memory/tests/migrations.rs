//! Migrations applied to a store that holds data: nothing stored is lost or
//! moved. Each test fills a store as an older build left it, with sqlx's own
//! migrator up to a version, then opens it with `Db::connect`.
//! PostgreSQL runs when STEWARD_TEST_POSTGRES_URL is set (always, under CI).

// The 100-line limit is for production code; a scenario reads top to bottom.
#![allow(clippy::too_many_lines)]
use memory::store::NewMessage;
use memory::Db;
use sqlx::Executor;

/// An empty store at every migration of `migrations` before version `before`.
async fn store_before(url: &str, migrations: &str, before: i64) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(migrations).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let version: i64 = name[..4].parse().unwrap();
        if version < before {
            std::fs::copy(&path, dir.path().join(&name)).unwrap();
        }
    }
    let old = sqlx::AnyPool::connect(url).await.unwrap();
    sqlx::migrate::Migrator::new(dir.path())
        .await
        .unwrap()
        .run(&old)
        .await
        .unwrap();
    old
}

/// A store whose trims marked each line with its archive (before migration
/// `trim_watermark`) keeps, once migrated, every line where it was: the
/// archives hold the lines they held, the live history and its size are the
/// untrimmed lines, and a conversation trimmed whole takes new lines as live.
async fn a_store_trimmed_line_by_line_keeps_every_line_in_place(
    url: &str,
    migrations: &str,
    before: i64,
) {
    let old = store_before(url, migrations, before).await;
    let line = |conversation: &str, i: i64| {
        format!(
            "INSERT INTO messages (org, agent, channel, conversation, conversation_kind, author, sender, sender_role, text, said_at) \
             VALUES ('o', 'default', 'teams', '{conversation}', 'group', 'person', 'teams:1', 'user', 'line {i} of {conversation}', {i})"
        )
    };
    // Lines interleaved across three conversations, as turns store them.
    for i in 1..=6 {
        for c in ["c", "whole", "live"] {
            if c == "c" || i <= 2 {
                old.execute(line(c, i).as_str()).await.unwrap();
            }
        }
    }
    let ids = |conversation: &'static str| {
        let old = old.clone();
        async move {
            let rows: Vec<(i64,)> = sqlx::query_as(&format!(
                "SELECT id FROM messages WHERE conversation = '{conversation}' ORDER BY id"
            ))
            .fetch_all(&old)
            .await
            .unwrap();
            rows.into_iter().map(|(id,)| id).collect::<Vec<i64>>()
        }
    };
    let (c, whole, live) = (ids("c").await, ids("whole").await, ids("live").await);
    // Three trims as they were made: an archive, then its lines marked.
    let mut archives = Vec::new();
    for (conversation, slice) in [("c", &c[..2]), ("c", &c[2..4]), ("whole", &whole[..])] {
        let (id,): (i64,) = sqlx::query_as(&format!(
            "INSERT INTO archives (org, agent, channel, conversation, conversation_kind, started_at, ended_at, trust, summary, markdown, created_at, created_by) \
             VALUES ('o', 'default', 'teams', '{conversation}', 'group', 0, 1, 'mixed', 's', '', 1, 'test') RETURNING id"
        ))
        .fetch_one(&old)
        .await
        .unwrap();
        let list = slice
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        old.execute(format!("UPDATE messages SET trimmed = {id} WHERE id IN ({list})").as_str())
            .await
            .unwrap();
        archives.push((id, slice.to_vec()));
    }
    // A conversation trimmed whole before `live_history` existed has no row.
    old.execute("DELETE FROM live_history WHERE conversation = 'whole'")
        .await
        .unwrap();
    old.close().await;

    let db = Db::connect(url).await.unwrap();
    let history = |conversation: &'static str| {
        let db = db.clone();
        async move {
            db.conversations()
                .history("o", "default", conversation)
                .await
                .unwrap()
                .iter()
                .map(|m| m.id)
                .collect::<Vec<i64>>()
        }
    };
    assert_eq!(
        history("c").await,
        c[4..].to_vec(),
        "the untrimmed lines stay live"
    );
    assert_eq!(history("live").await, live);
    assert_eq!(history("whole").await, Vec::<i64>::new());
    for (id, slice) in &archives {
        let lines: Vec<i64> = db
            .conversations()
            .archive_lines("o", *id)
            .await
            .unwrap()
            .iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(&lines, slice, "archive {id} holds the lines it held");
    }
    let size = |conversation: &'static str| {
        let db = db.clone();
        async move {
            db.conversations()
                .live_size("o", "default", conversation)
                .await
                .unwrap()
        }
    };
    let chars =
        |n: usize, conversation: &str| (n * format!("line 1 of {conversation}").len()) as i64;
    assert_eq!(size("c").await, (2, chars(2, "c")));
    assert_eq!(size("whole").await, (0, 0));
    assert_eq!(size("live").await, (2, chars(2, "live")));
    // A conversation trimmed whole had no live size; its next line is live.
    let next = db
        .conversations()
        .insert_message(&NewMessage {
            org: "o",
            agent: "default",
            channel: "teams",
            conversation: "whole",
            conversation_kind: "group",
            author: "person",
            sender: Some("teams:1"),
            sender_role: Some("user"),
            text: "line 7 of whole",
            said_at: 7,
        })
        .await
        .unwrap();
    assert_eq!(history("whole").await, vec![next]);
    assert_eq!(size("whole").await, (1, chars(1, "whole")));
    db.close().await;
}

#[tokio::test]
async fn a_store_trimmed_line_by_line_migrates_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}?mode=rwc", dir.path().join("old.db").display());
    a_store_trimmed_line_by_line_keeps_every_line_in_place(
        &url,
        concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"),
        11,
    )
    .await;
}

#[tokio::test]
async fn a_store_trimmed_line_by_line_migrates_on_postgres() {
    let Some(pg) = Schema::new("a_store_trimmed_line_by_line_migrates_on_postgres").await else {
        return;
    };
    a_store_trimmed_line_by_line_keeps_every_line_in_place(
        &pg.url,
        concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres"),
        12,
    )
    .await;
    pg.drop().await;
}

/// A PostgreSQL schema of its own for one test (`None`, and the test is
/// skipped, without STEWARD_TEST_POSTGRES_URL outside CI).
struct Schema {
    admin: sqlx::PgPool,
    name: String,
    /// The database's URL with this schema as its search path.
    url: String,
}

impl Schema {
    async fn new(test: &str) -> Option<Schema> {
        let Ok(url) = std::env::var("STEWARD_TEST_POSTGRES_URL") else {
            assert!(
                std::env::var("CI").is_err(),
                "CI is set but STEWARD_TEST_POSTGRES_URL is not"
            );
            println!("SKIPPED (no PostgreSQL): {test}; set STEWARD_TEST_POSTGRES_URL");
            return None;
        };
        let name = format!("t_old_{}_{}", std::process::id(), test.len());
        let admin = sqlx::PgPool::connect(&url).await.unwrap();
        admin
            .execute(format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}").as_str())
            .await
            .unwrap();
        let sep = if url.contains('?') { '&' } else { '?' };
        let url = format!("{url}{sep}options=-c%20search_path%3D{name}");
        Some(Schema { admin, name, url })
    }

    async fn drop(self) {
        self.admin
            .execute(format!("DROP SCHEMA {} CASCADE", self.name).as_str())
            .await
            .unwrap();
    }
}

/// A store whose lines kept the platform id they spent (before migration
/// `seen_line`, when the lines' platform ids had an index of their own)
/// answers, once migrated, a retry of each with its stored reply: the seen
/// marks are given their lines. A mark no line spent finds none, and a line
/// stored after the migration is found through its mark.
async fn spent_ids_find_their_lines_after_the_index_went(url: &str, migrations: &str, before: i64) {
    let old = store_before(url, migrations, before).await;
    let line = |text: &str, platform_id: &str, reply_to: &str| {
        format!(
            "INSERT INTO messages (org, agent, channel, conversation, conversation_kind, author, sender, sender_role, text, said_at, platform_id, reply_to) \
             VALUES ('o', 'default', 'teams', 'c', 'group', 'person', 'teams:1', 'user', '{text}', 1, {platform_id}, {reply_to})"
        )
    };
    old.execute(line("first question", "'teams:1/m1'", "NULL").as_str())
        .await
        .unwrap();
    let (asked,): (i64,) = sqlx::query_as("SELECT id FROM messages WHERE text = 'first question'")
        .fetch_one(&old)
        .await
        .unwrap();
    old.execute(line("its answer", "NULL", &asked.to_string()).as_str())
        .await
        .unwrap();
    old.execute(line("unanswered", "'teams:1/m3'", "NULL").as_str())
        .await
        .unwrap();
    for id in ["teams:1/m1", "teams:1/m2", "teams:1/m3"] {
        old.execute(
            format!("INSERT INTO seen_messages (org, channel, platform_id, seen_at) VALUES ('o', 'teams', '{id}', 1)")
                .as_str(),
        )
        .await
        .unwrap();
    }
    old.close().await;

    let db = Db::connect(url).await.unwrap();
    let conversations = db.conversations();
    let answer = conversations
        .answer_of("o", "teams", "teams:1/m1")
        .await
        .unwrap()
        .expect("a spent id finds its line");
    assert_eq!(answer.message, asked);
    let replies: Vec<&str> = answer.replies.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(replies, ["its answer"]);
    let unanswered = conversations
        .answer_of("o", "teams", "teams:1/m3")
        .await
        .unwrap()
        .expect("a line stored and never answered is found");
    assert!(unanswered.replies.is_empty());
    assert_eq!(
        conversations
            .answer_of("o", "teams", "teams:1/m2")
            .await
            .unwrap(),
        None,
        "a mark no line spent finds none"
    );
    let m = NewMessage {
        org: "o",
        agent: "default",
        channel: "teams",
        conversation: "c",
        conversation_kind: "group",
        author: "person",
        sender: Some("teams:1"),
        sender_role: Some("user"),
        text: "a new question",
        said_at: 2,
    };
    let new = conversations
        .insert_message_once(&m, Some("teams:1/m4"))
        .await
        .unwrap()
        .expect("a new id is stored");
    assert_eq!(
        conversations
            .insert_message_once(&m, Some("teams:1/m4"))
            .await
            .unwrap(),
        None,
        "a spent id is not stored twice"
    );
    let found = conversations
        .answer_of("o", "teams", "teams:1/m4")
        .await
        .unwrap();
    assert_eq!(found.map(|a| a.message), Some(new));
    db.close().await;
}

#[tokio::test]
async fn spent_ids_find_their_lines_after_migrating_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}?mode=rwc", dir.path().join("old.db").display());
    spent_ids_find_their_lines_after_the_index_went(
        &url,
        concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"),
        27,
    )
    .await;
}

#[tokio::test]
async fn spent_ids_find_their_lines_after_migrating_on_postgres() {
    let Some(pg) = Schema::new("spent_ids_find_their_lines_after_migrating_on_postgres").await
    else {
        return;
    };
    spent_ids_find_their_lines_after_the_index_went(
        &pg.url,
        concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres"),
        28,
    )
    .await;
    pg.drop().await;
}
