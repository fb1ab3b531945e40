//! The storage conformance suite, records: the same checks on SQLite and
//! PostgreSQL of writing, the subject rule, history, undo, proposals, import
//! batches, the audit log, opening a database and taking a backup.
//! PostgreSQL runs when STEWARD_TEST_POSTGRES_URL is set (always, under CI).

use memory::admin_text::AdminText;
use memory::store::RecordFilter;
use memory::write::{NoRevision, RawWrites};
use memory::{Backend, Cause, Db, NewRecord, Scope, Status};
use steward_tests::retrieval::{found_ids, indexed, note, notes_scope};
use steward_tests::{postgres_db, record as rec, sqlite_file_db};

steward_tests::on_both_databases!(
    records_round_trip,
    subject_rule_retires_the_older_value_with_a_revision,
    an_older_value_becomes_history_and_retires_nothing,
    undo_restores_and_vetoes_the_same_replacement,
    proposals_expire_and_batch,
    audit_log_is_per_org,
    an_import_batch_dedupes_and_applies_the_subject_rule,
);

async fn records_round_trip(db: Db) {
    let id = db
        .records()
        .insert_record(&rec(
            "o1",
            Scope::AgentNotes,
            None,
            "daily report",
            "The daily report uses example_orders",
            10,
        ))
        .await
        .unwrap();
    let r = db.records().get("o1", id).await.unwrap();
    assert_eq!(r.content, "The daily report uses example_orders");
    assert_eq!(
        (r.scope, r.status, r.owner.clone()),
        (Scope::AgentNotes, Status::Active, None)
    );
    assert!(
        matches!(
            db.records().get("o2", id).await,
            Err(memory::StoreError::NotFound(_))
        ),
        "other org must not see it"
    );
    let found = db
        .records()
        .list(
            "o1",
            &RecordFilter {
                text: Some("EXAMPLE_ORDERS".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    db.records()
        .set_status("o1", id, Status::Deleted)
        .await
        .unwrap();
    assert!(db
        .records()
        .set_status("o2", id, Status::Active)
        .await
        .is_err());
    assert_eq!(
        db.records().get("o1", id).await.unwrap().status,
        Status::Deleted
    );
    if db.backend() == Backend::Sqlite {
        assert_eq!(
            db.sqlite_journal_mode().await.unwrap().as_deref(),
            Some("wal")
        );
        // FULL: a commit (an acknowledged turn's lines) is synced before it returns.
        assert_eq!(db.sqlite_synchronous().await.unwrap(), Some(2));
    }
}

async fn subject_rule_retires_the_older_value_with_a_revision(db: Db) {
    let old = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::AgentNotes,
            None,
            "daily report",
            "uses a",
            10,
        ))
        .await
        .unwrap();
    db.records()
        .activate_kept("o", old, Cause::Live, "r1", 10, &NoRevision)
        .await
        .unwrap();
    let new = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::AgentNotes,
            None,
            "daily report",
            "uses b",
            20,
        ))
        .await
        .unwrap();
    let s = db
        .records()
        .activate_kept("o", new, Cause::Live, "r2", 20, &NoRevision)
        .await
        .unwrap();
    assert_eq!(s.retired, vec![old]);
    assert_eq!(
        db.records().get("o", old).await.unwrap().status,
        Status::Superseded
    );
    assert_eq!(
        db.records().get("o", new).await.unwrap().status,
        Status::Active
    );
    let revs = db.records().revisions("o").await.unwrap();
    assert_eq!(revs.len(), 1);
    assert_eq!((revs[0].retired_id, revs[0].replacing_id), (old, new));
    assert_eq!(
        (
            revs[0].via.as_str(),
            revs[0].cause.as_str(),
            revs[0].run_id.as_str()
        ),
        ("subject_rule", "live", "r2")
    );
    // A personal record on the same subject of someone else is untouched.
    let mine = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::Personal,
            Some("u1"),
            "daily report",
            "mine",
            30,
        ))
        .await
        .unwrap();
    db.records()
        .activate_kept("o", mine, Cause::Live, "r3", 30, &NoRevision)
        .await
        .unwrap();
    assert_eq!(
        db.records().get("o", new).await.unwrap().status,
        Status::Active
    );
}

async fn an_older_value_becomes_history_and_retires_nothing(db: Db) {
    let newer = db
        .records()
        .insert_record(&rec("o", Scope::AgentNotes, None, "host", "at b", 200))
        .await
        .unwrap();
    db.records()
        .activate_kept("o", newer, Cause::Live, "r1", 200, &NoRevision)
        .await
        .unwrap();
    let older = db
        .records()
        .insert_record(&rec("o", Scope::AgentNotes, None, "host", "at a", 100))
        .await
        .unwrap();
    let s = db
        .records()
        .activate_kept("o", older, Cause::Relearn, "r2", 300, &NoRevision)
        .await
        .unwrap();
    assert_eq!(s.superseded_by, Some(newer));
    assert!(s.retired.is_empty());
    assert_eq!(
        db.records().get("o", newer).await.unwrap().status,
        Status::Active
    );
    assert_eq!(
        db.records().get("o", older).await.unwrap().status,
        Status::Superseded
    );
}

async fn undo_restores_and_vetoes_the_same_replacement(db: Db) {
    let a = db
        .records()
        .insert_record(&rec("o", Scope::AgentNotes, None, "s", "a", 10))
        .await
        .unwrap();
    db.records()
        .activate_kept("o", a, Cause::Live, "r1", 10, &NoRevision)
        .await
        .unwrap();
    let b = db
        .records()
        .insert_record(&rec("o", Scope::AgentNotes, None, "s", "b", 20))
        .await
        .unwrap();
    let s = db
        .records()
        .activate_kept("o", b, Cause::Live, "r2", 20, &NoRevision)
        .await
        .unwrap();
    let rev = s.revisions[0];
    assert!(db
        .records()
        .undo_revision("o", rev, "tester", 30)
        .await
        .unwrap());
    assert!(
        !db.records()
            .undo_revision("o", rev, "tester", 31)
            .await
            .unwrap(),
        "undo is idempotent"
    );
    assert_eq!(
        db.records().get("o", a).await.unwrap().status,
        Status::Active
    );
    assert_eq!(
        db.records().get("o", b).await.unwrap().status,
        Status::Active,
        "the replacing record stays"
    );
    assert!(db.records().is_vetoed("o", a, b).await.unwrap());
    // Proposing the same replacement again is refused by the veto.
    let again = db
        .records()
        .activate_kept("o", b, Cause::Confirm, "r3", 40, &NoRevision)
        .await
        .unwrap();
    assert!(again.retired.is_empty());
    assert_eq!(
        db.records().get("o", a).await.unwrap().status,
        Status::Active
    );
    let audit = db.audit().log("o", 10).await.unwrap();
    assert_eq!(
        audit.iter().filter(|e| e.action == "revision.undo").count(),
        1
    );
}

async fn proposals_expire_and_batch(db: Db) {
    let mut p = rec(
        "o",
        Scope::Personal,
        Some("u1"),
        "name",
        "Their name is Ana",
        100,
    );
    p.status = Status::Pending;
    p.expires_at = Some(1_000);
    p.conversation = Some("c".into());
    p.author = Some("u1".into());
    p.batch = Some(1);
    let first = db.records().insert_record(&p).await.unwrap();
    p.batch = Some(2);
    p.content = "Prefers tea".into();
    let second = db.records().insert_record(&p).await.unwrap();
    let pending = db
        .records()
        .pending_proposals("o", "default", "c", "u1", 500)
        .await
        .unwrap();
    assert_eq!(
        pending.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![second],
        "newest batch only"
    );
    assert!(
        db.records()
            .pending_proposals("o", "default", "c", "u2", 500)
            .await
            .unwrap()
            .is_empty(),
        "asked of u1 only"
    );
    assert!(
        db.records()
            .pending_proposals("o", "default", "c", "u1", 1_000)
            .await
            .unwrap()
            .is_empty(),
        "expired"
    );
    assert_eq!(db.records().expire_proposals("o", 1_000).await.unwrap(), 2);
    assert_eq!(
        db.records().get("o", first).await.unwrap().status,
        Status::Deleted
    );
    let same = rec(
        "o",
        Scope::Personal,
        Some("u1"),
        "name",
        "Their name is Ana",
        100,
    );
    assert!(db
        .records()
        .has_same(&same, &[Status::Deleted])
        .await
        .unwrap());
    assert!(!db
        .records()
        .has_same(&same, &[Status::Active])
        .await
        .unwrap());
}

async fn audit_log_is_per_org(db: Db) {
    db.audit()
        .append("o", "admin", "x", "t", &AdminText::fixed("d"), 1)
        .await
        .unwrap();
    db.audit()
        .append("o2", "admin", "y", "t", &AdminText::fixed("d"), 1)
        .await
        .unwrap();
    let o: Vec<_> = db.audit().log("o", 10).await.unwrap();
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].action, "x");
    let f = RecordFilter::default();
    assert!(db.records().list("o", &f).await.unwrap().is_empty());
}

/// `sqlite:` used to open a private empty database per connection and fail
/// later as "no such table"; an unreachable PostgreSQL said "pool timed out"
/// twice. Both now say what failed, without the password.
#[tokio::test]
async fn a_database_that_cannot_be_opened_says_why() {
    let e = Db::connect("sqlite:").await.unwrap_err().to_string();
    assert!(
        e.contains("names no file") && e.contains("sqlite:steward.db"),
        "{e}"
    );
    let e = Db::connect("postgres://steward:hunter2@127.0.0.1:1/x")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cannot connect to postgres://steward@127.0.0.1:1/x"),
        "{e}"
    );
    assert!(
        e.to_lowercase().contains("refused") && !e.contains("hunter2"),
        "{e}"
    );
}

/// `steward backup`: a copy taken while another task keeps writing opens as
/// a whole store (every record it holds indexed and found) with everything
/// committed before the backup began; an existing file is never
/// overwritten; a PostgreSQL store is sent to its own tools.
#[tokio::test]
async fn a_backup_taken_while_writing_is_a_whole_store() {
    let (db, dir) = sqlite_file_db().await;
    let before: Vec<NewRecord> = (0..300)
        .map(|i| {
            note(
                &format!("host {i}"),
                &format!("Host {i} runs on rack{i}"),
                i,
            )
        })
        .collect();
    db.records().insert_records(&before).await.unwrap();
    let writing = {
        let db = db.clone();
        tokio::spawn(async move {
            for i in 300..1300 {
                let r = note(
                    &format!("host {i}"),
                    &format!("Host {i} runs on rack{i}"),
                    i,
                );
                db.records().insert_record(&r).await.unwrap();
            }
        })
    };
    let target = dir.path().join("backup.db");
    db.backup_to(&target).await.unwrap();
    writing.await.unwrap();

    let copy = Db::connect(&format!("sqlite:{}", target.display()))
        .await
        .unwrap();
    let held = copy.row_count("memory_records").await.unwrap();
    assert!((300..=1300).contains(&held), "{held} records in the copy");
    assert_eq!(
        indexed(&copy).await.0,
        held,
        "every record it holds is indexed"
    );
    for i in [0, 150, 299] {
        let found = found_ids(&copy, &notes_scope("o", None), &format!("rack{i}")).await;
        assert_eq!(found.len(), 1, "rack{i} in the copy: {found:?}");
    }
    copy.close().await;

    let kept = std::fs::read(&target).unwrap();
    let e = db.backup_to(&target).await.unwrap_err().to_string();
    assert!(e.contains("exists"), "{e}");
    assert_eq!(
        std::fs::read(&target).unwrap(),
        kept,
        "the file is untouched"
    );
    db.close().await;

    if let Some(pg) = postgres_db().await {
        let e = pg.backup_to(&dir.path().join("pg.db")).await.unwrap_err();
        assert!(e.to_string().contains("pg_dump"), "{e}");
        assert!(!dir.path().join("pg.db").exists());
    }
}

async fn an_import_batch_dedupes_and_applies_the_subject_rule(db: Db) {
    let first = db
        .records()
        .import_records(
            &[
                note("vpn", "The VPN is at vpn1.example", 1),
                note("", "Tickets go to the helpdesk queue", 2),
                note("", "Printers live on floor two", 3),
            ],
            "import:1",
            10,
        )
        .await
        .unwrap();
    assert!(first.iter().all(Option::is_some), "{first:?}");
    let again = db
        .records()
        .import_records(
            &[
                note("vpn", "The VPN is at vpn1.example", 1),
                note("vpn", "The VPN is at vpn2.example", 5),
            ],
            "import:2",
            20,
        )
        .await
        .unwrap();
    assert_eq!(again[0], None, "the same live text is not written twice");
    let newer = again[1].unwrap();
    let old = db.records().get("o", first[0].unwrap()).await.unwrap();
    assert_eq!(
        old.status,
        Status::Superseded,
        "a subject supersedes its older value"
    );
    let revs = db
        .records()
        .revisions_of_run("o", "import:2")
        .await
        .unwrap();
    assert_eq!(revs.len(), 1);
    assert_eq!((revs[0].retired_id, revs[0].replacing_id), (old.id, newer));
    // Lines without a subject supersede nothing: both stay live and searchable.
    for id in [first[1].unwrap(), first[2].unwrap()] {
        assert_eq!(
            db.records().get("o", id).await.unwrap().status,
            Status::Active
        );
    }
    let scope = notes_scope("o", None);
    assert_eq!(
        found_ids(&db, &scope, "printer floor").await,
        vec![first[2].unwrap()]
    );
    assert_eq!(found_ids(&db, &scope, "vpn").await, vec![newer]);
}
