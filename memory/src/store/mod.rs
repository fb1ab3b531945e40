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
mod connect;
mod consolidation;
mod delegations;
mod external_tools;
mod fulltext;
mod jobs;
mod messages;
mod pairing;
mod people;
mod pgvector;
mod record_row;
mod records;
mod retention;
mod retire;
mod revisions;
pub mod role_memory;
mod runs;
mod sessions;
mod settings;
mod skills;
mod sql;
mod tombstones;
mod vectors;

pub use archives::{Archive, ArchiveWords, AuditedLook, NewArchive};
pub use audit::{Act, AuditTrail};
pub use connect::without_password;
pub use delegations::{Delegation, DelegationChange, KeyHolder};
pub use external_tools::{
    ExternalTools, NewWaitingCall, ToolDecided, ToolGrant, ToolListing, WaitingCall, WaitingOutcome,
};
pub use jobs::Jobs;
pub use messages::{
    Answer, AuditRow, ConversationView, LiveSize, NewMessage, Opened, Opening, TurnWrites, ViewOf,
    SPEAKER_AUDIT,
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
pub(crate) use sql::{begin, Sql};
pub use sql::{statement_count, StatementCount};
pub use tombstones::FORGOTTEN;
pub use vectors::{reciprocal_rank_fusion, Embed, QueryVector, Unembedded, RECENT_WINDOW};

use crate::model::{Kind, Role, Scope, Status};
use sqlx::any::AnyRow;
use sqlx::any::AnyTypeInfo;
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::migrate::Migrator;
use sqlx::{Any, AnyPool, Database, Encode, FromRow, Type};

/// A checkpoint copies every page the write-ahead log holds back into the
/// file. At SQLite's default of 1,000 pages the index leaves each group
/// commit touches were written back again and again; at 8,000 (32 MB of log)
/// a Teams turn sends ~53 KB to storage instead of ~66 KB and costs ~4% less
/// CPU (teams_load, alternated), for ~10 ms more p99 in the second that one
/// runs. Durability is the commit's sync of the log, which is unchanged.
const SQLITE_CHECKPOINT: &str = "PRAGMA wal_autocheckpoint = 8000";

/// A statement that may have to be undone alone inside a transaction (the
/// group commit's seen marks, written after its lines) keeps the pages it
/// changes in a statement journal. SQLite keeps one in memory up to 64 KiB
/// and then spills it to a temporary file: a batch's marks touch a random
/// leaf each, so under load most batches spilled, some five page writes a
/// turn to files created and deleted again (docs/benchmarks.md, "The
/// twelfth sitting"). In memory a journal holds a batch's pages at most,
/// and what it protects ends with the transaction, so durability is
/// unchanged; a query's sorts are kept in memory too.
const SQLITE_TEMP_STORE: &str = "PRAGMA temp_store = MEMORY";

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
    /// This process's copy of speakers' roles and audit entries (`messages::speakers`).
    speakers: std::sync::Arc<messages::Speakers>,
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

/// Every column of a memory record, as `MemoryRecord` reads them (`record_row`).
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
