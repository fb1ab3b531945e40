//! Optional embeddings: one vector per active record and model, searched by
//! cosine similarity within the places a scope may read, and fused with the
//! keyword ranking by [`Db::retrieve`] (reciprocal rank fusion).
//!
//! This crate does no HTTP: the gateway computes vectors (its `[embeddings]`
//! client) and hands them in — documents through [`Db::store_vectors`], a
//! query through the [`Embed`] it attaches with [`Db::with_embedder`].
//!
//! Storage (migration `0009_vectors`): PostgreSQL keeps them in a pgvector
//! column searched by the engine (`<=>`, cosine distance), added by
//! [`Db::enable_vectors`] only when embeddings are on. SQLite keeps
//! little-endian f32 blobs, and each process holds a compact copy of them in
//! memory ([`VectorCache`]: a sign bit per dimension for a first pass, one
//! byte per dimension for the ranking), grouped by organisation and
//! visibility key, so a search reads only the groups its scope may see and
//! never the database's rows. The copy follows the table by `seq`: every
//! insert and every drop is numbered, and a search first reads the newest
//! number (one row) and applies only what changed since.
//!
//! Governance: a vector exists only for an active record. Every status
//! change drops the record's vector in its own transaction (forget, retire,
//! supersede, erase); a vector is stored only if the record is still active
//! with the text it was computed from, so a record forgotten while its vector
//! was being computed gets none.

use super::fulltext::vis_key;
use super::Owned;
use super::{Backend, Db, Records, Result, StoreError};
use crate::model::{MemoryRecord, Scope, Status};
use sqlx::AnyConnection;
use std::collections::HashMap;
use std::sync::RwLock;

/// A query's vector, from the model `model`.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryVector {
    pub model: String,
    pub values: Vec<f32>,
    /// Records less similar than this (cosine) are not returned by the vector
    /// search: a nearest neighbour is not always a relevant one.
    pub min_similarity: f32,
}

/// What the gateway's embeddings client does for retrieval: the query's
/// vector, or none (embeddings off, the endpoint down or slow); retrieval is
/// then keyword only. Never an error: embeddings never fail a search.
#[async_trait::async_trait]
pub trait Embed: Send + Sync + std::fmt::Debug {
    async fn query(&self, text: &str) -> Option<QueryVector>;
    /// Records were written or activated: vectors are due (a background
    /// worker computes them, off the caller's path).
    fn written(&self) {}
}

/// An active record without a vector of the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Unembedded {
    pub id: i64,
    pub org: String,
    pub content: String,
}

/// How many of the newest records a worker's pass looks at (a backfill looks at all).
pub const RECENT_WINDOW: i64 = 1_000;

fn backend_of(conn: &AnyConnection) -> Backend {
    if conn.backend_name().eq_ignore_ascii_case("sqlite") {
        Backend::Sqlite
    } else {
        Backend::Postgres
    }
}

/// A pgvector literal, `[0.1,0.2,…]`.
pub(super) fn literal(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
    format!("[{}]", parts.join(","))
}

/// `v` scaled to unit length (a zero vector stays zero).
pub(super) fn unit(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter().map(|x| x / norm).collect()
    } else {
        vec![0.0; v.len()]
    }
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Drop record `id`'s vector (it is no longer active, or its place changed).
pub(super) async fn drop_vector(conn: &mut AnyConnection, id: i64) -> Result<()> {
    let text = "DELETE FROM memory_vectors WHERE record_id = $1";
    let dropped = sql!(text, id).exec(&mut *conn).await?;
    if dropped > 0 && backend_of(conn) == Backend::Sqlite {
        let seq = next_seq(conn).await?;
        let text = "INSERT INTO memory_vectors_dropped (seq, record_id) VALUES ($1, $2)";
        sql!(text, seq, id).exec(&mut *conn).await?;
    }
    Ok(())
}

/// Drop record `r`'s vector unless it is active and still read under the
/// place its vector was stored with (a move to the person tier changes it;
/// the gateway computes a new one).
pub(super) async fn keep_current(conn: &mut AnyConnection, r: &MemoryRecord) -> Result<()> {
    let text = "SELECT vis FROM memory_vectors WHERE record_id = $1";
    let stored: Option<(String,)> = sql!(text, r.id).opt(&mut *conn).await?;
    let Some((vis,)) = stored else {
        return Ok(());
    };
    if r.status != Status::Active || vis != vis_key(r.scope, &r.agent, r.owner.as_deref()) {
        drop_vector(conn, r.id).await?;
    }
    Ok(())
}

/// Drop the vectors of the records `owned` names: before they are deleted.
pub(super) async fn drop_owned(conn: &mut AnyConnection, owned: &Owned<'_>) -> Result<()> {
    let ids: Vec<(i64,)> = owned
        .rows("SELECT record_id FROM memory_vectors WHERE record_id IN (SELECT id FROM memory_records")
        .push(")")
        .all(&mut *conn)
        .await?;
    for (id,) in ids {
        drop_vector(conn, id).await?;
    }
    Ok(())
}

/// The next change number of `memory_vectors` (SQLite).
async fn next_seq(conn: &mut AnyConnection) -> Result<i64> {
    let text = "UPDATE memory_vectors_seq SET seq = seq + 1 WHERE id = 1 RETURNING seq";
    let (seq,) = sql!(text).one(&mut *conn).await?;
    Ok(seq)
}

/// One place's vectors in memory: ids, sign bits, bytes and their scales.
#[derive(Debug, Default)]
struct Group {
    dims: usize,
    ids: Vec<i64>,
    bits: Vec<u64>,
    bytes: Vec<i8>,
    scales: Vec<f32>,
}

impl Group {
    fn words(&self) -> usize {
        self.dims.div_ceil(64)
    }

    fn push(&mut self, id: i64, v: &[f32]) {
        let words = self.words();
        let at = self.bits.len();
        self.bits.resize(at + words, 0);
        for (i, x) in v.iter().enumerate() {
            if *x > 0.0 {
                self.bits[at + i / 64] |= 1 << (i % 64);
            }
        }
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        self.bytes.extend(
            v.iter()
                .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
        );
        self.scales.push(scale);
        self.ids.push(id);
    }

    fn remove(&mut self, id: i64) {
        let Some(i) = self.ids.iter().position(|x| *x == id) else {
            return;
        };
        let last = self.ids.len() - 1;
        let (w, d) = (self.words(), self.dims);
        self.ids.swap(i, last);
        self.scales.swap(i, last);
        for k in 0..w {
            self.bits.swap(i * w + k, last * w + k);
        }
        for k in 0..d {
            self.bytes.swap(i * d + k, last * d + k);
        }
        self.ids.truncate(last);
        self.scales.truncate(last);
        self.bits.truncate(last * w);
        self.bytes.truncate(last * d);
    }

    /// Cosine similarity of the vector at `i` with the unit vector `q` probes.
    #[inline(always)]
    fn similarity(&self, i: usize, q: &Probe) -> f32 {
        let row = &self.bytes[i * self.dims..(i + 1) * self.dims];
        dot_bytes(row, &q.values) as f32 * q.scale * self.scales[i]
    }

    /// Start reading row `i`'s bytes into the cache.
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let row = &self.bytes[i * self.dims..(i + 1) * self.dims];
            for line in row.chunks(64) {
                // SAFETY: SSE is in x86-64's baseline, and a prefetch is a
                // hint that reads nothing and cannot fault.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr()) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// The ids and similarities of `rows` at least `min` similar to `q`.
    fn rerank(&self, rows: &[usize], q: &Probe, min: f32) -> Vec<(i64, f64)> {
        // The rows are scattered over the group's bytes (38 MB at 100k
        // records), so each is a wait for memory: ask for a later row's
        // bytes while this one is computed.
        const AHEAD: usize = 4;
        let mut out = Vec::with_capacity(rows.len());
        for (k, i) in rows.iter().enumerate() {
            if let Some(later) = rows.get(k + AHEAD) {
                self.prefetch(*later);
            }
            let s = self.similarity(*i, q);
            if s >= min {
                out.push((self.ids[*i], f64::from(s)));
            }
        }
        out
    }
}

#[derive(Debug, Default)]
struct Loaded {
    model: String,
    seq: i64,
    groups: HashMap<(String, String), Group>,
    place: HashMap<i64, (String, String)>,
}

impl Loaded {
    fn insert(&mut self, id: i64, org: String, vis: String, v: &[f32]) {
        self.remove(id);
        let key = (org, vis);
        let group = self.groups.entry(key.clone()).or_insert_with(|| Group {
            dims: v.len(),
            ..Group::default()
        });
        if group.dims != v.len() {
            return;
        }
        group.push(id, v);
        self.place.insert(id, key);
    }

    fn remove(&mut self, id: i64) {
        if let Some(key) = self.place.remove(&id) {
            if let Some(g) = self.groups.get_mut(&key) {
                g.remove(id);
            }
        }
    }
}

/// This process's copy of SQLite's vectors (see the module doc).
#[derive(Debug, Default)]
pub(super) struct VectorCache {
    loaded: RwLock<Option<Loaded>>,
}

/// Candidates the sign bits keep for ranking by bytes, per place searched:
/// with 100k random 384-dimension vectors, 2,000 hold 91% of the 10 nearest
/// (1,000: 84%; 4,000: 96%, at twice the ranking's cost); real embeddings,
/// less uniform, lose fewer.
fn first_pass(limit: usize) -> usize {
    (limit * 50).max(2_000)
}

/// A vector row as SQLite stores it.
type Row = (i64, String, String, Vec<u8>);

/// Each row's Hamming distance to `q` (rows of `q.len()` u64s).
fn distances(bits: &[u64], q: &[u64]) -> Vec<u16> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has the one instruction this copy of the loop adds.
        return unsafe { distances_popcnt(bits, q) };
    }
    distances_portable(bits, q)
}

/// The loop compiled with the POPCNT instruction: x86-64's baseline lacks
/// it, and counting bits without it took most of a search at 100k records.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn distances_popcnt(bits: &[u64], q: &[u64]) -> Vec<u16> {
    distances_portable(bits, q)
}

/// Plain loops, not a `collect`: the generic code a `collect` calls is
/// compiled once, without the caller's target feature. The usual widths
/// (384, 768, 1,024 and 1,536 dimensions) get a loop of known length.
#[inline(always)]
fn distances_portable(bits: &[u64], q: &[u64]) -> Vec<u16> {
    match q.len() {
        6 => distances_of::<6>(bits, q),
        12 => distances_of::<12>(bits, q),
        16 => distances_of::<16>(bits, q),
        24 => distances_of::<24>(bits, q),
        _ => distances_any(bits, q),
    }
}

#[inline(always)]
fn distances_of<const W: usize>(bits: &[u64], q: &[u64]) -> Vec<u16> {
    let (rows, _) = bits.as_chunks::<W>();
    let Ok(q) = <&[u64; W]>::try_from(q) else {
        return distances_any(bits, q);
    };
    let mut out = vec![0u16; rows.len()];
    for (d, row) in out.iter_mut().zip(rows) {
        let mut n = 0u32;
        for k in 0..W {
            n += (row[k] ^ q[k]).count_ones();
        }
        *d = n.min(u32::from(u16::MAX)) as u16;
    }
    out
}

#[inline(always)]
fn distances_any(bits: &[u64], q: &[u64]) -> Vec<u16> {
    let words = q.len().max(1);
    let mut out = vec![0u16; bits.len() / words];
    for (d, row) in out.iter_mut().zip(bits.chunks_exact(words)) {
        let mut n = 0u32;
        for (a, b) in row.iter().zip(q) {
            n += (a ^ b).count_ones();
        }
        *d = n.min(u32::from(u16::MAX)) as u16;
    }
    out
}

/// The rows of the `keep` smallest distances (each at most `most`; ties to
/// the first rows), in row order: one count of each distance and one pass,
/// where a selection over `distance << 32 | row` moved eight bytes a row
/// several times.
fn nearest_rows(distance: &[u16], most: usize, keep: usize) -> Vec<usize> {
    if distance.len() <= keep {
        return (0..distance.len()).collect();
    }
    let mut count = vec![0usize; most.min(usize::from(u16::MAX)) + 1];
    for d in distance {
        count[usize::from(*d)] += 1;
    }
    // The distance at which the `keep`th row falls, and how many rows at
    // that distance are still wanted.
    let (mut cut, mut below) = (0usize, 0usize);
    for (d, n) in count.iter().enumerate() {
        if below + n >= keep {
            cut = d;
            break;
        }
        below += n;
    }
    let mut at_cut = keep - below;
    let mut rows = Vec::with_capacity(keep);
    for (i, d) in distance.iter().enumerate() {
        let d = usize::from(*d);
        if d < cut {
            rows.push(i);
        } else if d == cut && at_cut > 0 {
            rows.push(i);
            at_cut -= 1;
        }
    }
    rows
}

/// A query as the copy compares it: its sign bits, and its values as 16-bit
/// integers (each `scale`) for an integer dot product with a row's bytes.
struct Probe {
    bits: Vec<u64>,
    values: Vec<i16>,
    scale: f32,
}

impl Probe {
    fn of(q: &[f32]) -> Probe {
        let mut bits = vec![0u64; q.len().div_ceil(64)];
        for (i, x) in q.iter().enumerate() {
            if *x > 0.0 {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        let max = q.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 {
            max / f32::from(i16::MAX)
        } else {
            1.0
        };
        let values = q
            .iter()
            .map(|x| (x / scale).round().clamp(-32767.0, 32767.0) as i16)
            .collect();
        Probe {
            bits,
            values,
            scale,
        }
    }
}

/// The dot product of a row of bytes with a probe's values: integers in
/// sixteen lanes, which the compiler turns into vector multiply-adds (a
/// float sum is a chain of dependent adds it may not reorder).
#[inline(always)]
fn dot_bytes(row: &[i8], q: &[i16]) -> i64 {
    const LANES: usize = 16;
    // 64 products a lane per block: |sum| <= 64 * 127 * 32767 < 2^31.
    const BLOCK: usize = LANES * 64;
    let mut total = 0i64;
    for (rb, qb) in row.chunks(BLOCK).zip(q.chunks(BLOCK)) {
        let mut lanes = [0i32; LANES];
        let (rows, qs) = (rb.chunks_exact(LANES), qb.chunks_exact(LANES));
        let tail: i32 = rows
            .remainder()
            .iter()
            .zip(qs.remainder())
            .map(|(a, b)| i32::from(*a) * i32::from(*b))
            .sum();
        for (r, x) in rows.zip(qs) {
            for k in 0..LANES {
                lanes[k] += i32::from(r[k]) * i32::from(x[k]);
            }
        }
        total += i64::from(tail) + lanes.iter().map(|l| i64::from(*l)).sum::<i64>();
    }
    total
}

impl VectorCache {
    /// What changed since this copy was made, applied; a copy of another model is made anew.
    async fn refresh(&self, db: &Db, model: &str) -> Result<()> {
        let (seq,): (i64,) = sql!("SELECT seq FROM memory_vectors_seq WHERE id = 1")
            .one(&db.pool)
            .await?;
        let since = match self.loaded.read() {
            Ok(guard) => match guard.as_ref() {
                Some(l) if l.model == model && l.seq == seq => return Ok(()),
                Some(l) if l.model == model => Some(l.seq),
                _ => None,
            },
            Err(_) => None,
        };
        let rows: Vec<Row> = match since {
            Some(after) => {
                let text = "SELECT record_id, org, vis, vec FROM memory_vectors WHERE model = $1 AND seq > $2";
                sql!(text, model, after).all(&db.pool).await?
            }
            None => {
                let text = "SELECT record_id, org, vis, vec FROM memory_vectors WHERE model = $1";
                sql!(text, model).all(&db.pool).await?
            }
        };
        let dropped: Vec<(i64,)> = match since {
            Some(after) => {
                let text =
                    "SELECT record_id FROM memory_vectors_dropped WHERE seq > $1 ORDER BY seq";
                sql!(text, after).all(&db.pool).await?
            }
            None => Vec::new(),
        };
        let Ok(mut guard) = self.loaded.write() else {
            return Err(StoreError::Corrupt("vector cache poisoned".into()));
        };
        let current = guard.as_ref().map(|l| (l.model.clone(), l.seq));
        if since.is_some() && current != Some((model.to_string(), since.unwrap_or_default())) {
            // Another search applied these changes meanwhile.
            return Ok(());
        }
        let mut loaded = match (since, guard.take()) {
            (Some(_), Some(l)) => l,
            _ => Loaded {
                model: model.to_string(),
                ..Loaded::default()
            },
        };
        for (id,) in dropped {
            loaded.remove(id);
        }
        for (id, org, vis, blob) in rows {
            loaded.insert(id, org, vis, &from_blob(&blob));
        }
        loaded.seq = seq;
        *guard = Some(loaded);
        Ok(())
    }

    /// The `limit` records of `org` under `keys` most similar to `q`, best first.
    fn search(&self, org: &str, keys: &[String], q: &QueryVector, limit: usize) -> Vec<(i64, f64)> {
        let Ok(guard) = self.loaded.read() else {
            return Vec::new();
        };
        let Some(loaded) = guard.as_ref() else {
            return Vec::new();
        };
        let query = unit(&q.values);
        let probe = Probe::of(&query);
        let mut out: Vec<(i64, f64)> = Vec::new();
        for key in keys {
            let Some(g) = loaded.groups.get(&(org.to_string(), key.clone())) else {
                continue;
            };
            if g.dims != query.len() || g.ids.is_empty() {
                continue;
            }
            let n = g.ids.len();
            let keep = first_pass(limit);
            let candidates: Vec<usize> = if n <= keep {
                (0..n).collect()
            } else {
                nearest_rows(&distances(&g.bits, &probe.bits), g.words() * 64, keep)
            };
            out.extend(g.rerank(&candidates, &probe, q.min_similarity));
        }
        let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0));
        super::best_first(out, limit, order)
    }
}

impl Db {
    /// This handle with `embedder` computing query vectors for [`Db::retrieve`]
    /// (and told of writes). Clones made from it share it.
    pub fn with_embedder(mut self, embedder: std::sync::Arc<dyn Embed>) -> Db {
        self.embedder = Some(embedder);
        self
    }

    /// Tell the embedder that records were written or activated.
    pub(super) fn written(&self) {
        if let Some(e) = &self.embedder {
            e.written();
        }
    }
}

impl Records<'_> {
    /// Make the store ready for vectors (embeddings are on): on PostgreSQL the
    /// pgvector extension and the vector column, which fail clearly on a
    /// server without pgvector. Nothing to do on SQLite.
    pub async fn enable_vectors(&self) -> Result<()> {
        if self.db.backend != Backend::Postgres {
            return Ok(());
        }
        let available: Option<(String,)> =
            sql!("SELECT CAST(name AS TEXT) FROM pg_available_extensions WHERE name = 'vector'")
                .opt(&self.db.pool)
                .await?;
        if available.is_none() {
            return Err(StoreError::Refused(
                "[embeddings] is on but this PostgreSQL server has no pgvector extension (`vector`): install pgvector on it, or turn embeddings off by leaving embeddings.base_url unset",
            ));
        }
        // In `public`, where every schema's search path finds it (tests run
        // each in a schema of its own, dropped afterwards).
        let created = sql!("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            .exec(&self.db.pool)
            .await;
        let (resolved,): (Option<String>,) = sql!("SELECT CAST(to_regtype('vector') AS TEXT)")
            .one(&self.db.pool)
            .await?;
        if let (None, Err(e)) = (&resolved, created) {
            // Not created, and not there either (two replicas starting at once
            // race on the extension; the loser finds the winner's).
            return Err(e);
        }
        if resolved.is_none() {
            return Err(StoreError::Refused(
                "[embeddings] is on but pgvector's type `vector` is not on this connection's search_path: put the schema pgvector is installed in on it",
            ));
        }
        sql!("ALTER TABLE memory_vectors ADD COLUMN IF NOT EXISTS embedding vector")
            .exec(&self.db.pool)
            .await?;
        // The approximate index of each width already stored (made in the
        // background); a new width gets its own when its first vector is stored.
        self.index_stored_widths().await
    }

    /// Active records without a vector of `model`, newest first, at most
    /// `limit`: in `org` when given, and among the [`RECENT_WINDOW`] newest
    /// records when `recent` (a worker's pass after writes; a backfill reads all).
    pub async fn unembedded(
        &self,
        org: Option<&str>,
        model: &str,
        recent: bool,
        limit: i64,
    ) -> Result<Vec<Unembedded>> {
        let mut q = sql!(
            "SELECT r.id, r.org, r.content FROM memory_records r WHERE r.status = $1 \
             AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.record_id = r.id AND v.model = $2)",
            Status::Active,
            model
        )
        .and_eq("r.org", org);
        if recent {
            q = q
                .push(" AND r.id > (SELECT COALESCE(MAX(id), 0) FROM memory_records) - ")
                .bind(RECENT_WINDOW);
        }
        q.push(" ORDER BY r.id DESC LIMIT ")
            .bind(limit)
            .all(&self.db.pool)
            .await
    }

    /// Whether record `id` of `org` has a vector of `model`.
    pub async fn has_vector(&self, org: &str, id: i64, model: &str) -> Result<bool> {
        let text =
            "SELECT record_id FROM memory_vectors WHERE org = $1 AND record_id = $2 AND model = $3";
        let found: Option<(i64,)> = sql!(text, org, id, model).opt(&self.db.pool).await?;
        Ok(found.is_some())
    }

    /// How many vectors the store holds (checks and tests).
    pub async fn vector_count(&self, org: &str) -> Result<i64> {
        let (n,) = sql!("SELECT COUNT(*) FROM memory_vectors WHERE org = $1", org)
            .one(&self.db.pool)
            .await?;
        Ok(n)
    }

    /// Store the vectors of `records` (computed from their `content` by
    /// `model`), each only if its record is still active with that text;
    /// returns how many were stored.
    pub async fn store_vectors(
        &self,
        model: &str,
        records: &[(Unembedded, Vec<f32>)],
    ) -> Result<u64> {
        if records.is_empty() {
            return Ok(0);
        }
        if self.db.backend == Backend::Postgres {
            let mut widths: Vec<usize> = records.iter().map(|(_, v)| v.len()).collect();
            widths.sort_unstable();
            widths.dedup();
            for dims in widths {
                // A store without its index still searches, by scanning.
                if let Err(e) = self.ensure_vector_index(dims).await {
                    tracing::warn!(error = %e, dims, "making the vector index failed: vector searches of this width scan every row");
                }
            }
        }
        let mut tx = super::begin(&self.db.pool).await?;
        let mut seq = 0;
        if self.db.backend == Backend::Sqlite {
            // A write first: SQLite takes its write lock before any read here.
            seq = next_seq(&mut tx).await?;
        }
        let mut stored = 0;
        for (r, values) in records {
            // On PostgreSQL the row is locked against a concurrent forget.
            let lock = if self.db.backend == Backend::Postgres {
                " FOR SHARE"
            } else {
                ""
            };
            let text = format!(
                "SELECT scope, agent, owner, content, status FROM memory_records WHERE org = $1 AND id = $2{lock}"
            );
            let row: Option<(String, String, Option<String>, String, String)> =
                sql!(text, &r.org, r.id).opt(&mut *tx).await?;
            let Some((scope, agent, owner, content, status)) = row else {
                continue;
            };
            let scope = Scope::try_from(scope)?;
            if Status::try_from(status)? != Status::Active || content != r.content {
                continue;
            }
            let v = unit(values);
            let vis = vis_key(scope, &agent, owner.as_deref());
            let dims = v.len() as i64;
            match self.db.backend {
                Backend::Sqlite => {
                    let text = "INSERT INTO memory_vectors (record_id, org, vis, model, dims, vec, seq) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                                ON CONFLICT (record_id) DO UPDATE SET org = excluded.org, vis = excluded.vis, model = excluded.model, dims = excluded.dims, vec = excluded.vec, seq = excluded.seq";
                    sql!(text, r.id, &r.org, vis, model, dims, to_blob(&v), seq)
                        .exec(&mut *tx)
                        .await?;
                }
                Backend::Postgres => {
                    let text = "INSERT INTO memory_vectors (record_id, org, vis, model, dims, embedding) VALUES ($1, $2, $3, $4, $5, CAST($6 AS vector)) \
                                ON CONFLICT (record_id) DO UPDATE SET org = excluded.org, vis = excluded.vis, model = excluded.model, dims = excluded.dims, embedding = excluded.embedding";
                    sql!(text, r.id, &r.org, vis, model, dims, literal(&v))
                        .exec(&mut *tx)
                        .await?;
                }
            }
            stored += 1;
        }
        tx.commit().await?;
        Ok(stored)
    }

    /// Ids and cosine similarities of the records of `org` under `keys` most
    /// similar to `q` (at least `q.min_similarity`), best first, at most `limit`.
    pub(super) async fn vector_search(
        &self,
        org: &str,
        keys: &[String],
        q: &QueryVector,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        if keys.is_empty() || limit == 0 || q.values.is_empty() {
            return Ok(Vec::new());
        }
        match self.db.backend {
            Backend::Sqlite => {
                self.db.vectors.refresh(self.db, &q.model).await?;
                Ok(self.db.vectors.search(org, keys, q, limit))
            }
            Backend::Postgres => {
                let query = unit(&q.values);
                let near = self
                    .pg_vector_search(org, keys, &q.model, &query, limit)
                    .await?;
                Ok(near
                    .into_iter()
                    .filter(|(_, similarity)| *similarity >= f64::from(q.min_similarity))
                    .collect())
            }
        }
    }
}

/// Reciprocal rank fusion: each list gives an id `1 / (k + rank)` (rank from
/// 1), summed over the lists it is in; best first, ties to the first list's order.
pub fn reciprocal_rank_fusion(lists: &[Vec<i64>], k: f64) -> Vec<(i64, f64)> {
    let mut score: HashMap<i64, (f64, usize)> = HashMap::new();
    let mut order = 0;
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            let e = score.entry(*id).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            e.0 += 1.0 / (k + rank as f64 + 1.0);
        }
    }
    let mut out: Vec<(i64, f64, usize)> =
        score.into_iter().map(|(id, (s, o))| (id, s, o)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    out.into_iter().map(|(id, s, _)| (id, s)).collect()
}

#[cfg(test)]
mod tests;
