use super::{Db, Result};
use crate::admin_text::AdminText;
use crate::model::AuditEntry;
use sqlx::{Any, Executor};

const SELECT: &str = "SELECT id, org, actor, action, target, detail, at FROM audit_log";

/// Who acts, in which organisation, and when: what every audit entry of
/// one act shares (skills call the one acting a curator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Act<'a> {
    pub org: &'a str,
    pub actor: &'a str,
    pub at: i64,
}

impl Act<'_> {
    /// Append the entry "the actor did `action` to `target`" to the audit
    /// log, on a pool or inside a transaction.
    pub(super) async fn audit<'c, E>(
        &self,
        exec: E,
        action: &str,
        target: &str,
        detail: &AdminText,
    ) -> Result<()>
    where
        E: Executor<'c, Database = Any>,
    {
        let text = "INSERT INTO audit_log (org, actor, action, target, detail, at) VALUES ($1, $2, $3, $4, $5, $6)";
        let (actor, action, target) = (printable(self.actor), printable(action), printable(target));
        let detail = printable_text(detail.as_str());
        let q = sql!(text, self.org, &*actor, &*action, &*target, &*detail, self.at);
        q.exec(exec).await.map(|_| ())
    }
}

/// An audit field as every database stores it and every page may show it:
/// a control character (NUL, escape, a line break) in what a request named
/// becomes U+FFFD. (PostgreSQL refuses NUL in text; SQLite kept it and the
/// audit page emitted it.)
fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    replace_where(s, char::is_control)
}

/// [`printable`] for a detail, which may hold line breaks and tabs.
fn printable_text(s: &str) -> std::borrow::Cow<'_, str> {
    replace_where(s, |c| c.is_control() && !matches!(c, '\n' | '\t'))
}

fn replace_where(s: &str, bad: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if s.chars().any(&bad) {
        s.chars()
            .map(|c| if bad(c) { '\u{FFFD}' } else { c })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}

/// The audit log: append-only entries of who did what to which target.
#[derive(Clone, Copy)]
pub struct AuditTrail<'a> {
    pub(super) db: &'a Db,
}

impl AuditTrail<'_> {
    /// Append one entry to the audit log. Its detail is an [`AdminText`]:
    /// every administrator reads the log, so it holds no person's words.
    pub async fn append(
        &self,
        org: &str,
        actor: &str,
        action: &str,
        target: &str,
        detail: &AdminText,
        at: i64,
    ) -> Result<()> {
        let by = Act { org, actor, at };
        by.audit(&self.db.pool, action, target, detail).await
    }

    /// [`append`](Self::append) for an administrator's reasoned look at a
    /// person's data: its proof opens what the look was for
    /// (`Archive::words`).
    pub async fn append_look(
        &self,
        org: &str,
        actor: &str,
        action: &str,
        target: &str,
        detail: &AdminText,
        at: i64,
    ) -> Result<super::archives::AuditedLook> {
        self.append(org, actor, action, target, detail, at).await?;
        Ok(super::archives::AuditedLook::written())
    }

    /// Audit entries of one action about one target, oldest first.
    pub async fn about(&self, org: &str, action: &str, target: &str) -> Result<Vec<AuditEntry>> {
        let text = format!("{SELECT} WHERE org = $1 AND action = $2 AND target = $3 ORDER BY id");
        let target = printable(target);
        sql!(text, org, action, &*target).all(&self.db.pool).await
    }

    /// The newest `limit` audit entries of an organisation, newest first.
    pub async fn log(&self, org: &str, limit: i64) -> Result<Vec<AuditEntry>> {
        self.log_before(org, None, limit).await
    }

    /// The newest `limit` audit entries with an id below `before` (all when
    /// `None`), newest first: one page of the log.
    pub async fn log_before(
        &self,
        org: &str,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>> {
        self.db.newest_before(SELECT, org, before, limit).await
    }
}
