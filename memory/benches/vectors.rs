//! The cost of the vector search as the store grows: p50/p95 of the keyword
//! retrieval alone (`Db::retrieve` without an embedder), of the vector search
//! alone (`Db::retrieve_by_meaning`: the places the scope may see, then the
//! records fetched and re-checked) and of the fused retrieval (`Db::retrieve`
//! with a query vector: keyword + vector, reciprocal rank fusion), for org
//! notes and for a speaker with personal memory; and the vector search's
//! recall@10 against an exact scan of the same vectors. The query's embedding
//! call is not measured: vectors are random unit vectors of 384 dimensions
//! (multilingual-e5-small's size), which cost what real ones cost.
//!
//! Run: `cargo bench -p steward-memory --bench vectors`
//! Sizes: STEWARD_BENCH_SIZES (default `1000,100000`); searches per row:
//! STEWARD_BENCH_SAMPLES (default 400). PostgreSQL with pgvector too when
//! STEWARD_BENCH_PGVECTOR_URL is set; STEWARD_BENCH_SQLITE=0 leaves SQLite
//! out. STEWARD_BENCH_DIR keeps the SQLite file (`vectors.db`, emptied first)
//! there; with STEWARD_BENCH_REUSE=1 a file already holding one size is
//! searched as it is (instruction counts of the searches alone), and so is
//! PostgreSQL's schema `bench_vectors` (without REUSE it is made again).
//!
//! Records: agent notes, every fifth a personal record of one of 50 people
//! (the speaker holds a fiftieth of them: 400 at 100k). Vectors: uniformly
//! random, or with STEWARD_BENCH_VECTORS=clustered shaped like e5's (a
//! shared direction, 1,000 topics: one topic scores about 0.9, unrelated
//! texts about 0.7), where an approximate index finds what a real model's
//! neighbours look like.

use memory::store::{Embed, QueryVector, RetrievalScope, Unembedded};
use memory::write::RawWrites;
use memory::{Db, NewRecord, Scope, Status};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DIMS: usize = 384;
const PEOPLE: usize = 50;
const SAMPLES: usize = 400;
/// Every this many searches, the vector search's answer is checked against an exact scan.
const RECALL_EVERY: usize = 8;
const MODEL: &str = "random-384";
const SPEAKER: &str = "user3";

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

/// How many topics clustered vectors fall into.
const TOPICS: usize = 1_000;

/// Whether vectors are clustered (STEWARD_BENCH_VECTORS=clustered) rather
/// than uniformly random.
fn clustered() -> bool {
    std::env::var("STEWARD_BENCH_VECTORS").is_ok_and(|v| v == "clustered")
}

/// The unit vector of `text`. Random: its own random direction. Clustered,
/// shaped like e5's: a direction every vector shares, one of 1,000 topics
/// (picked by the text), and noise of its own, so that texts of one topic
/// score about 0.9 and unrelated ones about 0.7.
fn vector_of(text: &str) -> Vec<f32> {
    if !clustered() {
        return Rng::seeded(text).unit();
    }
    static SHAPE: std::sync::OnceLock<(Vec<f32>, Vec<Vec<f32>>)> = std::sync::OnceLock::new();
    let (common, topics) = SHAPE.get_or_init(|| {
        let topics = (0..TOPICS)
            .map(|t| Rng::seeded(&format!("topic {t}")).unit())
            .collect();
        (Rng::seeded("common").unit(), topics)
    });
    let mut rng = Rng::seeded(text);
    let topic = &topics[(rng.0 % TOPICS as u64) as usize];
    let noise = rng.unit();
    let v: Vec<f32> = (0..DIMS)
        .map(|i| 1.7 * common[i] + topic[i] + 0.6 * noise[i])
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// Query vectors without a server: [`vector_of`] the query's text.
#[derive(Debug)]
struct RandomQueries;

#[async_trait::async_trait]
impl Embed for RandomQueries {
    async fn query(&self, text: &str) -> Option<QueryVector> {
        Some(QueryVector {
            model: MODEL.into(),
            values: vector_of(text),
            min_similarity: 0.0,
        })
    }
}

/// Record `i`'s owner: every fifth record is personal, of one of 50 people.
fn owner(i: usize) -> Option<String> {
    i.is_multiple_of(5)
        .then(|| format!("user{}", (i / 5) % PEOPLE))
}

/// Record `i`: agent notes, with every fifth a personal record of one of 50 people.
fn record(i: usize) -> NewRecord {
    let owner = owner(i);
    let scope = if owner.is_some() {
        Scope::Personal
    } else {
        Scope::AgentNotes
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

/// What the store holds, for the exact scan recall is measured against.
#[derive(Default)]
struct Corpus {
    ids: Vec<i64>,
    owners: Vec<Option<String>>,
    values: Vec<f32>,
}

impl Corpus {
    fn add(&mut self, id: i64, i: usize, v: &[f32]) {
        self.ids.push(id);
        self.owners.push(owner(i));
        self.values.extend_from_slice(v);
    }

    /// The ids of the `k` records readable by `speaker` (agent notes and
    /// their own) nearest to `q`, by an exact scan.
    fn nearest(&self, speaker: Option<&str>, q: &[f32], k: usize) -> Vec<i64> {
        let mut scored: Vec<(f32, i64)> = self
            .values
            .chunks_exact(DIMS)
            .enumerate()
            .filter(|(i, _)| self.owners[*i].is_none() || self.owners[*i].as_deref() == speaker)
            .map(|(i, v)| {
                (
                    v.iter().zip(q).map(|(a, b)| a * b).sum::<f32>(),
                    self.ids[i],
                )
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().take(k).map(|(_, id)| id).collect()
    }
}

/// Records `from..to` inserted with their vectors; vectors stored per second.
async fn fill(db: &Db, corpus: &mut Corpus, from: usize, to: usize) -> f64 {
    let mut i = from;
    let mut storing = Duration::ZERO;
    while i < to {
        let end = (i + 5_000).min(to);
        let batch: Vec<NewRecord> = (i..end).map(record).collect();
        let ids = db.records().insert_records(&batch).await.expect("insert");
        let pairs: Vec<(Unembedded, Vec<f32>)> = batch
            .iter()
            .zip(ids)
            .map(|(r, id)| {
                let u = Unembedded {
                    id,
                    org: r.org.clone(),
                    content: r.content.clone(),
                };
                (u, vector_of(&r.content))
            })
            .collect();
        for (k, (u, v)) in pairs.iter().enumerate() {
            corpus.add(u.id, i + k, v);
        }
        // Stored as the embeddings worker stores them: a batch at a time.
        let t = Instant::now();
        for chunk in pairs.chunks(32) {
            db.records()
                .store_vectors(MODEL, chunk)
                .await
                .expect("vectors");
        }
        storing += t.elapsed();
        i = end;
    }
    (to - from) as f64 / storing.as_secs_f64().max(1e-9)
}

/// A store filled earlier (STEWARD_BENCH_REUSE): its records are `0..n`, ids from 1.
fn corpus_of(n: usize) -> Corpus {
    let mut corpus = Corpus::default();
    for i in 0..n {
        corpus.add(i as i64 + 1, i, &vector_of(&record(i).content));
    }
    corpus
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn p50_p95(mut samples: Vec<Duration>) -> String {
    samples.sort();
    format!(
        "{:.2} / {:.2}",
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.95))
    )
}

fn samples() -> usize {
    std::env::var("STEWARD_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SAMPLES)
}

/// One table row per scope: `plain` has no embedder (keyword only), `db` has one.
async fn measure(name: &str, plain: &Db, db: &Db, corpus: &Corpus, fill_rate: Option<f64>) {
    let scope = |speaker: Option<&str>| RetrievalScope {
        org: "bench".into(),
        agent: "default".into(),
        speaker: speaker.map(str::to_string),
        shared: false,
        roles: Vec::new(),
    };
    // The first search reads the vectors into this process (SQLite).
    let t = Instant::now();
    let warm = RandomQueries.query("warm up").await.expect("vector");
    db.records()
        .retrieve_by_meaning(&scope(None), &warm, 10)
        .await
        .expect("search");
    let cold = t.elapsed();
    let fill = match fill_rate {
        Some(rate) => format!("{rate:.0}/s"),
        None => "reused".into(),
    };
    for speaker in [None, Some(SPEAKER)] {
        let s = scope(speaker);
        let n = samples();
        let (mut keyword, mut dense, mut fused) = (Vec::new(), Vec::new(), Vec::new());
        let (mut found_exact, mut checked) = (0usize, 0usize);
        for i in 0..n {
            let text = format!("produce report {}", (i * 7919) % 977);
            let qv = RandomQueries.query(&text).await.expect("vector");
            let t = Instant::now();
            plain
                .records()
                .retrieve(&s, &text, 10)
                .await
                .expect("keyword");
            keyword.push(t.elapsed());
            let t = Instant::now();
            let found = db
                .records()
                .retrieve_by_meaning(&s, &qv, 10)
                .await
                .expect("search");
            dense.push(t.elapsed());
            assert_eq!(found.len(), 10);
            let t = Instant::now();
            db.records()
                .retrieve(&s, &text, 10)
                .await
                .expect("retrieve");
            fused.push(t.elapsed());
            if i % RECALL_EVERY == 0 {
                let exact: HashSet<i64> = corpus
                    .nearest(speaker, &qv.values, 10)
                    .into_iter()
                    .collect();
                found_exact += found
                    .iter()
                    .filter(|r| exact.contains(&r.record.id))
                    .count();
                checked += exact.len();
            }
        }
        let who = if speaker.is_some() {
            "speaker"
        } else {
            "notes"
        };
        println!(
            "| {name} | {who} | {fill} | {:.1} ms | {} | {} | {:.1}% | {} |",
            ms(cold),
            p50_p95(keyword),
            p50_p95(dense),
            100.0 * found_exact as f64 / checked.max(1) as f64,
            p50_p95(fused),
        );
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::var("STEWARD_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let reuse = std::env::var("STEWARD_BENCH_REUSE").is_ok_and(|r| r == "1");
    let with_sqlite = std::env::var("STEWARD_BENCH_SQLITE").map_or(true, |v| v != "0");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let place = std::env::var("STEWARD_BENCH_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| dir.path().to_path_buf());
        for end in ["", "-wal", "-shm"] {
            if !reuse {
                let _ = std::fs::remove_file(place.join(format!("vectors.db{end}")));
            }
        }
        let mut stores: Vec<(&str, Db, Db, Corpus)> = Vec::new();
        if with_sqlite {
            let url = format!("sqlite:{}", place.join("vectors.db").display());
            let plain = Db::connect(&url).await.expect("sqlite");
            let db = plain.clone().with_embedder(Arc::new(RandomQueries));
            stores.push(("sqlite", plain, db, Corpus::default()));
        }
        if let Ok(url) = std::env::var("STEWARD_BENCH_PGVECTOR_URL") {
            let plain = if reuse {
                Db::connect_kept_schema(&url, "bench_vectors").await
            } else {
                Db::connect_fresh_schema(&url, "bench_vectors").await
            }
            .expect("postgres");
            plain.records().enable_vectors().await.expect("pgvector");
            let db = plain.clone().with_embedder(Arc::new(RandomQueries));
            stores.push(("pg", plain, db, Corpus::default()));
        }
        println!(
            "{DIMS}-dimension {} unit vectors, {} searches per row, 10 results; p50 / p95 in ms",
            if clustered() { "clustered" } else { "random" },
            samples()
        );
        println!("| store, records | scope | vectors stored | first search | keyword | vector | vector recall@10 | fused |");
        println!("|---|---|---|---|---|---|---|---|");
        let mut filled = 0;
        for size in sizes {
            for (store, plain, db, corpus) in &mut stores {
                let held = plain.row_count("memory_records").await.expect("count") as usize;
                let rate = if reuse && held == size {
                    *corpus = corpus_of(size);
                    None
                } else {
                    let rate = fill(plain, corpus, filled, size).await;
                    plain.optimize().await.expect("optimize");
                    Some(rate)
                };
                measure(&format!("{store} {size}"), plain, db, corpus, rate).await;
            }
            filled = size;
        }
    });
}
