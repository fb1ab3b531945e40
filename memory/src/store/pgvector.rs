//! PostgreSQL's vector search: pgvector, with an approximate (HNSW) index for
//! the large places and an exact scan of the small ones.
//!
//! The index: one per vector width, `memory_vectors_hnsw_<dims>`, on the
//! column cast to its width (an HNSW index needs one) and limited to the rows
//! of that width, for inner product (stored vectors and queries are unit
//! length, so it ranks as cosine does and costs less). It is made when the
//! first vector of a width is stored, and by [`Db::enable_vectors`] for widths
//! already stored without one; made `CONCURRENTLY`, so writes go on meanwhile,
//! and a search before it is ready is an exact scan (slower, the same answer).
//!
//! A search reads only the places (organisation, visibility key) its scope
//! may read, as the keyword search does. pgvector 0.6 has no iterative index
//! scans: an HNSW scan yields at most `hnsw.ef_search` candidates, and the
//! place filter applies after it. A small place beside a large one (the
//! speaker's 400 personal records beside 100k agent notes, or the other
//! people's personal records near-identical to the speaker's) could lose all
//! its candidates to the filter. So:
//!
//! - a place holding at most [`SMALL_PLACE`] vectors is scanned exactly,
//!   through the btree on the place (about 1.6 µs a row);
//! - the larger places are read through the index with `hnsw.ef_search`
//!   raised so that, at the share of the candidates they were last seen to
//!   hold, about `limit` of them survive the filter; fewer than `limit`
//!   survivors is read again with more candidates, and then exactly;
//! - both parts are one statement, and the best `limit` of the union win.
//!
//! The places' sizes (counted up to `SMALL_PLACE + 1`) and the candidates'
//! shares are kept by each process for a minute: an old count only makes a
//! search slower, as a small place read through the index that yields too few
//! is read again exactly. Every row found is still re-checked with the read
//! rule by the caller.

use super::vectors::literal;
use super::{Db, Records, Result, Sql};
use sqlx::AnyConnection;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A place holding at most this many vectors is scanned exactly.
pub const SMALL_PLACE: i64 = 1_000;

/// pgvector's largest `hnsw.ef_search`.
const MOST_CANDIDATES: usize = 1_000;

/// The fewest candidates an index scan asks for (pgvector's default): fewer
/// loses recall faster than it saves time.
const FEWEST_CANDIDATES: usize = 40;

/// How long a place's size and a share of candidates are trusted.
const KEPT_FOR: Duration = Duration::from_secs(60);

/// What this process knows of the PostgreSQL vectors: which widths have
/// their index, how large places are, what share of an index scan's
/// candidates a set of places held.
#[derive(Debug, Default)]
pub(super) struct PgVectors {
    indexed: Mutex<HashSet<usize>>,
    sizes: Mutex<HashMap<Place, (i64, Instant)>>,
    shares: Mutex<HashMap<Places, (f64, Instant)>>,
}

/// (organisation, model, visibility key).
type Place = (String, String, String);
/// (organisation, model, the visibility keys read through the index).
type Places = (String, String, Vec<String>);

/// The index of vectors of `dims` dimensions.
fn index_name(dims: usize) -> String {
    format!("memory_vectors_hnsw_{dims}")
}

/// How many candidates an index scan asks for to keep `limit` of them when
/// the places searched held `share` of the last scan's.
fn candidates_for(limit: usize, share: f64) -> usize {
    let wanted = (limit as f64 * 1.25 / share.max(1e-6)).ceil();
    (wanted.min(MOST_CANDIDATES as f64) as usize).max(FEWEST_CANDIDATES.max(limit))
}

/// A row of the search: record, distance (negative inner product), whether
/// the index found it.
type Found = (i64, f64, bool);

impl PgVectors {
    fn share(&self, places: &Places) -> Option<f64> {
        let shares = self.shares.lock().ok()?;
        let (share, at) = shares.get(places)?;
        (at.elapsed() < KEPT_FOR).then_some(*share)
    }

    fn saw_share(&self, places: Places, share: f64) {
        if let Ok(mut shares) = self.shares.lock() {
            shares.insert(places, (share, Instant::now()));
        }
    }
}

impl Records<'_> {
    /// Make sure vectors of `dims` dimensions have their HNSW index: made
    /// unless it exists and is valid (a build cut short leaves an invalid one,
    /// dropped here), by one process at a time (an advisory lock per schema
    /// and width; a process that does not get it goes on without waiting).
    pub(super) async fn ensure_vector_index(&self, dims: usize) -> Result<()> {
        if dims == 0
            || self
                .db
                .pgvector
                .indexed
                .lock()
                .map(|i| i.contains(&dims))
                .unwrap_or(false)
        {
            return Ok(());
        }
        let name = index_name(dims);
        // One connection for the lock, the checks and the build: an advisory
        // lock belongs to its session.
        let mut conn = self.db.pool.acquire().await?;
        let (locked,): (bool,) = sql!(
            "SELECT pg_try_advisory_lock(hashtext(current_schema() || '.' || $1))",
            &name
        )
        .one(&mut *conn)
        .await?;
        if !locked {
            return Ok(());
        }
        let built = build_index(&mut conn, &name, dims).await;
        let unlocked = sql!(
            "SELECT pg_advisory_unlock(hashtext(current_schema() || '.' || $1))",
            &name
        )
        .exec(&mut *conn)
        .await;
        built?;
        unlocked?;
        if let Ok(mut indexed) = self.db.pgvector.indexed.lock() {
            indexed.insert(dims);
        }
        Ok(())
    }

    /// The indexes of the widths already stored (an upgrade from a store
    /// without them), made in the background: a build over 100k vectors takes
    /// minutes, and searches are exact scans until it is done.
    pub(super) async fn index_stored_widths(&self) -> Result<()> {
        let widths: Vec<(i64,)> = sql!(
            "SELECT DISTINCT dims FROM memory_vectors WHERE embedding IS NOT NULL AND dims > 0"
        )
        .all(&self.db.pool)
        .await?;
        if widths.is_empty() {
            return Ok(());
        }
        let db = self.db.clone();
        tokio::spawn(async move {
            for (dims,) in widths {
                if let Err(e) = db.records().ensure_vector_index(dims as usize).await {
                    tracing::warn!(error = %e, dims, "building the vector index failed: vector searches of this width scan every row");
                }
            }
        });
        Ok(())
    }

    /// How many vectors of `model` each of `keys` holds in `org`, each
    /// counted up to [`SMALL_PLACE`] + 1 (kept a minute).
    async fn place_sizes(&self, org: &str, model: &str, keys: &[String]) -> Result<Vec<i64>> {
        let place = |k: &String| (org.to_string(), model.to_string(), k.clone());
        let mut sizes: Vec<Option<i64>> = match self.db.pgvector.sizes.lock() {
            Ok(known) => keys
                .iter()
                .map(|k| {
                    known
                        .get(&place(k))
                        .filter(|(_, at)| at.elapsed() < KEPT_FOR)
                        .map(|(n, _)| *n)
                })
                .collect(),
            Err(_) => vec![None; keys.len()],
        };
        let missing: Vec<String> = keys
            .iter()
            .zip(&sizes)
            .filter(|(_, n)| n.is_none())
            .map(|(k, _)| k.clone())
            .collect();
        if !missing.is_empty() {
            // An index-only count of at most SMALL_PLACE + 1 entries a place.
            let mut q = sql!("SELECT k.vis, (SELECT COUNT(*) FROM (SELECT 1 FROM memory_vectors v WHERE v.org = $1 AND v.model = $2 AND v.vis = k.vis LIMIT ", org, model)
                .bind(SMALL_PLACE + 1)
                .push(") AS s) FROM (VALUES ");
            for (i, k) in missing.iter().enumerate() {
                if i > 0 {
                    q = q.push(", ");
                }
                q = q.push("(CAST(").bind(k.clone()).push(" AS TEXT))");
            }
            let counted: Vec<(String, i64)> = q.push(") AS k (vis)").all(&self.db.pool).await?;
            let now = Instant::now();
            if let Ok(mut known) = self.db.pgvector.sizes.lock() {
                for (vis, n) in &counted {
                    known.insert(place(vis), (*n, now));
                }
            }
            for (k, size) in keys.iter().zip(sizes.iter_mut()) {
                if size.is_none() {
                    *size = counted.iter().find(|(vis, _)| vis == k).map(|(_, n)| *n);
                }
            }
        }
        Ok(sizes.into_iter().map(|n| n.unwrap_or(0)).collect())
    }

    /// `keys` with vectors of `model` in `org`, split into the places
    /// scanned exactly (small) and those read through the index (large).
    async fn split_places(
        &self,
        org: &str,
        model: &str,
        keys: &[String],
    ) -> Result<(Vec<String>, Vec<String>)> {
        let sizes = self.place_sizes(org, model, keys).await?;
        let (mut small, mut large) = (Vec::new(), Vec::new());
        for (k, n) in keys.iter().zip(sizes) {
            match n {
                0 => {}
                n if n <= SMALL_PLACE => small.push(k.clone()),
                _ => large.push(k.clone()),
            }
        }
        Ok((small, large))
    }

    /// The `limit` records of `org` under `keys` nearest to the unit vector
    /// `q` (of `model`), as (id, cosine similarity), best first.
    pub(super) async fn pg_vector_search(
        &self,
        org: &str,
        keys: &[String],
        model: &str,
        q: &[f32],
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let (mut small, mut large) = self.split_places(org, model, keys).await?;
        let near = Near {
            org,
            model,
            v: literal(q),
            dims: q.len(),
            limit,
        };
        let mut found = Vec::new();
        if !large.is_empty() {
            let places: Places = (org.to_string(), model.to_string(), large.clone());
            let mut candidates =
                candidates_for(limit, self.db.pgvector.share(&places).unwrap_or(0.5));
            loop {
                let rows: Vec<Found> = near.rows(self.db, &small, &large, candidates).await?;
                let through_index = rows.iter().filter(|(_, _, approx)| *approx).count();
                let share = through_index as f64 / candidates as f64;
                self.db.pgvector.saw_share(places.clone(), share);
                found = rows;
                if through_index >= limit {
                    break;
                }
                // Starved by the place filter: more candidates, once more.
                let more = candidates_for(limit, share);
                if share > 0.0 && more > candidates {
                    candidates = more;
                    continue;
                }
                // The index cannot give these places enough: read them exactly.
                small.append(&mut large);
                found = near.rows(self.db, &small, &[], 0).await?;
                break;
            }
        } else if !small.is_empty() {
            found = near.rows(self.db, &small, &[], 0).await?;
        }
        found.sort_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        found.truncate(limit);
        Ok(found
            .into_iter()
            .map(|(id, distance, _)| (id, -distance))
            .collect())
    }

    /// The plan PostgreSQL chooses for the first statement of the vector
    /// search [`Db::retrieve`] makes for `scope` and `q` (`limit` rows), one
    /// line a row; empty on SQLite (checks and tests: whether the large
    /// places go through the HNSW index).
    pub async fn vector_search_plan(
        &self,
        scope: &super::RetrievalScope,
        q: &super::QueryVector,
        limit: usize,
    ) -> Result<Vec<String>> {
        let keys = scope.readable_places()?;
        if self.db.backend != super::Backend::Postgres {
            return Ok(Vec::new());
        }
        let (small, large) = self.split_places(&scope.org, &q.model, &keys).await?;
        let places: Places = (scope.org.clone(), q.model.clone(), large.clone());
        let candidates = candidates_for(limit, self.db.pgvector.share(&places).unwrap_or(0.5));
        let near = Near {
            org: &scope.org,
            model: &q.model,
            v: literal(&super::vectors::unit(&q.values)),
            dims: q.values.len(),
            limit,
        };
        near.plan(self.db, &small, &large, candidates).await
    }
}

/// One vector search's statement: the `limit` rows nearest to `v` (a
/// `dims`-dimension pgvector literal) of `model` in `org`.
struct Near<'a> {
    org: &'a str,
    model: &'a str,
    v: String,
    dims: usize,
    limit: usize,
}

impl<'a> Near<'a> {
    /// The `limit` nearest rows of the places `exact` by a scan of each row,
    /// and the nearest of the places `approximate` among `candidates` an
    /// index scan yields, by one statement.
    async fn rows(
        &self,
        db: &Db,
        exact: &[String],
        approximate: &[String],
        candidates: usize,
    ) -> Result<Vec<Found>> {
        if exact.is_empty() && approximate.is_empty() {
            return Ok(Vec::new());
        }
        let q = self.statement("", exact, approximate, candidates);
        run(db, q, (!approximate.is_empty()).then_some(candidates)).await
    }

    /// The plan of [`Near::rows`], one line a row.
    async fn plan(
        &self,
        db: &Db,
        exact: &[String],
        approximate: &[String],
        candidates: usize,
    ) -> Result<Vec<String>> {
        if exact.is_empty() && approximate.is_empty() {
            return Ok(Vec::new());
        }
        let q = self.statement("EXPLAIN ", exact, approximate, candidates);
        let lines: Vec<(String,)> =
            run(db, q, (!approximate.is_empty()).then_some(candidates)).await?;
        Ok(lines.into_iter().map(|(l,)| l).collect())
    }

    fn statement(
        &self,
        prefix: &str,
        exact: &[String],
        approximate: &[String],
        candidates: usize,
    ) -> Sql<'a> {
        let dims = self.dims;
        // The width is written into the text: the index's expression and its
        // condition must match it literally (a bound value does not, in a
        // generic plan).
        let mut q = sql!(
            format!("{prefix}WITH q AS MATERIALIZED (SELECT CAST($1 AS vector({dims})) AS v) "),
            self.v.clone(),
            self.org,
            self.model
        );
        if !approximate.is_empty() {
            q = q
                .push(&format!(
                    "(SELECT record_id, CAST(CAST(embedding AS vector({dims})) <#> (SELECT v FROM q) AS DOUBLE PRECISION) AS distance, TRUE AS approximate \
                     FROM memory_vectors WHERE dims = {dims} AND org = $2 AND model = $3 AND vis IN ("
                ))
                .bind_list(approximate.to_vec())
                .push(&format!(
                    ") ORDER BY CAST(embedding AS vector({dims})) <#> (SELECT v FROM q) LIMIT "
                ))
                .bind(candidates as i64)
                .push(")");
        }
        if !exact.is_empty() {
            if !approximate.is_empty() {
                q = q.push(" UNION ALL ");
            }
            // The column as it is, not the index's expression: this part
            // reads the places' rows through the btree and sorts them.
            q = q
                .push(&format!(
                    "(SELECT record_id, CAST(embedding <#> (SELECT v FROM q) AS DOUBLE PRECISION) AS distance, FALSE AS approximate \
                     FROM memory_vectors WHERE org = $2 AND model = $3 AND dims = {dims} AND embedding IS NOT NULL AND vis IN ("
                ))
                .bind_list(exact.to_vec())
                .push(") ORDER BY 2 LIMIT ")
                .bind(self.limit as i64)
                .push(")");
        }
        q
    }
}

/// Run `q`; with `candidates`, in a transaction that sets `hnsw.ef_search` to
/// it and turns sorts off, so the large places are read through the index:
/// the planner, from statistics that lag the writes (a fresh store has none),
/// would rather sort a place it believes holds a few rows, which is the same
/// answer as slow as the place is large. The small places' scan still sorts
/// (it has no other way).
async fn run<T>(db: &Db, q: Sql<'_>, candidates: Option<usize>) -> Result<Vec<T>>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    let Some(candidates) = candidates else {
        return q.all(&db.pool).await;
    };
    let mut tx = super::begin(&db.pool).await?;
    sql!(
        "SELECT set_config('hnsw.ef_search', $1, true), set_config('enable_sort', 'off', true)",
        candidates.clamp(1, MOST_CANDIDATES).to_string()
    )
    .exec(&mut *tx)
    .await?;
    let rows = q.all(&mut *tx).await?;
    tx.commit().await?;
    Ok(rows)
}

/// Make the index `name` for `dims`-dimension vectors unless a valid one exists.
async fn build_index(conn: &mut AnyConnection, name: &str, dims: usize) -> Result<()> {
    let existing: Option<(bool, String)> = sql!(
        "SELECT i.indisvalid, quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_index i \
         JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE i.indrelid = CAST('memory_vectors' AS regclass) AND c.relname = $1",
        name
    )
    .opt(&mut *conn)
    .await?;
    match existing {
        Some((true, _)) => return Ok(()),
        Some((false, qualified)) => {
            // A build cut short (a process stopped during it).
            sql!(format!("DROP INDEX CONCURRENTLY IF EXISTS {qualified}"))
                .exec(&mut *conn)
                .await?;
        }
        None => {}
    }
    sql!(format!(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON memory_vectors \
         USING hnsw ((CAST(embedding AS vector({dims}))) vector_ip_ops) WHERE dims = {dims}"
    ))
    .exec(&mut *conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_scan_asks_for_what_the_places_share_of_candidates_needs() {
        // The places held 80% of the last scan's candidates: 40 wanted, 63 asked.
        assert_eq!(candidates_for(40, 0.8), 63);
        // Never fewer than pgvector's default, nor than the rows wanted.
        assert_eq!(candidates_for(10, 1.0), FEWEST_CANDIDATES);
        assert_eq!(candidates_for(60, 1.0), 75);
        // A small share asks for up to pgvector's most, and no more.
        assert_eq!(candidates_for(40, 0.01), MOST_CANDIDATES);
        assert_eq!(candidates_for(40, 0.0), MOST_CANDIDATES);
    }
}
