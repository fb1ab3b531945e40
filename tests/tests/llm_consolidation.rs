//! The `openai` provider against a fake OpenAI-compatible server speaking the
//! real `/v1/chat/completions` wire format: consolidation — batches,
//! merges and their undo, offline merges, automatic runs backing off while
//! the model fails — and the summary of a trimmed slice.

use memory::write::RawWrites;
use memory::{Db, NewRecord, Role, Scope, Status};
use serde_json::json;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use steward::clock::Clock;
use steward::consolidate::{MAX_CALLS_PER_RUN, MAX_RECORDS_PER_CALL};
use steward_tests::fake_llm::{Answer, FakeLlm};
use steward_tests::openai::{harness, note, rec};
use steward_tests::{both_dbs, Harness};

// --- consolidation ------------------------------------------------------------

/// Clusters of records that share words within a cluster and none across.
async fn clusters(db: &Db, sizes: &[usize]) -> Vec<Vec<i64>> {
    let mut out = Vec::new();
    let mut t = 1_000;
    for (k, n) in sizes.iter().enumerate() {
        let recs: Vec<NewRecord> = (0..*n)
            .map(|i| {
                t += 1;
                note(&format!("alpha{k} beta{k} item{k}x{i}"), t)
            })
            .collect();
        out.push(db.records().insert_records(&recs).await.expect("insert"));
    }
    out
}

#[tokio::test]
async fn consolidation_batches_records_sharing_words_40_a_call_6_calls_a_run() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    let groups = clusters(h.db(), &[50, 30, 30, 30, 30, 30, 30, 30]).await;
    let cluster_of = |id: i64| {
        groups
            .iter()
            .position(|g| g.contains(&id))
            .expect("a cluster")
    };

    let r1 = h
        .services
        .consolidation()
        .distill(&h.org, h.now_ms())
        .await
        .expect("run 1");
    let run1 = fake.received_for("consolidation");
    assert_eq!(run1.len(), MAX_CALLS_PER_RUN);
    assert_eq!(r1.calls, MAX_CALLS_PER_RUN);
    assert!(r1.waiting > 0, "{r1:?}");
    for req in &run1 {
        let ids = req.memory_ids();
        assert!(
            ids.len() >= 2 && ids.len() <= MAX_RECORDS_PER_CALL,
            "{} records",
            ids.len()
        );
        let c = cluster_of(ids[0]);
        assert!(
            ids.iter().all(|id| cluster_of(*id) == c),
            "a call mixes clusters: {ids:?}"
        );
        assert_eq!(
            req.body["response_format"]["json_schema"]["name"],
            "consolidation"
        );
        assert_eq!(req.body["response_format"]["json_schema"]["strict"], true);
    }
    // The 50 records sharing words are split over calls of at most 40.
    assert!(
        run1.iter()
            .filter(|r| cluster_of(r.memory_ids()[0]) == 0)
            .count()
            >= 2
    );

    fake.clear_received();
    h.services
        .consolidation()
        .distill(&h.org, h.now_ms() + 1)
        .await
        .expect("run 2");
    let run2 = fake.received_for("consolidation");
    assert!(!run2.is_empty() && run2.len() <= MAX_CALLS_PER_RUN);

    // Every record was shown once; nothing is shown again without a new record.
    let mut shown: Vec<i64> = run1
        .iter()
        .chain(run2.iter())
        .flat_map(|r| r.memory_ids())
        .collect();
    shown.sort_unstable();
    let mut all: Vec<i64> = groups.iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(shown, all);
    fake.clear_received();
    let r3 = h
        .services
        .consolidation()
        .distill(&h.org, h.now_ms() + 2)
        .await
        .expect("run 3");
    assert_eq!((r3.calls, r3.waiting), (0, 0));
    assert!(fake.received().is_empty());
}

#[tokio::test]
async fn records_seen_without_a_repeat_wait_until_a_new_record_joins_their_batch() {
    // On both databases: the seen table and the merge transaction are SQL.
    for (_name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let h = Harness::on(db, fake.config());
        let db = h.db();
        let ids = db
            .records()
            .insert_records(&[
                note("The wiki is at wiki.example.com", 1_000),
                note("Wiki pages are edited on wiki.example.com", 2_000),
                note("The build server is ci.internal", 3_000),
            ])
            .await
            .expect("insert");
        h.services
            .consolidation()
            .distill(&h.org, 10_000)
            .await
            .expect("run 1");
        let first = fake.received_for("consolidation");
        assert_eq!(
            first.len(),
            1,
            "the build server shares no words: no call for it"
        );
        assert_eq!(first[0].memory_ids().len(), 2);
        assert!(db
            .records()
            .consolidation_seen(&h.org, ids[2])
            .await
            .expect("seen"));

        fake.clear_received();
        h.services
            .consolidation()
            .distill(&h.org, 20_000)
            .await
            .expect("run 2");
        assert!(
            fake.received().is_empty(),
            "seen records are not shown again"
        );

        let joined = db
            .records()
            .insert_record(&note(
                "Wiki backups run nightly on wiki.example.com",
                30_000,
            ))
            .await
            .expect("insert");
        fake.clear_received();
        h.services
            .consolidation()
            .distill(&h.org, 40_000)
            .await
            .expect("run 3");
        let third = fake.received_for("consolidation");
        assert_eq!(third.len(), 1);
        let mut shown = third[0].memory_ids();
        shown.sort_unstable();
        assert_eq!(
            shown,
            vec![ids[0], ids[1], joined],
            "the new record brings its batch back"
        );

        fake.clear_received();
        h.services
            .consolidation()
            .distill(&h.org, 50_000)
            .await
            .expect("run 4");
        assert!(fake.received().is_empty());
    }
}

#[tokio::test]
async fn a_merge_retires_its_sources_under_one_run_that_undo_restores() {
    // On both databases: the seen table and the merge transaction are SQL.
    for (_name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let h = Harness::on(db, fake.config());
        let db = h.db();
        let ids = db
            .records()
            .insert_records(&[
                note("The wiki is at wiki.example.com", 1_000),
                note("Our wiki lives at wiki.example.com", 2_000),
                note("wiki.example.com hosts the wiki", 3_000),
                rec(
                    "default",
                    Scope::Personal,
                    Some("discord:222"),
                    "My wiki bookmark is wiki.example.com",
                    4_000,
                ),
            ])
            .await
            .expect("insert");
        let theirs = ids[3];
        // The model also names a record of another place: it is not in the batch and stays untouched.
        fake.push(
            "consolidation",
            Answer::Json(json!({"groups": [{"ids": [ids[0], ids[1], ids[2], theirs], "merged": "The wiki is hosted at wiki.example.com"}]})),
        );
        let report = h
            .services
            .consolidation()
            .distill(&h.org, 10_000)
            .await
            .expect("distill");
        assert_eq!(report.merges.len(), 1, "{report:?}");
        let merged = report.merges[0].into;
        let m = db
            .records()
            .get(&h.org, merged)
            .await
            .expect("merged record");
        assert_eq!(
            (m.content.as_str(), m.scope, m.status, m.said_at),
            (
                "The wiki is hosted at wiki.example.com",
                Scope::AgentNotes,
                Status::Active,
                3_000
            )
        );
        for id in &ids[..3] {
            assert_eq!(
                db.records().get(&h.org, *id).await.expect("source").status,
                Status::Superseded
            );
        }
        assert_eq!(
            db.records()
                .get(&h.org, theirs)
                .await
                .expect("theirs")
                .status,
            Status::Active
        );
        let revs = db
            .records()
            .revisions_of_run(&h.org, &report.run_id)
            .await
            .expect("revisions");
        assert_eq!(revs.len(), 3);
        for r in &revs {
            assert_eq!(r.replacing_id, merged);
            assert_eq!(
                (r.via.as_str(), r.cause.as_str()),
                ("consolidation", "consolidate")
            );
            assert_eq!(r.model.as_deref(), Some("fake-model"));
            assert_eq!(r.prompt_version.as_deref(), Some("consolidation-v1"));
        }
        let shown = &fake.received_for("consolidation")[0];
        assert!(shown
            .text()
            .contains(&format!("<<<memory:{} agent_notes fact", ids[0])));

        // undo --run restores every source; the merged record stays.
        let undone = db
            .records()
            .undo_run(&h.org, &report.run_id, "test", 20_000)
            .await
            .expect("undo run");
        assert_eq!(undone.len(), 3);
        for id in &ids[..3] {
            assert_eq!(
                db.records().get(&h.org, *id).await.expect("source").status,
                Status::Active
            );
        }
        // A new record joins; the model proposes the same merge again: the vetoes hold.
        db.records()
            .insert_record(&note("The wiki address is wiki.example.com", 30_000))
            .await
            .expect("insert");
        let all: Vec<i64> = db
            .records()
            .list(&h.org, &Default::default())
            .await
            .expect("records")
            .into_iter()
            .filter(|r| r.scope == Scope::AgentNotes)
            .map(|r| r.id)
            .collect();
        fake.push(
            "consolidation",
            Answer::Json(
                json!({"groups": [{"ids": all, "merged": "The wiki is at wiki.example.com"}]}),
            ),
        );
        let again = h
            .services
            .consolidation()
            .distill(&h.org, 40_000)
            .await
            .expect("distill");
        assert_eq!(fake.received_for("consolidation").len(), 2);
        assert!(again.merges.is_empty() && again.refused > 0, "{again:?}");
        for id in &ids[..3] {
            assert_eq!(
                db.records().get(&h.org, *id).await.expect("source").status,
                Status::Active
            );
        }
    }
}

#[tokio::test]
async fn offline_consolidation_merges_only_near_exact_duplicates() {
    let h = Harness::new().await;
    let db = h.db();
    let ids = db
        .records()
        .insert_records(&[
            note("The wiki is at wiki.example.com", 1_000),
            note("the wiki is at WIKI.example.com!", 2_000),
            note("The wiki is at wiki2.example.com", 3_000),
        ])
        .await
        .expect("insert");
    let report = h
        .services
        .consolidation()
        .distill(&h.org, 10_000)
        .await
        .expect("distill");
    assert_eq!(report.merges.len(), 1, "{report:?}");
    assert_eq!(
        (report.merges[0].into, report.merges[0].retired.clone()),
        (ids[1], vec![ids[0]])
    );
    assert_eq!(
        db.records()
            .get(&h.org, ids[2])
            .await
            .expect("record")
            .status,
        Status::Active
    );
    let revs = db.records().revisions(&h.org).await.expect("revisions");
    assert_eq!(revs.len(), 1);
    assert_eq!(
        (revs[0].model.as_deref(), revs[0].prompt_version.as_deref()),
        (Some("offline"), None)
    );
    // With the offline model the judge does nothing.
    assert_eq!(h.services.token_usage().calls, 0);
}

/// A clock that never sleeps: it records each wait and moves time forward by it.
struct ManualClock {
    now: AtomicI64,
    waits: Mutex<Vec<Duration>>,
}

#[async_trait::async_trait]
impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
    async fn sleep(&self, d: Duration) {
        self.waits.lock().expect("waits").push(d);
        self.now.fetch_add(d.as_millis() as i64, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn automatic_runs_wait_five_minutes_doubling_while_model_calls_fail() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |c| c.llm.max_retries = 0).await;
    h.db()
        .records()
        .insert_records(&[
            note("The wiki is at wiki.example.com", 1_000),
            note("Our wiki lives at wiki.example.com", 2_000),
        ])
        .await
        .expect("insert");
    for _ in 0..8 {
        fake.push("consolidation", Answer::status(500));
    }
    let clock = Arc::new(ManualClock {
        now: AtomicI64::new(h.now_ms()),
        waits: Mutex::new(Vec::new()),
    });
    h.services
        .jobs()
        .run(
            h.services.consolidation().as_ref(),
            clock.as_ref(),
            Some(10),
        )
        .await;
    let minutes: Vec<u64> = clock
        .waits
        .lock()
        .expect("waits")
        .iter()
        .map(|d| d.as_secs() / 60)
        .collect();
    // Eight failed runs, then one that worked, then one with nothing to do.
    assert_eq!(minutes, [5, 10, 20, 40, 80, 160, 320, 360, 360, 5]);
    assert_eq!(
        fake.received_for("consolidation").len(),
        9,
        "failed batches are shown again"
    );
}

// --- the slice summary ----------------------------------------------------------

#[tokio::test]
async fn a_trimmed_slice_is_summarised_by_the_model_with_lines_as_data() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    h.pair("111", Role::Admin).await;
    h.dm("111", "Where is the VPN runbook?").await;
    fake.push(
        "slice_summary",
        Answer::Json(json!({"summary": "discord:111 asked where the VPN runbook is."})),
    );
    let trimmed = h
        .services
        .lifecycle()
        .trim_now(&h.org, "default", "dm:111", h.now_ms())
        .await
        .expect("trim")
        .expect("a slice");
    let archive = h
        .db()
        .conversations()
        .archive(&h.org, trimmed.archive_id)
        .await
        .expect("archive");
    // A direct conversation's words open only to an audited look.
    assert!(archive.words(None).is_none());
    let look = h
        .db()
        .audit()
        .append_look(
            &h.org,
            "test",
            "archive.view",
            "discord:111",
            &memory::admin_text::AdminText::fixed("test reason: the summary"),
            h.now_ms(),
        )
        .await
        .expect("audited");
    let summary = archive.words(Some(&look)).expect("words").summary();
    assert_eq!(summary, "discord:111 asked where the VPN runbook is.");
    let asked = &fake.received_for("slice_summary")[0];
    assert_eq!(
        asked.body["response_format"]["json_schema"]["name"],
        "slice_summary"
    );
    assert!(
        asked
            .text()
            .contains("discord:111 (admin): Where is the VPN runbook?>>>"),
        "{}",
        asked.text()
    );
    assert!(asked.text().contains("<<<line 1 "));
    // A model that fails leaves the deterministic summary.
    h.dm("111", "Thanks").await;
    fake.push("slice_summary", Answer::status(400));
    let trimmed = h
        .services
        .lifecycle()
        .trim_now(&h.org, "default", "dm:111", h.now_ms())
        .await
        .expect("trim")
        .expect("a slice");
    let archive = h
        .db()
        .conversations()
        .archive(&h.org, trimmed.archive_id)
        .await
        .expect("archive");
    let summary = archive.words(Some(&look)).expect("words").summary();
    assert!(summary.contains("messages from"), "{summary}");
}
