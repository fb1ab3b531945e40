//! The subject rule: one live value per subject and place, the newest
//! said one (docs/memory.md).

use super::fetch;
use super::{insert_on, set_status_on, Supersession};
use crate::admin_text::AdminText;
use crate::model::{MemoryRecord, NewRecord, Scope, Status};
use crate::store::revisions::{insert_revision, vetoed, NewRevision, RevisionMeta};
use crate::store::tombstones::{self, TombstoneKey};
use crate::store::RECORD as SELECT;
use crate::store::{Result, StoreError};
use sqlx::AnyConnection;

/// Where the subject rule looks: one subject in one place (organisation,
/// agent, scope, owner).
pub(super) struct SubjectPlace<'a> {
    pub(super) org: &'a str,
    pub(super) agent: &'a str,
    pub(super) scope: Scope,
    pub(super) owner: Option<&'a str>,
    pub(super) subject: &'a str,
}

impl<'a> SubjectPlace<'a> {
    fn of(r: &'a MemoryRecord) -> Self {
        SubjectPlace {
            org: &r.org,
            agent: &r.agent,
            scope: r.scope,
            owner: r.owner.as_deref(),
            subject: &r.subject,
        }
    }
}

/// The active records on `place`'s subject other than record `except`, newest first.
pub(super) async fn same_subject_active(
    conn: &mut AnyConnection,
    place: &SubjectPlace<'_>,
    except: i64,
) -> Result<Vec<MemoryRecord>> {
    if place.subject.trim().is_empty() {
        // No subject: nothing it could supersede, nothing that supersedes it.
        return Ok(Vec::new());
    }
    let text = format!(
        "{SELECT} WHERE org = $1 AND agent = $2 AND scope = $3 AND subject = $4 AND status = $5 AND id <> $6"
    );
    let q = sql!(
        text,
        place.org,
        place.agent,
        place.scope,
        place.subject,
        Status::Active,
        except
    );
    let q = match place.owner {
        Some(owner) => q.and_eq("owner", Some(owner)),
        None => q.push(" AND owner IS NULL"),
    };
    q.push(" ORDER BY said_at DESC, id DESC").all(conn).await
}

/// Record `id` made active under the subject rule, for `cause` in run
/// `run_id` at `now`: what the rule's revisions name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SubjectRuleRun<'a> {
    pub org: &'a str,
    pub id: i64,
    pub cause: &'a str,
    pub run_id: &'a str,
    pub now: i64,
}

/// [`Records::activate_under_subject_rule`] inside the caller's transaction.
pub(in crate::store) async fn activate_on(
    conn: &mut AnyConnection,
    run: &SubjectRuleRun<'_>,
) -> Result<Supersession> {
    let (org, id) = (run.org, run.id);
    // Write first, so SQLite takes its write lock before any read in this transaction.
    if set_status_on(&mut *conn, org, id, Status::Active).await? == 0 {
        return Err(StoreError::NotFound(format!("memory record {id}")));
    }
    subject_rule_on(conn, run).await
}

/// The subject rule for the active record `run.id`: the older of it and each
/// other active record on its subject is superseded, unless vetoed.
pub(super) async fn subject_rule_on(
    conn: &mut AnyConnection,
    run: &SubjectRuleRun<'_>,
) -> Result<Supersession> {
    let SubjectRuleRun {
        org,
        id,
        cause,
        run_id,
        now,
    } = *run;
    let new = fetch(&mut *conn, org, id)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("memory record {id}")))?;
    let mut out = Supersession::default();
    for old in same_subject_active(&mut *conn, &SubjectPlace::of(&new), new.id).await? {
        let (retired, replacing, reason) = if old.said_at > new.said_at {
            (
                &new,
                &old,
                AdminText::fixed("older than the live value on its subject"),
            )
        } else {
            (
                &old,
                &new,
                AdminText::fixed("a newer value on the same subject"),
            )
        };
        if vetoed(&mut *conn, org, retired.id, replacing.id).await? {
            continue;
        }
        set_status_on(&mut *conn, org, retired.id, Status::Superseded).await?;
        let meta = RevisionMeta {
            via: "subject_rule",
            cause,
            run_id,
            reason: &reason,
            model: None,
            prompt_version: None,
        };
        let revision = NewRevision {
            org,
            agent: &new.agent,
            retired_id: retired.id,
            replacing_id: replacing.id,
            meta,
            created_at: now,
        };
        out.revisions
            .push(insert_revision(&mut *conn, &revision).await?);
        if retired.id == new.id {
            out.superseded_by = Some(old.id);
            break;
        }
        out.retired.push(old.id);
    }
    Ok(out)
}

/// Insert `r` active and apply the subject rule to it, on the caller's
/// transaction. Inserted active, it is indexed once; activating a pending
/// insert would index it again.
pub(super) async fn insert_active_on(
    conn: &mut AnyConnection,
    r: &NewRecord,
    cause: &str,
    run_id: &str,
    now: i64,
) -> Result<(i64, Supersession)> {
    let id = match r.status {
        Status::Active => insert_on(&mut *conn, r).await?,
        Status::Superseded
        | Status::Unverified
        | Status::Pending
        | Status::Rejected
        | Status::Deleted => insert_on(&mut *conn, &r.clone().status(Status::Active)).await?,
    };
    let run = SubjectRuleRun {
        org: &r.org,
        id,
        cause,
        run_id,
        now,
    };
    let s = subject_rule_on(conn, &run).await?;
    Ok((id, s))
}

/// [`Db::find_same`] on the caller's connection.
pub(super) async fn find_same_on(
    conn: &mut AnyConnection,
    key: &TombstoneKey,
    r: &NewRecord,
    statuses: &[Status],
) -> Result<Option<i64>> {
    if statuses.is_empty() {
        return Ok(None);
    }
    let text = "SELECT id FROM memory_records WHERE org = $1 AND agent = $2 AND scope = $3 AND COALESCE(owner, '') = $4 \
                AND subject = $5 AND content = $6 AND status IN (";
    let owner = r.owner.as_deref().unwrap_or_default();
    let row: Option<(i64,)> = sql!(text, &r.org, &r.agent, r.scope, owner, &r.subject, &r.content)
        .bind_list(statuses.iter().copied())
        .push(") ORDER BY id DESC LIMIT 1")
        .opt(&mut *conn)
        .await?;
    if let Some((id,)) = row {
        return Ok(Some(id));
    }
    // A forgotten record holds no text: its tombstone recognises the same
    // text, or an item of the same message, in the same place.
    if statuses.contains(&Status::Deleted) {
        return tombstones::buried(conn, key, r).await;
    }
    Ok(None)
}
