//! Benchmarks: one turn through the loop on the offline model, and memory
//! retrieval for a turn at 10k and 100k records, on SQLite and PostgreSQL
//! (PostgreSQL when STEWARD_BENCH_POSTGRES_URL is set).
//!
//! Run: `cargo bench -p steward --bench turn`

use adapters::{ConversationKind, Inbound};
use chrono::{Duration, TimeZone, Utc};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use memory::store::RetrievalScope;
use memory::{Db, NewRecord, Role, Scope, Status};
use std::sync::atomic::{AtomicI64, Ordering};
use steward::Config;
use tokio::runtime::Runtime;

fn word(n: usize) -> String {
    // A synthetic vocabulary: 2,000 words, so each appears in ~0.1% of records.
    const SYLLABLES: [&str; 20] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "da", "fe", "gi", "ho",
        "ju", "ly", "ba", "ce", "wo",
    ];
    let n = n % 2000;
    format!(
        "{}{}{}",
        SYLLABLES[n % 20],
        SYLLABLES[(n / 20) % 20],
        SYLLABLES[(n / 400) % 20]
    )
}

fn note(org: &str, i: usize) -> NewRecord {
    let content = format!(
        "The {} {} report uses {}_{i}",
        word(i * 7),
        word(i * 13 + 1),
        word(i * 31 + 2)
    );
    NewRecord {
        org: org.into(),
        agent: "default".into(),
        scope: Scope::AgentNotes,
        owner: None,
        subject: format!("{} {} report", word(i * 7), word(i * 13 + 1)),
        kind: "procedure".into(),
        content,
        status: Status::Active,
        source: "bench".into(),
        said_at: i as i64,
        recorded_at: i as i64,
        expires_at: None,
        conversation: None,
        batch: None,
        author: None,
        on_behalf_of: None,
    }
}

async fn fresh(url: &str) -> Db {
    if url.starts_with("postgres") {
        let schema = format!("bench_{}", std::process::id());
        Db::connect_fresh_schema(url, &schema)
            .await
            .expect("a fresh schema on PostgreSQL")
    } else {
        Db::connect(url).await.expect("connect")
    }
}

async fn populate(db: &Db, org: &str, n: usize) {
    for chunk in (0..n).collect::<Vec<_>>().chunks(5_000) {
        let recs: Vec<NewRecord> = chunk.iter().map(|&i| note(org, i)).collect();
        // The batch write path: dedupe, insert, the subject rule, one transaction.
        db.records()
            .import_records(&recs, "bench", 0)
            .await
            .expect("insert");
    }
}

fn backends() -> Vec<(&'static str, String, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut v = vec![(
        "sqlite",
        format!("sqlite:{}", dir.path().join("bench.db").display()),
        Some(dir),
    )];
    if let Ok(url) = std::env::var("STEWARD_BENCH_POSTGRES_URL") {
        v.push(("postgres", url, None));
    }
    v
}

fn retrieval(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let mut group = c.benchmark_group("retrieval");
    group.sample_size(30);
    for (name, url, _guard) in backends() {
        let db = rt.block_on(fresh(&url));
        let mut have = 0;
        for n in [10_000usize, 100_000] {
            let org = format!("org{n}");
            rt.block_on(populate(&db, &org, n));
            have += n;
            let scope = RetrievalScope {
                org: org.clone(),
                agent: "default".into(),
                speaker: Some("discord:1".into()),
                shared: false,
                roles: Vec::new(),
            };
            // A turn asking about one existing report, in words that also appear elsewhere.
            let words = format!(
                "produce the {} {} report",
                word(4242 * 7),
                word(4242 * 13 + 1)
            );
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.to_async(&rt).iter(|| async {
                    let found = db
                        .records()
                        .retrieve(&scope, &words, 10)
                        .await
                        .expect("retrieve");
                    assert!(!found.is_empty());
                })
            });
        }
        let _ = have;
    }
    group.finish();
}

fn turn(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let mut group = c.benchmark_group("turn");
    group.sample_size(30);
    for (name, url, _guard) in backends() {
        let db = rt.block_on(fresh(&url));
        let mut cfg = Config::default();
        cfg.rate_limit.sender_burst = u32::MAX / 2;
        cfg.rate_limit.conversation_burst = u32::MAX / 2;
        let services = steward::with_db(db.clone(), cfg);
        let turns = services.turns();
        rt.block_on(async {
            services
                .pairing()
                .add_user("default", "discord:1", "Ana", Role::User, "bench", 0)
                .await
                .expect("pair");
            populate(&db, "default", 1_000).await;
        });
        let clock = AtomicI64::new(0);
        let base = Utc
            .with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
            .single()
            .expect("date");
        group.bench_function(BenchmarkId::new(name, "served_from_memory"), |b| {
            b.to_async(&rt).iter(|| async {
                let n = clock.fetch_add(1, Ordering::Relaxed);
                let msg = Inbound {
                    org: "default".into(),
                    agent: "default".into(),
                    channel: "discord".into(),
                    conversation: "d1".into(),
                    kind: ConversationKind::Direct,
                    sender: Some("discord:1".into()),
                    sender_name: "Ana".into(),
                    text: format!("Produce the {} {} report", word(42 * 7), word(42 * 13 + 1)),
                    platform_id: Some(format!("m{n}")),
                    at: base + Duration::milliseconds(n),
                    mentioned: true,
                    answer: None,
                    on_behalf_of: None,
                };
                let replies = turns.handle(&msg).await.expect("turn");
                assert!(replies[0].text.contains("Memory reference"));
            })
        });
    }
    group.finish();
}

criterion_group!(benches, turn, retrieval);
criterion_main!(benches);
