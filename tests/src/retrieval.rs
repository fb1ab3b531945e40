//! Retrieval as the storage tests ask it of the store: agent notes of
//! organisation `o`, a scope reading them, the ids a search finds, and how
//! much the index holds.

use crate::record as rec;
use memory::store::RetrievalScope;
use memory::{Backend, Db, NewRecord, Scope};

/// How many records the index holds, and on PostgreSQL how many postings
/// (SQLite's FTS5 keeps its own: 0 counted).
pub async fn indexed(db: &Db) -> (i64, i64) {
    let rows = db.row_count("memory_fts").await.unwrap();
    match db.backend() {
        Backend::Postgres => (rows, db.row_count("memory_fts_postings").await.unwrap()),
        Backend::Sqlite => (rows, 0),
    }
}

/// An agent note of organisation `o`.
pub fn note(subject: &str, content: &str, at: i64) -> NewRecord {
    rec("o", Scope::AgentNotes, None, subject, content, at)
}

pub fn notes_scope(org: &str, speaker: Option<&str>) -> RetrievalScope {
    RetrievalScope {
        org: org.into(),
        agent: "default".into(),
        speaker: speaker.map(str::to_string),
        shared: false,
        roles: Vec::new(),
    }
}

pub async fn found_ids(db: &Db, scope: &RetrievalScope, query: &str) -> Vec<i64> {
    db.records()
        .retrieve(scope, query, 5)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.record.id)
        .collect()
}
