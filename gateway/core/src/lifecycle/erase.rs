//! `steward memory erase --user ID`: a person's data removed, not hidden —
//! their records deleted outright, the text of their lines replaced, and every
//! archive that held their lines rewritten without it. Audited.

use super::summary::summarize;
use super::trim::markdown;
use super::Lifecycle;
use crate::error::Result;
use memory::policy::Trust;
use memory::store::Erasure;

impl Lifecycle {
    /// Erase `user` in `org`; `actor` is who asked.
    pub async fn erase(&self, org: &str, user: &str, actor: &str, now: i64) -> Result<Erasure> {
        let erased = self.db.erase_person(org, user).await?;
        for &id in &erased.archives {
            let archive = self.db.conversations().archive(org, id).await?;
            let lines = self.db.conversations().archive_lines(org, id).await?;
            let trust = if archive.trust == Trust::Admin.as_str() {
                Trust::Admin
            } else {
                Trust::Mixed
            };
            // The old summary may repeat what they said: made again from what is left.
            let summary = summarize(&lines);
            let md = markdown(&lines, trust, &summary);
            self.db
                .conversations()
                .rewrite_archive(org, id, &summary, &md)
                .await?;
        }
        let detail = memory::admin_text::AdminText::report(&erased);
        self.db
            .audit()
            .append(org, actor, "memory.erase", user, &detail, now)
            .await?;
        Ok(erased)
    }
}
