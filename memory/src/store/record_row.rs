//! How a memory record is read from a row. The store's statements read
//! [`RECORD`](super::RECORD)'s columns in its order, so a row is read by position once its
//! columns are checked to be those, in that order (a few byte compares);
//! any other column list is read by name. Looking each column up by name
//! cost about a hundred instructions a column, some 17k a turn
//! (docs/benchmarks.md).

use crate::model::{MemoryRecord, NewRecord, Scope, Status};
use sqlx::any::AnyRow;
use sqlx::{Column, ColumnIndex, Row};

/// [`RECORD`](super::RECORD)'s columns, in its order.
pub(super) const RECORD_COLUMNS: [&str; 17] = [
    "id",
    "org",
    "agent",
    "scope",
    "owner",
    "subject",
    "kind",
    "content",
    "status",
    "source",
    "said_at",
    "recorded_at",
    "expires_at",
    "conversation",
    "batch",
    "author",
    "on_behalf_of",
];

impl<'r> sqlx::FromRow<'r, AnyRow> for MemoryRecord {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        let columns = row.columns();
        let in_order = columns.len() == RECORD_COLUMNS.len()
            && columns
                .iter()
                .zip(RECORD_COLUMNS)
                .all(|(c, name)| c.name() == name);
        if in_order {
            read(row, |at| at)
        } else {
            read(row, |at| RECORD_COLUMNS[at])
        }
    }
}

/// The record in `row`, its `at`th column of [`RECORD_COLUMNS`] found at `index(at)`.
fn read<I: ColumnIndex<AnyRow>>(
    row: &AnyRow,
    index: impl Fn(usize) -> I,
) -> Result<MemoryRecord, sqlx::Error> {
    // A stored enum's unknown name is a corrupt row, as `text_enum!` decodes it.
    let scope: String = row.try_get(index(3))?;
    let status: String = row.try_get(index(8))?;
    let corrupt = |at: usize, e: super::StoreError| sqlx::Error::ColumnDecode {
        index: RECORD_COLUMNS[at].to_string(),
        source: Box::new(e),
    };
    Ok(MemoryRecord {
        id: row.try_get(index(0))?,
        written: NewRecord {
            org: row.try_get(index(1))?,
            agent: row.try_get(index(2))?,
            scope: Scope::try_from(scope).map_err(|e| corrupt(3, e))?,
            owner: row.try_get(index(4))?,
            subject: row.try_get(index(5))?,
            kind: row.try_get(index(6))?,
            content: row.try_get(index(7))?,
            status: Status::try_from(status).map_err(|e| corrupt(8, e))?,
            source: row.try_get(index(9))?,
            said_at: row.try_get(index(10))?,
            recorded_at: row.try_get(index(11))?,
            expires_at: row.try_get(index(12))?,
            conversation: row.try_get(index(13))?,
            batch: row.try_get(index(14))?,
            author: row.try_get(index(15))?,
            on_behalf_of: row.try_get(index(16))?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RECORD;

    #[test]
    fn the_record_statement_reads_the_columns_in_their_order() {
        assert_eq!(
            RECORD,
            format!("SELECT {} FROM memory_records", RECORD_COLUMNS.join(", "))
        );
    }

    /// A row whose columns come in another order is read by name, to the
    /// same record; an unknown scope is a corrupt row either way.
    #[tokio::test]
    async fn a_record_reads_the_same_whatever_the_order_of_its_columns() {
        let db = crate::Db::in_memory().await.expect("db");
        let insert = format!(
            "INSERT INTO memory_records ({}) VALUES (7, 'o', 'a', $1, 'u1', 'lunch', \
             'preference', 'Tea, not coffee', $2, 'chat', 10, 11, 99, 'c1', 3, 'u1', 'u2')",
            RECORD_COLUMNS.join(", ")
        );
        sql!(insert, Scope::Personal, Status::Active)
            .exec(&db.pool)
            .await
            .expect("insert");
        let in_order: MemoryRecord = sql!(RECORD).one(&db.pool).await.expect("in order");
        let mut reversed = RECORD_COLUMNS;
        reversed.reverse();
        let text = format!("SELECT {} FROM memory_records", reversed.join(", "));
        let by_name: MemoryRecord = sql!(text.clone()).one(&db.pool).await.expect("by name");
        assert_eq!(in_order, by_name);
        assert_eq!(
            (
                in_order.id,
                in_order.scope,
                in_order.status,
                in_order.content.as_str()
            ),
            (7, Scope::Personal, Status::Active, "Tea, not coffee")
        );
        assert_eq!(
            (
                in_order.expires_at,
                in_order.batch,
                in_order.on_behalf_of.as_deref()
            ),
            (Some(99), Some(3), Some("u2"))
        );
        sql!("UPDATE memory_records SET scope = 'nowhere'")
            .exec(&db.pool)
            .await
            .expect("update");
        for text in [RECORD.to_string(), text] {
            let read: Result<MemoryRecord, _> = sql!(text).one(&db.pool).await;
            assert!(read.is_err(), "{read:?}");
        }
    }
}
