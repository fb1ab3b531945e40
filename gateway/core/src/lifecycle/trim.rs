//! Step 10: trim a conversation's live history into an archive; with
//! `auto_keep` (the agent's, else `memory.auto_keep`), learn from it person by
//! person — from those who opted in to auto-keep themselves (`/autokeep on`).

use super::summary::time;
use super::Lifecycle;
use crate::error::Result;
use adapters::Inbound;
use memory::policy::{self, Decision, Origin, Trust};
use memory::sanitize::sanitize;
use memory::store::{LiveSize, NewArchive};
use memory::write::{split_refusal, Activation, Dedupe, NoRevision};
use memory::{Cause, MessageAuthor, NewRecord, Principal, StoreError, StoredMessage};

/// What a trim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrimReport {
    pub archive_id: i64,
    pub trust: String,
    /// Records batch extraction wrote (only with `memory.auto_keep`).
    pub learned: Vec<i64>,
}

/// An archive's Markdown: its period, trust, summary and lines.
pub(super) fn markdown(slice: &[StoredMessage], trust: Trust, summary: &str) -> String {
    let (first, last) = match (slice.first(), slice.last()) {
        (Some(f), Some(l)) => (f, l),
        _ => return String::new(),
    };
    let mut md = format!(
        "# Session archive — {} ({}, {})\n\n**Period**: {} – {}\n**Trust**: {}\n\n## Summary\n\n{}\n\n## Lines\n\n",
        first.conversation,
        first.channel,
        first.conversation_kind,
        time(first.said_at),
        time(last.said_at),
        match trust {
            Trust::Admin => "admin",
            Trust::Mixed => "mixed — regular users, unpaired senders or automated runs spoke here; operational lines relearn as unverified",
        },
        summary
    );
    for m in slice {
        let who = match (m.written_by(), &m.sender) {
            (MessageAuthor::Agent, _) => "agent".to_string(),
            (_, Some(s)) => format!("{s} ({})", m.sender_role.as_deref().unwrap_or("unknown")),
            (_, None) => "unpaired".to_string(),
        };
        md.push_str(&format!(
            "- `{}` **{}**: {}\n",
            time(m.said_at),
            who,
            m.text.replace('\n', " ")
        ));
    }
    md
}

impl Lifecycle {
    /// When a conversation's live history passes its budget, trim the oldest
    /// slice so that the newest half of the budget stays live. `known` is the
    /// size when the turn already read it; otherwise it is read here.
    pub async fn trim_if_over_budget(
        &self,
        msg: &Inbound,
        speaker: &Principal,
        now: i64,
        known: Option<LiveSize>,
    ) -> Result<Option<TrimReport>> {
        let budget = &self.cfg.memory;
        let (n, chars) = match known {
            Some(size) => (size.messages, size.chars),
            None => {
                self.db
                    .conversations()
                    .live_size(&msg.org, &msg.agent, &msg.conversation)
                    .await?
            }
        };
        if n as usize <= budget.history_budget_messages
            && chars as usize <= budget.history_budget_chars
        {
            return Ok(None);
        }
        let live = self
            .db
            .conversations()
            .history(&msg.org, &msg.agent, &msg.conversation)
            .await?;
        let (keep_msgs, keep_chars) = (
            budget.history_budget_messages / 2,
            budget.history_budget_chars / 2,
        );
        let (mut kept, mut kept_chars, mut cut) = (0usize, 0usize, live.len());
        for (i, m) in live.iter().enumerate().rev() {
            let len = m.text.chars().count();
            if kept + 1 > keep_msgs || kept_chars + len > keep_chars {
                break;
            }
            kept += 1;
            kept_chars += len;
            cut = i;
        }
        let Some(slice) = live.get(..cut).filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        self.trim_slice(slice, Some(speaker), now).await
    }

    /// Trim a conversation's whole live history now (replay's `trim`, an operator).
    pub async fn trim_now(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        now: i64,
    ) -> Result<Option<TrimReport>> {
        let live = self
            .db
            .conversations()
            .history(org, agent, conversation)
            .await?;
        if live.is_empty() {
            return Ok(None);
        }
        self.trim_slice(&live, None, now).await
    }

    /// Summarise, archive, and (when the policy says a trim learns) extract
    /// person by person. `current` is the running turn's speaker, if a turn
    /// triggered the trim. `None` when another trim of the conversation
    /// archived the slice first.
    async fn trim_slice(
        &self,
        slice: &[StoredMessage],
        current: Option<&Principal>,
        now: i64,
    ) -> Result<Option<TrimReport>> {
        let (first, last) = match (slice.first(), slice.last()) {
            (Some(f), Some(l)) => (f, l),
            _ => return Err(StoreError::NotFound("messages to trim".into()).into()),
        };
        let trust = policy::archive_trust(slice);
        let summary = self.summarize_slice(slice).await;
        let created_by = current
            .and_then(Principal::author_id)
            .unwrap_or_else(|| "operator".to_string());
        let Some(archive_id) = self
            .db
            .conversations()
            .archive_slice(&NewArchive {
                org: &first.org,
                agent: &first.agent,
                channel: &first.channel,
                conversation: &first.conversation,
                conversation_kind: &first.conversation_kind,
                first_id: first.id,
                last_id: last.id,
                started_at: first.said_at,
                ended_at: last.said_at,
                trust: trust.as_str(),
                summary: &summary,
                markdown: &markdown(slice, trust, &summary),
                created_at: now,
                created_by: &created_by,
            })
            .await?
        else {
            return Ok(None);
        };
        let learned = if policy::trim_learns(self.learning.policy(&first.agent), current) {
            let archive = Archived {
                id: archive_id,
                summary: &summary,
            };
            self.learn_from(slice, current, &archive, now).await?
        } else {
            Vec::new()
        };
        Ok(Some(TrimReport {
            archive_id,
            trust: trust.as_str().to_string(),
            learned,
        }))
    }

    /// What a trim that learns keeps from `slice`: each speaker's lines
    /// (only of those who opted in to auto-keep, as a live turn does) and
    /// the summary where the policy places it. The ids kept.
    async fn learn_from(
        &self,
        slice: &[StoredMessage],
        current: Option<&Principal>,
        archive: &Archived<'_>,
        now: i64,
    ) -> Result<Vec<i64>> {
        let (Some(first), Some(last)) = (slice.first(), slice.last()) else {
            return Ok(Vec::new());
        };
        let (archive_id, summary) = (archive.id, archive.summary);
        let mut learned = Vec::new();
        let run_id = format!("trim:{archive_id}");
        for speaker in policy::speakers(slice) {
            // The operator's auto_keep is the ceiling: a trim learns from
            // a person's lines only when they opted in too, as a live turn does.
            let identity = self.db.identity();
            if !identity.person_auto_keep(&first.org, &speaker).await? {
                continue;
            }
            let authority = policy::stored_authority(slice, &speaker, current);
            // Each line alone: a directive is read with its author's messages only.
            for m in policy::lines_of(slice, &speaker) {
                for item in self.learning.extract(&m.text).await {
                    let source = format!("trim:archive:{archive_id}:message:{}", m.id);
                    if let Some((id, _)) = self
                        .learning
                        .learn_line(
                            &authority,
                            &item,
                            Origin::Implicit,
                            m,
                            &source,
                            Cause::Live,
                            &run_id,
                            now,
                        )
                        .await?
                    {
                        learned.push(id);
                    }
                }
            }
        }
        let placed = match policy::summary_placement(slice, current) {
            // A summary kept in someone's own memory needs their opt-in too.
            Some(Decision::Write {
                owner: Some(ref person),
                ..
            }) if !self
                .db
                .identity()
                .person_auto_keep(&first.org, person)
                .await? =>
            {
                None
            }
            placed => placed,
        };
        if let Some(Decision::Write {
            scope,
            owner,
            status,
        }) = placed
        {
            let rec = NewRecord::said(
                &first.org,
                &first.agent,
                scope,
                "summary",
                format!("summary:{}:{archive_id}", first.conversation),
                capped(summary),
                last.said_at,
            )
            .owner(owner.clone())
            .status(status)
            .source(format!("trim:archive:{archive_id}:summary"))
            .recorded_at(now)
            .conversation(Some(first.conversation.clone()))
            .author(owner);
            // Kept as it is: a summary retires nothing and asks no judge.
            let written = self
                .db
                .records()
                .write(&rec, Dedupe::Never, Activation::None, &NoRevision)
                .await;
            // A summary memory would not keep (it quotes a credential or
            // an instruction) is left to the archive.
            learned.extend(split_refusal(written)?.ok().and_then(|w| w.id()));
        }
        Ok(learned)
    }
}

/// A slice's summary as memory keeps it: sanitised, and cut to the cap (a
/// summary is the assistant's own text, shortened rather than refused).
fn capped(summary: &str) -> String {
    let s = sanitize(summary);
    match s.char_indices().nth(memory::sanitize::MAX_LEN - 1) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s,
    }
}

/// An archive a trim wrote: its id and the summary it keeps.
struct Archived<'a> {
    id: i64,
    summary: &'a str,
}
