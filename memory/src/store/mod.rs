//! The one database: SQLite (WAL, the default) or PostgreSQL, through sqlx's
//! `Any` driver so every query is written once. Migrations for both dialects
//! live in `memory/migrations/` and are applied at connect.
//!
//! Architecture Invariant: every query here names the organisation; memory
//! queries also name the agent. Durable state lives only here.

/// A query whose text already names `$1, $2, …`, with `values` bound to them in order.
macro_rules! sql {
    ($text:expr $(, $value:expr)* $(,)?) => {
        $crate::store::Sql::new($text)$(.arg($value))*
    };
}

mod addresses;
mod archives;
mod audit;
mod consolidation;
mod delegations;
mod external_tools;
mod fulltext;
mod jobs;
mod messages;
mod pairing;
mod people;
mod pgvector;
mod records;
mod retention;
mod retire;
mod revisions;
pub mod role_memory;
mod runs;
mod sessions;
mod settings;
mod skills;
mod tombstones;
mod vectors;

pub use archives::{Archive, ArchiveWords, AuditedLook, NewArchive};
pub use audit::{Act, AuditTrail};
pub use delegations::{Delegation, DelegationChange, KeyHolder};
pub use external_tools::{
    ExternalTools, NewWaitingCall, ToolDecided, ToolGrant, ToolListing, WaitingCall, WaitingOutcome,
};
pub use jobs::Jobs;
pub use messages::{
    Answer, AuditRow, ConversationView, LiveSize, NewMessage, Opened, Opening, TurnWrites, ViewOf,
};
pub use pairing::{
    ApiKey, Identity, NewPairingCode, PairingDecision, PairingRequest, RequestStatus, User,
    UserStatus,
};
pub(crate) use records::SubjectRuleRun;
pub use records::{
    KeepBeside, RecordFilter, RetrievalScope, Retrieved, Supersession, FORGOTTEN_LINE,
};
pub use retention::{Erasure, ERASED};
pub use retire::{MergeInto, MergeOutcome, RetireRefusal, Retirement};
pub use revisions::{NewRevision, RevisionMeta};
pub use role_memory::{ProposalDecision, RoleMemory};
pub use runs::{NewRun, Runs};
pub use sessions::{DashboardSession, SignInLink};
pub use skills::{Curator, NewCorrection, NewProposal, SkillStore, SkillUse};
pub use tombstones::FORGOTTEN;
pub use vectors::{reciprocal_rank_fusion, Embed, QueryVector, Unembedded, RECENT_WINDOW};

use crate::model::{Kind, Role, Scope, Status};
use sqlx::any::AnyTypeInfo;
use sqlx::any::{AnyArguments, AnyPoolOptions, AnyRow};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::migrate::Migrator;
use sqlx::{
    Any, AnyPool, Arguments, Connection, Database, Encode, Executor, FromRow, Transaction, Type,
};
use std::time::Duration;

/// A checkpoint copies every page the write-ahead log holds back into the
/// file. At SQLite's default of 1,000 pages the index leaves each group
/// commit touches were written back again and again; at 8,000 (32 MB of log)
/// a Teams turn sends ~53 KB to storage instead of ~66 KB and costs ~4% less
/// CPU (teams_load, alternated), for ~10 ms more p99 in the second that one
/// runs. Durability is the commit's sync of the log, which is unchanged.
const SQLITE_CHECKPOINT: &str = "PRAGMA wal_autocheckpoint = 8000";

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/postgres");

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("unsupported database url `{0}` (expected sqlite:… or postgres://…)")]
    UnsupportedUrl(String),
    #[error("database url `{0}` names no file: use sqlite:steward.db (a file) or sqlite::memory:")]
    NoSqliteFile(String),
    #[error("database error: {0}")]
    Database(sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("corrupt row: {0}")]
    Corrupt(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("retrieval refused: {0}")]
    Refused(&'static str),
    /// The write path refused a record (`screen::WriteRefusal`); `at` is its
    /// index in a batch (0 for one record). Nothing of the batch was written.
    #[error("{refusal}")]
    Write {
        at: usize,
        refusal: crate::screen::WriteRefusal,
    },
    /// The database could not be reached at all: what was tried, and why not.
    #[error("cannot connect to {what}: {reason}")]
    Unreachable { what: String, reason: String },
    /// A backup would overwrite a file, or names no file SQLite can write.
    #[error("backup to {path}: {reason}")]
    Backup { path: String, reason: &'static str },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl From<sqlx::Error> for StoreError {
    /// A row that does not decode into its type is corrupt data, not a database failure.
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::ColumnDecode { index, source } => {
                StoreError::Corrupt(format!("column {index}: {source}"))
            }
            sqlx::Error::ColumnNotFound(name) => {
                StoreError::Corrupt(format!("column {name}: not found"))
            }
            e => StoreError::Database(e),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A handle on the database, cheap to clone.
#[derive(Clone, Debug)]
pub struct Db {
    pool: AnyPool,
    /// The group commit's connection: its own on a SQLite file, else `pool`.
    writer: AnyPool,
    backend: Backend,
    /// This process's copy of the tokens too common to rank by (`fulltext`).
    common: std::sync::Arc<fulltext::CommonTokens>,
    /// The group commit of conversation lines (`messages`).
    lines: std::sync::Arc<messages::Lines>,
    /// This process's copy of SQLite's vectors (`vectors`).
    vectors: std::sync::Arc<vectors::VectorCache>,
    /// What this process knows of PostgreSQL's vector indexes and places (`pgvector`).
    pgvector: std::sync::Arc<pgvector::PgVectors>,
    /// Computes query vectors for retrieval (the gateway's embeddings client), when on.
    embedder: Option<std::sync::Arc<dyn vectors::Embed>>,
    /// The key of forgotten records' tombstones (`tombstones`).
    tombstone_key: tombstones::TombstoneKey,
}

/// One connection to `url` before the pool is made, so that an unreachable
/// server says why (refused, unknown host, bad password) instead of the
/// pool's "timed out".
async fn reach(url: &str) -> Result<()> {
    use sqlx::Connection;
    let what = without_password(url);
    let tried = tokio::time::timeout(Duration::from_secs(10), sqlx::AnyConnection::connect(url))
        .await
        .ok();
    match tried {
        None => Err(StoreError::Unreachable {
            what,
            reason: "no answer within 10 s".into(),
        }),
        Some(Err(e)) => Err(StoreError::Unreachable {
            what,
            reason: e.to_string(),
        }),
        Some(Ok(conn)) => {
            let _ = conn.close().await;
            Ok(())
        }
    }
}

/// `url` without the password of its user info, for messages and logs.
pub fn without_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

/// A PostgreSQL connection idle this long is pinged before it is lent.
const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// How the pools of [`Db::connect`] are made: `max` connections, each
/// SQLite one reading the file through a memory map.
fn pool_options(backend: Backend, max: u32) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max)
        .min_connections(if max == 1 { 1 } else { 0 })
        .idle_timeout(if max == 1 {
            None
        } else {
            Some(Duration::from_secs(300))
        })
        .max_lifetime(if max == 1 {
            None
        } else {
            Some(Duration::from_secs(1800))
        })
        .acquire_timeout(Duration::from_secs(10))
        // sqlx pings each connection before lending it. A SQLite connection
        // is a file handle that cannot go stale, and its ping is one more
        // hand-off to the connection's thread and back for every statement.
        // A PostgreSQL connection can be cut by the server, so one that has
        // been idle is still checked; one that answered moments ago is lent
        // as it is (the ping was one of a search's four round trips).
        .test_before_acquire(false)
        .before_acquire(move |conn, meta| {
            Box::pin(async move {
                if backend == Backend::Postgres && meta.idle_for >= PING_AFTER_IDLE {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if backend == Backend::Sqlite {
                    // No memory map (`mmap_size` stays 0): in WAL mode a
                    // connection forgets its pages whenever another one has
                    // committed, which under load is before nearly every
                    // transaction, and with a map SQLite then unmaps the
                    // whole file (a TLB shootdown on every core) and faults
                    // each page in again. Reading with a system call and a
                    // copy costs less: teams_load, alternated, ~2,180 turns/s
                    // without the map against ~1,915 with it, 0.70 ms of CPU
                    // a turn against 0.83.
                    conn.execute(SQLITE_CHECKPOINT).await?;
                }
                Ok(())
            })
        })
}

/// Memory records: the write path (`write.rs`), retrieval, supersession,
/// revisions, retirement, consolidation's marks and the records' vectors.
/// Declared here, beside the `Db` that hands it out, because its methods
/// live in several files (`records.rs`, `fulltext.rs`, `vectors.rs`,
/// `revisions.rs`, `tombstones.rs`) that each name it and none another's.
#[derive(Clone, Copy)]
pub struct Records<'a> {
    pub(super) db: &'a Db,
}

/// Conversation lines (the group commit, seen platform ids, history
/// windows, `messages.rs`), their archives (`archives.rs`) and where a
/// channel reaches each conversation (`addresses.rs`).
#[derive(Clone, Copy)]
pub struct Conversations<'a> {
    pub(super) db: &'a Db,
}

impl Db {
    /// Memory records: the one write path, retrieval, revisions, vectors.
    pub fn records(&self) -> Records<'_> {
        Records { db: self }
    }

    /// Conversation lines and their archives.
    pub fn conversations(&self) -> Conversations<'_> {
        Conversations { db: self }
    }

    /// Users, identities, pairing requests, API keys, dashboard sessions.
    pub fn role_memory(&self) -> RoleMemory<'_> {
        RoleMemory { db: self }
    }

    pub fn identity(&self) -> Identity<'_> {
        Identity { db: self }
    }

    /// The audit log.
    pub fn audit(&self) -> AuditTrail<'_> {
        AuditTrail { db: self }
    }

    /// Scheduled jobs' claims.
    pub fn jobs(&self) -> Jobs<'_> {
        Jobs { db: self }
    }

    /// Skills, their revisions and the corrections they came from.
    pub fn skills(&self) -> SkillStore<'_> {
        SkillStore { db: self }
    }

    /// Automated runs and the webhook deliveries taken.
    pub fn runs(&self) -> Runs<'_> {
        Runs { db: self }
    }

    pub fn external_tools(&self) -> ExternalTools<'_> {
        ExternalTools { db: self }
    }

    /// Connect to `url` and apply migrations.
    ///
    /// `sqlite:steward.db` (created if missing), `sqlite::memory:` (one private
    /// database), or `postgres://…`.
    pub async fn connect(url: &str) -> Result<Db> {
        sqlx::any::install_default_drivers();
        let (backend, url, max) =
            if url.starts_with("postgres://") || url.starts_with("postgresql://") {
                (Backend::Postgres, url.to_string(), 8)
            } else if let Some(rest) = url.strip_prefix("sqlite:") {
                if rest
                    .split('?')
                    .next()
                    .is_none_or(|path| path.trim().is_empty())
                {
                    // Each connection would open its own empty database: "no such table" later.
                    return Err(StoreError::NoSqliteFile(url.to_string()));
                }
                if rest.contains(":memory:") {
                    // Each SQLite in-memory connection is its own database: keep exactly one.
                    (Backend::Sqlite, url.to_string(), 1)
                } else if rest.contains('?') {
                    (Backend::Sqlite, url.to_string(), 4)
                } else {
                    (Backend::Sqlite, format!("{url}?mode=rwc"), 4)
                }
            } else {
                return Err(StoreError::UnsupportedUrl(url.to_string()));
            };
        if backend == Backend::Postgres {
            reach(&url).await?;
        }
        let pool = pool_options(backend, max).connect(&url).await?;
        let mut db = Db {
            writer: pool.clone(),
            pool,
            backend,
            common: Default::default(),
            lines: Default::default(),
            vectors: Default::default(),
            pgvector: Default::default(),
            embedder: None,
            tombstone_key: Default::default(),
        };
        match backend {
            Backend::Sqlite => {
                if max > 1 {
                    sqlx::query("PRAGMA journal_mode=WAL")
                        .execute(&db.pool)
                        .await?;
                }
                SQLITE_MIGRATIONS.run(&db.pool).await?;
            }
            Backend::Postgres => POSTGRES_MIGRATIONS.run(&db.pool).await?,
        }
        // On a SQLite file the group commit of conversation lines has a
        // connection of its own (opened once the file is in WAL mode). SQLite
        // lets one connection write at a time anyway, and a commit waits for
        // its sync (milliseconds here): on a shared connection that wait held
        // one of the readers. Alone, its page cache also stays warm, as only
        // other connections' commits reset a connection's cache.
        if backend == Backend::Sqlite && max > 1 {
            db.writer = pool_options(backend, 1).connect(&url).await?;
        }
        db.tombstone_key = tombstones::TombstoneKey::load(&db.pool).await?;
        db.convert_legacy_tombstones().await?;
        db.records().index_pending().await?;
        Ok(db)
    }

    /// A database in schema `schema` of the PostgreSQL server at `url`, dropped
    /// and created empty first, then migrated (tests and benchmarks that must
    /// not share rows). `schema` is letters, digits and `_`.
    pub async fn connect_fresh_schema(url: &str, schema: &str) -> Result<Db> {
        Self::connect_in_schema(url, schema, true).await
    }

    /// A database in schema `schema` of the PostgreSQL server at `url`, created
    /// when missing and otherwise kept as it is, then migrated (benchmarks
    /// that search a store filled by an earlier run).
    pub async fn connect_kept_schema(url: &str, schema: &str) -> Result<Db> {
        Self::connect_in_schema(url, schema, false).await
    }

    async fn connect_in_schema(url: &str, schema: &str, fresh: bool) -> Result<Db> {
        let plain = !schema.is_empty()
            && schema
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !schema.starts_with(|c: char| c.is_ascii_digit());
        if !plain || !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(StoreError::UnsupportedUrl(format!(
                "{url} (schema {schema})"
            )));
        }
        let admin = sqlx::PgPool::connect(url).await?;
        let made = async {
            if fresh {
                sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .execute(&admin)
                    .await?;
            }
            sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .execute(&admin)
                .await
        }
        .await;
        admin.close().await;
        made?;
        let sep = if url.contains('?') { '&' } else { '?' };
        // `public` after it: extensions (pgvector) live there.
        Db::connect(&format!(
            "{url}{sep}options=-c%20search_path%3D{schema}%2Cpublic"
        ))
        .await
    }

    /// A fresh private in-memory SQLite database (replay, tests).
    pub async fn in_memory() -> Result<Db> {
        Db::connect("sqlite::memory:").await
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The newest `limit` rows of `org` that `select` (a `SELECT … FROM
    /// table`) reads with an id below `before` (all when `None`), newest
    /// first: one page of a list.
    async fn newest_before<T>(
        &self,
        select: &str,
        org: &str,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<T>>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
    {
        let text = format!("{select} WHERE org = $1 AND id < $2 ORDER BY id DESC LIMIT $3");
        sql!(text, org, before.unwrap_or(i64::MAX), limit)
            .all(&self.pool)
            .await
    }

    /// The row `id` of `org` that `select` (a `SELECT … FROM table`) reads;
    /// not found names it as `what id`.
    async fn by_id<T>(&self, select: &str, what: &str, org: &str, id: i64) -> Result<T>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
    {
        let text = format!("{select} WHERE org = $1 AND id = $2");
        sql!(text, org, id)
            .found(&self.pool, format!("{what} {id}"))
            .await
    }

    /// Keep the planner's statistics current as the store grows: SQLite's
    /// `PRAGMA optimize` (it analyses only what changed enough), PostgreSQL's
    /// `ANALYZE` of the tables every turn reads, and the list of tokens too
    /// common to rank by. On SQLite it also merges the full-text index into
    /// one segment: a search seeks each token in every segment, and writes
    /// leave many (a quarter of a search's instructions at 100k records). On
    /// PostgreSQL it vacuums the postings, so a search's index-only scans
    /// fetch no row. Run by the hourly expire job.
    pub async fn optimize(&self) -> Result<()> {
        self.records().refresh_common_tokens().await?;
        match self.backend {
            Backend::Sqlite => {
                sql!("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
                    .exec(&self.pool)
                    .await?;
                sql!("PRAGMA optimize").exec(&self.pool).await?
            }
            Backend::Postgres => {
                // The visibility map current, so a search's index-only scans
                // fetch no heap row (autovacuum may be off or behind); a
                // vacuum skips the pages already all visible.
                sql!("VACUUM (ANALYZE) memory_fts_postings")
                    .exec(&self.pool)
                    .await?;
                sql!("ANALYZE memory_records, memory_fts, messages, memory_vectors")
                    .exec(&self.pool)
                    .await?
            }
        };
        Ok(())
    }

    /// Write a consistent copy of the SQLite store to `path`, a new file,
    /// while the store may be serving: `VACUUM INTO` reads one snapshot and
    /// blocks no writer. A copy of the database file can instead catch a
    /// checkpoint half done and be corrupt. A PostgreSQL store is backed up
    /// with its own tools (`pg_dump`).
    pub async fn backup_to(&self, path: &std::path::Path) -> Result<()> {
        let fail = |reason| StoreError::Backup {
            path: path.display().to_string(),
            reason,
        };
        if self.backend == Backend::Postgres {
            return Err(fail("a PostgreSQL store is backed up with pg_dump"));
        }
        if path.exists() {
            return Err(fail("the file exists; choose a new file"));
        }
        let target = path.to_str().ok_or_else(|| fail("the path is not UTF-8"))?;
        sql!("VACUUM INTO $1", target).exec(&self.pool).await?;
        Ok(())
    }

    /// One round trip to the database (health checks).
    pub async fn ping(&self) -> Result<()> {
        sql!("SELECT 1").exec(&self.pool).await.map(|_| ())
    }

    /// How many rows `table` holds across every organisation (checks and tests).
    /// Only the tables of the schema are counted; any other name is refused.
    pub async fn row_count(&self, table: &str) -> Result<i64> {
        if !TABLES.contains(&table) {
            return Err(StoreError::Refused("not a table of the schema"));
        }
        let (n,) = sql!(format!("SELECT COUNT(*) FROM {table}"))
            .one(&self.pool)
            .await?;
        Ok(n)
    }

    /// Whether the keyword index still holds `text` anywhere in its stored
    /// pages or postings (checks and tests: a forgotten record's tokens are
    /// gone, not only unlinked).
    pub async fn fulltext_holds(&self, text: &str) -> Result<bool> {
        let query = match self.backend {
            Backend::Sqlite => {
                "SELECT COUNT(*) FROM memory_fts_data WHERE instr(block, CAST($1 AS BLOB)) > 0"
            }
            Backend::Postgres => {
                "SELECT COUNT(*) FROM memory_fts_postings WHERE strpos(token, $1) > 0"
            }
        };
        let (n,): (i64,) = sql!(query, text).one(&self.pool).await?;
        Ok(n > 0)
    }

    /// `journal_mode` of a SQLite database (for checks); `None` on PostgreSQL.
    pub async fn sqlite_journal_mode(&self) -> Result<Option<String>> {
        if self.backend != Backend::Sqlite {
            return Ok(None);
        }
        let (mode,) = sql!("PRAGMA journal_mode").one(&self.pool).await?;
        Ok(Some(mode))
    }

    /// `synchronous` of the SQLite connections (for checks): 2 is FULL, what
    /// sqlx leaves SQLite's default at, so each commit — and so each group
    /// commit of conversation lines — syncs the WAL before it returns. The
    /// lowest of the readers' and the group commit's. `None` on PostgreSQL.
    pub async fn sqlite_synchronous(&self) -> Result<Option<i64>> {
        if self.backend != Backend::Sqlite {
            return Ok(None);
        }
        let (readers,): (i64,) = sql!("PRAGMA synchronous").one(&self.pool).await?;
        let (writer,): (i64,) = sql!("PRAGMA synchronous").one(&self.writer).await?;
        Ok(Some(readers.min(writer)))
    }

    pub async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
    }
}

/// The tables of the schema (see `migrations/`).
const TABLES: &[&str] = &[
    "api_keys",
    "archives",
    "audit_log",
    "channel_addresses",
    "consolidation_seen",
    "dashboard_sessions",
    "dashboard_tokens",
    "identities",
    "job_runs",
    "live_history",
    "memory_records",
    "memory_revisions",
    "memory_vectors",
    "memory_vectors_dropped",
    "memory_fts",
    "memory_fts_common",
    "memory_fts_pending",
    "memory_fts_postings",
    "messages",
    "pairing_codes",
    "pairing_hints",
    "seen_messages",
    "sign_in_links",
    "skill_corrections",
    "skill_generations",
    "skill_revisions",
    "skill_uses",
    "skills",
    "users",
];

/// The first `limit` of `items` as `order` sorts them, in that order. A
/// partial selection first, so a long list of hits is not sorted whole.
pub(super) fn best_first<T>(
    mut items: Vec<T>,
    limit: usize,
    order: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> Vec<T> {
    if items.len() > limit && limit > 0 {
        items.select_nth_unstable_by(limit - 1, &order);
        items.truncate(limit);
    }
    items.sort_by(order);
    items.truncate(limit);
    items
}

/// Statements and transactions run by this process, on every [`Db`] (the
/// statement-count guard reads them around a turn: `tests/tests/statements.rs`).
static STATEMENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static TRANSACTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many statements and transactions this process has run so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatementCount {
    /// Statements sent (each a round trip: on SQLite a hand-off to the
    /// connection's thread and back, on PostgreSQL a message and its answer).
    pub statements: u64,
    /// Transactions begun (each adds two round trips: its begin and its end).
    pub transactions: u64,
}

impl StatementCount {
    /// What ran since `before`.
    pub fn since(self, before: StatementCount) -> StatementCount {
        StatementCount {
            statements: self.statements - before.statements,
            transactions: self.transactions - before.transactions,
        }
    }

    /// Round trips to the database: every statement, and each transaction's
    /// begin and commit.
    pub fn round_trips(self) -> u64 {
        self.statements + 2 * self.transactions
    }
}

/// The statements and transactions this process has run (see [`StatementCount`]).
pub fn statement_count() -> StatementCount {
    use std::sync::atomic::Ordering::Relaxed;
    StatementCount {
        statements: STATEMENTS.load(Relaxed),
        transactions: TRANSACTIONS.load(Relaxed),
    }
}

fn counted() {
    STATEMENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Begin a transaction on `pool` (counted, see [`statement_count`]).
pub(crate) async fn begin(pool: &AnyPool) -> Result<Transaction<'static, Any>> {
    TRANSACTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(pool.begin().await?)
}

/// A query being written: its text and the values bound to it, numbered
/// `$1, $2, …` in both dialects. (sqlx's `QueryBuilder<Any>` writes `?`, which
/// PostgreSQL rejects: launchbadge/sqlx#3000.) Rows decode with `FromRow`.
pub(crate) struct Sql<'q> {
    text: String,
    args: AnyArguments<'q>,
    /// The first value that failed to encode; reported when the query runs.
    failed: Option<BoxDynError>,
}

impl<'q> Sql<'q> {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Sql {
            text: text.into(),
            args: AnyArguments::default(),
            failed: None,
        }
    }

    /// Bind the next value: the one the text names as `$n`, n = values bound so far + 1.
    pub(crate) fn arg<T>(mut self, value: T) -> Self
    where
        T: 'q + Encode<'q, Any> + Type<Any>,
    {
        if let Err(e) = self.args.add(value) {
            self.failed.get_or_insert(e);
        }
        self
    }

    /// How many values are bound so far (the last `$n`).
    pub(crate) fn len(&self) -> usize {
        self.args.len()
    }

    /// Append literal SQL text.
    pub(crate) fn push(mut self, text: &str) -> Self {
        self.text.push_str(text);
        self
    }

    /// Append a placeholder and bind `value` to it.
    pub(crate) fn bind<T>(self, value: T) -> Self
    where
        T: 'q + Encode<'q, Any> + Type<Any>,
    {
        let n = self.args.len() + 1;
        self.push(&format!("${n}")).arg(value)
    }

    /// Append ` AND {column} = $n` bound to `value`, when there is one.
    pub(crate) fn and_eq<T>(self, column: &str, value: Option<T>) -> Self
    where
        T: 'q + Encode<'q, Any> + Type<Any>,
    {
        match value {
            Some(v) => self.push(&format!(" AND {column} = ")).bind(v),
            None => self,
        }
    }

    /// Append `$a, $b, …`, one placeholder for each of `values`.
    pub(crate) fn bind_list<T, I>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: 'q + Encode<'q, Any> + Type<Any>,
    {
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self = self.push(", ");
            }
            self = self.bind(v);
        }
        self
    }

    fn parts(self) -> Result<(String, AnyArguments<'q>)> {
        match self.failed {
            Some(e) => Err(StoreError::Database(sqlx::Error::Encode(e))),
            None => Ok((self.text, self.args)),
        }
    }

    /// Every row, decoded.
    pub(crate) async fn all<'c, T, E>(self, exec: E) -> Result<Vec<T>>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
        E: Executor<'c, Database = Any>,
    {
        let (text, args) = self.parts()?;
        counted();
        Ok(sqlx::query_as_with(&text, args).fetch_all(exec).await?)
    }

    /// The first row, if any, decoded.
    pub(crate) async fn opt<'c, T, E>(self, exec: E) -> Result<Option<T>>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
        E: Executor<'c, Database = Any>,
    {
        let (text, args) = self.parts()?;
        counted();
        Ok(sqlx::query_as_with(&text, args)
            .fetch_optional(exec)
            .await?)
    }

    /// The first row, decoded, or `NotFound(what)`.
    pub(crate) async fn found<'c, T, E>(self, exec: E, what: String) -> Result<T>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
        E: Executor<'c, Database = Any>,
    {
        self.opt(exec).await?.ok_or(StoreError::NotFound(what))
    }

    /// Exactly one row, decoded.
    pub(crate) async fn one<'c, T, E>(self, exec: E) -> Result<T>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
        E: Executor<'c, Database = Any>,
    {
        let (text, args) = self.parts()?;
        counted();
        Ok(sqlx::query_as_with(&text, args).fetch_one(exec).await?)
    }

    /// Run a conditional write as the first statement of a new transaction:
    /// the transaction, to finish (its audit entry) and commit, when it
    /// changed a row; `None`, nothing written, when it changed none (held
    /// already, or never held). First, because it takes SQLite's write lock:
    /// of two racing writers, one changes nothing.
    pub(crate) async fn exec_first(self, pool: &AnyPool) -> Result<Option<Transaction<'_, Any>>> {
        let mut tx = begin(pool).await?;
        Ok((self.exec(&mut *tx).await? > 0).then_some(tx))
    }

    /// Run a statement; how many rows it changed.
    pub(crate) async fn exec<'c, E>(self, exec: E) -> Result<u64>
    where
        E: Executor<'c, Database = Any>,
    {
        let (text, args) = self.parts()?;
        counted();
        Ok(sqlx::query_with(&text, args)
            .execute(exec)
            .await?
            .rows_affected())
    }
}

/// Stored enums: bound to a query as their name (`scope = $3` with a
/// `Scope`), and decoded from it (`#[sqlx(try_from = "String")]`), an unknown
/// name being a corrupt row. Queries name them only this way, never as text.
macro_rules! text_enum {
    ($($ty:ty => $parse:expr),* $(,)?) => {$(
        impl TryFrom<String> for $ty {
            type Error = StoreError;
            fn try_from(s: String) -> Result<Self> {
                let parse: fn(&str) -> Option<$ty> = $parse;
                parse(&s).ok_or_else(|| StoreError::Corrupt(format!("{} {s}", stringify!($ty))))
            }
        }

        impl Type<Any> for $ty {
            fn type_info() -> AnyTypeInfo {
                <&str as Type<Any>>::type_info()
            }
            fn compatible(ty: &AnyTypeInfo) -> bool {
                <&str as Type<Any>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, Any> for $ty {
            fn encode_by_ref(
                &self,
                buf: &mut <Any as Database>::ArgumentBuffer<'q>,
            ) -> std::result::Result<IsNull, BoxDynError> {
                <&str as Encode<'q, Any>>::encode_by_ref(&self.as_str(), buf)
            }
        }
    )*};
}

impl crate::screen::WriteRefusal {
    /// The refusal as the store's error for record `at` of a batch.
    pub fn at(self, at: usize) -> StoreError {
        StoreError::Write { at, refusal: self }
    }
}

/// Every column of a memory record, as `MemoryRecord` reads them.
pub(super) const RECORD: &str = "SELECT id, org, agent, scope, owner, subject, kind, content, status, source, said_at, recorded_at, expires_at, conversation, batch, author, on_behalf_of FROM memory_records";

text_enum! {
    Scope => Scope::parse,
    Status => Status::parse,
    Kind => |s| s.parse().ok(),
    Role => |s| s.parse().ok(),
    UserStatus => |s| s.parse().ok(),
    RequestStatus => |s| s.parse().ok(),
    crate::skill::SkillStatus => |s| s.parse().ok(),
    crate::run::Trigger => |s| s.parse().ok(),
    crate::run::RunOutcome => |s| s.parse().ok(),
    crate::external_tool::ExternalToolStatus => |s| s.parse().ok(),
    external_tools::WaitingOutcome => |s| s.parse().ok(),
}

/// The records one person owns in an organisation (of one scope, when
/// given): what an erasure or a forget removes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Owned<'a> {
    pub org: &'a str,
    pub owner: &'a str,
    pub scope: Option<Scope>,
}

impl<'a> Owned<'a> {
    /// `{head} WHERE …` of these records, its values bound (`head` names
    /// `memory_records`, e.g. `SELECT id FROM memory_records`).
    pub(super) fn rows(&self, head: &str) -> Sql<'a> {
        let q = sql!(
            format!("{head} WHERE org = $1 AND owner = $2"),
            self.org,
            self.owner
        );
        match self.scope {
            Some(scope) => q.push(" AND scope = ").bind(scope),
            None => q,
        }
    }
}
