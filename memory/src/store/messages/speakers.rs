//! What a turn's first read knows of its speaker beside the user row: the
//! work roles they hold and which of [`SPEAKER_AUDIT`] the audit log holds
//! about them. Both change rarely, so a process keeps a copy per person and
//! reads them again only when the organisation's people generation moved
//! (table `people_generations`: the database moves it on every change of
//! `user_roles` and of those audit entries, whichever path or replica made
//! it). Reading them every turn was a tenth of a turn's SQLite work
//! (docs/benchmarks.md).

use super::super::{Conversations, Result};
use dashmap::DashMap;

/// The audit actions the people generation follows (the migration's
/// triggers name the same): an opening that asks only about these is
/// answered from the copy.
pub const SPEAKER_AUDIT: [&str; 2] = ["pairing.approve", "oversight.promised"];

/// People kept before the copy starts afresh.
const KEPT: usize = 100_000;

/// The copy, per (organisation, user id).
#[derive(Debug, Default)]
pub(crate) struct Speakers(DashMap<(String, String), Known, foldhash::fast::RandomState>);

/// What is kept of a speaker, and the people generation it was read at.
#[derive(Debug)]
struct Known {
    generation: i64,
    facts: Facts,
}

/// A speaker's roles (sorted) and which of the asked audit actions exist.
#[derive(Debug)]
pub(super) struct Facts {
    pub(super) roles: Vec<String>,
    pub(super) audited: Vec<String>,
}

impl Conversations<'_> {
    /// `user`'s roles and audited actions among `asked`, from the copy when
    /// it was made at `generation`, else read (and kept when `asked` is
    /// within [`SPEAKER_AUDIT`]).
    pub(super) async fn speaker_facts(
        &self,
        org: &str,
        user: &str,
        generation: i64,
        asked: &[&str],
    ) -> Result<Facts> {
        let kept = asked.iter().all(|a| SPEAKER_AUDIT.contains(a));
        let only_asked = |all: &[String]| -> Vec<String> {
            all.iter()
                .filter(|a| asked.contains(&a.as_str()))
                .cloned()
                .collect()
        };
        let key = (org.to_string(), user.to_string());
        if kept {
            if let Some(k) = self.db.speakers.0.get(&key) {
                if k.generation == generation {
                    return Ok(Facts {
                        roles: k.facts.roles.clone(),
                        audited: only_asked(&k.facts.audited),
                    });
                }
            }
        }
        let actions: &[&str] = if kept { &SPEAKER_AUDIT } else { asked };
        let mut q = sql!(
            "SELECT CAST(0 AS BIGINT), role FROM user_roles WHERE org = $1 AND user_id = $2",
            org,
            user
        );
        if !actions.is_empty() {
            q = q
                .push(" UNION ALL SELECT DISTINCT CAST(1 AS BIGINT), action FROM audit_log WHERE org = $1 AND target = $2 AND action IN (")
                .bind_list(actions.iter().copied())
                .push(")");
        }
        let rows: Vec<(i64, String)> = q.all(&self.db.pool).await?;
        let mut roles: Vec<String> = Vec::new();
        let mut audited: Vec<String> = Vec::new();
        for (part, value) in rows {
            if part == 0 {
                roles.push(value);
            } else {
                audited.push(value);
            }
        }
        roles.sort_unstable();
        roles.dedup();
        audited.sort_unstable();
        audited.dedup();
        if kept {
            if self.db.speakers.0.len() >= KEPT {
                self.db.speakers.0.clear();
            }
            let facts = Facts {
                roles: roles.clone(),
                audited: audited.clone(),
            };
            self.db.speakers.0.insert(key, Known { generation, facts });
        }
        Ok(Facts {
            audited: only_asked(&audited),
            roles,
        })
    }
}
