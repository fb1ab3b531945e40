//! Connecting: one probe connection that says why a server is unreachable,
//! the pool's options per backend, and the migrations applied at connect.

use super::{
    Backend, Db, Result, StoreError, POSTGRES_MIGRATIONS, SQLITE_CHECKPOINT, SQLITE_MIGRATIONS,
    SQLITE_TEMP_STORE,
};
use sqlx::any::AnyPoolOptions;
use sqlx::{Connection, Executor};
use std::time::Duration;

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
                    conn.execute(SQLITE_TEMP_STORE).await?;
                }
                Ok(())
            })
        })
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
            speakers: Default::default(),
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
        db.tombstone_key = super::tombstones::TombstoneKey::load(&db.pool).await?;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every connection to a SQLite file, the readers' and the group
    /// commit's, keeps its statement journals in memory: one that spilled
    /// wrote a temporary file under load (`SQLITE_TEMP_STORE`).
    #[tokio::test]
    async fn sqlite_file_connections_keep_statement_journals_in_memory() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite:{}", dir.path().join("store.db").display());
        let db = Db::connect(&url).await.expect("connect");
        for pool in [&db.pool, &db.writer] {
            let (store,): (i64,) = sqlx::query_as("PRAGMA temp_store")
                .fetch_one(pool)
                .await
                .expect("pragma");
            assert_eq!(store, 2, "temp_store is MEMORY (2) on every connection");
        }
    }
}
