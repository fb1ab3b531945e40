//! The storage conformance suite, retrieval: the same checks on SQLite and
//! PostgreSQL of scopes, ranked search and its index, search text that is
//! never engine syntax, and the speaker's preferences.
//! PostgreSQL runs when STEWARD_TEST_POSTGRES_URL is set (always, under CI).

use memory::store::{QueryVector, RetrievalScope, Unembedded};
use memory::write::{NoRevision, RawWrites};
use memory::{Backend, Cause, Db, NewRecord, Scope, Status, StoreError};
use steward_tests::retrieval::{found_ids, indexed, note, notes_scope};
use steward_tests::{postgres_db, record as rec, sqlite_file_db};

steward_tests::on_both_databases!(
    retrieval_is_scoped_by_org_agent_and_speaker,
    retrieval_finds_rare_words_past_common_ones_and_only_active_records,
    ranked_search_finds_word_forms_identifier_parts_and_cjk,
    search_text_is_never_engine_syntax_and_never_leaves_its_scope,
    the_speakers_newest_preferences_come_with_every_retrieval,
    a_query_of_common_words_finds_the_records_holding_both_and_never_anothers,
    forgotten_erased_and_superseded_records_leave_the_index,
    every_search_path_refuses_an_incomplete_scope_and_reads_only_its_places,
);

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
