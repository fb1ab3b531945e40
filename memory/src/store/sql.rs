//! `Sql`, the one way a query is run (the `sql!` macro builds it): its
//! arguments bound in order, each statement and transaction counted.

use super::{Result, StoreError};
use sqlx::any::{AnyArguments, AnyRow};
use sqlx::error::BoxDynError;
use sqlx::{Any, AnyPool, Arguments, Encode, Executor, FromRow, Transaction, Type};

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
    pub(crate) fn bind<T>(mut self, value: T) -> Self
    where
        T: 'q + Encode<'q, Any> + Type<Any>,
    {
        // Written by hand: `format!` cost a turn's fifty placeholders 25k
        // instructions (docs/benchmarks.md).
        self.text.push('$');
        self.text
            .push_str(itoa::Buffer::new().format(self.args.len() + 1));
        self.arg(value)
    }

    /// Append ` AND {column} = $n` bound to `value`, when there is one.
    pub(crate) fn and_eq<T>(self, column: &str, value: Option<T>) -> Self
    where
        T: 'q + Encode<'q, Any> + Type<Any>,
    {
        match value {
            Some(v) => self.push(" AND ").push(column).push(" = ").bind(v),
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
