//! The group commit of conversation lines: concurrent turns' lines, their
//! seen-id marks and trims' archives are queued, and one task at a time
//! stores everything queued in one transaction, then answers each caller.

use super::NewMessage;
use crate::store::archives::{archive_in, QueuedArchive};
use crate::store::NewArchive;
use crate::store::{Result, StoreError};
use foldhash::{HashSet, HashSetExt};
use sqlx::{AnyConnection, AnyPool};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// Jobs (lines, archives) stored in one transaction at most (bounds how long
/// a batch holds the write lock, and so the wait of the turns queued behind it).
const MAX_BATCH: usize = 256;

/// A line about to be stored, owned (it waits in the queue).
struct QueuedLine {
    org: String,
    agent: String,
    channel: String,
    conversation: String,
    conversation_kind: String,
    author: String,
    sender: Option<String>,
    sender_role: Option<String>,
    text: String,
    said_at: i64,
    /// The platform id to mark seen in the same transaction (and keep on the line).
    seen: Option<String>,
    /// The inbound line this reply answers.
    reply_to: Option<i64>,
}

/// What a turn writes besides its lines, stored with its reply by the group
/// commit ([`Conversations::insert_answer`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnWrites {
    /// Audit entries (as `AuditTrail::append`).
    pub audit: Vec<AuditRow>,
    /// The skill revisions the turn followed (as `Skills::record_uses`).
    pub skill_uses: Vec<crate::store::skills::SkillUse>,
}

impl TurnWrites {
    pub fn is_empty(&self) -> bool {
        self.audit.is_empty() && self.skill_uses.is_empty()
    }
}

/// One audit entry to append (see `AuditTrail::append`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    pub org: String,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub detail: crate::admin_text::AdminText,
    pub at: i64,
}

/// What a queued job writes.
enum Work {
    Line(QueuedLine),
    /// A turn's reply lines, stored together (a crash keeps all or none),
    /// with the turn's other writes.
    Replies(Vec<QueuedLine>, Box<TurnWrites>),
    Archive(QueuedArchive),
}

/// Queued work and who waits for it: the line's id (`None`: its platform id
/// was seen before), or the archive's (`None`: its slice was taken first).
struct Job {
    work: Work,
    done: oneshot::Sender<Result<Option<i64>>>,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// A task is storing batches (and will look at the queue again).
    running: bool,
}

/// The group commit of conversation lines (one per [`Db`], shared by its clones).
#[derive(Default, Debug)]
pub(crate) struct Lines {
    queue: Mutex<QueueCell>,
}

/// `Queue` behind a `Debug` that shows only its length.
#[derive(Default)]
struct QueueCell(Queue);

impl std::fmt::Debug for QueueCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} queued", self.0.jobs.len())
    }
}

impl Lines {
    fn lock(&self) -> MutexGuard<'_, QueueCell> {
        // The queue is only pushed to and drained; a panic elsewhere leaves it whole.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queue `m` (and its seen mark) and wait until the transaction that
    /// holds it has committed.
    pub(super) async fn store(
        self: &Arc<Self>,
        pool: &AnyPool,
        m: &NewMessage<'_>,
        seen: Option<&str>,
    ) -> Result<Option<i64>> {
        self.queue(pool, Work::Line(queued(m, seen, None))).await
    }

    /// Queue a turn's reply lines, answering `reply_to`, as one job, and wait
    /// until the transaction that holds them has committed.
    pub(super) async fn replies(
        self: &Arc<Self>,
        pool: &AnyPool,
        lines: &[NewMessage<'_>],
        reply_to: i64,
        writes: TurnWrites,
    ) -> Result<Option<i64>> {
        let lines = lines
            .iter()
            .map(|m| queued(m, None, Some(reply_to)))
            .collect();
        self.queue(pool, Work::Replies(lines, Box::new(writes)))
            .await
    }

    /// Queue the archive of a slice ([`Db::archive_slice`]) and wait until
    /// the transaction that holds it has committed.
    pub(in crate::store) async fn archive(
        self: &Arc<Self>,
        pool: &AnyPool,
        a: &NewArchive<'_>,
    ) -> Result<Option<i64>> {
        self.queue(pool, Work::Archive(a.into())).await
    }

    /// Queue `work`, start the storing task when none runs, and wait for the commit.
    async fn queue(self: &Arc<Self>, pool: &AnyPool, work: Work) -> Result<Option<i64>> {
        let (done, stored) = oneshot::channel();
        let start = {
            let mut q = self.lock();
            q.0.jobs.push(Job { work, done });
            !std::mem::replace(&mut q.0.running, true)
        };
        if start {
            // Its own task: a caller that stops waiting never cuts a batch short.
            tokio::spawn(drain(self.clone(), pool.clone()));
        }
        stored.await.map_err(|_| StoreError::Unreachable {
            what: "the message writer".into(),
            reason: "it stopped before the transaction committed (shutting down)".into(),
        })?
    }
}

/// `m` as queued, with the platform id it spends and the line it answers.
fn queued(m: &NewMessage<'_>, seen: Option<&str>, reply_to: Option<i64>) -> QueuedLine {
    QueuedLine {
        org: m.org.into(),
        agent: m.agent.into(),
        channel: m.channel.into(),
        conversation: m.conversation.into(),
        conversation_kind: m.conversation_kind.into(),
        author: m.author.into(),
        sender: m.sender.map(str::to_string),
        sender_role: m.sender_role.map(str::to_string),
        text: m.text.into(),
        said_at: m.said_at,
        seen: seen.map(str::to_string),
        reply_to,
    }
}

/// Clears `running` if the storing task ends without finding the queue empty
/// (its runtime shut down, or it panicked), dropping what waits: those
/// callers hear an error, and the next line starts a new task.
struct Running {
    lines: Arc<Lines>,
    finished: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.finished {
            let mut q = self.lines.lock();
            q.0.running = false;
            q.0.jobs.clear();
        }
    }
}

/// Store batches until the queue is empty.
async fn drain(lines: Arc<Lines>, pool: AnyPool) {
    let mut running = Running {
        lines,
        finished: false,
    };
    loop {
        let batch: Vec<Job> = {
            let mut q = running.lines.lock();
            if q.0.jobs.is_empty() {
                q.0.running = false;
                running.finished = true;
                return;
            }
            let n = q.0.jobs.len().min(MAX_BATCH);
            q.0.jobs.drain(..n).collect()
        };
        let results: Vec<Result<Option<i64>>> = match store_batch(&pool, &batch).await {
            Ok(ids) => ids.into_iter().map(Ok).collect(),
            // One line's failure must not fail the others: each alone, in its own transaction.
            Err(e) if batch.len() == 1 => vec![Err(e)],
            Err(e) => {
                tracing::warn!(error = %e, lines = batch.len(), "a batch of lines failed; storing them one by one");
                let mut each = Vec::with_capacity(batch.len());
                for job in &batch {
                    each.push(
                        store_batch(&pool, std::slice::from_ref(job))
                            .await
                            .and_then(|ids| {
                                ids.into_iter().next().ok_or_else(|| {
                                    StoreError::Corrupt("a stored line returned no id".into())
                                })
                            }),
                    );
                }
                each
            }
        };
        for (job, result) in batch.into_iter().zip(results) {
            // A caller that stopped waiting has its line stored all the same.
            let _ = job.done.send(result);
        }
    }
}

/// Every job of `batch` in one transaction: per job, its id, or `None` when
/// its platform id was seen before (nothing stored for it) or its archive's
/// slice was taken first. The lines take two statements whatever the
/// batch's size, one for the lines and one for the seen marks (a third
/// deletes lines that were redeliveries, rarely): on SQLite
/// each statement is a hand-off to the connection's thread and back, which
/// under load cost more than the writing. An archive takes two of its own
/// (they are one a conversation every hundred lines).
async fn store_batch(pool: &AnyPool, batch: &[Job]) -> Result<Vec<Option<i64>>> {
    let lines: Vec<&QueuedLine> = batch
        .iter()
        .flat_map(|job| match &job.work {
            Work::Line(line) => std::slice::from_ref(line),
            Work::Replies(lines, _) => lines.as_slice(),
            Work::Archive(_) => &[],
        })
        .collect();
    let mut tx = crate::store::begin(pool).await?;
    let line_ids = insert_lines(&mut tx, &lines).await?;
    let mut stored = spend_platform_ids(&mut tx, &lines, &line_ids)
        .await?
        .into_iter();
    let mut ids = Vec::with_capacity(batch.len());
    for job in batch {
        ids.push(match &job.work {
            Work::Line(_) => stored.next().flatten(),
            // Reply lines spend no platform id: each is stored; the first's id.
            Work::Replies(lines, writes) => {
                let mut first = None;
                for _ in lines {
                    first = first.or(stored.next().flatten());
                }
                turn_writes_in(&mut tx, writes).await?;
                first
            }
            // After the lines: their ids are past any slice's last line.
            Work::Archive(a) => archive_in(&mut tx, a).await?,
        });
    }
    tx.commit().await?;
    Ok(ids)
}

/// A turn's other writes, in its reply's transaction: a statement per
/// entry, and none for a turn that has none (most turns).
async fn turn_writes_in(conn: &mut AnyConnection, writes: &TurnWrites) -> Result<()> {
    for a in &writes.audit {
        let by = crate::store::Act {
            org: &a.org,
            actor: &a.actor,
            at: a.at,
        };
        by.audit(&mut *conn, &a.action, &a.target, &a.detail)
            .await?;
    }
    for u in &writes.skill_uses {
        crate::store::skills::record_use(&mut *conn, u).await?;
    }
    Ok(())
}

/// Mark the platform ids of `lines` (stored as `ids`) seen, each mark
/// keeping its line; per line, its id when it stays stored: it has no
/// platform id, or its id was new (the first line of a batch that holds an
/// id twice). A line whose id was spent before is a redelivery and is
/// deleted again, in this transaction: the lines go in first so that the
/// marks can name them without a third statement, and redeliveries that
/// reach the writer are rare (the turn's first read stops most).
async fn spend_platform_ids(
    conn: &mut AnyConnection,
    lines: &[&QueuedLine],
    ids: &[i64],
) -> Result<Vec<Option<i64>>> {
    let marked: Vec<(&QueuedLine, i64)> = lines
        .iter()
        .zip(ids)
        .filter(|(line, _)| line.seen.is_some())
        .map(|(line, id)| (*line, *id))
        .collect();
    let mut kept: HashSet<i64> = HashSet::new();
    if !marked.is_empty() {
        let mut q =
            sql!("INSERT INTO seen_messages (org, channel, platform_id, seen_at, line) VALUES ");
        for (i, (line, id)) in marked.iter().enumerate() {
            q = q
                .push(if i == 0 { "(" } else { ", (" })
                .bind(line.org.as_str())
                .push(", ")
                .bind(line.channel.as_str())
                .push(", ")
                .bind(line.seen.as_deref())
                .push(", ")
                .bind(line.said_at)
                .push(", ")
                .bind(*id)
                .push(")");
        }
        let rows: Vec<(i64,)> = q
            .push(" ON CONFLICT DO NOTHING RETURNING line")
            .all(&mut *conn)
            .await?;
        kept.extend(rows.into_iter().map(|(id,)| id));
        let spent: Vec<i64> = marked
            .iter()
            .map(|(_, id)| *id)
            .filter(|id| !kept.contains(id))
            .collect();
        if !spent.is_empty() {
            sql!("DELETE FROM messages WHERE id IN (")
                .bind_list(spent)
                .push(")")
                .exec(&mut *conn)
                .await?;
        }
    }
    Ok(lines
        .iter()
        .zip(ids)
        .map(|(line, id)| (line.seen.is_none() || kept.contains(id)).then_some(*id))
        .collect())
}

/// Insert `lines` in one statement; their ids, in the order of `lines`.
/// The ids are read back sorted: both engines number the rows of one
/// statement in the order it lists them (SQLite's AUTOINCREMENT, a
/// PostgreSQL sequence). Each row's conversation and author are checked
/// against its line, so a misnumbering fails the batch (its lines are then
/// stored one by one) rather than give a turn another line's id.
async fn insert_lines(conn: &mut AnyConnection, lines: &[&QueuedLine]) -> Result<Vec<i64>> {
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let mut q = sql!("INSERT INTO messages (org, agent, channel, conversation, conversation_kind, author, sender, sender_role, text, said_at, platform_id, reply_to) VALUES ");
    for (i, line) in lines.iter().enumerate() {
        q = q
            .push(if i == 0 { "(" } else { ", (" })
            .bind(line.org.as_str())
            .push(", ")
            .bind(line.agent.as_str())
            .push(", ")
            .bind(line.channel.as_str())
            .push(", ")
            .bind(line.conversation.as_str())
            .push(", ")
            .bind(line.conversation_kind.as_str())
            .push(", ")
            .bind(line.author.as_str())
            .push(", ")
            .bind(line.sender.as_deref())
            .push(", ")
            .bind(line.sender_role.as_deref())
            .push(", ")
            .bind(line.text.as_str())
            .push(", ")
            .bind(line.said_at)
            .push(", ")
            .bind(line.seen.as_deref())
            .push(", ")
            .bind(line.reply_to)
            .push(")");
    }
    let mut rows: Vec<(i64, String, String)> = q
        .push(" RETURNING id, conversation, author")
        .all(&mut *conn)
        .await?;
    rows.sort_unstable_by_key(|(id, _, _)| *id);
    if rows.len() != lines.len()
        || rows
            .iter()
            .zip(lines)
            .any(|((_, conv, author), line)| *conv != line.conversation || *author != line.author)
    {
        return Err(StoreError::Corrupt(
            "the lines of a batch came back in another order".into(),
        ));
    }
    Ok(rows.into_iter().map(|(id, _, _)| id).collect())
}
