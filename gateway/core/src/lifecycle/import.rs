//! `steward memory import FILE`: an operator's bulk load of agent notes and
//! org policy from JSON Lines, through the write path's rules — sanitised,
//! refused over the record cap or holding a credential, the same text already
//! live skipped, the subject rule applied (a line without a subject supersedes
//! nothing) — in one run, audited once. Every line is checked before anything
//! is written: a bad line is named and nothing is imported.

use super::Lifecycle;
use crate::error::TurnError;
use memory::sanitize::sanitize;
use memory::write::screen_text;
use memory::{NewRecord, Scope};
use serde::Deserialize;

/// Lines written per transaction: one commit per batch, not per line.
const BATCH: usize = 500;

/// One line of an import file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportLine {
    scope: ImportScope,
    content: String,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    /// When it was said: RFC 3339 or epoch milliseconds; now when absent.
    #[serde(default)]
    said_at: Option<SaidAt>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ImportScope {
    AgentNotes,
    OrgPolicy,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum SaidAt {
    Millis(i64),
    Text(String),
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("line {line}: {why}; nothing was imported")]
    Line { line: usize, why: String },
    #[error("the file holds no records; nothing was imported")]
    Empty,
    #[error(transparent)]
    Turn(#[from] TurnError),
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportReport {
    pub run_id: String,
    pub written: usize,
    /// Lines whose text was already live in the same place.
    pub already_known: usize,
}

/// Where one import writes: the organisation, the agent whose notes it
/// fills, who ran it and when.
#[derive(Debug, Clone, Copy)]
pub struct ImportPlace<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub actor: &'a str,
    pub now: i64,
}

fn record_of(place: &ImportPlace<'_>, line: ImportLine) -> Result<NewRecord, String> {
    let content = line.content.trim().to_string();
    if content.is_empty() {
        return Err("content is empty".into());
    }
    let subject = line.subject.map(|s| sanitize(s.trim())).unwrap_or_default();
    // The write path's own screen, so a refused line is named before any
    // batch is written: the same refusal `import_records` would give.
    let content = screen_text(&subject, &content).map_err(|refusal| refusal.to_string())?;
    let said_at = match line.said_at {
        None => place.now,
        Some(SaidAt::Millis(ms)) => ms,
        Some(SaidAt::Text(t)) => chrono::DateTime::parse_from_rfc3339(&t)
            .map_err(|e| format!("said_at `{t}` is not an RFC 3339 time: {e}"))?
            .timestamp_millis(),
    };
    let (scope, agent) = match line.scope {
        ImportScope::AgentNotes => (Scope::AgentNotes, place.agent),
        ImportScope::OrgPolicy => (Scope::OrgPolicy, memory::ANY_AGENT),
    };
    let kind = line.kind.unwrap_or_else(|| "fact".into());
    Ok(
        NewRecord::said(place.org, agent, scope, kind, subject, content, said_at)
            .recorded_at(place.now)
            .source(format!("import:{}", place.actor))
            .author(Some(place.actor.to_string())),
    )
}

impl Lifecycle {
    /// Import the JSON Lines `text` into `place`. Blank lines are skipped.
    pub async fn import(
        &self,
        place: &ImportPlace<'_>,
        text: &str,
    ) -> Result<ImportReport, ImportError> {
        let mut records = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let line = i + 1;
            let parsed: ImportLine = serde_json::from_str(raw).map_err(|e| ImportError::Line {
                line,
                why: e.to_string(),
            })?;
            let rec = record_of(place, parsed).map_err(|why| ImportError::Line { line, why })?;
            records.push(rec);
        }
        if records.is_empty() {
            return Err(ImportError::Empty);
        }
        let run_id = format!("import:{}", place.now);
        let mut report = ImportReport {
            run_id: run_id.clone(),
            ..Default::default()
        };
        for batch in records.chunks(BATCH) {
            let ids = self
                .db
                .records()
                .import_records(batch, &run_id, place.now)
                .await
                .map_err(TurnError::from)?;
            let written = ids.iter().flatten().count();
            report.written += written;
            report.already_known += ids.len() - written;
        }
        let detail = memory::admin_text::AdminText::report(&report);
        self.db
            .audit()
            .append(
                place.org,
                place.actor,
                "memory.import",
                &run_id,
                &detail,
                place.now,
            )
            .await
            .map_err(TurnError::from)?;
        Ok(report)
    }
}
