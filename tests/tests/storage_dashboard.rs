//! The store functions the dashboard uses, on SQLite and PostgreSQL alike:
//! the generated admin token, sessions, browsing, people, revisions.

use memory::store::{DashboardSession, RecordFilter};
use memory::write::RawWrites;
use memory::{Backend, Db, NewRecord, Scope, Status};
use steward_tests::{postgres_db, record, sqlite_file_db};

steward_tests::on_both_databases!(
    the_admin_token_is_stored_once_and_a_reset_ends_sessions,
    sessions_expire_and_belong_to_one_org,
    browsing_filters_by_scope_owner_status_and_text_newest_first,
    people_with_personal_memory_are_counted,
    recent_revisions_come_newest_first,
);

fn rec(
    org: &str,
    scope: Scope,
    owner: Option<&str>,
    subject: &str,
    content: &str,
    status: Status,
    said_at: i64,
) -> NewRecord {
    NewRecord {
        status,
        ..record(org, scope, owner, subject, content, said_at)
    }
}

fn session(org: &str, id: &str, expires_at: i64) -> DashboardSession {
    DashboardSession {
        org: org.into(),
        id_hash: id.into(),
        csrf: format!("csrf-{id}"),
        token_hash: "t1".into(),
        user_id: "admin".into(),
        created_at: 100,
        expires_at,
    }
}

async fn the_admin_token_is_stored_once_and_a_reset_ends_sessions(db: Db) {
    assert_eq!(db.identity().dashboard_token_hash("o").await.unwrap(), None);
    assert!(db
        .identity()
        .init_dashboard_token("o", "t1", 1)
        .await
        .unwrap());
    assert!(
        !db.identity()
            .init_dashboard_token("o", "t2", 2)
            .await
            .unwrap(),
        "a second start keeps the first"
    );
    assert_eq!(
        db.identity()
            .dashboard_token_hash("o")
            .await
            .unwrap()
            .as_deref(),
        Some("t1")
    );
    assert_eq!(
        db.identity().dashboard_token_hash("other").await.unwrap(),
        None,
        "per org"
    );
    db.identity()
        .create_dashboard_session(&session("o", "s1", 10_000))
        .await
        .unwrap();
    db.identity()
        .create_dashboard_session(&session("other", "s2", 10_000))
        .await
        .unwrap();
    db.identity()
        .reset_dashboard_token("o", "t3", 3)
        .await
        .unwrap();
    assert_eq!(
        db.identity()
            .dashboard_token_hash("o")
            .await
            .unwrap()
            .as_deref(),
        Some("t3")
    );
    assert_eq!(
        db.identity()
            .dashboard_session("o", "s1", 200)
            .await
            .unwrap(),
        None
    );
    assert!(
        db.identity()
            .dashboard_session("other", "s2", 200)
            .await
            .unwrap()
            .is_some(),
        "other orgs keep theirs"
    );
}

async fn sessions_expire_and_belong_to_one_org(db: Db) {
    db.identity()
        .create_dashboard_session(&session("o", "s1", 1_000))
        .await
        .unwrap();
    let s = db
        .identity()
        .dashboard_session("o", "s1", 999)
        .await
        .unwrap()
        .expect("live");
    assert_eq!((s.csrf.as_str(), s.token_hash.as_str()), ("csrf-s1", "t1"));
    assert_eq!(
        db.identity()
            .dashboard_session("o", "s1", 1_000)
            .await
            .unwrap(),
        None,
        "expired at its time"
    );
    assert_eq!(
        db.identity()
            .dashboard_session("p", "s1", 500)
            .await
            .unwrap(),
        None,
        "another org's id"
    );
    // A new sign-in clears expired rows of the org.
    db.identity()
        .create_dashboard_session(&DashboardSession {
            created_at: 2_000,
            ..session("o", "s2", 9_000)
        })
        .await
        .unwrap();
    assert_eq!(
        db.identity().dashboard_session("o", "s1", 0).await.unwrap(),
        None,
        "pruned"
    );
    assert!(db
        .identity()
        .delete_dashboard_session("o", "s2")
        .await
        .unwrap());
    assert!(!db
        .identity()
        .delete_dashboard_session("o", "s2")
        .await
        .unwrap());
    assert_eq!(
        db.identity()
            .dashboard_session("o", "s2", 2_500)
            .await
            .unwrap(),
        None
    );
}

async fn browsing_filters_by_scope_owner_status_and_text_newest_first(db: Db) {
    let a = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::AgentNotes,
            None,
            "daily report",
            "Report uses example_orders",
            Status::Superseded,
            1,
        ))
        .await
        .unwrap();
    let b = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::AgentNotes,
            None,
            "daily report",
            "Report uses example_archive",
            Status::Active,
            2,
        ))
        .await
        .unwrap();
    let c = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::OrgPolicy,
            None,
            "retention",
            "Keep invoices 7 years",
            Status::Active,
            3,
        ))
        .await
        .unwrap();
    let d = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::Personal,
            Some("discord:1"),
            "pref",
            "Prefers REPORT summaries",
            Status::Active,
            4,
        ))
        .await
        .unwrap();
    let e = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::Person,
            Some("discord:1"),
            "lang",
            "Answers in French",
            Status::Active,
            5,
        ))
        .await
        .unwrap();
    db.records()
        .insert_record(&rec(
            "x",
            Scope::AgentNotes,
            None,
            "daily report",
            "Other org's report",
            Status::Active,
            6,
        ))
        .await
        .unwrap();
    let ids = |v: Vec<memory::MemoryRecord>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = ids(db
        .records()
        .browse_records("o", &RecordFilter::default(), 100)
        .await
        .unwrap());
    assert_eq!(all, vec![e, d, c, b, a], "newest first, one org");
    let notes = RecordFilter {
        scopes: vec![Scope::AgentNotes],
        ..Default::default()
    };
    assert_eq!(
        ids(db.records().browse_records("o", &notes, 100).await.unwrap()),
        vec![b, a]
    );
    let active_notes = RecordFilter {
        status: Some(Status::Active),
        ..notes.clone()
    };
    assert_eq!(
        ids(db
            .records()
            .browse_records("o", &active_notes, 100)
            .await
            .unwrap()),
        vec![b]
    );
    let personal = RecordFilter {
        scopes: vec![Scope::Personal, Scope::Person],
        owner: Some("discord:1".into()),
        ..Default::default()
    };
    assert_eq!(
        ids(db
            .records()
            .browse_records("o", &personal, 100)
            .await
            .unwrap()),
        vec![e, d]
    );
    // Text matches content or subject, case-insensitively; `%` is only a character here.
    let report = RecordFilter {
        text: Some("report".into()),
        ..Default::default()
    };
    assert_eq!(
        ids(db
            .records()
            .browse_records("o", &report, 100)
            .await
            .unwrap()),
        vec![d, b, a]
    );
    let retention = RecordFilter {
        text: Some("RETENTION".into()),
        ..Default::default()
    };
    assert_eq!(
        ids(db
            .records()
            .browse_records("o", &retention, 100)
            .await
            .unwrap()),
        vec![c]
    );
    for wildcard in ["%", "s_e"] {
        let f = RecordFilter {
            text: Some(wildcard.into()),
            ..Default::default()
        };
        assert!(
            db.records()
                .browse_records("o", &f, 100)
                .await
                .unwrap()
                .is_empty(),
            "{wildcard} is literal"
        );
    }
    let underscore = RecordFilter {
        text: Some("e_a".into()),
        ..Default::default()
    };
    assert_eq!(
        ids(db
            .records()
            .browse_records("o", &underscore, 100)
            .await
            .unwrap()),
        vec![b]
    );
    let quote = RecordFilter {
        text: Some("' OR 1=1 --".into()),
        ..Default::default()
    };
    assert!(db
        .records()
        .browse_records("o", &quote, 100)
        .await
        .unwrap()
        .is_empty());
    let blank = RecordFilter {
        text: Some("  ".into()),
        ..Default::default()
    };
    assert_eq!(
        db.records()
            .browse_records("o", &blank, 100)
            .await
            .unwrap()
            .len(),
        5
    );
    assert_eq!(
        ids(db
            .records()
            .browse_records("o", &RecordFilter::default(), 2)
            .await
            .unwrap()),
        vec![e, d],
        "limit"
    );
}

async fn people_with_personal_memory_are_counted(db: Db) {
    for (owner, status) in [
        ("discord:1", Status::Active),
        ("discord:1", Status::Superseded),
        ("discord:2", Status::Pending),
        ("discord:3", Status::Deleted),
    ] {
        db.records()
            .insert_record(&rec("o", Scope::Personal, Some(owner), "s", "c", status, 1))
            .await
            .unwrap();
    }
    db.records()
        .insert_record(&rec(
            "o",
            Scope::Person,
            Some("discord:1"),
            "s2",
            "c",
            Status::Active,
            1,
        ))
        .await
        .unwrap();
    db.records()
        .insert_record(&rec(
            "o",
            Scope::AgentNotes,
            None,
            "s",
            "c",
            Status::Active,
            1,
        ))
        .await
        .unwrap();
    db.records()
        .insert_record(&rec(
            "x",
            Scope::Personal,
            Some("discord:9"),
            "s",
            "c",
            Status::Active,
            1,
        ))
        .await
        .unwrap();
    assert_eq!(
        db.records().personal_owners("o").await.unwrap(),
        vec![("discord:1".to_string(), 2), ("discord:2".to_string(), 0)]
    );
}

async fn recent_revisions_come_newest_first(db: Db) {
    let mut ids = Vec::new();
    for (i, v) in ["a", "b", "c"].iter().enumerate() {
        let id = db
            .records()
            .insert_record(&rec(
                "o",
                Scope::AgentNotes,
                None,
                "s",
                v,
                Status::Pending,
                i as i64,
            ))
            .await
            .unwrap();
        db.records()
            .activate_kept(
                "o",
                id,
                memory::Cause::Live,
                "t",
                i as i64,
                &memory::write::NoRevision,
            )
            .await
            .unwrap();
        ids.push(id);
    }
    let revs = db.records().recent_revisions("o", 10).await.unwrap();
    assert_eq!(
        revs.iter()
            .map(|r| (r.retired_id, r.replacing_id))
            .collect::<Vec<_>>(),
        vec![(ids[1], ids[2]), (ids[0], ids[1])]
    );
    assert_eq!(
        db.records().recent_revisions("o", 1).await.unwrap().len(),
        1
    );
    assert!(db
        .records()
        .recent_revisions("x", 10)
        .await
        .unwrap()
        .is_empty());
}
