//! The memory lifecycle (SPEC §6–§7): trim and archive, batch extraction read
//! person by person (linesBySpeaker), relearn, review, forget.
//!
//! Architecture Invariant: the speaker of an archived line is the stored user
//! id it was saved with, and their authority is the role it was saved with —
//! never a name in the text. Unpaired lines (no stored id) reach no extractor.

use crate::turn::{Result, TurnLoop};
use adapters::Inbound;
use chrono::{SecondsFormat, TimeZone, Utc};
use memory::policy::{self, Decision, Origin, PolicySettings};
use memory::sanitize::sanitize;
use memory::store::NewArchive;
use memory::{Candidate, NewRecord, Principal, Role, Scope, Status, StoreError, StoredMessage};
use std::collections::BTreeMap;

/// What a trim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrimReport {
    pub archive_id: i64,
    pub trust: String,
    /// Records batch extraction wrote (only with `memory.auto_keep`).
    pub learned: Vec<i64>,
}

/// What a relearn did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelearnReport {
    pub active: Vec<i64>,
    pub unverified: Vec<i64>,
    /// Items already known, forgotten (tombstoned) or declined.
    pub skipped: usize,
    pub run_id: String,
}

fn time(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// Messages of people (and automated runs), not the agent's replies.
fn spoken(m: &StoredMessage) -> bool {
    m.author != "agent"
}

/// Stored ids of the people who spoke in a slice, in order of first line.
fn speakers(slice: &[StoredMessage]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in slice.iter().filter(|m| m.author == "person") {
        if let Some(s) = &m.sender {
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
    }
    out
}

/// A person's authority in a slice: admin only when every one of their lines was stored as admin.
fn stored_authority(slice: &[StoredMessage], speaker: &str) -> Principal {
    let lines = slice
        .iter()
        .filter(|m| m.author == "person" && m.sender.as_deref() == Some(speaker));
    let all_admin = lines.clone().count() > 0
        && lines
            .clone()
            .all(|m| m.sender_role.as_deref() == Some("admin"));
    Principal::Human {
        user_id: speaker.to_string(),
        name: speaker.to_string(),
        role: if all_admin { Role::Admin } else { Role::User },
    }
}

/// `admin` only when everyone who spoke in the slice may author operational knowledge.
fn trust_of(slice: &[StoredMessage]) -> &'static str {
    let mut people = slice.iter().filter(|m| spoken(m)).peekable();
    if people.peek().is_none() {
        return "mixed";
    }
    if people.all(|m| m.sender.is_some() && m.sender_role.as_deref() == Some("admin")) {
        "admin"
    } else {
        "mixed"
    }
}

/// A deterministic summary of a slice (the offline model's).
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
        "{} messages from {} to {}. Speakers: {}{}. Topics: {}.",
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

fn markdown(slice: &[StoredMessage], trust: &str, summary: &str) -> String {
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
        if trust == "admin" {
            "admin".to_string()
        } else {
            "mixed — regular users, unpaired senders or automated runs spoke here; operational lines relearn as unverified".to_string()
        },
        summary
    );
    for m in slice {
        let who = match (m.author.as_str(), &m.sender) {
            ("agent", _) => "agent".to_string(),
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

impl TurnLoop {
    /// Step 10: when a conversation's live history passes its budget, trim the
    /// oldest slice so that the newest half of the budget stays live.
    pub(crate) async fn trim_if_over_budget(
        &self,
        msg: &Inbound,
        speaker: &Principal,
        now: i64,
    ) -> Result<Option<TrimReport>> {
        let budget = &self.cfg.memory;
        let (n, chars) = self
            .db
            .live_size(&msg.org, &msg.agent, &msg.conversation)
            .await?;
        if n as usize <= budget.history_budget_messages
            && chars as usize <= budget.history_budget_chars
        {
            return Ok(None);
        }
        let live = self
            .db
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
        self.trim_slice(slice, Some(speaker), now).await.map(Some)
    }

    /// Trim a conversation's whole live history now (replay's `trim`, an operator).
    pub async fn trim_now(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        now: i64,
    ) -> Result<Option<TrimReport>> {
        let live = self.db.history(org, agent, conversation).await?;
        if live.is_empty() {
            return Ok(None);
        }
        self.trim_slice(&live, None, now).await.map(Some)
    }

    /// Summarise, archive, and (with `auto_keep`) extract person by person.
    /// `current` is the running turn's speaker, if a turn triggered the trim.
    async fn trim_slice(
        &self,
        slice: &[StoredMessage],
        current: Option<&Principal>,
        now: i64,
    ) -> Result<TrimReport> {
        let (first, last) = match (slice.first(), slice.last()) {
            (Some(f), Some(l)) => (f, l),
            _ => return Err(StoreError::NotFound("messages to trim".into()).into()),
        };
        let trust = trust_of(slice);
        let summary = self.summarize_slice(slice).await;
        let ids: Vec<i64> = slice.iter().map(|m| m.id).collect();
        let created_by = match current {
            Some(Principal::Human { user_id, .. }) => user_id.clone(),
            Some(Principal::System(s)) => s.as_str().to_string(),
            _ => "operator".to_string(),
        };
        let archive_id = self
            .db
            .archive_slice(&NewArchive {
                org: &first.org,
                agent: &first.agent,
                channel: &first.channel,
                conversation: &first.conversation,
                conversation_kind: &first.conversation_kind,
                message_ids: &ids,
                started_at: first.said_at,
                ended_at: last.said_at,
                trust,
                summary: &summary,
                markdown: &markdown(slice, trust, &summary),
                created_at: now,
                created_by: &created_by,
            })
            .await?;
        let mut learned = Vec::new();
        // Batch extraction is implicit learning: only with auto_keep, else consent
        // happened (or not) in the live turns and a trim only summarises and archives.
        // An automated run reads only its own lines, and learns nothing from them.
        if self.cfg.memory.auto_keep && !matches!(current, Some(Principal::System(_))) {
            let run_id = format!("trim:{archive_id}");
            for speaker in speakers(slice) {
                let authority = match current {
                    Some(p @ Principal::Human { user_id, .. }) if *user_id == speaker => p.clone(),
                    _ => stored_authority(slice, &speaker),
                };
                // Each line alone: a directive is read with its author's messages only.
                for m in slice.iter().filter(|m| {
                    m.author == "person" && m.sender.as_deref() == Some(speaker.as_str())
                }) {
                    for item in self.extract(&m.text).await {
                        let source = format!("trim:archive:{archive_id}:message:{}", m.id);
                        if let Some((id, _)) = self
                            .learn(
                                &authority,
                                &item,
                                Origin::Implicit,
                                m,
                                &source,
                                "live",
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
            // The summary is personal only when the whole slice was the current speaker's.
            if let Some(Principal::Human { user_id, .. }) = current {
                let all_theirs = slice
                    .iter()
                    .filter(|m| spoken(m))
                    .all(|m| m.sender.as_deref() == Some(user_id.as_str()));
                if all_theirs {
                    let rec = NewRecord {
                        org: first.org.clone(),
                        agent: first.agent.clone(),
                        scope: Scope::Personal,
                        owner: Some(user_id.clone()),
                        subject: format!("summary:{}:{archive_id}", first.conversation),
                        kind: "summary".into(),
                        content: sanitize(&summary),
                        status: Status::Active,
                        source: format!("trim:archive:{archive_id}:summary"),
                        said_at: last.said_at,
                        recorded_at: now,
                        expires_at: None,
                        conversation: Some(first.conversation.clone()),
                        batch: None,
                        author: Some(user_id.clone()),
                    };
                    learned.push(self.db.insert_record(&rec).await?);
                }
            }
        }
        Ok(TrimReport {
            archive_id,
            trust: trust.to_string(),
            learned,
        })
    }

    /// Apply the write policy to one item said in `line` and write it unless the
    /// same item is already known, was forgotten (a tombstone) or declined.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn learn(
        &self,
        author: &Principal,
        item: &Candidate,
        origin: Origin,
        line: &StoredMessage,
        source: &str,
        cause: &str,
        run_id: &str,
        now: i64,
    ) -> Result<Option<(i64, Status)>> {
        let content = sanitize(&item.content);
        if content.is_empty() {
            return Ok(None);
        }
        let settings = PolicySettings {
            auto_keep: true,
            ..self.policy.clone()
        };
        let Decision::Write {
            scope,
            owner,
            status,
        } = policy::decide(author, item, origin, &settings)
        else {
            return Ok(None);
        };
        if status == Status::Pending {
            return Ok(None);
        }
        let rec = NewRecord {
            org: line.org.clone(),
            agent: line.agent.clone(),
            scope,
            owner,
            subject: item.subject.clone(),
            kind: item.kind.clone(),
            content,
            status,
            source: source.to_string(),
            said_at: line.said_at,
            recorded_at: now,
            expires_at: None,
            conversation: Some(line.conversation.clone()),
            batch: None,
            author: line.sender.clone(),
        };
        let known = [
            Status::Active,
            Status::Superseded,
            Status::Unverified,
            Status::Deleted,
            Status::Rejected,
        ];
        if self.db.has_same(&rec, &known).await? {
            return Ok(None);
        }
        let id = self.db.insert_record(&rec).await?;
        if status == Status::Active {
            let s = self.db.activate(&line.org, id, cause, run_id, now).await?;
            // Relearned records are history being restored; only live writes revise beliefs.
            if cause != "relearn" {
                self.revise_beliefs(&line.org, id, &s, cause, run_id, now)
                    .await;
            }
        }
        Ok(Some((id, status)))
    }

    /// Relearn an archive: each person's lines under the role they were stored
    /// with; an archive without admin trust quarantines operational items as
    /// `unverified`; personal lines are not relearned. Dated when said.
    pub async fn relearn(
        &self,
        org: &str,
        archive_id: i64,
        actor: &str,
        now: i64,
    ) -> Result<RelearnReport> {
        let archive = self.db.archive(org, archive_id).await?;
        let lines = self.db.archive_lines(org, archive_id).await?;
        let trusted = archive.trust == "admin";
        let mut report = RelearnReport {
            run_id: format!("relearn:{archive_id}:{now}"),
            ..Default::default()
        };
        for speaker in speakers(&lines) {
            let authority = stored_authority(&lines, &speaker);
            for m in lines
                .iter()
                .filter(|m| m.author == "person" && m.sender.as_deref() == Some(speaker.as_str()))
            {
                for item in self.extract(&m.text).await {
                    let source = format!("relearn:archive:{archive_id}:message:{}", m.id);
                    match self
                        .learn(
                            &authority,
                            &item,
                            Origin::Relearn { trusted },
                            m,
                            &source,
                            "relearn",
                            &report.run_id,
                            now,
                        )
                        .await?
                    {
                        Some((id, Status::Active)) => report.active.push(id),
                        Some((id, _)) => report.unverified.push(id),
                        None => report.skipped += 1,
                    }
                }
            }
        }
        self.db
            .audit(
                org,
                actor,
                "memory.relearn",
                &format!("archive:{archive_id}"),
                &format!(
                    "{} active, {} unverified, {} skipped",
                    report.active.len(),
                    report.unverified.len(),
                    report.skipped
                ),
                now,
            )
            .await?;
        Ok(report)
    }

    /// `review_learned`: confirm (the subject rule runs, honouring time and
    /// vetoes) or reject an unverified record. Audited.
    pub async fn review(
        &self,
        org: &str,
        id: i64,
        confirm: bool,
        actor: &str,
        now: i64,
    ) -> Result<std::result::Result<String, String>> {
        let rec = match self.db.record(org, id).await {
            Ok(r) => r,
            Err(StoreError::NotFound(_)) => return Ok(Err(format!("no record {id}"))),
            Err(e) => return Err(e.into()),
        };
        if rec.status != Status::Unverified {
            return Ok(Err(format!(
                "record {id} is {}, not unverified",
                rec.status.as_str()
            )));
        }
        let outcome = if confirm {
            let run = format!("review:{id}:{now}");
            let s = self.db.activate(org, id, "confirm", &run, now).await?;
            self.revise_beliefs(org, id, &s, "confirm", &run, now).await;
            match s.superseded_by {
                Some(newer) => format!("confirmed record {id}; it is older than record {newer}, so it is kept as history"),
                None if s.retired.is_empty() => format!("confirmed record {id}"),
                None => format!("confirmed record {id}; it retired {:?}", s.retired),
            }
        } else {
            self.db.set_status(org, id, Status::Rejected).await?;
            format!("rejected record {id}")
        };
        self.db
            .audit(
                org,
                actor,
                if confirm {
                    "review.confirm"
                } else {
                    "review.reject"
                },
                &format!("record:{id}"),
                &rec.content,
                now,
            )
            .await?;
        Ok(Ok(outcome))
    }

    /// An operator deletes a record; its tombstone keeps relearn from bringing it back. Audited.
    pub async fn forget(&self, org: &str, id: i64, actor: &str, now: i64) -> Result<()> {
        let rec = self.db.record(org, id).await?;
        self.db.set_status(org, id, Status::Deleted).await?;
        self.db
            .audit(
                org,
                actor,
                "memory.forget",
                &format!("record:{id}"),
                &rec.source,
                now,
            )
            .await?;
        Ok(())
    }
}

/// Days after a pairing is revoked before that person's individual records are soft-forgotten.
pub const RETENTION_DAYS: i64 = 90;

/// What one `memory_expire` run did in one organisation.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExpireReport {
    pub proposals_expired: u64,
    pub individual_soft_forgotten: u64,
    pub person_deleted: u64,
}

impl TurnLoop {
    /// The `memory_expire` job for one organisation: unanswered proposals expire;
    /// a revoked person's person-tier records are deleted, and their individual
    /// records soft-forgotten 90 days after the revocation. Agent notes are never
    /// edited here. Audited.
    pub async fn expire(&self, org: &str, now: i64) -> Result<ExpireReport> {
        let mut report = ExpireReport {
            proposals_expired: self.db.expire_proposals(org, now).await?,
            ..Default::default()
        };
        for user in self.pairing().users(org).await? {
            if user.status != "revoked" {
                continue;
            }
            report.person_deleted += self.db.delete_person_tier(org, &user.user_id).await?;
            if user.updated_at + RETENTION_DAYS * 86_400_000 <= now {
                report.individual_soft_forgotten +=
                    self.db.soft_forget_individual(org, &user.user_id).await?;
            }
        }
        self.db
            .audit(
                org,
                "memory_expire",
                "memory.expire",
                org,
                &serde_json::to_string(&report).unwrap_or_default(),
                now,
            )
            .await?;
        Ok(report)
    }

    /// Run `memory_expire` for every organisation if this replica wins the slot.
    pub async fn expire_all_if_due(
        &self,
        slot: i64,
        now: i64,
    ) -> Result<Option<Vec<(String, ExpireReport)>>> {
        if !self.db.claim_job("memory_expire", slot, now).await? {
            return Ok(None);
        }
        let mut out = Vec::new();
        for org in self.db.orgs().await? {
            out.push((org.clone(), self.expire(&org, now).await?));
        }
        Ok(Some(out))
    }
}
