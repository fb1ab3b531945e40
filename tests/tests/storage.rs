//! The storage conformance suite: the same checks on SQLite and PostgreSQL.
//! PostgreSQL runs when STEWARD_TEST_POSTGRES_URL is set (always, under CI).

use memory::admin_text::AdminText;
use memory::store::{
    LiveSize, NewArchive, NewMessage, Opening, QueryVector, RecordFilter, RetrievalScope,
    Unembedded, ViewOf,
};
use memory::write::{NoRevision, RawWrites};
use memory::{Backend, Cause, Db, NewRecord, Role, Scope, Status, StoreError};
use pairing::{PairOutcome, Pairing, PairingError, PairingSettings};
use sha2::{Digest, Sha256};
use steward_tests::{postgres_db, record as rec, sqlite_file_db};

steward_tests::on_both_databases!(
    records_round_trip,
    subject_rule_retires_the_older_value_with_a_revision,
    an_older_value_becomes_history_and_retires_nothing,
    undo_restores_and_vetoes_the_same_replacement,
    retrieval_is_scoped_by_org_agent_and_speaker,
    proposals_expire_and_batch,
    messages_keep_sender_and_role_and_dedupe,
    pairing_codes_follow_the_rules,
    api_keys_resolve_to_active_users,
    api_keys_are_revoked_by_id_and_with_their_user_for_good,
    audit_log_is_per_org,
    retrieval_finds_rare_words_past_common_ones_and_only_active_records,
    ranked_search_finds_word_forms_identifier_parts_and_cjk,
    search_text_is_never_engine_syntax_and_never_leaves_its_scope,
    an_import_batch_dedupes_and_applies_the_subject_rule,
    a_reply_reads_its_window_the_live_size_and_the_summaries_at_once,
    the_live_size_follows_every_insert_trim_erasure_and_redelivery,
    a_slice_is_archived_once_however_many_trims_race_for_it,
    a_trim_committed_with_lines_beside_it_keeps_every_line_and_the_live_size,
    a_turns_first_read_answers_seen_sender_and_view_at_once,
    the_speakers_newest_preferences_come_with_every_retrieval,
    a_query_of_common_words_finds_the_records_holding_both_and_never_anothers,
    forgotten_erased_and_superseded_records_leave_the_index,
    every_search_path_refuses_an_incomplete_scope_and_reads_only_its_places,
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

async fn retrieval_is_scoped_by_org_agent_and_speaker(db: Db) {
    let mk =
        |org: &str, agent: &str, scope: Scope, owner: Option<&str>, kind: &str, content: &str| {
            let mut r = rec(org, scope, owner, content, content, 1);
            r.agent = agent.into();
            r.kind = kind.into();
            r
        };
    let mut pending = mk(
        "a",
        "default",
        Scope::AgentNotes,
        None,
        "procedure",
        "the weekly digest waits for approval",
    );
    pending.status = Status::Pending;
    for r in [
        mk(
            "a",
            "default",
            Scope::AgentNotes,
            None,
            "procedure",
            "daily report uses orders_a",
        ),
        mk(
            "a",
            "default",
            Scope::OrgPolicy,
            None,
            "rule",
            "customer data stays in the EU",
        ),
        mk(
            "b",
            "default",
            Scope::OrgPolicy,
            None,
            "rule",
            "org b keeps its data at home",
        ),
        pending,
        mk(
            "b",
            "default",
            Scope::AgentNotes,
            None,
            "procedure",
            "daily report uses orders_b",
        ),
        mk(
            "a",
            "other",
            Scope::AgentNotes,
            None,
            "procedure",
            "daily report uses other_agent",
        ),
        mk(
            "a",
            "default",
            Scope::Personal,
            Some("u1"),
            "preference",
            "daily report brief please",
        ),
        mk(
            "a",
            "default",
            Scope::Personal,
            Some("u1"),
            "identity",
            "daily report identity secret",
        ),
        mk(
            "a",
            "default",
            Scope::Personal,
            Some("u2"),
            "preference",
            "daily report u2 private",
        ),
    ] {
        db.records().insert_record(&r).await.unwrap();
    }
    let words = "daily report";
    let scope = |speaker: Option<&str>, shared: bool| RetrievalScope {
        org: "a".into(),
        agent: "default".into(),
        speaker: speaker.map(str::to_string),
        shared,
        roles: Vec::new(),
    };
    let contents = |v: Vec<memory::store::Retrieved>| {
        v.into_iter()
            .map(|r| r.record.written.content)
            .collect::<Vec<_>>()
    };
    let private = contents(
        db.records()
            .retrieve(&scope(Some("u1"), false), words, 20)
            .await
            .unwrap(),
    );
    assert!(private.iter().any(|c| c.contains("orders_a")));
    assert!(private.iter().any(|c| c.contains("identity secret")));
    for leak in ["orders_b", "other_agent", "u2 private"] {
        assert!(
            !private.iter().any(|c| c.contains(leak)),
            "{leak} leaked: {private:?}"
        );
    }
    let shared = contents(
        db.records()
            .retrieve(&scope(Some("u1"), true), words, 20)
            .await
            .unwrap(),
    );
    assert!(shared.iter().any(|c| c.contains("brief please")));
    assert!(
        !shared.iter().any(|c| c.contains("identity secret")),
        "identity in shared scope: {shared:?}"
    );
    let nobody = contents(
        db.records()
            .retrieve(&scope(None, false), words, 20)
            .await
            .unwrap(),
    );
    assert_eq!(nobody, vec!["daily report uses orders_a".to_string()]);
    // What a model is given whole: the same for every speaker of the agent,
    // oldest first, nothing of another organisation, agent or person, nothing pending.
    for (speaker, shared) in [(Some("u1"), false), (Some("u2"), true), (None, false)] {
        let standing: Vec<String> = db
            .records()
            .standing_notes(&scope(speaker, shared), 50)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.written.content)
            .collect();
        assert_eq!(
            standing,
            [
                "daily report uses orders_a",
                "customer data stays in the EU"
            ]
        );
    }
    let mut bad = scope(Some("u1"), false);
    bad.org.clear();
    assert!(
        db.records().retrieve(&bad, words, 20).await.is_err(),
        "an incomplete scope fails closed"
    );
    assert!(
        db.records().standing_notes(&bad, 50).await.is_err(),
        "an incomplete scope fails closed"
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

async fn messages_keep_sender_and_role_and_dedupe(db: Db) {
    assert!(db
        .conversations()
        .mark_seen("o", "discord", "m1", 1)
        .await
        .unwrap());
    assert!(!db
        .conversations()
        .mark_seen("o", "discord", "m1", 2)
        .await
        .unwrap());
    assert!(
        db.conversations()
            .mark_seen("o", "teams", "m1", 2)
            .await
            .unwrap(),
        "ids are per channel"
    );
    assert!(
        db.conversations()
            .mark_seen("o2", "discord", "m1", 2)
            .await
            .unwrap(),
        "ids are per org"
    );
    for (sender, role) in [(Some("discord:1"), Some("admin")), (None, None)] {
        db.conversations()
            .insert_message(&NewMessage {
                org: "o",
                agent: "default",
                channel: "discord",
                conversation: "g",
                conversation_kind: "group",
                author: "person",
                sender,
                sender_role: role,
                text: "hello",
                said_at: 5,
            })
            .await
            .unwrap();
    }
    let h = db
        .conversations()
        .history("o", "default", "g")
        .await
        .unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(
        (h[0].sender.as_deref(), h[0].sender_role.as_deref()),
        (Some("discord:1"), Some("admin"))
    );
    assert_eq!(
        (h[1].sender.as_deref(), h[1].sender_role.as_deref()),
        (None, None)
    );
    assert!(db
        .conversations()
        .history("o2", "default", "g")
        .await
        .unwrap()
        .is_empty());
}

async fn pairing_codes_follow_the_rules(db: Db) {
    let p = Pairing::new(db.clone(), PairingSettings::default());
    let now = 1_000_000;
    let PairOutcome::Code { code, reused, .. } = p
        .request("o", "discord", "discord:1", "One", now)
        .await
        .unwrap()
    else {
        panic!("expected a code")
    };
    assert!(!reused);
    assert_eq!(code.len(), 8);
    assert!(!code.contains(['0', 'O', '1', 'I', 'L']));
    let PairOutcome::Code {
        code: again,
        reused,
        ..
    } = p
        .request("o", "discord", "discord:1", "One", now + 5)
        .await
        .unwrap()
    else {
        panic!("expected a code")
    };
    assert_eq!(
        (again.as_str(), reused),
        (code.as_str(), true),
        "a pending code is reused"
    );
    p.request("o", "discord", "discord:2", "Two", now)
        .await
        .unwrap();
    p.request("o", "discord", "discord:3", "Three", now)
        .await
        .unwrap();
    assert_eq!(
        p.request("o", "discord", "discord:4", "Four", now)
            .await
            .unwrap(),
        PairOutcome::TooManyPending
    );
    assert!(matches!(
        p.request("o", "teams", "teams:4", "Four", now)
            .await
            .unwrap(),
        PairOutcome::Code { .. }
    ));
    // 60 minutes later the codes have expired: approval fails, new requests fit again.
    let later = now + 60 * 60 * 1000;
    assert!(matches!(
        p.approve("o", &code, Role::User, "admin", later).await,
        Err(PairingError::CodeExpired(_))
    ));
    assert!(matches!(
        p.request("o", "discord", "discord:4", "Four", later)
            .await
            .unwrap(),
        PairOutcome::Code { .. }
    ));
    let PairOutcome::Code { code: fresh, .. } = p
        .request("o", "discord", "discord:1", "One", later)
        .await
        .unwrap()
    else {
        panic!("expected a code")
    };
    assert_ne!(fresh, code);
    assert!(matches!(
        p.approve("o2", &fresh, Role::Admin, "admin", later).await,
        Err(PairingError::UnknownCode(_))
    ));
    let u = p
        .approve("o", &fresh.to_lowercase(), Role::User, "admin", later)
        .await
        .unwrap();
    assert_eq!((u.user_id.as_str(), u.role), ("discord:1", Role::User));
    assert!(matches!(
        p.approve("o", &fresh, Role::Admin, "admin", later).await,
        Err(PairingError::CodeNotPending { .. })
    ));
    assert_eq!(
        p.resolve("o", "discord:1").await.unwrap().map(|u| u.role),
        Some(Role::User)
    );
    assert_eq!(
        p.resolve("o2", "discord:1").await.unwrap(),
        None,
        "pairing is per org"
    );
    p.set_role("o", "discord:1", Role::Admin, "admin", later)
        .await
        .unwrap();
    assert_eq!(
        p.resolve("o", "discord:1").await.unwrap().map(|u| u.role),
        Some(Role::Admin)
    );
    p.revoke("o", "discord:1", "admin", later).await.unwrap();
    assert_eq!(p.resolve("o", "discord:1").await.unwrap(), None);
    // Hints: once a minute per sender.
    assert!(p.should_hint("o", "discord:9", now).await.unwrap());
    assert!(!p.should_hint("o", "discord:9", now + 59_000).await.unwrap());
    assert!(p.should_hint("o", "discord:9", now + 60_000).await.unwrap());
    let actions: Vec<String> = db
        .audit()
        .log("o", 50)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect();
    for a in ["pairing.approve", "pairing.set_role", "pairing.revoke"] {
        assert!(
            actions.iter().any(|x| x == a),
            "{a} not audited: {actions:?}"
        );
    }
}

async fn api_keys_resolve_to_active_users(db: Db) {
    let p = Pairing::new(db.clone(), PairingSettings::default());
    p.add_user("o", "discord:1", "One", Role::User, "test", 1)
        .await
        .unwrap();
    let key = p
        .create_api_key("o", "discord:1", "test", 2)
        .await
        .unwrap()
        .key;
    assert_eq!(
        p.api_key_user(&key).await.unwrap().map(|u| u.user_id),
        Some("discord:1".into())
    );
    assert_eq!(p.api_key_user("stw_not_a_key").await.unwrap(), None);
    assert!(
        p.create_api_key("o", "discord:404", "test", 2)
            .await
            .is_err(),
        "keys bind to paired users only"
    );
    p.revoke("o", "discord:1", "test", 3).await.unwrap();
    assert_eq!(
        p.api_key_user(&key).await.unwrap(),
        None,
        "a revoked user's key stops working"
    );
}

/// Keys have public ids, are listed without secrets, and revoked one by one
/// or with their user; a revoked key stays dead when the user is paired again.
async fn api_keys_are_revoked_by_id_and_with_their_user_for_good(db: Db) {
    let p = Pairing::new(db.clone(), PairingSettings::default());
    p.add_user("o", "discord:1", "One", Role::User, "test", 1)
        .await
        .unwrap();
    let a = p.create_api_key("o", "discord:1", "test", 2).await.unwrap();
    let b = p.create_api_key("o", "discord:1", "test", 3).await.unwrap();
    assert!(a.id.starts_with("key-") && a.id != b.id, "{a:?} {b:?}");
    let listed = p.api_keys("o", Some("discord:1")).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|k| k.key_id.as_str()).collect();
    assert_eq!(ids, [a.id.as_str(), b.id.as_str()]);
    assert!(listed.iter().all(|k| k.revoked_at.is_none()));
    let shown = serde_json::to_string(&listed).unwrap();
    for secret in [&a.key, &b.key] {
        let hash = hex::encode(Sha256::digest(secret.as_bytes()));
        assert!(
            !shown.contains(secret.as_str()) && !shown.contains(&hash),
            "a listing shows no secret and no hash: {shown}"
        );
    }
    assert!(p.api_keys("o2", None).await.unwrap().is_empty(), "per org");
    assert!(matches!(
        p.revoke_api_key("o2", &a.id, "admin", 4).await,
        Err(PairingError::UnknownApiKey(_))
    ));

    // One key revoked by id (as typed, any case): it stops; the other still works.
    let revoked = p
        .revoke_api_key("o", &a.id.to_lowercase(), "admin", 4)
        .await
        .unwrap();
    assert_eq!(
        (
            revoked.key_id.as_str(),
            revoked.revoked_at,
            revoked.revoked_by.as_deref()
        ),
        (a.id.as_str(), Some(4), Some("admin"))
    );
    assert_eq!(p.api_key_user(&a.key).await.unwrap(), None);
    assert_eq!(
        p.api_key_user(&b.key).await.unwrap().map(|u| u.user_id),
        Some("discord:1".into())
    );
    assert!(matches!(
        p.revoke_api_key("o", &a.id, "admin", 5).await,
        Err(PairingError::ApiKeyRevoked(_))
    ));
    assert!(
        !db.identity()
            .revoke_api_key(
                &a.id,
                memory::store::Act {
                    org: "o",
                    actor: "admin",
                    at: 5
                }
            )
            .await
            .unwrap(),
        "the store refuses a second revocation"
    );
    assert!(matches!(
        p.revoke_api_key("o", "key-NOSUCHID", "admin", 5).await,
        Err(PairingError::UnknownApiKey(_))
    ));

    // The user revoked: their remaining key with them, at that moment.
    let with_user = p.revoke("o", "discord:1", "admin", 6).await.unwrap();
    assert_eq!(with_user, vec![b.id.clone()]);
    let b_row = db.identity().api_key("o", &b.id).await.unwrap().unwrap();
    assert_eq!(b_row.revoked_at, Some(6));
    assert!(matches!(
        p.create_api_key("o", "discord:1", "admin", 7).await,
        Err(PairingError::UserNotActive(_))
    ));

    // Paired again through a new request: no old key comes back; a new one works.
    let PairOutcome::Code { code, .. } = p
        .request("o", "discord", "discord:1", "One", 8)
        .await
        .unwrap()
    else {
        panic!("a code");
    };
    p.approve("o", &code, Role::User, "admin", 9).await.unwrap();
    assert!(p.resolve("o", "discord:1").await.unwrap().is_some());
    for old in [&a.key, &b.key] {
        assert_eq!(p.api_key_user(old).await.unwrap(), None);
    }
    let c = p
        .create_api_key("o", "discord:1", "admin", 10)
        .await
        .unwrap();
    assert_eq!(
        p.api_key_user(&c.key).await.unwrap().map(|u| u.user_id),
        Some("discord:1".into())
    );
    let states: Vec<(String, Option<i64>)> = p
        .api_keys("o", None)
        .await
        .unwrap()
        .into_iter()
        .map(|k| (k.key_id, k.revoked_at))
        .collect();
    assert_eq!(
        states,
        [
            (a.id.clone(), Some(4)),
            (b.id.clone(), Some(6)),
            (c.id, None)
        ]
    );
    let revocations: Vec<String> = db
        .audit()
        .about("o", "api_key.revoke", "discord:1")
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert_eq!(revocations.len(), 2, "{revocations:?}");
    assert!(revocations[0].contains(&a.id) && revocations[1].contains(&b.id));
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

async fn retrieval_finds_rare_words_past_common_ones_and_only_active_records(db: Db) {
    // 1,100 notes share "report": a token too common to rank by.
    let many: Vec<NewRecord> = (0..1_100)
        .map(|i| {
            rec(
                "o",
                Scope::AgentNotes,
                None,
                &format!("r{i} report"),
                &format!("The r{i} report uses t{i}"),
                i,
            )
        })
        .collect();
    db.records().insert_records(&many).await.unwrap();
    let target = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::AgentNotes,
            None,
            "quarterly report",
            "The quarterly report uses ledger_q",
            1,
        ))
        .await
        .unwrap();
    db.records()
        .activate_kept("o", target, Cause::Live, "r", 1, &NoRevision)
        .await
        .unwrap();
    let scope = RetrievalScope {
        org: "o".into(),
        agent: "default".into(),
        speaker: None,
        shared: false,
        roles: Vec::new(),
    };
    let found = db
        .records()
        .retrieve(&scope, "quarterly report", 5)
        .await
        .unwrap();
    assert_eq!(found[0].record.id, target, "the rare word wins");
    // Once the statistics know "report" is common, a search leaves it out
    // when it has a rarer word, and still answers with it alone.
    db.optimize().await.unwrap();
    assert_eq!(
        db.row_count("memory_fts_common").await.unwrap(),
        2,
        "\"report\" (in 1,101 records) is the one common token, beside the index's size"
    );
    let found = db
        .records()
        .retrieve(&scope, "quarterly report", 5)
        .await
        .unwrap();
    assert_eq!(found[0].record.id, target, "the rare word still wins");
    let common = db
        .records()
        .retrieve(&scope, "the report", 5)
        .await
        .unwrap();
    assert_eq!(
        common.len(),
        5,
        "a common word alone finds its newest matches"
    );
    assert!(common
        .iter()
        .all(|r| r.hits == 1 && r.record.status == Status::Active));
    let newest = common.iter().map(|r| r.record.id).max().unwrap();
    assert!(
        newest >= target,
        "the newest matches, not the oldest: {newest}"
    );
    // The common word still counts for the records that hold a rarer one too:
    // of two old records sharing "ledger_q", the one about the report ranks first.
    let plain = db
        .records()
        .insert_record(&rec("o", Scope::AgentNotes, None, "", "ledger_q closes", 1))
        .await
        .unwrap();
    db.records()
        .activate_kept("o", plain, Cause::Live, "r", 1, &NoRevision)
        .await
        .unwrap();
    let found = db
        .records()
        .retrieve(&scope, "ledger_q report", 5)
        .await
        .unwrap();
    let order: Vec<i64> = found.iter().map(|r| r.record.id).collect();
    assert_eq!(order[..2], [target, plain], "{order:?}");
    // "ledger_q" is read whole and as "ledger"; "report" adds one.
    assert_eq!((found[0].hits, found[1].hits), (3, 2));
    db.records().forget_record("o", plain).await.unwrap();
    // A rare word that matches nothing leaves the common one to answer.
    let fallback = db
        .records()
        .retrieve(&scope, "zebrafish report", 5)
        .await
        .unwrap();
    assert_eq!(fallback.len(), 5, "the newest records about the report");
    // Retired records leave the index; undo brings them back.
    let newer = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::AgentNotes,
            None,
            "quarterly report",
            "The quarterly report uses ledger_new",
            2,
        ))
        .await
        .unwrap();
    let s = db
        .records()
        .activate_kept("o", newer, Cause::Live, "r2", 2, &NoRevision)
        .await
        .unwrap();
    let ids = |found: Vec<memory::store::Retrieved>| {
        found.into_iter().map(|r| r.record.id).collect::<Vec<_>>()
    };
    let found = ids(db.records().retrieve(&scope, "ledger_q", 5).await.unwrap());
    assert!(
        !found.contains(&target),
        "a superseded record is never read"
    );
    assert_eq!(found, vec![newer], "the live value shares the word ledger");
    db.records()
        .undo_revision("o", s.revisions[0], "t", 3)
        .await
        .unwrap();
    let found = ids(db.records().retrieve(&scope, "ledger_q", 5).await.unwrap());
    assert_eq!(
        found[0], target,
        "back after undo, the exact identifier first"
    );
    // Pending proposals are not readable either.
    let mut p = rec(
        "o",
        Scope::AgentNotes,
        None,
        "vpn",
        "The VPN is at pending.example",
        4,
    );
    p.status = Status::Pending;
    db.records().insert_record(&p).await.unwrap();
    assert!(db
        .records()
        .retrieve(&scope, "pending.example", 5)
        .await
        .unwrap()
        .is_empty());
}

/// When every word of a query is common in every place the asker reads, the
/// engine intersects: the records holding both words come first, though the
/// newest matches of each word hold only one, and no other organisation's or
/// agent's record holding both is read.
async fn a_query_of_common_words_finds_the_records_holding_both_and_never_anothers(db: Db) {
    // In each of the org's two places: 700 old records with both words, then
    // 400 with "report" and 400 with "ledger" alone (1,100 each: common).
    let mut many: Vec<NewRecord> = Vec::new();
    for scope in [Scope::OrgPolicy, Scope::AgentNotes] {
        let r =
            |subject: String, content: String, at| rec("o", scope, None, &subject, &content, at);
        many.extend((0..700).map(|i| {
            r(
                format!("b{i}"),
                format!("The b{i} report and its ledger"),
                i,
            )
        }));
        many.extend((0..400).map(|i| {
            r(
                format!("r{i}"),
                format!("The r{i} report is due"),
                1_000 + i,
            )
        }));
        many.extend((0..400).map(|i| {
            r(
                format!("l{i}"),
                format!("The l{i} ledger is kept"),
                2_000 + i,
            )
        }));
    }
    db.records().insert_records(&many).await.unwrap();
    let mut sales = rec(
        "o",
        Scope::AgentNotes,
        None,
        "s",
        "sales report and ledger",
        5_000,
    );
    sales.agent = "sales".into();
    let theirs = db
        .records()
        .insert_records(&[
            sales,
            rec(
                "other",
                Scope::AgentNotes,
                None,
                "x",
                "other org report and ledger",
                5_001,
            ),
            rec(
                "o",
                Scope::Personal,
                Some("u2"),
                "u2",
                "u2 report and ledger",
                5_002,
            ),
        ])
        .await
        .unwrap();
    db.optimize().await.unwrap();
    assert_eq!(
        db.row_count("memory_fts_common").await.unwrap(),
        5,
        "\"report\" and \"ledger\" are common in both places (beside the index's size)"
    );
    let scope = notes_scope("o", None);
    let found = db
        .records()
        .retrieve(&scope, "report ledger", 10)
        .await
        .unwrap();
    assert_eq!(found.len(), 10);
    for r in &found {
        assert_eq!(r.hits, 2, "holds both words: {:?}", r.record.content);
        assert!(
            !theirs.contains(&r.record.id),
            "reached {:?}",
            r.record.content
        );
        assert_eq!(
            (r.record.org.as_str(), r.record.agent.as_str()),
            ("o", "default")
        );
    }
    // One common word alone: its newest matches, still only the org's own.
    let newest = db.records().retrieve(&scope, "ledger", 5).await.unwrap();
    assert_eq!(newest.len(), 5);
    for r in &newest {
        assert!(
            r.record.content.starts_with("The l"),
            "{:?}",
            r.record.content
        );
        assert!(!theirs.contains(&r.record.id));
    }
}

/// Whatever takes a record out of the active set takes it out of the index:
/// it is never found again, and nothing of it stays (on PostgreSQL, not one
/// posting).
async fn forgotten_erased_and_superseded_records_leave_the_index(db: Db) {
    let ids = db
        .records()
        .insert_records(&[
            note("vpn", "The VPN is at vpn.example", 1),
            note("wiki", "The wiki is at wiki.example", 2),
            rec(
                "o",
                Scope::Personal,
                Some("u1"),
                "locker",
                "My locker is lockerbay 7",
                3,
            ),
            rec(
                "o",
                Scope::Personal,
                Some("u2"),
                "locker",
                "My locker is lockerbay 9",
                4,
            ),
        ])
        .await
        .unwrap();
    let before = indexed(&db).await;
    assert_eq!(before.0, 4);
    let notes = notes_scope("o", None);
    db.records().forget_record("o", ids[0]).await.unwrap();
    assert!(!found_ids(&db, &notes, "vpn.example")
        .await
        .contains(&ids[0]));
    let after = indexed(&db).await;
    assert_eq!(after.0, 3, "the forgotten record's row is gone");
    assert!(
        db.backend() == Backend::Sqlite || after.1 < before.1,
        "and its postings: {before:?} {after:?}"
    );
    // A newer value of the wiki supersedes the old one, which is no longer found.
    let newer = db
        .records()
        .insert_record(&note("wiki", "The wiki moved to docs.example", 5))
        .await
        .unwrap();
    db.records()
        .activate_kept("o", newer, Cause::Live, "r", 5, &NoRevision)
        .await
        .unwrap();
    assert_eq!(found_ids(&db, &notes, "wiki").await, vec![newer]);
    // Erasing a person takes every record of theirs out, and no one else's.
    db.erase_person("o", "u1").await.unwrap();
    assert!(found_ids(&db, &notes_scope("o", Some("u1")), "lockerbay")
        .await
        .is_empty());
    assert_eq!(
        found_ids(&db, &notes_scope("o", Some("u2")), "lockerbay").await,
        vec![ids[3]]
    );
    db.records().forget_record("o", newer).await.unwrap();
    db.erase_person("o", "u2").await.unwrap();
    assert_eq!(indexed(&db).await, (0, 0), "nothing is left indexed");
}

/// How many records the index holds, and on PostgreSQL how many postings
/// (SQLite's FTS5 keeps its own: 0 counted).
async fn indexed(db: &Db) -> (i64, i64) {
    let rows = db.row_count("memory_fts").await.unwrap();
    match db.backend() {
        Backend::Postgres => (rows, db.row_count("memory_fts_postings").await.unwrap()),
        Backend::Sqlite => (rows, 0),
    }
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

/// The ids of the live lines of conversation `conversation` of `o`, oldest first.
async fn live_ids(db: &Db, conversation: &str) -> Vec<i64> {
    let live = db
        .conversations()
        .history("o", "default", conversation)
        .await
        .unwrap();
    live.iter().map(|m| m.id).collect()
}

/// The ids of the lines of archive `id` of `o`, oldest first.
async fn archived_ids(db: &Db, id: i64) -> Vec<i64> {
    let lines = db.conversations().archive_lines("o", id).await.unwrap();
    lines.iter().map(|m| m.id).collect()
}

/// The archive of lines `first_id..=last_id` of group conversation `c` of `o`.
fn slice_of_c(first_id: i64, last_id: i64) -> NewArchive<'static> {
    NewArchive {
        org: "o",
        agent: "default",
        channel: "teams",
        conversation: "c",
        conversation_kind: "group",
        first_id,
        last_id,
        started_at: 0,
        ended_at: 1,
        trust: "mixed",
        summary: "s",
        markdown: "",
        created_at: 2,
        created_by: "test",
    }
}

/// A line of user `teams:1` in group conversation `conversation` of organisation `o`.
fn teams_line<'a>(conversation: &'a str, text: &'a str, said_at: i64) -> NewMessage<'a> {
    NewMessage {
        org: "o",
        agent: "default",
        channel: "teams",
        conversation,
        conversation_kind: "group",
        author: "person",
        sender: Some("teams:1"),
        sender_role: Some("user"),
        text,
        said_at,
    }
}

/// An agent note of organisation `o`.
fn note(subject: &str, content: &str, at: i64) -> NewRecord {
    rec("o", Scope::AgentNotes, None, subject, content, at)
}

fn notes_scope(org: &str, speaker: Option<&str>) -> RetrievalScope {
    RetrievalScope {
        org: org.into(),
        agent: "default".into(),
        speaker: speaker.map(str::to_string),
        shared: false,
        roles: Vec::new(),
    }
}

async fn found_ids(db: &Db, scope: &RetrievalScope, query: &str) -> Vec<i64> {
    db.records()
        .retrieve(scope, query, 5)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.record.id)
        .collect()
}

async fn ranked_search_finds_word_forms_identifier_parts_and_cjk(db: Db) {
    let ids = db
        .records()
        .insert_records(&[
            note("deploys", "Deployments are frozen on Fridays", 1),
            note("daily report", "The daily report reads example_orders", 2),
            note("wiki", "The wiki is at wiki.example.com", 3),
            note("日报", "日报使用 example_orders 表", 4),
            note("lunch", "Lunch is served at noon", 5),
        ])
        .await
        .unwrap();
    let scope = notes_scope("o", None);
    // Another form of the same word.
    assert_eq!(
        found_ids(&db, &scope, "Can I deploy on a friday?").await[0],
        ids[0]
    );
    // A part of an identifier, and the identifier whole.
    let orders = found_ids(&db, &scope, "which orders table?").await;
    assert!(
        orders.contains(&ids[1]) && orders.contains(&ids[3]),
        "{orders:?}"
    );
    assert_eq!(
        found_ids(&db, &scope, "example_orders daily").await[0],
        ids[1]
    );
    // A host name, whole.
    assert_eq!(found_ids(&db, &scope, "wiki.example.com").await[0], ids[2]);
    // Chinese has no spaces: "日报" is found inside a sentence.
    assert_eq!(
        found_ids(&db, &scope, "今天的日报是什么?").await,
        vec![ids[3]]
    );
    // Nothing shared, nothing found; stopwords alone find nothing.
    assert!(found_ids(&db, &scope, "quantum chromodynamics")
        .await
        .is_empty());
    assert!(found_ids(&db, &scope, "what is the").await.is_empty());
    // Ranked: the record holding more of the query comes first.
    let both = found_ids(&db, &scope, "daily report example_orders").await;
    assert_eq!(both[0], ids[1], "{both:?}");
}

/// The search text goes to FTS5's MATCH and PostgreSQL's tsquery only as
/// quoted tokens: operators, quotes and column filters in it are words or
/// nothing, and no query reaches another person's, agent's or org's records.
async fn search_text_is_never_engine_syntax_and_never_leaves_its_scope(db: Db) {
    let mine = db
        .records()
        .insert_record(&rec(
            "o",
            Scope::Personal,
            Some("u1"),
            "vpn",
            "my vpn token place is vault",
            1,
        ))
        .await
        .unwrap();
    db.records()
        .insert_records(&[
            rec(
                "o",
                Scope::Personal,
                Some("u2"),
                "vpn",
                "u2 secret vpn vault",
                2,
            ),
            rec(
                "other",
                Scope::AgentNotes,
                None,
                "vpn",
                "other org vpn vault",
                3,
            ),
            {
                let mut r = rec(
                    "o",
                    Scope::AgentNotes,
                    None,
                    "vpn",
                    "sales agent vpn vault",
                    4,
                );
                r.agent = "sales".into();
                r
            },
        ])
        .await
        .unwrap();
    let scope = notes_scope("o", Some("u1"));
    let hostile = [
        "vault",
        "vault OR vpn",
        "\"vault\" OR vis : k",
        "vis:vault",
        "tokens : (vault) OR vis : (*)",
        "vault*",
        "NEAR(vault vpn, 2)",
        "vault') OR 1=1 --",
        "'vault' | !'x' & 'y':*",
        "vault \\ \\' ''",
        "-vault ^vpn +secret",
        "(((((vault",
        "\u{0}vault\u{1b}[31m",
    ];
    for q in hostile {
        let found = db.records().retrieve(&scope, q, 10).await;
        let found = found.unwrap_or_else(|e| panic!("{q:?}: {e}"));
        for r in &found {
            assert_eq!(r.record.id, mine, "{q:?} reached {:?}", r.record.content);
        }
    }
    // Another scope's names, typed as words, find nothing of it.
    for names in [
        "u2 vault",
        "user:default:u2",
        "other org vault",
        "agent:sales vault",
        "sales",
    ] {
        let found = db.records().retrieve(&scope, names, 10).await.unwrap();
        assert!(
            found.iter().all(|r| r.record.id == mine),
            "{names}: {found:?}"
        );
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

/// Many lines stored at once (turns share one commit): each is committed by
/// the time its store returns — a second connection reads it at once — keeps
/// its own id, and of two deliveries racing with one platform id exactly one
/// is stored. On a SQLite file and on PostgreSQL, each with a second pool.
async fn concurrent_lines_are_committed_when_stored(db: Db, other: Db) {
    const LINES: usize = 64;
    const IDS: usize = 48;
    let mut tasks = Vec::new();
    for i in 0..LINES {
        let (db, other) = (db.clone(), other.clone());
        tasks.push(tokio::spawn(async move {
            let conversation = format!("c{}", i % IDS);
            let text = format!("line {i}");
            let line = teams_line(&conversation, &text, i as i64);
            let platform_id = format!("teams:1/p{}", i % IDS);
            let stored = db
                .conversations()
                .insert_message_once(&line, Some(&platform_id))
                .await
                .unwrap();
            if let Some(id) = stored {
                let seen = other
                    .conversations()
                    .history("o", "default", &conversation)
                    .await
                    .unwrap();
                assert!(
                    seen.iter().any(|m| m.id == id && m.text == text),
                    "{text}: stored as {id}, but another connection does not read it"
                );
                assert!(other
                    .conversations()
                    .is_seen("o", "teams", &platform_id)
                    .await
                    .unwrap());
            }
            stored
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    assert_eq!(ids.len(), IDS, "one line per platform id");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), IDS, "every line has its own id");
    let replies = replies_at_once(&db, 16).await;
    assert_eq!(replies.len(), 16);
}

/// `n` lines without platform ids stored at once; their ids.
async fn replies_at_once(db: &Db, n: usize) -> Vec<i64> {
    let mut tasks = Vec::new();
    for i in 0..n {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let text = format!("reply {i}");
            db.conversations()
                .insert_message(&NewMessage {
                    org: "o",
                    agent: "default",
                    channel: "teams",
                    conversation: "replies",
                    conversation_kind: "group",
                    author: "agent",
                    sender: None,
                    sender_role: None,
                    text: &text,
                    said_at: i as i64,
                })
                .await
                .unwrap()
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.unwrap());
    }
    let stored = db
        .conversations()
        .history("o", "default", "replies")
        .await
        .unwrap();
    assert_eq!(stored.len(), n);
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_lines_are_committed_when_stored_on_sqlite() {
    let (db, dir) = sqlite_file_db().await;
    let url = format!("sqlite:{}", dir.path().join("steward.db").display());
    let other = Db::connect(&url).await.unwrap();
    concurrent_lines_are_committed_when_stored(db, other).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_lines_are_committed_when_stored_on_postgres() {
    let Some(url) = steward_tests::postgres_url() else {
        return;
    };
    let schema = format!("t_lines_{}", std::process::id());
    let db = Db::connect_fresh_schema(&url, &schema).await.unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    let other = Db::connect(&format!("{url}{sep}options=-c%20search_path%3D{schema}"))
        .await
        .unwrap();
    concurrent_lines_are_committed_when_stored(db, other).await;
}

/// `conversation_view`: the newest live lines before the message being
/// answered (newest first, at most the window), the size of the whole live
/// history in characters (not bytes), and the newest summaries of trimmed
/// history, each of this conversation only.
async fn a_reply_reads_its_window_the_live_size_and_the_summaries_at_once(db: Db) {
    let texts = ["one", "two", "naïve café", "четыре", "five"];
    let mut ids = Vec::new();
    for (i, (conversation, text)) in texts
        .iter()
        .map(|t| ("c", *t))
        .chain([("elsewhere", "not this one")])
        .enumerate()
    {
        ids.push(
            db.conversations()
                .insert_message(&teams_line(conversation, text, i as i64))
                .await
                .unwrap(),
        );
    }
    for (line, summary) in [(ids[0], "first summary"), (ids[1], "second summary")] {
        db.conversations()
            .archive_slice(&NewArchive {
                org: "o",
                agent: "default",
                channel: "teams",
                conversation: "c",
                conversation_kind: "group",
                first_id: line,
                last_id: line,
                started_at: 0,
                ended_at: 1,
                trust: "trusted",
                summary,
                markdown: "",
                created_at: 10,
                created_by: "test",
            })
            .await
            .unwrap();
    }
    let live = LiveSize {
        messages: 3,
        chars: ("naïve café".chars().count() + "четыре".chars().count() + 4) as i64,
    };
    let view = db
        .conversations()
        .conversation_view("o", "default", "c", ids[4], 1, 1)
        .await
        .unwrap();
    let texts_of = |v: &memory::store::ConversationView| {
        v.recent.iter().map(|m| m.text.clone()).collect::<Vec<_>>()
    };
    assert_eq!(
        texts_of(&view),
        vec!["четыре"],
        "the window: before the message, newest"
    );
    assert_eq!(view.recent[0].id, ids[3]);
    assert_eq!(view.recent[0].sender.as_deref(), Some("teams:1"));
    assert_eq!(
        view.live, live,
        "the whole live history, this message included"
    );
    assert_eq!(view.summaries, vec!["second summary"]);
    let wide = db
        .conversations()
        .conversation_view("o", "default", "c", ids[4], 10, 10)
        .await
        .unwrap();
    assert_eq!(
        texts_of(&wide),
        vec!["четыре", "naïve café"],
        "trimmed lines are not live"
    );
    assert_eq!(wide.summaries, vec!["second summary", "first summary"]);
    let none = db
        .conversations()
        .conversation_view("o", "default", "c", ids[4], 0, 0)
        .await
        .unwrap();
    assert!(none.recent.is_empty() && none.summaries.is_empty());
    assert_eq!(none.live, live, "the size is read even with no window");
    let empty = db
        .conversations()
        .conversation_view("o", "default", "nothing here", i64::MAX, 5, 5)
        .await
        .unwrap();
    assert_eq!(empty, memory::store::ConversationView::default());
}

/// The live history's size is kept by the database (`live_history`), not
/// summed per turn: after lines stored together in one group commit, a
/// redelivery, a trim and an erasure, it is what counting the live lines says.
async fn the_live_size_follows_every_insert_trim_erasure_and_redelivery(db: Db) {
    let line = |conversation: &'static str, sender: &'static str, text: String| {
        let db = db.clone();
        async move {
            db.conversations()
                .insert_message_once(
                    &NewMessage {
                        sender: Some(sender),
                        ..teams_line(conversation, &text, 1)
                    },
                    Some(&format!("{sender}/{text}")),
                )
                .await
                .unwrap()
        }
    };
    // Concurrent lines share batches of the group commit; one is sent twice.
    let mut tasks = Vec::new();
    for i in 0..24 {
        let (conversation, sender) = if i % 3 == 0 {
            ("d", "teams:2")
        } else {
            ("c", "teams:1")
        };
        let text = format!("line {i} — naïve {}", "é".repeat(i));
        tasks.push(tokio::spawn(line(conversation, sender, text)));
    }
    tasks.push(tokio::spawn(line(
        "c",
        "teams:1",
        "line 1 — naïve é".into(),
    )));
    let mut stored = Vec::new();
    for t in tasks {
        stored.extend(t.await.unwrap());
    }
    assert_eq!(stored.len(), 24, "the redelivery stores nothing");
    let counted = |db: Db, conversation: &'static str| async move {
        let live = db
            .conversations()
            .history("o", "default", conversation)
            .await
            .unwrap();
        let chars: usize = live.iter().map(|m| m.text.chars().count()).sum();
        (live.len() as i64, chars as i64)
    };
    for c in ["c", "d"] {
        assert_eq!(
            db.conversations()
                .live_size("o", "default", c)
                .await
                .unwrap(),
            counted(db.clone(), c).await,
            "after the inserts, conversation {c}"
        );
    }
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "c")
            .await
            .unwrap()
            .0,
        16
    );
    // A trim takes its slice out of the live history.
    let slice: Vec<i64> = db
        .conversations()
        .history("o", "default", "c")
        .await
        .unwrap()
        .iter()
        .take(5)
        .map(|m| m.id)
        .collect();
    db.conversations()
        .archive_slice(&slice_of_c(slice[0], slice[4]))
        .await
        .unwrap();
    // Erasing a person rewrites the text of their lines, live and trimmed.
    db.erase_person("o", "teams:2").await.unwrap();
    for c in ["c", "d"] {
        assert_eq!(
            db.conversations()
                .live_size("o", "default", c)
                .await
                .unwrap(),
            counted(db.clone(), c).await,
            "after a trim and an erasure, conversation {c}"
        );
    }
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "c")
            .await
            .unwrap()
            .0,
        11
    );
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "d")
            .await
            .unwrap(),
        (8, 8 * "[erased]".chars().count() as i64),
        "an erased line counts as its new text"
    );
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "none")
            .await
            .unwrap(),
        (0, 0)
    );
    let view = db
        .conversations()
        .conversation_view("o", "default", "d", i64::MAX, 0, 0)
        .await
        .unwrap();
    assert_eq!(
        (view.live.messages, view.live.chars),
        db.conversations()
            .live_size("o", "default", "d")
            .await
            .unwrap()
    );
}

/// Two turns of one conversation can both find it over budget and trim the
/// same oldest slice: one archive holds it, the other trim writes nothing,
/// and the live history is what is left.
async fn a_slice_is_archived_once_however_many_trims_race_for_it(db: Db) {
    let mut ids = Vec::new();
    for (i, conversation) in ["c", "c", "d", "c", "c", "c"].into_iter().enumerate() {
        let text = format!("line {i}");
        ids.push(
            db.conversations()
                .insert_message(&teams_line(conversation, &text, i as i64))
                .await
                .unwrap(),
        );
    }
    let trim = |first: i64, last: i64| {
        let db = db.clone();
        async move {
            db.conversations()
                .archive_slice(&slice_of_c(first, last))
                .await
                .unwrap()
        }
    };
    // The first slice spans a line of another conversation (ids interleave).
    let racing: Vec<_> = (0..4).map(|_| tokio::spawn(trim(ids[0], ids[3]))).collect();
    let mut archived = Vec::new();
    for t in racing {
        archived.extend(t.await.unwrap());
    }
    assert_eq!(
        archived.len(),
        1,
        "one of the racing trims archives the slice"
    );
    assert_eq!(
        trim(ids[0], ids[3]).await,
        None,
        "a trimmed slice is not archived again"
    );
    assert_eq!(trim(ids[1], ids[1]).await, None, "nor any part of it");
    let lines = archived_ids(&db, archived[0]).await;
    assert_eq!(
        lines,
        vec![ids[0], ids[1], ids[3]],
        "its lines, this conversation's only"
    );
    let live = live_ids(&db, "c").await;
    assert_eq!(live, vec![ids[4], ids[5]]);
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "c")
            .await
            .unwrap(),
        (2, 2 * "line 4".len() as i64)
    );
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "d")
            .await
            .unwrap(),
        (1, 6)
    );
    // The next slice begins after the watermark.
    assert!(trim(ids[4], ids[4]).await.is_some());
    assert_eq!(
        db.conversations()
            .archives("o", Some("c"))
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        db.conversations()
            .live_size("o", "default", "c")
            .await
            .unwrap(),
        (1, 6)
    );
}

/// Trims go through the group commit of lines and share its transactions:
/// a slice archived while lines of the same and other conversations are
/// being stored loses none of them, counts none twice, and the live size
/// stays what the live lines add up to.
async fn a_trim_committed_with_lines_beside_it_keeps_every_line_and_the_live_size(db: Db) {
    let mut first = Vec::new();
    for i in 0..10 {
        let text = format!("old line {i}");
        first.push(
            db.conversations()
                .insert_message(&teams_line("c", &text, i))
                .await
                .unwrap(),
        );
    }
    let writers: Vec<_> = (0..40)
        .map(|i| {
            let db = db.clone();
            tokio::spawn(async move {
                let conversation = if i % 2 == 0 { "c" } else { "d" };
                let text = format!("new line {i} of {}", "x".repeat(i));
                db.conversations()
                    .insert_message(&teams_line(conversation, &text, 100 + i as i64))
                    .await
                    .unwrap()
            })
        })
        .collect();
    // Two trims of the slice race the lines: one archives it.
    let trims: Vec<_> = (0..2)
        .map(|_| {
            let db = db.clone();
            let (a, b) = (first[0], first[5]);
            tokio::spawn(async move {
                db.conversations()
                    .archive_slice(&slice_of_c(a, b))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut new_ids = Vec::new();
    for w in writers {
        new_ids.push(w.await.unwrap());
    }
    let mut archived = Vec::new();
    for t in trims {
        archived.extend(t.await.unwrap());
    }
    assert_eq!(archived.len(), 1, "the slice is archived once");
    let in_archive = archived_ids(&db, archived[0]).await;
    assert_eq!(in_archive, first[..6].to_vec(), "the slice, and only it");
    for conversation in ["c", "d"] {
        let live = db
            .conversations()
            .history("o", "default", conversation)
            .await
            .unwrap();
        let chars: i64 = live.iter().map(|m| m.text.chars().count() as i64).sum();
        assert_eq!(
            db.conversations()
                .live_size("o", "default", conversation)
                .await
                .unwrap(),
            (live.len() as i64, chars),
            "the live size of {conversation} is its live lines'"
        );
    }
    let live_c = live_ids(&db, "c").await;
    let live_d = db
        .conversations()
        .history("o", "default", "d")
        .await
        .unwrap();
    assert_eq!(
        live_c.len(),
        4 + 20,
        "c keeps its 4 newer old lines and its 20 new ones"
    );
    assert_eq!(live_d.len(), 20, "d loses nothing");
    for id in &new_ids {
        assert!(
            live_c.contains(id) || live_d.iter().any(|m| m.id == *id),
            "line {id} is live"
        );
    }
}

/// A turn's first read (`Db::opening`, through `Pairing::open_turn`): whether
/// the platform id was seen in this channel, the sender's active user, and
/// the conversation's view as `conversation_view` reads it — or none when
/// not asked; a revoked user is nobody from the next read on.
async fn a_turns_first_read_answers_seen_sender_and_view_at_once(db: Db) {
    let pairing = Pairing::new(db.clone(), PairingSettings::default());
    pairing
        .add_user("o", "teams:1", "Ana", Role::Admin, "test", 1)
        .await
        .unwrap();
    for (i, text) in ["first", "second", "third"].iter().enumerate() {
        db.conversations()
            .insert_message_once(
                &NewMessage {
                    org: "o",
                    agent: "default",
                    channel: "teams",
                    conversation: "c",
                    conversation_kind: "direct",
                    author: "person",
                    sender: Some("teams:1"),
                    sender_role: Some("admin"),
                    text,
                    said_at: i as i64,
                },
                Some(&format!("teams:1/m{i}")),
            )
            .await
            .unwrap();
    }
    let view = ViewOf {
        agent: "default",
        conversation: "c",
        lines: 2,
        summaries: 3,
    };
    let open = |platform_id: Option<&'static str>, stored_id: Option<&'static str>, view| {
        let pairing = pairing.clone();
        async move {
            pairing
                .open_turn(&Opening {
                    org: "o",
                    channel: "teams",
                    platform_id,
                    stored_id,
                    view,
                    audited: &[],
                })
                .await
                .unwrap()
        }
    };
    let o = open(Some("teams:1/m1"), Some("teams:1"), Some(view)).await;
    assert!(o.seen, "a redelivery is seen");
    let user = o.user.expect("the sender's user");
    assert_eq!((user.user_id.as_str(), user.role), ("teams:1", Role::Admin));
    assert_eq!(
        o.view,
        Some(
            db.conversations()
                .conversation_view("o", "default", "c", i64::MAX, 2, 3)
                .await
                .unwrap()
        ),
        "the same view a reply reads"
    );
    let texts: Vec<&str> = o
        .view
        .as_ref()
        .unwrap()
        .recent
        .iter()
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(texts, ["third", "second"]);
    assert_eq!(o.view.as_ref().unwrap().live.messages, 3);
    let fresh = open(Some("teams:1/m9"), Some("teams:1"), None).await;
    assert!(!fresh.seen && fresh.user.is_some() && fresh.view.is_none());
    let other_channel = Opening {
        channel: "discord",
        ..Opening {
            org: "o",
            channel: "teams",
            platform_id: Some("teams:1/m1"),
            stored_id: None,
            view: None,
            audited: &[],
        }
    };
    let elsewhere = pairing.open_turn(&other_channel).await.unwrap();
    assert!(
        !elsewhere.seen && elsewhere.user.is_none(),
        "ids are per channel"
    );
    let stranger = open(None, Some("teams:404"), Some(view)).await;
    assert!(!stranger.seen && stranger.user.is_none());
    assert!(stranger.roles.is_empty() && stranger.audited.is_empty());
    // The same read brings what the turn would otherwise read apart: the
    // sender's roles, the agent's skills generation, and which of the audit
    // actions asked about the log holds about the sender.
    for role in ["oncall", "billing"] {
        db.role_memory()
            .change(
                "o",
                "teams:1",
                memory::role_memory::RoleChange::Add(role),
                "test",
                2,
            )
            .await
            .unwrap();
    }
    db.audit()
        .append(
            "o",
            "test",
            "pairing.approve",
            "teams:1",
            &AdminText::empty(),
            2,
        )
        .await
        .unwrap();
    let asked = ["pairing.approve", "oversight.promised"];
    let full = pairing
        .open_turn(&Opening {
            org: "o",
            channel: "teams",
            platform_id: Some("teams:1/m7"),
            stored_id: Some("teams:1"),
            view: Some(view),
            audited: &asked,
        })
        .await
        .unwrap();
    assert_eq!(
        full.roles,
        db.role_memory().roles_of("o", "teams:1").await.unwrap()
    );
    assert_eq!(full.roles, ["billing", "oncall"]);
    assert_eq!(
        full.skill_generation,
        Some(db.skills().generation("o", "default").await.unwrap())
    );
    assert_eq!(full.audited, ["pairing.approve"]);
    assert_eq!(
        full.view,
        open(Some("teams:1/m7"), Some("teams:1"), Some(view))
            .await
            .view,
        "the view is the same whatever else is asked"
    );
    pairing.revoke("o", "teams:1", "test", 2).await.unwrap();
    assert!(
        open(None, Some("teams:1"), None).await.user.is_none(),
        "revoked: nobody from the next read on"
    );
}

/// How the speaker wants to be served is added to every retrieval, whatever
/// the words: their newest `limit` active preferences of this agent or of the
/// person tier, once each, and never another person's or another agent's.
async fn the_speakers_newest_preferences_come_with_every_retrieval(db: Db) {
    let pref = |agent: &str, scope: Scope, owner: &str, content: &str, at: i64| {
        let mut r = rec("o", scope, Some(owner), content, content, at);
        r.agent = agent.into();
        r.kind = "preference".into();
        r
    };
    for r in [
        rec(
            "o",
            Scope::AgentNotes,
            None,
            "toner",
            "printer toner is in room 4",
            1,
        ),
        pref("default", Scope::Personal, "u1", "answer in French", 2),
        pref("default", Scope::Personal, "u1", "use metric units", 3),
        pref("default", Scope::Person, "u1", "keep answers brief", 4),
        pref("other", Scope::Personal, "u1", "other agent style", 5),
        pref("default", Scope::Personal, "u2", "someone else's style", 6),
    ] {
        db.records().insert_record(&r).await.unwrap();
    }
    let scope = notes_scope("o", Some("u1"));
    let contents = |v: Vec<memory::store::Retrieved>| {
        v.into_iter()
            .map(|r| r.record.written.content)
            .collect::<Vec<_>>()
    };
    let found = contents(
        db.records()
            .retrieve(&scope, "printer toner", 2)
            .await
            .unwrap(),
    );
    assert_eq!(
        found,
        vec![
            "printer toner is in room 4",
            "keep answers brief",
            "use metric units"
        ],
        "the hit, then the two newest preferences"
    );
    let unrelated = contents(
        db.records()
            .retrieve(&scope, "zzqx nothing", 2)
            .await
            .unwrap(),
    );
    assert_eq!(unrelated, vec!["keep answers brief", "use metric units"]);
    let named = contents(db.records().retrieve(&scope, "French", 2).await.unwrap());
    assert_eq!(
        named,
        vec!["answer in French", "keep answers brief", "use metric units"],
        "a preference the words find is not added twice, and the newest two still come"
    );
    let all = contents(db.records().retrieve(&scope, "French", 10).await.unwrap());
    assert_eq!(all.iter().filter(|c| c.contains("French")).count(), 1);
    for leak in ["other agent style", "someone else's style"] {
        assert!(!all.iter().any(|c| c == leak), "{leak}: {all:?}");
    }
    let anonymous = contents(
        db.records()
            .retrieve(&notes_scope("o", None), "zzqx", 10)
            .await
            .unwrap(),
    );
    assert!(
        anonymous.is_empty(),
        "no speaker, no preferences: {anonymous:?}"
    );
}

/// Every search for a scope goes through one guard: an incomplete scope (no
/// organisation, no agent, every agent) is refused by each path, and by
/// meaning, as by words, a scope reads only its own places.
async fn every_search_path_refuses_an_incomplete_scope_and_reads_only_its_places(db: Db) {
    let qv = QueryVector {
        model: "m".into(),
        values: vec![1.0, 0.0, 0.0],
        min_similarity: 0.0,
    };
    let u1 = notes_scope("o", Some("u1"));
    for bad in [
        RetrievalScope {
            org: String::new(),
            ..u1.clone()
        },
        RetrievalScope {
            agent: String::new(),
            ..u1.clone()
        },
        RetrievalScope {
            agent: memory::ANY_AGENT.into(),
            ..u1.clone()
        },
    ] {
        let refused = |r: Result<_, StoreError>| matches!(r, Err(StoreError::Refused(_)));
        let records = db.records();
        assert!(
            refused(records.retrieve(&bad, "toner", 5).await.map(|_| ())),
            "{bad:?}"
        );
        let near = records.retrieve_by_meaning(&bad, &qv, 5).await;
        assert!(refused(near.map(|_| ())), "{bad:?}");
        let plan = records.vector_search_plan(&bad, &qv, 5).await;
        assert!(refused(plan.map(|_| ())), "{bad:?}");
    }
    // Vectors on PostgreSQL need pgvector: the embeddings suite searches them there.
    if db.backend() != Backend::Sqlite {
        return;
    }
    let toner = "printer toner is in room 4";
    let placed = [
        rec("o", Scope::AgentNotes, None, "toner", toner, 1),
        rec("o", Scope::OrgPolicy, None, "toner", "toner policy", 2),
        rec("o", Scope::Personal, Some("u1"), "toner", "u1's toner", 3),
        rec(
            "o",
            Scope::Person,
            Some("u1"),
            "toner",
            "u1's person toner",
            4,
        ),
        rec("o", Scope::Personal, Some("u2"), "toner", "u2's toner", 5),
        NewRecord {
            agent: "other".into(),
            ..rec(
                "o",
                Scope::AgentNotes,
                None,
                "toner",
                "other agent's toner",
                6,
            )
        },
        rec("o2", Scope::AgentNotes, None, "toner", "o2's toner", 7),
    ];
    let ids = db.records().insert_records(&placed).await.unwrap();
    let vectors: Vec<(Unembedded, Vec<f32>)> = placed
        .iter()
        .zip(&ids)
        .map(|(r, id)| {
            let u = Unembedded {
                id: *id,
                org: r.org.clone(),
                content: r.content.clone(),
            };
            (u, qv.values.clone())
        })
        .collect();
    db.records().store_vectors("m", &vectors).await.unwrap();
    for (scope, expected) in [
        (
            u1.clone(),
            vec![toner, "toner policy", "u1's toner", "u1's person toner"],
        ),
        (notes_scope("o", None), vec![toner, "toner policy"]),
        (
            notes_scope("o", Some("u2")),
            vec![toner, "toner policy", "u2's toner"],
        ),
        (notes_scope("o2", Some("u1")), vec!["o2's toner"]),
    ] {
        let mut found: Vec<String> = db
            .records()
            .retrieve_by_meaning(&scope, &qv, 20)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.record.written.content)
            .collect();
        found.sort();
        let mut expected: Vec<String> = expected.into_iter().map(str::to_string).collect();
        expected.sort();
        assert_eq!(found, expected, "{scope:?}");
    }
}
