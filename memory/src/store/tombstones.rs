//! Tombstones: what a forgotten record leaves so that it is not relearned,
//! and nothing to read back or guess. A tombstone is a keyed digest
//! (HMAC-SHA256 with this store's secret, `store_secrets.tombstone`,
//! generated once) of the record's text and, when it was learned from a
//! message, of that message: a reworded item from the same message stays
//! forgotten too. Each digest is bound to the record's place (organisation,
//! agent, scope, owner).

use super::{Db, Records, Result};
use crate::model::{source_message, MemoryRecord, NewRecord, Scope};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, AnyPool};

/// What a forgotten record's subject and content are replaced with.
pub const FORGOTTEN: &str = "[forgotten]";

/// The name of the tombstones' secret in `store_secrets`.
const SECRET: &str = "tombstone";

/// The prefix of a tombstone written before tombstones were keyed: an
/// unkeyed SHA-256 of the text, in the record's content.
const LEGACY: &str = "forgotten sha256:";

/// This store's tombstone key.
#[derive(Clone)]
pub(super) struct TombstoneKey(std::sync::Arc<Vec<u8>>);

impl std::fmt::Debug for TombstoneKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TombstoneKey(..)")
    }
}

impl Default for TombstoneKey {
    /// No key yet (a `Db` before [`TombstoneKey::load`]).
    fn default() -> Self {
        TombstoneKey(std::sync::Arc::new(Vec::new()))
    }
}

/// Where a tombstone binds: the record's place.
struct Place<'a> {
    org: &'a str,
    agent: &'a str,
    scope: Scope,
    owner: Option<&'a str>,
}

impl TombstoneKey {
    /// The store's key, made the first time any replica connects.
    pub(super) async fn load(pool: &AnyPool) -> Result<TombstoneKey> {
        let fresh = hex::encode(rand::random::<[u8; 32]>());
        let text =
            "INSERT INTO store_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING";
        sql!(text, SECRET, fresh).exec(pool).await?;
        let (value,): (String,) = sql!("SELECT value FROM store_secrets WHERE name = $1", SECRET)
            .one(pool)
            .await?;
        let key = hex::decode(&value)
            .map_err(|e| super::StoreError::Corrupt(format!("store secret: {e}")))?;
        Ok(TombstoneKey(std::sync::Arc::new(key)))
    }

    /// The keyed digest of `what` (`text` or `message`) `value` in `place`.
    fn digest(&self, place: &Place<'_>, what: &str, value: &str) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        for part in [
            place.org,
            place.agent,
            place.scope.as_str(),
            place.owner.unwrap_or_default(),
            what,
            value,
        ] {
            mac.update(part.as_bytes());
            mac.update(&[0]);
        }
        hex::encode(mac.finalize().into_bytes())
    }

    /// The digests a record in `place` with `content`, learned from
    /// `source`, is recognised by: its text's (over the text's SHA-256, so
    /// tombstones written before they were keyed convert), and its source
    /// message's when it has one.
    fn digests(&self, place: &Place<'_>, text_sha256: &str, source: &str) -> Vec<String> {
        let mut out = vec![self.digest(place, "text", text_sha256)];
        if let Some(message) = source_message(source) {
            out.push(self.digest(place, "message", &message.to_string()));
        }
        out
    }

    /// The digests `r` would match a tombstone by.
    fn of_new(&self, r: &NewRecord) -> Vec<String> {
        let place = Place {
            org: &r.org,
            agent: &r.agent,
            scope: r.scope,
            owner: r.owner.as_deref(),
        };
        self.digests(&place, &sha256(&r.content), &r.source)
    }
}

fn sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Bury record `r` on the caller's transaction: its tombstones written, its
/// subject and content replaced by [`FORGOTTEN`], and the reasons of the
/// revisions that name it (a judge's may quote it) cleared. The caller has
/// already taken it out of the index and the vectors (status `deleted`).
pub(super) async fn bury(
    conn: &mut AnyConnection,
    key: &TombstoneKey,
    r: &MemoryRecord,
    text_sha256: &str,
    now: i64,
) -> Result<()> {
    let place = Place {
        org: &r.org,
        agent: &r.agent,
        scope: r.scope,
        owner: r.owner.as_deref(),
    };
    for digest in key.digests(&place, text_sha256, &r.source) {
        let text = "INSERT INTO memory_tombstones (org, owner, record_id, digest, created_at) VALUES ($1, $2, $3, $4, $5)";
        sql!(text, &r.org, &r.owner, r.id, digest, now)
            .exec(&mut *conn)
            .await?;
    }
    let text = "UPDATE memory_records SET subject = $1, content = $1 WHERE org = $2 AND id = $3";
    sql!(text, FORGOTTEN, &r.org, r.id).exec(&mut *conn).await?;
    let text = "UPDATE memory_revisions SET reason = $1 WHERE org = $2 AND (retired_id = $3 OR replacing_id = $3)";
    sql!(text, FORGOTTEN, &r.org, r.id).exec(&mut *conn).await?;
    Ok(())
}

/// The forgotten record `r` (a new one: its text, place and source) is a
/// tombstone of, if any.
pub(super) async fn buried(
    conn: &mut AnyConnection,
    key: &TombstoneKey,
    r: &NewRecord,
) -> Result<Option<i64>> {
    let digests = key.of_new(r);
    let row: Option<(i64,)> = sql!(
        "SELECT record_id FROM memory_tombstones WHERE org = $1 AND digest IN (",
        &r.org
    )
    .bind_list(digests)
    .push(") ORDER BY id DESC LIMIT 1")
    .opt(conn)
    .await?;
    Ok(row.map(|(id,)| id))
}

/// Drop the tombstones of what `owner` owned (an erasure: nothing of them is kept).
pub(super) async fn drop_owned(conn: &mut AnyConnection, org: &str, owner: &str) -> Result<u64> {
    let text = "DELETE FROM memory_tombstones WHERE org = $1 AND owner = $2";
    sql!(text, org, owner).exec(conn).await
}

impl Db {
    /// Convert the tombstones written before they were keyed (an unkeyed
    /// SHA-256 of the text in the record's content, the subject kept): each
    /// becomes keyed digests, its subject and content cleared. Run at connect;
    /// returns how many.
    pub(super) async fn convert_legacy_tombstones(&self) -> Result<u64> {
        let mut tx = super::begin(&self.pool).await?;
        let text = format!("{} WHERE status = $1 AND content LIKE $2", super::RECORD);
        let old: Vec<MemoryRecord> = sql!(text, crate::Status::Deleted, format!("{LEGACY}%"))
            .all(&mut *tx)
            .await?;
        for r in &old {
            let hash = r.content.trim_start_matches(LEGACY).to_string();
            bury(&mut tx, &self.tombstone_key, r, &hash, r.recorded_at).await?;
        }
        tx.commit().await?;
        Ok(old.len() as u64)
    }
}

impl Records<'_> {
    /// The tombstones of `org` as stored (digests only): what is left of
    /// forgotten records besides their place.
    pub async fn tombstone_digests(&self, org: &str) -> Result<Vec<String>> {
        let text = "SELECT digest FROM memory_tombstones WHERE org = $1 ORDER BY id";
        let rows: Vec<(String,)> = sql!(text, org).all(&self.db.pool).await?;
        Ok(rows.into_iter().map(|(d,)| d).collect())
    }
}

/// The SHA-256 a tombstone digests a text by.
pub(super) fn text_sha256(text: &str) -> String {
    sha256(text)
}
