//! Relearn an archive, person by person, under the roles its lines were stored with.

use super::Lifecycle;
use crate::error::Result;
use memory::policy::{self, Origin, Trust};
use memory::{Cause, Status};

/// What a relearn did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelearnReport {
    pub active: Vec<i64>,
    pub unverified: Vec<i64>,
    /// Items already known, forgotten (tombstoned) or declined.
    pub skipped: usize,
    pub run_id: String,
}

impl Lifecycle {
    /// Relearn an archive: each person's lines under the role they were stored
    /// with; an archive without admin trust quarantines operational items as
    /// `unverified`; personal lines are not relearned. Dated when said. Audited.
    pub async fn relearn(
        &self,
        org: &str,
        archive_id: i64,
        actor: &str,
        now: i64,
    ) -> Result<RelearnReport> {
        let archive = self.db.conversations().archive(org, archive_id).await?;
        let lines = self
            .db
            .conversations()
            .archive_lines(org, archive_id)
            .await?;
        let trusted = Trust::parse(&archive.trust) == Trust::Admin;
        let mut report = RelearnReport {
            run_id: format!("relearn:{archive_id}:{now}"),
            ..Default::default()
        };
        for speaker in policy::speakers(&lines) {
            let authority = policy::stored_authority(&lines, &speaker, None);
            for m in policy::lines_of(&lines, &speaker) {
                for item in self.learning.extract(&m.text).await {
                    let source = format!("relearn:archive:{archive_id}:message:{}", m.id);
                    match self
                        .learning
                        .learn_line(
                            &authority,
                            &item,
                            Origin::Relearn { trusted },
                            m,
                            &source,
                            Cause::Relearn,
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
            .audit()
            .append(
                org,
                actor,
                "memory.relearn",
                &format!("archive:{archive_id}"),
                &memory::admin_text!(
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
}
