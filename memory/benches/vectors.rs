//! The cost of the vector search as the store grows: p50/p95 of the vector
//! search alone (`Db::retrieve_by_meaning`: the places the scope may see,
//! then the records fetched and re-checked) and of the fused retrieval
//! (`Db::retrieve` with a query vector: keyword + vector, reciprocal rank
//! fusion), for org notes and for a speaker with personal memory. The query's
//! embedding call is not measured: vectors are random unit vectors of 384
//! dimensions (multilingual-e5-small's size), which cost what real ones cost.
//!
//! Run: `cargo bench -p steward-memory --bench vectors`
//! Sizes: STEWARD_BENCH_SIZES (default `1000,100000`). PostgreSQL with
//! pgvector too when STEWARD_BENCH_PGVECTOR_URL is set.

use memory::store::{Embed, QueryVector, RetrievalScope, Unembedded};
use memory::{Db, NewRecord, Scope, Status};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DIMS: usize = 384;
const PEOPLE: usize = 50;
const SAMPLES: usize = 400;
const MODEL: &str = "random-384";

/// A small deterministic generator (xorshift64*), seeded per text.
struct Rng(u64);

impl Rng {
    fn seeded(text: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h | 1)
    }

    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    fn unit(&mut self) -> Vec<f32> {
        let v: Vec<f32> = (0..DIMS).map(|_| self.next()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}

/// Query vectors without a server: each text's own random unit vector.
#[derive(Debug)]
struct RandomQueries;

#[async_trait::async_trait]
impl Embed for RandomQueries {
    async fn query(&self, text: &str) -> Option<QueryVector> {
        Some(QueryVector {
            model: MODEL.into(),
            values: Rng::seeded(text).unit(),
            min_similarity: 0.0,
        })
    }
}

/// Record `i`: agent notes, with every fifth a personal record of one of 50 people.
fn record(i: usize) -> NewRecord {
    let (scope, owner) = if i.is_multiple_of(5) {
        (Scope::Personal, Some(format!("user{}", i % PEOPLE)))
    } else {
        (Scope::AgentNotes, None)
    };
    NewRecord::said(
        "bench",
        "default",
        scope,
        "procedure",
        format!("report {i}"),
        format!("The report number {i} uses table_{}", i % 977),
        i as i64,
    )
    .owner(owner)
    .status(Status::Active)
    .source("bench")
}

async fn fill(db: &Db, from: usize, to: usize) {
    let mut i = from;
    while i < to {
        let end = (i + 5_000).min(to);
        let batch: Vec<NewRecord> = (i..end).map(record).collect();
        let ids = db.insert_records(&batch).await.expect("insert");
        let pairs: Vec<(Unembedded, Vec<f32>)> = batch
            .iter()
            .zip(ids)
            .map(|(r, id)| {
                let u = Unembedded {
                    id,
                    org: r.org.clone(),
                    content: r.content.clone(),
                };
                (u, Rng::seeded(&r.content).unit())
            })
            .collect();
        db.store_vectors(MODEL, &pairs).await.expect("vectors");
        i = end;
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn measure(name: &str, db: &Db) {
    let scope = |speaker: Option<&str>| RetrievalScope {
        org: "bench".into(),
        agent: "default".into(),
        speaker: speaker.map(str::to_string),
        shared: false,
    };
    // The first search reads the vectors into this process (SQLite).
    let t = Instant::now();
    let warm = RandomQueries.query("warm up").await.expect("vector");
    db.retrieve_by_meaning(&scope(None), &warm, 10)
        .await
        .expect("search");
    let cold = t.elapsed();
    let mut line = format!("{name:<10} first search {:>8.1} ms", ms(cold));
    for speaker in [None, Some("user3")] {
        let s = scope(speaker);
        let mut dense = Vec::with_capacity(SAMPLES);
        let mut fused = Vec::with_capacity(SAMPLES);
        for i in 0..SAMPLES {
            let text = format!("produce report {}", (i * 7919) % 977);
            let qv = RandomQueries.query(&text).await.expect("vector");
            let t = Instant::now();
            let found = db.retrieve_by_meaning(&s, &qv, 10).await.expect("search");
            dense.push(t.elapsed());
            assert_eq!(found.len(), 10);
            let t = Instant::now();
            db.retrieve(&s, &text, 10).await.expect("retrieve");
            fused.push(t.elapsed());
        }
        dense.sort();
        fused.sort();
        let who = if speaker.is_some() {
            "speaker"
        } else {
            "notes"
        };
        line.push_str(&format!(
            "   {who}: vector p50 {:>5.2} p95 {:>5.2} ms, fused p50 {:>5.2} p95 {:>5.2} ms",
            ms(percentile(&dense, 0.5)),
            ms(percentile(&dense, 0.95)),
            ms(percentile(&fused, 0.5)),
            ms(percentile(&fused, 0.95)),
        ));
    }
    println!("{line}");
}

fn main() {
    let sizes: Vec<usize> = std::env::var("STEWARD_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite:{}", dir.path().join("vectors.db").display());
        let sqlite = Db::connect(&url)
            .await
            .expect("sqlite")
            .with_embedder(Arc::new(RandomQueries));
        let pg = match std::env::var("STEWARD_BENCH_PGVECTOR_URL") {
            Ok(url) => {
                let db = Db::connect_fresh_schema(&url, "bench_vectors")
                    .await
                    .expect("postgres");
                db.enable_vectors().await.expect("pgvector");
                Some(db.with_embedder(Arc::new(RandomQueries)))
            }
            Err(_) => None,
        };
        println!("{DIMS}-dimension random unit vectors, {SAMPLES} searches per row, 10 results");
        let mut filled = 0;
        for size in sizes {
            fill(&sqlite, filled, size).await;
            sqlite.optimize().await.expect("optimize");
            measure(&format!("sqlite {size}"), &sqlite).await;
            if let Some(pg) = &pg {
                fill(pg, filled, size).await;
                pg.optimize().await.expect("optimize");
                measure(&format!("pg {size}"), pg).await;
            }
            filled = size;
        }
    });
}
