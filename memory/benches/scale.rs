//! What grows with the store: retrieval latency (p50/p95, org notes and a
//! speaker with personal memory) and serial writes per second, side by side
//! at several store sizes, on SQLite and (with STEWARD_BENCH_POSTGRES_URL) PostgreSQL.
//!
//! Run: `cargo bench -p steward-memory --bench scale`
//! Sizes: STEWARD_BENCH_SIZES (default `1000,100000,1000000`); STEWARD_BENCH_DIR
//! keeps the SQLite file (`scale.db`, emptied first) in that directory; with
//! STEWARD_BENCH_REUSE=1 too, a file already holding the records is searched
//! as it is (for instruction counts of retrieval alone, with STEWARD_BENCH_WRITES=0),
//! and so is the PostgreSQL schema (STEWARD_BENCH_PG_SCHEMA, default
//! `bench_scale`; without REUSE it is dropped and made again).
//! STEWARD_BENCH_SQLITE=0 leaves SQLite out (to fill the two databases' large
//! stores in two processes at once).
//!
//! A write is one record through `Db::write` (dedupe, insert, index, the
//! subject rule) in its own transaction, as a turn writes; 500 of them per size.

use memory::store::RetrievalScope;
use memory::write::{Activation, Dedupe, NoRevision, RawWrites};
use memory::{Cause, Db, NewRecord, Scope, Status};
use std::time::{Duration, Instant};

const PEOPLE: usize = 50;
const SAMPLES: usize = 400;
const WRITES: usize = 500;

fn samples() -> usize {
    std::env::var("STEWARD_BENCH_SAMPLES")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(SAMPLES)
}

fn writes() -> usize {
    std::env::var("STEWARD_BENCH_WRITES")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(WRITES)
}

fn word(n: usize) -> String {
    // 8,000 synthetic words: each appears in a small share of the records.
    const SYL: [&str; 20] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "da", "fe", "gi", "ho",
        "ju", "ly", "ba", "ce", "wo",
    ];
    let n = n % 8000;
    format!(
        "{}{}{}{}",
        SYL[n % 20],
        SYL[(n / 20) % 20],
        SYL[(n / 400) % 20],
        n / 8000
    )
}

/// Record `i`: agent notes, with every fifth a personal record of one of 50
/// people (each holds a fiftieth of them).
fn record(i: usize) -> NewRecord {
    let (scope, owner) = if i.is_multiple_of(5) {
        (Scope::Personal, Some(format!("user{}", (i / 5) % PEOPLE)))
    } else {
        (Scope::AgentNotes, None)
    };
    let kind = if i.is_multiple_of(10) {
        "preference"
    } else {
        "procedure"
    };
    NewRecord::said(
        "bench",
        "default",
        scope,
        kind,
        format!("{} {} report {i}", word(i * 7), word(i * 13 + 1)),
        format!(
            "The {} {} report uses {}_{i}",
            word(i * 7),
            word(i * 13 + 1),
            word(i * 31 + 2)
        ),
        i as i64,
    )
    .owner(owner)
    .status(Status::Active)
    .source("bench")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn fill(db: &Db, from: usize, to: usize) {
    let mut i = from;
    while i < to {
        let end = (i + 5_000).min(to);
        let batch: Vec<NewRecord> = (i..end).map(record).collect();
        db.records().insert_records(&batch).await.expect("insert");
        i = end;
    }
}

/// Search a store of `size` records, then write new ones from record `next` on.
async fn measure(name: &str, db: &Db, size: usize, next: usize) {
    let lat = |speaker: Option<String>| {
        let scope = RetrievalScope {
            org: "bench".into(),
            agent: "default".into(),
            speaker,
            shared: false,
            roles: Vec::new(),
        };
        async move {
            let mut times = Vec::with_capacity(samples());
            for s in 0..samples() {
                let i = (s * 7919) % size;
                let q = format!("produce the {} {} report", word(i * 7), word(i * 13 + 1));
                let t = Instant::now();
                let found = db
                    .records()
                    .retrieve(&scope, &q, 10)
                    .await
                    .expect("retrieve");
                times.push(t.elapsed());
                assert!(!found.is_empty());
            }
            times.sort();
            (percentile(&times, 0.5), percentile(&times, 0.95))
        }
    };
    let (notes50, notes95) = lat(None).await;
    let (pers50, pers95) = lat(Some("user3".into())).await;
    let t = Instant::now();
    let writes = writes();
    for w in 0..writes {
        // Records the store does not hold yet: a kept store's earlier runs wrote
        // records from `size` on, and writing them again would only dedupe.
        let r = record(next + w);
        db.records()
            .write(
                &r,
                Dedupe::ReuseActive,
                Activation::Run {
                    cause: Cause::Live,
                    run_id: "bench",
                },
                &NoRevision,
            )
            .await
            .expect("write");
    }
    let writes = writes as f64 / t.elapsed().as_secs_f64();
    println!(
        "{name:<9} {size:>9}  notes p50 {:>6.2} ms p95 {:>6.2} ms   speaker p50 {:>6.2} ms p95 {:>6.2} ms   writes {writes:>7.0}/s",
        ms(notes50),
        ms(notes95),
        ms(pers50),
        ms(pers95)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let sizes: Vec<usize> = std::env::var("STEWARD_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,100000,1000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    // STEWARD_BENCH_DIR keeps the SQLite file for a look afterwards.
    let place = std::env::var("STEWARD_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| dir.path().to_path_buf());
    let reuse = std::env::var("STEWARD_BENCH_REUSE").is_ok_and(|r| r == "1");
    for end in ["", "-wal", "-shm"] {
        if !reuse {
            let _ = std::fs::remove_file(place.join(format!("scale.db{end}")));
        }
    }
    let mut backends = Vec::new();
    if std::env::var("STEWARD_BENCH_SQLITE").map_or(true, |v| v != "0") {
        backends.push((
            "sqlite",
            format!("sqlite:{}", place.join("scale.db").display()),
        ));
    }
    if let Ok(pg) = std::env::var("STEWARD_BENCH_POSTGRES_URL") {
        backends.push(("postgres", pg));
    }
    // Two checkouts benchmarking on one server keep apart by schema.
    let pg_schema =
        std::env::var("STEWARD_BENCH_PG_SCHEMA").unwrap_or_else(|_| "bench_scale".into());
    rt.block_on(async {
        for (name, url) in backends {
            let db = if name == "postgres" && reuse {
                Db::connect_kept_schema(&url, &pg_schema).await
            } else if name == "postgres" {
                Db::connect_fresh_schema(&url, &pg_schema).await
            } else {
                Db::connect(&url).await
            }
            .expect("connect");
            for &size in &sizes {
                let held = db.row_count("memory_records").await.expect("count") as usize;
                if held < size {
                    fill(&db, held, size).await;
                }
                let next = held.max(size);
                db.optimize().await.expect("statistics");
                measure(name, &db, size, next).await;
            }
        }
    });
}
