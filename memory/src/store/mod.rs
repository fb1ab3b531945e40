//! The one database: SQLite (WAL, the default) or PostgreSQL, through sqlx's
//! `Any` driver so every query is written once. Migrations for both dialects
//! live in `memory/migrations/` and are applied at connect.
//!
//! Architecture Invariant: every query here names the organisation; memory
//! queries also name the agent. Durable state lives only here.

mod archives;
mod audit;
mod consolidation;
mod messages;
mod records;
mod retention;
mod retire;
mod revisions;
mod sessions;

pub use archives::{Archive, NewArchive};
pub use messages::NewMessage;
pub use records::{BrowseFilter, RecordFilter, RetrievalScope, Retrieved, Supersession};
pub use retire::{MergeInto, MergeOutcome, Refusal, Retirement, RevisionMeta};
pub use revisions::NewRevision;
pub use sessions::DashboardSession;

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::Migrator;
use sqlx::AnyPool;
use std::time::Duration;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/postgres");

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("unsupported database url `{0}` (expected sqlite:… or postgres://…)")]
    UnsupportedUrl(String),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("corrupt row: {0}")]
    Corrupt(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("retrieval refused: {0}")]
    Refused(&'static str),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A handle on the database, cheap to clone.
#[derive(Clone, Debug)]
pub struct Db {
    pool: AnyPool,
    backend: Backend,
}

impl Db {
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
        let pool = AnyPoolOptions::new()
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
            .connect(&url)
            .await?;
        let db = Db { pool, backend };
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
        Ok(db)
    }

    /// A fresh private in-memory SQLite database (replay, tests).
    pub async fn in_memory() -> Result<Db> {
        Db::connect("sqlite::memory:").await
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// `journal_mode` of a SQLite database (for checks); `None` on PostgreSQL.
    pub async fn sqlite_journal_mode(&self) -> Result<Option<String>> {
        if self.backend != Backend::Sqlite {
            return Ok(None);
        }
        let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode")
            .fetch_one(&self.pool)
            .await?;
        Ok(Some(mode))
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Read a column, turning a type mismatch into a `Corrupt` error.
pub(crate) fn col<'r, T>(row: &'r AnyRow, name: &str) -> Result<T>
where
    T: sqlx::Decode<'r, sqlx::Any> + sqlx::Type<sqlx::Any>,
{
    use sqlx::Row;
    row.try_get(name)
        .map_err(|e| StoreError::Corrupt(format!("column {name}: {e}")))
}
