//! The `openai` provider against a fake OpenAI-compatible server speaking the
//! real `/v1/chat/completions` wire format: belief revision — the
//! judge retiring a same-topic record, and what a retirement checks on both
//! databases.

use memory::store::{MergeInto, RetireRefusal, Retirement, RevisionMeta};
use memory::write::RawWrites;
use memory::{Principal, Role, Scope, Status};
use serde_json::json;
use steward_tests::both_dbs;
use steward_tests::fake_llm::{Answer, FakeLlm, TEXT};
use steward_tests::openai::{harness, items, note, operational, personal, rec, status};

// --- belief revision --------------------------------------------------------

/// Two notes of amounts in one currency are about different things: the
/// judge is not shown one as a candidate for the other, so a small model
/// that would retire it (Qwen2.5-Coder-1.5B retired a taxi note in EUR for
/// a per-diem note in EUR) never can. Phrased for this test.
#[tokio::test]
async fn a_note_sharing_only_a_currency_with_another_is_never_judged_against_it() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    h.pair("111", Role::Admin).await;
    let taxi = "Cab fares to the venue are refunded up to 35 EUR without a receipt.";
    let diem = "Dagsatsen på turnédagar är 50 EUR och betalas ut på söndagar.";
    fake.push(
        "memory_items",
        items(json!([operational("note", "cabs", taxi)])),
    );
    h.dm("111", &format!("@notes: {taxi}")).await;
    fake.push(
        "memory_items",
        items(json!([operational("note", "dagsats", diem)])),
    );
    fake.push(
        "belief_revision",
        Answer::Json(json!({"retire": [{"id": 1, "reason": "newer EUR amount"}]})),
    );
    let reply = h.dm("111", &format!("@notes: {diem}")).await;
    assert!(
        reply.contains("Written: agent_notes updated (id: 2).") && !reply.contains("#1"),
        "{reply}"
    );
    assert!(fake.received_for("belief_revision").is_empty());
    assert_eq!(status(&h, 1).await, Status::Active);
}

#[tokio::test]
async fn the_judge_retires_a_same_topic_record_with_model_and_prompt_version() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    let old_item = operational(
        "hostname",
        "vpn gateway",
        "The VPN gateway is vpn1.example.com",
    );
    let new_item = operational(
        "procedure",
        "remote access",
        "Remote access goes through the VPN at vpn2.example.com",
    );
    fake.push("memory_items", items(json!([old_item])));
    h.dm("111", "@notes: The VPN gateway is vpn1.example.com")
        .await;
    assert!(
        fake.received_for("belief_revision").is_empty(),
        "nothing to judge yet"
    );
    fake.push("memory_items", items(json!([new_item.clone()])));
    fake.push(
        "belief_revision",
        Answer::Json(json!({"retire": [{"id": 1, "reason": "The VPN moved to vpn2.example.com"}]})),
    );
    let reply = h
        .dm(
            "111",
            "@notes: Remote access goes through the VPN at vpn2.example.com",
        )
        .await;
    // What the judge retired is said in the receipt, never retired unsaid.
    assert!(
        reply.contains(
            "Written: agent_notes updated (id: 2). It replaces #1: “The VPN gateway is vpn1.example.com”."
        ),
        "{reply}"
    );
    assert_eq!(status(&h, 1).await, Status::Superseded);
    let revs = h.db().records().revisions(&h.org).await.expect("revisions");
    assert_eq!(revs.len(), 1);
    let r = &revs[0];
    assert_eq!((r.retired_id, r.replacing_id), (1, 2));
    assert_eq!(
        (r.via.as_str(), r.cause.as_str()),
        ("belief_revision", "live")
    );
    assert_eq!(r.model.as_deref(), Some("fake-model"));
    assert_eq!(r.prompt_version.as_deref(), Some("judge-v1"));
    assert_eq!(r.reason, "The VPN moved to vpn2.example.com");
    // The judge saw both records as data, under its schema.
    let asked = &fake.received_for("belief_revision")[0];
    assert_eq!(
        asked.body["response_format"]["json_schema"]["name"],
        "belief_revision"
    );
    assert_eq!(asked.body["response_format"]["json_schema"]["strict"], true);
    assert!(
        asked.text().contains("<<<memory:2 agent_notes note"),
        "{}",
        asked.text()
    );
    assert!(
        asked.text().contains("<<<memory:1 agent_notes note"),
        "{}",
        asked.text()
    );
    // Users are now served the new value only.
    h.dm("222", "How do I reach the VPN?").await;
    let served = fake.received_for(TEXT).pop().expect("reply request").text();
    assert!(
        served.contains("<<<memory:2 ") && !served.contains("<<<memory:1 "),
        "{served}"
    );

    // Undone, the pair is a veto: the same judgement is never applied again.
    assert!(h
        .db()
        .records()
        .undo_revision(&h.org, r.id, "test", h.now_ms())
        .await
        .expect("undo"));
    assert_eq!(status(&h, 1).await, Status::Active);
    fake.push("memory_items", items(json!([new_item])));
    fake.push(
        "belief_revision",
        Answer::Json(json!({"retire": [{"id": 1, "reason": "again"}]})),
    );
    h.dm(
        "111",
        "@notes: Remote access goes through the VPN at vpn2.example.com",
    )
    .await;
    assert_eq!(
        fake.received_for("belief_revision").len(),
        2,
        "the judge was asked again"
    );
    assert_eq!(status(&h, 1).await, Status::Active);
    assert_eq!(
        h.db()
            .records()
            .revisions(&h.org)
            .await
            .expect("revisions")
            .len(),
        1
    );
}

#[tokio::test]
async fn the_judge_cannot_retire_a_newer_record_or_another_place() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    let admin = Principal::Human {
        user_id: "discord:111".into(),
        name: "Ana".into(),
        role: Role::Admin,
    };
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.pair("333", Role::User).await;
    let t = h.now_ms();
    // A note said later is written first; then an older one sharing its words.
    let newer = h
        .services
        .learning()
        .memory_write(
            &h.org,
            "default",
            &admin,
            "agent_notes",
            "Our docs: wiki2.example.com",
            t + 60_000,
        )
        .await
        .expect("write");
    assert!(newer.is_ok(), "{newer:?}");
    fake.always(
        "belief_revision",
        Answer::Json(json!({"retire": [{"id": 1, "reason": "replace"}]})),
    );
    h.services
        .learning()
        .memory_write(
            &h.org,
            "default",
            &admin,
            "agent_notes",
            "Our docs: wiki1.example.com",
            t,
        )
        .await
        .expect("write")
        .expect("written");
    assert_eq!(
        status(&h, 1).await,
        Status::Active,
        "an older record never retires a newer one"
    );
    assert_eq!(status(&h, 2).await, Status::Active);

    // A user's personal write: the judge names the admin's note and another user's record.
    fake.push(
        "memory_items",
        items(json!([personal(
            "fact",
            "vpn home",
            "Uses the wiki from home"
        )])),
    );
    h.dm("333", "remember that I use the wiki from home").await;
    let other = h.records_containing("from home").await[0].id;
    fake.push(
        "memory_items",
        items(json!([personal(
            "fact",
            "wiki laptop",
            "Reads the wiki on a laptop"
        )])),
    );
    h.dm("222", "remember that I read the wiki on my laptop")
        .await;
    fake.push(
        "memory_items",
        items(json!([personal(
            "fact",
            "wiki office",
            "Reads the wiki at the office"
        )])),
    );
    fake.always(
        "belief_revision",
        Answer::Json(json!({"retire": [
            {"id": 1, "reason": "hostile"}, {"id": 2, "reason": "hostile"}, {"id": other, "reason": "hostile"}
        ]})),
    );
    // Asked (a person's records are judged when they are asked "Remember this?").
    h.dm("222", "I read the wiki at the office").await;
    let judged = fake.received_for("belief_revision");
    let last = judged
        .last()
        .expect("the judge was asked about the user's record");
    assert!(
        !last.text().contains("<<<memory:1 ")
            && !last.text().contains(&format!("<<<memory:{other} ")),
        "candidates come from the user's own memory only: {}",
        last.text()
    );
    for id in [1, 2, other] {
        assert_eq!(status(&h, id).await, Status::Active, "record {id}");
    }
    assert!(h
        .db()
        .records()
        .revisions(&h.org)
        .await
        .expect("revisions")
        .is_empty());
}

#[tokio::test]
async fn retire_checks_place_time_and_vetoes_on_both_databases() {
    for (name, db) in both_dbs().await {
        let org = "default";
        let ids = db
            .records()
            .insert_records(&[
                note("The wiki is at wiki1.example.com", 1_000),
                note("The wiki is at wiki2.example.com", 2_000),
                rec(
                    org,
                    Scope::Personal,
                    Some("discord:222"),
                    "My wiki is wiki3.example.com",
                    3_000,
                ),
                note("The wiki is at wiki4.example.com", 4_000),
            ])
            .await
            .expect("insert");
        let (old, new, theirs, newest) = (ids[0], ids[1], ids[2], ids[3]);
        let reason = memory::admin_text::AdminText::fixed("newer value");
        let meta = RevisionMeta {
            via: "belief_revision",
            cause: "live",
            run_id: "turn:1",
            reason: &reason,
            model: Some("fake-model"),
            prompt_version: Some("judge-v1"),
        };
        let refused = |r: Retirement| match r {
            Retirement::Refused(why) => Some(why),
            Retirement::Retired { .. } => None,
        };
        // Older over newer, across places, itself: refused, nothing written.
        assert_eq!(
            refused(
                db.records()
                    .retire(org, new, old, &meta, 9)
                    .await
                    .expect("retire")
            ),
            Some(RetireRefusal::Newer),
            "{name}"
        );
        assert_eq!(
            refused(
                db.records()
                    .retire(org, theirs, newest, &meta, 9)
                    .await
                    .expect("retire")
            ),
            Some(RetireRefusal::OtherPlace),
            "{name}"
        );
        assert_eq!(
            refused(
                db.records()
                    .retire(org, old, old, &meta, 9)
                    .await
                    .expect("retire")
            ),
            Some(RetireRefusal::SameRecord),
            "{name}"
        );
        assert_eq!(
            refused(
                db.records()
                    .retire("other-org", old, new, &meta, 9)
                    .await
                    .expect("retire")
            ),
            Some(RetireRefusal::Missing),
            "{name}"
        );
        assert!(
            db.records()
                .revisions(org)
                .await
                .expect("revisions")
                .is_empty(),
            "{name}"
        );
        // Allowed: retired, with a revision carrying model and prompt version.
        let Retirement::Retired { revision } = db
            .records()
            .retire(org, old, new, &meta, 9)
            .await
            .expect("retire")
        else {
            panic!("{name}: newer over older must be allowed");
        };
        let rev = db
            .records()
            .revision(org, revision)
            .await
            .expect("revision");
        assert_eq!(
            (
                rev.via.as_str(),
                rev.model.as_deref(),
                rev.prompt_version.as_deref()
            ),
            ("belief_revision", Some("fake-model"), Some("judge-v1")),
            "{name}"
        );
        assert_eq!(
            db.records().get(org, old).await.expect("record").status,
            Status::Superseded
        );
        // Already retired: not retired twice.
        assert_eq!(
            refused(
                db.records()
                    .retire(org, old, newest, &meta, 9)
                    .await
                    .expect("retire")
            ),
            Some(RetireRefusal::NotActive),
            "{name}"
        );
        // Undone, the pair is vetoed for good.
        db.records()
            .undo_revision(org, revision, "test", 10)
            .await
            .expect("undo");
        assert_eq!(
            refused(
                db.records()
                    .retire(org, old, new, &meta, 11)
                    .await
                    .expect("retire")
            ),
            Some(RetireRefusal::Vetoed),
            "{name}"
        );
        assert_eq!(
            db.records().get(org, old).await.expect("record").status,
            Status::Active,
            "{name}"
        );
        // A merge containing the vetoed pair is left alone, and writes no new record.
        let before = db
            .records()
            .list(org, &Default::default())
            .await
            .expect("records")
            .len();
        let out = db
            .records()
            .merge(
                org,
                &MergeInto::New(Box::new(note("The wiki is at wiki1.example.com", 2_000))),
                &[old, new],
                &meta,
                12,
            )
            .await
            .expect("merge");
        assert_eq!(out.into, None, "{name}");
        assert_eq!(
            db.records()
                .list(org, &Default::default())
                .await
                .expect("records")
                .len(),
            before,
            "{name}"
        );
    }
}
