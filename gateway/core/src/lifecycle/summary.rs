//! The summary of a trimmed slice: the configured model's, or the
//! deterministic one when there is none or it fails.

use super::Lifecycle;
use chrono::{SecondsFormat, TimeZone, Utc};
use memory::{MessageAuthor, StoredMessage};
use std::collections::BTreeMap;

pub(super) fn time(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// Messages of people (and automated runs), not the agent's replies.
fn spoken(m: &StoredMessage) -> bool {
    m.written_by() != MessageAuthor::Agent
}

/// A deterministic summary of a slice (the offline model's).
/// Where the words of a summary start.
const TOPICS: &str = " Topics: ";

pub fn summarize(slice: &[StoredMessage]) -> String {
    let (Some(first), Some(last)) = (slice.first(), slice.last()) else {
        return String::new();
    };
    let mut roles: BTreeMap<String, String> = BTreeMap::new();
    let mut unpaired = 0;
    for m in slice.iter().filter(|m| spoken(m)) {
        match &m.sender {
            Some(s) => {
                roles.insert(
                    s.clone(),
                    m.sender_role.clone().unwrap_or_else(|| "unknown".into()),
                );
            }
            None => unpaired += 1,
        }
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for m in slice.iter().filter(|m| spoken(m)) {
        for t in memory::terms::terms(&m.text) {
            *counts.entry(t).or_default() += 1;
        }
    }
    let mut topics: Vec<(String, usize)> = counts.into_iter().collect();
    topics.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let speakers = roles
        .iter()
        .map(|(s, r)| format!("{s} ({r})"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{} messages from {} to {}. Speakers: {}{}.{TOPICS}{}.",
        slice.len(),
        time(first.said_at),
        time(last.said_at),
        if speakers.is_empty() {
            "none".to_string()
        } else {
            speakers
        },
        if unpaired > 0 {
            format!("; {unpaired} unpaired line(s)")
        } else {
            String::new()
        },
        topics
            .iter()
            .take(6)
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

impl Lifecycle {
    pub(super) async fn summarize_slice(&self, slice: &[StoredMessage]) -> String {
        if let Some(s) = &self.summarizer {
            match s.summarize(slice).await {
                Ok(text) => return text,
                Err(e) => {
                    tracing::warn!(error = %e, "model summary failed; using the deterministic summary")
                }
            }
        }
        summarize(slice)
    }
}
