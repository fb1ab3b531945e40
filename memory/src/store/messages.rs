//! Conversation lines and seen platform ids.
//!
//! Lines are written by a group commit: concurrent turns' lines (and the
//! seen-id marks that go with them, and trims' archives) are queued, and one
//! task at a time stores everything queued in one transaction, then answers
//! each caller.
//! A caller hears its line's id only after that transaction committed, so
//! whatever it acknowledges is on disk; many turns share one commit (on
//! SQLite, one WAL sync) instead of paying one each.

use super::pairing::{User, UserStatus};
use super::{Conversations, Result, StoreError};
use crate::model::{Role, StoredMessage};

mod group_commit;
mod speakers;

pub(crate) use group_commit::Lines;
pub use group_commit::{AuditRow, TurnWrites};
pub(crate) use speakers::Speakers;
pub use speakers::SPEAKER_AUDIT;

/// A conversation line about to be stored.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub channel: &'a str,
    pub conversation: &'a str,
    pub conversation_kind: &'a str,
    pub author: &'a str,
    pub sender: Option<&'a str>,
    pub sender_role: Option<&'a str>,
    pub text: &'a str,
    pub said_at: i64,
}

const SEEN: &str = "INSERT INTO seen_messages (org, channel, platform_id, seen_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";

const SELECT: &str = "SELECT id, org, agent, channel, conversation, conversation_kind, author, sender, sender_role, text, said_at FROM messages";

/// A line of conversation `$1`, `$2`, `$3` (org, agent, conversation) is live
/// when it is past the conversation's watermark, the newest trimmed line.
const LIVE: &str = "id > COALESCE((SELECT trimmed_through FROM live_history WHERE org = $1 AND agent = $2 AND conversation = $3), 0)";

impl Conversations<'_> {
    /// Record a platform message id; false when it was seen before (a redelivery).
    pub async fn mark_seen(
        &self,
        org: &str,
        channel: &str,
        platform_id: &str,
        now: i64,
    ) -> Result<bool> {
        let q = sql!(SEEN, org, channel, platform_id, now);
        Ok(q.exec(&self.db.pool).await? == 1)
    }

    /// A turn's first read, in one statement: whether `platform_id` was seen
    /// before in `channel` (a redelivery), the active paired user the stored
    /// channel identity `stored_id` is linked to (as [`Db::user_by_identity`]),
    /// and, when `view` asks for it, the conversation as a reply reads it
    /// ([`Db::conversation_view`], every live line so far: the message is
    /// not stored yet). The user row is read every time, so a revocation
    /// holds from the next turn on; their roles and audit entries are kept
    /// while the organisation's people generation stands (`speakers`).
    pub async fn opening(&self, o: &Opening<'_>) -> Result<Opened> {
        let (view, ask) = match &o.view {
            Some(v) => (v, true),
            None => (&NO_VIEW, false),
        };
        let rows = self.view_rows(o.org, view, i64::MAX, Some(o)).await?;
        let mut opened = Opened {
            seen: false,
            user: None,
            view: None,
            roles: Vec::new(),
            skill_generation: o.view.is_some().then_some(0),
            audited: Vec::new(),
        };
        let mut read = ConversationView::default();
        let mut summaries: Vec<(i64, String)> = Vec::new();
        let mut people_generation = 0;
        for row in rows {
            if row.0 == OPENING_PART {
                let (_, seen, user_id, name, role, status, _, _, updated_at) = row;
                opened.seen = seen > 0;
                opened.user = match (user_id, name, role, status, updated_at) {
                    (Some(user_id), Some(name), Some(role), Some(status), Some(updated_at)) => {
                        Some(User {
                            org: o.org.to_string(),
                            user_id,
                            name,
                            role: Role::try_from(role)?,
                            status: UserStatus::try_from(status)?,
                            updated_at,
                        })
                    }
                    _ => None,
                };
            } else if row.0 == SKILLS_PART {
                if o.view.is_some() {
                    opened.skill_generation = Some(row.1);
                }
            } else if row.0 == PEOPLE_PART {
                people_generation = row.1;
            } else {
                read.take(o.org, view, row, &mut summaries);
            }
        }
        if let Some(user) = &opened.user {
            let facts = self
                .speaker_facts(o.org, &user.user_id, people_generation, o.audited)
                .await?;
            opened.roles = facts.roles;
            opened.audited = facts.audited;
        }
        if ask {
            opened.view = Some(read.finish(summaries));
        }
        Ok(opened)
    }

    /// Whether a platform message id was seen before (a redelivery).
    pub async fn is_seen(&self, org: &str, channel: &str, platform_id: &str) -> Result<bool> {
        let text = "SELECT seen_at FROM seen_messages WHERE org = $1 AND channel = $2 AND platform_id = $3";
        let row: Option<(i64,)> = sql!(text, org, channel, platform_id)
            .opt(&self.db.pool)
            .await?;
        Ok(row.is_some())
    }

    /// Store one line; its id once it is committed (see the module doc).
    pub async fn insert_message(&self, m: &NewMessage<'_>) -> Result<i64> {
        self.db
            .lines
            .store(&self.db.writer, m, None)
            .await?
            .ok_or_else(|| StoreError::Corrupt("a line without a platform id was refused".into()))
    }

    /// Store `m` and, in the same transaction, mark `platform_id` seen: a
    /// crash or a failed insert leaves neither, so the platform's retry runs.
    /// `None` (nothing stored) when the id was seen before: a redelivery.
    /// Returns only once the transaction committed.
    pub async fn insert_message_once(
        &self,
        m: &NewMessage<'_>,
        platform_id: Option<&str>,
    ) -> Result<Option<i64>> {
        self.db.lines.store(&self.db.writer, m, platform_id).await
    }

    /// Store a turn's reply lines, each naming `reply_to`, the inbound line
    /// they answer, in one transaction: a retry of that message finds all of
    /// them or none ([`Conversations::answer_of`]). Returns once committed.
    pub async fn insert_replies(&self, lines: &[NewMessage<'_>], reply_to: i64) -> Result<()> {
        self.insert_answer(lines, reply_to, TurnWrites::default())
            .await
    }

    /// [`Conversations::insert_replies`], with what else the turn writes
    /// (`writes`: its audit entries, the skills it followed) in the same
    /// transaction of the group commit: no transaction of their own, and a
    /// crash keeps the reply and them, or neither.
    pub async fn insert_answer(
        &self,
        lines: &[NewMessage<'_>],
        reply_to: i64,
        writes: TurnWrites,
    ) -> Result<()> {
        if lines.is_empty() && writes.is_empty() {
            return Ok(());
        }
        self.db
            .lines
            .replies(&self.db.writer, lines, reply_to, writes)
            .await
            .map(|_| ())
    }

    /// The message that spent `platform_id` in `channel` (as
    /// [`Conversations::insert_message_once`] stored it: its seen mark keeps
    /// the line) and the reply lines stored for it, oldest first; `None` when
    /// the id is not spent by a stored line (unseen, or marked alone by
    /// [`Conversations::mark_seen`]).
    pub async fn answer_of(
        &self,
        org: &str,
        channel: &str,
        platform_id: &str,
    ) -> Result<Option<Answer>> {
        let text = "SELECT line FROM seen_messages WHERE org = $1 AND channel = $2 AND platform_id = $3 AND line IS NOT NULL";
        let Some((message,)): Option<(i64,)> = sql!(text, org, channel, platform_id)
            .opt(&self.db.pool)
            .await?
        else {
            return Ok(None);
        };
        let replies = self.messages_where(org, "reply_to = $2", message).await?;
        Ok(Some(Answer { message, replies }))
    }

    /// Forget the seen ids of `org` marked before `before` (a redelivery
    /// comes within minutes; the ids need not be kept for ever).
    pub async fn prune_seen(&self, org: &str, before: i64) -> Result<u64> {
        let text = "DELETE FROM seen_messages WHERE org = $1 AND seen_at < $2";
        sql!(text, org, before).exec(&self.db.pool).await
    }

    /// The live (untrimmed) history of a conversation, oldest first.
    pub async fn history(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
    ) -> Result<Vec<StoredMessage>> {
        let text = format!(
            "{SELECT} WHERE org = $1 AND agent = $2 AND conversation = $3 AND {LIVE} ORDER BY id"
        );
        sql!(text, org, agent, conversation)
            .all(&self.db.pool)
            .await
    }

    /// `sender`'s newest line in a conversation before message `before`,
    /// its id and text: the turn a "Remember this?" asked at (for a yes or
    /// no to answer), and the line a credential may be completed across.
    pub async fn previous_line_of(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        sender: &str,
        before: i64,
    ) -> Result<Option<(i64, String)>> {
        let text =
            "SELECT id, text FROM messages WHERE org = $1 AND agent = $2 AND conversation = $3 \
                    AND sender = $4 AND id < $5 ORDER BY id DESC LIMIT 1";
        sql!(text, org, agent, conversation, sender, before)
            .opt(&self.db.pool)
            .await
    }

    /// The newest `limit` live lines of a conversation said before message
    /// `before` (a reply's history window), newest first.
    pub async fn live_before(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        before: i64,
        limit: i64,
    ) -> Result<Vec<StoredMessage>> {
        let text = format!(
            "{SELECT} WHERE org = $1 AND agent = $2 AND conversation = $3 AND {LIVE} AND id < $4 ORDER BY id DESC LIMIT $5"
        );
        sql!(text, org, agent, conversation, before, limit)
            .all(&self.db.pool)
            .await
    }

    /// What a reply reads of its conversation, in one statement: the newest
    /// `lines` live lines said before message `before` (newest first), the
    /// size of the whole live history as it stands (the trim check's
    /// figures, without a second read; one row of `live_history`, which the
    /// database keeps current), and the newest `summaries` summaries of
    /// trimmed history.
    pub async fn conversation_view(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        before: i64,
        lines: i64,
        summaries: i64,
    ) -> Result<ConversationView> {
        let asked = ViewOf {
            agent,
            conversation,
            lines,
            summaries,
        };
        let mut view = ConversationView::default();
        let mut found: Vec<(i64, String)> = Vec::new();
        for row in self.view_rows(org, &asked, before, None).await? {
            view.take(org, &asked, row, &mut found);
        }
        Ok(view.finish(found))
    }

    /// The rows of a conversation's view (parts 0–2), and with `opening`
    /// (its channel, platform id, stored id and audit actions asked about)
    /// the turn's first answers (parts 3, 5 and 7).
    async fn view_rows(
        &self,
        org: &str,
        v: &ViewOf<'_>,
        before: i64,
        opening: Option<&Opening<'_>>,
    ) -> Result<Vec<ViewRow>> {
        // Parts told apart by `part`; the shapes padded to one, with typed
        // NULLs (PostgreSQL types an untyped NULL of a subquery as text).
        let view = format!("SELECT * FROM (SELECT CAST(0 AS BIGINT) AS part, id, channel, conversation_kind, author, sender, sender_role, text, said_at \
                      FROM messages WHERE org = $1 AND agent = $2 AND conversation = $3 AND {LIVE} AND id < $4 \
                      ORDER BY id DESC LIMIT $5) AS recent \
                    UNION ALL SELECT CAST(1 AS BIGINT), messages, CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), chars \
                      FROM live_history WHERE org = $1 AND agent = $2 AND conversation = $3 \
                    UNION ALL SELECT * FROM (SELECT CAST(2 AS BIGINT), id, CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), summary, CAST(NULL AS BIGINT) \
                      FROM archives WHERE org = $1 AND agent = $2 AND conversation = $3 \
                      ORDER BY id DESC LIMIT $6) AS summaries");
        // Whether the platform id was seen (as `id`) and the sender's active
        // user (id, name, role, status as the first four texts; updated_at).
        let first = " UNION ALL SELECT CAST(3 AS BIGINT), \
                      (SELECT COUNT(*) FROM seen_messages WHERE org = $1 AND channel = $7 AND platform_id = $8), \
                      u.user_id, u.name, u.role, u.status, CAST(NULL AS TEXT), CAST(NULL AS TEXT), u.updated_at \
                      FROM (SELECT 1 AS one) AS k \
                      LEFT JOIN identities i ON i.org = $1 AND i.stored_id = $9 \
                      LEFT JOIN users u ON u.org = i.org AND u.user_id = i.user_id AND u.status = $10";
        let q = sql!(
            view,
            org,
            v.agent,
            v.conversation,
            before,
            v.lines.max(0),
            v.summaries.max(0)
        );
        // The agent's skills generation (as `Skills::generation`) and the
        // organisation's people generation (`speakers`: what is kept of the
        // sender's roles and audit entries holds while it stands).
        let more = " UNION ALL SELECT CAST(5 AS BIGINT), generation, CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS BIGINT) \
                      FROM skill_generations WHERE org = $1 AND agent = $2 \
                    UNION ALL SELECT CAST(7 AS BIGINT), COALESCE((SELECT generation FROM people_generations WHERE org = $1), 0), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS BIGINT)";
        let q = match opening {
            Some(o) => q
                .push(first)
                .arg(o.channel)
                .arg(o.platform_id)
                .arg(o.stored_id)
                .arg(UserStatus::Active)
                .push(more),
            None => q,
        };
        q.all(&self.db.pool).await
    }

    /// Size of a conversation's live history: (messages, characters), as the
    /// database keeps it in `live_history` (migration `0010_live_history`).
    pub async fn live_size(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
    ) -> Result<(i64, i64)> {
        let text = "SELECT messages, chars FROM live_history WHERE org = $1 AND agent = $2 AND conversation = $3";
        let size: Option<(i64, i64)> = sql!(text, org, agent, conversation)
            .opt(&self.db.pool)
            .await?;
        Ok(size.unwrap_or((0, 0)))
    }

    /// Messages of an org matching `condition` on `$2`, oldest first.
    pub(crate) async fn messages_where<T>(
        &self,
        org: &str,
        condition: &str,
        value: T,
    ) -> Result<Vec<StoredMessage>>
    where
        T: for<'q> sqlx::Encode<'q, sqlx::Any> + sqlx::Type<sqlx::Any> + Send,
    {
        let text = format!("{SELECT} WHERE org = $1 AND {condition} ORDER BY id");
        sql!(text, org, value).all(&self.db.pool).await
    }
}

/// A stored message and its stored reply ([`Conversations::answer_of`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The inbound line's id.
    pub message: i64,
    /// The reply lines that answer it, oldest first; none when its turn
    /// never finished (or said nothing).
    pub replies: Vec<StoredMessage>,
}

/// A conversation as a reply reads it ([`Db::conversation_view`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConversationView {
    /// The newest live lines before the message being answered, newest first.
    pub recent: Vec<StoredMessage>,
    /// The whole live history's size when it was read.
    pub live: LiveSize,
    /// Summaries of trimmed history, newest first.
    pub summaries: Vec<String>,
}

/// How much live (untrimmed) history a conversation holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveSize {
    pub messages: i64,
    /// Characters, as the engines count them (`LENGTH`) and `str::chars` does.
    pub chars: i64,
}

/// One row of a conversation's view, its part first (see `Db::view_rows`).
type ViewRow = (
    i64,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
);

/// The part of `Db::view_rows` that answers the turn's first questions.
const OPENING_PART: i64 = 3;
/// The parts of `Db::view_rows` with the agent's skills generation and the
/// organisation's people generation.
const SKILLS_PART: i64 = 5;
const PEOPLE_PART: i64 = 7;

/// A view that reads nothing (an opening that does not ask for one).
const NO_VIEW: ViewOf<'static> = ViewOf {
    agent: "",
    conversation: "",
    lines: 0,
    summaries: 0,
};

/// Which conversation's view to read, and how much of it.
#[derive(Debug, Clone, Copy)]
pub struct ViewOf<'a> {
    pub agent: &'a str,
    pub conversation: &'a str,
    /// Live lines of the window, at most.
    pub lines: i64,
    /// Summaries of trimmed history, at most.
    pub summaries: i64,
}

/// What a turn asks the store first ([`Db::opening`]).
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub org: &'a str,
    pub channel: &'a str,
    /// The message's id on its platform, namespaced (a redelivery is seen).
    pub platform_id: Option<&'a str>,
    /// The sender's stored channel identity.
    pub stored_id: Option<&'a str>,
    /// The conversation's view, when the turn will want it.
    pub view: Option<ViewOf<'a>>,
    /// Audit actions whose entries about the sender's user the turn needs to
    /// know of (e.g. `pairing.approve`): [`Opened::audited`] says which exist.
    pub audited: &'a [&'a str],
}

/// The answers of [`Db::opening`].
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    pub seen: bool,
    pub user: Option<User>,
    pub view: Option<ConversationView>,
    /// The work roles the user holds now, sorted (as `RoleMemory::roles_of`;
    /// none without a user).
    pub roles: Vec<String>,
    /// The view's agent's skills generation (as `Skills::generation`), when
    /// a view was asked for.
    pub skill_generation: Option<i64>,
    /// Which of [`Opening::audited`] the audit log holds about the user.
    pub audited: Vec<String>,
}

impl ConversationView {
    /// Add one row of parts 0–2 of `Db::view_rows`; summaries are collected apart.
    fn take(
        &mut self,
        org: &str,
        v: &ViewOf<'_>,
        row: ViewRow,
        summaries: &mut Vec<(i64, String)>,
    ) {
        let (part, id, channel, kind, author, sender, sender_role, text, said_at) = row;
        match part {
            0 => self.recent.push(StoredMessage {
                id,
                org: org.to_string(),
                agent: v.agent.to_string(),
                channel: channel.unwrap_or_default(),
                conversation: v.conversation.to_string(),
                conversation_kind: kind.unwrap_or_default(),
                author: author.unwrap_or_default(),
                sender,
                sender_role,
                text: text.unwrap_or_default(),
                said_at: said_at.unwrap_or_default(),
            }),
            1 => {
                self.live = LiveSize {
                    messages: id,
                    chars: said_at.unwrap_or_default(),
                }
            }
            _ => summaries.extend(text.map(|t| (id, t))),
        }
    }

    /// The view in its order: UNION ALL keeps each part's rows in order on
    /// both engines, but that is not promised.
    fn finish(mut self, mut summaries: Vec<(i64, String)>) -> Self {
        self.recent
            .sort_unstable_by_key(|m| std::cmp::Reverse(m.id));
        summaries.sort_unstable_by_key(|(id, _)| std::cmp::Reverse(*id));
        self.summaries = summaries.into_iter().map(|(_, s)| s).collect();
        self
    }
}
