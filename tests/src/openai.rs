//! What the tests of the `openai` provider share: a harness on the fake
//! OpenAI-compatible server, extraction answers built from items, records
//! written straight to the store, and a record's status.

use crate::fake_llm::{Answer, FakeLlm};
use crate::Harness;
use memory::{NewRecord, Scope, Status};
use serde_json::json;
use steward::Config;

pub async fn harness(fake: &FakeLlm, tweak: impl FnOnce(&mut Config)) -> Harness {
    let mut cfg = fake.config();
    tweak(&mut cfg);
    Harness::with_config(cfg).await
}

pub fn items(list: serde_json::Value) -> Answer {
    Answer::Json(json!({ "items": list }))
}

pub fn operational(kind: &str, subject: &str, content: &str) -> serde_json::Value {
    json!({"channel": "operational", "kind": kind, "subject": subject, "content": content})
}

pub fn personal(kind: &str, subject: &str, content: &str) -> serde_json::Value {
    json!({"channel": "personal", "kind": kind, "subject": subject, "content": content})
}

/// An active record written straight to the store (consolidation and storage tests).
pub fn rec(org: &str, scope: Scope, owner: Option<&str>, content: &str, said_at: i64) -> NewRecord {
    NewRecord {
        kind: "fact".into(),
        author: owner.map(str::to_string),
        ..crate::record(org, scope, owner, &format!("s:{content}"), content, said_at)
    }
}

pub fn note(content: &str, said_at: i64) -> NewRecord {
    rec("default", Scope::AgentNotes, None, content, said_at)
}

pub async fn status(h: &Harness, id: i64) -> Status {
    h.db()
        .records()
        .get(&h.org, id)
        .await
        .expect("record")
        .status
}

pub async fn agent_notes(h: &Harness) -> Vec<memory::MemoryRecord> {
    h.records()
        .await
        .into_iter()
        .filter(|r| r.scope == Scope::AgentNotes)
        .collect()
}
