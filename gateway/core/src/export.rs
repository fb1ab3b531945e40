//! Exports: one person's data as JSON, and the whole store as the
//! memory-governance skill's Markdown layout for teams that keep memory in git.

use crate::error::Result;
use chrono::TimeZone;
use memory::admin_text;
use memory::admin_text::{AdminText, Identifier};
use memory::store::RecordFilter;
use memory::{Db, Scope, Status};
use pairing::Pairing;
use std::collections::BTreeMap;
use std::path::Path;

fn day(ms: i64) -> String {
    chrono::Utc
        .timestamp_millis_opt(ms)
        .single()
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "unknown".into())
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Turn(#[from] crate::error::TurnError),
    #[error(transparent)]
    Store(#[from] memory::StoreError),
    #[error(transparent)]
    Skill(#[from] crate::skills::skill_md::SkillMdError),
    #[error("writing {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

fn write(path: &Path, text: &str) -> Result<(), ExportError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
            path: dir.display().to_string(),
            source,
        })?;
    }
    std::fs::write(path, text).map_err(|source| ExportError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// The export service: the store and the pairing store.
pub struct Export {
    db: Db,
    pairing: Pairing,
}

impl Export {
    pub fn new(db: Db, pairing: Pairing) -> Self {
        Export { db, pairing }
    }

    /// Everything stored about one person: their pairing, records and messages. Audited.
    pub async fn export_user(
        &self,
        org: &str,
        user: &str,
        actor: &str,
        now: i64,
    ) -> Result<serde_json::Value> {
        let pairing = self.pairing.user(org, user).await.ok();
        let records = self
            .db
            .records()
            .list(
                org,
                &RecordFilter {
                    owner: Some(user.into()),
                    ..Default::default()
                },
            )
            .await?;
        let messages = self
            .db
            .conversations()
            .messages_by_sender(org, user)
            .await?;
        // Who acts for them and for whom they act: part of what is theirs.
        let delegations = self.pairing.delegations(org, Some(user)).await?;
        self.db
            .audit()
            .append(org, actor, "memory.export", user, &AdminText::empty(), now)
            .await?;
        Ok(serde_json::json!({
            "org": org,
            "user": user,
            "pairing": pairing,
            "records": records,
            "messages": messages,
            "delegations": delegations,
        }))
    }

    /// Write `daily/YYYY-MM-DD.md` (group conversations' archives by day; a
    /// person's direct conversation is read only one at a time, with a
    /// reason), `MEMORY.md` (the team's long-term memory: agent notes and org
    /// policy, never anyone's personal records), `knowledge/` (agent_notes per agent, org policy)
    /// and `skills/agent-<id>/<slug>/SKILL.md` (skills in force). Audited.
    pub async fn export_markdown(
        &self,
        org: &str,
        dir: &Path,
        actor: &str,
        now: i64,
    ) -> Result<usize, ExportError> {
        let mut files = 0;
        let mut days: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for a in self.db.conversations().archives(org, None).await? {
            // A person's direct conversation gives no words without a look.
            if let Some(words) = a.words(None) {
                let markdown = words.markdown().to_string();
                days.entry(day(a.started_at)).or_default().push(markdown);
            }
        }
        for (d, parts) in &days {
            write(
                &dir.join("daily").join(format!("{d}.md")),
                &parts.join("\n---\n\n"),
            )?;
            files += 1;
        }
        let active = RecordFilter {
            status: Some(Status::Active),
            ..Default::default()
        };
        let records = self.db.records().list(org, &active).await?;
        let mut memory_md = String::from(
            "# MEMORY\n\nThe team's long-term memory: agent notes and org policy. \
             Nobody's personal records are exported here; a person exports their own.\n",
        );
        let mut notes: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut policy = String::from("# Organisation policy\n\n");
        let mut roles: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in &records {
            let line = format!(
                "- [{}] {} _(said {}, {})_\n",
                r.id,
                r.content,
                day(r.said_at),
                r.kind
            );
            match r.scope {
                Scope::Personal | Scope::Person => {}
                Scope::AgentNotes => notes.entry(r.agent.clone()).or_default().push(line),
                Scope::OrgPolicy => policy.push_str(&line),
                // The role entries in force, by role (never anyone's personal records).
                Scope::Role => roles
                    .entry(r.owner.clone().unwrap_or_default())
                    .or_default()
                    .push(line),
            }
        }
        for (agent, lines) in &notes {
            memory_md.push_str(&format!("\n## Agent notes: {agent}\n\n{}", lines.concat()));
        }
        memory_md.push_str(&format!("\n## {}", policy.trim_start_matches("# ")));
        if !roles.is_empty() {
            memory_md
                .push_str("\n# Role memory\n\nWhat everyone in a work role shares, by role.\n");
            for (role, lines) in roles {
                memory_md.push_str(&format!("\n## role: {role}\n\n{}", lines.concat()));
            }
        }
        write(&dir.join("MEMORY.md"), &memory_md)?;
        write(&dir.join("knowledge").join("org_policy.md"), &policy)?;
        files += 2;
        for (agent, lines) in &notes {
            write(
                &dir.join("knowledge")
                    .join(format!("agent_notes-{agent}.md")),
                &format!("# Agent notes: {agent}\n\n{}", lines.concat()),
            )?;
            files += 1;
        }
        // Skills in force, per agent, in the Agent Skills format.
        let mut skills: BTreeMap<String, Vec<memory::skill::SkillRevision>> = BTreeMap::new();
        for r in self
            .db
            .skills()
            .list(org, Some(memory::skill::SkillStatus::Active))
            .await?
        {
            skills.entry(r.agent.clone()).or_default().push(r);
        }
        for (agent, revisions) in skills {
            // `agent-` first: an agent id may be `..`, never a path out of `dir`.
            let under = dir.join("skills").join(format!("agent-{agent}"));
            files += crate::skills::skill_md::write_all(&under, &revisions)?.len();
        }
        self.db
            .audit()
            .append(
                org,
                actor,
                "memory.export",
                "markdown",
                &admin_text!("{}", Identifier::new(&dir.display().to_string())),
                now,
            )
            .await?;
        Ok(files)
    }
}
